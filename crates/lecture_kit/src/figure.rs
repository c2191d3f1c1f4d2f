//! The figure model: what a lecture wants drawn, as data — panels of series of points on
//! two axes, reference lines, shaded regions, and words where there is nothing to draw.
//!
//! A demo builds a [`Figure`] from its figures; the SVG renderer ([`crate::render::svg`])
//! draws it and the JSON export carries it, so a figure never holds a number that the
//! export lacks. Nothing here knows about plotting libraries.

use serde::Serialize;

use crate::error::Error;

/// One figure (one SVG file): a title and one or more panels, stacked vertically or in
/// rows side by side ([`Figure::rows`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    /// The file stem, e.g. `"knee"` → `knee.svg`.
    pub id: String,
    /// The title drawn above the panels.
    pub title: String,
    /// The panels, top to bottom (row by row, left to right in a row).
    pub panels: Vec<Panel>,
    /// How many panels each row holds, top to bottom; empty: one a row. How the figure is
    /// laid out, not what it shows: the export leaves it out.
    #[serde(skip)]
    pub rows: Vec<usize>,
}

impl Figure {
    /// A figure of `panels` under `title`, stacked. Its file name (`id`) is left empty: a
    /// demo's figure gets one from the kit (`demo1.svg`), or name it with [`Figure::id`].
    pub fn new(title: impl Into<String>, panels: Vec<Panel>) -> Self {
        Figure {
            id: String::new(),
            title: title.into(),
            panels,
            rows: Vec::new(),
        }
    }

    /// The same figure written to `{id}.svg`.
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = id.into();
        self
    }

    /// The same figure with its panels in rows of `rows[0]`, `rows[1]`, … panels side by
    /// side (`&[1, 2]`: one across the top, two below it), so that a figure of several
    /// panels fits a slide. Each panel is as wide as a stacked one; a row of fewer panels
    /// than the widest row spreads them over the figure's width. The renderer refuses rows
    /// that do not hold the panels exactly.
    pub fn rows(mut self, rows: &[usize]) -> Self {
        self.rows = rows.to_vec();
        self
    }

    /// The same figure with its panels in rows of `n` side by side, the last row holding
    /// what is left ([`Figure::rows`]); `n` of 0 or 1 stacks them.
    ///
    /// ```
    /// use lecture_kit::{Axis, Figure, Panel};
    /// let panel = || Panel::new("", Axis::linear("x"), Axis::linear("y"));
    /// let five = Figure::new("图", (0..5).map(|_| panel()).collect()).columns(2);
    /// assert_eq!(five.rows, [2, 2, 1]);
    /// ```
    pub fn columns(self, n: usize) -> Self {
        let total = self.panels.len();
        let rows: Vec<usize> = match n {
            0 | 1 => Vec::new(),
            n => (0..total).step_by(n).map(|i| n.min(total - i)).collect(),
        };
        self.rows(&rows)
    }
}

/// One chart: axes, series, reference lines, shaded regions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Panel {
    /// The panel's own title (may be empty).
    pub title: String,
    /// The horizontal axis.
    pub x: Axis,
    /// The vertical axis.
    pub y: Axis,
    /// The series, in legend order.
    pub series: Vec<Series>,
    /// Horizontal reference lines (e.g. the 1.0× break-even line).
    pub hlines: Vec<RefLine>,
    /// Ranges of x (e.g. "批 > 952 放不下"), each in the colour of a series: drawn as a
    /// labelled band above the data, with a dashed line where the range starts.
    pub regions: Vec<Region>,
    /// Words drawn instead of the chart when there is nothing to plot (e.g. "放不下"); a
    /// panel with a message and no series draws no axes.
    pub message: Option<String>,
    /// Whether its points were measured at run time: when measured values are masked, the
    /// panel draws [`crate::value::MASKED`] instead (see [`crate::Report::masked`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub measured: bool,
}

impl Panel {
    /// A panel with these axes and nothing on it yet.
    pub fn new(title: impl Into<String>, x: Axis, y: Axis) -> Self {
        Panel {
            title: title.into(),
            x,
            y,
            series: Vec::new(),
            hlines: Vec::new(),
            regions: Vec::new(),
            message: None,
            measured: false,
        }
    }

    /// The same panel with `series` on it.
    pub fn with(mut self, series: impl IntoIterator<Item = Series>) -> Self {
        self.series.extend(series);
        self
    }

    /// Whether any series has a point to draw.
    pub fn has_points(&self) -> bool {
        self.series.iter().any(|s| !s.points.is_empty())
    }
}

