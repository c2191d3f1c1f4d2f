//! Lecture 6, script 05, demos 3 and 4: what the toy model's draft trees accept, what
//! that buys on the accelerator, and speculative decoding for real — the claims of the
//! text checked on the figures. (The snapshot in `output.rs` pins the bytes.)

use crate::common;

use common::{DEMO3, OUTPUT, RANKS, blocks, text_of};
use decode_lab::TreeShape;
use lecture_kit::Block;
use once_cell::sync::Lazy;

/// Demo 4's figures on the random model, as the command line prints them (decoded once a
/// process).
static DEMO4: Lazy<std::sync::Arc<demo4::Demo4>> =
    Lazy::new(|| demo4::shared(toy_model::ToyModel::Random).unwrap());
use lecture06::spec_decode_on_hardware::demo3::toy_model::{DraftRanks, N_NEW};
use lecture06::spec_decode_on_hardware::demo3::{
    self, DraftShapes, SHAPES, Shape, chain_alphas, toy_model,
};
use lecture06::spec_decode_on_hardware::demo4;

// ---- demo 3 ---------------------------------------------------------------------

const WEAK: usize = 0;
const INT4: usize = 1;

fn shape<'a>(d: &'a DraftShapes, branching: &[u32]) -> &'a Shape {
    d.shapes.iter().find(|s| s.branching == branching).unwrap()
}

#[test]
fn demo3_the_weak_draft_is_often_wrong_at_top_1_but_usually_right_in_its_top_4() {
    let weak = &DEMO3[WEAK];
    // The fractions recounted from the ranks themselves: rank < k means "in the top k".
    let all = &RANKS[WEAK].ranks;
    let share = |k: u32| all.iter().filter(|&&r| r < k).count() as f64 / all.len() as f64;
    assert_eq!(
        weak.top_k_fraction,
        [share(1), share(2), share(4), share(8)]
    );
    let top = &weak.top_k_fraction;
    assert!((0.35..=0.75).contains(&top[0]), "top-1 {}", top[0]);
    assert!(top[2] >= 0.75, "top-4 {}", top[2]);
    assert!(top.windows(2).all(|w| w[1] >= w[0]), "top-k grows with k");
}

#[test]
fn demo3_the_int4_draft_is_right_at_top_1_more_often_than_the_weak_one() {
    assert!(
        DEMO3[INT4].top_k_fraction[0] > DEMO3[WEAK].top_k_fraction[0],
        "{:?} vs {:?}",
        DEMO3[INT4].top_k_fraction,
        DEMO3[WEAK].top_k_fraction
    );
}

