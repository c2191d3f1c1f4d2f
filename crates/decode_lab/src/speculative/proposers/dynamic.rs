//! A draft model proposing dynamic trees (EAGLE-2, Li et al. 2024; vLLM's `eagle.py` with a
//! tree): the tree's shape follows the draft's confidence. Expansion: level by level,
//! every node of the last level proposes its draft's top `width` next tokens, each scored
//! by its cumulative draft probability (the product of the draft's probabilities along
//! its path, at temperature 1), and the `width` best of the level are expanded next.
//! Reranking: of every node drafted, the `budget` best by score are the tree the target
//! verifies, in one tree-masked pass, greedily, as any other tree.

use rand::Rng;
use transformer_lab::TransformerLM;

use super::draft_caches::{DraftCaches, check_draft};
use crate::speculative::accept::{probabilities, top_k};
use crate::speculative::lane::{Lane, Node};
use crate::speculative::propose::Proposer;
use crate::{Error, MAX_TREE_NODES};

/// A draft model and the knobs of its dynamic trees: levels, nodes kept per level, nodes
/// in all.
#[derive(Clone, Copy)]
pub struct DynamicDraft<'d, 'p> {
    /// The draft model.
    pub draft: &'d TransformerLM<'p>,
    /// Draft levels (draft steps per round), ≥ 1.
    pub depth: u32,
    /// Candidates every node proposes and nodes each level expands, ≥ 1.
    pub width: u32,
    /// Nodes the target verifies per round at most (the reranking's), ≥ 1.
    pub budget: u32,
}

impl DynamicDraft<'_, '_> {
    /// A label for tables: `d×w≤n`.
    ///
    /// ```
    /// # let p = transformer_lab::init_params(&quant_lab::QCFG, 0)?;
    /// # let draft = transformer_lab::TransformerLM::new(&p, quant_lab::QCFG, "d")?;
    /// let tree = decode_lab::speculative::DynamicDraft { draft: &draft, depth: 4, width: 4, budget: 10 };
    /// assert_eq!(tree.label(), "4×4≤10");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn label(&self) -> String {
        format!("{}×{}≤{}", self.depth, self.width, self.budget)
    }

    /// Checks the knobs.
    ///
    /// Errors: a zero knob, or a budget or a drafted tree (`depth × width`) above
    /// [`MAX_TREE_NODES`].
    pub fn check_knobs(&self) -> Result<(), Error> {
        let (depth, width, budget) = (self.depth, self.width, self.budget);
        if depth == 0 || width == 0 || budget == 0 {
            return Err(Error::Argument(format!(
                "a dynamic tree needs depth, width and budget ≥ 1, got {depth}, {width}, {budget}"
            )));
        }
        let drafted = u64::from(depth) * u64::from(width);
        if u64::from(budget) > MAX_TREE_NODES || drafted > MAX_TREE_NODES {
            return Err(Error::Argument(format!(
                "a dynamic tree drafts depth × width = {drafted} nodes and keeps {budget}; both \
                 must be at most {MAX_TREE_NODES} (MAX_TREE_NODES)"
            )));
        }
        Ok(())
    }
}

/// A dynamic draft's state: the draft's caches, and each lane's nodes' scores this round.
pub struct DynamicState {
    caches: DraftCaches,
    /// Per lane, each node's cumulative draft probability (the root's is 1).
    score: Vec<Vec<f64>>,
}

impl Proposer for DynamicDraft<'_, '_> {
    type State = DynamicState;

    /// Every level's `width` nodes are drafted before the rerank keeps `budget` of them.
    fn max_nodes(&self) -> usize {
        self.depth as usize * self.width as usize
    }

    fn depth(&self) -> usize {
        self.depth as usize
    }

    fn check(
        &self,
        target: &TransformerLM<'_>,
        need: usize,
        temperature: f64,
    ) -> Result<(), Error> {
        check_draft(target, self.draft, need)?;
        self.check_knobs()?;
        if temperature != 0.0 {
            return Err(Error::Argument(format!(
                "dynamic trees are verified greedily here (their nodes are the draft's top \
                 candidates, not draws from it), got temperature {temperature}"
            )));
        }
        Ok(())
    }

    fn start(&self, lanes: &mut [Lane], slots: &[usize]) -> Result<DynamicState, Error> {
        Ok(DynamicState {
            caches: DraftCaches::start(self.draft, lanes, slots)?,
            score: vec![Vec::new(); lanes.len()],
        })
    }

