//! The shape of a draft tree: how many candidates each level keeps, or, for a published
//! tree whose structure is not given, only its depth and size.
//!
//! Lecture 6, demo 3 (SpecInfer, Miao et al. 2024; Medusa, Cai et al. 2024; EAGLE, Li et
//! al. 2024): instead of one chain of γ drafted tokens, a draft proposes a *tree* — its
//! top-k₁ candidates for the next token, its top-k₂ for each of those, and so on — and
//! the target verifies every node in one pass. A chain of γ is the tree `[1; γ]`.
//!
//! [`TreeShape`] is the one type for all of them: the acceptance measured on the toy model
//! ([`tree_accept_lengths`](crate::tree_accept_lengths)) and speculative decoding itself
//! ([`speculative_generate`](crate::speculative_generate)) need the branching per level
//! ([`TreeShape::new`], [`TreeShape::chain`]); the roofline needs only the depth (draft
//! steps) and the node count (tokens verified), which is all a paper may give
//! ([`TreeShape::sized`]: "EAGLE's 60-node tree of depth 6").

use crate::Error;

/// The largest draft tree a [`TreeShape`] may describe, in nodes (drafted tokens, the
/// root not counted). Published trees have tens to a few hundred nodes (EAGLE 60,
/// Medusa 64, lecture 6's largest 340); the cap keeps a mistyped size from allocating a
/// cache of billions of slots.
pub const MAX_TREE_NODES: u64 = 4096;

/// The shape of a draft tree (or chain): its per-level branching `k₁ … k_d` when known,
/// always its depth `d` and node count `Σ_j Π_{i≤j} k_i`.
///
/// Every constructor checks: depth ≥ 1, no level of 0, depth ≤ nodes ≤
/// [`MAX_TREE_NODES`].
///
/// ```
/// use decode_lab::TreeShape;
/// let tree = TreeShape::new(&[8, 4, 2, 1])?;
/// assert_eq!((tree.depth(), tree.nodes()), (4, 8 + 32 + 64 + 64));
/// assert_eq!(tree.label(), "8×4×2×1");
/// let chain = TreeShape::chain(4)?;
/// assert!(chain.is_chain() && chain.nodes() == 4 && chain.levels() == Some(&[1, 1, 1, 1][..]));
/// let eagle = TreeShape::sized(6, 60)?; // structure not published, only its size
/// assert_eq!((eagle.levels(), eagle.label()), (None, "d=6, n=60".to_string()));
/// # Ok::<(), decode_lab::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeShape {
    depth: u64,
    nodes: u64,
    /// `levels[j]`: candidates kept under every node of level j − 1 (`None`: only the
    /// size is known).
    levels: Option<Vec<u32>>,
}

impl TreeShape {
    /// A chain of `gamma` drafted tokens: the tree `[1; γ]`.
    ///
    /// Errors: γ = 0, or γ > [`MAX_TREE_NODES`].
    pub fn chain(gamma: u32) -> Result<Self, Error> {
        if gamma == 0 {
            return Err(Error::Argument("a draft chain needs γ ≥ 1 tokens".into()));
        }
        if u64::from(gamma) > MAX_TREE_NODES {
            return Err(Error::Argument(format!(
                "a draft chain of γ = {gamma} tokens is longer than the limit of \
                 {MAX_TREE_NODES} (MAX_TREE_NODES)"
            )));
        }
        Self::new(&vec![1; gamma as usize])
    }

