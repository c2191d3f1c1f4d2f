//! Speculative decoding for real: a draft proposes a chain or a tree of tokens, the target
//! verifies all of them in one forward pass, both KV caches roll back to the accepted path.
//!
//! This is the mechanism of Leviathan et al. (2023) and Chen et al. (2023) for chains, and
//! of SpecInfer (Miao et al. 2024), Medusa and EAGLE for trees, on the toy model of
//! `transformer_lab`:
//!
//! - the draft expands the tree level by level with its KV cache: level j keeps the
//!   draft's top-k_j children of every node of level j − 1 ([`TreeShape`]);
//! - the target scores every node in one pass with a tree attention mask: each node sees
//!   the committed sequence and its own ancestors, at RoPE position = prefix length +
//!   depth ([`TransformerLM::extend_tree`]);
//! - greedy: the longest root-to-node path on which every token is the target's own argmax
//!   is accepted, plus the target's next token after it (the bonus token), so the output
//!   is exactly the target's greedy output;
//! - sampling (chains): draft token x is accepted with probability min(1, p(x)/q(x)); on
//!   rejection a token is drawn from normalise(max(0, p − q)), so every output token is
//!   distributed exactly as if sampled from the target;
//! - both caches keep only the accepted path ([`KvCache::keep`](transformer_lab::KvCache::keep)).

use ndarray::{Array1, Array2, ArrayView1};
use rand::Rng;
use transformer_lab::{KvCache, TransformerLM, argmax, draw_weighted, softmax_weights};

use crate::Error;

/// The shape of a draft tree: level j keeps the draft's top-`levels[j]` candidates under
/// every node of level j − 1. A chain of γ is `[1; γ]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeShape {
    levels: Vec<u32>,
}

impl TreeShape {
    /// A chain of `gamma` drafted tokens. Errors when `gamma` is 0.
    pub fn chain(gamma: u32) -> Result<Self, Error> {
        if gamma == 0 {
            return Err(Error::Argument("a draft chain needs γ ≥ 1 tokens".into()));
        }
        Ok(TreeShape {
            levels: vec![1; gamma as usize],
        })
    }

    /// A tree with per-level top-k `levels`. Errors when it is empty, a level is 0, or it
    /// has more than 4096 nodes.
    pub fn new(levels: &[u32]) -> Result<Self, Error> {
        let acc = crate::tree_accept_lengths(&[], levels)?; // validates and counts the nodes
        if acc.nodes > 4096 {
            return Err(Error::Argument(format!(
                "the tree {levels:?} has {} nodes; at most 4096",
                acc.nodes
            )));
        }
        Ok(TreeShape {
            levels: levels.to_vec(),
        })
    }

    /// Per-level top-k.
    pub fn levels(&self) -> &[u32] {
        &self.levels
    }

    /// Whether every level keeps one candidate.
    pub fn is_chain(&self) -> bool {
        self.levels.iter().all(|&k| k == 1)
    }

    /// Draft tokens in the whole tree: `Σ_j Π_{i≤j} k_i`.
    pub fn nodes(&self) -> usize {
        self.levels
            .iter()
            .scan(1usize, |w, &k| {
                *w *= k as usize;
                Some(*w)
            })
            .sum()
    }
}

/// How the next token is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sampling {
    /// The argmax (ties to the lowest id); trees or chains.
    Greedy,
    /// Drawn from `softmax(logits / T)`, T > 0; chains only (speculative sampling).
    Temperature(f64),
}

/// What one run of [`speculative_generate`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpecStats {
    /// Draft-then-verify rounds.
    pub rounds: usize,
    /// Target forward passes: one prefill (if the prompt has more than one token) and one
    /// verification per round.
    pub target_forwards: usize,
    /// Draft forward passes: prefill, one per tree level per round, and catch-ups.
    pub draft_forwards: usize,
    /// Draft tokens accepted in each round (the bonus or correction token not counted).
    pub accepted: Vec<u32>,
    /// Tokens produced (may exceed the `n_new` asked for by the last round's extra; the
    /// returned tokens are cut to `n_new`).
    pub generated: usize,
}

impl SpecStats {
    /// Measured τ: tokens produced per verification pass (per round).
    pub fn tau(&self) -> f64 {
        if self.rounds == 0 {
            0.0
        } else {
            self.generated as f64 / self.rounds as f64
        }
    }
}

/// One node of a draft tree, in the order it was created (level by level).
#[derive(Debug, Clone)]
struct Node {
    token: u32,
    parent: Option<usize>,
    depth: usize,
}

