//! Speculative decoding on the toy model: lossless, exact, and robust to bad input.

mod common;
use common::{TINY, chi_square, chi_square_critical, sharpened};
use decode_lab::{
    Error, Sampling, TreeAcceptance, TreeDraft, TreeShape, speculative_generate,
    speculative_generate_batch,
};
use ndarray::{Array2, Axis, s};
use once_cell::sync::Lazy;
use quant_lab::{QCFG, quantize_params, sample_tokens};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use transformer_lab::{
    Config, Params, TransformerLM, autoregressive_generate, config_like, init_params,
};

/// Lecture 6 demo 3's models, and its first [`LOSSLESS_PROMPTS`] prompts with the target's
/// greedy output after them.
struct Demo3 {
    target: Params,
    int4: Params,
    prompts: Array2<u32>,
    greedy: Array2<u32>,
}

static DEMO3: Lazy<Demo3> = Lazy::new(|| {
    let target = init_params(&QCFG, 0).unwrap();
    let demo3_prompts = sample_tokens(&target, &QCFG, 64, 8, 3).unwrap();
    let prompts = demo3_prompts.slice(s![..LOSSLESS_PROMPTS, ..]).to_owned();
    let m = TransformerLM::new(&target, QCFG, "t").unwrap();
    let greedy = autoregressive_generate(
        &m,
        prompts.view(),
        N_NEW,
        0.0,
        &mut ChaCha8Rng::seed_from_u64(0),
    )
    .unwrap();
    let (int4, _) =
        quantize_params(&target, quant_lab::Scheme { bits: 4, group: 32 }, true).unwrap();
    Demo3 {
        target,
        int4,
        prompts,
        greedy,
    }
});

/// Prompts the lossless test decodes (of demo 3's 64).
const LOSSLESS_PROMPTS: usize = 5;
/// Tokens generated after each prompt, as demo 3 generates them.
const N_NEW: usize = 48;

const SHAPES: [&[u32]; 9] = [
    &[1],
    &[1, 1],
    &[1, 1, 1, 1],
    &[1; 6],
    &[2, 2, 2],
    &[3, 3, 3],
    &[4, 2, 2, 1],
    &[8, 4, 2, 1],
    &[4, 4, 4, 4],
];

#[test]
fn greedy_speculation_reproduces_the_target_token_for_token() {
    let d = &*DEMO3;
    let target = TransformerLM::new(&d.target, QCFG, "t").unwrap();
    let weak = TransformerLM::new(&d.target, config_like(&QCFG, 1), "d1").unwrap();
    let int4 = TransformerLM::new(&d.int4, QCFG, "d4").unwrap();
    // The first prompts in one batch: every round is one batched pass per draft level and
    // one batched verification. Drafts and shapes side by side, to keep both cores busy.
    // As many prompts as it takes for every shape to roll back after every accepted length
    // from none to all of its levels (checked below): what losslessness must be shown on.
    let prompts: Vec<Vec<u32>> = d.prompts.outer_iter().map(|p| p.to_vec()).collect();
    let runs: Vec<(&TransformerLM<'_>, &[u32])> = [&weak, &int4]
        .into_iter()
        .flat_map(|draft| SHAPES.iter().map(move |&levels| (draft, levels)))
        .collect();
    let lengths: Vec<(&[u32], Vec<u32>)> = runs
        .into_par_iter()
        .map(|(draft, levels)| {
            let shape = TreeShape::new(levels).unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(0);
            let results = speculative_generate_batch(
                &target,
                &TreeDraft {
                    draft,
                    shape: &shape,
                },
                &prompts,
                N_NEW,
                Sampling::Greedy,
                &mut rng,
            )
            .unwrap();
            assert_eq!(results.len(), prompts.len());
            for (i, (tokens, stats)) in results.iter().enumerate() {
                assert_eq!(
                    tokens,
                    &d.greedy.row(i).to_vec(),
                    "{} {levels:?} prompt {i}",
                    draft.name()
                );
                assert_eq!(stats.rounds, stats.accepted.len());
                assert_eq!(
                    stats.generated, N_NEW,
                    "each round is cut to the tokens still missing"
                );
                assert_eq!(
                    stats.generated,
                    stats.rounds + stats.accepted.iter().sum::<u32>() as usize
                );
                // τ = tokens per round = 1 + mean accepted, as demo 3 computes it.
                let from_accepted = TreeAcceptance {
                    accepted: stats.accepted.clone(),
                    nodes: shape.nodes(),
                };
                assert!((stats.tau() - from_accepted.tau()).abs() < 1e-12);
                // α per level: every accepted token counted at its level, and a level reached
                // only by rounds that accepted at the level before.
                let per_level = stats.per_level(levels.len());
                let counted: usize = per_level.iter().map(|&(_, accepted)| accepted).sum();
                assert_eq!(counted, stats.accepted.iter().sum::<u32>() as usize);
                assert!(
                    per_level
                        .iter()
                        .all(|&(reached, accepted)| accepted <= reached)
                );
                assert!(
                    per_level.windows(2).all(|w| w[1].0 <= w[0].1),
                    "{per_level:?}"
                );
            }
            let depth = levels.len() as u32;
            let whole = results
                .iter()
                .flat_map(|(_, s)| whole_tree_rounds(&s.accepted, depth));
            (levels, whole.collect())
        })
        .collect();
    for levels in SHAPES {
        let depth = levels.len() as u32;
        let seen: std::collections::BTreeSet<u32> = lengths
            .iter()
            .filter(|(l, _)| *l == levels)
            .flat_map(|(_, accepted)| accepted.iter().copied())
            .collect();
        assert_eq!(
            seen,
            (0..=depth).collect(),
            "{levels:?}: some accepted length never rolled back in a whole tree"
        );
    }
}

/// The accepted lengths of the rounds whose tree was not cut short: a round's tree is cut
/// to the tokens still missing (`min(depth, missing − 1)` levels), and a cut tree accepted
/// to its end rejected nothing. A round of a whole tree accepting `a` verified `a` levels
/// and rejected the rest of its tree.
fn whole_tree_rounds(accepted: &[u32], depth: u32) -> Vec<u32> {
    let mut generated = 0;
    let mut whole = Vec::new();
    for &a in accepted {
        let missing = N_NEW as u32 - generated;
        let cut = depth.min(missing - 1);
        if a < cut || a == depth {
            whole.push(a);
        }
        generated += 1 + a;
    }
    whole
}

/// The tiny model (vocabulary 8) with peaked next-token distributions, so p and q differ.
fn tiny_params() -> Params {
    sharpened(&TINY, 5, 60.0)
}

fn softmax(logits: ndarray::ArrayView1<f32>) -> Vec<f64> {
    let max = logits.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v)) as f64;
    let e: Vec<f64> = logits.iter().map(|&l| (l as f64 - max).exp()).collect();
    let z: f64 = e.iter().sum();
    e.iter().map(|v| v / z).collect()
}

