//! Prompt lookup (n-gram) drafting, with no draft model (Saxena 2023, "prompt lookup
//! decoding"; vLLM's `ngram_proposer.py`): the draft of a round is what followed the
//! latest earlier occurrence of the sequence's last n tokens, longest n first. The target
//! verifies the chain in one pass like any other draft: greedy, or by speculative sampling
//! with the draft's distribution a point mass on each proposed token (accepted with
//! probability p(x); after a rejection the token is drawn from p with x removed), so the
//! output is the target's own, token for token or in distribution.

use ndarray::Array1;
use rand::Rng;
use transformer_lab::TransformerLM;

use crate::Error;
use crate::speculative::lane::Lane;
use crate::speculative::propose::Proposer;

/// The knobs of prompt lookup: the longest n-gram matched, and the tokens proposed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptLookup {
    /// The longest suffix matched, from 1 to [`MAX_NGRAM`]; shorter ones are tried when it
    /// is not found.
    pub max_ngram: u32,
    /// Tokens proposed per round at most, ≥ 1.
    pub gamma: u32,
}

/// The longest n-gram prompt lookup matches: 4, as vLLM's default `prompt_lookup_max`.
pub const MAX_NGRAM: u32 = 4;

impl PromptLookup {
    /// Checks the knobs.
    ///
    /// Errors: `max_ngram` outside 1 to [`MAX_NGRAM`], or γ = 0 or beyond
    /// [`crate::MAX_TREE_NODES`].
    pub fn check_knobs(&self) -> Result<(), Error> {
        if !(1..=MAX_NGRAM).contains(&self.max_ngram) {
            return Err(Error::Argument(format!(
                "prompt lookup matches n-grams of 1 to {MAX_NGRAM} tokens, got {}",
                self.max_ngram
            )));
        }
        if self.gamma == 0 || u64::from(self.gamma) > crate::MAX_TREE_NODES {
            return Err(Error::Argument(format!(
                "prompt lookup proposes 1 to {} tokens a round, got {}",
                crate::MAX_TREE_NODES,
                self.gamma
            )));
        }
        Ok(())
    }
}

/// The proposal after `tokens`: for n from `max_ngram` down to 1, the latest earlier
/// occurrence of the last n tokens, and the (at most `gamma`) tokens that followed it;
/// empty when no suffix occurs earlier.
///
/// ```
/// use decode_lab::speculative::lookup_proposal;
/// // "3 4" occurred before, followed by 5 6 3: propose those.
/// assert_eq!(lookup_proposal(&[1, 3, 4, 5, 6, 3, 4], 2, 3), vec![5, 6, 3]);
/// // No bigram "9 4" earlier; the unigram 4 was followed by 5.
/// assert_eq!(lookup_proposal(&[4, 5, 9, 4], 2, 2), vec![5, 9]);
/// assert!(lookup_proposal(&[1, 2, 3], 3, 4).is_empty());
/// // Bounds past the tokens are the tokens' own.
/// assert_eq!(lookup_proposal(&[1, 2, 1, 2], usize::MAX, usize::MAX), vec![1, 2]);
/// ```
pub fn lookup_proposal(tokens: &[u32], max_ngram: usize, gamma: usize) -> Vec<u32> {
    let len = tokens.len();
    for n in (1..=max_ngram.min(len.saturating_sub(1))).rev() {
        let suffix = &tokens[len - n..];
        if let Some(start) = (0..len - n).rev().find(|&j| &tokens[j..j + n] == suffix) {
            let from = start + n;
            return tokens[from..from.saturating_add(gamma).min(len)].to_vec();
        }
    }
    Vec::new()
}

impl Proposer for PromptLookup {
    /// No state: the proposal is read off each sequence's own tokens.
    type State = ();

    fn max_nodes(&self) -> usize {
        self.gamma as usize
    }

    fn depth(&self) -> usize {
        self.gamma as usize
    }

    fn check(
        &self,
        _target: &TransformerLM<'_>,
        _need: usize,
        _temperature: f64,
    ) -> Result<(), Error> {
        self.check_knobs()
    }

    fn start(&self, _lanes: &mut [Lane], _slots: &[usize]) -> Result<(), Error> {
        Ok(())
    }

    /// Each active lane's chain: its lookup, cut to the round's depth; when sampling, the
    /// proposer's q at each node is a point mass on its child.
    fn propose<R: Rng + ?Sized>(
        &self,
        _state: &mut (),
        lanes: &mut [Lane],
        active: &[usize],
        temperature: f64,
        _rng: &mut R,
    ) -> Result<(), Error> {
        for &i in active {
            let lane = &mut lanes[i];
            let proposal = lookup_proposal(&lane.committed, self.max_ngram as usize, lane.depth);
            for (parent, &token) in proposal.iter().enumerate() {
                lane.push(token, parent);
                if temperature != 0.0 {
                    let mut point = Array1::zeros(lane.vocab);
                    point[token as usize] = 1.0;
                    lane.set_q(parent, point);
                }
            }
        }
        Ok(())
    }

    fn accepted(
        &self,
        _state: &mut (),
        _index: usize,
        _lane: &Lane,
        _path: &[usize],
    ) -> Result<(), Error> {
        Ok(())
    }
}
