//! Published measurements and the setup each was taken in: a data file
//! (`crates/planner/data/measurements.json`) embedded in the crate and parsed once.

use crate::{Error, Plan, Prefill};
use decode_lab::{Draft, Pricing, Scenario, TreeShape, tree_round_time, tree_speedup};
use hw_specs::Accelerator;
use llm_math::{Deployment, KvDtype, ModelConfig, WeightDtype};
use once_cell::sync::Lazy;
use serde::Deserialize;

use super::Calibration;
use super::engines::engine_name;

/// Whether a measurement was used to fit a profile or is held out to judge it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Used by [`super::fit_calibration`].
    Calibration,
    /// Not used by the fit; the profile is judged on it.
    HeldOut,
}

/// A published figure, in the units its source prints.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Published {
    /// Output tokens per second of one sequence at batch 1 (the step time is its inverse).
    TokensPerSecond(f64),
    /// Inter-token latency, milliseconds (one decode step at the stated concurrency).
    ItlMs(f64),
    /// Throughput with and without speculation, tokens/s (speedup = with / without).
    ThroughputPair {
        /// With speculative decoding.
        with: f64,
        /// Without.
        without: f64,
    },
    /// Time per output token with and without speculation, ms (speedup = without / with).
    TpotPair {
        /// With speculative decoding.
        with: f64,
        /// Without.
        without: f64,
    },
    /// As published (`text`, verbatim), and the figure in the model's units (`value`:
    /// seconds for a step or a round, × for a speedup, a plain ratio for a verification).
    AsPublished {
        /// The figure as the source prints it.
        text: String,
        /// The same figure in SI units.
        value: f64,
    },
}

impl Published {
    /// The figure the model predicts: a step time in seconds, or a speedup.
    pub fn measured(&self) -> f64 {
        match *self {
            Published::TokensPerSecond(t) => 1.0 / t,
            Published::ItlMs(ms) => ms * 1e-3,
            Published::ThroughputPair { with, without } => with / without,
            Published::TpotPair { with, without } => without / with,
            Published::AsPublished { value, .. } => value,
        }
    }

    /// As the source prints it.
    pub fn as_printed(&self) -> String {
        match *self {
            Published::TokensPerSecond(t) => format!("{t} tokens/s"),
            Published::ItlMs(ms) => format!("ITL {ms} ms"),
            Published::ThroughputPair { with, without } => {
                format!("{without} → {with} tokens/s")
            }
            Published::TpotPair { with, without } => format!("TPOT {without} → {with} ms"),
            Published::AsPublished { ref text, .. } => text.clone(),
        }
    }

    fn is_finite_positive(&self) -> bool {
        let ok = |x: f64| x.is_finite() && x > 0.0;
        match *self {
            Published::TokensPerSecond(x)
            | Published::ItlMs(x)
            | Published::AsPublished { value: x, .. } => ok(x),
            Published::ThroughputPair { with, without } | Published::TpotPair { with, without } => {
                ok(with) && ok(without)
            }
        }
    }
}

/// What the measurement measures, as the model computes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Quantity {
    /// One plain decode step of the target (a [`crate::Plan`]'s target pass with n = 1), seconds.
    StepTime,
    /// The speedup of a speculative round with a draft head and a measured acceptance
    /// length ([`tree_speedup`] with τ = the published acceptance length) over a tree of
    /// `depth` levels and `nodes` drafted tokens ([`TreeShape::sized`]: papers give the size).
    Speedup {
        /// The published acceptance length: tokens per round.
        tau: f64,
        /// Draft steps.
        depth: u64,
        /// Draft tokens verified per sequence.
        nodes: u64,
    },
    /// One speculative round of `depth` draft steps and a pass over `nodes + 1` tokens
    /// per sequence, seconds ([`tree_round_time`]).
    RoundTime {
        /// Draft steps.
        depth: u64,
        /// Draft tokens verified per sequence.
        nodes: u64,
    },
    /// A pass verifying `nodes` drafted tokens per sequence over a plain step:
    /// `target_pass_time(nodes + 1) / target_pass_time(1)`.
    VerifyRatio {
        /// Draft tokens verified per sequence.
        nodes: u64,
    },
}

