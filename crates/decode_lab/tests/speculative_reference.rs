//! The batched speculative decoder against the plain reference
//! (`decode_lab::speculative::reference`): the same tokens and the same accepted lengths,
//! round for round, for greedy decoding over many prompts, shapes and batch sizes; for
//! sampling, the same tokens from the same seed for a batch of one, and the same
//! distribution for bigger batches.
//!
//! Why not the same draws for a batch of several sequences: the batched decoder draws
//! from one generator for the whole batch, level by level and sequence after sequence, so
//! sequence i's draws are interleaved with its neighbours'. A reference that decodes one
//! sequence alone cannot consume one stream in that order (it does not know how many
//! numbers the other sequences take). So for batches the test compares distributions:
//! each sequence of a batch must be distributed as the reference's output is.

mod common;
use common::{TINY, chi_square_critical, sharpened};
use decode_lab::speculative::reference;
use decode_lab::{
    Sampling, TreeDraft, TreeShape, speculative_generate, speculative_generate_batch,
};
use ndarray::Array2;
use quant_lab::{QCFG, Scheme, quantize_params, sample_tokens};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use transformer_lab::{Config, TransformerLM, autoregressive_generate, config_like, init_params};

/// A small model with peaked next-token distributions (random init alone gives nearly
/// uniform ones, so every draft would be as good as any other).
const SMALL: Config = Config {
    vocab: 32,
    d_model: 32,
    n_layers: 2,
    n_heads: 2,
    d_ff: 64,
    max_seq: 40,
    norm_eps: 1e-5,
    rope_theta: 10000.0,
};

/// `n` prompts of ragged lengths 1 ..= 9, from a seeded generator.
fn prompts(n: usize, vocab: u32, seed: u64) -> Vec<Vec<u32>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            (0..1 + (i * 4 + seed as usize) % 9)
                .map(|_| rng.random_range(0..vocab))
                .collect()
        })
        .collect()
}

const SHAPES: [&[u32]; 9] = [
    &[1],
    &[1, 1, 1],
    &[1; 5],
    &[2],
    &[2, 2],
    &[3, 1, 2],
    &[4, 2, 1],
    &[2, 2, 2, 2],
    &[5, 3],
];

