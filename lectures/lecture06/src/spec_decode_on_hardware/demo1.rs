//! Demo 1: one target and one draft at batch 1 — the draft cost coefficient c, what
//! feeding n tokens to one forward pass costs, the best γ for each α; figure `knee.svg`.

use console::fmt_time;
use decode_lab::{best_round, draft_time, expected_tokens, verify_time};
use lecture_kit::{Axis, Block, Cell, Column, Error, Figure, Panel, Series, Table};
use llm_math::max_batch;
use serde::Serialize;

use super::round::Round;
use super::setup::{Input, OVERHEAD_D, OVERHEAD_T, Setup, percent, python_float};
use super::text::{DEMO1_FASTER, DEMO1_FREE, default_only, demo1_c};

/// Demo 1's context length.
pub const DEMO1_CTX: u64 = 1024;
/// Demo 1's numbers of tokens fed to one target forward pass.
pub const DEMO1_NS: [u64; 10] = [1, 2, 3, 5, 9, 17, 33, 65, 129, 257];
/// Demo 1's acceptance rates.
pub const DEMO1_ALPHAS: [f64; 4] = [0.6, 0.7, 0.8, 0.9];
/// The setup inputs demo 1 reads (α is its own grid).
pub const READS: [Input; 3] = [Input::Hw, Input::Target, Input::Draft];
/// Batch sizes of the knee figure.
pub const KNEE_BATCHES: [u64; 4] = [1, 16, 64, 256];
/// Tokens per sequence on the knee figure's x axis: 1, 2, 4, …, 4096.
pub const KNEE_NS: [u64; 13] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096];

/// The figures demo 1 prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Demo1 {
    /// One plain decode step of the target, seconds.
    pub t_base_s: f64,
    /// One decode step of the draft, seconds.
    pub t_draft_s: f64,
    /// The draft cost coefficient `t_draft / t_base`.
    pub c: f64,
    /// Target forward time for each n of [`DEMO1_NS`].
    pub forward: Vec<Forward>,
    /// Best round for each α of [`DEMO1_ALPHAS`].
    pub best: Vec<AlphaBest>,
}

/// One target forward pass of n tokens at batch 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Forward {
    /// Tokens fed.
    pub n: u64,
    /// Its time, seconds.
    pub time_s: f64,
}

/// The best round at one acceptance rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AlphaBest {
    /// The acceptance rate.
    pub alpha: f64,
    /// The best round there.
    pub round: Round,
}

impl Demo1 {
    /// The largest n of [`DEMO1_NS`] up to which feeding n tokens costs less than 1% more
    /// than feeding one: the end of the weight-read shadow.
    pub fn free_up_to(&self) -> u64 {
        self.forward
            .iter()
            .take_while(|f| f.time_s / self.t_base_s < 1.01)
            .last()
            .map_or(0, |f| f.n)
    }
}

/// Computes demo 1 for `setup`: c, the cost of feeding n tokens, the best γ for each α.
/// `None` when the target cannot hold even one sequence of [`DEMO1_CTX`] tokens on the card.
pub fn figures(setup: &Setup) -> Result<Option<Demo1>, Error> {
    let Setup {
        hw, target, draft, ..
    } = setup;
    let ctx = DEMO1_CTX;
    if max_batch(target, hw, ctx)? == 0 {
        return Ok(None);
    }
    let t_base_s = verify_time(target, hw, 1, ctx, 1, OVERHEAD_T)?;
    let t_draft_s = draft_time(draft, hw, 1, ctx, OVERHEAD_D)?;
    let forward = DEMO1_NS
        .iter()
        .map(|&n| {
            Ok(Forward {
                n,
                time_s: verify_time(target, hw, 1, ctx, n, OVERHEAD_T)?,
            })
        })
        .collect::<Result<_, Error>>()?;
    let best = DEMO1_ALPHAS
        .iter()
        .map(|&alpha| {
            let b = best_round(&setup.scenario(1, ctx, alpha))?;
            Ok(AlphaBest {
                alpha,
                round: Round::from(&b),
            })
        })
        .collect::<Result<_, Error>>()?;
    Ok(Some(Demo1 {
        t_base_s,
        t_draft_s,
        c: t_draft_s / t_base_s,
        forward,
        best,
    }))
}

