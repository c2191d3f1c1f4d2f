//! What proposes a round's draft tokens: the one seam every drafter implements, as vLLM's
//! `v1/spec_decode` has one proposer per drafter (`draft_model.py`, `eagle.py`,
//! `ngram_proposer.py`, …) and one rejection sampler. A new drafter is a new
//! [`Proposer`], not a new decoding loop: [`crate::speculative_generate_batch`] runs them
//! all, verifying and accepting in one place.

use ndarray::ArrayView2;
use rand::Rng;
use transformer_lab::TransformerLM;

use super::lane::Lane;
use crate::Error;

/// A drafter: it proposes each round's tree of draft tokens for every unfinished sequence
/// of a batch, and keeps what it holds of its own (a draft model's KV cache) in step with
/// what the target accepts.
///
/// The proposers: [`crate::speculative::TreeDraft`] (a draft model — a smaller model, a
/// head, or the target's first layers — proposing a chain or a static tree),
/// [`crate::speculative::DynamicDraft`] (its trees shaped by the draft's confidence,
/// EAGLE-2), [`crate::speculative::EagleDraft`] (EAGLE's head on the target's features),
/// [`crate::speculative::MedusaDraft`] (heads on the target's last hidden state) and
/// [`crate::speculative::PromptLookup`] (n-gram lookup, no model).
pub trait Proposer {
    /// What the proposer keeps for one run: a draft model's caches, one per sequence.
    type State;

    /// The most draft tokens a round's tree holds (every cache is sized for one tree on
    /// top of the sequence).
    fn max_nodes(&self) -> usize;

    /// The most levels of a round's tree (draft tokens along one path).
    fn depth(&self) -> usize;

    /// Whether it can propose for `target` at `temperature` (0: greedy) in a run whose
    /// longest sequence reaches `need` tokens.
    ///
    /// Errors: a model of another vocabulary or too short a context, a knob out of range,
    /// a temperature the proposer does not verify at.
    fn check(&self, target: &TransformerLM<'_>, need: usize, temperature: f64)
    -> Result<(), Error>;

    /// Its state for `lanes` (each with its prompt committed), having read every prompt
    /// but its last token; caches of `slots` tokens.
    ///
    /// Errors: the model refuses its inputs.
    fn start(&self, lanes: &mut [Lane], slots: &[usize]) -> Result<Self::State, Error>;

    /// Grows the tree of each `active` lane for this round, from its root (the lane's last
    /// committed token) down at most the lane's depth: greedily, or at `temperature` with
    /// each node's children drawn from the proposer's distribution q there (kept on the
    /// lane for the verification), drawing from `rng` lane after lane, node after node.
    ///
    /// Errors: the model refuses its inputs.
    fn propose<R: Rng + ?Sized>(
        &self,
        state: &mut Self::State,
        lanes: &mut [Lane],
        active: &[usize],
        temperature: f64,
        rng: &mut R,
    ) -> Result<(), Error>;

    /// Whether it reads the target's last hidden states (Medusa's heads): then the loop runs
    /// the target with [`TransformerLM::extend_ragged_hidden`] and hands the proposer, before
    /// each round, the state its root was predicted from ([`Proposer::read_hidden`]).
    fn reads_hidden(&self) -> bool {
        false
    }

    /// The target's last hidden states (after the final norm, what its LM head reads) of
    /// the tokens lane `index` just committed, `[n, d_model]` in order: after the prefill,
    /// every prompt token but the last (to a lane whose prompt has more than one); after a
    /// verification, the root and the accepted path's nodes. The last row is the state the
    /// next root was predicted from. Given to a proposer that
    /// [`reads_hidden`](Proposer::reads_hidden), after [`accepted`](Proposer::accepted).
    ///
    /// Errors: states of another width than the proposer reads.
    fn read_hidden(
        &self,
        _state: &mut Self::State,
        _index: usize,
        _hidden: ArrayView2<f32>,
    ) -> Result<(), Error> {
        Ok(())
    }

    /// The target accepted `path` (node indices from the root) of lane `index`'s tree
    /// (`lane`, before it commits): keep what the proposer holds in step (a draft's cache
    /// rolled back to the path).
    ///
    /// Errors: a cache that cannot keep those slots.
    fn accepted(
        &self,
        state: &mut Self::State,
        index: usize,
        lane: &Lane,
        path: &[usize],
    ) -> Result<(), Error>;
}
