//! Script 01 — 量化的草稿在哪里和目标分道扬镳: `tools/port_example/draft_agreement.py`, ported
//! line for line; `tools/port_example/check.sh` diffs the two outputs byte for byte.

use hw_specs::H100;
use lecture_kit::value::{fixed, percent, percent_fixed};
use lecture_kit::{Demo, Error, NoInputs, Out, Script, columns, row};
use llm_math::{Deployment, LLAMA31_8B, WeightDtype, max_batch_on};
use ndarray::{Axis, Zip, concatenate};
use py_port::array::{argmax, first_mismatch};
use py_port::stats::mean_of;
use quant_lab::{QCFG, Scheme, quantize_params, sample_tokens};
use transformer_lab::{TransformerLM, greedy_generate, init_params};

const N_NEW: usize = 32;
const CTX: u64 = 4096;

/// The script: demo 1 on the toy model, demo 2 on Llama-3.1-8B.
pub fn script() -> Script {
    let demos = vec![Demo::new(1, demo1_agreement), Demo::new(2, demo2_capacity)];
    let title = "量化的草稿在哪里和目标分道扬镳";
    Script::new("01_draft_agreement", title, demos)
}

/// 演示 1：量化的草稿贪心生成 32 个 token，从第几个起和目标不同。
pub fn demo1_agreement(out: &mut Out, _: &NoInputs) -> Result<(), Error> {
    out.header(format!(
        "演示 1：量化的草稿贪心生成 {N_NEW} 个 token，从第几个起和目标不同"
    ));
    let p = init_params(&QCFG, 0)?;
    let prompts = sample_tokens(&p, &QCFG, 16, 8, 5)?;
    let tgt = TransformerLM::new(&p, QCFG, "目标")?;
    let reference = greedy_generate(&tgt, prompts.view(), N_NEW)?;
    let seqs = concatenate(Axis(1), &[prompts.view(), reference.view()])?;
    let top1 = argmax(tgt.full_logits(seqs.view())?.view())?;
    let mut rows = Vec::new();
    for scheme in ["int8-g128", "int4-g128", "int4-g32"] {
        let s = Scheme::parse(scheme)?;
        let q = quantize_params(&p, s, true)?.0;
        let draft = TransformerLM::new(&q, QCFG, scheme)?;
        let generated = greedy_generate(&draft, prompts.view(), N_NEW)?;
        let first = first_mismatch(generated.view(), reference.view())?;
        let same = first.iter().filter(|&&f| f == N_NEW).count();
        let draft_top1 = argmax(draft.full_logits(seqs.view())?.view())?;
        let agree = Zip::from(&draft_top1).and(&top1).map_collect(|a, b| a == b);
        let agree = percent_fixed(mean_of(agree.as_slice().unwrap_or_default())?, 1);
        let bits = fixed(s.bits_per_weight()?, 2);
        rows.push(row![scheme, bits, fixed(mean_of(&first)?, 1), same, agree]);
    }
    let headers = columns![
        "草稿",
        "每个权重的位数",
        "平均第几个 token 起不同",
        format!("{N_NEW} 个全同的序列"),
        "逐位置第一选择一致",
    ];
    out.table(headers, rows);
    out.observations([
        "位数越少，草稿越早和目标分道扬镳：贪心解码一步选错，后面的 token 就全不一样了，所以\"从第几个起不同\"比逐位置的一致率掉得快。",
        "逐位置的一致率就是投机解码里每个位置被接受的机会：int8 几乎处处一致，int4 每组 32 个权重一个尺度时也还过得去。",
    ]);
    Ok(())
}

/// 演示 2：Llama-3.1-8B 的权重格式与一块 H100 能装的 4096 上下文序列。
pub fn demo2_capacity(out: &mut Out, _: &NoInputs) -> Result<(), Error> {
    out.header(format!(
        "演示 2：Llama-3.1-8B 的权重格式与一块 H100 能装的 {CTX} 上下文序列"
    ));
    let m = LLAMA31_8B;
    let mut rows = Vec::new();
    for w in [WeightDtype::Bf16, WeightDtype::Fp8, WeightDtype::Int4] {
        let weights = m.weight_bytes(w);
        let fits = max_batch_on(&m, &H100, CTX, &Deployment::LECTURE.with_weights(w))?;
        let share = percent(weights / (2.0 * m.n_params() as f64));
        let gb = fixed(weights / 1e9, 2).suffix(" GB");
        rows.push(row![w.name(), gb, share, fits]);
    }
    out.table(["格式", "权重", "相对 bf16", "能装的序列"], rows);
    let sixteen = fixed(m.sixteen_bit_params() as f64 / 1e9, 2);
    out.observations([
        format!("嵌入和 LM head 有 {sixteen} B 个参数，保持 16 位：int4 的权重只省到 bf16 的三成左右，不是四分之一。"),
        "省下的显存全给了 KV cache：同一块卡，格式每降一级，能同时服务的长上下文序列就多一截。".into(),
    ]);
    Ok(())
}