#[test]
fn greedy_batches_give_the_references_tokens_and_accepted_lengths_round_for_round() {
    let p = sharpened(&SMALL, 11, 40.0);
    let target = TransformerLM::new(&p, SMALL, "t").unwrap();
    let (int4, _) = quantize_params(&p, Scheme { bits: 4, group: 16 }, true).unwrap();
    let first_layer = TransformerLM::new(&p, config_like(&SMALL, 1), "first layer").unwrap();
    let quantized = TransformerLM::new(&int4, SMALL, "int4").unwrap();
    let n_new = 14;
    let runs: Vec<(&TransformerLM<'_>, &[u32], usize)> = [&first_layer, &quantized]
        .into_iter()
        .flat_map(|d| {
            SHAPES
                .iter()
                .flat_map(move |&s| [1, 3, 8].map(|b| (d, s, b)))
        })
        .collect();
    let histograms: Vec<(&[u32], usize, Vec<usize>)> = runs
        .into_par_iter()
        .map(|(draft, levels, batch)| {
            let shape = TreeShape::new(levels).unwrap();
            let prompts = prompts(batch, 32, levels.len() as u64 * 7 + batch as u64);
            let mut rng = ChaCha8Rng::seed_from_u64(0);
            let fast = speculative_generate_batch(
                &target,
                &TreeDraft {
                    draft,
                    shape: &shape,
                },
                &prompts,
                n_new,
                Sampling::Greedy,
                &mut rng,
            )
            .unwrap();
            let mut histogram = vec![0; levels.len() + 1];
            for (prompt, (tokens, stats)) in prompts.iter().zip(&fast) {
                let (want, accepted) = reference::speculative_generate_tree(
                    &target,
                    draft,
                    prompt,
                    n_new,
                    &shape,
                    Sampling::Greedy,
                    &mut rng,
                )
                .unwrap();
                let at = format!(
                    "{} {levels:?} batch {batch} prompt {prompt:?}",
                    draft.name()
                );
                assert_eq!(tokens, &want, "tokens, {at}");
                assert_eq!(stats.accepted, accepted, "accepted per round, {at}");
                assert_eq!(stats.rounds, accepted.len(), "{at}");
                assert_eq!(stats.generated, n_new, "{at}");
                for &a in &accepted {
                    histogram[a as usize] += 1;
                }
            }
            (levels, batch, histogram)
        })
        .collect();
    // The comparison means something: for every shape, rounds that stopped short of its
    // depth and rounds accepted to the full depth.
    for levels in SHAPES {
        let mut h = vec![0; levels.len() + 1];
        for (l, _, counts) in &histograms {
            if *l == levels {
                h.iter_mut().zip(counts).for_each(|(a, b)| *a += b);
            }
        }
        assert!(
            h[..levels.len()].iter().sum::<usize>() > 0 && h[levels.len()] > 0,
            "{levels:?}: {h:?}"
        );
    }
}

#[test]
fn the_reference_is_lossless_on_its_own() {
    // Independent of the batched path: the reference's greedy output is the target's
    // own greedy output.
    let p = sharpened(&SMALL, 11, 40.0);
    let target = TransformerLM::new(&p, SMALL, "t").unwrap();
    let draft = TransformerLM::new(&p, config_like(&SMALL, 1), "d").unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    for (i, prompt) in prompts(6, 32, 3).iter().enumerate() {
        let plain = autoregressive_generate(
            &target,
            Array2::from_shape_vec((1, prompt.len()), prompt.clone())
                .unwrap()
                .view(),
            20,
            0.0,
            &mut rng,
        )
        .unwrap();
        let shape = TreeShape::new(SHAPES[i % SHAPES.len()]).unwrap();
        let (tokens, accepted) = reference::speculative_generate_tree(
            &target,
            &draft,
            prompt,
            20,
            &shape,
            Sampling::Greedy,
            &mut rng,
        )
        .unwrap();
        assert_eq!(tokens, plain.row(0).to_vec(), "{prompt:?}");
        assert_eq!(accepted.len() + accepted.iter().sum::<u32>() as usize, 20);
    }
}

#[test]
fn on_lecture_6s_model_the_batch_and_the_reference_agree_round_for_round() {
    let params = init_params(&QCFG, 0).unwrap();
    let target = TransformerLM::new(&params, QCFG, "t").unwrap();
    let (int4, _) = quantize_params(&params, Scheme { bits: 4, group: 32 }, true).unwrap();
    let draft = TransformerLM::new(&int4, QCFG, "int4").unwrap();
    let prompts: Vec<Vec<u32>> = sample_tokens(&params, &QCFG, 3, 8, 3)
        .unwrap()
        .outer_iter()
        .map(|p| p.to_vec())
        .collect();
    [&[1u32, 1, 1, 1][..], &[2, 2, 2]]
        .into_par_iter()
        .for_each(|levels| {
            let shape = TreeShape::new(levels).unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(0);
            let fast = speculative_generate_batch(
                &target,
                &TreeDraft {
                    draft: &draft,
                    shape: &shape,
                },
                &prompts,
                16,
                Sampling::Greedy,
                &mut rng,
            )
            .unwrap();
            for (prompt, (tokens, stats)) in prompts.iter().zip(&fast) {
                let (want, accepted) = reference::speculative_generate_tree(
                    &target,
                    &draft,
                    prompt,
                    16,
                    &shape,
                    Sampling::Greedy,
                    &mut rng,
                )
                .unwrap();
                assert_eq!((tokens, &stats.accepted), (&want, &accepted), "{levels:?}");
            }
        });
}

#[test]
fn sampling_a_batch_of_one_draws_what_the_reference_draws_from_the_same_seed() {
    let p = sharpened(&SMALL, 11, 40.0);
    let target = TransformerLM::new(&p, SMALL, "t").unwrap();
    let (int4, _) = quantize_params(&p, Scheme { bits: 4, group: 16 }, true).unwrap();
    let drafts = [
        TransformerLM::new(&p, config_like(&SMALL, 1), "first layer").unwrap(),
        TransformerLM::new(&int4, SMALL, "int4").unwrap(),
    ];
    let mut histogram = [0usize; 5];
    for draft in &drafts {
        for gamma in [1, 2, 4] {
            let shape = TreeShape::chain(gamma).unwrap();
            for temperature in [1.0, 0.6] {
                for (seed, prompt) in prompts(12, 32, u64::from(gamma)).iter().enumerate() {
                    let sampling = Sampling::Temperature(temperature);
                    let mut fast_rng = ChaCha8Rng::seed_from_u64(seed as u64);
                    let mut ref_rng = ChaCha8Rng::seed_from_u64(seed as u64);
                    let (tokens, stats) = speculative_generate(
                        &target,
                        &TreeDraft {
                            draft,
                            shape: &shape,
                        },
                        prompt,
                        12,
                        sampling,
                        &mut fast_rng,
                    )
                    .unwrap();
                    let (want, accepted) = reference::speculative_generate_tree(
                        &target,
                        draft,
                        prompt,
                        12,
                        &shape,
                        sampling,
                        &mut ref_rng,
                    )
                    .unwrap();
                    let at = format!("{} γ={gamma} T={temperature} seed {seed}", draft.name());
                    assert_eq!(tokens, want, "{at}");
                    assert_eq!(stats.accepted, accepted, "{at}");
                    // And both took the same number of draws, in the same order.
                    assert_eq!(fast_rng.random::<u64>(), ref_rng.random::<u64>(), "{at}");
                    for a in accepted {
                        histogram[a as usize] += 1;
                    }
                }
            }
        }
    }
    // Rejections and full acceptances both happened.
    assert!(histogram[0] > 0 && histogram[4] > 0, "{histogram:?}");
}

/// Two-sample χ² for equal sample sizes, bins with fewer than 10 counts together merged:
/// (Σ (a − b)² / (a + b), degrees of freedom).
fn two_sample_chi_square(a: &[usize], b: &[usize]) -> (f64, usize) {
    let (mut chi2, mut bins, mut small) = (0.0, 0, (0.0, 0.0));
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (x as f64, y as f64);
        if x + y < 10.0 {
            small = (small.0 + x, small.1 + y);
        } else {
            chi2 += (x - y).powi(2) / (x + y);
            bins += 1;
        }
    }
    if small.0 + small.1 > 0.0 {
        chi2 += (small.0 - small.1).powi(2) / (small.0 + small.1);
        bins += 1;
    }
    (chi2, bins - 1)
}

