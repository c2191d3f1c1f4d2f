//! What the new tokens of a pass see: causal chunks and tree chunks (speculative
//! decoding's draft trees), and the checks a tree chunk must pass.

use crate::Error;

/// One sequence's chunk in a ragged batched pass
/// ([`TransformerLM::extend_ragged`](crate::TransformerLM::extend_ragged)).
#[derive(Debug, Clone, Copy)]
pub struct Feed<'a> {
    /// The new tokens, stored at the sequence's cache slots `cache.len() ..`.
    pub tokens: &'a [u32],
    /// `None`: causal, token i at position `cache.len() + i` seeing the whole cache and
    /// the new tokens up to itself ([`TransformerLM::extend`](crate::TransformerLM::extend)).
    /// `Some`: a tree chunk ([`TransformerLM::extend_tree`](crate::TransformerLM::extend_tree)).
    pub tree: Option<TreeMask<'a>>,
}

/// Where the nodes of a tree chunk sit and what they see (see
/// [`TransformerLM::extend_tree`](crate::TransformerLM::extend_tree), whose arguments these are).
#[derive(Debug, Clone, Copy)]
pub struct TreeMask<'a> {
    /// The RoPE position of each node.
    pub positions: &'a [usize],
    /// Every node sees the cache slots `0 .. prefix` (the committed sequence).
    pub prefix: usize,
    /// And, for node i, the slots `visible[i]`: its ancestors and its own slot.
    pub visible: &'a [Vec<usize>],
}

/// Which cached slots each new token attends to.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Mask<'a> {
    /// Everything before it, and the new tokens up to itself.
    Causal,
    /// The first `prefix` slots, and the slots listed for it.
    Tree {
        prefix: usize,
        visible: &'a [Vec<usize>],
    },
}

/// Checks one tree chunk of `n` nodes fed at slots `base ..` of a model whose RoPE
/// positions stop at `max_seq` (see
/// [`TransformerLM::extend_tree`](crate::TransformerLM::extend_tree)).
pub(crate) fn check_tree(
    max_seq: usize,
    base: usize,
    n: usize,
    positions: &[usize],
    prefix: usize,
    visible: &[Vec<usize>],
) -> Result<(), Error> {
    if positions.len() != n || visible.len() != n {
        return Err(Error::Shape(format!(
            "a tree chunk of {n} nodes needs {n} positions and {n} visibility lists, got {} and {}",
            positions.len(),
            visible.len()
        )));
    }
    if prefix > base {
        return Err(Error::Shape(format!(
            "prefix {prefix} is beyond the {base} cached slots"
        )));
    }
    if let Some(&p) = positions.iter().find(|&&p| p >= max_seq) {
        return Err(Error::TooLong {
            len: p + 1,
            max: max_seq,
        });
    }
    for (i, vis) in visible.iter().enumerate() {
        let own = base + i;
        if vis.iter().any(|&slot| slot < prefix || slot > own) || !vis.contains(&own) {
            return Err(Error::Shape(format!(
                "node {i} may see its own slot {own} and earlier tree slots ≥ {prefix}, got {vis:?}"
            )));
        }
    }
    Ok(())
}
