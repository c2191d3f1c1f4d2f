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
//!
//! A whole batch advances together, as serving engines run it ([`speculative_generate_batch`]):
//! every draft level and every verification is one ragged pass over all unfinished
//! sequences ([`TransformerLM::extend_ragged`]), each sequence with its own caches, its own
//! length and its own accepted path. [`speculative_generate`] is a batch of one.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2};
use rand::Rng;
use transformer_lab::{
    Feed, KvCache, TransformerLM, TreeMask, argmax, draw_weighted, softmax_weights,
};

use crate::{Error, TreeShape};

/// How the next token is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sampling {
    /// The argmax (ties to the lowest id); trees or chains.
    Greedy,
    /// Drawn from `softmax(logits / T)`, T > 0; chains only (speculative sampling).
    Temperature(f64),
}

/// What one run of [`speculative_generate`] did, for one sequence.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpecStats {
    /// Draft-then-verify rounds.
    pub rounds: usize,
    /// Target forward passes this sequence took part in: one prefill (if the prompt has
    /// more than one token) and one verification per round.
    pub target_forwards: usize,
    /// Draft forward passes this sequence took part in: prefill, one per tree level per
    /// round, and catch-ups.
    pub draft_forwards: usize,
    /// Draft tokens accepted in each round (the bonus or correction token not counted).
    pub accepted: Vec<u32>,
    /// Tokens produced: exactly the `n_new` asked for (each round's tree is cut to the
    /// tokens still missing, so the last round cannot overshoot). Always `rounds` plus
    /// the sum of `accepted`.
    pub generated: usize,
}

