//! How sure the planner is: an 80% interval around a prediction, from how far the
//! leave-one-publisher-out predictions of rows like it ran from what their publishers
//! measured ([`super::cross`]). Rows are alike when they share the kind of figure, the
//! batch band, the card family ([`crate::card_family`]) and the weight format; where fewer
//! than [`MIN_LIKE`] such rows exist the likeness coarsens, format first, then family, then
//! band. It coarsens too where even the widest interval of rows this alike covers less
//! than [`COVERAGE`] of the band's rows when each publisher is left out in turn: a few
//! publishers that agree say little of how far a new one may run. Judged as every other
//! figure of the planner: each row's interval is made without its own publisher's rows,
//! and the share of rows whose measurement falls inside it is the coverage ([`coverage`]).

use hw_specs::Accelerator;
use llm_math::WeightDtype;
use once_cell::sync::Lazy;

use super::cross::{BatchBand, CrossPrediction};
use super::measurement::{Kind, Measurement};
use crate::{Error, card_family};

/// The interval's stated coverage: the 10th to the 90th percentile of the residuals.
pub const COVERAGE: f64 = 0.8;
/// The fewest rows an interval is made from; below it the likeness coarsens.
pub const MIN_LIKE: usize = 10;

/// What made the rows an interval is made from alike, finest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Likeness {
    /// Kind, batch band, card family and weight format.
    Format,
    /// Kind, batch band and card family.
    Family,
    /// Kind and batch band.
    Band,
    /// Kind alone.
    Kind,
}

impl Likeness {
    /// Finest first.
    pub const ALL: [Likeness; 4] = [
        Likeness::Format,
        Likeness::Family,
        Likeness::Band,
        Likeness::Kind,
    ];
}

/// An interval around a prediction: the figure lies between `low` and `high` times it
/// with the stated coverage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// The lower factor.
    pub low: f64,
    /// The upper factor.
    pub high: f64,
    /// What made its rows alike.
    pub like: Likeness,
    /// How many rows it is made from.
    pub rows: usize,
    /// The nominal level its percentiles were taken at ([`LEVELS`]).
    pub level: f64,
}

impl Interval {
    /// Whether `measured` lies inside the interval around `predicted`.
    pub fn covers(&self, predicted: f64, measured: f64) -> bool {
        (self.low * predicted..=self.high * predicted).contains(&measured)
    }
}

/// What a row is, for likeness.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Traits {
    kind: Kind,
    band: BatchBand,
    family: &'static str,
    weights: WeightDtype,
}

impl Traits {
    fn of(m: &Measurement) -> Result<Traits, Error> {
        Traits::of_setup(m.quantity.kind(), m.batch, &m.hw, m.weights)
    }

    fn of_setup(
        kind: Kind,
        batch: u64,
        hw: &Accelerator,
        weights: WeightDtype,
    ) -> Result<Traits, Error> {
        Ok(Traits {
            kind,
            band: BatchBand::of(batch),
            family: card_family(hw)?,
            weights,
        })
    }

    fn alike(&self, other: &Traits, like: Likeness) -> bool {
        let same = [
            self.kind == other.kind,
            self.band == other.band || like == Likeness::Kind,
            self.family == other.family || like >= Likeness::Band,
            self.weights == other.weights || like >= Likeness::Family,
        ];
        same.iter().all(|&s| s)
    }
}

/// The nominal levels an interval is tried at, narrowest first ([`interval`] takes the
/// narrowest whose coverage on other publishers reaches [`COVERAGE`]).
pub const LEVELS: [f64; 10] = [0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.98, 1.0];

/// Every row's traits, publisher and residual (measured over predicted).
struct Residuals<'a> {
    rows: Vec<(Traits, &'a str, f64)>,
}

