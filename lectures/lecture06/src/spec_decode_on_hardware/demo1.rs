//! Demo 1: one target and one draft at batch 1 — the draft cost coefficient c, what
//! feeding n tokens to one forward pass costs, the best γ for each α; figure `knee.svg`.

use decode_lab::tree_speedup;
use decode_lab::{Pricing, Scenario, Seed, cost_coefficient, expected_tokens, round};
use lecture_flags::roofline::{Drafter, Roofline};
use lecture_flags::round::{Gamma, Grid, MeasuredTree};
use lecture_kit::value::{fixed, int, py, ratio, time};
use lecture_kit::{Axis, Error, Figure, Out, Panel, Series, always, row, seed, what_if};
use planner::flags::{DraftTerms, Setup, Terms};
use planner::validation::{self, COVERAGE, Kind};
use serde::Serialize;

use super::how_sure;
use super::words::{RoundData, cards, draft_label, draft_share, fitting_batch, gamma_value};
use super::words::{label, slow_down, weights_problem};

/// What demo 1 reads: the card, models and assumptions, the planner's terms, γ, a
/// measured tree, and the first batch and context of `--batch` and `--ctx`.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize)]
pub struct Inputs {
    /// The card, the target and the assumptions.
    #[command(flatten)]
    #[serde(flatten)]
    pub roofline: Roofline,
    /// The cost terms engines show, none by default.
    #[command(flatten)]
    #[serde(flatten)]
    pub terms: Terms,
    /// What drafts.
    #[command(flatten)]
    #[serde(flatten)]
    pub drafter: Drafter,
    /// The draft's own cost term.
    #[command(flatten)]
    #[serde(flatten)]
    pub draft_terms: DraftTerms,
    /// A fixed γ instead of the best one.
    #[command(flatten)]
    #[serde(flatten)]
    pub gamma: Gamma,
    /// A measured tree whose speedup to print.
    #[command(flatten)]
    #[serde(flatten)]
    pub tree: MeasuredTree,
    /// Demo 1 runs at the first batch and context.
    #[command(flatten)]
    #[serde(flatten)]
    pub grid: Grid,
}

/// The script's batch and context.
pub const POINT: (u64, u64) = (1, 1024);
/// Tokens fed to one target pass, for the first table.
pub const DEMO1_NS: [u64; 10] = [1, 2, 3, 5, 9, 17, 33, 65, 129, 257];

impl Inputs {
    /// The scenario at demo 1's batch and context, and what prices its passes.
    pub fn setup(&self) -> Setup {
        let drafter = Some((&self.drafter, &self.draft_terms));
        self.at_point(self.terms.setup(&self.roofline, drafter))
    }

    /// `setup` at demo 1's batch and context.
    fn at_point(&self, setup: Setup) -> Setup {
        let (batch, ctx) = self.grid.point_or(POINT);
        Setup {
            scenario: Scenario {
                batch,
                ctx,
                ..setup.scenario
            },
            ..setup
        }
    }
}

impl lecture_kit::Inputs for Inputs {
    fn check(&self) -> Result<(), String> {
        self.grid.check()?;
        self.tree.tree(&self.gamma)?;
        let (batch, ctx) = self.grid.point_or(POINT);
        let drafter = Some((&self.drafter, &self.draft_terms));
        self.terms.check(&self.roofline, drafter, batch, &[ctx])
    }

    /// The default setup, however spelled: the same scenario and pricing, no fixed γ, no
    /// tree.
    fn is_default(&self) -> bool {
        let d = lecture_kit::inputs::defaults::<Inputs>();
        self.setup() == d.setup() && self.gamma == d.gamma && self.tree == d.tree
    }
}

/// What demo 1 computes (times in seconds), at its batch and context (the header's).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Demo1 {
    /// A plain decode step of the target.
    #[serde(rename = "t_base_s")]
    pub t_base: f64,
    /// A step of the draft.
    #[serde(rename = "t_draft_s")]
    pub t_draft: f64,
    /// `t_draft / t_base`.
    pub c: f64,
    /// A target pass over n tokens, for each n of [`DEMO1_NS`].
    pub forward: Vec<Forward>,
    /// The round at each α.
    pub best: Vec<AlphaRound>,
    /// The speedup of the measured tree (`--tau`), if any.
    pub tree: Option<TreeSpeedup>,
}

/// A target pass over `n` tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Forward {
    /// Tokens fed per sequence.
    pub n: u64,
    /// The pass's time.
    pub time_s: f64,
}

