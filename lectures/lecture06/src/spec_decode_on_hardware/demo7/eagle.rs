//! Demo 7's EAGLE rows, on the trained model only: the head `cargo xtask train eagle`
//! trained on the frozen trained target (`train_lab::shipped::eagle`) proposes demo 7's
//! chain and static trees, greedy and sampled, through the one decoding loop
//! (`decode_lab::speculative::EagleDraft`), beside Medusa's heads and the draft trained on
//! the text.

use decode_lab::{Draft, Scenario, cost_coefficient};
use lecture_kit::{Observation, Out, what_if};

use super::medusa::table;
use super::rows::{Demo7, HeadRow};
use crate::spec_decode_on_hardware::demo3::toy_model::TRAINED_DRAFT_NAMES;
use crate::spec_decode_on_hardware::demo3::{BATCHES, CTX, EAGLE_ALPHA, shape_label};

/// The table of EAGLE's rows; `agreement`: its first guess on held-out text (see
/// [`EagleWeights::agreement`](crate::spec_decode_on_hardware::demo3::heads::EagleWeights::agreement)).
pub fn print(out: &mut Out, rows: &[HeadRow], (with_target, with_text): (f64, f64)) {
    let s = Scenario::LECTURE;
    let c: Vec<String> = BATCHES
        .iter()
        .map(|&b| {
            let at = Scenario {
                draft: Draft::Head,
                batch: b,
                ctx: CTX,
                ..s
            };
            cost_coefficient(&at, &decode_lab::Seed).map_or("—".into(), |c| format!("{c:.3}"))
        })
        .collect();
    out.print(format!(
        "\nEAGLE 头（Li et al. 2024，EAGLE-1：目标冻结）：一层和目标同形的解码层，每个位置读目标最后一层的特征和下一个 token 的嵌入，\
         预测下一个位置的特征，再用目标自己的 LM head 出 token（`cargo xtask train eagle`）。和 Medusa 不同，下一层读刚起草的 token。\
         留出文本上（读真特征）它的第一名是目标自己第一名的比例 {with_target:.2}、是原文的比例 {with_text:.2}。\
         卡上每层草稿是一次这样的头（{} 的一层加 LM head），c 在批 {} / {} 是 {}：",
        s.target.name,
        BATCHES[0],
        BATCHES[1],
        c.join(" / ")
    ));
    table(out, rows, "demo7_eagle");
}

/// EAGLE beside Medusa's heads and the draft trained on the text: the chain of `gamma` at
/// T = 0.7 (τ, α per level) for all three, and the greedy tree EAGLE does best with.
pub fn observation(d: &Demo7, gamma: u32) -> Observation {
    let chain_label = shape_label(&vec![1; gamma as usize]);
    let at = |rows: &[HeadRow]| {
        let row = rows
            .iter()
            .find(|r| r.temperature == 0.7 && r.label == chain_label);
        row.map(|r| (r.tau, r.alphas.clone()))
    };
    let draft_name = TRAINED_DRAFT_NAMES[2];
    let draft = d
        .sampled
        .iter()
        .find(|s| s.draft == draft_name && s.temperature == 0.7 && s.label == chain_label);
    let best = d
        .eagle
        .iter()
        .filter(|r| r.temperature == 0.0)
        .max_by(|a, b| a.speedup[0].total_cmp(&b.speedup[0]));
    let (Some(eagle), Some(medusa), Some(draft), Some(best)) =
        (at(&d.eagle), at(&d.medusa), draft, best)
    else {
        return what_if("EAGLE 头：没有可比的链。");
    };
    let levels = |a: &[Option<f64>]| -> String {
        let each = a
            .iter()
            .map(|x| x.map_or("—".to_string(), |x| format!("{x:.2}")));
        each.collect::<Vec<_>>().join(" / ")
    };
    let order = match (eagle.0 > medusa.0, eagle.0 > draft.tau) {
        (true, true) => "EAGLE 头接受得最多",
        (true, false) => "EAGLE 头比 Medusa 头接受得多，比小草稿少",
        (false, _) => "EAGLE 头没有比 Medusa 头接受得多",
    };
    let measured = eagle.1.iter().flatten();
    let low = measured.clone().fold(f64::INFINITY, |m, &a| m.min(a));
    let high = measured.fold(f64::NEG_INFINITY, |m, &a| m.max(a));
    let range = match low.is_finite() && high.is_finite() {
        true => format!(
            "演示 1–3 假设的逐位置 α 是 EAGLE 论文表里的 {:.2}–{:.2}，这里 EAGLE 头量出来的是 {low:.2}–{high:.2}。",
            EAGLE_ALPHA.0, EAGLE_ALPHA.1
        ),
        false => String::new(),
    };
    let why = match eagle.0 > medusa.0 {
        true => {
            "EAGLE（Li et al. 2024）比的也是同一个目标上的 Medusa：它的草稿层读前一个 token，后几层不像 Medusa 的头那样从同一个隐状态往后猜。"
        }
        false => "",
    };
    let same = d
        .trees
        .iter()
        .find(|t| t.draft == draft_name && t.label == best.label);
    let same = same.map_or(String::new(), |t| {
        format!("，{draft_name} 同样的树 τ {:.2}", t.tau)
    });
    let pairs: Vec<String> = d
        .eagle
        .iter()
        .filter(|r| r.label.starts_with("动态"))
        .filter_map(|dynamic| {
            let fixed = d.eagle.iter().find(|r| {
                r.temperature == 0.0 && r.nodes == dynamic.nodes && !r.label.starts_with("动态")
            })?;
            Some(format!(
                "{} 个节点 {:.2} → {:.2}",
                fixed.nodes, fixed.tau, dynamic.tau
            ))
        })
        .collect();
    what_if(format!(
        "EAGLE 头上同样节点数，静态树 → 动态树（EAGLE-2）的 τ：{}。\
         链 γ = {gamma}、T = 0.7 的 τ 和逐层 α：EAGLE 头 {:.2}（{}），Medusa 头 {:.2}（{}），{draft_name} {:.2}（{}）——{order}。\
         {why}{range}贪心时 EAGLE 头最好的是{}：τ {:.2}{same}，批 {} 加速 {:.2}×、批 {} {:.2}×。",
        pairs.join("，"),
        eagle.0,
        levels(&eagle.1),
        medusa.0,
        levels(&medusa.1),
        draft.tau,
        levels(&draft.alphas),
        best.label,
        best.tau,
        BATCHES[0],
        best.speedup[0],
        BATCHES[1],
        best.speedup[1]
    ))
}
