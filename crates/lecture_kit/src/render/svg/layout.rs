//! Where the parts of a figure go: the figure's and panels' sizes, the ranges of the
//! axes, where a data value lands in pixels, and how tick labels are written.
//!
//! Everything here is a pure function of the figure model and the sizes: plain numbers,
//! ranges and strings, no plotters type. [`super::place`] puts the labels, bands and
//! legend on top of this; [`super::draw`] renders both (and its tests check that plotters
//! draws a value at the pixel [`PlotMap::pixel`] computes).
//!
//! Pixels are those of a panel's own area: x to the right, y down, (0, 0) at its top left.

use std::ops::Range;

use crate::figure::{Axis, Figure, Panel, Scale, TickFormat};

/// Width of a figure, pixels.
pub const WIDTH: u32 = 960;
/// Height of a one-panel figure, pixels.
pub const SINGLE_HEIGHT: u32 = 600;
/// Height of each panel of a multi-panel figure, pixels (below the figure's title).
pub const PANEL_HEIGHT: u32 = 400;
/// Height of the figure's title strip, pixels.
pub const TITLE_HEIGHT: u32 = 44;
/// Height of a panel that has nothing to plot and says why, pixels.
pub const MESSAGE_HEIGHT: u32 = 200;
/// Height a panel's title takes at the top of its panel, pixels.
pub const PANEL_TITLE_HEIGHT: i32 = 26;
/// How far below the figure's top its title is anchored (at the centre of its width).
pub const TITLE_TOP: i32 = 12;
/// How far below the top of its panel a panel's title is anchored, pixels.
pub const PANEL_TITLE_TOP: i32 = 6;

// Pixel sizes of the texts (the SVG's font-size).
/// The figure's title.
pub const TITLE_PX: f64 = 20.0;
/// A panel's title.
pub const PANEL_TITLE_PX: f64 = 16.0;
/// An axis title.
pub const AXIS_PX: f64 = 14.0;
/// A tick label.
pub const TICK_PX: f64 = 13.0;
/// A legend entry.
pub const LEGEND_PX: f64 = 13.0;
/// A region's or reference line's label.
pub const NOTE_PX: f64 = 12.0;
/// The message of a panel with nothing to plot.
pub const MESSAGE_PX: f64 = 18.0;

// Layout of a chart inside its panel.
/// Margin around a chart (top below the panel title, bottom, left), pixels.
pub const MARGIN: i32 = 14;
/// Margin to the right of a chart, pixels (room for the last tick label).
pub const RIGHT_MARGIN: i32 = MARGIN + 6;
/// Height of the x tick labels and axis title below the plotting area, pixels.
pub const X_LABEL_AREA: i32 = 50;
/// Width of the y tick labels and axis title left of the plotting area, pixels.
pub const Y_LABEL_AREA: i32 = 72;
/// Height of one region band, pixels.
pub const BAND: i32 = 20;
/// The gap below the last region band, pixels.
pub const BAND_GAP: i32 = 8;
/// Height of one legend row, pixels.
pub const LEGEND_ROW: i32 = 20;

/// A box in pixels, `x0 < x1`, `y0 < y1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    /// Left edge.
    pub x0: i32,
    /// Top edge.
    pub y0: i32,
    /// Right edge.
    pub x1: i32,
    /// Bottom edge.
    pub y1: i32,
}

impl Rect {
    /// Whether `(x, y)` is inside the box grown by `pad` on every side (edges included).
    pub fn contains(&self, (x, y): (i32, i32), pad: i32) -> bool {
        x >= self.x0 - pad && x <= self.x1 + pad && y >= self.y0 - pad && y <= self.y1 + pad
    }

    /// Whether the two boxes share some area (touching edges do not count).
    pub fn overlaps(&self, o: &Rect) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }

    /// The two corners, top left and bottom right, as plotters takes a rectangle.
    pub fn corners(&self) -> [(i32, i32); 2] {
        [(self.x0, self.y0), (self.x1, self.y1)]
    }
}

