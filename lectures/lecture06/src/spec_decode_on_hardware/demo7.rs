//! Demo 7 (opt-in, not in the original script): the drafters the lecture names, run for
//! real on the toy model — dynamic trees shaped by the draft's confidence (EAGLE-2) beside
//! demo 3's static shapes at equal node counts, trees verified losslessly at T > 0
//! (SpecInfer's multi-step speculative sampling), prompt lookup with no draft model, and
//! the target's own first layers as the draft (layer skip). τ is measured by speculative
//! decoding itself; speedups convert it to the lecture's card as demo 3 does.
//!
//! `--model trained` runs it on the models `train_lab` trained on code: the drafts demo 3
//! names for that model, and for layer skip the trained target beside the same shape
//! trained with LayerSkip's early exits; its observations are computed from what those
//! models show, each beside the published result to compare it with.

pub mod eagle;
pub mod measure;
pub mod medusa;
pub mod rows;

pub use measure::figures;
pub use rows::{Demo7, HeadRow, LookupRow, SampledRow, SkipRow, TreeRow};

use std::sync::Arc;

use decode_lab::Scenario;
use lecture_kit::value::{fixed, int, label, measured, missing, parts, speedup, time};
use lecture_kit::{
    Axis, Error, Figure, Observation, Out, Panel, Series, always, columns, row, what_if,
};

use super::demo3::toy_model::{self, Kept, ModelFlag, ToyModel};
use super::demo3::{BATCHES, LEVEL_COST};

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

/// 演示 7: every drafter for real on the toy model (`--model`).
pub fn run(out: &mut Out, i: &ModelFlag) -> Result<(), Error> {
    let d = shared(i.model)?;
    print(out, &d);
    out.data(Demo7::clone(&d));
    Ok(())
}

/// Demo 7's [`figures`] for `model`, run once per process: every later call (the command
/// line's, a test's) gets the same figures.
pub fn shared(model: ToyModel) -> Result<Arc<Demo7>, Error> {
    static KEPT: Kept<Demo7> = Kept::new();
    KEPT.get_or_compute(model, || figures(toy_model::shared(model)?))
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
    out.print("\n采样（T > 0）的树：每个节点的孩子从草稿分布里独立抽，逐个按 min(1, p/q) 接受，拒绝后 p 换成 max(0, p − q) 归一化（SpecInfer 的多步投机采样；输出与目标自己采样同分布，测试用 χ² 检验）。第 k 层 α：到达第 k 层的轮里（前 k − 1 层都接受了），这一层有 token 被接受的比例；链上就是逐位置的 α：");
    // α per level: of the rounds that reached a level, the share that accepted a token there.
    let deepest = SAMPLED.iter().map(|s| s.len()).max().unwrap_or(0);
    let rows = d.sampled.iter().map(|s| {
        let level = |k: usize| match s.alphas.get(k) {
            Some(Some(a)) => fixed(*a, 2),
            Some(None) => missing("未到"),
            None => missing("—"),
        };
        let first = row![
            s.draft,
            s.label.clone(),
            fixed(s.temperature, 1),
            fixed(s.tau, 2)
        ];
        [first, (0..deepest).map(level).collect()].concat()
    });
    let levels = (1..=deepest).map(|k| format!("第 {k} 层 α"));
    let headers = columns!["草稿", "树", "温度", "实测 τ", ..levels];
    out.table(headers, rows).id("demo7_sampled");
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
    let trained = d.model == ToyModel::Trained;
    let rows = d.layer_skip.iter().map(|s| {
        let mut r = Vec::new();
        if trained {
            r.push(label(s.target.unwrap_or_default()));
        }
        r.extend(row![
            int(s.layers as i64),
            int(s.card_layers as i64),
            fixed(s.tau, 2)
        ]);
        r.extend(s.c.iter().map(|&c| fixed(c, 3)));
        r.extend(s.speedup.iter().map(|&x| speedup(x)));
        r
    });
    let target_column = trained.then(|| "目标".to_string());
    let headers = target_column.into_iter().chain([
        "玩具的 k".to_string(),
        "卡上的层数".into(),
        "实测 τ".into(),
        format!("批 {} 的 c", b[0]),
        format!("批 {} 的 c", b[1]),
        format!("批 {} 加速", b[0]),
        format!("批 {} 加速", b[1]),
    ]);
    out.table(headers, rows).id("demo7_layer_skip");
    if !d.medusa.is_empty() {
        medusa::print(out, &d.medusa, &d.medusa_top1);
    }
    if let Some(agreement) = d.eagle_agreement {
        eagle::print(out, &d.eagle, agreement);
    }
    out.observations(observations(d));
    out.figure(figure(d));
}

