//! Speculative decoding, from the hardware side and from the model side.
//!
//! Lecture 6 (speculative decoding; Leviathan et al. 2023, "Fast Inference from
//! Transformers via Speculative Decoding"; Chen et al. 2023) asks when drafting γ tokens
//! with a small model and verifying them in one pass of the big one pays off.
//!
//! - The roofline side, each idea in its own module: a [`Scenario`] (card, target,
//!   [`Draft`] kind — a model, an EAGLE-like head, a fixed cost, self-speculation with a
//!   KV window — batch, context, α, and how the model is served,
//!   [`llm_math::Deployment`]); [`Scenario::LECTURE`] is the course's one default setup.
//!   Its passes, priced by the seed's roofline ([`Seed`]: [`target_pass_time`],
//!   [`draft_step_time`]; the seed's own [`verify_time`]) or by any other [`Pricing`], the
//!   cost coefficient [`cost_coefficient`], its memory ([`MemoryPlan`]), and its rounds:
//!   how many tokens a round yields ([`expected_tokens`]), the best draft length
//!   ([`best_round`]) or a fixed one ([`round_plan`]), what a tree of drafts buys
//!   ([`tree_speedup`]).
//! - [`tree`]: the shape of a chain or tree of drafts ([`TreeShape`]: its branching per
//!   level, or only its depth and size for a published tree).
//! - [`acceptance`]: acceptance measured on a real (toy) model — where the target's token ranks
//!   among the draft's candidates ([`draft_ranks`]) and how many levels a chain or a tree
//!   of drafts gets accepted ([`tree_accept_lengths`]; [`round_accept_lengths`] for a
//!   draft head, whose guess at a level depends on where the round started).
//! - [`speculative`]: the algorithm itself on the toy model — a [`Proposer`] drafts a chain
//!   or a tree, the target verifies it in one pass with a tree attention mask, the caches
//!   roll back to the accepted path ([`speculative_generate_batch`], a whole batch at
//!   once); lossless by construction, and tested so.
//!
//! The toy model itself lives in `transformer_lab`; [`TransformerLM`] and
//! [`autoregressive_generate`] are re-exported here because lecture 6 uses them as the
//! target and the drafts.

pub mod acceptance;
#[cfg(feature = "arbitrary")]
pub mod arbitrary;
mod draft;
mod glance;
mod memory;
mod pass;
mod round;
mod scenario;
pub mod speculative;
pub mod tree;

pub use acceptance::{
    TreeAcceptance, draft_ranks, round_accept_lengths, tree_accept_lengths,
    tree_accept_lengths_per_sequence,
};
pub use draft::{Draft, MAX_DRAFT_COST, check_tokenizers};
pub use glance::{Fit, Glance, Step, glance};
/// The seed imports `LLAMA32_1B` from `decode_lab`; it lives in [`llm_math`].
pub use llm_math::LLAMA32_1B;
pub use memory::MemoryPlan;
pub use pass::{
    Pricing, Seed, cost_coefficient, draft_pass, draft_step_time, target_pass_cost,
    target_pass_time, verify_time,
};
pub use round::{
    BestRound, MAX_GAMMA, Round, RoundPlan, best_of, best_round, expected_tokens, plan_of, round,
    round_plan, round_speedup, round_time, tree_round_time, tree_speedup,
};
pub use scenario::Scenario;
pub use speculative::{
    Choice, DynamicDraft, PromptLookup, Proposer, Sampling, SpecStats, TreeDraft, accept_among,
    speculative_generate, speculative_generate_batch,
};
pub use transformer_lab::{TransformerLM, autoregressive_generate};
pub use tree::{MAX_TREE_NODES, TreeShape};

use std::fmt;

/// What was wrong with the arguments of a function of this crate.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// A roofline argument was invalid (a zero size, or a batch that does not fit).
    Math(llm_math::Error),
    /// An acceptance rate outside [0, 1] (or NaN).
    Alpha(f64),
    /// A per-pass overhead that is negative or not finite, seconds.
    Overhead(f64),
    /// Another argument is out of its domain; says which and why.
    Argument(String),
    /// The toy model rejected its inputs.
    Model(transformer_lab::Error),
    /// Target and draft use different tokenizers: the draft's token ids mean nothing to
    /// the target, so they cannot speculate together ([`check_tokenizers`]).
    TokenizerMismatch {
        /// Target model name.
        target: &'static str,
        /// Its tokenizer family.
        target_tokenizer: &'static str,
        /// Draft model name.
        draft: &'static str,
        /// Its tokenizer family.
        draft_tokenizer: &'static str,
    },
    /// The draft's weights and the target's together do not fit the cards; carries the
    /// figures ([`MemoryPlan`]) so a lecture can print them.
    DraftDoesNotFit(Box<MemoryPlan>),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Math(e) => e.fmt(f),
            Error::Alpha(a) => write!(f, "acceptance rate α must be in [0, 1], got {a}"),
            Error::Overhead(o) => {
                write!(
                    f,
                    "per-pass overhead must be a number of seconds from 0 to {}, got {o}",
                    llm_math::MAX_SECONDS
                )
            }
            Error::Argument(msg) => f.write_str(msg),
            Error::Model(e) => e.fmt(f),
            Error::TokenizerMismatch {
                target,
                target_tokenizer,
                draft,
                draft_tokenizer,
            } => write!(
                f,
                "{draft} cannot draft for {target}: the draft uses the {draft_tokenizer} tokenizer \
                 and the target the {target_tokenizer} tokenizer, so their token ids differ; \
                 choose a draft of the target's family"
            ),
            Error::DraftDoesNotFit(m) => write!(
                f,
                "the draft {} does not fit: its weights ({:.1} GB) and the target {}'s \
                 ({:.1} GB) exceed the {:.1} GB of {}",
                m.draft.name(),
                m.draft_weights / 1e9,
                m.target,
                m.target_weights / 1e9,
                m.capacity / 1e9,
                if m.cards == 1 {
                    format!("one {}", m.hw)
                } else {
                    format!("{} × {}", m.cards, m.hw)
                }
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Math(e) => Some(e),
            Error::Model(e) => Some(e),
            _ => None,
        }
    }
}

impl From<llm_math::Error> for Error {
    fn from(e: llm_math::Error) -> Self {
        Error::Math(e)
    }
}

impl From<transformer_lab::Error> for Error {
    fn from(e: transformer_lab::Error) -> Self {
        Error::Model(e)
    }
}