/// Next-token distribution of `model` after `tokens`.
fn next_dist(model: &TransformerLM<'_>, tokens: &[u32]) -> Vec<f64> {
    let t = Array2::from_shape_vec((1, tokens.len()), tokens.to_vec()).unwrap();
    let logits = model.full_logits(t.view()).unwrap();
    softmax(logits.slice(s![0, tokens.len() - 1, ..]))
}

#[test]
fn speculative_sampling_draws_exactly_from_the_target() {
    let p = tiny_params();
    let target = TransformerLM::new(&p, TINY, "t").unwrap();
    let draft = TransformerLM::new(&p, config_like(&TINY, 1), "d").unwrap();
    let prompt = [3u32, 6];
    let p1 = next_dist(&target, &prompt);
    let q1 = next_dist(&draft, &prompt);
    let pairs: Vec<f64> = (0..8u32)
        .flat_map(|a| {
            let p2 = next_dist(&target, &[3, 6, a]);
            let pa = p1[a as usize];
            p2.into_iter().map(move |pb| pa * pb)
        })
        .collect();
    let overlap: f64 = p1.iter().zip(&q1).map(|(a, b)| a.min(*b)).sum();
    assert!(
        overlap < 0.95,
        "the draft must differ from the target for the test to mean anything: {overlap}"
    );

    // As many runs as it takes to catch a sampler at T = 1.1 by the first token (and the
    // acceptance rate to within 3 standard errors of its expectation at any number).
    let hotter = {
        let t = Array2::from_shape_vec((1, prompt.len()), prompt.to_vec()).unwrap();
        let logits = target.full_logits(t.view()).unwrap();
        transformer_lab::softmax_probs(logits.slice(s![0, prompt.len() - 1, ..]), 1.1).unwrap()
    };
    let n = stat_checks::draws_to_detect(&p1, &hotter);
    assert!(
        n <= 24_000,
        "{n} runs to catch T = 1.1: a flatter target than meant"
    );
    let shape = TreeShape::chain(2).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let (mut first, mut pair, mut accepted_first) = (vec![0usize; 8], vec![0usize; 64], 0usize);
    for _ in 0..n {
        let (tokens, stats) = speculative_generate(
            &target,
            &TreeDraft {
                draft: &draft,
                shape: &shape,
            },
            &prompt,
            2,
            Sampling::Temperature(1.0),
            &mut rng,
        )
        .unwrap();
        first[tokens[0] as usize] += 1;
        pair[(tokens[0] * 8 + tokens[1]) as usize] += 1;
        accepted_first += usize::from(stats.accepted[0] >= 1);
    }
    let (chi2, df) = chi_square(&first, &p1, n);
    assert!(
        chi2 < chi_square_critical(df),
        "first token: χ² = {chi2:.1} on {df} df; counts {first:?}, p {p1:?}"
    );
    let (chi2, df) = chi_square(&pair, &pairs, n);
    assert!(
        chi2 < chi_square_critical(df),
        "pairs: χ² = {chi2:.1} on {df} df"
    );
    let rate = accepted_first as f64 / n as f64;
    let se = (overlap * (1.0 - overlap) / n as f64).sqrt();
    assert!(
        (rate - overlap).abs() < 3.0 * se,
        "acceptance {rate:.4} vs Σ min(p, q) = {overlap:.4} ± {se:.4}"
    );
}

