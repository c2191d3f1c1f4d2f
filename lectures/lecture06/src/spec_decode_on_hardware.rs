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
//!
//! Every demo is computed for a [`Setup`] (accelerator, target, draft, α); the default
//! is the original script's, and prints exactly its text. For any other setup, headers
//! and figures follow the setup, and an observation whose wording only holds for the
//! default is marked as such and quotes the default's figures.

use console::{Block, Table, fmt_time};
use decode_lab::{
    BestRound, Sampling, SpecStats, TransformerLM, TreeShape, autoregressive_generate, best_round,
    draft_ranks, draft_time, expected_tokens, speculative_generate_batch, tree_accept_lengths,
    tree_speedup, verify_time,
};
use hw_specs::{Accelerator, H100};
use llm_math::{LLAMA31_8B, LLAMA32_1B, ModelConfig, critical_tokens, max_batch};
use ndarray::{Axis, concatenate, s};
use quant_lab::{QCFG, quantize_params, sample_tokens_from};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde_json::{Value, json};
use transformer_lab::{config_like, init_params};

use crate::Error;

/// Fixed per-pass overhead of the target, seconds (the script's assumption).
pub const OVERHEAD_T: f64 = 1e-3;
/// Fixed per-pass overhead of the draft, seconds (the script's assumption).
pub const OVERHEAD_D: f64 = 0.3e-3;

/// What the roofline demos are computed for: one accelerator, a target and a draft
/// model, and demo 2's acceptance rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setup {
    /// The accelerator.
    pub hw: Accelerator,
    /// The target model.
    pub target: ModelConfig,
    /// The draft model.
    pub draft: ModelConfig,
    /// Demo 2's acceptance rate α.
    pub alpha: f64,
}

impl Default for Setup {
    /// The original script's setup: one H100, Llama-3.1-8B + Llama-3.2-1B, α = 0.8.
    fn default() -> Self {
        Setup {
            hw: H100,
            target: LLAMA31_8B,
            draft: LLAMA32_1B,
            alpha: DEMO2_ALPHA,
        }
    }
}

impl Setup {
    /// Whether demo 1 (hardware and both models) is the original script's.
    fn default_models_and_hw(&self) -> bool {
        let d = Setup::default();
        self.hw == d.hw && self.target == d.target && self.draft == d.draft
    }

    /// How the lecture names this setup: "一块 H200、Llama-3.1-70B + Llama-3.2-1B".
    fn label(&self) -> String {
        format!(
            "一块 {}、{} + {}",
            self.hw.name, self.target.name, self.draft.name
        )
    }
}

/// The marker put before an observation that only holds for the default setup.
pub const DEFAULT_ONLY: &str = "【此条针对默认配置：一块 H100、Llama-3.1-8B + Llama-3.2-1B】";

/// Demo 1's context length.
pub const DEMO1_CTX: u64 = 1024;
/// Demo 1's numbers of tokens fed to one target forward pass.
pub const DEMO1_NS: [u64; 10] = [1, 2, 3, 5, 9, 17, 33, 65, 129, 257];
/// Demo 1's acceptance rates.
pub const DEMO1_ALPHAS: [f64; 4] = [0.6, 0.7, 0.8, 0.9];
/// Demo 2's default acceptance rate.
pub const DEMO2_ALPHA: f64 = 0.8;
/// Demo 2's batch sizes (rows).
pub const DEMO2_BATCHES: [u64; 6] = [1, 16, 64, 128, 256, 512];
/// Demo 2's context lengths (columns).
pub const DEMO2_CTXS: [u64; 3] = [512, 4096, 32768];
/// Demo 2's worked example: batch, context, tokens verified.
pub const DEMO2_EXAMPLE: (u64, u64, u64) = (512, 512, 5);

/// Prints the script for the default setup: demos 1, 2 and 3, as text.
pub fn run(out: &mut dyn std::io::Write) -> Result<(), Error> {
    run_with(out, &crate::Options::default())
}

