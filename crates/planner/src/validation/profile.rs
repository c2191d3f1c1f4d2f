//! Named profiles of the roofline's free constants: the seed's assumptions, the profile
//! fitted on the first published measurements ([`super::fit_calibration`]), and the
//! profile with every cost term fitted on all calibration rows ([`super::fit_measured()`]).

use crate::{CostTerms, DtypeEfficiency, Error, Plan, Prefill, verify_time_per_token};
use decode_lab::Scenario;
use llm_math::Deployment;

/// A named set of the roofline's free constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// Name a command line selects it by (`--calibration NAME`).
    pub name: &'static str,
    /// Fraction of peak FLOP/s reached.
    pub compute_efficiency: f64,
    /// Fraction of peak memory bandwidth reached.
    pub bandwidth_efficiency: f64,
    /// Fixed cost of a target pass, seconds.
    pub overhead_target: f64,
    /// Fixed cost of a draft step, seconds.
    pub overhead_draft: f64,
    /// Fixed cost of one tensor-parallel all-reduce, seconds
    /// ([`Deployment::all_reduce_latency`]).
    pub all_reduce_latency: f64,
    /// The cost terms the seed leaves out ([`CostTerms`]); its `verify_per_batch_token`
    /// is replaced by the scenario's own figure when `verify_efficiency` is set.
    pub cost_terms: CostTerms,
    /// Fraction of the weights' dtype peak at which each extra verified token of the
    /// batch is multiplied by the target's weights on each card
    /// ([`verify_time_per_token`] of `n_params / tp`; times the FP8 compute factor for
    /// FP8 weights), or `None` to keep `cost_terms.verify_per_batch_token` as it is.
    pub verify_efficiency: Option<f64>,
}

/// Lecture 6's assumptions, as the seed script states them.
/// Read from [`Scenario::LECTURE`], the one default setup.
pub const SEED: Calibration = Calibration {
    name: "seed",
    compute_efficiency: Scenario::LECTURE.deployment.compute_efficiency,
    bandwidth_efficiency: Scenario::LECTURE.deployment.bandwidth_efficiency,
    overhead_target: Scenario::LECTURE.overhead_target,
    overhead_draft: Scenario::LECTURE.overhead_draft,
    all_reduce_latency: Scenario::LECTURE.deployment.all_reduce_latency,
    cost_terms: Plan::SEED.terms,
    verify_efficiency: None,
};

/// The constants [`super::fit_calibration`] finds on the calibration subset (a test
/// recomputes them): grid points of [`super::FIT_GRID`], so the equality is exact.
pub const FITTED: Calibration = Calibration {
    name: "fitted",
    compute_efficiency: Scenario::LECTURE.deployment.compute_efficiency,
    // Written as the grid computes them (step × index), so they compare equal.
    bandwidth_efficiency: 77.0 / 100.0,
    overhead_target: 9.0 * 0.05e-3,
    overhead_draft: 54.0 * 0.01e-3,
    all_reduce_latency: 51.0 * 0.5e-6,
    cost_terms: CostTerms {
        verify_cost_per_token: 4.0 * 0.0025,
        ..CostTerms::NEUTRAL
    },
    verify_efficiency: None,
};

/// The constants [`super::fit_measured()`] finds on every calibration row (a test recomputes
/// them), written as grid index × step ([`super::MEASURED_GRID`]) so the equality is
/// exact: the seed's model plus every cost term of [`CostTerms`] that a row constrains.
pub const MEASURED: Calibration = Calibration {
    name: "measured",
    compute_efficiency: 30.0 * 0.02,
    bandwidth_efficiency: 86.0 * 0.01,
    overhead_target: 42.0 * 0.05e-3,
    overhead_draft: 30.0 * 0.02e-3,
    all_reduce_latency: 0.0,
    cost_terms: CostTerms {
        overlap: 13.0 * 0.05,
        verify_per_batch_token: 0.0,
        round_fixed: 0.0 * 0.05e-3,
        round_per_sequence: 18.0 * 0.005e-3,
        draft_per_layer: 0.0,
        per_sequence_layer: 14.0 * 0.05e-6,
        fp8: DtypeEfficiency {
            bandwidth: 89.0 * 0.01,
            compute: 16.0 * 0.05,
        },
        all_reduce: crate::AllReduceLatencies {
            nvlink: 10.0 * 1e-6,
            infinity_fabric: 43.0 * 2e-6,
            pcie: 0.0,
            ethernet: 0.0 * 2e-6,
        },
        w8a16_bandwidth: 65.0 * 0.01,
        int4_dequant_ops: 43.0 * 0.25,
        expert_latency: 28.0 * 0.1e-6,
        verify_cost_per_token: 0.0,
    },
    verify_efficiency: Some(44.0 * 0.02),
};

