//! Leave-one-publisher-out cross-validation: for each publisher, the pooled profile and
//! every engine's refit are fitted on the other publishers' rows (both roles), and that
//! publisher's rows are predicted by the profile of their engine. A publisher's rows
//! share their setup's habits (the context they assume, how they count a token), so
//! holding out rows one by one would judge the fit on rows it has all but seen.

use super::engine::engine_profile_on;
use super::engines::ENGINES;
use super::fast::FitRows;
use super::fit_measured::{Indices, Moves, POOLED_AXES, search};
use super::summary::{RatioSummary, summarize};
use super::{Kind, Measurement, SEED, fit_measured, measurements};
use crate::Error;
use once_cell::sync::Lazy;
use rayon::prelude::*;

/// One row, predicted by a profile fitted without its publisher.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CrossPrediction<'a> {
    /// The row.
    pub measurement: &'a Measurement,
    /// Its figure ([`super::Published::measured`]).
    pub measured: f64,
    /// Predicted by its engine's profile fitted on the other publishers' rows.
    pub predicted: f64,
}

impl CrossPrediction<'_> {
    /// `predicted / measured`.
    pub fn ratio(&self) -> f64 {
        self.predicted / self.measured
    }
}

/// The publishers of the data, sorted.
pub fn publishers(rows: &[Measurement]) -> Vec<&str> {
    let mut p: Vec<&str> = rows.iter().map(|m| m.publisher.as_str()).collect();
    p.sort_unstable();
    p.dedup();
    p
}

/// Every row of the data file predicted with its publisher left out, in the file's order.
/// Each fold starts its search from the fit on every calibration row ([`fit_measured()`]);
/// folds run in parallel and each is deterministic, so the result does not depend on the
/// thread count.
///
/// Errors: the data file does not parse, or a setup the roofline rejects.
pub fn leave_one_publisher_out() -> Result<Vec<CrossPrediction<'static>>, Error> {
    shipped().map(<[_]>::to_vec)
}

/// [`leave_one_publisher_out`], borrowed from the process's one copy.
pub(crate) fn shipped() -> Result<&'static [CrossPrediction<'static>], Error> {
    let folds = CROSS.as_ref().map_err(Clone::clone)?;
    Ok(&folds.predictions)
}

/// Each fold's pooled fit on the shipped data: the held-out publisher and the grid indices
/// fitted on the other publishers' rows, sorted by publisher (the folds
/// [`leave_one_publisher_out`] predicts with, from the process's one run).
///
/// Errors: as [`leave_one_publisher_out`].
pub fn fold_fits() -> Result<&'static [(&'static str, Indices)], Error> {
    let folds = CROSS.as_ref().map_err(Clone::clone)?;
    Ok(&folds.fits)
}

/// The folds' predictions and their pooled fits.
struct Folds<'a> {
    predictions: Vec<CrossPrediction<'a>>,
    fits: Vec<(&'a str, Indices)>,
}

/// [`leave_one_publisher_out`]'s folds, run once per process (they read only the data the
/// crate ships).
static CROSS: Lazy<Result<Folds<'static>, Error>> = Lazy::new(|| {
    let (start, _) = fit_measured()?;
    folds_on(measurements()?, start)
});

/// [`leave_one_publisher_out`] on any rows `ms`, each fold's search starting from `start`.
///
/// Errors: a setup the roofline rejects.
pub fn leave_one_publisher_out_on(
    ms: &[Measurement],
    start: Indices,
) -> Result<Vec<CrossPrediction<'_>>, Error> {
    Ok(folds_on(ms, start)?.predictions)
}

/// One fold: its pooled fit, and each held-out row's index and prediction.
type Fold = (Indices, Vec<(usize, f64)>);

