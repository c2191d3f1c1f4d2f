//! Script 05 — 投机解码在硬件上：c、批大小、上下文与树形验证
//! (speculative decoding on hardware: c, batch size, context and tree verification).
//!
//! Leviathan's formula makes two hardware assumptions: (1) the target verifies γ + 1
//! tokens as fast as it decodes one; (2) the draft's cost coefficient c is a known
//! constant. With lecture 1's roofline this script checks when they hold:
//!
//! - [`demo1`]: Llama-3.1-8B (target) + Llama-3.2-1B (draft) on one H100 at batch 1 —
//!   c, the cost of verifying γ + 1 tokens, the best γ and speedup;
//! - [`demo2`]: batch size × context length — a big batch makes verification no longer
//!   free and the gain shrinks; a long context keeps it longer;
//! - [`demo3`]: tree verification (Medusa, EAGLE, SpecInfer): each level keeps the draft's
//!   top k, one pass verifies the whole tree. Acceptance lengths are measured on lecture
//!   3's toy model ([`toy_model`], greedy decoding), then turned into H100 speedups: trees
//!   pay at small batch and do not at large batch;
//! - [`demo4`] (opt-in, not in the original script): speculative decoding for real on
//!   the toy model;
//! - [`demo5`] (opt-in, not in the original script): the roofline against published
//!   measurements, under the script's assumptions and a fitted calibration profile.
//!
//! Model assumptions (as the original script states them): one forward pass takes
//! `max(FLOPs / (peak × 0.6), bytes / (bandwidth × 0.8))` plus a fixed overhead (1 ms for
//! the target, 0.3 ms for the draft, assumed); a sequence's γ + 1 queries read its KV
//! cache once (fused attention); the draft's own KV cache is not counted against memory;
//! the acceptance rate α is a *given* parameter (EAGLE, table 2: about 0.65–0.8 per
//! position), not a measurement. Demo 3's acceptance lengths come from a
//! random-initialised small model: they show the mechanism ("how much more does a tree
//! accept than a chain"), not the figures of a trained model.
//!
//! Every demo is computed for a [`Setup`] (accelerator, target, draft, α); the default
//! is the original script's, and prints exactly its text. For any other setup, headers
//! and figures follow the setup, and the script's sentences ([`text`]) follow one rule,
//! [`Setup::seed_wording_holds`].

pub mod demo1;
pub mod demo2;
pub mod demo3;
pub mod demo4;
pub mod demo5;
pub mod round;
pub mod setup;
pub mod text;
pub mod toy_model;
pub mod validation_doc;

use lecture_kit::{Error, Report, Script, Section};

pub use round::{Plan, Round};
pub use setup::Setup;

/// The script's name, as `--script` takes it.
pub const NAME: &str = "05_spec_decode_on_hardware";
/// The script's question, one line.
pub const TITLE: &str = "投机解码在硬件上：c、批大小、上下文与树形验证";
/// Every demo of the script.
pub const DEMOS: [u8; 5] = [1, 2, 3, 4, 5];
/// The demos the original script prints.
pub const DEFAULT_DEMOS: [u8; 3] = [1, 2, 3];

/// The script as lecture 6's registry lists it.
pub const SCRIPT: Script<crate::Cli> = Script {
    name: NAME,
    title: TITLE,
    demos: &DEMOS,
    default_demos: &DEFAULT_DEMOS,
    report: |cli, demos| report(&cli.setup()?, demos),
};

/// The units of the raw numbers in the JSON export, by field-name pattern.
pub const UNITS: [(&str, &str); 6] = [
    ("*_s", "seconds"),
    ("*_tokens, n, gamma, nodes", "tokens"),
    ("*_bytes, *_bytes_per_token", "bytes"),
    ("peak_flops_bf16", "FLOP/s"),
    ("hbm_bandwidth", "bytes/s"),
    (
        "speedup, c, *_ratio, expected_tokens, tau*, *_fraction, alpha",
        "dimensionless",
    ),
];

/// Computes the report of `demos` (in lecture order) for `setup`.
pub fn report(setup: &Setup, demos: &[u8]) -> Result<Report, Error> {
    let mut report = Report::new(6, NAME);
    report.setup = serde_json::to_value(setup.data())?;
    report.units = UNITS
        .iter()
        .map(|&(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let wants = |n: u8| demos.contains(&n);
    if wants(1) {
        let d = demo1::figures(setup)?;
        report
            .sections
            .push(Section::new("demo1", demo1::blocks(setup, &d)?, &d)?);
    }
    if wants(2) {
        let d = demo2::figures(setup)?;
        report
            .sections
            .push(Section::new("demo2", demo2::blocks(setup, &d)?, &d)?);
    }
    let toy = if wants(3) || wants(4) {
        Some(toy_model::run()?)
    } else {
        None
    };
    if let (true, Some(toy)) = (wants(3), &toy) {
        let d = demo3::from_ranks(setup, &toy.ranks)?;
        report
            .sections
            .push(Section::new("demo3", demo3::blocks(setup, &d), &d)?);
    }
    if let (true, Some(toy)) = (wants(4), &toy) {
        let d = demo4::figures(toy)?;
        report
            .sections
            .push(Section::new("demo4", demo4::blocks(&d), &d)?);
    }
    if wants(5) {
        let d = demo5::figures()?;
        report
            .sections
            .push(Section::new("demo5", demo5::blocks(&d), &d)?);
    }
    Ok(report)
}

/// Prints the script for the default setup, demos 1–3, as text: what the original prints.
pub fn run(out: &mut dyn std::io::Write) -> Result<(), Error> {
    let report = report(&Setup::default(), &DEFAULT_DEMOS)?;
    lecture_kit::render::text(out, &report)?;
    Ok(())
}
