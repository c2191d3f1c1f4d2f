//! The planner's command-line flags, beside the core's (`lecture_flags`): a calibration
//! profile or an engine's, prompt tokens in every step, and each cost term of
//! [`CostTerms`], as one group a demo flattens ([`Terms`]), plus the draft's per-layer cost
//! beside the drafter's flags ([`DraftTerms`]). With none given, a demo prices its
//! passes with the seed's roofline ([`Setup::pricing`] is [`decode_lab::Seed`]).
//!
//! ```
//! use lecture_flags::roofline::{Drafter, Roofline};
//! use planner::flags::{DraftTerms, Terms};
//!
//! #[derive(Debug, Clone, PartialEq, clap::Args, serde::Serialize)]
//! struct Inputs {
//!     #[command(flatten)]
//!     #[serde(flatten)]
//!     roofline: Roofline,
//!     #[command(flatten)]
//!     #[serde(flatten)]
//!     terms: Terms,
//!     #[command(flatten)]
//!     #[serde(flatten)]
//!     drafter: Drafter,
//!     #[command(flatten)]
//!     #[serde(flatten)]
//!     draft_terms: DraftTerms,
//! }
//! impl lecture_kit::Inputs for Inputs {}
//!
//! let i: Inputs = lecture_kit::inputs::parse(&["--calibration", "measured"])?;
//! let setup = i.terms.setup(&i.roofline, Some((&i.drafter, &i.draft_terms)));
//! assert_eq!(setup.scenario.overhead_target, planner::validation::MEASURED.overhead_target);
//! assert!(setup.plan.terms.overlap < 1.0);
//! # Ok::<(), lecture_kit::Error>(())
//! ```

use decode_lab::{Pricing, Scenario, Seed};
use lecture_flags::roofline::{
    Drafter, MAX_CTX, MAX_OVERHEAD, MIN_EFFICIENCY, Roofline, check_scenario,
};
use lecture_kit::parse::{cost, count, real};
use llm_math::WeightDtype;
use serde::Serialize;

use crate::Error;
use crate::validation::{self, Calibration, EngineProfile, Indices, MEASURED_GRID, TermSupport};
use crate::{AllReduceLatencies, CostTerms, MAX_DEQUANT_OPS, Plan, Prefill};

/// The most prompt tokens `--prefill-tokens` takes: a pass's token cap.
pub const MAX_PREFILL_TOKENS: u64 = 1 << 20;

/// A fraction of peak, from [`MIN_EFFICIENCY`] to 1.
fn is_fraction(f: f64) -> bool {
    (MIN_EFFICIENCY..=1.0).contains(&f)
}

/// Operations per weight from 0 to [`MAX_DEQUANT_OPS`].
fn is_dequant_ops(f: f64) -> bool {
    (0.0..=MAX_DEQUANT_OPS).contains(&f)
}

/// The planner's terms as flags: a profile of constants (`--calibration`, `--engine`),
/// prompt tokens in every step, and each cost term engines show.
#[derive(Debug, Clone, Copy, PartialEq, clap::Args, Serialize)]
#[command(next_help_heading = "What if")]
pub struct Terms {
    /// A calibration profile (seed, fitted, measured; see --demo 5): its efficiencies,
    /// overheads and verification cost replace the script's; flags given explicitly still
    /// win.
    #[arg(long, value_name = "NAME", value_parser = parse_calibration)]
    #[serde(serialize_with = "calibration_name")]
    pub calibration: Option<&'static Calibration>,
    /// A serving engine (vllm, sglang, tensorrt-llm, lmdeploy, …; see --demo 5): the
    /// measured profile with its fixed cost, bandwidth efficiency, all-reduce latencies
    /// and cost per sequence per layer refitted on that engine's
    /// published rows, drawn toward the pool (an engine too few publishers measured keeps
    /// the pooled profile).
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

/// The draft's own cost term, beside the drafter's flags (a demo that reads no draft does
/// not read it).
#[derive(Debug, Clone, Copy, PartialEq, clap::Args, Serialize)]
#[command(next_help_heading = "What if")]
pub struct DraftTerms {
    /// Cost per draft layer per draft step, ms.
    #[arg(long, value_name = "MS", value_parser = cost("ms", 1e-3, MAX_OVERHEAD),
          allow_hyphen_values = true)]
    pub draft_layer_ms: Option<f64>,
}

