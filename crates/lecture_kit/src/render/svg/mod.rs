//! Draws a [`Figure`] as an SVG file with plotters' SVG backend.
//!
//! Text is written as SVG `<text>` in the font-family list [`FONT_FAMILY`], CJK-capable
//! fonts first, so Chinese labels render wherever one of them is installed (see
//! `docs/figures.md` for the packages) and the file itself needs no font. The layout is
//! chosen for a reader:
//!
//! - tick labels as people write them (1, 10, 100, 1K; 1×, 1.5×) — [`tick_label`];
//! - a marker on every point; categories as dots, never joined by lines;
//! - each shaded region ("批 > 14 放不下") is a band in its own row above the data, its
//!   label inside the band, and a dashed line in its colour marks where it starts;
//! - the legend and the labels of reference lines go where they cover the fewest points
//!   and lines;
//! - a panel with nothing to plot shows its message in words instead of empty axes.
//!
//! Every size below is in pixels of the 960-pixel-wide figure.

use std::ops::Range;
use std::path::Path;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::figure::{Figure, Panel, RefLine, Scale, SeriesStyle, TickFormat};

/// The font families of every text in a figure, in order of preference: CJK-capable
/// fonts of Linux (Noto, Source Han, WenQuanYi), macOS (PingFang, Hiragino) and Windows
/// (Microsoft YaHei), then the viewer's default sans-serif.
pub const FONT_FAMILY: &str = "Noto Sans CJK SC, Noto Sans SC, Source Han Sans SC, WenQuanYi Micro Hei, PingFang SC, Hiragino Sans GB, Microsoft YaHei, sans-serif";

/// Width of a figure, pixels.
pub const WIDTH: u32 = 960;
/// Height of a one-panel figure, pixels.
const SINGLE_HEIGHT: u32 = 600;
/// Height of each panel of a multi-panel figure, pixels (below the figure's title).
pub const PANEL_HEIGHT: u32 = 400;
/// Height of the figure's title strip, pixels.
const TITLE_HEIGHT: u32 = 44;
/// Height of a panel that has nothing to plot and says why, pixels.
const MESSAGE_HEIGHT: u32 = 200;

/// Series colours, in order (colour-blind-safe Okabe–Ito palette).
pub const COLORS: [RGBColor; 6] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
];

/// Text colours.
const INK: RGBColor = RGBColor(30, 30, 30);
const GREY: RGBColor = RGBColor(90, 90, 90);
const WARN: RGBColor = RGBColor(150, 30, 30);

// Pixel sizes of the texts (the SVG's font-size).
const TITLE_PX: f64 = 20.0;
const PANEL_TITLE_PX: f64 = 16.0;
const AXIS_PX: f64 = 14.0;
const TICK_PX: f64 = 13.0;
const LEGEND_PX: f64 = 13.0;
const NOTE_PX: f64 = 12.0;
const MESSAGE_PX: f64 = 18.0;

// Layout of a chart inside its panel.
const MARGIN: i32 = 14;
const X_LABEL_AREA: i32 = 50;
const Y_LABEL_AREA: i32 = 72;
/// Height of one region band, and the gap below the last.
const BAND: i32 = 20;
const BAND_GAP: i32 = 8;
/// Height of one legend row.
const LEGEND_ROW: i32 = 20;

/// The colour of series `i`.
pub fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

/// The colour of series `i` as SVG writes it, e.g. `"#0072B2"`.
pub fn color_hex(i: usize) -> String {
    let RGBColor(r, g, b) = color(i);
    format!("#{r:02X}{g:02X}{b:02X}")
}

/// A font of `px` pixels (plotters writes `size / 1.24` into the SVG).
fn font(px: f64) -> FontDesc<'static> {
    (FONT_FAMILY, px * 1.24).into_font()
}

