//! The grid search that fits a profile's constants on the calibration subset.

use super::{Calibration, Measurement, Quantity, Role, SEED, measurements};
use crate::{CostTerms, Error};

/// The grid [`fit_calibration`] searches: bandwidth efficiency 0.50–1.00 by 0.01; target
/// overhead 0–3 ms by 0.05 ms; all-reduce latency 0–30 µs by 0.5 µs; draft overhead
/// 0–1 ms by 0.01 ms; verification cost per extra token 0–0.2 by 0.0025.
pub const FIT_GRID: &str = "e_bw 0.50..=1.00 step 0.01; o_t 0..=3 ms step 0.05 ms; \
                            all-reduce 0..=30 µs step 0.5 µs; o_d 0..=1 ms step 0.01 ms; \
                            verify 0..=0.2 step 0.0025";

/// The rows [`fit_calibration`] was written for: the data file's first 13 (M1–M13); the
/// rows added after them fit [`super::MEASURED`] only, so [`super::FITTED`] stays put.
pub const FITTED_ROWS: usize = 13;

/// Fits [`super::FITTED`]'s constants on the [`Role::Calibration`] rows among the first
/// [`FITTED_ROWS`], minimising the
/// sum of squared log ratios (prediction / measurement) on a grid ([`FIT_GRID`]), in two
/// stages: bandwidth efficiency, target overhead and all-reduce latency on the step-time
/// rows; then draft overhead and verification cost per token on the speedup rows.
/// Compute efficiency stays at 0.6 (no calibration row is compute-bound).
///
/// Errors: a setup the roofline rejects, or the data file does not parse.
pub fn fit_calibration() -> Result<Calibration, Error> {
    let rows: Vec<&Measurement> = measurements()?
        .iter()
        .take(FITTED_ROWS)
        .filter(|m| m.role == Role::Calibration)
        .collect();
    let loss = |c: &Calibration, want_steps: bool| -> Result<f64, Error> {
        let mut sum = 0.0;
        for m in &rows {
            if matches!(m.quantity, Quantity::StepTime) != want_steps {
                continue;
            }
            let r = m.predict(c)? / m.published.measured();
            sum += r.ln() * r.ln();
        }
        Ok(sum)
    };
    let mut best = (f64::INFINITY, SEED);
    for bw in 50..=100 {
        for ot in 0..=60 {
            for ar in 0..=60 {
                let c = Calibration {
                    name: "fitted",
                    bandwidth_efficiency: f64::from(bw) / 100.0,
                    overhead_target: f64::from(ot) * 0.05e-3,
                    all_reduce_latency: f64::from(ar) * 0.5e-6,
                    ..SEED
                };
                let l = loss(&c, true)?;
                if l < best.0 {
                    best = (l, c);
                }
            }
        }
    }
    let stage1 = best.1;
    let mut best = (f64::INFINITY, stage1);
    for od in 0..=100 {
        for v in 0..=80 {
            let c = Calibration {
                overhead_draft: f64::from(od) * 0.01e-3,
                cost_terms: CostTerms {
                    verify_cost_per_token: f64::from(v) * 0.0025,
                    ..stage1.cost_terms
                },
                ..stage1
            };
            let l = loss(&c, false)?;
            if l < best.0 {
                best = (l, c);
            }
        }
    }
    Ok(best.1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validation::FITTED;

    #[test]
    fn the_fitted_profile_is_what_the_fit_finds_on_the_calibration_rows() {
        assert_eq!(fit_calibration().unwrap(), FITTED);
    }
}