/// The three kinds a profile is judged on, each summarised on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A plain decode step, seconds.
    StepTime,
    /// The cost of verification or of a whole round (a ratio or seconds).
    VerifyOrRound,
    /// A speculative speedup, ×.
    Speedup,
}

impl Kind {
    /// Every kind, in table order.
    pub const ALL: [Kind; 3] = [Kind::StepTime, Kind::VerifyOrRound, Kind::Speedup];

    /// `step_time`, `verify_or_round`, `speedup`.
    pub fn name(&self) -> &'static str {
        match self {
            Kind::StepTime => "step_time",
            Kind::VerifyOrRound => "verify_or_round",
            Kind::Speedup => "speedup",
        }
    }
}

impl Quantity {
    /// The kind it is judged as.
    pub fn kind(&self) -> Kind {
        match self {
            Quantity::StepTime => Kind::StepTime,
            Quantity::RoundTime { .. } | Quantity::VerifyRatio { .. } => Kind::VerifyOrRound,
            Quantity::Speedup { .. } => Kind::Speedup,
        }
    }
}

/// The draft a speculative row was measured with; both are modelled as [`Draft::Head`]
/// (one decoder layer of the target's shape and its LM head).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum DraftKind {
    /// EAGLE(-1/-2)'s one-layer head on the target's last features.
    #[serde(rename = "eagle1_head")]
    Eagle1Head,
    /// EAGLE-3's one-layer head on features fused from three target layers.
    #[serde(rename = "eagle3_head")]
    Eagle3Head,
}

/// One published measurement and the setup it was taken in.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// Short id used in the tables (M1, M2, …).
    pub id: String,
    /// Who published it (one organisation or group of authors).
    pub publisher: String,
    /// The series it belongs to (rows of one table or page that vary one knob), if any.
    pub series: Option<String>,
    /// The source's words the figure is read from, verbatim, when recorded.
    pub quote: Option<String>,
    /// The draft of a speculative row.
    pub draft: Option<DraftKind>,
    /// Whether the acceptance length is borrowed from another source (the row's setup
    /// says from where): the source prints none.
    pub tau_assumed: bool,
    /// Whether the figure is computed from a published fitted model, not measured.
    pub derived: bool,
    /// Who published it, and where (title, table or comment).
    pub source: String,
    /// Its address.
    pub url: String,
    /// The setup in words, with every assumption this table adds.
    pub setup: String,
    /// The serving engine it was measured in, one of [`super::ENGINES`].
    pub engine: &'static str,
    /// The card.
    pub hw: Accelerator,
    /// The model served.
    pub target: ModelConfig,
    /// Tensor parallelism.
    pub tp: u64,
    /// Weight dtype.
    pub weights: WeightDtype,
    /// KV-cache dtype.
    pub kv: KvDtype,
    /// Sequences decoded together (concurrency).
    pub batch: u64,
    /// Context length assumed for the step, tokens.
    pub ctx: u64,
    /// What is measured.
    pub quantity: Quantity,
    /// The figure as published.
    pub published: Published,
    /// Fit or judge.
    pub role: Role,
    /// The closed-loop benchmark a step-time row was read from, when its source states one.
    pub closed_loop: Option<ClosedLoop>,
}

/// A closed-loop serving benchmark: `concurrency` clients, each sending a prompt of
/// `input` tokens and reading `output` tokens, then sending the next. Its inter-token
/// latency is not a pure decode step: between two tokens of one sequence the engine also
/// prefills the prompts of the requests that replace finished ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClosedLoop {
    /// Prompt tokens per request.
    pub input: u64,
    /// Output tokens per request.
    pub output: u64,
}

impl ClosedLoop {
    /// The prompt tokens one step of a sequence waits for, on average, at `batch`
    /// sequences decoding: while one sequence emits its `output` tokens, each of the other
    /// `batch − 1` finishes once and its replacement's `input`-token prompt is prefilled,
    /// so `(batch − 1) · input / output` prompt tokens per step (rounded down), each
    /// attending to half its prompt on average (`input / 2`).
    ///
    /// ```
    /// use planner::validation::ClosedLoop;
    /// // 50 sequences of a 5000-in / 500-out benchmark: 49 · 10 = 490 prompt tokens a step.
    /// let p = ClosedLoop { input: 5000, output: 500 }.prefill_per_step(50);
    /// assert_eq!((p.tokens, p.ctx), (490, 2500));
    /// ```
    pub fn prefill_per_step(&self, batch: u64) -> Prefill {
        let tokens = batch.saturating_sub(1) * self.input / self.output.max(1);
        if tokens == 0 {
            return Prefill::NONE;
        }
        Prefill {
            tokens,
            ctx: (self.input / 2).max(1),
        }
    }
}

