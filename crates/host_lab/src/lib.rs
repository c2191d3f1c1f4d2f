//! The roofline of the machine in front of you.
//!
//! Lecture 6 models an H100; no student can check those numbers. A CPU has a peak and a
//! memory bandwidth too, and a model larger than its caches is memory-bound at batch 1
//! there as well. This crate measures both on this machine and checks the roofline's
//! predictions against real passes of a real (random-initialised) model:
//!
//! - [`host`]: cache sizes and RAM from the OS, the load average.
//! - [`measure`]: the peak FLOP/s of the workspace's packed f32 kernel
//!   (`transformer_lab::gemm`) and of the INT4 kernel, and the sustained read bandwidth;
//!   medians of repeated runs, progress on a writer; what one parallel region costs
//!   (`measure::dispatch`, a CPU's kernel launch); and how much longer the kernel takes
//!   with its weights streamed from memory than reading them takes
//!   (`measure::streamed_slowdown`: the overlap of compute and memory this machine reaches);
//!   and both figures again, one short run each, beside every timed pass of a sweep
//!   (`measure::Probe`).
//! - [`machine`]: those figures as an [`hw_specs::Accelerator`] (efficiencies 1.0: they are
//!   achieved figures), the ridge point and the critical batch.
//! - [`scaled`]: lecture 3's architecture scaled to ≥ 4× the last-level cache, with its
//!   first-layer draft and its INT4 draft ([`Int4Lm`], weights stored as 4-bit groups,
//!   products by the W4A8 kernel of [`int4`]).
//! - [`Lm`]: one interface over those models; [`CpuDevice`]: a forward pass of
//!   `batch × n_new` tokens, timed.
//! - [`predict`]: the roofline (max), planner's, host's and additive predictions of a
//!   pass, the knee, the speculative speedup at a measured τ.
//! - [`spec`]: plain and speculative greedy decoding of a batch, timed, lossless.
//! - [`figures`]: everything demo 6 prints, as typed data ([`figures::run`]).
//!
//! Everything returns data; progress goes to a writer the caller passes (stderr in a
//! lecture), never to stdout. Times are measured on a host that may be shared: compare
//! them as ratios, side by side, and say they are measured.
//!
//! # Speed
//! `cargo bench -p host_lab` prints the batch-1 decode step's achieved read bandwidth over
//! the measured one and the 512-token pass's FLOP/s over the measured kernel peak.
//! `cargo run --release -p host_lab --example figures` prints the whole of [`figures::run`].

pub mod device;
mod figure_data;
pub mod figures;
pub mod host;
pub mod int4;
mod int4_lm;
mod lm;
pub mod machine;
pub mod measure;
mod plan;
pub mod predict;
pub mod scaled;
pub mod spec;

use std::fmt;

pub use device::CpuDevice;
pub use int4_lm::{Int4Cache, Int4Lm};
pub use lm::{F32_BYTES, Lm, f32_kv_bytes_per_token, f32_weight_bytes};

/// What went wrong in this crate.
#[derive(Debug)]
pub enum Error {
    /// A measurement could not be taken (says which and why).
    Measure(String),
    /// Another argument is out of its domain (says which and why).
    Argument(String),
    /// The model rejected its inputs.
    Model(transformer_lab::Error),
    /// The roofline model rejected its inputs.
    Roofline(String),
    /// Writing progress failed.
    Io(std::io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Measure(m) | Error::Argument(m) => f.write_str(m),
            Error::Model(e) => e.fmt(f),
            Error::Roofline(m) => write!(f, "roofline: {m}"),
            Error::Io(e) => write!(f, "writing progress: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Model(e) => Some(e),
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<transformer_lab::Error> for Error {
    fn from(e: transformer_lab::Error) -> Self {
        Error::Model(e)
    }
}

impl From<llm_math::Error> for Error {
    fn from(e: llm_math::Error) -> Self {
        Error::Roofline(e.to_string())
    }
}

impl From<decode_lab::Error> for Error {
    fn from(e: decode_lab::Error) -> Self {
        Error::Roofline(e.to_string())
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}
