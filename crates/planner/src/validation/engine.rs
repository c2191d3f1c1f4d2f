//! Profiles per serving engine: the pooled `measured` fit with the terms engines differ in
//! (bandwidth efficiency, fixed cost per step, all-reduce latency per interconnect family,
//! cost per sequence per layer) refitted on that engine's own rows, drawn toward the pool by
//! every other row weighing as one publisher ([`ENGINE_PRIOR_PUBLISHERS`]).

use super::engines::{ENGINES, engine_name};
use super::fast::FitRows;
use super::fit_measured::{
    AXES, ENGINE_AXES, Indices, MEASURED_GRID, Moves, measured_at, moved_axes, search,
};
use super::{Calibration, Measurement, Role, fit_measured, measurements};
use crate::Error;
use once_cell::sync::Lazy;

/// The fewest rows of one engine a refit is made on; with fewer, the engine keeps the
/// pooled profile (and says so: [`EngineProfile::fixed`] is all false).
pub const MIN_ENGINE_ROWS: usize = 3;

/// The fewest publishers an engine's rows must come from to be refitted: one publisher's
/// rows are that benchmark's habits as much as the engine's (a Python loop around the
/// engine, a context it never reached), and a refit on them would carry those to every
/// other use of the engine.
pub const MIN_ENGINE_PUBLISHERS: usize = 3;

/// How many publishers the other engines' rows weigh in an engine's refit, all together
/// ([`FitRows::shrunk_toward_the_rest`]): shrinkage toward the pool. An engine's constants
/// move from the pooled ones only as far as its own publishers outweigh one more publisher
/// that prefers the pool's; with three publishers, a quarter of the weight is the pool's.
pub const ENGINE_PRIOR_PUBLISHERS: f64 = 1.0;

/// One engine's profile and what fixed it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EngineProfile {
    /// The engine, one of [`ENGINES`].
    pub engine: &'static str,
    /// Rows of that engine among those the refit was given (every other row weighs in as
    /// the prior).
    pub rows: usize,
    /// The profile: the pooled fit's constants, with [`ENGINE_AXES`] refitted.
    pub calibration: Calibration,
    /// Grid indices of the profile ([`super::MEASURED_GRID`]).
    pub ix: Indices,
    /// Per axis of [`ENGINE_AXES`], whether the engine's rows fix it; an axis they do not
    /// fix keeps the pooled value.
    pub fixed: [bool; ENGINE_AXES.len()],
}

/// The profile of `engine` refitted on `rows` from the pooled grid indices `pooled`:
/// [`search`] over the [`ENGINE_AXES`] that engine's own rows move, on its rows with every
/// other row of `rows` weighing [`ENGINE_PRIOR_PUBLISHERS`] publishers. An engine with
/// fewer than [`MIN_ENGINE_ROWS`] rows or [`MIN_ENGINE_PUBLISHERS`] publishers, or
/// `other`, keeps `pooled` unchanged.
///
/// Errors: a setup the roofline rejects.
pub fn engine_profile_on(
    engine: &'static str,
    rows: &FitRows<'_>,
    pooled: Indices,
) -> Result<EngineProfile, Error> {
    let mine = |m: &Measurement| m.engine == engine;
    let own = rows.filter(mine);
    let too_few = own.len() < MIN_ENGINE_ROWS || own.publishers() < MIN_ENGINE_PUBLISHERS;
    let (ix, fixed) = if too_few || engine == "other" {
        (pooled, [false; ENGINE_AXES.len()])
    } else {
        // Which terms the engine fixes is what its own rows move; the prior moves every
        // term, so the search's own flags on the shrunk rows say nothing about the engine.
        let moved = moved_axes(&own, pooled, &ENGINE_AXES)?;
        let axes: Vec<usize> = ENGINE_AXES.into_iter().filter(|&a| moved[a]).collect();
        let shrunk = rows.shrunk_toward_the_rest(mine, ENGINE_PRIOR_PUBLISHERS)?;
        let fit = search(&shrunk, pooled, &axes, Moves::Climb)?;
        (fit.ix, ENGINE_AXES.map(|a| moved[a]))
    };
    Ok(EngineProfile {
        engine,
        rows: own.len(),
        calibration: Calibration {
            name: engine,
            ..measured_at(&ix)
        },
        ix,
        fixed,
    })
}

