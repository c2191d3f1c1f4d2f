//! What every CS349E lecture shares, so that a new lecture is one folder of content.
//!
//! A demo is a plain function of its inputs that prints to an [`Out`] in the order of the
//! Python script it ports — `out.header(…)`, `out.print(…)`, `out.table(headers, rows)`,
//! `out.observations([…])`, `out.figure(…)` — with typed [`Value`]s that carry their own
//! format and unit (`time(t)` prints `7.04 ms` and exports seconds). Its inputs are a clap
//! `Args` group ([`Inputs`]): the flags it reads, declared once; a script lists its demos
//! ([`Demo::new`]`(1, demo1::run)`); the kit builds the command line and the [`Report`] and
//! does everything else:
//!
//! | module | what |
//! |---|---|
//! | [`demo`] | writing a demo: [`Out`], [`Demo`], observations that hold for the default setup only, [`run_demo`] |
//! | [`value`] | typed values: time, fixed digits, ratio, speedup, percent, thousands, Python's float repr, measured |
//! | [`parse`] | value parsers for flags: counts, reals, costs and durations in range, saying what they got |
//! | [`inputs`] | a demo's inputs: the flags it reads as a typed group, their defaults, whether they changed |
//! | [`mod@report`] | the report model: sections, blocks, tables, cells with values and units |
//! | [`figure`] | the figure model: panels, axes, series, reference lines, regions, messages |
//! | [`sweep`] | the inputs a demo sweeps (so many per doubling, cut where they stop fitting), computed at each |
//! | [`render`] | text (the script's exact bytes, via `console`), Markdown, tidy CSV, JSON (serde), SVG, one HTML page |
//! | [`files`] | output files written whole or not at all, folders without stale files |
//! | [`cli`] | the runner: shared flags ([`CommonArgs`]), the script registry, exit codes, masking measured values |
//! | [`error`] | one [`Error`] for lectures; any library's error passes through one boxed variant |
//! | [`testing`] | run a lecture's command line into a string, check what every lecture's command line must do |
//! | [`chrome`] | the page words the kit prints around a lecture (its only Chinese) |
//!
//! A lecture's `main.rs` is one call:
//!
//! ```ignore
//! fn main() -> std::process::ExitCode {
//!     lecture_kit::main::<lecture06::Cli>()
//! }
//! ```
//!
//! The kit knows none of the course's libraries (`hw_specs`, `llm_math`, …); the flags and
//! value parsers for cards and models are `lecture_flags`'. `cargo xtask new-lecture NN
//! "title"` writes a new lecture that uses all of it.

pub mod chrome;
pub mod cli;
pub mod demo;
pub mod error;
pub mod figure;
pub mod files;
pub mod inputs;
mod out;
pub mod parse;
pub mod prelude;
pub mod render;
pub mod report;
pub mod sweep;
pub mod testing;
pub mod value;
pub mod web;

pub use cli::{
    CommonArgs, Format, Lecture, MASK_ENV, Options, Script, command, join_the_pool, main, report,
    run,
};
pub use demo::{Demo, Ran, run_demo};
pub use error::Error;
pub use figure::{Axis, Figure, Panel, RefLine, Region, Series};
pub use inputs::{Inputs, NoInputs};
pub use out::{Observation, Out, TableRef, always, seed, what_if};
pub use report::{Block, Cell, Column, Line, Report, Section, Table};
pub use sweep::{cut_at, log_sweep, try_map};
pub use value::{Datum, Value};
