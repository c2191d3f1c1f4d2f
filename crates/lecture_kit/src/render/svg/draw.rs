//! Renders a figure's computed layout with plotters' SVG backend: the colours, fonts and
//! plotters calls, and nothing that decides where a thing goes (that is
//! [`super::layout`] and [`super::place`]).
//!
//! Plotters itself draws the axes, the grid and the tick labels (choosing the tick
//! values); the series are drawn through the chart in data units, everything else at the
//! pixels the layout computed.

use std::ops::Range;
use std::path::Path;

use plotters::chart::ChartContext;
use plotters::coord::Shift;
use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::combinators::LogCoord;
use plotters::coord::ranged1d::{
    AsRangedCoord, DefaultFormatting, KeyPointHint, Ranged, ValueFormatter,
};
use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::figure::{Figure, Panel, Scale, SeriesStyle};

use super::grid;
use super::hover;
use super::layout::{
    self, AXIS_PX, Frame, LEGEND_PX, MARGIN, MESSAGE_PX, NOTE_PX, PANEL_TITLE_PX, PANEL_TITLE_TOP,
    RIGHT_MARGIN, TICK_PX, TITLE_PX, TITLE_TOP, X_LABEL_AREA, Y_LABEL_AREA,
};
use super::place::{self, Anchor, ChartLayout, Label, MessageStrip};

/// The font families of every text in a figure, in order of preference: CJK-capable
/// fonts of Linux (Noto, Source Han, WenQuanYi), macOS (PingFang, Hiragino) and Windows
/// (Microsoft YaHei), then the viewer's default sans-serif.
pub const FONT_FAMILY: &str = "Noto Sans CJK SC, Noto Sans SC, Source Han Sans SC, WenQuanYi Micro Hei, PingFang SC, Hiragino Sans GB, Microsoft YaHei, sans-serif";

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

/// Writes `figure` to `path` as SVG, whole or not at all ([`crate::files::write_file`]);
/// the error says which figure could not be drawn or which file could not be written.
pub fn write(figure: &Figure, path: &Path) -> Result<(), String> {
    let svg = to_string(figure).map_err(|e| format!("cannot draw {}: {e}", figure.id))?;
    crate::files::write_file(path, svg.as_bytes())
}

