//! Demo 4 (opt-in, not in the original script): speculative decoding for real on the toy
//! model — the draft proposes a chain or a tree, the target verifies it in one pass, both
//! caches roll back to the accepted path — with the measured τ beside demo 3's estimate;
//! figure `measured.svg`.

pub mod greedy;

use std::sync::{Arc, Mutex};

use decode_lab::{SpecStats, TreeShape};
use lecture_kit::value::{boolean, fixed, label};
use lecture_kit::{Axis, Error, Figure, Out, Panel, Series, always, row};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::demo3::toy_model::{self, Kept, ModelFlag, ToyModel, ToyRun};
use super::demo3::{SHAPES, shape_label};

/// Prompts demo 4 runs speculative decoding on: the first 16 of demo 3's 64, so the demo
/// takes seconds, not a minute (the test suite checks all 64).
pub const DEMO4_PROMPTS: usize = 16;
/// The column of the draft's shape.
const SHAPE: &str = "草稿形状";
/// The column saying whether the output is the target's own.
const IDENTICAL: &str = "与目标模型逐字相同";
/// The column and legend of demo 3's rank-based τ, computed here on demo 4's prompts (not
/// demo 3's 64, so it differs a little from demo 3's table).
const ESTIMATE: &str = "演示 3 的估计 τ（同这些提示）";

/// The figures demo 4 prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Demo4 {
    /// Prompts decoded.
    pub prompts: usize,
    /// Tokens generated per prompt.
    pub n_new: usize,
    /// One entry per draft.
    pub drafts: Vec<MeasuredDraft>,
}

/// Demo 4's figures for one draft.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasuredDraft {
    /// The draft's name as printed.
    pub name: &'static str,
    /// One entry per shape of [`SHAPES`] it proposes (a head: as deep as its levels).
    pub shapes: Vec<MeasuredShape>,
}

/// Demo 4's figures for one draft shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredShape {
    /// The printed name, e.g. "树 4×2×2×1".
    pub label: String,
    /// Per-level top-k.
    pub branching: Vec<u32>,
    /// Draft-then-verify rounds, over all prompts.
    pub rounds: usize,
    /// Target forward passes (prefills and verifications), over all prompts.
    pub target_forwards: usize,
    /// Draft forward passes, over all prompts.
    pub draft_forwards: usize,
    /// Measured τ: tokens produced per round.
    pub tau_measured: f64,
    /// Demo 3's rank-based τ on the same sequences.
    pub tau_ranks: f64,
    /// Whether every prompt's output equals the target's own greedy output.
    pub identical_to_target: bool,
}

/// 实测: speculative decoding for real on the toy model, shared with demo 3.
pub fn run(out: &mut Out, i: &ModelFlag) -> Result<(), Error> {
    let d = shared(i.model)?;
    print(out, &d)?;
    out.data(Demo4::clone(&d));
    Ok(())
}

/// Demo 4's figures kept per model ([`shared`]).
static KEPT: Kept<Demo4> = Kept::new();

/// Demo 4's [`figures`] for `model`, decoded once per process: every later call (the
/// command line's, a test's) gets the same figures until a draft is handed in
/// ([`hand_in`]), which the next call prints.
pub fn shared(model: ToyModel) -> Result<Arc<Demo4>, Error> {
    KEPT.get_or_compute(model, || figures(toy_model::shared(model)?))
}

/// Runs speculative decoding for real — every demo 3 draft and shape on the first
/// [`DEMO4_PROMPTS`] prompts, greedy — and measures τ, next to demo 3's rank-based estimate.
/// A draft whose figures were handed in ([`hand_in`]) is not run again.
pub fn figures(run: &ToyRun) -> Result<Demo4, Error> {
    let mut drafts = Vec::new();
    for (k, ranks) in run.ranks.iter().enumerate() {
        let shapes = match handed_in(run.model, k) {
            Some(shapes) => shapes,
            None => measure_draft(run, k)?,
        };
        drafts.push(MeasuredDraft {
            name: ranks.name,
            shapes,
        });
    }
    Ok(Demo4 {
        prompts: DEMO4_PROMPTS.min(run.prompts.nrows()),
        n_new: toy_model::N_NEW,
        drafts,
    })
}

