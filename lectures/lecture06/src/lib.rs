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
use decode_lab::Scenario;
use decode_lab::validation::{self, Calibration};
use decode_lab::{Draft, TreeRound};
use lecture_flags::ModelArgs;
use lecture_kit::{CommonArgs, Lecture, Script};
use llm_math::{KvDtype, WeightDtype};

use spec_decode_on_hardware::{self as s05, Setup};

/// CS349E 第 6 讲 · 05_spec_decode_on_hardware —— 投机解码在硬件上：c、批大小、上下文与树形验证。
///
/// With no flag, prints the lecture exactly as the original script does (one H100,
/// Llama-3.1-8B + Llama-3.2-1B, α = 0.8, the script's assumptions). Every assumption can
/// be replaced (what-if); demo 5 holds the model against published measurements.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "lecture06",
    version,
    after_help = "Demos: 1 c and the best γ at batch 1; 2 batch size × context; 3 draft trees on \
                  the toy model; 4 (opt-in; ~5 s with --release, ~6 s in the dev profile) \
                  speculative decoding for real on the toy model (实测); 5 (opt-in) the roofline \
                  against published measurements (模型 vs 实测). Figures: knee.svg (1), \
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
    #[arg(long, value_name = "A", default_value_t = Scenario::LECTURE.alpha,
          value_parser = parse_alpha, allow_negative_numbers = true)]
    pub alpha: f64,
    /// What-if: the model's assumptions.
    #[command(flatten)]
    pub what_if: WhatIf,
}

/// The what-if flags: every assumption of the script, replaceable.
#[derive(Debug, Clone, PartialEq, clap::Args)]
#[command(next_help_heading = "What if")]
pub struct WhatIf {
    /// Batch sizes of demo 2 (rows), e.g. 1,8,32; demo 1 runs at the first.
    #[arg(long = "batch", value_name = "LIST", value_delimiter = ',',
          value_parser = clap::value_parser!(u64).range(1..), allow_negative_numbers = true)]
    pub batches: Vec<u64>,
    /// Context lengths of demo 2 (columns), e.g. 8192,131072; demo 1 runs at the first.
    #[arg(long = "ctx", value_name = "LIST", value_delimiter = ',',
          value_parser = clap::value_parser!(u64).range(1..), allow_negative_numbers = true)]
    pub ctxs: Vec<u64>,
    /// A fixed draft length γ (as engines run) instead of the best one; speedups below
    /// 1.0× are printed as slow-downs. With --tau: the depth of the measured tree.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64),
          allow_negative_numbers = true)]
    pub gamma: Option<u32>,
    /// Fixed cost of one target pass, with a unit: 1ms, 300us, 0.5ms (default 1ms).
    #[arg(long, value_name = "TIME", value_parser = parse_duration, allow_negative_numbers = true)]
    pub overhead_target: Option<f64>,
    /// Fixed cost of one draft step, with a unit (default 300us).
    #[arg(long, value_name = "TIME", value_parser = parse_duration, allow_negative_numbers = true)]
    pub overhead_draft: Option<f64>,
    /// Fraction of the peak FLOP/s a kernel reaches, in (0, 1] (default 0.6).
    #[arg(long, value_name = "F", value_parser = parse_fraction, allow_negative_numbers = true)]
    pub eff_compute: Option<f64>,
    /// Fraction of the peak memory bandwidth a kernel reaches, in (0, 1] (default 0.8).
    #[arg(long, value_name = "F", value_parser = parse_fraction, allow_negative_numbers = true)]
    pub eff_bandwidth: Option<f64>,
    /// Tensor parallelism over N cards of --hw: weights and KV split N ways, two
    /// all-reduces per layer over the card's interconnect.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..=64), allow_negative_numbers = true)]
    pub tp: u64,
    /// Weight dtype: bf16, fp8 (at the card's FP8 peak where it has one) or int4 (W4A16).
    #[arg(long, value_name = "DTYPE", default_value_t = Scenario::LECTURE.deployment.weights)]
    pub weights: WeightDtype,
    /// KV-cache dtype: bf16 or fp8.
    #[arg(long, value_name = "DTYPE", default_value_t = Scenario::LECTURE.deployment.kv)]
    pub kv: KvDtype,
    /// Draft with a one-layer head of the target (EAGLE-like) instead of --draft.
    #[arg(long, conflicts_with_all = ["draft", "draft_cost", "draft_kv_window"])]
    pub draft_head: bool,
    /// Draft at a fixed cost coefficient c (n-gram ≈ 0, MTP heads, a measured c).
    #[arg(long, value_name = "C", conflicts_with_all = ["draft", "draft_kv_window"],
          value_parser = parse_cost, allow_negative_numbers = true)]
    pub draft_cost: Option<f64>,
    /// Self-speculation: the target drafts for itself reading only the last N tokens of KV
    /// (StreamingLLM window, as in MagicDec and TriForce).
    #[arg(long, value_name = "N", conflicts_with = "draft",
          value_parser = clap::value_parser!(u64).range(1..), allow_negative_numbers = true)]
    pub draft_kv_window: Option<u64>,
    /// A calibration profile (seed, fitted; see --demo 5): its efficiencies, overheads and
    /// verification cost replace the script's; flags given explicitly still win.
    #[arg(long, value_name = "NAME", value_parser = parse_calibration)]
    pub calibration: Option<&'static Calibration>,
    /// A measured acceptance length τ (tokens per round): demo 1 also prints the speedup
    /// of a tree of --tree-nodes nodes and --gamma levels.
    #[arg(long, value_name = "T", requires_all = ["tree_nodes", "gamma"],
          value_parser = parse_tau, allow_negative_numbers = true)]
    pub tau: Option<f64>,
    /// Draft tokens verified per round of the measured tree (with --tau).
    #[arg(long, value_name = "N", requires = "tau",
          value_parser = clap::value_parser!(u64).range(1..), allow_negative_numbers = true)]
    pub tree_nodes: Option<u64>,
}

