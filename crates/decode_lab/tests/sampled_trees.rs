//! Lossless tree verification at temperature > 0, tested by distribution: the tokens a
//! sampled tree emits are distributed exactly as the target's own samples.
//!
//! Each test draws with a fixed seed and compares counts with the target's distribution
//! by χ² at a false-alarm rate of 0.1% per comparison (`chi_square_critical`, bins with
//! an expected count below 5 merged): a correct rule fails one comparison in a thousand
//! seeds, and with the seed fixed the outcome is the same on every run. The rule's own
//! arithmetic is checked over 200,000 draws per temperature on synthetic distributions;
//! the whole algorithm on the tiny model over as many runs per temperature as it takes to
//! catch a sampler 0.1 off in temperature (`stat_checks::draws_to_detect`: 6,717). A
//! deliberately broken rule (the residual not updated after a rejection) is rejected by the
//! same test.

mod common;
use common::{TINY, chi_square, chi_square_critical, sharpened};
use decode_lab::{
    Choice, Sampling, TreeDraft, TreeShape, accept_among, speculative, speculative_generate,
};
use ndarray::{Array1, Array2, s};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use transformer_lab::{TransformerLM, config_like, draw_weighted};

const V: usize = 8;

/// `softmax(logits / t)`.
fn softmax(logits: &[f64], t: f64) -> Array1<f64> {
    let max = logits.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v));
    let e: Array1<f64> = logits.iter().map(|&l| ((l - max) / t).exp()).collect();
    let z = e.sum();
    e / z
}

/// Synthetic target and draft distributions at temperature `t`: the root's and, after
/// each first token a, the next one's (`[V + 1][V]`, row 0 the root, row 1 + a after a).
fn synthetic(t: f64) -> (Vec<Array1<f64>>, Vec<Array1<f64>>) {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut table = |scale: f64| -> Vec<Array1<f64>> {
        (0..=V)
            .map(|_| {
                let logits: Vec<f64> = (0..V).map(|_| scale * rng.random::<f64>()).collect();
                softmax(&logits, t)
            })
            .collect()
    };
    (table(4.0), table(4.0))
}

/// The same rule with its residual never updated: a broken verifier, for the test to catch.
fn broken_accept(
    p: &Array1<f64>,
    q: &Array1<f64>,
    children: &[u32],
    rng: &mut ChaCha8Rng,
) -> Choice {
    for (i, &x) in children.iter().enumerate() {
        if rng.random::<f64>() < (p[x as usize] / q[x as usize]).min(1.0) {
            return Choice::Child(i);
        }
    }
    let residual: Vec<f64> = p.iter().zip(q).map(|(a, b)| (a - b).max(0.0)).collect();
    Choice::Token(draw_weighted(&residual, rng).unwrap() as u32)
}

/// A verification rule: target p, draft q, the candidates, the generator.
type Rule<'a> = dyn FnMut(&Array1<f64>, &Array1<f64>, &[u32], &mut ChaCha8Rng) -> Choice + 'a;

/// Draws `n` two-token outputs from a tree of `k` children at the root and `k` under
/// each, verified with `rule`; returns the counts of the first token and of the pair.
fn two_levels(
    n: usize,
    k: usize,
    t: f64,
    rule: &mut Rule<'_>,
) -> (Vec<usize>, Vec<usize>, Vec<Array1<f64>>) {
    let (p, q) = synthetic(t);
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let draw = |d: &Array1<f64>, rng: &mut ChaCha8Rng| {
        draw_weighted(d.as_slice().unwrap(), rng).unwrap() as u32
    };
    let mut first = vec![0usize; V];
    let mut pair = vec![0usize; V * V];
    for _ in 0..n {
        let root: Vec<u32> = (0..k).map(|_| draw(&q[0], &mut rng)).collect();
        let (a, accepted) = match rule(&p[0], &q[0], &root, &mut rng) {
            Choice::Child(i) => (root[i], true),
            Choice::Token(x) => (x, false),
        };
        // After an accepted child the walk goes on in its subtree; after a drawn token the
        // round is over, and the next token is the target's own.
        let b = if accepted {
            let row = 1 + a as usize;
            let kids: Vec<u32> = (0..k).map(|_| draw(&q[row], &mut rng)).collect();
            match rule(&p[row], &q[row], &kids, &mut rng) {
                Choice::Child(i) => kids[i],
                Choice::Token(x) => x,
            }
        } else {
            draw(&p[1 + a as usize], &mut rng)
        };
        first[a as usize] += 1;
        pair[a as usize * V + b as usize] += 1;
    }
    (first, pair, p)
}

