//! Demo 3: tree verification — how much more a tree of draft candidates accepts than a
//! chain on the toy model, and what that buys on the accelerator at batch 1 and 32;
//! figure `trees.svg`.

use decode_lab::{Draft, Scenario, TreeRound, tree_accept_lengths, tree_speedup};
use lecture_kit::figure::RefLine;
use lecture_kit::{Axis, Block, Cell, Column, Error, Figure, Panel, Series, Table};
use llm_math::max_batch;
use serde::Serialize;

use super::setup::{Input, Setup, percent};
use super::text::{DEMO3_COST, DEMO3_EAGLE, DEMO3_TREES, default_only};
use super::toy_model::{self, DraftRanks};

/// Demo 3's draft shapes, in table order: per-level top-k (`[1; γ]` is a chain of γ).
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
/// Demo 3's batch sizes on the accelerator.
pub const DEMO3_BATCHES: [u64; 2] = [1, 32];
/// Demo 3's context length on the accelerator.
pub const DEMO3_CTX: u64 = 1024;
/// Cost of drafting one tree level, as a fraction of a target decode step (an EAGLE-style
/// one-layer draft).
pub const DEMO3_DRAFT_COST: f64 = 0.05;
/// The draft ranks demo 3 reports on: "top 1/2/4/8".
pub const DEMO3_TOP_K: [u32; 4] = [1, 2, 4, 8];
/// The setup inputs demo 3 reads (the acceptance comes from the toy model, not α; the
/// draft is the toy model's, not `--draft`).
pub const READS: [Input; 2] = [Input::Hw, Input::Target];

/// The figures demo 3 prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Demo3 {
    /// Context on the accelerator, tokens.
    pub ctx_tokens: u64,
    /// Batches on the accelerator.
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
    /// Fraction of positions where the target's token is in the draft's top k, for each
    /// k of [`DEMO3_TOP_K`].
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
    /// Speedup on the accelerator at each batch of [`DEMO3_BATCHES`]; `None` where the
    /// target does not fit at that batch.
    pub speedup: Vec<Option<f64>>,
}

/// Computes demo 3: acceptance of every draft shape for both drafts (on the toy model),
/// and its speedup on `setup`'s accelerator and target.
pub fn figures(setup: &Setup) -> Result<Demo3, Error> {
    from_ranks(setup, &toy_model::ranks()?)
}

/// [`figures`] from ranks already computed.
pub fn from_ranks(setup: &Setup, ranks: &[DraftRanks]) -> Result<Demo3, Error> {
    let decode_lab::Scenario { hw, target, .. } = &setup.base;
    let fits = max_batch(target, hw, DEMO3_CTX)?;
    let drafts = ranks
        .iter()
        .map(|d| {
            let all: Vec<u32> = d.ranks.iter().flatten().copied().collect();
            let top_k_fraction = DEMO3_TOP_K
                .iter()
                .map(|&k| all.iter().filter(|&&r| r < k).count() as f64 / all.len() as f64)
                .collect();
            let shapes = DEMO3_SHAPES
                .iter()
                .map(|&br| {
                    let acc = tree_accept_lengths(&d.ranks, br)?;
                    let tau = acc.tau();
                    let speedup = DEMO3_BATCHES
                        .iter()
                        .map(|&b| {
                            if b > fits {
                                return Ok(None);
                            }
                            let depth = br.len() as u64;
                            let scenario = Scenario {
                                draft: Draft::FixedCost(DEMO3_DRAFT_COST),
                                ..setup.scenario(b, DEMO3_CTX, setup.base.alpha)
                            };
                            let tree = TreeRound {
                                tau,
                                depth,
                                nodes: acc.nodes,
                            };
                            let s = tree_speedup(&scenario, &tree)?;
                            Ok(Some(s))
                        })
                        .collect::<Result<_, Error>>()?;
                    Ok(ShapeFigures {
                        label: shape_label(br),
                        branching: br.to_vec(),
                        nodes: acc.nodes,
                        tau,
                        speedup,
                    })
                })
                .collect::<Result<_, Error>>()?;
            Ok(DraftFigures {
                name: d.name,
                top_k_fraction,
                shapes,
            })
        })
        .collect::<Result<_, Error>>()?;
    Ok(Demo3 {
        ctx_tokens: DEMO3_CTX,
        batches: DEMO3_BATCHES.to_vec(),
        draft_cost_per_level: DEMO3_DRAFT_COST,
        top_k: DEMO3_TOP_K.to_vec(),
        drafts,
    })
}

