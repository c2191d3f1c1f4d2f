//! Lecture 6, script 05, demos 1 and 2: the claims of the roofline demos, checked on the
//! figures they print — against hand-computed values, independent formulas and
//! properties over many setups. (The snapshot in `output.rs` pins the bytes.)

use crate::common;

use common::{DEMO1, DEMO2, OUTPUT, blocks, observations, text_of};
use decode_lab::Scenario;
use lecture_kit::Block;
use lecture06::spec_decode_on_hardware::demo1::DEMO1_NS;
use lecture06::spec_decode_on_hardware::demo2::CTXS;
use lecture06::spec_decode_on_hardware::words::RoundData;

// ---- demo 1 ---------------------------------------------------------------------

#[test]
fn demo1_the_draft_cost_coefficient_c_is_about_a_fifth() {
    assert!((0.15..=0.25).contains(&DEMO1.c), "c = {}", DEMO1.c);
    // By hand (SPEC §2): both passes are memory-bound at batch 1; each reads its streamed
    // weights once and the KV of 1024 cached tokens, and writes one token's KV.
    // 8B: 2·7,504,924,672 B + 1025·131,072 B at 3.35e12·0.8 B/s, + 1 ms.
    // 1B: 2·1,235,814,400 B + 1025·32,768 B at the same, + 0.3 ms.
    let t_base = (2.0 * 7_504_924_672.0 + 1025.0 * 131_072.0) / (3.35e12 * 0.8) + 1e-3;
    let t_draft = (2.0 * 1_235_814_400.0 + 1025.0 * 32_768.0) / (3.35e12 * 0.8) + 0.3e-3;
    assert!((DEMO1.t_base - t_base).abs() < 1e-12, "{}", DEMO1.t_base);
    assert!((DEMO1.t_draft - t_draft).abs() < 1e-12, "{}", DEMO1.t_draft);
    assert!((DEMO1.c - t_draft / t_base).abs() < 1e-12);
    assert!(OUTPUT.contains(&format!("c = {:.3}", t_draft / t_base)));
}

#[test]
fn demo1_the_draft_reads_about_fifteen_percent_of_the_target_bytes() {
    let share = llm_math::LLAMA32_1B.streamed_params() as f64
        / Scenario::LECTURE.target.streamed_params() as f64;
    assert!((0.14..=0.17).contains(&share), "{share}");
}

#[test]
fn demo1_feeding_up_to_129_tokens_costs_the_same_as_one() {
    for f in &DEMO1.forward {
        if f.n <= 129 {
            let r = f.time_s / DEMO1.t_base;
            assert!(r < 1.01, "n = {}: {r}", f.n);
        }
    }
    let last = DEMO1.forward.last().unwrap();
    assert_eq!(last.n, *DEMO1_NS.last().unwrap());
    assert!(
        last.time_s / DEMO1.t_base > 1.05,
        "257 tokens are past the knee"
    );
    // The largest n before the first pass 1% slower than one token's, found here; the
    // lecture names it in its what-if summary (a fixed γ moves no pass time).
    let free = DEMO1
        .forward
        .iter()
        .take_while(|f| f.time_s / DEMO1.t_base < 1.01);
    assert_eq!(free.last().unwrap().n, 129);
    let summary = observations(&["--gamma", "4"], 1).remove(0);
    assert!(summary.contains("送进 n ≤ 129 个 token"), "{summary}");
    assert!(
        DEMO1.forward.windows(2).all(|w| w[1].time_s >= w[0].time_s),
        "time never falls with n"
    );
}

#[test]
fn demo1_the_best_gamma_at_alpha_point_eight_gives_about_two_times() {
    let best = DEMO1.best.iter().find(|b| b.alpha == 0.8).unwrap().round;
    assert!(best.speculate, "speculation pays at batch 1");
    assert!((1.8..=2.1).contains(&best.speedup), "{}", best.speedup);
    assert!(
        (2..=6).contains(&best.gamma),
        "a few drafts: {}",
        best.gamma
    );
}

#[test]
fn demo1_a_higher_acceptance_rate_drafts_longer_and_gains_more() {
    for w in DEMO1.best.windows(2) {
        assert!(w[1].round.gamma >= w[0].round.gamma);
        assert!(w[1].round.speedup > w[0].round.speedup);
    }
}

// ---- demo 2 ---------------------------------------------------------------------

fn cell(batch: u64, ctx: u64) -> Option<RoundData> {
    let col = CTXS.iter().position(|&c| c == ctx).unwrap();
    DEMO2.grid.iter().find(|r| r.batch == batch).unwrap().cells[col]
}

