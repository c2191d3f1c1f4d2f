//! The fit's fast path for plain steps: a step row's FLOPs and bytes do not depend on the
//! profile, only the rates they are divided by and the fixed terms added to them, so a
//! fit computes them once per row ([`FitRows::new`]) and each trial profile costs a few
//! divisions. Every other row is predicted by [`Measurement::predict`]. A test holds the
//! fast path equal, bit for bit, to [`Measurement::predict`].

use super::{Calibration, Measurement, Quantity};
use crate::{
    Error, Plan, dequant_time, expert_reads, overlapped_time, quantized_weights_per_card,
    sequence_layer_time, with_cost_terms,
};
use hw_specs::Accelerator;
use llm_math::{Deployment, ModelConfig, WeightDtype, all_reduce_time};

/// What a plain step's time is made of, before a profile's rates and fixed terms.
#[derive(Debug, Clone, Copy, PartialEq)]
struct StepParts {
    hw: Accelerator,
    target: ModelConfig,
    weights: WeightDtype,
    tp: u64,
    batch: u64,
    /// Tokens through the weights (decode and prompt): what the all-reduces carry.
    tokens: u64,
    flops: f64,
    bytes: f64,
    /// Routed experts read per pass over all layers (the expert time at 1 s per expert).
    expert_reads: f64,
    /// Quantized weights one card reads in the pass, for an INT4 row (what
    /// [`dequant_time`] prices; it prices nothing for other formats, so they skip it).
    int4_weights_read: Option<f64>,
}

impl StepParts {
    /// The parts of `m`'s step, or `None` for a row that is not a plain step.
    fn of(m: &Measurement, profile: &Calibration) -> Result<Option<StepParts>, Error> {
        if m.quantity != Quantity::StepTime {
            return Ok(None);
        }
        let s = m.scenario(profile);
        let plan = Plan {
            prefill: m.prefill(),
            ..m.plan(profile)
        };
        let cost = plan.target_pass_cost(&s, 1)?;
        cost.checked_time()?;
        let tokens = s.batch + plan.prefill.tokens;
        Ok(Some(StepParts {
            hw: s.hw,
            target: s.target,
            weights: s.deployment.weights,
            tp: s.deployment.tp,
            batch: s.batch,
            tokens,
            flops: cost.flops,
            bytes: cost.bytes,
            expert_reads: expert_reads(&s.target, tokens)?,
            int4_weights_read: match s.deployment.weights {
                WeightDtype::Int4 => Some(quantized_weights_per_card(
                    &s.target,
                    s.deployment.tp,
                    tokens,
                )?),
                _ => None,
            },
        }))
    }

    /// The step's time under `c`, seconds: as the row's [`Plan`] under `c` computes it.
    fn time(&self, c: &Calibration) -> Result<f64, Error> {
        let t = &c.cost_terms;
        let profile = Deployment {
            tp: self.tp,
            weights: self.weights,
            compute_efficiency: c.compute_efficiency,
            bandwidth_efficiency: c.bandwidth_efficiency,
            all_reduce_latency: c.all_reduce_latency,
            ..Deployment::LECTURE
        };
        let dep = with_cost_terms(profile, t, &self.hw)?;
        let compute = self.flops / (self.weights.peak_flops(&self.hw) * dep.compute_efficiency);
        let memory = self.bytes / (self.hw.hbm_bandwidth * dep.bandwidth_efficiency);
        let comm = all_reduce_time(&self.target, &self.hw, self.tokens, &dep);
        let expert = match self.target.moe {
            Some(_) if t.expert_latency > 0.0 => self.expert_reads * t.expert_latency,
            _ => 0.0,
        };
        let per_sequence =
            sequence_layer_time(t.per_sequence_layer, self.batch, self.target.n_layers)?;
        let dequant = match self.int4_weights_read {
            Some(read) => dequant_time(read, &self.hw, self.weights, t.int4_dequant_ops)?,
            None => 0.0,
        };
        Ok(overlapped_time(compute, memory, t.overlap)?
            + comm
            + expert
            + c.overhead_target
            + per_sequence
            + dequant)
    }
}

