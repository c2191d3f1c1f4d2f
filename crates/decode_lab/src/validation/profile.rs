//! Named profiles of the roofline's free constants: the seed's assumptions and the
//! profile fitted on published measurements ([`super::fit_calibration`]).

use crate::{Error, Scenario};
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
    /// Extra cost per verified token beyond the first, fraction of a plain step
    /// ([`Scenario::verify_cost_per_token`]).
    pub verify_cost_per_token: f64,
    /// Fixed cost of one tensor-parallel all-reduce, seconds
    /// ([`Deployment::all_reduce_latency`]).
    pub all_reduce_latency: f64,
}

/// Lecture 6's assumptions, as the seed script states them.
/// Read from [`Scenario::LECTURE`], the one default setup.
pub const SEED: Calibration = Calibration {
    name: "seed",
    compute_efficiency: Scenario::LECTURE.deployment.compute_efficiency,
    bandwidth_efficiency: Scenario::LECTURE.deployment.bandwidth_efficiency,
    overhead_target: Scenario::LECTURE.overhead_target,
    overhead_draft: Scenario::LECTURE.overhead_draft,
    verify_cost_per_token: Scenario::LECTURE.verify_cost_per_token,
    all_reduce_latency: Scenario::LECTURE.deployment.all_reduce_latency,
};

/// The constants [`super::fit_calibration`] finds on the calibration subset (a test
/// recomputes them): grid points of [`super::FIT_GRID`], so the equality is exact.
pub const FITTED: Calibration = Calibration {
    name: "fitted",
    compute_efficiency: Scenario::LECTURE.deployment.compute_efficiency,
    // Written as the grid computes them (step × index), so they compare equal.
    bandwidth_efficiency: 74.0 / 100.0,
    overhead_target: 5.0 * 0.05e-3,
    overhead_draft: 53.0 * 0.01e-3,
    verify_cost_per_token: 4.0 * 0.0025,
    all_reduce_latency: 50.0 * 0.5e-6,
};

/// Every named profile, in the order a `--list` would show them.
pub const CALIBRATIONS: &[Calibration] = &[SEED, FITTED];

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
    /// `s` with this profile's constants in place of its own (card, models, batch,
    /// context, tensor parallelism and dtypes are kept).
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
            verify_cost_per_token: self.verify_cost_per_token,
            ..s
        }
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
        assert!(e.contains("seed, fitted"), "{e}");
    }

    #[test]
    fn the_seed_profile_applied_to_the_lecture_scenario_changes_nothing() {
        assert_eq!(SEED.apply(Scenario::LECTURE), Scenario::LECTURE);
        // And it is the seed script's figures, by hand.
        assert_eq!(
            (SEED.compute_efficiency, SEED.bandwidth_efficiency),
            (0.6, 0.8)
        );
        assert_eq!((SEED.overhead_target, SEED.overhead_draft), (1e-3, 0.3e-3));
    }
}
