//! The planner: the lecture's roofline held against the measured world, an annex above the
//! core crates.
//!
//! The core (`llm_math`, `decode_lab`) prices a pass as the seed script does, `max(FLOPs /
//! (peak · eff_c), bytes / (bandwidth · eff_b)) + overhead`. Serving engines measure more:
//! compute and memory only partly overlapped, per-sequence work, verification that is not
//! free below the ridge, round and draft-layer costs, FP8 and int8 kernels further from the
//! bandwidth peak than bf16's, INT4 dequantized on the vector units, all-reduce and expert
//! latencies, prompt tokens prefilled inside decode steps. This crate prices a
//! [`decode_lab::Scenario`]'s passes as the core's pass plus those terms ([`Plan`], a
//! [`decode_lab::Pricing`] every round function of `decode_lab` takes), fits the terms on
//! published measurements and judges them on publishers the fit never saw.
//!
//! | module | idea |
//! |---|---|
//! | `cost_terms` | [`CostTerms`]: each term one function with its unit and the measurement that motivates it ([`overlapped_time`], [`verify_extra_time`], [`round_overhead`], …); [`CostTerms::NEUTRAL`] changes nothing |
//! | `dequant` | [`dequant_time`]: INT4 weights dequantized at the card's FP32 vector rate |
//! | `pass` | [`Plan`]: a scenario's passes priced with the terms, with the prompt tokens a step carries ([`Prefill`], [`mixed_pass`]); [`Plan::SEED`] is the seed, bit for bit |
//! | `validation` | the published measurements, named profiles of the constants ([`validation::Calibration`]: `seed`, `fitted`, `measured`), engine profiles, the fits and leave-one-publisher-out |
//! | `flags` | the planner's command-line flags as one group a lecture's demo flattens ([`flags::Terms`]) |
//!
//! Every term is neutral by default, so a lecture that never names the planner prints the
//! seed's figures; a demo that offers its what-ifs turns the flags into a [`Plan`].

pub mod cost_terms;
mod dequant;
pub mod flags;
mod pass;
mod units;
pub mod validation;

pub use cost_terms::{
    AllReduceLatencies, CostTerms, DtypeEfficiency, MAX_VERIFY_COST, card_family, draft_layer_time,
    implied_overlap, overlapped_time, round_overhead, sequence_layer_time, verify_extra_time,
    verify_time_per_token,
};
pub use decode_lab::Error;
pub use dequant::{MAX_DEQUANT_OPS, dequant_time};
pub use pass::{
    Plan, Prefill, expert_reads, expert_time, mixed_pass, quantized_weights_per_card,
    with_cost_terms,
};