/// Every engine's profile, fitted once on the [`Role::Calibration`] rows from the pooled
/// `measured` fit ([`fit_measured()`]).
static ENGINE_PROFILES: Lazy<Result<Vec<EngineProfile>, Error>> = Lazy::new(|| {
    let rows: Vec<&Measurement> = measurements()?
        .iter()
        .filter(|m| m.role == Role::Calibration)
        .collect();
    let (pooled, _) = fit_measured()?;
    let rows = FitRows::new(&rows)?;
    ENGINES
        .iter()
        .map(|e| engine_profile_on(e, &rows, pooled))
        .collect()
});

/// Every engine's profile ([`ENGINES`] order), fitted on the calibration rows.
///
/// Errors: the data file does not parse, or a setup the roofline rejects.
pub fn engine_profiles() -> Result<&'static [EngineProfile], Error> {
    ENGINE_PROFILES
        .as_ref()
        .map(Vec::as_slice)
        .map_err(Clone::clone)
}

/// The profile `--engine NAME` selects.
///
/// Errors: an unknown engine (with the list), or as [`engine_profiles`].
pub fn engine_profile(name: &str) -> Result<&'static EngineProfile, Error> {
    let name = engine_name(name)?;
    engine_profiles()?
        .iter()
        .find(|p| p.engine == name)
        .ok_or_else(|| Error::Argument(format!("no profile for engine {name}")))
}

/// The names of the [`ENGINE_AXES`], as [`super::MEASURED_GRID`] gives them.
pub fn engine_axis_names() -> [&'static str; ENGINE_AXES.len()] {
    ENGINE_AXES.map(|a| MEASURED_GRID[a].name)
}

const _: () = assert!(ENGINE_AXES[ENGINE_AXES.len() - 1] < AXES);

#[cfg(test)]
mod tests {
    use super::*;

    /// An engine's refit is its own rows drawn toward the rest. Alone, its rows give the
    /// search on them; with every other row as the prior, the same constants are refitted
    /// (those its own rows move) and each lands no further from the pooled one, nearer on
    /// at least one.
    #[test]
    fn an_engine_profile_is_its_own_rows_drawn_toward_the_pool() {
        let ms: Vec<&Measurement> = measurements().unwrap().iter().collect();
        let rows = FitRows::new(&ms).unwrap();
        let (pooled, _) = fit_measured().unwrap();
        let only_vllm = rows.filter(|m| m.engine == "vllm");
        let alone = engine_profile_on("vllm", &only_vllm, pooled).unwrap();
        let own_fit = search(&only_vllm, pooled, &ENGINE_AXES, Moves::Climb).unwrap();
        assert_eq!(alone.ix, own_fit.ix);
        let drawn = engine_profile_on("vllm", &rows, pooled).unwrap();
        assert_eq!(drawn.fixed, alone.fixed);
        assert!(drawn.rows >= MIN_ENGINE_ROWS);
        assert!(drawn.fixed.iter().any(|&f| f), "{drawn:?}");
        let from_pool = |ix: &Indices, a: usize| ix[a].abs_diff(pooled[a]);
        for a in ENGINE_AXES {
            assert!(
                from_pool(&drawn.ix, a) <= from_pool(&alone.ix, a),
                "{}: {} alone, {} drawn, {} pooled",
                MEASURED_GRID[a].name,
                alone.ix[a],
                drawn.ix[a],
                pooled[a]
            );
        }
        assert!(
            ENGINE_AXES
                .iter()
                .any(|&a| from_pool(&drawn.ix, a) < from_pool(&alone.ix, a))
        );
    }

    /// An engine with no rows keeps the pooled profile and says no row fixed it.
    #[test]
    fn an_engine_without_rows_keeps_the_pooled_profile() {
        let (pooled, _) = fit_measured().unwrap();
        let p = engine_profile_on("lightllm", &FitRows::new(&[]).unwrap(), pooled).unwrap();
        assert_eq!(p.ix, pooled);
        assert_eq!(p.fixed, [false; ENGINE_AXES.len()]);
        assert_eq!(p.rows, 0);
    }
}
