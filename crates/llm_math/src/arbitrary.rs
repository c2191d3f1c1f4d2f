//! Strategies for property tests (feature `arbitrary`): models, deployments and pass
//! shapes whose every field may be anything a hand-built value could hold (0,
//! `u64::MAX`, NaN, ±∞) or a plausible one, so a test reaches both the refusals and the
//! arithmetic. Cards come from [`hw_specs::arbitrary`].

use hw_specs::arbitrary::mostly;
use proptest::prelude::*;

use crate::{
    Deployment, Experts, ForwardShape, KvDtype, LLAMA31_8B, ModelConfig, Prefill, WeightDtype,
};

/// Any `u64` a size could hold, the awkward ones often.
pub fn extreme_u64() -> BoxedStrategy<u64> {
    prop_oneof![
        Just(0),
        Just(1),
        Just(u64::MAX),
        Just(u64::MAX / 2 + 1),
        Just(1 << 32),
        Just(1 << 61),
        any::<u64>(),
    ]
    .boxed()
}

/// A size within `range` seven times in eight, else [`extreme_u64`].
pub fn size(range: std::ops::Range<u64>) -> BoxedStrategy<u64> {
    prop_oneof![7 => range, 1 => extreme_u64()].boxed()
}

/// A published model half the time, else one of [`size`]d fields.
pub fn model_config() -> BoxedStrategy<ModelConfig> {
    prop_oneof![proptest::sample::select(crate::MODELS), wild_model_config()].boxed()
}

/// A model of [`size`]d fields, dense or mixture-of-experts.
pub fn wild_model_config() -> BoxedStrategy<ModelConfig> {
    let experts = (size(1..256), size(1..16), size(1..4096), size(0..4)).prop_map(
        |(routed, top_k, d_ff, shared)| Experts {
            routed,
            top_k,
            d_ff,
            shared,
        },
    );
    let moe = prop_oneof![3 => Just(None), 1 => experts.prop_map(Some)];
    (
        (size(1..128), size(1..16384), size(1..128), size(1..16)),
        (
            size(1..256),
            size(1..65536),
            size(1..300_000),
            size(1..1 << 20),
        ),
        (any::<bool>(), any::<bool>(), any::<bool>(), moe),
    )
        .prop_map(|(shape, widths, (tied, bias, qk_norm, moe))| ModelConfig {
            name: "probe",
            n_layers: shape.0,
            d_model: shape.1,
            n_heads: shape.2,
            n_kv_heads: shape.3,
            head_dim: widths.0,
            d_ff: widths.1,
            vocab: widths.2,
            max_context: widths.3,
            tied_embeddings: tied,
            qkv_bias: bias,
            qk_norm,
            moe,
            ..LLAMA31_8B
        })
        .boxed()
}

/// The lecture's deployment half the time, else a wild one.
pub fn deployment() -> BoxedStrategy<Deployment> {
    prop_oneof![Just(Deployment::LECTURE), wild_deployment()].boxed()
}

/// A deployment: any degree of tensor parallelism, dtypes, efficiencies and latencies.
pub fn wild_deployment() -> BoxedStrategy<Deployment> {
    let weights = prop_oneof![
        Just(WeightDtype::Bf16),
        Just(WeightDtype::Fp8),
        Just(WeightDtype::Int4)
    ];
    let kv = prop_oneof![Just(KvDtype::Bf16), Just(KvDtype::Fp8)];
    (
        size(1..9),
        weights,
        kv,
        mostly(0.01..1.0),
        mostly(0.01..1.0),
        mostly(0.0..1e-3),
        mostly(0.0..1e-3),
    )
        .prop_map(
            |(tp, weights, kv, compute, bandwidth, all_reduce, expert)| Deployment {
                tp,
                weights,
                kv,
                compute_efficiency: compute,
                bandwidth_efficiency: bandwidth,
                all_reduce_latency: all_reduce,
                expert_latency: expert,
            },
        )
        .boxed()
}

/// A pass: batch, context and new tokens of [`size`].
pub fn shape() -> BoxedStrategy<ForwardShape> {
    (size(1..1024), size(1..200_000), size(1..64))
        .prop_map(|(batch, ctx, n_new)| ForwardShape { batch, ctx, n_new })
        .boxed()
}

/// Prompt tokens carried by a pass, none half the time.
pub fn prefill() -> BoxedStrategy<Prefill> {
    prop_oneof![
        Just(Prefill::NONE),
        (size(0..8192), size(0..200_000)).prop_map(|(tokens, ctx)| Prefill { tokens, ctx }),
    ]
    .boxed()
}
