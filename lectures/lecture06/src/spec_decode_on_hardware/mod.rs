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
//!   3's toy model ([`demo3::toy_model`], greedy decoding), then turned into H100 speedups:
//!   trees pay at small batch and do not at large batch;
//! - [`demo4`] (opt-in, not in the original script): speculative decoding for real on
//!   the toy model;
//! - [`demo5`] (opt-in, not in the original script): the roofline against published
//!   measurements, under the script's assumptions and two calibration profiles;
//! - [`demo6`] (opt-in, not in the original script; `--release` recommended): the roofline
//!   of the machine in front of you — its peak and bandwidth measured, forward time against
//!   tokens fed predicted then timed, c per draft, speculative decoding timed for real;
//! - [`demo7`] (opt-in, not in the original script): the drafters the lecture names, run
//!   for real on the toy model — dynamic trees, sampled trees, prompt lookup, layer skip.
//!
//! With `--model trained`, demos 3, 4 and 7 run on the toy model trained on code and on
//! drafts trained for real (`train_lab::shipped`): α measured per position, τ, losslessness.
//!
//! Model assumptions (as the original script states them): one forward pass takes
//! `max(FLOPs / (peak × 0.6), bytes / (bandwidth × 0.8))` plus a fixed overhead (1 ms for
//! the target, 0.3 ms for the draft, assumed); a sequence's γ + 1 queries read its KV
//! cache once (fused attention); the draft's own KV cache is not counted against memory;
//! the acceptance rate α is a *given* parameter (EAGLE, table 2: about 0.65–0.8 per
//! position), not a measurement. Demo 3's acceptance lengths come from a
//! random-initialised small model: they show the mechanism ("how much more does a tree
//! accept than a chain"), not the figures of a trained model (`--model trained` measures
//! those).
//!
//! Every demo is a function of its inputs (the flags it reads, `demoN::Inputs`) that prints
//! to the kit's `Out`, once. With no flag it prints exactly the original script's text; for
//! any other setup, headers and figures follow the setup, the script's sentences are
//! marked as holding for the default setup, and a sentence computed for the setup comes
//! first.

pub mod demo1;
pub mod demo2;
pub mod demo3;
pub mod demo4;
pub mod demo5;
pub mod demo6;
pub mod demo7;
pub mod how_sure;
pub mod words;

use lecture_kit::{Demo, Script};

/// The script's name, as `--script` takes it.
pub const NAME: &str = "05_spec_decode_on_hardware";

/// The script as lecture 6 lists it: demos 1–3 are the original's.
pub fn script() -> Script {
    let demos = vec![
        Demo::new(1, demo1::run),
        Demo::new(2, demo2::run),
        Demo::new(3, demo3::run),
        Demo::new(4, demo4::run),
        Demo::new(5, demo5::run),
        Demo::new(6, demo6::run),
        Demo::new(7, demo7::run),
    ];
    Script::new(NAME, "投机解码在硬件上：c、批大小、上下文与树形验证", demos).printing(&[1, 2, 3])
}
