//! Prompt lookup (n-gram) drafting, with no draft model (Saxena 2023, "prompt lookup
//! decoding"; vLLM's `ngram` speculator): the draft of a round is what followed the latest
//! earlier occurrence of the sequence's last n tokens, longest n first. The target
//! verifies the chain in one pass like any other draft: greedy, or by speculative sampling
//! with the draft's distribution a point mass on each proposed token (accepted with
//! probability p(x); after a rejection the token is drawn from p with x removed), so the
//! output is the target's own, token for token or in distribution.

use rand::Rng;
use transformer_lab::{Feed, KvCache, TransformerLM, argmax};

use super::accept::{Choice, accept_among, probabilities};
use super::{Sampling, SpecStats};
use crate::Error;
use ndarray::Array1;

/// The knobs of prompt lookup: the longest n-gram matched, and the tokens proposed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptLookup {
    /// The longest suffix matched, from 1 to [`MAX_NGRAM`]; shorter ones are tried when it
    /// is not found.
    pub max_ngram: u32,
    /// Tokens proposed per round at most, ≥ 1.
    pub gamma: u32,
}

/// The longest n-gram prompt lookup matches: 4, as vLLM's default `prompt_lookup_max`.
pub const MAX_NGRAM: u32 = 4;

impl PromptLookup {
    /// Checks the knobs.
    ///
    /// Errors: `max_ngram` outside 1 to [`MAX_NGRAM`], or γ = 0 or beyond
    /// [`crate::MAX_TREE_NODES`].
    pub fn check(&self) -> Result<(), Error> {
        if !(1..=MAX_NGRAM).contains(&self.max_ngram) {
            return Err(Error::Argument(format!(
                "prompt lookup matches n-grams of 1 to {MAX_NGRAM} tokens, got {}",
                self.max_ngram
            )));
        }
        if self.gamma == 0 || u64::from(self.gamma) > crate::MAX_TREE_NODES {
            return Err(Error::Argument(format!(
                "prompt lookup proposes 1 to {} tokens a round, got {}",
                crate::MAX_TREE_NODES,
                self.gamma
            )));
        }
        Ok(())
    }
}

/// The proposal after `tokens`: for n from `max_ngram` down to 1, the latest earlier
/// occurrence of the last n tokens, and the (at most `gamma`) tokens that followed it;
/// empty when no suffix occurs earlier.
///
/// ```
/// use decode_lab::speculative::lookup_proposal;
/// // "3 4" occurred before, followed by 5 6 3: propose those.
/// assert_eq!(lookup_proposal(&[1, 3, 4, 5, 6, 3, 4], 2, 3), vec![5, 6, 3]);
/// // No bigram "9 4" earlier; the unigram 4 was followed by 5.
/// assert_eq!(lookup_proposal(&[4, 5, 9, 4], 2, 2), vec![5, 9]);
/// assert!(lookup_proposal(&[1, 2, 3], 3, 4).is_empty());
/// ```
pub fn lookup_proposal(tokens: &[u32], max_ngram: usize, gamma: usize) -> Vec<u32> {
    let len = tokens.len();
    for n in (1..=max_ngram.min(len.saturating_sub(1))).rev() {
        let suffix = &tokens[len - n..];
        if let Some(start) = (0..len - n).rev().find(|&j| &tokens[j..j + n] == suffix) {
            let from = start + n;
            return tokens[from..(from + gamma).min(len)].to_vec();
        }
    }
    Vec::new()
}

/// One sequence of a prompt-lookup batch.
struct Lane {
    committed: Vec<u32>,
    prompt_len: usize,
    cache: KvCache,
    stats: SpecStats,
    proposal: Vec<u32>,
}