/// Rows prepared for a fit: each row's figure, its weight, and a plain step's parts.
///
/// Each publisher weighs the same in the loss, however many rows it published (a row
/// weighs one over its publisher's rows in the set): a table of sixty rows from one
/// benchmark is one benchmark's habits (how it counts a token, the context it reaches),
/// and would otherwise outvote every other publisher.
#[derive(Debug, Clone)]
pub struct FitRows<'a> {
    rows: Vec<(&'a Measurement, f64, Option<StepParts>)>,
    weights: Vec<f64>,
}

/// One over the number of rows of each row's publisher in `rows`.
fn publisher_weights(rows: &[(&Measurement, f64, Option<StepParts>)]) -> Vec<f64> {
    rows.iter()
        .map(|(m, ..)| {
            let n = rows
                .iter()
                .filter(|(o, ..)| o.publisher == m.publisher)
                .count();
            1.0 / n as f64
        })
        .collect()
}

impl<'a> FitRows<'a> {
    /// `rows`, with each plain step's parts computed once (at the seed's constants: the
    /// parts do not depend on them).
    ///
    /// Errors: a setup the roofline rejects.
    pub fn new(rows: &[&'a Measurement]) -> Result<FitRows<'a>, Error> {
        let rows = rows
            .iter()
            .map(|&m| Ok((m, m.published.measured(), StepParts::of(m, &super::SEED)?)))
            .collect::<Result<Vec<_>, Error>>()?;
        let weights = publisher_weights(&rows);
        Ok(FitRows { rows, weights })
    }

    /// The rows kept by `keep`, parts and all.
    pub fn filter(&self, keep: impl Fn(&Measurement) -> bool) -> FitRows<'a> {
        let rows: Vec<_> = self.rows.iter().copied().filter(|r| keep(r.0)).collect();
        let weights = publisher_weights(&rows);
        FitRows { rows, weights }
    }

    /// The rows `own` keeps, each of their publishers weighing one (as in
    /// [`FitRows::filter`]), and every other row as a prior: the other publishers together
    /// weigh `prior` publishers, each of the `n` weighing `prior / n` (its rows sharing
    /// that). A fit on these is drawn toward what the other rows prefer, the more so the
    /// fewer publishers `own` keeps ([`super::engine_profile_on`]).
    ///
    /// Errors: a `prior` that is negative or not finite.
    pub fn shrunk_toward_the_rest(
        &self,
        own: impl Fn(&Measurement) -> bool,
        prior: f64,
    ) -> Result<FitRows<'a>, Error> {
        if !(prior.is_finite() && prior >= 0.0) {
            return Err(Error::Argument(format!(
                "the prior weighs {prior} publishers; it must be a finite number ≥ 0"
            )));
        }
        let (mine, rest): (Vec<_>, Vec<_>) = self.rows.iter().copied().partition(|r| own(r.0));
        let rest_weights = publisher_weights(&rest);
        let rest_publishers: f64 = rest_weights.iter().sum();
        let scale = if rest_publishers > 0.0 {
            prior / rest_publishers
        } else {
            0.0
        };
        let weights = publisher_weights(&mine)
            .into_iter()
            .chain(rest_weights.into_iter().map(|w| w * scale))
            .collect();
        let rows = mine.into_iter().chain(rest).collect();
        Ok(FitRows { rows, weights })
    }

    /// How many publishers the rows come from.
    pub fn publishers(&self) -> usize {
        let mut p: Vec<&str> = self
            .rows
            .iter()
            .map(|(m, ..)| m.publisher.as_str())
            .collect();
        p.sort_unstable();
        p.dedup();
        p.len()
    }

    /// How many rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Sum of squared log ratios (prediction / measurement) of `c` over the rows, each
    /// times its weight (one over its publisher's rows); infinite
    /// when a constant is out of its range (a zero efficiency or factor).
    ///
    /// Errors: a setup the roofline rejects.
    pub fn loss(&self, c: &Calibration) -> Result<f64, Error> {
        if c.bandwidth_efficiency <= 0.0
            || c.compute_efficiency <= 0.0
            || c.cost_terms.fp8.bandwidth <= 0.0
            || c.cost_terms.fp8.compute <= 0.0
            || c.cost_terms.w8a16_bandwidth <= 0.0
        {
            return Ok(f64::INFINITY);
        }
        c.cost_terms.check()?;
        let mut sum = 0.0;
        for ((m, measured, parts), w) in self.rows.iter().zip(&self.weights) {
            let predicted = match parts {
                Some(p) => p.time(c)?,
                None => m.predict(c)?,
            };
            let r = predicted / measured;
            sum += w * r.ln() * r.ln();
        }
        Ok(sum)
    }
}

