//! The what-ifs of speculative decoding on the roofline, as flag groups: the card, target
//! and assumptions ([`Roofline`], with [`Assumptions`]) and what drafts ([`Drafter`]),
//! which turn into the library's [`decode_lab::Scenario`] ([`Roofline::scenario`]); the
//! round's own questions (α, γ, a measured tree, the grid) are [`crate::round`]'s. Every
//! default is [`Scenario::LECTURE`]'s, so no flag means the original script.
//!
//! ```
//! use lecture_flags::roofline::{Drafter, Roofline};
//!
//! #[derive(Debug, Clone, PartialEq, clap::Args, serde::Serialize)]
//! struct Inputs {
//!     #[command(flatten)]
//!     #[serde(flatten)]
//!     roofline: Roofline,
//!     #[command(flatten)]
//!     #[serde(flatten)]
//!     drafter: Drafter,
//! }
//! impl lecture_kit::Inputs for Inputs {}
//!
//! let none: Inputs = lecture_kit::inputs::parse(&[])?;
//! assert_eq!(none.roofline.scenario(Some(&none.drafter)), decode_lab::Scenario::LECTURE);
//! let i: Inputs = lecture_kit::inputs::parse(&["--tp", "2", "--draft-head"])?;
//! let s = i.roofline.scenario(Some(&i.drafter));
//! assert_eq!((s.deployment.tp, s.draft), (2, decode_lab::Draft::Head));
//! # Ok::<(), lecture_kit::Error>(())
//! ```

use decode_lab::validation::{self, Calibration, EngineProfile};
use decode_lab::{Draft, Scenario};
use lecture_kit::parse::{cost, count, duration, real};
use llm_math::{KvDtype, ModelConfig, WeightDtype};
use serde::Serialize;

use crate::{Card, DEFAULT_DRAFT, Target, parse_model};

/// The largest batch a flag takes: far beyond what any card holds, small enough that a
/// count prints as itself.
pub const MAX_BATCH: u64 = 1_000_000;
/// The longest context a flag takes, tokens (every model's maximum is below it).
pub const MAX_CTX: u64 = 10_000_000;
/// The most draft tokens a tree may verify in one round (`decode_lab::TreeShape`'s cap).
pub const MAX_TREE_NODES: u64 = 4096;
/// The longest fixed draft and the deepest tree: the longest draft `best_round` tries.
pub const MAX_GAMMA: u64 = decode_lab::MAX_GAMMA as u64;
/// The most cards of tensor parallelism.
pub const MAX_TP: u64 = 64;
/// The longest fixed per-pass overhead, and the largest cost term, seconds.
pub const MAX_OVERHEAD: f64 = 10.0;
/// The smallest efficiency (a fraction of peak), the library's own floor: below it a pass
/// takes longer than any figure is meant to show.
pub const MIN_EFFICIENCY: f64 = llm_math::MIN_EFFICIENCY;
/// The largest fixed draft cost c (a draft step 10× a target step never pays).
pub const MAX_DRAFT_COST: f64 = decode_lab::MAX_DRAFT_COST;

/// A fraction of peak, from [`MIN_EFFICIENCY`] to 1.
fn is_fraction(f: f64) -> bool {
    (MIN_EFFICIENCY..=1.0).contains(&f)
}

/// Operations per weight from 0 to [`llm_math::MAX_DEQUANT_OPS`].
fn is_dequant_ops(f: f64) -> bool {
    (0.0..=llm_math::MAX_DEQUANT_OPS).contains(&f)
}