/// Prompt-lookup speculative decoding of a whole batch: every round, each unfinished
/// sequence proposes its lookup (cut to the tokens still missing) and the target verifies
/// all of them in one ragged pass; a sequence with no match takes a plain step. Returns,
/// per prompt, its `n_new` tokens and statistics (no draft passes).
///
/// Errors: as [`crate::speculative_generate`]'s; bad knobs ([`PromptLookup::check`]).
pub fn prompt_lookup_generate_batch<P: AsRef<[u32]>, R: Rng + ?Sized>(
    target: &TransformerLM<'_>,
    prompts: &[P],
    n_new: usize,
    lookup: PromptLookup,
    sampling: Sampling,
    rng: &mut R,
) -> Result<Vec<(Vec<u32>, SpecStats)>, Error> {
    lookup.check()?;
    let chain = crate::TreeShape::chain(1)?;
    let (_, temperature) = super::check(target, target, prompts, n_new, &chain, sampling)?;
    let mut lanes = prompts
        .iter()
        .map(|p| {
            let p = p.as_ref();
            Ok(Lane {
                committed: p.to_vec(),
                prompt_len: p.len(),
                cache: target.new_cache(1, p.len() + n_new + lookup.gamma as usize + 1)?,
                stats: SpecStats::default(),
                proposal: Vec::new(),
            })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    // Prefill every prompt but its last token (the first round's root).
    let long: Vec<usize> = (0..lanes.len())
        .filter(|&i| lanes[i].committed.len() > 1)
        .collect();
    let heads: Vec<Vec<u32>> = long
        .iter()
        .map(|&i| lanes[i].committed[..lanes[i].committed.len() - 1].to_vec())
        .collect();
    forward(target, &mut lanes, &long, &heads)?;
    loop {
        let active: Vec<usize> = (0..lanes.len())
            .filter(|&i| lanes[i].stats.generated < n_new)
            .collect();
        if active.is_empty() {
            break;
        }
        let chunks: Vec<Vec<u32>> = active
            .iter()
            .map(|&i| {
                let lane = &mut lanes[i];
                let missing = n_new - lane.stats.generated;
                let gamma = (lookup.gamma as usize).min(missing - 1);
                lane.proposal = lookup_proposal(&lane.committed, lookup.max_ngram as usize, gamma);
                let root = *lane.committed.last().expect("a prompt token");
                [&[root][..], &lane.proposal].concat()
            })
            .collect();
        let logits = forward(target, &mut lanes, &active, &chunks)?;
        let mut row = 0;
        for &i in &active {
            let lane = &mut lanes[i];
            let n = lane.proposal.len() + 1;
            let rows = logits.slice(ndarray::s![row..row + n, ..]);
            row += n;
            let mut accepted = 0;
            let next = loop {
                let logits = rows.row(accepted);
                let proposed = lane.proposal.get(accepted).copied();
                if temperature == 0.0 {
                    let want = argmax(logits)? as u32;
                    match proposed {
                        Some(x) if x == want => accepted += 1,
                        _ => break want,
                    }
                } else {
                    let p = probabilities(logits, temperature)?;
                    let Some(x) = proposed else {
                        break super::accept::draw(&p, rng)?;
                    };
                    let mut point = Array1::zeros(p.len());
                    point[x as usize] = 1.0;
                    match accept_among(&p, &point, &[x], rng)? {
                        Choice::Child(_) => accepted += 1,
                        Choice::Token(t) => break t,
                    }
                }
            };
            let root_slot = lane.committed.len() - 1;
            let slots: Vec<usize> = (root_slot..=root_slot + accepted).collect();
            lane.cache.keep(root_slot, &slots)?;
            lane.committed.extend_from_slice(&lane.proposal[..accepted]);
            lane.committed.push(next);
            lane.stats.accepted.push(accepted as u32);
            lane.stats.rounds += 1;
            lane.stats.generated += accepted + 1;
        }
    }
    Ok(lanes
        .into_iter()
        .map(|lane| {
            let start = lane.prompt_len;
            (lane.committed[start..start + n_new].to_vec(), lane.stats)
        })
        .collect())
}

/// Feeds `chunks[j]` causally to lane `which[j]`'s cache in one ragged pass, and counts
/// the pass. Nothing to feed is no pass.
fn forward(
    target: &TransformerLM<'_>,
    lanes: &mut [Lane],
    which: &[usize],
    chunks: &[Vec<u32>],
) -> Result<ndarray::Array2<f32>, Error> {
    if which.is_empty() {
        return Ok(ndarray::Array2::zeros((0, target.cfg().vocab)));
    }
    let mut caches: Vec<&mut KvCache> = Vec::with_capacity(which.len());
    let mut wanted = which.iter().peekable();
    for (i, lane) in lanes.iter_mut().enumerate() {
        if wanted.next_if_eq(&&i).is_some() {
            lane.stats.target_forwards += 1;
            caches.push(&mut lane.cache);
        }
    }
    let feeds: Vec<Feed<'_>> = chunks
        .iter()
        .map(|c| Feed {
            tokens: c,
            tree: None,
        })
        .collect();
    Ok(target.extend_ragged(&mut caches, &feeds)?)
}
