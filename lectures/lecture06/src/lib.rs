//! CS349E lecture 6 — speculative decoding — as executable Rust.
//!
//! One module per script of the lecture. A script module computes its figures with the
//! workspace's libraries (`hw_specs`, `llm_math`, `decode_lab`, …), turns them into
//! [`console::Block`]s in the original script's words, and exposes the figures themselves
//! (e.g. [`spec_decode_on_hardware::demo1_figures`]) so tests check the lecture's claims
//! against the very numbers it prints. [`run_with`] prints the chosen demos for a chosen
//! [`Setup`](spec_decode_on_hardware::Setup) as text, Markdown, CSV or JSON, and can draw
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

use serde_json::json;
use spec_decode_on_hardware::{self as s05, Setup};

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
/// figures when `plot_dir` is set (demo 1 → `knee.svg`, 2 → `batch.svg`, 3 → `trees.svg`;
/// demo 4 has no figure).
pub fn run_with(out: &mut dyn Write, opts: &Options) -> Result<(), Error> {
    let setup = &opts.setup;
    let wants = |n: u8| opts.demos.contains(&n);
    let mut blocks = Vec::new();
    let mut doc = serde_json::Map::new();
    if wants(1) {
        let d = s05::demo1_figures(setup)?;
        blocks.extend(s05::demo1_blocks(setup, &d)?);
        doc.insert("demo1".into(), s05::demo1_json(setup, &d));
        if let Some(dir) = &opts.plot_dir {
            plots::knee(dir, setup)?;
        }
    }
    if wants(2) {
        let d = s05::demo2_figures(setup)?;
        blocks.extend(s05::demo2_blocks(setup, &d));
        doc.insert("demo2".into(), s05::demo2_json(setup, &d));
        if let Some(dir) = &opts.plot_dir {
            plots::batch(dir, setup)?;
        }
    }
    let toy = if wants(3) || wants(4) {
        Some(s05::toy_run()?)
    } else {
        None
    };
    if let (true, Some(toy)) = (wants(3), &toy) {
        let d = s05::demo3_from_ranks(setup, &toy.ranks)?;
        blocks.extend(s05::demo3_blocks(setup, &d));
        doc.insert("demo3".into(), s05::demo3_json(&d));
        if let Some(dir) = &opts.plot_dir {
            plots::trees(dir, setup, &d)?;
        }
    }
    if let (true, Some(toy)) = (wants(4), &toy) {
        let d = s05::demo4_figures(toy)?;
        blocks.extend(s05::demo4_blocks(&d));
        doc.insert("demo4".into(), s05::demo4_json(&d));
    }
    match opts.format {
        Format::Text => console::render_text(out, &blocks)?,
        Format::Markdown => console::render_markdown(out, &blocks)?,
        Format::Csv => console::render_csv(out, &blocks)?,
        Format::Json => {
            let tables: Vec<serde_json::Value> = blocks
                .iter()
                .filter_map(|b| match b {
                    console::Block::Table(t) => {
                        Some(json!({ "caption": t.caption, "headers": t.headers, "rows": t.rows }))
                    }
                    _ => None,
                })
                .collect();
            let document = json!({
                "lecture": 6,
                "script": "05_spec_decode_on_hardware",
                "units": {
                    "*_s": "seconds",
                    "*_tokens": "tokens",
                    "*_bytes": "bytes",
                    "peak_flops_bf16": "FLOP/s",
                    "hbm_bandwidth": "bytes/s",
                    "speedup, c, ratio*, verify_ratio, expected_tokens, tau, *_fraction": "dimensionless",
                },
                "setup": setup_json(setup),
                "demos": opts.demos,
                "figures": doc,
                "tables": tables,
            });
            let text = serde_json::to_string_pretty(&document).map_err(io::Error::other)?;
            writeln!(out, "{text}")?;
        }
    }
    Ok(())
}

fn setup_json(setup: &Setup) -> serde_json::Value {
    let model = |m: &llm_math::ModelConfig| {
        json!({
            "name": m.name, "n_params": m.n_params(), "streamed_params": m.streamed_params(),
            "kv_bytes_per_token": m.kv_bytes_per_token(), "n_layers": m.n_layers, "d_model": m.d_model,
        })
    };
    json!({
        "hw": {
            "name": setup.hw.name,
            "peak_flops_bf16": setup.hw.peak_flops_bf16,
            "hbm_bandwidth": setup.hw.hbm_bandwidth,
            "memory_bytes": setup.hw.memory_bytes,
        },
        "target": model(&setup.target),
        "draft": model(&setup.draft),
        "alpha": setup.alpha,
        "overhead_target_s": s05::OVERHEAD_T,
        "overhead_draft_s": s05::OVERHEAD_D,
        "compute_efficiency": llm_math::COMPUTE_EFFICIENCY,
        "bandwidth_efficiency": llm_math::BANDWIDTH_EFFICIENCY,
    })
}