/// A constant that only one or two publishers' rows fix, and the setups at the two ends of
/// where refitting without one of them puts it ([`Terms::thin_ends`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThinEnds {
    /// The constant and the publishers whose rows fix it.
    pub support: &'static TermSupport<'static>,
    /// The constant's smallest and largest value ([`validation::fold_span`]).
    pub values: (f64, f64),
    /// The setup with the constant at the smallest value.
    pub low: Setup,
    /// The setup with the constant at the largest value.
    pub high: Setup,
}

/// A scenario and the plan that prices it, as a demo's flags describe them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setup {
    /// The card, models, deployment and overheads (a profile's where it gives them, the
    /// flags' where they are typed).
    pub scenario: Scenario,
    /// The cost terms and prompt tokens on top of the seed's roofline.
    pub plan: Plan,
}

impl Setup {
    /// What prices the scenario's passes: the seed's roofline ([`Seed`]) when the plan adds
    /// nothing to it, else the plan.
    pub fn pricing(&self) -> &dyn Pricing {
        if self.plan == Plan::SEED {
            &Seed
        } else {
            &self.plan
        }
    }
}

impl Terms {
    /// The scenario and plan the core flags `roofline` (and a demo's drafter with its
    /// draft terms, or `None`) describe with these terms: a profile (`--calibration`, then
    /// `--engine`) replaces the scenario's efficiencies, overheads and all-reduce latency
    /// and gives its cost terms; flags typed explicitly win over it (the verification cost
    /// a profile computes follows an explicit FP8 compute factor; an explicit cost wins
    /// over both).
    pub fn setup(&self, roofline: &Roofline, drafter: Option<(&Drafter, &DraftTerms)>) -> Setup {
        self.setup_under(roofline, drafter, self.profiles())
    }

