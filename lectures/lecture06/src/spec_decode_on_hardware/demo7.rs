//! Demo 7 (opt-in, not in the original script): the drafters the lecture names, run for
//! real on the toy model — dynamic trees shaped by the draft's confidence (EAGLE-2) beside
//! demo 3's static shapes at equal node counts, trees verified losslessly at T > 0
//! (SpecInfer's multi-step speculative sampling), prompt lookup with no draft model, and
//! the target's own first layers as the draft (layer skip). τ is measured by speculative
//! decoding itself; speedups convert it to the lecture's card as demo 3 does.

use decode_lab::{
    Draft, DynamicTree, PromptLookup, Sampling, Scenario, SpecStats, TreeShape, cost_coefficient,
    prompt_lookup_generate_batch, speculative_generate_batch, speculative_generate_dynamic_batch,
    tree_speedup,
};
use lecture_kit::value::{fixed, int, label, measured, parts, speedup, time};
use lecture_kit::{Axis, Error, Figure, NoInputs, Out, Panel, Series, always, row};
use quant_lab::QCFG;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;
use transformer_lab::{TransformerLM, config_like};

use super::demo3::{BATCHES, CTX, LEVEL_COST, shape_label, toy_model};

/// Prompts demo 7 decodes: demo 4's first 16.
pub const PROMPTS: usize = super::demo4::DEMO4_PROMPTS;
/// Static shapes compared with dynamic trees of as many nodes.
pub const STATIC: [&[u32]; 4] = [&[2, 2, 2], &[3, 3, 3], &[4, 2, 2, 1], &[8, 4, 2, 1]];
/// A dynamic tree's levels, and its candidates expanded per level (at least; more when the
/// budget needs them): deeper and wider than any static shape, so the rerank's budget
/// alone bounds what is verified.
pub const DYNAMIC_DEPTH: u32 = 6;
/// See [`DYNAMIC_DEPTH`].
pub const DYNAMIC_WIDTH: u32 = 8;
/// Temperatures the sampled trees run at.
pub const TEMPERATURES: [f64; 2] = [0.7, 1.0];
/// Shapes the sampled trees run.
pub const SAMPLED: [&[u32]; 3] = [&[1, 1, 1, 1], &[2, 2, 2], &[4, 2, 2, 1]];
/// Tokens a prompt-lookup or layer-skip round proposes.
pub const GAMMA: u32 = 4;

/// What demo 7 computes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Demo7 {
    /// Prompts decoded, tokens each.
    pub prompts: usize,
    /// Tokens generated per prompt.
    pub n_new: usize,
    /// Dynamic against static trees, per draft.
    pub trees: Vec<TreeRow>,
    /// Sampled trees.
    pub sampled: Vec<SampledRow>,
    /// Prompt lookup per n.
    pub lookup: Vec<LookupRow>,
    /// Measured time of one lookup, seconds (this machine): in the tables as a measured
    /// value (masked), not in the JSON figures, which stay byte-identical across runs.
    #[serde(skip)]
    pub lookup_seconds: f64,
    /// Layer skip per k.
    pub layer_skip: Vec<SkipRow>,
}

/// A static shape or a dynamic tree of as many nodes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TreeRow {
    /// The draft.
    pub draft: &'static str,
    /// "树 3×3×3" or "动态 6×8≤39".
    pub label: String,
    /// Drafted nodes per round (the budget for a dynamic tree).
    pub nodes: u64,
    /// Measured τ.
    pub tau: f64,
    /// Speedup on the card at each batch of demo 3.
    pub speedup: Vec<f64>,
    /// Whether every output equals the target's greedy one.
    pub identical: bool,
}

/// A tree sampled at T.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SampledRow {
    /// The draft.
    pub draft: &'static str,
    /// The shape.
    pub label: String,
    /// Temperature.
    pub temperature: f64,
    /// Measured τ.
    pub tau: f64,
}

/// Prompt lookup with n-grams up to `max_ngram`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LookupRow {
    /// Longest n-gram matched.
    pub max_ngram: u32,
    /// τ on greedy output.
    pub tau_greedy: f64,
    /// τ on sampled output (T = 1).
    pub tau_sampled: f64,
    /// Speedup on the card at each batch, greedy, c from the measured lookup time (a
    /// measured value, like it: not in the JSON figures).
    #[serde(skip)]
    pub speedup: Vec<f64>,
}

