//! Demo 2: batch size × context length — the best γ and speedup over the grid, a worked
//! example of when verification stops being free; figure `batch.svg`.

use console::fmt_time;
use decode_lab::target_pass_time;
use lecture_kit::figure::RefLine;
use lecture_kit::{Axis, Block, Cell, Column, Datum, Error, Figure, Panel, Region, Series, Table};
use llm_math::{critical_tokens, forward_cost};
use serde::Serialize;

use super::demo1::max_batch_of;
use super::round::Round;
use super::setup::{Input, Setup, python_float};
use super::text::{DEMO2_BATCH, DEMO2_COMPETE, DEMO2_CONTEXT, default_only};

pub use super::setup::{DEMO2_BATCHES, DEMO2_CTXS};
/// The setup inputs demo 2 reads.
pub const READS: [Input; 6] = [
    Input::Hw,
    Input::Target,
    Input::Draft,
    Input::Alpha,
    Input::Assumptions,
    Input::Grid,
];

/// A worked example: one plain step against one pass verifying `n` tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Example {
    /// Sequences in the batch.
    pub batch: u64,
    /// Cached tokens per sequence.
    pub ctx_tokens: u64,
    /// Tokens verified per sequence.
    pub n: u64,
}

/// Demo 2's worked example: batch 512, context 512, 5 tokens verified.
pub const DEMO2_EXAMPLE: Example = Example {
    batch: 512,
    ctx_tokens: 512,
    n: 5,
};

/// The figures demo 2 prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Demo2 {
    /// The acceptance rate.
    pub alpha: f64,
    /// The contexts of the columns, [`DEMO2_CTXS`].
    pub ctxs_tokens: Vec<u64>,
    /// One row per batch of [`DEMO2_BATCHES`].
    pub grid: Vec<GridRow>,
    /// The worked example ([`DEMO2_EXAMPLE`]); `None` if that batch does not fit.
    pub example: Option<ExampleFigures>,
    /// The largest batch that fits at each context of [`DEMO2_CTXS`].
    pub max_batch: Vec<u64>,
    /// The critical batch of the card, tokens.
    pub critical_tokens: f64,
}

/// One row of the grid.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GridRow {
    /// Sequences in the batch.
    pub batch: u64,
    /// The best round at each context; `None` where the KV cache does not fit ("放不下").
    pub cells: Vec<Option<Round>>,
}

/// The worked example's figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ExampleFigures {
    /// One plain decode step, seconds.
    pub t_base_s: f64,
    /// One pass verifying `n` tokens per sequence, seconds.
    pub t_verify_s: f64,
    /// Whether that pass is compute-bound.
    pub compute_bound: bool,
}

