//! Demo 5 (opt-in, not in the original script): 模型 vs 实测 — the roofline's predictions
//! under the script's assumptions ("seed") and under a profile fitted on a documented
//! subset of published measurements ("fitted"), held against those measurements
//! (`decode_lab::validation`, `docs/validation.md`).

use super::validation_doc;
use decode_lab::validation::{self, FITTED, Prediction, Quantity, Role};
use lecture_kit::{Block, Cell, Column, Error, Table};
use serde::Serialize;

/// The figures demo 5 prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Demo5 {
    /// One row per published measurement.
    pub rows: Vec<Row>,
    /// Median and worst ratio per profile and subset.
    pub summary: Vec<Summary>,
}

/// One measurement and both predictions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// M1, M2, …
    pub id: &'static str,
    /// Who published it, where (paper and table, or page).
    pub source: &'static str,
    /// Its address.
    pub url: &'static str,
    /// The setup in words, with the assumptions added.
    pub setup: &'static str,
    /// The figure as published.
    pub published: String,
    /// `"step_s"` (a decode step, seconds) or `"speedup"` (×).
    pub quantity: &'static str,
    /// The published figure in the model's units.
    pub measured: f64,
    /// Predicted under the seed's assumptions.
    pub seed: f64,
    /// Predicted under the fitted profile.
    pub fitted: f64,
    /// `true` if the row was used to fit the profile, `false` if held out.
    pub calibration: bool,
    /// The command that asks the lecture the same question.
    pub command: String,
}

/// One profile on one subset.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// "seed" or "fitted".
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

/// Computes demo 5: every measurement of `decode_lab::validation` with both predictions.
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
    Ok(Demo5 { rows, summary })
}

fn row(p: &Prediction) -> Row {
    let m = p.measurement;
    Row {
        id: &m.id,
        source: &m.source,
        url: &m.url,
        setup: &m.setup,
        published: m.published.as_printed(),
        quantity: match m.quantity {
            Quantity::StepTime => "step_s",
            Quantity::Speedup(_) => "speedup",
        },
        measured: p.measured,
        seed: p.seed,
        fitted: p.fitted,
        calibration: m.role == Role::Calibration,
        command: validation_doc::command(m, &FITTED),
    }
}

/// A figure in its unit: "6.32 ms" for a step, "2.10×" for a speedup.
fn shown(r: &Row, x: f64) -> String {
    if r.quantity == "step_s" {
        format!("{:.2} ms", x * 1e3)
    } else {
        format!("{x:.2}×")
    }
}

/// Demo 5 as blocks: header, the table, the sources with commands, the summary.
pub fn blocks(d: &Demo5) -> Vec<Block> {
    let mut blocks = vec![Block::Header(
        "演示 5（模型 vs 实测）：屋顶线模型的预测与公开的实测数字".into(),
    )];
    let unit = |r: &Row| if r.quantity == "step_s" { "s" } else { "×" };
    let mut table = Table::new(
        "demo5_validation",
        "演示 5：预测 / 实测（种子假设与拟合的校准）",
        vec![
            Column::text("编号"),
            Column::text("实测的是"),
            Column::with_fields("实测", &[("实测", "s or ×")]),
            Column::with_fields("种子假设", &[("预测", "s or ×"), ("预测/实测", "")]),
            Column::with_fields("校准 fitted", &[("预测", "s or ×"), ("预测/实测", "")]),
            Column::text("用途"),
        ],
    );
    for r in &d.rows {
        let what = if unit(r) == "s" {
            "decode 一步"
        } else {
            "投机加速比"
        };
        table = table.row(vec![
            Cell::text(r.id),
            Cell::text(what),
            Cell::number(shown(r, r.measured), r.measured),
            Cell::values(
                format!("{}（{:.2}）", shown(r, r.seed), r.seed / r.measured),
                vec![
                    lecture_kit::Datum::Number(r.seed),
                    lecture_kit::Datum::Number(r.seed / r.measured),
                ],
            ),
            Cell::values(
                format!("{}（{:.2}）", shown(r, r.fitted), r.fitted / r.measured),
                vec![
                    lecture_kit::Datum::Number(r.fitted),
                    lecture_kit::Datum::Number(r.fitted / r.measured),
                ],
            ),
            Cell::boolean(
                if r.calibration {
                    "拟合用"
                } else {
                    "检验用"
                },
                r.calibration,
            ),
        ]);
    }
    blocks.push(Block::Table(table));
    blocks.push(Block::Text(
        "（括号里是\"预测 / 实测\"：小于 1 表示模型比实测快。\"拟合用\"的几行决定了 fitted 校准的常数，其余几行只用来检验。）"
            .into(),
    ));
    blocks.push(Block::Text(
        "\n来源与设置（每一行都能用命令行重算）：".into(),
    ));
    for r in &d.rows {
        blocks.push(Block::Text(format!(
            "  {}：{}，{}（{}）。实测 {}。\n      {}",
            r.id, r.source, r.url, r.setup, r.published, r.command
        )));
    }
    let find = |profile: &str, subset: &str| {
        d.summary
            .iter()
            .find(|s| s.profile == profile && s.subset == subset)
            .copied()
    };
    let line = |profile: &str, subset: &str| {
        find(profile, subset).map_or(String::new(), |s| {
            format!(
                "{} 行中位数 {:.2}、最差 {:.2}",
                s.count, s.median_ratio, s.worst_ratio
            )
        })
    };
    // Whether the fitted profile is closer to 1 than the seed on the held-out rows.
    let closer =
        |f: fn(&Summary) -> f64| match (find("fitted", "held_out"), find("seed", "held_out")) {
            (Some(a), Some(b)) => f(&a).ln().abs() + 0.005 < f(&b).ln().abs(),
            _ => false,
        };
    let verdict = match (closer(|s| s.median_ratio), closer(|s| s.worst_ratio)) {
        (true, true) => "中位数和最差的一行都更接近实测",
        (true, false) => "中位数更接近实测，最差的一行没有",
        (false, true) => "中位数没有变好，只有最差的一行更接近实测",
        (false, false) => "中位数和最差的一行都没有变好",
    };
    blocks.push(Block::Observations(vec![
        format!(
            "种子假设（60% / 80% 的效率、1 ms / 0.3 ms 的开销、验证只按屋顶线算）：拟合用的 {}；检验用的 {}。",
            line("seed", "calibration"),
            line("seed", "held_out")
        ),
        format!(
            "fitted 校准：拟合用的 {}；检验用的 {}。常数是在拟合用的几行上拟合出来的，在那几行上贴得近并不说明什么；\
             要看检验用的几行：{verdict}。",
            line("fitted", "calibration"),
            line("fitted", "held_out")
        ),
        "所以屋顶线给的是乐观的下界：它说清了\"为什么\"（读权重、临界批大小、验证何时不再免费），\
         但具体的毫秒数还要加上每步的固定开销、通信延迟和引擎的额外工作；换自己的数字用 --overhead-target、\
         --eff-bandwidth、--calibration 试。"
            .into(),
    ]));
    blocks
}
