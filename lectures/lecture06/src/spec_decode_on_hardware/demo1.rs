//! Demo 1: one target and one draft at batch 1 — the draft cost coefficient c, what
//! feeding n tokens to one forward pass costs, the best γ for each α; figure `knee.svg`.

use console::fmt_time;
use decode_lab::{Draft, draft_step_time, expected_tokens, target_pass_time, tree_speedup};
use lecture_kit::{Axis, Block, Cell, Column, Error, Figure, Panel, Series, Table};
use serde::Serialize;

use super::round::{Round, speedup_text};
use super::setup::{Input, Setup, percent, python_float};
use super::text::{DEMO1_FASTER, DEMO1_FREE, default_only, demo1_c};

pub use super::setup::DEMO1_CTX;
/// Demo 1's numbers of tokens fed to one target forward pass.
pub const DEMO1_NS: [u64; 10] = [1, 2, 3, 5, 9, 17, 33, 65, 129, 257];
/// Demo 1's acceptance rates.
pub const DEMO1_ALPHAS: [f64; 4] = [0.6, 0.7, 0.8, 0.9];
/// The setup inputs demo 1 reads (α is its own grid).
pub const READS: [Input; 5] = [
    Input::Hw,
    Input::Target,
    Input::Draft,
    Input::Assumptions,
    Input::Grid,
];
/// Batch sizes of the knee figure.
pub const KNEE_BATCHES: [u64; 4] = [1, 16, 64, 256];
/// Tokens per sequence on the knee figure's x axis: 1, 2, 4, …, 4096.
pub const KNEE_NS: [u64; 13] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096];

/// The figures demo 1 prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Demo1 {
    /// Sequences in the batch.
    pub batch: u64,
    /// Cached tokens per sequence.
    pub ctx_tokens: u64,
    /// One plain decode step of the target, seconds.
    pub t_base_s: f64,
    /// One decode step of the draft, seconds.
    pub t_draft_s: f64,
    /// The draft cost coefficient `t_draft / t_base`.
    pub c: f64,
    /// Target forward time for each n of [`DEMO1_NS`].
    pub forward: Vec<Forward>,
    /// Best (or fixed-γ) round for each α of [`DEMO1_ALPHAS`].
    pub best: Vec<AlphaBest>,
    /// The speedup of a measured tree (`--tau`), if one is given.
    pub measured_tree: Option<MeasuredTree>,
}

/// A tree with a measured acceptance length, and the speedup the roofline gives it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MeasuredTree {
    /// Measured tokens per round.
    pub tau: f64,
    /// Draft steps per round (levels).
    pub depth: u64,
    /// Draft tokens verified per round.
    pub nodes: u64,
    /// The speedup.
    pub speedup: f64,
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

/// Computes demo 1 for `setup` at its [`Setup::demo1_point`]: c, the cost of feeding n
/// tokens, the best (or the fixed) γ for each α. `None` when the target, or target and
/// draft together, cannot be held on the cards, or not even one sequence fits.
pub fn figures(setup: &Setup) -> Result<Option<Demo1>, Error> {
    let (batch, ctx) = setup.demo1_point();
    if setup.weights_problem()?.is_some() || batch > max_batch_of(setup, ctx)? {
        return Ok(None);
    }
    let s = setup.scenario(batch, ctx, setup.base.alpha);
    let t_base_s = target_pass_time(&s, 1)?;
    let t_draft_s = draft_step_time(&s)?;
    let forward = DEMO1_NS
        .iter()
        .map(|&n| {
            Ok(Forward {
                n,
                time_s: target_pass_time(&s, n)?,
            })
        })
        .collect::<Result<_, Error>>()?;
    let best = DEMO1_ALPHAS
        .iter()
        .map(|&alpha| {
            let round = Round::of(&setup.scenario(batch, ctx, alpha), setup.gamma)?;
            Ok(AlphaBest { alpha, round })
        })
        .collect::<Result<_, Error>>()?;
    let measured_tree = match &setup.measured_tree {
        Some(tree) => Some(MeasuredTree {
            tau: tree.tau,
            depth: tree.depth,
            nodes: tree.nodes,
            speedup: tree_speedup(&s, tree)?,
        }),
        None => None,
    };
    Ok(Some(Demo1 {
        batch,
        ctx_tokens: ctx,
        t_base_s,
        t_draft_s,
        c: t_draft_s / t_base_s,
        forward,
        best,
        measured_tree,
    }))
}

