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
//!   measurements, under the script's assumptions and two calibration profiles;
//! - [`demo6`] (opt-in, not in the original script; `--release` recommended): the roofline
//!   of the machine in front of you — its peak and bandwidth measured, forward time against
//!   tokens fed predicted then timed, c per draft, speculative decoding timed for real.
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
//! Every demo is a function that prints to the kit's `Out` for a [`Setup`], registered in
//! [`REGISTRY`] with the setup inputs it reads (its `READS`); the default setup is the
//! original script's, and prints exactly its text. For any other setup, headers and figures
//! follow the setup, and the script's sentences ([`text`]) follow the kit's one rule: as
//! written when none of a demo's inputs changed, else marked, after the demo's own line.

pub mod demo1;
pub mod demo2;
pub mod demo3;
pub mod demo4;
pub mod demo5;
pub mod demo6;
pub mod round;
pub mod setup;
pub mod text;
pub mod toy_model;
pub mod validation_doc;

use lecture_kit::{Demo, Error, Report, Script};

pub use round::{Plan, Round};
pub use setup::{Input, Setup, UNITS};

/// The script's name, as `--script` takes it.
pub const NAME: &str = "05_spec_decode_on_hardware";
/// The script's question, one line.
pub const TITLE: &str = "投机解码在硬件上：c、批大小、上下文与树形验证";
/// The demos the original script prints.
pub const DEFAULT_DEMOS: [u8; 3] = [1, 2, 3];

/// The demos, each with the inputs it reads.
pub const REGISTRY: &[Demo<Setup>] = &[
    Demo::new(1, demo1::READS, demo1::run),
    Demo::new(2, demo2::READS, demo2::run),
    Demo::new(3, demo3::READS, demo3::run),
    Demo::new(4, demo4::READS, demo4::run),
    Demo::new(5, demo5::READS, demo5::run),
    Demo::new(6, demo6::READS, demo6::run),
];

/// The script as lecture 6 lists it.
pub const SCRIPT: Script<Setup> = Script {
    name: NAME,
    title: TITLE,
    registry: REGISTRY,
    default_demos: &DEFAULT_DEMOS,
};

/// The report of `demos` (in lecture order) for `setup`.
pub fn report(setup: &Setup, demos: &[u8]) -> Result<Report, Error> {
    Ok(lecture_kit::demos(setup, REGISTRY, demos)?.named(6, NAME))
}

/// Prints the script for the default setup, demos 1–3, as text: what the original prints.
pub fn run(out: &mut dyn std::io::Write) -> Result<(), Error> {
    let report = report(&Setup::default(), &DEFAULT_DEMOS)?;
    lecture_kit::render::text(out, &report)?;
    Ok(())
}
