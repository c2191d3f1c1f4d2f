//! The roofline side of decode_lab against hand-computed figures (SPEC §2), and its
//! properties over the registries.

use decode_lab::*;
use hw_specs::H100;
use llm_math::{Deployment, KvDtype, LLAMA31_8B, WeightDtype};

const BW: f64 = 3.35e12 * 0.8;
/// Llama-3.1-8B's streamed parameters, and its KV bytes per token in bf16.
const P8B: f64 = 7_504_924_672.0;
const KV8B: f64 = 131_072.0;

fn at(batch: u64, ctx: u64, alpha: f64) -> Scenario {
    Scenario {
        batch,
        ctx,
        alpha,
        ..Scenario::LECTURE
    }
}

#[test]
fn verify_time_adds_the_overhead_to_the_roofline_time() {
    // Draft, batch 1, ctx 1024: bytes = 2·1,235,814,400 + 1025·(2·16·8·64·2 = 32,768).
    let bytes = 2.0 * 1_235_814_400.0 + 1025.0 * 32_768.0;
    let t = verify_time(&LLAMA32_1B, &H100, 1, 1024, 1, 0.3e-3).unwrap();
    assert!((t - (bytes / BW + 0.3e-3)).abs() < 1e-15);
    assert!((t - 1.234782e-3).abs() < 1e-9);
}

#[test]
fn expected_tokens_matches_the_geometric_series_by_hand() {
    // 1 + α + α² + α³ at α = 0.5, γ = 3.
    assert_eq!(expected_tokens(0.5, 3).unwrap(), 1.875);
    assert_eq!(expected_tokens(0.0, 7).unwrap(), 1.0);
    assert_eq!(expected_tokens(0.9, 0).unwrap(), 1.0);
    assert_eq!(expected_tokens(1.0, 0).unwrap(), 1.0);
    let series: f64 = (0..=6).map(|k| 0.7f64.powi(k)).sum();
    assert!((expected_tokens(0.7, 6).unwrap() - series).abs() < 1e-12);
}

#[test]
fn best_round_at_batch_one_drafts_four_at_alpha_point_eight() {
    let best = best_round(&Scenario::LECTURE, &Seed).unwrap();
    let p = *best.plan().unwrap();
    assert_eq!(p.gamma, 4);
    // t_base = 6.650820 ms, t_draft = 1.234782 ms, t_verify(5) = t_base + 4 KV writes.
    let t_base = 15_144_198_144.0 / BW + 1e-3;
    let t_verify = (15_144_198_144.0 + 4.0 * 131_072.0) / BW + 1e-3;
    assert!((p.t_base - t_base).abs() < 1e-15);
    assert!((p.t_verify - t_verify).abs() < 1e-15);
    assert!((p.t_draft - 1.234782e-3).abs() < 1e-9);
    assert!((p.t_round - 11.590144e-3).abs() < 1e-9, "{}", p.t_round);
    assert!((p.speedup - 1.9290).abs() < 1e-4);
    assert_eq!(best.gamma(), 4);
    assert_eq!(best.speedup(), p.speedup);
}

#[test]
fn the_lecture_scenario_gives_the_seed_figures_worked_out_by_hand() {
    // Batch 64, context 512, α = 0.6, γ = 3, from SPEC §2 with pencil and paper:
    // t_base  = (2P + 64·512·KV + 64·KV) / BW + 1 ms;
    // t_draft = (2·1,235,814,400 + 64·512·32,768 + 64·32,768) / BW + 0.3 ms;
    // t_verify(4) = max(FLOPs, bytes) with 256 tokens: FLOPs = 2P·256 + 4·131,072·512·256
    //   = 3.8425e12 + 6.872e10 → 6.5918 ms at 593.4 TFLOP/s, bytes 19.33 GB → 7.21 ms: memory.
    let s = at(64, 512, 0.6);
    let t_base = (2.0 * P8B + 64.0 * 513.0 * KV8B) / BW + 1e-3;
    let t_draft = (2.0 * 1_235_814_400.0 + 64.0 * 513.0 * 32_768.0) / BW + 0.3e-3;
    let t_verify = (2.0 * P8B + 64.0 * 512.0 * KV8B + 256.0 * KV8B) / BW + 1e-3;
    let p = round_plan(&s, &Seed, 3).unwrap();
    assert!(
        (p.t_base - t_base).abs() < 1e-15 && (p.t_base - 8.2064e-3).abs() < 1e-7,
        "{}",
        p.t_base
    );
    assert!((p.t_draft - t_draft).abs() < 1e-15, "{}", p.t_draft);
    assert!((p.t_verify - t_verify).abs() < 1e-15, "{}", p.t_verify);
    // 1 + 0.6 + 0.36 + 0.216 = 2.176 tokens for 3 draft steps and a verify.
    let by_hand = 2.176 * t_base / (3.0 * t_draft + t_verify);
    assert!(
        (p.speedup - by_hand).abs() < 1e-12,
        "{} vs {by_hand}",
        p.speedup
    );
    assert!((p.c - cost_coefficient(&s, &Seed).unwrap()).abs() < 1e-15);
}

