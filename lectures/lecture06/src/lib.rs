//! CS349E lecture 6 — speculative decoding — as executable Rust.
//!
//! One folder per script of the lecture, one module per demo. A demo is a function of its
//! inputs (the flags it reads) that computes its figures with the workspace's libraries
//! (`hw_specs`, `llm_math`, `decode_lab`, …) and prints them in the original script's
//! words to a `lecture_kit::Out`; the kit prints them as text, Markdown, CSV, JSON or HTML
//! and draws their figures. [`Cli`] is the `lecture06` command line.
//!
//! | module | script | question |
//! |---|---|---|
//! | [`spec_decode_on_hardware`] | `05_spec_decode_on_hardware.py` | when does speculation pay? |

pub mod spec_decode_on_hardware;

use lecture_kit::{Block, Lecture, Script};

/// CS349E 第 6 讲 · 05_spec_decode_on_hardware —— 投机解码在硬件上：c、批大小、上下文与树形验证。
///
/// With no flag, prints the lecture exactly as the original script does (one H100,
/// Llama-3.1-8B + Llama-3.2-1B, α = 0.8, the script's assumptions). Every assumption can
/// be replaced (what-if). Opt-in demos run speculative decoding for real (4), hold the
/// model against published measurements (5), measure this machine (6) and run every
/// drafter the lecture names (7); --model trained runs demos 3, 4 and 7 on a toy model
/// trained on code.
#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "lecture06",
    version,
    after_help = "Demos: 1 c and the best γ at batch 1; 2 batch size × context; 3 draft trees on \
                  the toy model; 4 (opt-in) speculative decoding for real on the toy model \
                  (实测); 5 (opt-in) the roofline against published measurements (模型 vs \
                  实测); 6 (opt-in; --release recommended, a quick plan in the dev profile) this \
                  machine's roofline measured and speculative decoding timed on it; 7 (opt-in) \
                  every drafter the lecture names run for real on the toy model (dynamic \
                  trees, sampled trees, prompt lookup, layer skip). Figures: knee.svg (1), \
                  batch.svg (2), trees.svg (3), measured.svg (4), validation.svg (5), host.svg \
                  (6), drafters.svg (7). A demo says which flags given it ignores; a flag no \
                  chosen demo reads is refused."
)]
pub struct Cli {}

/// The marker before a sentence of the original script that holds for its setup only.
pub const DEFAULT_ONLY: &str = "【此条针对默认配置：一块 H100、Llama-3.1-8B + Llama-3.2-1B】";

impl Lecture for Cli {
    const NUMBER: u32 = 6;
    const DEFAULT_ONLY: &'static str = DEFAULT_ONLY;
    const UNITS: &'static [(&'static str, &'static str)] = &[
        ("*_s", "seconds"),
        ("*_tokens, n, gamma, nodes", "tokens"),
        ("*_bytes, *_bytes_per_token", "bytes"),
        (
            "speedup, c, *_ratio, expected_tokens, tau*, *_fraction, alpha",
            "dimensionless",
        ),
    ];

    fn scripts() -> Vec<Script> {
        vec![spec_decode_on_hardware::script()]
    }

    fn catalog() -> Vec<Block> {
        lecture_flags::catalog()
    }
}