    /// A tree whose level j keeps the draft's top-`levels[j]` candidates under every node
    /// of level j − 1.
    ///
    /// Errors: no level, a level of 0, or more than [`MAX_TREE_NODES`] nodes.
    pub fn new(levels: &[u32]) -> Result<Self, Error> {
        if levels.is_empty() {
            return Err(Error::Argument(
                "a draft tree needs at least one level (depth ≥ 1)".into(),
            ));
        }
        if let Some(j) = levels.iter().position(|&k| k == 0) {
            return Err(Error::Argument(format!(
                "level {} of the draft tree keeps 0 candidates; every level needs at least 1",
                j + 1
            )));
        }
        // Σ_j Π_{i≤j} k_i, stopping as soon as it passes the cap (so nothing overflows).
        let (mut nodes, mut width) = (0u64, 1u64);
        for &k in levels {
            width = width.saturating_mul(u64::from(k));
            nodes = nodes.saturating_add(width);
            if nodes > MAX_TREE_NODES {
                // A long list is cut in the message: it says the limit, not every level.
                let shown = match levels.len() {
                    n if n <= 8 => join(levels),
                    n => format!("{}×…×{} ({n} levels)", join(&levels[..4]), levels[n - 1]),
                };
                return Err(Error::Argument(format!(
                    "the draft tree {shown} has more than {MAX_TREE_NODES} nodes (MAX_TREE_NODES)"
                )));
            }
        }
        Ok(TreeShape {
            depth: levels.len() as u64,
            nodes,
            levels: Some(levels.to_vec()),
        })
    }

    /// A tree known only by its size: `depth` levels (draft steps) and `nodes` drafted
    /// tokens in all, as a paper reports a tree whose branching it does not give. Enough
    /// for the roofline; acceptance and decoding need [`new`](Self::new)'s levels.
    ///
    /// Errors: depth 0, fewer nodes than levels (each level has at least one), or more
    /// than [`MAX_TREE_NODES`] nodes.
    pub fn sized(depth: u64, nodes: u64) -> Result<Self, Error> {
        if depth == 0 {
            return Err(Error::Argument(
                "a draft tree needs at least one level (depth ≥ 1)".into(),
            ));
        }
        if nodes < depth {
            return Err(Error::Argument(format!(
                "a draft tree of depth {depth} has at least {depth} nodes, got {nodes}"
            )));
        }
        if nodes > MAX_TREE_NODES {
            return Err(Error::Argument(format!(
                "a draft tree of {nodes} nodes is larger than the limit of {MAX_TREE_NODES} \
                 (MAX_TREE_NODES)"
            )));
        }
        Ok(TreeShape {
            depth,
            nodes,
            levels: None,
        })
    }

    /// Levels: draft steps per round, the length of the longest path.
    pub fn depth(&self) -> u64 {
        self.depth
    }

    /// Drafted tokens in the whole tree, all verified in one target pass (with the root:
    /// `nodes() + 1` tokens): `Σ_j Π_{i≤j} k_i`.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// Per-level top-k `k₁ … k_d`, or `None` for a tree known only by its size
    /// ([`sized`](Self::sized)).
    pub fn levels(&self) -> Option<&[u32]> {
        self.levels.as_deref()
    }

    /// Whether every level keeps one candidate (for a sized tree: as many nodes as
    /// levels, which only a chain has).
    pub fn is_chain(&self) -> bool {
        self.nodes == self.depth
    }

    /// A language-neutral label: the branching joined by `×` ("8×4×2×1"; a chain of 4 is
    /// "1×1×1×1"), or "d=6, n=60" (depth, nodes) for a tree known only by its size.
    /// Lectures add their own words ("chain γ=4", "tree 8×4×2×1").
    pub fn label(&self) -> String {
        match &self.levels {
            Some(levels) => join(levels),
            None => format!("d={}, n={}", self.depth, self.nodes),
        }
    }

    /// The levels, or an error saying that `what` needs them (for a sized tree).
    pub(crate) fn levels_for(&self, what: &str) -> Result<&[u32], Error> {
        self.levels().ok_or_else(|| {
            Error::Argument(format!(
                "{what} needs the tree's branching per level (TreeShape::new or \
                 TreeShape::chain); the tree {} is known only by its size",
                self.label()
            ))
        })
    }
}