/// The fast path's check: a step row's time under `c` by [`StepParts`], for the test.
#[cfg(test)]
fn fast_step(m: &Measurement, c: &Calibration) -> Option<f64> {
    StepParts::of(m, &super::SEED)
        .unwrap()
        .map(|p| p.time(c).unwrap())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validation::{CALIBRATIONS, engine_profiles, measurements};

    /// Rows shrunk toward the rest weigh as their own fit plus the rest's, the rest scaled
    /// to `prior` publishers: the loss is the sum of the two losses, each publisher of
    /// the rest weighing `prior` over their number.
    #[test]
    fn the_rest_weighs_as_many_publishers_as_the_prior_says() {
        let ms: Vec<&Measurement> = measurements().unwrap().iter().collect();
        let rows = FitRows::new(&ms).unwrap();
        let own = |m: &Measurement| m.engine == "sglang";
        let mine = rows.filter(own);
        let rest = rows.filter(|m| !own(m));
        for prior in [0.0, 0.5, 1.0, 3.0] {
            let shrunk = rows.shrunk_toward_the_rest(own, prior).unwrap();
            assert_eq!(shrunk.len(), rows.len());
            for c in CALIBRATIONS {
                let expected = mine.loss(c).unwrap()
                    + prior / rest.publishers() as f64 * rest.loss(c).unwrap();
                let got = shrunk.loss(c).unwrap();
                assert!(
                    (got - expected).abs() <= 1e-12 * expected,
                    "{prior}: {got} vs {expected}"
                );
            }
        }
        for bad in [-1.0, f64::NAN, f64::INFINITY] {
            let e = rows
                .shrunk_toward_the_rest(own, bad)
                .unwrap_err()
                .to_string();
            assert!(e.contains("finite number ≥ 0"), "{e}");
        }
    }

    /// Bit for bit, under every named profile and every engine's: the fast path is the
    /// roofline's own step.
    #[test]
    fn the_fast_path_is_the_step_time_exactly() {
        let mut profiles: Vec<Calibration> = CALIBRATIONS.to_vec();
        profiles.extend(engine_profiles().unwrap().iter().map(|p| p.calibration));
        let mut steps = 0;
        for m in measurements().unwrap() {
            for c in &profiles {
                if let Some(t) = fast_step(m, c) {
                    assert_eq!(t, m.predict(c).unwrap(), "{} under {}", m.id, c.name);
                    steps += 1;
                }
            }
        }
        assert!(steps > 100, "{steps}");
    }

    /// INT4's dequantization counts the weights the pass reads, prompt tokens and routed
    /// experts included: the closed-loop MoE rows (which carry prompts) served in INT4 on
    /// their own cards, under the measured profile, equal on both paths.
    #[test]
    fn the_fast_path_prices_int4_dequantization_as_the_step_does() {
        let moe_with_prompts: Vec<Measurement> = measurements()
            .unwrap()
            .iter()
            .filter(|m| m.target.moe.is_some() && m.prefill().tokens > 0)
            .filter(|m| m.hw.peak_flops_fp32.is_some())
            .map(|m| Measurement {
                weights: WeightDtype::Int4,
                ..m.clone()
            })
            .collect();
        assert!(moe_with_prompts.len() >= 3, "{}", moe_with_prompts.len());
        let c = crate::validation::MEASURED;
        assert!(c.cost_terms.int4_dequant_ops > 0.0);
        for m in &moe_with_prompts {
            let fast = fast_step(m, &c).unwrap();
            assert_eq!(fast, m.predict(&c).unwrap(), "{}", m.id);
            let without = Calibration {
                cost_terms: crate::CostTerms {
                    int4_dequant_ops: 0.0,
                    ..c.cost_terms
                },
                ..c
            };
            assert!(fast > fast_step(m, &without).unwrap(), "{}", m.id);
        }
    }
}
