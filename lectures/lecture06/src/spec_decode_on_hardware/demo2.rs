//! Demo 2: batch size × context length — the best γ and speedup over the grid, a worked
//! example of when verification stops being free; figure `batch.svg`.

use decode_lab::{Scenario, round};
use lecture_flags::roofline::{Drafter, Roofline};
use lecture_flags::round::{Alpha, Gamma, Grid};
use lecture_kit::value::{int, join, missing, py, ratio, time};
use lecture_kit::{Axis, Error, Figure, Out, Panel, Region, Series, always, seed, what_if};
use lecture_kit::{cut_at, log_sweep, try_map};
use llm_math::critical_tokens;
use planner::flags::{DraftTerms, Setup, Terms};
use planner::validation::{self, BatchBand, COVERAGE, Kind};
use serde::Serialize;

use super::how_sure;
use super::words::{RoundData, break_even, does_not_fit_line, fitting_batch, label, memory_gb};
use super::words::{round_cell, slow_down, weights_problem};

/// What demo 2 reads: the card, models and assumptions, the planner's terms, α, γ, and
/// the grid.
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
    /// The acceptance rate.
    #[command(flatten)]
    #[serde(flatten)]
    pub alpha: Alpha,
    /// A fixed γ instead of the best one.
    #[command(flatten)]
    #[serde(flatten)]
    pub gamma: Gamma,
    /// The batches (rows) and contexts (columns).
    #[command(flatten)]
    #[serde(flatten)]
    pub grid: Grid,
}

/// The script's batch sizes (rows).
pub const BATCHES: [u64; 6] = [1, 16, 64, 128, 256, 512];
/// The script's context lengths (columns).
pub const CTXS: [u64; 3] = [512, 4096, 32768];

impl Inputs {
    /// The scenario at α, batch 1 and the lecture's context (each cell sets its own), and
    /// what prices its passes.
    pub fn setup(&self) -> Setup {
        let drafter = Some((&self.drafter, &self.draft_terms));
        self.at_alpha(self.terms.setup(&self.roofline, drafter))
    }

    /// `setup` at demo 2's α.
    fn at_alpha(&self, setup: Setup) -> Setup {
        Setup {
            scenario: Scenario {
                alpha: self.alpha.alpha,
                ..setup.scenario
            },
            ..setup
        }
    }
}

impl lecture_kit::Inputs for Inputs {
    fn check(&self) -> Result<(), String> {
        self.grid.check()?;
        let batch = self.grid.batches_or(&BATCHES)[0];
        let ctxs = self.grid.ctxs_or(&CTXS);
        let drafter = Some((&self.drafter, &self.draft_terms));
        self.terms.check(&self.roofline, drafter, batch, &ctxs)
    }

    /// The default setup, however spelled: the same scenario, pricing and grid, no fixed γ.
    fn is_default(&self) -> bool {
        let d = lecture_kit::inputs::defaults::<Inputs>();
        let grid = |i: &Inputs| (i.grid.batches_or(&BATCHES), i.grid.ctxs_or(&CTXS));
        self.setup() == d.setup() && self.gamma.gamma.is_none() && grid(self) == grid(&d)
    }
}

/// What demo 2 computes (times in seconds).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Demo2 {
    /// The acceptance rate.
    pub alpha: f64,
    /// The contexts (columns).
    pub ctxs_tokens: Vec<u64>,
    /// One row per batch: a round per context, or none where the KV cache does not fit.
    pub grid: Vec<GridRow>,
    /// The worked example: γ + 1 tokens (5 at the script's γ = 4) at the grid's largest
    /// batch and shortest context (512 and 512 in the script), or none where that does
    /// not fit.
    pub example: Option<Example>,
    /// The largest batch at each context.
    pub max_batch: Vec<u64>,
    /// The critical batch in tokens, at the weight format's factors the passes are priced at
    /// (`planner::Plan::deployment`).
    pub critical_tokens: f64,
}

/// One row of the grid.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GridRow {
    /// The batch size.
    pub batch: u64,
    /// The round at each context, `None` where the batch does not fit.
    pub cells: Vec<Option<RoundData>>,
}

