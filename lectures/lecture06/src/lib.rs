//! CS349E lecture 6 — speculative decoding — as executable Rust.
//!
//! One module per script of the lecture. A script module computes its figures with the
//! workspace's libraries (`hw_specs`, `llm_math`, `decode_lab`, …), turns them into
//! [`console::Block`]s in the original script's words, and exposes the figures themselves
//! (e.g. [`spec_decode_on_hardware::demo1_figures`]) so tests check the lecture's claims
//! against the very numbers it prints. [`run_with`] prints the chosen demos for a chosen
//! [`spec_decode_on_hardware::Setup`] as text, Markdown, CSV or JSON, and can draw
//! SVG figures ([`plots`]); [`cli`] is the `lecture06` command line.
//!
//! | module | script | question |
//! |---|---|---|
//! | [`spec_decode_on_hardware`] | `05_spec_decode_on_hardware.py` | when does speculative decoding pay on real hardware? |

pub mod cli;
pub mod plots;
pub mod spec_decode_on_hardware;

use std::fmt;
use std::io::{self, Write};
use std::path::PathBuf;

use spec_decode_on_hardware::Setup;

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
    /// A figure could not be written (e.g. the `--plot` folder is not writable).
    Plot(String),
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
            Error::Plot(msg) => f.write_str(msg),
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
            Error::Plot(_) => None,
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

/// How the lecture is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// The lecture as the original script prints it.
    #[default]
    Text,
    /// The tables only, as Markdown, each under a heading.
    Markdown,
    /// The tables only, as CSV.
    Csv,
    /// Every table and headline figure as one JSON document, raw numbers with units.
    Json,
}

/// What to print, for which setup, in which form.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Demos to print, in lecture order: 1–3 are the original script's; 4 (opt-in) runs
    /// speculative decoding for real on the toy model.
    pub demos: Vec<u8>,
    /// Accelerator, models and α.
    pub setup: Setup,
    /// Output form.
    pub format: Format,
    /// Where to write SVG figures of the chosen demos, if anywhere.
    pub plot_dir: Option<PathBuf>,
}

impl Default for Options {
    /// The whole lecture, default setup, as text, no figures.
    fn default() -> Self {
        Options {
            demos: vec![1, 2, 3],
            setup: Setup::default(),
            format: Format::Text,
            plot_dir: None,
        }
    }
}

/// Prints the whole lecture, as the original script does.
pub fn run(out: &mut dyn Write) -> Result<(), Error> {
    run_with(out, &Options::default())
}

/// Prints the chosen demos for the chosen setup in the chosen form, and writes their
/// figures when `plot_dir` is set. Lecture 6 has one script so far: this is
/// [`spec_decode_on_hardware::run_with`].
pub fn run_with(out: &mut dyn Write, opts: &Options) -> Result<(), Error> {
    spec_decode_on_hardware::run_with(out, opts)
}
