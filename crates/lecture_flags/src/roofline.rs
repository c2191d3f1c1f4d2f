//! The what-ifs of speculative decoding on the roofline, as flag groups: the card, target
//! and the seed's assumptions ([`Roofline`], with [`Assumptions`]) and what drafts
//! ([`Drafter`]), which turn into the library's [`decode_lab::Scenario`]
//! ([`Roofline::scenario`]); the round's own questions (α, γ, a measured tree, the grid)
//! are [`crate::round`]'s. Every default is [`Scenario::LECTURE`]'s, so no flag means the
//! original script. The cost terms engines show beyond the seed's assumptions are the
//! `planner` crate's flags, beside these.
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

use decode_lab::{Draft, Scenario};
use lecture_kit::parse::{count, duration, real};
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
/// The longest fixed per-pass overhead, and the largest cost term a flag takes, seconds.
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

/// The seed's assumptions, every one replaceable: cards, dtypes, efficiencies, the
/// target's overhead.
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
    /// `--tp`, `--weights`, `--kv`, the efficiencies, `--overhead-target`.
    #[command(flatten)]
    #[serde(flatten)]
    pub assumptions: Assumptions,
}

/// What drafts, on how many cards, and a draft step's fixed overhead.
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
    /// Tensor parallelism of the draft model: it runs on N of the target's --tp cards
    /// (default: all of them).
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = count("numbers of cards", 1, MAX_TP))]
    pub draft_tp: Option<u64>,
}

impl Roofline {
    /// The scenario these flags describe, drafted as `drafter` says (`None` for a demo that
    /// reads no draft: the lecture's, which it never uses), at the lecture's batch, context
    /// and α (the caller sets its own).
    pub fn scenario(&self, drafter: Option<&Drafter>) -> Scenario {
        let a = &self.assumptions;
        let mut s = Scenario::new(self.card.hw, self.target.target, Scenario::LECTURE.draft);
        s.deployment.tp = a.tp;
        s.deployment.weights = a.weights;
        s.deployment.kv = a.kv;
        if let Some(d) = drafter {
            s.draft = d.draft();
            s.draft_tp = d.draft_tp;
        }
        self.set_given(drafter, &mut s);
        s
    }

    /// Sets on `s` the figures these flags give explicitly — the efficiencies and the
    /// overheads — and nothing else: what a profile of other figures (the planner's
    /// `--calibration`) applied to `s` must leave as the user typed them.
    pub fn set_given(&self, drafter: Option<&Drafter>, s: &mut Scenario) {
        let a = &self.assumptions;
        let set = |slot: &mut f64, v: Option<f64>| {
            if let Some(v) = v {
                *slot = v;
            }
        };
        set(&mut s.deployment.compute_efficiency, a.eff_compute);
        set(&mut s.deployment.bandwidth_efficiency, a.eff_bandwidth);
        set(&mut s.overhead_target, a.overhead_target);
        if let Some(d) = drafter {
            set(&mut s.overhead_draft, d.overhead_draft);
        }
    }

    /// Whether [`Roofline::scenario`] at `batch` and each of `ctxs` can exist, for a demo
    /// that reads `drafter` (the draft checked too) or none (the target alone): a usage
    /// error saying why not. A draft that does not fit is not an error: a demo prints it as
    /// it prints a target that does not fit.
    pub fn check(&self, drafter: Option<&Drafter>, batch: u64, ctxs: &[u64]) -> Result<(), String> {
        if let Some(d) = drafter {
            d.check()?;
        }
        for &ctx in ctxs {
            let s = Scenario {
                batch,
                ctx,
                ..self.scenario(drafter)
            };
            check_scenario(&s, drafter.is_some())?;
        }
        Ok(())
    }
}

/// Whether `s` can exist, its draft checked when `with_draft` (else the target alone): a
/// usage error saying why not. A draft that does not fit is not an error: a demo prints it
/// as it prints a target that does not fit.
pub fn check_scenario(s: &Scenario, with_draft: bool) -> Result<(), String> {
    let checked = match with_draft {
        true => s.validate(),
        false => s.validate_target(),
    };
    match checked {
        Ok(()) | Err(decode_lab::Error::DraftDoesNotFit(_)) => Ok(()),
        // Drafts that share no tokenizer with anything also fit a target of any family.
        Err(e @ decode_lab::Error::TokenizerMismatch { .. }) => Err(format!(
            "{e} (see --list), or one that needs no tokenizer of its own: --draft-head, \
             --draft-cost C or --draft-kv-window N"
        )),
        Err(e) => Err(e.to_string()),
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

/// A value in the JSON export's setup: as it prints (`bf16`, `fp8`).
fn display<T: std::fmt::Display, S: serde::Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}
