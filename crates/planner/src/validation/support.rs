//! Which publishers' rows fix each constant of the pooled fit ([`term_support`]). A
//! constant that only one or two publishers' rows move rests on them: holding one of them
//! out ([`super::leave_one_publisher_out`]), the fold fits it on the other's rows alone,
//! or on none. Such a constant ([`thin_terms`]) is priced at both ends of where those folds
//! put it ([`fold_span`], [`ends_at`]; `crate::flags::Terms::thin_ends` for a what-if).

use std::collections::BTreeMap;

use once_cell::sync::Lazy;

use super::engine::engine_profile_on;
use super::fast::FitRows;
use super::fit_measured::{Indices, MEASURED_GRID, POOLED_AXES, check_axis, measured_at};
use super::{Calibration, Measurement, fit_measured, measurements};
use crate::Error;

/// How far a row's prediction must move, as a factor (either way), between the two ends
/// of a constant's grid (indices 1 and `max`, the others at the fitted profile) for the
/// row to count as fixing that constant.
pub const FIXES_BY: f64 = 1.05;

/// Which publishers' rows fix one constant of the pooled fit.
#[derive(Debug, Clone, PartialEq)]
pub struct TermSupport<'a> {
    /// The constant, as [`MEASURED_GRID`] names it.
    pub term: &'static str,
    /// Its axis of [`MEASURED_GRID`].
    pub axis: usize,
    /// Each publisher with rows whose predictions it moves by more than the factor
    /// [`FIXES_BY`], and how many, sorted by publisher.
    pub publishers: Vec<(&'a str, usize)>,
}

impl TermSupport<'_> {
    /// Whether holding one publisher out can leave the constant to one publisher's rows
    /// or to none: it rests on fewer than three.
    pub fn thin(&self) -> bool {
        self.publishers.len() < 3
    }
}

/// Every constant the pooled fit searches ([`POOLED_AXES`]), with the publishers whose
/// rows fix it: among every row of the data (both roles, as the leave-one-publisher-out
/// folds see them), those whose prediction moves by more than the factor [`FIXES_BY`]
/// between grid indices 1 and `max` of the constant (index 0 of an efficiency prices
/// nothing), the others held at the `measured` fit ([`fit_measured()`]).
///
/// Errors: the data file does not parse, or a setup the roofline rejects.
pub fn term_support() -> Result<Vec<TermSupport<'static>>, Error> {
    let (fitted, _) = fit_measured()?;
    let ms = measurements()?;
    POOLED_AXES
        .iter()
        .map(|&axis| support_on(ms, fitted, axis))
        .collect()
}

/// [`term_support`]'s entry for `axis` of [`MEASURED_GRID`] on the rows `ms`, the other
/// constants at `at`.
///
/// Errors: an axis past [`MEASURED_GRID`], or a setup the roofline rejects.
pub fn support_on(ms: &[Measurement], at: Indices, axis: usize) -> Result<TermSupport<'_>, Error> {
    check_axis(axis)?;
    let (low, high) = ends_at(&at, axis, (1, MEASURED_GRID[axis].max), "measured")?;
    let mut rows: BTreeMap<&str, usize> = BTreeMap::new();
    for m in ms {
        if moves(m.predict(&low)?, m.predict(&high)?)? {
            *rows.entry(m.publisher.as_str()).or_default() += 1;
        }
    }
    Ok(TermSupport {
        term: MEASURED_GRID[axis].name,
        axis,
        publishers: rows.into_iter().collect(),
    })
}

/// The thin constants of the pooled fit: [`term_support`]'s entries that
/// [`TermSupport::thin`] keeps, worked out once per process.
///
/// Errors: as [`term_support`].
pub fn thin_terms() -> Result<&'static [TermSupport<'static>], Error> {
    THIN_TERMS.as_ref().map(Vec::as_slice).map_err(Clone::clone)
}

static THIN_TERMS: Lazy<Result<Vec<TermSupport<'static>>, Error>> = Lazy::new(|| {
    let all = term_support()?;
    Ok(all.into_iter().filter(TermSupport::thin).collect())
});

