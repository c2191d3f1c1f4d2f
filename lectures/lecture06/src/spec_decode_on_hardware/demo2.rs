//! Demo 2: batch size × context length — the best γ and speedup over the grid, a worked
//! example of when verification stops being free; figure `batch.svg`.

use decode_lab::pass_deployment;
use lecture_kit::value::{int, join, missing, py, ratio, time};
use lecture_kit::{Axis, Error, Figure, Out, Panel, Region, Series, always, seed, what_if};
use lecture_kit::{cut_at, log_sweep, try_map};
use llm_math::critical_tokens;
use serde_json::json;

use super::round::{Round, Verification, break_even, slow_down};
use super::setup::Input::{self, Alpha, Assumptions, DraftCosts, Gamma, Grid, Hw, Target};
use super::setup::Setup;
use super::text::{DEMO2_BATCH, DEMO2_COMPETE, DEMO2_CONTEXT};

pub use super::setup::{DEMO2_BATCHES, DEMO2_CTXS};
/// The setup inputs demo 2 reads.
pub const READS: &[Input] = &[
    Hw,
    Target,
    Input::Draft,
    Alpha,
    Assumptions,
    DraftCosts,
    Gamma,
    Grid,
];
/// The worked example: batch, context, tokens verified per sequence.
const EXAMPLE: (u64, u64, u64) = (512, 512, 5);

/// 演示 2: the best γ and speedup over batch size × context; when verification stops being free.
///
/// Its JSON `data` (times in seconds): `alpha`, `ctxs_tokens`, `max_batch` (at each context),
/// `critical_tokens` (at the FP8 factors the passes are priced at, [`pass_deployment`]);
/// `grid`, one `{batch, cells}` per batch, a [`Round`] per context or null where the KV
/// cache does not fit; `example`, a [`Verification`] of 5 tokens at batch 512, context 512,
/// or null where that does not fit.
pub fn run(out: &mut Out, setup: &Setup) -> Result<(), Error> {
    let (base, label, cards) = (setup.base, setup.label(), setup.cards());
    let (alpha, gamma, gb) = (py(base.alpha), setup.gamma_name(), setup.memory_gb());
    out.header(format!("演示 2：批大小 × 上下文长度（α = {alpha}）——每格：{gamma}、加速比；\"放不下\"= KV 超出 {gb} GB 显存"));
    let max_batch = try_map(&setup.ctxs, |&c| setup.fitting_batch(c))?;
    // "放不下" where the batch does not fit at that context, else the round (Round::cell).
    let cell = |c: &Option<Round>| c.as_ref().map_or(missing("放不下"), Round::cell);
    let (mut grid, mut rows, mut speedups) = (Vec::new(), Vec::new(), Vec::new());
    for &batch in &setup.batches {
        let cells = try_map(&setup.ctxs, |&ctx| setup.fitting_round(batch, ctx))?;
        if let Some(Some(r)) = cells.first() {
            let x = r.speculate.then(|| slow_down(r.speedup).to_string());
            speedups.push(format!("批 {batch} {}", x.as_deref().unwrap_or("不投机")));
        }
        let row = [int(batch).unit("sequences")].into_iter();
        rows.push(row.chain(cells.iter().map(cell)).collect());
        grid.push(json!({"batch": batch, "cells": cells}));
    }
    let mut headers = vec!["批大小".to_string()];
    headers.extend(setup.ctxs.iter().map(|c| format!("上下文 {c}")));
    let caption = format!("演示 2：{gamma} 与加速比（{label}，α = {alpha}）");
    out.table(headers, rows).id("demo2_grid").caption(caption);
    out.print("（括号里是\"验证 γ+1 个 token 的时间 / 普通 decode 一步\"。）");
    let (batch, ctx, n_new) = EXAMPLE;
    let example = if batch <= setup.fitting_batch(ctx)? {
        let v = Verification::of(&setup.scenario(batch, ctx, base.alpha), n_new)?;
        let (t, t_v, r) = (time(v.t_base_s), time(v.t_verify_s), ratio(v.ratio(), 1));
        let bound = match v.compute_bound {
            true => "已经让矩阵乘法变成算力受限",
            false => "仍然受带宽限制",
        };
        out.print(format!("\n例：批 {batch}、上下文 {ctx}：普通一步 {t}，一次验证 {n_new} 个 token {t_v}（{r} 倍）——批 × {n_new} = {} 个 token {bound}。", batch * n_new));
        Some(v)
    } else {
        let tgt = base.target.name;
        out.print(format!(
            "\n例：批 {batch}、上下文 {ctx}：{tgt} 在{cards} 上放不下这么大的批。"
        ));
        None
    };
    let critical_tokens = critical_tokens(&base.hw, &pass_deployment(&base)?);
    let fits = setup.ctxs.iter().zip(&max_batch);
    let fits = fits.map(|(c, m)| format!("上下文 {c} 最多 {m} 个序列"));
    let (c0, fits) = (setup.ctxs[0], join(fits, "、"));
    let at_c0 = match speedups.is_empty() {
        true => format!("上下文 {c0} 时所列的批都放不下"),
        false => format!("上下文 {c0} 时 {}", speedups.join("、")),
    };
    let summary = match setup.weights_problem()? {
        Some(line) => format!("本配置（{label}）：{line}"),
        None => format!(
            "本配置（{label}，α = {alpha}）：临界批大小约 {critical_tokens:.0} 个 token；{at_c0}；{fits}。"
        ),
    };
    let (batch, context) = (seed(DEMO2_BATCH), seed(DEMO2_CONTEXT));
    out.observations([what_if(summary), batch, context, always(DEMO2_COMPETE)]);
    out.figure(batch_figure(setup, &max_batch)?);
    let data = json!({"alpha": base.alpha, "ctxs_tokens": setup.ctxs, "grid": grid,
        "example": example, "max_batch": max_batch, "critical_tokens": critical_tokens});
    out.data(data);
    Ok(())
}

/// Figure `batch.svg`: the best speedup against batch size (log axis, 1 to 8192, two
/// batches per doubling) for each context; each curve ends at the largest batch that fits,
/// the batches beyond are a band in its colour labelled "放不下".
pub fn batch_figure(setup: &Setup, max_batch: &[u64]) -> Result<Figure, Error> {
    const MAX: f64 = 8192.0 * 1.25;
    let sampled = log_sweep(8192, 2)?;
    let x = Axis::log("批大小（对数坐标）").range(0.8, MAX);
    let mut panel = Panel::new("", x, Axis::linear("最优加速比").times());
    for (i, (&ctx, &fits)) in setup.ctxs.iter().zip(max_batch).enumerate() {
        let point = |b: u64| Ok((b as f64, setup.round(b, ctx, setup.base.alpha)?.speedup));
        let series = Series::try_line(format!("上下文 {ctx}"), cut_at(&sampled, fits), point);
        panel.series.push(series?);
        if fits < 8192 {
            let label = format!("上下文 {ctx}：批 > {fits} 放不下");
            let region = Region::new(fits.max(1) as f64, MAX, label, i);
            panel.regions.push(region);
        }
    }
    break_even(&mut panel, || setup.does_not_fit_line());
    let (label, alpha) = (setup.label(), py(setup.base.alpha));
    let title = format!("最优加速比 vs 批大小（{label}，α = {alpha}）");
    Ok(Figure::new(title, vec![panel]).id("batch"))
}