/// Generates `n_new` tokens after `prompt` with `target`, drafting with `draft` in rounds
/// of the given `shape`, and returns them with statistics.
///
/// Greedy output is token for token what [`autoregressive_generate`](crate::autoregressive_generate)
/// gives the target alone; sampled output has exactly the target's distribution. `rng` is
/// used only when sampling.
///
/// Errors: models of different vocabularies; an empty prompt, or one longer than either
/// model's `max_seq`; `prompt.len() + n_new` beyond `max_seq`; a negative or non-finite
/// temperature; a tree (not a chain) with sampling; a prompt token outside the vocabulary.
pub fn speculative_generate<R: Rng + ?Sized>(
    target: &TransformerLM<'_>,
    draft: &TransformerLM<'_>,
    prompt: &[u32],
    n_new: usize,
    shape: &TreeShape,
    sampling: Sampling,
    rng: &mut R,
) -> Result<(Vec<u32>, SpecStats), Error> {
    let (tc, dc) = (target.cfg(), draft.cfg());
    if tc.vocab != dc.vocab {
        return Err(Error::Argument(format!(
            "target and draft must share a vocabulary, got {} and {}",
            tc.vocab, dc.vocab
        )));
    }
    if prompt.is_empty() {
        return Err(Error::Argument(
            "the prompt needs at least one token".into(),
        ));
    }
    let max_seq = tc.max_seq.min(dc.max_seq);
    if prompt.len() + n_new > max_seq {
        return Err(Error::Model(transformer_lab::Error::TooLong {
            len: prompt.len() + n_new,
            max: max_seq,
        }));
    }
    let temperature = match sampling {
        Sampling::Greedy => 0.0,
        Sampling::Temperature(t) if !t.is_finite() || t < 0.0 => {
            return Err(Error::Model(transformer_lab::Error::Temperature(t)));
        }
        Sampling::Temperature(t) => t,
    };
    if temperature > 0.0 && !shape.is_chain() {
        return Err(Error::Argument(
            "speculative sampling (temperature > 0) is implemented for chains only; use Sampling::Greedy for trees".into(),
        ));
    }

    let mut stats = SpecStats::default();
    let slots = max_seq + shape.nodes() + 1;
    let mut tcache = target.new_cache(1, slots)?;
    let mut dcache = draft.new_cache(1, slots)?;
    let mut committed: Vec<u32> = prompt.to_vec();
    // Invariant: the target's cache holds every committed token but the last one (the
    // root of the next round); the draft's holds at most that much.
    if prompt.len() > 1 {
        let head = row(&prompt[..prompt.len() - 1]);
        target.extend(&mut tcache, head.view())?;
        draft.extend(&mut dcache, head.view())?;
        stats.target_forwards += 1;
        stats.draft_forwards += 1;
    }
    while stats.generated < n_new {
        let remaining = n_new - stats.generated;
        let depth = shape.levels.len().min(remaining - 1);
        let produced = if temperature == 0.0 {
            greedy_round(
                target,
                draft,
                &mut tcache,
                &mut dcache,
                &committed,
                &shape.levels[..depth],
                &mut stats,
            )?
        } else {
            sampled_round(
                target,
                draft,
                &mut tcache,
                &mut dcache,
                &committed,
                depth,
                temperature,
                rng,
                &mut stats,
            )?
        };
        stats.rounds += 1;
        stats.generated += produced.len();
        committed.extend(produced);
    }
    let out = committed[prompt.len()..prompt.len() + n_new].to_vec();
    Ok((out, stats))
}

fn row(tokens: &[u32]) -> Array2<u32> {
    Array2::from_shape_vec((1, tokens.len()), tokens.to_vec()).expect("one row")
}

/// Starts a round: feeds the draft the committed tokens it has not seen, up to (not
/// including) the root, and returns the root's cache slot and the tree holding the root.
fn start_round(
    draft: &TransformerLM<'_>,
    dcache: &mut KvCache,
    committed: &[u32],
    stats: &mut SpecStats,
) -> Result<(usize, Vec<Node>), Error> {
    let root_slot = committed.len() - 1;
    if dcache.len() < root_slot {
        draft.extend(dcache, row(&committed[dcache.len()..root_slot]).view())?;
        stats.draft_forwards += 1;
    }
    let root = Node {
        token: committed[root_slot],
        parent: None,
        depth: 0,
    };
    Ok((root_slot, vec![root]))
}