/// Roughly how wide `s` is at `px` pixels (no font at hand to measure), whole pixels
/// rounded up: a Chinese character is one em, a space a quarter, other Latin letters and
/// digits a little over half of one.
pub fn text_width(s: &str, px: f64) -> i32 {
    let ems: f64 = s
        .chars()
        .map(
            |c| match console::display_width(c.encode_utf8(&mut [0; 4])) {
                0 => 0.0,
                1 if c == ' ' => 0.28,
                1 => 0.58,
                _ => 1.0,
            },
        )
        .sum();
    (ems * px).ceil() as i32
}

/// The height of each panel of `figure`, pixels: a chart gets the full height (all of a
/// one-panel figure below its title, [`PANEL_HEIGHT`] each of several); a panel that only
/// says why there is nothing to draw ("放不下") gets a strip of [`MESSAGE_HEIGHT`], not a
/// page of white. The figure is [`TITLE_HEIGHT`] plus their sum tall.
pub fn panel_heights(figure: &Figure) -> Vec<u32> {
    let n = figure.panels.len();
    figure
        .panels
        .iter()
        .map(|p| match (ranges(p).is_some(), n) {
            (false, _) => MESSAGE_HEIGHT,
            (true, 1) => SINGLE_HEIGHT - TITLE_HEIGHT,
            (true, _) => PANEL_HEIGHT,
        })
        .collect()
}

/// How much of the top of a panel its title takes, pixels: 0 when it has none.
pub fn panel_title_height(panel: &Panel) -> i32 {
    if panel.title.is_empty() {
        0
    } else {
        PANEL_TITLE_HEIGHT
    }
}

/// A tick label as people write it: no trailing ".0", thousands as K, millions as M.
///
/// ```
/// use lecture_kit::render::svg::tick_label;
/// use lecture_kit::figure::TickFormat::{Plain, Times};
/// assert_eq!(tick_label(1.0, Plain), "1");
/// assert_eq!(tick_label(10000.0, Plain), "10K");
/// assert_eq!(tick_label(1536.0, Plain), "1.5K");
/// assert_eq!(tick_label(0.25, Plain), "0.25");
/// assert_eq!(tick_label(1.5, Times), "1.5×");
/// assert_eq!(tick_label(2.0, Times), "2×");
/// ```
pub fn tick_label(v: f64, format: TickFormat) -> String {
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    let plain = if v.abs() >= 1e6 {
        format!("{}M", trim(format!("{:.1}", v / 1e6)))
    } else if v.abs() >= 1e3 {
        format!("{}K", trim(format!("{:.1}", v / 1e3)))
    } else if v == 0.0 {
        "0".to_string()
    } else {
        // Enough decimals to tell neighbouring ticks apart, none that are zeros.
        let decimals = (2 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
        let s = trim(format!("{v:.decimals$}"));
        if s == "-0" { "0".to_string() } else { s }
    };
    match format {
        TickFormat::Plain => plain,
        TickFormat::Times => format!("{plain}×"),
    }
}

/// The label of the tick at `v` on the x axis `axis`: a number ([`tick_label`]), or on a
/// categorical axis the name of the category at a whole `v` and nothing between them.
pub fn x_tick_label(axis: &Axis, v: f64) -> String {
    if axis.categories.is_empty() {
        tick_label(v, axis.ticks)
    } else if (v - v.round()).abs() < 1e-6 && v >= 0.0 {
        axis.categories
            .get(v.round() as usize)
            .cloned()
            .unwrap_or_default()
    } else {
        String::new()
    }
}

/// The range of the data (and of `extra` values such as reference lines), with a margin;
/// a fixed range as given, if it is one the scale can show. `None` when there is no
/// finite value to show (on a log scale: no positive one).
pub fn span(
    values: impl Iterator<Item = f64>,
    scale: Scale,
    fixed: Option<(f64, f64)>,
) -> Option<Range<f64>> {
    if let Some((lo, hi)) = fixed {
        let usable = lo.is_finite() && hi.is_finite() && lo < hi;
        if usable && (scale == Scale::Linear || lo > 0.0) {
            return Some(lo..hi);
        }
    }
    let (lo, hi) = values
        .filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        return None;
    }
    Some(match scale {
        Scale::Log if hi / lo < 1.0001 => (lo / 2.0)..(hi * 2.0),
        Scale::Log => (lo / 1.3)..(hi * 1.3),
        // One value, or all equal: a range around it.
        Scale::Linear if hi - lo < 1e-12 => {
            (lo - lo.abs().max(1.0) * 0.1)..(hi + hi.abs().max(1.0) * 0.1)
        }
        Scale::Linear => {
            let pad = ((hi - lo) * 0.08).max(hi.abs().max(1e-9) * 0.02);
            (lo - pad)..(hi + pad)
        }
    })
}