    /// Level by level, one batched pass of the draft over the lanes still growing, each
    /// lane keeping its `width` most confident candidates; then each lane's tree is its
    /// `budget` most confident nodes of all levels.
    fn propose<R: Rng + ?Sized>(
        &self,
        state: &mut DynamicState,
        lanes: &mut [Lane],
        active: &[usize],
        _temperature: f64,
        _rng: &mut R,
    ) -> Result<(), Error> {
        let caches = &mut state.caches;
        caches.catch_up(self.draft, lanes, active)?;
        for &i in active {
            state.score[i] = vec![1.0];
        }
        for depth in 0..self.depth as usize {
            let growing = caches.growing(lanes, active, depth);
            if growing.is_empty() {
                break;
            }
            let logits = caches.read_levels(self.draft, lanes, &growing)?;
            let mut rows = logits.outer_iter();
            for &i in &growing {
                let lane = &mut lanes[i];
                let score = &mut state.score[i];
                let level_end = lane.nodes.len();
                let mut candidates = Vec::new();
                for (parent, logits) in (caches.level_start[i]..level_end).zip(&mut rows) {
                    let q = probabilities(logits, 1.0)?;
                    for token in top_k(logits, self.width as usize) {
                        candidates.push(Candidate {
                            parent,
                            token,
                            score: score[parent] * q[token as usize],
                        });
                    }
                }
                for c in keep_most_confident(candidates, self.width as usize) {
                    lane.push(c.token, c.parent);
                    score.push(c.score);
                }
                caches.level_start[i] = level_end;
            }
        }
        for &i in active {
            let kept = rerank(&state.score[i], self.budget as usize);
            caches.drafted_as[i] = prune(&mut lanes[i].nodes, &kept);
        }
        Ok(())
    }

    fn accepted(
        &self,
        state: &mut DynamicState,
        index: usize,
        lane: &Lane,
        path: &[usize],
    ) -> Result<(), Error> {
        state.caches.accepted(index, lane, path)
    }
}

/// One candidate child: its parent's index, its token, its cumulative draft probability.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Candidate {
    pub(crate) parent: usize,
    pub(crate) token: u32,
    pub(crate) score: f64,
}

/// The `keep` best `candidates` by cumulative probability (ties to the earlier candidate),
/// back in candidate order, so a level's nodes stay grouped by parent.
pub(crate) fn keep_most_confident(candidates: Vec<Candidate>, keep: usize) -> Vec<Candidate> {
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by(|&a, &b| {
        candidates[b]
            .score
            .total_cmp(&candidates[a].score)
            .then(a.cmp(&b))
    });
    order.truncate(keep);
    order.sort_unstable();
    order.iter().map(|&i| candidates[i]).collect()
}

/// EAGLE-2's reranking: of every node drafted (`score[1..]`), the `budget` with the
/// highest cumulative draft probability (ties to the earlier drafted), in drafted order.
/// A child's score is at most its parent's, so the kept nodes' parents are kept.
pub(crate) fn rerank(score: &[f64], budget: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (1..score.len()).collect();
    order.sort_by(|&a, &b| score[b].total_cmp(&score[a]).then(a.cmp(&b)));
    order.truncate(budget);
    order.sort_unstable();
    order
}

/// Keeps the root and the drafted nodes `keep` (increasing node indices, each one's parent
/// kept too) of `nodes`, renumbered in that order: the tree the target verifies. Returns
/// each kept node's index when it was drafted, where the draft's cache holds it.
pub(crate) fn prune(nodes: &mut Vec<Node>, keep: &[usize]) -> Vec<usize> {
    let mut new_index = vec![usize::MAX; nodes.len()];
    new_index[0] = 0;
    let mut kept = vec![nodes[0].clone()];
    let mut drafted_as = vec![0];
    for &i in keep {
        new_index[i] = kept.len();
        let mut node = nodes[i].clone();
        node.parent = node.parent.map(|p| new_index[p]);
        kept.push(node);
        drafted_as.push(i);
    }
    *nodes = kept;
    drafted_as
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_confident_are_kept_in_candidate_order() {
        let c = |parent, token, score| Candidate {
            parent,
            token,
            score,
        };
        let all = vec![c(0, 5, 0.1), c(0, 6, 0.5), c(1, 7, 0.3), c(1, 8, 0.5)];
        let kept = keep_most_confident(all.clone(), 2);
        assert_eq!(kept, vec![all[1], all[3]]);
        assert_eq!(keep_most_confident(all.clone(), 9), all);
        assert!(keep_most_confident(all, 0).is_empty());
    }

    /// By hand: scores 1 (root), 0.5, 0.2, 0.5, 0.1; a budget of 2 keeps nodes 1 and 3
    /// (the tie to the earlier), renumbered 1 and 2, node 3's parent (1) renumbered too.
    #[test]
    fn a_rerank_keeps_the_budgets_best_and_their_parents() {
        let kept = rerank(&[1.0, 0.5, 0.2, 0.5, 0.1], 2);
        assert_eq!(kept, [1, 3]);
        let node = |token, parent: Option<usize>, depth| Node {
            token,
            parent,
            depth,
        };
        let mut nodes = vec![
            node(0, None, 0),
            node(1, Some(0), 1),
            node(2, Some(0), 1),
            node(3, Some(1), 2),
            node(4, Some(2), 2),
        ];
        let drafted = prune(&mut nodes, &kept);
        assert_eq!(drafted, [0, 1, 3]);
        let tokens: Vec<u32> = nodes.iter().map(|n| n.token).collect();
        assert_eq!(tokens, [0, 1, 3]);
        assert_eq!(nodes[2].parent, Some(1));
    }
}
