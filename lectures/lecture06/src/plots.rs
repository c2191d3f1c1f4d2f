//! SVG figures of the lecture, for slides: the knee (demo 1), speedup against batch size
//! (demo 2), and what draft trees buy (demo 3).
//!
//! Drawn with plotters' SVG backend only: text is written as SVG `<text>` with a generic
//! `sans-serif` family, so no font files are needed to make the figures (the viewer picks
//! a font that has the Chinese glyphs).

use std::fs;
use std::path::{Path, PathBuf};

use decode_lab::{best_round, verify_time};
use llm_math::max_batch;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::Error;
use crate::spec_decode_on_hardware::{
    DEMO1_CTX, DEMO2_CTXS, DEMO3_BATCHES, DraftFigures, OVERHEAD_T, Setup, shape_label,
};

/// Batch sizes of the knee figure.
pub const KNEE_BATCHES: [u64; 4] = [1, 16, 64, 256];
/// Series colours, in order.
const COLORS: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
];
const SIZE: (u32, u32) = (960, 600);
const FONT: &str = "sans-serif";

/// Creates `dir` if needed and returns the path of `file` in it.
fn target(dir: &Path, file: &str) -> Result<PathBuf, Error> {
    fs::create_dir_all(dir).map_err(|e| {
        Error::Plot(format!(
            "cannot create the plot folder {}: {e}",
            dir.display()
        ))
    })?;
    Ok(dir.join(file))
}

fn plot_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Plot(format!("cannot write {}: {e}", path.display()))
}

fn model_error(e: impl Into<decode_lab::Error>) -> Error {
    Error::Decode(e.into())
}

