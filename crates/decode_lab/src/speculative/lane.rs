//! One sequence of a batched speculative run, as the target sees it: what it has
//! committed, the target's KV cache, this round's tree, and how a round ends (commit the
//! accepted path, roll the target's cache back to it). What a proposer keeps of its own
//! (a draft model's cache) is the proposer's ([`super::Proposer::State`]).

use ndarray::Array1;
use transformer_lab::{Feed, KvCache, TransformerLM, TreeMask};

use crate::Error;

/// What one run of speculative decoding did, for one sequence.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpecStats {
    /// Draft-then-verify rounds.
    pub rounds: usize,
    /// Target forward passes this sequence took part in: one prefill (if the prompt has
    /// more than one token) and one verification per round.
    pub target_forwards: usize,
    /// Draft forward passes this sequence took part in: prefill, one per tree level per
    /// round, and catch-ups (none for a proposer without a model).
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

    /// Per level of a proposer `depth` levels deep (per draft position, for a chain): the
    /// rounds that drafted the level and reached it (every level before it accepted), and
    /// how many of them accepted a token there — α per position is the second over the
    /// first. A round cut to the tokens still missing drafted `min(depth, missing − 1)`
    /// levels; the levels it did not draft are not counted.
    ///
    /// ```
    /// // 10 tokens, depth 4: rounds accept 4, 0, 2, 0 of 4, 4, 3 and 0 levels drafted.
    /// let s = decode_lab::SpecStats { rounds: 4, target_forwards: 4, draft_forwards: 0,
    ///     accepted: vec![4, 0, 2, 0], generated: 10 };
    /// assert_eq!(s.per_level(4), [(3, 2), (2, 2), (2, 1), (1, 1)]);
    /// ```
    pub fn per_level(&self, depth: usize) -> Vec<(usize, usize)> {
        let mut counts = vec![(0, 0); depth];
        let mut produced = 0;
        for &a in &self.accepted {
            let a = a as usize;
            let missing = self.generated.saturating_sub(produced);
            let drafted = depth.min(missing.saturating_sub(1));
            for (level, (reached, accepted)) in counts.iter_mut().enumerate().take(drafted) {
                if a >= level {
                    *reached += 1;
                }
                if a > level {
                    *accepted += 1;
                }
            }
            produced += 1 + a;
        }
        counts
    }
}

/// One node of a round's tree, in the order it was proposed (level by level); the root is
/// the last committed token.
#[derive(Debug, Clone)]
pub struct Node {
    /// Its token.
    pub token: u32,
    /// Its parent's index in the tree (`None` for the root).
    pub parent: Option<usize>,
    /// Its level: 0 for the root.
    pub depth: usize,
}

/// One sequence of a batch: what it has committed, the target's cache, this round's tree.
pub struct Lane {
    pub(crate) committed: Vec<u32>,
    prompt_len: usize,
    /// The target's vocabulary: the length of every distribution over tokens.
    pub(crate) vocab: usize,
    pub(crate) cache: KvCache,
    pub(crate) stats: SpecStats,
    /// This round's tree, the root first, level by level.
    pub(crate) nodes: Vec<Node>,
    /// This round's depth: the proposer's, cut to the tokens still missing.
    pub(crate) depth: usize,
    /// Sampling: the proposer's distribution q at each node whose children it drew from
    /// it (`None` for a node it did not expand), by node index.
    pub(crate) q: Vec<Option<Array1<f64>>>,
}

/// Tree nodes ready to feed: tokens, positions and visibility.
pub(crate) struct LevelMask {
    tokens: Vec<u32>,
    positions: Vec<usize>,
    prefix: usize,
    visible: Vec<Vec<usize>>,
}

impl LevelMask {
    /// The nodes as one sequence's chunk of a ragged pass.
    pub(crate) fn feed(&self) -> Feed<'_> {
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
pub(crate) fn causal(tokens: &[u32]) -> Feed<'_> {
    Feed { tokens, tree: None }
}

impl Lane {
    /// A sequence about to be decoded after `prompt`, with an empty target cache of
    /// `slots` tokens.
    pub(crate) fn new(
        target: &TransformerLM<'_>,
        prompt: &[u32],
        slots: usize,
    ) -> Result<Self, Error> {
        Ok(Lane {
            committed: prompt.to_vec(),
            prompt_len: prompt.len(),
            vocab: target.cfg().vocab,
            cache: target.new_cache(1, slots)?,
            stats: SpecStats::default(),
            nodes: Vec::new(),
            depth: 0,
            q: Vec::new(),
        })
    }

    /// The tokens committed so far, the prompt first.
    pub fn committed(&self) -> &[u32] {
        &self.committed
    }

    /// This round's tree, the root first.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The cache slot of this round's root (the last committed token).
    pub(crate) fn root_slot(&self) -> usize {
        self.committed.len() - 1
    }

    /// Starts a round of `depth` levels: the tree is just its root, the last committed
    /// token.
    pub(crate) fn start_round(&mut self, depth: usize) {
        self.depth = depth;
        let root = Node {
            token: *self.committed.last().expect("a prompt token"),
            parent: None,
            depth: 0,
        };
        self.nodes = vec![root];
        self.q.clear();
    }

    /// Adds a node under `parent` (the proposer's), drawn from `q` when sampling.
    pub(crate) fn push(&mut self, token: u32, parent: usize) {
        let depth = self.nodes[parent].depth + 1;
        self.nodes.push(Node {
            token,
            parent: Some(parent),
            depth,
        });
    }

    /// Keeps `q` as the distribution node `parent`'s children were drawn from.
    pub(crate) fn set_q(&mut self, parent: usize, q: Array1<f64>) {
        if self.q.len() <= parent {
            self.q.resize(parent + 1, None);
        }
        self.q[parent] = Some(q);
    }

    /// `nodes[from..]`, ready to feed: node i sits at cache slot `root_slot + i` and RoPE
    /// position `root_slot + depth`, and sees the committed prefix and its ancestors.
    pub(crate) fn level_mask(&self, from: usize) -> LevelMask {
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
    /// target's `next` token after it, and rolls the target's cache back to that path.
    pub(crate) fn commit(&mut self, path: &[usize], next: u32) -> Result<(), Error> {
        let root_slot = self.root_slot();
        self.stats.accepted.push(path.len() as u32 - 1);
        let slots: Vec<usize> = path.iter().map(|&i| root_slot + i).collect();
        self.cache.keep(root_slot, &slots)?;
        let nodes = &self.nodes;
        self.committed
            .extend(path[1..].iter().map(|&i| nodes[i].token));
        self.committed.push(next);
        self.stats.rounds += 1;
        self.stats.generated += path.len();
        Ok(())
    }

    /// The `n_new` generated tokens and the statistics, once the sequence is done.
    pub(crate) fn finish(self, n_new: usize) -> (Vec<u32>, SpecStats) {
        let start = self.prompt_len;
        (self.committed[start..start + n_new].to_vec(), self.stats)
    }
}
