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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::{Axis, Region, Scale, Series};

    // A 960 × 400 panel without a title: the plotting area is 86..940 × 14..336, and
    // x 0..853, y 0..321 put value v exactly v pixels from the left and bottom ends
    // (86 + x, 335 - y).
    fn frame(regions: usize) -> Frame {
        Frame::new((960, 400), 0, regions)
    }

    fn map() -> PlotMap {
        PlotMap::new(
            &frame(0).plot,
            (Scale::Linear, 0.0..853.0),
            (Scale::Linear, 0.0..321.0),
        )
    }

    fn rect(x0: i32, y0: i32, x1: i32, y1: i32) -> Rect {
        Rect { x0, y0, x1, y1 }
    }

    fn panel() -> Panel {
        Panel::new("", Axis::linear("x"), Axis::linear("y"))
    }

    #[test]
    fn the_unit_maps_of_these_tests_are_one_pixel_per_unit() {
        assert_eq!(map().pixel((0.0, 0.0)), (86, 335));
        assert_eq!(map().pixel((100.0, 100.0)), (186, 235));
        assert_eq!(map().pixel((853.0, 321.0)), (939, 14));
    }

    #[test]
    fn cover_weighs_markers_three_line_bits_one_labels_five() {
        let r = rect(0, 0, 10, 10);
        let markers = [(15, 5), (16, 5)]; // 5 px off counts, 6 does not
        let lines = [(12, 5), (13, 5)]; // 2 px off counts, 3 does not
        let labels = [rect(9, 9, 20, 20), rect(10, 0, 20, 10)]; // touching does not
        assert_eq!(cover(&r, &markers, &lines, &labels), 3 + 1 + 5);
    }

    #[test]
    fn a_line_is_sampled_fifteen_times_between_its_points() {
        let s = line_samples(&[(0, 0), (16, 32), (0, 32)]);
        assert_eq!(s.len(), 30);
        assert_eq!(&s[..3], [(1, 2), (2, 4), (3, 6)]);
        assert_eq!(s[14], (15, 30));
        assert_eq!(s[15], (15, 32), "back from 16 by 1/16");
        assert!(line_samples(&[(5, 5)]).is_empty());
    }

    #[test]
    fn the_legend_avoids_the_corner_with_the_most_points() {
        let mut p = panel();
        p.series.push(Series::line("点", vec![]));
        // "点" is 13 px: the legend is 10 + 24 + 8 + 13 + 10 = 65 × 30, and its corners
        // are x 96 or 940 - 10 - 65 = 865, y 14 + 8 = 22 or 336 - 10 - 30 = 296.
        let at = |markers: &[(i32, i32)], labels: &[Rect]| {
            let l = legend(&p, &frame(0), markers, &[], labels).unwrap();
            (l.rect.x0, l.rect.y0)
        };
        assert_eq!(at(&[], &[]), (96, 22), "upper left on a tie");
        let (ul, ur, lr, ll) = ((120, 30), (900, 30), (900, 310), (120, 310));
        assert_eq!(at(&[ul, ul, ul, ur, ur, lr, ll, ll], &[]), (865, 296));
        assert_eq!(at(&[ul, ur], &[]), (865, 296));
        assert_eq!(at(&[ul, ur], &[rect(850, 290, 900, 300)]), (96, 296));
        let l = legend(&p, &frame(0), &[], &[], &[]).unwrap();
        assert_eq!(l.rect, rect(96, 22, 161, 52));
        let row = LegendRow {
            line: Some([(106, 37), (130, 37)]),
            dot: (118, 37),
            label: Label {
                text: "点".into(),
                at: (138, 37),
                anchor: Anchor::Left,
            },
        };
        assert_eq!(l.rows, [row]);
        assert_eq!(legend(&panel(), &frame(0), &[], &[], &[]), None);
    }

    #[test]
    fn a_legend_of_dots_has_no_line_and_sits_below_the_bands() {
        let mut p = panel();
        p.series.push(Series::dots("甲", vec![]));
        p.series.push(Series::dots("乙", vec![]));
        let l = legend(&p, &frame(2), &[], &[], &[]).unwrap();
        assert_eq!(l.rect.y0, 14 + 48 + 8, "two bands and their gap above it");
        assert_eq!(l.rect.y1 - l.rect.y0, 2 * 20 + 10);
        assert!(l.rows.iter().all(|r| r.line.is_none()));
        assert_eq!(l.rows[1].dot.1 - l.rows[0].dot.1, 20);
    }

    fn region(x0: f64, x1: f64) -> Region {
        Region {
            x0,
            x1,
            label: "宽：放不下".into(), // five ems: 60 px, 72 with room
            series: 1,
        }
    }

    #[test]
    fn a_region_label_stays_inside_its_band_when_it_fits_and_moves_before_it_when_not() {
        let mut p = panel();
        p.regions = vec![region(100.0, 172.0), region(100.0, 171.0)];
        let b = bands(&p, &frame(2), &map());
        assert_eq!(b[0].rect, rect(186, 16, 258, 34), "row 0, 72 px wide");
        assert_eq!(
            b[0].label,
            Label {
                text: "宽：放不下".into(),
                at: (193, 25),
                anchor: Anchor::Left,
            }
        );
        assert_eq!(b[1].rect, rect(186, 36, 257, 54), "row 1, 71 px wide");
        assert_eq!(
            b[1].label,
            Label {
                text: "宽：放不下 →".into(),
                at: (182, 45),
                anchor: Anchor::Right,
            }
        );
        assert_eq!(b[1].series, 1);
    }

    #[test]
    fn narrow_and_clipped_bands_keep_their_rows() {
        let mut p = panel();
        // Wholly right of the axis: no band, but its row stays empty; then one sticking
        // out on the left, clipped to the plotting area, two pixels wide.
        p.regions = vec![region(900.0, 1000.0), region(-50.0, 2.0)];
        let b = bands(&p, &frame(2), &map());
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].rect, rect(86, 36, 88, 54));
        assert_eq!(b[0].edge, rect(86, 36, 89, 54));
        assert_eq!(b[0].start_line, [(86, 54), (86, 336)]);
        assert_eq!(
            (b[0].label.at, b[0].label.anchor),
            ((82, 45), Anchor::Right)
        );
    }

    #[test]
    fn a_reference_label_goes_to_the_free_end_above_or_below_its_line() {
        let h = RefLine {
            y: 100.0,
            label: "参考".into(), // 24 px
        };
        // The line at y = 235 from x 86 to 939; spots 218..233 above, 237..252 below,
        // x 911..935 at the right, 92..116 at the left.
        let at = |markers: &[(i32, i32)], labels: &[Rect]| {
            let l = hline(&h, &map(), markers, &[], labels);
            (l.label.at, l.label.anchor)
        };
        assert_eq!(at(&[], &[]), ((935, 225), Anchor::Right));
        assert_eq!(at(&[(920, 225)], &[]), ((92, 225), Anchor::Left));
        assert_eq!(
            at(&[(920, 225), (100, 225)], &[]),
            ((935, 244), Anchor::Right)
        );
        let everywhere_but_lower_left = [rect(100, 200, 939, 236), rect(900, 236, 939, 260)];
        assert_eq!(
            at(&[], &everywhere_but_lower_left),
            ((92, 244), Anchor::Left)
        );
        let l = hline(&h, &map(), &[], &[], &[]);
        assert_eq!(l.ends, [(86, 235), (939, 235)]);
        assert_eq!(l.label_box, rect(911, 218, 935, 233));
    }

    #[test]
    fn a_chart_keeps_reference_labels_off_the_bands_and_off_each_other() {
        let mut p = panel();
        p.regions = vec![region(0.0, 853.0)];
        for y in [295.0, 100.0, 100.0] {
            p.hlines.push(RefLine {
                y,
                label: "参考".into(),
            });
        }
        let c = chart(&p, &frame(1), 0.0..853.0, 0.0..321.0);
        assert_eq!(c.bands[0].rect, rect(86, 16, 939, 34));
        let spots: Vec<_> = c.hlines.iter().map(|h| h.label.at).collect();
        // The line at 40 has the band just above it: its label goes below.
        assert_eq!(spots, [(935, 49), (935, 225), (92, 225)]);
        assert_eq!(c.legend, None, "no series, no legend");
    }

    #[test]
    fn a_message_is_centred_line_by_line_in_its_strip() {
        let s = message_strip((960, 200), 0, Some("放不下"));
        // One line of 28 px in a 76-px frame centred in 200 px.
        assert_eq!(s.frame, rect(72, 62, 888, 138));
        assert_eq!(
            s.lines,
            [Label {
                text: "放不下".into(),
                at: (480, 100),
                anchor: Anchor::Center,
            }]
        );
        // 100 Chinese characters wrap at 38 a line: three lines about the same middle.
        let long = "放".repeat(100);
        let s = message_strip((960, 200), 0, Some(&long));
        let ys: Vec<i32> = s.lines.iter().map(|l| l.at.1).collect();
        assert_eq!(ys, [72, 100, 128]);
        assert_eq!(s.frame, rect(72, 34, 888, 166));
        let s = message_strip((960, 200), 0, None);
        assert_eq!(s.lines[0].text, "（没有可画的数据）");
    }
}