/// Figure (a), `knee.svg`: time of one target forward pass against the tokens fed per
/// sequence (log axis), at batch 1, 16, 64 and 256, context [`DEMO1_CTX`]. Flat while the
/// pass only reads weights, then rising once `batch · n` passes the critical batch.
pub fn knee(dir: &Path, setup: &Setup) -> Result<PathBuf, Error> {
    let path = target(dir, "knee.svg")?;
    let written = path.clone();
    let Setup {
        hw, target: tgt, ..
    } = setup;
    let fits = max_batch(tgt, hw, DEMO1_CTX).map_err(model_error)?;
    let ns: Vec<u64> = (0..=12).map(|k| 1u64 << k).collect();
    let mut series = Vec::new();
    for &b in KNEE_BATCHES.iter().filter(|&&b| b <= fits) {
        let points = ns
            .iter()
            .map(|&n| {
                Ok((
                    n as f64,
                    1e3 * verify_time(tgt, hw, b, DEMO1_CTX, n, OVERHEAD_T)?,
                ))
            })
            .collect::<Result<Vec<_>, decode_lab::Error>>()?;
        series.push((format!("批 {b}"), points));
    }
    let y_max = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.1))
        .fold(1.0, f64::max);
    let title = format!(
        "{} 在一块 {} 上一次前向的时间（上下文 {DEMO1_CTX}）",
        tgt.name, hw.name
    );
    let root = SVGBackend::new(&path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_error(&path, e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(&title, (FONT, 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(
            (1f64..4096f64).log_scale(),
            (0.5f64..y_max * 1.5).log_scale(),
        )
        .map_err(|e| plot_error(&path, e))?;
    chart
        .configure_mesh()
        .x_desc("每个序列送进的 token 数 n（对数坐标）")
        .y_desc("时间（ms，对数坐标）")
        .label_style((FONT, 14))
        .draw()
        .map_err(|e| plot_error(&path, e))?;
    if series.is_empty() {
        let msg = format!("{} 在一块 {} 上放不下", tgt.name, hw.name);
        root.draw(&Text::new(
            msg,
            (SIZE.0 as i32 / 3, SIZE.1 as i32 / 2),
            (FONT, 24),
        ))
        .map_err(|e| plot_error(&path, e))?;
    }
    for (i, (label, points)) in series.into_iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        line(&mut chart, points, color, label).map_err(|e| plot_error(&path, e))?;
    }
    legend(&mut chart, SeriesLabelPosition::UpperLeft, 14).map_err(|e| plot_error(&path, e))?;
    root.present().map_err(|e| plot_error(&path, e))?;
    Ok(written)
}

/// Figure (b), `batch.svg`: the best speedup against batch size (log axis) for each
/// context of [`DEMO2_CTXS`], at `setup.alpha`. Each context's line ends where its KV
/// cache no longer fits; the region beyond is shaded in the line's colour and labelled
/// "放不下".
pub fn batch(dir: &Path, setup: &Setup) -> Result<PathBuf, Error> {
    let path = target(dir, "batch.svg")?;
    let written = path.clone();
    let Setup {
        hw,
        target: tgt,
        alpha,
        ..
    } = setup;
    let batches: Vec<u64> = (0..=20)
        .map(|k| (2f64.powf(k as f64 / 2.0)).round() as u64)
        .collect();
    let x_max = 1024.0;
    let mut series = Vec::new();
    for &ctx in &DEMO2_CTXS {
        let fits = max_batch(tgt, hw, ctx).map_err(model_error)?;
        let mut points = Vec::new();
        for &b in batches.iter().filter(|&&b| b <= fits) {
            let best = best_round(&setup.scenario(b, ctx, *alpha))?;
            points.push((b as f64, best.speedup()));
        }
        series.push((ctx, fits, points));
    }
    let y_max = series
        .iter()
        .flat_map(|s| s.2.iter().map(|p| p.1))
        .fold(2.0, f64::max)
        * 1.1;
    let title = format!(
        "最优加速比 vs 批大小（{}，α = {alpha}）",
        setup_label(setup)
    );
    let root = SVGBackend::new(&path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_error(&path, e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(&title, (FONT, 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d((1f64..x_max).log_scale(), 0f64..y_max)
        .map_err(|e| plot_error(&path, e))?;
    chart
        .configure_mesh()
        .x_desc("批大小（对数坐标）")
        .y_desc("最优加速比（×）")
        .label_style((FONT, 14))
        .draw()
        .map_err(|e| plot_error(&path, e))?;
    for (i, (ctx, fits, points)) in series.into_iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let edge = (fits.max(1) as f64).min(x_max);
        if (fits as f64) < x_max {
            let label_y = y_max * (0.11 + 0.06 * i as f64);
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(edge, 0.0), (x_max, y_max)],
                    color.mix(0.08).filled(),
                )))
                .map_err(|e| plot_error(&path, e))?;
            chart
                .draw_series(std::iter::once(Text::new(
                    format!("上下文 {ctx}：批 > {fits} 放不下"),
                    (
                        if edge > 100.0 {
                            edge * 0.97
                        } else {
                            edge * 1.05
                        },
                        label_y,
                    ),
                    (FONT, 14).into_font().color(&color).pos(Pos::new(
                        if edge > 100.0 {
                            HPos::Right
                        } else {
                            HPos::Left
                        },
                        VPos::Center,
                    )),
                )))
                .map_err(|e| plot_error(&path, e))?;
        }
        line(&mut chart, points, color, format!("上下文 {ctx}"))
            .map_err(|e| plot_error(&path, e))?;
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight, 14).map_err(|e| plot_error(&path, e))?;
    root.present().map_err(|e| plot_error(&path, e))?;
    Ok(written)
}

/// Figure (c), `trees.svg`: for each draft of demo 3, one panel with τ and the speedup at
/// batch 1 and batch 32 for the nine draft shapes.
pub fn trees(dir: &Path, setup: &Setup, drafts: &[DraftFigures]) -> Result<PathBuf, Error> {
    let path = target(dir, "trees.svg")?;
    let written = path.clone();
    let root = SVGBackend::new(
        &path,
        (SIZE.0, SIZE.1 * drafts.len().max(1) as u32 / 2 + 80),
    )
    .into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_error(&path, e))?;
    let title = format!(
        "树形验证：τ 与 {} 上的加速比（目标 {}）",
        setup.hw.name, setup.target.name
    );
    let root = root
        .titled(&title, (FONT, 22))
        .map_err(|e| plot_error(&path, e))?;
    let panels = root.split_evenly((drafts.len().max(1), 1));
    for (d, panel) in drafts.iter().zip(panels.iter()) {
        let labels: Vec<String> = d.shapes.iter().map(|s| shape_label(&s.branching)).collect();
        let mut series: Vec<(String, Vec<(i32, f64)>)> = vec![(
            "τ = 每轮产出的 token".to_string(),
            d.shapes
                .iter()
                .enumerate()
                .map(|(i, s)| (i as i32, s.tau))
                .collect(),
        )];
        for (k, b) in DEMO3_BATCHES.iter().enumerate() {
            let points = d
                .shapes
                .iter()
                .enumerate()
                .filter_map(|(i, s)| s.speedup[k].map(|v| (i as i32, v)))
                .collect();
            series.push((format!("批 {b} 加速"), points));
        }
        let y_max = series
            .iter()
            .flat_map(|s| s.1.iter().map(|p| p.1))
            .fold(1.0, f64::max)
            * 1.15;
        let mut chart = ChartBuilder::on(panel)
            .caption(format!("草稿：{}", d.name), (FONT, 18))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(56)
            .build_cartesian_2d(-1i32..labels.len() as i32, 0f64..y_max)
            .map_err(|e| plot_error(&path, e))?;
        let formatter = |i: &i32| {
            usize::try_from(*i)
                .ok()
                .and_then(|i| labels.get(i))
                .cloned()
                .unwrap_or_default()
        };
        chart
            .configure_mesh()
            .x_labels(labels.len() + 2)
            .x_label_formatter(&formatter)
            .x_desc("草稿形状")
            .y_desc("τ / 加速比（×）")
            .label_style((FONT, 13))
            .draw()
            .map_err(|e| plot_error(&path, e))?;
        for (i, (label, points)) in series.into_iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            line(&mut chart, points.clone(), color, label).map_err(|e| plot_error(&path, e))?;
            chart
                .draw_series(
                    points
                        .into_iter()
                        .map(|p| Circle::new(p, 4, color.filled())),
                )
                .map_err(|e| plot_error(&path, e))?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft, 13).map_err(|e| plot_error(&path, e))?;
    }
    root.present().map_err(|e| plot_error(&path, e))?;
    Ok(written)
}

/// Draws `points` as a labelled line of `color` (2 px), with its legend entry.
fn line<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    points: Vec<(X::ValueType, Y::ValueType)>,
    color: RGBColor,
    label: impl Into<String>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend + 'a,
    X: Ranged,
    Y: Ranged,
    X::ValueType: Clone + 'static,
    Y::ValueType: Clone + 'static,
{
    chart
        .draw_series(LineSeries::new(points, color.stroke_width(2)))?
        .label(label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(2)));
    Ok(())
}

/// Draws the legend box of `chart` at `position`, with `size`-pixel labels.
fn legend<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    position: SeriesLabelPosition,
    size: u32,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend + 'a,
    X: Ranged,
    Y: Ranged,
{
    chart
        .configure_series_labels()
        .position(position)
        .label_font((FONT, size))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
}

fn setup_label(setup: &Setup) -> String {
    format!(
        "一块 {}、{} + {}",
        setup.hw.name, setup.target.name, setup.draft.name
    )
}