/// The drafts, in the order their rows come.
fn draft_names(d: &Demo7) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    for t in &d.trees {
        if !names.contains(&t.draft) {
            names.push(t.draft);
        }
    }
    names
}

fn observations(d: &Demo7) -> Vec<Observation> {
    let mut lines = Vec::new();
    for name in draft_names(d) {
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
    let worse: Vec<String> = d
        .trees
        .chunks(2)
        .filter(|p| p[1].tau < p[0].tau)
        .map(|p| format!("{} {} 个节点", p[0].draft, p[0].nodes))
        .collect();
    let worse = if worse.is_empty() {
        "这里每一对都是动态树不差".to_string()
    } else {
        format!("这里不如静态树的是：{}", worse.join("、"))
    };
    match d.model {
        ToyModel::Random => lines.extend(random_model(d, &worse)),
        ToyModel::Trained => lines.extend(trained_model(d, &worse)),
    }
    lines
}

/// What the random model shows, beside the sentences computed for any model.
fn random_model(d: &Demo7, worse: &str) -> Vec<Observation> {
    let mut lines = vec![
        always(format!(
            "动态树按草稿自己的把握挑节点：草稿的概率若和它猜中的机会对得上（EAGLE-2 训练出的草稿头），\
             同样多的节点能接受更多；随机初始化的草稿概率很平，把握最高的总在浅层，节点少时树长得又宽又浅——{worse}。"
        )),
        always(
            "采样的树在这个模型上几乎全被接受：随机初始化的目标和草稿在 T ≥ 0.7 时的分布都很平、彼此很像，\
             Σ min(p, q) 接近 1——接受率看的是两个分布有多像，不是草稿猜得多准。",
        ),
    ];
    if let (Some(first), Some(best)) = (d.lookup.first(), best_lookup(d)) {
        lines.push(always(format!(
            "提示查找：贪心输出的 τ 最高 {:.2}（n ≤ {}），采样输出只有 {:.2}（n ≤ 1）——随机初始化的模型贪心解码会绕圈，圈里的下一个词上文里都有；采样就不绕了。",
            best.tau_greedy, best.max_ngram, first.tau_sampled
        )));
    }
    for (i, &b) in BATCHES.iter().enumerate() {
        if let Some(line) = layer_skip_line(&d.layer_skip, i, b) {
            lines.push(always(format!(
                "{line}——每多一层草稿就贵一截，猜中的却没多出那么多。"
            )));
        }
    }
    lines
}

/// What the trained model shows, each beside the published result it should be compared
/// with.
fn trained_model(d: &Demo7, worse: &str) -> Vec<Observation> {
    let pairs = d.trees.chunks(2).count();
    let not_worse = d.trees.chunks(2).filter(|p| p[1].tau >= p[0].tau).count();
    let mut lines = vec![what_if(format!(
        "训练过的模型上，动态树不比同样节点的静态树差的有 {not_worse}/{pairs} 对（{worse}）。\
         EAGLE-2（Li et al. 2024）的前提是草稿的置信度和它猜中的机会对得上，这时动态树在同样节点数下接受得更多。"
    ))];
    let greedy = |draft: &str, label: &str| {
        let row = d
            .trees
            .iter()
            .find(|t| t.draft == draft && t.label == label);
        row.map(|t| t.tau)
    };
    let sampled_line = |draft: &'static str| {
        let own = d.sampled.iter().filter(|s| s.draft == draft);
        let tree = own.filter(|s| s.label == "树 2×2×2");
        let at: Vec<String> = tree
            .map(|s| format!("T = {:.1} {:.2}", s.temperature, s.tau))
            .collect();
        let greedy = greedy(draft, "树 2×2×2").map_or("—".to_string(), |t| format!("{t:.2}"));
        format!("{draft} 贪心 {greedy}，{}", at.join("，"))
    };
    let lower = draft_names(d).into_iter().filter(|&name| {
        let hot = d
            .sampled
            .iter()
            .filter(|s| s.draft == name && s.label == "树 2×2×2");
        let hot = hot.map(|s| s.tau).fold(f64::NAN, f64::max);
        greedy(name, "树 2×2×2").is_some_and(|g| hot < g)
    });
    let lower = lower.count();
    let each: Vec<String> = draft_names(d).into_iter().map(sampled_line).collect();
    lines.push(what_if(format!(
        "采样的树 2×2×2 的 τ：{}。{lower}/{} 个草稿在 T > 0 时接受得比贪心少：训练过的目标分布不平，\
         接受率看的是两个分布有多像（Σ min(p, q)），不是草稿的第一名对不对；随机模型上采样的树几乎全被接受，是因为两个分布都平。",
        each.join("；"),
        draft_names(d).len()
    )));
    if let (Some(best), Some(hot)) = (
        best_lookup(d),
        d.lookup
            .iter()
            .max_by(|a, b| a.tau_sampled.total_cmp(&b.tau_sampled)),
    ) {
        lines.push(what_if(format!(
            "提示查找：贪心输出的 τ 最高 {:.2}（n ≤ {}），采样输出（T = 1）最高 {:.2}（n ≤ {}）。这里能查的上文\
             只有 8 个字节的提示和已经生成的部分；提示查找（Saxena 2023）为的是输出照抄长上文的任务（摘要、改代码）。",
            best.tau_greedy, best.max_ngram, hot.tau_sampled, hot.max_ngram
        )));
    }
    let rows_of = |target: &str| -> Vec<SkipRow> {
        let own = d.layer_skip.iter().filter(|s| s.target == Some(target));
        own.cloned().collect()
    };
    let plain = rows_of(measure::PLAIN_TARGET);
    let early = rows_of(measure::LAYERSKIP_TARGET);
    for (i, &b) in BATCHES.iter().enumerate() {
        for (name, rows) in [
            (measure::PLAIN_TARGET, &plain),
            (measure::LAYERSKIP_TARGET, &early),
        ] {
            if let Some(line) = layer_skip_line(rows, i, b) {
                lines.push(what_if(format!("{name}：{line}。")));
            }
        }
    }
    if let (Some(p), Some(e)) = (plain.first(), early.first()) {
        let verdict = match e.tau > p.tau {
            true => "早退的层要为当草稿训练过才猜得准",
            false => "这里为早退训练没有让前几层猜得更准",
        };
        lines.push(what_if(format!(
            "前 1 层当草稿：{} τ {:.2}，{} τ {:.2}——{verdict}（LayerSkip，Elhoushi et al. 2024：训练时在每层后加早退的损失）。",
            measure::PLAIN_TARGET,
            p.tau,
            measure::LAYERSKIP_TARGET,
            e.tau
        )));
    }
    if !d.medusa.is_empty() {
        lines.push(medusa::observation(d, GAMMA));
    }
    if !d.eagle.is_empty() {
        lines.push(eagle::observation(d, GAMMA));
    }
    lines
}

