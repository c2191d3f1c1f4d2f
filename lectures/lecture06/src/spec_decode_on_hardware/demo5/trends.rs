//! Demo 5's judgement on what a student relies on (`planner::validation::trends`), with
//! each row's publisher left out: the ratio of two rows of one series, the order of two
//! rows of one publisher, the direction of a speedup along the batch, the best γ of a γ
//! sweep. In demo 5's tables and observations, and in `docs/validation.md`.

use lecture_kit::value::{label, missing, percent};
use lecture_kit::{Out, row};
use planner::validation::{self, CrossPrediction};
use serde::Serialize;

/// The planner judged on trends (`planner::validation::trends`), leave-one-publisher-out.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrendRow {
    /// Pairs of rows within a series: how many predicted within ±25% of the measured
    /// ratio, of how many.
    pub ratios: (usize, usize),
    /// Pairs of one publisher's rows that differ by more than 5%: how many ordered right,
    /// of how many.
    pub orderings: (usize, usize),
    /// Speedup series along the batch: how many go the measured way, of how many.
    pub speedup_trends: (usize, usize),
    /// γ sweeps: how many predict the best γ within one, of how many.
    pub gamma_sweeps: (usize, usize),
}

/// The judgement on `rows` (predicted leave-one-publisher-out).
pub fn figures(rows: &[CrossPrediction<'_>]) -> TrendRow {
    let t = validation::trends(rows);
    let count = |right: usize, all: usize| (right, all);
    TrendRow {
        ratios: count(
            t.ratios.iter().filter(|r| r.within()).count(),
            t.ratios.len(),
        ),
        orderings: t.orderings,
        speedup_trends: count(
            t.speedup_trends.iter().filter(|s| s.right()).count(),
            t.speedup_trends.len(),
        ),
        gamma_sweeps: count(
            t.gamma_sweeps.iter().filter(|s| s.right()).count(),
            t.gamma_sweeps.len(),
        ),
    }
}

/// `right / all` as a percentage; `None` when there is nothing to judge.
fn share((right, all): (usize, usize)) -> Option<f64> {
    (all > 0).then(|| right as f64 / all as f64)
}

/// Demo 5's table of the judgement.
pub fn print(out: &mut Out, t: &TrendRow) {
    let judged = [
        (
            "同一系列里两行之比（批 64 比批 1、FP8 比 bf16……）在 ±25% 以内",
            t.ratios,
        ),
        ("同一发布者的两行（相差 5% 以上）谁大谁小排对", t.orderings),
        (
            "加速比随批大小变大还是变小（5% 以内算持平）方向对",
            t.speedup_trends,
        ),
        ("扫 γ 的序列里最快的 γ 差不超过 1", t.gamma_sweeps),
    ];
    let rows = judged.iter().map(|&(what, counts)| {
        let s = share(counts).map_or(missing("—"), percent);
        row![label(what), counts.0, counts.1, s]
    });
    let headers = ["学生依赖的", "对", "共", "比例"];
    out.table(headers, rows)
        .id("demo5_cross_trends")
        .caption("演示 5：留一个发布者，看相对的量：比值、排序、趋势、最佳 γ")
        .left(["学生依赖的"]);
}

/// The judgement in one sentence, for demo 5's observations.
pub fn observation(t: &TrendRow) -> String {
    let pct = |counts| share(counts).map_or("无".to_string(), |s| format!("{:.0}%", 100.0 * s));
    format!(
        "学生真正依赖的是相对的量，留一个发布者时：同一系列两行之比 {} 在 ±25% 以内，同一发布者两行谁大谁小 {} 排对，\
         加速比随批大小的方向 {}/{} 对，扫 γ 时最快的 γ {}/{} 差不超过 1。",
        pct(t.ratios),
        pct(t.orderings),
        t.speedup_trends.0,
        t.speedup_trends.1,
        t.gamma_sweeps.0,
        t.gamma_sweeps.1
    )
}

/// The judgement as `docs/validation.md`'s table.
pub fn markdown(t: &TrendRow) -> String {
    let mut s = String::from(
        "\nWhat a student relies on, with each row's publisher left out \
         (`planner::validation::trends`):\n\n| judged | right | of | share |\n|---|---|---|---|\n",
    );
    for (what, counts) in [
        ("ratio of two rows of one series within ±25%", t.ratios),
        (
            "order of two rows of one publisher (apart by more than 5%)",
            t.orderings,
        ),
        (
            "direction of a speedup along the batch (flat within 5%)",
            t.speedup_trends,
        ),
        ("best γ of a γ sweep within one", t.gamma_sweeps),
    ] {
        let shown = share(counts).map_or("—".to_string(), |s| format!("{:.1}%", 100.0 * s));
        s.push_str(&format!(
            "| {what} | {} | {} | {shown} |\n",
            counts.0, counts.1
        ));
    }
    s
}