/// The model's assumptions, every one replaceable: cards, dtypes, efficiencies, the
/// target's overhead, a calibration profile and the cost terms engines show.
#[derive(Debug, Clone, Copy, PartialEq, clap::Args, Serialize)]
#[command(next_help_heading = "What if")]
pub struct Assumptions {
    /// Tensor parallelism over N cards of --hw: weights and KV split N ways, two
    /// all-reduces per layer over the card's interconnect.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = count("numbers of cards", 1, MAX_TP), allow_negative_numbers = true)]
    pub tp: u64,
    /// Weight format: bf16 (or fp16), fp8 (at the card's FP8 peak; refused on a card
    /// without FP8), w8a16 (or int8: 1-byte weights, 16-bit math), w8a8 (at the card's INT8
    /// peak) or int4 (W4A16, group-quantized).
    #[arg(long, value_name = "DTYPE", default_value_t = Scenario::LECTURE.deployment.weights)]
    #[serde(serialize_with = "display")]
    pub weights: WeightDtype,
    /// KV-cache dtype: bf16 or fp8.
    #[arg(long, value_name = "DTYPE", default_value_t = Scenario::LECTURE.deployment.kv)]
    #[serde(serialize_with = "display")]
    pub kv: KvDtype,
    /// Fraction of the peak FLOP/s a kernel reaches, in (0, 1] (default 0.6).
    #[arg(long, value_name = "F", allow_hyphen_values = true,
          value_parser = real("a fraction of peak from 0.001 to 1", is_fraction))]
    pub eff_compute: Option<f64>,
    /// Fraction of the peak memory bandwidth a kernel reaches, in (0, 1] (default 0.8).
    #[arg(long, value_name = "F", allow_hyphen_values = true,
          value_parser = real("a fraction of peak from 0.001 to 1", is_fraction))]
    pub eff_bandwidth: Option<f64>,
    /// Fixed cost of one target pass, with a unit: 1ms, 300us, 0.5ms (default 1ms).
    #[arg(long, value_name = "TIME", value_parser = duration(MAX_OVERHEAD),
          allow_hyphen_values = true)]
    pub overhead_target: Option<f64>,
    /// A calibration profile (seed, fitted, measured; see --demo 5): its efficiencies,
    /// overheads and verification cost replace the script's; flags given explicitly still
    /// win.
    #[arg(long, value_name = "NAME", value_parser = parse_calibration)]
    #[serde(serialize_with = "calibration_name")]
    pub calibration: Option<&'static Calibration>,
    /// A serving engine (vllm, sglang, tensorrt-llm, lmdeploy, …; see --demo 5): the
    /// measured profile with its fixed cost, bandwidth efficiency, all-reduce latencies
    /// and cost per sequence per layer refitted on that engine's
    /// published rows (an engine too few publishers measured keeps the pooled profile).
    #[arg(long, value_name = "NAME", value_parser = parse_engine)]
    #[serde(serialize_with = "engine_name")]
    pub engine: Option<&'static EngineProfile>,
    /// Prompt tokens each target step also carries (chunked prefill, or new requests'
    /// prompts between running ones' steps).
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = count("prompt tokens a step carries", 1, MAX_PREFILL_TOKENS))]
    pub prefill_tokens: Option<u64>,
    /// Cached prompt tokens each of --prefill-tokens attends to on average (default: half
    /// of --prefill-tokens, a prompt prefilled whole).
    #[arg(long, value_name = "N", allow_negative_numbers = true, requires = "prefill_tokens",
          value_parser = count("context lengths", 1, MAX_CTX))]
    pub prefill_ctx: Option<u64>,
    /// Cost of each sequence of the batch per layer, in every pass, µs.
    #[arg(long, value_name = "US", value_parser = cost("µs", 1e-6, MAX_OVERHEAD),
          allow_hyphen_values = true)]
    pub per_seq_layer_us: Option<f64>,
    /// Overlap of compute and memory in a pass, from 0 (they add, as engines measure for
    /// decode-shaped products) to 1 (the seed's max; default).
    #[arg(long, value_name = "F", allow_hyphen_values = true,
          value_parser = real("a fraction from 0 (compute + memory) to 1 (max)", |f| (0.0..=1.0).contains(&f)))]
    pub overlap: Option<f64>,
    /// Cost of each verified token of the whole batch beyond one per sequence, µs.
    #[arg(long, value_name = "US", value_parser = cost("µs", 1e-6, MAX_OVERHEAD),
          allow_hyphen_values = true)]
    pub verify_us_per_token: Option<f64>,
    /// Fixed cost of a speculative round beyond its passes, ms.
    #[arg(long, value_name = "MS", value_parser = cost("ms", 1e-3, MAX_OVERHEAD),
          allow_hyphen_values = true)]
    pub round_overhead_ms: Option<f64>,
    /// Cost of a speculative round per sequence of the batch, ms.
    #[arg(long, value_name = "MS", value_parser = cost("ms", 1e-3, MAX_OVERHEAD),
          allow_hyphen_values = true)]
    pub round_overhead_per_seq_ms: Option<f64>,
    /// Factor on the bandwidth efficiency of FP8 weights, in (0, 1].
    #[arg(long, value_name = "F", allow_hyphen_values = true,
          value_parser = real("a factor on FP8's efficiency from 0.001 to 1", is_fraction))]
    pub fp8_bandwidth_factor: Option<f64>,
    /// Factor on the compute efficiency of FP8 weights, in (0, 1].
    #[arg(long, value_name = "F", allow_hyphen_values = true,
          value_parser = real("a factor on FP8's efficiency from 0.001 to 1", is_fraction))]
    pub fp8_compute_factor: Option<f64>,
    /// Factor on the bandwidth efficiency of int8 weight-only (W8A16) weights, in (0, 1].
    #[arg(long, value_name = "F", allow_hyphen_values = true,
          value_parser = real("a factor on W8A16's efficiency from 0.001 to 1", is_fraction))]
    pub w8a16_bandwidth_factor: Option<f64>,
    /// Vector-unit operations per INT4 weight a pass dequantizes, at the card's FP32 rate.
    #[arg(long, value_name = "N", allow_hyphen_values = true,
          value_parser = real("a number of operations per weight from 0 to 1000", is_dequant_ops))]
    pub int4_dequant_ops: Option<f64>,
    /// Latency of one tensor-parallel all-reduce, µs (whatever the card's interconnect).
    #[arg(long, value_name = "US", value_parser = cost("µs", 1e-6, MAX_OVERHEAD),
          allow_hyphen_values = true)]
    pub all_reduce_us: Option<f64>,
}

