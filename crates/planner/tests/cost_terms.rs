//! The cost terms of `planner::cost_terms` pricing a [`Scenario`] ([`Plan`]): at their
//! neutral values every figure is the seed's, bit for bit; each term, set alone, moves a
//! figure by what a hand computation says.

use decode_lab::{
    Draft, Pricing, Scenario, Seed, TreeShape, round_plan, tree_round_time, tree_speedup,
};
use hw_specs::H100;
use llm_math::{Deployment, ForwardShape, WeightDtype, forward_cost};
use planner::{AllReduceLatencies, CostTerms, DtypeEfficiency, Plan, Prefill};

/// The seed's pass: `max(compute, memory) + all-reduces` of the one roofline, plus an overhead.
fn seed_pass(s: &Scenario, n_new: u64) -> f64 {
    let shape = ForwardShape {
        batch: s.batch,
        ctx: s.ctx,
        n_new,
    };
    forward_cost(&s.target, &s.hw, shape, &s.deployment)
        .unwrap()
        .time()
        + s.overhead_target
}

/// A plan of `terms` and no prompt tokens.
fn with(terms: CostTerms) -> Plan {
    Plan {
        terms,
        prefill: Prefill::NONE,
    }
}

/// 8B on one H100, batch 1, context 1024: (2 · 7,504,924,672 + 1025 · 131,072) B at
/// 80% of 3.35 TB/s, + 1 ms — the seed script's 6.6508 ms.
#[test]
fn neutral_terms_give_the_seeds_figures_bit_for_bit() {
    let p = with(CostTerms::NEUTRAL);
    assert_eq!(p, Plan::SEED);
    let s = Scenario::LECTURE;
    let by_hand = 15_144_198_144.0 / (3.35e12 * 0.8) + 1e-3;
    assert_eq!(p.target_pass_time(&s, 1).unwrap(), by_hand);
    assert!((by_hand - 6.6508e-3).abs() < 1e-7);
    for n in [2, 5, 9, 64] {
        assert_eq!(
            p.target_pass_time(&s, n).unwrap(),
            seed_pass(&s, n),
            "n = {n}"
        );
    }
    // The draft step: the 1B model's pass plus 0.3 ms.
    let Draft::Model(m) = s.draft else { panic!() };
    let shape = ForwardShape {
        batch: 1,
        ctx: 1024,
        n_new: 1,
    };
    let draft = forward_cost(&m, &H100, shape, &Deployment::LECTURE)
        .unwrap()
        .time()
        + 0.3e-3;
    assert_eq!(p.draft_step_time(&s).unwrap(), draft);
    // A round of γ = 4: 4 draft steps and a pass over 5 tokens, nothing else.
    let plan = round_plan(&s, &p, 4).unwrap();
    assert_eq!(plan.t_round, 4.0 * draft + seed_pass(&s, 5));
    assert_eq!(p.round_extra_time(&s).unwrap(), 0.0);
    assert_eq!(plan, round_plan(&s, &Seed, 4).unwrap());
    // demo 3's accounting: τ · t_base / (depth · c · t_base + t_verify).
    let fixed = Scenario {
        draft: Draft::FixedCost(0.05),
        batch: 16,
        ..s
    };
    let tree = TreeShape::sized(4, 9).unwrap();
    let t_base = seed_pass(&fixed, 1);
    let x = 3.0 * t_base / (4.0 * 0.05 * t_base + seed_pass(&fixed, 10));
    assert_eq!(tree_speedup(&fixed, &p, &tree, 3.0).unwrap(), x);
}

