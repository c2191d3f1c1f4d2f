//! The roofline of the machine in front of you.
//!
//! Lecture 6 models an H100; no student can check those numbers. A CPU has a peak and a
//! memory bandwidth too, and a model larger than its caches is memory-bound at batch 1
//! there as well. This crate measures both figures on this machine ([`measure`]), reads
//! its caches and memory from the OS ([`host`]), turns them into an
//! [`hw_specs::Accelerator`] ([`machine`]), builds lecture 3's architecture scaled past
//! the last-level cache with two drafts — its first layer, and an INT4 copy whose weights
//! are stored and read as 4-bit groups ([`int4`], [`scaled`]) — and measures what the
//! roofline predicts: forward time against tokens fed, the draft cost c, and real
//! speculative decoding ([`figures`]).
//!
//! Everything returns data; progress goes to a writer the caller passes (stderr in a
//! lecture), never to stdout.

mod cpu;
pub mod device;
pub mod figures;
pub mod host;
pub mod int4;
mod int4_avx2;
mod int4_lm;
mod lm;
pub mod machine;
pub mod measure;
pub mod predict;
pub mod scaled;
pub mod spec;

use std::fmt;

pub use device::{CpuDevice, Device};
pub use int4_lm::{Int4Cache, Int4Lm};
pub use lm::{Lm, f32_weight_bytes};

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

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}
