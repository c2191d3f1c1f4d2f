//! Greedy decoding of a batch, plain and speculative, on any [`Lm`] pair, timed.
//!
//! `decode_lab::speculative_generate_batch` needs its draft to be a `TransformerLM`, and
//! the INT4 draft is not one (`transformer_lab` holds f32 weights only), so this is the
//! plain loop, for chains: each round the draft proposes γ tokens per sequence (one
//! batched pass per token), the target verifies all of them in one ragged pass of γ + 1
//! tokens per sequence, each sequence keeps the drafts up to its first disagreement plus
//! the target's own next token, and rolls its caches back. Greedy verification is
//! lossless: the output is token for token the target's own greedy output (tested).
//!
//! Invariants per sequence: the target cache holds every committed token but the last
//! (which the next pass feeds); the draft cache holds a prefix of the committed tokens.

use std::time::Instant;

use ndarray::Axis;
use transformer_lab::argmax;

use crate::{Error, Lm};

/// What one batched generation did.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    /// Per prompt, the tokens generated after it.
    pub tokens: Vec<Vec<u32>>,
    /// Target forward passes after the prefill (one per step or per round).
    pub target_passes: usize,
    /// Draft forward passes after the prefill.
    pub draft_passes: usize,
    /// Rounds summed over sequences (0 for plain decoding).
    pub rounds: usize,
    /// Seconds from the end of the prefill to the last token.
    pub seconds: f64,
}

/// Per sequence, the tokens after its prompt.
fn generated(seqs: &[Vec<u32>], prompts: &[Vec<u32>]) -> Vec<Vec<u32>> {
    let after = |(s, p): (&Vec<u32>, &Vec<u32>)| s[p.len()..].to_vec();
    seqs.iter().zip(prompts).map(after).collect()
}

impl Generation {
    /// Tokens generated per second, all sequences together.
    pub fn tokens_per_second(&self) -> f64 {
        self.tokens.iter().map(Vec::len).sum::<usize>() as f64 / self.seconds
    }

    /// Measured τ: tokens per sequence-round (1 + mean accepted drafts); 1 without rounds.
    pub fn tau(&self) -> f64 {
        if self.rounds == 0 {
            1.0
        } else {
            self.tokens.iter().map(Vec::len).sum::<usize>() as f64 / self.rounds as f64
        }
    }
}

fn check(prompts: &[Vec<u32>], n_new: usize, max_seq: usize) -> Result<(), Error> {
    if prompts.is_empty() || n_new == 0 {
        return Err(Error::Argument(
            "generation needs a prompt and at least one new token".into(),
        ));
    }
    for p in prompts {
        if p.is_empty() {
            return Err(Error::Argument("a prompt needs at least one token".into()));
        }
        if p.len().saturating_add(n_new) > max_seq {
            return Err(transformer_lab::Error::TooLong {
                len: p.len().saturating_add(n_new),
                max: max_seq,
            }
            .into());
        }
    }
    Ok(())
}

/// Feeds each listed sequence its tokens in one batched pass; returns the logits rows
/// split per sequence (`[n_i, vocab]` each) as argmaxes.
fn pass<L: Lm>(
    model: &L,
    caches: &mut [L::Cache],
    which: &[usize],
    feeds: &[&[u32]],
) -> Result<Vec<Vec<u32>>, Error> {
    let mut refs: Vec<&mut L::Cache> = Vec::with_capacity(which.len());
    // Borrow the listed caches mutably, in order (indices are increasing).
    let mut rest: &mut [L::Cache] = caches;
    let mut base = 0;
    for &i in which {
        let (_, tail) = std::mem::take(&mut rest).split_at_mut(i - base);
        let (c, tail) = tail.split_first_mut().expect("index in range");
        refs.push(c);
        rest = tail;
        base = i + 1;
    }
    let logits = model.extend(&mut refs, feeds)?;
    let mut out = Vec::with_capacity(feeds.len());
    let mut r = 0;
    for f in feeds {
        out.push(
            (r..r + f.len())
                .map(|i| Ok(argmax(logits.index_axis(Axis(0), i))? as u32))
                .collect::<Result<Vec<u32>, Error>>()?,
        );
        r += f.len();
    }
    Ok(out)
}