/// [`leave_one_publisher_out_on`], with each fold's pooled fit.
fn folds_on(ms: &[Measurement], start: Indices) -> Result<Folds<'_>, Error> {
    let every: Vec<&Measurement> = ms.iter().collect();
    let every = FitRows::new(&every)?;
    let held_out = publishers(ms);
    let folds: Vec<Result<Fold, Error>> = held_out
        .par_iter()
        .map(|publisher| {
            let train = every.filter(|m| m.publisher != *publisher);
            let pooled = search(&train, start, &POOLED_AXES, Moves::Climb)?.ix;
            let mut out = Vec::new();
            for engine in ENGINES {
                let held: Vec<usize> = (0..ms.len())
                    .filter(|&i| ms[i].publisher == *publisher && ms[i].engine == *engine)
                    .collect();
                if held.is_empty() {
                    continue;
                }
                let profile = engine_profile_on(engine, &train, pooled)?.calibration;
                for i in held {
                    out.push((i, ms[i].predict(&profile)?));
                }
            }
            Ok((pooled, out))
        })
        .collect();
    let mut predicted = vec![f64::NAN; ms.len()];
    let mut fits = Vec::new();
    for (publisher, fold) in held_out.into_iter().zip(folds) {
        let (pooled, out) = fold?;
        fits.push((publisher, pooled));
        for (i, p) in out {
            predicted[i] = p;
        }
    }
    let predictions = ms
        .iter()
        .zip(predicted)
        .map(|(m, predicted)| CrossPrediction {
            measurement: m,
            measured: m.published.measured(),
            predicted,
        })
        .collect();
    Ok(Folds { predictions, fits })
}

/// Batch bands the cross-validation is reported in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BatchBand {
    /// Batch 1–4: decode bound by the weight read.
    Small,
    /// Batch 5–31.
    Middle,
    /// Batch ≥ 32: where serving runs.
    Large,
}

impl BatchBand {
    /// Every band, smallest first.
    pub const ALL: [BatchBand; 3] = [BatchBand::Small, BatchBand::Middle, BatchBand::Large];

    /// The band of a batch size.
    pub fn of(batch: u64) -> BatchBand {
        match batch {
            0..=4 => BatchBand::Small,
            5..=31 => BatchBand::Middle,
            _ => BatchBand::Large,
        }
    }

    /// `≤ 4`, `5–31`, `≥ 32`.
    pub fn label(&self) -> &'static str {
        match self {
            BatchBand::Small => "≤ 4",
            BatchBand::Middle => "5–31",
            BatchBand::Large => "≥ 32",
        }
    }
}

/// The ratios of one subset of [`leave_one_publisher_out`]'s rows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CrossSummary {
    /// Median and worst ratio.
    pub ratios: RatioSummary,
    /// Fraction of the rows within ±25% (ratio in [0.75, 1.25]).
    pub within_25: f64,
}

/// The summary of `rows` kept by `keep`, or `None` when it keeps none.
///
/// Errors: a ratio that is not finite and > 0.
pub fn cross_summary(
    rows: &[CrossPrediction<'_>],
    keep: impl Fn(&Measurement) -> bool,
) -> Result<Option<CrossSummary>, Error> {
    let ratios: Vec<f64> = rows
        .iter()
        .filter(|p| keep(p.measurement))
        .map(CrossPrediction::ratio)
        .collect();
    if ratios.is_empty() {
        return Ok(None);
    }
    let within = ratios.iter().filter(|&&r| within_25(r)).count();
    Ok(Some(CrossSummary {
        ratios: summarize(&ratios)?,
        within_25: within as f64 / ratios.len() as f64,
    }))
}

/// One publisher's rows in the cross-validation, as a whole: how far the fit without it
/// sits from everything it published.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PublisherOffset<'a> {
    /// The publisher.
    pub publisher: &'a str,
    /// Its rows.
    pub rows: usize,
    /// The geometric mean of its rows' ratios: what no fit that never saw the publisher
    /// can know (how it counts a token, what its setup does that its page does not say).
    pub offset: f64,
    /// Fraction of its rows within ±25% (ratio in [0.75, 1.25]).
    pub within_25: f64,
    /// Fraction within ±25% once each ratio is divided by `offset`: how close the rest
    /// of the model is to the publisher's figures, its offset set aside.
    pub within_25_own_offset: f64,
}

