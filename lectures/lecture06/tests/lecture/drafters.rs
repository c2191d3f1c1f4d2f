//! Lecture 6, script 05, demo 7: the drafters run for real on the toy model — the claims
//! of its tables checked on the figures, and each figure against an independent count.

use decode_lab::{Draft, Scenario, Seed, TreeShape, tree_speedup};
use lecture06::spec_decode_on_hardware::demo3::toy_model::ToyModel;
use lecture06::spec_decode_on_hardware::demo3::{BATCHES, CTX, LEVEL_COST};
use lecture06::spec_decode_on_hardware::demo7;
use once_cell::sync::Lazy;

/// Demo 7's figures on the random model, as the command line prints them (run once a
/// process).
static DEMO7: Lazy<std::sync::Arc<demo7::Demo7>> =
    Lazy::new(|| demo7::shared(ToyModel::Random).unwrap());

#[test]
fn every_greedy_tree_static_or_dynamic_is_the_targets_output() {
    let d = &*DEMO7;
    assert_eq!(d.trees.len(), 2 * 2 * demo7::STATIC.len());
    assert!(d.trees.iter().all(|t| t.identical));
    // Pairs of equal node counts: a static shape, then the dynamic tree of its size.
    for pair in d.trees.chunks(2) {
        assert_eq!(pair[0].nodes, pair[1].nodes);
        assert!(pair[1].label.starts_with("动态"));
        let nodes = TreeShape::new(demo7::STATIC[0]).unwrap().nodes();
        assert!(pair[0].nodes >= nodes);
    }
}

/// Each speedup is demo 3's conversion of its τ: recomputed here from the row's own τ.
#[test]
fn speedups_convert_tau_as_demo_3_does() {
    let card = Scenario {
        draft: Draft::FixedCost(LEVEL_COST),
        ctx: CTX,
        ..Scenario::LECTURE
    };
    for t in &DEMO7.trees {
        let depth = if t.label.starts_with("动态") {
            u64::from(demo7::DYNAMIC_DEPTH)
        } else {
            t.label.matches('×').count() as u64 + 1
        };
        let tree = TreeShape::sized(depth, t.nodes).unwrap();
        for (i, &b) in BATCHES.iter().enumerate() {
            let want = tree_speedup(&Scenario { batch: b, ..card }, &Seed, &tree, t.tau).unwrap();
            assert!((t.speedup[i] - want).abs() < 1e-12, "{} batch {b}", t.label);
        }
    }
}

#[test]
fn prompt_lookup_accepts_on_greedy_output_and_hardly_on_sampled() {
    let d = &*DEMO7;
    assert_eq!(d.lookup.len(), 4);
    for l in &d.lookup {
        assert!(l.tau_greedy > l.tau_sampled + 0.2, "{l:?}");
        assert!(l.tau_sampled >= 1.0 && l.tau_greedy <= f64::from(demo7::GAMMA) + 1.0);
    }
    // A lookup costs next to nothing beside a target step on the card.
    assert!(d.lookup_seconds > 0.0 && d.lookup_seconds < 1e-3);
}

#[test]
fn layer_skip_runs_every_k_and_its_c_grows_with_k() {
    let d = &*DEMO7;
    let layers = quant_lab::QCFG.n_layers;
    assert_eq!(d.layer_skip.len(), layers - 1);
    for w in d.layer_skip.windows(2) {
        assert!(w[1].card_layers > w[0].card_layers);
        assert!(w[1].c[0] > w[0].c[0], "c grows with the layers drafted");
    }
    for s in &d.layer_skip {
        assert!(s.tau >= 1.0 && s.tau <= f64::from(demo7::GAMMA) + 1.0);
        assert!(
            s.identical,
            "k = {}: the target's own greedy output",
            s.layers
        );
    }
}

#[test]
fn sampled_trees_run_at_both_temperatures_for_both_drafts() {
    let d = &*DEMO7;
    assert_eq!(d.sampled.len(), 2 * 2 * demo7::SAMPLED.len());
    for s in &d.sampled {
        assert!(s.tau >= 1.0 && s.tau <= 1.0 + 4.0, "{s:?}");
    }
}

/// The figure's axes tick what they count: demo 7's nodes (14–168, under three powers of
/// ten) at 20, 50, 100 and 200, not at 100 and 200 alone; its layer count k at whole
/// numbers, not 1.2 or 1.4.
#[test]
fn the_figures_ticks_fit_what_its_axes_count() {
    let svg = lecture_kit::render::svg::to_string(&demo7::figure(&DEMO7)).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    for tick in ["20", "50", "100", "200", "1", "2", "3"] {
        assert!(texts.contains(&tick), "no tick {tick} in {texts:?}");
    }
    for fraction in ["1.2", "1.4", "1.6", "1.8", "2.2"] {
        assert!(!texts.contains(&fraction), "tick {fraction} in {texts:?}");
    }
}

/// Demo 7's static trees are demo 4's runs of the same draft and shape, decoded once per
/// process (`demo4::greedy::run`): each row's τ is demo 4's, and the kept run is what
/// decoding it here again gives.
#[test]
fn static_trees_are_demo_4s_runs_of_the_same_draft_kept_once() {
    use lecture06::spec_decode_on_hardware::demo3::{shape_label, toy_model};
    use lecture06::spec_decode_on_hardware::demo4::{self, greedy};
    let d4 = demo4::shared(ToyModel::Random).unwrap();
    let statics = DEMO7.trees.iter().filter(|t| !t.label.starts_with("动态"));
    let mut compared = 0;
    for t in statics {
        let draft = d4.drafts.iter().find(|d| d.name == t.draft).unwrap();
        let shape = draft.shapes.iter().find(|s| s.label == t.label).unwrap();
        assert_eq!(t.tau, shape.tau_measured, "{} {}", t.draft, t.label);
        compared += 1;
    }
    assert_eq!(compared, 2 * demo7::STATIC.len());
    // The kept run, against the same decoding done here from scratch: each draft keeps its
    // own (the two drafts accept differently on this tree).
    let run = toy_model::shared(ToyModel::Random).unwrap();
    let levels = demo7::STATIC[0];
    let target = run.target().unwrap();
    let drafts = run.drafts().unwrap();
    let prompts: Vec<Vec<u32>> = (0..demo4::DEMO4_PROMPTS)
        .map(|i| run.prompts.row(i).to_vec())
        .collect();
    let mut rounds = Vec::new();
    for (k, draft) in drafts.iter().enumerate() {
        let kept = greedy::run(run, k, levels).unwrap();
        assert!(std::sync::Arc::ptr_eq(
            &kept,
            &greedy::run(run, k, levels).unwrap()
        ));
        let shape = TreeShape::new(levels).unwrap();
        let proposer = decode_lab::TreeDraft {
            draft,
            shape: &shape,
        };
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(7);
        let fresh = decode_lab::speculative_generate_batch(
            &target,
            &proposer,
            &prompts,
            toy_model::N_NEW,
            decode_lab::Sampling::Greedy,
            &mut rng,
        )
        .unwrap();
        assert_eq!(*kept, fresh, "draft {k}, {}", shape_label(levels));
        rounds.push(fresh.iter().map(|(_, s)| s.rounds).sum::<usize>());
    }
    assert_ne!(rounds[0], rounds[1], "each draft keeps its own run");
    assert!(
        greedy::run(run, 9, levels).is_err(),
        "a draft past the list"
    );
}
