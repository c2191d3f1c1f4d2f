//! Demo 5 (opt-in, not in the original script): 模型 vs 实测 — the roofline's predictions
//! under the script's assumptions ("seed"), under the profile fitted on the first
//! published rows ("fitted") and under the profile with every cost term fitted on all
//! calibration rows ("measured"), held against those measurements
//! (`planner::validation`, `docs/validation.md`).

pub mod commands;
pub mod cross;
pub mod trends;
pub mod validation_doc;

use lecture_kit::value::{boolean, fixed, label, number, parts};
use lecture_kit::{Axis, Error, Figure, Out, Panel, Series, Value, always, row};
use planner::validation::{
    self, BatchSeries, CALIBRATIONS, Kind, MEASURED, PROFILES, Prediction, Quantity, Role,
};
use serde::Serialize;
use validation_doc::shown;

/// The batch series demo 5 draws: EAGLE-3 on Llama-3.1-8B, one H100, SGLang, batch 2–64
/// (the EAGLE-3 paper's Table 3).
pub const FIGURE_SERIES: &str = "EAGLE3paper-Table3-SGLang-EAGLE-3";

use lecture_kit::NoInputs;

/// The figures demo 5 prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Demo5 {
    /// One row per published measurement.
    pub rows: Vec<Row>,
    /// Median and worst ratio per profile and subset, all kinds together.
    pub summary: Vec<Summary>,
    /// Median and worst ratio per profile and kind, on the held-out rows.
    pub held_out_by_kind: Vec<KindSummary>,
    /// The series of [`FIGURE_SERIES`]: batch, measured, and each profile's prediction.
    pub series: Vec<SeriesPoint>,
    /// The speedup row where the seed is most optimistic.
    pub seed_most_optimistic: Optimism,
    /// Leave-one-publisher-out cross-validation, and the engine profiles.
    pub cross: cross::Cross,
}

/// One measurement and every profile's prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// M1, M2, …
    pub id: &'static str,
    /// Who published it.
    pub publisher: &'static str,
    /// Where (paper and table, or page).
    pub source: &'static str,
    /// Its address.
    pub url: &'static str,
    /// The setup in words, with the assumptions added.
    pub setup: &'static str,
    /// The figure as published.
    pub published: String,
    /// `"step_s"`, `"round_s"`, `"verify_ratio"` or `"speedup"`.
    pub quantity: &'static str,
    /// The published figure in the model's units.
    pub measured: f64,
    /// Predicted under the seed's assumptions.
    pub seed: f64,
    /// Predicted under the fitted profile.
    pub fitted: f64,
    /// Predicted under the measured profile.
    pub measured_profile: f64,
    /// `true` if the row was used to fit the profiles, `false` if held out.
    pub calibration: bool,
    /// The command that asks the lecture the same question (`--calibration measured`).
    pub command: String,
}

/// One profile on one subset.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// "seed", "fitted" or "measured".
    pub profile: &'static str,
    /// "calibration" or "held_out".
    pub subset: &'static str,
    /// Rows.
    pub count: usize,
    /// Median prediction / measurement.
    pub median_ratio: f64,
    /// The ratio farthest from 1.
    pub worst_ratio: f64,
}

/// 模型 vs 实测: the roofline against published measurements.
pub fn run(out: &mut Out, _: &NoInputs) -> Result<(), Error> {
    let d = figures()?;
    print(out, &d)?;
    out.data(d);
    Ok(())
}

/// One profile on the held-out rows of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct KindSummary {
    /// "seed", "fitted" or "measured".
    pub profile: &'static str,
    /// "step_time", "verify_or_round" or "speedup".
    pub kind: &'static str,
    /// Rows.
    pub count: usize,
    /// Median prediction / measurement.
    pub median_ratio: f64,
    /// The ratio farthest from 1.
    pub worst_ratio: f64,
}

/// One batch of the drawn series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SeriesPoint {
    /// Sequences decoded together.
    pub batch: u64,
    /// Measured speedup, ×.
    pub measured: f64,
    /// Each profile's speedup (seed, fitted, measured), ×.
    pub predicted: [f64; PROFILES],
}

/// Where the seed's `max(compute, memory)` is most optimistic on a speedup.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Optimism {
    /// The row.
    pub id: &'static str,
    /// Its batch.
    pub batch: u64,
    /// Measured speedup, ×.
    pub measured: f64,
    /// The seed's, ×.
    pub seed: f64,
}

