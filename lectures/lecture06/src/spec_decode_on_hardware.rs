//! Script 05 — 投机解码在硬件上：c、批大小、上下文与树形验证
//! (speculative decoding on hardware: c, batch size, context and tree verification).
//!
//! Leviathan's formula makes two hardware assumptions: (1) the target verifies γ + 1
//! tokens as fast as it decodes one; (2) the draft's cost coefficient c is a known
//! constant. With lecture 1's roofline this script checks when they hold:
//!
//! - demo 1: Llama-3.1-8B (target) + Llama-3.2-1B (draft) on one H100 at batch 1 —
//!   c, the cost of verifying γ + 1 tokens, the best γ and speedup;
//! - demo 2: batch size × context length — a big batch makes verification no longer
//!   free and the gain shrinks; a long context keeps it longer;
//! - demo 3: tree verification (Medusa, EAGLE, SpecInfer): each level keeps the draft's
//!   top k, one pass verifies the whole tree. Acceptance lengths are measured on lecture
//!   3's toy model (greedy decoding), then turned into H100 speedups: trees pay at small
//!   batch and do not at large batch.
//!
//! Model assumptions (as the original script states them): one forward pass takes
//! `max(FLOPs / (peak × 0.6), bytes / (bandwidth × 0.8))` plus a fixed overhead (1 ms for
//! the target, 0.3 ms for the draft, assumed); a sequence's γ + 1 queries read its KV
//! cache once (fused attention); the draft's own KV cache is not counted against memory;
//! the acceptance rate α is a *given* parameter (EAGLE, table 2: about 0.65–0.8 per
//! position), not a measurement. Demo 3's acceptance lengths come from a
//! random-initialised small model: they show the mechanism ("how much more does a tree
//! accept than a chain"), not the figures of a trained model.

use std::io::Write;

use console::{fmt_time, print_header, print_observations, print_table};
use decode_lab::{
    BestRound, LLAMA32_1B, TransformerLM, autoregressive_generate, best_round, draft_ranks,
    expected_tokens, tree_accept_lengths, tree_speedup, verify_time,
};
use hw_specs::{Accelerator, H100};
use llm_math::{LLAMA31_8B, ModelConfig, max_batch};
use ndarray::{Axis, concatenate, s};
use quant_lab::{QCFG, quantize_params, sample_tokens};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use transformer_lab::{config_like, init_params};

use crate::Error;

/// The target model.
pub const TGT: ModelConfig = LLAMA31_8B;
/// The draft model.
pub const DRF: ModelConfig = LLAMA32_1B;
/// The accelerator.
pub const HW: Accelerator = H100;
/// Fixed per-pass overhead of the target, seconds (the script's assumption).
pub const OVERHEAD_T: f64 = 1e-3;
/// Fixed per-pass overhead of the draft, seconds (the script's assumption).
pub const OVERHEAD_D: f64 = 0.3e-3;

/// Demo 1's context length.
pub const DEMO1_CTX: u64 = 1024;
/// Demo 1's numbers of tokens fed to one target forward pass.
pub const DEMO1_NS: [u64; 10] = [1, 2, 3, 5, 9, 17, 33, 65, 129, 257];
/// Demo 1's acceptance rates.
pub const DEMO1_ALPHAS: [f64; 4] = [0.6, 0.7, 0.8, 0.9];
/// Demo 2's acceptance rate.
pub const DEMO2_ALPHA: f64 = 0.8;
/// Demo 2's batch sizes (rows).
pub const DEMO2_BATCHES: [u64; 6] = [1, 16, 64, 128, 256, 512];
/// Demo 2's context lengths (columns).
pub const DEMO2_CTXS: [u64; 3] = [512, 4096, 32768];
/// Demo 2's worked example: batch, context, tokens verified.
pub const DEMO2_EXAMPLE: (u64, u64, u64) = (512, 512, 5);

/// Prints the script: demos 1, 2 and 3 in order.
pub fn run(out: &mut dyn Write) -> Result<(), Error> {
    demo1_c_and_verify(out)?;
    demo2_batch_ctx(out)?;
    demo3_trees(out)
}

