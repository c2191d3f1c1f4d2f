//! Lecture 6: the printed output, and the claims of script 05 checked on its own figures.

use decode_lab::BestRound;
use lecture06::spec_decode_on_hardware::{self as s05, DEMO1_NS, DEMO2_CTXS};
use once_cell::sync::Lazy;

static OUTPUT: Lazy<String> = Lazy::new(|| crate::capture(lecture06::run));
static DEMO1: Lazy<s05::Demo1> = Lazy::new(|| s05::demo1_figures().unwrap());
static DEMO2: Lazy<s05::Demo2> = Lazy::new(|| s05::demo2_figures().unwrap());

#[test]
fn lecture06_prints_what_the_snapshot_pins() {
    insta::assert_snapshot!("lecture06", OUTPUT.as_str());
}

#[test]
fn the_output_is_identical_on_every_run() {
    assert_eq!(crate::capture(lecture06::run), *OUTPUT);
}

// ---- demo 1 ---------------------------------------------------------------------

#[test]
fn demo1_the_draft_cost_coefficient_c_is_about_a_fifth() {
    assert!((0.15..=0.25).contains(&DEMO1.c), "c = {}", DEMO1.c);
    assert_eq!(DEMO1.c, DEMO1.t_draft / DEMO1.t_base);
}

#[test]
fn demo1_the_draft_reads_about_fifteen_percent_of_the_target_bytes() {
    let share = s05::DRF.streamed_params() as f64 / s05::TGT.streamed_params() as f64;
    assert!((0.14..=0.17).contains(&share), "{share}");
}

#[test]
fn demo1_feeding_up_to_129_tokens_costs_the_same_as_one() {
    assert_eq!(
        DEMO1.forward.iter().map(|f| f.0).collect::<Vec<_>>(),
        DEMO1_NS
    );
    for &(n, t) in &DEMO1.forward {
        if n <= 129 {
            assert!(t / DEMO1.t_base < 1.01, "n = {n}: {}", t / DEMO1.t_base);
        }
    }
    let (_, t257) = DEMO1.forward.last().unwrap();
    assert!(t257 / DEMO1.t_base > 1.05, "257 tokens are past the knee");
    assert!(
        DEMO1.forward.windows(2).all(|w| w[1].1 >= w[0].1),
        "time never falls with n"
    );
}

#[test]
fn demo1_the_best_gamma_at_alpha_point_eight_gives_about_two_times() {
    let (_, best) = DEMO1.best.iter().find(|(a, _)| *a == 0.8).unwrap();
    let BestRound::Speculate(p) = best else {
        panic!("speculation pays at batch 1")
    };
    assert!((1.8..=2.1).contains(&p.speedup), "{}", p.speedup);
    assert!((2..=6).contains(&p.gamma), "a few drafts: {}", p.gamma);
}

#[test]
fn demo1_a_higher_acceptance_rate_drafts_longer_and_gains_more() {
    for w in DEMO1.best.windows(2) {
        assert!(w[1].1.gamma() >= w[0].1.gamma());
        assert!(w[1].1.speedup() > w[0].1.speedup());
    }
}

// ---- demo 2 ---------------------------------------------------------------------

fn cell(batch: u64, ctx: u64) -> Option<BestRound> {
    let col = DEMO2_CTXS.iter().position(|&c| c == ctx).unwrap();
    DEMO2.grid.iter().find(|(b, _)| *b == batch).unwrap().1[col]
}

#[test]
fn demo2_small_batches_speed_up_about_1_9_times() {
    let s = cell(1, 512).unwrap().speedup();
    assert!((1.85..=1.98).contains(&s), "{s}");
}

#[test]
fn demo2_big_batches_shrink_the_gain_to_1_6_1_4_1_1() {
    for (batch, expect) in [(128, 1.6), (256, 1.4), (512, 1.1)] {
        let s = cell(batch, 512).unwrap().speedup();
        assert!((s - expect).abs() <= 0.06, "batch {batch}: {s}");
    }
}

#[test]
fn demo2_the_critical_batch_on_h100_is_about_220_tokens() {
    let t = llm_math::critical_tokens(&s05::HW);
    assert!((210.0..=230.0).contains(&t), "{t}");
    // And the grid shows it: verification is still free while batch·(γ+1) is below it,
    // and costs more than a plain step once it is well above.
    for (b, cells) in &DEMO2.grid {
        for c in cells.iter().flatten() {
            let p = c.plan().unwrap();
            let tokens = (*b * (u64::from(p.gamma) + 1)) as f64;
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
    let fit = llm_math::max_batch(&s05::TGT, &s05::HW, 32768).unwrap();
    assert!((10..=19).contains(&fit), "{fit}");
    assert!(cell(1, 32768).is_some());
    assert!(cell(16, 32768).is_none(), "16 > {fit} does not fit");
}

#[test]
fn demo2_does_not_fit_exactly_where_the_kv_cache_exceeds_memory() {
    for (b, cells) in &DEMO2.grid {
        for (&ctx, c) in DEMO2_CTXS.iter().zip(cells) {
            let fits = *b <= llm_math::max_batch(&s05::TGT, &s05::HW, ctx).unwrap();
            assert_eq!(c.is_some(), fits, "batch {b}, ctx {ctx}");
        }
    }
}

#[test]
fn demo2_longer_context_slightly_lowers_the_speedup_at_equal_batch() {
    for (b, cells) in &DEMO2.grid {
        let fitting: Vec<f64> = cells.iter().flatten().map(BestRound::speedup).collect();
        for w in fitting.windows(2) {
            assert!(w[1] < w[0], "batch {b}: {fitting:?}");
            assert!(w[0] - w[1] < 0.2, "only slightly: batch {b}: {fitting:?}");
        }
    }
}

#[test]
fn demo2_the_example_verify_of_5_tokens_at_batch_512_is_compute_bound() {
    let ratio = DEMO2.example_verify / DEMO2.example_base;
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
