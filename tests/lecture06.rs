//! Lecture 6: the printed output, and the claims of script 05 checked on its own figures.

use decode_lab::BestRound;
use lecture06::spec_decode_on_hardware::{self as s05, DEMO1_NS, DEMO2_CTXS};
use once_cell::sync::Lazy;

static OUTPUT: Lazy<String> = Lazy::new(|| crate::capture(lecture06::run));
static SETUP: Lazy<s05::Setup> = Lazy::new(s05::Setup::default);
static DEMO1: Lazy<s05::Demo1> = Lazy::new(|| {
    s05::demo1_figures(&SETUP)
        .unwrap()
        .expect("8B fits on an H100")
});
static DEMO2: Lazy<s05::Demo2> = Lazy::new(|| s05::demo2_figures(&SETUP).unwrap());
static DEMO3: Lazy<Vec<s05::DraftFigures>> =
    Lazy::new(|| s05::demo3_from_ranks(&SETUP, &RANKS).unwrap());
static TOY: Lazy<s05::ToyRun> = Lazy::new(|| s05::toy_run().unwrap());
static RANKS: Lazy<Vec<s05::DraftRanks>> = Lazy::new(|| TOY.ranks.clone());

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
    let share = SETUP.draft.streamed_params() as f64 / SETUP.target.streamed_params() as f64;
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
    let t = llm_math::critical_tokens(&SETUP.hw);
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
    let fit = llm_math::max_batch(&SETUP.target, &SETUP.hw, 32768).unwrap();
    assert!((10..=19).contains(&fit), "{fit}");
    assert!(cell(1, 32768).is_some());
    assert!(cell(16, 32768).is_none(), "16 > {fit} does not fit");
}

#[test]
fn demo2_does_not_fit_exactly_where_the_kv_cache_exceeds_memory() {
    for (b, cells) in &DEMO2.grid {
        for (&ctx, c) in DEMO2_CTXS.iter().zip(cells) {
            let fits = *b <= llm_math::max_batch(&SETUP.target, &SETUP.hw, ctx).unwrap();
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
    let (base, verify, compute_bound) = DEMO2.example.expect("batch 512 fits at context 512");
    assert!(compute_bound);
    let ratio = verify / base;
    assert!((3.0..=4.0).contains(&ratio), "{ratio}");
    assert!(OUTPUT.contains("例：批 512、上下文 512："));
    assert!(OUTPUT.contains(&format!("（{ratio:.1} 倍）")));
}

// ---- demo 3 ---------------------------------------------------------------------

const WEAK: usize = 0;
const INT4: usize = 1;

fn shape<'a>(d: &'a s05::DraftFigures, branching: &[u32]) -> &'a s05::ShapeFigures {
    d.shapes.iter().find(|s| s.branching == branching).unwrap()
}

#[test]
fn demo3_the_weak_draft_is_often_wrong_at_top_1_but_usually_right_in_its_top_4() {
    let weak = &DEMO3[WEAK];
    assert_eq!(weak.name, "只用前 1 层（弱）");
    assert_eq!(s05::DEMO3_TOP_K, [1, 2, 4, 8]);
    assert!(
        (0.35..=0.75).contains(&weak.top_k[0]),
        "top-1 {}",
        weak.top_k[0]
    );
    assert!(weak.top_k[2] >= 0.75, "top-4 {}", weak.top_k[2]);
    assert!(
        weak.top_k.windows(2).all(|w| w[1] >= w[0]),
        "top-k grows with k"
    );
}

#[test]
fn demo3_the_int4_draft_is_right_at_top_1_more_often_than_the_weak_one() {
    assert_eq!(DEMO3[INT4].name, "INT4 量化的自己（强）");
    assert!(
        DEMO3[INT4].top_k[0] > DEMO3[WEAK].top_k[0],
        "{:?} vs {:?}",
        DEMO3[INT4].top_k,
        DEMO3[WEAK].top_k
    );
}

#[test]
fn demo3_every_draft_ranks_all_generated_tokens() {
    for draft in RANKS.iter() {
        assert_eq!(draft.ranks.len(), s05::toy::N_SEQ);
        assert!(
            draft.ranks.iter().all(|r| r.len() == s05::toy::N_NEW),
            "{}",
            draft.name
        );
    }
}