/// The card, the target and the model's assumptions: what every roofline demo reads.
#[derive(Debug, Clone, Copy, PartialEq, clap::Args, Serialize)]
pub struct Roofline {
    /// `--hw`.
    #[command(flatten)]
    #[serde(flatten)]
    pub card: Card,
    /// `--target`.
    #[command(flatten)]
    #[serde(flatten)]
    pub target: Target,
    /// `--tp`, `--weights`, … `--all-reduce-us`.
    #[command(flatten)]
    #[serde(flatten)]
    pub assumptions: Assumptions,
}

/// What drafts, and what a draft step costs beyond its roofline pass.
#[derive(Debug, Clone, Copy, PartialEq, clap::Args, Serialize)]
#[command(next_help_heading = "What if")]
pub struct Drafter {
    /// Draft model (see --list), e.g. Llama-3.2-3B.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_DRAFT.name, value_parser = parse_model)]
    #[serde(serialize_with = "crate::model_name")]
    pub draft: ModelConfig,
    /// Draft with a one-layer head of the target (EAGLE-like) instead of --draft.
    #[arg(long, conflicts_with_all = ["draft", "draft_cost", "draft_kv_window"])]
    pub draft_head: bool,
    /// Draft at a fixed cost coefficient c (n-gram ≈ 0, MTP heads, a measured c).
    #[arg(long, value_name = "C", conflicts_with_all = ["draft", "draft_kv_window"],
          allow_hyphen_values = true,
          value_parser = real("a cost coefficient c from 0 to 10 (a fraction of a target step)",
                              |c| (0.0..=MAX_DRAFT_COST).contains(&c)))]
    pub draft_cost: Option<f64>,
    /// Self-speculation: the target drafts for itself reading only the last N tokens of KV
    /// (StreamingLLM window, as in MagicDec and TriForce).
    #[arg(long, value_name = "N", conflicts_with = "draft", allow_negative_numbers = true,
          value_parser = count("KV windows in tokens", 1, MAX_CTX))]
    pub draft_kv_window: Option<u64>,
    /// Fixed cost of one draft step, with a unit (default 300us).
    #[arg(long, value_name = "TIME", value_parser = duration(MAX_OVERHEAD),
          allow_hyphen_values = true)]
    pub overhead_draft: Option<f64>,
    /// Cost per draft layer per draft step, ms.
    #[arg(long, value_name = "MS", value_parser = cost("ms", 1e-3, MAX_OVERHEAD),
          allow_hyphen_values = true)]
    pub draft_layer_ms: Option<f64>,
    /// Tensor parallelism of the draft model: it runs on N of the target's --tp cards
    /// (default: all of them).
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = count("numbers of cards", 1, MAX_TP))]
    pub draft_tp: Option<u64>,
}

