//! Where the things on a chart go, in pixels of its panel: the points, the region bands
//! and their labels, the labels of reference lines, the legend, and the words of a panel
//! with nothing to plot.
//!
//! Pure functions of the figure model and a [`Frame`] and [`PlotMap`] from
//! [`super::layout`]; [`super::draw`] renders what they return. A label or legend goes
//! where it hides the fewest markers, lines and other labels ([`cover`]).

use crate::figure::{Panel, RefLine, SeriesStyle};

use super::layout::{
    BAND, Frame, LEGEND_PX, LEGEND_ROW, MARGIN, MESSAGE_PX, NOTE_PX, PlotMap, Rect, Y_LABEL_AREA,
    dodged_points, text_width,
};

/// Which point of a text its position gives, across; down, it is always the middle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// The text starts there.
    Left,
    /// The text is centred there.
    Center,
    /// The text ends there.
    Right,
}

/// A line of text and where it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// The words.
    pub text: String,
    /// The anchor point, pixels.
    pub at: (i32, i32),
    /// Which point of the text `at` is.
    pub anchor: Anchor,
}

/// A shaded region ("批 > 14 放不下"): a band in its own row above the data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Band {
    /// The band.
    pub rect: Rect,
    /// The series whose colour it takes.
    pub series: usize,
    /// The solid strip at its start.
    pub edge: Rect,
    /// The dashed line from the band down to the bottom of the plotting area, where the
    /// region starts.
    pub start_line: [(i32, i32); 2],
    /// Its label: inside the band, or just before it, pointing at it ("… →").
    pub label: Label,
}

/// A reference line across the plotting area and its label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HLine {
    /// The dashed line, left end to right end.
    pub ends: [(i32, i32); 2],
    /// The label.
    pub label: Label,
    /// The box the label takes.
    pub label_box: Rect,
}

/// One entry of the legend, for the series of the same index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegendRow {
    /// The sample of the series' line, if it has one.
    pub line: Option<[(i32, i32); 2]>,
    /// The centre of its marker.
    pub dot: (i32, i32),
    /// Its name.
    pub label: Label,
}

/// The legend: a box and one row per series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Legend {
    /// The box.
    pub rect: Rect,
    /// The rows, in series order.
    pub rows: Vec<LegendRow>,
}

/// A panel with nothing to plot: its message in words, centred in a light frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageStrip {
    /// The frame.
    pub frame: Rect,
    /// The lines of the message, each centred.
    pub lines: Vec<Label>,
}

/// Everything on a chart, in drawing order: bands, reference lines, series, legend.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartLayout {
    /// Where data values land.
    pub map: PlotMap,
    /// Each series' points in data units, as drawn ([`dodged_points`]).
    pub points: Vec<Vec<(f64, f64)>>,
    /// The region bands that show (a region outside the x range has none).
    pub bands: Vec<Band>,
    /// The reference lines, in the panel's order.
    pub hlines: Vec<HLine>,
    /// The legend; `None` without series.
    pub legend: Option<Legend>,
}

/// How much a box at `r` would hide: markers count 3, each sampled bit of a line 1,
/// an overlapped label 5.
pub fn cover(r: &Rect, markers: &[(i32, i32)], lines: &[(i32, i32)], labels: &[Rect]) -> usize {
    3 * markers.iter().filter(|&&p| r.contains(p, 5)).count()
        + lines.iter().filter(|&&p| r.contains(p, 2)).count()
        + 5 * labels.iter().filter(|l| l.overlaps(r)).count()
}

/// The box among `spots` that hides the least ([`cover`]); the first of them on a tie.
fn least_covering<T: Copy>(
    spots: &[(Rect, T)],
    markers: &[(i32, i32)],
    lines: &[(i32, i32)],
    labels: &[Rect],
) -> (Rect, T) {
    *spots
        .iter()
        .min_by_key(|(r, _)| cover(r, markers, lines, labels))
        .expect("at least one spot")
}

