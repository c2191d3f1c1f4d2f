//! CS349E lecture 6 — speculative decoding — as executable Rust.
//!
//! One folder per script of the lecture, one module per demo. A demo module computes its
//! typed figures with the workspace's libraries (`hw_specs`, `llm_math`, `decode_lab`, …)
//! and turns them into `lecture_kit` blocks in the original script's words; the kit prints
//! them as text, Markdown, CSV or JSON and draws their figures. [`Cli`] is the `lecture06`
//! command line.
//!
//! | module | script | question |
//! |---|---|---|
//! | [`spec_decode_on_hardware`] | `05_spec_decode_on_hardware.py` | when does speculative decoding pay on real hardware? |

pub mod spec_decode_on_hardware;

use clap::Parser;
use lecture_kit::{CommonArgs, Lecture, ModelArgs, Script};

use spec_decode_on_hardware::{self as s05, Setup};

/// CS349E 第 6 讲 · 05_spec_decode_on_hardware —— 投机解码在硬件上：c、批大小、上下文与树形验证。
///
/// With no flag, prints the lecture exactly as the original script does (one H100,
/// Llama-3.1-8B + Llama-3.2-1B, α = 0.8).
#[derive(Debug, Clone, Parser)]
#[command(
    name = "lecture06",
    version,
    after_help = "Demos: 1 c and the best γ at batch 1; 2 batch size × context; 3 draft trees on \
                  the toy model; 4 (opt-in; ~5 s with --release, ~10 s in the dev profile) \
                  speculative decoding for real on the toy model (实测). Figures: knee.svg (1), \
                  batch.svg (2), trees.svg (3), measured.svg (4)."
)]
pub struct Cli {
    /// Flags every lecture has.
    #[command(flatten)]
    pub common: CommonArgs,
    /// Accelerator and models.
    #[command(flatten)]
    pub models: ModelArgs,
    /// Acceptance rate α for demo 2, in (0, 1].
    #[arg(long, value_name = "A", default_value = "0.8", value_parser = parse_alpha,
          allow_negative_numbers = true)]
    pub alpha: f64,
}

impl Cli {
    /// The setup these flags ask for.
    pub fn setup(&self) -> Setup {
        Setup {
            hw: self.models.hw,
            target: self.models.target,
            draft: self.models.draft,
            alpha: self.alpha,
        }
    }
}

impl Lecture for Cli {
    const NUMBER: u32 = 6;
    const SCRIPTS: &'static [Script<Self>] = &[s05::SCRIPT];

    fn common(&self) -> &CommonArgs {
        &self.common
    }
}

/// `--alpha A`: a number in (0, 1].
fn parse_alpha(text: &str) -> Result<f64, String> {
    let a: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("α must be a number in (0, 1], got {text:?}"))?;
    if a > 0.0 && a <= 1.0 {
        Ok(a)
    } else {
        Err(format!("α must be in (0, 1], got {a:?}"))
    }
}

/// Prints the whole lecture, as the original script does.
pub fn run(out: &mut dyn std::io::Write) -> Result<(), lecture_kit::Error> {
    s05::run(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_must_be_in_the_half_open_unit_interval() {
        assert_eq!(parse_alpha("0.7"), Ok(0.7));
        assert_eq!(parse_alpha("1"), Ok(1.0));
        assert!(parse_alpha("0").unwrap_err().contains("(0, 1]"));
        assert!(parse_alpha("-0.3").unwrap_err().contains("got -0.3"));
        assert!(
            parse_alpha("1.5").is_err() && parse_alpha("NaN").is_err() && parse_alpha("x").is_err()
        );
    }

    #[test]
    fn no_flags_mean_the_default_setup() {
        let cli = Cli::try_parse_from(["lecture06"]).unwrap();
        assert_eq!(cli.setup(), Setup::default());
    }
}