/// Demo 4's figures for draft `k` of `run` alone: every shape of [`SHAPES`] it proposes
/// decoded for real ([`greedy::run`]: a draft model's through `TreeDraft`; on the trained
/// model, the heads after them through `MedusaDraft` and `EagleDraft`), beside demo 3's
/// rank-based estimate on the same prompts. What [`figures`] runs for each draft; a page
/// runs drafts in workers of their own with it and hands the figures in.
///
/// Errors: a `k` past the drafts, or a model that refuses the shapes.
pub fn measure_draft(run: &ToyRun, k: usize) -> Result<Vec<MeasuredShape>, Error> {
    let Some(ranks) = run.ranks.get(k) else {
        return Err(Error::Library(
            format!("demo 4 has {} drafts, not a draft {k}", run.ranks.len()).into(),
        ));
    };
    let n = DEMO4_PROMPTS.min(run.prompts.nrows());
    let shapes: Vec<&[u32]> = SHAPES.into_iter().filter(|l| ranks.drafts(l)).collect();
    // The shapes side by side: each run is parallel inside its passes, and whole runs
    // keep both cores busy between them.
    shapes
        .par_iter()
        .map(|&levels| -> Result<MeasuredShape, Error> {
            let results = greedy::run(run, k, levels)?;
            let identical = results
                .iter()
                .enumerate()
                .all(|(i, (tokens, _))| run.generated.row(i).iter().eq(tokens));
            let sum = |f: fn(&SpecStats) -> usize| results.iter().map(|(_, s)| f(s)).sum::<usize>();
            let rounds = sum(|s| s.rounds);
            let generated = sum(|s| s.generated);
            Ok(MeasuredShape {
                label: shape_label(levels),
                branching: levels.to_vec(),
                rounds,
                target_forwards: sum(|s| s.target_forwards),
                draft_forwards: sum(|s| s.draft_forwards),
                tau_measured: generated as f64 / rounds as f64,
                tau_ranks: ranks.accept_within(n, &TreeShape::new(levels)?)?.tau(),
                identical_to_target: identical,
            })
        })
        .collect()
}

/// Figures of drafts measured elsewhere and handed in, by model and draft.
type HandedIn = Vec<((ToyModel, usize), Vec<MeasuredShape>)>;

static HANDED_IN: Mutex<HandedIn> = Mutex::new(Vec::new());

/// Hands in draft `k`'s figures for `model`, measured by [`measure_draft`] in another
/// process (the page's second worker), so that [`figures`] does not run it again; the
/// figures [`shared`] kept for `model` are forgotten, so the next `--demo 4` prints them.
/// The command line never hands anything in.
pub fn hand_in(model: ToyModel, k: usize, shapes: Vec<MeasuredShape>) {
    let mut given = HANDED_IN.lock().unwrap_or_else(|e| e.into_inner());
    given.retain(|(key, _)| *key != (model, k));
    given.push(((model, k), shapes));
    drop(given);
    KEPT.forget(model);
}

fn handed_in(model: ToyModel, k: usize) -> Option<Vec<MeasuredShape>> {
    let given = HANDED_IN.lock().unwrap_or_else(|e| e.into_inner());
    let found = given.iter().find(|(key, _)| *key == (model, k));
    found.map(|(_, shapes)| shapes.clone())
}

