//! Every public function of the planner on scenarios, cost terms and prompt tokens holding
//! anything (NaN, ±∞, 0, negative, huge): no panic, and every `Ok` finite and not
//! negative. Run by `cargo test` with the dev profile's overflow checks, and again under
//! the `probe` profile (`.ci/run`).

use decode_lab::arbitrary::scenario;
use decode_lab::{Pricing, TreeShape, best_round, cost_coefficient, round_plan, tree_speedup};
use hw_specs::arbitrary::{accelerator, extreme_f64, mostly};
use llm_math::WeightDtype;
use llm_math::arbitrary::{deployment, extreme_u64, model_config, shape, size};
use planner::{
    CostTerms, Plan, Prefill, dequant_time, draft_layer_time, implied_overlap, mixed_pass,
    overlapped_time, round_overhead, verify_extra_time, verify_time_per_token,
};
use proptest::prelude::*;

fn finite(x: f64) -> bool {
    x.is_finite() && x >= 0.0
}

/// Cost terms of any value, each term drawn in or out of its range.
fn cost_terms() -> impl Strategy<Value = CostTerms> {
    (
        (mostly(0.0..1.0), mostly(0.0..1e-4), mostly(0.0..1e-3)),
        (mostly(0.0..1e-4), mostly(0.0..1e-4), mostly(0.0..1e-5)),
        (mostly(0.0..1.0), mostly(0.0..20.0), mostly(0.0..1e-5)),
        (mostly(0.0..0.1), mostly(0.0..1.0), mostly(0.0..1.0)),
    )
        .prop_map(
            |(
                (overlap, verify, fixed),
                (per_seq, per_layer, per_seq_layer),
                (w8a16, int4, expert),
                (verify_fraction, fp8_bandwidth, fp8_compute),
            )| CostTerms {
                overlap,
                verify_per_batch_token: verify,
                round_fixed: fixed,
                round_per_sequence: per_seq,
                draft_per_layer: per_layer,
                per_sequence_layer: per_seq_layer,
                w8a16_bandwidth: w8a16,
                int4_dequant_ops: int4,
                expert_latency: expert,
                verify_cost_per_token: verify_fraction,
                fp8: planner::DtypeEfficiency {
                    bandwidth: fp8_bandwidth,
                    compute: fp8_compute,
                },
                ..CostTerms::NEUTRAL
            },
        )
}

/// Prompt tokens carried by a pass, none half the time.
fn prefill() -> impl Strategy<Value = Prefill> {
    prop_oneof![
        Just(Prefill::NONE),
        (size(0..100_000), size(0..200_000)).prop_map(|(tokens, ctx)| Prefill { tokens, ctx }),
    ]
}

/// A plan: the seed's half the time, anything otherwise.
fn plan() -> impl Strategy<Value = Plan> {
    let terms = prop_oneof![Just(CostTerms::NEUTRAL), cost_terms()];
    (terms, prefill()).prop_map(|(terms, prefill)| Plan { terms, prefill })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn planned_passes_and_rounds_are_refused_or_finite(
        s in scenario(),
        p in plan(),
        n in prop_oneof![1u64..64, extreme_u64()],
        gamma in prop_oneof![1u32..16, any::<u32>()],
        tau in extreme_f64(),
    ) {
        let passes = [p.target_pass_time(&s, n), p.draft_step_time(&s), p.round_extra_time(&s)];
        for x in passes.into_iter().chain([cost_coefficient(&s, &p)]).flatten() {
            prop_assert!(finite(x), "{x}");
        }
        if let Ok(r) = round_plan(&s, &p, gamma) {
            for x in [r.speedup, r.t_base, r.t_draft, r.t_verify, r.t_round] {
                prop_assert!(finite(x), "{r:?}");
            }
        }
        if let Ok(b) = best_round(&s, &p) {
            prop_assert!(finite(b.speedup()));
        }
        if let Ok(tree) = TreeShape::sized(gamma.into(), n)
            && let Ok(x) = tree_speedup(&s, &p, &tree, tau)
        {
            prop_assert!(finite(x), "{x}");
        }
        if let Ok(c) = p.target_pass_cost(&s, n) {
            prop_assert!(finite(c.compute_time) && finite(c.memory_time), "{c:?}");
        }
    }

    #[test]
    fn a_mixed_pass_is_refused_or_finite(
        cfg in model_config(),
        hw in accelerator(),
        shape in shape(),
        prefill in prefill(),
        dep in deployment(),
    ) {
        if let Ok(c) = mixed_pass(&cfg, &hw, shape, prefill, &dep) {
            for x in [c.flops, c.bytes, c.weight_bytes, c.compute_time, c.memory_time, c.comm_time] {
                prop_assert!(finite(x), "{c:?}");
            }
        }
    }

    #[test]
    fn cost_terms_are_refused_or_finite(
        a in mostly(0.0..1.0),
        b in mostly(0.0..1.0),
        c in mostly(0.0..1.0),
        n in extreme_u64(),
        m in extreme_u64(),
        hw in accelerator(),
    ) {
        for x in [
            overlapped_time(a, b, c),
            round_overhead(a, b, n),
            draft_layer_time(a, n, m),
            verify_extra_time(n, m, a),
            verify_time_per_token(a * 1e12, &hw, WeightDtype::Bf16, b),
            dequant_time(a * 1e12, &hw, WeightDtype::Int4, b * 1e3),
        ].into_iter().flatten() {
            prop_assert!(finite(x), "{x}");
        }
        if let Ok(x) = implied_overlap(a, b, c) {
            prop_assert!((0.0..=1.0).contains(&x), "{x}");
        }
        let terms = CostTerms { overlap: a, round_fixed: b, draft_per_layer: c, ..CostTerms::NEUTRAL };
        let _ = terms.check();
        let formats = CostTerms { w8a16_bandwidth: a, int4_dequant_ops: b * 1e3, ..CostTerms::NEUTRAL };
        for w in WeightDtype::ALL {
            if let Ok((bandwidth, compute)) = formats.efficiencies(w, c, 0.6) {
                prop_assert!(finite(bandwidth) && finite(compute), "{w:?}");
            }
        }
    }
}

/// The properties above say little if almost every drawn plan were refused: over a fixed
/// sample of 1,000, a good share must price a round.
#[test]
fn a_good_share_of_drawn_plans_prices_a_round() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = (scenario(), plan());
    let mut priced = 0;
    for _ in 0..1000 {
        let (s, p) = strategy.new_tree(&mut runner).expect("a plan").current();
        priced += usize::from(round_plan(&s, &p, 4).is_ok());
    }
    assert!(
        priced >= 50,
        "only {priced} of 1000 drawn plans priced a round"
    );
}