/// The target's first k layers as its draft.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkipRow {
    /// Toy layers drafting.
    pub layers: usize,
    /// The card target's layers drafting (the same fraction).
    pub card_layers: u64,
    /// Measured τ (greedy chain of [`GAMMA`]).
    pub tau: f64,
    /// c on the card at each batch.
    pub c: Vec<f64>,
    /// Speedup on the card at each batch.
    pub speedup: Vec<f64>,
}

fn tau(results: &[(Vec<u32>, SpecStats)]) -> f64 {
    let (rounds, generated) = results
        .iter()
        .fold((0, 0), |(r, g), (_, s)| (r + s.rounds, g + s.generated));
    generated as f64 / rounds as f64
}

/// Speedups of a round of `depth` levels and `nodes` drafted tokens at τ on demo 3's card,
/// at each batch of [`BATCHES`].
fn speedups(s: &Scenario, depth: u64, nodes: u64, tau: f64) -> Result<Vec<f64>, Error> {
    let tree = TreeShape::sized(depth, nodes)?;
    BATCHES
        .iter()
        .map(|&b| Ok(tree_speedup(&Scenario { batch: b, ..*s }, &tree, tau)?))
        .collect()
}

/// Runs every drafter on the toy model and converts τ to the lecture's card.
pub fn figures(run: &toy_model::ToyRun) -> Result<Demo7, Error> {
    let target = run.target()?;
    let n = PROMPTS.min(run.prompts.nrows());
    let prompts: Vec<Vec<u32>> = (0..n).map(|i| run.prompts.row(i).to_vec()).collect();
    let n_new = toy_model::N_NEW;
    let card = Scenario {
        draft: Draft::FixedCost(LEVEL_COST),
        ctx: CTX,
        ..Scenario::LECTURE
    };
    let drafts = run.drafts()?;
    let identical = |r: &[(Vec<u32>, SpecStats)]| {
        r.iter()
            .enumerate()
            .all(|(i, (t, _))| run.generated.row(i).iter().eq(t))
    };
    let mut trees = Vec::new();
    for draft in &drafts {
        let rows = STATIC
            .par_iter()
            .map(|&levels| -> Result<[TreeRow; 2], Error> {
                let shape = TreeShape::new(levels)?;
                let mut rng = ChaCha8Rng::seed_from_u64(0);
                let fixed = speculative_generate_batch(
                    &target,
                    draft,
                    &prompts,
                    n_new,
                    &shape,
                    Sampling::Greedy,
                    &mut rng,
                )?;
                let nodes = shape.nodes();
                // Wide enough that the rerank has `nodes` candidates to choose from.
                let width = DYNAMIC_WIDTH.max((nodes as u32).div_ceil(DYNAMIC_DEPTH));
                let dynamic = DynamicTree::new(DYNAMIC_DEPTH, width, nodes as u32)?;
                let grown =
                    speculative_generate_dynamic_batch(&target, draft, &prompts, n_new, dynamic)?;
                let row = |label, depth, r: &[(Vec<u32>, SpecStats)]| -> Result<TreeRow, Error> {
                    Ok(TreeRow {
                        draft: draft_name(draft),
                        label,
                        nodes,
                        tau: tau(r),
                        speedup: speedups(&card, depth, nodes, tau(r))?,
                        identical: identical(r),
                    })
                };
                Ok([
                    row(shape_label(levels), levels.len() as u64, &fixed)?,
                    row(
                        format!("动态 {}", dynamic.label()),
                        u64::from(DYNAMIC_DEPTH),
                        &grown,
                    )?,
                ])
            })
            .collect::<Result<Vec<_>, Error>>()?;
        trees.extend(rows.into_iter().flatten());
    }
    let mut sampled = Vec::new();
    for draft in &drafts {
        for &t in &TEMPERATURES {
            for &levels in &SAMPLED {
                let mut rng = ChaCha8Rng::seed_from_u64(349);
                let r = speculative_generate_batch(
                    &target,
                    draft,
                    &prompts,
                    n_new,
                    &TreeShape::new(levels)?,
                    Sampling::Temperature(t),
                    &mut rng,
                )?;
                sampled.push(SampledRow {
                    draft: draft_name(draft),
                    label: shape_label(levels),
                    temperature: t,
                    tau: tau(&r),
                });
            }
        }
    }
    let (lookup, lookup_seconds) = lookups(&target, &prompts, n_new, &card)?;
    let layer_skip = layer_skip(run, &target, &prompts, n_new)?;
    Ok(Demo7 {
        prompts: n,
        n_new,
        trees,
        sampled,
        lookup,
        lookup_seconds,
        layer_skip,
    })
}