/// The smallest and the largest grid index of the constant `support` names among its own
/// index in `ix` and its index in each leave-one-publisher-out fold ([`super::fold_fits`])
/// that holds out one of the publishers whose rows fix it: where refitting without one of
/// them puts it (each fold on every other published row, both roles), from the profile at
/// `ix`. With `engine`, the fold's value is that engine's refit on the fold's rows
/// ([`super::engine_profile_on`], from the fold's pooled fit), as the profile at `ix` is
/// the engine's; else the fold's pooled fit. Without the one publisher that alone fixes a
/// constant, no row moves it: the fold keeps the `measured` fit's value, where every fold
/// starts.
///
/// Errors: an axis past [`MEASURED_GRID`], an engine not of [`super::ENGINES`], or as
/// [`super::fold_fits`].
pub fn fold_span(
    ix: &Indices,
    support: &TermSupport<'_>,
    engine: Option<&str>,
) -> Result<(u32, u32), Error> {
    let axis = support.axis;
    check_axis(axis)?;
    let engine = engine.map(super::engine_name).transpose()?;
    let fixes = |p: &str| support.publishers.iter().any(|&(q, _)| q == p);
    let folds = super::fold_fits()?.iter().filter(|(p, _)| fixes(p));
    let at: Vec<u32> = match engine {
        None => folds.map(|(_, pooled)| pooled[axis]).collect(),
        Some(engine) => {
            let every: Vec<&Measurement> = measurements()?.iter().collect();
            let every = FitRows::new(&every)?;
            folds
                .map(|(publisher, pooled)| {
                    let train = every.filter(|m| m.publisher != *publisher);
                    Ok(engine_profile_on(engine, &train, *pooled)?.ix[axis])
                })
                .collect::<Result<_, Error>>()?
        }
    };
    let own = ix[axis];
    Ok(at
        .into_iter()
        .fold((own, own), |(low, high), i| (low.min(i), high.max(i))))
}

/// By what factor a figure moves, either way, from `a` to `b` (at least 1).
///
/// Errors: a figure that is not finite and positive.
pub fn move_factor(a: f64, b: f64) -> Result<f64, Error> {
    for x in [a, b] {
        if !(x.is_finite() && x > 0.0) {
            return Err(Error::Argument(format!(
                "a figure compared for how far it moves must be finite and positive, got {x}"
            )));
        }
    }
    Ok((a / b).max(b / a))
}

/// Whether a figure moves by more than the factor [`FIXES_BY`], either way, from `a` to
/// `b` ([`move_factor`]).
///
/// Errors: as [`move_factor`].
pub fn moves(a: f64, b: f64) -> Result<bool, Error> {
    Ok(move_factor(a, b)? > FIXES_BY)
}