/// A verification of 5 tokens beside a plain step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Example {
    /// A plain decode step.
    pub t_base_s: f64,
    /// A pass over 5 tokens per sequence.
    pub t_verify_s: f64,
    /// Whether that pass is limited by its matrix products.
    pub compute_bound: bool,
}

/// 演示 2: the best γ and speedup over batch size × context; when verification stops being free.
pub fn run(out: &mut Out, i: &Inputs) -> Result<(), Error> {
    let setup = i.setup();
    let s = setup.scenario;
    let p = setup.pricing();
    let g = i.gamma.name();
    out.header(format!(
        "演示 2：批大小 × 上下文长度（α = {}）——每格：{g}、加速比；\"放不下\"= KV 超出 {} GB 显存",
        py(s.alpha),
        memory_gb(&s)
    ));
    let ctxs = i.grid.ctxs_or(&CTXS);
    let batches = i.grid.batches_or(&BATCHES);
    let max_batch = try_map(&ctxs, |&ctx| fitting_batch(&s, ctx))?;
    let mut rows = Vec::new();
    let mut grid = Vec::new();
    for &b in &batches {
        let mut cells = Vec::new();
        for (&ctx, &fits) in ctxs.iter().zip(&max_batch) {
            let at = Scenario { batch: b, ctx, ..s };
            let cell = (b <= fits).then(|| round(&at, p, i.gamma.gamma));
            cells.push(cell.transpose()?);
        }
        let row = [int(b).unit("sequences")].into_iter();
        rows.push(row.chain(cells.iter().map(grid_cell)).collect());
        let cells = cells.iter().map(|c| c.as_ref().map(RoundData::from));
        grid.push(GridRow {
            batch: b,
            cells: cells.collect(),
        });
    }
    let mut headers = vec!["批大小".to_string()];
    headers.extend(ctxs.iter().map(|c| format!("上下文 {c}")));
    out.table(headers, rows)
        .id("demo2_grid")
        .caption(grid_caption(&s, g));
    out.print("（括号里是\"验证 γ+1 个 token 的时间 / 普通 decode 一步\"。）");
    if let Some(line) = how_sure_line(&i.terms, &s, &batches)? {
        out.print(line);
    }
    if let Some(line) = thin_line(i, &grid, &ctxs)? {
        out.print(line);
    }
    // The grid's hardest corner: its largest batch at its shortest context (the
    // script's 512 and 512).
    let example = print_example(
        out,
        &Setup {
            scenario: Scenario {
                batch: batches.iter().copied().max().unwrap_or(512),
                ctx: ctxs.iter().copied().min().unwrap_or(512),
                ..s
            },
            ..setup
        },
        example_tokens(i.gamma.gamma),
    )?;

    let critical_tokens = critical_tokens(&s.hw, &setup.plan.deployment(&s)?)?;
    out.observations([
        what_if(summary(&s, &ctxs, &max_batch, &grid, critical_tokens)?),
        seed(
            "批小时验证几乎免费，加速约 1.9 倍；批大到\"批 × (γ+1)\"超过临界批大小（H100 上按 60% / 80% 的效率约 220 个 token，\
             第 1 讲 §3.6），验证的时间就按 γ+1 增长，最优 γ 变小：批 128 时 1.6 倍、256 时 1.4 倍、512 时只剩 1.1 倍。",
        ),
        seed(
            "长上下文时，显存先装不下大批（32K 上下文最多十几个序列），decode 一直受带宽限制，验证始终几乎免费——\
             投机解码在长上下文、小批的场景里最值钱。同一批大小下长上下文的加速略低，是因为草稿模型也要读自己的 KV，c 变大了。",
        ),
        always(
            "所以\"批处理\"和\"投机\"在抢同一种资源——闲着的算力。连续批处理把批做大以后，留给投机解码的空间就少了；\
             服务系统要按负载决定用不用、草稿多长（vLLM、SGLang 都支持按批大小调整或关闭投机）。",
        ),
    ]);
    out.figure(batch_figure(i, &ctxs, &max_batch)?);
    out.data(Demo2 {
        alpha: s.alpha,
        ctxs_tokens: ctxs,
        grid,
        example,
        max_batch,
        critical_tokens,
    });
    Ok(())
}

