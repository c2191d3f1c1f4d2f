//! Counts in saturating arithmetic: on a shape that validates
//! ([`ModelConfig::validate`](crate::ModelConfig::validate), at most [`crate::MAX_PARAMS`]
//! parameters) they are exact, on any other they stop at `u64::MAX` instead of overflowing.

use std::num::Saturating;

/// A count that saturates at `u64::MAX` instead of overflowing.
pub(crate) type Count = Saturating<u64>;

/// `x` as a [`Count`].
pub(crate) const fn n(x: u64) -> Count {
    Saturating(x)
}