#[test]
fn with_alpha_zero_no_draft_length_pays() {
    let best = best_round(&at(1, 1024, 0.0), &Seed).unwrap();
    let BestRound::NoSpeculation(tried) = best else {
        panic!("{best:?}")
    };
    assert!(tried.speedup < 1.0);
    assert_eq!(tried.gamma, 1, "the cheapest round loses least");
    assert_eq!(best.gamma(), 0);
    assert_eq!(best.speedup(), 1.0);
    assert!(best.plan().is_none());
}

#[test]
fn a_fixed_gamma_of_8_at_batch_512_is_a_slow_down() {
    let s = at(512, 512, 0.8);
    let p = round_plan(&s, &Seed, 8).unwrap();
    // Verify: 512 · 9 = 4,608 tokens, compute-bound:
    // FLOPs = 2·P·4608 + 4·131,072·512·4608 = 7.0401e13 → / (989e12·0.6) = 118.64 ms (+1 ms).
    let flops = 2.0 * P8B * 4608.0 + 4.0 * 131_072.0 * 512.0 * 4608.0;
    let t_verify = flops / (989e12 * 0.6) + 1e-3;
    assert!((p.t_verify - t_verify).abs() < 1e-12);
    assert!((p.t_verify - 119.640e-3).abs() < 1e-5, "{}", p.t_verify);
    // Base step: bytes = 2P + 512·512·KV + 512·KV = 49.44 GB → 18.45 ms (+1 ms).
    let t_base = (2.0 * P8B + 512.0 * 512.0 * KV8B + 512.0 * KV8B) / BW + 1e-3;
    assert!((p.t_base - t_base).abs() < 1e-12);
    // 4.33 tokens for 8 draft steps (4.43 ms each) and a verify six times a plain step: ≈ 0.54×.
    assert!((p.expected_tokens - 4.3289).abs() < 1e-4);
    assert!(
        p.speedup < 1.0 && (p.speedup - 0.5427).abs() < 5e-4,
        "{}",
        p.speedup
    );
    // best_round, free to choose, picks a shorter draft.
    let best = best_round(&s, &Seed).unwrap();
    assert!(best.gamma() < 8);
    assert!(round_plan(&s, &Seed, 0).is_err());
}

#[test]
fn tp2_splits_the_70b_and_pays_for_the_all_reduces() {
    let one = Scenario {
        target: *llm_math::model("Llama-3.3-70B").unwrap(),
        hw: *hw_specs::accelerator("H200").unwrap(),
        ..Scenario::LECTURE
    };
    let two = Scenario {
        deployment: Deployment {
            tp: 2,
            ..Deployment::LECTURE
        },
        ..one
    };
    // One H200: 141.1 GB of weights fill 141 GB. Two: per card 70.55 GB of weights.
    assert!(target_pass_time(&one, 1).is_err());
    let t = target_pass_time(&two, 1).unwrap();
    let p = llm_math::model("Llama-3.3-70B").unwrap().streamed_params() as f64;
    let kv = 327_680.0; // 2·80·8·128·2
    let bytes = p + 1025.0 * kv / 2.0;
    let comm = 160.0 * (8192.0 * 2.0) / 450e9; // 2·80 all-reduces, ring over 2
    assert!(
        (t - (bytes / (4.8e12 * 0.8) + comm + 1e-3)).abs() < 1e-12,
        "{t}"
    );
}

