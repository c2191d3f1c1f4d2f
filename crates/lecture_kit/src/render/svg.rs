//! Draws a [`Figure`] as an SVG file with plotters' SVG backend.
//!
//! Text is written as SVG `<text>` in the font-family list [`FONT_FAMILY`], CJK-capable
//! fonts first, so Chinese labels render wherever one of them is installed (see the
//! README for the packages) and the file itself needs no font. Tick labels are written
//! as people write them (1, 10, 100, 1K; 1×, 1.5×), every point gets a marker, a panel
//! with nothing to plot shows its message instead of empty axes, and the legend goes to
//! the upper corner with fewer points in it.

use std::ops::Range;
use std::path::Path;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::figure::{Figure, Panel, Scale, SeriesStyle, TickFormat};

/// The font families of every text in a figure, in order of preference: CJK-capable
/// fonts of Linux (Noto, Source Han, WenQuanYi), macOS (PingFang, Hiragino) and Windows
/// (Microsoft YaHei), then the viewer's default sans-serif.
pub const FONT_FAMILY: &str = "Noto Sans CJK SC, Noto Sans SC, Source Han Sans SC, WenQuanYi Micro Hei, PingFang SC, Hiragino Sans GB, Microsoft YaHei, sans-serif";

/// Width of a figure, pixels.
pub const WIDTH: u32 = 960;
/// Height of a one-panel figure, pixels; each further panel adds [`PANEL_HEIGHT`].
const SINGLE_HEIGHT: u32 = 600;
/// Height of each panel of a multi-panel figure, pixels.
pub const PANEL_HEIGHT: u32 = 400;

/// Series colours, in order (colour-blind-safe Okabe–Ito palette).
const COLORS: [RGBColor; 6] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
];

/// The colour of series `i`.
fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