impl<'a> Residuals<'a> {
    fn of(rows: &[CrossPrediction<'a>]) -> Result<Residuals<'a>, Error> {
        let rows = rows.iter().map(|p| {
            let t = Traits::of(p.measurement)?;
            Ok((
                t,
                p.measurement.publisher.as_str(),
                p.measured / p.predicted,
            ))
        });
        Ok(Residuals {
            rows: rows.collect::<Result<_, Error>>()?,
        })
    }

    /// The residuals like a row of traits `own`, from the rows of no publisher in
    /// `excluded`, at the finest likeness no finer than `from` with at least [`MIN_LIKE`]
    /// rows: sorted, each with its weight ([`Weighted`]).
    fn alike(&self, own: &Traits, excluded: &[&str], from: Likeness) -> Option<Weighted> {
        let others = self.rows.iter().filter(|(_, p, _)| !excluded.contains(p));
        let others: Vec<&(Traits, &str, f64)> = others.collect();
        let mut likenesses = Likeness::ALL.into_iter().filter(|&like| like >= from);
        likenesses.find_map(|like| {
            let alike = others.iter().filter(|(t, ..)| own.alike(t, like));
            let alike: Vec<(&str, f64)> = alike.map(|&&(_, p, r)| (p, r)).collect();
            (alike.len() >= MIN_LIKE).then(|| Weighted::of(&alike, like))
        })
    }

    /// The interval at `judged` for a row of traits `own`, from the rows of no
    /// publisher in `excluded`.
    fn at(&self, own: &Traits, judged: Judged, excluded: &[&str]) -> Option<Interval> {
        let w = self.alike(own, excluded, judged.from);
        w.map(|w| w.interval(judged.level))
    }

    /// The rows of `band` published by none of `excluded`, each with the residuals like it
    /// no finer than `from` and made without its own publisher too, and its residual.
    fn judged(&self, band: BatchBand, excluded: &[&str], from: Likeness) -> Vec<(Weighted, f64)> {
        let rows = self.rows.iter();
        let in_band = rows.filter(|(t, p, _)| t.band == band && !excluded.contains(p));
        let judged = in_band.filter_map(|(t, p, r)| {
            let without: Vec<&str> = excluded.iter().copied().chain([*p]).collect();
            Some((self.alike(t, &without, from)?, *r))
        });
        judged.collect()
    }

    /// The finest likeness and, at it, the narrowest of [`LEVELS`] whose intervals cover at
    /// least [`COVERAGE`] of the rows of `band` published by none of `excluded`, each row's
    /// interval made without its own publisher too: where even the widest interval of rows
    /// this alike misses more, the rows are too few or too alike to say how far a new
    /// publisher may run, and the likeness coarsens (the widest of all when none reaches).
    fn calibrate(&self, band: BatchBand, excluded: &[&str]) -> Judged {
        let reached = Likeness::ALL.into_iter().find_map(|from| {
            let judged = self.judged(band, excluded, from);
            let reaches = |level: f64| {
                let covered = judged
                    .iter()
                    .filter(|(w, r)| w.interval(level).contains(*r));
                !judged.is_empty() && covered.count() as f64 >= COVERAGE * judged.len() as f64
            };
            let level = LEVELS.into_iter().find(|&l| reaches(l))?;
            Some(Judged { from, level })
        });
        reached.unwrap_or(Judged {
            from: Likeness::Kind,
            level: 1.0,
        })
    }
}

/// Where an interval's residuals come from and the level it is taken at, as the held-out
/// publishers judge them ([`Residuals::calibrate`]).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Judged {
    /// The finest likeness the residuals may share.
    from: Likeness,
    /// The nominal level.
    level: f64,
}

/// Residuals like a row, sorted, each publisher weighing as much as any other, shared
/// among its rows: a new publisher is one more draw of a publisher, not of a row.
struct Weighted {
    like: Likeness,
    /// (residual, weight), by residual; the weights sum to 1.
    sorted: Vec<(f64, f64)>,
}

impl Weighted {
    fn of(alike: &[(&str, f64)], like: Likeness) -> Weighted {
        let mut publishers: Vec<&str> = alike.iter().map(|(p, _)| *p).collect();
        publishers.sort_unstable();
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for p in publishers {
            match counts.last_mut() {
                Some((q, n)) if *q == p => *n += 1,
                _ => counts.push((p, 1)),
            }
        }
        let share = |p: &str| {
            let n = counts.iter().find(|(q, _)| *q == p).map_or(1, |c| c.1);
            1.0 / (n as f64 * counts.len() as f64)
        };
        let mut sorted: Vec<(f64, f64)> = alike.iter().map(|&(p, r)| (r, share(p))).collect();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        Weighted { like, sorted }
    }

    /// The smallest residual whose cumulative weight reaches `q`.
    fn quantile(&self, q: f64) -> f64 {
        let mut cumulative = 0.0;
        for &(r, w) in &self.sorted {
            cumulative += w;
            if cumulative >= q - 1e-12 {
                return r;
            }
        }
        self.sorted.last().map_or(1.0, |&(r, _)| r)
    }