/// Raises the top of `r` so that its highest `fraction` (at most half) is free of data
/// (for the region bands), on the axis's own scale.
pub fn with_headroom(r: Range<f64>, scale: Scale, fraction: f64) -> Range<f64> {
    let f = fraction.clamp(0.0, 0.5);
    match scale {
        Scale::Linear => r.start..(r.end - f * r.start) / (1.0 - f),
        Scale::Log => {
            let (lo, hi) = (r.start.ln(), r.end.ln());
            r.start..((hi - f * lo) / (1.0 - f)).exp()
        }
    }
}

/// Ticks an axis gets in place of plotters' own, where those would mislead: a log axis
/// spanning fewer than three powers of ten (plotters labels only the powers, so 14–168
/// shows "100" alone) gets 1, 2, 5 times each power inside `range`; a linear axis whose
/// values (`values`) are all whole numbers, at most 12 apart, gets every whole number
/// inside `range` (no "1.2" for a count). `None`: plotters' ticks are right.
///
pub fn key_points(axis: &Axis, values: &[f64], range: &Range<f64>) -> Option<Vec<f64>> {
    // An empty range, or one with a NaN end: nothing to tick.
    let empty = range.start.partial_cmp(&range.end) != Some(std::cmp::Ordering::Less);
    if !axis.categories.is_empty() || empty {
        return None;
    }
    match axis.scale {
        Scale::Log => {
            if range.start <= 0.0 || !range.end.is_finite() {
                return None;
            }
            let first = range.start.log10().floor() as i32;
            let last = range.end.log10().ceil() as i32;
            let inside = |v: &f64| range.contains(v);
            let powers = (first..=last).map(|k| 10f64.powi(k)).filter(inside);
            if powers.count() >= 3 {
                return None;
            }
            let steps = (first..=last).flat_map(|k| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(k)));
            let ticks: Vec<f64> = steps.filter(inside).collect();
            (ticks.len() >= 2).then_some(ticks)
        }
        Scale::Linear => {
            let whole = values.iter().all(|v| v.is_finite() && v.fract() == 0.0);
            let (lo, hi) = (range.start.ceil(), range.end.floor());
            if !whole || values.is_empty() || hi - lo > 12.0 || hi < lo {
                return None;
            }
            let count = (hi - lo) as usize + 1;
            Some((0..count).map(|i| lo + i as f64).collect())
        }
    }
}

/// The x and y ranges a panel shows, before headroom; `None` when it has nothing to plot.
/// A categorical x axis runs from half a category before the first to half after the last.
pub fn ranges(panel: &Panel) -> Option<(Range<f64>, Range<f64>)> {
    if !panel.has_points() {
        return None;
    }
    let x = if panel.x.categories.is_empty() {
        let xs = panel
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0));
        let regions = panel.regions.iter().flat_map(|r| [r.x0, r.x1]);
        span(xs.chain(regions), panel.x.scale, panel.x.range)?
    } else {
        -0.6..panel.x.categories.len() as f64 - 0.4
    };
    let ys = panel
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1));
    let y = span(
        ys.chain(panel.hlines.iter().map(|h| h.y)),
        panel.y.scale,
        panel.y.range,
    )?;
    Some((x, y))
}

/// Where the chart goes in a panel: the margins and label areas around the plotting area,
/// and the rows of region bands at its top.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    /// Top of the chart (below the panel title): the chart's top margin.
    pub top: i32,
    /// The plotting area, inside the axes.
    pub plot: Rect,
    /// Rows of region bands at the top of the plotting area.
    pub bands: i32,
}

