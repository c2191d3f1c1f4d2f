//! Demo 2: batch size × context length — the best γ and speedup over the grid, a worked
//! example of when verification stops being free; figure `batch.svg`.

use decode_lab::target_pass_time;
use lecture_kit::value::{int, missing, parts, py, ratio, speedup, time};
use lecture_kit::{Axis, Demo, Error, Figure, Out, Panel, Region, Series, Value};
use lecture_kit::{always, seed, what_if};
use llm_math::{ForwardShape, critical_tokens, forward_cost};
use serde::Serialize;

use super::round::break_even;
use super::round::{Round, slow_down};
use super::setup::Input::{self, Alpha, Assumptions, Gamma, Grid, Hw, Target};
use super::setup::Setup;
use super::text::{DEMO2_BATCH, DEMO2_COMPETE, DEMO2_CONTEXT};

pub use super::setup::{DEMO2_BATCHES, DEMO2_CTXS};
/// The setup inputs demo 2 reads.
pub const READS: &[Input] = &[Hw, Target, Input::Draft, Alpha, Assumptions, Gamma, Grid];
/// The worked example: batch, context, tokens verified per sequence.
const EXAMPLE: (u64, u64, u64) = (512, 512, 5);

/// What demo 2 prints (the JSON export's `demo2`), times in seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Demo2 {
    /// The acceptance rate.
    pub alpha: f64,
    /// The contexts of the columns.
    pub ctxs_tokens: Vec<u64>,
    /// One row per batch size: the best round at each context, `None` where the KV does not fit.
    pub grid: Vec<GridRow>,
    /// The worked example (batch 512, context 512, 5 tokens); `None` if it does not fit.
    pub example: Option<ExampleFigures>,
    /// The largest batch that fits at each context.
    pub max_batch: Vec<u64>,
    /// The card's critical batch, tokens.
    pub critical_tokens: f64,
}

/// One row of the grid.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GridRow {
    /// Sequences in the batch.
    pub batch: u64,
    /// The round at each context; `None` where the KV cache does not fit ("放不下").
    pub cells: Vec<Option<Round>>,
}

/// The worked example: one plain step against one pass verifying 5 tokens per sequence.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ExampleFigures {
    /// One plain decode step.
    pub t_base_s: f64,
    /// One pass verifying 5 tokens per sequence.
    pub t_verify_s: f64,
    /// Whether that pass is compute-bound.
    pub compute_bound: bool,
}

/// Demo 2's figures, as [`run`] computes them.
pub fn figures(setup: &Setup) -> Result<Demo2, Error> {
    let d = lecture_kit::figures(&Demo::new(2, READS, run), setup)?;
    d.ok_or_else(|| Error::Library("demo 2 attached no figures".into()))
}

/// One cell of the grid — "γ=4, 1.93×（验证 1.00）", "不投机" or "放不下" — with its γ,
/// speedup and verification ratio as values.
fn cell(round: &Option<Round>) -> Value {
    let gamma = |g: u32| int(g).named("γ").unit("tokens");
    let x = |x| speedup(x).named("加速比");
    match round {
        None => missing("放不下"),
        Some(r) if !r.speculate => {
            let no_ratio = missing("").named("验证").unit("×");
            parts("不投机", [gamma(0), x(1.0), no_ratio])
        }
        Some(r) => {
            let x = x(r.speedup).suffix(if r.speedup < 1.0 { " 变慢" } else { "" });
            let verify = ratio(r.plan.verify_ratio, 2).named("验证");
            parts("γ={}, {}（验证 {}）", [gamma(r.gamma), x, verify])
        }
    }
}