/// Computes demo 5: every measurement of `planner::validation` under each profile.
pub fn figures() -> Result<Demo5, Error> {
    let predictions = validation::predictions()?;
    let rows = predictions.iter().map(row).collect();
    let mut summary = Vec::new();
    for p in validation::summary(&predictions)? {
        for (subset, r) in [("calibration", p.calibration), ("held_out", p.held_out)] {
            summary.push(Summary {
                profile: p.profile,
                subset,
                count: r.count,
                median_ratio: r.median,
                worst_ratio: r.worst,
            });
        }
    }
    let held_out_by_kind = validation::summary_by_kind(&predictions, Role::HeldOut)?
        .into_iter()
        .map(|k| KindSummary {
            profile: k.profile,
            kind: k.kind.name(),
            count: k.ratios.count,
            median_ratio: k.ratios.median,
            worst_ratio: k.ratios.worst,
        })
        .collect();
    let series = validation::batch_series(&predictions)
        .into_iter()
        .find(|s| s.name == FIGURE_SERIES)
        .map(|s: BatchSeries| {
            s.rows
                .iter()
                .map(|p| SeriesPoint {
                    batch: p.measurement.batch,
                    measured: p.measured,
                    predicted: p.predicted,
                })
                .collect()
        })
        .ok_or_else(|| {
            Error::from(decode_lab::Error::Argument(format!(
                "no batch series named {FIGURE_SERIES}"
            )))
        })?;
    let seed_most_optimistic = predictions
        .iter()
        .filter(|p| p.measurement.quantity.kind() == Kind::Speedup)
        .max_by(|a, b| a.ratio(0).total_cmp(&b.ratio(0)))
        .map(|p| Optimism {
            id: &p.measurement.id,
            batch: p.measurement.batch,
            measured: p.measured,
            seed: p.predicted[0],
        })
        .ok_or_else(|| Error::from(decode_lab::Error::Argument("no speedup row".into())))?;
    Ok(Demo5 {
        rows,
        summary,
        held_out_by_kind,
        series,
        seed_most_optimistic,
        cross: cross::figures()?,
    })
}

fn row(p: &Prediction) -> Row {
    let m = p.measurement;
    Row {
        id: &m.id,
        publisher: &m.publisher,
        source: &m.source,
        url: &m.url,
        setup: &m.setup,
        published: m.published.as_printed(),
        quantity: match m.quantity {
            Quantity::StepTime => "step_s",
            Quantity::RoundTime { .. } => "round_s",
            Quantity::VerifyRatio { .. } => "verify_ratio",
            Quantity::Speedup { .. } => "speedup",
        },
        measured: p.measured,
        seed: p.predicted[0],
        fitted: p.predicted[1],
        measured_profile: p.predicted[2],
        calibration: m.role == Role::Calibration,
        command: validation_doc::command(m, &MEASURED),
    }
}

/// A kind as demo 5 names it.
fn kind_label(k: Kind) -> &'static str {
    match k {
        Kind::StepTime => "decode 一步",
        Kind::VerifyOrRound => "验证 / 一轮的开销",
        Kind::Speedup => "投机加速比",
    }
}

fn quantity_of(r: &Row) -> Quantity {
    // Only the unit matters for printing.
    match r.quantity {
        "step_s" => Quantity::StepTime,
        "round_s" => Quantity::RoundTime { depth: 1, nodes: 1 },
        "verify_ratio" => Quantity::VerifyRatio { nodes: 1 },
        _ => Quantity::Speedup {
            tau: 1.0,
            depth: 1,
            nodes: 1,
        },
    }
}

/// A prediction `x` and its ratio to the row's measurement, in one cell.
fn predicted(r: &Row, x: f64) -> Value {
    let ratio = x / r.measured;
    parts(
        "{}（{}）",
        [
            number(shown(&quantity_of(r), x), x)
                .unit(UNITS)
                .named("预测"),
            fixed(ratio, 2).named("预测/实测"),
        ],
    )
}

/// The unit of a column mixing times, ratios and speedups.
const UNITS: &str = "s, ratio or ×";

/// Prints demo 5: the header, the table, the held-out summary per kind, the
/// cross-validation, the figure, the sources with commands, the observations.
pub fn print(out: &mut Out, d: &Demo5) -> Result<(), Error> {
    out.header("演示 5（模型 vs 实测）：屋顶线模型的预测与公开的实测数字");
    let rows = d.rows.iter().map(|r| {
        let what = match r.quantity {
            "step_s" => "decode 一步",
            "round_s" => "投机一轮",
            "verify_ratio" => "验证 / 一步",
            _ => "投机加速比",
        };
        let role = match r.calibration {
            true => "拟合用",
            false => "检验用",
        };
        row![
            label(r.id),
            label(what),
            number(shown(&quantity_of(r), r.measured), r.measured).unit(UNITS),
            predicted(r, r.seed),
            predicted(r, r.fitted),
            predicted(r, r.measured_profile),
            boolean(role, r.calibration),
        ]
    });
    let headers = [
        "编号",
        "实测的是",
        "实测",
        "种子假设",
        "校准 fitted",
        "校准 measured",
        "用途",
    ];
    out.table(headers, rows)
        .id("demo5_validation")
        .caption("演示 5：预测 / 实测（种子假设、fitted 校准、measured 校准）")
        .left(["编号", "实测的是", "用途"]);
    out.print(
        "（括号里是\"预测 / 实测\"：时间小于 1、加速比大于 1 表示模型乐观。\"拟合用\"的行决定了校准的常数，\"检验用\"的行只用来检验。）",
    );
    kind_table(out, d);
    cross::print(out, &d.cross);
    out.figure(figure(d));
    out.print("\n来源与设置（每一行都能用命令行重算）：");
    for r in &d.rows {
        out.print(format!(
            "  {}：{}，{}，{}（{}）。实测 {}。\n      {}",
            r.id, r.publisher, r.source, r.url, r.setup, r.published, r.command
        ));
    }
    out.observations(observations(d).into_iter().map(always));
    Ok(())
}