fn prefill<L: Lm>(model: &L, prompts: &[Vec<u32>]) -> Result<Vec<L::Cache>, Error> {
    let mut caches = prompts
        .iter()
        .map(|_| model.new_cache())
        .collect::<Result<Vec<_>, Error>>()?;
    let long: Vec<usize> = (0..prompts.len())
        .filter(|&i| prompts[i].len() > 1)
        .collect();
    let feeds: Vec<&[u32]> = long
        .iter()
        .map(|&i| &prompts[i][..prompts[i].len() - 1])
        .collect();
    if !long.is_empty() {
        pass(model, &mut caches, &long, &feeds)?;
    }
    Ok(caches)
}

/// Plain greedy decoding of `n_new` tokens after each prompt, all sequences in one batched
/// pass per step. Errors: no prompts, an empty prompt, `n_new` 0, a sequence past `max_seq`.
pub fn greedy<L: Lm>(model: &L, prompts: &[Vec<u32>], n_new: usize) -> Result<Generation, Error> {
    check(prompts, n_new, model.max_seq())?;
    let mut caches = prefill(model, prompts)?;
    let mut seqs: Vec<Vec<u32>> = prompts.to_vec();
    let all: Vec<usize> = (0..prompts.len()).collect();
    let t0 = Instant::now();
    for _ in 0..n_new {
        let feeds: Vec<&[u32]> = seqs.iter().map(|s| &s[s.len() - 1..]).collect();
        let next = pass(model, &mut caches, &all, &feeds)?;
        for (s, t) in seqs.iter_mut().zip(next) {
            s.push(t[0]);
        }
    }
    Ok(Generation {
        tokens: generated(&seqs, prompts),
        target_passes: n_new,
        draft_passes: 0,
        rounds: 0,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// Speculative greedy decoding with chains of `gamma` drafted tokens (fewer near the end,
/// so no sequence overshoots `n_new`). Errors: those of [`greedy`], `gamma` 0, models of
/// different vocabularies.
pub fn speculative<T: Lm, D: Lm>(
    target: &T,
    draft: &D,
    prompts: &[Vec<u32>],
    n_new: usize,
    gamma: usize,
) -> Result<Generation, Error> {
    if gamma == 0 {
        return Err(Error::Argument(
            "a speculative round drafts at least one token".into(),
        ));
    }
    if target.vocab() != draft.vocab() {
        return Err(Error::Argument(format!(
            "target and draft must share a vocabulary, got {} and {}",
            target.vocab(),
            draft.vocab()
        )));
    }
    check(prompts, n_new, target.max_seq().min(draft.max_seq()))?;
    let mut tc = prefill(target, prompts)?;
    let mut dc = prefill(draft, prompts)?;
    let mut seqs: Vec<Vec<u32>> = prompts.to_vec();
    let goal: Vec<usize> = prompts.iter().map(|p| p.len() + n_new).collect();
    let (mut target_passes, mut draft_passes, mut rounds) = (0, 0, 0);
    let t0 = Instant::now();
    loop {
        let active: Vec<usize> = (0..seqs.len())
            .filter(|&i| seqs[i].len() < goal[i])
            .collect();
        if active.is_empty() {
            break;
        }
        // γ_i: at most the tokens still missing less the one the target adds.
        let g: Vec<usize> = active
            .iter()
            .map(|&i| gamma.min(goal[i] - seqs[i].len() - 1))
            .collect();
        let mut drafts: Vec<Vec<u32>> = vec![Vec::new(); active.len()];
        for step in 0..g.iter().copied().max().unwrap_or(0) {
            let lanes: Vec<usize> = (0..active.len()).filter(|&a| g[a] > step).collect();
            let which: Vec<usize> = lanes.iter().map(|&a| active[a]).collect();
            let catch_up: Vec<Vec<u32>> = lanes
                .iter()
                .map(|&a| {
                    let i = active[a];
                    if step == 0 {
                        seqs[i][D::cache_len(&dc[i])..].to_vec()
                    } else {
                        vec![drafts[a][step - 1]]
                    }
                })
                .collect();
            let feeds: Vec<&[u32]> = catch_up.iter().map(Vec::as_slice).collect();
            let next = pass(draft, &mut dc, &which, &feeds)?;
            for (&a, t) in lanes.iter().zip(next) {
                drafts[a].push(*t.last().expect("at least one token fed"));
            }
            draft_passes += 1;
        }
        let verify: Vec<Vec<u32>> = active
            .iter()
            .zip(&drafts)
            .map(|(&i, d)| {
                std::iter::once(*seqs[i].last().expect("a prompt"))
                    .chain(d.iter().copied())
                    .collect()
            })
            .collect();
        let feeds: Vec<&[u32]> = verify.iter().map(Vec::as_slice).collect();
        let best = pass(target, &mut tc, &active, &feeds)?;
        target_passes += 1;
        for ((&i, d), t) in active.iter().zip(&drafts).zip(best) {
            let base = seqs[i].len(); // target cache now holds base − 1 + |d| + 1 slots
            let accepted = d.iter().zip(&t).take_while(|(x, y)| x == y).count();
            seqs[i].extend_from_slice(&d[..accepted]);
            seqs[i].push(t[accepted]);
            T::truncate(&mut tc[i], base + accepted);
            // The draft cache holds base + |d| − 1 slots, valid up to the first rejection.
            D::truncate(&mut dc[i], base + accepted.min(d.len().saturating_sub(1)));
            rounds += 1;
        }
    }
    Ok(Generation {
        tokens: generated(&seqs, prompts),
        target_passes,
        draft_passes,
        rounds,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scaled::{Models, SCALED_BASE, params};
    use transformer_lab::{Config, autoregressive_generate};

    fn small() -> Config {
        Config {
            n_layers: 3,
            d_model: 128,
            n_heads: 4,
            d_ff: 256,
            vocab: 64,
            max_seq: 48,
            ..SCALED_BASE
        }
    }

    fn prompts() -> Vec<Vec<u32>> {
        vec![vec![3, 9, 27, 17], vec![5], vec![60, 1, 2, 3, 4, 5, 6]]
    }

    #[test]
    fn plain_greedy_decoding_is_transformer_labs_autoregressive_generation() {
        let cfg = small();
        let p = params(&cfg, 11).unwrap();
        let m = Models::new(&p, cfg).unwrap();
        let ours = greedy(&m.target, &prompts(), 12).unwrap();
        for (prompt, got) in prompts().iter().zip(&ours.tokens) {
            let arr = ndarray::Array2::from_shape_vec((1, prompt.len()), prompt.clone()).unwrap();
            let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(0);
            let theirs = autoregressive_generate(&m.target, arr.view(), 12, 0.0, &mut rng).unwrap();
            assert_eq!(&theirs.row(0).to_vec(), got);
        }
    }

    #[test]
    fn speculative_decoding_is_lossless_with_either_draft_and_counts_its_rounds() {
        let cfg = small();
        let p = params(&cfg, 12).unwrap();
        let m = Models::new(&p, cfg).unwrap();
        let plain = greedy(&m.target, &prompts(), 20).unwrap();
        for gamma in [1, 3, 5] {
            let a = speculative(&m.target, &m.int4, &prompts(), 20, gamma).unwrap();
            let b = speculative(&m.target, &m.first_layer, &prompts(), 20, gamma).unwrap();
            assert_eq!(a.tokens, plain.tokens, "INT4 draft, γ = {gamma}");
            assert_eq!(b.tokens, plain.tokens, "first-layer draft, γ = {gamma}");
            for g in [&a, &b] {
                assert!(g.tau() >= 1.0 && g.tau() <= gamma as f64 + 1.0);
                assert!(g.rounds >= 3 * 20 / (gamma + 1));
            }
        }
        // A draft that is the target itself is always right: τ = γ + 1 but at the end.
        let own = speculative(&m.target, &m.target, &prompts(), 20, 4).unwrap();
        assert_eq!(own.tokens, plain.tokens);
        assert_eq!(own.rounds, 3 * 4); // 20 tokens: rounds of 5, 5, 5, 5
    }

    #[test]
    fn bad_arguments_are_errors() {
        let cfg = small();
        let p = params(&cfg, 13).unwrap();
        let m = Models::new(&p, cfg).unwrap();
        assert!(speculative(&m.target, &m.int4, &prompts(), 5, 0).is_err());
        assert!(greedy(&m.target, &[], 5).is_err());
        assert!(greedy(&m.target, &[vec![]], 5).is_err());
        assert!(greedy(&m.target, &prompts(), 45).is_err());
    }
}
