//! Every measurement's predictions under the profiles, and the median and worst ratio
//! (prediction / measurement) of each profile on each subset.

use super::{FITTED, Measurement, Role, SEED, measurements};
use crate::Error;

/// One row of the validation table: a measurement and both profiles' predictions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    /// The measurement.
    pub measurement: &'static Measurement,
    /// The measured figure in model units (seconds per step, or ×).
    pub measured: f64,
    /// [`SEED`]'s prediction, same units.
    pub seed: f64,
    /// [`FITTED`]'s prediction, same units.
    pub fitted: f64,
}

impl Prediction {
    /// `seed / measured`.
    pub fn seed_ratio(&self) -> f64 {
        self.seed / self.measured
    }

    /// `fitted / measured`.
    pub fn fitted_ratio(&self) -> f64 {
        self.fitted / self.measured
    }
}

/// Computes every row of [`measurements`] under [`SEED`] and [`FITTED`].
///
/// Errors: a setup the roofline rejects (a test checks none does).
pub fn predictions() -> Result<Vec<Prediction>, Error> {
    measurements()?
        .iter()
        .map(|m| {
            Ok(Prediction {
                measurement: m,
                measured: m.published.measured(),
                seed: m.predict(&SEED)?,
                fitted: m.predict(&FITTED)?,
            })
        })
        .collect()
}

/// Median and worst of a set of prediction / measurement ratios.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioSummary {
    /// Rows summarised.
    pub count: usize,
    /// Median ratio (mean of the two middle ones for an even count).
    pub median: f64,
    /// The ratio farthest from 1 in the log sense (an over- or an under-prediction).
    pub worst: f64,
}

/// Summarises `ratios` (none may be empty or non-positive). Errors on an empty set.
pub fn summarize(ratios: &[f64]) -> Result<RatioSummary, Error> {
    if ratios.is_empty() || ratios.iter().any(|r| !(r.is_finite() && *r > 0.0)) {
        return Err(Error::Argument(
            "ratios to summarise must be a non-empty set of finite numbers > 0".into(),
        ));
    }
    let mut sorted = ratios.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    };
    let worst =
        sorted.iter().copied().fold(
            1.0_f64,
            |w, r| if r.ln().abs() > w.ln().abs() { r } else { w },
        );
    Ok(RatioSummary {
        count: n,
        median,
        worst,
    })
}

/// The error of one profile on both subsets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProfileSummary {
    /// Profile name.
    pub profile: &'static str,
    /// On the measurements used to fit [`FITTED`].
    pub calibration: RatioSummary,
    /// On the rest.
    pub held_out: RatioSummary,
}

/// Median and worst ratio of each profile on the calibration subset and the held-out rest.
///
/// Errors: a subset is empty.
pub fn summary(rows: &[Prediction]) -> Result<[ProfileSummary; 2], Error> {
    let pick = |role: Role, f: fn(&Prediction) -> f64| -> Vec<f64> {
        rows.iter()
            .filter(|p| p.measurement.role == role)
            .map(f)
            .collect()
    };
    let of = |name, f: fn(&Prediction) -> f64| -> Result<ProfileSummary, Error> {
        Ok(ProfileSummary {
            profile: name,
            calibration: summarize(&pick(Role::Calibration, f))?,
            held_out: summarize(&pick(Role::HeldOut, f))?,
        })
    };
    Ok([
        of(SEED.name, Prediction::seed_ratio)?,
        of(FITTED.name, Prediction::fitted_ratio)?,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fitted_profile_does_better_than_the_seed_on_the_calibration_rows() {
        let rows = predictions().unwrap();
        let [seed, fitted] = summary(&rows).unwrap();
        let off = |r: RatioSummary| r.worst.ln().abs();
        assert!(off(fitted.calibration) < off(seed.calibration));
    }

    #[test]
    fn summaries_take_the_median_and_the_ratio_farthest_from_one() {
        let s = summarize(&[1.1, 0.5, 1.3]).unwrap();
        assert_eq!((s.count, s.median, s.worst), (3, 1.1, 0.5));
        let s = summarize(&[1.0, 1.2, 3.0, 0.9]).unwrap();
        assert_eq!((s.median, s.worst), (1.1, 3.0));
        assert!(summarize(&[]).is_err());
        assert!(summarize(&[1.0, 0.0]).is_err());
        assert!(summarize(&[f64::NAN]).is_err());
    }
}