/// The figures demo 1 prints.
#[derive(Debug, Clone, PartialEq)]
pub struct Demo1 {
    /// One plain decode step of the target, seconds.
    pub t_base: f64,
    /// One decode step of the draft, seconds.
    pub t_draft: f64,
    /// `t_draft / t_base`.
    pub c: f64,
    /// Target forward time for each n of [`DEMO1_NS`]: `(n, seconds)`.
    pub forward: Vec<(u64, f64)>,
    /// Best round for each α of [`DEMO1_ALPHAS`].
    pub best: Vec<(f64, BestRound)>,
}

/// Computes demo 1: c, the cost of feeding n tokens, the best γ for each α.
pub fn demo1_figures() -> Result<Demo1, Error> {
    let ctx = DEMO1_CTX;
    let t_base = verify_time(&TGT, &HW, 1, ctx, 1, OVERHEAD_T)?;
    let t_draft = verify_time(&DRF, &HW, 1, ctx, 1, OVERHEAD_D)?;
    let forward = DEMO1_NS
        .iter()
        .map(|&n| Ok((n, verify_time(&TGT, &HW, 1, ctx, n, OVERHEAD_T)?)))
        .collect::<Result<_, Error>>()?;
    let best = DEMO1_ALPHAS
        .iter()
        .map(|&a| {
            Ok((
                a,
                best_round(&TGT, &DRF, &HW, 1, ctx, a, OVERHEAD_T, OVERHEAD_D)?,
            ))
        })
        .collect::<Result<_, Error>>()?;
    Ok(Demo1 {
        t_base,
        t_draft,
        c: t_draft / t_base,
        forward,
        best,
    })
}

/// Demo 1: the draft cost coefficient c, the cost of verifying n tokens, best γ per α.
pub fn demo1_c_and_verify(out: &mut dyn Write) -> Result<(), Error> {
    let title = format!(
        "演示 1：{} + {}，一块 {}，批大小 1、上下文 {}",
        TGT.name, DRF.name, HW.name, DEMO1_CTX
    );
    print_header(out, &title)?;
    let d = demo1_figures()?;
    let share = DRF.n_params() as f64 / TGT.n_params() as f64;
    writeln!(
        out,
        "目标模型普通 decode 一步 {}；草稿模型一步 {} → c = {:.3}（草稿参数 {:.2} B，是目标的 {}）",
        fmt_time(d.t_base),
        fmt_time(d.t_draft),
        d.c,
        DRF.n_params() as f64 / 1e9,
        percent(share),
    )?;

    let rows: Vec<Vec<String>> = d
        .forward
        .iter()
        .map(|&(n, t)| vec![n.to_string(), fmt_time(t), format!("{:.3}", t / d.t_base)])
        .collect();
    writeln!(
        out,
        "\n目标模型一次前向送进 n 个 token（验证 γ = n − 1 个草稿）要多久："
    )?;
    print_table(out, &["n", "时间", "相对 n = 1"], &rows)?;

    let mut rows2 = Vec::new();
    for &(a, best) in &d.best {
        rows2.push(vec![
            a.to_string(),
            best.gamma().to_string(),
            format!("{:.2}", expected_tokens(a, best.gamma())?),
            format!("{:.2}×", best.speedup()),
        ]);
    }
    print_table(
        out,
        &[
            "α",
            "最优 γ",
            "每轮 token",
            "加速比（一轮 = γ 次草稿 + 1 次验证）",
        ],
        &rows2,
    )?;
    print_observations(
        out,
        &[
            "批大小 1 时，送进 2 个 token 和 33 个 token 几乎一样快（前 129 个 token 都在\"读权重\"的阴影里）：\
             decode 的算力利用率极低，验证几乎是免费的——Leviathan 的假设 (1) 在这里成立。"
                .to_string(),
            format!(
                "但 c 不小：1B 的草稿只读 8B 的约 15% 的字节，加上每步的固定开销，c ≈ {:.2}。\
                 按 04 演示 2 的表，c ≈ 0.2 时最优只草稿几个、加速 2 倍左右（α = 0.8）。",
                d.c
            ),
            "想更快，要么草稿更便宜（EAGLE 那样的单层草稿、n-gram / 提示查找，或者放到 SRAM 芯片上，第 5 讲 §8），\
             要么更准（同系列的模型、在目标模型的输出上蒸馏），要么一次验证更多候选（演示 3 的树）。"
                .to_string(),
        ],
    )?;
    Ok(())
}