/// The round at one α.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AlphaRound {
    /// The acceptance rate.
    pub alpha: f64,
    /// The best (or fixed) round.
    pub round: RoundData,
}

/// A measured tree's speedup.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TreeSpeedup {
    /// Its measured acceptance length.
    pub tau: f64,
    /// Its levels.
    pub depth: u64,
    /// Its draft tokens.
    pub nodes: u64,
    /// Its speedup.
    pub speedup: f64,
}

/// 演示 1: c, what verifying γ + 1 tokens costs, the best γ and speedup at each α.
pub fn run(out: &mut Out, i: &Inputs) -> Result<(), Error> {
    let setup = i.setup();
    let s = setup.scenario;
    let p = setup.pricing();
    out.header(format!(
        "演示 1：{} + {}，{}，批大小 {}、上下文 {}",
        s.target.name,
        draft_label(&s.draft),
        cards(&s),
        s.batch,
        s.ctx
    ));
    if cannot_compute(out, &s, p)? {
        return Ok(());
    }
    let t_base = p.target_pass_time(&s, 1)?;
    let t_d = p.draft_step_time(&s)?;
    let c = t_d / t_base;
    out.print(format!(
        "目标模型普通 decode 一步 {}；草稿模型一步 {} → c = {}（{}）",
        time(t_base),
        time(t_d),
        fixed(c, 3),
        draft_share(&s.draft, &s.target)
    ));
    if let Some(line) = how_sure_line(&i.terms, &s, t_base)? {
        out.print(line);
    }
    if let Some(line) = thin_line(i)? {
        out.print(line);
    }

    let mut rows = Vec::new();
    let mut forward = Vec::new();
    for n in DEMO1_NS {
        let t = p.target_pass_time(&s, n)?;
        rows.push(row![int(n).unit("tokens"), time(t), ratio(t / t_base, 3)]);
        forward.push(Forward { n, time_s: t });
    }
    out.print("\n目标模型一次前向送进 n 个 token（验证 γ = n − 1 个草稿）要多久：");
    out.table(["n", "时间", "相对 n = 1"], rows)
        .id("demo1_forward")
        .caption(forward_caption(&s));

    let mut rows2 = Vec::new();
    let mut best = Vec::new();
    for a in [0.6, 0.7, 0.8, 0.9] {
        let r = round(&Scenario { alpha: a, ..s }, p, i.gamma.gamma)?;
        let tokens = fixed(expected_tokens(a, r.gamma)?, 2).unit("tokens");
        rows2.push(row![py(a), gamma_value(&r), tokens, slow_down(r.speedup)]);
        best.push(AlphaRound {
            alpha: a,
            round: RoundData::from(&r),
        });
    }
    let g = i.gamma.name();
    out.table(
        ["α", g, "每轮 token", "加速比（一轮 = γ 次草稿 + 1 次验证）"],
        rows2,
    )
    .id("demo1_best_gamma")
    .caption(best_caption(&s, g));
    let tree = print_measured_tree(out, i, &s, p)?;

    // The script's sentences are about its own setup: their c is the default's.
    let c0 = cost_coefficient(&Scenario::LECTURE, &Seed)?;
    let mut lines = vec![what_if(summary(i, &s, p, c, &forward)?)];
    if setup.plan == planner::Plan::SEED {
        lines.push(what_if(engines_line()?));
    }
    out.observations(lines.into_iter().chain([
        seed(
            "批大小 1 时，送进 2 个 token 和 33 个 token 几乎一样快（前 129 个 token 都在\"读权重\"的阴影里）：\
             decode 的算力利用率极低，验证几乎是免费的——Leviathan 的假设 (1) 在这里成立。",
        ),
        seed(format!(
            "但 c 不小：1B 的草稿只读 8B 的约 15% 的字节，加上每步的固定开销，c ≈ {c0:.2}。\
             按 04 演示 2 的表，c ≈ 0.2 时最优只草稿几个、加速 2 倍左右（α = 0.8）。"
        )),
        always(
            "想更快，要么草稿更便宜（EAGLE 那样的单层草稿、n-gram / 提示查找，或者放到 SRAM 芯片上，第 5 讲 §8），\
             要么更准（同系列的模型、在目标模型的输出上蒸馏），要么一次验证更多候选（演示 3 的树）。",
        ),
    ]));
    out.figure(knee(&s, p)?);
    out.data(Demo1 {
        t_base,
        t_draft: t_d,
        c,
        forward,
        best,
        tree,
    });
    Ok(())
}