impl Roofline {
    /// The scenario these flags describe, drafted as `drafter` says (`None` for a demo that
    /// reads no draft: the lecture's, which it never uses), at the lecture's batch, context
    /// and α (the caller sets its own). A profile (`--calibration`) is applied after the
    /// cards and dtypes (its verification cost per token is computed for them); explicit
    /// flags win over it.
    pub fn scenario(&self, drafter: Option<&Drafter>) -> Scenario {
        let a = &self.assumptions;
        let mut s = Scenario::new(self.card.hw, self.target.target, Scenario::LECTURE.draft);
        s.deployment.tp = a.tp;
        s.deployment.weights = a.weights;
        s.deployment.kv = a.kv;
        if let Some(profile) = a.calibration {
            s = profile.apply(s);
        }
        if let Some(engine) = a.engine {
            s = engine.calibration.apply(s);
        }
        if let Some(tokens) = a.prefill_tokens {
            s.prefill = llm_math::Prefill {
                tokens,
                ctx: a.prefill_ctx.unwrap_or((tokens / 2).max(1)),
            };
        }
        let set = |slot: &mut f64, v: Option<f64>| {
            if let Some(v) = v {
                *slot = v;
            }
        };
        set(&mut s.deployment.compute_efficiency, a.eff_compute);
        set(&mut s.deployment.bandwidth_efficiency, a.eff_bandwidth);
        set(&mut s.cost_terms.overlap, a.overlap);
        set(&mut s.cost_terms.round_fixed, a.round_overhead_ms);
        set(
            &mut s.cost_terms.round_per_sequence,
            a.round_overhead_per_seq_ms,
        );
        set(&mut s.cost_terms.fp8.bandwidth, a.fp8_bandwidth_factor);
        set(&mut s.cost_terms.fp8.compute, a.fp8_compute_factor);
        set(&mut s.cost_terms.w8a16_bandwidth, a.w8a16_bandwidth_factor);
        set(&mut s.cost_terms.int4_dequant_ops, a.int4_dequant_ops);
        // A profile's verification cost follows an explicit FP8 compute factor; an explicit
        // cost wins over both.
        if let (Some(profile), Some(_)) = (a.calibration, a.fp8_compute_factor)
            && let Some(v) = profile.verify_per_batch_token(&s)
        {
            s.cost_terms.verify_per_batch_token = v;
        }
        set(
            &mut s.cost_terms.verify_per_batch_token,
            a.verify_us_per_token,
        );
        if let Some(l) = a.all_reduce_us {
            s.cost_terms.all_reduce = llm_math::AllReduceLatencies::NEUTRAL;
            s.deployment.all_reduce_latency = l;
        }
        set(&mut s.overhead_target, a.overhead_target);
        set(&mut s.cost_terms.per_sequence_layer, a.per_seq_layer_us);
        if let Some(d) = drafter {
            s.draft = d.draft();
            s.draft_tp = d.draft_tp;
            set(&mut s.overhead_draft, d.overhead_draft);
            set(&mut s.cost_terms.draft_per_layer, d.draft_layer_ms);
        }
        s
    }

    /// Whether [`Roofline::scenario`] at `batch` and each of `ctxs` can exist, for a demo
    /// that reads `drafter` (the draft checked too) or none (the target alone): a usage
    /// error saying why not. A draft that does not fit is not an error: a demo prints it as
    /// it prints a target that does not fit.
    pub fn check(&self, drafter: Option<&Drafter>, batch: u64, ctxs: &[u64]) -> Result<(), String> {
        self.assumptions.check()?;
        if let Some(d) = drafter {
            d.check()?;
        }
        for &ctx in ctxs {
            let s = Scenario {
                batch,
                ctx,
                ..self.scenario(drafter)
            };
            let checked = match drafter {
                Some(_) => s.validate(),
                None => s.validate_target(),
            };
            match checked {
                Ok(()) | Err(decode_lab::Error::DraftDoesNotFit(_)) => {}
                Err(e) => return Err(e.to_string()),
            }
        }
        Ok(())
    }
}