/// Half the compute overlapped: memory + 0.5 · compute, compute being
/// (2 · 7,504,924,672 + 4 · 131,072 · 1024) FLOP at 60% of 989 TFLOP/s = 26.2 µs.
#[test]
fn partial_overlap_adds_the_unhidden_compute_by_hand() {
    let half = with(CostTerms {
        overlap: 0.5,
        ..CostTerms::NEUTRAL
    });
    let s = Scenario::LECTURE;
    let memory = 15_144_198_144.0 / (3.35e12 * 0.8);
    let compute: f64 = 15_546_720_256.0 / (989e12 * 0.6);
    assert!((compute - 26.20e-6).abs() < 0.01e-6, "{compute}");
    let t = half.target_pass_time(&s, 1).unwrap();
    assert!((t - (memory + 0.5 * compute + 1e-3)).abs() < 1e-15, "{t}");
    // No overlap at all: the whole compute time on top.
    let sum = with(CostTerms {
        overlap: 0.0,
        ..CostTerms::NEUTRAL
    });
    let t = sum.target_pass_time(&s, 1).unwrap();
    assert!((t - (memory + compute + 1e-3)).abs() < 1e-15);
}

/// 4 sequences verifying 5 tokens each at 21 µs per extra token: 4 · 4 · 21 µs = 336 µs.
#[test]
fn verification_costs_each_extra_token_of_the_batch_by_hand() {
    let p = with(CostTerms {
        verify_per_batch_token: 21e-6,
        ..CostTerms::NEUTRAL
    });
    let s = Scenario {
        batch: 4,
        ..Scenario::LECTURE
    };
    assert_eq!(p.target_pass_time(&s, 1).unwrap(), seed_pass(&s, 1));
    let extra = p.target_pass_time(&s, 5).unwrap() - seed_pass(&s, 5);
    assert!((extra - 336e-6).abs() < 1e-15, "{extra}");
}

/// The `fitted` profile's form: each extra verified token costs a fraction of a plain
/// step. 4 extra tokens · 5% of a step = 20% of a step on top; a plain step pays nothing.
#[test]
fn the_verification_cost_per_token_adds_a_fraction_of_a_step_per_extra_token() {
    let p = with(CostTerms {
        verify_cost_per_token: 0.05,
        ..CostTerms::NEUTRAL
    });
    let s = Scenario::LECTURE;
    let base = seed_pass(&s, 1);
    assert_eq!(p.target_pass_time(&s, 1).unwrap(), base);
    let five = p.target_pass_time(&s, 5).unwrap();
    assert!((five - (seed_pass(&s, 5) + 0.2 * base)).abs() < 1e-15);
}

/// 1 ms a round plus 0.1 ms per sequence at batch 8: 1.8 ms on every round, none on t_base.
#[test]
fn a_round_costs_its_fixed_and_per_sequence_terms_by_hand() {
    let p = with(CostTerms {
        round_fixed: 1e-3,
        round_per_sequence: 0.1e-3,
        ..CostTerms::NEUTRAL
    });
    let s = Scenario {
        batch: 8,
        ..Scenario::LECTURE
    };
    assert!((p.round_extra_time(&s).unwrap() - 1.8e-3).abs() < 1e-15);
    let a = round_plan(&s, &p, 3).unwrap();
    let b = round_plan(&s, &Seed, 3).unwrap();
    assert_eq!(a.t_base, b.t_base);
    assert!((a.t_round - b.t_round - 1.8e-3).abs() < 1e-15);
    assert!((a.speedup - a.expected_tokens * b.t_base / (b.t_round + 1.8e-3)).abs() < 1e-12);
    let chain = TreeShape::chain(3).unwrap();
    let (base, round) = tree_round_time(&s, &p, &chain).unwrap();
    let (_, seed_round) = tree_round_time(&s, &Seed, &chain).unwrap();
    assert!((round - seed_round - 1.8e-3).abs() < 1e-15);
    let tree = TreeShape::sized(3, 3).unwrap();
    let x = tree_speedup(&s, &p, &tree, 2.5).unwrap();
    assert!((x - 2.5 * base / (seed_round + 1.8e-3)).abs() < 1e-12);
}

