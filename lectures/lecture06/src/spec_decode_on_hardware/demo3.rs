//! Demo 3: tree verification — how much more a tree of draft candidates accepts than a
//! chain on the toy model, and what that buys on the setup's cards at batch 1 and 32;
//! figure `trees.svg`.

use decode_lab::{Draft, Scenario, TreeRound, TreeShape, tree_accept_lengths, tree_speedup};
use lecture_kit::value::{fixed, int, label, missing, percent, speedup};
use lecture_kit::{Axis, Demo, Error, Figure, Out, Panel, Series, always, row, seed, what_if};
use serde::Serialize;

use super::round::break_even;
use super::setup::{Input, Setup};
use super::text::{DEMO3_COST, DEMO3_EAGLE, DEMO3_TREES};
use super::toy_model;

/// The setup inputs demo 3 reads: the cards (and their dtypes, TP, efficiencies, overheads)
/// and the target; the acceptance is the toy model's, the draft a fixed-cost head.
pub const READS: &[Input] = &[Input::Hw, Input::Target, Input::Assumptions];
/// The draft shapes, in table order: per-level top-k (`[1; γ]` is a chain of γ).
pub const DEMO3_SHAPES: [&[u32]; 9] = [
    &[1],
    &[1, 1],
    &[1, 1, 1, 1],
    &[1; 6],
    &[2, 2, 2],
    &[3, 3, 3],
    &[4, 2, 2, 1],
    &[8, 4, 2, 1],
    &[4, 4, 4, 4],
];
/// The batch sizes on the cards.
pub const DEMO3_BATCHES: [u64; 2] = [1, 32];
/// The context on the cards, and the cost of one draft level in target steps (EAGLE-style).
const CTX: u64 = 1024;
const LEVEL_COST: f64 = 0.05;
const TOP_K: [u32; 4] = [1, 2, 4, 8];

/// What demo 3 prints (the JSON export's `demo3`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Demo3 {
    /// Context on the cards, tokens.
    pub ctx_tokens: u64,
    /// Batches on the cards.
    pub batches: Vec<u64>,
    /// Cost of drafting one level, in target decode steps.
    pub draft_cost_per_level: f64,
    /// The k of the top-k fractions.
    pub top_k: Vec<u32>,
    /// One entry per draft.
    pub drafts: Vec<DraftFigures>,
}

/// Demo 3's figures for one draft.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DraftFigures {
    /// The draft's name as printed.
    pub name: &'static str,
    /// Fraction of positions where the target's token is in the draft's top 1, 2, 4, 8.
    pub top_k_fraction: Vec<f64>,
    /// One entry per shape of [`DEMO3_SHAPES`].
    pub shapes: Vec<ShapeFigures>,
}

/// One row of a demo 3 table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShapeFigures {
    /// The printed name, e.g. "树 4×2×2×1".
    pub label: String,
    /// Per-level top-k.
    pub branching: Vec<u32>,
    /// Draft tokens verified per round.
    pub nodes: u64,
    /// Tokens per round, 1 + mean accepted.
    pub tau: f64,
    /// Speedup at each batch of [`DEMO3_BATCHES`]; `None` where that batch does not fit.
    pub speedup: Vec<Option<f64>>,
}

/// Demo 3's figures, as [`run`] computes them.
pub fn figures(setup: &Setup) -> Result<Demo3, Error> {
    let d = lecture_kit::figures(&Demo::new(3, READS, run), setup)?;
    d.ok_or_else(|| Error::Library("demo 3 attached no figures".into()))
}

/// The table's name for a shape: "链 γ=4" for a chain, "树 4×2×2×1" for a tree.
pub fn shape_label(branching: &[u32]) -> String {
    let levels: Vec<String> = branching.iter().map(u32::to_string).collect();
    match branching.iter().all(|&k| k == 1) {
        true => format!("链 γ={}", branching.len()),
        false => format!("树 {}", levels.join("×")),
    }
}

