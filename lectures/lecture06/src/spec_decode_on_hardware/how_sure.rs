//! How sure the planner's figures are, where it can say: under the profiles fitted on
//! published rows (`--calibration measured`, `--engine`), a figure's 80% interval from the
//! residuals of published rows like its setup (`planner::validation::shipped_interval`, judged
//! in demo 5). Demos 1 and 2 print them beside their figures; under the seed's or the
//! fitted profile, which the intervals do not judge, they print none. Under the same
//! profiles, the words for a constant only one or two publishers fix that moves a figure
//! (`planner::flags::Terms::thin_ends`).

use decode_lab::Scenario;
use lecture_kit::Error;
use planner::flags::{Terms, ThinEnds};
use planner::validation::{Interval, Kind};

use super::words::constant_in;

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

/// `a–b` with the smaller first, each as `show` writes it.
pub fn span(a: f64, b: f64, show: impl Fn(f64) -> String) -> String {
    format!("{}–{}", show(a.min(b)), show(a.max(b)))
}

/// A range of speedups: "1.00×–1.34×" (no "变慢" inside a range).
pub fn speedups(a: f64, b: f64) -> String {
    span(a, b, |x| format!("{x:.2}×"))
}

/// One thin constant's clause: the constant, the publishers whose rows fix it, where
/// refitting without one of them puts it, and the figures that move (`moved`, already
/// worded); `None` when none does.
pub fn thin_clause(ends: &ThinEnds, moved: &[String]) -> Option<String> {
    if moved.is_empty() {
        return None;
    }
    let support = ends.support;
    let publishers: Vec<&str> = support.publishers.iter().map(|p| p.0).collect();
    let (low, high) = ends.values;
    Some(format!(
        "{}（只有 {} 的行定得下）在 {} 之间，{}",
        support.term,
        publishers.join("、"),
        span(low, high, |v| constant_in(support.axis, v, low.max(high))),
        moved.join("，")
    ))
}

/// The sentence that gathers the thin constants' clauses about `figures` ("这个价格",
/// "这些加速比"); `None` when there is none.
pub fn thin_sentence(figures: &str, clauses: &[String]) -> Option<String> {
    (!clauses.is_empty()).then(|| {
        format!(
            "{figures}还取决于只有一两家发布者定得下的常数；每次拿掉其中一家、用其余全部发布的行重新拟合时：{}。",
            clauses.join("；")
        )
    })
}
