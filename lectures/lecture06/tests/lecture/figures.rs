//! The figures as a reader sees them: each test reads an SVG figure back (roxmltree) and
//! checks one thing that once read badly — fonts, tick labels, markers, curves
//! cut short, labels outside their region, a y axis from 0, lines across categories, no
//! break-even line, empty axes where the target does not fit.

use crate::common;
use crate::svg_read;

use lecture_kit::Figure;
use lecture_kit::render::svg::color_hex;
use lecture06::spec_decode_on_hardware::demo4::{Demo4, MeasuredDraft, MeasuredShape};
use lecture06::spec_decode_on_hardware::{demo2, demo3, demo4};
use llm_math::max_batch;
use svg_read::{Svg, width};

/// The default setup, and one whose target does not fit on the card (as flags).
fn default_setup() -> Vec<&'static str> {
    Vec::new()
}

fn too_big() -> Vec<&'static str> {
    vec!["--target", llm_math::model("Llama-3.1-70B").unwrap().name]
}

/// knee, batch and trees for `setup`, as the lecture prints them.
fn figures(setup: &[&str]) -> [Figure; 3] {
    common::figures(setup)
}

/// A small demo 4 result, by hand (running demo 4 takes seconds): τ grows with the shape.
fn demo4_by_hand() -> Demo4 {
    let shapes = demo3::SHAPES
        .iter()
        .enumerate()
        .map(|(i, br)| MeasuredShape {
            label: demo3::shape_label(br),
            branching: br.to_vec(),
            rounds: 10,
            target_forwards: 11,
            draft_forwards: 10 * br.len(),
            tau_measured: 1.2 + 0.3 * i as f64,
            tau_ranks: 1.3 + 0.3 * i as f64,
            identical_to_target: true,
        })
        .collect::<Vec<_>>();
    Demo4 {
        prompts: 16,
        n_new: 48,
        drafts: vec![
            MeasuredDraft {
                name: "弱草稿",
                shapes: shapes.clone(),
            },
            MeasuredDraft {
                name: "强草稿",
                shapes,
            },
        ],
    }
}

fn all_figures() -> Vec<Figure> {
    let mut all = figures(&default_setup()).to_vec();
    all.extend(figures(&too_big()));
    all.push(demo4::figure(&demo4_by_hand()));
    all
}

// ---- the checks ----------------------------------------------------------------------

#[test]
fn every_figure_fits_a_slide_no_taller_than_wide() {
    // Demo 4 with the trained model's six drafts too, whose panels go two abreast.
    let mut six = demo4_by_hand();
    let two = six.drafts.clone();
    six.drafts.extend(two.iter().chain(&two).cloned());
    let mut all = all_figures();
    all.push(demo4::figure(&six));
    for f in all {
        let svg = lecture_kit::render::svg::to_string(&f).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let size = |a: &str| -> f64 { doc.root_element().attribute(a).unwrap().parse().unwrap() };
        let width = size("width");
        let height = size("height");
        assert!(height <= width, "{}.svg is {width} × {height}", f.id);
    }
}

#[test]
fn every_text_of_every_figure_asks_for_a_cjk_font_first() {
    for f in all_figures() {
        let s = Svg::of(&f);
        assert!(s.texts.len() > 3, "{}: {} texts", f.id, s.texts.len());
        for t in &s.texts {
            let fonts: Vec<&str> = t.family.split(',').map(str::trim).collect();
            assert_eq!(fonts.first(), Some(&"Noto Sans CJK SC"), "{}: {t:?}", f.id);
            for needed in ["PingFang SC", "Microsoft YaHei", "WenQuanYi Micro Hei"] {
                assert!(fonts.contains(&needed), "{}: {needed} missing: {t:?}", f.id);
            }
            assert_eq!(fonts.last(), Some(&"sans-serif"), "{}: {t:?}", f.id);
        }
    }
}

#[test]
fn tick_labels_read_as_people_write_them() {
    for f in all_figures() {
        let svg = Svg::of(&f);
        for (t, _) in svg.ticks() {
            let bare = t.text.trim_end_matches(['×', 'K', 'M']);
            assert!(
                !(bare.contains('.') && bare.ends_with('0')),
                "{}: tick {:?} has a trailing zero",
                f.id,
                t.text
            );
        }
        for t in &svg.texts {
            assert!(
                !t.text.ends_with(".0") && !t.text.ends_with(".0×"),
                "{}: {t:?}",
                f.id
            );
        }
    }
    let [knee, batch, _] = figures(&default_setup());
    let knee = Svg::of(&knee);
    for label in ["1", "10", "100", "1K", "10K"] {
        assert!(knee.has(label), "knee lacks tick {label:?}");
    }
    let batch = Svg::of(&batch);
    for label in ["1", "10", "100", "1K", "10K", "1×", "1.2×", "2×"] {
        assert!(batch.has(label), "batch lacks tick {label:?}");
    }
}

