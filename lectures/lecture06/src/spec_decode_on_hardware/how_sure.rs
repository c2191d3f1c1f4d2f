//! How sure the planner's figures are, where it can say: under the profiles fitted on
//! published rows (`--calibration measured`, `--engine`), a figure's 80% interval from the
//! residuals of published rows like its setup (`planner::validation::shipped_interval`, judged
//! in demo 5). Demos 1 and 2 print them beside their figures; under the seed's or the
//! fitted profile, which the intervals do not judge, they print none.

use decode_lab::Scenario;
use lecture_kit::Error;
use planner::flags::Terms;
use planner::validation::{Interval, Kind};

/// The sentence's opening: what the intervals are (demos 1 and 2 print it).
pub const OPENING: &str = "按公开数据标定后有多准";

/// An interval's factors and the rows it is made from: "×0.76–×1.23（21 行）".
pub fn factors(x: &Interval) -> String {
    format!("×{:.2}–×{:.2}（{} 行）", x.low, x.high, x.rows)
}

/// Whether `terms` are the profiles the intervals judge (measured or an engine's).
pub fn judged(terms: &Terms) -> bool {
    let measured = terms.calibration.is_some_and(|c| c.name == "measured");
    measured || terms.engine.is_some()
}

/// The 80% interval of a figure of `kind` at `batch` for the setup `s` (its card and
/// weight format), as factors of the prediction; `None` when too few rows are like it.
pub fn interval(s: &Scenario, kind: Kind, batch: u64) -> Result<Option<Interval>, Error> {
    let weights = s.deployment.weights;
    let x = planner::validation::shipped_interval(kind, batch, &s.hw, weights)?;
    Ok(x)
}
