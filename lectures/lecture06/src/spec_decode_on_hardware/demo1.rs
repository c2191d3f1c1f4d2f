//! Demo 1: one target and one draft at batch 1 — the draft cost coefficient c, what
//! feeding n tokens to one forward pass costs, the best γ for each α; figure `knee.svg`.

use decode_lab::{
    Draft, TreeRound, cost_coefficient, draft_step_time, expected_tokens, target_pass_time,
    tree_speedup,
};
use lecture_kit::value::{fixed, int, percent, py, ratio, time};
use lecture_kit::{Axis, Demo, Error, Figure, Out, Panel, Series, always, row, seed, what_if};
use serde::Serialize;

use super::round::{Round, slow_down};
use super::setup::Input::{self, Assumptions, Gamma, Grid, Hw, Target, Tree};
use super::setup::Setup;
use super::text::{DEMO1_FASTER, DEMO1_FREE, demo1_c, draft_label};

/// The setup inputs demo 1 reads (α is its own list).
pub const READS: &[Input] = &[Hw, Target, Input::Draft, Assumptions, Gamma, Tree, Grid];
/// Tokens fed to one target pass, for the first table.
pub const DEMO1_NS: [u64; 10] = [1, 2, 3, 5, 9, 17, 33, 65, 129, 257];

/// What demo 1 prints (the JSON export's `demo1`), times in seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Demo1 {
    /// Sequences in the batch.
    pub batch: u64,
    /// Cached tokens per sequence.
    pub ctx_tokens: u64,
    /// One plain decode step of the target.
    pub t_base_s: f64,
    /// One decode step of the draft.
    pub t_draft_s: f64,
    /// The draft cost coefficient `t_draft / t_base`.
    pub c: f64,
    /// One target pass over n tokens, for each n of [`DEMO1_NS`].
    pub forward: Vec<Forward>,
    /// The best (or the fixed) round at α = 0.6, 0.7, 0.8, 0.9.
    pub best: Vec<AlphaBest>,
    /// The speedup of the measured tree (`--tau`), if one is given.
    pub measured_tree: Option<MeasuredTree>,
}

/// One target pass over `n` tokens, and its time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Forward {
    /// Tokens fed.
    pub n: u64,
    /// The pass's time.
    pub time_s: f64,
}

/// The round at one acceptance rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AlphaBest {
    /// The acceptance rate.
    pub alpha: f64,
    /// The round there.
    pub round: Round,
}

/// A tree with a measured τ (`--tau`, `--tree-nodes`, depth `--gamma`) and its speedup.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MeasuredTree {
    /// Measured tokens per round.
    pub tau: f64,
    /// Draft steps (levels) per round.
    pub depth: u64,
    /// Draft tokens verified per round.
    pub nodes: u64,
    /// The speedup.
    pub speedup: f64,
}

impl Demo1 {
    /// The largest n up to which feeding n tokens costs under 1% more than one.
    pub fn free_up_to(&self) -> u64 {
        let free = self
            .forward
            .iter()
            .take_while(|f| f.time_s / self.t_base_s < 1.01);
        free.last().map_or(0, |f| f.n)
    }
}

/// Demo 1's figures, as [`run`] computes them; `None` when the cards cannot hold them.
pub fn figures(setup: &Setup) -> Result<Option<Demo1>, Error> {
    lecture_kit::figures(&Demo::new(1, READS, run), setup)
}