    /// The interval between the quantiles `(1 − level) / 2` and `(1 + level) / 2`.
    fn interval(&self, level: f64) -> Interval {
        let tail = (1.0 - level) / 2.0;
        Interval {
            low: self.quantile(tail),
            high: self.quantile(1.0 - tail),
            like: self.like,
            rows: self.sorted.len(),
            level,
        }
    }
}

impl Interval {
    /// Whether the residual `r` (measured over predicted) lies inside.
    fn contains(&self, r: f64) -> bool {
        (self.low..=self.high).contains(&r)
    }
}

/// The interval for a row like `m`, made without `m`'s publisher: the residuals (measured
/// over predicted) of the other publishers' rows of `rows` like it, each publisher weighing
/// the same, at the finest likeness and the narrowest nominal level of [`LEVELS`] that
/// cover [`COVERAGE`] of those publishers' own rows of its batch band when each is left
/// out in turn — so that the stated coverage holds for a publisher the rows have not
/// seen. `None` when even the kind alone has too few rows.
///
/// Errors: a card of no known family.
pub fn interval(rows: &[CrossPrediction<'_>], m: &Measurement) -> Result<Option<Interval>, Error> {
    let residuals = Residuals::of(rows)?;
    let own = Traits::of(m)?;
    let excluded = [m.publisher.as_str()];
    let judged = residuals.calibrate(own.band, &excluded);
    Ok(residuals.at(&own, judged, &excluded))
}

/// The interval for a setup none of `rows` comes from — a figure of `kind` at `batch` on
/// `hw` with weights `weights` — from every publisher's rows like it, at the likeness and
/// level that cover [`COVERAGE`] of their own rows of its batch band when each publisher
/// is left out in turn. What a what-if prints beside a figure the planner computes.
///
/// Errors: a card of no known family.
pub fn interval_for(
    rows: &[CrossPrediction<'_>],
    kind: Kind,
    batch: u64,
    hw: &Accelerator,
    weights: WeightDtype,
) -> Result<Option<Interval>, Error> {
    let residuals = Residuals::of(rows)?;
    let own = Traits::of_setup(kind, batch, hw, weights)?;
    let judged = residuals.calibrate(own.band, &[]);
    Ok(residuals.at(&own, judged, &[]))
}

/// [`interval_for`] on the shipped rows' leave-one-publisher-out predictions
/// ([`super::leave_one_publisher_out`]): their residuals, and each batch band's likeness
/// and level, judged once per process (a what-if asks for an interval beside every
/// figure it prints, and judging a band weighs each of its rows against all the others).
///
/// Errors: the folds' ([`super::leave_one_publisher_out`]); a card of no known family.
pub fn shipped_interval(
    kind: Kind,
    batch: u64,
    hw: &Accelerator,
    weights: WeightDtype,
) -> Result<Option<Interval>, Error> {
    type Judgements = (Residuals<'static>, [Judged; 3]);
    static SHIPPED: Lazy<Result<Judgements, Error>> = Lazy::new(|| {
        let residuals = Residuals::of(super::cross::shipped()?)?;
        let judged = BatchBand::ALL.map(|band| residuals.calibrate(band, &[]));
        Ok((residuals, judged))
    });
    let (residuals, judged) = SHIPPED.as_ref().map_err(Clone::clone)?;
    let own = Traits::of_setup(kind, batch, hw, weights)?;
    let band = BatchBand::ALL.iter().position(|&b| b == own.band);
    let judged = judged[band.expect("BatchBand::ALL holds every band")];
    Ok(residuals.at(&own, judged, &[]))
}

/// How many rows of a batch band the intervals cover, of how many that have one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coverage {
    /// The band.
    pub band: BatchBand,
    /// Rows whose measurement lies inside their interval.
    pub covered: usize,
    /// Rows with an interval.
    pub rows: usize,
}

impl Coverage {
    /// `covered / rows` (1 for none).
    pub fn share(&self) -> f64 {
        match self.rows {
            0 => 1.0,
            n => self.covered as f64 / n as f64,
        }
    }
}

/// The intervals judged on held-out publishers: for every row of `rows`, its interval
/// made without its publisher ([`interval`]), and whether it covers the measurement, per
/// batch band (bands with no row left out).
///
/// Errors: a card of no known family.
pub fn coverage(rows: &[CrossPrediction<'_>]) -> Result<Vec<Coverage>, Error> {
    let residuals = Residuals::of(rows)?;
    let mut calibrations: Vec<((&str, BatchBand), Judged)> = Vec::new();
    let mut out: Vec<Coverage> = BatchBand::ALL
        .iter()
        .map(|&band| Coverage {
            band,
            covered: 0,
            rows: 0,
        })
        .collect();
    for (&(t, publisher, _), p) in residuals.rows.iter().zip(rows) {
        let excluded = [publisher];
        // One calibration per publisher and band: the same rows decide it.
        let found = calibrations.iter().find(|(k, _)| *k == (publisher, t.band));
        let judged = match found {
            Some(&(_, judged)) => judged,
            None => {
                let judged = residuals.calibrate(t.band, &excluded);
                calibrations.push(((publisher, t.band), judged));
                judged
            }
        };
        let Some(i) = residuals.at(&t, judged, &excluded) else {
            continue;
        };
        if let Some(c) = out.iter_mut().find(|c| c.band == t.band) {
            c.rows += 1;
            c.covered += usize::from(i.covers(p.predicted, p.measured));
        }
    }
    Ok(out.into_iter().filter(|c| c.rows > 0).collect())
}