/// Feeds `nodes[from..]` (one tree level) to `model` and returns their logits `[n, vocab]`.
/// Node i sits at cache slot `root_slot + i` and RoPE position `root_slot + depth`.
fn feed_level(
    model: &TransformerLM<'_>,
    cache: &mut KvCache,
    nodes: &[Node],
    from: usize,
    root_slot: usize,
) -> Result<Array2<f32>, Error> {
    let level = &nodes[from..];
    let tokens: Vec<u32> = level.iter().map(|n| n.token).collect();
    let positions: Vec<usize> = level.iter().map(|n| root_slot + n.depth).collect();
    let visible: Vec<Vec<usize>> = (from..nodes.len())
        .map(|i| {
            let mut path = vec![root_slot + i];
            let mut cur = nodes[i].parent;
            while let Some(p) = cur {
                path.push(root_slot + p);
                cur = nodes[p].parent;
            }
            path.reverse();
            path
        })
        .collect();
    let logits = model.extend_tree(cache, row(&tokens).view(), &positions, root_slot, &visible)?;
    Ok(logits.index_axis_move(ndarray::Axis(0), 0))
}

/// The draft's `k` best tokens by logit, best first, ties to the lowest id.
fn top_k(logits: ArrayView1<f32>, k: usize) -> Vec<u32> {
    let mut ids: Vec<u32> = (0..logits.len() as u32).collect();
    // A strict total order (no two ids compare equal), so the k best and their order
    // are unique: select them, then sort only those.
    let best_first = |a: &u32, b: &u32| {
        logits[*b as usize]
            .total_cmp(&logits[*a as usize])
            .then(a.cmp(b))
    };
    let k = k.min(ids.len());
    if k == 0 {
        return Vec::new();
    }
    if k < ids.len() {
        ids.select_nth_unstable_by(k - 1, best_first);
    }
    ids.truncate(k);
    ids.sort_by(best_first);
    ids
}

/// One greedy round with a tree of the given levels; returns the tokens it commits.
fn greedy_round(
    target: &TransformerLM<'_>,
    draft: &TransformerLM<'_>,
    tcache: &mut KvCache,
    dcache: &mut KvCache,
    committed: &[u32],
    levels: &[u32],
    stats: &mut SpecStats,
) -> Result<Vec<u32>, Error> {
    let (root_slot, mut nodes) = start_round(draft, dcache, committed, stats)?;
    let mut level_start = 0;
    for (depth, &k) in levels.iter().enumerate() {
        let logits = feed_level(draft, dcache, &nodes, level_start, root_slot)?;
        stats.draft_forwards += 1;
        let level_end = nodes.len();
        for (row, parent) in logits.outer_iter().zip(level_start..level_end) {
            for token in top_k(row, k as usize) {
                nodes.push(Node {
                    token,
                    parent: Some(parent),
                    depth: depth + 1,
                });
            }
        }
        level_start = level_end;
    }
    let fed_to_draft = level_start; // the last level is verified but never drafted from
    let logits = feed_level(target, tcache, &nodes, 0, root_slot)?;
    stats.target_forwards += 1;

    let mut path = vec![0usize];
    loop {
        let cur = *path.last().expect("the root");
        let want = argmax(logits.row(cur)) as u32;
        match (cur + 1..nodes.len())
            .find(|&i| nodes[i].parent == Some(cur) && nodes[i].token == want)
        {
            Some(child) => path.push(child),
            None => break,
        }
    }
    let last = *path.last().expect("the root");
    let bonus = argmax(logits.row(last)) as u32;
    stats.accepted.push(path.len() as u32 - 1);
    tcache.keep(
        root_slot,
        &path.iter().map(|&i| root_slot + i).collect::<Vec<_>>(),
    )?;
    let in_draft: Vec<usize> = path
        .iter()
        .filter(|&&i| i < fed_to_draft)
        .map(|&i| root_slot + i)
        .collect();
    if dcache.len() > root_slot {
        dcache.keep(root_slot, &in_draft)?;
    }
    let mut produced: Vec<u32> = path[1..].iter().map(|&i| nodes[i].token).collect();
    produced.push(bonus);
    Ok(produced)
}

/// `softmax(logits / t)` in f64, normalised.
fn probabilities(logits: ArrayView1<f32>, t: f64) -> Array1<f64> {
    let mut p = Array1::from(softmax_weights(logits, t));
    p /= p.sum();
    p
}

/// Draws an index with probability proportional to `p`.
fn draw<R: Rng + ?Sized>(p: &Array1<f64>, rng: &mut R) -> u32 {
    draw_weighted(p.as_slice().expect("a fresh array is contiguous"), rng) as u32
}

