//! Back-of-the-envelope LLM arithmetic: parameters, FLOPs, bytes and the roofline.
//!
//! This is lecture 1's toolbox (§3, "the roofline", and §3.6, "the critical batch"):
//! a [`ModelConfig`] says how big a decoder-only transformer is, and
//! [`forward_time`] says how long one forward pass takes on an
//! [`Accelerator`](hw_specs::Accelerator) when it is limited either by compute
//! or by memory bandwidth, whichever is slower.
//!
//! The model is deliberately optimistic: one `max` over the *whole* pass, as if
//! every kernel overlapped its compute with its memory traffic perfectly.
//! Per-operator tools (GenZ, LLM-Viewer) take the max per operator and sum, which
//! comes out up to ~35% slower at batch 512 where some operators are compute-bound
//! and others memory-bound. The whole-pass bound is the right one to reason with
//! in a lecture; it is not a profiler.

mod config;
mod roofline;

pub use config::{
    LLAMA31_8B, LLAMA31_70B, LLAMA31_405B, LLAMA32_1B, LLAMA32_3B, MISTRAL_7B, MODELS, ModelConfig,
    QWEN25_7B, model,
};
pub use roofline::{
    BANDWIDTH_EFFICIENCY, COMPUTE_EFFICIENCY, ForwardCost, ForwardShape, KV_BYTES_PER_ELEMENT,
    WEIGHT_BYTES_PER_PARAM, critical_tokens, forward_cost, forward_time, max_batch,
};

use std::fmt;

/// What was wrong with the arguments of a function of this crate.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// A size that must be at least 1 was 0; names which one.
    Zero(&'static str),
    /// The weights plus `batch` KV caches of `ctx` tokens do not fit in device memory.
    DoesNotFit {
        /// Model name.
        model: &'static str,
        /// Accelerator name.
        hw: &'static str,
        /// Requested batch size.
        batch: u64,
        /// Requested context length, tokens.
        ctx: u64,
        /// The largest batch that fits at this context (0: not even the weights fit).
        max_batch: u64,
    },
    /// A model name [`model`] does not know.
    UnknownModel(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Zero(what) => write!(f, "{what} must be at least 1, got 0"),
            Error::DoesNotFit {
                model,
                hw,
                batch,
                ctx,
                max_batch: 0,
                ..
            } => write!(
                f,
                "{model} does not fit on one {hw} at all (batch {batch}, context {ctx}): \
                 its weights alone exceed device memory"
            ),
            Error::DoesNotFit {
                model,
                hw,
                batch,
                ctx,
                max_batch,
            } => write!(
                f,
                "batch {batch} at context {ctx} does not fit: {model} on one {hw} holds at most \
                 {max_batch} sequences of {ctx} tokens"
            ),
            Error::UnknownModel(name) => {
                let names: Vec<&str> = MODELS.iter().map(|m| m.name).collect();
                write!(
                    f,
                    "unknown model \"{name}\"; choose one of: {}",
                    names.join(", ")
                )
            }
        }
    }
}

impl std::error::Error for Error {}