/// Prints the chosen demos for the chosen setup in the chosen form, and writes their
/// figures when `plot_dir` is set (demo 1 → `knee.svg`, 2 → `batch.svg`, 3 → `trees.svg`;
/// demo 4 has no figure).
pub fn run_with(out: &mut dyn std::io::Write, opts: &crate::Options) -> Result<(), Error> {
    let setup = &opts.setup;
    let wants = |n: u8| opts.demos.contains(&n);
    let mut blocks = Vec::new();
    let mut doc = serde_json::Map::new();
    if wants(1) {
        let d = demo1_figures(setup)?;
        blocks.extend(demo1_blocks(setup, &d)?);
        doc.insert("demo1".into(), demo1_json(setup, &d));
        if let Some(dir) = &opts.plot_dir {
            crate::plots::knee(dir, setup)?;
        }
    }
    if wants(2) {
        let d = demo2_figures(setup)?;
        blocks.extend(demo2_blocks(setup, &d));
        doc.insert("demo2".into(), demo2_json(setup, &d));
        if let Some(dir) = &opts.plot_dir {
            crate::plots::batch(dir, setup)?;
        }
    }
    let toy = if wants(3) || wants(4) {
        Some(toy_run()?)
    } else {
        None
    };
    if let (true, Some(toy)) = (wants(3), &toy) {
        let d = demo3_from_ranks(setup, &toy.ranks)?;
        blocks.extend(demo3_blocks(setup, &d));
        doc.insert("demo3".into(), demo3_json(&d));
        if let Some(dir) = &opts.plot_dir {
            crate::plots::trees(dir, setup, &d)?;
        }
    }
    if let (true, Some(toy)) = (wants(4), &toy) {
        let d = demo4_figures(toy)?;
        blocks.extend(demo4_blocks(&d));
        doc.insert("demo4".into(), demo4_json(&d));
    }
    match opts.format {
        crate::Format::Text => console::render_text(out, &blocks)?,
        crate::Format::Markdown => console::render_markdown(out, &blocks)?,
        crate::Format::Csv => console::render_csv(out, &blocks)?,
        crate::Format::Json => {
            let tables: Vec<serde_json::Value> = blocks
                .iter()
                .filter_map(|b| match b {
                    console::Block::Table(t) => {
                        Some(json!({ "caption": t.caption, "headers": t.headers, "rows": t.rows }))
                    }
                    _ => None,
                })
                .collect();
            let document = json!({
                "lecture": 6,
                "script": "05_spec_decode_on_hardware",
                "units": {
                    "*_s": "seconds",
                    "*_tokens": "tokens",
                    "*_bytes": "bytes",
                    "peak_flops_bf16": "FLOP/s",
                    "hbm_bandwidth": "bytes/s",
                    "speedup, c, ratio*, verify_ratio, expected_tokens, tau, *_fraction": "dimensionless",
                },
                "setup": setup_json(setup),
                "demos": opts.demos,
                "figures": doc,
                "tables": tables,
            });
            let text = serde_json::to_string_pretty(&document).map_err(std::io::Error::other)?;
            writeln!(out, "{text}")?;
        }
    }
    Ok(())
}

fn setup_json(setup: &Setup) -> serde_json::Value {
    let model = |m: &llm_math::ModelConfig| {
        json!({
            "name": m.name, "n_params": m.n_params(), "streamed_params": m.streamed_params(),
            "kv_bytes_per_token": m.kv_bytes_per_token(), "n_layers": m.n_layers, "d_model": m.d_model,
        })
    };
    json!({
        "hw": {
            "name": setup.hw.name,
            "peak_flops_bf16": setup.hw.peak_flops_bf16,
            "hbm_bandwidth": setup.hw.hbm_bandwidth,
            "memory_bytes": setup.hw.memory_bytes,
        },
        "target": model(&setup.target),
        "draft": model(&setup.draft),
        "alpha": setup.alpha,
        "overhead_target_s": OVERHEAD_T,
        "overhead_draft_s": OVERHEAD_D,
        "compute_efficiency": llm_math::COMPUTE_EFFICIENCY,
        "bandwidth_efficiency": llm_math::BANDWIDTH_EFFICIENCY,
    })
}

// ---- demo 1 -------------------------------------------------------------------------

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

impl Demo1 {
    /// The largest n of [`DEMO1_NS`] up to which feeding n tokens costs less than 1% more
    /// than feeding one: the end of the weight-read shadow.
    pub fn free_up_to(&self) -> u64 {
        self.forward
            .iter()
            .take_while(|(_, t)| t / self.t_base < 1.01)
            .last()
            .map_or(0, |f| f.0)
    }
}

/// Computes demo 1 for `setup`: c, the cost of feeding n tokens, the best γ for each α.
/// `None` when the target cannot hold even one sequence of [`DEMO1_CTX`] tokens on the card.
pub fn demo1_figures(setup: &Setup) -> Result<Option<Demo1>, Error> {
    let Setup {
        hw, target, draft, ..
    } = setup;
    let ctx = DEMO1_CTX;
    if max_batch(target, hw, ctx).map_err(decode_lab::Error::from)? == 0 {
        return Ok(None);
    }
    let t_base = verify_time(target, hw, 1, ctx, 1, OVERHEAD_T)?;
    let t_draft = draft_time(draft, hw, 1, ctx, OVERHEAD_D)?;
    let forward = DEMO1_NS
        .iter()
        .map(|&n| Ok((n, verify_time(target, hw, 1, ctx, n, OVERHEAD_T)?)))
        .collect::<Result<_, Error>>()?;
    let best = DEMO1_ALPHAS
        .iter()
        .map(|&a| {
            Ok((
                a,
                best_round(target, draft, hw, 1, ctx, a, OVERHEAD_T, OVERHEAD_D)?,
            ))
        })
        .collect::<Result<_, Error>>()?;
    Ok(Some(Demo1 {
        t_base,
        t_draft,
        c: t_draft / t_base,
        forward,
        best,
    }))
}

/// The line a demo prints instead of its figures when the target does not fit at all.
fn does_not_fit_line(setup: &Setup) -> String {
    let Setup { hw, target, .. } = setup;
    format!(
        "{} 的 bf16 权重有 {:.1} GB，一块 {} 只有 {} GB 显存：放不下，这个演示在这块卡上算不出来。\
         换一块显存更大的卡（--hw），或者换一个小一些的目标模型（--target）。",
        target.name,
        2.0 * target.n_params() as f64 / 1e9,
        hw.name,
        hw.memory_bytes / 1e9,
    )
}