/// 0.05 ms per draft layer: Llama-3.2-1B has 16 layers (+0.8 ms a step), a head one.
#[test]
fn a_draft_pays_per_layer_by_hand() {
    let p = with(CostTerms {
        draft_per_layer: 0.05e-3,
        ..CostTerms::NEUTRAL
    });
    let model = Scenario::LECTURE;
    let extra = p.draft_step_time(&model).unwrap() - Seed.draft_step_time(&model).unwrap();
    assert!((extra - 0.8e-3).abs() < 1e-15, "{extra}");
    let head = Scenario {
        draft: Draft::Head,
        ..model
    };
    let extra = p.draft_step_time(&head).unwrap() - Seed.draft_step_time(&head).unwrap();
    assert!((extra - 0.05e-3).abs() < 1e-15, "{extra}");
    // A fixed-cost draft is a fraction of a target step, whatever its layers.
    let fixed = Scenario {
        draft: Draft::FixedCost(0.1),
        ..model
    };
    let t = p.draft_step_time(&fixed).unwrap();
    assert_eq!(t, 0.1 * seed_pass(&model, 1));
}

/// The lecture's scenario with weights `weights`.
fn weighed(weights: WeightDtype) -> Scenario {
    Scenario {
        deployment: Deployment {
            weights,
            ..Deployment::LECTURE
        },
        ..Scenario::LECTURE
    }
}

/// FP8 weights at half the bandwidth efficiency: (7,504,924,672 + 1025 · 131,072) B at
/// 0.5 · 80% of 3.35 TB/s, + 1 ms; bf16 weights are not touched.
#[test]
fn fp8_efficiency_factors_slow_fp8_passes_only_by_hand() {
    let p = with(CostTerms {
        fp8: DtypeEfficiency {
            bandwidth: 0.5,
            compute: 1.0,
        },
        ..CostTerms::NEUTRAL
    });
    // 6,979,321,856 linear weights at 1 byte, the LM head and norms (525,602,816) at 2,
    // and 1025 tokens of KV: 8,164,876,288 bytes.
    let by_hand = 8_164_876_288.0 / (3.35e12 * (0.8 * 0.5)) + 1e-3;
    let fp8 = p.target_pass_time(&weighed(WeightDtype::Fp8), 1).unwrap();
    assert!((fp8 - by_hand).abs() < 1e-15);
    let bf16 = weighed(WeightDtype::Bf16);
    assert_eq!(p.target_pass_time(&bf16, 1).unwrap(), seed_pass(&bf16, 1));
}

/// Int8 weight-only weights at 0.7 of the bandwidth efficiency: the same 8,164,876,288
/// bytes as FP8's (1-byte linear weights), at 0.7 · 80% of 3.35 TB/s, + 1 ms; the factor
/// leaves FP8 and bf16 passes alone.
#[test]
fn the_w8a16_factor_slows_w8a16_passes_only_by_hand() {
    let p = with(CostTerms {
        w8a16_bandwidth: 0.7,
        ..CostTerms::NEUTRAL
    });
    let by_hand = 8_164_876_288.0 / (3.35e12 * (0.8 * 0.7)) + 1e-3;
    let w8a16 = p.target_pass_time(&weighed(WeightDtype::W8A16), 1).unwrap();
    assert!((w8a16 - by_hand).abs() < 1e-15, "{w8a16} vs {by_hand}");
    for other in [WeightDtype::Fp8, WeightDtype::Bf16] {
        let s = weighed(other);
        assert_eq!(p.target_pass_time(&s, 1).unwrap(), seed_pass(&s, 1));
    }
}

