//! Acceptance of chains and trees of drafts, measured on a toy model.
//!
//! Lecture 6, demo 3 (SpecInfer, Medusa, EAGLE): instead of one chain of γ drafted
//! tokens, a draft proposes a *tree* — its top-k₁ candidates for the next token, its
//! top-k₂ for each of those, and so on — and the target verifies the whole tree in one
//! pass ([`TreeShape`]). Under greedy decoding a level is accepted when the target's own
//! next token is among the draft's candidates there, so everything follows from one
//! number per position: the rank of the target's token in the draft's logits
//! ([`draft_ranks`]).

use ndarray::{ArrayView1, ArrayView2};

use crate::{Error, TreeShape};

/// For each position p < T − 1: the rank of `tokens[p + 1]` in `logits[p]`, i.e. the
/// number of vocabulary entries with a strictly larger logit (0 = the draft's first
/// choice). `logits [T, vocab]` are the draft's logits on the sequence `tokens [T]`;
/// returns T − 1 ranks (none when T ≤ 1).
///
/// Errors: `logits` and `tokens` of different lengths, a token ≥ vocab, a NaN logit.
///
/// ```
/// use ndarray::array;
/// let logits = array![[0.1f32, 0.9, 0.5], [0.3, 0.3, 0.2], [0.0, 0.0, 0.0]];
/// // Token 2 after position 0: only 0.9 beats 0.5 → rank 1. Token 0 after position 1:
/// // nothing beats 0.3 strictly → rank 0.
/// assert_eq!(decode_lab::draft_ranks(logits.view(), array![1u32, 2, 0].view())?, vec![1, 0]);
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn draft_ranks(logits: ArrayView2<f32>, tokens: ArrayView1<u32>) -> Result<Vec<u32>, Error> {
    let (t, vocab) = logits.dim();
    if tokens.len() != t {
        return Err(Error::Argument(format!(
            "draft_ranks: {t} rows of logits for {} tokens",
            tokens.len()
        )));
    }
    if let Some(&bad) = tokens.iter().find(|&&tok| tok as usize >= vocab) {
        return Err(Error::Argument(format!(
            "draft_ranks: token {bad} is outside a vocabulary of {vocab}"
        )));
    }
    // A NaN compares false with everything: it would rank every token first.
    if let Some(((p, i), _)) = logits.indexed_iter().find(|(_, l)| l.is_nan()) {
        return Err(Error::Argument(format!(
            "draft_ranks: logit [{p}, {i}] is NaN; the draft's logits are broken"
        )));
    }
    Ok((0..t.saturating_sub(1))
        .map(|p| rank(logits.row(p), tokens[p + 1]))
        .collect())
}

/// The rank of `token` in one row of logits: how many entries are strictly larger (0 = the
/// first choice). The caller has checked the token against the row and the row for NaN.
pub(crate) fn rank(logits: ArrayView1<f32>, token: u32) -> u32 {
    let target = logits[token as usize];
    logits.iter().filter(|&&l| l > target).count() as u32
}

/// Accepted lengths of a draft tree at every start position of a set of sequences.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeAcceptance {
    /// Accepted draft tokens for a round starting at each position, sequence after
    /// sequence (one entry per rank).
    pub accepted: Vec<u32>,
    /// Draft tokens the tree holds, all verified in one pass:
    /// [`TreeShape::nodes`](crate::TreeShape::nodes).
    pub nodes: u64,
}

impl TreeAcceptance {
    /// τ, tokens per round: 1 + mean accepted (the target always adds one token).
    /// 1 when there is no position at all.
    pub fn tau(&self) -> f64 {
        if self.accepted.is_empty() {
            return 1.0;
        }
        1.0 + self.accepted.iter().map(|&a| f64::from(a)).sum::<f64>() / self.accepted.len() as f64
    }
}