/// 演示 1: c, what verifying γ + 1 tokens costs, the best γ and speedup at each α.
pub fn run(out: &mut Out, setup: &Setup) -> Result<(), Error> {
    let (s, cards, label) = (setup.base, setup.cards(), setup.label());
    let (tgt, drf, batch, ctx) = (s.target.name, draft_label(&s.draft), s.batch, s.ctx);
    out.header(format!(
        "演示 1：{tgt} + {drf}，{cards}，批大小 {batch}、上下文 {ctx}"
    ));
    let fits = setup.max_batch(ctx)?;
    let no_kv = format!(
        "批 {batch}、上下文 {ctx} 的 KV cache 放不下：{cards} 最多装 {fits} 个这样的序列。"
    );
    if let Some(why) = setup.weights_problem()?.or((batch > fits).then_some(no_kv)) {
        out.print(why);
        out.figure(knee(setup)?);
        return Ok(());
    }
    let (t_base_s, t_draft_s) = (target_pass_time(&s, 1)?, draft_step_time(&s)?);
    let c = cost_coefficient(&s)?;
    let share = match s.draft {
        Draft::Model(m) => {
            let p = m.n_params() as f64;
            let (b, f) = (fixed(p / 1e9, 2), percent(p / s.target.n_params() as f64));
            format!("草稿参数 {b} B，是目标的 {f}")
        }
        other => format!("草稿：{}", draft_label(&other)),
    };
    let (t, t_d, c3) = (time(t_base_s), time(t_draft_s), fixed(c, 3));
    out.print(format!(
        "目标模型普通 decode 一步 {t}；草稿模型一步 {t_d} → c = {c3}（{share}）"
    ));
    let (mut forward, mut rows) = (Vec::new(), Vec::new());
    for n in DEMO1_NS {
        let time_s = target_pass_time(&s, n)?;
        let (n_, r) = (int(n).unit("tokens"), ratio(time_s / t_base_s, 3));
        rows.push(row![n_, time(time_s), r]);
        forward.push(Forward { n, time_s });
    }
    out.print("\n目标模型一次前向送进 n 个 token（验证 γ = n − 1 个草稿）要多久：");
    let caption = format!(
        "演示 1：{tgt} 在{cards} 上一次前向送进 n 个 token 的时间（批 {batch}、上下文 {ctx}）"
    );
    out.table(["n", "时间", "相对 n = 1"], rows)
        .id("demo1_forward")
        .caption(caption);
    let gamma = if setup.gamma.is_some() {
        "固定 γ"
    } else {
        "最优 γ"
    };
    let (mut best, mut rows) = (Vec::new(), Vec::new());
    for alpha in [0.6, 0.7, 0.8, 0.9] {
        let round = Round::of(&setup.scenario(batch, ctx, alpha), setup.gamma)?;
        let g = int(round.gamma).unit("tokens");
        let tokens = fixed(expected_tokens(alpha, round.gamma)?, 2).unit("tokens");
        rows.push(row![py(alpha), g, tokens, slow_down(round.speedup)]);
        best.push(AlphaBest { alpha, round });
    }
    let caption = format!("演示 1：每个 α 的{gamma} 与加速比（{label}，批 {batch}）");
    let headers = [
        "α",
        gamma,
        "每轮 token",
        "加速比（一轮 = γ 次草稿 + 1 次验证）",
    ];
    out.table(headers, rows)
        .id("demo1_best_gamma")
        .caption(caption);
    let mut measured_tree = None;
    if let Some(t @ TreeRound { tau, depth, nodes }) = setup.measured_tree {
        let speedup = tree_speedup(&s, &t)?;
        let (tau_, x) = (py(tau), slow_down(speedup));
        out.print(format!("\n给定实测的接受长度 τ = {tau_}（{depth} 层、{nodes} 个节点的树，草稿 {drf}）：加速 {x}。"));
        measured_tree = Some(MeasuredTree {
            tau,
            depth,
            nodes,
            speedup,
        });
    }
    let d = Demo1 {
        batch,
        ctx_tokens: ctx,
        t_base_s,
        t_draft_s,
        c,
        forward,
        best,
        measured_tree,
    };
    let r = d.best[2].round; // α = 0.8
    let at_08 = match r.speculate {
        true => format!(
            "α = 0.8 时{gamma} = {}，加速 {}",
            r.gamma,
            slow_down(r.speedup)
        ),
        false => "α = 0.8 时投机解码不划算".to_string(),
    };
    let (c2, n) = (fixed(c, 2), d.free_up_to());
    let summary = format!(
        "本配置（{label}）：c = {c2}；批 {batch} 时送进 n ≤ {n} 个 token 与只送 1 个相差不到 1%；{at_08}。"
    );
    out.observations([
        what_if(summary),
        seed(DEMO1_FREE),
        seed(demo1_c(c)),
        always(DEMO1_FASTER),
    ]);
    out.figure(knee(setup)?);
    out.data(d);
    Ok(())
}

/// Figure `knee.svg`: one target pass's time against the tokens fed per sequence, 1 to
/// 4096 (log axes), at batches 1, 16, 64, 256 (those that fit), at demo 1's context: flat
/// while the pass only reads weights, rising once `batch · n` passes the critical batch.
pub fn knee(setup: &Setup) -> Result<Figure, Error> {
    let (tgt, ctx, problem) = (
        setup.base.target.name,
        setup.base.ctx,
        setup.weights_problem()?,
    );
    let fits = if problem.is_some() {
        0
    } else {
        setup.max_batch(ctx)?
    };
    let x = Axis::log("每个序列送进的 token 数 n（对数坐标）");
    let mut panel = Panel::new("", x, Axis::log("一次前向的时间（ms，对数坐标）"));
    for b in [1, 16, 64, 256].into_iter().filter(|&b| b <= fits) {
        let s = setup.scenario(b, ctx, setup.base.alpha);
        let point = |k| Ok((2f64.powi(k), 1e3 * target_pass_time(&s, 1 << k)?));
        let points = (0..13).map(point).collect::<Result<_, Error>>()?;
        panel.series.push(Series::line(format!("批 {b}"), points));
    }
    if panel.series.is_empty() {
        panel.message = Some(problem.unwrap_or(format!("上下文 {ctx} 时，批 1 也放不下。")));
    }
    let title = format!("{tgt} 在{} 上一次前向的时间（上下文 {ctx}）", setup.cards());
    Ok(Figure::new(title, vec![panel]).id("knee"))
}