#[test]
fn fp8_weights_halve_the_linear_layers_reads_of_draft_and_target() {
    let bf16 = Scenario::LECTURE;
    let fp8 = Scenario {
        deployment: Deployment {
            weights: WeightDtype::Fp8,
            kv: KvDtype::Fp8,
            ..Deployment::LECTURE
        },
        ..bf16
    };
    // The linear layers at 1 byte, the LM head (or the tied table) and norms at 2. Target:
    // 6,979,321,856 + 2 · 525,602,816 = 8,030,527,488 B of weights, + 1025 · 65,536 of KV;
    // draft: 973,078,528 + 2 · 262,735,872 = 1,498,550,272 B, + 1025 · 16,384.
    let t = target_pass_time(&fp8, 1).unwrap();
    assert!((t - ((8_030_527_488.0 + 1025.0 * 65_536.0) / BW + 1e-3)).abs() < 1e-15);
    let d = draft_step_time(&fp8).unwrap();
    assert!((d - ((1_498_550_272.0 + 1025.0 * 16_384.0) / BW + 0.3e-3)).abs() < 1e-15);
}

#[test]
fn draft_kinds_cost_what_they_read() {
    let s = Scenario::LECTURE;
    let t_base = target_pass_time(&s, 1).unwrap();
    // A fixed c: exactly c · t_base.
    let c = Scenario {
        draft: Draft::FixedCost(0.25),
        ..s
    };
    // A quarter of the hand-computed 6.650820 ms step.
    assert!((draft_step_time(&c).unwrap() - 1.662_705e-3).abs() < 1e-9);
    // An EAGLE-like head: one layer (218,112,000) + LM head (525,336,576) + final norm,
    // and one layer of KV (4,096 B/token): bytes / BW + 0.3 ms.
    let h = Scenario {
        draft: Draft::Head,
        ..s
    };
    let head_bytes = 2.0 * (218_112_000.0 + 525_336_576.0 + 4096.0) + 1025.0 * 4096.0;
    assert!((draft_step_time(&h).unwrap() - (head_bytes / BW + 0.3e-3)).abs() < 1e-15);
    // Self-speculation with a 256-token window at 32K context: all weights, 257 tokens of KV.
    let w = Scenario {
        ctx: 32768,
        draft: Draft::SelfSpec { kv_window: 256 },
        ..s
    };
    let bytes = 2.0 * P8B + 256.0 * KV8B + KV8B;
    assert!((draft_step_time(&w).unwrap() - (bytes / BW + 1e-3)).abs() < 1e-15);
    // A window longer than the context reads the whole context.
    let wide = Scenario {
        draft: Draft::SelfSpec { kv_window: 1 << 20 },
        ..s
    };
    assert_eq!(draft_step_time(&wide).unwrap(), t_base);
    for bad in [
        Draft::FixedCost(-0.1),
        Draft::FixedCost(f64::NAN),
        Draft::SelfSpec { kv_window: 0 },
    ] {
        assert!(matches!(
            draft_step_time(&Scenario { draft: bad, ..s }),
            Err(Error::Argument(_))
        ));
    }
}