/// Fifteen evenly spaced pixels inside each segment between consecutive pixels `pts`
/// (the ends are the markers): what a box laid over the line would hide.
pub fn line_samples(pts: &[(i32, i32)]) -> Vec<(i32, i32)> {
    let mut samples = Vec::new();
    for w in pts.windows(2) {
        let (a, b) = (w[0], w[1]);
        for k in 1..16 {
            let t = k as f64 / 16.0;
            samples.push((
                a.0 + ((b.0 - a.0) as f64 * t) as i32,
                a.1 + ((b.1 - a.1) as f64 * t) as i32,
            ));
        }
    }
    samples
}

/// Lays out a chart of `panel` in `frame`, showing x values `x` and y values `y`
/// (headroom included): the points, then the bands, the reference lines (each label
/// avoiding the bands and the labels before it) and the legend.
pub fn chart(
    panel: &Panel,
    frame: &Frame,
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
) -> ChartLayout {
    let map = PlotMap::new(&frame.plot, (panel.x.scale, x), (panel.y.scale, y));
    let points = dodged_points(panel);
    let pixels: Vec<Vec<(i32, i32)>> = points
        .iter()
        .map(|pts| pts.iter().map(|&p| map.pixel(p)).collect())
        .collect();
    let markers: Vec<(i32, i32)> = pixels.iter().flatten().copied().collect();
    let lines: Vec<(i32, i32)> = panel
        .series
        .iter()
        .zip(&pixels)
        .filter(|(s, _)| s.style == SeriesStyle::LineMarkers)
        .flat_map(|(_, pts)| line_samples(pts))
        .collect();

    let bands = bands(panel, frame, &map);
    let mut labels: Vec<Rect> = bands.iter().map(|b| b.rect).collect();
    let mut hlines = Vec::new();
    for h in &panel.hlines {
        let line = hline(h, &map, &markers, &lines, &labels);
        labels.push(line.label_box);
        hlines.push(line);
    }
    let legend = legend(panel, frame, &markers, &lines, &labels);
    ChartLayout {
        map,
        points,
        bands,
        hlines,
        legend,
    }
}

/// The region bands: one row each from the top of the plotting area, clipped to it; the
/// label inside its band where it fits (with 12 pixels to spare), else just before it,
/// pointing at it. A region wholly outside the x range has no band but keeps its row.
pub fn bands(panel: &Panel, frame: &Frame, map: &PlotMap) -> Vec<Band> {
    let (plot, x) = (&frame.plot, &map.x.range);
    let mut bands = Vec::new();
    for (row, r) in panel.regions.iter().enumerate() {
        let y = plot.y0 + row as i32 * BAND;
        let rect = Rect {
            x0: map.x.pixel(r.x0.max(x.start)).max(plot.x0),
            y0: y + 2,
            x1: map.x.pixel(r.x1.min(x.end)).min(plot.x1),
            y1: y + BAND,
        };
        if rect.x1 <= rect.x0 {
            continue;
        }
        let fits = text_width(&r.label, NOTE_PX) + 12 <= rect.x1 - rect.x0;
        let (text, at, anchor) = if fits {
            (r.label.clone(), rect.x0 + 7, Anchor::Left)
        } else {
            (format!("{} →", r.label), rect.x0 - 4, Anchor::Right)
        };
        bands.push(Band {
            rect,
            series: r.series,
            edge: Rect {
                x1: rect.x0 + 3,
                ..rect
            },
            start_line: [(rect.x0, rect.y1), (rect.x0, plot.y1)],
            label: Label {
                text,
                at: (at, (rect.y0 + rect.y1) / 2),
                anchor,
            },
        });
    }
    bands
}