#[test]
fn demo3_every_draft_ranks_all_generated_tokens() {
    for draft in RANKS.iter() {
        assert_eq!(draft.ranks.len(), toy_model::N_SEQ * toy_model::N_NEW);
        let per_sequence = draft.per_sequence();
        assert_eq!(per_sequence.len(), toy_model::N_SEQ, "{}", draft.name);
        assert!(per_sequence.iter().all(|r| r.len() == toy_model::N_NEW));
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
    let gain = |d: &DraftShapes| shape(d, &[4, 4, 4, 4]).tau - shape(d, &[1, 1, 1, 1]).tau;
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
        for &br in demo3::SHAPES.iter().filter(|b| b.iter().any(|&k| k > 1)) {
            let tree = decode_lab::tree_accept_lengths(&draft.ranks, &TreeShape::new(br).unwrap())
                .unwrap();
            let chain = decode_lab::tree_accept_lengths(
                &draft.ranks,
                &TreeShape::chain(br.len() as u32).unwrap(),
            )
            .unwrap();
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
    assert_eq!(demo3::shape_label(&[1, 1, 1, 1]), "链 γ=4");
    assert_eq!(demo3::shape_label(&[4, 2, 2, 1]), "树 4×2×2×1");
    assert!(OUTPUT.contains("正确答案在草稿的前 1/2/4/8 名里的比例："));
    // Nodes by hand: Σ_j Π_{i≤j} k_i, e.g. 4×2×2×1 → 4 + 8 + 16 + 16 = 44.
    let nodes: Vec<u64> = DEMO3[WEAK].shapes.iter().map(|s| s.nodes).collect();
    assert_eq!(nodes, [1, 2, 4, 6, 14, 39, 44, 168, 340]);
}

#[test]
fn demo3_follows_the_card_and_target_but_not_the_toy_acceptance() {
    let setup = ["--hw", "B200"];
    let on_b200 = common::demo3(&setup);
    for (a, b) in on_b200.drafts.iter().zip(DEMO3.iter()) {
        assert_eq!(a.top_k_fraction, b.top_k_fraction);
        for (sa, sb) in a.shapes.iter().zip(&b.shapes) {
            assert_eq!(sa.tau, sb.tau, "τ is the toy model's, whatever the card");
            assert_ne!(sa.speedup, sb.speedup, "speedups are the card's");
        }
    }
    let blocks = blocks(&setup, 3);
    let Block::Table(t) = &blocks[2] else {
        panic!("{:?}", blocks[2])
    };
    assert_eq!(t.columns[3].header, "B200 加速 批 1");
    let too_big = ["--target", "Llama-3.1-405B"];
    let none = common::demo3(&too_big);
    assert!(
        none.drafts
            .iter()
            .all(|d| d.shapes.iter().all(|s| s.speedup == [None, None]))
    );
}

#[test]
fn demo3_what_if_names_each_drafts_fastest_shape_at_each_batch() {
    let setup = ["--hw", "B200"];
    let d = common::demo3(&setup);
    // The observations as sentences (the terminal wraps them).
    let text: String = blocks(&setup, 3)
        .into_iter()
        .filter_map(|b| match b {
            Block::Observations(items) => Some(items.concat()),
            _ => None,
        })
        .collect();
    assert!(
        text.contains("本配置（一块 B200、目标 Llama-3.1-8B）："),
        "{text}"
    );
    assert!(text.contains(lecture06::DEFAULT_ONLY));
    for draft in &d.drafts {
        for (i, b) in demo3::BATCHES.iter().enumerate() {
            // The fastest shape, found here by sorting rather than by the lecture's max_by.
            let mut shapes: Vec<&Shape> = draft.shapes.iter().collect();
            shapes.sort_by(|x, y| y.speedup[i].unwrap().total_cmp(&x.speedup[i].unwrap()));
            let best = shapes[0];
            let want = format!(
                "批 {b} 最快是 {} {:.2}×",
                best.label,
                best.speedup[i].unwrap()
            );
            assert!(text.contains(&want), "{}: {want}\n{text}", draft.name);
        }
    }
    let too_big = ["--target", "Llama-3.1-405B"];
    let text = text_of(blocks(&too_big, 3));
    assert!(
        text.contains("放不下，这个演示在这块卡上算不出来"),
        "{text}"
    );
    assert!(!text.contains("最快是"), "{text}");
}

// ---- demo 4: speculative decoding for real ------------------------------------------

#[test]
fn demo4_is_lossless_and_measures_tau_just_below_the_rank_estimate() {
    let figures = &*DEMO4;
    assert_eq!(
        figures.drafts.iter().map(|f| f.name).collect::<Vec<_>>(),
        toy_model::DRAFT_NAMES
    );
    for draft in &figures.drafts {
        let name = draft.name;
        let rows = &draft.shapes;
        assert_eq!(rows.len(), demo3::SHAPES.len());
        for r in rows {
            assert!(
                r.identical_to_target,
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
                r.rounds + figures.prompts,
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
    let text = text_of(demo4_blocks(figures));
    assert!(
        text.contains("与目标模型逐字相同") && !text.contains("| 否"),
        "{text}"
    );
    assert!(text.contains("投机解码是无损的"), "{text}");
}

#[test]
fn demo4_says_so_when_an_output_differs_from_the_target() {
    let mut figures = demo4::Demo4::clone(&DEMO4);
    figures.drafts[1].shapes[3].identical_to_target = false;
    let text = text_of(demo4_blocks(&figures));
    assert!(text.contains("| 否"), "{text}");
    assert!(!text.contains("投机解码是无损的"), "{text}");
    assert!(text.contains("这是实现的错误"), "{text}");
}

#[test]
fn demo4_draws_its_figure_so_plot_is_honoured_for_it_alone() {
    // `--demo 4 --plot DIR` used to write nothing; the runner writes every figure block.
    let blocks = demo4_blocks(&DEMO4);
    let figures: Vec<&lecture_kit::Figure> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Figure(f) => Some(f),
            _ => None,
        })
        .collect();
    assert_eq!(figures.len(), 1);
    assert_eq!(figures[0].id, "measured");
    for (panel, draft) in figures[0].panels.iter().zip(&DEMO4.drafts) {
        let measured: Vec<f64> = draft.shapes.iter().map(|s| s.tau_measured).collect();
        let drawn: Vec<f64> = panel.series[0].points.iter().map(|p| p.1).collect();
        assert_eq!(drawn, measured, "{}", draft.name);
    }
}

/// What demo 4 prints for `figures`, as blocks.
fn demo4_blocks(figures: &demo4::Demo4) -> Vec<Block> {
    lecture_kit::testing::blocks(4, |out| demo4::print(out, figures)).unwrap()
}

// ---- ranks by hand -----------------------------------------------------------

/// A draft model's ranks: `pattern` repeated over two sequences.
fn ranks_of(pattern: &[u32]) -> DraftRanks {
    let ranks = pattern.iter().copied().cycle().take(2 * N_NEW).collect();
    DraftRanks {
        name: "手算",
        ranks,
        rounds: None,
    }
}

#[test]
fn a_heads_alphas_and_acceptance_read_its_own_rounds() {
    // Two sequences of rounds by hand: the head's first guesses are all right, but
    // from rounds starting at odd positions its second guess misses. A draft model with
    // the same first ranks would accept every second level too.
    let rows: Vec<Vec<u32>> = (0..2 * N_NEW)
        .map(|t| match t % 2 {
            0 => vec![0, 0, 0, 0],
            _ => vec![0, 5, 0, 0],
        })
        .collect();
    let head = DraftRanks {
        name: "头",
        ranks: vec![0; 2 * N_NEW],
        rounds: Some(toy_model::RoundRanks { levels: 4, rows }),
    };
    assert_eq!(chain_alphas(&head, 4), [1.0, 0.5, 1.0, 1.0]);
    let chain = TreeShape::chain(4).unwrap();
    assert_eq!(head.accept(&chain).unwrap().tau(), 1.0 + (4.0 + 1.0) / 2.0);
    assert_eq!(chain_alphas(&ranks_of(&[0]), 4), [1.0; 4]);
    // The head proposes no tree deeper than its levels; a draft model any.
    assert!(head.drafts(&[2, 2, 2, 2]) && !head.drafts(&[1; 6]));
    assert!(ranks_of(&[0]).drafts(&[1; 6]));
    // Every shape demo 3 runs is within the levels a head's ranks go to.
    assert!(SHAPES.iter().all(|s| s.len() <= toy_model::HEAD_LEVELS));
}

#[test]
fn chain_alphas_by_hand() {
    assert_eq!(chain_alphas(&ranks_of(&[0]), 4), [1.0; 4]);
    assert_eq!(chain_alphas(&ranks_of(&[3]), 4), [0.0; 4]);
    // 0, 1, 0, 1, …: half the rounds accept their first token and none a second.
    assert_eq!(chain_alphas(&ranks_of(&[0, 1]), 4), [0.5, 0.0, 0.0, 0.0]);
    // 0, 0, 2 repeated over 48 tokens: rounds from t ≡ 0 (mod 3) accept 2, from t ≡ 1
    // accept 1, from t ≡ 2 none. Position 1: 32 of 48. Position 2: of the 32 rounds
    // that accepted position 1 (all have a position 2: t ≤ 46), the 16 from t ≡ 0.
    // Position 3: the 16 that got there (t ≤ 45) all stop.
    assert_eq!(
        chain_alphas(&ranks_of(&[0, 0, 2]), 4),
        [2.0 / 3.0, 0.5, 0.0, 0.0]
    );
}