impl Frame {
    /// The frame of a chart in a panel `size` = (width, height) pixels whose title takes
    /// `title_h` pixels, with `regions` region bands.
    pub fn new((w, h): (i32, i32), title_h: i32, regions: usize) -> Self {
        let top = title_h + MARGIN;
        Frame {
            top,
            plot: Rect {
                x0: MARGIN + Y_LABEL_AREA,
                y0: top,
                x1: w - RIGHT_MARGIN,
                y1: h - MARGIN - X_LABEL_AREA,
            },
            bands: regions as i32,
        }
    }

    /// Pixels the region bands take at the top of the plotting area (their rows and the
    /// gap below them; none without bands).
    pub fn bands_px(&self) -> i32 {
        if self.bands == 0 {
            0
        } else {
            self.bands * BAND + BAND_GAP
        }
    }

    /// The fraction of the plotting area's height the region bands take.
    pub fn headroom(&self) -> f64 {
        self.bands_px() as f64 / (self.plot.y1 - self.plot.y0).max(1) as f64
    }

    /// Where the data may start, below the region bands.
    pub fn data_top(&self) -> i32 {
        self.plot.y0 + self.bands_px()
    }
}

/// Where the values of one axis land: `range` of values over the pixels from `pixels.0`
/// (where `range.start` lands) to `pixels.1` (where `range.end` lands), evenly in the
/// values or, on a log scale, in their logarithms. A log range must be positive ([`span`]
/// makes it so).
#[derive(Debug, Clone, PartialEq)]
pub struct AxisMap {
    /// Linear or logarithmic.
    pub scale: Scale,
    /// The values shown.
    pub range: Range<f64>,
    /// The pixels of `range.start` and `range.end`.
    pub pixels: (i32, i32),
}

impl AxisMap {
    /// The pixel at which value `v` lands: rounded towards `pixels.0` (after a 0.001-pixel
    /// nudge the other way, so that 299.9999 is 300), as plotters rounds. A value the
    /// scale cannot place (NaN, or ≤ 0 on a log axis) lands at an end.
    pub fn pixel(&self, v: f64) -> i32 {
        let (lo, hi, v) = match self.scale {
            Scale::Linear => (self.range.start, self.range.end, v),
            Scale::Log => (self.range.start.ln(), self.range.end.ln(), v.ln()),
        };
        let (p0, p1) = self.pixels;
        // Plotters' corner case, kept as it is: a one-value range maps to half the length.
        if lo == hi {
            return (p1 - p0) / 2;
        }
        let t = (v - lo) / (hi - lo);
        let length = p1 - p0;
        if length == 0 {
            return p1;
        }
        if t.is_infinite() {
            return if t.is_sign_positive() { p1 } else { p0 };
        }
        if length > 0 {
            p0 + (length as f64 * t + 1e-3).floor() as i32
        } else {
            p0 + (length as f64 * t - 1e-3).ceil() as i32
        }
    }
}

/// Where a data point lands in a panel: x across the plotting area from its left edge, y
/// up from its bottom edge (both ends one pixel inside the area's right and bottom edges,
/// as plotters places them).
#[derive(Debug, Clone, PartialEq)]
pub struct PlotMap {
    /// The x axis.
    pub x: AxisMap,
    /// The y axis.
    pub y: AxisMap,
}

impl PlotMap {
    /// The map of x values `x` and y values `y`, on their scales, over the plotting area `plot`.
    pub fn new(plot: &Rect, x: (Scale, Range<f64>), y: (Scale, Range<f64>)) -> Self {
        PlotMap {
            x: AxisMap {
                scale: x.0,
                range: x.1,
                pixels: (plot.x0, plot.x1 - 1),
            },
            y: AxisMap {
                scale: y.0,
                range: y.1,
                pixels: (plot.y1 - 1, plot.y0),
            },
        }
    }

    /// The pixel at which the data point `(x, y)` lands.
    pub fn pixel(&self, (x, y): (f64, f64)) -> (i32, i32) {
        (self.x.pixel(x), self.y.pixel(y))
    }
}

