//! What the speculative-decoding test files share.
#![allow(dead_code)] // each test binary uses some of it

pub mod heads;

use transformer_lab::{Config, Params, init_params};

/// A vocabulary of 8, for sampling tests whose outcomes can all be counted.
pub const TINY: Config = Config {
    vocab: 8,
    d_model: 16,
    n_layers: 2,
    n_heads: 2,
    d_ff: 32,
    max_seq: 16,
    norm_eps: 1e-5,
    rope_theta: 10000.0,
};

/// `cfg`'s seeded weights with peaked next-token distributions: random init alone gives
/// nearly uniform ones (so every draft would be as good as any other, and p and q would
/// hardly differ); the LM head is scaled by `head`, each layer's output projections by 20.
pub fn sharpened(cfg: &Config, seed: u64, head: f32) -> Params {
    let mut p = init_params(cfg, seed).unwrap();
    p.lm_head *= head;
    for l in &mut p.layers {
        l.w_down *= 20.0;
        l.wo *= 20.0;
    }
    p
}

pub use stat_checks::{chi_square, chi_square_critical};

/// Three tokens after `[3, 6]` on `target` (a vocabulary of 8) drawn at T = 1 with
/// `proposer` from a generator seeded `seed` (three, so the first round drafts two
/// levels): the first token and the pairs counted against the target's own distributions
/// (χ² at p = 0.001, `label` naming a failure), over as many runs as it takes to catch a
/// sampler at T = 1.1 by the first tokens (`stat_checks::draws_to_detect`). Returns the
/// share of runs whose first round accepted a draft token.
pub fn sampled_pairs_match_the_target<P: decode_lab::speculative::Proposer>(
    target: &transformer_lab::TransformerLM<'_>,
    proposer: &P,
    seed: u64,
    label: &str,
) -> f64 {
    use rand::SeedableRng;
    let at = |tokens: &[u32], temperature: f64| -> Vec<f64> {
        let t = ndarray::Array2::from_shape_vec((1, tokens.len()), tokens.to_vec()).unwrap();
        let logits = target.full_logits(t.view()).unwrap();
        let last = logits.slice(ndarray::s![0, tokens.len() - 1, ..]);
        transformer_lab::softmax_probs(last, temperature).unwrap()
    };
    let dist = |tokens: &[u32]| at(tokens, 1.0);
    let p1 = dist(&[3, 6]);
    let n = stat_checks::draws_to_detect(&p1, &at(&[3, 6], 1.1));
    assert!(
        n <= 20_000,
        "{label}: {n} runs to catch T = 1.1, a flatter target than meant"
    );
    let pairs: Vec<f64> = (0..8u32)
        .flat_map(|a| {
            let pa = p1[a as usize];
            dist(&[3, 6, a]).into_iter().map(move |pb| pa * pb)
        })
        .collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut first = vec![0usize; 8];
    let mut pair = vec![0usize; 64];
    let mut accepted = 0usize;
    for _ in 0..n {
        let sampling = decode_lab::Sampling::Temperature(1.0);
        let (tokens, stats) =
            decode_lab::speculative_generate(target, proposer, &[3, 6], 3, sampling, &mut rng)
                .unwrap();
        first[tokens[0] as usize] += 1;
        pair[(tokens[0] * 8 + tokens[1]) as usize] += 1;
        accepted += usize::from(stats.accepted[0] >= 1);
    }
    let (chi2, df) = chi_square(&first, &p1, n);
    assert!(
        chi2 < chi_square_critical(df),
        "{label} first: χ² {chi2:.1}, {df} df"
    );
    let (chi2, df) = chi_square(&pair, &pairs, n);
    assert!(
        chi2 < chi_square_critical(df),
        "{label} pairs: χ² {chi2:.1}, {df} df"
    );
    accepted as f64 / n as f64
}