/// A plain decode step of `s` (one new token per sequence) priced by `plan`, whose pass
/// also carries `prefill` prompt tokens, seconds: the plan's target pass with its prefill
/// replaced by `prefill`.
///
/// Errors: as [`Plan`]'s target pass.
pub fn step_time_with_prefill(s: &Scenario, plan: &Plan, prefill: Prefill) -> Result<f64, Error> {
    Plan { prefill, ..*plan }.target_pass_time(s, 1)
}

impl Measurement {
    /// The prompt tokens a step of this row carries ([`ClosedLoop::prefill_per_step`]),
    /// or [`Prefill::NONE`] for a row read from no closed-loop benchmark.
    pub fn prefill(&self) -> Prefill {
        self.closed_loop
            .map_or(Prefill::NONE, |c| c.prefill_per_step(self.batch))
    }

    /// The scenario this measurement runs in under `profile`: the published setup, with
    /// an EAGLE-like draft head for speedups.
    pub fn scenario(&self, profile: &Calibration) -> Scenario {
        profile.apply(Scenario {
            hw: self.hw,
            target: self.target,
            // A step time does not depend on the draft; a speedup uses the EAGLE-like head.
            draft: Draft::Head,
            batch: self.batch,
            ctx: self.ctx,
            deployment: Deployment {
                tp: self.tp,
                weights: self.weights,
                kv: self.kv,
                ..Deployment::LECTURE
            },
            ..Scenario::LECTURE
        })
    }

    /// The plan that prices this measurement's passes under `profile`
    /// ([`Calibration::plan`] of its scenario).
    pub fn plan(&self, profile: &Calibration) -> Plan {
        profile.plan(&self.scenario(profile))
    }

    /// What the model predicts under `profile`: seconds for a step, × for a speedup.
    ///
    /// Errors: whatever the roofline rejects for the setup (none of the table's do).
    pub fn predict(&self, profile: &Calibration) -> Result<f64, Error> {
        let s = self.scenario(profile);
        let plan = profile.plan(&s);
        match self.quantity {
            Quantity::StepTime => step_time_with_prefill(&s, &plan, self.prefill()),
            Quantity::Speedup { tau, depth, nodes } => {
                tree_speedup(&s, &plan, &TreeShape::sized(depth, nodes)?, tau)
            }
            Quantity::RoundTime { depth, nodes } => {
                Ok(tree_round_time(&s, &plan, &TreeShape::sized(depth, nodes)?)?.1)
            }
            Quantity::VerifyRatio { nodes } => {
                Ok(plan.target_pass_time(&s, nodes + 1)? / plan.target_pass_time(&s, 1)?)
            }
        }
    }
}

/// One row of the data file, as written (names instead of cards and models).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    id: String,
    publisher: String,
    source: String,
    url: String,
    setup: String,
    /// One of [`super::ENGINES`].
    engine: String,
    #[serde(default)]
    series: Option<String>,
    #[serde(default)]
    quote: Option<String>,
    hw: String,
    target: String,
    tp: u64,
    weights: String,
    kv: String,
    batch: u64,
    ctx: u64,
    /// `"step_time"`, `"speedup"`, `"round_time"` or `"verify_ratio"`.
    quantity: String,
    #[serde(default)]
    draft: Option<DraftKind>,
    #[serde(default)]
    tau_assumed: bool,
    #[serde(default)]
    derived: bool,
    /// τ of a speedup row.
    #[serde(default)]
    acceptance_length: Option<f64>,
    /// Draft levels of a speedup row.
    #[serde(default)]
    gamma: Option<u64>,
    /// Draft tokens verified in one pass.
    #[serde(default)]
    tree_nodes: Option<u64>,
    published: Published,
    role: Role,
    /// The closed-loop benchmark of a step-time row, if its source states one.
    #[serde(default)]
    closed_loop: Option<ClosedLoop>,
}

