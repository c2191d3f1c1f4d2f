//! Speculative decoding, from the hardware side and from the model side.
//!
//! Lecture 6 (speculative decoding; Leviathan et al. 2023, "Fast Inference from
//! Transformers via Speculative Decoding"; Chen et al. 2023) asks when drafting γ tokens
//! with a small model and verifying them in one pass of the big one pays off.
//!
//! - [`roofline`]: how long a draft step and a verify pass take on real hardware
//!   ([`verify_time`]), how many tokens a round yields ([`expected_tokens`]), and the
//!   best draft length ([`best_round`]).

pub mod roofline;

pub use roofline::{
    BestRound, LLAMA32_1B, MAX_GAMMA, RoundPlan, best_round, expected_tokens, verify_time,
};

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
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Math(e) => e.fmt(f),
            Error::Alpha(a) => write!(f, "acceptance rate α must be in [0, 1], got {a}"),
            Error::Overhead(o) => {
                write!(
                    f,
                    "per-pass overhead must be a finite number of seconds ≥ 0, got {o}"
                )
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Math(e) => Some(e),
            _ => None,
        }
    }
}

impl From<llm_math::Error> for Error {
    fn from(e: llm_math::Error) -> Self {
        Error::Math(e)
    }
}