/// Whether demo 1 cannot compute on these cards — the weights do not fit, or the KV of its
/// batch does not — having then printed why, and drawn the figure (which says so too).
fn cannot_compute(out: &mut Out, s: &Scenario, p: &dyn Pricing) -> Result<bool, Error> {
    let fits = fitting_batch(s, s.ctx)?;
    let kv = format!(
        "批 {}、上下文 {} 的 KV cache 放不下：{} 最多装 {fits} 个这样的序列。",
        s.batch,
        s.ctx,
        cards(s)
    );
    let Some(why) = weights_problem(s)?.or((s.batch > fits).then_some(kv)) else {
        return Ok(false);
    };
    out.print(why);
    out.figure(knee(s, p)?);
    Ok(true)
}

/// The first table's caption.
fn forward_caption(s: &Scenario) -> String {
    format!(
        "演示 1：{} 在{} 上一次前向送进 n 个 token 的时间（批 {}、上下文 {}）",
        s.target.name,
        cards(s),
        s.batch,
        s.ctx
    )
}

/// The second table's caption.
fn best_caption(s: &Scenario, gamma: &str) -> String {
    format!(
        "演示 1：每个 α 的{gamma} 与加速比（{}，批 {}）",
        label(s),
        s.batch
    )
}

/// With `--tau`: the measured tree's speedup, printed after the tables.
fn print_measured_tree(
    out: &mut Out,
    i: &Inputs,
    s: &Scenario,
    p: &dyn Pricing,
) -> Result<Option<TreeSpeedup>, Error> {
    let Some((tree, tau)) = i.tree.tree(&i.gamma).map_err(Error::Usage)? else {
        return Ok(None);
    };
    let speedup = tree_speedup(s, p, &tree, tau)?;
    out.print(format!(
        "\n给定实测的接受长度 τ = {}（{} 层、{} 个节点的树，草稿 {}）：加速 {}。",
        py(tau),
        tree.depth(),
        tree.nodes(),
        draft_label(&s.draft),
        slow_down(speedup)
    ));
    Ok(Some(TreeSpeedup {
        tau,
        depth: tree.depth(),
        nodes: tree.nodes(),
        speedup,
    }))
}

/// The largest `n` of `passes` (n increasing) up to which every pass costs less than 1%
/// more than a plain step (Leviathan's assumption (1), verification for free), or 0 when
/// the first already does not.
pub fn free_up_to(passes: &[Forward]) -> u64 {
    let t_base = passes.first().map_or(0.0, |p| p.time_s);
    let free = passes.iter().take_while(|p| p.time_s / t_base < 1.01);
    free.last().map_or(0, |p| p.n)
}

/// Under the profiles fitted on published rows (`--calibration measured`, `--engine`): how
/// sure the step time `t_base` and a speedup are, as their 80% intervals from the
/// residuals of published rows like the setup (`planner::validation::interval_for`).
/// `None` under the seed's or the fitted profile, which the intervals do not judge.
fn how_sure_line(terms: &Terms, s: &Scenario, t_base: f64) -> Result<Option<String>, Error> {
    if !how_sure::judged(terms) {
        return Ok(None);
    }
    let Some(step) = how_sure::interval(s, Kind::StepTime, s.batch)? else {
        return Ok(None);
    };
    let speedup = how_sure::interval(s, Kind::Speedup, s.batch)?;
    let speedup = speedup.map_or(String::new(), |x| {
        format!("；加速比是预测的 {}", how_sure::factors(&x))
    });
    Ok(Some(format!(
        "{}（{:.0}% 区间：别家同类的发布数据的残差，宽度按它们在没见过的发布者上的覆盖校准，见演示 5）：\
         decode 一步 {}–{}（{} 行）{speedup}。",
        how_sure::OPENING,
        COVERAGE * 100.0,
        time(step.low * t_base),
        time(step.high * t_base),
        step.rows
    )))
}

