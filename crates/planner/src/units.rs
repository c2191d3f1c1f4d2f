//! Times in seconds, checked: what every cost term takes and gives.

use std::fmt::Display;

use crate::Error;
use llm_math::MAX_SECONDS;

/// `x` if it is a time in seconds: finite and ≥ 0 (a computed time, which may be long).
pub(crate) fn finite_time(what: &str, x: f64) -> Result<f64, Error> {
    if x.is_finite() && x >= 0.0 {
        Ok(x)
    } else {
        Err(Error::Argument(format!(
            "{what} must be a finite number of seconds ≥ 0, got {x}"
        )))
    }
}

/// `x` if it is a cost term in seconds from 0 to [`MAX_SECONDS`]. `what` is written out
/// only for the error (a fit checks its terms millions of times).
pub(crate) fn seconds(what: impl Display, x: f64) -> Result<f64, Error> {
    if x.is_finite() && (0.0..=MAX_SECONDS).contains(&x) {
        Ok(x)
    } else {
        Err(Error::Argument(format!(
            "{what} must be a number of seconds from 0 to {MAX_SECONDS}, got {x}"
        )))
    }
}