/// Computes demo 2 for `setup`: the best (or the fixed) γ and speedup over its batch
/// sizes × context lengths.
pub fn figures(setup: &Setup) -> Result<Demo2, Error> {
    let weights_fit = setup.weights_problem()?.is_none();
    let max_batch = setup
        .ctxs
        .iter()
        .map(|&c| {
            Ok(if weights_fit {
                max_batch_of(setup, c)?
            } else {
                0
            })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let mut grid = Vec::new();
    for &batch in &setup.batches {
        let mut cells = Vec::new();
        for (&ctx, &fits) in setup.ctxs.iter().zip(&max_batch) {
            cells.push(if batch <= fits {
                let s = setup.scenario(batch, ctx, setup.base.alpha);
                Some(Round::of(&s, setup.gamma)?)
            } else {
                None
            });
        }
        grid.push(GridRow { batch, cells });
    }
    let Example {
        batch,
        ctx_tokens: ctx,
        n,
    } = DEMO2_EXAMPLE;
    let example = if weights_fit && batch <= max_batch_of(setup, ctx)? {
        let s = setup.scenario(batch, ctx, setup.base.alpha);
        let shape = llm_math::ForwardShape {
            batch,
            ctx,
            n_new: n,
        };
        let pass = forward_cost(
            &setup.base.target,
            &setup.base.hw,
            shape,
            &setup.base.deployment,
        )?;
        Some(ExampleFigures {
            t_base_s: target_pass_time(&s, 1)?,
            t_verify_s: target_pass_time(&s, n)?,
            compute_bound: pass.is_compute_bound(),
        })
    } else {
        None
    };
    let critical_tokens = critical_tokens(&setup.base.hw, &setup.base.deployment);
    Ok(Demo2 {
        alpha: setup.base.alpha,
        ctxs_tokens: setup.ctxs.clone(),
        grid,
        example,
        max_batch,
        critical_tokens,
    })
}

/// One grid cell: its text, and its γ, speedup and verification ratio as values.
fn cell(c: &Option<Round>) -> Cell {
    match c {
        None => Cell::missing("放不下", 3),
        Some(r) if !r.speculate => Cell::values(
            "不投机",
            vec![Datum::Int(0), Datum::Number(1.0), Datum::Missing],
        ),
        Some(r) => Cell::values(
            format!(
                "γ={}, {:.2}×{}（验证 {:.2}）",
                r.gamma,
                r.speedup,
                if r.speedup < 1.0 { " 变慢" } else { "" },
                r.plan.verify_ratio
            ),
            vec![
                Datum::Int(r.gamma.into()),
                Datum::Number(r.speedup),
                Datum::Number(r.plan.verify_ratio),
            ],
        ),
    }
}

/// Demo 2 as blocks: header, the grid, the worked example, observations, the figure.
pub fn blocks(setup: &Setup, d: &Demo2) -> Result<Vec<Block>, Error> {
    let decode_lab::Scenario { target, .. } = &setup.base;
    let alpha = python_float(setup.base.alpha);
    let gamma = if setup.gamma.is_some() {
        "固定 γ"
    } else {
        "最优 γ"
    };
    let title = format!(
        "演示 2：批大小 × 上下文长度（α = {alpha}）——每格：{gamma}、加速比；\"放不下\"= KV 超出 {} GB 显存",
        setup.base.deployment.tp as f64 * setup.base.hw.memory_bytes / 1e9
    );
    let mut blocks = vec![Block::Header(title)];
    let mut columns = vec![Column::number("批大小", "sequences")];
    columns.extend(setup.ctxs.iter().map(|c| {
        Column::with_fields(
            format!("上下文 {c}"),
            &[("γ", "tokens"), ("加速比", "×"), ("验证", "×")],
        )
    }));
    let mut grid = Table::new(
        "demo2_grid",
        format!("演示 2：{gamma} 与加速比（{}，α = {alpha}）", setup.label()),
        columns,
    );
    for row in &d.grid {
        let mut cells = vec![Cell::int(row.batch as i64)];
        cells.extend(row.cells.iter().map(cell));
        grid = grid.row(cells);
    }
    blocks.push(Block::Table(grid));
    blocks.push(Block::Text(
        "（括号里是\"验证 γ+1 个 token 的时间 / 普通 decode 一步\"。）".into(),
    ));

    let Example {
        batch: b,
        ctx_tokens: ctx,
        n,
    } = DEMO2_EXAMPLE;
    blocks.push(Block::Text(match d.example {
        Some(e) => format!(
            "\n例：批 {b}、上下文 {ctx}：普通一步 {}，一次验证 {n} 个 token {}（{:.1} 倍）——批 × {n} = {} 个 token {}。",
            fmt_time(e.t_base_s),
            fmt_time(e.t_verify_s),
            e.t_verify_s / e.t_base_s,
            b * n,
            if e.compute_bound { "已经让矩阵乘法变成算力受限" } else { "仍然受带宽限制" },
        ),
        None => format!("\n例：批 {b}、上下文 {ctx}：{} 在{} 上放不下这么大的批。", target.name, setup.cards()),
    }));

    let observations = if setup.seed_wording_holds(&READS) {
        vec![
            DEMO2_BATCH.to_string(),
            DEMO2_CONTEXT.to_string(),
            DEMO2_COMPETE.to_string(),
        ]
    } else {
        let speedups: Vec<String> = d
            .grid
            .iter()
            .filter_map(|row| {
                row.cells[0].map(|c| {
                    if c.speculate {
                        format!("批 {} {}", row.batch, c.speedup_text())
                    } else {
                        format!("批 {} 不投机", row.batch)
                    }
                })
            })
            .collect();
        let fits: Vec<String> = setup
            .ctxs
            .iter()
            .zip(&d.max_batch)
            .map(|(c, m)| format!("上下文 {c} 最多 {m} 个序列"))
            .collect();
        let problem = setup.weights_problem()?;
        let summary = if let Some(line) = problem {
            format!("本配置（{}）：{line}", setup.label())
        } else {
            format!(
                "本配置（{}，α = {alpha}）：临界批大小约 {:.0} 个 token；上下文 {} 时 {}；{}。",
                setup.label(),
                d.critical_tokens,
                setup.ctxs[0],
                speedups.join("、"),
                fits.join("、")
            )
        };
        vec![
            summary,
            default_only(DEMO2_BATCH),
            default_only(DEMO2_CONTEXT),
            DEMO2_COMPETE.to_string(),
        ]
    };
    blocks.push(Block::Observations(observations));
    blocks.push(Block::Figure(batch_figure(setup, d)?));
    Ok(blocks)
}

/// The largest batch of the figure's x axis: a decade past the largest batch that fits at
/// context 512 on an H100 (952), so that every "放不下" band is wide enough for its label.
const FIGURE_MAX_BATCH: u64 = 8192;

/// Figure `batch.svg`: the best speedup against batch size (log axis) for each context of
/// [`DEMO2_CTXS`]. Each curve runs to the largest batch that fits; the batches beyond are
/// a region in the curve's colour labelled "放不下".
pub fn batch_figure(setup: &Setup, d: &Demo2) -> Result<Figure, Error> {
    let alpha = &setup.base.alpha;
    // 1, 2, 3, 4, 6, 8, 11, …, FIGURE_MAX_BATCH: two batches per doubling.
    let mut sampled: Vec<u64> = (0..=2 * FIGURE_MAX_BATCH.ilog2())
        .map(|k| (2f64.powf(k as f64 / 2.0)).round() as u64)
        .collect();
    sampled.dedup();
    let mut panel = Panel::new(
        "",
        Axis::log("批大小（对数坐标）").range(0.8, FIGURE_MAX_BATCH as f64 * 1.25),
        Axis::linear("最优加速比").times(),
    );
    for (i, (&ctx, &fits)) in setup.ctxs.iter().zip(&d.max_batch).enumerate() {
        let mut batches: Vec<u64> = sampled.iter().copied().filter(|&b| b <= fits).collect();
        if fits < FIGURE_MAX_BATCH && batches.last() != Some(&fits) && fits > 0 {
            batches.push(fits);
        }
        let points = batches
            .iter()
            .map(|&b| {
                let round = Round::of(&setup.scenario(b, ctx, *alpha), setup.gamma)?;
                Ok((b as f64, round.speedup))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        panel
            .series
            .push(Series::line(format!("上下文 {ctx}"), points));
        if fits < FIGURE_MAX_BATCH {
            panel.regions.push(Region {
                x0: fits.max(1) as f64,
                x1: FIGURE_MAX_BATCH as f64 * 1.25,
                label: format!("上下文 {ctx}：批 > {fits} 放不下"),
                series: i,
            });
        }
    }
    if panel.has_points() {
        panel.hlines.push(RefLine {
            y: 1.0,
            label: "1.0×：不投机".into(),
        });
    } else {
        panel.message = Some(setup.does_not_fit_line());
    }
    Ok(Figure {
        id: "batch".into(),
        title: format!(
            "最优加速比 vs 批大小（{}，α = {}）",
            setup.label(),
            python_float(*alpha)
        ),
        panels: vec![panel],
    })
}
