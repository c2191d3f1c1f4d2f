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

pub mod flags;
pub mod spec_decode_on_hardware;

use clap::Parser;
use decode_lab::Scenario;
use decode_lab::validation::{self, Calibration};
use decode_lab::{Draft, TreeShape};
use flags::{
    parse_all_reduce_us, parse_draft_layer_ms, parse_fp8_factor, parse_overlap, parse_round_ms,
    parse_round_seq_ms, parse_verify_us,
};
use flags::{
    parse_alpha, parse_batch, parse_cost, parse_ctx, parse_duration, parse_eff_bandwidth,
    parse_eff_compute, parse_gamma, parse_nodes, parse_tau, parse_tp, parse_window,
};
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
                  against published measurements (模型 vs 实测); 6 (opt-in; ~40–90 s with --release \
                  on 2 cores, a quick plan in the dev profile) this machine's roofline measured \
                  and speculative decoding timed on it. Figures: knee.svg (1), batch.svg (2), \
                  trees.svg (3), measured.svg (4), host.svg (6). Which demo reads which \
                  flag: 1 the card, models, assumptions (--tp … --all-reduce-us), --gamma, \
                  --tau/--tree-nodes, and the first --batch and --ctx; 2 the same but --tau, \
                  and --alpha; 3 the card, target and assumptions but the draft's costs \
                  (--overhead-draft, --draft-layer-ms); 4, 5 and 6 none. A demo says which \
                  flags given it ignores; a flag no chosen demo reads is refused."
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
          value_parser = parse_alpha, allow_hyphen_values = true)]
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
          value_parser = parse_batch, allow_negative_numbers = true)]
    pub batches: Vec<u64>,
    /// Context lengths of demo 2 (columns), e.g. 8192,131072; demo 1 runs at the first.
    #[arg(long = "ctx", value_name = "LIST", value_delimiter = ',',
          value_parser = parse_ctx, allow_negative_numbers = true)]
    pub ctxs: Vec<u64>,
    /// A fixed draft length γ (as engines run) instead of the best one; speedups below
    /// 1.0× are printed as slow-downs. With --tau: the depth of the measured tree.
    #[arg(long, value_name = "N", value_parser = parse_gamma, allow_negative_numbers = true)]
    pub gamma: Option<u32>,
    /// Fixed cost of one target pass, with a unit: 1ms, 300us, 0.5ms (default 1ms).
    #[arg(long, value_name = "TIME", value_parser = parse_duration, allow_hyphen_values = true)]
    pub overhead_target: Option<f64>,
    /// Fixed cost of one draft step, with a unit (default 300us).
    #[arg(long, value_name = "TIME", value_parser = parse_duration, allow_hyphen_values = true)]
    pub overhead_draft: Option<f64>,
    /// Fraction of the peak FLOP/s a kernel reaches, in (0, 1] (default 0.6).
    #[arg(long, value_name = "F", value_parser = parse_eff_compute, allow_hyphen_values = true)]
    pub eff_compute: Option<f64>,
    /// Fraction of the peak memory bandwidth a kernel reaches, in (0, 1] (default 0.8).
    #[arg(long, value_name = "F", value_parser = parse_eff_bandwidth, allow_hyphen_values = true)]
    pub eff_bandwidth: Option<f64>,
    /// Tensor parallelism over N cards of --hw: weights and KV split N ways, two
    /// all-reduces per layer over the card's interconnect.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = parse_tp, allow_negative_numbers = true)]
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
          value_parser = parse_cost, allow_hyphen_values = true)]
    pub draft_cost: Option<f64>,
    /// Self-speculation: the target drafts for itself reading only the last N tokens of KV
    /// (StreamingLLM window, as in MagicDec and TriForce).
    #[arg(long, value_name = "N", conflicts_with = "draft",
          value_parser = parse_window, allow_negative_numbers = true)]
    pub draft_kv_window: Option<u64>,
    /// A calibration profile (seed, fitted; see --demo 5): its efficiencies, overheads and
    /// verification cost replace the script's; flags given explicitly still win.
    #[arg(long, value_name = "NAME", value_parser = parse_calibration)]
    pub calibration: Option<&'static Calibration>,
    /// A measured acceptance length τ (tokens per round): demo 1 also prints the speedup
    /// of a tree of --tree-nodes nodes and --gamma levels.
    #[arg(long, value_name = "T", requires_all = ["tree_nodes", "gamma"],
          value_parser = parse_tau, allow_hyphen_values = true)]
    pub tau: Option<f64>,
    /// Overlap of compute and memory in a pass, from 0 (they add, as engines measure for
    /// decode-shaped products) to 1 (the seed's max; default).
    #[arg(long, value_name = "F", value_parser = parse_overlap, allow_hyphen_values = true)]
    pub overlap: Option<f64>,
    /// Cost of each verified token of the whole batch beyond one per sequence, µs.
    #[arg(long, value_name = "US", value_parser = parse_verify_us, allow_hyphen_values = true)]
    pub verify_us_per_token: Option<f64>,
    /// Fixed cost of a speculative round beyond its passes, ms.
    #[arg(long, value_name = "MS", value_parser = parse_round_ms, allow_hyphen_values = true)]
    pub round_overhead_ms: Option<f64>,
    /// Cost of a speculative round per sequence of the batch, ms.
    #[arg(long, value_name = "MS", value_parser = parse_round_seq_ms, allow_hyphen_values = true)]
    pub round_overhead_per_seq_ms: Option<f64>,
    /// Cost per draft layer per draft step, ms.
    #[arg(long, value_name = "MS", value_parser = parse_draft_layer_ms, allow_hyphen_values = true)]
    pub draft_layer_ms: Option<f64>,
    /// Factor on the bandwidth efficiency of FP8 weights, in (0, 1].
    #[arg(long, value_name = "F", value_parser = parse_fp8_factor, allow_hyphen_values = true)]
    pub fp8_bandwidth_factor: Option<f64>,
    /// Factor on the compute efficiency of FP8 weights, in (0, 1].
    #[arg(long, value_name = "F", value_parser = parse_fp8_factor, allow_hyphen_values = true)]
    pub fp8_compute_factor: Option<f64>,
    /// Latency of one tensor-parallel all-reduce, µs (whatever the card's interconnect).
    #[arg(long, value_name = "US", value_parser = parse_all_reduce_us, allow_hyphen_values = true)]
    pub all_reduce_us: Option<f64>,
    /// Draft tokens verified per round of the measured tree (with --tau).
    #[arg(long, value_name = "N", requires = "tau",
          value_parser = parse_nodes, allow_negative_numbers = true)]
    pub tree_nodes: Option<u64>,
}

