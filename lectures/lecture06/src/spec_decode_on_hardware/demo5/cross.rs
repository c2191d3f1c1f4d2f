//! Demo 5's second half: the planner judged leave-one-publisher-out
//! (`planner::validation::leave_one_publisher_out`) — by kind and batch band, by
//! engine, each plain-step batch series' log-slope — and the engine profiles with the
//! terms each engine's rows fix.

use lecture_kit::value::{fixed, label, number, percent};
use lecture_kit::{Error, Out, Value, row};
use planner::validation::{
    self, BatchBand, CrossPrediction, CrossSummary, ENGINE_AXES, ENGINES, Kind, MEASURED_GRID,
};
use serde::Serialize;

use super::super::words::constant;
use super::trends::{self, IntervalRow, TrendRow};

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

/// A constant of the pooled fit and the publishers whose rows fix it
/// (`planner::validation::term_support`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SupportRow {
    /// The constant.
    pub term: &'static str,
    /// The publishers with rows whose predictions it moves by more than the factor
    /// `planner::validation::FIXES_BY` across its grid.
    pub publishers: Vec<&'static str>,
    /// Those rows.
    pub rows: usize,
    /// Whether fewer than three publishers fix it (`TermSupport::thin`).
    pub thin: bool,
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
    /// What a student relies on: ratios, orderings, trends, best γ.
    pub trends: TrendRow,
    /// The 80% intervals' coverage on held-out publishers, per batch band.
    pub intervals: Vec<IntervalRow>,
    /// Engine profiles.
    pub engines: Vec<EngineRow>,
    /// Each constant of the pooled fit, with the publishers whose rows fix it.
    pub support: Vec<SupportRow>,
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
    let support = validation::term_support()?
        .into_iter()
        .map(|t| SupportRow {
            thin: t.thin(),
            term: t.term,
            publishers: t.publishers.iter().map(|&(p, _)| p).collect(),
            rows: t.publishers.iter().map(|&(_, n)| n).sum(),
        })
        .collect();
    let offsets = validation::publisher_offsets(&rows, |m| m.quantity.kind() == Kind::StepTime)?;
    let trends = trends::figures(&rows);
    let intervals = trends::intervals(&rows)?;
    Ok(Cross {
        publishers: validation::publishers(ms).len(),
        rows: ms.len(),
        by_band,
        by_engine,
        slopes,
        trends,
        intervals,
        engines,
        support,
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

/// A subset's row of a ratio table: kind, subset, rows, median, worst, share within ±25%.
fn ratio_row(r: &CrossRow) -> Vec<Value> {
    row![
        label(kind_label(r.kind)),
        label(r.subset),
        r.count,
        fixed(r.median_ratio, 2),
        fixed(r.worst_ratio, 2),
        percent(r.within_25),
    ]
}

/// The headers of a ratio table whose second column is `second`.
fn ratio_headers(second: &'static str) -> [&'static str; 6] {
    ["实测的是", second, "行数", "中位数", "最差", "±25% 以内"]
}

/// A term's value as the engine table prints it.
fn term(axis: usize, v: Option<f64>) -> Value {
    let Some(v) = v else {
        return label("（沿用合并拟合）");
    };
    number(constant(axis, v), v)
}

/// Prints the cross-validation: by band, by engine, slopes, publishers, engine profiles.
pub fn print(out: &mut Out, c: &Cross) {
    out.print(format!(
        "\n留一个发布者（{} 家、{} 行）：每次拿掉一家的全部行，用其余各家拟合（合并的 measured 常数，\
         再按引擎重拟合它的固定开销、带宽效率、all-reduce 延迟和每序列每层的开销，\
         其余引擎的行合起来只算 {} 家，把它拉向合并的值），\
         再预测拿掉的那一家。",
        c.publishers,
        c.rows,
        validation::ENGINE_PRIOR_PUBLISHERS
    ));
    let headers = ratio_headers("批大小");
    out.table(headers, c.by_band.iter().map(ratio_row))
        .id("demo5_cross_by_band")
        .caption("演示 5：留一个发布者，按种类和批大小的预测 / 实测")
        .left(headers[..2].iter().copied());
    let headers = ratio_headers("引擎");
    out.table(headers, c.by_engine.iter().map(ratio_row))
        .id("demo5_cross_by_engine")
        .caption("演示 5：留一个发布者，decode 一步按引擎的预测 / 实测")
        .left(headers[..2].iter().copied());
    let rows = c.slopes.iter().map(|s| {
        row![
            label(s.series),
            label(format!("{}–{}", s.from, s.to)),
            fixed(s.measured, 3),
            fixed(s.predicted, 3),
            fixed(s.predicted / s.measured, 2),
        ]
    });
    let headers = ["序列", "批大小", "实测斜率", "预测斜率", "预测 / 实测"];
    out.table(headers, rows)
        .id("demo5_cross_slopes")
        .caption("演示 5：decode 一步随批大小的斜率 d ln t / d ln 批（留一个发布者）")
        .left(["序列", "批大小"]);
    trends::print(out, &c.trends);
    trends::print_intervals(out, &c.intervals);
    let rows = c.offsets.iter().map(|o| {
        row![
            label(o.publisher),
            o.rows,
            fixed(o.offset, 2),
            percent(o.within_25),
            percent(o.within_25_own_offset),
        ]
    });
    let headers = [
        "发布者",
        "行数",
        "整体偏差",
        "±25% 以内",
        "去掉整体偏差后 ±25% 以内",
    ];
    out.table(headers, rows)
        .id("demo5_cross_publishers")
        .caption("演示 5：decode 一步按发布者（留一个发布者）：整体偏差是预测 / 实测的几何平均")
        .left(["发布者"]);
    let terms: Vec<&str> = ENGINE_AXES.iter().map(|&a| MEASURED_GRID[a].name).collect();
    let mut headers = vec!["引擎", "拟合用行数"];
    headers.extend(&terms);
    let rows = c.engines.iter().map(|e| {
        let mut cells = row![label(e.engine), e.rows];
        cells.extend(ENGINE_AXES.iter().zip(&e.terms).map(|(&a, &v)| term(a, v)));
        cells
    });
    out.table(headers, rows)
        .id("demo5_engine_profiles")
        .caption("演示 5：各引擎的常数（--engine NAME；没有行能定下的项沿用合并拟合）")
        .left(std::iter::once("引擎").chain(terms.iter().copied()));
    let rows = c.support.iter().map(|t| {
        let few = if t.thin {
            t.publishers.join("、")
        } else {
            String::new()
        };
        row![label(t.term), t.publishers.len(), t.rows, label(few)]
    });
    out.table(["常数", "发布者", "行数", "只有这一两家"], rows)
        .id("demo5_term_support")
        .caption(format!(
            "演示 5：合并拟合的每个常数由哪几家的行定下（预测在它网格两端之间变动超过 {:.0}% 的行）",
            (validation::FIXES_BY - 1.0) * 100.0
        ))
        .left(["常数", "只有这一两家"]);
}

/// The constants that one or two publishers' rows alone fix, in one sentence, or `None`
/// when every constant rests on three or more.
fn thin_terms(c: &Cross) -> Option<String> {
    let thin: Vec<String> = c
        .support
        .iter()
        .filter(|t| t.thin)
        .map(|t| format!("{}（{}）", t.term, t.publishers.join("、")))
        .collect();
    (!thin.is_empty()).then(|| {
        format!(
            "只有一两家发布者的行定得下的常数：{}。留一个发布者时拿掉其中一家，这一项就只由另一家的行定，或者没有行定它（沿用全部标定行的拟合值，拿掉的那一家也在内）：它们的预测最没底。",
            thin.join("；")
        )
    })
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
    out.push(trends::observation(&c.trends));
    out.push(trends::intervals_observation(&c.intervals));
    out.extend(thin_terms(c));
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