    /// [`Terms::setup`] with `profiles` in place of the ones the flags name.
    fn setup_under<'p>(
        &self,
        roofline: &Roofline,
        drafter: Option<(&Drafter, &DraftTerms)>,
        profiles: impl Iterator<Item = &'p Calibration>,
    ) -> Setup {
        let core = drafter.map(|(d, _)| d);
        let mut s = roofline.scenario(core);
        let mut terms = CostTerms::NEUTRAL;
        let mut last = None;
        for profile in profiles {
            s = profile.apply(s);
            terms = profile.plan(&s).terms;
            last = Some(profile);
        }
        roofline.set_given(core, &mut s);
        let set = |slot: &mut f64, v: Option<f64>| {
            if let Some(v) = v {
                *slot = v;
            }
        };
        set(&mut terms.overlap, self.overlap);
        set(&mut terms.round_fixed, self.round_overhead_ms);
        set(
            &mut terms.round_per_sequence,
            self.round_overhead_per_seq_ms,
        );
        set(&mut terms.fp8.bandwidth, self.fp8_bandwidth_factor);
        set(&mut terms.fp8.compute, self.fp8_compute_factor);
        set(&mut terms.w8a16_bandwidth, self.w8a16_bandwidth_factor);
        set(&mut terms.int4_dequant_ops, self.int4_dequant_ops);
        if let (Some(profile), Some(_)) = (last, self.fp8_compute_factor)
            && let Some(v) = profile.verify_per_batch_token(&s, terms.fp8)
        {
            terms.verify_per_batch_token = v;
        }
        set(&mut terms.verify_per_batch_token, self.verify_us_per_token);
        if let Some(l) = self.all_reduce_us {
            terms.all_reduce = AllReduceLatencies::NEUTRAL;
            s.deployment.all_reduce_latency = l;
        }
        set(&mut terms.per_sequence_layer, self.per_seq_layer_us);
        if let Some((_, d)) = drafter {
            set(&mut terms.draft_per_layer, d.draft_layer_ms);
        }
        let prefill = match self.prefill_tokens {
            Some(tokens) => Prefill {
                tokens,
                ctx: self.prefill_ctx.unwrap_or((tokens / 2).max(1)),
            },
            None => Prefill::NONE,
        };
        Setup {
            scenario: s,
            plan: Plan { terms, prefill },
        }
    }

    /// The profiles the flags name, in the order they apply: `--calibration`, then
    /// `--engine`'s.
    fn profiles(&self) -> impl Iterator<Item = &'static Calibration> {
        let engine = self.engine.map(|e| &e.calibration);
        self.calibration.into_iter().chain(engine)
    }

    /// The profile fitted on published rows that these flags price with, by name, and its
    /// grid indices ([`validation::MEASURED_GRID`]): `--engine`'s, else `--calibration
    /// measured`'s; `None` under the seed's or the fitted profile, or none.
    ///
    /// Errors: as [`validation::fit_measured()`].
    pub fn fitted(&self) -> Result<Option<(&'static str, Indices)>, Error> {
        if let Some(e) = self.engine {
            return Ok(Some((e.calibration.name, e.ix)));
        }
        match self.calibration {
            Some(c) if c.name == validation::MEASURED.name => {
                Ok(Some((c.name, validation::fit_measured()?.0)))
            }
            _ => Ok(None),
        }
    }

    /// For each constant of the fitted profile in use ([`Terms::fitted`]) that only one or
    /// two publishers' rows fix ([`validation::thin_terms`]), the setup these flags describe
    /// with that constant at each end of [`validation::fold_span`]: where refitting without
    /// one of those publishers puts it (the leave-one-publisher-out folds, on every other
    /// published row, with `--engine`'s refit in each), widened to take in the profile's
    /// own value. Everything else as
    /// [`Terms::setup`] gives it; the profile in use is the last the flags name, which
    /// replaces every constant of one before it. A flag typed explicitly still wins, so a
    /// constant the flags set prices the same at both ends. Empty when no fitted profile
    /// is in use.
    ///
    /// Errors: as [`Terms::fitted`] and [`validation::thin_terms`].
    pub fn thin_ends(
        &self,
        roofline: &Roofline,
        drafter: Option<(&Drafter, &DraftTerms)>,
    ) -> Result<Vec<ThinEnds>, Error> {
        let Some((name, ix)) = self.fitted()? else {
            return Ok(Vec::new());
        };
        validation::thin_terms()?
            .iter()
            .map(|support| {
                let engine = self.engine.map(|e| e.engine);
                let span = validation::fold_span(&ix, support, engine)?;
                let (low, high) = validation::ends_at(&ix, support.axis, span, name)?;
                let value = |index: u32| f64::from(index) * MEASURED_GRID[support.axis].step;
                let under =
                    |end: &Calibration| self.setup_under(roofline, drafter, [end].into_iter());
                Ok(ThinEnds {
                    support,
                    values: (value(span.0), value(span.1)),
                    low: under(&low),
                    high: under(&high),
                })
            })
            .collect()
    }

    /// Whether the setups these flags describe with `roofline` (and `drafter`) at `batch`
    /// and each of `ctxs` can exist: first a flag whose value would change nothing in the
    /// setup the others describe (an all-reduce latency on one card, FP8 factors for
    /// weights that are not FP8, a W8A16 factor for weights that are not W8A16, INT4's
    /// dequantization for weights that are not INT4, two profiles, a draft layer cost for a
    /// draft with no layers), then the core flags' own checks ([`Roofline::check`]), then
    /// each setup: its scenario ([`check_scenario`]) and the plan's terms on it
    /// ([`Pricing::check`]). A usage error saying why not.
    pub fn check(
        &self,
        roofline: &Roofline,
        drafter: Option<(&Drafter, &DraftTerms)>,
        batch: u64,
        ctxs: &[u64],
    ) -> Result<(), String> {
        self.check_flags(roofline)?;
        if let Some((d, t)) = drafter
            && t.draft_layer_ms.is_some()
            && d.draft_cost.is_some()
        {
            return Err(
                "--draft-layer-ms changes nothing with --draft-cost (a fixed-cost draft \
                        has no layers): drop one of them"
                    .into(),
            );
        }
        roofline.check(drafter.map(|(d, _)| d), batch, ctxs)?;
        let setup = self.setup(roofline, drafter);
        for &ctx in ctxs {
            let s = Scenario {
                batch,
                ctx,
                ..setup.scenario
            };
            check_scenario(&s, drafter.is_some())?;
            setup.plan.check(&s).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Refuses a flag whose value would change nothing in the setup the others describe.
    fn check_flags(&self, roofline: &Roofline) -> Result<(), String> {
        let a = &roofline.assumptions;
        if self.all_reduce_us.is_some() && a.tp == 1 {
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
        if let (Some(flag), false) = (factor, a.weights == WeightDtype::Fp8) {
            return Err(format!(
                "{flag} applies to FP8 weights only: add --weights fp8 or drop it"
            ));
        }
        if self.int4_dequant_ops.is_some() && a.weights != WeightDtype::Int4 {
            return Err("--int4-dequant-ops applies to INT4 weights only: \
                        add --weights int4 or drop it"
                .into());
        }
        if self.w8a16_bandwidth_factor.is_some() && a.weights != WeightDtype::W8A16 {
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

/// `--calibration NAME`.
fn parse_calibration(name: &str) -> Result<&'static Calibration, String> {
    validation::calibration(name).map_err(|e| e.to_string())
}

/// `--engine NAME`.
fn parse_engine(name: &str) -> Result<&'static EngineProfile, String> {
    validation::engine_profile(name).map_err(|e| e.to_string())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validation::{FIXES_BY, fold_fits, thin_terms};

    /// The flags a demo of lecture 6 reads, for parsing command lines here.
    #[derive(Debug, Clone, PartialEq, clap::Args, Serialize)]
    struct Inputs {
        #[command(flatten)]
        #[serde(flatten)]
        roofline: Roofline,
        #[command(flatten)]
        #[serde(flatten)]
        terms: Terms,
        #[command(flatten)]
        #[serde(flatten)]
        drafter: Drafter,
        #[command(flatten)]
        #[serde(flatten)]
        draft_terms: DraftTerms,
    }
    impl lecture_kit::Inputs for Inputs {}

    /// The setups of `args` and the thin constants' ends.
    fn thin(args: &[&str]) -> (Setup, Vec<ThinEnds>) {
        let i: Inputs = lecture_kit::inputs::parse(args).unwrap();
        let drafter = Some((&i.drafter, &i.draft_terms));
        let setup = i.terms.setup(&i.roofline, drafter);
        (setup, i.terms.thin_ends(&i.roofline, drafter).unwrap())
    }

    /// The step of `s`: one target pass of one token.
    fn step(s: &Setup) -> f64 {
        s.pricing().target_pass_time(&s.scenario, 1).unwrap()
    }

    const MI300X_TP8: [&str; 6] = ["--hw", "MI300X", "--target", "Llama-3.1-70B", "--tp", "8"];

    /// A constant of a plan's terms: it returns the value, and sets it to `v` if given.
    type Field = fn(&mut CostTerms, Option<f64>) -> f64;

    /// The Infinity Fabric latency of a plan's terms, and the terms with it set to `v`.
    fn fabric(t: &mut CostTerms, v: Option<f64>) -> f64 {
        let was = t.all_reduce.infinity_fabric;
        t.all_reduce.infinity_fabric = v.unwrap_or(was);
        was
    }

    /// The W8A16 factor of a plan's terms, and the terms with it set to `v`.
    fn w8a16(t: &mut CostTerms, v: Option<f64>) -> f64 {
        let was = t.w8a16_bandwidth;
        t.w8a16_bandwidth = v.unwrap_or(was);
        was
    }

    /// Each end changes its one constant, to the smallest and the largest value among the
    /// profile's own and those of the folds that hold out one of its publishers (recounted
    /// here from [`fold_fits`]), and nothing else of the setup. On 8 MI300X the Infinity
    /// Fabric latency and for W8A16 weights the W8A16 factor, each fixed by two publishers
    /// only, move the step by more than [`FIXES_BY`], and the two ends bracket the step the
    /// profile prices (the W8A16 factor in use lies beyond both folds': the ends take it
    /// in).
    #[test]
    fn each_thin_constant_is_moved_alone_across_what_the_folds_fit() {
        let (own, _) = validation::fit_measured().unwrap();
        let cases: [(&[&str], &str, Field); 2] = [
            (&MI300X_TP8, "Infinity Fabric", fabric),
            (&["--weights", "w8a16"], "W8A16", w8a16),
        ];
        for (setup_args, name, field) in cases {
            let args = [setup_args, &["--calibration", "measured"]].concat();
            let (setup, ends) = thin(&args);
            let names: Vec<&str> = ends.iter().map(|e| e.support.term).collect();
            let thin_names: Vec<&str> = thin_terms().unwrap().iter().map(|t| t.term).collect();
            assert_eq!(names, thin_names);
            for e in &ends {
                let axis = e.support.axis;
                let value = |i: u32| f64::from(i) * validation::MEASURED_GRID[axis].step;
                let of_its_publishers = fold_fits()
                    .unwrap()
                    .iter()
                    .filter(|(p, _)| e.support.publishers.iter().any(|q| q.0 == *p))
                    .map(|(_, ix)| ix[axis]);
                let all: Vec<u32> = of_its_publishers.chain([own[axis]]).collect();
                let span = (*all.iter().min().unwrap(), *all.iter().max().unwrap());
                assert_eq!(
                    e.values,
                    (value(span.0), value(span.1)),
                    "{}",
                    e.support.term
                );
            }
            let e = ends
                .iter()
                .find(|e| e.support.term.starts_with(name))
                .unwrap();
            let mut in_use = setup.plan.terms;
            let at = field(&mut in_use, None);
            for (end, v) in [(&e.low, e.values.0), (&e.high, e.values.1)] {
                let mut terms = end.plan.terms;
                assert_eq!(field(&mut terms, Some(at)), v, "{name}");
                assert_eq!(terms, setup.plan.terms, "{name}: only the constant moves");
                assert_eq!(end.scenario, setup.scenario, "{name}");
            }
            let (a, b, x) = (step(&e.low), step(&e.high), step(&setup));
            let (low, high) = (a.min(b), a.max(b));
            assert!(low <= x && x <= high, "{name}: {low} {x} {high}");
            assert!(high / low > FIXES_BY, "{name}: {low} {high}");
        }
    }

    /// The folds are one per publisher, sorted; a constant one publisher alone fixes (the
    /// Ethernet latency: Intel's Gaudi rows) has nowhere to go without it: the fold starts
    /// from the measured fit and no row it keeps moves the constant, so both ends are the
    /// profile's own value and price the setup as it is.
    #[test]
    fn a_constant_of_one_publisher_does_not_move_without_it() {
        let fits = fold_fits().unwrap();
        let held: Vec<&str> = fits.iter().map(|(p, _)| *p).collect();
        let ms = validation::measurements().unwrap();
        assert_eq!(held, validation::publishers(ms));
        let args = ["--hw", "Gaudi2", "--tp", "8", "--calibration", "measured"];
        let (setup, ends) = thin(&args);
        let ethernet = ends.iter().find(|e| e.support.term.starts_with("Ethernet"));
        let ethernet = ethernet.unwrap();
        assert_eq!(ethernet.support.publishers.len(), 1);
        let (own, _) = validation::fit_measured().unwrap();
        let at = f64::from(own[ethernet.support.axis])
            * validation::MEASURED_GRID[ethernet.support.axis].step;
        assert_eq!(ethernet.values, (at, at));
        assert_eq!((ethernet.low, ethernet.high), (setup, setup));
    }

    /// A constant typed as a flag wins at both ends; with no fitted profile there are no
    /// ends; under `--engine` (alone or after `--calibration measured`) the ends move the
    /// engine's profile, and nothing else, across its own value and the engine's refits
    /// in the folds without AMD and without dstack (recounted here with
    /// [`validation::engine_profile_on`] on each fold's rows).
    #[test]
    fn a_typed_flag_wins_and_without_a_fitted_profile_there_is_nothing_to_move() {
        let typed = [
            &MI300X_TP8[..],
            &["--calibration", "measured", "--all-reduce-us", "20"],
        ];
        let (setup, ends) = thin(&typed.concat());
        assert!(!ends.is_empty());
        for e in &ends {
            assert_eq!(step(&e.low), step(&setup), "{}", e.support.term);
            assert_eq!(step(&e.high), step(&setup), "{}", e.support.term);
        }
        for profile in [
            &[][..],
            &["--calibration", "seed"],
            &["--calibration", "fitted"],
        ] {
            let (_, ends) = thin(&[&MI300X_TP8[..], profile].concat());
            assert!(ends.is_empty(), "{profile:?}");
        }
        let vllm = validation::engine_profile("vllm").unwrap();
        let every: Vec<&validation::Measurement> =
            validation::measurements().unwrap().iter().collect();
        let every = validation::FitRows::new(&every).unwrap();
        let refits = fold_fits()
            .unwrap()
            .iter()
            .filter(|(p, _)| *p == "AMD" || p.starts_with("dstack"))
            .map(|&(p, pooled)| {
                let train = every.filter(|m| m.publisher != p);
                let refit = validation::engine_profile_on("vllm", &train, pooled).unwrap();
                refit.calibration.cost_terms.all_reduce.infinity_fabric
            });
        let own = vllm.calibration.cost_terms.all_reduce.infinity_fabric;
        let all: Vec<f64> = refits.chain([own]).collect();
        let low = all.iter().copied().fold(f64::INFINITY, f64::min);
        let high = all.iter().copied().fold(0.0, f64::max);
        assert_eq!(all.len(), 3);
        for engine in [
            &["--engine", "vllm"][..],
            &["--calibration", "measured", "--engine", "vllm"],
        ] {
            let (setup, ends) = thin(&[&MI300X_TP8[..], engine].concat());
            let e = ends
                .iter()
                .find(|e| e.support.term.starts_with("Infinity Fabric"))
                .unwrap();
            let mut in_use = setup.plan.terms;
            let at = fabric(&mut in_use, None);
            assert_eq!(at, own);
            assert_eq!(e.values, (low, high), "{engine:?}");
            for end in [&e.low, &e.high] {
                let mut terms = end.plan.terms;
                fabric(&mut terms, Some(at));
                assert_eq!(terms, setup.plan.terms, "{engine:?}");
                assert_eq!(end.scenario, setup.scenario, "{engine:?}");
            }
        }
    }

    /// An explicit FP8 compute factor reaches the verification cost the profile in use
    /// computes, an engine's as `--calibration measured`'s (the profile's own method,
    /// asked with the typed factor).
    #[test]
    fn a_typed_fp8_compute_factor_reaches_the_engines_verification_cost() {
        let vllm = validation::engine_profile("vllm").unwrap();
        for (args, profile) in [
            (&["--calibration", "measured"][..], &validation::MEASURED),
            (&["--engine", "vllm"], &vllm.calibration),
        ] {
            let typed = [args, &["--weights", "fp8", "--fp8-compute-factor", "0.5"]].concat();
            let (setup, _) = thin(&typed);
            let fp8 = setup.plan.terms.fp8;
            assert_eq!(fp8.compute, 0.5);
            let expected = profile.verify_per_batch_token(&setup.scenario, fp8);
            assert!(expected.is_some(), "{args:?}");
            assert_eq!(
                Some(setup.plan.terms.verify_per_batch_token),
                expected,
                "{args:?}"
            );
        }
    }
}
