//! Demo 5's second half: the planner judged leave-one-publisher-out
//! (`planner::validation::leave_one_publisher_out`) — by kind and batch band, by
//! engine, each plain-step batch series' log-slope — and the engine profiles with the
//! terms each engine's rows fix.

use super::validation_doc;
use lecture_kit::{Block, Cell, Column, Datum, Error, Table};
use planner::validation::{
    self, BatchBand, CrossPrediction, CrossSummary, ENGINE_AXES, ENGINES, Kind, MEASURED_GRID,
};
use serde::Serialize;

/// One subset's cross-validated ratios.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CrossRow {
    /// "step_time", "verify_or_round" or "speedup".
    pub kind: &'static str,
    /// The batch band (`≤ 4`, `5–31`, `≥ 32`), or the engine.
    pub subset: &'static str,
    /// Rows.
    pub count: usize,
    /// Median prediction / measurement.
    pub median_ratio: f64,
    /// The ratio farthest from 1.
    pub worst_ratio: f64,
    /// Fraction of rows within ±25%.
    pub within_25: f64,
}

/// A plain-step batch series' log-slope, measured and cross-validated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlopeRow {
    /// The series.
    pub series: &'static str,
    /// Smallest batch.
    pub from: u64,
    /// Largest batch.
    pub to: u64,
    /// Measured `d ln t / d ln batch`.
    pub measured: f64,
    /// Predicted.
    pub predicted: f64,
}

/// One publisher's plain steps, as a whole (`planner::validation::publisher_offsets`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OffsetRow {
    /// The publisher.
    pub publisher: &'static str,
    /// Its plain-step rows.
    pub rows: usize,
    /// Geometric mean of their ratios.
    pub offset: f64,
    /// Fraction within ±25%.
    pub within_25: f64,
    /// Fraction within ±25% once divided by `offset`.
    pub within_25_own_offset: f64,
}

/// One engine's profile: rows, and each refitted term (`None`: no row of the engine
/// fixes it, the pooled value stands).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineRow {
    /// The engine.
    pub engine: &'static str,
    /// Its calibration rows.
    pub rows: usize,
    /// Each of `ENGINE_AXES`: the refitted value in the axis's unit, if the rows fix it.
    pub terms: Vec<Option<f64>>,
}

/// Demo 5's cross-validation figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cross {
    /// Publishers.
    pub publishers: usize,
    /// Rows.
    pub rows: usize,
    /// By kind and batch band.
    pub by_band: Vec<CrossRow>,
    /// Plain steps by engine.
    pub by_engine: Vec<CrossRow>,
    /// Plain-step batch series.
    pub slopes: Vec<SlopeRow>,
    /// Engine profiles.
    pub engines: Vec<EngineRow>,
    /// Plain steps by publisher.
    pub offsets: Vec<OffsetRow>,
    /// Plain steps within ±25%, as predicted and once each publisher's offset is set
    /// aside (`planner::validation::shares_within_25`).
    pub shares_within_25: (f64, f64),
}

fn cross_row(kind: Kind, subset: &'static str, s: Option<CrossSummary>) -> Option<CrossRow> {
    s.map(|s| CrossRow {
        kind: kind.name(),
        subset,
        count: s.ratios.count,
        median_ratio: s.ratios.median,
        worst_ratio: s.ratios.worst,
        within_25: s.within_25,
    })
}