/// Demo 1 as blocks: header, the c line, the two tables, observations.
pub fn demo1_blocks(setup: &Setup, d: &Option<Demo1>) -> Result<Vec<Block>, Error> {
    let Setup {
        hw, target, draft, ..
    } = setup;
    let title = format!(
        "演示 1：{} + {}，一块 {}，批大小 1、上下文 {}",
        target.name, draft.name, hw.name, DEMO1_CTX
    );
    let mut blocks = vec![Block::Header(title)];
    let Some(d) = d else {
        blocks.push(Block::Text(does_not_fit_line(setup)));
        return Ok(blocks);
    };
    let share = draft.n_params() as f64 / target.n_params() as f64;
    blocks.push(Block::Text(format!(
        "目标模型普通 decode 一步 {}；草稿模型一步 {} → c = {:.3}（草稿参数 {:.2} B，是目标的 {}）",
        fmt_time(d.t_base),
        fmt_time(d.t_draft),
        d.c,
        draft.n_params() as f64 / 1e9,
        percent(share),
    )));
    blocks.push(Block::Text(
        "\n目标模型一次前向送进 n 个 token（验证 γ = n − 1 个草稿）要多久：".into(),
    ));
    blocks.push(Block::Table(Table {
        caption: format!(
            "演示 1：{} 在一块 {} 上一次前向送进 n 个 token 的时间（批 1、上下文 {DEMO1_CTX}）",
            target.name, hw.name
        ),
        headers: strings(&["n", "时间", "相对 n = 1"]),
        rows: d
            .forward
            .iter()
            .map(|&(n, t)| vec![n.to_string(), fmt_time(t), format!("{:.3}", t / d.t_base)])
            .collect(),
    }));
    let mut rows = Vec::new();
    for &(a, best) in &d.best {
        rows.push(vec![
            a.to_string(),
            best.gamma().to_string(),
            format!("{:.2}", expected_tokens(a, best.gamma())?),
            format!("{:.2}×", best.speedup()),
        ]);
    }
    blocks.push(Block::Table(Table {
        caption: format!(
            "演示 1：每个 α 的最优 γ 与加速比（{}，批 1）",
            setup.label()
        ),
        headers: strings(&[
            "α",
            "最优 γ",
            "每轮 token",
            "加速比（一轮 = γ 次草稿 + 1 次验证）",
        ]),
        rows,
    }));

    let seed_obs1 = "批大小 1 时，送进 2 个 token 和 33 个 token 几乎一样快（前 129 个 token 都在\"读权重\"的阴影里）：\
                     decode 的算力利用率极低，验证几乎是免费的——Leviathan 的假设 (1) 在这里成立。";
    let seed_obs2 = |c: f64| {
        format!(
            "但 c 不小：1B 的草稿只读 8B 的约 15% 的字节，加上每步的固定开销，c ≈ {c:.2}。\
             按 04 演示 2 的表，c ≈ 0.2 时最优只草稿几个、加速 2 倍左右（α = 0.8）。"
        )
    };
    let seed_obs3 = "想更快，要么草稿更便宜（EAGLE 那样的单层草稿、n-gram / 提示查找，或者放到 SRAM 芯片上，第 5 讲 §8），\
                     要么更准（同系列的模型、在目标模型的输出上蒸馏），要么一次验证更多候选（演示 3 的树）。";
    let observations = if setup.default_models_and_hw() {
        vec![seed_obs1.to_string(), seed_obs2(d.c), seed_obs3.to_string()]
    } else {
        let default_c = demo1_figures(&Setup::default())?.map_or(f64::NAN, |d| d.c);
        let at_08 = d.best.iter().find(|(a, _)| *a == 0.8).map(|b| b.1);
        let best_08 = match at_08 {
            Some(BestRound::Speculate(p)) => {
                format!("α = 0.8 时最优 γ = {}，加速 {:.2}×", p.gamma, p.speedup)
            }
            _ => "α = 0.8 时投机解码不划算".to_string(),
        };
        vec![
            format!(
                "本配置（{}）：c = {:.2}；批 1 时送进 n ≤ {} 个 token 与只送 1 个相差不到 1%；{}。",
                setup.label(),
                d.c,
                d.free_up_to(),
                best_08
            ),
            format!("{DEFAULT_ONLY}{seed_obs1}"),
            format!("{DEFAULT_ONLY}{}", seed_obs2(default_c)),
            seed_obs3.to_string(),
        ]
    };
    blocks.push(Block::Observations(observations));
    Ok(blocks)
}

/// Demo 1's figures as JSON: seconds and ratios, unformatted.
pub fn demo1_json(setup: &Setup, d: &Option<Demo1>) -> Value {
    let Some(d) = d else {
        return json!({ "fits": false, "message": does_not_fit_line(setup) });
    };
    json!({
        "fits": true,
        "ctx_tokens": DEMO1_CTX,
        "batch": 1,
        "t_base_s": d.t_base,
        "t_draft_s": d.t_draft,
        "c": d.c,
        "draft_params": setup.draft.n_params(),
        "target_params": setup.target.n_params(),
        "free_up_to_n": d.free_up_to(),
        "forward": d.forward.iter().map(|&(n, t)| json!({
            "n": n, "time_s": t, "ratio_to_n1": t / d.t_base,
        })).collect::<Vec<_>>(),
        "best_gamma": d.best.iter().map(|(a, b)| best_json(*a, b)).collect::<Vec<_>>(),
    })
}