/// Python's `f"{x:.0%}"`: a ratio as a whole percentage.
fn percent(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// The figures demo 2 prints.
#[derive(Debug, Clone, PartialEq)]
pub struct Demo2 {
    /// For each batch of [`DEMO2_BATCHES`]: the best round at each context of
    /// [`DEMO2_CTXS`], or `None` where the batch's KV cache does not fit ("放不下").
    pub grid: Vec<(u64, Vec<Option<BestRound>>)>,
    /// The worked example ([`DEMO2_EXAMPLE`]): a plain step, seconds.
    pub example_base: f64,
    /// The worked example: one pass verifying 5 tokens, seconds.
    pub example_verify: f64,
}

/// Computes demo 2: the best γ and speedup over batch size × context length.
pub fn demo2_figures() -> Result<Demo2, Error> {
    let mut grid = Vec::new();
    for &b in &DEMO2_BATCHES {
        let mut cells = Vec::new();
        for &ctx in &DEMO2_CTXS {
            let fits = b <= max_batch(&TGT, &HW, ctx).map_err(decode_lab::Error::from)?;
            cells.push(if fits {
                Some(best_round(
                    &TGT,
                    &DRF,
                    &HW,
                    b,
                    ctx,
                    DEMO2_ALPHA,
                    OVERHEAD_T,
                    OVERHEAD_D,
                )?)
            } else {
                None
            });
        }
        grid.push((b, cells));
    }
    let (b, ctx, n) = DEMO2_EXAMPLE;
    Ok(Demo2 {
        grid,
        example_base: verify_time(&TGT, &HW, b, ctx, 1, OVERHEAD_T)?,
        example_verify: verify_time(&TGT, &HW, b, ctx, n, OVERHEAD_T)?,
    })
}

/// Demo 2: batch size × context length eat the gain.
pub fn demo2_batch_ctx(out: &mut dyn Write) -> Result<(), Error> {
    let title = format!(
        "演示 2：批大小 × 上下文长度（α = {DEMO2_ALPHA}）——每格：最优 γ、加速比；\"放不下\"= KV 超出 {} GB 显存",
        HW.memory_bytes / 1e9
    );
    print_header(out, &title)?;
    let d = demo2_figures()?;
    let rows: Vec<Vec<String>> = d
        .grid
        .iter()
        .map(|(b, cells)| {
            let mut row = vec![b.to_string()];
            row.extend(cells.iter().map(|cell| match cell {
                None => "放不下".to_string(),
                Some(BestRound::NoSpeculation(_)) => "不投机".to_string(),
                Some(BestRound::Speculate(p)) => {
                    format!(
                        "γ={}, {:.2}×（验证 {:.2}）",
                        p.gamma, p.speedup, p.verify_ratio
                    )
                }
            }));
            row
        })
        .collect();
    let mut headers = vec!["批大小".to_string()];
    headers.extend(DEMO2_CTXS.iter().map(|c| format!("上下文 {c}")));
    print_table(out, &headers, &rows)?;
    writeln!(
        out,
        "（括号里是\"验证 γ+1 个 token 的时间 / 普通 decode 一步\"。）"
    )?;

    let (b, ctx, n) = DEMO2_EXAMPLE;
    writeln!(
        out,
        "\n例：批 {b}、上下文 {ctx}：普通一步 {}，一次验证 {n} 个 token {}（{:.1} 倍）——\
         批 × {n} = {} 个 token 已经让矩阵乘法变成算力受限。",
        fmt_time(d.example_base),
        fmt_time(d.example_verify),
        d.example_verify / d.example_base,
        b * n,
    )?;
    print_observations(
        out,
        &[
            "批小时验证几乎免费，加速约 1.9 倍；批大到\"批 × (γ+1)\"超过临界批大小（H100 上按 60% / 80% 的效率约 220 个 token，\
             第 1 讲 §3.6），验证的时间就按 γ+1 增长，最优 γ 变小：批 128 时 1.6 倍、256 时 1.4 倍、512 时只剩 1.1 倍。",
            "长上下文时，显存先装不下大批（32K 上下文最多十几个序列），decode 一直受带宽限制，验证始终几乎免费——\
             投机解码在长上下文、小批的场景里最值钱。同一批大小下长上下文的加速略低，是因为草稿模型也要读自己的 KV，c 变大了。",
            "所以\"批处理\"和\"投机\"在抢同一种资源——闲着的算力。连续批处理把批做大以后，留给投机解码的空间就少了；\
             服务系统要按负载决定用不用、草稿多长（vLLM、SGLang 都支持按批大小调整或关闭投机）。",
        ],
    )?;
    Ok(())
}

/// Demo 3's toy setup: sequences, prompt length, generated tokens, seeds.
pub mod toy {
    /// Sequences the target generates.
    pub const N_SEQ: usize = 64;
    /// Prompt tokens per sequence (sampled from the model itself).
    pub const PROMPT_LEN: usize = 8;
    /// Tokens the target generates greedily after each prompt. Only 48: a random model
    /// decoding greedily for long falls into repetition loops, which would inflate the
    /// acceptance rate.
    pub const N_NEW: usize = 48;
    /// Seed of the toy model's weights.
    pub const PARAM_SEED: u64 = 0;
    /// Seed of the prompts.
    pub const PROMPT_SEED: u64 = 3;
    /// Seed of the generation's RNG (unused by greedy decoding, kept as in the script).
    pub const GEN_SEED: u64 = 0;
}

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
/// Demo 3's H100 batch sizes.
pub const DEMO3_BATCHES: [u64; 2] = [1, 32];
/// Demo 3's context length on the H100.
pub const DEMO3_CTX: u64 = 1024;
/// Cost of drafting one tree level, as a fraction of a target decode step (an EAGLE-style
/// one-layer draft).
pub const DEMO3_DRAFT_COST: f64 = 0.05;
/// The draft ranks demo 3 reports on: "top 1/2/4/8".
pub const DEMO3_TOP_K: [u32; 4] = [1, 2, 4, 8];

/// One draft's ranks: for every sequence, the rank of each of the target's generated
/// tokens among the draft's candidates.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftRanks {
    /// The draft's name as printed.
    pub name: &'static str,
    /// `ranks[s][j]`: rank of generated token j of sequence s (0 = the draft's first choice).
    pub ranks: Vec<Vec<u32>>,
}

