//! One sequence of a batched speculative run: what it has committed, its two KV caches,
//! this round's tree, and how a round ends (commit the accepted path, roll back).

use ndarray::Array1;
use transformer_lab::{Feed, KvCache, TransformerLM, TreeMask};

use super::SpecStats;
use crate::Error;

/// One node of a draft tree, in the order it was created (level by level).
#[derive(Debug, Clone)]
pub(super) struct Node {
    pub(super) token: u32,
    pub(super) parent: Option<usize>,
    pub(super) depth: usize,
}

/// One sequence of a batch: what it has committed, its caches and its current tree.
pub(super) struct Lane {
    pub(super) committed: Vec<u32>,
    prompt_len: usize,
    pub(super) tcache: KvCache,
    pub(super) dcache: KvCache,
    pub(super) stats: SpecStats,
    /// This round's tree, the root first, level by level.
    pub(super) nodes: Vec<Node>,
    /// Where the level the draft expands next starts in `nodes`; once drafting is done,
    /// the first node the draft was not fed (the last level is verified, never drafted
    /// from).
    pub(super) level_start: usize,
    /// This round's depth: the shape's, cut to the tokens still missing.
    pub(super) depth: usize,
    /// Sampling: the draft's distribution at each node it expanded (`None` for a node
    /// it did not), by node index.
    pub(super) q: Vec<Option<Array1<f64>>>,
    /// Dynamic trees: each node's cumulative draft probability (the root's is 1).
    pub(super) score: Vec<f64>,
    /// Each node's index when it was drafted (its draft-cache slot past the root): the
    /// node's own index, unless the tree was pruned after drafting ([`Lane::prune`]).
    pub(super) drafted_as: Vec<usize>,
}

/// Tree nodes ready to feed: tokens, positions and visibility.
pub(super) struct LevelMask {
    tokens: Vec<u32>,
    positions: Vec<usize>,
    prefix: usize,
    visible: Vec<Vec<usize>>,
}

impl LevelMask {
    /// The nodes as one sequence's chunk of a ragged pass.
    pub(super) fn feed(&self) -> Feed<'_> {
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
pub(super) fn causal(tokens: &[u32]) -> Feed<'_> {
    Feed { tokens, tree: None }
}

impl Lane {
    /// A sequence about to be decoded after `prompt`, with empty caches big enough for
    /// every committed token and one whole tree on top of them.
    pub(super) fn new(
        target: &TransformerLM<'_>,
        draft: &TransformerLM<'_>,
        prompt: &[u32],
        n_new: usize,
        max_nodes: usize,
    ) -> Result<Self, Error> {
        let slots = prompt.len() + n_new + max_nodes + 1;
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
            score: Vec::new(),
            drafted_as: Vec::new(),
        })
    }

    /// The cache slot of this round's root (the last committed token).
    pub(super) fn root_slot(&self) -> usize {
        self.committed.len() - 1
    }

    /// Starts a round of `depth` levels: the tree is just its root, the last committed
    /// token.
    pub(super) fn start_round(&mut self, depth: usize) {
        self.depth = depth;
        let root = Node {
            token: *self.committed.last().expect("a prompt token"),
            parent: None,
            depth: 0,
        };
        self.nodes = vec![root];
        self.level_start = 0;
        self.q.clear();
        self.score = vec![1.0];
        self.drafted_as.clear();
    }

    /// `nodes[from..]`, ready to feed: node i sits at cache slot `root_slot + i` and RoPE
    /// position `root_slot + depth`, and sees the committed prefix and its ancestors.
    pub(super) fn level_mask(&self, from: usize) -> LevelMask {
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
    pub(super) fn commit(&mut self, path: &[usize], next: u32) -> Result<(), Error> {
        let root_slot = self.root_slot();
        self.stats.accepted.push(path.len() as u32 - 1);
        let slots: Vec<usize> = path.iter().map(|&i| root_slot + i).collect();
        self.tcache.keep(root_slot, &slots)?;
        // The draft was fed the nodes drafted before `level_start` only, each at the slot
        // of its drafted index.
        let fed = self.level_start;
        let drafted = |i: usize| self.drafted_as.get(i).copied().unwrap_or(i);
        let in_draft: Vec<usize> = path
            .iter()
            .map(|&i| drafted(i))
            .filter(|&d| d < fed)
            .map(|d| root_slot + d)
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

    /// Keeps the root and the drafted nodes `keep` (increasing node indices, each one's
    /// parent kept too), renumbered in that order: the tree the target verifies. Each
    /// node remembers the index it was drafted as, where the draft's cache holds it.
    pub(super) fn prune(&mut self, keep: &[usize]) {
        let mut new_index = vec![usize::MAX; self.nodes.len()];
        new_index[0] = 0;
        let mut nodes = vec![self.nodes[0].clone()];
        let mut drafted_as = vec![0];
        for &i in keep {
            new_index[i] = nodes.len();
            let mut node = self.nodes[i].clone();
            node.parent = node.parent.map(|p| new_index[p]);
            nodes.push(node);
            drafted_as.push(i);
        }
        self.nodes = nodes;
        self.drafted_as = drafted_as;
    }

    /// The `n_new` generated tokens and the statistics, once the sequence is done.
    pub(super) fn finish(self, n_new: usize) -> (Vec<u32>, SpecStats) {
        let start = self.prompt_len;
        (self.committed[start..start + n_new].to_vec(), self.stats)
    }
}