/// 演示 3: per draft of the toy model, how often its top k holds the target's token, and each
/// shape's τ and speedup on the setup's cards (none where a batch, or the target, does not fit).
pub fn run(out: &mut Out, setup: &Setup) -> Result<(), Error> {
    let (hw, tgt, cards) = (setup.hw_name(), setup.base.target.name, setup.cards());
    out.header("演示 3：树形验证——每层取草稿的前 k 名，一次验证整棵树（贪心解码）");
    let target_fits = setup.base.memory()?.target_fits();
    let fits = target_fits
        .then(|| setup.max_batch(CTX))
        .transpose()?
        .unwrap_or(0);
    let draft = Draft::FixedCost(LEVEL_COST);
    let at = |b| Scenario {
        draft,
        ..setup.scenario(b, CTX, setup.base.alpha)
    };
    let mut drafts = Vec::new();
    for (i, d) in toy_model::shared()?.ranks.iter().enumerate() {
        let all: Vec<u32> = d.ranks.iter().flatten().copied().collect();
        let top_k_fraction =
            TOP_K.map(|k| all.iter().filter(|&&r| r < k).count() as f64 / all.len() as f64);
        let fractions = top_k_fraction.map(|f| fixed(f, 2).to_string()).join(" / ");
        let name = d.name;
        out.print(format!(
            "\n草稿：{name}；正确答案在草稿的前 1/2/4/8 名里的比例：{fractions}"
        ));
        let (mut shapes, mut rows) = (Vec::new(), Vec::new());
        for br in DEMO3_SHAPES {
            let acc = tree_accept_lengths(&d.ranks, &TreeShape::new(br)?)?;
            let (tau, depth, nodes) = (acc.tau(), br.len() as u64, acc.nodes);
            let tree = TreeRound { tau, depth, nodes };
            let x = |b| (b <= fits).then(|| tree_speedup(&at(b), &tree)).transpose();
            let speedup: Vec<_> = DEMO3_BATCHES.map(x).into_iter().collect::<Result<_, _>>()?;
            let cell = |s: Option<f64>| s.map_or(missing("放不下"), lecture_kit::value::speedup);
            let (n, t) = (int(nodes).unit("tokens"), fixed(tau, 2).unit("tokens"));
            rows.push(row![
                label(shape_label(br)),
                n,
                t,
                cell(speedup[0]),
                cell(speedup[1])
            ]);
            let (label, branching) = (shape_label(br), br.to_vec());
            shapes.push(ShapeFigures {
                label,
                branching,
                nodes,
                tau,
                speedup,
            });
        }
        let [b1, b32] = DEMO3_BATCHES;
        let headers = [
            "草稿形状".into(),
            "每轮验证的草稿 token".into(),
            "τ = 每轮产出的 token".into(),
            format!("{hw} 加速 批 {b1}"),
            format!("批 {b32}"),
        ];
        let caption = format!("演示 3：草稿「{name}」的各种形状（{hw}、{tgt}、上下文 {CTX}）");
        let id = format!("demo3_draft{}", i + 1);
        out.table(headers, rows).id(id).caption(caption);
        let top_k_fraction = top_k_fraction.to_vec();
        drafts.push(DraftFigures {
            name,
            top_k_fraction,
            shapes,
        });
    }
    let cost = percent(LEVEL_COST);
    out.print(format!("\n（换算到 {hw} 时：目标 = {tgt}、上下文 {CTX}；草稿每层的代价假设为目标一步的 {cost}（EAGLE 式的单层草稿），树有几层就草稿几次；验证 = 一次送进\"节点数 + 1\"个 token。）"));
    // Each draft's fastest shape at each batch.
    let mut per_draft = Vec::new();
    for f in &drafts {
        let mut at = Vec::new();
        for (i, b) in DEMO3_BATCHES.iter().enumerate() {
            let speedups = f
                .shapes
                .iter()
                .filter_map(|s| Some((s.speedup[i]?, &s.label)));
            let best = speedups.max_by(|a, b| a.0.total_cmp(&b.0));
            let best = best.map_or("放不下".into(), |(v, l)| format!("{l} {}", speedup(v)));
            at.push(format!("批 {b} 最快是 {best}"));
        }
        per_draft.push(format!("草稿「{}」{}", f.name, at.join("，")));
    }
    let summary = match target_fits {
        true => format!("本配置（{cards}、目标 {tgt}）：{}。", per_draft.join("；")),
        false => format!(
            "本配置（{cards}、目标 {tgt}）：{}",
            setup.does_not_fit_line()
        ),
    };
    out.observations([
        always(DEMO3_TREES),
        what_if(summary),
        seed(DEMO3_COST),
        always(DEMO3_EAGLE),
    ]);
    let (batches, top_k) = (DEMO3_BATCHES.to_vec(), TOP_K.to_vec());
    let (ctx_tokens, draft_cost_per_level) = (CTX, LEVEL_COST);
    let d = Demo3 {
        ctx_tokens,
        batches,
        draft_cost_per_level,
        top_k,
        drafts,
    };
    out.figure(trees_figure(setup, &d));
    out.data(d);
    Ok(())
}

/// Figure `trees.svg`: dot plots over the draft shapes — each draft's τ (top panel), then
/// its speedup at batch 1 and 32 on one shared scale with the 1.0× line; a batch that does
/// not fit on the cards says so in words.
pub fn trees_figure(setup: &Setup, d: &Demo3) -> Figure {
    let (hw, tgt, cards) = (setup.hw_name(), setup.base.target.name, setup.cards());
    let labels: Vec<String> = DEMO3_SHAPES.iter().map(|b| shape_label(b)).collect();
    let axis = || Axis::categories("草稿形状", labels.clone());
    let dots = |f: &DraftFigures, y: &dyn Fn(&ShapeFigures) -> Option<f64>| {
        let points = f
            .shapes
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((i as f64, y(s)?)));
        Series::dots(f.name, points.collect())
    };
    let title = "τ = 每轮产出的 token（玩具模型上实测的接受长度）";
    let tau = Panel::new(title, axis(), Axis::linear("τ（token）"));
    let mut panels = vec![tau.with(d.drafts.iter().map(|f| dots(f, &|s| Some(s.tau))))];
    // One speedup scale for every batch, so the panels compare at a glance; it shows 1×.
    let shapes = d.drafts.iter().flat_map(|f| &f.shapes);
    let all = shapes.flat_map(|s| s.speedup.iter().flatten());
    let (lo, hi) = all.fold((1.0f64, 1.0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let pad = ((hi - lo) * 0.06).max(0.05);
    for (k, b) in DEMO3_BATCHES.iter().enumerate() {
        let y = Axis::linear("加速比")
            .times()
            .range((lo - pad).max(0.0), hi + pad);
        let title = format!("批 {b}：{hw} 上的加速比（目标 {tgt}）");
        let mut panel = Panel::new(title, axis(), y);
        panel.series = d
            .drafts
            .iter()
            .map(|f| dots(f, &|s| s.speedup[k]))
            .collect();
        let why = || format!("批 {b} 放不下：{tgt} 在{cards} 上装不下 {b} 个上下文 {CTX} 的序列。");
        break_even(&mut panel, why);
        panels.push(panel);
    }
    let title = format!("树形验证：τ 与 {hw} 上的加速比（目标 {tgt}）");
    Figure::new(title, panels).id("trees")
}
