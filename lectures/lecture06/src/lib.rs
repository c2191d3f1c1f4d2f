//! CS349E lecture 6 — speculative decoding — as executable Rust.
//!
//! One module per script of the lecture, each with a `run(out)` that prints what the
//! original Python script printed, in the same order and words. The numbers come from
//! the workspace's libraries (`hw_specs`, `llm_math`, `decode_lab`, …); a script module
//! only asks the questions and prints the answers, and exposes the figures it prints
//! (e.g. [`spec_decode_on_hardware::demo1_figures`]) so tests can check the lecture's
//! claims against the very numbers it shows.
//!
//! | module | script | question |
//! |---|---|---|
//! | [`spec_decode_on_hardware`] | `05_spec_decode_on_hardware.py` | when does speculative decoding pay on an H100? |

pub mod spec_decode_on_hardware;

use std::fmt;
use std::io::{self, Write};

/// Why a lecture could not finish printing.
#[derive(Debug)]
pub enum Error {
    /// Writing the output failed (a closed pipe, a full disk).
    Io(io::Error),
    /// A library rejected the lecture's inputs: a bug in the lecture, reported, not panicked.
    Decode(decode_lab::Error),
    /// The toy model rejected its inputs.
    Model(transformer_lab::Error),
    /// Quantization rejected its inputs.
    Quant(quant_lab::Error),
}

impl Error {
    /// Whether the reader of the output went away (`lecture06 | head -3`).
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Io(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "cannot write the output: {e}"),
            Error::Decode(e) => e.fmt(f),
            Error::Model(e) => e.fmt(f),
            Error::Quant(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            Error::Decode(e) => Some(e),
            Error::Model(e) => Some(e),
            Error::Quant(e) => Some(e),
        }
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Io(e)
    }
}

impl From<transformer_lab::Error> for Error {
    fn from(e: transformer_lab::Error) -> Self {
        Error::Model(e)
    }
}

impl From<quant_lab::Error> for Error {
    fn from(e: quant_lab::Error) -> Self {
        Error::Quant(e)
    }
}

impl From<decode_lab::Error> for Error {
    fn from(e: decode_lab::Error) -> Self {
        Error::Decode(e)
    }
}

/// Prints the whole lecture: every script, in lecture order.
pub fn run(out: &mut dyn Write) -> Result<(), Error> {
    spec_decode_on_hardware::run(out)
}
