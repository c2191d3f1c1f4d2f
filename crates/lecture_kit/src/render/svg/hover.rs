//! The value under the pointer: over every point a figure draws, an invisible circle with
//! an SVG `<title>` that a browser shows as a tooltip (and a screen reader reads) — the
//! series, and the point's x and y as the axes name them. Drawn last, above everything,
//! at the pixels [`super::layout::PlotMap`] computes (tested to be plotters' own), so the
//! same file works in the handout, the browser page and a figure opened alone; paper
//! ignores it. Pure: a panel's layout in, markup out.

use std::fmt::Write;

use crate::figure::{Axis, Panel, Scale, TickFormat};
use crate::render::escape::escape;

use super::place::ChartLayout;

/// How far from a point's centre the pointer still finds it, pixels (a marker is 4).
const REACH_PX: i32 = 7;

/// A number as a reader wants it under the pointer: four significant digits, no trailing
/// zeros; "×" after a multiple.
///
/// ```
/// use lecture_kit::figure::TickFormat;
/// use lecture_kit::render::svg::value_label;
/// assert_eq!(value_label(6.650_800_1, TickFormat::Plain), "6.651");
/// assert_eq!(value_label(4096.0, TickFormat::Plain), "4096");
/// assert_eq!(value_label(0.000_123_46, TickFormat::Plain), "0.0001235");
/// assert_eq!(value_label(1.93, TickFormat::Times), "1.93×");
/// assert_eq!(value_label(123_456.7, TickFormat::Plain), "123457");
/// ```
pub fn value_label(v: f64, ticks: TickFormat) -> String {
    let text = if v == 0.0 || !v.is_finite() {
        format!("{v}")
    } else {
        let decimals = (3 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
        let s = format!("{v:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    match ticks {
        TickFormat::Plain => text,
        TickFormat::Times => format!("{text}×"),
    }
}

/// The x value of a point as its axis names it: the category's name on a categorical axis.
fn x_value(axis: &Axis, x: f64) -> String {
    let category = (x >= 0.0 && x.fract() == 0.0)
        .then(|| axis.categories.get(x as usize))
        .flatten();
    match category {
        Some(name) => name.clone(),
        None => value_label(x, axis.ticks),
    }
}

/// Whether `v` can be placed on `axis` (a log axis shows positive values only).
fn placeable(axis: &Axis, v: f64) -> bool {
    v.is_finite() && (axis.scale == Scale::Linear || v > 0.0)
}

/// The hover circles of one panel drawn with `layout`, its area `dx` pixels right of the
/// figure's left edge and `dy` below its top, appended to `out`.
pub fn panel_values(out: &mut String, panel: &Panel, layout: &ChartLayout, (dx, dy): (i32, i32)) {
    for (series, drawn) in panel.series.iter().zip(&layout.points) {
        for (&(x, y), &at) in series.points.iter().zip(drawn) {
            if !placeable(&panel.x, at.0) || !placeable(&panel.y, y) {
                continue;
            }
            let (px, py) = layout.map.pixel(at);
            let title = format!(
                "{}\n{}: {}\n{}: {}",
                series.label,
                panel.x.label,
                x_value(&panel.x, x),
                panel.y.label,
                value_label(y, panel.y.ticks)
            );
            // Writing to a String cannot fail.
            let _ = writeln!(
                out,
                "<circle cx=\"{}\" cy=\"{}\" r=\"{REACH_PX}\" fill-opacity=\"0\" \
                 pointer-events=\"all\"><title>{}</title></circle>",
                px + dx,
                py + dy,
                escape(&title)
            );
        }
    }
}

/// `svg` (plotters' drawing, ending in `</svg>`) with `values` — the circles of
/// [`panel_values`] — as its last group.
pub fn with_values(mut svg: String, values: &str) -> String {
    if values.is_empty() {
        return svg;
    }
    let end = svg.rfind("</svg>").unwrap_or(svg.len());
    svg.insert_str(end, &format!("<g class=\"values\">\n{values}</g>\n"));
    svg
}

#[cfg(test)]
mod tests {
    use crate::figure::{Axis, Figure, Panel, Series};
    use crate::render::svg::to_string;

    fn circles<'a>(doc: &'a roxmltree::Document) -> Vec<roxmltree::Node<'a, 'a>> {
        doc.descendants()
            .filter(|n| n.has_tag_name("circle"))
            .collect()
    }

    fn centre(n: &roxmltree::Node) -> (i64, i64) {
        let num = |a: &str| n.attribute(a).unwrap().parse::<f64>().unwrap().round() as i64;
        (num("cx"), num("cy"))
    }

    #[test]
    fn every_point_of_every_panel_has_its_values_where_plotters_drew_its_marker() {
        let top = Panel::new("", Axis::log("n"), Axis::log("时间（ms）")).with([
            Series::line("批 1", vec![(1.0, 6.6508), (2.0, 6.7), (4096.0, 120.26)]),
            Series::line("批 16", vec![(1.0, 7.0), (64.0, 30.0)]),
        ]);
        let below = Panel::new(
            "第二幅",
            Axis::categories("形状", vec!["链".into(), "树 4×2".into()]),
            Axis::linear("加速比").times(),
        )
        .with([
            Series::dots("实测", vec![(0.0, 1.5), (1.0, 2.25)]),
            Series::dots("估计", vec![(0.0, 1.4), (1.0, 2.0)]),
        ]);
        let figure = Figure::new("两幅", vec![top, below]).id("f");
        let svg = to_string(&figure).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let group = doc
            .descendants()
            .find(|n| n.attribute("class") == Some("values"))
            .expect("a group of values");
        let hover: Vec<_> = circles(&doc)
            .into_iter()
            .filter(|c| c.ancestors().any(|a| a == group))
            .collect();
        // Plotters' own markers: filled circles of radius 4, outside the group.
        let markers: Vec<(i64, i64)> = circles(&doc)
            .iter()
            .filter(|c| !c.ancestors().any(|a| a == group) && c.attribute("r") == Some("4"))
            .map(centre)
            .collect();
        assert_eq!(hover.len(), 9, "one per point");
        for c in &hover {
            assert!(
                markers.contains(&centre(c)),
                "{:?} not on a marker",
                centre(c)
            );
        }
        let titles: Vec<&str> = hover
            .iter()
            .map(|c| c.children().find(|t| t.has_tag_name("title")).unwrap())
            .map(|t| t.text().unwrap())
            .collect();
        assert_eq!(titles[0], "批 1\nn: 1\n时间（ms）: 6.651");
        assert_eq!(titles[2], "批 1\nn: 4096\n时间（ms）: 120.3");
        // A category by its name, a multiple with its sign; dodged dots keep their values.
        assert_eq!(titles[6], "实测\n形状: 树 4×2\n加速比: 2.25×");
        assert_eq!(titles[8], "估计\n形状: 树 4×2\n加速比: 2×");
    }

    #[test]
    fn a_panel_with_nothing_to_plot_has_no_values() {
        let mut panel = Panel::new("", Axis::log("x"), Axis::linear("y"));
        panel.message = Some("放不下".into());
        let svg = to_string(&Figure::new("空", vec![panel])).unwrap();
        assert!(!svg.contains("class=\"values\""));
    }
}