/// Whether a ratio is within ±25%.
fn within_25(r: f64) -> bool {
    (0.75..=1.25).contains(&r)
}

/// Each publisher of `rows` kept by `keep` ([`publishers`] order), with its offset.
///
/// Errors: a ratio that is not finite and > 0.
pub fn publisher_offsets<'a>(
    rows: &[CrossPrediction<'a>],
    keep: impl Fn(&Measurement) -> bool,
) -> Result<Vec<PublisherOffset<'a>>, Error> {
    let kept: Vec<&CrossPrediction<'a>> = rows.iter().filter(|p| keep(p.measurement)).collect();
    let mut names: Vec<&'a str> = kept
        .iter()
        .map(|p| p.measurement.publisher.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|publisher| {
            let ratios: Vec<f64> = kept
                .iter()
                .filter(|p| p.measurement.publisher == publisher)
                .map(|p| p.ratio())
                .collect();
            if let Some(bad) = ratios.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
                return Err(Error::Argument(format!(
                    "a ratio of {publisher}'s rows is {bad}, not a finite number > 0"
                )));
            }
            let n = ratios.len() as f64;
            let offset = (ratios.iter().map(|r| r.ln()).sum::<f64>() / n).exp();
            let share = |f: &dyn Fn(f64) -> f64| {
                ratios.iter().filter(|&&r| within_25(f(r))).count() as f64 / n
            };
            Ok(PublisherOffset {
                publisher,
                rows: ratios.len(),
                offset,
                within_25: share(&|r| r),
                within_25_own_offset: share(&|r| r / offset),
            })
        })
        .collect()
}

/// Over all of `offsets`' rows: the fraction within ±25% as predicted, and once each
/// publisher's own offset is set aside (`(within_25, within_25_own_offset)`, each
/// publisher weighing its rows).
///
/// Errors: no rows.
pub fn shares_within_25(offsets: &[PublisherOffset<'_>]) -> Result<(f64, f64), Error> {
    let rows: usize = offsets.iter().map(|o| o.rows).sum();
    if rows == 0 {
        return Err(Error::Argument(
            "shares within ±25% need at least one row".into(),
        ));
    }
    let share = |f: fn(&PublisherOffset<'_>) -> f64| {
        offsets.iter().map(|o| f(o) * o.rows as f64).sum::<f64>() / rows as f64
    };
    Ok((share(|o| o.within_25), share(|o| o.within_25_own_offset)))
}

/// A series of plain steps that varies the batch: its log-slope `d ln t / d ln batch`
/// (from the first to the last row), measured and cross-validated.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesSlope<'a> {
    /// The series name.
    pub name: &'a str,
    /// Its smallest and largest batch.
    pub batches: (u64, u64),
    /// Measured log-slope.
    pub measured: f64,
    /// Predicted log-slope ([`leave_one_publisher_out`]).
    pub predicted: f64,
}

impl SeriesSlope<'_> {
    /// `predicted / measured`.
    pub fn ratio(&self) -> f64 {
        self.predicted / self.measured
    }
}

/// Every series of plain steps in `rows` whose batch varies at one context, sorted as
/// the data file first names them.
pub fn step_series_slopes<'a>(rows: &[CrossPrediction<'a>]) -> Vec<SeriesSlope<'a>> {
    let mut names: Vec<&'a str> = Vec::new();
    for p in rows {
        if let Some(n) = p.measurement.series.as_deref()
            && p.measurement.quantity.kind() == Kind::StepTime
            && !names.contains(&n)
        {
            names.push(n);
        }
    }
    names
        .into_iter()
        .filter_map(|name| {
            let mut s: Vec<&CrossPrediction<'a>> = rows
                .iter()
                .filter(|p| {
                    p.measurement.series.as_deref() == Some(name)
                        && p.measurement.quantity.kind() == Kind::StepTime
                })
                .collect();
            s.sort_by_key(|p| p.measurement.batch);
            let (a, b) = (s.first()?, s.last()?);
            if a.measurement.batch == b.measurement.batch || a.measurement.ctx != b.measurement.ctx
            {
                return None;
            }
            let lb = (b.measurement.batch as f64 / a.measurement.batch as f64).ln();
            Some(SeriesSlope {
                name,
                batches: (a.measurement.batch, b.measurement.batch),
                measured: (b.measured / a.measured).ln() / lb,
                predicted: (b.predicted / a.predicted).ln() / lb,
            })
        })
        .collect()
}