/// Under the profiles fitted on published rows: how sure the grid's speedups are, as the
/// 80% interval of each batch band the grid spans (`how_sure`); `None` otherwise, or when
/// no band has rows enough.
fn how_sure_line(terms: &Terms, s: &Scenario, batches: &[u64]) -> Result<Option<String>, Error> {
    if !how_sure::judged(terms) {
        return Ok(None);
    }
    let mut bands: Vec<(BatchBand, u64)> = Vec::new();
    for &b in batches {
        if !bands.iter().any(|&(band, _)| band == BatchBand::of(b)) {
            bands.push((BatchBand::of(b), b));
        }
    }
    let mut each = Vec::new();
    for (band, b) in bands {
        if let Some(x) = how_sure::interval(s, Kind::Speedup, b)? {
            each.push(format!("批 {} {}", band.label(), how_sure::factors(&x)));
        }
    }
    Ok((!each.is_empty()).then(|| {
        format!(
            "{}（{:.0}% 区间，见演示 1、演示 5）：各格的加速比是预测的 {}。",
            how_sure::OPENING,
            COVERAGE * 100.0,
            each.join("、")
        )
    }))
}

/// Under a profile fitted on published rows: each constant that only one or two
/// publishers' rows fix (`planner::flags::Terms::thin_ends`) that moves a speedup of the
/// grid's first context by more than `FIXES_BY` between the smallest and the largest value
/// the leave-one-publisher-out folds fit it at, said at the batch it moves most.
fn thin_line(i: &Inputs, grid: &[GridRow], ctxs: &[u64]) -> Result<Option<String>, Error> {
    let Some(&ctx) = ctxs.first() else {
        return Ok(None);
    };
    // The batches of the grid that fit at its first context.
    let fitting: Vec<u64> = grid
        .iter()
        .filter(|r| r.cells.first().is_some_and(Option::is_some))
        .map(|r| r.batch)
        .collect();
    let drafter = Some((&i.drafter, &i.draft_terms));
    let mut clauses = Vec::new();
    for ends in i.terms.thin_ends(&i.roofline, drafter)? {
        let speedup = |end: Setup, batch: u64| -> Result<f64, Error> {
            let setup = i.at_alpha(end);
            let at = Scenario {
                batch,
                ctx,
                ..setup.scenario
            };
            Ok(round(&at, setup.pricing(), i.gamma.gamma)?.speedup)
        };
        // The batch the constant moves most: (factor, batch, low, high).
        let mut most: Option<(f64, u64, f64, f64)> = None;
        for &b in &fitting {
            let low = speedup(ends.low, b)?;
            let high = speedup(ends.high, b)?;
            let by = validation::move_factor(low, high)?;
            if most.is_none_or(|m| by > m.0) {
                most = Some((by, b, low, high));
            }
        }
        let moved = most
            .filter(|m| m.0 > validation::FIXES_BY)
            .map(|(_, b, low, high)| {
                let x = how_sure::speedups(low, high);
                format!("批 {b}、上下文 {ctx} 时加速 {x}")
            });
        clauses.extend(how_sure::thin_clause(&ends, moved.as_slice()));
    }
    Ok(how_sure::thin_sentence("这些加速比", &clauses))
}

/// A cell of the grid: its round ([`round_cell`]), or "放不下" where the batch does not fit.
fn grid_cell(cell: &Option<decode_lab::Round>) -> lecture_kit::Value {
    cell.as_ref().map_or(missing("放不下"), round_cell)
}

/// The grid's caption.
fn grid_caption(s: &Scenario, gamma: &str) -> String {
    format!(
        "演示 2：{gamma} 与加速比（{}，α = {}）",
        label(s),
        py(s.alpha)
    )
}

/// Tokens the worked example verifies per sequence: the script's 5 (γ = 4), or γ + 1 of a
/// fixed `--gamma`.
fn example_tokens(gamma: Option<u32>) -> u64 {
    gamma.map_or(5, |g| u64::from(g) + 1)
}

