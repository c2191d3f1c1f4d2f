//! Demo 3: tree verification — how much more a tree of draft candidates accepts than a
//! chain on the toy model, and what that buys on the setup's cards at batch 1 and 32;
//! figure `trees.svg`.

use decode_lab::{Draft, Scenario, TreeShape, tree_accept_lengths, tree_speedup};
use lecture_kit::value::{self, fixed, join, percent};
use lecture_kit::{Axis, Error, Figure, Out, Panel, Series, always, seed, try_map, what_if};
use serde_json::json;

use super::round::{TreeReport, break_even, fastest};
use super::setup::{Input, Setup};
use super::text::{DEMO3_COST, DEMO3_EAGLE, DEMO3_TREES};
use super::toy_model;

pub use super::toy_model::{DEMO3_SHAPES, shape_label};

/// The setup inputs demo 3 reads: the cards (and their dtypes, TP, efficiencies, overheads)
/// and the target; the acceptance is the toy model's, the draft a fixed-cost head.
pub const READS: &[Input] = &[Input::Hw, Input::Target, Input::Assumptions];
/// The batch sizes on the cards.
pub const DEMO3_BATCHES: [u64; 2] = [1, 32];
/// The context on the cards, and the cost of one draft level in target steps (EAGLE-style).
const CTX: u64 = 1024;
const LEVEL_COST: f64 = 0.05;
const TOP_K: [u32; 4] = [1, 2, 4, 8];
/// The tables' first three headers.
const HEADERS: [&str; 3] = ["草稿形状", "每轮验证的草稿 token", "τ = 每轮产出的 token"];

/// 演示 3: per draft of the toy model, how often its top k holds the target's token, and each
/// shape's τ and speedup on the setup's cards (none where a batch, or the target, does not fit).
///
/// Its JSON `data`: `ctx_tokens`, `batches`, `draft_cost_per_level` (in target steps), `top_k`;
/// `drafts`, one `{name, top_k_fraction, shapes}` per draft, with one `{label, branching,
/// nodes, tau, speedup}` per shape of [`DEMO3_SHAPES`] (a speedup, or null, per batch).
pub fn run(out: &mut Out, setup: &Setup) -> Result<(), Error> {
    let (hw, tgt, cards) = (setup.hw_name(), setup.base.target.name, setup.cards());
    out.header("演示 3：树形验证——每层取草稿的前 k 名，一次验证整棵树（贪心解码）");
    // The memory model holds no batch (0) where the target's weights alone do not fit.
    let (target_fits, fits) = (setup.base.memory()?.target_fits(), setup.max_batch(CTX)?);
    let at = |b| Scenario {
        draft: Draft::FixedCost(LEVEL_COST),
        ..setup.scenario(b, CTX, setup.base.alpha)
    };
    let [b1, b32] = DEMO3_BATCHES;
    let mut headers = HEADERS.map(String::from).to_vec();
    headers.extend([format!("{hw} 加速 批 {b1}"), format!("批 {b32}")]);
    let (mut drafts, mut measured, mut found) = (Vec::new(), Vec::new(), Vec::new());
    for (i, d) in toy_model::shared()?.ranks.iter().enumerate() {
        let (name, top_k) = (d.name, TOP_K.map(|k| d.top_k_fraction(k)));
        let fractions = join(top_k.map(|f| fixed(f, 2)), " / ");
        out.print(format!(
            "\n草稿：{name}；正确答案在草稿的前 1/2/4/8 名里的比例：{fractions}"
        ));
        let shapes = try_map(DEMO3_SHAPES, |br| -> Result<TreeReport, Error> {
            let tree = TreeShape::new(br)?;
            let acc = tree_accept_lengths(&d.ranks.concat(), &tree)?;
            let x = |b| (b <= fits).then(|| tree_speedup(&at(b), &tree, acc.tau()));
            let speedup = try_map(DEMO3_BATCHES, |b| x(b).transpose())?;
            Ok(TreeReport::new(br, &acc, speedup))
        })?;
        let caption = format!("演示 3：草稿「{name}」的各种形状（{hw}、{tgt}、上下文 {CTX}）");
        let table = out.table(headers.clone(), shapes.iter().map(TreeReport::row));
        table.id(format!("demo3_draft{}", i + 1)).caption(caption);
        // The draft's fastest shape at each batch.
        let at_batch = DEMO3_BATCHES.iter().enumerate().map(|(k, b)| {
            let best = fastest(shapes.iter().map(|s| (&s.label, s.speedup[k])));
            let best = best.map(|(l, x)| format!("{l} {}", value::speedup(x)));
            format!("批 {b} 最快是 {}", best.as_deref().unwrap_or("放不下"))
        });
        found.push(format!("草稿「{name}」{}", join(at_batch, "，")));
        drafts.push(json!({"name": name, "top_k_fraction": top_k, "shapes": shapes}));
        measured.push((name, shapes));
    }
    let cost = percent(LEVEL_COST);
    out.print(format!("\n（换算到 {hw} 时：目标 = {tgt}、上下文 {CTX}；草稿每层的代价假设为目标一步的 {cost}（EAGLE 式的单层草稿），树有几层就草稿几次；验证 = 一次送进\"节点数 + 1\"个 token。）"));
    let found = match target_fits {
        true => format!("{}。", found.join("；")),
        false => setup.does_not_fit_line(),
    };
    let summary = format!("本配置（{cards}、目标 {tgt}）：{found}");
    let (trees, eagle) = (always(DEMO3_TREES), always(DEMO3_EAGLE));
    out.observations([trees, what_if(summary), seed(DEMO3_COST), eagle]);
    out.figure(trees_figure(setup, &measured));
    let data = json!({"ctx_tokens": CTX, "batches": DEMO3_BATCHES, "draft_cost_per_level": LEVEL_COST,
        "top_k": TOP_K, "drafts": drafts});
    out.data(data);
    Ok(())
}