fn pair_probabilities(p: &[Array1<f64>]) -> Vec<f64> {
    (0..V)
        .flat_map(|a| (0..V).map(move |b| p[0][a] * p[1 + a][b]))
        .collect()
}

#[test]
fn the_tree_rule_emits_the_targets_distribution_at_every_temperature() {
    let n = 200_000;
    for t in [0.7, 1.0] {
        let (p0, q0) = synthetic(t);
        let overlap: f64 = p0[0].iter().zip(&q0[0]).map(|(a, b)| a.min(*b)).sum();
        assert!(
            overlap < 0.9,
            "p and q must differ for the test to mean anything: {overlap}"
        );
        let mut rule = |p: &Array1<f64>, q: &Array1<f64>, c: &[u32], rng: &mut ChaCha8Rng| {
            accept_among(p, q, c, rng).unwrap()
        };
        let (first, pair, p) = two_levels(n, 3, t, &mut rule);
        let (chi2, df) = chi_square(&first, p[0].as_slice().unwrap(), n);
        assert!(
            chi2 < chi_square_critical(df),
            "T = {t}, first: χ² = {chi2:.1} on {df} df"
        );
        let (chi2, df) = chi_square(&pair, &pair_probabilities(&p), n);
        assert!(
            chi2 < chi_square_critical(df),
            "T = {t}, pairs: χ² = {chi2:.1} on {df} df"
        );
    }
}

/// The test has teeth: the same draws verified by a rule that forgets to update p after a
/// rejection are far from the target's distribution.
#[test]
fn a_broken_rule_fails_the_same_test() {
    let n = 200_000;
    let mut rule = |p: &Array1<f64>, q: &Array1<f64>, c: &[u32], rng: &mut ChaCha8Rng| {
        broken_accept(p, q, c, rng)
    };
    let (first, _, p) = two_levels(n, 3, 1.0, &mut rule);
    let (chi2, df) = chi_square(&first, p[0].as_slice().unwrap(), n);
    assert!(
        chi2 > 10.0 * chi_square_critical(df),
        "χ² = {chi2:.1} on {df} df"
    );
}

/// With one child the rule is speculative sampling: it accepts x with probability
/// min(1, p(x)/q(x)), so Σ min(p, q) of the time; by hand on two tokens.
#[test]
fn one_child_is_speculative_sampling_by_hand() {
    let p = Array1::from(vec![0.75, 0.25]);
    let q = Array1::from(vec![0.25, 0.75]);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let n = 100_000;
    let mut accepted = 0;
    let mut drawn = [0usize; 2];
    for _ in 0..n {
        // Child 1 (q's favourite): accepted with p/q = 1/3; on rejection the residual is
        // max(0, p − q) = (0.5, 0), so token 0 is drawn.
        match accept_among(&p, &q, &[1], &mut rng).unwrap() {
            Choice::Child(_) => accepted += 1,
            Choice::Token(x) => drawn[x as usize] += 1,
        }
    }
    let rate = accepted as f64 / n as f64;
    assert!((rate - 1.0 / 3.0).abs() < 0.005, "{rate}");
    assert_eq!(drawn[1], 0);
    // No child: drawn from p.
    let none = (0..20_000)
        .filter(|_| accept_among(&p, &q, &[], &mut rng).unwrap() == Choice::Token(0))
        .count();
    assert!((none as f64 / 20_000.0 - 0.75).abs() < 0.015, "{none}");
}