/// Computes the cross-validation.
///
/// Errors: as `planner::validation::leave_one_publisher_out`.
pub fn figures() -> Result<Cross, Error> {
    let rows: Vec<CrossPrediction> = validation::leave_one_publisher_out()?;
    let ms = validation::measurements()?;
    let mut by_band = Vec::new();
    for kind in Kind::ALL {
        for band in BatchBand::ALL {
            let s = validation::cross_summary(&rows, |m| {
                m.quantity.kind() == kind && BatchBand::of(m.batch) == band
            })?;
            by_band.extend(cross_row(kind, band.label(), s));
        }
    }
    let mut by_engine = Vec::new();
    for engine in ENGINES {
        let s = validation::cross_summary(&rows, |m| {
            m.quantity.kind() == Kind::StepTime && m.engine == *engine
        })?;
        by_engine.extend(cross_row(Kind::StepTime, engine, s));
    }
    let slopes = validation::step_series_slopes(&rows)
        .into_iter()
        .map(|s| SlopeRow {
            series: s.name,
            from: s.batches.0,
            to: s.batches.1,
            measured: s.measured,
            predicted: s.predicted,
        })
        .collect();
    let engines = validation::engine_profiles()?
        .iter()
        .filter(|p| p.rows > 0)
        .map(|p| EngineRow {
            engine: p.engine,
            rows: p.rows,
            terms: ENGINE_AXES
                .iter()
                .zip(p.fixed)
                .map(|(&a, fixed)| fixed.then(|| f64::from(p.ix[a]) * MEASURED_GRID[a].step))
                .collect(),
        })
        .collect();
    let offsets = validation::publisher_offsets(&rows, |m| m.quantity.kind() == Kind::StepTime)?;
    Ok(Cross {
        publishers: validation::publishers(ms).len(),
        rows: ms.len(),
        by_band,
        by_engine,
        slopes,
        engines,
        shares_within_25: validation::shares_within_25(&offsets)?,
        offsets: offsets
            .iter()
            .map(|o| OffsetRow {
                publisher: o.publisher,
                rows: o.rows,
                offset: o.offset,
                within_25: o.within_25,
                within_25_own_offset: o.within_25_own_offset,
            })
            .collect(),
    })
}

/// A kind as the tables name it.
fn kind_label(kind: &str) -> &'static str {
    match kind {
        "step_time" => "decode 一步",
        "verify_or_round" => "验证 / 一轮的开销",
        _ => "投机加速比",
    }
}

fn ratio_cells(r: &CrossRow) -> Vec<Cell> {
    vec![
        Cell::int(r.count as i64),
        Cell::number(format!("{:.2}", r.median_ratio), r.median_ratio),
        Cell::number(format!("{:.2}", r.worst_ratio), r.worst_ratio),
        Cell::number(format!("{:.0}%", r.within_25 * 100.0), r.within_25),
    ]
}

fn ratio_columns(first: &'static str, second: &'static str) -> Vec<Column> {
    vec![
        Column::text(first),
        Column::text(second),
        Column::number("行数", ""),
        Column::number("中位数", ""),
        Column::number("最差", ""),
        Column::number("±25% 以内", ""),
    ]
}

/// A term's value as the engine table prints it.
fn term_cell(axis: usize, v: Option<f64>) -> Cell {
    let Some(v) = v else {
        return Cell::text("（沿用合并拟合）");
    };
    let name = MEASURED_GRID[axis].name;
    let text = if name.ends_with("(s)") {
        if v < 1e-4 {
            format!("{:.2} µs", v * 1e6)
        } else {
            format!("{:.2} ms", v * 1e3)
        }
    } else {
        format!("{v:.2}")
    };
    Cell::values(text, vec![Datum::Number(v)])
}