#[test]
fn demo3_chains_gain_ever_less_tau_per_extra_level() {
    for d in DEMO3.iter() {
        let chains: Vec<(f64, f64)> = d
            .shapes
            .iter()
            .filter(|s| s.branching.iter().all(|&k| k == 1))
            .map(|s| (s.branching.len() as f64, s.tau))
            .collect();
        assert_eq!(
            chains.iter().map(|c| c.0).collect::<Vec<_>>(),
            [1.0, 2.0, 4.0, 6.0]
        );
        // τ at γ = 0 is 1 (the target's own token). Gain per extra level shrinks.
        let mut points = vec![(0.0, 1.0)];
        points.extend(chains);
        let per_level: Vec<f64> = points
            .windows(2)
            .map(|w| (w[1].1 - w[0].1) / (w[1].0 - w[0].0))
            .collect();
        assert!(
            per_level.iter().all(|&g| g > 0.0),
            "{}: τ rises with γ: {per_level:?}",
            d.name
        );
        assert!(
            per_level.windows(2).all(|w| w[1] < w[0]),
            "{}: {per_level:?}",
            d.name
        );
    }
}

#[test]
fn demo3_trees_accept_more_than_chains_and_the_weak_draft_gains_more() {
    let gain = |d: &s05::DraftFigures| shape(d, &[4, 4, 4, 4]).tau - shape(d, &[1, 1, 1, 1]).tau;
    for d in DEMO3.iter() {
        assert!(gain(d) > 0.5, "{}: {}", d.name, gain(d));
    }
    assert!(
        gain(&DEMO3[WEAK]) > gain(&DEMO3[INT4]),
        "{} vs {}",
        gain(&DEMO3[WEAK]),
        gain(&DEMO3[INT4])
    );
}

#[test]
fn demo3_every_tree_accepts_at_least_its_chain_at_every_position_and_more_on_average() {
    for draft in RANKS.iter() {
        for &br in s05::DEMO3_SHAPES
            .iter()
            .filter(|b| b.iter().any(|&k| k > 1))
        {
            let tree = decode_lab::tree_accept_lengths(&draft.ranks, br).unwrap();
            let chain = decode_lab::tree_accept_lengths(&draft.ranks, &vec![1; br.len()]).unwrap();
            assert!(
                tree.accepted
                    .iter()
                    .zip(&chain.accepted)
                    .all(|(t, c)| t >= c),
                "{}: {br:?}",
                draft.name
            );
            assert!(tree.tau() > chain.tau(), "{}: {br:?}", draft.name);
        }
    }
}

#[test]
fn demo3_at_batch_1_the_fastest_shape_is_a_tree() {
    assert_eq!(s05::DEMO3_BATCHES, [1, 32]);
    for d in DEMO3.iter() {
        let best = d
            .shapes
            .iter()
            .max_by(|a, b| a.speedup[0].unwrap().total_cmp(&b.speedup[0].unwrap()))
            .unwrap();
        assert!(
            best.branching.iter().any(|&k| k > 1),
            "{}: {:?}",
            d.name,
            best.branching
        );
    }
}

#[test]
fn demo3_at_batch_32_the_big_trees_are_slower_than_the_chain() {
    for d in DEMO3.iter() {
        let chain = shape(d, &[1, 1, 1, 1]).speedup[1].unwrap();
        for big in [&[8, 4, 2, 1][..], &[4, 4, 4, 4]] {
            assert!(
                shape(d, big).speedup[1].unwrap() < chain,
                "{}: {big:?}",
                d.name
            );
        }
        // …while at batch 1 the same trees beat the chain.
        assert!(shape(d, &[8, 4, 2, 1]).speedup[0] > shape(d, &[1, 1, 1, 1]).speedup[0]);
        assert!(
            d.shapes
                .iter()
                .all(|s| s.speedup.iter().all(Option::is_some)),
            "everything fits on an H100"
        );
    }
}