/// Where the points of each series of `panel` are drawn, in data units: as given, except
/// that on a categorical axis the dots of several series on one category sit side by
/// side (0.14 of a category apart, centred on it), not on top of each other.
pub fn dodged_points(panel: &Panel) -> Vec<Vec<(f64, f64)>> {
    let n = panel.series.len();
    let dodge = |i: usize| {
        if panel.x.categories.is_empty() {
            0.0
        } else {
            (i as f64 - (n as f64 - 1.0) / 2.0) * 0.14
        }
    };
    panel
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| s.points.iter().map(|&(x, y)| (x + dodge(i), y)).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_points_where_plotters_ticks_would_mislead() {
        // Demo 7's nodes, 14–168 padded: plotters would label 100 and 200 only.
        let nodes = key_points(&Axis::log("节点"), &[14.0, 168.0], &(10.8..218.0));
        assert_eq!(nodes, Some(vec![20.0, 50.0, 100.0, 200.0]));
        // Demo 7's k: whole numbers, not 1.2, 1.4.
        let k = key_points(&Axis::linear("k"), &[1.0, 2.0, 3.0], &(0.84..3.16));
        assert_eq!(k, Some(vec![1.0, 2.0, 3.0]));
        // Three powers of ten or more, fractions, a wide whole-number span: plotters' own.
        assert_eq!(
            key_points(&Axis::log("n"), &[1.0, 257.0], &(0.77..334.0)),
            None
        );
        assert_eq!(
            key_points(&Axis::linear("τ"), &[1.5, 2.0], &(1.4..2.1)),
            None
        );
        assert_eq!(
            key_points(&Axis::linear("b"), &[0.0, 40.0], &(-3.0..43.0)),
            None
        );
        // One decade exactly: 1, 2, 5, 10 inside 0.9–11.
        let one = key_points(&Axis::log("x"), &[1.0, 10.0], &(0.9..11.0));
        assert_eq!(one, Some(vec![1.0, 2.0, 5.0, 10.0]));
        // Nothing to say about a category axis or an empty range.
        let cats = Axis::categories("c", vec!["a".into(), "b".into()]);
        assert_eq!(key_points(&cats, &[0.0, 1.0], &(-0.6..1.6)), None);
        assert_eq!(key_points(&Axis::linear("k"), &[1.0], &(2.0..1.0)), None);
    }
    use crate::figure::{RefLine, Region, Series};

    fn log_axis(lo: f64, hi: f64, pixels: (i32, i32)) -> AxisMap {
        AxisMap {
            scale: Scale::Log,
            range: lo..hi,
            pixels,
        }
    }

    #[test]
    fn a_log_axis_puts_the_geometric_middle_at_the_pixel_middle() {
        // 1..4096 is twelve doublings over 600 px: 50 px a doubling, 64 = 2^6 halfway.
        let a = log_axis(1.0, 4096.0, (0, 600));
        let px: Vec<i32> = [1.0, 8.0, 64.0, 512.0, 4096.0].map(|v| a.pixel(v)).to_vec();
        assert_eq!(px, [0, 150, 300, 450, 600]);
        // The same from 2: the offset of the start counts (2..8192, 128 halfway).
        let a = log_axis(2.0, 8192.0, (0, 600));
        assert_eq!([2.0, 128.0, 8192.0].map(|v| a.pixel(v)), [0, 300, 600]);
        // A y axis runs from the bottom pixel up.
        let a = log_axis(1.0, 4096.0, (600, 0));
        assert_eq!(
            [1.0, 8.0, 64.0, 4096.0].map(|v| a.pixel(v)),
            [600, 450, 300, 0]
        );
    }

    #[test]
    fn pixels_round_towards_the_start_of_the_axis() {
        // 0..10 over 86..939 (853 px): 5 is 426.5 px in, drawn at 426.
        let x = AxisMap {
            scale: Scale::Linear,
            range: 0.0..10.0,
            pixels: (86, 939),
        };
        assert_eq!([0.0, 5.0, 10.0].map(|v| x.pixel(v)), [86, 512, 939]);
        // Upwards, 0..1 over 535..40 (495 px): 0.5 is 247.5 px up, drawn 247 up.
        let y = AxisMap {
            scale: Scale::Linear,
            range: 0.0..1.0,
            pixels: (535, 40),
        };
        assert_eq!([0.0, 0.5, 1.0].map(|v| y.pixel(v)), [535, 288, 40]);
        // What a log axis cannot place lands at its start.
        let a = log_axis(1.0, 100.0, (0, 600));
        assert_eq!([0.0, -3.0, f64::NAN].map(|v| a.pixel(v)), [0, 0, 0]);
    }

    #[test]
    fn log_ticks_read_as_people_write_them() {
        let decades =
            [1.0, 10.0, 100.0, 1000.0, 1e4, 1e6].map(|v| tick_label(v, TickFormat::Plain));
        assert_eq!(decades, ["1", "10", "100", "1K", "10K", "1M"]);
        let between =
            [0.25, 12.5, 123.456, 2048.0, 2.5e6].map(|v| tick_label(v, TickFormat::Plain));
        assert_eq!(between, ["0.25", "12.5", "123", "2K", "2.5M"]);
        // A tick a rounding error below zero is 0, never "-0".
        assert_eq!(tick_label(-1e-9, TickFormat::Plain), "0");
        assert_eq!(tick_label(1.0, TickFormat::Times), "1×");
    }

    #[test]
    fn a_categorical_axis_names_whole_ticks_and_nothing_between() {
        let axis = Axis::categories("卡", vec!["H100".into(), "A100".into()]);
        let labels = [0.0, 0.5, 1.0, 2.0, -1.0].map(|v| x_tick_label(&axis, v));
        assert_eq!(labels, ["H100", "", "A100", "", ""]);
        assert_eq!(x_tick_label(&Axis::log("x").times(), 1000.0), "1K×");
    }

    #[test]
    fn text_width_counts_chinese_as_one_em_and_latin_as_a_little_over_half() {
        assert_eq!(
            text_width("1K", 10.0),
            12,
            "2 × 0.58 em = 11.6 px, rounded up"
        );
        assert_eq!(text_width("a b", 10.0), 15, "0.58 + 0.28 + 0.58 em");
        assert_eq!(text_width("放不下", 12.0), 36);
    }

    fn chart_panel(title: &str) -> Panel {
        let mut p = Panel::new(title, Axis::linear("x"), Axis::linear("y"));
        p.series.push(Series::line("s", vec![(1.0, 2.0)]));
        p
    }

    #[test]
    fn a_chart_gets_the_page_and_a_panel_that_only_talks_gets_a_strip() {
        let one = Figure::new(String::new(), vec![chart_panel("")]).id("a");
        assert_eq!(panel_heights(&one), [600 - 44]);
        let empty = Panel::new("", Axis::linear("x"), Axis::linear("y"));
        let three = Figure {
            panels: vec![chart_panel(""), empty, chart_panel("")],
            ..one
        };
        assert_eq!(panel_heights(&three), [400, 200, 400]);
        assert_eq!(panel_title_height(&chart_panel("题")), 26);
        assert_eq!(panel_title_height(&chart_panel("")), 0);
    }

    #[test]
    fn the_frame_leaves_room_for_the_title_axes_and_bands() {
        // A 960 × 400 panel with a title and two region bands.
        let f = Frame::new((960, 400), 26, 2);
        assert_eq!(f.top, 40, "title 26 + margin 14");
        let plot = Rect {
            x0: 14 + 72,
            y0: 40,
            x1: 960 - 20,
            y1: 400 - 14 - 50,
        };
        assert_eq!(f.plot, plot);
        assert_eq!(f.bands_px(), 2 * 20 + 8);
        assert_eq!(f.data_top(), 88);
        assert!((f.headroom() - 48.0 / 296.0).abs() < 1e-15);
        assert_eq!(Frame::new((960, 400), 0, 0).headroom(), 0.0);
        // Data land one pixel inside the right and bottom edges, as plotters draws them.
        let map = PlotMap::new(&plot, (Scale::Linear, 0.0..1.0), (Scale::Log, 1.0..10.0));
        assert_eq!(map.pixel((0.0, 1.0)), (86, 335));
        assert_eq!(map.pixel((1.0, 10.0)), (939, 40));
    }

    #[test]
    fn ranges_cover_the_points_regions_and_reference_lines() {
        let mut p = Panel::new("", Axis::linear("x").range(0.0, 10.0), Axis::linear("y"));
        p.series
            .push(Series::dots("s", vec![(1.0, 0.0), (2.0, 90.0)]));
        p.hlines.push(RefLine {
            y: 100.0,
            label: "上限".into(),
        });
        let (x, y) = ranges(&p).unwrap();
        assert_eq!(x, 0.0..10.0, "a fixed range as given");
        assert_eq!(y, -8.0..108.0, "0..100 padded by 8%");
        p.x.range = None;
        p.regions.push(Region {
            x0: 1.0,
            x1: 51.0,
            label: "r".into(),
            series: 0,
        });
        assert_eq!(ranges(&p).unwrap().0, -3.0..55.0, "1..51 padded by 8%");
        let cats = Panel {
            x: Axis::categories("x", vec!["a".into(), "b".into(), "c".into()]),
            ..p
        };
        assert_eq!(ranges(&cats).unwrap().0, -0.6..2.6);
    }

    #[test]
    fn dots_of_several_series_on_one_category_sit_side_by_side() {
        let mut p = Panel::new(
            "",
            Axis::categories("x", vec!["a".into()]),
            Axis::linear("y"),
        );
        for s in ["甲", "乙", "丙"] {
            p.series.push(Series::dots(s, vec![(0.0, 1.0)]));
        }
        let xs: Vec<f64> = dodged_points(&p).iter().map(|pts| pts[0].0).collect();
        assert_eq!(xs, [-0.14, 0.0, 0.14]);
        p.x = Axis::linear("x");
        let xs: Vec<f64> = dodged_points(&p).iter().map(|pts| pts[0].0).collect();
        assert_eq!(xs, [0.0, 0.0, 0.0], "numbers stay where they are");
    }

    #[test]
    fn boxes_contain_their_edges_and_overlap_only_with_area() {
        let r = Rect {
            x0: 10,
            y0: 10,
            x1: 20,
            y1: 20,
        };
        assert!(r.contains((20, 20), 0) && !r.contains((21, 20), 0) && r.contains((25, 15), 5));
        let touching = Rect {
            x0: 20,
            x1: 30,
            ..r
        };
        assert!(!r.overlaps(&touching));
        assert!(r.overlaps(&Rect { x0: 19, ..touching }));
    }

    #[test]
    fn headroom_frees_the_top_fraction_on_either_scale() {
        // Linear 0..1 with a fifth free on top: 1 is 80% of the way up 0..1.25.
        let r = with_headroom(0.0..1.0, Scale::Linear, 0.2);
        assert!((r.end - 1.25).abs() < 1e-12, "{r:?}");
        // Log 1..100 with half free: 100 is halfway up 1..10 000 in log terms.
        let r = with_headroom(1.0..100.0, Scale::Log, 0.5);
        assert!((r.end - 1e4).abs() < 1e-6, "{r:?}");
    }

    #[test]
    fn degenerate_ranges_still_make_an_axis() {
        // A fixed range the scale cannot show falls back to the data's.
        assert_eq!(
            span([2.0, 4.0].into_iter(), Scale::Log, Some((0.0, 10.0))),
            Some(2.0 / 1.3..4.0 * 1.3)
        );
        assert_eq!(
            span([5.0].into_iter(), Scale::Linear, Some((1.0, 1.0))),
            Some(4.5..5.5)
        );
        // One value: ±10% around it (±0.1 around 0).
        assert_eq!(
            span([0.0].into_iter(), Scale::Linear, None),
            Some(-0.1..0.1)
        );
        assert_eq!(span([f64::NAN].into_iter(), Scale::Linear, None), None);
    }
}