/// The cross-validation as blocks: by band, by engine, slopes, engine profiles.
pub fn blocks(c: &Cross) -> Vec<Block> {
    let mut out = vec![Block::Text(format!(
        "\n留一个发布者（{} 家、{} 行）：每次拿掉一家的全部行，用其余各家拟合（合并的 measured 常数，\
         再按引擎重拟合它的固定开销、带宽效率、all-reduce 延迟和每序列每层的开销），\
         再预测拿掉的那一家。",
        c.publishers, c.rows
    ))];
    let mut t = Table::new(
        "demo5_cross_by_band",
        "演示 5：留一个发布者，按种类和批大小的预测 / 实测",
        ratio_columns("实测的是", "批大小"),
    );
    for r in &c.by_band {
        let mut cells = vec![Cell::text(kind_label(r.kind)), Cell::text(r.subset)];
        cells.extend(ratio_cells(r));
        t = t.row(cells);
    }
    out.push(Block::Table(t));
    let mut t = Table::new(
        "demo5_cross_by_engine",
        "演示 5：留一个发布者，decode 一步按引擎的预测 / 实测",
        ratio_columns("实测的是", "引擎"),
    );
    for r in &c.by_engine {
        let mut cells = vec![Cell::text(kind_label(r.kind)), Cell::text(r.subset)];
        cells.extend(ratio_cells(r));
        t = t.row(cells);
    }
    out.push(Block::Table(t));
    let mut t = Table::new(
        "demo5_cross_slopes",
        "演示 5：decode 一步随批大小的斜率 d ln t / d ln 批（留一个发布者）",
        vec![
            Column::text("序列"),
            Column::text("批大小"),
            Column::number("实测斜率", ""),
            Column::number("预测斜率", ""),
            Column::number("预测 / 实测", ""),
        ],
    );
    for s in &c.slopes {
        let r = s.predicted / s.measured;
        t = t.row(vec![
            Cell::text(s.series),
            Cell::text(format!("{}–{}", s.from, s.to)),
            Cell::number(format!("{:.3}", s.measured), s.measured),
            Cell::number(format!("{:.3}", s.predicted), s.predicted),
            Cell::number(format!("{r:.2}"), r),
        ]);
    }
    out.push(Block::Table(t));
    let mut t = Table::new(
        "demo5_cross_publishers",
        "演示 5：decode 一步按发布者（留一个发布者）：整体偏差是预测 / 实测的几何平均",
        vec![
            Column::text("发布者"),
            Column::number("行数", ""),
            Column::number("整体偏差", ""),
            Column::number("±25% 以内", ""),
            Column::number("去掉整体偏差后 ±25% 以内", ""),
        ],
    );
    for o in &c.offsets {
        t = t.row(vec![
            Cell::text(o.publisher),
            Cell::int(o.rows as i64),
            Cell::number(format!("{:.2}", o.offset), o.offset),
            Cell::number(format!("{:.0}%", o.within_25 * 100.0), o.within_25),
            Cell::number(
                format!("{:.0}%", o.within_25_own_offset * 100.0),
                o.within_25_own_offset,
            ),
        ]);
    }
    out.push(Block::Table(t));
    let mut columns = vec![Column::text("引擎"), Column::number("拟合用行数", "")];
    for &a in &ENGINE_AXES {
        columns.push(Column::text(MEASURED_GRID[a].name));
    }
    let mut t = Table::new(
        "demo5_engine_profiles",
        "演示 5：各引擎的常数（--engine NAME；没有行能定下的项沿用合并拟合）",
        columns,
    );
    for e in &c.engines {
        let mut cells = vec![Cell::text(e.engine), Cell::int(e.rows as i64)];
        for (&a, &v) in ENGINE_AXES.iter().zip(&e.terms) {
            cells.push(term_cell(a, v));
        }
        t = t.row(cells);
    }
    out.push(Block::Table(t));
    out
}

/// The cross-validation in one sentence per kind, for the observations.
pub fn observations(c: &Cross) -> Vec<String> {
    let steps: Vec<String> = c
        .by_band
        .iter()
        .filter(|r| r.kind == "step_time")
        .map(|r| {
            format!(
                "批 {} 的 {} 行中位数 {:.2}、{:.0}% 在 ±25% 以内",
                r.subset,
                r.count,
                r.median_ratio,
                r.within_25 * 100.0
            )
        })
        .collect();
    let within = c
        .slopes
        .iter()
        .filter(|s| (s.predicted / s.measured - 1.0).abs() <= 0.35)
        .count();
    let mut out = vec![
        format!(
            "留一个发布者时，decode 一步：{}。没见过的发布者，才是学生问\"换张卡、换个引擎\"时的处境。",
            steps.join("；")
        ),
        format!(
            "decode 一步随批大小变快变慢的斜率：{} 条序列里 {} 条的预测在实测的 ±35% 以内。",
            c.slopes.len(),
            within
        ),
    ];
    if let Some(range) = offset_range(c) {
        out.push(format!(
            "各发布者 decode 一步的整体偏差从 {:.2} 到 {:.2}；就算知道每一家的整体偏差，\
             也只有 {:.0}% 的行在 ±25% 以内（不知道时 {:.0}%）。",
            range.0,
            range.1,
            c.shares_within_25.1 * 100.0,
            c.shares_within_25.0 * 100.0
        ));
    }
    out
}