impl SpecStats {
    /// Measured τ: tokens produced per verification pass (per round), = 1 + mean
    /// accepted. 1 when there was no round, like
    /// [`TreeAcceptance::tau`](crate::TreeAcceptance::tau) with no position.
    pub fn tau(&self) -> f64 {
        if self.rounds == 0 {
            1.0
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
/// used only when sampling. This is [`speculative_generate_batch`] with a batch of one.
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
    let mut out =
        speculative_generate_batch(target, draft, &[prompt], n_new, shape, sampling, rng)?;
    Ok(out.pop().expect("one result per prompt"))
}

/// Speculative decoding of a whole batch of `prompts` (of any lengths) at once, as
/// serving engines do: every round, the draft proposes every unfinished sequence's chain
/// or tree in one batched pass per level, the target verifies all of them in one batched
/// tree-masked pass ([`TransformerLM::extend_ragged`]), and each sequence accepts its own
/// path and rolls back its own caches; a sequence that has its `n_new` tokens drops out.
/// Returns, per prompt in order, its `n_new` tokens and statistics.
///
/// Each sequence's tokens and statistics are what it would get alone: greedy output is
/// token for token the target's own greedy output. When sampling, `rng` is drawn from
/// in a fixed order (per level, sequence after sequence; then the acceptance tests,
/// sequence after sequence), so a batch of one draws exactly as a sequence alone.
///
/// Errors: those of [`speculative_generate`], for any prompt.
pub fn speculative_generate_batch<P: AsRef<[u32]>, R: Rng + ?Sized>(
    target: &TransformerLM<'_>,
    draft: &TransformerLM<'_>,
    prompts: &[P],
    n_new: usize,
    shape: &TreeShape,
    sampling: Sampling,
    rng: &mut R,
) -> Result<Vec<(Vec<u32>, SpecStats)>, Error> {
    let (tc, dc) = (target.cfg(), draft.cfg());
    if tc.vocab != dc.vocab {
        return Err(Error::Argument(format!(
            "target and draft must share a vocabulary, got {} and {}",
            tc.vocab, dc.vocab
        )));
    }
    let max_seq = tc.max_seq.min(dc.max_seq);
    for prompt in prompts {
        let prompt = prompt.as_ref();
        if prompt.is_empty() {
            return Err(Error::Argument(
                "the prompt needs at least one token".into(),
            ));
        }
        if prompt.len() + n_new > max_seq {
            return Err(Error::Model(transformer_lab::Error::TooLong {
                len: prompt.len() + n_new,
                max: max_seq,
            }));
        }
        if let Some(&token) = prompt.iter().find(|&&t| t as usize >= tc.vocab) {
            return Err(Error::Model(transformer_lab::Error::TokenOutOfRange {
                token,
                vocab: tc.vocab,
            }));
        }
    }
    let temperature = match sampling {
        Sampling::Greedy => 0.0,
        Sampling::Temperature(t) if !t.is_finite() || t < 0.0 => {
            return Err(Error::Model(transformer_lab::Error::Temperature(t)));
        }
        Sampling::Temperature(t) => t,
    };
    let levels = shape.levels_for("speculative decoding")?;
    if temperature > 0.0 && !shape.is_chain() {
        return Err(Error::Argument(
            "speculative sampling (temperature > 0) is implemented for chains only; use Sampling::Greedy for trees".into(),
        ));
    }

    let mut lanes = prompts
        .iter()
        .map(|p| Lane::new(target, draft, p.as_ref(), n_new, shape))
        .collect::<Result<Vec<_>, Error>>()?;
    // Invariant: each target cache holds every committed token of its sequence but the
    // last one (the root of the next round); each draft cache holds at most that much.
    let long: Vec<usize> = (0..lanes.len())
        .filter(|&i| lanes[i].committed.len() > 1)
        .collect();
    let heads: Vec<Vec<u32>> = long
        .iter()
        .map(|&i| lanes[i].committed[..lanes[i].root_slot()].to_vec())
        .collect();
    let feeds: Vec<Feed<'_>> = heads.iter().map(|h| causal(h)).collect();
    forward(target, &mut lanes, &long, &feeds, Cache::Target)?;
    forward(draft, &mut lanes, &long, &feeds, Cache::Draft)?;

    loop {
        let active: Vec<usize> = (0..lanes.len())
            .filter(|&i| lanes[i].stats.generated < n_new)
            .collect();
        if active.is_empty() {
            break;
        }
        // The draft catches up with the committed tokens it has not seen, up to (not
        // including) each root.
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
        forward(draft, &mut lanes, &behind, &feeds, Cache::Draft)?;

        // Each tree starts at its root and is cut to the tokens still missing.
        for &i in &active {
            let lane = &mut lanes[i];
            lane.depth = levels.len().min(n_new - lane.stats.generated - 1);
            let root = Node {
                token: *lane.committed.last().expect("a prompt token"),
                parent: None,
                depth: 0,
            };
            lane.nodes = vec![root];
            lane.level_start = 0;
            lane.q.clear();
        }
        // The draft expands every tree level by level, one batched pass per level.
        for (depth, &k) in levels.iter().enumerate() {
            let growing: Vec<usize> = active
                .iter()
                .copied()
                .filter(|&i| depth < lanes[i].depth)
                .collect();
            if growing.is_empty() {
                break;
            }
            let masks: Vec<LevelMask> = growing
                .iter()
                .map(|&i| lanes[i].level_mask(lanes[i].level_start))
                .collect();
            let feeds: Vec<Feed<'_>> = masks.iter().map(LevelMask::feed).collect();
            let logits = forward(draft, &mut lanes, &growing, &feeds, Cache::Draft)?;
            let mut rows = logits.outer_iter();
            for &i in &growing {
                let lane = &mut lanes[i];
                let level_end = lane.nodes.len();
                for (parent, logits) in (lane.level_start..level_end).zip(&mut rows) {
                    if temperature == 0.0 {
                        for token in top_k(logits, k as usize) {
                            lane.nodes.push(Node {
                                token,
                                parent: Some(parent),
                                depth: depth + 1,
                            });
                        }
                    } else {
                        let q = probabilities(logits, temperature);
                        lane.nodes.push(Node {
                            token: draw(&q, rng),
                            parent: Some(parent),
                            depth: depth + 1,
                        });
                        lane.q.push(q);
                    }
                }
                lane.level_start = level_end;
            }
        }
        // The target verifies every tree in one batched pass.
        let masks: Vec<LevelMask> = active.iter().map(|&i| lanes[i].level_mask(0)).collect();
        let feeds: Vec<Feed<'_>> = masks.iter().map(LevelMask::feed).collect();
        let logits = forward(target, &mut lanes, &active, &feeds, Cache::Target)?;
        let mut row = 0;
        for &i in &active {
            let lane = &mut lanes[i];
            let rows = logits.slice(ndarray::s![row..row + lane.nodes.len(), ..]);
            row += lane.nodes.len();
            let (path, next) = if temperature == 0.0 {
                greedy_path(&lane.nodes, rows)
            } else {
                sampled_path(&lane.nodes, &lane.q, rows, temperature, rng)
            };
            lane.commit(&path, next)?;
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

/// One sequence of a batch: what it has committed, its caches and its current tree.
struct Lane {
    committed: Vec<u32>,
    prompt_len: usize,
    tcache: KvCache,
    dcache: KvCache,
    stats: SpecStats,
    /// This round's tree, the root first, level by level.
    nodes: Vec<Node>,
    /// Where the level the draft expands next starts in `nodes`; once drafting is done,
    /// the first node the draft was not fed (the last level is verified, never drafted
    /// from).
    level_start: usize,
    /// This round's depth: the shape's, cut to the tokens still missing.
    depth: usize,
    /// Sampling: the draft's distribution at each drafted node of the chain.
    q: Vec<Array1<f64>>,
}

/// Which of a lane's caches a pass feeds.
#[derive(Debug, Clone, Copy)]
enum Cache {
    Target,
    Draft,
}

/// Tree nodes ready to feed: tokens, positions and visibility.
struct LevelMask {
    tokens: Vec<u32>,
    positions: Vec<usize>,
    prefix: usize,
    visible: Vec<Vec<usize>>,
}

impl LevelMask {
    fn feed(&self) -> Feed<'_> {
        Feed {
            tokens: &self.tokens,
            tree: Some(TreeMask {
                positions: &self.positions,
                prefix: self.prefix,
                visible: &self.visible,
            }),
        }
    }
}

/// A causal chunk.
fn causal(tokens: &[u32]) -> Feed<'_> {
    Feed { tokens, tree: None }
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

impl Lane {
    fn new(
        target: &TransformerLM<'_>,
        draft: &TransformerLM<'_>,
        prompt: &[u32],
        n_new: usize,
        shape: &TreeShape,
    ) -> Result<Self, Error> {
        // Room for every committed token and one whole tree on top of them.
        let slots = prompt.len() + n_new + shape.nodes() as usize + 1;
        Ok(Lane {
            committed: prompt.to_vec(),
            prompt_len: prompt.len(),
            tcache: target.new_cache(1, slots)?,
            dcache: draft.new_cache(1, slots)?,
            stats: SpecStats::default(),
            nodes: Vec::new(),
            level_start: 0,
            depth: 0,
            q: Vec::new(),
        })
    }

    /// The cache slot of this round's root (the last committed token).
    fn root_slot(&self) -> usize {
        self.committed.len() - 1
    }

    /// `nodes[from..]`, ready to feed: node i sits at cache slot `root_slot + i` and RoPE
    /// position `root_slot + depth`, and sees the committed prefix and its ancestors.
    fn level_mask(&self, from: usize) -> LevelMask {
        let (nodes, root_slot) = (&self.nodes, self.root_slot());
        let level = &nodes[from..];
        LevelMask {
            tokens: level.iter().map(|n| n.token).collect(),
            positions: level.iter().map(|n| root_slot + n.depth).collect(),
            prefix: root_slot,
            visible: (from..nodes.len())
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
                .collect(),
        }
    }

    /// Ends a round: commits the accepted `path` (node indices from the root) and the
    /// target's `next` token after it, and rolls both caches back to that path.
    fn commit(&mut self, path: &[usize], next: u32) -> Result<(), Error> {
        let root_slot = self.root_slot();
        self.stats.accepted.push(path.len() as u32 - 1);
        let slots: Vec<usize> = path.iter().map(|&i| root_slot + i).collect();
        self.tcache.keep(root_slot, &slots)?;
        // The draft was fed the nodes before `level_start` only.
        let fed = self.level_start;
        let in_draft: Vec<usize> = path
            .iter()
            .filter(|&&i| i < fed)
            .map(|&i| root_slot + i)
            .collect();
        if self.dcache.len() > root_slot {
            self.dcache.keep(root_slot, &in_draft)?;
        }
        let nodes = &self.nodes;
        self.committed
            .extend(path[1..].iter().map(|&i| nodes[i].token));
        self.committed.push(next);
        self.stats.rounds += 1;
        self.stats.generated += path.len();
        Ok(())
    }
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

/// Greedy acceptance: the longest path from the root on which every node is the
/// target's argmax after its parent, and the target's argmax after the path's last node
/// (the bonus token). `logits [nodes, vocab]` are the target's, one row per node.
fn greedy_path(nodes: &[Node], logits: ArrayView2<f32>) -> (Vec<usize>, u32) {
    let mut path = vec![0usize];
    loop {
        let cur = *path.last().expect("the root");
        let want = argmax(logits.row(cur)).expect("a non-empty vocabulary") as u32;
        match (cur + 1..nodes.len())
            .find(|&i| nodes[i].parent == Some(cur) && nodes[i].token == want)
        {
            Some(child) => path.push(child),
            None => return (path, want),
        }
    }
}

/// `softmax(logits / t)` in f64, normalised.
fn probabilities(logits: ArrayView1<f32>, t: f64) -> Array1<f64> {
    let mut p = Array1::from(softmax_weights(logits, t).expect("finite logits"));
    p /= p.sum();
    p
}

/// Draws an index with probability proportional to `p`.
fn draw<R: Rng + ?Sized>(p: &Array1<f64>, rng: &mut R) -> u32 {
    draw_weighted(p.as_slice().expect("a fresh array is contiguous"), rng).expect("probabilities")
        as u32
}

/// Speculative sampling on a chain (node i + 1 drafted from the draft's distribution
/// `q[i]` after node i; `logits [nodes, vocab]` the target's): drafts are accepted in
/// order with probability min(1, p/q); at the first rejection a token is drawn from
/// normalise(max(0, p − q)), and if every draft is accepted, one from p after the last.
/// Returns the accepted path (node indices from the root) and that token.
fn sampled_path<R: Rng + ?Sized>(
    nodes: &[Node],
    q: &[Array1<f64>],
    logits: ArrayView2<f32>,
    t: f64,
    rng: &mut R,
) -> (Vec<usize>, u32) {
    let mut path = vec![0usize];
    for (i, qi) in q.iter().enumerate() {
        let x = nodes[i + 1].token as usize;
        let pi = probabilities(logits.row(i), t);
        if rng.random::<f64>() < (pi[x] / qi[x]).min(1.0) {
            path.push(i + 1);
        } else {
            let residual = (&pi - qi).mapv(|v| v.max(0.0));
            // p = q exactly would leave nothing to reject with; fall back to p.
            let token = if residual.sum() > 0.0 {
                draw(&residual, rng)
            } else {
                draw(&pi, rng)
            };
            return (path, token);
        }
    }
    (path, draw(&probabilities(logits.row(q.len()), t), rng))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

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