/// `[8, 4, 2, 1]` → "8×4×2×1".
fn join(levels: &[u32]) -> String {
    let parts: Vec<String> = levels.iter().map(u32::to_string).collect();
    parts.join("×")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Node counts by brute force: build the tree level by level and count.
    fn count_by_building(levels: &[u32]) -> u64 {
        let mut level: Vec<()> = vec![()]; // the root
        let mut nodes = 0;
        for &k in levels {
            level = level
                .iter()
                .flat_map(|_| (0..k).map(|_| ()))
                .collect::<Vec<()>>();
            nodes += level.len() as u64;
        }
        nodes
    }

    #[test]
    fn node_counts_of_the_lecture_shapes() {
        let nodes = |b: &[u32]| TreeShape::new(b).unwrap().nodes();
        assert_eq!(nodes(&[1; 6]), 6);
        assert_eq!(nodes(&[2, 2, 2]), 14);
        assert_eq!(nodes(&[3, 3, 3]), 39);
        assert_eq!(nodes(&[8, 4, 2, 1]), 168);
        assert_eq!(nodes(&[4, 4, 4, 4]), 340);
        for levels in [&[5u32, 1, 3][..], &[1, 7, 2, 2], &[2; 9]] {
            assert_eq!(nodes(levels), count_by_building(levels), "{levels:?}");
        }
    }

    #[test]
    fn depth_levels_chains_and_labels() {
        let tree = TreeShape::new(&[4, 2, 2, 1]).unwrap();
        assert_eq!(tree.depth(), 4);
        assert_eq!(tree.levels(), Some(&[4, 2, 2, 1][..]));
        assert!(!tree.is_chain());
        assert_eq!(tree.label(), "4×2×2×1");
        let chain = TreeShape::chain(4).unwrap();
        assert_eq!(chain, TreeShape::new(&[1, 1, 1, 1]).unwrap());
        assert!(chain.is_chain());
        assert_eq!(chain.label(), "1×1×1×1");
        assert_eq!(TreeShape::chain(1).unwrap().label(), "1");
        let eagle = TreeShape::sized(6, 60).unwrap();
        assert_eq!(
            (eagle.depth(), eagle.nodes(), eagle.levels()),
            (6, 60, None)
        );
        assert!(!eagle.is_chain());
        assert!(TreeShape::sized(5, 5).unwrap().is_chain());
        // A sized tree is not equal to a known one of the same size: one knows more.
        assert_ne!(TreeShape::sized(4, 4).unwrap(), chain);
        let e = eagle.levels_for("speculative decoding").unwrap_err();
        assert!(e.to_string().contains("d=6, n=60"), "{e}");
        assert_eq!(chain.levels_for("x").unwrap(), &[1, 1, 1, 1]);
    }

    #[test]
    fn bad_shapes_are_errors_that_name_the_limit() {
        let msg = |r: Result<TreeShape, Error>| r.unwrap_err().to_string();
        assert!(msg(TreeShape::chain(0)).contains("γ ≥ 1"));
        assert!(msg(TreeShape::new(&[])).contains("depth ≥ 1"));
        assert!(msg(TreeShape::new(&[2, 0, 1])).contains("level 2"));
        assert!(msg(TreeShape::sized(0, 4)).contains("depth ≥ 1"));
        assert!(msg(TreeShape::sized(6, 5)).contains("at least 6 nodes"));
        // One cap for all three constructors, at MAX_TREE_NODES exactly.
        assert_eq!(TreeShape::chain(4096).unwrap().nodes(), MAX_TREE_NODES);
        assert_eq!(TreeShape::sized(1, 4096).unwrap().nodes(), MAX_TREE_NODES);
        assert_eq!(TreeShape::new(&[4096]).unwrap().nodes(), MAX_TREE_NODES);
        for e in [
            msg(TreeShape::chain(4097)),
            msg(TreeShape::chain(u32::MAX)), // used to allocate 17 GB of levels
            msg(TreeShape::new(&[4097])),
            msg(TreeShape::new(&[16, 16, 16])),  // 4368 nodes
            msg(TreeShape::new(&[u32::MAX; 8])), // would overflow u64
            msg(TreeShape::sized(2, 4097)),
            msg(TreeShape::sized(u64::MAX, u64::MAX)),
        ] {
            assert!(e.contains("4096") && e.contains("MAX_TREE_NODES"), "{e}");
        }
        let long = msg(TreeShape::new(&[1; 5000]));
        assert!(
            long.contains("1×1×1×1×…×1 (5000 levels)") && long.len() < 120,
            "{long}"
        );
    }
}
