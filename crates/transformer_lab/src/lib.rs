//! A small Llama-style decoder-only transformer on `ndarray`, for experiments you can run.
//!
//! Lecture 2 builds this model piece by piece (RMSNorm, RoPE, causal multi-head attention,
//! SwiGLU, pre-norm residual blocks, an untied LM head); later lectures use it as the
//! object of their experiments: lecture 3 quantizes it (`quant_lab`), lecture 6 drafts
//! with parts of it (`decode_lab`). It runs in f32 on the CPU and is random-initialised
//! from a named, seeded generator, so every run of every lecture sees the same model.
//!
//! Start with [`reference`](mod@reference): the whole forward pass written to be read,
//! one short function per step (embedding, RMSNorm, Q/K/V, RoPE, causal attention,
//! SwiGLU, the head), with the shape of every array. Everything else in this crate
//! computes the same thing fast, and its tests check it against the reference and against
//! logits computed by an independent NumPy implementation (`tools/golden/`).
//!
//! - [`Config`], [`QCFG`], [`config_like`]: the shape of the model.
//! - [`Params`], [`init_params`]: its weights, `[in, out]` matrices (`y = x · W`).
//! - [`TransformerLM`]: teacher-forced [`full_logits`](TransformerLM::full_logits) and
//!   incremental decoding with a [`KvCache`] ([`prefill`](TransformerLM::prefill),
//!   [`step`](TransformerLM::step)); a whole draft tree in one pass
//!   ([`extend_tree`](TransformerLM::extend_tree)), and sequences of different lengths in
//!   one ragged pass ([`extend_ragged`](TransformerLM::extend_ragged)).
//! - [`autoregressive_generate`]: greedy or temperature sampling, a whole batch per step;
//!   [`sample_tokens`]: sequences sampled from the model itself (lectures 3 and 6's data).
//! - [`ops`]: the building blocks, each tested on hand-computed values.
//! - [`gemm`]: the matrix products, against weights packed once when a model is built.
//!
//! # Speed
//! The model packs its weights for a register-blocked fused multiply-add kernel
//! ([`gemm`]; on a CPU with AVX-512, a copy of it written for 16-float registers), and its
//! elementwise and attention loops are compiled twice, for the x86-64 baseline and for
//! AVX2, the AVX2 copy running where the CPU has it (the places this crate uses `unsafe`:
//! calling a copy after checking the CPU, the AVX-512 copy's loads and stores, and the
//! prefetch hint of [`cpu`], which cannot fault). Work is split into
//! pieces whose boundaries depend only on the shapes, so results are bit-identical for
//! any number of threads.

mod cache;
mod config;
pub mod cpu;
mod forward;
pub mod gemm;
mod kernels;
mod linear;
mod model;
pub mod ops;
mod params;
pub mod reference;
mod sample;
mod scratch;
mod seq;
mod tree_mask;

pub use cache::KvCache;
pub use config::{Config, QCFG, config_like};
pub use model::TransformerLM;
pub use params::{LayerParams, Params, init_params};
pub use sample::{
    argmax, autoregressive_generate, draw_weighted, greedy_generate, sample_categorical,
    sample_tokens, sample_tokens_from, softmax_probs,
};
pub use tree_mask::{Feed, TreeMask};

use std::fmt;

/// At most this many f32 in one allocation whose size a caller's number sets: the
/// weights a [`Config`] asks for (`n_params`, and `max_seq · d_model` for its RoPE tables
/// and a whole sequence's activations), a KV cache ([`TransformerLM::new_cache`]), a
/// batch of sampled sequences ([`sample_tokens`]). 2²⁸ floats are 1 GiB: a thousand
/// times what the toy model needs, and small enough that a mistyped size is an `Err`
/// naming this limit instead of an allocation failure.
pub const MAX_FLOATS: usize = 1 << 28;

/// What was wrong with the arguments of a function of this crate.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// The configuration is inconsistent (says which field and why).
    Config(String),
    /// An array does not have the shape the model needs (says which and what was expected).
    Shape(String),
    /// A token id is not below the vocabulary size.
    TokenOutOfRange {
        /// The offending token id.
        token: u32,
        /// The vocabulary size.
        vocab: usize,
    },
    /// A sequence would grow past the model's `max_seq` (or the cache's capacity).
    TooLong {
        /// The length it would reach.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A sampling temperature that is negative or not finite.
    Temperature(f64),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config(msg) => write!(f, "invalid model config: {msg}"),
            Error::Shape(msg) => write!(f, "wrong shape: {msg}"),
            Error::TokenOutOfRange { token, vocab } => {
                write!(
                    f,
                    "token id {token} is out of range for a vocabulary of {vocab}"
                )
            }
            Error::TooLong { len, max } => {
                write!(f, "sequence length {len} exceeds the limit of {max} tokens")
            }
            Error::Temperature(t) => {
                write!(
                    f,
                    "temperature must be a finite number ≥ 0 (0 = greedy), got {t}"
                )
            }
        }
    }
}

impl std::error::Error for Error {}