impl Row {
    fn resolve(self) -> Result<Measurement, String> {
        let hw = *hw_specs::accelerator(&self.hw).map_err(|e| e.to_string())?;
        let target = *llm_math::model(&self.target).map_err(|e| e.to_string())?;
        let weights: WeightDtype = self.weights.parse().map_err(|e| format!("{e}"))?;
        let kv: KvDtype = self.kv.parse().map_err(|e| format!("{e}"))?;
        let engine = engine_name(&self.engine).map_err(|e| e.to_string())?;
        let quantity = match (
            self.quantity.as_str(),
            self.acceptance_length,
            self.gamma,
            self.tree_nodes,
        ) {
            ("step_time", None, None, None) => Quantity::StepTime,
            ("speedup", Some(tau), Some(depth), Some(nodes)) if tau >= 1.0 && depth >= 1 => {
                Quantity::Speedup { tau, depth, nodes }
            }
            ("round_time", None, Some(depth), Some(nodes)) if depth >= 1 => {
                Quantity::RoundTime { depth, nodes }
            }
            ("verify_ratio", None, Some(_), Some(nodes)) => Quantity::VerifyRatio { nodes },
            (q, ..) => {
                return Err(format!(
                    "quantity \"{q}\" needs acceptance_length ≥ 1, gamma ≥ 1 and tree_nodes \
                     for a speedup, gamma ≥ 1 and tree_nodes for a round_time or a \
                     verify_ratio, none of them for a step_time"
                ));
            }
        };
        if !self.published.is_finite_positive() {
            return Err("published figures must be finite and > 0".into());
        }
        if self.tp == 0 || self.batch == 0 || self.ctx == 0 {
            return Err("tp, batch and ctx must be ≥ 1".into());
        }
        match (self.closed_loop, quantity) {
            (None, _) => {}
            (Some(c), Quantity::StepTime) if c.input >= 1 && c.output >= 1 => {}
            (Some(_), _) => {
                return Err(
                    "closed_loop belongs to a step_time row, with input and output ≥ 1".into(),
                );
            }
        }
        Ok(Measurement {
            id: self.id,
            publisher: self.publisher,
            series: self.series,
            quote: self.quote,
            draft: self.draft,
            tau_assumed: self.tau_assumed,
            derived: self.derived,
            source: self.source,
            url: self.url,
            setup: self.setup,
            engine,
            hw,
            target,
            tp: self.tp,
            weights,
            kv,
            batch: self.batch,
            ctx: self.ctx,
            quantity,
            published: self.published,
            role: self.role,
            closed_loop: self.closed_loop,
        })
    }
}

/// Parses a measurements file (a JSON array of rows; see `data/measurements.json`).
///
/// Errors: malformed JSON or a missing field (with the line and column), an unknown card,
/// model or dtype, a speedup row without its round, or a duplicate id — each naming the
/// row it is in.
pub fn parse_measurements(text: &str) -> Result<Vec<Measurement>, Error> {
    let rows: Vec<Row> = serde_json::from_str(text)
        .map_err(|e| Error::Argument(format!("measurements file: {e}")))?;
    let mut out: Vec<Measurement> = Vec::with_capacity(rows.len());
    for (i, row) in rows.into_iter().enumerate() {
        let id = row.id.clone();
        let m = row
            .resolve()
            .map_err(|e| Error::Argument(format!("measurements file, row {i} ({id}): {e}")))?;
        if out.iter().any(|o| o.id == m.id) {
            return Err(Error::Argument(format!(
                "measurements file, row {i}: duplicate id {id}"
            )));
        }
        out.push(m);
    }
    Ok(out)
}

static DATA: &str = include_str!("../../data/measurements.json");
static MEASUREMENTS: Lazy<Result<Vec<Measurement>, Error>> = Lazy::new(|| parse_measurements(DATA));