/// Under greedy decoding, how many levels of a draft tree the target accepts, starting
/// at each position of one array of ranks (the Python's `tree_accept_lengths(ranks,
/// branching)`).
///
/// `ranks[p]` is the draft rank of the target's token at position p ([`draft_ranks`]).
/// `shape` has levels `(k₁, …, k_d)`: level j keeps the draft's top-k_j children of every
/// node (a chain of γ is `[1; γ]`). From start t, level j is accepted when
/// `ranks[t + j] < k_j` and every level before it was; a round stops at the end of the
/// array. Lecture 6's script passes the ranks of all its sequences concatenated, so there
/// a round that reaches the end of one sequence runs on into the next one's ranks;
/// [`tree_accept_lengths_per_sequence`] stops at each sequence's end instead.
///
/// Errors: a tree known only by its size ([`TreeShape::sized`]): acceptance needs its
/// levels.
///
/// ```
/// use decode_lab::TreeShape;
/// // Chain of 2 from t = 0: ranks 0, 0 → 2; from t = 1: 0 then 3 → 1;
/// // from t = 2: 3 → 0; from t = 3: 0, then the array ends → 1.
/// let acc = decode_lab::tree_accept_lengths(&[0, 0, 3, 0], &TreeShape::chain(2)?)?;
/// assert_eq!(acc.accepted, vec![2, 1, 0, 1]);
/// assert_eq!(acc.nodes, 2);
/// assert_eq!(acc.tau(), 2.0);
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn tree_accept_lengths(ranks: &[u32], shape: &TreeShape) -> Result<TreeAcceptance, Error> {
    tree_accept_lengths_per_sequence(std::slice::from_ref(&ranks), shape)
}

/// [`tree_accept_lengths`] over several sequences, each round stopping at the end of its
/// own sequence (it never runs into the next one): what a speculative decoder, which
/// drafts within one sequence, accepts. `accepted` holds every start position, sequence
/// after sequence.
///
/// ```
/// use decode_lab::{TreeShape, tree_accept_lengths, tree_accept_lengths_per_sequence};
/// let chain = TreeShape::chain(2)?;
/// let apart = tree_accept_lengths_per_sequence(&[vec![0, 0], vec![0]], &chain)?;
/// assert_eq!(apart.accepted, vec![2, 1, 1]);
/// let joined = tree_accept_lengths(&[0, 0, 0], &chain)?;
/// assert_eq!(joined.accepted, vec![2, 2, 1]);
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn tree_accept_lengths_per_sequence<S: AsRef<[u32]>>(
    ranks: &[S],
    shape: &TreeShape,
) -> Result<TreeAcceptance, Error> {
    let branching = shape.levels_for("tree_accept_lengths")?;
    let accepted = ranks
        .iter()
        .map(AsRef::as_ref)
        .flat_map(|seq| (0..seq.len()).map(move |t| accepted_levels(&seq[t..], branching)))
        .collect();
    Ok(TreeAcceptance {
        accepted,
        nodes: shape.nodes(),
    })
}

/// Under greedy decoding, how many levels of a draft tree the target accepts in rounds
/// whose ranks are known level by level: `rounds[i][j]` is the rank of the target's token
/// at level j + 1 of round i among the draft's candidates there, the round's path so far
/// being the target's own (the only path a greedy target accepts). Level j is accepted when
/// `rounds[i][j] < k_j` and every level before it was; a round stops where its ranks end.
///
/// This is the estimate for drafters whose guess at a level depends on where the round
/// started — Medusa's heads read every level from the root's hidden state, EAGLE's head
/// each level from the features it drafted before
/// ([`MedusaHeads::round_ranks`](crate::speculative::MedusaHeads::round_ranks),
/// [`EagleHead::round_ranks`](crate::speculative::EagleHead::round_ranks)). A draft model's
/// rank at a position is the same from any start, so its rounds are the tails of one array
/// of ranks ([`tree_accept_lengths_per_sequence`]).
///
/// Errors: a tree known only by its size ([`TreeShape::sized`]).
///
/// ```
/// use decode_lab::{TreeShape, round_accept_lengths};
/// // A tree 2×1: the first round's token ranks 1 then 0 → 2 levels; the second's 0 then
/// // 4 → 1; the third has one level left and ranks 3 there → 0.
/// let acc = round_accept_lengths(&[vec![1, 0], vec![0, 4], vec![3]], &TreeShape::new(&[2, 1])?)?;
/// assert_eq!(acc.accepted, vec![2, 1, 0]);
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn round_accept_lengths<S: AsRef<[u32]>>(
    rounds: &[S],
    shape: &TreeShape,
) -> Result<TreeAcceptance, Error> {
    let branching = shape.levels_for("round_accept_lengths")?;
    let accepted = rounds
        .iter()
        .map(|r| accepted_levels(r.as_ref(), branching))
        .collect();
    Ok(TreeAcceptance {
        accepted,
        nodes: shape.nodes(),
    })
}