#[test]
fn demo2_small_batches_speed_up_about_1_9_times() {
    let s = cell(1, 512).unwrap().speedup;
    assert!((1.85..=1.98).contains(&s), "{s}");
}

#[test]
fn demo2_big_batches_shrink_the_gain_to_1_6_1_4_1_1() {
    for (batch, expect) in [(128, 1.6), (256, 1.4), (512, 1.1)] {
        let s = cell(batch, 512).unwrap().speedup;
        assert!((s - expect).abs() <= 0.06, "batch {batch}: {s}");
    }
}

#[test]
fn demo2_the_critical_batch_on_h100_is_about_220_tokens() {
    let t =
        llm_math::critical_tokens(&Scenario::LECTURE.hw, &Scenario::LECTURE.deployment).unwrap();
    assert!((210.0..=230.0).contains(&t), "{t}");
    // And the grid shows it: verification is still free while batch·(γ+1) is below it,
    // and costs more than a plain step once it is well above.
    for row in &DEMO2.grid {
        let b = row.batch;
        for c in row.cells.iter().flatten() {
            let p = c.plan;
            let tokens = (b * (u64::from(p.gamma) + 1)) as f64;
            if tokens < 0.9 * t {
                assert!(p.verify_ratio < 1.01, "batch {b}: {p:?}");
            } else if tokens > 1.5 * t {
                assert!(p.verify_ratio > 1.05, "batch {b}: {p:?}");
            }
        }
    }
}

#[test]
fn demo2_at_32k_context_only_a_dozen_or_so_sequences_fit() {
    let fit = llm_math::max_batch(&Scenario::LECTURE.target, &Scenario::LECTURE.hw, 32768).unwrap();
    assert!((10..=19).contains(&fit), "{fit}");
    assert!(cell(1, 32768).is_some());
    assert!(cell(16, 32768).is_none(), "16 > {fit} does not fit");
}

#[test]
fn demo2_does_not_fit_exactly_where_the_kv_cache_exceeds_memory() {
    // By hand: (80e9 − 2·8,030,261,248) B left for KV, 131,072 B per token:
    // ⌊63,939,477,504 / (ctx · 131,072)⌋ = 952, 119, 14 at 512, 4096, 32768.
    assert_eq!(DEMO2.max_batch, [952, 119, 14]);
    let fitting: Vec<Vec<bool>> = DEMO2
        .grid
        .iter()
        .map(|r| r.cells.iter().map(Option::is_some).collect())
        .collect();
    let y = true;
    let n = false;
    assert_eq!(
        fitting,
        [
            [y, y, y], // batch 1
            [y, y, n], // 16 > 14
            [y, y, n],
            [y, n, n], // 128 > 119
            [y, n, n],
            [y, n, n], // 512 ≤ 952
        ]
    );
    assert_eq!(
        OUTPUT.matches("放不下").count(),
        8 + 1,
        "eight cells and the header"
    );
}

#[test]
fn demo2_longer_context_slightly_lowers_the_speedup_at_equal_batch() {
    for row in &DEMO2.grid {
        let b = row.batch;
        let fitting: Vec<f64> = row.cells.iter().flatten().map(|c| c.speedup).collect();
        for w in fitting.windows(2) {
            assert!(w[1] < w[0], "batch {b}: {fitting:?}");
            assert!(w[0] - w[1] < 0.2, "only slightly: batch {b}: {fitting:?}");
        }
    }
}

#[test]
fn demo2_the_example_verify_of_5_tokens_at_batch_512_is_compute_bound() {
    let e = DEMO2.example.expect("batch 512 fits at context 512");
    assert!(e.compute_bound);
    let ratio = e.t_verify_s / e.t_base_s;
    assert!((3.0..=4.0).contains(&ratio), "{ratio}");
    assert!(OUTPUT.contains("例：批 512、上下文 512："));
    assert!(OUTPUT.contains(&format!("（{ratio:.1} 倍）")));
}

// ---- the printed text -----------------------------------------------------------

