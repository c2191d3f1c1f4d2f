//! Back-of-the-envelope LLM arithmetic: parameters, FLOPs, bytes and the roofline.
//!
//! This is lecture 1's toolbox (§3, "the roofline", and §3.6, "the critical batch"):
//! a [`ModelConfig`] says how big a decoder-only transformer is, a [`Deployment`] how it
//! is served (cards, dtypes, efficiencies), and [`forward_cost`] how long one forward
//! pass takes on an [`Accelerator`](hw_specs::Accelerator) when it is limited either by
//! compute or by memory bandwidth, whichever is slower.
//!
//! | module | idea |
//! |---|---|
//! | `arch` | [`Arch`]: what a block adds to Llama's ([`Sliding`] windows, [`Mla`] latent attention, extra norms and biases) |
//! | `attention` | the attention's parameters, KV per token, cached tokens read and FLOPs |
//! | `count` | counts in saturating arithmetic |
//! | `catalog` | the models shipped as data (`data/models/`), [`catalog::all_models`] |
//! | `config` | [`ModelConfig`], the registry of published models ([`MODELS`], [`model`]) |
//! | `hf_config` | [`ModelConfig::from_hf_config`]: a model from its Hugging Face `config.json`, read through derived structs |
//! | `experts` | [`Experts`]: one mixture-of-experts layer's experts, their parameters, [`expected_experts_read`] |
//! | `moe` | what the experts add to a model: total against active parameters, the experts a pass streams |
//! | `dtype` | [`WeightDtype`], [`KvDtype`]: bytes per element, names |
//! | `deployment` | [`Deployment`]: tensor parallelism, dtypes, efficiencies; [`Deployment::LECTURE`] |
//! | `pass` | [`forward_cost`]: a pass's FLOPs and bytes; [`ForwardCost::time`], the seed's `max` (checked against memory: [`ForwardCost::checked_time`]) |
//! | `memory` | [`max_batch`] (the seed's), [`max_batch_on`] a deployment |
//! | `validate` | [`ModelConfig::validate`]: whether a shape can exist, [`MAX_PARAMS`] |
//! | `weights` | [`ModelConfig::weight_bytes`], [`ModelConfig::streamed_weight_bytes`]: the linear layers at the weights' format, the rest at 16 bits |
//!
//! The model is deliberately optimistic: one `max` over the *whole* pass, as if
//! every kernel overlapped its compute with its memory traffic perfectly.
//! Per-operator tools (GenZ, LLM-Viewer) take the max per operator and sum, which
//! comes out up to ~35% slower at batch 512 where some operators are compute-bound
//! and others memory-bound. The whole-pass bound is the right one to reason with
//! in a lecture; it is not a profiler.

#[cfg(feature = "arbitrary")]
pub mod arbitrary;
mod arch;
mod attention;
pub mod catalog;
mod config;
mod count;
mod deployment;
mod dtype;
mod experts;
pub mod hf_config;
mod memory;
mod moe;
mod pass;
mod validate;
pub use arch::{Arch, Mla, Sliding};
pub use validate::MAX_PARAMS;
mod weights;

pub use catalog::model;
pub use config::{LLAMA31_8B, LLAMA32_1B, MODELS, ModelConfig, Tokenizer};
pub use deployment::{
    BANDWIDTH_EFFICIENCY, COMPUTE_EFFICIENCY, Deployment, MAX_SECONDS, MIN_EFFICIENCY,
};
pub use dtype::{KvDtype, WeightDtype};
pub use experts::{Experts, expected_experts_read};
pub use memory::{max_batch, max_batch_on};
pub use pass::{
    ForwardCost, ForwardShape, MAX_PASS_TOKENS, all_reduce_time, critical_tokens,
    critical_tokens_at, forward_cost, roofline,
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
        /// The largest batch that fits at this context (0: not one sequence).
        max_batch: u64,
        /// Whether the weights alone fit (when they do and `max_batch` is 0, one
        /// sequence's KV does not fit beside them).
        weights_fit: bool,
        /// Cards the model is split over (tensor parallelism; 1 for one card).
        cards: u64,
    },
    /// A model name [`model`] does not know.
    UnknownModel(String),
    /// A serving knob out of its domain (an efficiency outside (0, 1], a tensor-parallel
    /// degree that does not divide the heads, ...); says which and why.
    Invalid(String),
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
                max_batch,
                weights_fit,
                cards,
            } => {
                let on = on_cards(*cards, hw);
                match (max_batch, weights_fit) {
                    (0, false) => write!(
                        f,
                        "{model} does not fit on {on} at all (batch {batch}, context {ctx}): \
                         its weights alone exceed device memory"
                    ),
                    (0, true) => write!(
                        f,
                        "batch {batch} at context {ctx} does not fit: {model} on {on} holds \
                         its weights but not one sequence of {ctx} tokens beside them"
                    ),
                    _ => write!(
                        f,
                        "batch {batch} at context {ctx} does not fit: {model} on {on} holds at \
                         most {max_batch} sequences of {ctx} tokens"
                    ),
                }
            }
            Error::Invalid(msg) => f.write_str(msg),
            Error::UnknownModel(name) => {
                let names: Vec<&str> = catalog::all_models().map(|m| m.name).collect();
                if name.contains(['/', '\\']) {
                    write!(f, "\"{name}\" is a path, not a model name")?;
                } else {
                    write!(f, "unknown model \"{name}\"")?;
                }
                write!(
                    f,
                    "; the closest: {} (of {} models)",
                    hw_specs::closest_names(name, &names).join(", "),
                    names.len()
                )
            }
        }
    }
}

impl std::error::Error for Error {}

/// "one H100", or "4 × H100" under tensor parallelism.
fn on_cards(cards: u64, hw: &str) -> String {
    if cards == 1 {
        format!("one {hw}")
    } else {
        format!("{cards} × {hw}")
    }
}
