//! Weight-only quantization of the toy model, and lecture 3's model and data.
//!
//! Lecture 3 (quantization) asks what storing weights in 4 or 8 bits does to a model.
//! This crate answers on the toy model of `transformer_lab`:
//!
//! - [`QCFG`]: lecture 3's model shape, used again by later lectures (it lives in
//!   `transformer_lab`; re-exported here);
//! - [`Scheme`] and [`quantize_params`]: symmetric abs-max int-N quantization per group of
//!   input weights ([`Scheme::parse`]`("int4-g32")`, "int8-g128", …), returned as
//!   dequantized ("fake-quant") f32 weights so the ordinary forward pass runs them, plus a
//!   [`QuantReport`];
//! - [`sample_tokens`]: sequences sampled from the model itself, the data lecture 3 and
//!   lecture 6 evaluate on (it lives in `transformer_lab`; re-exported here).

mod quantize;

pub use quantize::{QuantReport, Scheme, quantize_matrix, quantize_params};

use std::fmt;

/// Lecture 3's model, re-exported under the name the lectures import it by. It lives in
/// `transformer_lab` ([`transformer_lab::QCFG`]), with the toy model's other configs.
pub use transformer_lab::QCFG;

/// Sequences sampled from the toy model itself, re-exported under the name the lectures
/// import it by (`from quant_lab import QCFG, quantize_params, sample_tokens`). It lives
/// in `transformer_lab` ([`transformer_lab::sample_tokens`]), beside the sampler it uses.
pub use transformer_lab::sample_tokens;

/// What was wrong with the arguments of a function of this crate.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// A quantization scheme string that does not parse, or that does not fit the weights.
    Scheme(String),
    /// Weights that cannot be quantized (a NaN or infinite weight); says where.
    Weights(String),
    /// The model rejected its inputs.
    Model(transformer_lab::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Scheme(msg) => write!(f, "bad quantization scheme: {msg}"),
            Error::Weights(msg) => write!(f, "{msg}"),
            Error::Model(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Model(e) => Some(e),
            Error::Scheme(_) | Error::Weights(_) => None,
        }
    }
}

impl From<transformer_lab::Error> for Error {
    fn from(e: transformer_lab::Error) -> Self {
        Error::Model(e)
    }
}