/// The held-out rows per kind: median and worst ratio of each profile.
fn kind_table(out: &mut Out, d: &Demo5) {
    let mut headers = vec!["实测的是", "检验用行数"];
    headers.extend(CALIBRATIONS.iter().map(|c| c.name));
    let mut rows = Vec::new();
    for kind in Kind::ALL {
        let of: Vec<&KindSummary> = d
            .held_out_by_kind
            .iter()
            .filter(|k| k.kind == kind.name())
            .collect();
        let Some(first) = of.first() else { continue };
        let mut cells = row![label(kind_label(kind)), first.count];
        for k in of {
            cells.push(parts(
                "{} / {}",
                [
                    fixed(k.median_ratio, 2).named("中位数"),
                    fixed(k.worst_ratio, 2).named("最差"),
                ],
            ));
        }
        rows.push(cells);
    }
    out.table(headers, rows)
        .id("demo5_held_out_by_kind")
        .caption("演示 5：检验用的行，按种类的预测 / 实测（中位数、最差）")
        .left(["实测的是"]);
}

/// Figure `validation.svg`: the EAGLE-3 paper's Table 3 speedups against batch, measured
/// points and each profile's line.
pub fn figure(d: &Demo5) -> Figure {
    let mut panel = Panel::new(
        "EAGLE-3 头，Llama-3.1-8B，一块 H100（SGLang，EAGLE-3 论文表 3）",
        Axis::log("批大小"),
        Axis::linear("加速比"),
    );
    panel.series.push(Series::dots(
        "实测",
        d.series
            .iter()
            .map(|p| (p.batch as f64, p.measured))
            .collect(),
    ));
    for (i, c) in CALIBRATIONS.iter().enumerate() {
        panel.series.push(Series::line(
            c.name,
            d.series
                .iter()
                .map(|p| (p.batch as f64, p.predicted[i]))
                .collect(),
        ));
    }
    Figure::new("演示 5：加速比随批大小的变化，实测与三种假设", vec![panel]).id("validation")
}

fn observations(d: &Demo5) -> Vec<String> {
    let find = |profile: &str, kind: Kind| {
        d.held_out_by_kind
            .iter()
            .find(|k| k.profile == profile && k.kind == kind.name())
            .copied()
    };
    let line = |profile: &str| {
        Kind::ALL
            .iter()
            .filter_map(|&k| {
                find(profile, k).map(|s| {
                    format!(
                        "{} {} 行中位数 {:.2}、最差 {:.2}",
                        kind_label(k),
                        s.count,
                        s.median_ratio,
                        s.worst_ratio
                    )
                })
            })
            .collect::<Vec<_>>()
            .join("；")
    };
    let o = d.seed_most_optimistic;
    let first = d.series.first();
    let last = d.series.last();
    let trend = match (first, last) {
        (Some(a), Some(b)) => format!(
            "批 {} → {}：实测从 {:.2}× 降到 {:.2}×（×{:.2}），种子假设从 {:.2}× 变成 {:.2}×（×{:.2}），measured 从 {:.2}× 变成 {:.2}×（×{:.2}）。",
            a.batch,
            b.batch,
            a.measured,
            b.measured,
            b.measured / a.measured,
            a.predicted[0],
            b.predicted[0],
            b.predicted[0] / a.predicted[0],
            a.predicted[2],
            b.predicted[2],
            b.predicted[2] / a.predicted[2],
        ),
        _ => String::new(),
    };
    let mut lines = vec![
        format!(
            "种子假设（max(计算, 访存)、1 ms / 0.3 ms 的开销、验证只按屋顶线算）在检验用的行上：{}。",
            line("seed")
        ),
        format!("fitted 校准（前 13 行拟合）：{}。", line("fitted")),
        format!(
            "measured 校准（每一项成本都在拟合用的行上拟合）：{}。常数只看过拟合用的行，要看的是检验用的行。",
            line("measured")
        ),
        format!(
            "种子假设的 max 在 {}（批 {}）最乐观：预测 {:.2}×，实测 {:.2}×，高出 {:.0}%——验证的每个 token 在引擎里都要付它的计算时间，屋顶线的 max 把它藏在了读权重的时间下面。",
            o.id,
            o.batch,
            o.seed,
            o.measured,
            (o.seed / o.measured - 1.0) * 100.0
        ),
        format!("图里那一列（EAGLE-3 论文表 3）{trend}"),
    ];
    lines.extend(cross::observations(&d.cross));
    lines.push(
        "所以屋顶线给的是乐观的下界：它说清了\"为什么\"（读权重、临界批大小、验证何时不再免费），\
         但具体的毫秒数还要加上每步和每轮的固定开销、通信延迟和每个验证 token 的计算；换自己的数字用 \
         --calibration measured、--engine NAME 或 --overhead-target、--eff-bandwidth 试。"
            .into(),
    );
    lines
}