/// The largest batch the target holds at `ctx` on the setup's cards.
pub fn max_batch_of(setup: &Setup, ctx: u64) -> Result<u64, Error> {
    Ok(setup.scenario(1, ctx, setup.base.alpha).memory()?.max_batch)
}

/// Demo 1 as blocks: header, the c line, the two tables, observations, the knee figure.
pub fn blocks(setup: &Setup, d: &Option<Demo1>) -> Result<Vec<Block>, Error> {
    let decode_lab::Scenario { target, draft, .. } = &setup.base;
    let (batch, ctx) = setup.demo1_point();
    let title = format!(
        "演示 1：{} + {}，{}，批大小 {batch}、上下文 {ctx}",
        target.name,
        super::text::draft_label(draft),
        setup.cards(),
    );
    let mut blocks = vec![Block::Header(title)];
    let Some(d) = d else {
        let why = match setup.weights_problem()? {
            Some(line) => line,
            None => format!(
                "批 {batch}、上下文 {ctx} 的 KV cache 放不下：{} 最多装 {} 个这样的序列。",
                setup.cards(),
                max_batch_of(setup, ctx)?
            ),
        };
        blocks.push(Block::Text(why));
        blocks.push(Block::Figure(knee(setup)?));
        return Ok(blocks);
    };
    let draft_line = match draft {
        Draft::Model(m) => format!(
            "草稿参数 {:.2} B，是目标的 {}",
            m.n_params() as f64 / 1e9,
            percent(m.n_params() as f64 / target.n_params() as f64)
        ),
        other => format!("草稿：{}", super::text::draft_label(other)),
    };
    blocks.push(Block::Text(format!(
        "目标模型普通 decode 一步 {}；草稿模型一步 {} → c = {:.3}（{draft_line}）",
        fmt_time(d.t_base_s),
        fmt_time(d.t_draft_s),
        d.c,
    )));
    blocks.push(Block::Text(
        "\n目标模型一次前向送进 n 个 token（验证 γ = n − 1 个草稿）要多久：".into(),
    ));
    let mut forward = Table::new(
        "demo1_forward",
        format!(
            "演示 1：{} 在{} 上一次前向送进 n 个 token 的时间（批 {batch}、上下文 {ctx}）",
            target.name,
            setup.cards()
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
    let gamma_header = if setup.gamma.is_some() {
        "固定 γ"
    } else {
        "最优 γ"
    };
    let mut best = Table::new(
        "demo1_best_gamma",
        format!(
            "演示 1：每个 α 的{gamma_header} 与加速比（{}，批 {batch}）",
            setup.label()
        ),
        vec![
            Column::number("α", ""),
            Column::number(gamma_header, "tokens"),
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
            Cell::number(b.round.speedup_text(), b.round.speedup),
        ]);
    }
    blocks.push(Block::Table(best));
    if let Some(t) = &d.measured_tree {
        blocks.push(Block::Text(format!(
            "\n给定实测的接受长度 τ = {}（{} 层、{} 个节点的树，草稿 {}）：加速 {}。",
            python_float(t.tau),
            t.depth,
            t.nodes,
            super::text::draft_label(draft),
            speedup_text(t.speedup)
        )));
    }

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
                "α = 0.8 时{gamma_header} = {}，加速 {}",
                b.round.gamma,
                b.round.speedup_text()
            ),
            _ => "α = 0.8 时投机解码不划算".to_string(),
        };
        vec![
            format!(
                "本配置（{}）：c = {:.2}；批 {batch} 时送进 n ≤ {} 个 token 与只送 1 个相差不到 1%；{}。",
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
    let decode_lab::Scenario { target, .. } = &setup.base;
    let (_, ctx) = setup.demo1_point();
    let fits = if setup.weights_problem()?.is_some() {
        0
    } else {
        max_batch_of(setup, ctx)?
    };
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
                    1e3 * target_pass_time(&setup.scenario(b, ctx, setup.base.alpha), n)?,
                ))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        panel.series.push(Series::line(format!("批 {b}"), points));
    }
    if panel.series.is_empty() {
        panel.message = Some(
            setup
                .weights_problem()?
                .unwrap_or_else(|| format!("上下文 {ctx} 时，批 {} 也放不下。", KNEE_BATCHES[0])),
        );
    }
    Ok(Figure {
        id: "knee".into(),
        title: format!(
            "{} 在{} 上一次前向的时间（上下文 {ctx}）",
            target.name,
            setup.cards()
        ),
        panels: vec![panel],
    })
}
