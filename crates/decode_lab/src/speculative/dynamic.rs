//! Dynamic draft trees (EAGLE-2, Li et al. 2024): the tree's shape follows the draft's
//! confidence. Expansion: level by level, every node of the last level proposes its
//! draft's top `width` next tokens, each scored by its cumulative draft probability (the
//! product of the draft's probabilities along its path, at temperature 1), and the
//! `width` best of the level are expanded next. Reranking: of every node drafted, the
//! `budget` best by score are the tree the target verifies, in one tree-masked pass,
//! greedily, as any other tree.

use crate::{Error, MAX_TREE_NODES};

/// The knobs of a dynamic tree: levels, nodes kept per level, nodes in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DynamicTree {
    /// Draft levels (draft steps per round), ≥ 1.
    pub depth: u32,
    /// Candidates every node proposes and nodes each level expands, ≥ 1.
    pub width: u32,
    /// Nodes the target verifies per round at most (the reranking's), ≥ 1.
    pub budget: u32,
}

impl DynamicTree {
    /// A dynamic tree of `depth` levels keeping `width` nodes each, `budget` in all.
    ///
    /// Errors: a zero knob, or a budget above [`MAX_TREE_NODES`].
    ///
    /// ```
    /// let t = decode_lab::DynamicTree::new(4, 4, 10)?;
    /// assert_eq!(t.budget, 10);
    /// assert!(decode_lab::DynamicTree::new(4, 0, 10).is_err());
    /// # Ok::<(), decode_lab::Error>(())
    /// ```
    pub fn new(depth: u32, width: u32, budget: u32) -> Result<DynamicTree, Error> {
        if depth == 0 || width == 0 || budget == 0 {
            return Err(Error::Argument(format!(
                "a dynamic tree needs depth, width and budget ≥ 1, got {depth}, {width}, {budget}"
            )));
        }
        if u64::from(budget) > MAX_TREE_NODES
            || u64::from(depth) * u64::from(width) > MAX_TREE_NODES
        {
            return Err(Error::Argument(format!(
                "a dynamic tree drafts depth × width = {} nodes and keeps {budget}; both must \
                 be at most {MAX_TREE_NODES} (MAX_TREE_NODES)",
                u64::from(depth) * u64::from(width)
            )));
        }
        Ok(DynamicTree {
            depth,
            width,
            budget,
        })
    }

    /// A label for tables: `动态 d×w≤n`.
    pub fn label(&self) -> String {
        format!("{}×{}≤{}", self.depth, self.width, self.budget)
    }
}

/// One candidate child: its parent's index, its token, its cumulative draft probability.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Candidate {
    pub(super) parent: usize,
    pub(super) token: u32,
    pub(super) score: f64,
}

/// The `keep` best `candidates` by cumulative probability (ties to the earlier candidate),
/// back in candidate order, so a level's nodes stay grouped by parent.
pub(super) fn keep_most_confident(mut candidates: Vec<Candidate>, keep: usize) -> Vec<Candidate> {
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by(|&a, &b| {
        candidates[b]
            .score
            .total_cmp(&candidates[a].score)
            .then(a.cmp(&b))
    });
    order.truncate(keep);
    order.sort_unstable();
    let kept: Vec<Candidate> = order.iter().map(|&i| candidates[i]).collect();
    candidates.clear();
    kept
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
}