/// Every named profile, in the order a `--list` would show them.
pub const CALIBRATIONS: &[Calibration] = &[SEED, FITTED, MEASURED];

/// Looks a profile up by name (case-insensitive).
///
/// Errors: an unknown name, with the list of known ones.
pub fn calibration(name: &str) -> Result<&'static Calibration, Error> {
    CALIBRATIONS
        .iter()
        .find(|c| c.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            let names: Vec<&str> = CALIBRATIONS.iter().map(|c| c.name).collect();
            Error::Argument(format!(
                "unknown calibration \"{name}\"; choose one of: {}",
                names.join(", ")
            ))
        })
}

impl Calibration {
    /// `s` with this profile's constants in place of its own: efficiencies, overheads and
    /// the all-reduce latency (card, models, batch, context, tensor parallelism and dtypes
    /// are kept). Its cost terms price the scenario's passes: [`Calibration::plan`].
    pub fn apply(&self, s: Scenario) -> Scenario {
        Scenario {
            deployment: Deployment {
                compute_efficiency: self.compute_efficiency,
                bandwidth_efficiency: self.bandwidth_efficiency,
                all_reduce_latency: self.all_reduce_latency,
                ..s.deployment
            },
            overhead_target: self.overhead_target,
            overhead_draft: self.overhead_draft,
            ..s
        }
    }

    /// The plan that prices `s`'s passes under this profile: its cost terms, with the
    /// verification cost per token of the batch computed for `s` when `verify_efficiency`
    /// is set ([`Calibration::verify_per_batch_token`] at the profile's own FP8 factors);
    /// no prompt tokens.
    pub fn plan(&self, s: &Scenario) -> Plan {
        let mut terms = self.cost_terms;
        if let Some(v) = self.verify_per_batch_token(s, terms.fp8) {
            terms.verify_per_batch_token = v;
        }
        Plan {
            terms,
            prefill: Prefill::NONE,
        }
    }

    /// The verification cost per token of the batch that this profile computes for `s`'s
    /// target, card, `tp` and weights, at the FP8 compute factor `fp8` (which applies to
    /// verification as to every FP8 pass: [`Calibration::plan`] asks with the profile's
    /// own, a caller that changes the factor asks again with its own): `None` when the
    /// profile fixes the cost instead (no `verify_efficiency`). A bad efficiency gives a
    /// NaN that the plan's checks refuse.
    pub fn verify_per_batch_token(&self, s: &Scenario, fp8: DtypeEfficiency) -> Option<f64> {
        let eta = self.verify_efficiency?;
        let dep = &s.deployment;
        let (_, eta) = fp8
            .apply(dep.weights, 1.0, eta)
            .unwrap_or((f64::NAN, f64::NAN));
        let per_card = s.target.active_params() as f64 / dep.tp.max(1) as f64;
        Some(verify_time_per_token(per_card, &s.hw, dep.weights, eta).unwrap_or(f64::NAN))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibrations_are_found_by_name() {
        assert_eq!(calibration("Fitted").unwrap(), &FITTED);
        assert_eq!(calibration("seed").unwrap(), &SEED);
        let e = calibration("magic").unwrap_err().to_string();
        assert!(e.contains("seed, fitted, measured"), "{e}");
        assert_eq!(calibration("MEASURED").unwrap(), &MEASURED);
    }

    #[test]
    fn the_seed_profile_applied_to_the_lecture_scenario_changes_nothing() {
        assert_eq!(SEED.apply(Scenario::LECTURE), Scenario::LECTURE);
        assert_eq!(SEED.plan(&Scenario::LECTURE), Plan::SEED);
        // And it is the seed script's figures, by hand.
        assert_eq!(
            (SEED.compute_efficiency, SEED.bandwidth_efficiency),
            (0.6, 0.8)
        );
        assert_eq!((SEED.overhead_target, SEED.overhead_draft), (1e-3, 0.3e-3));
    }
}