/// One axis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Axis {
    /// The axis title.
    pub label: String,
    /// Linear or logarithmic.
    pub scale: Scale,
    /// How tick labels are written.
    pub ticks: TickFormat,
    /// For a categorical axis, the category names: point x = 0, 1, … is the i-th.
    pub categories: Vec<String>,
    /// A fixed range; `None` fits the data (with a margin).
    pub range: Option<(f64, f64)>,
}

impl Axis {
    /// A linear axis of plain numbers.
    pub fn linear(label: impl Into<String>) -> Self {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
            ticks: TickFormat::Plain,
            categories: Vec::new(),
            range: None,
        }
    }

    /// A logarithmic axis of plain numbers (ticks 1, 10, 100, 1K…).
    pub fn log(label: impl Into<String>) -> Self {
        Axis {
            scale: Scale::Log,
            ..Axis::linear(label)
        }
    }

    /// A categorical axis: one tick per category.
    pub fn categories(label: impl Into<String>, names: Vec<String>) -> Self {
        Axis {
            categories: names,
            ..Axis::linear(label)
        }
    }

    /// The same axis with ticks written as multiples ("1×", "1.5×").
    pub fn times(mut self) -> Self {
        self.ticks = TickFormat::Times;
        self
    }

    /// The same axis over a fixed range.
    pub fn range(mut self, lo: f64, hi: f64) -> Self {
        self.range = Some((lo, hi));
        self
    }

    /// The same axis over a fixed range fitted to `values` — the points of several panels
    /// that should share one scale, a reference line that must show: from the lowest to the
    /// highest, widened on each side by `margin` times that span but at least `min_margin`,
    /// and cut at 0 when no value is negative. Non-finite values are ignored; with no finite
    /// value the axis is unchanged.
    ///
    /// ```
    /// use lecture_kit::Axis;
    /// // Speedups 0.8× to 2×, and the 1× line: 1.2 wide, 10% of it (0.12) each side.
    /// let y = Axis::linear("speedup").fit([1.2, 0.8, 2.0, 1.0], 0.1, 0.05);
    /// let (lo, hi) = y.range.unwrap();
    /// assert!((lo - 0.68).abs() < 1e-12 && (hi - 2.12).abs() < 1e-12);
    /// ```
    pub fn fit(self, values: impl IntoIterator<Item = f64>, margin: f64, min_margin: f64) -> Self {
        let finite = values.into_iter().filter(|v| v.is_finite());
        let extent = finite.fold(None, |e: Option<(f64, f64)>, v| match e {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        });
        let Some((lo, hi)) = extent else {
            return self;
        };
        let pad = ((hi - lo) * margin).max(min_margin);
        let bottom = if lo >= 0.0 {
            (lo - pad).max(0.0)
        } else {
            lo - pad
        };
        self.range(bottom, hi + pad)
    }
}

/// Linear or logarithmic axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// Evenly spaced values.
    Linear,
    /// Evenly spaced powers of ten.
    Log,
}

/// How tick labels are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TickFormat {
    /// As people write numbers: 1, 2.5, 10, 1K, 32K, 1M.
    Plain,
    /// A multiple: 1×, 1.5×, 2×.
    Times,
}

/// One series of points.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    /// The legend entry.
    pub label: String,
    /// The points `(x, y)`, in drawing order.
    pub points: Vec<(f64, f64)>,
    /// How the points are drawn.
    pub style: SeriesStyle,
}

impl Series {
    /// A series drawn as a line with a marker on every point.
    pub fn line(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series {
            label: label.into(),
            points,
            style: SeriesStyle::LineMarkers,
        }
    }

    /// A line through `point(x)` for each of `xs`, in order: the curve of a sweep, or the
    /// first error `point` returns (`Series::try_line("batch 1", ns, |n| Ok((n as f64,
    /// time(n)?)))`).
    pub fn try_line<X>(
        label: impl Into<String>,
        xs: impl IntoIterator<Item = X>,
        point: impl FnMut(X) -> Result<(f64, f64), Error>,
    ) -> Result<Self, Error> {
        let points = xs.into_iter().map(point).collect::<Result<_, _>>()?;
        Ok(Series::line(label, points))
    }

    /// A series drawn as markers only (categories, where a line would join unrelated
    /// things).
    pub fn dots(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series {
            label: label.into(),
            points,
            style: SeriesStyle::Markers,
        }
    }