#[test]
fn a_vocabulary_mismatch_is_an_error_naming_both_tokenizers() {
    for target in [
        *llm_math::model("Mistral-7B-v0.3").unwrap(),
        *llm_math::model("Qwen2.5-7B").unwrap(),
    ] {
        let s = Scenario {
            target,
            ..Scenario::LECTURE
        };
        let e = s.validate().unwrap_err();
        assert!(matches!(e, Error::TokenizerMismatch { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(
            msg.contains("Llama-3.2-1B cannot draft for") && msg.contains("tokenizer"),
            "{msg}"
        );
    }
    let qwen = Scenario {
        target: *llm_math::model("Qwen3-32B").unwrap(),
        draft: Draft::Model(*llm_math::model("Qwen3-0.6B").unwrap()),
        ..Scenario::LECTURE
    };
    assert_eq!(qwen.validate(), Ok(()));
    assert!(Scenario::LECTURE.validate().is_ok());
}

#[test]
fn a_draft_that_does_not_fit_is_reported_as_data_and_as_an_error() {
    // A 405B draft (811.7 GB of bf16 weights) for a 1B target on one 80 GB card.
    let s = Scenario {
        target: LLAMA32_1B,
        draft: Draft::Model(*llm_math::model("Llama-3.1-405B").unwrap()),
        ..Scenario::LECTURE
    };
    let m = s.memory().unwrap();
    assert!(!m.weights_fit());
    assert_eq!(m.draft_weights, 2.0 * 405_853_388_800.0);
    assert_eq!(m.max_batch_with_draft(), 0);
    assert!(matches!(s.validate(), Err(Error::DraftDoesNotFit(_))));
    // Eight cards of TP hold it (811.7 + 2.5 GB ≤ 640 GB? no) — sixteen do.
    let tp16 = Scenario {
        deployment: Deployment {
            tp: 16,
            ..Deployment::LECTURE
        },
        ..s
    };
    assert!(tp16.memory().unwrap().weights_fit());
    // The lecture's 1B draft fits next to the 8B and costs it a little batch.
    let m = Scenario::LECTURE.memory().unwrap();
    assert!(m.weights_fit());
    assert!(m.max_batch_with_draft() < m.max_batch);
    // By hand at 32K: (80e9 − 16,060,522,496) / (32768 · 131,072) = 14.9 → 14 by the seed's
    // rule; with the draft's 2,471,628,800 bytes of weights and 32,768 bytes of KV a token,
    // 61,467,848,704 / (32768 · 163,840) = 11.4 → 11.
    let long = Scenario {
        ctx: 32768,
        ..Scenario::LECTURE
    }
    .memory()
    .unwrap();
    assert_eq!((long.max_batch, long.max_batch_with_draft()), (14, 11));
}

#[test]
fn a_draft_with_no_weights_or_kv_leaves_the_largest_batch_as_the_target_alone_has_it() {
    // Over every model, card count and context: counting a fixed-cost draft (nothing in
    // memory) must give llm_math's max_batch_on, KV copies included past the KV heads
    // (Llama-3.1-70B at tp 16 keeps every KV head twice: it used to count it once).
    for target in llm_math::catalog::all_models() {
        for tp in [1, 2, 4, 8, 16, 32] {
            let deployment = Deployment {
                tp,
                ..Deployment::LECTURE
            };
            if deployment.check(target).is_err() {
                continue;
            }
            for ctx in [512, 4096, 32768] {
                let s = Scenario {
                    target: *target,
                    draft: Draft::FixedCost(0.05),
                    deployment,
                    ctx,
                    ..Scenario::LECTURE
                };
                let m = s.memory().unwrap();
                let alone = llm_math::max_batch_on(target, &H100, ctx, &deployment).unwrap();
                assert_eq!(
                    m.max_batch_with_draft(),
                    alone,
                    "{} tp {tp} ctx {ctx}",
                    target.name
                );
            }
        }
    }
    // By hand: 16 H100s hold 1280 GB; Llama-3.1-70B's weights 141,107,412,992 B; each
    // token 327,680 B of KV twice over → ⌊1,138,892,587,008 / (4096 · 655,360)⌋ = 424.
    let s = Scenario {
        target: *llm_math::model("Llama-3.1-70B").unwrap(),
        draft: Draft::FixedCost(0.05),
        deployment: Deployment {
            tp: 16,
            ..Deployment::LECTURE
        },
        ctx: 4096,
        ..Scenario::LECTURE
    };
    assert_eq!(s.memory().unwrap().max_batch_with_draft(), 424);
}

#[test]
fn the_best_round_beats_every_fixed_draft_length_and_says_when_it_stopped_at_the_limit() {
    // A cheap, accurate draft (c = 0.02, α = 0.9): the best γ is 19 (the seed's search
    // stopped at 16, which a fixed γ of 20 beat). Over every fixed γ a lecture takes, none
    // does better than the best.
    for (c, alpha) in [(0.02, 0.9), (0.05, 0.8), (0.2, 0.6), (0.0, 0.99)] {
        let s = Scenario {
            draft: Draft::FixedCost(c),
            alpha,
            ctx: 512,
            ..Scenario::LECTURE
        };
        let best = best_round(&s, &Seed).unwrap();
        for g in 1..=MAX_GAMMA {
            let fixed = round_plan(&s, &Seed, g).unwrap().speedup;
            assert!(
                best.speedup() >= fixed,
                "c {c}, α {alpha}: γ {g} gives {fixed}"
            );
        }
        assert!(!best.at_limit() || best.gamma() == MAX_GAMMA);
    }
    let cheap = Scenario {
        draft: Draft::FixedCost(0.02),
        alpha: 0.9,
        ctx: 512,
        ..Scenario::LECTURE
    };
    let best = best_round(&cheap, &Seed).unwrap();
    assert_eq!((best.gamma(), best.at_limit()), (19, false));
    // A free, perfect draft: every longer draft pays more, so the best is the limit.
    let free = Scenario {
        draft: Draft::FixedCost(0.0),
        alpha: 1.0,
        ..cheap
    };
    let best = best_round(&free, &Seed).unwrap();
    assert_eq!((best.gamma(), best.at_limit()), (MAX_GAMMA, true));
}

#[test]
fn a_context_past_the_model_maximum_is_an_error_naming_it() {
    let s = Scenario {
        ctx: 200_000,
        ..Scenario::LECTURE
    };
    let e = s.validate().unwrap_err().to_string();
    assert!(e.contains("131072"), "{e}");
}

#[test]
fn alpha_outside_the_unit_interval_is_an_error() {
    for a in [-0.1, 1.0001, f64::NAN, f64::INFINITY] {
        assert!(matches!(expected_tokens(a, 3), Err(Error::Alpha(_))), "{a}");
        assert!(
            matches!(best_round(&at(1, 1024, a), &Seed), Err(Error::Alpha(_))),
            "{a}"
        );
        assert!(
            matches!(round_plan(&at(1, 1024, a), &Seed, 2), Err(Error::Alpha(_))),
            "{a}"
        );
    }
    assert_eq!(
        Error::Alpha(1.5).to_string(),
        "acceptance rate α must be in [0, 1], got 1.5"
    );
}

#[test]
fn zero_sizes_and_oversized_batches_are_errors() {
    let v = |b, c, n| verify_time(&LLAMA31_8B, &H100, b, c, n, 1e-3);
    assert_eq!(
        v(0, 1024, 1),
        Err(Error::Math(llm_math::Error::Zero("batch size")))
    );
    assert_eq!(
        v(1, 0, 1),
        Err(Error::Math(llm_math::Error::Zero("context length")))
    );
    assert_eq!(
        v(1, 1024, 0),
        Err(Error::Math(llm_math::Error::Zero("number of new tokens")))
    );
    // verify_time prices a batch that does not fit, as the Python's does (14 sequences
    // of 32K fit, 15 do not): the fit is max_batch's question; a round refuses it.
    assert_eq!(llm_math::max_batch(&LLAMA31_8B, &H100, 32768), Ok(14));
    let t15 = v(15, 32768, 1).unwrap();
    let by_hand = (2.0 * 7_504_924_672.0 + 15.0 * 32769.0 * 131_072.0) / 2.68e12 + 1e-3;
    assert!((t15 - by_hand).abs() < 1e-12, "{t15} vs {by_hand}");
    assert!(matches!(
        best_round(&at(128, 4096, 0.8), &Seed),
        Err(Error::Math(llm_math::Error::DoesNotFit {
            max_batch: 119,
            ..
        }))
    ));
    assert!(best_round(&at(0, 4096, 0.8), &Seed).is_err());
}

#[test]
fn a_bad_overhead_is_an_error_not_a_nan() {
    for o in [-1e-3, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            verify_time(&LLAMA31_8B, &H100, 1, 1024, 1, o),
            Err(Error::Overhead(_))
        ));
        let s = Scenario {
            overhead_draft: o,
            ..Scenario::LECTURE
        };
        assert!(matches!(best_round(&s, &Seed), Err(Error::Overhead(_))));
        let s = Scenario {
            overhead_target: o,
            ..Scenario::LECTURE
        };
        assert!(matches!(best_round(&s, &Seed), Err(Error::Overhead(_))));
    }
}

#[test]
fn speedup_never_exceeds_expected_tokens_and_verify_never_beats_a_step() {
    for batch in [1, 8, 64, 300, 470] {
        for ctx in [128, 512, 1024] {
            for alpha in [0.0, 0.3, 0.6, 0.8, 0.95, 1.0] {
                let best = best_round(&at(batch, ctx, alpha), &Seed).unwrap();
                let (BestRound::Speculate(p) | BestRound::NoSpeculation(p)) = best;
                assert!(p.speedup <= p.expected_tokens, "{batch} {ctx} {alpha}");
                assert!(p.verify_ratio >= 1.0);
                assert!(p.speedup.is_finite() && p.c > 0.0);
            }
        }
    }
}

#[test]
fn the_draft_is_not_held_to_the_memory_budget() {
    // A 3B draft's KV at 32K context does not fit 64 sequences next to its weights,
    // but only the 1B target's memory counts.
    assert!(
        llm_math::max_batch(llm_math::model("Llama-3.2-3B").unwrap(), &H100, 32768).unwrap() < 64
    );
    let s = Scenario {
        target: LLAMA32_1B,
        draft: Draft::Model(*llm_math::model("Llama-3.2-3B").unwrap()),
        batch: 64,
        ctx: 32768,
        ..Scenario::LECTURE
    };
    assert!(draft_step_time(&s).is_ok());
    assert!(best_round(&s, &Seed).is_ok());
    let bad = Scenario {
        overhead_draft: -1.0,
        ..s
    };
    assert!(matches!(draft_step_time(&bad), Err(Error::Overhead(_))));
}

#[test]
fn tree_speedup_charges_each_level_and_the_verified_nodes() {
    // Batch 32, ctx 1024, 340 nodes: 32·341 = 10,912 tokens, far past the knee.
    let s = Scenario {
        draft: Draft::FixedCost(0.05),
        ..at(32, 1024, 0.8)
    };
    let x = tree_speedup(&s, &Seed, &TreeShape::sized(4, 340).unwrap(), 4.0).unwrap();
    // By hand: t_base = (2P + 32·1025·KV)/BW + 1 ms = 8.2049 ms;
    // t_verify = compute-bound (2P·10,912 + 4·131,072·1024·10,912)/(989e12·0.6) + 1 ms.
    let t_base = (2.0 * P8B + 32.0 * 1025.0 * KV8B) / BW + 1e-3;
    let flops = 2.0 * P8B * 10_912.0 + 4.0 * 131_072.0 * 1024.0 * 10_912.0;
    let t_verify = flops / (989e12 * 0.6) + 1e-3;
    assert!((t_verify - 0.28689).abs() < 1e-4, "{t_verify}");
    let by_hand = 4.0 * t_base / (4.0 * 0.05 * t_base + t_verify);
    assert!((x - by_hand).abs() < 1e-12);
    assert!(
        (x - 0.1137).abs() < 1e-3,
        "verifying 10,912 tokens costs more than 4 tokens gain: {x}"
    );
    // A chain of 2 with a free draft at batch 1: 2 tokens for one pass over 3 tokens.
    let free = Scenario {
        draft: Draft::FixedCost(0.0),
        ..Scenario::LECTURE
    };
    let chain = tree_speedup(&free, &Seed, &TreeShape::sized(2, 2).unwrap(), 2.0).unwrap();
    let t1 = (2.0 * P8B + 1025.0 * KV8B) / BW + 1e-3;
    let t3 = (2.0 * P8B + 1025.0 * KV8B + 2.0 * KV8B) / BW + 1e-3;
    assert!((chain - 2.0 * t1 / t3).abs() < 1e-12);
    // With a draft model, each level costs one of its steps: 1.234782 ms for the 1B.
    let model = tree_speedup(
        &Scenario::LECTURE,
        &Seed,
        &TreeShape::sized(2, 2).unwrap(),
        2.0,
    )
    .unwrap();
    assert!(
        (model - 2.0 * t1 / (2.0 * 1.234_782e-3 + t3)).abs() < 1e-6,
        "{model}"
    );
}

#[test]
fn tree_speedup_rejects_a_meaningless_round() {
    let s = Scenario {
        draft: Draft::FixedCost(0.05),
        ..Scenario::LECTURE
    };
    let t = |tau, depth, s: &Scenario| {
        TreeShape::sized(depth, 4).and_then(|tree| tree_speedup(s, &Seed, &tree, tau))
    };
    assert!(matches!(t(0.5, 4, &s), Err(Error::Argument(m)) if m.contains("τ")));
    assert!(matches!(t(f64::NAN, 4, &s), Err(Error::Argument(_))));
    assert!(matches!(t(2.0, 0, &s), Err(Error::Argument(m)) if m.contains("one level")));
    let neg = Scenario {
        draft: Draft::FixedCost(-0.1),
        ..s
    };
    assert!(matches!(t(2.0, 4, &neg), Err(Error::Argument(_))));
    assert!(t(2.0, 1, &Scenario { batch: 0, ..s }).is_err());
}

#[test]
fn the_best_speedup_falls_as_the_batch_grows() {
    let s = |b| best_round(&at(b, 512, 0.8), &Seed).unwrap().speedup();
    let batches = [1, 16, 64, 128, 256, 512, 900];
    for w in batches.windows(2) {
        assert!(s(w[1]) < s(w[0]), "{w:?}");
    }
}

/// Every card × target × draft × α × (tp, weight dtype, KV dtype) and draft kind:
/// the functions either return finite figures or an error, never NaN, inf or a panic.
#[test]
fn no_setup_of_the_registries_gives_nan_or_inf() {
    let drafts = [
        Draft::Model(LLAMA32_1B),
        Draft::Model(*llm_math::model("Qwen3-0.6B").unwrap()),
        Draft::Model(*llm_math::model("Llama-3.1-405B").unwrap()),
        Draft::Head,
        Draft::FixedCost(0.0),
        Draft::FixedCost(0.3),
        Draft::SelfSpec { kv_window: 1 },
        Draft::SelfSpec { kv_window: 512 },
    ];
    let (mut ok, mut err) = (0, 0);
    // The first seven cards and thirteen models listed: the lecture's and those its
    // what-ifs name most (every one is checked by the edge-value tests).
    for hw in hw_specs::catalog::all_accelerators().take(7) {
        for target in llm_math::catalog::all_models().take(13) {
            for draft in drafts {
                for tp in [1, 2, 8] {
                    for weights in [WeightDtype::Bf16, WeightDtype::Fp8, WeightDtype::Int4] {
                        for kv in [KvDtype::Bf16, KvDtype::Fp8] {
                            for alpha in [0.0, 0.6, 1.0] {
                                let s = Scenario {
                                    hw: *hw,
                                    target: *target,
                                    draft,
                                    alpha,
                                    batch: 16,
                                    ctx: 4096,
                                    deployment: Deployment {
                                        tp,
                                        weights,
                                        kv,
                                        ..Deployment::LECTURE
                                    },
                                    ..Scenario::LECTURE
                                };
                                let _ = s.validate();
                                let m = s.memory();
                                if let Ok(m) = &m {
                                    assert!(m.capacity.is_finite() && m.draft_weights.is_finite());
                                }
                                match best_round(&s, &Seed) {
                                    Ok(b) => {
                                        let (BestRound::Speculate(p) | BestRound::NoSpeculation(p)) =
                                            b;
                                        for x in
                                            [p.speedup, p.c, p.t_round, p.t_verify, p.verify_ratio]
                                        {
                                            assert!(x.is_finite() && x >= 0.0, "{s:?}: {p:?}");
                                        }
                                        let fixed = round_plan(&s, &Seed, 8).unwrap();
                                        assert!(fixed.speedup.is_finite(), "{s:?}");
                                        ok += 1;
                                    }
                                    Err(_) => err += 1,
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(ok > 10_000 && err > 0, "{ok} ok, {err} errors");
}

/// Layer-skip self-drafting on Llama-3.1-8B at batch 1: a draft step is the roofline pass
/// of the target cut to its first k layers (the LM head kept) plus the target's overhead,
/// so c grows with k, between a one-layer head's and a whole step's; k = 32 is refused.
#[test]
fn a_layer_skip_draft_costs_its_layers_and_the_head() {
    let c = |layers| {
        decode_lab::cost_coefficient(
            &Scenario {
                draft: Draft::FirstLayers { layers },
                ..Scenario::LECTURE
            },
            &Seed,
        )
        .unwrap()
    };
    let by_hand = |layers: u64| {
        let cut = llm_math::ModelConfig {
            n_layers: layers,
            ..llm_math::LLAMA31_8B
        };
        let shape = llm_math::ForwardShape {
            batch: 1,
            ctx: 1024,
            n_new: 1,
        };
        let pass =
            llm_math::forward_cost(&cut, &hw_specs::H100, shape, &llm_math::Deployment::LECTURE)
                .unwrap();
        (pass.time() + 1e-3) / decode_lab::target_pass_time(&Scenario::LECTURE, 1).unwrap()
    };
    for k in [1, 8, 16, 31] {
        assert!((c(k) - by_hand(k)).abs() < 1e-12, "k = {k}");
    }
    assert!(c(1) < c(16) && c(16) < c(31) && c(31) < 1.0);
    let all = Scenario {
        draft: Draft::FirstLayers { layers: 32 },
        ..Scenario::LECTURE
    };
    assert!(all.validate().unwrap_err().to_string().contains("1 to 31"));
}