fn best_json(alpha: f64, best: &BestRound) -> Value {
    match best {
        BestRound::Speculate(p) => json!({
            "alpha": alpha, "speculate": true, "gamma": p.gamma,
            "expected_tokens": p.expected_tokens, "speedup": p.speedup,
            "verify_ratio": p.verify_ratio, "c": p.c,
            "t_base_s": p.t_base, "t_draft_s": p.t_draft, "t_verify_s": p.t_verify, "t_round_s": p.t_round,
        }),
        BestRound::NoSpeculation(p) => json!({
            "alpha": alpha, "speculate": false, "gamma": 0, "expected_tokens": 1.0, "speedup": 1.0,
            "best_tried_gamma": p.gamma, "best_tried_speedup": p.speedup,
        }),
    }
}

/// Python's `f"{x:.0%}"`: a ratio as a whole percentage.
fn percent(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

// ---- demo 2 -------------------------------------------------------------------------

/// The figures demo 2 prints.
#[derive(Debug, Clone, PartialEq)]
pub struct Demo2 {
    /// For each batch of [`DEMO2_BATCHES`]: the best round at each context of
    /// [`DEMO2_CTXS`], or `None` where the batch's KV cache does not fit ("放不下").
    pub grid: Vec<(u64, Vec<Option<BestRound>>)>,
    /// The worked example ([`DEMO2_EXAMPLE`]): a plain step and one pass verifying 5
    /// tokens, seconds, and whether that pass is compute-bound; `None` if it does not fit.
    pub example: Option<(f64, f64, bool)>,
    /// The largest batch that fits at each context of [`DEMO2_CTXS`].
    pub max_batch: Vec<u64>,
}

/// Computes demo 2 for `setup`: the best γ and speedup over batch size × context length.
pub fn demo2_figures(setup: &Setup) -> Result<Demo2, Error> {
    let Setup {
        hw,
        target,
        draft,
        alpha,
    } = setup;
    let fit = |ctx| max_batch(target, hw, ctx).map_err(decode_lab::Error::from);
    let max_batch = DEMO2_CTXS
        .iter()
        .map(|&c| fit(c))
        .collect::<Result<Vec<_>, _>>()?;
    let mut grid = Vec::new();
    for &b in &DEMO2_BATCHES {
        let mut cells = Vec::new();
        for (&ctx, &fits) in DEMO2_CTXS.iter().zip(&max_batch) {
            cells.push(if b <= fits {
                Some(best_round(
                    target, draft, hw, b, ctx, *alpha, OVERHEAD_T, OVERHEAD_D,
                )?)
            } else {
                None
            });
        }
        grid.push((b, cells));
    }
    let (b, ctx, n) = DEMO2_EXAMPLE;
    let example = if b <= fit(ctx)? {
        let base = verify_time(target, hw, b, ctx, 1, OVERHEAD_T)?;
        let ver = verify_time(target, hw, b, ctx, n, OVERHEAD_T)?;
        let shape = llm_math::ForwardShape {
            batch: b,
            ctx,
            n_new: n,
        };
        let compute_bound = llm_math::forward_time(target, hw, shape)
            .map_err(decode_lab::Error::from)?
            .is_compute_bound();
        Some((base, ver, compute_bound))
    } else {
        None
    };
    Ok(Demo2 {
        grid,
        example,
        max_batch,
    })
}

/// The text of one demo 2 cell.
fn demo2_cell(cell: &Option<BestRound>) -> String {
    match cell {
        None => "放不下".to_string(),
        Some(BestRound::NoSpeculation(_)) => "不投机".to_string(),
        Some(BestRound::Speculate(p)) => format!(
            "γ={}, {:.2}×（验证 {:.2}）",
            p.gamma, p.speedup, p.verify_ratio
        ),
    }
}

/// Demo 2 as blocks: header, the grid, the worked example, observations.
pub fn demo2_blocks(setup: &Setup, d: &Demo2) -> Vec<Block> {
    let Setup {
        hw, target, alpha, ..
    } = setup;
    let title = format!(
        "演示 2：批大小 × 上下文长度（α = {alpha}）——每格：最优 γ、加速比；\"放不下\"= KV 超出 {} GB 显存",
        hw.memory_bytes / 1e9
    );
    let mut blocks = vec![Block::Header(title)];
    let mut headers = vec!["批大小".to_string()];
    headers.extend(DEMO2_CTXS.iter().map(|c| format!("上下文 {c}")));
    blocks.push(Block::Table(Table {
        caption: format!("演示 2：最优 γ 与加速比（{}，α = {alpha}）", setup.label()),
        headers,
        rows: d
            .grid
            .iter()
            .map(|(b, cells)| {
                std::iter::once(b.to_string())
                    .chain(cells.iter().map(demo2_cell))
                    .collect()
            })
            .collect(),
    }));
    blocks.push(Block::Text(
        "（括号里是\"验证 γ+1 个 token 的时间 / 普通 decode 一步\"。）".into(),
    ));

    let (b, ctx, n) = DEMO2_EXAMPLE;
    blocks.push(Block::Text(match d.example {
        Some((base, ver, compute_bound)) => format!(
            "\n例：批 {b}、上下文 {ctx}：普通一步 {}，一次验证 {n} 个 token {}（{:.1} 倍）——批 × {n} = {} 个 token {}。",
            fmt_time(base),
            fmt_time(ver),
            ver / base,
            b * n,
            if compute_bound { "已经让矩阵乘法变成算力受限" } else { "仍然受带宽限制" },
        ),
        None => format!("\n例：批 {b}、上下文 {ctx}：{} 在一块 {} 上放不下这么大的批。", target.name, hw.name),
    }));

    let seed_obs1 = "批小时验证几乎免费，加速约 1.9 倍；批大到\"批 × (γ+1)\"超过临界批大小（H100 上按 60% / 80% 的效率约 220 个 token，\
                     第 1 讲 §3.6），验证的时间就按 γ+1 增长，最优 γ 变小：批 128 时 1.6 倍、256 时 1.4 倍、512 时只剩 1.1 倍。";
    let seed_obs2 = "长上下文时，显存先装不下大批（32K 上下文最多十几个序列），decode 一直受带宽限制，验证始终几乎免费——\
                     投机解码在长上下文、小批的场景里最值钱。同一批大小下长上下文的加速略低，是因为草稿模型也要读自己的 KV，c 变大了。";
    let seed_obs3 = "所以\"批处理\"和\"投机\"在抢同一种资源——闲着的算力。连续批处理把批做大以后，留给投机解码的空间就少了；\
                     服务系统要按负载决定用不用、草稿多长（vLLM、SGLang 都支持按批大小调整或关闭投机）。";
    let observations = if *setup == Setup::default() {
        vec![
            seed_obs1.to_string(),
            seed_obs2.to_string(),
            seed_obs3.to_string(),
        ]
    } else {
        let speedups: Vec<String> = d
            .grid
            .iter()
            .filter_map(|(b, cells)| {
                cells[0].map(|c| match c {
                    BestRound::Speculate(p) => format!("批 {b} {:.2}×", p.speedup),
                    BestRound::NoSpeculation(_) => format!("批 {b} 不投机"),
                })
            })
            .collect();
        let fits = DEMO2_CTXS
            .iter()
            .zip(&d.max_batch)
            .map(|(c, m)| format!("上下文 {c} 最多 {m} 个序列"));
        let summary = if d.max_batch[0] == 0 {
            format!("本配置（{}）：{}", setup.label(), does_not_fit_line(setup))
        } else {
            format!(
                "本配置（{}，α = {alpha}）：临界批大小约 {:.0} 个 token；上下文 {} 时 {}；{}。",
                setup.label(),
                critical_tokens(hw),
                DEMO2_CTXS[0],
                speedups.join("、"),
                fits.collect::<Vec<_>>().join("、")
            )
        };
        vec![
            summary,
            format!("{DEFAULT_ONLY}{seed_obs1}"),
            format!("{DEFAULT_ONLY}{seed_obs2}"),
            seed_obs3.to_string(),
        ]
    };
    blocks.push(Block::Observations(observations));
    blocks
}

/// Demo 2's figures as JSON.
pub fn demo2_json(setup: &Setup, d: &Demo2) -> Value {
    let (b, ctx, n) = DEMO2_EXAMPLE;
    json!({
        "alpha": setup.alpha,
        "ctxs_tokens": DEMO2_CTXS,
        "max_batch": d.max_batch,
        "critical_tokens": critical_tokens(&setup.hw),
        "grid": d.grid.iter().map(|(batch, cells)| json!({
            "batch": batch,
            "cells": DEMO2_CTXS.iter().zip(cells).map(|(ctx, cell)| match cell {
                None => json!({ "ctx_tokens": ctx, "fits": false }),
                Some(best) => {
                    let mut v = best_json(setup.alpha, best);
                    v["ctx_tokens"] = json!(ctx);
                    v["fits"] = json!(true);
                    v
                }
            }).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "example": match d.example {
            Some((base, ver, compute_bound)) => json!({
                "batch": b, "ctx_tokens": ctx, "n": n, "fits": true,
                "t_base_s": base, "t_verify_s": ver, "ratio": ver / base, "compute_bound": compute_bound,
            }),
            None => json!({ "batch": b, "ctx_tokens": ctx, "n": n, "fits": false }),
        },
    })
}

// ---- demo 3 -------------------------------------------------------------------------

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
/// Demo 3's batch sizes on the accelerator.
pub const DEMO3_BATCHES: [u64; 2] = [1, 32];
/// Demo 3's context length on the accelerator.
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

/// Everything demo 3 computes on the toy model, kept for demo 4.
#[derive(Debug, Clone)]
pub struct ToyRun {
    /// The target's weights (lecture 3's model, seed [`toy::PARAM_SEED`]).
    pub params: transformer_lab::Params,
    /// The target quantized to int4-g32, LM head included (the strong draft's weights).
    pub int4: transformer_lab::Params,
    /// The prompts, `[N_SEQ, PROMPT_LEN]`.
    pub prompts: ndarray::Array2<u32>,
    /// The target's greedy continuations, `[N_SEQ, N_NEW]`.
    pub generated: ndarray::Array2<u32>,
    /// Both drafts' ranks of the generated tokens.
    pub ranks: Vec<DraftRanks>,
}

/// The names of demo 3's drafts, in order: the target's first layer, and the target in int4.
pub const DRAFT_NAMES: [&str; 2] = ["只用前 1 层（弱）", "INT4 量化的自己（强）"];

impl ToyRun {
    /// The target model.
    pub fn target(&self) -> Result<TransformerLM<'_>, Error> {
        Ok(TransformerLM::new(&self.params, QCFG, "目标")?)
    }

    /// The drafts, named as [`DRAFT_NAMES`]: the target's own first layer (sharing its
    /// weights) and the int4 copy.
    pub fn drafts(&self) -> Result<[TransformerLM<'_>; 2], Error> {
        Ok([
            TransformerLM::new(&self.params, config_like(&QCFG, 1), DRAFT_NAMES[0])?,
            TransformerLM::new(&self.int4, QCFG, DRAFT_NAMES[1])?,
        ])
    }
}

/// On lecture 3's model: the target greedily generates [`toy::N_NEW`] tokens after each
/// of [`toy::N_SEQ`] sampled prompts; each draft then computes its logits on those real
/// sequences, and we record where the target's token ranks in the draft's candidates.
///
/// The drafts: the target's own first layer ("只用前 1 层（弱）", sharing its weights) and
/// the target quantized to int4-g32, LM head included ("INT4 量化的自己（强）").
/// Independent work runs side by side: quantization with generation, the two drafts.
pub fn toy_run() -> Result<ToyRun, Error> {
    let params = init_params(&QCFG, toy::PARAM_SEED)?;
    let target = TransformerLM::new(&params, QCFG, "目标")?;
    let prompts = sample_tokens_from(&target, toy::N_SEQ, toy::PROMPT_LEN, toy::PROMPT_SEED)?;
    let mut rng = ChaCha8Rng::seed_from_u64(toy::GEN_SEED);
    let (generated, quantized) = rayon::join(
        || autoregressive_generate(&target, prompts.view(), toy::N_NEW, 0.0, &mut rng),
        || quantize_params(&params, "int4-g32", true),
    );
    let generated = generated?;
    let seqs = concatenate(Axis(1), &[prompts.view(), generated.view()]).expect("same rows");
    let (int4, _) = quantized?;
    let mut run = ToyRun {
        params,
        int4,
        prompts,
        generated,
        ranks: Vec::new(),
    };
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
    let [weak, int4] = run.drafts()?;
    let (weak_ranks, int4_ranks) = rayon::join(|| ranks_of(&weak), || ranks_of(&int4));
    let ranks = vec![
        DraftRanks {
            name: DRAFT_NAMES[0],
            ranks: weak_ranks?,
        },
        DraftRanks {
            name: DRAFT_NAMES[1],
            ranks: int4_ranks?,
        },
    ];
    run.ranks = ranks;
    Ok(run)
}

/// The draft ranks of [`toy_run`].
pub fn toy_ranks() -> Result<Vec<DraftRanks>, Error> {
    Ok(toy_run()?.ranks)
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
    /// Speedup on the accelerator at each batch of [`DEMO3_BATCHES`]; `None` where the
    /// target does not fit at that batch.
    pub speedup: Vec<Option<f64>>,
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

/// Computes demo 3: acceptance of every draft shape for both drafts (on the toy model),
/// and its speedup on `setup`'s accelerator and target.
pub fn demo3_figures(setup: &Setup) -> Result<Vec<DraftFigures>, Error> {
    demo3_from_ranks(setup, &toy_ranks()?)
}

/// [`demo3_figures`] from ranks already computed.
pub fn demo3_from_ranks(setup: &Setup, ranks: &[DraftRanks]) -> Result<Vec<DraftFigures>, Error> {
    let Setup { hw, target, .. } = setup;
    let fits = max_batch(target, hw, DEMO3_CTX).map_err(decode_lab::Error::from)?;
    ranks
        .iter()
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
                            if b > fits {
                                return Ok(None);
                            }
                            let depth = br.len() as u64;
                            tree_speedup(
                                target,
                                hw,
                                b,
                                DEMO3_CTX,
                                tau,
                                depth,
                                acc.nodes,
                                DEMO3_DRAFT_COST,
                                OVERHEAD_T,
                            )
                            .map(Some)
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

/// Demo 3 as blocks: header, per draft its top-k line and table, the footnote, observations.
pub fn demo3_blocks(setup: &Setup, drafts: &[DraftFigures]) -> Vec<Block> {
    let Setup { hw, target, .. } = setup;
    let mut blocks = vec![Block::Header(
        "演示 3：树形验证——每层取草稿的前 k 名，一次验证整棵树（贪心解码）".into(),
    )];
    let ks: Vec<String> = DEMO3_TOP_K.iter().map(u32::to_string).collect();
    for d in drafts {
        let fractions: Vec<String> = d.top_k.iter().map(|f| format!("{f:.2}")).collect();
        blocks.push(Block::Text(format!(
            "\n草稿：{}；正确答案在草稿的前 {} 名里的比例：{}",
            d.name,
            ks.join("/"),
            fractions.join(" / ")
        )));
        let rows = d
            .shapes
            .iter()
            .map(|sf| {
                let mut row = vec![
                    shape_label(&sf.branching),
                    sf.nodes.to_string(),
                    format!("{:.2}", sf.tau),
                ];
                row.extend(
                    sf.speedup
                        .iter()
                        .map(|s| s.map_or("放不下".to_string(), |s| format!("{s:.2}×"))),
                );
                row
            })
            .collect();
        blocks.push(Block::Table(Table {
            caption: format!(
                "演示 3：草稿「{}」的各种形状（{}、{}、上下文 {DEMO3_CTX}）",
                d.name, hw.name, target.name
            ),
            headers: vec![
                "草稿形状".into(),
                "每轮验证的草稿 token".into(),
                "τ = 每轮产出的 token".into(),
                format!("{} 加速 批 {}", hw.name, DEMO3_BATCHES[0]),
                format!("批 {}", DEMO3_BATCHES[1]),
            ],
            rows,
        }));
    }
    blocks.push(Block::Text(format!(
        "\n（换算到 {hw} 时：目标 = {tgt}、上下文 {ctx}；草稿每层的代价假设为目标一步的 {cost}（EAGLE 式的单层草稿），\
         树有几层就草稿几次；验证 = 一次送进\"节点数 + 1\"个 token。）",
        hw = hw.name,
        tgt = target.name,
        ctx = DEMO3_CTX,
        cost = percent(DEMO3_DRAFT_COST),
    )));
    let seed_obs1 = "链式草稿越长，后面的位置越难全部猜中，τ 涨得越来越慢；树在每一层多放几个候选，只要正确答案在前几名里就能继续，\
                     τ 明显更高——弱草稿受益更多（它的第一名常错，但前 4 名常对）。这是 SpecInfer、Medusa、EAGLE 用树的原因。";
    let seed_obs2 = "代价是每轮要验证的 token 多得多（几十到几百个）。批 1 时这些 token 几乎免费，大树加速最多；批 32 时，\
                     32 × 几百个 token 让验证变成算力受限，大树反而比小树、甚至比链更慢。";
    let seed_obs3 = "EAGLE 报告树形验证让平均接受长度多 0.6–0.8、加速比多 0.3–0.5（表 5、图 7）：接受长度涨得多，加速比涨得少，\
                     就是因为每次前向的 token 变多了。EAGLE-2 进一步按草稿的置信度动态决定树的形状。";
    let default = Setup::default();
    let observations = if hw == &default.hw && target == &default.target {
        vec![
            seed_obs1.to_string(),
            seed_obs2.to_string(),
            seed_obs3.to_string(),
        ]
    } else {
        let nothing_fits = drafts.iter().all(|d| {
            d.shapes
                .iter()
                .all(|s| s.speedup.iter().all(Option::is_none))
        });
        let mut summary = format!("本配置（一块 {}、目标 {}）：", hw.name, target.name);
        let parts: Vec<String> = drafts
            .iter()
            .map(|d| {
                let best = |i: usize| {
                    d.shapes
                        .iter()
                        .filter_map(|s| s.speedup[i].map(|v| (v, s)))
                        .max_by(|a, b| a.0.total_cmp(&b.0))
                        .map_or("放不下".to_string(), |(v, s)| {
                            format!("{} {v:.2}×", shape_label(&s.branching))
                        })
                };
                format!(
                    "草稿「{}」批 1 最快是 {}，批 32 最快是 {}",
                    d.name,
                    best(0),
                    best(1)
                )
            })
            .collect();
        if nothing_fits {
            summary.push_str(&does_not_fit_line(setup));
        } else {
            summary.push_str(&parts.join("；"));
            summary.push('。');
        }
        vec![
            seed_obs1.to_string(),
            summary,
            format!("{DEFAULT_ONLY}{seed_obs2}"),
            seed_obs3.to_string(),
        ]
    };
    blocks.push(Block::Observations(observations));
    blocks
}

/// Demo 3's figures as JSON.
pub fn demo3_json(drafts: &[DraftFigures]) -> Value {
    json!({
        "ctx_tokens": DEMO3_CTX,
        "batches": DEMO3_BATCHES,
        "draft_cost_per_level": DEMO3_DRAFT_COST,
        "top_k": DEMO3_TOP_K,
        "drafts": drafts.iter().map(|d| json!({
            "name": d.name,
            "top_k_fraction": d.top_k,
            "shapes": d.shapes.iter().map(|s| json!({
                "label": shape_label(&s.branching),
                "branching": s.branching,
                "nodes": s.nodes,
                "tau": s.tau,
                "speedup": s.speedup,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

// ---- demo 4 (not in the original script) --------------------------------------------

/// Prompts demo 4 runs speculative decoding on: the first 16 of demo 3's 64, so the demo
/// takes seconds, not a minute (the test suite checks all 64).
pub const DEMO4_PROMPTS: usize = 16;

/// Demo 4's figures for one draft shape.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredShape {
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
    pub identical: bool,
}

/// Demo 4: runs speculative decoding for real — every demo 3 draft and shape on the first
/// [`DEMO4_PROMPTS`] prompts, greedy — and measures τ, next to demo 3's rank-based estimate.
pub fn demo4_figures(run: &ToyRun) -> Result<Vec<(&'static str, Vec<MeasuredShape>)>, Error> {
    let target = run.target()?;
    let n = DEMO4_PROMPTS.min(run.prompts.nrows());
    // Every prompt in one batch: each round is one batched draft pass per level and one
    // batched verification, each sequence accepting its own path.
    let prompts: Vec<Vec<u32>> = (0..n).map(|i| run.prompts.row(i).to_vec()).collect();
    let mut out = Vec::new();
    for (draft, ranks) in run.drafts()?.iter().zip(&run.ranks) {
        // The shapes side by side: each call is parallel inside its passes, and whole
        // calls keep both cores busy between them.
        let rows = DEMO3_SHAPES
            .par_iter()
            .map(|&levels| -> Result<MeasuredShape, Error> {
                let shape = TreeShape::new(levels)?;
                let mut rng = ChaCha8Rng::seed_from_u64(toy::GEN_SEED);
                let results = speculative_generate_batch(
                    &target,
                    draft,
                    &prompts,
                    toy::N_NEW,
                    &shape,
                    Sampling::Greedy,
                    &mut rng,
                )?;
                let identical = results
                    .iter()
                    .enumerate()
                    .all(|(i, (tokens, _))| run.generated.row(i).iter().eq(tokens));
                let sum =
                    |f: fn(&SpecStats) -> usize| results.iter().map(|(_, s)| f(s)).sum::<usize>();
                let (rounds, generated) = (sum(|s| s.rounds), sum(|s| s.generated));
                Ok(MeasuredShape {
                    branching: levels.to_vec(),
                    rounds,
                    target_forwards: sum(|s| s.target_forwards),
                    draft_forwards: sum(|s| s.draft_forwards),
                    tau_measured: generated as f64 / rounds as f64,
                    tau_ranks: tree_accept_lengths(&ranks.ranks[..n], levels)?.tau(),
                    identical,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        out.push((ranks.name, rows));
    }
    Ok(out)
}

/// Demo 4 as blocks.
pub fn demo4_blocks(figures: &[(&'static str, Vec<MeasuredShape>)]) -> Vec<Block> {
    let mut blocks = vec![Block::Header(format!(
        "演示 4（实测）：真的跑一遍投机解码——草稿出树、目标一次前向验证、KV cache 回滚到接受的路径（前 {DEMO4_PROMPTS} 条提示，贪心）"
    ))];
    for (name, rows) in figures {
        blocks.push(Block::Text(format!("\n草稿：{name}")));
        blocks.push(Block::Table(Table {
            caption: format!(
                "演示 4：草稿「{name}」实测（前 {DEMO4_PROMPTS} 条提示，各生成 {} 个 token）",
                toy::N_NEW
            ),
            headers: strings(&[
                "草稿形状",
                "轮数",
                "目标前向",
                "草稿前向",
                "实测 τ",
                "演示 3 的估计 τ",
                "与目标模型逐字相同",
            ]),
            rows: rows
                .iter()
                .map(|r| {
                    vec![
                        shape_label(&r.branching),
                        r.rounds.to_string(),
                        r.target_forwards.to_string(),
                        r.draft_forwards.to_string(),
                        format!("{:.2}", r.tau_measured),
                        format!("{:.2}", r.tau_ranks),
                        if r.identical { "是" } else { "否" }.to_string(),
                    ]
                })
                .collect(),
        }));
    }
    blocks.push(Block::Text(
        "\n（实测 τ = 产出的 token 数 / 验证轮数；目标前向 = 每条提示一次预填充 + 每轮一次验证。）"
            .into(),
    ));
    blocks.push(Block::Observations(vec![
        "每一种形状的输出都和目标模型自己贪心解码逐字相同：投机解码是无损的——草稿只决定每轮能多走几步，不改变结果。".into(),
        "实测 τ 一般比演示 3 的估计低一些：演示 3 把每个位置都当作一轮的起点来平均，真实的一轮只能从上一轮停下的地方开始，\
         而停下的地方往往正是草稿猜错的难处；序列末尾的最后一轮也只需要几个 token。"
            .into(),
        "目标前向次数 = 轮数（加上预填充），树越大轮数越少；草稿前向次数 = 树的层数 × 轮数（外加追赶），\
         这就是演示 3 里\"树有几层就草稿几次\"的来历。"
            .into(),
    ]));
    blocks
}

/// Demo 4's figures as JSON.
pub fn demo4_json(figures: &[(&'static str, Vec<MeasuredShape>)]) -> Value {
    json!({
        "prompts": DEMO4_PROMPTS,
        "n_new": toy::N_NEW,
        "drafts": figures.iter().map(|(name, rows)| json!({
            "name": name,
            "shapes": rows.iter().map(|r| json!({
                "label": shape_label(&r.branching),
                "branching": r.branching,
                "rounds": r.rounds,
                "target_forwards": r.target_forwards,
                "draft_forwards": r.draft_forwards,
                "tau_measured": r.tau_measured,
                "tau_ranks": r.tau_ranks,
                "identical_to_target": r.identical,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}