/// INT4 weights at 6 dequantization ops per weight on an A100: the neutral pass plus the
/// 6,979,321,856 linear weights a batch-1 token reads (not the 16-bit LM head and norms),
/// 6 ops each at 19.5 TFLOP/s (2.148 ms); on two cards, half of it each. A draft step pays
/// it for the draft's own weights, on the draft's cards.
#[test]
fn int4_dequantization_adds_its_vector_time_by_hand() {
    let p = with(CostTerms {
        int4_dequant_ops: 6.0,
        ..CostTerms::NEUTRAL
    });
    let int4 = |tp, draft_tp| Scenario {
        hw: *hw_specs::accelerator("A100").unwrap(),
        deployment: Deployment {
            weights: WeightDtype::Int4,
            tp,
            ..Deployment::LECTURE
        },
        draft_tp,
        ..Scenario::LECTURE
    };
    for tp in [1, 2] {
        let s = int4(tp, None);
        let plain = Seed.target_pass_time(&s, 1).unwrap();
        let with = p.target_pass_time(&s, 1).unwrap();
        let by_hand = 6_979_321_856.0 * 6.0 / 19.5e12 / tp as f64;
        assert!(
            (with - plain - by_hand).abs() < 1e-12,
            "tp {tp}: {with} − {plain}"
        );
    }
    // Llama-3.2-1B's 1,235,814,400 streamed weights less its 16-bit ones (the tied
    // 128,256 × 2048 table and 16 · 2 · 2048 + 2048 norm gains): 973,078,528.
    let by_hand = 973_078_528.0 * 6.0 / 19.5e12;
    for (tp, draft_tp, cards) in [(1, None, 1.0), (2, None, 2.0), (2, Some(1), 1.0)] {
        let s = int4(tp, draft_tp);
        let extra = p.draft_step_time(&s).unwrap() - Seed.draft_step_time(&s).unwrap();
        assert!(
            (extra - by_hand / cards).abs() < 1e-12,
            "tp {tp} {draft_tp:?}: {extra}"
        );
    }
}

/// Llama-3.1-70B on two cards: 2 · 80 all-reduces a pass, at 20 µs over NVLink (3.2 ms)
/// and 40 µs over Infinity Fabric (6.4 ms).
#[test]
fn all_reduce_latency_is_the_cards_familys_by_hand() {
    let p = with(CostTerms {
        all_reduce: AllReduceLatencies {
            nvlink: 20e-6,
            infinity_fabric: 40e-6,
            pcie: 0.0,
            ethernet: 0.0,
        },
        ..CostTerms::NEUTRAL
    });
    for (hw, extra) in [
        (H100, 3.2e-3),
        (*hw_specs::accelerator("MI300X").unwrap(), 6.4e-3),
    ] {
        let s = Scenario {
            hw,
            target: *llm_math::model("Llama-3.1-70B").unwrap(),
            draft: Draft::Head,
            deployment: Deployment {
                tp: 2,
                ..Deployment::LECTURE
            },
            ..Scenario::LECTURE
        };
        let d = p.target_pass_time(&s, 1).unwrap() - Seed.target_pass_time(&s, 1).unwrap();
        assert!((d - extra).abs() < 1e-12, "{} {d}", hw.name);
    }
}

/// Prompt tokens in every step: a step of 512 prompt tokens at a prefix of 256 costs the
/// seed's pass of those FLOPs and bytes more (the weights read once), in every target pass.
#[test]
fn prompt_tokens_ride_on_every_target_pass() {
    let p = Plan {
        prefill: Prefill {
            tokens: 512,
            ctx: 256,
        },
        ..Plan::SEED
    };
    let s = Scenario::LECTURE;
    // 512 · (2 · 7,504,924,672 + 4 · 131,072 · 256) + 15,546,720,256 FLOPs at 593.4
    // TFLOP/s (compute-bound); + 1 ms.
    let flops = 512.0 * (2.0 * 7_504_924_672.0 + 4.0 * 131_072.0 * 256.0) + 15_546_720_256.0;
    let by_hand = flops / (989e12 * 0.6) + 1e-3;
    let t = p.target_pass_time(&s, 1).unwrap();
    assert!((t - by_hand).abs() < 1e-12, "{t} vs {by_hand}");
    assert!(p.target_pass_time(&s, 5).unwrap() > t);
    assert_eq!(
        p.draft_step_time(&s).unwrap(),
        Seed.draft_step_time(&s).unwrap()
    );
}

#[test]
fn a_bad_cost_term_is_refused_before_any_pass() {
    let p = with(CostTerms {
        overlap: -0.1,
        ..CostTerms::NEUTRAL
    });
    let s = Scenario::LECTURE;
    assert!(p.check(&s).unwrap_err().to_string().contains("overlap"));
    assert!(p.target_pass_time(&s, 1).is_err());
    assert!(decode_lab::best_round(&s, &p).is_err());
}
