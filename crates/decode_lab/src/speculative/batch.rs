//! The steps of a batched round, each one ragged pass over the sequences that need it:
//! prefill, the draft catching up, one draft level, the target's verification.

use ndarray::Array2;
use rand::Rng;
use transformer_lab::{Feed, KvCache, TransformerLM};

use super::accept::{draw, greedy_path, probabilities, sampled_path, top_k};
use super::dynamic::{Candidate, DynamicTree, keep_most_confident};
use super::lane::{Lane, LevelMask, Node, causal};
use crate::Error;

/// Which of a lane's caches a pass feeds.
#[derive(Debug, Clone, Copy)]
enum Cache {
    Target,
    Draft,
}

/// Feeds `feeds[j]` to the target or draft cache of lane `which[j]` (increasing), all in
/// one ragged pass of `model`, and counts the pass in their statistics. Returns the
/// logits, the rows of `which[0]` first. Nothing to feed is no pass.
fn forward(
    model: &TransformerLM<'_>,
    lanes: &mut [Lane],
    which: &[usize],
    feeds: &[Feed<'_>],
    cache: Cache,
) -> Result<Array2<f32>, Error> {
    if which.is_empty() {
        return Ok(Array2::zeros((0, model.cfg().vocab)));
    }
    let mut caches: Vec<&mut KvCache> = Vec::with_capacity(which.len());
    let mut wanted = which.iter().peekable();
    for (i, lane) in lanes.iter_mut().enumerate() {
        if wanted.next_if_eq(&&i).is_some() {
            caches.push(match cache {
                Cache::Target => {
                    lane.stats.target_forwards += 1;
                    &mut lane.tcache
                }
                Cache::Draft => {
                    lane.stats.draft_forwards += 1;
                    &mut lane.dcache
                }
            });
        }
    }
    Ok(model.extend_ragged(&mut caches, feeds)?)
}

/// Prefill: both models read every prompt but its last token (the first round's root),
/// one ragged pass each over the prompts longer than one token.
pub(super) fn prefill(
    target: &TransformerLM<'_>,
    draft: &TransformerLM<'_>,
    lanes: &mut [Lane],
) -> Result<(), Error> {
    let long: Vec<usize> = (0..lanes.len())
        .filter(|&i| lanes[i].committed.len() > 1)
        .collect();
    let heads: Vec<Vec<u32>> = long
        .iter()
        .map(|&i| lanes[i].committed[..lanes[i].root_slot()].to_vec())
        .collect();
    let feeds: Vec<Feed<'_>> = heads.iter().map(|h| causal(h)).collect();
    forward(target, lanes, &long, &feeds, Cache::Target)?;
    forward(draft, lanes, &long, &feeds, Cache::Draft)?;
    Ok(())
}

/// The draft catches up with the committed tokens it has not seen (the last round's
/// deepest accepted node, which it was never fed), up to (not including) each root.
pub(super) fn catch_up_draft(
    draft: &TransformerLM<'_>,
    lanes: &mut [Lane],
    active: &[usize],
) -> Result<(), Error> {
    let behind: Vec<usize> = active
        .iter()
        .copied()
        .filter(|&i| lanes[i].dcache.len() < lanes[i].root_slot())
        .collect();
    let missing: Vec<Vec<u32>> = behind
        .iter()
        .map(|&i| lanes[i].committed[lanes[i].dcache.len()..lanes[i].root_slot()].to_vec())
        .collect();
    let feeds: Vec<Feed<'_>> = missing.iter().map(|m| causal(m)).collect();
    forward(draft, lanes, &behind, &feeds, Cache::Draft)?;
    Ok(())
}

/// One draft level for the `growing` lanes, in one batched pass: the draft reads the
/// level its tree ended with and gives every node of it `k` children, its top-k
/// (greedy, `temperature` 0) or `k` drawn independently from its distribution q
/// (sampling: lane after lane, node after node, `k` draws each; q is kept for the
/// verification).
pub(super) fn draft_level<R: Rng + ?Sized>(
    draft: &TransformerLM<'_>,
    lanes: &mut [Lane],
    growing: &[usize],
    k: u32,
    temperature: f64,
    rng: &mut R,
) -> Result<(), Error> {
    let masks: Vec<LevelMask> = growing
        .iter()
        .map(|&i| lanes[i].level_mask(lanes[i].level_start))
        .collect();
    let feeds: Vec<Feed<'_>> = masks.iter().map(LevelMask::feed).collect();
    let logits = forward(draft, lanes, growing, &feeds, Cache::Draft)?;
    let mut rows = logits.outer_iter();
    for &i in growing {
        let lane = &mut lanes[i];
        let level_end = lane.nodes.len();
        for (parent, logits) in (lane.level_start..level_end).zip(&mut rows) {
            let depth = lane.nodes[parent].depth + 1;
            let child = |token| Node {
                token,
                parent: Some(parent),
                depth,
            };
            if temperature == 0.0 {
                for token in top_k(logits, k as usize) {
                    lane.nodes.push(child(token));
                }
            } else {
                let q = probabilities(logits, temperature)?;
                for _ in 0..k {
                    lane.nodes.push(child(draw(&q, rng)?));
                }
                if lane.q.len() <= parent {
                    lane.q.resize(parent + 1, None);
                }
                lane.q[parent] = Some(q);
            }
        }
        lane.level_start = level_end;
    }
    Ok(())
}

/// One level of a dynamic tree for the `growing` lanes, in one batched pass: every node
/// of the level the tree ended with proposes the draft's top `width` tokens, each scored
/// by its parent's score times the draft's probability of it (temperature 1); each lane
/// keeps its `width` best ([`rerank`] then keeps the `budget` best of all levels).
pub(super) fn draft_level_dynamic(
    draft: &TransformerLM<'_>,
    lanes: &mut [Lane],
    growing: &[usize],
    tree: DynamicTree,
) -> Result<(), Error> {
    let masks: Vec<LevelMask> = growing
        .iter()
        .map(|&i| lanes[i].level_mask(lanes[i].level_start))
        .collect();
    let feeds: Vec<Feed<'_>> = masks.iter().map(LevelMask::feed).collect();
    let logits = forward(draft, lanes, growing, &feeds, Cache::Draft)?;
    let mut rows = logits.outer_iter();
    for &i in growing {
        let lane = &mut lanes[i];
        let level_end = lane.nodes.len();
        let mut candidates = Vec::new();
        for (parent, logits) in (lane.level_start..level_end).zip(&mut rows) {
            let q = probabilities(logits, 1.0)?;
            for token in top_k(logits, tree.width as usize) {
                candidates.push(Candidate {
                    parent,
                    token,
                    score: lane.score[parent] * q[token as usize],
                });
            }
        }
        for c in keep_most_confident(candidates, tree.width as usize) {
            let depth = lane.nodes[c.parent].depth + 1;
            lane.nodes.push(Node {
                token: c.token,
                parent: Some(c.parent),
                depth,
            });
            lane.score.push(c.score);
        }
        lane.level_start = level_end;
    }
    Ok(())
}

/// EAGLE-2's reranking: of every node each `active` lane drafted, the `budget` with the
/// highest cumulative draft probability (ties to the earlier drafted) are the tree the
/// target verifies. A child's score is at most its parent's, so the kept nodes' parents
/// are kept.
pub(super) fn rerank(lanes: &mut [Lane], active: &[usize], budget: usize) {
    for &i in active {
        let lane = &mut lanes[i];
        let mut order: Vec<usize> = (1..lane.nodes.len()).collect();
        order.sort_by(|&a, &b| lane.score[b].total_cmp(&lane.score[a]).then(a.cmp(&b)));
        order.truncate(budget);
        order.sort_unstable();
        lane.prune(&order);
    }
}

/// The target verifies every `active` lane's tree in one batched tree-masked pass; each
/// lane accepts its path (lane after lane, drawing from `rng` when sampling) and rolls
/// its caches back to it.
pub(super) fn verify<R: Rng + ?Sized>(
    target: &TransformerLM<'_>,
    lanes: &mut [Lane],
    active: &[usize],
    temperature: f64,
    rng: &mut R,
) -> Result<(), Error> {
    let masks: Vec<LevelMask> = active.iter().map(|&i| lanes[i].level_mask(0)).collect();
    let feeds: Vec<Feed<'_>> = masks.iter().map(LevelMask::feed).collect();
    let logits = forward(target, lanes, active, &feeds, Cache::Target)?;
    let mut row = 0;
    for &i in active {
        let lane = &mut lanes[i];
        let rows = logits.slice(ndarray::s![row..row + lane.nodes.len(), ..]);
        row += lane.nodes.len();
        let (path, next) = if temperature == 0.0 {
            greedy_path(&lane.nodes, rows)?
        } else {
            sampled_path(&lane.nodes, &lane.q, rows, temperature, rng)?
        };
        lane.commit(&path, next)?;
    }
    Ok(())
}
