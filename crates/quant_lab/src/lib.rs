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
//!   lecture 6 evaluate on.

mod quantize;

pub use quantize::{QuantReport, Scheme, quantize_matrix, quantize_params};

use ndarray::{Array2, Axis, concatenate};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt;
use transformer_lab::{Config, Params, TransformerLM, autoregressive_generate};

/// Lecture 3's model, re-exported under the name the lectures import it by. It lives in
/// `transformer_lab` ([`transformer_lab::QCFG`]), with the toy model's other configs.
pub use transformer_lab::QCFG;

/// What was wrong with the arguments of a function of this crate.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// A quantization scheme string that does not parse, or that does not fit the weights.
    Scheme(String),
    /// The model rejected its inputs.
    Model(transformer_lab::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Scheme(msg) => write!(f, "bad quantization scheme: {msg}"),
            Error::Model(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Model(e) => Some(e),
            Error::Scheme(_) => None,
        }
    }
}

impl From<transformer_lab::Error> for Error {
    fn from(e: transformer_lab::Error) -> Self {
        Error::Model(e)
    }
}

/// `n_seq` sequences of `length` tokens sampled from the model `(params, cfg)` itself:
/// the first token uniform over the vocabulary, the rest drawn at temperature 1, all from
/// one `ChaCha8Rng::seed_from_u64(seed)` (first tokens in sequence order, then the
/// batched generation). Returns `[n_seq, length]`.
///
/// Errors: `n_seq` or `length` 0, `length > max_seq`, parameters that do not fit `cfg`.
///
/// ```
/// let p = transformer_lab::init_params(&quant_lab::QCFG, 0)?;
/// let s = quant_lab::sample_tokens(&p, &quant_lab::QCFG, 2, 5, 3)?;
/// assert_eq!(s.dim(), (2, 5));
/// let model = transformer_lab::TransformerLM::new(&p, quant_lab::QCFG, "m")?;
/// assert_eq!(s, quant_lab::sample_tokens_from(&model, 2, 5, 3)?);
/// # Ok::<(), quant_lab::Error>(())
/// ```
pub fn sample_tokens(
    params: &Params,
    cfg: &Config,
    n_seq: usize,
    length: usize,
    seed: u64,
) -> Result<Array2<u32>, Error> {
    let model = TransformerLM::new(params, *cfg, "sampler")?;
    sample_tokens_from(&model, n_seq, length, seed)
}

/// [`sample_tokens`] from a model already built (the same tokens for the same parameters
/// and configuration, without building the model again).
///
/// Errors: `n_seq` or `length` 0, `length > max_seq`.
pub fn sample_tokens_from(
    model: &TransformerLM<'_>,
    n_seq: usize,
    length: usize,
    seed: u64,
) -> Result<Array2<u32>, Error> {
    if n_seq == 0 || length == 0 {
        return Err(transformer_lab::Error::Shape(format!(
            "sample_tokens needs n_seq ≥ 1 and length ≥ 1, got {n_seq} × {length}"
        ))
        .into());
    }
    let vocab = model.cfg().vocab;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let first = Array2::from_shape_fn((n_seq, 1), |_| rng.random_range(0..vocab as u32));
    let rest = autoregressive_generate(model, first.view(), length - 1, 1.0, &mut rng)?;
    Ok(concatenate(Axis(1), &[first.view(), rest.view()]).expect("same number of rows"))
}