/// One round of speculative sampling with a chain of `gamma` drafts.
#[allow(clippy::too_many_arguments)]
fn sampled_round<R: Rng + ?Sized>(
    target: &TransformerLM<'_>,
    draft: &TransformerLM<'_>,
    tcache: &mut KvCache,
    dcache: &mut KvCache,
    committed: &[u32],
    gamma: usize,
    t: f64,
    rng: &mut R,
    stats: &mut SpecStats,
) -> Result<Vec<u32>, Error> {
    let (root_slot, mut nodes) = start_round(draft, dcache, committed, stats)?;
    let mut q = Vec::with_capacity(gamma);
    for depth in 0..gamma {
        let logits = feed_level(draft, dcache, &nodes, depth, root_slot)?;
        stats.draft_forwards += 1;
        let qd = probabilities(logits.row(0), t);
        let token = draw(&qd, rng);
        q.push(qd);
        nodes.push(Node {
            token,
            parent: Some(depth),
            depth: depth + 1,
        });
    }
    let logits = feed_level(target, tcache, &nodes, 0, root_slot)?;
    stats.target_forwards += 1;

    let mut produced = Vec::with_capacity(gamma + 1);
    let mut accepted = 0;
    for (i, qi) in q.iter().enumerate() {
        let x = nodes[i + 1].token as usize;
        let pi = probabilities(logits.row(i), t);
        if rng.random::<f64>() < (pi[x] / qi[x]).min(1.0) {
            produced.push(x as u32);
            accepted += 1;
        } else {
            let residual = (&pi - qi).mapv(|v| v.max(0.0));
            // p = q exactly would leave nothing to reject with; fall back to p.
            let token = if residual.sum() > 0.0 {
                draw(&residual, rng)
            } else {
                draw(&pi, rng)
            };
            produced.push(token);
            break;
        }
    }
    if accepted == gamma {
        produced.push(draw(&probabilities(logits.row(gamma), t), rng));
    }
    stats.accepted.push(accepted as u32);
    let keep: Vec<usize> = (0..=accepted).map(|i| root_slot + i).collect();
    tcache.keep(root_slot, &keep)?;
    if dcache.len() > root_slot {
        let fed = dcache.len() - root_slot; // root and drafts 1..gamma−1
        dcache.keep(root_slot, &keep[..(accepted + 1).min(fed)])?;
    }
    Ok(produced)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn shapes_count_their_nodes_and_reject_empty_levels() {
        assert_eq!(TreeShape::chain(4).unwrap().nodes(), 4);
        assert_eq!(TreeShape::new(&[4, 4, 4, 4]).unwrap().nodes(), 340);
        assert!(
            TreeShape::chain(4).unwrap().is_chain() && !TreeShape::new(&[2, 1]).unwrap().is_chain()
        );
        assert!(TreeShape::chain(0).is_err());
        assert!(TreeShape::new(&[]).is_err());
        assert!(TreeShape::new(&[2, 0]).is_err());
        assert!(TreeShape::new(&[16, 16, 16]).is_err(), "4368 nodes");
    }

    #[test]
    fn top_k_is_best_first_with_ties_to_the_lowest_id() {
        assert_eq!(
            top_k(array![0.5f32, 2.0, 2.0, -1.0, 3.0].view(), 3),
            vec![4, 1, 2]
        );
        assert_eq!(top_k(array![1.0f32, 1.0].view(), 5), vec![0, 1]);
        assert_eq!(top_k(array![1.0f32, 1.0].view(), 0), Vec::<u32>::new());
        // Against sorting every id, on logits with many ties, for every k.
        let logits = ndarray::Array1::from_shape_fn(40, |i| ((i * 7) % 5) as f32 - 2.0);
        let mut all: Vec<u32> = (0..40).collect();
        all.sort_by(|&a, &b| {
            logits[b as usize]
                .total_cmp(&logits[a as usize])
                .then(a.cmp(&b))
        });
        for k in 0..=41 {
            assert_eq!(top_k(logits.view(), k), all[..k.min(40)], "k = {k}");
        }
    }

    #[test]
    fn probabilities_are_a_tempered_softmax() {
        let p = probabilities(array![0.0f32, 2f32.ln()].view(), 1.0);
        // ln 2 is rounded to f32, so the ratio is 2 to within 1e-7.
        assert!((p[0] - 1.0 / 3.0).abs() < 1e-7 && (p[1] - 2.0 / 3.0).abs() < 1e-7);
        let flat = probabilities(array![0.0f32, 2f32.ln()].view(), 1e9);
        assert!((flat[0] - 0.5).abs() < 1e-6);
    }
}
