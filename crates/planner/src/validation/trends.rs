//! What a student relies on, judged leave-one-publisher-out ([`super::cross`]) beside the
//! absolute figures: within one publisher, how much one row differs from another (the
//! ratio of two rows of one series: batch 64 against batch 1, FP8 against bf16, TP 8
//! against TP 4), which of two rows is the larger (their order), which way a speculative
//! speedup goes as the batch grows, and the best γ of a γ sweep. A publisher's habits (its
//! context, how it counts a token) move all its rows together; these cancel them.

use std::cmp::Ordering;

use super::cross::CrossPrediction;
use super::measurement::{Kind, Quantity};

/// A predicted ratio of two rows within this fraction of the measured one counts as right.
pub const WITHIN: f64 = 0.25;
/// Two measured figures of one publisher closer than this fraction are a tie: which is
/// the larger is not judged.
pub const TIE: f64 = 0.05;
/// A speedup that changes by less than this fraction from the smallest batch to the
/// largest is flat.
pub const FLAT: f64 = 0.05;

/// Two rows of one series: how much the second differs from the first, measured and
/// predicted.
#[derive(Debug, Clone, PartialEq)]
pub struct PairRatio<'a> {
    /// The series.
    pub series: &'a str,
    /// The rows' ids, the first and the second.
    pub rows: (&'a str, &'a str),
    /// Measured: the second row's figure over the first's.
    pub measured: f64,
    /// Predicted, each row by the profile fitted without its publisher.
    pub predicted: f64,
}

impl PairRatio<'_> {
    /// Whether the predicted ratio is within [`WITHIN`] of the measured one.
    pub fn within(&self) -> bool {
        (self.predicted / self.measured - 1.0).abs() <= WITHIN
    }
}

/// Which way a figure goes: -1 down, 0 flat (within `flat`), 1 up.
fn direction(ratio: f64, flat: f64) -> i8 {
    match ratio {
        r if r > 1.0 + flat => 1,
        r if r < 1.0 - flat => -1,
        _ => 0,
    }
}

/// A speculative speedup along the batch, one draft shape of one series: from the
/// smallest batch to the largest.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeedupTrend<'a> {
    /// The series.
    pub series: &'a str,
    /// The smallest and the largest batch.
    pub batches: (u64, u64),
    /// Measured: the speedup at the largest batch over the one at the smallest.
    pub measured: f64,
    /// Predicted.
    pub predicted: f64,
}

impl SpeedupTrend<'_> {
    /// Whether the prediction goes the measured way: up, down, or flat within [`FLAT`].
    pub fn right(&self) -> bool {
        direction(self.measured, FLAT) == direction(self.predicted, FLAT)
    }
}

/// A publisher's γ sweep: speedups of one series at one batch over draft depths.
#[derive(Debug, Clone, PartialEq)]
pub struct GammaSweep<'a> {
    /// The series.
    pub series: &'a str,
    /// The batch.
    pub batch: u64,
    /// The depths swept, smallest first.
    pub depths: Vec<u64>,
    /// The depth of the largest measured speedup.
    pub measured_best: u64,
    /// The depth of the largest predicted one.
    pub predicted_best: u64,
}

impl GammaSweep<'_> {
    /// Whether the predicted best γ is within one of the measured.
    pub fn right(&self) -> bool {
        self.measured_best.abs_diff(self.predicted_best) <= 1
    }
}

/// The judgement on trends.
#[derive(Debug, Clone, PartialEq)]
pub struct Trends<'a> {
    /// Every pair of rows within a series of one kind.
    pub ratios: Vec<PairRatio<'a>>,
    /// Pairs of one publisher's rows of one kind whose measured figures differ by more
    /// than [`TIE`]: how many the prediction orders right (two rows predicted equal are
    /// not ordered), of how many.
    pub orderings: (usize, usize),
    /// Every speedup series (one draft shape) that varies the batch.
    pub speedup_trends: Vec<SpeedupTrend<'a>>,
    /// Every series that sweeps γ at one batch.
    pub gamma_sweeps: Vec<GammaSweep<'a>>,
}

impl Trends<'_> {
    /// [`Trends::ratios`] within [`WITHIN`]: how many, of how many.
    pub fn ratios_right(&self) -> (usize, usize) {
        let right = self.ratios.iter().filter(|r| r.within()).count();
        (right, self.ratios.len())
    }

    /// [`Trends::speedup_trends`] that go the measured way: how many, of how many.
    pub fn speedup_trends_right(&self) -> (usize, usize) {
        let right = self.speedup_trends.iter().filter(|s| s.right()).count();
        (right, self.speedup_trends.len())
    }

    /// [`Trends::gamma_sweeps`] whose best γ is within one: how many, of how many.
    pub fn gamma_sweeps_right(&self) -> (usize, usize) {
        let right = self.gamma_sweeps.iter().filter(|s| s.right()).count();
        (right, self.gamma_sweeps.len())
    }

    /// The share of [`Trends::ratios`] within [`WITHIN`] (1 when there are none).
    pub fn ratios_within(&self) -> f64 {
        share(self.ratios_right())
    }

    /// The share of orderings right (1 when there are none).
    pub fn orderings_right(&self) -> f64 {
        share(self.orderings)
    }
}

