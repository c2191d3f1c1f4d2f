//! Profiles per serving engine: the pooled `measured` fit with the terms engines differ in
//! (bandwidth efficiency, fixed cost per step, all-reduce latency per interconnect family,
//! cost per sequence per layer) refitted on that engine's own rows.

use super::engines::{ENGINES, engine_name};
use super::fast::FitRows;
use super::fit_measured::{AXES, ENGINE_AXES, Indices, MEASURED_GRID, Moves, measured_at, search};
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

/// One engine's profile and what fixed it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EngineProfile {
    /// The engine, one of [`ENGINES`].
    pub engine: &'static str,
    /// Rows of that engine the refit saw.
    pub rows: usize,
    /// The profile: the pooled fit's constants, with [`ENGINE_AXES`] refitted.
    pub calibration: Calibration,
    /// Grid indices of the profile ([`super::MEASURED_GRID`]).
    pub ix: Indices,
    /// Per axis of [`ENGINE_AXES`], whether the engine's rows fix it; an axis they do not
    /// fix keeps the pooled value.
    pub fixed: [bool; ENGINE_AXES.len()],
}

/// The profile of `engine` refitted on `rows` (those of that engine are used) from the
/// pooled grid indices `pooled`: [`search`] over [`ENGINE_AXES`]. An engine with fewer
/// than [`MIN_ENGINE_ROWS`] rows or [`MIN_ENGINE_PUBLISHERS`] publishers, or `other`, keeps
/// `pooled` unchanged.
///
/// Errors: a setup the roofline rejects.
pub fn engine_profile_on(
    engine: &'static str,
    rows: &FitRows<'_>,
    pooled: Indices,
) -> Result<EngineProfile, Error> {
    let own = rows.filter(|m| m.engine == engine);
    let too_few = own.len() < MIN_ENGINE_ROWS || own.publishers() < MIN_ENGINE_PUBLISHERS;
    let (ix, fixed) = if too_few || engine == "other" {
        (pooled, [false; ENGINE_AXES.len()])
    } else {
        let fit = search(&own, pooled, &ENGINE_AXES, Moves::Climb)?;
        (fit.ix, ENGINE_AXES.map(|a| fit.fixed[a]))
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

    /// An engine's refit is fitted on its own rows only: moving a row of another engine
    /// changes nothing of it.
    #[test]
    fn an_engine_profile_reads_only_its_own_rows() {
        let ms: Vec<&Measurement> = measurements().unwrap().iter().collect();
        let rows = FitRows::new(&ms).unwrap();
        let (pooled, _) = fit_measured().unwrap();
        let a = engine_profile_on("vllm", &rows, pooled).unwrap();
        let only_vllm = rows.filter(|m| m.engine == "vllm");
        let b = engine_profile_on("vllm", &only_vllm, pooled).unwrap();
        assert_eq!(a, b);
        assert!(a.rows >= MIN_ENGINE_ROWS);
        assert!(a.fixed.iter().any(|&f| f), "{a:?}");
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