/// The levels a round accepts: while the rank at each level is within its top k.
fn accepted_levels(ranks: &[u32], branching: &[u32]) -> u32 {
    let within = ranks.iter().zip(branching).take_while(|&(&r, &k)| r < k);
    within.count() as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn tree(levels: &[u32]) -> TreeShape {
        TreeShape::new(levels).unwrap()
    }

    #[test]
    fn chains_accept_leading_first_choices() {
        let ranks = [0, 0, 1, 0, 0, 0];
        let a = tree_accept_lengths(&ranks, &tree(&[1, 1, 1])).unwrap();
        assert_eq!(a.accepted, vec![2, 1, 0, 3, 2, 1]);
        assert_eq!(a.nodes, 3);
        assert!((a.tau() - (1.0 + 9.0 / 6.0)).abs() < 1e-12);
        let one = tree_accept_lengths(&ranks, &tree(&[1])).unwrap();
        assert_eq!(one.accepted, vec![1, 1, 0, 1, 1, 1]);
    }

    #[test]
    fn a_two_by_two_tree_accepts_second_choices_too() {
        let ranks = [1, 0, 2, 1, 3];
        let a = tree_accept_lengths(&ranks, &tree(&[2, 2])).unwrap();
        // t0: 1<2, 0<2 → 2; t1: 0<2, 2≥2 → 1; t2: 2≥2 → 0; t3: 1<2, 3≥2 → 1; t4: 3 → 0.
        assert_eq!(a.accepted, vec![2, 1, 0, 1, 0]);
        assert_eq!(a.nodes, 2 + 4);
    }

    #[test]
    fn a_4_2_2_1_tree_uses_a_different_width_per_level() {
        let ranks = [3, 1, 1, 0, 3, 2, 0];
        let a = tree_accept_lengths(&ranks, &tree(&[4, 2, 2, 1])).unwrap();
        // t0: 3<4, 1<2, 1<2, 0<1 → 4; t1: 1<4, 1<2, 0<2, 3≥1 → 3; t2: 1, 0, 3≥2 → 2;
        // t3: 0, 3≥2 → 1; t4: 3<4, 2≥2 → 1; t5: 2<4, 0<2, end → 2; t6: 0<4, end → 1.
        assert_eq!(a.accepted, vec![4, 3, 2, 1, 1, 2, 1]);
        assert_eq!(a.nodes, 4 + 8 + 16 + 16);
    }

    #[test]
    fn rounds_stop_at_the_end_of_their_own_sequence() {
        let ranks = vec![vec![0, 0], vec![0, 0, 0]];
        let a = tree_accept_lengths_per_sequence(&ranks, &tree(&[1, 1, 1, 1])).unwrap();
        assert_eq!(a.accepted, vec![2, 1, 3, 2, 1]);
        // Concatenated, as the script passes them, the first rounds run on.
        let joined = tree_accept_lengths(&ranks.concat(), &tree(&[1, 1, 1, 1])).unwrap();
        assert_eq!(joined.accepted, vec![4, 4, 3, 2, 1]);
        let empty = tree_accept_lengths(&[], &tree(&[1])).unwrap();
        assert_eq!((empty.accepted.len(), empty.tau()), (0, 1.0));
    }

    #[test]
    fn rounds_known_by_level_accept_what_their_own_ranks_say() {
        // A model draft's round from t reads its ranks from t on: as rounds, its tails
        // accept what the per-sequence estimate does, on many shapes.
        let seqs: Vec<Vec<u32>> = (0..4)
            .map(|s| (0..30).map(|p| ((p * 5 + s * 7) % 13) as u32 % 5).collect())
            .collect();
        let tails: Vec<&[u32]> = seqs
            .iter()
            .flat_map(|q| (0..q.len()).map(move |t| &q[t..]))
            .collect();
        for levels in [&[1][..], &[1, 1, 1, 1], &[2, 2, 2], &[4, 2, 2, 1], &[3; 6]] {
            let by_round = round_accept_lengths(&tails, &tree(levels)).unwrap();
            let by_seq = tree_accept_lengths_per_sequence(&seqs, &tree(levels)).unwrap();
            assert_eq!(by_round, by_seq, "{levels:?}");
        }
        // A head's rounds are not tails of each other: by hand, a chain of 3 accepts 3, 0
        // (its first rank is 1) and 1 (its second level is 2), and a round with no rank
        // accepts nothing.
        let rounds = [vec![0, 0, 0], vec![1, 0, 0], vec![0, 2], vec![]];
        let chain = round_accept_lengths(&rounds, &tree(&[1, 1, 1])).unwrap();
        assert_eq!(chain.accepted, vec![3, 0, 1, 0]);
        assert_eq!(chain.tau(), 1.0 + 4.0 / 4.0);
        let wide = round_accept_lengths(&rounds, &tree(&[2, 3, 1])).unwrap();
        assert_eq!(wide.accepted, vec![3, 3, 2, 0]);
        assert!(round_accept_lengths(&rounds, &TreeShape::sized(3, 7).unwrap()).is_err());
    }

    #[test]
    fn a_tree_accepts_at_least_what_its_chain_does() {
        let ranks: Vec<Vec<u32>> = (0..5)
            .map(|s| (0..40).map(|p| ((p * 7 + s * 3) % 11) as u32 % 6).collect())
            .collect();
        let chain = tree_accept_lengths_per_sequence(&ranks, &tree(&[1, 1, 1, 1])).unwrap();
        for levels in [[2, 1, 1, 1], [4, 2, 2, 1], [4, 4, 4, 4]] {
            let t = tree_accept_lengths_per_sequence(&ranks, &tree(&levels)).unwrap();
            assert!(
                t.accepted.iter().zip(&chain.accepted).all(|(a, c)| a >= c),
                "{levels:?}"
            );
        }
    }

    #[test]
    fn a_tree_known_only_by_its_size_and_mismatched_ranks_are_errors() {
        let sized = TreeShape::sized(6, 60).unwrap();
        let e = tree_accept_lengths(&[0], &sized).unwrap_err().to_string();
        assert!(
            e.contains("branching per level") && e.contains("d=6, n=60"),
            "{e}"
        );
        let logits = array![[0.0f32, 1.0], [1.0, 0.0]];
        assert!(draft_ranks(logits.view(), array![0u32].view()).is_err());
        assert!(draft_ranks(logits.view(), array![0u32, 2].view()).is_err());
        assert_eq!(
            draft_ranks(logits.slice(ndarray::s![..1, ..]), array![1u32].view()).unwrap(),
            Vec::<u32>::new()
        );
    }

    #[test]
    fn ranks_count_strictly_larger_logits() {
        let logits = array![[0.5f32, 0.5, 0.1, 0.9], [1.0, 2.0, 3.0, 4.0]];
        // Position 0 → token 1 (0.5): only 0.9 is larger → 1 (the tie with token 0 is not).
        assert_eq!(
            draft_ranks(logits.view(), array![3u32, 1].view()).unwrap(),
            vec![1]
        );
        let logits = array![[1.0f32, 2.0, 3.0, 4.0], [0.0; 4]];
        assert_eq!(
            draft_ranks(logits.view(), array![0u32, 0].view()).unwrap(),
            vec![3]
        );
    }
}