/// Demo 1 as blocks: header, the c line, the two tables, observations, the knee figure.
pub fn blocks(setup: &Setup, d: &Option<Demo1>) -> Result<Vec<Block>, Error> {
    let Setup {
        hw, target, draft, ..
    } = setup;
    let title = format!(
        "演示 1：{} + {}，一块 {}，批大小 1、上下文 {}",
        target.name, draft.name, hw.name, DEMO1_CTX
    );
    let mut blocks = vec![Block::Header(title)];
    let Some(d) = d else {
        blocks.push(Block::Text(setup.does_not_fit_line()));
        blocks.push(Block::Figure(knee(setup)?));
        return Ok(blocks);
    };
    let share = draft.n_params() as f64 / target.n_params() as f64;
    blocks.push(Block::Text(format!(
        "目标模型普通 decode 一步 {}；草稿模型一步 {} → c = {:.3}（草稿参数 {:.2} B，是目标的 {}）",
        fmt_time(d.t_base_s),
        fmt_time(d.t_draft_s),
        d.c,
        draft.n_params() as f64 / 1e9,
        percent(share),
    )));
    blocks.push(Block::Text(
        "\n目标模型一次前向送进 n 个 token（验证 γ = n − 1 个草稿）要多久：".into(),
    ));
    let mut forward = Table::new(
        "demo1_forward",
        format!(
            "演示 1：{} 在一块 {} 上一次前向送进 n 个 token 的时间（批 1、上下文 {DEMO1_CTX}）",
            target.name, hw.name
        ),
        vec![
            Column::number("n", "tokens"),
            Column::number("时间", "s"),
            Column::number("相对 n = 1", "×"),
        ],
    );
    for f in &d.forward {
        let ratio = f.time_s / d.t_base_s;
        forward = forward.row(vec![
            Cell::int(f.n as i64),
            Cell::number(fmt_time(f.time_s), f.time_s),
            Cell::number(format!("{ratio:.3}"), ratio),
        ]);
    }
    blocks.push(Block::Table(forward));
    let mut best = Table::new(
        "demo1_best_gamma",
        format!(
            "演示 1：每个 α 的最优 γ 与加速比（{}，批 1）",
            setup.label()
        ),
        vec![
            Column::number("α", ""),
            Column::number("最优 γ", "tokens"),
            Column::number("每轮 token", "tokens"),
            Column::number("加速比（一轮 = γ 次草稿 + 1 次验证）", "×"),
        ],
    );
    for b in &d.best {
        let tokens = expected_tokens(b.alpha, b.round.gamma)?;
        best = best.row(vec![
            Cell::number(python_float(b.alpha), b.alpha),
            Cell::int(b.round.gamma),
            Cell::number(format!("{tokens:.2}"), tokens),
            Cell::number(format!("{:.2}×", b.round.speedup), b.round.speedup),
        ]);
    }
    blocks.push(Block::Table(best));

    let observations = if setup.seed_wording_holds(&READS) {
        vec![
            DEMO1_FREE.to_string(),
            demo1_c(d.c),
            DEMO1_FASTER.to_string(),
        ]
    } else {
        let default_c = figures(&Setup::default())?.map_or(f64::NAN, |d| d.c);
        let best_08 = match d.best.iter().find(|b| b.alpha == 0.8) {
            Some(b) if b.round.speculate => format!(
                "α = 0.8 时最优 γ = {}，加速 {:.2}×",
                b.round.gamma, b.round.speedup
            ),
            _ => "α = 0.8 时投机解码不划算".to_string(),
        };
        vec![
            format!(
                "本配置（{}）：c = {:.2}；批 1 时送进 n ≤ {} 个 token 与只送 1 个相差不到 1%；{}。",
                setup.label(),
                d.c,
                d.free_up_to(),
                best_08
            ),
            default_only(DEMO1_FREE),
            default_only(&demo1_c(default_c)),
            DEMO1_FASTER.to_string(),
        ]
    };
    blocks.push(Block::Observations(observations));
    blocks.push(Block::Figure(knee(setup)?));
    Ok(blocks)
}

/// Figure `knee.svg`: time of one target forward pass against the tokens fed per sequence
/// (log axes), at the batches of [`KNEE_BATCHES`] that fit, context [`DEMO1_CTX`]: flat
/// while the pass only reads weights, rising once `batch · n` passes the critical batch.
pub fn knee(setup: &Setup) -> Result<Figure, Error> {
    let Setup { hw, target, .. } = setup;
    let fits = max_batch(target, hw, DEMO1_CTX)?;
    let mut panel = Panel::new(
        "",
        Axis::log("每个序列送进的 token 数 n（对数坐标）"),
        Axis::log("一次前向的时间（ms，对数坐标）"),
    );
    for &b in KNEE_BATCHES.iter().filter(|&&b| b <= fits) {
        let points = KNEE_NS
            .iter()
            .map(|&n| {
                Ok((
                    n as f64,
                    1e3 * verify_time(target, hw, b, DEMO1_CTX, n, OVERHEAD_T)?,
                ))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        panel.series.push(Series::line(format!("批 {b}"), points));
    }
    if panel.series.is_empty() {
        panel.message = Some(setup.does_not_fit_line());
    }
    Ok(Figure {
        id: "knee".into(),
        title: format!(
            "{} 在一块 {} 上一次前向的时间（上下文 {DEMO1_CTX}）",
            target.name, hw.name
        ),
        panels: vec![panel],
    })
}