/// The lookup row with the highest greedy τ.
fn best_lookup(d: &Demo7) -> Option<&LookupRow> {
    d.lookup
        .iter()
        .max_by(|a, b| a.tau_greedy.total_cmp(&b.tau_greedy))
}

/// Layer skip at batch `BATCHES[i] = b` over `rows`: the best k, and c and τ for every k.
fn layer_skip_line(rows: &[SkipRow], i: usize, b: u64) -> Option<String> {
    let best = rows
        .iter()
        .max_by(|x, y| x.speedup[i].total_cmp(&y.speedup[i]))?;
    let taus: Vec<String> = rows.iter().map(|s| format!("{:.2}", s.tau)).collect();
    let cs: Vec<String> = rows.iter().map(|s| format!("{:.3}", s.c[i])).collect();
    Some(format!(
        "跳层自起草，批 {b}：最好的是前 {} 层（卡上 {} 层），τ {:.2}、c {:.3}、加速 {:.2}×。k 从 1 起，c 依次是 {}，τ 是 {}",
        best.layers,
        best.card_layers,
        best.tau,
        best.c[i],
        best.speedup[i],
        cs.join(" / "),
        taus.join(" / ")
    ))
}

/// Figure `drafters.svg`: τ against nodes, static and dynamic, both drafts; layer skip's
/// speedup against k at both batches.
pub fn figure(d: &Demo7) -> Figure {
    let mut trees = Panel::new("τ 与节点数", Axis::log("节点"), Axis::linear("τ"));
    for name in draft_names(d) {
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
    // One line per batch, and per target where the trained model has two.
    let mut targets: Vec<Option<&str>> = Vec::new();
    for s in &d.layer_skip {
        if !targets.contains(&s.target) {
            targets.push(s.target);
        }
    }
    for target in targets {
        for (i, &b) in BATCHES.iter().enumerate() {
            let points = d
                .layer_skip
                .iter()
                .filter(|s| s.target == target)
                .map(|s| (s.layers as f64, s.speedup[i]))
                .collect();
            let name = match target {
                Some(t) => format!("{t} 批 {b}"),
                None => format!("批 {b}"),
            };
            skip.series.push(Series::line(name, points));
        }
    }
    Figure::new("演示 7：动态树与静态树，跳层自起草", vec![trees, skip]).id("drafters")
}