#[test]
fn every_point_has_a_marker_and_the_legend_one_per_series() {
    for f in all_figures() {
        let points: usize = f
            .panels
            .iter()
            .flat_map(|p| &p.series)
            .map(|s| s.points.len())
            .sum();
        let legend_entries: usize = f
            .panels
            .iter()
            .filter(|p| p.has_points())
            .map(|p| p.series.len())
            .sum();
        assert_eq!(
            Svg::of(&f).circles.len(),
            points + legend_entries,
            "{}: one marker per point and per legend entry",
            f.id
        );
        let values = Svg::of(&f).values;
        assert_eq!(
            values.len(),
            points,
            "{}: one value under the pointer per point",
            f.id
        );
        assert!(
            values
                .iter()
                .all(|(_, _, title)| title.lines().count() == 3),
            "{}: each names its series, x and y",
            f.id
        );
    }
}

#[test]
fn batch_curves_end_at_the_largest_batch_that_fits() {
    let setup = default_setup();
    let [_, fig, _] = figures(&setup);
    let series = &fig.panels[0].series;
    // Independently: the card's limit at each context (14 at 32K on an H100 is the
    // number the lecture quotes).
    for (s, ctx) in series.iter().zip(demo2::CTXS) {
        let fits = max_batch(&llm_math::LLAMA31_8B, &hw_specs::H100, ctx).unwrap();
        assert_eq!(s.points.last().unwrap().0, fits as f64, "{}", s.label);
    }
    assert_eq!(series[2].points.last().unwrap().0, 14.0);
    // In the picture: each curve's last marker sits on the edge of its "放不下" band.
    let svg = Svg::of(&fig);
    let legend = svg.legends()[0];
    for (i, region) in fig.panels[0].regions.iter().enumerate() {
        let hex = color_hex(region.series);
        let last = svg
            .circles
            .iter()
            .filter(|c| c.2 == hex && !legend.contains((c.0, c.1)))
            .map(|c| c.0)
            .fold(f64::MIN, f64::max);
        let band = svg
            .rects
            .iter()
            .find(|r| r.1 == hex && r.3 < 1.0)
            .unwrap_or_else(|| panic!("region {i} has no band"));
        assert!(
            (band.0.x - last).abs() <= 1.0,
            "region {i}: band starts at {}, the curve ends at {last}",
            band.0.x
        );
    }
}

#[test]
fn region_labels_sit_inside_their_own_band() {
    let setup = default_setup();
    let [_, fig, _] = figures(&setup);
    let svg = Svg::of(&fig);
    let regions = &fig.panels[0].regions;
    assert_eq!(
        regions.len(),
        3,
        "all three contexts run out of memory before 8K"
    );
    for r in regions {
        let t = svg
            .texts
            .iter()
            .find(|t| t.text == r.label)
            .unwrap_or_else(|| panic!("no label {:?}", r.label));
        let (band, ..) = svg
            .rects
            .iter()
            .find(|b| b.1 == color_hex(r.series) && b.3 < 1.0)
            .unwrap();
        assert_eq!(t.anchor, "start", "{t:?}");
        assert!(
            t.x >= band.x && t.x + width(t) <= band.x + band.w,
            "{:?} runs outside its band {band:?}",
            t.text
        );
        assert!(t.y >= band.y && t.y <= band.y + band.h, "{t:?} vs {band:?}");
        // …and the band lies above every data point.
        for c in svg
            .circles
            .iter()
            .filter(|c| !svg.legends()[0].contains((c.0, c.1)))
        {
            assert!(c.1 > band.y + band.h, "{c:?} under the band {band:?}");
        }
    }
}

#[test]
fn the_batch_y_axis_spans_the_speedups_not_zero_to_two() {
    let setup = default_setup();
    let [_, fig, _] = figures(&setup);
    let svg = Svg::of(&fig);
    let ys: Vec<f64> = svg
        .ticks()
        .into_iter()
        .filter(|(t, _)| t.text.ends_with('×'))
        .map(|(_, v)| v)
        .collect();
    assert!(ys.len() >= 4, "{ys:?}");
    let (lo, hi) = ys
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    assert!(lo >= 0.9 && hi <= 2.2, "y ticks {lo}..{hi}");
}

/// The y pixel of the dashed grey reference lines, and of the "1×" ticks.
fn break_even_rows(svg: &Svg) -> (Vec<f64>, Vec<f64>) {
    let mut dashes: Vec<f64> = svg
        .polylines
        .iter()
        .filter(|(stroke, p)| stroke == "#5A5A5A" && p.len() == 2 && p[0].1 == p[1].1)
        .map(|(_, p)| p[0].1)
        .collect();
    dashes.dedup();
    let ticks = svg
        .texts
        .iter()
        .filter(|t| t.text == "1×")
        .map(|t| t.y)
        .collect();
    (dashes, ticks)
}