/// A reference line across the x range, its label above or below it at whichever end
/// hides the fewest markers, lines and `labels` (right above, left above, right below,
/// left below on a tie).
pub fn hline(
    h: &RefLine,
    map: &PlotMap,
    markers: &[(i32, i32)],
    lines: &[(i32, i32)],
    labels: &[Rect],
) -> HLine {
    let (left, right) = (map.x.pixel(map.x.range.start), map.x.pixel(map.x.range.end));
    let yp = map.y.pixel(h.y);
    let w = text_width(&h.label, NOTE_PX);
    let (above, below) = ((yp - 17, yp - 2), (yp + 2, yp + 17));
    let spots = [(true, above), (false, above), (true, below), (false, below)].map(
        |(at_right, (y0, y1))| {
            let x0 = if at_right { right - 4 - w } else { left + 6 };
            let r = Rect {
                x0,
                y0,
                x1: x0 + w,
                y1,
            };
            (r, at_right)
        },
    );
    let (spot, at_right) = least_covering(&spots, markers, lines, labels);
    let (at, anchor) = if at_right {
        (spot.x1, Anchor::Right)
    } else {
        (spot.x0, Anchor::Left)
    };
    HLine {
        ends: [(left, yp), (right, yp)],
        label: Label {
            text: h.label.clone(),
            at: (at, (spot.y0 + spot.y1) / 2),
            anchor,
        },
        label_box: spot,
    }
}

/// The legend: in the corner of the plotting area below the bands where it hides the
/// fewest markers, lines and labels (upper left, upper right, lower right, lower left on
/// a tie); `None` when the panel has no series.
pub fn legend(
    panel: &Panel,
    frame: &Frame,
    markers: &[(i32, i32)],
    lines: &[(i32, i32)],
    labels: &[Rect],
) -> Option<Legend> {
    let n = panel.series.len() as i32;
    if n == 0 {
        return None;
    }
    let plot = &frame.plot;
    let text_w = panel
        .series
        .iter()
        .map(|s| text_width(&s.label, LEGEND_PX))
        .max()
        .unwrap_or(0);
    let (w, h) = (10 + 24 + 8 + text_w + 10, n * LEGEND_ROW + 10);
    let (l, r) = (plot.x0 + 10, plot.x1 - 10 - w);
    let (t, b) = (frame.data_top() + 8, plot.y1 - 10 - h);
    let spots = [(l, t), (r, t), (r, b), (l, b)].map(|(x0, y0)| {
        let r = Rect {
            x0,
            y0,
            x1: x0 + w,
            y1: y0 + h,
        };
        (r, ())
    });
    let (rect, ()) = least_covering(&spots, markers, lines, labels);
    let rows = panel
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let yc = rect.y0 + 5 + LEGEND_ROW / 2 + i as i32 * LEGEND_ROW;
            let x0 = rect.x0 + 10;
            LegendRow {
                line: (s.style == SeriesStyle::LineMarkers).then_some([(x0, yc), (x0 + 24, yc)]),
                dot: (x0 + 12, yc),
                label: Label {
                    text: s.label.clone(),
                    at: (x0 + 32, yc),
                    anchor: Anchor::Left,
                },
            }
        })
        .collect();
    Some(Legend { rect, rows })
}

/// The message of a panel of `size` = (width, height) pixels with nothing to plot, below
/// its title of `title_h` pixels: wrapped at 76 columns, centred in a frame as wide as the
/// plotting area would be (or the default message when the panel has none).
pub fn message_strip((w, h): (i32, i32), title_h: i32, message: Option<&str>) -> MessageStrip {
    let lines = console::wrap(message.unwrap_or("（没有可画的数据）"), 76);
    let line_h = (MESSAGE_PX * 1.6) as i32;
    let box_h = (lines.len() as i32 * line_h + 48).min(h - title_h - 2 * MARGIN);
    let top = title_h + (h - title_h - box_h) / 2;
    let first = top + box_h / 2 - (lines.len() as i32 - 1) * line_h / 2;
    MessageStrip {
        frame: Rect {
            x0: Y_LABEL_AREA,
            y0: top,
            x1: w - Y_LABEL_AREA,
            y1: top + box_h,
        },
        lines: lines
            .into_iter()
            .enumerate()
            .map(|(i, text)| Label {
                text,
                at: (w / 2, first + i as i32 * line_h),
                anchor: Anchor::Center,
            })
            .collect(),
    }
}