/// Writes `figure` to `path` as SVG; the error says which file could not be written.
pub fn write(figure: &Figure, path: &Path) -> Result<(), String> {
    let svg = to_string(figure).map_err(|e| format!("cannot draw {}: {e}", figure.id))?;
    std::fs::write(path, svg).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Draws `figure` into a string of SVG.
pub fn to_string(figure: &Figure) -> Result<String, String> {
    let n = figure.panels.len().max(1) as u32;
    let height = if n == 1 {
        SINGLE_HEIGHT
    } else {
        60 + n * PANEL_HEIGHT
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let body = root
            .titled(&figure.title, (FONT_FAMILY, 22))
            .map_err(|e| e.to_string())?;
        let areas = body.split_evenly((n as usize, 1));
        for (panel, area) in figure.panels.iter().zip(&areas) {
            draw_panel(area, panel)?;
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

/// The range an axis shows: its fixed range, or the data's with a margin (a log axis
/// to the surrounding powers-of-two-ish bounds).
fn span(values: impl Iterator<Item = f64>, scale: Scale, fixed: Option<(f64, f64)>) -> Range<f64> {
    if let Some((lo, hi)) = fixed {
        return lo..hi;
    }
    let (mut lo, mut hi) = values
        .filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        (lo, hi) = (1.0, 10.0);
    }
    match scale {
        Scale::Log => (lo / 1.4)..(hi * 1.4),
        Scale::Linear => {
            let pad = ((hi - lo) * 0.08).max(hi.abs().max(1e-9) * 0.02);
            (lo - pad)..(hi + pad)
        }
    }
}

fn draw_panel(area: &DrawingArea<SVGBackend<'_>, Shift>, panel: &Panel) -> Result<(), String> {
    if !panel.has_points() {
        let msg = panel.message.as_deref().unwrap_or("（没有可画的数据）");
        if !panel.title.is_empty() {
            area.draw(&Text::new(
                panel.title.clone(),
                (24, 24),
                (FONT_FAMILY, 18).into_font(),
            ))
            .map_err(|e| e.to_string())?;
        }
        let (w, h) = area.dim_in_pixel();
        for (i, line) in console::wrap(msg, 60).iter().enumerate() {
            area.draw(&Text::new(
                line.clone(),
                (w as i32 / 2, h as i32 / 2 - 20 + 30 * i as i32),
                (FONT_FAMILY, 22)
                    .into_font()
                    .color(&RGBColor(150, 30, 30))
                    .pos(Pos::new(HPos::Center, VPos::Center)),
            ))
            .map_err(|e| e.to_string())?;
        }
        return Ok(());
    }
    let categorical = !panel.x.categories.is_empty();
    let xs = panel
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0));
    let x = if categorical {
        -0.6..panel.x.categories.len() as f64 - 0.4
    } else {
        let regions = panel.regions.iter().flat_map(|r| [r.x0, r.x1]);
        span(xs.chain(regions), panel.x.scale, panel.x.range)
    };
    let ys = panel
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1));
    let y = span(
        ys.chain(panel.hlines.iter().map(|h| h.y)),
        panel.y.scale,
        panel.y.range,
    );
    match (panel.x.scale, panel.y.scale) {
        (Scale::Linear, Scale::Linear) => chart(area, panel, x.clone(), y.clone(), x, y),
        (Scale::Log, Scale::Linear) => chart(area, panel, x.clone().log_scale(), y.clone(), x, y),
        (Scale::Linear, Scale::Log) => chart(area, panel, x.clone(), y.clone().log_scale(), x, y),
        (Scale::Log, Scale::Log) => chart(
            area,
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

/// Draws one panel on coordinates `xc` × `yc` spanning `x` × `y`.
fn chart<XC, YC>(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
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
        .caption(&panel.title, (FONT_FAMILY, 18))
        .margin(16)
        .x_label_area_size(52)
        .y_label_area_size(72)
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
        .label_style((FONT_FAMILY, 14))
        .axis_desc_style((FONT_FAMILY, 15))
        .light_line_style(RGBColor(235, 235, 235));
    if !categories.is_empty() {
        mesh.x_labels(categories.len() + 1).disable_x_mesh();
    }
    mesh.draw()?;

    for r in &panel.regions {
        let c = color(r.series);
        chart.draw_series(std::iter::once(Rectangle::new(
            [(r.x0.max(x.start), y.start), (r.x1.min(x.end), y.end)],
            c.mix(0.10).filled(),
        )))?;
    }
    for h in &panel.hlines {
        let grey = RGBColor(90, 90, 90);
        chart.draw_series(DashedLineSeries::new(
            [(x.start, h.y), (x.end, h.y)],
            6,
            4,
            grey.stroke_width(1),
        ))?;
        chart.draw_series(std::iter::once(Text::new(
            h.label.clone(),
            (x.end, h.y),
            (FONT_FAMILY, 13)
                .into_font()
                .color(&grey)
                .pos(Pos::new(HPos::Right, VPos::Bottom)),
        )))?;
    }
    let n = panel.series.len();
    for (i, s) in panel.series.iter().enumerate() {
        let c = color(i);
        // Dots of several series on one category sit side by side, not on top of each other.
        let dodge = if categories.is_empty() {
            0.0
        } else {
            (i as f64 - (n as f64 - 1.0) / 2.0) * 0.12
        };
        let points: Vec<(f64, f64)> = s.points.iter().map(|&(px, py)| (px + dodge, py)).collect();
        if s.style == SeriesStyle::LineMarkers {
            chart.draw_series(LineSeries::new(points.clone(), c.stroke_width(2)))?;
        }
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 4, c.filled())))?
            .label(s.label.clone())
            .legend(move |(lx, ly)| {
                EmptyElement::at((lx, ly))
                    + PathElement::new(vec![(0, 0), (22, 0)], c.stroke_width(2))
                    + Circle::new((11, 0), 4, c.filled())
            });
    }
    for r in &panel.regions {
        let c = color(r.series);
        // The label stays inside its own region: from its left edge, or, for a region in
        // the right half, against its right edge.
        let right_half = r.x0 > mid(&x, panel.x.scale);
        let anchor = if right_half {
            r.x1.min(x.end)
        } else {
            r.x0.max(x.start)
        };
        let row = y.end - (y.end - y.start) * (0.06 + 0.07 * r.series as f64);
        chart.draw_series(std::iter::once(Text::new(
            r.label.clone(),
            (anchor, row),
            (FONT_FAMILY, 13).into_font().color(&c).pos(Pos::new(
                if right_half { HPos::Right } else { HPos::Left },
                VPos::Center,
            )),
        )))?;
    }
    chart
        .configure_series_labels()
        .position(legend_corner(panel, &x, &y))
        .label_font((FONT_FAMILY, 14))
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(180, 180, 180))
        .draw()?;
    Ok(())
}

/// The middle of a range, on the axis's own scale.
fn mid(r: &Range<f64>, scale: Scale) -> f64 {
    match scale {
        Scale::Linear => (r.start + r.end) / 2.0,
        Scale::Log => (r.start * r.end).sqrt(),
    }
}

/// The upper corner with fewer points in its top third: where the legend hides least.
fn legend_corner(panel: &Panel, x: &Range<f64>, y: &Range<f64>) -> SeriesLabelPosition {
    let (xm, y_top) = (mid(x, panel.x.scale), y.end - (y.end - y.start) / 3.0);
    let (mut left, mut right) = (0, 0);
    for &(px, py) in panel.series.iter().flat_map(|s| s.points.iter()) {
        if py >= y_top {
            if px < xm {
                left += 1;
            } else {
                right += 1;
            }
        }
    }
    if left <= right {
        SeriesLabelPosition::UpperLeft
    } else {
        SeriesLabelPosition::UpperRight
    }
}