/// Prints demo 4: the header, a table per draft, the footnote, the observations, the
/// figure.
pub fn print(out: &mut Out, d: &Demo4) -> Result<(), Error> {
    out.header(format!(
        "演示 4（实测）：真的跑一遍投机解码——草稿出树、目标一次前向验证、KV cache 回滚到接受的路径（前 {} 条提示，贪心）",
        d.prompts
    ));
    for (i, draft) in d.drafts.iter().enumerate() {
        let name = draft.name;
        out.print(format!("\n草稿：{name}"));
        let rows = draft.shapes.iter().map(|r| {
            let identical = match r.identical_to_target {
                true => "是",
                false => "否",
            };
            row![
                label(r.label.clone()),
                r.rounds,
                r.target_forwards,
                r.draft_forwards,
                fixed(r.tau_measured, 2).unit("tokens"),
                fixed(r.tau_ranks, 2).unit("tokens"),
                boolean(identical, r.identical_to_target),
            ]
        });
        let headers = [
            SHAPE,
            "轮数",
            "目标前向",
            "草稿前向",
            "实测 τ",
            ESTIMATE,
            IDENTICAL,
        ];
        out.table(headers, rows)
            .id(format!("demo4_draft{}", i + 1))
            .caption(format!(
                "演示 4：草稿「{name}」实测（前 {} 条提示，各生成 {} 个 token）",
                d.prompts, d.n_new
            ))
            .left([SHAPE, IDENTICAL]);
    }
    out.print(
        "\n（实测 τ = 产出的 token 数 / 验证轮数；目标前向 = 每条提示一次预填充 + 每轮一次验证。）",
    );
    let all_identical = d
        .drafts
        .iter()
        .all(|dr| dr.shapes.iter().all(|s| s.identical_to_target));
    let lossless = if all_identical {
        "每一种形状的输出都和目标模型自己贪心解码逐字相同：投机解码是无损的——草稿只决定每轮能多走几步，不改变结果。"
    } else {
        "有的形状的输出和目标模型自己贪心解码不同（表中\"否\"）：这是实现的错误——投机解码应当无损。"
    };
    out.observations([
        always(lossless),
        always(
            "实测 τ 一般比演示 3 的估计低一些：演示 3 把每个位置都当作一轮的起点来平均，真实的一轮只能从上一轮停下的地方开始，\
             而停下的地方往往正是草稿猜错的难处；序列末尾的最后一轮也只需要几个 token。",
        ),
        always(
            "目标前向次数 = 轮数（加上预填充），树越大轮数越少；草稿前向次数 = 树的层数 × 轮数（外加追赶），\
             这就是演示 3 里\"树有几层就草稿几次\"的来历。",
        ),
    ]);
    out.figure(figure(d));
    Ok(())
}

/// Figure `measured.svg`: for each draft, the measured τ beside demo 3's rank-based τ,
/// shape by shape; more than two drafts in rows of two.
pub fn figure(d: &Demo4) -> Figure {
    let labels: Vec<String> = SHAPES.iter().map(|b| shape_label(b)).collect();
    let panels = d
        .drafts
        .iter()
        .map(|draft| {
            let mut panel = Panel::new(
                format!("草稿「{}」", draft.name),
                Axis::categories("草稿形状", labels.clone()),
                Axis::linear("τ（token / 轮）"),
            );
            // Each shape at its place among SHAPES (a head proposes only the shallower).
            let place = |s: &MeasuredShape| SHAPES.iter().position(|b| *b == s.branching);
            let pick = |f: fn(&MeasuredShape) -> f64| {
                let at = draft
                    .shapes
                    .iter()
                    .filter_map(|s| Some((place(s)? as f64, f(s))));
                at.collect()
            };
            panel
                .series
                .push(Series::dots("实测 τ", pick(|s| s.tau_measured)));
            panel
                .series
                .push(Series::dots(ESTIMATE, pick(|s| s.tau_ranks)));
            panel
        })
        .collect();
    Figure::new(
        format!(
            "演示 4：实测 τ 与演示 3 的估计（前 {} 条提示，各生成 {} 个 token）",
            d.prompts, d.n_new
        ),
        panels,
    )
    .id("measured")
    // Two drafts (the random model's) stack; the trained model's six go two abreast.
    .columns(match d.drafts.len() {
        0..=2 => 1,
        _ => 2,
    })
}