/// `part / whole`, 1 for an empty whole.
fn share((part, whole): (usize, usize)) -> f64 {
    match whole {
        0 => 1.0,
        n => part as f64 / n as f64,
    }
}

/// The draft shape of a speedup row: its depth and nodes.
fn shape(p: &CrossPrediction<'_>) -> Option<(u64, u64)> {
    match p.measurement.quantity {
        Quantity::Speedup { depth, nodes, .. } => Some((depth, nodes)),
        _ => None,
    }
}

/// Judges `rows` (predicted leave-one-publisher-out) on trends.
pub fn trends<'a>(rows: &[CrossPrediction<'a>]) -> Trends<'a> {
    let kind = |p: &CrossPrediction<'_>| p.measurement.quantity.kind();
    let mut ratios = Vec::new();
    let mut orderings = (0, 0);
    for (i, a) in rows.iter().enumerate() {
        for b in &rows[i + 1..] {
            let (ma, mb) = (a.measurement, b.measurement);
            if ma.publisher != mb.publisher || kind(a) != kind(b) {
                continue;
            }
            if let (Some(s), true) = (ma.series.as_deref(), ma.series == mb.series) {
                ratios.push(PairRatio {
                    series: s,
                    rows: (ma.id.as_str(), mb.id.as_str()),
                    measured: b.measured / a.measured,
                    predicted: b.predicted / a.predicted,
                });
            }
            let measured = direction(b.measured / a.measured, TIE);
            if measured != 0 {
                orderings.1 += 1;
                // Predicted equal is not an order: it counts as wrong.
                let predicted = match b.predicted.partial_cmp(&a.predicted) {
                    Some(Ordering::Greater) => 1,
                    Some(Ordering::Less) => -1,
                    _ => 0,
                };
                orderings.0 += usize::from(predicted == measured);
            }
        }
    }
    let speedups: Vec<&CrossPrediction<'a>> =
        rows.iter().filter(|p| kind(p) == Kind::Speedup).collect();
    Trends {
        ratios,
        orderings,
        speedup_trends: speedup_trends(&speedups),
        gamma_sweeps: gamma_sweeps(&speedups),
    }
}

/// The speedup rows grouped by `key` (rows without a series left out), in the order the
/// data first names each group.
fn groups<'a, 'r, K: PartialEq>(
    rows: &[&'r CrossPrediction<'a>],
    key: impl Fn(&CrossPrediction<'a>) -> Option<K>,
) -> Vec<(K, Vec<&'r CrossPrediction<'a>>)> {
    let mut out: Vec<(K, Vec<&'r CrossPrediction<'a>>)> = Vec::new();
    for &p in rows {
        let Some(k) = key(p) else { continue };
        match out.iter_mut().find(|(g, _)| *g == k) {
            Some((_, members)) => members.push(p),
            None => out.push((k, vec![p])),
        }
    }
    out
}

/// Each series and draft shape whose batch varies: its speedup from the smallest batch to
/// the largest (the first row at each).
fn speedup_trends<'a>(rows: &[&CrossPrediction<'a>]) -> Vec<SpeedupTrend<'a>> {
    let by_shape = groups(rows, |p| {
        Some((p.measurement.series.as_deref()?, shape(p)?))
    });
    by_shape
        .into_iter()
        .filter_map(|((series, _), members)| {
            let low = members.iter().min_by_key(|p| p.measurement.batch)?;
            let high = members.iter().max_by_key(|p| p.measurement.batch)?;
            (low.measurement.batch < high.measurement.batch).then(|| SpeedupTrend {
                series,
                batches: (low.measurement.batch, high.measurement.batch),
                measured: high.measured / low.measured,
                predicted: high.predicted / low.predicted,
            })
        })
        .collect()
}

/// Each series that sweeps the draft depth at one batch: the depth of its largest
/// speedup, measured and predicted (the first of equals).
fn gamma_sweeps<'a>(rows: &[&CrossPrediction<'a>]) -> Vec<GammaSweep<'a>> {
    let by_batch = groups(rows, |p| {
        Some((p.measurement.series.as_deref()?, p.measurement.batch))
    });
    by_batch
        .into_iter()
        .filter_map(|((series, batch), members)| {
            let depth = |p: &CrossPrediction<'_>| shape(p).map_or(0, |s| s.0);
            let mut depths: Vec<u64> = members.iter().map(|p| depth(p)).collect();
            depths.sort_unstable();
            depths.dedup();
            let best = |f: fn(&CrossPrediction<'_>) -> f64| {
                let top = members.iter().rev().max_by(|a, b| f(a).total_cmp(&f(b)));
                top.map(|p| depth(p))
            };
            (depths.len() >= 2).then_some(())?;
            Some(GammaSweep {
                series,
                batch,
                depths,
                measured_best: best(|p| p.measured)?,
                predicted_best: best(|p| p.predicted)?,
            })
        })
        .collect()
}