/// On lecture 3's model: the target greedily generates [`toy::N_NEW`] tokens after each
/// of [`toy::N_SEQ`] sampled prompts; each draft then computes its logits on those real
/// sequences, and we record where the target's token ranks in the draft's candidates.
///
/// The drafts: the target's own first layer ("只用前 1 层（弱）", sharing its weights) and
/// the target quantized to int4-g32, LM head included ("INT4 量化的自己（强）").
pub fn toy_ranks() -> Result<Vec<DraftRanks>, Error> {
    let p = init_params(&QCFG, toy::PARAM_SEED)?;
    let target = TransformerLM::new(&p, QCFG, "目标")?;
    let prompts = sample_tokens(&p, &QCFG, toy::N_SEQ, toy::PROMPT_LEN, toy::PROMPT_SEED)?;
    let mut rng = ChaCha8Rng::seed_from_u64(toy::GEN_SEED);
    // Quantizing the target does not depend on the generation: do both at once.
    let (generated, quantized) = rayon::join(
        || autoregressive_generate(&target, prompts.view(), toy::N_NEW, 0.0, &mut rng),
        || quantize_params(&p, "int4-g32", true),
    );
    let seqs = concatenate(Axis(1), &[prompts.view(), generated?.view()]).expect("same rows");
    let (p4, _) = quantized?;
    let weak = TransformerLM::new(&p, config_like(&QCFG, 1), "d1")?;
    let int4 = TransformerLM::new(&p4, QCFG, "d4")?;
    let ranks_of = |draft: &TransformerLM<'_>| -> Result<Vec<Vec<u32>>, Error> {
        let logits = draft.full_logits(seqs.view())?;
        let first = toy::PROMPT_LEN - 1; // logits at the last prompt position predict token 0
        (0..seqs.nrows())
            .map(|i| {
                Ok(draft_ranks(
                    logits.slice(s![i, first.., ..]),
                    seqs.slice(s![i, first..]),
                )?)
            })
            .collect()
    };
    let (weak_ranks, int4_ranks) = rayon::join(|| ranks_of(&weak), || ranks_of(&int4));
    Ok(vec![
        DraftRanks {
            name: "只用前 1 层（弱）",
            ranks: weak_ranks?,
        },
        DraftRanks {
            name: "INT4 量化的自己（强）",
            ranks: int4_ranks?,
        },
    ])
}

/// One row of a demo 3 table.
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeFigures {
    /// Per-level top-k.
    pub branching: Vec<u32>,
    /// Draft tokens verified per round.
    pub nodes: u64,
    /// Tokens per round, 1 + mean accepted.
    pub tau: f64,
    /// Speedup on the H100 at each batch of [`DEMO3_BATCHES`].
    pub speedup: Vec<f64>,
}

