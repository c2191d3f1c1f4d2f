//! Dynamic trees (EAGLE-2) on the toy model: lossless, equal to their plain reference,
//! within their budget, and shaped by the draft's confidence.

use decode_lab::{
    DynamicTree, TreeShape, speculative, speculative_generate_batch,
    speculative_generate_dynamic_batch,
};
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
        for tree in [
            DynamicTree::new(4, 4, 10).unwrap(),
            DynamicTree::new(3, 2, 4).unwrap(),
            DynamicTree::new(6, 1, 6).unwrap(),
        ] {
            let out =
                speculative_generate_dynamic_batch(&target, draft, &prompts, N_NEW, tree).unwrap();
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
                assert!(stats.accepted.iter().all(|&a| a <= tree.depth));
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
    let dynamic = speculative_generate_dynamic_batch(
        &target,
        &draft,
        &prompts,
        N_NEW,
        DynamicTree::new(4, 1, 4).unwrap(),
    )
    .unwrap();
    let chain = speculative_generate_batch(
        &target,
        &draft,
        &prompts,
        N_NEW,
        &TreeShape::chain(4).unwrap(),
        decode_lab::Sampling::Greedy,
        &mut ChaCha8Rng::seed_from_u64(0),
    )
    .unwrap();
    for (d, c) in dynamic.iter().zip(&chain) {
        assert_eq!(d.1.accepted, c.1.accepted);
    }
}

#[test]
fn bad_knobs_are_refused() {
    assert!(DynamicTree::new(0, 2, 4).is_err());
    assert!(DynamicTree::new(2, 2, 0).is_err());
    assert!(DynamicTree::new(2, 2, 1 << 20).is_err());
    let t = toy();
    let target = TransformerLM::new(&t.target, QCFG, "t").unwrap();
    let draft = TransformerLM::new(&t.int4, QCFG, "int4").unwrap();
    let zero = DynamicTree {
        depth: 2,
        width: 0,
        budget: 4,
    };
    assert!(speculative_generate_dynamic_batch(&target, &draft, &[[1u32]], 4, zero).is_err());
}