/// The smallest and largest publisher offset of `c`, or `None` without publishers.
pub fn offset_range(c: &Cross) -> Option<(f64, f64)> {
    let lowest = c.offsets.iter().map(|o| o.offset).min_by(f64::total_cmp)?;
    let highest = c.offsets.iter().map(|o| o.offset).max_by(f64::total_cmp)?;
    Some((lowest, highest))
}

/// The leave-one-publisher-out tables of `docs/validation.md`: by kind and batch band,
/// plain steps by engine, each plain-step series' log-slope, and the engine profiles.
pub fn markdown(s: &mut String, c: &Cross) {
    s.push_str(&format!(
        "\n### Leave one publisher out ({} publishers, {} rows)\n\n\
         | kind | batch | rows | median | worst | within ±25% |\n|---|---|---|---|---|---|\n",
        c.publishers, c.rows
    ));
    let line = |s: &mut String, r: &CrossRow, label: &str| {
        s.push_str(&format!(
            "| {} | {} | {} | {:.3} | {:.3} | {:.0}% |\n",
            label,
            r.subset,
            r.count,
            r.median_ratio,
            r.worst_ratio,
            r.within_25 * 100.0
        ));
    };
    for r in &c.by_band {
        let kind = Kind::ALL.into_iter().find(|k| k.name() == r.kind);
        line(s, r, kind.map_or(r.kind, validation_doc::kind_label));
    }
    s.push_str(
        "\nPlain steps by engine:\n\n| kind | engine | rows | median | worst | within ±25% |\n\
         |---|---|---|---|---|---|\n",
    );
    for r in &c.by_engine {
        line(s, r, validation_doc::kind_label(Kind::StepTime));
    }
    s.push_str(
        "\nPlain-step batch series, log-slope d ln t / d ln batch (predicted with the \
         series' publisher left out):\n\n| series | batches | measured | predicted | ratio |\n\
         |---|---|---|---|---|\n",
    );
    for r in &c.slopes {
        s.push_str(&format!(
            "| {} | {}–{} | {:.3} | {:.3} | {:.2} |\n",
            r.series,
            r.from,
            r.to,
            r.measured,
            r.predicted,
            r.predicted / r.measured
        ));
    }
    s.push_str(
        "\nPlain steps by publisher: the offset is the geometric mean of its rows' ratios, \
         what no fit without the publisher can know:\n\n\
         | publisher | rows | offset | within ±25% | within ±25%, offset set aside |\n\
         |---|---|---|---|---|\n",
    );
    for o in &c.offsets {
        s.push_str(&format!(
            "| {} | {} | {:.3} | {:.0}% | {:.0}% |\n",
            o.publisher,
            o.rows,
            o.offset,
            o.within_25 * 100.0,
            o.within_25_own_offset * 100.0
        ));
    }
    s.push_str(&format!(
        "| all | {} | | {:.0}% | {:.0}% |\n",
        c.offsets.iter().map(|o| o.rows).sum::<usize>(),
        c.shares_within_25.0 * 100.0,
        c.shares_within_25.1 * 100.0
    ));
    s.push_str("\nEngine profiles (`--engine NAME`; a term its rows do not fix keeps the pooled value, \"pooled\"):\n\n| engine | calibration rows |");
    for &a in &validation::ENGINE_AXES {
        s.push_str(&format!(" {} |", validation::MEASURED_GRID[a].name));
    }
    s.push_str("\n|---|---|");
    s.push_str(&"---|".repeat(validation::ENGINE_AXES.len()));
    s.push('\n');
    for e in &c.engines {
        s.push_str(&format!("| {} | {} |", e.engine, e.rows));
        for v in &e.terms {
            match v {
                Some(v) => s.push_str(&format!(" {v:.9} |")),
                None => s.push_str(" pooled |"),
            }
        }
        s.push('\n');
    }
}