/// The table's name for a shape: "链 γ=4" for a chain, "树 4×2×2×1" for a tree.
pub fn shape_label(branching: &[u32]) -> String {
    if branching.iter().all(|&k| k == 1) {
        format!("链 γ={}", branching.len())
    } else {
        let levels: Vec<String> = branching.iter().map(u32::to_string).collect();
        format!("树 {}", levels.join("×"))
    }
}

/// Demo 3 as blocks: header, per draft its top-k line and table, the footnote,
/// observations, the figure.
pub fn blocks(setup: &Setup, d: &Demo3) -> Vec<Block> {
    let decode_lab::Scenario { hw, target, .. } = &setup.base;
    let mut blocks = vec![Block::Header(
        "演示 3：树形验证——每层取草稿的前 k 名，一次验证整棵树（贪心解码）".into(),
    )];
    let ks: Vec<String> = DEMO3_TOP_K.iter().map(u32::to_string).collect();
    for (i, draft) in d.drafts.iter().enumerate() {
        let fractions: Vec<String> = draft
            .top_k_fraction
            .iter()
            .map(|f| format!("{f:.2}"))
            .collect();
        blocks.push(Block::Text(format!(
            "\n草稿：{}；正确答案在草稿的前 {} 名里的比例：{}",
            draft.name,
            ks.join("/"),
            fractions.join(" / ")
        )));
        let mut columns = vec![
            Column::text("草稿形状"),
            Column::number("每轮验证的草稿 token", "tokens"),
            Column::number("τ = 每轮产出的 token", "tokens"),
        ];
        for (k, b) in DEMO3_BATCHES.iter().enumerate() {
            let header = if k == 0 {
                format!("{} 加速 批 {b}", hw.name)
            } else {
                format!("批 {b}")
            };
            columns.push(Column::number(header, "×"));
        }
        let mut table = Table::new(
            format!("demo3_draft{}", i + 1),
            format!(
                "演示 3：草稿「{}」的各种形状（{}、{}、上下文 {DEMO3_CTX}）",
                draft.name, hw.name, target.name
            ),
            columns,
        );
        for sf in &draft.shapes {
            let mut row = vec![
                Cell::text(sf.label.clone()),
                Cell::int(sf.nodes as i64),
                Cell::number(format!("{:.2}", sf.tau), sf.tau),
            ];
            row.extend(sf.speedup.iter().map(|s| match s {
                Some(s) => Cell::number(format!("{s:.2}×"), *s),
                None => Cell::missing("放不下", 1),
            }));
            table = table.row(row);
        }
        blocks.push(Block::Table(table));
    }
    blocks.push(Block::Text(format!(
        "\n（换算到 {hw} 时：目标 = {tgt}、上下文 {ctx}；草稿每层的代价假设为目标一步的 {cost}（EAGLE 式的单层草稿），\
         树有几层就草稿几次；验证 = 一次送进\"节点数 + 1\"个 token。）",
        hw = hw.name,
        tgt = target.name,
        ctx = DEMO3_CTX,
        cost = percent(DEMO3_DRAFT_COST),
    )));
    let observations = if setup.seed_wording_holds(&READS) {
        vec![
            DEMO3_TREES.to_string(),
            DEMO3_COST.to_string(),
            DEMO3_EAGLE.to_string(),
        ]
    } else {
        vec![
            DEMO3_TREES.to_string(),
            summary(setup, d),
            default_only(DEMO3_COST),
            DEMO3_EAGLE.to_string(),
        ]
    };
    blocks.push(Block::Observations(observations));
    blocks.push(Block::Figure(trees_figure(setup, d)));
    blocks
}