#[test]
fn greedy_speculation_with_the_tiny_model_matches_plain_greedy_to_the_end_of_max_seq() {
    let p = tiny_params();
    let target = TransformerLM::new(&p, TINY, "t").unwrap();
    let draft = TransformerLM::new(&p, config_like(&TINY, 1), "d").unwrap();
    let prompt = [1u32];
    let plain = autoregressive_generate(
        &target,
        Array2::from_elem((1, 1), 1u32).view(),
        15,
        0.0,
        &mut ChaCha8Rng::seed_from_u64(0),
    )
    .unwrap();
    for levels in [&[3u32][..], &[2, 2, 2], &[1; 7]] {
        let (tokens, _) = speculative_generate(
            &target,
            &TreeDraft {
                draft: &draft,
                shape: &TreeShape::new(levels).unwrap(),
            },
            &prompt,
            15,
            Sampling::Greedy,
            &mut ChaCha8Rng::seed_from_u64(0),
        )
        .unwrap();
        assert_eq!(tokens, plain.index_axis(Axis(0), 0).to_vec(), "{levels:?}");
    }
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let p = tiny_params();
    let target = TransformerLM::new(&p, TINY, "t").unwrap();
    let draft = TransformerLM::new(&p, config_like(&TINY, 1), "d").unwrap();
    let chain = TreeShape::chain(2).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let mut run = |prompt: &[u32], n_new, shape: &TreeShape, sampling| {
        speculative_generate(
            &target,
            &TreeDraft {
                draft: &draft,
                shape,
            },
            prompt,
            n_new,
            sampling,
            &mut rng,
        )
    };
    assert!(matches!(TreeShape::chain(0), Err(Error::Argument(m)) if m.contains("γ ≥ 1")));
    assert!(matches!(TreeShape::new(&[2, 0, 1]), Err(Error::Argument(m)) if m.contains("level 2")));
    assert!(matches!(
        run(&[1; 17], 1, &chain, Sampling::Greedy),
        Err(Error::Model(transformer_lab::Error::TooLong { .. }))
    ));
    assert!(matches!(
        run(&[1; 10], 7, &chain, Sampling::Greedy),
        Err(Error::Model(transformer_lab::Error::TooLong {
            len: 17,
            max: 16
        }))
    ));
    assert!(matches!(
        run(&[1], 3, &chain, Sampling::Temperature(-1.0)),
        Err(Error::Model(transformer_lab::Error::Temperature(_)))
    ));
    assert!(run(&[1], 3, &chain, Sampling::Temperature(f64::NAN)).is_err());
    // A tree samples too (tests/sampled_trees.rs checks its distribution).
    let tree = TreeShape::new(&[2, 2]).unwrap();
    assert_eq!(
        run(&[1], 3, &tree, Sampling::Temperature(1.0))
            .unwrap()
            .0
            .len(),
        3
    );
    assert!(matches!(
        run(&[], 3, &chain, Sampling::Greedy),
        Err(Error::Argument(_))
    ));
    assert!(matches!(
        run(&[9], 3, &chain, Sampling::Greedy),
        Err(Error::Model(transformer_lab::Error::TokenOutOfRange { .. }))
    ));
    assert_eq!(
        run(&[1], 0, &chain, Sampling::Greedy).unwrap().0,
        Vec::<u32>::new()
    );
    let other = init_params(&Config { vocab: 9, ..TINY }, 0).unwrap();
    let wide = TransformerLM::new(&other, Config { vocab: 9, ..TINY }, "w").unwrap();
    assert!(
        speculative_generate(
            &target,
            &TreeDraft {
                draft: &wide,
                shape: &chain
            },
            &[1],
            2,
            Sampling::Greedy,
            &mut rng
        )
        .is_err()
    );
}

