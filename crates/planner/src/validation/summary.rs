//! Every measurement's predictions under the profiles, the median and worst ratio
//! (prediction / measurement) of each profile on each subset and kind, and the batch
//! series of the data with the direction each one moves.

use super::{CALIBRATIONS, Kind, Measurement, Role, measurements};
use crate::Error;

/// How many profiles [`CALIBRATIONS`] holds (seed, fitted, measured).
pub const PROFILES: usize = 3;

/// One row of the validation table: a measurement and every profile's prediction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    /// The measurement.
    pub measurement: &'static Measurement,
    /// The measured figure in model units (seconds, a ratio, or ×).
    pub measured: f64,
    /// Each profile's prediction, same units, in [`CALIBRATIONS`] order.
    pub predicted: [f64; PROFILES],
}

impl Prediction {
    /// `predicted[profile] / measured`.
    pub fn ratio(&self, profile: usize) -> f64 {
        self.predicted[profile] / self.measured
    }
}

/// Computes every row of [`measurements`] under every profile of [`CALIBRATIONS`].
///
/// Errors: a setup the roofline rejects (a test checks none does).
pub fn predictions() -> Result<Vec<Prediction>, Error> {
    measurements()?
        .iter()
        .map(|m| {
            let mut predicted = [0.0; PROFILES];
            for (p, c) in predicted.iter_mut().zip(CALIBRATIONS) {
                *p = m.predict(c)?;
            }
            Ok(Prediction {
                measurement: m,
                measured: m.published.measured(),
                predicted,
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
    /// On the measurements marked [`Role::Calibration`].
    pub calibration: RatioSummary,
    /// On the rest.
    pub held_out: RatioSummary,
}

fn ratios(rows: &[Prediction], profile: usize, keep: impl Fn(&Measurement) -> bool) -> Vec<f64> {
    rows.iter()
        .filter(|p| keep(p.measurement))
        .map(|p| p.ratio(profile))
        .collect()
}

/// Median and worst ratio of each profile on the calibration subset and the held-out rest,
/// in [`CALIBRATIONS`] order.
///
/// Errors: a subset is empty.
pub fn summary(rows: &[Prediction]) -> Result<Vec<ProfileSummary>, Error> {
    CALIBRATIONS
        .iter()
        .enumerate()
        .map(|(i, c)| {
            Ok(ProfileSummary {
                profile: c.name,
                calibration: summarize(&ratios(rows, i, |m| m.role == Role::Calibration))?,
                held_out: summarize(&ratios(rows, i, |m| m.role == Role::HeldOut))?,
            })
        })
        .collect()
}

/// One profile on the rows of one kind and one role.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KindSummary {
    /// Profile name.
    pub profile: &'static str,
    /// What is measured.
    pub kind: Kind,
    /// Calibration or held out.
    pub role: Role,
    /// Median and worst ratio.
    pub ratios: RatioSummary,
}

/// Median and worst ratio of each profile on each kind of the rows marked `role`, profile
/// by profile ([`CALIBRATIONS`] order), kinds in [`Kind::ALL`] order.
///
/// Errors: a kind with no row of that role.
pub fn summary_by_kind(rows: &[Prediction], role: Role) -> Result<Vec<KindSummary>, Error> {
    let mut out = Vec::new();
    for (i, c) in CALIBRATIONS.iter().enumerate() {
        for kind in Kind::ALL {
            let keep = |m: &Measurement| m.role == role && m.quantity.kind() == kind;
            out.push(KindSummary {
                profile: c.name,
                kind,
                role,
                ratios: summarize(&ratios(rows, i, keep))?,
            });
        }
    }
    Ok(out)
}

/// The rows of one series that vary the batch, smallest batch first (file order breaks
/// ties).
#[derive(Debug, Clone, PartialEq)]
pub struct BatchSeries {
    /// The series' name in the data file.
    pub name: &'static str,
    /// Its rows' predictions, by batch.
    pub rows: Vec<Prediction>,
}

impl BatchSeries {
    /// `last / first` of the measured figures: below 1 where the measurements fall.
    pub fn measured_change(&self) -> f64 {
        self.rows[self.rows.len() - 1].measured / self.rows[0].measured
    }

    /// `last / first` of profile `profile`'s predictions.
    pub fn predicted_change(&self, profile: usize) -> f64 {
        self.rows[self.rows.len() - 1].predicted[profile] / self.rows[0].predicted[profile]
    }
}

/// Every series of `rows` with at least two distinct batch sizes, in file order of
/// their first rows.
pub fn batch_series(rows: &[Prediction]) -> Vec<BatchSeries> {
    let mut out: Vec<BatchSeries> = Vec::new();
    for p in rows {
        let Some(name) = p.measurement.series.as_deref() else {
            continue;
        };
        match out.iter_mut().find(|s| s.name == name) {
            Some(s) => s.rows.push(*p),
            None => out.push(BatchSeries {
                name,
                rows: vec![*p],
            }),
        }
    }
    for s in &mut out {
        s.rows.sort_by_key(|p| p.measurement.batch);
    }
    out.retain(|s| {
        s.rows.first().map(|p| p.measurement.batch) != s.rows.last().map(|p| p.measurement.batch)
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On the rows it was fitted on (the calibration rows among the first
    /// [`super::super::FITTED_ROWS`]); on the later ones, MoE rows among them, neither
    /// profile knows an expert's cost.
    #[test]
    fn the_fitted_profile_does_better_than_the_seed_on_its_calibration_rows() {
        let rows = predictions().unwrap();
        let s = summary(&rows[..super::super::FITTED_ROWS]).unwrap();
        let off = |r: RatioSummary| r.worst.ln().abs();
        assert!(off(s[1].calibration) < off(s[0].calibration));
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

    /// For every batch series of the data, the measured profile's prediction moves from
    /// the smallest batch to the largest in the direction the measurements move.
    #[test]
    fn the_measured_profile_follows_every_batch_series_direction() {
        let rows = predictions().unwrap();
        let series = batch_series(&rows);
        assert!(series.len() >= 3);
        for s in &series {
            let (m, p) = (s.measured_change(), s.predicted_change(2));
            assert_eq!(
                m < 1.0,
                p < 1.0,
                "{}: measured ×{m:.3}, predicted ×{p:.3}",
                s.name
            );
        }
        // The MoE series are among those checked (their step times rise ×3.5–4.1).
        for name in [
            "SpecForge339-Qwen3-30B-A3B-H100-TP2-plain",
            "AngelSlim163-Qwen3-30B-A3B-H100-TP4-plain",
        ] {
            assert!(series.iter().any(|s| s.name == name), "{name}");
        }
        // And the seed does not: its EAGLE-3 Table 3 speedups rise with batch.
        let t3 = series
            .iter()
            .find(|s| s.name == "EAGLE3paper-Table3-SGLang-EAGLE")
            .unwrap();
        assert!(t3.measured_change() < 1.0 && t3.predicted_change(0) > 1.0);
    }

    /// A batch series is found by its distinct batches: the rows of one by hand.
    #[test]
    fn batch_series_are_sorted_by_batch_and_skip_fixed_batch_series() {
        let rows = predictions().unwrap();
        let series = batch_series(&rows);
        let nim = series
            .iter()
            .find(|s| s.name == "NIM-L70B-TP2-5000in")
            .unwrap();
        let batches: Vec<u64> = nim.rows.iter().map(|p| p.measurement.batch).collect();
        assert_eq!(batches, [1, 5, 25, 50, 85]);
        // The TP sweep keeps batch 1: not a batch series.
        assert!(series.iter().all(|s| s.name != "AMD-SSD-L70B-TP-scaling"));
        // 38.75 ms at 25 over 18.58 ms at 1 … 92.91 ms at 100: × 5.0005.
        assert!((nim.measured_change() - 92.91 / 18.58).abs() < 1e-12);
    }
}