fn draft_name(draft: &TransformerLM<'_>) -> &'static str {
    toy_model::DRAFT_NAMES
        .iter()
        .copied()
        .find(|n| *n == draft.name())
        .unwrap_or("草稿")
}

/// Prompt lookup for n = 1 … 4: τ greedy and sampled, and the lookup's time measured
/// here (its c on the card is that time over a target step there).
fn lookups(
    target: &TransformerLM<'_>,
    prompts: &[Vec<u32>],
    n_new: usize,
    card: &Scenario,
) -> Result<(Vec<LookupRow>, f64), Error> {
    // One lookup on a sequence as long as the longest a round sees, timed many times.
    let probe: Vec<u32> = prompts[0]
        .iter()
        .copied()
        .cycle()
        .take(prompts[0].len() + n_new)
        .collect();
    let reps = 20_000u32;
    let start = std::time::Instant::now();
    let mut found = 0usize;
    for _ in 0..reps {
        found += decode_lab::speculative::lookup_proposal(
            std::hint::black_box(&probe),
            decode_lab::speculative::MAX_NGRAM as usize,
            GAMMA as usize,
        )
        .len();
    }
    std::hint::black_box(found);
    let seconds = start.elapsed().as_secs_f64() / f64::from(reps);
    let t_base = decode_lab::target_pass_time(card, 1)?;
    let c = (seconds / t_base).min(decode_lab::MAX_DRAFT_COST);
    let mut rows = Vec::new();
    for max_ngram in 1..=decode_lab::speculative::MAX_NGRAM {
        let lookup = PromptLookup {
            max_ngram,
            gamma: GAMMA,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(349);
        let greedy = prompt_lookup_generate_batch(
            target,
            prompts,
            n_new,
            lookup,
            Sampling::Greedy,
            &mut rng,
        )?;
        let hot = prompt_lookup_generate_batch(
            target,
            prompts,
            n_new,
            lookup,
            Sampling::Temperature(1.0),
            &mut rng,
        )?;
        let at_c = Scenario {
            draft: Draft::FixedCost(c),
            ..*card
        };
        rows.push(LookupRow {
            max_ngram,
            tau_greedy: tau(&greedy),
            tau_sampled: tau(&hot),
            speedup: speedups(&at_c, u64::from(GAMMA), u64::from(GAMMA), tau(&greedy))?,
        });
    }
    Ok((rows, seconds))
}

/// The target's first k layers drafting, k = 1 … layers − 1: τ on the toy model, c and
/// the speedup on the card's target cut to the same fraction of its layers.
fn layer_skip(
    run: &toy_model::ToyRun,
    target: &TransformerLM<'_>,
    prompts: &[Vec<u32>],
    n_new: usize,
) -> Result<Vec<SkipRow>, Error> {
    let card_layers = Scenario::LECTURE.target.n_layers;
    let toy_layers = QCFG.n_layers;
    (1..toy_layers)
        .into_par_iter()
        .map(|k| -> Result<SkipRow, Error> {
            let draft = TransformerLM::new(&run.params, config_like(&QCFG, k), "前 k 层")?;
            let mut rng = ChaCha8Rng::seed_from_u64(0);
            let r = speculative_generate_batch(
                target,
                &draft,
                prompts,
                n_new,
                &TreeShape::chain(GAMMA)?,
                Sampling::Greedy,
                &mut rng,
            )?;
            let layers = ((k as u64 * card_layers) as f64 / toy_layers as f64).round() as u64;
            let layers = layers.clamp(1, card_layers - 1);
            let mut c = Vec::new();
            let mut speedup = Vec::new();
            for &b in &BATCHES {
                let s = Scenario {
                    draft: Draft::FirstLayers { layers },
                    batch: b,
                    ctx: CTX,
                    ..Scenario::LECTURE
                };
                c.push(cost_coefficient(&s)?);
                speedup.push(tree_speedup(&s, &TreeShape::chain(GAMMA)?, tau(&r))?);
            }
            Ok(SkipRow {
                layers: k,
                card_layers: layers,
                tau: tau(&r),
                c,
                speedup,
            })
        })
        .collect()
}

/// 演示 7: every drafter for real on the toy model.
pub fn run(out: &mut Out, _: &NoInputs) -> Result<(), Error> {
    let d = figures(toy_model::shared()?)?;
    print(out, &d);
    out.data(d);
    Ok(())
}

fn print(out: &mut Out, d: &Demo7) {
    out.header(format!(
        "演示 7（起草方法）：动态树、采样的树、提示查找、跳层自起草——都在玩具模型上真跑（前 {} 条提示，各生成 {} 个 token）",
        d.prompts, d.n_new
    ));
    let b = BATCHES;
    out.print(format!(
        "\n动态树（EAGLE-2：逐层扩展累计草稿概率最高的候选，再从全部候选里按累计概率留下预算个节点）与演示 3 的静态树，节点数相同（贪心；加速比按演示 3 的换算：{}，每层草稿 {} 个目标步）：",
        Scenario::LECTURE.hw.name,
        LEVEL_COST
    ));
    let rows = d.trees.iter().map(|t| {
        let mut r = row![
            t.draft,
            t.label.clone(),
            int(t.nodes as i64),
            fixed(t.tau, 2)
        ];
        r.extend(t.speedup.iter().map(|&x| speedup(x)));
        r.push(label(if t.identical { "是" } else { "否" }));
        r
    });
    let headers = [
        "草稿".to_string(),
        "树".into(),
        "节点".into(),
        "实测 τ".into(),
        format!("批 {} 加速", b[0]),
        format!("批 {} 加速", b[1]),
        "与目标逐字相同".into(),
    ];
    out.table(headers, rows).id("demo7_trees");
    out.print("\n采样（T > 0）的树：每个节点的孩子从草稿分布里独立抽，逐个按 min(1, p/q) 接受，拒绝后 p 换成 max(0, p − q) 归一化（SpecInfer 的多步投机采样；输出与目标自己采样同分布，测试用 χ² 检验）：");
    let rows = d.sampled.iter().map(|s| {
        row![
            s.draft,
            s.label.clone(),
            fixed(s.temperature, 1),
            fixed(s.tau, 2)
        ]
    });
    out.table(["草稿", "树", "温度", "实测 τ"], rows)
        .id("demo7_sampled");
    out.print(parts(
        format!(
            "\n提示查找（不要草稿模型：最后 n 个 token 上一次出现之后的 {GAMMA} 个 token 就是草稿）；查一次 {{}}（本机实测），c 即这点时间："
        ),
        [measured(time(d.lookup_seconds))],
    ));
    let rows = d.lookup.iter().map(|l| {
        let mut r = row![
            int(i64::from(l.max_ngram)),
            fixed(l.tau_greedy, 2),
            fixed(l.tau_sampled, 2)
        ];
        r.extend(l.speedup.iter().map(|&x| measured(speedup(x))));
        r
    });
    let headers = [
        "最长 n".to_string(),
        "贪心 τ".into(),
        "采样 τ（T = 1）".into(),
        format!("批 {} 加速（贪心）", b[0]),
        format!("批 {} 加速（贪心）", b[1]),
    ];
    out.table(headers, rows).id("demo7_lookup");
    out.print(format!(
        "\n跳层自起草：目标自己的前 k 层加 LM head 当草稿（链 γ = {GAMMA}，贪心）；c 和加速比按 {} 上 {} 的前同样比例的层：",
        Scenario::LECTURE.hw.name,
        Scenario::LECTURE.target.name
    ));
    let rows = d.layer_skip.iter().map(|s| {
        let mut r = row![
            int(s.layers as i64),
            int(s.card_layers as i64),
            fixed(s.tau, 2)
        ];
        r.extend(s.c.iter().map(|&c| fixed(c, 3)));
        r.extend(s.speedup.iter().map(|&x| speedup(x)));
        r
    });
    let headers = [
        "玩具的 k".to_string(),
        "卡上的层数".into(),
        "实测 τ".into(),
        format!("批 {} 的 c", b[0]),
        format!("批 {} 的 c", b[1]),
        format!("批 {} 加速", b[0]),
        format!("批 {} 加速", b[1]),
    ];
    out.table(headers, rows).id("demo7_layer_skip");
    out.observations(observations(d));
    out.figure(figure(d));
}

fn observations(d: &Demo7) -> Vec<lecture_kit::Observation> {
    let mut lines = Vec::new();
    for name in toy_model::DRAFT_NAMES {
        let own: Vec<&TreeRow> = d.trees.iter().filter(|t| t.draft == name).collect();
        let pairs: Vec<String> = own
            .chunks(2)
            .map(|p| format!("{} 个节点 {:.2} → {:.2}", p[0].nodes, p[0].tau, p[1].tau))
            .collect();
        lines.push(always(format!(
            "{name}：同样的节点数，静态树 → 动态树的 τ：{}。",
            pairs.join("，")
        )));
    }
    lines.push(always(
        "动态树按草稿自己的把握挑节点：草稿的概率若和它猜中的机会对得上（EAGLE-2 训练出的草稿头），\
         同样多的节点能接受更多；随机初始化的草稿概率很平，把握高的总是第一层的那些，于是节点数少时动态树\
         长得又宽又浅，反不如静态树。节点多了，它才往深处长。",
    ));
    lines.push(always(
        "采样的树在这个模型上几乎全被接受：随机初始化的目标和草稿在 T ≥ 0.7 时的分布都很平、彼此很像，\
         Σ min(p, q) 接近 1——接受率看的是两个分布有多像，不是草稿猜得多准。",
    ));
    if let (Some(first), Some(best)) = (
        d.lookup.first(),
        d.lookup
            .iter()
            .max_by(|a, b| a.tau_greedy.total_cmp(&b.tau_greedy)),
    ) {
        lines.push(always(format!(
            "提示查找：贪心输出的 τ 最高 {:.2}（n ≤ {}），采样输出只有 {:.2}（n ≤ 1）——随机初始化的模型贪心解码会绕圈，圈里的下一个词上文里都有；采样就不绕了。",
            best.tau_greedy, best.max_ngram, first.tau_sampled
        )));
    }
    for (i, &b) in BATCHES.iter().enumerate() {
        if let Some(best) = d
            .layer_skip
            .iter()
            .max_by(|x, y| x.speedup[i].total_cmp(&y.speedup[i]))
        {
            lines.push(always(format!(
                "跳层自起草，批 {b}：最好的是前 {} 层（卡上 {} 层），τ {:.2}、c {:.3}、加速 {:.2}×——层越多猜得越准，可每一步也越贵。",
                best.layers, best.card_layers, best.tau, best.c[i], best.speedup[i]
            )));
        }
    }
    lines
}

/// Figure `drafters.svg`: τ against nodes, static and dynamic, both drafts; layer skip's
/// speedup against k at both batches.
fn figure(d: &Demo7) -> Figure {
    let mut trees = Panel::new("τ 与节点数", Axis::log("节点"), Axis::linear("τ"));
    for name in toy_model::DRAFT_NAMES {
        for (kind, dynamic) in [("静态", false), ("动态", true)] {
            let points = d
                .trees
                .iter()
                .filter(|t| t.draft == name && t.label.starts_with("动态") == dynamic)
                .map(|t| (t.nodes as f64, t.tau))
                .collect();
            trees
                .series
                .push(Series::line(format!("{name} {kind}"), points));
        }
    }
    let mut skip = Panel::new("跳层自起草", Axis::linear("k"), Axis::linear("加速比"));
    for (i, &b) in BATCHES.iter().enumerate() {
        let points = d
            .layer_skip
            .iter()
            .map(|s| (s.layers as f64, s.speedup[i]))
            .collect();
        skip.series.push(Series::line(format!("批 {b}"), points));
    }
    Figure {
        id: "drafters".into(),
        title: "演示 7：动态树与静态树，跳层自起草".into(),
        panels: vec![trees, skip],
    }
}