#[test]
fn sampling_a_ragged_batch_is_distributed_as_the_reference() {
    let p = sharpened(&TINY, 5, 60.0);
    let target = TransformerLM::new(&p, TINY, "t").unwrap();
    let draft = TransformerLM::new(&p, config_like(&TINY, 1), "d").unwrap();
    let shape = TreeShape::chain(2).unwrap();
    // A batch of two prompts of different lengths, n copies each; per prompt, the joint
    // outcome (first token, second token, drafts accepted in the first round).
    let (short, long) = (vec![3u32, 6], vec![5u32, 2, 7, 1]);
    let n = 6000;
    let batch: Vec<&[u32]> = (0..2 * n)
        .map(|i| if i % 2 == 0 { &short[..] } else { &long[..] })
        .collect();
    let outcome = |tokens: &[u32], first_round: u32| {
        (tokens[0] * 8 + tokens[1]) as usize * 3 + first_round as usize
    };
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let fast = speculative_generate_batch(
        &target,
        &TreeDraft {
            draft: &draft,
            shape: &shape,
        },
        &batch,
        2,
        Sampling::Temperature(1.0),
        &mut rng,
    )
    .unwrap();
    for (which, prompt) in [&short, &long].into_iter().enumerate() {
        let mut fast_counts = vec![0usize; 64 * 3];
        for (tokens, stats) in fast.iter().skip(which).step_by(2) {
            fast_counts[outcome(tokens, stats.accepted[0])] += 1;
        }
        let mut ref_counts = vec![0usize; 64 * 3];
        let mut rng = ChaCha8Rng::seed_from_u64(7 + which as u64);
        for _ in 0..n {
            let (tokens, accepted) = reference::speculative_generate_tree(
                &target,
                &draft,
                prompt,
                2,
                &shape,
                Sampling::Temperature(1.0),
                &mut rng,
            )
            .unwrap();
            ref_counts[outcome(&tokens, accepted[0])] += 1;
        }
        let (chi2, df) = two_sample_chi_square(&fast_counts, &ref_counts);
        assert!(
            df >= 5 && chi2 < chi_square_critical(df),
            "{prompt:?}: χ² = {chi2:.1} on {df} df"
        );
    }
}