/// The published measurements, in the order of `docs/validation.md`, parsed once from
/// the embedded data file.
///
/// Errors: the embedded file does not parse (a test checks it does).
pub fn measurements() -> Result<&'static [Measurement], Error> {
    MEASUREMENTS
        .as_ref()
        .map(Vec::as_slice)
        .map_err(Clone::clone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_file_parses_and_has_enough_independent_sources() {
        let ms = measurements().unwrap();
        assert!(ms.len() >= 8);
        // NVIDIA (NIM docs and blog), SGLang, vLLM, the EAGLE repository.
        for org in ["nvidia.com", "sglang", "vllm-project", "SafeAILab"] {
            assert!(ms.iter().any(|m| m.url.contains(org)), "{org}");
        }
        let cal = ms.iter().filter(|m| m.role == Role::Calibration).count();
        assert!(cal >= 3 && ms.len() - cal >= 5);
    }

    /// The split rule of `docs/validation.md`, written before the fit: rows M1–M13 keep
    /// their roles; after them, within each (publisher, series) — rows without a series
    /// form their publisher's own group — the rows alternate in file order, calibration
    /// first.
    #[test]
    fn roles_follow_the_split_rule_written_before_the_fit() {
        let ms = measurements().unwrap();
        let mut seen: Vec<(&str, Option<&str>, usize)> = Vec::new();
        for m in &ms[super::super::FITTED_ROWS..] {
            let key = (m.publisher.as_str(), m.series.as_deref());
            let n = match seen.iter_mut().find(|(p, s, _)| (*p, *s) == key) {
                Some(e) => {
                    e.2 += 1;
                    e.2
                }
                None => {
                    seen.push((key.0, key.1, 0));
                    0
                }
            };
            let want = if n % 2 == 0 {
                Role::Calibration
            } else {
                Role::HeldOut
            };
            assert_eq!(m.role, want, "{}", m.id);
        }
    }

    #[test]
    fn the_first_row_reads_as_its_source_prints_it() {
        let m1 = &measurements().unwrap()[0];
        assert_eq!(m1.id, "M1");
        assert_eq!(m1.hw, hw_specs::H100);
        assert_eq!(m1.target, llm_math::LLAMA31_8B);
        assert_eq!((m1.tp, m1.batch, m1.ctx), (1, 1, 512));
        assert_eq!(m1.published, Published::TokensPerSecond(158.34));
        assert_eq!(m1.role, Role::Calibration);
    }

    fn one_row(patch: &str) -> String {
        let base = r#"{"id": "X1", "publisher": "p", "source": "s", "url": "u", "setup": "t", "engine": "vllm", "hw": "H100",
            "target": "Llama-3.1-8B", "tp": 1, "weights": "bf16", "kv": "bf16", "batch": 1,
            "ctx": 512, "quantity": "step_time", "published": {"itl_ms": 7.0},
            "role": "held_out""#;
        format!("[{base}{patch}}}]")
    }

    #[test]
    fn a_bad_file_is_a_clear_error() {
        assert_eq!(parse_measurements(&one_row("")).unwrap().len(), 1);
        let err = |text: &str| parse_measurements(text).unwrap_err().to_string();
        assert!(err("[{").contains("measurements file"), "{}", err("[{"));
        let e = err(&one_row(r#", "gamma": 3"#));
        assert!(e.contains("row 0 (X1)") && e.contains("step_time"), "{e}");
        let e = err(&one_row(r#", "typo": 3"#));
        assert!(e.contains("typo"), "{e}");
        let e = err(&one_row("").replace("H100", "H999"));
        assert!(e.contains("X1") && e.contains("H999"), "{e}");
        let e = err(&one_row("").replace("7.0", "-7.0"));
        assert!(e.contains("> 0"), "{e}");
        let e = err(&one_row(r#", "closed_loop": {"input": 0, "output": 5}"#));
        assert!(e.contains("closed_loop"), "{e}");
        let e = err(&one_row("").replace("vllm", "magic"));
        assert!(e.contains("X1") && e.contains("unknown engine"), "{e}");
        let two = one_row("").replace("}]", "},") + &one_row("")[1..];
        assert!(err(&two).contains("duplicate id X1"), "{}", err(&two));
    }

    #[test]
    fn published_figures_convert_to_model_units_by_hand() {
        assert!((Published::TokensPerSecond(158.34).measured() - 6.3155e-3).abs() < 1e-7);
        assert_eq!(Published::ItlMs(18.58).measured(), 0.01858);
        let s = Published::ThroughputPair {
            with: 234.54,
            without: 88.61,
        };
        assert!((s.measured() - 2.6469).abs() < 1e-4);
        let t = Published::TpotPair {
            with: 4.05,
            without: 7.07,
        };
        assert!((t.measured() - 1.7457).abs() < 1e-4);
    }

    #[test]
    fn every_setup_is_valid_and_every_prediction_finite() {
        for m in measurements().unwrap() {
            for p in super::super::CALIBRATIONS {
                let s = m.scenario(p);
                assert_eq!(s.validate(), Ok(()), "{}", m.id);
                assert_eq!(m.plan(p).check(&s), Ok(()), "{}", m.id);
                let x = m.predict(p).unwrap();
                assert!(x.is_finite() && x > 0.0, "{} {}", m.id, p.name);
            }
        }
    }

    /// M66 under the seed profile, by hand: 70B in FP8 on two H100s, 85 sequences at
    /// context 5250 with FP8 KV (163,840 B a token), and 84 · 10 = 840 prompt tokens at a
    /// prefix of 2500 in the same pass. Per card: FLOPs (2 · 69,503,033,344 · 925 + 4 ·
    /// 655,360 · (5250 · 85 + 2500 · 840)) / 2 = 6.7628e13 at 60% of 1979 TFLOP/s, 56.954
    /// ms; bytes 69,503,033,344 / 2 + (85 · 5250 + 85 + 2500 + 840) · 163,840 / 2 at 80%
    /// of 3.35 TB/s, 26.712 ms; compute sets it; 160 all-reduces of 925 · 8192 · 2 B over
    /// 450 GB/s, 5.389 ms; and 1 ms: 63.343 ms. Without the prompt tokens it would be
    /// the plain decode step.
    #[test]
    fn a_closed_loop_step_carries_the_replacing_prompts_by_hand() {
        let m66 = measurements()
            .unwrap()
            .iter()
            .find(|m| m.id == "M66")
            .unwrap();
        assert_eq!(
            m66.prefill(),
            Prefill {
                tokens: 840,
                ctx: 2500
            }
        );
        let p = 69_503_033_344.0;
        let flops = (2.0 * p * 925.0 + 4.0 * 655_360.0 * (5250.0 * 85.0 + 2500.0 * 840.0)) / 2.0;
        let bytes = p / 2.0 + (85.0 * 5250.0 + 85.0 + 2500.0 + 840.0) * 163_840.0 / 2.0;
        let compute = flops / (1979e12 * 0.6);
        assert!(compute > bytes / (3.35e12 * 0.8));
        let comm = 160.0 * 925.0 * 8192.0 * 2.0 / 450e9;
        let by_hand = compute + comm + 1e-3;
        let seed = m66.predict(&super::super::SEED).unwrap();
        assert!((seed - by_hand).abs() < 1e-12, "{seed} vs {by_hand}");
        assert!((by_hand - 63.343e-3).abs() < 1e-6, "{by_hand}");
        let s = m66.scenario(&super::super::SEED);
        assert_eq!(
            step_time_with_prefill(&s, &Plan::SEED, Prefill::NONE).unwrap(),
            decode_lab::target_pass_time(&s, 1).unwrap()
        );
        // A row of no closed loop, or at batch 1, carries none.
        assert_eq!(measurements().unwrap()[0].prefill(), Prefill::NONE);
        let one = ClosedLoop {
            input: 5000,
            output: 500,
        };
        assert_eq!(one.prefill_per_step(1), Prefill::NONE);
    }

    /// M1 under the seed profile, by hand: 8B on one H100 at batch 1, context 512:
    /// (2 · 7,504,924,672 + 513 · 131,072) B / (3.35e12 · 0.8) + 1 ms = 6.6258 ms.
    #[test]
    fn the_seed_prediction_of_m1_is_the_lecture_roofline() {
        let m1 = &measurements().unwrap()[0];
        let bytes = 2.0 * 7_504_924_672.0 + 513.0 * 131_072.0;
        let by_hand = bytes / (3.35e12 * 0.8) + 1e-3;
        assert!((m1.predict(&super::super::SEED).unwrap() - by_hand).abs() < 1e-15);
        assert!((by_hand - 6.6258e-3).abs() < 1e-7, "{by_hand}");
    }
}