#[test]
fn a_break_even_line_at_one_in_the_batch_figure_and_both_speedup_panels() {
    let [_, batch, trees] = figures(&default_setup());
    for (fig, panels) in [(batch, 1), (trees, 2)] {
        let svg = Svg::of(&fig);
        assert_eq!(svg.count("1.0×：不投机"), panels, "{}", fig.id);
        let (dashes, ticks) = break_even_rows(&svg);
        assert_eq!(ticks.len(), panels, "{}: a 1× tick per panel", fig.id);
        for y in ticks {
            assert!(
                dashes.iter().any(|d| (d - y).abs() <= 1.0),
                "{}: no dashed line at the 1× tick (y = {y}): {dashes:?}",
                fig.id
            );
        }
    }
}

#[test]
fn trees_are_dots_in_separate_panels_for_tau_and_speedup() {
    let setup = default_setup();
    let [_, _, fig] = figures(&setup);
    let svg = Svg::of(&fig);
    let colours: Vec<String> = (0..2).map(color_hex).collect();
    assert!(
        !svg.polylines
            .iter()
            .any(|(stroke, _)| colours.contains(stroke)),
        "no line joins two draft shapes"
    );
    assert_eq!(svg.count("τ（token）"), 1, "τ has its own panel");
    assert_eq!(svg.count("加速比"), 2, "one speedup panel per batch");
    for b in demo3::BATCHES {
        assert!(
            svg.texts
                .iter()
                .any(|t| t.text.starts_with(&format!("批 {b}：")))
        );
    }
    // The two speedup panels share one scale: the same tick labels, in the same order.
    let speedup_ticks: Vec<&str> = svg
        .ticks()
        .into_iter()
        .filter(|(t, _)| t.text.ends_with('×'))
        .map(|(t, _)| t.text.as_str())
        .collect();
    let half = speedup_ticks.len() / 2;
    assert_eq!(speedup_ticks[..half], speedup_ticks[half..]);
    // Batch 32 makes some trees a slow-down: below the line, and visibly so.
    let below = fig.panels[2]
        .series
        .iter()
        .flat_map(|s| &s.points)
        .filter(|p| p.1 < 1.0)
        .count();
    assert!(below >= 4, "{below}");
}

#[test]
fn legends_hide_no_data_point() {
    for f in all_figures() {
        let svg = Svg::of(&f);
        let drawn: Vec<_> = f.panels.iter().filter(|p| p.has_points()).collect();
        let legends = svg.legends();
        assert_eq!(legends.len(), drawn.len(), "{}: a legend per chart", f.id);
        for (legend, panel) in legends.iter().zip(drawn) {
            let inside = svg
                .circles
                .iter()
                .filter(|c| legend.contains((c.0, c.1)))
                .count();
            assert_eq!(
                inside,
                panel.series.len(),
                "{}: only the legend's own markers inside {legend:?}",
                f.id
            );
        }
    }
}

#[test]
fn a_target_that_does_not_fit_says_so_in_words_without_empty_axes() {
    let [knee, batch, trees] = figures(&too_big());
    for fig in [knee, batch] {
        let svg = Svg::of(&fig);
        assert!(
            svg.texts.iter().any(|t| t.text.contains("放不下")),
            "{}: {:?}",
            fig.id,
            svg.texts
        );
        assert!(svg.ticks().is_empty(), "{}: no axis ticks", fig.id);
        assert!(
            svg.circles.is_empty() && svg.legends().is_empty(),
            "{}",
            fig.id
        );
    }
    let svg = Svg::of(&trees);
    for b in demo3::BATCHES {
        assert!(
            svg.texts
                .iter()
                .any(|t| t.text.starts_with(&format!("批 {b} 放不下"))),
            "trees: batch {b} says 放不下: {:?}",
            svg.texts
        );
    }
    assert_eq!(
        svg.count("τ（token）"),
        1,
        "τ does not need the card: still drawn"
    );
    assert_eq!(
        svg.count("1.0×：不投机"),
        0,
        "no break-even line on no chart"
    );
}

#[test]
fn demo4_draws_measured_tau_beside_the_estimate_per_draft() {
    let fig = demo4::figure(&demo4_by_hand());
    assert_eq!(fig.id, "measured");
    let svg = Svg::of(&fig);
    for label in ["草稿「弱草稿」", "草稿「强草稿」", "链 γ=1", "树 4×4×4×4"] {
        assert!(svg.has(label), "{label}: {:?}", svg.texts);
    }
    assert_eq!(svg.count("实测 τ"), 2, "a legend per draft");
    assert_eq!(svg.count("演示 3 的估计 τ（同这些提示）"), 2);
    // Measured and estimated τ of one shape sit side by side, not on top of each other.
    let legends = svg.legends();
    let xs = |hex: String| -> Vec<f64> {
        let mut v: Vec<f64> = svg
            .circles
            .iter()
            .filter(|c| c.2 == hex && !legends.iter().any(|l| l.contains((c.0, c.1))))
            .map(|c| c.0)
            .collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let measured = xs(color_hex(0));
    let estimated = xs(color_hex(1));
    assert_eq!(measured.len(), 18);
    assert!(
        measured
            .iter()
            .zip(&estimated)
            .all(|(p, q)| (p - q).abs() >= 5.0),
        "{measured:?} vs {estimated:?}"
    );
}