/// The observation computed for a non-default setup: each draft's fastest shape at each
/// batch of [`DEMO3_BATCHES`].
fn summary(setup: &Setup, d: &Demo3) -> String {
    let nothing_fits = d.drafts.iter().all(|d| {
        d.shapes
            .iter()
            .all(|s| s.speedup.iter().all(Option::is_none))
    });
    let mut summary = format!(
        "本配置（一块 {}、目标 {}）：",
        setup.base.hw.name, setup.base.target.name
    );
    if nothing_fits {
        summary.push_str(&setup.does_not_fit_line());
        return summary;
    }
    let parts: Vec<String> = d
        .drafts
        .iter()
        .map(|d| {
            let best: Vec<String> = DEMO3_BATCHES
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let fastest = d
                        .shapes
                        .iter()
                        .filter_map(|s| s.speedup[i].map(|v| (v, s)))
                        .max_by(|a, b| a.0.total_cmp(&b.0))
                        .map_or("放不下".to_string(), |(v, s)| {
                            format!("{} {v:.2}×", s.label)
                        });
                    format!("批 {b} 最快是 {fastest}")
                })
                .collect();
            format!("草稿「{}」{}", d.name, best.join("，"))
        })
        .collect();
    summary.push_str(&parts.join("；"));
    summary.push('。');
    summary
}

/// Figure `trees.svg`: dot plots over the draft shapes — τ of each draft (top panel),
/// then the speedup of each draft at each batch of [`DEMO3_BATCHES`] on one shared scale,
/// with the 1.0× break-even line. A batch at which the target does not fit says so in words.
pub fn trees_figure(setup: &Setup, d: &Demo3) -> Figure {
    let labels: Vec<String> = DEMO3_SHAPES.iter().map(|b| shape_label(b)).collect();
    let axis = || Axis::categories("草稿形状", labels.clone());
    let mut tau = Panel::new(
        "τ = 每轮产出的 token（玩具模型上实测的接受长度）",
        axis(),
        Axis::linear("τ（token）"),
    );
    for draft in &d.drafts {
        let points = draft
            .shapes
            .iter()
            .enumerate()
            .map(|(i, s)| (i as f64, s.tau))
            .collect();
        tau.series.push(Series::dots(draft.name, points));
    }
    let mut panels = vec![tau];
    // One speedup scale for every batch, so that the panels compare at a glance; it
    // always shows 1×, the break-even line.
    let (lo, hi) = d
        .drafts
        .iter()
        .flat_map(|d| d.shapes.iter().flat_map(|s| s.speedup.iter().flatten()))
        .fold((1.0f64, 1.0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let pad = ((hi - lo) * 0.06).max(0.05);
    let speedup_axis = Axis::linear("加速比")
        .times()
        .range((lo - pad).max(0.0), hi + pad);
    for (k, b) in DEMO3_BATCHES.iter().enumerate() {
        let mut panel = Panel::new(
            format!(
                "批 {b}：{} 上的加速比（目标 {}）",
                setup.base.hw.name, setup.base.target.name
            ),
            axis(),
            speedup_axis.clone(),
        );
        for draft in &d.drafts {
            let points = draft
                .shapes
                .iter()
                .enumerate()
                .filter_map(|(i, s)| s.speedup[k].map(|v| (i as f64, v)))
                .collect();
            panel.series.push(Series::dots(draft.name, points));
        }
        if panel.has_points() {
            panel.hlines.push(RefLine {
                y: 1.0,
                label: "1.0×：不投机".into(),
            });
        } else {
            panel.message = Some(format!(
                "批 {b} 放不下：{} 在一块 {} 上装不下 {b} 个上下文 {DEMO3_CTX} 的序列。",
                setup.base.target.name, setup.base.hw.name
            ));
        }
        panels.push(panel);
    }
    Figure {
        id: "trees".into(),
        title: format!(
            "树形验证：τ 与 {} 上的加速比（目标 {}）",
            setup.base.hw.name, setup.base.target.name
        ),
        panels,
    }
}
