//! Demo 5's judgement on what a student relies on (`planner::validation::trends`), with
//! each row's publisher left out: the ratio of two rows of one series, the order of two
//! rows of one publisher, the direction of a speedup along the batch, the best γ of a γ
//! sweep; and how sure it is: the coverage of its 80% intervals on held-out publishers
//! (`planner::validation::intervals`). In demo 5's tables and observations, and in
//! `docs/validation.md`.

use lecture_kit::value::{label, missing, percent};
use lecture_kit::{Error, Out, row};
use planner::validation::{self, COVERAGE, CrossPrediction};
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

/// One batch band's 80% intervals on held-out publishers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IntervalRow {
    /// The band (`≤ 4`, `5–31`, `≥ 32`).
    pub band: &'static str,
    /// Rows whose measurement lies inside their interval.
    pub covered: usize,
    /// Rows with an interval.
    pub rows: usize,
}

/// The coverage of the planner's intervals on `rows`, per batch band, each row's interval
/// made without its publisher.
///
/// Errors: as `planner::validation::coverage`.
pub fn intervals(rows: &[CrossPrediction<'_>]) -> Result<Vec<IntervalRow>, Error> {
    let bands = validation::coverage(rows)?
        .into_iter()
        .map(|c| IntervalRow {
            band: c.band.label(),
            covered: c.covered,
            rows: c.rows,
        });
    Ok(bands.collect())
}

/// Demo 5's table of the intervals' coverage.
pub fn print_intervals(out: &mut Out, rows: &[IntervalRow]) {
    let body = rows.iter().map(|r| {
        let s = share((r.covered, r.rows)).map_or(missing("—"), percent);
        row![label(r.band), r.covered, r.rows, s]
    });
    let headers = ["批大小", "落在区间里", "行数", "覆盖"];
    out.table(headers, body)
        .id("demo5_cross_intervals")
        .caption(format!(
            "演示 5：{:.0}% 区间（同种、同批段、同卡族、同权重格式的别家行的残差）在没见过的发布者上覆盖了多少",
            COVERAGE * 100.0
        ))
        .left(["批大小"]);
}

/// The judgement on `rows` (predicted leave-one-publisher-out).
pub fn figures(rows: &[CrossPrediction<'_>]) -> TrendRow {
    let t = validation::trends(rows);
    TrendRow {
        ratios: t.ratios_right(),
        orderings: t.orderings,
        speedup_trends: t.speedup_trends_right(),
        gamma_sweeps: t.gamma_sweeps_right(),
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

/// The intervals' coverage in one sentence, for demo 5's observations: the bands whose
/// coverage falls short of the stated level or passes it by more than five points named.
pub fn intervals_observation(rows: &[IntervalRow]) -> String {
    let covered = |r: &IntervalRow| share((r.covered, r.rows)).unwrap_or(0.0);
    let bands = rows
        .iter()
        .map(|r| format!("批 {} {:.0}%", r.band, 100.0 * covered(r)));
    let named = |outside: &dyn Fn(f64) -> bool| {
        let off = rows.iter().filter(|r| outside(covered(r)));
        off.map(|r| format!("批 {}", r.band))
            .collect::<Vec<_>>()
            .join("、")
    };
    let short = named(&|c| c < COVERAGE - 0.05);
    let wide = named(&|c| c > COVERAGE + 0.05);
    let mut verdicts = Vec::new();
    if !short.is_empty() {
        verdicts.push(format!(
            "{short} 的区间还偏窄，别家的残差低估了那里没见过的发布者"
        ));
    }
    if !wide.is_empty() {
        verdicts.push(format!("{wide} 的区间偏宽，比说的更保守"));
    }
    let verdict = match verdicts.is_empty() {
        true => "每一段都接近说的覆盖率".to_string(),
        false => verdicts.join("；"),
    };
    format!(
        "预测有多准，也要说出来：{:.0}% 区间（用别家同类行的残差做，宽度按别家自己的行校准）在没见过的发布者上覆盖了 {}；{verdict}。",
        COVERAGE * 100.0,
        bands.collect::<Vec<_>>().join("、")
    )
}

/// The intervals' coverage as `docs/validation.md`'s table.
pub fn intervals_markdown(rows: &[IntervalRow]) -> String {
    let mut s = format!(
        "\nHow sure: {:.0}% intervals from the residuals of other publishers' rows like each \
         one (kind, batch band, card family, weight format; each publisher weighing the same; \
         the level widened until it covers that share of the other publishers' own rows, \
         the likeness coarsened where no level does), \
         judged on the row's publisher (`planner::validation::intervals`):\n\n\
         | batch | covered | rows | coverage |\n|---|---|---|---|\n",
        COVERAGE * 100.0
    );
    for r in rows {
        let shown =
            share((r.covered, r.rows)).map_or("—".to_string(), |x| format!("{:.1}%", 100.0 * x));
        s.push_str(&format!(
            "| {} | {} | {} | {shown} |\n",
            r.band, r.covered, r.rows
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bands(covered: [usize; 3]) -> Vec<IntervalRow> {
        let names = ["≤ 4", "5–31", "≥ 32"];
        let rows = names.into_iter().zip(covered);
        rows.map(|(band, covered)| IntervalRow {
            band,
            covered,
            rows: 100,
        })
        .collect()
    }

    #[test]
    fn the_verdict_names_the_bands_more_than_five_points_off_the_stated_coverage() {
        let close = intervals_observation(&bands([75, 80, 85]));
        assert!(close.ends_with("批 ≤ 4 75%、批 5–31 80%、批 ≥ 32 85%；每一段都接近说的覆盖率。"));
        let off = intervals_observation(&bands([74, 86, 71]));
        assert!(
            off.ends_with("批 ≤ 4、批 ≥ 32 的区间还偏窄，别家的残差低估了那里没见过的发布者；批 5–31 的区间偏宽，比说的更保守。"),
            "{off}"
        );
    }
}