#[test]
fn demo3_shapes_are_labelled_as_the_script_labels_them() {
    assert_eq!(s05::shape_label(&[1, 1, 1, 1]), "链 γ=4");
    assert_eq!(s05::shape_label(&[4, 2, 2, 1]), "树 4×2×2×1");
    assert!(OUTPUT.contains("正确答案在草稿的前 1/2/4/8 名里的比例："));
    let nodes: Vec<u64> = DEMO3[WEAK].shapes.iter().map(|s| s.nodes).collect();
    assert_eq!(nodes, [1, 2, 4, 6, 14, 39, 44, 168, 340]);
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

// ---- other setups and exports (the what-if explorer) ------------------------------

#[test]
fn markdown_export_prints_every_table_under_a_heading_and_nothing_else() {
    let opts = lecture06::Options {
        format: lecture06::Format::Markdown,
        ..Default::default()
    };
    let mut out = Vec::new();
    lecture06::run_with(&mut out, &opts).unwrap();
    let md = String::from_utf8(out).unwrap();
    insta::assert_snapshot!("lecture06_markdown", md);
    assert_eq!(
        md.matches("### ").count(),
        5,
        "two tables in demo 1, one in demo 2, two in demo 3"
    );
    for line in md.lines().filter(|l| !l.is_empty()) {
        assert!(line.starts_with("### ") || line.starts_with('|'), "{line}");
    }
}

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
    use s05::{DEFAULT_ONLY, Setup};
    for hw in hw_specs::ACCELERATORS {
        for target in llm_math::MODELS {
            for draft in [llm_math::LLAMA32_1B, llm_math::LLAMA32_3B] {
                for alpha in [0.6, 0.8, 1.0] {
                    let setup = Setup {
                        hw: *hw,
                        target: *target,
                        draft,
                        alpha,
                    };
                    let label = format!("{} {} {} {alpha}", hw.name, target.name, draft.name);
                    let defaults = Setup::default();
                    let demo1_is_default = setup.hw == defaults.hw
                        && setup.target == defaults.target
                        && setup.draft == defaults.draft;
                    let demos = [
                        (
                            s05::demo1_blocks(&setup, &s05::demo1_figures(&setup).unwrap())
                                .unwrap(),
                            demo1_is_default,
                        ),
                        (
                            s05::demo2_blocks(&setup, &s05::demo2_figures(&setup).unwrap()),
                            setup == defaults,
                        ),
                    ];
                    for (blocks, is_default) in demos {
                        let mut text = Vec::new();
                        console::render_text(&mut text, &blocks).unwrap();
                        let text = String::from_utf8(text).unwrap();
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
                        for block in &blocks {
                            let console::Block::Observations(items) = block else {
                                continue;
                            };
                            for item in items {
                                if DEFAULT_ONLY_FIGURES.iter().any(|f| item.contains(f)) {
                                    assert!(
                                        item.starts_with(DEFAULT_ONLY),
                                        "{label}: unmarked {item}"
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn demo3_follows_the_card_and_target_but_not_the_toy_acceptance() {
    let setup = s05::Setup {
        hw: hw_specs::B200,
        ..s05::Setup::default()
    };
    let on_b200 = s05::demo3_from_ranks(&setup, &RANKS).unwrap();
    for (a, b) in on_b200.iter().zip(DEMO3.iter()) {
        assert_eq!(a.top_k, b.top_k);
        for (sa, sb) in a.shapes.iter().zip(&b.shapes) {
            assert_eq!(sa.tau, sb.tau, "τ is the toy model's, whatever the card");
            assert_ne!(sa.speedup, sb.speedup, "speedups are the card's");
        }
    }
    let blocks = s05::demo3_blocks(&setup, &on_b200);
    let console::Block::Table(t) = &blocks[2] else {
        panic!("{:?}", blocks[2])
    };
    assert_eq!(t.headers[3], "B200 加速 批 1");
    let too_big = s05::Setup {
        target: llm_math::LLAMA31_405B,
        ..s05::Setup::default()
    };
    let none = s05::demo3_from_ranks(&too_big, &RANKS).unwrap();
    assert!(
        none.iter()
            .all(|d| d.shapes.iter().all(|s| s.speedup == [None, None]))
    );
}

// ---- demo 4: speculative decoding for real ------------------------------------------

#[test]
fn demo4_is_lossless_and_measures_tau_just_below_the_rank_estimate() {
    let figures = s05::demo4_figures(&TOY).unwrap();
    assert_eq!(
        figures.iter().map(|f| f.0).collect::<Vec<_>>(),
        s05::DRAFT_NAMES
    );
    for (name, rows) in &figures {
        assert_eq!(rows.len(), s05::DEMO3_SHAPES.len());
        for r in rows {
            assert!(
                r.identical,
                "{name} {:?} differs from the target's greedy output",
                r.branching
            );
            // Rounds start only where the previous one stopped (often a hard position),
            // so the measured τ cannot beat the every-position estimate by much.
            assert!(
                r.tau_measured <= r.tau_ranks + 0.05,
                "{name} {:?}: {} vs {}",
                r.branching,
                r.tau_measured,
                r.tau_ranks
            );
            assert!(r.tau_measured > 1.0);
            assert_eq!(
                r.target_forwards,
                r.rounds + s05::DEMO4_PROMPTS,
                "one prefill per prompt, one pass per round"
            );
            assert!(r.draft_forwards >= r.rounds * r.branching.len() / 2);
        }
        let tau = |b: &[u32]| rows.iter().find(|r| r.branching == b).unwrap().tau_measured;
        assert!(
            tau(&[4, 4, 4, 4]) > tau(&[1, 1, 1, 1]),
            "{name}: the big tree accepts more in practice too"
        );
    }
    let blocks = s05::demo4_blocks(&figures);
    let mut text = Vec::new();
    console::render_text(&mut text, &blocks).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("与目标模型逐字相同") && !text.contains("| 否"),
        "{text}"
    );
}