/// How far the seed's assumptions run from published engines: for each batch band with
/// plain decode steps among [`measurements`] ([`Kind::StepTime`]), the seed profile's
/// predicted step over the measured one (below 1: the engines are slower than the seed
/// prices). The seed was fitted to none of these rows, so every one is held out.
///
/// Errors: a setup the roofline rejects (a test checks none does).
pub fn seed_step_gaps() -> Result<Vec<(BatchBand, RatioSummary)>, Error> {
    let mut by_band: Vec<(BatchBand, Vec<f64>)> =
        BatchBand::ALL.iter().map(|&b| (b, Vec::new())).collect();
    for m in measurements()? {
        if m.quantity.kind() != Kind::StepTime {
            continue;
        }
        let ratio = m.predict(&SEED)? / m.published.measured();
        let band = BatchBand::of(m.batch);
        if let Some((_, ratios)) = by_band.iter_mut().find(|(b, _)| *b == band) {
            ratios.push(ratio);
        }
    }
    by_band
        .into_iter()
        .filter(|(_, ratios)| !ratios.is_empty())
        .map(|(band, ratios)| Ok((band, summarize(&ratios)?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_engines_run_slower_than_the_seed_prices_in_every_band() {
        let gaps = seed_step_gaps().unwrap();
        let steps: Vec<&Measurement> = measurements()
            .unwrap()
            .iter()
            .filter(|m| m.quantity.kind() == Kind::StepTime)
            .collect();
        assert_eq!(gaps.len(), 3, "every band has plain steps");
        let counted: usize = gaps.iter().map(|(_, s)| s.count).sum();
        assert_eq!(counted, steps.len());
        assert!(gaps[2].1.median < gaps[0].1.median);
        for (band, s) in &gaps {
            // Engines run slower than the seed prices in every band (0.74, 0.69 and 0.58
            // when written), the gap widest where serving runs.
            assert!((0.5..0.9).contains(&s.median), "{band:?}: {s:?}");
            // The middle row of the band, found again by sorting its rows' ratios.
            let mut own: Vec<f64> = steps
                .iter()
                .filter(|m| BatchBand::of(m.batch) == *band)
                .map(|m| m.predict(&SEED).unwrap() / m.published.measured())
                .collect();
            own.sort_by(f64::total_cmp);
            assert_eq!(own.len(), s.count);
            let n = own.len();
            let middle = (own[(n - 1) / 2] + own[n / 2]) / 2.0;
            assert_eq!(middle, s.median);
        }
    }

    #[test]
    fn bands_split_at_4_and_32() {
        assert_eq!(BatchBand::of(1), BatchBand::Small);
        assert_eq!(BatchBand::of(4), BatchBand::Small);
        assert_eq!(BatchBand::of(5), BatchBand::Middle);
        assert_eq!(BatchBand::of(31), BatchBand::Middle);
        assert_eq!(BatchBand::of(32), BatchBand::Large);
    }

    /// Every row is predicted by a fold that never saw its publisher: changing one
    /// publisher's figures changes no prediction of that publisher's rows.
    #[test]
    fn every_row_is_predicted_and_finite() {
        let rows = leave_one_publisher_out().unwrap();
        assert_eq!(rows.len(), measurements().unwrap().len());
        for p in &rows {
            assert!(
                p.predicted.is_finite() && p.predicted > 0.0,
                "{}",
                p.measurement.id
            );
        }
    }

    /// A fold never sees its publisher: multiplying one publisher's figures by ten
    /// changes no prediction of that publisher's rows (and changes others').
    #[test]
    fn a_publishers_rows_are_predicted_without_its_own_figures() {
        let ms = measurements().unwrap();
        let (start, _) = fit_measured().unwrap();
        let base = leave_one_publisher_out_on(ms, start).unwrap();
        let who = "LMDeploy (InternLM / Shanghai AI Lab)";
        let scaled: Vec<Measurement> = ms
            .iter()
            .map(|m| {
                let mut m = m.clone();
                if m.publisher == who {
                    m.published = super::super::Published::AsPublished {
                        text: "scaled".into(),
                        value: 10.0 * m.published.measured(),
                    };
                }
                m
            })
            .collect();
        let moved = leave_one_publisher_out_on(&scaled, start).unwrap();
        let mut others_moved = false;
        for (a, b) in base.iter().zip(&moved) {
            if a.measurement.publisher == who {
                assert_eq!(a.predicted, b.predicted, "{}", a.measurement.id);
            } else {
                others_moved |= a.predicted != b.predicted;
            }
        }
        assert!(others_moved, "the other folds saw the scaled rows");
    }

    /// By hand: A's two rows both at 2 are 0% within ±25%, 100% once its offset (2) is
    /// set aside; B's 0.5 and 2 have offset 1 and stay 0% either way; C's 1.1 and 0.9 are
    /// within both ways. Only kept rows count.
    #[test]
    fn a_publishers_offset_is_its_geometric_mean_ratio_by_hand() {
        let by_hand = [
            ("A", 2.0),
            ("A", 2.0),
            ("B", 0.5),
            ("B", 2.0),
            ("C", 1.1),
            ("C", 0.9),
            ("D", 9.0),
        ];
        let relabelled: Vec<Measurement> = by_hand
            .iter()
            .zip(measurements().unwrap())
            .map(|((who, _), m)| Measurement {
                publisher: who.to_string(),
                ..m.clone()
            })
            .collect();
        let rows: Vec<CrossPrediction> = by_hand
            .iter()
            .zip(&relabelled)
            .map(|((_, r), m)| CrossPrediction {
                measurement: m,
                measured: 1.0,
                predicted: *r,
            })
            .collect();
        let offsets = publisher_offsets(&rows, |m| m.publisher != "D").unwrap();
        let got: Vec<(&str, usize, f64, f64, f64)> = offsets
            .iter()
            .map(|o| {
                (
                    o.publisher,
                    o.rows,
                    o.offset,
                    o.within_25,
                    o.within_25_own_offset,
                )
            })
            .collect();
        assert_eq!(got[0], ("A", 2, 2.0, 0.0, 1.0));
        assert_eq!((got[1].0, got[1].3, got[1].4), ("B", 0.0, 0.0));
        assert!((got[1].2 - 1.0).abs() < 1e-15);
        assert_eq!((got[2].0, got[2].3, got[2].4), ("C", 1.0, 1.0));
        assert_eq!(got.len(), 3);
        assert_eq!(shares_within_25(&offsets).unwrap(), (2.0 / 6.0, 4.0 / 6.0));
        assert!(shares_within_25(&[]).is_err());
    }

    /// Every plain-step series of the data with two batches at one context has a slope,
    /// and a slope is the log ratio of times over the log ratio of batches.
    #[test]
    fn a_series_slope_is_the_log_ratio_of_times_over_batches() {
        let rows = leave_one_publisher_out().unwrap();
        let slopes = step_series_slopes(&rows);
        assert!(slopes.len() >= 3, "{slopes:?}");
        for s in &slopes {
            let own = |batch: u64| {
                rows.iter().filter(move |p| {
                    p.measurement.series.as_deref() == Some(s.name) && p.measurement.batch == batch
                })
            };
            // The first row at the smallest batch, the last at the largest, in file order.
            let (a, b) = (
                own(s.batches.0).next().unwrap(),
                own(s.batches.1).next_back().unwrap(),
            );
            let by_hand =
                (b.measured / a.measured).ln() / (s.batches.1 as f64 / s.batches.0 as f64).ln();
            assert!((s.measured - by_hand).abs() < 1e-12, "{}", s.name);
        }
    }
}