/// The tiny model (vocabulary 8), peaked so the draft (its first layer) differs.
fn tiny() -> transformer_lab::Params {
    sharpened(&TINY, 5, 60.0)
}

fn next_dist(model: &TransformerLM<'_>, tokens: &[u32], t: f64) -> Vec<f64> {
    let batch = Array2::from_shape_vec((1, tokens.len()), tokens.to_vec()).unwrap();
    let logits = model.full_logits(batch.view()).unwrap();
    let row: Vec<f64> = logits
        .slice(s![0, tokens.len() - 1, ..])
        .iter()
        .map(|&l| l as f64)
        .collect();
    softmax(&row, t).to_vec()
}

/// The whole algorithm on the tiny model: a tree of 2 × 2 drafted candidates at
/// temperatures 0.7 and 1.0, 20,000 runs of two tokens each; the first token and the pair
/// match the target's own distribution.
#[test]
fn sampled_trees_on_the_tiny_model_draw_exactly_from_the_target() {
    let params = tiny();
    let target = TransformerLM::new(&params, TINY, "t").unwrap();
    let draft = TransformerLM::new(&params, config_like(&TINY, 1), "d").unwrap();
    let prompt = [3u32, 6];
    let shape = TreeShape::new(&[2, 2]).unwrap();
    // The first token's and the pair's distributions at temperature t.
    let dists = |t: f64| {
        let p1 = next_dist(&target, &prompt, t);
        let pairs: Vec<f64> = (0..V as u32)
            .flat_map(|a| {
                let p2 = next_dist(&target, &[3, 6, a], t);
                let pa = p1[a as usize];
                p2.into_iter().map(move |pb| pa * pb)
            })
            .collect();
        (p1, pairs)
    };
    // As many draws as it takes to catch a sampler 0.1 off in temperature by its first
    // tokens (6,717 at T = 1): the size the mistake sets, not habit.
    let n = [0.7, 1.0]
        .map(|t| stat_checks::draws_to_detect(&dists(t).0, &dists(t + 0.1).0))
        .into_iter()
        .max()
        .unwrap();
    assert!((5_000..10_000).contains(&n), "{n}");
    for t in [0.7, 1.0] {
        let (p1, pairs) = dists(t);
        let mut rng = ChaCha8Rng::seed_from_u64(349);
        let mut first = vec![0usize; V];
        let mut pair = vec![0usize; V * V];
        for _ in 0..n {
            let (tokens, _) = speculative_generate(
                &target,
                &TreeDraft {
                    draft: &draft,
                    shape: &shape,
                },
                &prompt,
                2,
                Sampling::Temperature(t),
                &mut rng,
            )
            .unwrap();
            first[tokens[0] as usize] += 1;
            pair[(tokens[0] as usize) * V + tokens[1] as usize] += 1;
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

/// The batched path and the plain reference draw the same tokens from the same seed, for
/// sampled trees of several shapes.
#[test]
fn a_sampled_tree_is_token_for_token_its_plain_reference() {
    let params = tiny();
    let target = TransformerLM::new(&params, TINY, "t").unwrap();
    let draft = TransformerLM::new(&params, config_like(&TINY, 1), "d").unwrap();
    for levels in [&[2u32, 2][..], &[3, 1, 2], &[1, 1, 1], &[4]] {
        let shape = TreeShape::new(levels).unwrap();
        for (seed, prompt) in [(1u64, &[3u32, 6][..]), (2, &[1]), (3, &[5, 5, 2])] {
            let run = |reference: bool| {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let s = Sampling::Temperature(0.8);
                if reference {
                    speculative::reference::speculative_generate_tree(
                        &target, &draft, prompt, 9, &shape, s, &mut rng,
                    )
                    .unwrap()
                    .0
                } else {
                    speculative_generate(
                        &target,
                        &TreeDraft {
                            draft: &draft,
                            shape: &shape,
                        },
                        prompt,
                        9,
                        s,
                        &mut rng,
                    )
                    .unwrap()
                    .0
                }
            };
            assert_eq!(run(false), run(true), "{levels:?}, seed {seed}");
        }
    }
}
