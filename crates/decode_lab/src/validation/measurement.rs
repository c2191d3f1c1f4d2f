//! Published measurements and the setup each was taken in: a data file
//! (`crates/decode_lab/data/measurements.json`) embedded in the crate and parsed once.

use crate::{Draft, Error, Scenario, TreeRound, target_pass_time, tree_speedup};
use hw_specs::Accelerator;
use llm_math::{Deployment, KvDtype, ModelConfig, WeightDtype};
use once_cell::sync::Lazy;
use serde::Deserialize;

use super::Calibration;

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
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
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
}

impl Published {
    /// The figure the model predicts: a step time in seconds, or a speedup.
    pub fn measured(&self) -> f64 {
        match *self {
            Published::TokensPerSecond(t) => 1.0 / t,
            Published::ItlMs(ms) => ms * 1e-3,
            Published::ThroughputPair { with, without } => with / without,
            Published::TpotPair { with, without } => without / with,
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
        }
    }

    fn is_finite_positive(&self) -> bool {
        let ok = |x: f64| x.is_finite() && x > 0.0;
        match *self {
            Published::TokensPerSecond(x) | Published::ItlMs(x) => ok(x),
            Published::ThroughputPair { with, without } | Published::TpotPair { with, without } => {
                ok(with) && ok(without)
            }
        }
    }
}

/// What the measurement measures, as the model computes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Quantity {
    /// One plain decode step of the target ([`target_pass_time`] with n = 1), seconds.
    StepTime,
    /// The speedup of a speculative round with a draft head and a measured acceptance
    /// length ([`tree_speedup`] with τ = the published acceptance length).
    Speedup(TreeRound),
}

/// One published measurement and the setup it was taken in.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// Short id used in the tables (M1, M2, …).
    pub id: String,
    /// Who published it, and where (title, table or comment).
    pub source: String,
    /// Its address.
    pub url: String,
    /// The setup in words, with every assumption this table adds.
    pub setup: String,
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
}

impl Measurement {
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

    /// What the model predicts under `profile`: seconds for a step, × for a speedup.
    ///
    /// Errors: whatever the roofline rejects for the setup (none of the table's do).
    pub fn predict(&self, profile: &Calibration) -> Result<f64, Error> {
        let s = self.scenario(profile);
        match self.quantity {
            Quantity::StepTime => target_pass_time(&s, 1),
            Quantity::Speedup(tree) => tree_speedup(&s, &tree),
        }
    }
}

/// One row of the data file, as written (names instead of cards and models).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    id: String,
    source: String,
    url: String,
    setup: String,
    hw: String,
    target: String,
    tp: u64,
    weights: String,
    kv: String,
    batch: u64,
    ctx: u64,
    /// `"step_time"` or `"speedup"`.
    quantity: String,
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
}

impl Row {
    fn resolve(self) -> Result<Measurement, String> {
        let hw = *hw_specs::accelerator(&self.hw).map_err(|e| e.to_string())?;
        let target = *llm_math::model(&self.target).map_err(|e| e.to_string())?;
        let weights: WeightDtype = self.weights.parse().map_err(|e| format!("{e}"))?;
        let kv: KvDtype = self.kv.parse().map_err(|e| format!("{e}"))?;
        let quantity = match (
            self.quantity.as_str(),
            self.acceptance_length,
            self.gamma,
            self.tree_nodes,
        ) {
            ("step_time", None, None, None) => Quantity::StepTime,
            ("speedup", Some(tau), Some(depth), Some(nodes)) if tau >= 1.0 && depth >= 1 => {
                Quantity::Speedup(TreeRound { tau, depth, nodes })
            }
            (q, ..) => {
                return Err(format!(
                    "quantity \"{q}\" needs acceptance_length ≥ 1, gamma ≥ 1 and tree_nodes \
                     for a speedup, none of them for a step_time"
                ));
            }
        };
        if !self.published.is_finite_positive() {
            return Err("published figures must be finite and > 0".into());
        }
        if self.tp == 0 || self.batch == 0 || self.ctx == 0 {
            return Err("tp, batch and ctx must be ≥ 1".into());
        }
        Ok(Measurement {
            id: self.id,
            source: self.source,
            url: self.url,
            setup: self.setup,
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
        let base = r#"{"id": "X1", "source": "s", "url": "u", "setup": "t", "hw": "H100",
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
                let x = m.predict(p).unwrap();
                assert!(x.is_finite() && x > 0.0, "{} {}", m.id, p.name);
            }
        }
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