impl Cli {
    /// The setup these flags ask for; a combination that cannot exist (a draft of another
    /// tokenizer family, a context longer than the model's maximum, a γ with --tau but …)
    /// is a usage error that says why. A draft that does not fit is not an error: the
    /// lecture prints it as it prints a target that does not fit.
    pub fn setup(&self) -> Result<Setup, lecture_kit::Error> {
        let w = &self.what_if;
        let mut s = Setup::default();
        let base = &mut s.base;
        base.hw = self.models.hw;
        base.target = self.models.target;
        base.draft = Draft::Model(self.models.draft);
        base.alpha = self.alpha;
        if w.draft_head {
            base.draft = Draft::Head;
        } else if let Some(c) = w.draft_cost {
            base.draft = Draft::FixedCost(c);
        } else if let Some(kv_window) = w.draft_kv_window {
            base.draft = Draft::SelfSpec { kv_window };
        }
        if let Some(profile) = w.calibration {
            *base = profile.apply(*base);
            s.calibration = Some(profile.name);
        }
        let dep = &mut base.deployment;
        dep.tp = w.tp;
        dep.weights = w.weights;
        dep.kv = w.kv;
        if let Some(e) = w.eff_compute {
            dep.compute_efficiency = e;
        }
        if let Some(e) = w.eff_bandwidth {
            dep.bandwidth_efficiency = e;
        }
        if let Some(o) = w.overhead_target {
            base.overhead_target = o;
        }
        if let Some(o) = w.overhead_draft {
            base.overhead_draft = o;
        }
        s.gamma = w.gamma;
        if let (Some(tau), Some(nodes), Some(depth)) = (w.tau, w.tree_nodes, w.gamma) {
            s.measured_tree = Some(TreeRound {
                tau,
                depth: depth.into(),
                nodes,
            });
            s.gamma = None; // --gamma is the tree's depth here
        }
        // Demo 1 runs at the first value of each list given.
        if let Some(&b) = w.batches.first() {
            s.batches = w.batches.clone();
            s.base.batch = b;
        }
        if let Some(&c) = w.ctxs.first() {
            s.ctxs = w.ctxs.clone();
            s.base.ctx = c;
        }
        // What cannot exist is a usage error; a draft that does not fit is printed.
        for &ctx in &s.ctxs {
            match s.scenario(s.batches[0], ctx, s.base.alpha).validate() {
                Ok(()) | Err(decode_lab::Error::DraftDoesNotFit(_)) => {}
                Err(e) => return Err(lecture_kit::Error::Usage(e.to_string())),
            }
        }
        Ok(s)
    }
}

impl Lecture for Cli {
    const NUMBER: u32 = 6;
    const SCRIPTS: &'static [Script<Self>] = &[s05::SCRIPT];

    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn catalog() -> Vec<lecture_kit::Block> {
        lecture_flags::catalog()
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

/// `--eff-compute F`, `--eff-bandwidth F`: a fraction in (0, 1].
fn parse_fraction(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(f) if f > 0.0 && f <= 1.0 => Ok(f),
        _ => Err(format!(
            "an efficiency is a fraction in (0, 1], got {text:?}"
        )),
    }
}

/// `--draft-cost C`: a finite c ≥ 0.
fn parse_cost(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(c) if c.is_finite() && c >= 0.0 => Ok(c),
        _ => Err(format!(
            "the draft cost c is a fraction ≥ 0 of a target step, got {text:?}"
        )),
    }
}

/// `--tau T`: at least 1 token per round.
fn parse_tau(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(t) if t.is_finite() && t >= 1.0 => Ok(t),
        _ => Err(format!(
            "τ counts tokens per round, at least 1 (the target's own), got {text:?}"
        )),
    }
}

/// `--calibration NAME`.
fn parse_calibration(name: &str) -> Result<&'static Calibration, String> {
    validation::calibration(name).map_err(|e| e.to_string())
}

/// `--overhead-target TIME`: a duration with its unit — `1ms`, `300us` (or `300µs`),
/// `0.5ms`, `2s`, `800ns` — in seconds. A bare number is refused: the unit is the point.
pub fn parse_duration(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "s" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "ns" => 1e-9,
        _ => {
            return Err(format!(
                "a time needs a unit: s, ms, us or ns (e.g. 1ms, 300us), got {text:?}"
            ));
        }
    };
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v * scale),
        _ => Err(format!(
            "a time is a number ≥ 0 with a unit (e.g. 1ms), got {text:?}"
        )),
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
        assert_eq!(cli.setup().unwrap(), Setup::default());
    }

    #[test]
    fn durations_need_a_unit() {
        assert_eq!(parse_duration("1ms"), Ok(1e-3));
        assert_eq!(parse_duration("300us"), Ok(300.0 * 1e-6));
        assert_eq!(parse_duration("300µs"), Ok(300.0 * 1e-6));
        assert_eq!(parse_duration("0.5 ms"), Ok(0.5e-3));
        assert_eq!(parse_duration("2s"), Ok(2.0));
        assert!(parse_duration("1").unwrap_err().contains("needs a unit"));
        assert!(parse_duration("-1ms").unwrap_err().contains("≥ 0"));
        assert!(parse_duration("ms").is_err() && parse_duration("1h").is_err());
    }
}
