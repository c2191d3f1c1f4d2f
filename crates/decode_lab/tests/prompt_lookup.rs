//! Prompt lookup (n-gram) drafting on the toy model: lossless greedy and sampled, equal
//! to its plain reference, and cheap where the output repeats itself.

mod common;
use common::{TINY, chi_square, chi_square_critical, sharpened};
use decode_lab::{PromptLookup, Sampling, speculative, speculative_generate_batch};
use ndarray::{Array2, s};
use quant_lab::{QCFG, sample_tokens};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use transformer_lab::{TransformerLM, autoregressive_generate, init_params, softmax_probs};

const LOOKUP: PromptLookup = PromptLookup {
    max_ngram: 3,
    gamma: 4,
};

#[test]
fn greedy_lookup_is_the_targets_greedy_output_and_accepts_where_it_loops() {
    let params = init_params(&QCFG, 0).unwrap();
    let target = TransformerLM::new(&params, QCFG, "t").unwrap();
    let prompts = sample_tokens(&params, &QCFG, 8, 8, 3).unwrap();
    let n_new = 40;
    let greedy = autoregressive_generate(
        &target,
        prompts.view(),
        n_new,
        0.0,
        &mut ChaCha8Rng::seed_from_u64(0),
    )
    .unwrap();
    let rows: Vec<Vec<u32>> = prompts.outer_iter().map(|r| r.to_vec()).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let out =
        speculative_generate_batch(&target, &LOOKUP, &rows, n_new, Sampling::Greedy, &mut rng)
            .unwrap();
    let (mut rounds, mut generated) = (0, 0);
    for (i, (tokens, stats)) in out.iter().enumerate() {
        assert_eq!(tokens[..], greedy.row(i).to_vec()[..], "prompt {i}");
        assert_eq!(stats.draft_forwards, 0);
        let (plain, accepted) = speculative::reference::prompt_lookup_generate(
            &target,
            &rows[i],
            n_new,
            LOOKUP,
            Sampling::Greedy,
            &mut rng,
        )
        .unwrap();
        assert_eq!(&plain, tokens);
        assert_eq!(accepted, stats.accepted);
        rounds += stats.rounds;
        generated += stats.generated;
    }
    // The toy model's greedy output falls into loops: lookup finds them, where on the
    // same prompts' sampled output (T = 1) it finds far less.
    let tau = generated as f64 / rounds as f64;
    let sampled = speculative_generate_batch(
        &target,
        &LOOKUP,
        &rows,
        n_new,
        Sampling::Temperature(1.0),
        &mut rng,
    )
    .unwrap();
    let (r, g) = sampled
        .iter()
        .fold((0, 0), |(r, g), (_, s)| (r + s.rounds, g + s.generated));
    let tau_sampled = g as f64 / r as f64;
    assert!(
        tau > 1.2 && tau > tau_sampled + 0.1,
        "τ {tau} vs sampled {tau_sampled}"
    );
}

#[test]
fn sampled_lookup_is_its_plain_reference_draw_for_draw() {
    let params = sharpened(&TINY, 5, 60.0);
    let target = TransformerLM::new(&params, TINY, "t").unwrap();
    for (seed, prompt) in [(1u64, &[3u32, 6, 3, 6][..]), (2, &[1, 2, 1]), (3, &[5])] {
        let mut a = ChaCha8Rng::seed_from_u64(seed);
        let mut b = ChaCha8Rng::seed_from_u64(seed);
        let s = Sampling::Temperature(0.8);
        let batched = speculative_generate_batch(&target, &LOOKUP, &[prompt], 10, s, &mut a)
            .unwrap()
            .remove(0);
        let plain =
            speculative::reference::prompt_lookup_generate(&target, prompt, 10, LOOKUP, s, &mut b)
                .unwrap();
        assert_eq!(batched.0, plain.0, "seed {seed}");
        assert_eq!(batched.1.accepted, plain.1, "seed {seed}");
    }
}

fn next_dist(model: &TransformerLM<'_>, tokens: &[u32], t: f64) -> Vec<f64> {
    let batch = Array2::from_shape_vec((1, tokens.len()), tokens.to_vec()).unwrap();
    let logits = model.full_logits(batch.view()).unwrap();
    softmax_probs(logits.slice(s![0, tokens.len() - 1, ..]), t).unwrap()
}

/// After "3 6 3" the lookup proposes "6 3 …" every time: the emitted tokens still follow
/// the target's distribution (first token and pair, χ² at 0.1%, 20,000 runs per T).
#[test]
fn sampled_lookup_draws_exactly_from_the_target() {
    let params = sharpened(&TINY, 5, 60.0);
    let target = TransformerLM::new(&params, TINY, "t").unwrap();
    let prompt = [3u32, 6, 3];
    let n = 20_000;
    for t in [0.7, 1.0] {
        let p1 = next_dist(&target, &prompt, t);
        let pairs: Vec<f64> = (0..8u32)
            .flat_map(|a| {
                let p2 = next_dist(&target, &[3, 6, 3, a], t);
                let pa = p1[a as usize];
                p2.into_iter().map(move |pb| pa * pb)
            })
            .collect();
        let mut rng = ChaCha8Rng::seed_from_u64(349);
        let (mut first, mut pair) = (vec![0usize; 8], vec![0usize; 64]);
        let prompts = vec![prompt.to_vec(); 100];
        for _ in 0..n / 100 {
            let out = speculative_generate_batch(
                &target,
                &LOOKUP,
                &prompts,
                2,
                Sampling::Temperature(t),
                &mut rng,
            )
            .unwrap();
            for (tokens, _) in out {
                first[tokens[0] as usize] += 1;
                pair[(tokens[0] * 8 + tokens[1]) as usize] += 1;
            }
        }
        let (chi2, df) = chi_square(&first, &p1, n);
        assert!(
            chi2 < chi_square_critical(df),
            "T = {t}, first: χ² = {chi2:.1} on {df} df"
        );
        let (chi2, df) = chi_square(&pair, &pairs, n);
        assert!(
            chi2 < chi_square_critical(df),
            "T = {t}, pairs: χ² = {chi2:.1} on {df} df"
        );
    }
}

#[test]
fn bad_knobs_are_refused() {
    let params = sharpened(&TINY, 5, 60.0);
    let target = TransformerLM::new(&params, TINY, "t").unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    for bad in [
        PromptLookup {
            max_ngram: 0,
            gamma: 2,
        },
        PromptLookup {
            max_ngram: 5,
            gamma: 2,
        },
        PromptLookup {
            max_ngram: 2,
            gamma: 0,
        },
    ] {
        let e = speculative_generate_batch(&target, &bad, &[[1u32]], 3, Sampling::Greedy, &mut rng);
        assert!(e.is_err(), "{bad:?}");
    }
}