#[test]
fn the_output_follows_the_seed_order_and_formats() {
    let order = [
        "演示 1：Llama-3.1-8B + Llama-3.2-1B，一块 H100，批大小 1、上下文 1024",
        "→ c = 0.186（草稿参数 1.24 B，是目标的 15%）",
        "目标模型一次前向送进 n 个 token（验证 γ = n − 1 个草稿）要多久：",
        "| 加速比（一轮 = γ 次草稿 + 1 次验证） |",
        "观察：",
        "演示 2：批大小 × 上下文长度（α = 0.8）",
        "（括号里是\"验证 γ+1 个 token 的时间 / 普通 decode 一步\"。）",
        "例：批 512、上下文 512：",
        "演示 3：树形验证——每层取草稿的前 k 名，一次验证整棵树（贪心解码）",
        "草稿：只用前 1 层（弱）；",
        "| 草稿形状   | 每轮验证的草稿 token | τ = 每轮产出的 token | H100 加速 批 1 | 批 32 |",
        "草稿：INT4 量化的自己（强）；",
        "（换算到 H100 时：目标 = Llama-3.1-8B、上下文 1024；草稿每层的代价假设为目标一步的 5%",
        "观察：",
    ];
    let mut at = 0;
    for needle in order {
        let found = OUTPUT[at..]
            .find(needle)
            .unwrap_or_else(|| panic!("missing or out of order: {needle}"));
        at += found + needle.len();
    }
    assert!(
        OUTPUT.contains("| 0.8 |      4 |       3.36 |"),
        "α printed as 0.8, γ, {{:.2}}"
    );
}

#[test]
fn every_table_line_has_the_same_display_width_as_its_header() {
    for block in OUTPUT.split("\n\n") {
        let lines: Vec<&str> = block.lines().filter(|l| l.starts_with('|')).collect();
        if let Some(first) = lines.first() {
            let w = console::display_width(first);
            for l in &lines {
                assert_eq!(console::display_width(l), w, "{l}");
            }
        }
    }
}

// ---- other setups (the what-if explorer) -----------------------------------------

/// Wording of the original script that only holds for its default setup.
const DEFAULT_ONLY_FIGURES: [&str; 5] = [
    "220 个 token",
    "十几个序列",
    "前 129 个 token",
    "约 15% 的字节",
    "1.6 倍",
];

#[test]
fn every_setup_prints_finite_figures_and_marks_default_only_wording() {
    use lecture06::DEFAULT_ONLY;
    for hw in hw_specs::ACCELERATORS {
        for target in llm_math::MODELS {
            for draft in [
                llm_math::LLAMA32_1B,
                *llm_math::model("Llama-3.2-3B").unwrap(),
            ] {
                for alpha in [0.6, 0.8, 1.0] {
                    let label = format!("{} {} {} {alpha}", hw.name, target.name, draft.name);
                    let alpha_text = alpha.to_string();
                    let args = [
                        "--hw",
                        hw.name,
                        "--target",
                        target.name,
                        "--draft",
                        draft.name,
                    ];
                    let d = Scenario::LECTURE;
                    let same_cards_and_models = *hw == d.hw
                        && *target == d.target
                        && decode_lab::Draft::Model(draft) == d.draft;
                    // What the command line would refuse (a draft of another tokenizer); a
                    // model that does not fit is printed as such, so it stays in.
                    let s = Scenario {
                        hw: *hw,
                        target: *target,
                        draft: decode_lab::Draft::Model(draft),
                        ..Scenario::LECTURE
                    };
                    match s.validate() {
                        Ok(()) | Err(decode_lab::Error::DraftDoesNotFit(_)) => {}
                        Err(_) => continue,
                    }
                    let with_alpha = [&args[..], &["--alpha", &alpha_text]].concat();
                    let demos = [
                        (blocks(&args, 1), same_cards_and_models),
                        (
                            blocks(&with_alpha, 2),
                            same_cards_and_models && alpha == 0.8,
                        ),
                    ];
                    for (blocks, is_default) in demos {
                        let observations: Vec<String> = blocks
                            .iter()
                            .filter_map(|b| match b {
                                Block::Observations(items) => Some(items.clone()),
                                _ => None,
                            })
                            .flatten()
                            .collect();
                        let text = text_of(blocks);
                        assert!(
                            !text.contains("NaN") && !text.contains("inf "),
                            "{label}:\n{text}"
                        );
                        assert!(
                            text.contains(&format!("{} GB", hw.memory_bytes / 1e9))
                                || text.contains(&format!("一块 {}", hw.name)),
                            "{label}"
                        );
                        if is_default {
                            assert!(!text.contains(DEFAULT_ONLY), "{label}");
                            continue;
                        }
                        for item in &observations {
                            if DEFAULT_ONLY_FIGURES.iter().any(|f| item.contains(f)) {
                                assert!(item.starts_with(DEFAULT_ONLY), "{label}: unmarked {item}");
                            }
                        }
                    }
                }
            }
        }
    }
}