/// Figure `trees.svg`: dot plots over the draft shapes — each draft's τ (top panel), then
/// its speedup at batch 1 and 32 on one shared scale with the 1.0× line; a batch that does
/// not fit on the cards says so in words. `drafts`: each draft's name and its table's
/// shapes, in the order of [`DEMO3_SHAPES`].
pub fn trees_figure(setup: &Setup, drafts: &[(&str, Vec<TreeReport>)]) -> Figure {
    let (hw, tgt, cards) = (setup.hw_name(), setup.base.target.name, setup.cards());
    let axis = || Axis::categories("草稿形状", DEMO3_SHAPES.map(shape_label).to_vec());
    let dots = |y: &dyn Fn(&TreeReport) -> Option<f64>| {
        let series = drafts
            .iter()
            .map(|(name, s)| Series::category_dots(*name, s.iter().map(y)));
        series.collect::<Vec<_>>()
    };
    let title = "τ = 每轮产出的 token（玩具模型上实测的接受长度）";
    let tau = Panel::new(title, axis(), Axis::linear("τ（token）"));
    let mut panels = vec![tau.with(dots(&|s| Some(s.tau)))];
    // One speedup scale for every batch, so the panels compare at a glance; it shows 1×.
    let all = drafts.iter().flat_map(|(_, s)| s);
    let all = all.flat_map(|s| s.speedup.iter().flatten().copied());
    let y = Axis::linear("加速比").times();
    let y = y.fit(all.chain([1.0]), 0.06, 0.05);
    for (k, b) in DEMO3_BATCHES.iter().enumerate() {
        let title = format!("批 {b}：{hw} 上的加速比（目标 {tgt}）");
        let mut panel = Panel::new(title, axis(), y.clone()).with(dots(&|s| s.speedup[k]));
        let why = || format!("批 {b} 放不下：{tgt} 在{cards} 上装不下 {b} 个上下文 {CTX} 的序列。");
        break_even(&mut panel, why);
        panels.push(panel);
    }
    let title = format!("树形验证：τ 与 {hw} 上的加速比（目标 {tgt}）");
    Figure::new(title, panels).id("trees")
}
