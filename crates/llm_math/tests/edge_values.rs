//! Every public function of `llm_math` on models, cards, deployments and shapes holding
//! anything (0, `u64::MAX`, NaN, ±∞, negative): no panic, and every `Ok` is finite and
//! not negative. Run by `cargo test` with the dev profile's overflow checks, so an integer
//! overflow is a failure too.

use hw_specs::arbitrary::{accelerator, extreme_f64};
use llm_math::arbitrary::{deployment, extreme_u64, model_config, shape, size};
use llm_math::{
    critical_tokens, critical_tokens_at, expected_experts_read, forward_cost, max_batch_on, model,
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
        dep in deployment(),
    ) {
        if let Ok(c) = forward_cost(&cfg, &hw, shape, &dep) {
            let parts = [c.flops, c.bytes, c.weight_bytes, c.compute_time, c.memory_time];
            for x in parts.into_iter().chain([c.comm_time, c.bound(), c.time()]) {
                prop_assert!(finite(x), "{c:?}");
            }
            prop_assert!(c.weight_bytes <= c.bytes, "{c:?}");
            if let Ok(t) = c.checked_time() {
                prop_assert!(finite(t));
            }
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
        if let Ok(t) = critical_tokens(&hw, &dep) {
            prop_assert!(finite(t) && hw.validate().is_ok());
        }
    }

    #[test]
    fn a_critical_batch_is_refused_or_finite(
        peak in extreme_f64(),
        bandwidth in extreme_f64(),
        bytes in extreme_f64(),
    ) {
        if let Ok(t) = critical_tokens_at(peak, bandwidth, bytes) {
            prop_assert!(finite(t) && peak > 0.0 && bandwidth > 0.0 && bytes > 0.0);
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