/// Draws `figure` into a string of SVG.
pub fn to_string(figure: &Figure) -> Result<String, String> {
    let grid = grid::grid(figure)?;
    let mut svg = String::new();
    let mut values = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, grid.size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        root.draw(&Text::new(
            figure.title.clone(),
            (grid.size.0 as i32 / 2, TITLE_TOP),
            font(TITLE_PX)
                .color(&INK)
                .pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(|e| e.to_string())?;
        for (panel, &(at, size)) in figure.panels.iter().zip(&grid.cells) {
            let area = root.clone().shrink(at, size);
            if let Some(layout) = draw_panel(&area, panel)? {
                hover::panel_values(&mut values, panel, &layout, at);
            }
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(hover::with_values(svg, &values))
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type DrawError = DrawingAreaErrorKind<std::io::Error>;
type DrawResult = Result<(), DrawError>;
/// A chart on coordinates `XC` × `YC` in an SVG panel.
type Chart<'a, 'b, XC, YC> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<<XC as AsRangedCoord>::CoordDescType, <YC as AsRangedCoord>::CoordDescType>,
>;

/// Draws `panel` in `area`; returns where its points went, if it has a chart.
fn draw_panel(area: &Area<'_>, panel: &Panel) -> Result<Option<ChartLayout>, String> {
    let (w, h) = area.dim_in_pixel();
    let size = (w as i32, h as i32);
    let title_h = layout::panel_title_height(panel);
    if !panel.title.is_empty() {
        area.draw(&Text::new(
            panel.title.clone(),
            (size.0 / 2, PANEL_TITLE_TOP),
            font(PANEL_TITLE_PX)
                .color(&INK)
                .pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(|e| e.to_string())?;
    }
    let Some((x, y)) = layout::ranges(panel) else {
        let strip = place::message_strip(size, title_h, panel.message.as_deref());
        return message(area, &strip)
            .map(|()| None)
            .map_err(|e| e.to_string());
    };
    let frame = Frame::new(size, title_h, panel.regions.len());
    let y = layout::with_headroom(y, panel.y.scale, frame.headroom());
    let chart_layout = place::chart(panel, &frame, x.clone(), y.clone());
    let values = |pick: fn(&(f64, f64)) -> f64| -> Vec<f64> {
        let points = panel.series.iter().flat_map(|s| s.points.iter());
        points.map(pick).collect()
    };
    let x_keys = layout::key_points(&panel.x, &values(|p| p.0), &x);
    let y_keys = layout::key_points(&panel.y, &values(|p| p.1), &y);
    let xs = (x, x_keys);
    let at = (area, &frame, panel, &chart_layout);
    match (panel.y.scale, y_keys) {
        (Scale::Linear, None) => on_y(at, xs, y),
        (Scale::Linear, Some(k)) => on_y(at, xs, Ticks::new(RangedCoordf64::from(y), k)),
        (Scale::Log, None) => on_y(at, xs, y.log_scale()),
        (Scale::Log, Some(k)) => on_y(at, xs, Ticks::new(LogCoord::from(y.log_scale()), k)),
    }
    .map(|()| Some(chart_layout))
    .map_err(|e| e.to_string())
}

/// Where a panel is drawn: its area, frame, panel and where its points go.
type At<'a, 'b> = (&'a Area<'b>, &'a Frame, &'a Panel, &'a ChartLayout);

/// Draws a panel whose y coordinate `yc` is chosen, choosing x's from its range and ticks
/// (`xs`): linear or log, with plotters' ticks or those of [`layout::key_points`].
fn on_y<YC>(
    (area, frame, panel, layout): At<'_, '_>,
    (x, x_keys): (Range<f64>, Option<Vec<f64>>),
    yc: YC,
) -> DrawResult
where
    YC: AsRangedCoord<Value = f64>,
    YC::CoordDescType: ValueFormatter<f64>,
{
    match (panel.x.scale, x_keys) {
        (Scale::Linear, None) => chart(area, frame, panel, x, yc, layout),
        (Scale::Linear, Some(k)) => {
            let xc = Ticks::new(RangedCoordf64::from(x), k);
            chart(area, frame, panel, xc, yc, layout)
        }
        (Scale::Log, None) => chart(area, frame, panel, x.log_scale(), yc, layout),
        (Scale::Log, Some(k)) => {
            let xc = Ticks::new(LogCoord::from(x.log_scale()), k);
            chart(area, frame, panel, xc, yc, layout)
        }
    }
}

/// A coordinate `R` whose ticks (and bold grid lines) are `points`, not its own; its labels
/// are the chart's formatter's, as every axis's are.
struct Ticks<R> {
    inner: R,
    points: Vec<f64>,
}

impl<R: Ranged<ValueType = f64>> Ticks<R> {
    fn new(inner: R, points: Vec<f64>) -> Self {
        Ticks { inner, points }
    }
}

impl<R: Ranged<ValueType = f64>> Ranged for Ticks<R> {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        match hint.weight().allow_light_points() {
            true => Vec::new(),
            false => self.points.clone(),
        }
    }

    fn axis_pixel_range(&self, limit: (i32, i32)) -> std::ops::Range<i32> {
        self.inner.axis_pixel_range(limit)
    }
}

/// Draws `label` in `color` at `px` pixels.
fn text(area: &Area<'_>, label: &Label, px: f64, color: &RGBColor) -> DrawResult {
    let h = match label.anchor {
        Anchor::Left => HPos::Left,
        Anchor::Center => HPos::Center,
        Anchor::Right => HPos::Right,
    };
    area.draw(&Text::new(
        label.text.clone(),
        label.at,
        font(px).color(color).pos(Pos::new(h, VPos::Center)),
    ))
}

/// A panel with nothing to plot: its message in words, centred in a light frame.
fn message(area: &Area<'_>, strip: &MessageStrip) -> DrawResult {
    area.draw(&Rectangle::new(
        strip.frame.corners(),
        ShapeStyle::from(&RGBColor(200, 200, 200)).stroke_width(1),
    ))?;
    for line in &strip.lines {
        text(area, line, MESSAGE_PX, &WARN)?;
    }
    Ok(())
}

/// The chart of a panel in `frame`, on coordinates `xc` × `yc`, its axes not yet drawn.
fn build<'a, 'b, XC, YC>(
    area: &'a Area<'b>,
    frame: &Frame,
    xc: XC,
    yc: YC,
) -> Result<Chart<'a, 'b, XC, YC>, DrawError>
where
    XC: AsRangedCoord<Value = f64>,
    YC: AsRangedCoord<Value = f64>,
{
    ChartBuilder::on(area)
        .margin_top(frame.top)
        .margin_bottom(MARGIN)
        .margin_left(MARGIN)
        .margin_right(RIGHT_MARGIN)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(xc, yc)
}

/// Draws one panel on coordinates `xc` × `yc`: axes and grid, then what `layout` placed.
fn chart<XC, YC>(
    area: &Area<'_>,
    frame: &Frame,
    panel: &Panel,
    xc: XC,
    yc: YC,
    layout: &ChartLayout,
) -> DrawResult
where
    XC: AsRangedCoord<Value = f64>,
    YC: AsRangedCoord<Value = f64>,
    XC::CoordDescType: ValueFormatter<f64>,
    YC::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = build(area, frame, xc, yc)?;
    let categories = &panel.x.categories;
    let x_fmt = |v: &f64| layout::x_tick_label(&panel.x, *v);
    let y_fmt = |v: &f64| layout::tick_label(*v, panel.y.ticks);
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

    for band in &layout.bands {
        let c = color(band.series);
        area.draw(&Rectangle::new(band.rect.corners(), c.mix(0.22).filled()))?;
        area.draw(&Rectangle::new(band.edge.corners(), c.filled()))?;
        area.draw(&DashedPathElement::new(
            band.start_line,
            5,
            4,
            c.stroke_width(1),
        ))?;
        text(area, &band.label, NOTE_PX, &INK)?;
    }
    for h in &layout.hlines {
        area.draw(&DashedPathElement::new(h.ends, 6, 4, GREY.stroke_width(1)))?;
        text(area, &h.label, NOTE_PX, &GREY)?;
    }

    // The series: lines first, markers on top.
    for (i, (s, pts)) in panel.series.iter().zip(&layout.points).enumerate() {
        if s.style == SeriesStyle::LineMarkers {
            chart.draw_series(LineSeries::new(pts.clone(), color(i).stroke_width(2)))?;
        }
    }
    for (i, pts) in layout.points.iter().enumerate() {
        let c = color(i);
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, c.filled())))?;
    }

    if let Some(legend) = &layout.legend {
        area.draw(&Rectangle::new(
            legend.rect.corners(),
            WHITE.mix(0.92).filled(),
        ))?;
        area.draw(&Rectangle::new(
            legend.rect.corners(),
            RGBColor(190, 190, 190).stroke_width(1),
        ))?;
        for (i, row) in legend.rows.iter().enumerate() {
            let c = color(i);
            if let Some(line) = row.line {
                area.draw(&PathElement::new(line, c.stroke_width(2)))?;
            }
            area.draw(&Circle::new(row.dot, 4, c.filled()))?;
            text(area, &row.label, LEGEND_PX, &INK)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::ops::Range;

    use super::super::layout::{TITLE_HEIGHT, WIDTH};
    use super::*;
    use crate::figure::{Axis, Region, Series};

    fn one_panel(panel: Panel) -> Figure {
        Figure::new("标题", vec![panel]).id("f")
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

    /// Builds the chart of `frame` the way [`chart`] does, on `xc` × `yc`, and checks that
    /// plotters' plotting area is `frame.plot` and that it draws every value of `xs` × `ys`
    /// at the pixel `map` computes.
    fn agrees_with_plotters<XC, YC>(
        area: &Area<'_>,
        frame: &Frame,
        (xc, yc): (XC, YC),
        map: &layout::PlotMap,
        (xs, ys): (&[f64], &[f64]),
    ) -> usize
    where
        XC: AsRangedCoord<Value = f64>,
        YC: AsRangedCoord<Value = f64>,
    {
        let chart = build(area, frame, xc, yc).unwrap();
        let base = area.get_base_pixel();
        assert_eq!(base, (0, TITLE_HEIGHT as i32), "a panel below the title");
        let (xr, yr) = chart.plotting_area().get_pixel_range();
        let plot = layout::Rect {
            x0: xr.start - base.0,
            y0: yr.start - base.1,
            x1: xr.end - base.0,
            y1: yr.end - base.1,
        };
        assert_eq!(plot, frame.plot);
        let mut checked = 0;
        for &x in xs {
            for &y in ys {
                let (a, b) = chart.backend_coord(&(x, y));
                assert_eq!(map.pixel((x, y)), (a - base.0, b - base.1), "({x}, {y})");
                checked += 1;
            }
        }
        checked
    }

    #[test]
    fn the_layout_puts_every_value_where_plotters_draws_it() {
        // Values across, beyond and at the ends of the ranges, a few a log axis cannot place.
        let values = |r: &Range<f64>| -> Vec<f64> {
            let mut v: Vec<f64> = (0..=200)
                .map(|i| r.start + (r.end - r.start) * (i as f64 / 100.0 - 0.5))
                .collect();
            v.extend([r.start, r.end, 0.0, -1.0, f64::NAN]);
            v
        };
        let mut checked = 0;
        for (h, title_h, regions) in [(400, 26, 2), (556, 0, 0), (400, 0, 5)] {
            let mut svg = String::new();
            let root =
                SVGBackend::with_string(&mut svg, (WIDTH, TITLE_HEIGHT + h)).into_drawing_area();
            let (_, area) = root.split_vertically(TITLE_HEIGHT);
            let frame = Frame::new((WIDTH as i32, h as i32), title_h, regions);
            for (x, y) in [
                (0.0..853.0, -3.5..7.25),
                (1.0..4096.0, 2.0..8192.0),
                (0.37..1e6, 1e-3..5.0),
            ] {
                let (xs, ys) = (values(&x), values(&y));
                for (sx, sy) in [
                    (Scale::Linear, Scale::Linear),
                    (Scale::Log, Scale::Linear),
                    (Scale::Linear, Scale::Log),
                    (Scale::Log, Scale::Log),
                ] {
                    // A log axis only ever shows a positive range (`layout::span`).
                    let positive = |s, r: &Range<f64>| s == Scale::Linear || r.start > 0.0;
                    if !positive(sx, &x) || !positive(sy, &y) {
                        continue;
                    }
                    let map = layout::PlotMap::new(&frame.plot, (sx, x.clone()), (sy, y.clone()));
                    let (x, y) = (x.clone(), y.clone());
                    let grid = (&xs[..], &ys[..]);
                    checked += match (sx, sy) {
                        (Scale::Linear, Scale::Linear) => {
                            agrees_with_plotters(&area, &frame, (x, y), &map, grid)
                        }
                        (Scale::Log, Scale::Linear) => {
                            agrees_with_plotters(&area, &frame, (x.log_scale(), y), &map, grid)
                        }
                        (Scale::Linear, Scale::Log) => {
                            agrees_with_plotters(&area, &frame, (x, y.log_scale()), &map, grid)
                        }
                        (Scale::Log, Scale::Log) => agrees_with_plotters(
                            &area,
                            &frame,
                            (x.log_scale(), y.log_scale()),
                            &map,
                            grid,
                        ),
                    };
                }
            }
        }
        // Three panels × (one linear pair + two positive pairs × four scales) × 206².
        assert_eq!(checked, 3 * 9 * 206 * 206);
    }

    #[test]
    fn a_degenerate_range_draws_no_nan() {
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
    fn panels_side_by_side_draw_in_their_own_cells_with_their_values_under_the_pointer() {
        // Three panels in rows of 1 and 2: each title centred over its cell, each panel's
        // hover circle inside its cell (the right one offset across as well as down).
        let panel = |name: &str| {
            let mut p = Panel::new(name, Axis::linear("x"), Axis::linear("y"));
            p.series.push(Series::dots(
                format!("点{name}"),
                vec![(1.0, 1.0), (3.0, 2.0)],
            ));
            p
        };
        let figure = Figure::new("图", vec![panel("上"), panel("左"), panel("右")]).rows(&[1, 2]);
        let svg = to_string(&figure).unwrap();
        let doc = parse(&svg);
        let root = doc.root_element();
        assert_eq!((num(&root, "width"), num(&root, "height")), (1920.0, 844.0));
        let centre = |title: &str| {
            let t = texts(&doc).into_iter();
            let t = t
                .into_iter()
                .find(|t| t.text().map(str::trim) == Some(title));
            num(&t.unwrap(), "x")
        };
        assert_eq!(
            [centre("图"), centre("上"), centre("左"), centre("右")],
            [960.0, 960.0, 480.0, 1440.0]
        );
        let cells = [
            ("上", (0.0, 1920.0), (44.0, 444.0)),
            ("左", (0.0, 960.0), (444.0, 844.0)),
        ];
        let cells = cells
            .into_iter()
            .chain([("右", (960.0, 1920.0), (444.0, 844.0))]);
        for (name, (x0, x1), (y0, y1)) in cells {
            let circles: Vec<_> = doc
                .descendants()
                .filter(|n| n.has_tag_name("circle") && n.attribute("fill-opacity") == Some("0"))
                .filter(|n| {
                    n.children().any(|c| {
                        c.text()
                            .is_some_and(|t| t.starts_with(&format!("点{name}")))
                    })
                })
                .collect();
            assert_eq!(circles.len(), 2, "{name}");
            for c in circles {
                let (x, y) = (num(&c, "cx"), num(&c, "cy"));
                assert!(
                    (x0..x1).contains(&x) && (y0..y1).contains(&y),
                    "{name} at ({x}, {y})"
                );
            }
        }
        assert!(to_string(&figure.rows(&[2, 2])).is_err());
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