/// The profile at grid indices `ix` with the constant of `axis` at each of the indices
/// `(low, high)`, named `name`.
///
/// Errors: an axis past [`MEASURED_GRID`], or an index past its grid.
pub fn ends_at(
    ix: &Indices,
    axis: usize,
    (low, high): (u32, u32),
    name: &'static str,
) -> Result<(Calibration, Calibration), Error> {
    check_axis(axis)?;
    let max = MEASURED_GRID[axis].max;
    if low.max(high) > max {
        return Err(Error::Argument(format!(
            "{} has grid indices 0 to {max}, not {}",
            MEASURED_GRID[axis].name,
            low.max(high)
        )));
    }
    let at = |index: u32| {
        let mut at = *ix;
        at[axis] = index;
        Calibration {
            name,
            ..measured_at(&at)
        }
    };
    Ok((at(low), at(high)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card_family;
    use crate::validation::publishers;
    use llm_math::WeightDtype;

    /// The publishers of the rows `keep` keeps, sorted.
    fn publishers_of(keep: impl Fn(&Measurement) -> bool) -> Vec<&'static str> {
        let mut p: Vec<&str> = measurements()
            .unwrap()
            .iter()
            .filter(|m| keep(m))
            .map(|m| m.publisher.as_str())
            .collect();
        p.sort_unstable();
        p.dedup();
        p
    }

    /// A constant only some setups pay is fixed by exactly the publishers of those setups,
    /// found from the rows' setups, not from any prediction: an interconnect's all-reduce
    /// latency by those of tensor-parallel rows on its cards, the W8A16 factor by those of
    /// W8A16 rows. The bandwidth efficiency prices every row: every publisher fixes it.
    #[test]
    fn a_constant_is_fixed_by_the_publishers_of_the_setups_it_prices() {
        let support = term_support().unwrap();
        let named = |name: &str| support.iter().find(|t| t.term == name).unwrap();
        let of =
            |name: &str| -> Vec<&str> { named(name).publishers.iter().map(|&(p, _)| p).collect() };
        let tp_on = |family: &'static str| {
            move |m: &Measurement| m.tp > 1 && card_family(&m.hw).unwrap() == family
        };
        let infinity_fabric = "Infinity Fabric all-reduce latency (s)";
        assert_eq!(
            of("NVLink all-reduce latency (s)"),
            publishers_of(tp_on("NVLink"))
        );
        assert_eq!(of(infinity_fabric), publishers_of(tp_on("Infinity Fabric")));
        assert_eq!(
            of("Ethernet (RoCE) all-reduce latency (s)"),
            publishers_of(tp_on("Ethernet"))
        );
        assert_eq!(
            of("W8A16 bandwidth factor"),
            publishers_of(|m| m.weights == WeightDtype::W8A16)
        );
        assert_eq!(
            of("bandwidth efficiency"),
            publishers(measurements().unwrap())
        );
        assert_eq!(support.len(), POOLED_AXES.len());
        // Rows counted per publisher add up to the rows of those setups.
        let rows = measurements()
            .unwrap()
            .iter()
            .filter(|m| tp_on("Infinity Fabric")(m))
            .count();
        let counted: usize = named(infinity_fabric)
            .publishers
            .iter()
            .map(|&(_, n)| n)
            .sum();
        assert_eq!(counted, rows);
        // An axis past the grid is refused, not a panic.
        let (at, _) = fit_measured().unwrap();
        let e = support_on(measurements().unwrap(), at, 99)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a constant 99"), "{e}");
    }

    /// Thin is fewer than three publishers: holding one out can leave one or none.
    #[test]
    fn thin_means_fewer_than_three_publishers() {
        let t = TermSupport {
            term: "x",
            axis: 0,
            publishers: vec![("a", 1), ("b", 4)],
        };
        assert!(t.thin());
        let three = TermSupport {
            publishers: vec![("a", 1), ("b", 4), ("c", 2)],
            ..t
        };
        assert!(!three.thin());
    }

    /// A constant's ends are the profile's own constants but for that one; an axis past
    /// the grid, or an index past the constant's grid, is refused, not a panic.
    #[test]
    fn ends_move_one_constant_and_refuse_what_is_past_the_grid() {
        let (at, _) = fit_measured().unwrap();
        let axis = 4; // the Infinity Fabric latency
        let (low, high) = ends_at(&at, axis, (0, 150), "measured").unwrap();
        let fabric = |c: &Calibration| c.cost_terms.all_reduce.infinity_fabric;
        assert_eq!((fabric(&low), fabric(&high)), (0.0, 150.0 * 2e-6));
        let mut back = high.cost_terms;
        back.all_reduce.infinity_fabric = fabric(&measured_at(&at));
        assert_eq!(back, measured_at(&at).cost_terms);
        let past = ends_at(&at, axis, (0, 151), "measured").unwrap_err();
        assert!(past.to_string().contains("0 to 150, not 151"), "{past}");
        for e in [
            ends_at(&at, 99, (0, 1), "measured").unwrap_err(),
            fold_span(
                &at,
                &TermSupport {
                    term: "x",
                    axis: 99,
                    publishers: Vec::new(),
                },
                None,
            )
            .unwrap_err(),
        ] {
            assert!(e.to_string().contains("not a constant 99"), "{e}");
        }
        let thin = &thin_terms().unwrap()[0];
        let magic = fold_span(&at, thin, Some("magic")).unwrap_err().to_string();
        assert!(magic.contains("magic"), "{magic}");
    }

    /// How far a figure moves: the larger over the smaller, whichever comes first; more
    /// than 5% moves it; a figure not finite and positive is refused.
    #[test]
    fn a_figure_moves_by_the_larger_over_the_smaller() {
        assert_eq!(move_factor(2.0, 1.0).unwrap(), 2.0);
        assert_eq!(move_factor(1.0, 4.0).unwrap(), 4.0);
        assert!(!moves(1.0, 1.04).unwrap() && moves(1.06, 1.0).unwrap());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = moves(1.0, bad).unwrap_err().to_string();
            assert!(e.contains("finite and positive"), "{bad}: {e}");
        }
    }
}