impl Lecture for Cli {
    const NUMBER: u32 = 6;
    type Setup = Setup;
    const SCRIPTS: &'static [Script<Setup>] = &[s05::SCRIPT];

    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn catalog() -> Vec<lecture_kit::Block> {
        lecture_flags::catalog()
    }

    /// The setup these flags ask for; a flag whose value would change nothing in it
    /// (`refuse_inert`), a list with a value twice, or a tree that cannot exist is a usage
    /// error that says why. Combinations that only some demos use (a draft of another
    /// tokenizer family, a context longer than the model's maximum) are checked for the
    /// demos that read them (`Setup::check`). A draft that does not fit is not an error:
    /// the lecture prints it as it prints a target that does not fit.
    fn setup(&self) -> Result<Setup, lecture_kit::Error> {
        let w = &self.what_if;
        for (flag, list) in [("--batch", &w.batches), ("--ctx", &w.ctxs)] {
            if let Some(v) = list
                .iter()
                .enumerate()
                .find_map(|(i, v)| list[..i].contains(v).then_some(v))
            {
                return Err(lecture_kit::Error::Usage(format!(
                    "{flag} lists {v} twice; give each value once"
                )));
            }
        }
        refuse_inert(w)?;
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
        base.deployment.tp = w.tp;
        base.deployment.weights = w.weights;
        base.deployment.kv = w.kv;
        // After the cards and dtypes: a profile's verification cost per token is computed
        // for them (`Calibration::apply`).
        if let Some(profile) = w.calibration {
            *base = profile.apply(*base);
            s.calibration = Some(profile.name);
        }
        let dep = &mut base.deployment;
        if let Some(e) = w.eff_compute {
            dep.compute_efficiency = e;
        }
        if let Some(e) = w.eff_bandwidth {
            dep.bandwidth_efficiency = e;
        }
        let terms = &mut base.cost_terms;
        let set = |slot: &mut f64, v: Option<f64>| {
            if let Some(v) = v {
                *slot = v;
            }
        };
        set(&mut terms.overlap, w.overlap);
        set(&mut terms.round_fixed, w.round_overhead_ms);
        set(&mut terms.round_per_sequence, w.round_overhead_per_seq_ms);
        set(&mut terms.draft_per_layer, w.draft_layer_ms);
        set(&mut terms.fp8.bandwidth, w.fp8_bandwidth_factor);
        set(&mut terms.fp8.compute, w.fp8_compute_factor);
        // A profile's verification cost follows an explicit FP8 compute factor; an explicit
        // cost wins over both.
        if let (Some(profile), Some(_)) = (w.calibration, w.fp8_compute_factor) {
            if let Some(v) = profile.verify_per_batch_token(base) {
                base.cost_terms.verify_per_batch_token = v;
            }
        }
        let terms = &mut base.cost_terms;
        set(&mut terms.verify_per_batch_token, w.verify_us_per_token);
        if let Some(l) = w.all_reduce_us {
            terms.all_reduce = llm_math::AllReduceLatencies::NEUTRAL;
            base.deployment.all_reduce_latency = l;
        }
        if let Some(o) = w.overhead_target {
            base.overhead_target = o;
        }
        if let Some(o) = w.overhead_draft {
            base.overhead_draft = o;
        }
        s.gamma = w.gamma;
        if let (Some(tau), Some(nodes), Some(depth)) = (w.tau, w.tree_nodes, w.gamma) {
            s.gamma = None; // --gamma is the tree's depth here
            if depth as u64 > nodes || tau > f64::from(depth) + 1.0 {
                return Err(lecture_kit::Error::Usage(format!(
                    "a tree of --gamma {depth} levels has at least {depth} nodes (--tree-nodes {nodes}) \
                     and yields at most depth + 1 = {} tokens a round (--tau {tau})",
                    depth + 1
                )));
            }
            let tree = TreeShape::sized(depth.into(), nodes);
            s.measured_tree = Some((
                tree.map_err(|e| lecture_kit::Error::Usage(e.to_string()))?,
                tau,
            ));
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
        // What cannot exist is a usage error, for the demos that read it (`Setup::check`).
        Ok(s)
    }
}

/// Refuses a flag whose value would change nothing in the setup the other flags describe
/// (as the kit refuses a flag no chosen demo reads): an all-reduce latency on one card,
/// FP8 factors for weights that are not FP8, a draft step's own costs for a draft that has
/// no pass of its own (a fixed cost) or runs the target's (self-speculation).
fn refuse_inert(w: &WhatIf) -> Result<(), lecture_kit::Error> {
    let fixed_cost = w.draft_cost.is_some();
    let fp8_factor = match (w.fp8_bandwidth_factor, w.fp8_compute_factor) {
        (Some(_), _) => "--fp8-bandwidth-factor",
        (None, Some(_)) => "--fp8-compute-factor",
        (None, None) => "",
    };
    let fp8 = format!("{fp8_factor} applies to FP8 weights only: add --weights fp8 or drop it");
    let inert = [
        (
            w.all_reduce_us.is_some() && w.tp == 1,
            "--all-reduce-us prices tensor parallelism's all-reduces, and one card has none: \
             add --tp N or drop it",
        ),
        (
            !fp8_factor.is_empty() && w.weights != WeightDtype::Fp8,
            fp8.as_str(),
        ),
        (
            w.overhead_draft.is_some() && fixed_cost,
            "--overhead-draft changes nothing with --draft-cost (a draft step costs c · t_base, \
             nothing else): drop one of them",
        ),
        (
            w.overhead_draft.is_some() && w.draft_kv_window.is_some(),
            "--overhead-draft changes nothing with --draft-kv-window (self-speculation runs \
             the target's kernels, at --overhead-target): drop one of them",
        ),
        (
            w.draft_layer_ms.is_some() && fixed_cost,
            "--draft-layer-ms changes nothing with --draft-cost (a fixed-cost draft has no \
             layers): drop one of them",
        ),
    ];
    match inert.into_iter().find(|&(inert, _)| inert) {
        Some((_, why)) => Err(lecture_kit::Error::Usage(why.into())),
        None => Ok(()),
    }
}

/// `--calibration NAME`.
fn parse_calibration(name: &str) -> Result<&'static Calibration, String> {
    validation::calibration(name).map_err(|e| e.to_string())
}

/// Prints the whole lecture, as the original script does.
pub fn run(out: &mut dyn std::io::Write) -> Result<(), lecture_kit::Error> {
    s05::run(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_flags_mean_the_default_setup() {
        let cli = Cli::try_parse_from(["lecture06"]).unwrap();
        assert_eq!(cli.setup().unwrap(), Setup::default());
    }
}
