//! Training the toy model: its backward pass written beside the forward, AdamW, a seeded
//! training loop, a byte-level corpus, and the drafters of speculative decoding trained
//! for real.
//!
//! Read it as llm.c's `train_gpt2.c`: [`layers`] has each layer's forward next to its
//! backward (embedding, RMSNorm, RoPE, causal attention, SwiGLU), [`block`] chains them
//! into one transformer block and back, [`model`] adds the final norm, the LM head and
//! cross-entropy ([`loss`]) at one exit or several (LayerSkip's early exits), and returns
//! the gradient of every weight. [`gradcheck`] checks that gradient against finite
//! differences in f64 for every tensor; the same code runs in f32 to train
//! ([`weights::Real`]). [`adamw`] updates the weights, [`train`] runs the seeded loop,
//! its batches split into micro-batches whose gradients are added in a fixed order, so
//! the weights are bit for bit the same for any number of threads.
//!
//! What it trains on and ships: [`corpus`] (the Rust sources of eight pinned crates from
//! Cargo's cache, a fixed held-out split, the unigram and bigram baselines), [`recipe`]
//! (each shipped model's shape, seed and schedule), [`checkpoint`] (the safetensors files
//! under `data/`, written by `cargo xtask train NAME`), [`agree`] (how often a draft
//! agrees with its target on held-out text), [`shipped`] (those files and the held-out
//! prompts compiled in, as lecture 6's `--model trained` reads them).

pub mod accept;
pub mod adamw;
pub mod agree;
pub mod block;
pub mod checkpoint;
pub mod corpus;
pub mod eagle;
pub(crate) mod frozen;
pub mod gradcheck;
pub mod layers;
pub mod loss;
pub mod medusa;
pub mod model;
pub mod recipe;
pub mod shipped;
pub mod train;
pub mod weights;

use std::fmt;

/// What went wrong.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// The toy model refused its inputs.
    Model(transformer_lab::Error),
    /// Shapes or sizes that do not fit (says which).
    Shape(String),
    /// A setting out of range (says which).
    Setting(String),
    /// A file that could not be read or written, or does not hold what it should.
    File(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Model(e) => write!(f, "{e}"),
            Error::Shape(s) => write!(f, "wrong shape: {s}"),
            Error::Setting(s) => write!(f, "invalid setting: {s}"),
            Error::File(s) => write!(f, "{s}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<transformer_lab::Error> for Error {
    fn from(e: transformer_lab::Error) -> Self {
        Error::Model(e)
    }
}