/// 演示 2: the best γ and speedup over batch size × context; when verification stops being free.
pub fn run(out: &mut Out, setup: &Setup) -> Result<(), Error> {
    let (base, label, cards) = (setup.base, setup.label(), setup.cards());
    let (alpha, gb) = (
        py(base.alpha),
        base.deployment.tp as f64 * base.hw.memory_bytes / 1e9,
    );
    let gamma = if setup.gamma.is_some() {
        "固定 γ"
    } else {
        "最优 γ"
    };
    out.header(format!("演示 2：批大小 × 上下文长度（α = {alpha}）——每格：{gamma}、加速比；\"放不下\"= KV 超出 {gb} GB 显存"));
    let problem = setup.weights_problem()?;
    let max = |ctx| {
        Ok::<_, Error>(if problem.is_none() {
            setup.max_batch(ctx)?
        } else {
            0
        })
    };
    let max_batch = setup
        .ctxs
        .iter()
        .map(|&c| max(c))
        .collect::<Result<Vec<_>, _>>()?;
    let round = |b, ctx| Round::of(&setup.scenario(b, ctx, base.alpha), setup.gamma);
    let (mut grid, mut rows) = (Vec::new(), Vec::new());
    for &batch in &setup.batches {
        let mut cells = Vec::new();
        for (&ctx, &fits) in setup.ctxs.iter().zip(&max_batch) {
            cells.push(if batch <= fits {
                Some(round(batch, ctx)?)
            } else {
                None
            });
        }
        let row = [int(batch).unit("sequences")]
            .into_iter()
            .chain(cells.iter().map(cell));
        rows.push(row.collect());
        grid.push(GridRow { batch, cells });
    }
    let mut headers = vec!["批大小".to_string()];
    headers.extend(setup.ctxs.iter().map(|c| format!("上下文 {c}")));
    let caption = format!("演示 2：{gamma} 与加速比（{label}，α = {alpha}）");
    out.table(headers, rows).id("demo2_grid").caption(caption);
    out.print("（括号里是\"验证 γ+1 个 token 的时间 / 普通 decode 一步\"。）");
    let (b, ctx, n) = EXAMPLE;
    let example = if b <= max(ctx)? {
        let s = setup.scenario(b, ctx, base.alpha);
        let shape = ForwardShape {
            batch: b,
            ctx,
            n_new: n,
        };
        let compute_bound =
            forward_cost(&base.target, &base.hw, shape, &base.deployment)?.is_compute_bound();
        let (t_base_s, t_verify_s) = (target_pass_time(&s, 1)?, target_pass_time(&s, n)?);
        let (t, v, r) = (
            time(t_base_s),
            time(t_verify_s),
            ratio(t_verify_s / t_base_s, 1),
        );
        let bound = if compute_bound {
            "已经让矩阵乘法变成算力受限"
        } else {
            "仍然受带宽限制"
        };
        out.print(format!("\n例：批 {b}、上下文 {ctx}：普通一步 {t}，一次验证 {n} 个 token {v}（{r} 倍）——批 × {n} = {} 个 token {bound}。", b * n));
        Some(ExampleFigures {
            t_base_s,
            t_verify_s,
            compute_bound,
        })
    } else {
        out.print(format!(
            "\n例：批 {b}、上下文 {ctx}：{} 在{cards} 上放不下这么大的批。",
            base.target.name
        ));
        None
    };
    let critical_tokens = critical_tokens(&base.hw, &base.deployment);
    let mut speedups = Vec::new();
    for (b, first) in grid.iter().filter_map(|r| Some((r.batch, r.cells[0]?))) {
        let x = if first.speculate {
            slow_down(first.speedup).to_string()
        } else {
            "不投机".into()
        };
        speedups.push(format!("批 {b} {x}"));
    }
    let fits = setup
        .ctxs
        .iter()
        .zip(&max_batch)
        .map(|(c, m)| format!("上下文 {c} 最多 {m} 个序列"));
    let (c0, speedups, fits) = (
        setup.ctxs[0],
        speedups.join("、"),
        fits.collect::<Vec<_>>().join("、"),
    );
    let summary = match problem {
        Some(line) => format!("本配置（{label}）：{line}"),
        None => format!(
            "本配置（{label}，α = {alpha}）：临界批大小约 {critical_tokens:.0} 个 token；上下文 {c0} 时 {speedups}；{fits}。"
        ),
    };
    out.observations([
        what_if(summary),
        seed(DEMO2_BATCH),
        seed(DEMO2_CONTEXT),
        always(DEMO2_COMPETE),
    ]);
    let ctxs_tokens = setup.ctxs.clone();
    let d = Demo2 {
        alpha: base.alpha,
        ctxs_tokens,
        grid,
        example,
        max_batch,
        critical_tokens,
    };
    out.figure(batch_figure(setup, &d)?);
    out.data(d);
    Ok(())
}

/// Figure `batch.svg`: the best speedup against batch size (log axis, 1 to 8192, two
/// batches per doubling) for each context; each curve ends at the largest batch that fits,
/// the batches beyond are a band in its colour labelled "放不下".
pub fn batch_figure(setup: &Setup, d: &Demo2) -> Result<Figure, Error> {
    const MAX: f64 = 8192.0 * 1.25;
    let mut sampled: Vec<u64> = (0..=26)
        .map(|k| 2f64.powf(k as f64 / 2.0).round() as u64)
        .collect();
    sampled.dedup();
    let x = Axis::log("批大小（对数坐标）").range(0.8, MAX);
    let mut panel = Panel::new("", x, Axis::linear("最优加速比").times());
    for (i, (&ctx, &fits)) in setup.ctxs.iter().zip(&d.max_batch).enumerate() {
        let mut batches: Vec<u64> = sampled.iter().copied().filter(|&b| b <= fits).collect();
        if fits < 8192 && batches.last() != Some(&fits) && fits > 0 {
            batches.push(fits);
        }
        let round = |b| Round::of(&setup.scenario(b, ctx, setup.base.alpha), setup.gamma);
        let points = batches
            .into_iter()
            .map(|b| Ok((b as f64, round(b)?.speedup)));
        panel.series.push(Series::line(
            format!("上下文 {ctx}"),
            points.collect::<Result<_, Error>>()?,
        ));
        if fits < 8192 {
            let label = format!("上下文 {ctx}：批 > {fits} 放不下");
            panel
                .regions
                .push(Region::new(fits.max(1) as f64, MAX, label, i));
        }
    }
    break_even(&mut panel, || setup.does_not_fit_line());
    let title = format!(
        "最优加速比 vs 批大小（{}，α = {}）",
        setup.label(),
        py(setup.base.alpha)
    );
    Ok(Figure::new(title, vec![panel]).id("batch"))
}