#[test]
fn a_ragged_batch_gives_every_sequence_what_it_gets_alone() {
    let p = tiny_params();
    let target = TransformerLM::new(&p, TINY, "t").unwrap();
    let draft = TransformerLM::new(&p, config_like(&TINY, 1), "d").unwrap();
    // Prompts of 1 to 7 tokens: ragged lengths, rounds that end at different times.
    let prompts: Vec<Vec<u32>> = (1..=7u32)
        .map(|len| (0..len).map(|i| (i * 5 + len) % 8).collect())
        .collect();
    for levels in [&[3u32][..], &[2, 2], &[1, 1, 1], &[2, 1, 3]] {
        let shape = TreeShape::new(levels).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let batch = speculative_generate_batch(
            &target,
            &TreeDraft {
                draft: &draft,
                shape: &shape,
            },
            &prompts,
            9,
            Sampling::Greedy,
            &mut rng,
        )
        .unwrap();
        assert_eq!(batch.len(), prompts.len());
        for (prompt, (tokens, stats)) in prompts.iter().zip(&batch) {
            let plain = autoregressive_generate(
                &target,
                Array2::from_shape_vec((1, prompt.len()), prompt.clone())
                    .unwrap()
                    .view(),
                9,
                0.0,
                &mut rng,
            )
            .unwrap();
            assert_eq!(tokens, &plain.row(0).to_vec(), "{levels:?} {prompt:?}");
            let alone = speculative_generate(
                &target,
                &TreeDraft {
                    draft: &draft,
                    shape: &shape,
                },
                prompt,
                9,
                Sampling::Greedy,
                &mut rng,
            )
            .unwrap();
            assert_eq!(
                (tokens, stats),
                (&alone.0, &alone.1),
                "{levels:?} {prompt:?}"
            );
        }
    }
    let none: [&[u32]; 0] = [];
    let empty = speculative_generate_batch(
        &target,
        &TreeDraft {
            draft: &draft,
            shape: &TreeShape::chain(1).unwrap(),
        },
        &none,
        3,
        Sampling::Greedy,
        &mut ChaCha8Rng::seed_from_u64(0),
    )
    .unwrap();
    assert!(empty.is_empty());
}

#[test]
fn tau_is_one_without_a_round_like_tree_acceptance_without_a_position() {
    let p = tiny_params();
    let target = TransformerLM::new(&p, TINY, "t").unwrap();
    let draft = TransformerLM::new(&p, config_like(&TINY, 1), "d").unwrap();
    let (tokens, stats) = speculative_generate(
        &target,
        &TreeDraft {
            draft: &draft,
            shape: &TreeShape::chain(2).unwrap(),
        },
        &[1, 2],
        0,
        Sampling::Greedy,
        &mut ChaCha8Rng::seed_from_u64(0),
    )
    .unwrap();
    assert!(tokens.is_empty() && stats.rounds == 0 && stats.generated == 0);
    let no_position = TreeAcceptance {
        accepted: vec![],
        nodes: 2,
    };
    assert_eq!((stats.tau(), no_position.tau()), (1.0, 1.0));
}

#[test]
fn speculative_sampling_over_a_batch_draws_every_sequence_from_the_target() {
    let p = tiny_params();
    let target = TransformerLM::new(&p, TINY, "t").unwrap();
    let draft = TransformerLM::new(&p, config_like(&TINY, 1), "d").unwrap();
    // One batch of n copies of a prompt: each sequence's first two tokens must follow the
    // target's distribution, whatever the other sequences of the batch draw.
    let prompt = [5u32, 2, 7];
    let p1 = next_dist(&target, &prompt);
    let n = 12_000;
    let prompts = vec![prompt; n];
    // (Seed 8: the model's weights are drawn from NumPy's stream; with seed 7 this draw was a
    // χ² = 26.5 outlier, where 1.2 M draws over 100 other seeds give χ² = 7.8 on 5 df.)
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let out = speculative_generate_batch(
        &target,
        &TreeDraft {
            draft: &draft,
            shape: &TreeShape::chain(2).unwrap(),
        },
        &prompts,
        2,
        Sampling::Temperature(1.0),
        &mut rng,
    )
    .unwrap();
    let mut first = vec![0usize; 8];
    for (tokens, stats) in &out {
        first[tokens[0] as usize] += 1;
        assert_eq!(stats.generated, 2);
    }
    let (chi2, df) = chi_square(&first, &p1, n);
    assert!(
        chi2 < chi_square_critical(df),
        "first token: χ² = {chi2:.1} on {df} df; counts {first:?}, p {p1:?}"
    );
    let q1 = next_dist(&draft, &prompt);
    let overlap: f64 = p1.iter().zip(&q1).map(|(a, b)| a.min(*b)).sum();
    let rate = out.iter().filter(|(_, s)| s.accepted[0] >= 1).count() as f64 / n as f64;
    let se = (overlap * (1.0 - overlap) / n as f64).sqrt();
    assert!(
        overlap < 0.95 && (rate - overlap).abs() < 3.0 * se,
        "acceptance {rate:.4} vs Σ min(p, q) = {overlap:.4} ± {se:.4}"
    );
}
