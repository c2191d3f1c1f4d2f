//! What every CS349E lecture shares, so that a new lecture is one folder of content.
//!
//! A lecture script computes typed figures with the course's libraries (`hw_specs`,
//! `llm_math`, `decode_lab`, …) and turns them into a [`Report`]: one [`Section`] per demo,
//! each a list of [`Block`]s (header, text, [`Table`]s whose cells carry raw values next to
//! the printed text, observations, [`Figure`]s) plus the demo's figures as data. This crate
//! does everything else:
//!
//! | module | what |
//! |---|---|
//! | [`report`] | the report model: sections, blocks, tables, cells with values and units |
//! | [`figure`] | the figure model: panels, axes, series, reference lines, regions, messages |
//! | [`render`] | text (the script's exact bytes, via `console`), Markdown, tidy CSV, JSON (serde), SVG, one HTML page |
//! | [`cli`] | the runner: shared flags ([`CommonArgs`], [`ModelArgs`]), the script registry, exit codes |
//! | [`error`] | one [`Error`] for lectures, a variant per library |
//! | [`testing`] | run a lecture's command line into a string, for snapshot tests |
//!
//! A lecture's `main.rs` is one call:
//!
//! ```ignore
//! fn main() -> std::process::ExitCode {
//!     lecture_kit::main::<lecture06::Cli>()
//! }
//! ```
//!
//! `cargo xtask new-lecture NN "title"` writes a new lecture that uses all of it.

pub mod cli;
pub mod error;
pub mod figure;
pub mod render;
pub mod report;
pub mod testing;

pub use cli::{CommonArgs, Format, Lecture, ModelArgs, Script, exit_code, main};
pub use error::Error;
pub use figure::{Axis, Figure, Panel, RefLine, Region, Series};
pub use report::{Block, Cell, Column, Datum, Report, Section, Table};