/// Demo 3's figures for one draft.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftFigures {
    /// The draft's name as printed.
    pub name: &'static str,
    /// Fraction of positions where the target's token is in the draft's top k, for each
    /// k of [`DEMO3_TOP_K`].
    pub top_k: Vec<f64>,
    /// One entry per shape of [`DEMO3_SHAPES`].
    pub shapes: Vec<ShapeFigures>,
}

/// Computes demo 3: acceptance of every draft shape for both drafts, and its H100 speedup.
pub fn demo3_figures() -> Result<Vec<DraftFigures>, Error> {
    toy_ranks()?
        .into_iter()
        .map(|d| {
            let all: Vec<u32> = d.ranks.iter().flatten().copied().collect();
            let top_k = DEMO3_TOP_K
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
                            tree_speedup(
                                &TGT,
                                &HW,
                                b,
                                DEMO3_CTX,
                                tau,
                                br.len() as u64,
                                acc.nodes,
                                DEMO3_DRAFT_COST,
                                OVERHEAD_T,
                            )
                        })
                        .collect::<Result<_, _>>()?;
                    Ok(ShapeFigures {
                        branching: br.to_vec(),
                        nodes: acc.nodes,
                        tau,
                        speedup,
                    })
                })
                .collect::<Result<_, Error>>()?;
            Ok(DraftFigures {
                name: d.name,
                top_k,
                shapes,
            })
        })
        .collect()
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

/// Demo 3: tree verification — how much more a tree accepts, and what it buys.
pub fn demo3_trees(out: &mut dyn Write) -> Result<(), Error> {
    print_header(
        out,
        "演示 3：树形验证——每层取草稿的前 k 名，一次验证整棵树（贪心解码）",
    )?;
    for d in demo3_figures()? {
        let fractions: Vec<String> = d.top_k.iter().map(|f| format!("{f:.2}")).collect();
        let ks: Vec<String> = DEMO3_TOP_K.iter().map(u32::to_string).collect();
        writeln!(
            out,
            "\n草稿：{}；正确答案在草稿的前 {} 名里的比例：{}",
            d.name,
            ks.join("/"),
            fractions.join(" / ")
        )?;
        let rows: Vec<Vec<String>> = d
            .shapes
            .iter()
            .map(|sf| {
                let mut row = vec![
                    shape_label(&sf.branching),
                    sf.nodes.to_string(),
                    format!("{:.2}", sf.tau),
                ];
                row.extend(sf.speedup.iter().map(|s| format!("{s:.2}×")));
                row
            })
            .collect();
        print_table(
            out,
            &[
                "草稿形状",
                "每轮验证的草稿 token",
                "τ = 每轮产出的 token",
                "H100 加速 批 1",
                "批 32",
            ],
            &rows,
        )?;
    }
    writeln!(
        out,
        "\n（换算到 {hw} 时：目标 = {tgt}、上下文 {ctx}；草稿每层的代价假设为目标一步的 {cost}（EAGLE 式的单层草稿），\
         树有几层就草稿几次；验证 = 一次送进\"节点数 + 1\"个 token。）",
        hw = HW.name,
        tgt = TGT.name,
        ctx = DEMO3_CTX,
        cost = percent(DEMO3_DRAFT_COST),
    )?;
    print_observations(
        out,
        &[
            "链式草稿越长，后面的位置越难全部猜中，τ 涨得越来越慢；树在每一层多放几个候选，只要正确答案在前几名里就能继续，\
             τ 明显更高——弱草稿受益更多（它的第一名常错，但前 4 名常对）。这是 SpecInfer、Medusa、EAGLE 用树的原因。",
            "代价是每轮要验证的 token 多得多（几十到几百个）。批 1 时这些 token 几乎免费，大树加速最多；批 32 时，\
             32 × 几百个 token 让验证变成算力受限，大树反而比小树、甚至比链更慢。",
            "EAGLE 报告树形验证让平均接受长度多 0.6–0.8、加速比多 0.3–0.5（表 5、图 7）：接受长度涨得多，加速比涨得少，\
             就是因为每次前向的 token 变多了。EAGLE-2 进一步按草稿的置信度动态决定树的形状。",
        ],
    )?;
    Ok(())
}
