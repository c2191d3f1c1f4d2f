//! Dynamic trees (EAGLE-2) on the toy model: lossless, equal to their plain reference,
//! within their budget, and shaped by the draft's confidence.

use decode_lab::speculative::DynamicDraft;
use decode_lab::{Sampling, TreeDraft, TreeShape, speculative, speculative_generate_batch};
use ndarray::Array2;
use quant_lab::{QCFG, quantize_params, sample_tokens};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use transformer_lab::{TransformerLM, autoregressive_generate, config_like, init_params};

const N_NEW: usize = 24;

struct Toy {
    target: transformer_lab::Params,
    int4: transformer_lab::Params,
    prompts: Array2<u32>,
}

fn toy() -> Toy {
    let target = init_params(&QCFG, 0).unwrap();
    let prompts = sample_tokens(&target, &QCFG, 8, 8, 3).unwrap();
    let (int4, _) =
        quantize_params(&target, quant_lab::Scheme { bits: 4, group: 32 }, true).unwrap();
    Toy {
        target,
        int4,
        prompts,
    }
}

/// A dynamic draft of `draft` with `(depth, width, budget)`.
fn dynamic<'d, 'p>(
    draft: &'d TransformerLM<'p>,
    (depth, width, budget): (u32, u32, u32),
) -> DynamicDraft<'d, 'p> {
    DynamicDraft {
        draft,
        depth,
        width,
        budget,
    }
}

/// Greedy: no generator is drawn from.
fn unused() -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(0)
}

fn rows(a: &Array2<u32>) -> Vec<Vec<u32>> {
    a.outer_iter().map(|r| r.to_vec()).collect()
}

#[test]
fn dynamic_trees_reproduce_the_target_and_their_reference() {
    let t = toy();
    let target = TransformerLM::new(&t.target, QCFG, "t").unwrap();
    let greedy = autoregressive_generate(
        &target,
        t.prompts.view(),
        N_NEW,
        0.0,
        &mut ChaCha8Rng::seed_from_u64(0),
    )
    .unwrap();
    let drafts = [
        TransformerLM::new(&t.int4, QCFG, "int4").unwrap(),
        TransformerLM::new(&t.target, config_like(&QCFG, 1), "weak").unwrap(),
    ];
    let prompts = rows(&t.prompts);
    for draft in &drafts {
        for tree in [(4, 4, 10), (3, 2, 4), (6, 1, 6)] {
            let out = speculative_generate_batch(
                &target,
                &dynamic(draft, tree),
                &prompts,
                N_NEW,
                Sampling::Greedy,
                &mut unused(),
            )
            .unwrap();
            for (i, (tokens, stats)) in out.iter().enumerate() {
                assert_eq!(
                    tokens[..],
                    greedy.row(i).to_vec()[..],
                    "{} {tree:?} prompt {i}",
                    draft.name()
                );
                let (plain, accepted) = speculative::reference::speculative_generate_dynamic(
                    &target,
                    draft,
                    &prompts[i],
                    N_NEW,
                    tree,
                )
                .unwrap();
                assert_eq!(&plain, tokens);
                assert_eq!(
                    accepted,
                    stats.accepted,
                    "{} {tree:?} prompt {i}",
                    draft.name()
                );
                // A round accepts at most one node per level.
                assert!(stats.accepted.iter().all(|&a| a <= tree.0));
            }
        }
    }
}

/// A dynamic tree of width 1 is a chain: each level keeps the one most confident child,
/// the draft's argmax, so it accepts exactly what a chain of the same depth accepts.
#[test]
fn width_one_is_a_chain() {
    let t = toy();
    let target = TransformerLM::new(&t.target, QCFG, "t").unwrap();
    let draft = TransformerLM::new(&t.int4, QCFG, "int4").unwrap();
    let prompts = rows(&t.prompts);
    let dynamic = speculative_generate_batch(
        &target,
        &dynamic(&draft, (4, 1, 4)),
        &prompts,
        N_NEW,
        Sampling::Greedy,
        &mut unused(),
    )
    .unwrap();
    let chain = speculative_generate_batch(
        &target,
        &TreeDraft {
            draft: &draft,
            shape: &TreeShape::chain(4).unwrap(),
        },
        &prompts,
        N_NEW,
        Sampling::Greedy,
        &mut unused(),
    )
    .unwrap();
    for (d, c) in dynamic.iter().zip(&chain) {
        assert_eq!(d.1.accepted, c.1.accepted);
    }
}

#[test]
fn bad_knobs_and_sampling_are_refused() {
    let t = toy();
    let target = TransformerLM::new(&t.target, QCFG, "t").unwrap();
    let draft = TransformerLM::new(&t.int4, QCFG, "int4").unwrap();
    for knobs in [
        (0, 2, 4),
        (2, 2, 0),
        (2, 0, 4),
        (2, 2, 1 << 20),
        (4096, 2, 4),
    ] {
        assert!(dynamic(&draft, knobs).check_knobs().is_err(), "{knobs:?}");
        let run = |sampling| {
            let d = dynamic(&draft, knobs);
            speculative_generate_batch(&target, &d, &[[1u32]], 4, sampling, &mut unused())
        };
        assert!(run(Sampling::Greedy).is_err(), "{knobs:?}");
        let plain =
            speculative::reference::speculative_generate_dynamic(&target, &draft, &[1], 4, knobs);
        assert!(plain.is_err(), "{knobs:?}");
    }
    // Dynamic trees are verified greedily: a temperature is refused, with the reason.
    let d = dynamic(&draft, (2, 2, 4));
    let hot = speculative_generate_batch(
        &target,
        &d,
        &[[1u32]],
        4,
        Sampling::Temperature(0.7),
        &mut unused(),
    );
    let e = hot.unwrap_err().to_string();
    assert!(e.contains("greedily"), "{e}");
}