/// Roughly how wide `s` is at `px` pixels (no font at hand to measure): a Chinese
/// character is one em, a space a quarter, other Latin letters and digits a little over
/// half of one.
fn text_width(s: &str, px: f64) -> i32 {
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

/// Writes `figure` to `path` as SVG; the error says which file could not be written.
pub fn write(figure: &Figure, path: &Path) -> Result<(), String> {
    let svg = to_string(figure).map_err(|e| format!("cannot draw {}: {e}", figure.id))?;
    std::fs::write(path, svg).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Draws `figure` into a string of SVG.
pub fn to_string(figure: &Figure) -> Result<String, String> {
    // A chart gets the full height; a panel that only says why there is nothing to
    // draw ("放不下") gets a strip, not a page of white.
    let n = figure.panels.len();
    let heights: Vec<u32> = figure
        .panels
        .iter()
        .map(|p| match (ranges(p).is_some(), n) {
            (false, _) => MESSAGE_HEIGHT,
            (true, 1) => SINGLE_HEIGHT - TITLE_HEIGHT,
            (true, _) => PANEL_HEIGHT,
        })
        .collect();
    let height = TITLE_HEIGHT + heights.iter().sum::<u32>();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        root.draw(&Text::new(
            figure.title.clone(),
            (WIDTH as i32 / 2, 12),
            font(TITLE_PX)
                .color(&INK)
                .pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(|e| e.to_string())?;
        let (_, mut rest) = root.split_vertically(TITLE_HEIGHT);
        for (panel, h) in figure.panels.iter().zip(heights) {
            let (area, below) = rest.split_vertically(h);
            draw_panel(&area, panel)?;
            rest = below;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
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

/// The range of the data (and of `extra` values such as reference lines), with a margin;
/// a fixed range as given, if it is one the scale can show. `None` when there is no
/// finite value to show.
fn span(
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

/// Raises the top of `r` so that its highest `fraction` is free of data (for the
/// region bands), on the axis's own scale.
fn with_headroom(r: Range<f64>, scale: Scale, fraction: f64) -> Range<f64> {
    let f = fraction.clamp(0.0, 0.5);
    match scale {
        Scale::Linear => r.start..(r.end - f * r.start) / (1.0 - f),
        Scale::Log => {
            let (lo, hi) = (r.start.ln(), r.end.ln());
            r.start..((hi - f * lo) / (1.0 - f)).exp()
        }
    }
}

/// The x and y ranges a panel shows; `None` when it has nothing to plot.
fn ranges(panel: &Panel) -> Option<(Range<f64>, Range<f64>)> {
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

fn draw_panel(area: &DrawingArea<SVGBackend<'_>, Shift>, panel: &Panel) -> Result<(), String> {
    let (w, _) = area.dim_in_pixel();
    let title_h = if panel.title.is_empty() { 0 } else { 26 };
    if !panel.title.is_empty() {
        area.draw(&Text::new(
            panel.title.clone(),
            (w as i32 / 2, 6),
            font(PANEL_TITLE_PX)
                .color(&INK)
                .pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(|e| e.to_string())?;
    }
    let Some((x, y)) = ranges(panel) else {
        let msg = panel.message.as_deref().unwrap_or("（没有可画的数据）");
        return message(area, title_h, msg).map_err(|e| e.to_string());
    };
    let frame = Frame::new(area, title_h, panel.regions.len());
    let y = with_headroom(y, panel.y.scale, frame.headroom());
    match (panel.x.scale, panel.y.scale) {
        (Scale::Linear, Scale::Linear) => chart(area, &frame, panel, x.clone(), y.clone(), x, y),
        (Scale::Log, Scale::Linear) => {
            chart(area, &frame, panel, x.clone().log_scale(), y.clone(), x, y)
        }
        (Scale::Linear, Scale::Log) => {
            chart(area, &frame, panel, x.clone(), y.clone().log_scale(), x, y)
        }
        (Scale::Log, Scale::Log) => chart(
            area,
            &frame,
            panel,
            x.clone().log_scale(),
            y.clone().log_scale(),
            x,
            y,
        ),
    }
    .map_err(|e| e.to_string())
}

type DrawResult = Result<(), DrawingAreaErrorKind<std::io::Error>>;

/// A panel with nothing to plot: its message in words, centred in a light frame.
fn message(area: &DrawingArea<SVGBackend<'_>, Shift>, title_h: i32, msg: &str) -> DrawResult {
    let (w, h) = area.dim_in_pixel();
    let (w, h) = (w as i32, h as i32);
    let lines = console::wrap(msg, 76);
    let line_h = (MESSAGE_PX * 1.6) as i32;
    let box_h = (lines.len() as i32 * line_h + 48).min(h - title_h - 2 * MARGIN);
    let top = title_h + (h - title_h - box_h) / 2;
    area.draw(&Rectangle::new(
        [(Y_LABEL_AREA, top), (w - Y_LABEL_AREA, top + box_h)],
        ShapeStyle::from(&RGBColor(200, 200, 200)).stroke_width(1),
    ))?;
    let first = top + box_h / 2 - (lines.len() as i32 - 1) * line_h / 2;
    for (i, line) in lines.iter().enumerate() {
        area.draw(&Text::new(
            line.clone(),
            (w / 2, first + i as i32 * line_h),
            font(MESSAGE_PX)
                .color(&WARN)
                .pos(Pos::new(HPos::Center, VPos::Center)),
        ))?;
    }
    Ok(())
}

/// Where things go in a panel, in pixels of the panel's area.
struct Frame {
    /// Top of the chart (below the panel title).
    top: i32,
    /// Height of the plotting area.
    plot_h: i32,
    /// Rows of region bands at the top of the plotting area.
    bands: i32,
}

impl Frame {
    fn new(area: &DrawingArea<SVGBackend<'_>, Shift>, title_h: i32, regions: usize) -> Self {
        let (_, h) = area.dim_in_pixel();
        let top = title_h + MARGIN;
        Frame {
            top,
            plot_h: (h as i32 - top - MARGIN - X_LABEL_AREA).max(1),
            bands: regions as i32,
        }
    }

    /// Pixels the region bands take at the top of the plotting area.
    fn bands_px(&self) -> i32 {
        if self.bands == 0 {
            0
        } else {
            self.bands * BAND + BAND_GAP
        }
    }

    /// The fraction of the plotting area's height the region bands take.
    fn headroom(&self) -> f64 {
        self.bands_px() as f64 / self.plot_h as f64
    }
}

/// A box in pixels, `x0 < x1`, `y0 < y1`.
#[derive(Debug, Clone, Copy)]
struct Rect {
    x0: i32,
    y0: i32,
    x1: i32,
    y1: i32,
}

impl Rect {
    fn contains(&self, (x, y): (i32, i32), pad: i32) -> bool {
        x >= self.x0 - pad && x <= self.x1 + pad && y >= self.y0 - pad && y <= self.y1 + pad
    }

    fn overlaps(&self, o: &Rect) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }
}

/// How much a box at `r` would hide: markers count 3, each sampled bit of a line 1,
/// an overlapped label 5.
fn cover(r: &Rect, markers: &[(i32, i32)], lines: &[(i32, i32)], labels: &[Rect]) -> usize {
    3 * markers.iter().filter(|&&p| r.contains(p, 5)).count()
        + lines.iter().filter(|&&p| r.contains(p, 2)).count()
        + 5 * labels.iter().filter(|l| l.overlaps(r)).count()
}

/// Draws one panel on coordinates `xc` × `yc` spanning `x` × `y`.
fn chart<XC, YC>(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    frame: &Frame,
    panel: &Panel,
    xc: XC,
    yc: YC,
    x: Range<f64>,
    y: Range<f64>,
) -> DrawResult
where
    XC: AsRangedCoord<Value = f64>,
    YC: AsRangedCoord<Value = f64>,
    XC::CoordDescType: ValueFormatter<f64>,
    YC::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .margin_top(frame.top)
        .margin_bottom(MARGIN)
        .margin_left(MARGIN)
        .margin_right(MARGIN + 6)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(xc, yc)?;
    let categories = &panel.x.categories;
    let x_fmt = |v: &f64| {
        if categories.is_empty() {
            tick_label(*v, panel.x.ticks)
        } else if (v - v.round()).abs() < 1e-6 && *v >= 0.0 {
            categories
                .get(v.round() as usize)
                .cloned()
                .unwrap_or_default()
        } else {
            String::new()
        }
    };
    let y_fmt = |v: &f64| tick_label(*v, panel.y.ticks);
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(&panel.x.label)
        .y_desc(&panel.y.label)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(font(TICK_PX).color(&INK))
        .axis_desc_style(font(AXIS_PX).color(&INK))
        .bold_line_style(RGBColor(220, 220, 220))
        .light_line_style(RGBColor(244, 244, 244));
    if !categories.is_empty() {
        mesh.x_labels(categories.len() + 1).disable_x_mesh();
    }
    mesh.draw()?;

    // Pixel geometry, relative to `area`.
    let base = area.get_base_pixel();
    let px = |p: (f64, f64)| {
        let (a, b) = chart.backend_coord(&p);
        (a - base.0, b - base.1)
    };
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let plot = Rect {
        x0: xr.start - base.0,
        y0: yr.start - base.1,
        x1: xr.end - base.0,
        y1: yr.end - base.1,
    };

    // Dots of several series on one category sit side by side, not on top of each other.
    let n = panel.series.len();
    let dodge = |i: usize| {
        if categories.is_empty() {
            0.0
        } else {
            (i as f64 - (n as f64 - 1.0) / 2.0) * 0.14
        }
    };
    let drawn: Vec<Vec<(f64, f64)>> = panel
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            s.points
                .iter()
                .map(|&(px, py)| (px + dodge(i), py))
                .collect()
        })
        .collect();
    let markers: Vec<(i32, i32)> = drawn.iter().flatten().map(|&p| px(p)).collect();
    let mut lines = Vec::new();
    for (s, pts) in panel.series.iter().zip(&drawn) {
        if s.style == SeriesStyle::LineMarkers {
            for w in pts.windows(2) {
                let (a, b) = (px(w[0]), px(w[1]));
                for k in 1..16 {
                    let t = k as f64 / 16.0;
                    lines.push((
                        a.0 + ((b.0 - a.0) as f64 * t) as i32,
                        a.1 + ((b.1 - a.1) as f64 * t) as i32,
                    ));
                }
            }
        }
    }

    let data_top = plot.y0 + frame.bands_px();
    let x_pixel = |v: f64| px((v, y.start)).0;
    let mut labels = regions(area, panel, &plot, &x_pixel, &x)?;
    for h in &panel.hlines {
        let label = hline(area, h, &px, &x, &markers, &lines, &labels)?;
        labels.push(label);
    }

    // The series: lines first, markers on top.
    for (i, (s, pts)) in panel.series.iter().zip(&drawn).enumerate() {
        if s.style == SeriesStyle::LineMarkers {
            chart.draw_series(LineSeries::new(pts.clone(), color(i).stroke_width(2)))?;
        }
    }
    for (i, pts) in drawn.iter().enumerate() {
        let c = color(i);
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, c.filled())))?;
    }

    legend(area, panel, &plot, data_top, &markers, &lines, &labels)
}

/// Where a data point lands, in pixels of the panel's area.
type ToPixel<'a> = &'a dyn Fn((f64, f64)) -> (i32, i32);

/// Draws the region bands — one row each above the data, the label inside its band (or
/// just before it, pointing at it, where the band is too narrow), a dashed line in its
/// colour where it starts — and returns the bands.
fn regions(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    panel: &Panel,
    plot: &Rect,
    x_pixel: &dyn Fn(f64) -> i32,
    x: &Range<f64>,
) -> Result<Vec<Rect>, DrawingAreaErrorKind<std::io::Error>> {
    let mut bands = Vec::new();
    for (row, r) in panel.regions.iter().enumerate() {
        let c = color(r.series);
        let y = plot.y0 + row as i32 * BAND;
        let band = Rect {
            x0: x_pixel(r.x0.max(x.start)).max(plot.x0),
            y0: y + 2,
            x1: x_pixel(r.x1.min(x.end)).min(plot.x1),
            y1: y + BAND,
        };
        if band.x1 <= band.x0 {
            continue;
        }
        area.draw(&Rectangle::new(
            [(band.x0, band.y0), (band.x1, band.y1)],
            c.mix(0.22).filled(),
        ))?;
        area.draw(&Rectangle::new(
            [(band.x0, band.y0), (band.x0 + 3, band.y1)],
            c.filled(),
        ))?;
        area.draw(&DashedPathElement::new(
            vec![(band.x0, band.y1), (band.x0, plot.y1)],
            5,
            4,
            c.stroke_width(1),
        ))?;
        let fits = text_width(&r.label, NOTE_PX) + 12 <= band.x1 - band.x0;
        let (text, at, h) = if fits {
            (r.label.clone(), band.x0 + 7, HPos::Left)
        } else {
            (format!("{} →", r.label), band.x0 - 4, HPos::Right)
        };
        area.draw(&Text::new(
            text,
            (at, (band.y0 + band.y1) / 2),
            font(NOTE_PX).color(&INK).pos(Pos::new(h, VPos::Center)),
        ))?;
        bands.push(band);
    }
    Ok(bands)
}

/// Draws a reference line across the panel, its label above or below it at whichever
/// end hides the fewest markers, lines and labels; returns the label's box.
fn hline(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    h: &RefLine,
    px: ToPixel,
    x: &Range<f64>,
    markers: &[(i32, i32)],
    lines: &[(i32, i32)],
    labels: &[Rect],
) -> Result<Rect, DrawingAreaErrorKind<std::io::Error>> {
    let (left, yp) = px((x.start, h.y));
    let right = px((x.end, h.y)).0;
    area.draw(&DashedPathElement::new(
        vec![(left, yp), (right, yp)],
        6,
        4,
        GREY.stroke_width(1),
    ))?;
    let w = text_width(&h.label, NOTE_PX);
    let (above, below) = ((yp - 17, yp - 2), (yp + 2, yp + 17));
    let spots = [(true, above), (false, above), (true, below), (false, below)].map(
        |(at_right, (y0, y1))| {
            let x0 = if at_right { right - 4 - w } else { left + 6 };
            (
                Rect {
                    x0,
                    y0,
                    x1: x0 + w,
                    y1,
                },
                at_right,
            )
        },
    );
    let (spot, at_right) = spots
        .iter()
        .min_by_key(|(r, _)| cover(r, markers, lines, labels))
        .copied()
        .expect("four spots");
    let (at, anchor) = if at_right {
        (spot.x1, HPos::Right)
    } else {
        (spot.x0, HPos::Left)
    };
    area.draw(&Text::new(
        h.label.clone(),
        (at, (spot.y0 + spot.y1) / 2),
        font(NOTE_PX)
            .color(&GREY)
            .pos(Pos::new(anchor, VPos::Center)),
    ))?;
    Ok(spot)
}

/// The legend: in the corner of the plotting area where it hides the fewest markers,
/// lines and labels (upper left, upper right, lower right, lower left on a tie).
fn legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    panel: &Panel,
    plot: &Rect,
    data_top: i32,
    markers: &[(i32, i32)],
    lines: &[(i32, i32)],
    labels: &[Rect],
) -> DrawResult {
    let n = panel.series.len() as i32;
    if n == 0 {
        return Ok(());
    }
    let text_w = panel
        .series
        .iter()
        .map(|s| text_width(&s.label, LEGEND_PX))
        .max()
        .unwrap_or(0);
    let (w, h) = (10 + 24 + 8 + text_w + 10, n * LEGEND_ROW + 10);
    let (l, r) = (plot.x0 + 10, plot.x1 - 10 - w);
    let (t, b) = (data_top + 8, plot.y1 - 10 - h);
    let spots = [(l, t), (r, t), (r, b), (l, b)].map(|(x0, y0)| Rect {
        x0,
        y0,
        x1: x0 + w,
        y1: y0 + h,
    });
    let spot = spots
        .iter()
        .min_by_key(|r| cover(r, markers, lines, labels))
        .copied()
        .expect("four spots");
    area.draw(&Rectangle::new(
        [(spot.x0, spot.y0), (spot.x1, spot.y1)],
        WHITE.mix(0.92).filled(),
    ))?;
    area.draw(&Rectangle::new(
        [(spot.x0, spot.y0), (spot.x1, spot.y1)],
        RGBColor(190, 190, 190).stroke_width(1),
    ))?;
    for (i, s) in panel.series.iter().enumerate() {
        let c = color(i);
        let yc = spot.y0 + 5 + LEGEND_ROW / 2 + i as i32 * LEGEND_ROW;
        let x0 = spot.x0 + 10;
        if s.style == SeriesStyle::LineMarkers {
            area.draw(&PathElement::new(
                vec![(x0, yc), (x0 + 24, yc)],
                c.stroke_width(2),
            ))?;
        }
        area.draw(&Circle::new((x0 + 12, yc), 4, c.filled()))?;
        area.draw(&Text::new(
            s.label.clone(),
            (x0 + 32, yc),
            font(LEGEND_PX)
                .color(&INK)
                .pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::{Axis, Region, Series};

    fn one_panel(panel: Panel) -> Figure {
        Figure {
            id: "f".into(),
            title: "标题".into(),
            panels: vec![panel],
        }
    }

    fn parse(svg: &str) -> roxmltree::Document<'_> {
        roxmltree::Document::parse(svg).expect("well-formed SVG")
    }

    fn texts<'a>(doc: &'a roxmltree::Document) -> Vec<roxmltree::Node<'a, 'a>> {
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .collect()
    }

    fn num(n: &roxmltree::Node, a: &str) -> f64 {
        n.attribute(a).unwrap().parse().unwrap()
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
        let mut panel = Panel::new("", Axis::linear("x"), Axis::linear("y").range(1.0, 1.0));
        panel.series.push(Series::line("一点", vec![(3.0, 1.0)]));
        let svg = to_string(&one_panel(panel)).unwrap();
        assert!(!svg.contains("NaN"), "every coordinate is a number");
    }

    #[test]
    fn a_panel_with_nothing_to_plot_is_a_strip_of_words_not_axes() {
        let mut panel = Panel::new("", Axis::log("x"), Axis::linear("y"));
        panel.series.push(Series::line("空", vec![]));
        panel.message = Some("放不下：这块卡装不下。".into());
        let svg = to_string(&one_panel(panel)).unwrap();
        let doc = parse(&svg);
        assert_eq!(
            num(&doc.root_element(), "height"),
            244.0,
            "title + one strip"
        );
        let words: Vec<&str> = texts(&doc)
            .iter()
            .filter_map(|t| t.text())
            .map(str::trim)
            .collect();
        assert_eq!(
            words,
            ["标题", "放不下：这块卡装不下。"],
            "no tick, no legend"
        );
    }

    #[test]
    fn a_region_too_narrow_for_its_label_points_at_it_from_just_before() {
        let mut panel = Panel::new("", Axis::linear("x").range(0.0, 100.0), Axis::linear("y"));
        panel
            .series
            .push(Series::line("s", vec![(0.0, 1.0), (98.0, 2.0)]));
        for (x0, label) in [
            (98.0, "一个很长很长的标签：批 > 98 放不下"),
            (20.0, "宽：放不下"),
        ] {
            panel.regions.push(Region {
                x0,
                x1: 100.0,
                label: label.into(),
                series: 0,
            });
        }
        let svg = to_string(&one_panel(panel)).unwrap();
        let doc = parse(&svg);
        let bands: Vec<f64> = doc
            .descendants()
            .filter(|n| n.has_tag_name("rect") && n.attribute("opacity") == Some("0.22"))
            .map(|n| num(&n, "x"))
            .collect();
        assert_eq!(bands.len(), 2);
        let find = |start: &str| {
            texts(&doc)
                .into_iter()
                .find(|t| t.text().unwrap_or("").trim().starts_with(start))
                .unwrap()
        };
        let narrow = find("一个很长");
        assert!(narrow.text().unwrap().trim().ends_with(" →"));
        assert_eq!(narrow.attribute("text-anchor"), Some("end"));
        assert!(num(&narrow, "x") < bands[0], "ends before its band");
        let wide = find("宽");
        assert_eq!(wide.attribute("text-anchor"), Some("start"));
        assert!(num(&wide, "x") > bands[1], "starts inside its band");
    }

    #[test]
    fn the_legend_goes_where_there_are_fewest_points() {
        // Points fill the top fifth from edge to edge, and one sits in the lower left:
        // only the lower right is free.
        let mut panel = Panel::new("", Axis::linear("x"), Axis::linear("y"));
        let mut pts: Vec<(f64, f64)> = (0..=40)
            .flat_map(|i| (0..=8).map(move |j| (i as f64 * 0.25, 8.0 + j as f64 * 0.25)))
            .collect();
        pts.push((0.0, 0.0));
        panel.series.push(Series::dots("点", pts));
        let svg = to_string(&one_panel(panel)).unwrap();
        let doc = parse(&svg);
        let legend = doc
            .descendants()
            .find(|n| n.has_tag_name("rect") && n.attribute("stroke") == Some("#BEBEBE"))
            .unwrap();
        let (x, y) = (num(&legend, "x"), num(&legend, "y"));
        assert!(x > WIDTH as f64 / 2.0 && y > 300.0, "legend at ({x}, {y})");
    }
}