    /// Markers over a categorical axis ([`Axis::categories`]): `ys[i]` at category i, no
    /// marker where it is `None` (a value that could not be computed there).
    pub fn category_dots(
        label: impl Into<String>,
        ys: impl IntoIterator<Item = Option<f64>>,
    ) -> Self {
        let points = ys.into_iter().enumerate();
        let points = points.filter_map(|(i, y)| Some((i as f64, y?)));
        Series::dots(label, points.collect())
    }
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SeriesStyle {
    /// A line through the points, a marker on each.
    LineMarkers,
    /// Markers only.
    Markers,
}

/// A horizontal reference line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefLine {
    /// Its height, in y units.
    pub y: f64,
    /// Its label, drawn at the right end.
    pub label: String,
}

impl RefLine {
    /// A line at height `y`, labelled `label`.
    pub fn new(y: f64, label: impl Into<String>) -> Self {
        RefLine {
            y,
            label: label.into(),
        }
    }
}

/// A shaded range of x values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Region {
    /// Where it starts.
    pub x0: f64,
    /// Where it ends.
    pub x1: f64,
    /// Its label.
    pub label: String,
    /// The series whose colour it takes.
    pub series: usize,
}

impl Region {
    /// The range `x0..x1`, labelled `label`, in the colour of series `series`.
    pub fn new(x0: f64, x1: f64, label: impl Into<String>, series: usize) -> Self {
        Region {
            x0,
            x1,
            label: label.into(),
            series,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fallible_line_has_one_point_per_input_or_the_first_error() {
        let inverse = |n: u64| match n {
            0 => Err(Error::Usage("n = 0".into())),
            n => Ok((n as f64, 1.0 / n as f64)),
        };
        let s = Series::try_line("1/n", [1, 2, 4], inverse).unwrap();
        assert_eq!(s.points, [(1.0, 1.0), (2.0, 0.5), (4.0, 0.25)]);
        assert_eq!(s.style, SeriesStyle::LineMarkers);
        assert_eq!(s.label, "1/n");
        let err = Series::try_line("1/n", [1, 0, 4], inverse).unwrap_err();
        assert_eq!(err.to_string(), "n = 0");
        assert!(
            Series::try_line("none", Vec::<u64>::new(), inverse)
                .unwrap()
                .points
                .is_empty()
        );
    }

    #[test]
    fn a_fitted_axis_spans_its_values_with_a_margin_each_side_and_stops_at_zero() {
        let fit = |values: &[f64], margin, min| Axis::linear("y").fit(values.to_vec(), margin, min);
        let close = |a: &Axis, want: (f64, f64)| {
            let r = a.range.expect("a fitted range");
            assert!(
                (r.0 - want.0).abs() < 1e-12 && (r.1 - want.1).abs() < 1e-12,
                "{r:?}"
            );
        };
        // By hand: 0.8 to 2.0 is 1.2 wide; 10% of it is 0.12, more than the 0.05 minimum.
        close(&fit(&[1.2, 0.8, 2.0], 0.1, 0.05), (0.68, 2.12));
        // 1.0 to 1.01: 6% of 0.01 is 0.0006, so the minimum margin 0.05 applies.
        close(&fit(&[1.01, 1.0], 0.06, 0.05), (0.95, 1.06));
        // 0.02 to 1.0 with a 0.1 margin would start at −0.078: non-negative data stops at 0.
        close(&fit(&[0.02, 1.0], 0.1, 0.0), (0.0, 1.098));
        // Negative data is not cut: −1 to 1, 0.2 each side.
        close(&fit(&[-1.0, 1.0], 0.1, 0.0), (-1.2, 1.2));
        // Non-finite values do not count; none at all leave the axis as it was.
        close(
            &fit(&[f64::NAN, 2.0, f64::INFINITY, 1.0], 0.0, 0.5),
            (0.5, 2.5),
        );
        assert_eq!(fit(&[f64::NAN], 0.1, 0.05), Axis::linear("y"));
        assert_eq!(fit(&[], 0.1, 0.05), Axis::linear("y"));
        let kept = Axis::log("x").range(1.0, 8.0).fit([f64::NAN], 0.1, 0.1);
        assert_eq!(kept.range, Some((1.0, 8.0)));
        // The label, scale and ticks are the axis's own.
        let y = Axis::linear("speedup").times().fit([1.0], 0.06, 0.05);
        assert_eq!((y.label.as_str(), y.ticks), ("speedup", TickFormat::Times));
        close(&y, (0.95, 1.05));
    }

    #[test]
    fn category_dots_sit_at_their_category_and_skip_missing_values() {
        let s = Series::category_dots("τ", [Some(1.5), None, Some(2.5), None]);
        assert_eq!(s.points, [(0.0, 1.5), (2.0, 2.5)]);
        assert_eq!(s.style, SeriesStyle::Markers);
        assert!(
            Series::category_dots("none", [None, None])
                .points
                .is_empty()
        );
    }
}
