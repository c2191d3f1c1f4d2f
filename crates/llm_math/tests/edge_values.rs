//! Every public function of `llm_math` on models, cards, deployments and shapes holding
//! anything (0, `u64::MAX`, NaN, ±∞, negative): no panic, and every `Ok` is finite and
//! not negative. Run by `cargo test` with the dev profile's overflow checks, so an integer
//! overflow is a failure too.

use hw_specs::arbitrary::{accelerator, mostly};
use llm_math::arbitrary::{deployment, extreme_u64, model_config, prefill, shape, size};
use llm_math::{
    CostTerms, WeightDtype, critical_tokens, dequant_time, draft_layer_time, expected_experts_read,
    forward_cost, forward_cost_with_prefill, implied_overlap, max_batch_on, model, overlapped_time,
    pass_time_with_overlap, round_overhead, verify_extra_time, verify_time_per_token,
};
use proptest::prelude::*;

fn finite(x: f64) -> bool {
    x.is_finite() && x >= 0.0
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn a_pass_is_refused_or_finite(
        cfg in model_config(),
        hw in accelerator(),
        shape in shape(),
        prefill in prefill(),
        dep in deployment(),
    ) {
        if let Ok(c) = forward_cost_with_prefill(&cfg, &hw, shape, prefill, &dep) {
            for x in [c.flops, c.bytes, c.compute_time, c.memory_time, c.comm_time, c.time()] {
                prop_assert!(finite(x), "{c:?}");
            }
            if let Ok(t) = c.checked_time() {
                prop_assert!(finite(t));
            }
            for overlap in [0.0, 0.5, 1.0] {
                prop_assert!(finite(pass_time_with_overlap(&c, overlap).unwrap()));
            }
        }
        if let Ok(c) = forward_cost(&cfg, &hw, shape, &dep) {
            prop_assert!(finite(c.time()));
        }
    }

    #[test]
    fn a_capacity_is_refused_or_a_count(
        cfg in model_config(),
        hw in accelerator(),
        ctx in size(1..200_000),
        dep in deployment(),
    ) {
        if max_batch_on(&cfg, &hw, ctx, &dep).is_ok() {
            prop_assert!(cfg.validate().is_ok() && hw.validate().is_ok());
        }
        if cfg.validate().is_ok() {
            // The counts of a shape that validates never overflow.
            let _ = (cfg.n_params(), cfg.streamed_params(), cfg.kv_bytes_per_token());
            let _ = (cfg.active_params(), cfg.sixteen_bit_params(), cfg.kv_elements_per_token());
            for kv in [llm_math::KvDtype::Bf16, llm_math::KvDtype::Fp8] {
                prop_assert!(finite(cfg.kv_bytes_at(ctx, kv)));
            }
            prop_assert!(finite(cfg.attention_flops(ctx)));
            prop_assert!(finite(cfg.weight_bytes(dep.weights)));
            if let Ok(b) = cfg.streamed_weight_bytes(ctx, dep.weights) {
                prop_assert!(finite(b));
            }
        }
        if hw.validate().is_ok() && dep.check(&llm_math::LLAMA31_8B).is_ok() {
            prop_assert!(finite(critical_tokens(&hw, &dep)));
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
            verify_time_per_token(a * 1e12, &hw, llm_math::WeightDtype::Bf16, b),
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

    #[test]
    fn experts_and_names_never_panic(
        e in extreme_u64(),
        k in extreme_u64(),
        t in extreme_u64(),
        name in ".{0,40}",
    ) {
        if let Ok(x) = expected_experts_read(e, k, t) {
            prop_assert!(finite(x));
        }
        let _ = model(&name);
    }
}

/// The properties above say little if almost every drawn pass were refused: over a fixed
/// sample of 1,000, a good share must be priced.
#[test]
fn a_good_share_of_drawn_passes_is_priced() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = (model_config(), accelerator(), shape(), deployment());
    let mut priced = 0;
    for _ in 0..1000 {
        let (cfg, hw, shape, dep) = strategy.new_tree(&mut runner).expect("a pass").current();
        priced += usize::from(forward_cost(&cfg, &hw, shape, &dep).is_ok());
    }
    assert!(
        priced >= 100,
        "only {priced} of 1000 drawn passes were priced"
    );
}