/// Under a profile fitted on published rows: each constant that only one or two
/// publishers' rows fix (`planner::flags::Terms::thin_ends`) and that moves this setup's
/// step, or its speedup at α = 0.8, by more than `FIXES_BY` between the two ends of where
/// refitting without one of those publishers puts it, with the figures at both ends.
/// `None` when there is none.
fn thin_line(i: &Inputs) -> Result<Option<String>, Error> {
    let drafter = Some((&i.drafter, &i.draft_terms));
    let mut clauses = Vec::new();
    for ends in i.terms.thin_ends(&i.roofline, drafter)? {
        // The plain step and the speedup at α = 0.8 of a setup at demo 1's point.
        let figures = |end: Setup| -> Result<(f64, f64), Error> {
            let setup = i.at_point(end);
            let s = setup.scenario;
            let p = setup.pricing();
            let r = round(&Scenario { alpha: 0.8, ..s }, p, i.gamma.gamma)?;
            Ok((p.target_pass_time(&s, 1)?, r.speedup))
        };
        let (step_low, speedup_low) = figures(ends.low)?;
        let (step_high, speedup_high) = figures(ends.high)?;
        let mut moved = Vec::new();
        if validation::moves(step_low, step_high)? {
            let step = how_sure::span(step_low, step_high, |t| time(t).to_string());
            moved.push(format!("decode 一步 {step}"));
        }
        if validation::moves(speedup_low, speedup_high)? {
            let x = how_sure::speedups(speedup_low, speedup_high);
            moved.push(format!("α = 0.8 时加速 {x}"));
        }
        clauses.extend(how_sure::thin_clause(&ends, &moved));
    }
    Ok(how_sure::thin_sentence("这个价格", &clauses))
}

/// How far published engines run from the seed's assumptions, in one sentence: the seed's
/// step over the measured one, per batch band (`planner::validation::seed_step_gaps`).
fn engines_line() -> Result<String, Error> {
    let gaps = planner::validation::seed_step_gaps()?;
    let each = gaps.iter().map(|(band, g)| {
        format!(
            "批 {} 是 {:.2} 倍（{} 行）",
            band.label(),
            g.median,
            g.count
        )
    });
    Ok(format!(
        "这些时间按原脚本的假设算（峰值的 60%、带宽的 80%、每步固定开销）；公开引擎实测的普通 decode 一步，\
         按这些假设算出的时间与实测之比的中位数：{}——引擎比这里算的慢。\
         按公开数据标定：--calibration measured（演示 5）。",
        each.collect::<Vec<_>>().join("，")
    ))
}

/// The observation computed for the setup: c, up to which n a pass costs about the same as
/// one token (or, when already n = 2 does not, how much more it costs), the round at α 0.8.
fn summary(
    i: &Inputs,
    s: &Scenario,
    p: &dyn Pricing,
    c: f64,
    passes: &[Forward],
) -> Result<String, Error> {
    let free = match (free_up_to(passes), passes.get(1)) {
        (n, Some(two)) if n < 2 && two.n == 2 => {
            let more = fixed(100.0 * (two.time_s / passes[0].time_s - 1.0), 1);
            format!("多送 1 个 token（n = 2）就慢 {more}%")
        }
        (n, _) => format!("送进 n ≤ {n} 个 token 与只送 1 个相差不到 1%"),
    };
    let r = round(&Scenario { alpha: 0.8, ..*s }, p, i.gamma.gamma)?;
    let g = i.gamma.name();
    let at_08 = match r.speculate {
        true => format!(
            "α = 0.8 时{g} = {}，加速 {}",
            gamma_value(&r),
            slow_down(r.speedup)
        ),
        false => "α = 0.8 时投机解码不划算".to_string(),
    };
    let c2 = fixed(c, 2);
    Ok(format!(
        "本配置（{}）：c = {c2}；批 {} 时{free}；{at_08}。",
        label(s),
        s.batch
    ))
}

/// Figure `knee.svg`: one target pass's time against the tokens fed per sequence, 1 to
/// 4096 (log axes), at batches 1, 16, 64, 256 (those that fit), at demo 1's context: flat
/// while the pass only reads weights, rising once `batch · n` passes the critical batch.
pub fn knee(s: &Scenario, p: &dyn Pricing) -> Result<Figure, Error> {
    let ctx = s.ctx;
    let fits = fitting_batch(s, ctx)?;
    let x = Axis::log("每个序列送进的 token 数 n（对数坐标）");
    let mut panel = Panel::new("", x, Axis::log("一次前向的时间（ms，对数坐标）"));
    for b in [1, 16, 64, 256].into_iter().filter(|&b| b <= fits) {
        let at = Scenario { batch: b, ..*s };
        let point = |k| Ok((2f64.powi(k), 1e3 * p.target_pass_time(&at, 1 << k)?));
        let points = (0..13).map(point).collect::<Result<_, Error>>()?;
        panel.series.push(Series::line(format!("批 {b}"), points));
    }
    if panel.series.is_empty() {
        let why = weights_problem(s)?;
        panel.message = Some(why.unwrap_or(format!("上下文 {ctx} 时，批 1 也放不下。")));
    }
    let title = format!(
        "{} 在{} 上一次前向的时间（上下文 {ctx}）",
        s.target.name,
        cards(s)
    );
    Ok(Figure::new(title, vec![panel]).id("knee"))
}