#[test]
fn the_reference_refuses_what_the_batched_decoder_refuses() {
    let p = sharpened(&TINY, 5, 60.0);
    let target = TransformerLM::new(&p, TINY, "t").unwrap();
    let draft = TransformerLM::new(&p, config_like(&TINY, 1), "d").unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let tree = TreeShape::new(&[2, 2]).unwrap();
    let sized = TreeShape::sized(3, 6).unwrap();
    let chain = TreeShape::chain(2).unwrap();
    let cases: [(&[u32], usize, &TreeShape, Sampling); 5] = [
        (&[1], 3, &sized, Sampling::Greedy), // no levels
        (&[], 3, &chain, Sampling::Greedy),
        (&[9], 3, &chain, Sampling::Greedy),
        (&[1; 10], 7, &chain, Sampling::Greedy),
        (&[1], 3, &chain, Sampling::Temperature(f64::NAN)),
    ];
    for (prompt, n_new, shape, sampling) in cases {
        let fast = speculative_generate(
            &target,
            &TreeDraft {
                draft: &draft,
                shape,
            },
            prompt,
            n_new,
            sampling,
            &mut rng,
        );
        let plain = reference::speculative_generate_tree(
            &target, &draft, prompt, n_new, shape, sampling, &mut rng,
        );
        // As text: NaN ≠ NaN would fail an equality of the errors themselves.
        let (fast, plain) = (
            fast.unwrap_err().to_string(),
            plain.unwrap_err().to_string(),
        );
        assert_eq!(fast, plain, "{prompt:?} {shape:?} {sampling:?}");
    }
    // Temperature 0 is greedy in both, trees included.
    let greedy = reference::speculative_generate_tree(
        &target,
        &draft,
        &[1],
        6,
        &tree,
        Sampling::Greedy,
        &mut rng,
    )
    .unwrap();
    let zero = reference::speculative_generate_tree(
        &target,
        &draft,
        &[1],
        6,
        &tree,
        Sampling::Temperature(0.0),
        &mut rng,
    )
    .unwrap();
    let fast_zero = speculative_generate(
        &target,
        &TreeDraft {
            draft: &draft,
            shape: &tree,
        },
        &[1],
        6,
        Sampling::Temperature(0.0),
        &mut rng,
    )
    .unwrap();
    assert_eq!((&zero, &fast_zero.0), (&greedy, &greedy.0));
}

/// The chain in one plain function (`reference::speculative_generate_chain`, the one a
/// student reads first) against the batched chain, a batch of one: the same tokens, the
/// same accepted drafts round for round, and the same draws from the same seed — greedy
/// and at T = 0.7 and 1, for γ = 1 to 6, on a model with peaked distributions.
#[test]
fn the_plain_chain_is_the_batched_chain_draw_for_draw() {
    let params = sharpened(&SMALL, 5, 40.0);
    let target = TransformerLM::new(&params, SMALL, "t").unwrap();
    let draft = TransformerLM::new(&params, config_like(&SMALL, 1), "d").unwrap();
    let mut compared = 0;
    for (i, prompt) in prompts(6, SMALL.vocab as u32, 11).iter().enumerate() {
        for gamma in 1..=6u32 {
            for sampling in [
                Sampling::Greedy,
                Sampling::Temperature(0.7),
                Sampling::Temperature(1.0),
            ] {
                let seed = 100 * i as u64 + u64::from(gamma);
                let shape = TreeShape::chain(gamma).unwrap();
                let proposer = TreeDraft {
                    draft: &draft,
                    shape: &shape,
                };
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let (tokens, stats) =
                    speculative_generate(&target, &proposer, prompt, 20, sampling, &mut rng)
                        .unwrap();
                let mut plain_rng = ChaCha8Rng::seed_from_u64(seed);
                let (plain, accepted) = reference::speculative_generate_chain(
                    &target,
                    &draft,
                    prompt,
                    20,
                    gamma as usize,
                    sampling,
                    &mut plain_rng,
                )
                .unwrap();
                assert_eq!(plain, tokens, "γ {gamma} {sampling:?} {prompt:?}");
                assert_eq!(accepted, stats.accepted, "γ {gamma} {sampling:?}");
                assert_eq!(
                    rng.random::<u64>(),
                    plain_rng.random::<u64>(),
                    "the same draws"
                );
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 6 * 6 * 3);
    let none = reference::speculative_generate_chain(
        &target,
        &draft,
        &[1],
        4,
        0,
        Sampling::Greedy,
        &mut ChaCha8Rng::seed_from_u64(0),
    );
    assert!(none.is_err(), "γ = 0 drafts nothing");
}