/// The worked example at `e`'s batch and context: a plain step and a verification of
/// `tokens` per sequence, or that the batch does not fit.
fn print_example(out: &mut Out, setup: &Setup, tokens: u64) -> Result<Option<Example>, Error> {
    let e = &setup.scenario;
    let p = setup.pricing();
    let batch = e.batch;
    let ctx = e.ctx;
    if batch > fitting_batch(e, ctx)? {
        let on = super::words::cards(e);
        let tgt = e.target.name;
        out.print(format!(
            "\n例：批 {batch}、上下文 {ctx}：{tgt} 在{on} 上放不下这么大的批。"
        ));
        return Ok(None);
    }
    let base = p.target_pass_time(e, 1)?;
    let ver = p.target_pass_time(e, tokens)?;
    let compute_bound = setup.plan.target_pass_cost(e, tokens)?.is_compute_bound();
    let bound = match compute_bound {
        true => "已经让矩阵乘法变成算力受限",
        false => "仍然受带宽限制",
    };
    out.print(format!(
        "\n例：批 {batch}、上下文 {ctx}：普通一步 {}，一次验证 {tokens} 个 token {}（{} 倍）——批 × {tokens} = {} 个 token {bound}。",
        time(base),
        time(ver),
        ratio(ver / base, 1),
        batch * tokens
    ));
    Ok(Some(Example {
        t_base_s: base,
        t_verify_s: ver,
        compute_bound,
    }))
}

/// The observation computed for the setup: the critical batch, the speedup at the first
/// context for each batch, how many sequences fit at each context.
fn summary(
    s: &Scenario,
    ctxs: &[u64],
    max_batch: &[u64],
    grid: &[GridRow],
    critical_tokens: f64,
) -> Result<String, Error> {
    if let Some(line) = weights_problem(s)? {
        return Ok(format!("本配置（{}）：{line}", label(s)));
    }
    let at_c0 = grid.iter().filter_map(|row| {
        let r = row.cells.first()?.as_ref()?;
        let x = r.speculate.then(|| slow_down(r.speedup).to_string());
        Some(format!(
            "批 {} {}",
            row.batch,
            x.as_deref().unwrap_or("不投机")
        ))
    });
    let at_c0: Vec<String> = at_c0.collect();
    let c0 = ctxs[0];
    let at_c0 = match at_c0.is_empty() {
        true => format!("上下文 {c0} 时所列的批都放不下"),
        false => format!("上下文 {c0} 时 {}", at_c0.join("、")),
    };
    let fits = ctxs.iter().zip(max_batch);
    let fits = join(
        fits.map(|(c, m)| format!("上下文 {c} 最多 {m} 个序列")),
        "、",
    );
    let alpha = py(s.alpha);
    Ok(format!(
        "本配置（{}，α = {alpha}）：临界批大小约 {critical_tokens:.0} 个 token；{at_c0}；{fits}。",
        label(s)
    ))
}

/// Figure `batch.svg`: the best speedup against batch size (log axis, 1 to 8192, two
/// batches per doubling) for each context; each curve ends at the largest batch that fits,
/// the batches beyond are a band in its colour labelled "放不下".
pub fn batch_figure(i: &Inputs, ctxs: &[u64], max_batch: &[u64]) -> Result<Figure, Error> {
    const MAX: f64 = 8192.0 * 1.25;
    let setup = i.setup();
    let s = setup.scenario;
    let p = setup.pricing();
    let sampled = log_sweep(8192, 2)?;
    let x = Axis::log("批大小（对数坐标）").range(0.8, MAX);
    let mut panel = Panel::new("", x, Axis::linear("最优加速比").times());
    for (k, (&ctx, &fits)) in ctxs.iter().zip(max_batch).enumerate() {
        let point = |b: u64| {
            let at = Scenario { batch: b, ctx, ..s };
            Ok((b as f64, round(&at, p, i.gamma.gamma)?.speedup))
        };
        let series = Series::try_line(format!("上下文 {ctx}"), cut_at(&sampled, fits), point);
        panel.series.push(series?);
        if fits < 8192 {
            let label = format!("上下文 {ctx}：批 > {fits} 放不下");
            panel
                .regions
                .push(Region::new(fits.max(1) as f64, MAX, label, k));
        }
    }
    break_even(&mut panel, || does_not_fit_line(&s));
    let title = format!("最优加速比 vs 批大小（{}，α = {}）", label(&s), py(s.alpha));
    Ok(Figure::new(title, vec![panel]).id("batch"))
}