impl Assumptions {
    /// Refuses a flag whose value would change nothing in the setup the others describe:
    /// an all-reduce latency on one card, FP8 factors for weights that are not FP8, a W8A16
    /// factor for weights that are not W8A16, INT4's dequantization for weights that are
    /// not INT4.
    pub fn check(&self) -> Result<(), String> {
        if self.all_reduce_us.is_some() && self.tp == 1 {
            return Err(
                "--all-reduce-us prices tensor parallelism's all-reduces, and one card \
                        has none: add --tp N or drop it"
                    .into(),
            );
        }
        let factor = match (self.fp8_bandwidth_factor, self.fp8_compute_factor) {
            (Some(_), _) => Some("--fp8-bandwidth-factor"),
            (None, Some(_)) => Some("--fp8-compute-factor"),
            (None, None) => None,
        };
        if let (Some(flag), false) = (factor, self.weights == WeightDtype::Fp8) {
            return Err(format!(
                "{flag} applies to FP8 weights only: add --weights fp8 or drop it"
            ));
        }
        if self.int4_dequant_ops.is_some() && self.weights != WeightDtype::Int4 {
            return Err("--int4-dequant-ops applies to INT4 weights only: \
                        add --weights int4 or drop it"
                .into());
        }
        if self.w8a16_bandwidth_factor.is_some() && self.weights != WeightDtype::W8A16 {
            return Err(
                "--w8a16-bandwidth-factor applies to int8 weight-only weights only: \
                        add --weights w8a16 or drop it"
                    .into(),
            );
        }
        if let (Some(c), Some(e)) = (self.calibration, self.engine)
            && c.name != validation::MEASURED.name
        {
            return Err(format!(
                "--engine {} refits the measured profile on that engine's rows, and \
                 --calibration {} is another profile: drop one of them",
                e.engine, c.name
            ));
        }
        Ok(())
    }
}

impl Drafter {
    /// The draft these flags choose: a head, a fixed cost, self-speculation, else the model.
    pub fn draft(&self) -> Draft {
        if self.draft_head {
            Draft::Head
        } else if let Some(c) = self.draft_cost {
            Draft::FixedCost(c)
        } else if let Some(kv_window) = self.draft_kv_window {
            Draft::SelfSpec { kv_window }
        } else {
            Draft::Model(self.draft)
        }
    }

    /// Refuses a draft step's own cost for a draft that has no pass of its own (a fixed
    /// cost) or runs the target's (self-speculation): it would change nothing.
    pub fn check(&self) -> Result<(), String> {
        let fixed = self.draft_cost.is_some();
        if self.overhead_draft.is_some() && fixed {
            return Err(
                "--overhead-draft changes nothing with --draft-cost (a draft step costs \
                        c · t_base, nothing else): drop one of them"
                    .into(),
            );
        }
        if self.overhead_draft.is_some() && self.draft_kv_window.is_some() {
            return Err("--overhead-draft changes nothing with --draft-kv-window \
                        (self-speculation runs the target's kernels, at --overhead-target): \
                        drop one of them"
                .into());
        }
        if self.draft_layer_ms.is_some() && fixed {
            return Err(
                "--draft-layer-ms changes nothing with --draft-cost (a fixed-cost draft \
                        has no layers): drop one of them"
                    .into(),
            );
        }
        if self.draft_tp.is_some() && (fixed || self.draft_kv_window.is_some()) {
            return Err(
                "--draft-tp changes nothing with --draft-cost or --draft-kv-window \
                        (no draft model of its own to place): drop one of them"
                    .into(),
            );
        }
        Ok(())
    }
}

/// `--engine NAME`.
fn parse_engine(name: &str) -> Result<&'static EngineProfile, String> {
    validation::engine_profile(name).map_err(|e| e.to_string())
}

/// An engine in the JSON export's setup: its name, or null.
fn engine_name<S: serde::Serializer>(
    e: &Option<&'static EngineProfile>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match e {
        Some(e) => s.serialize_str(e.engine),
        None => s.serialize_none(),
    }
}

/// The most prompt tokens `--prefill-tokens` takes: a pass's token cap.
pub const MAX_PREFILL_TOKENS: u64 = 1 << 20;

/// `--calibration NAME`.
fn parse_calibration(name: &str) -> Result<&'static Calibration, String> {
    validation::calibration(name).map_err(|e| e.to_string())
}

/// A value in the JSON export's setup: as it prints (`bf16`, `fp8`).
fn display<T: std::fmt::Display, S: serde::Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// A profile in the JSON export's setup: its name, or null.
fn calibration_name<S: serde::Serializer>(
    c: &Option<&'static Calibration>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match c {
        Some(c) => s.serialize_str(c.name),
        None => s.serialize_none(),
    }
}
