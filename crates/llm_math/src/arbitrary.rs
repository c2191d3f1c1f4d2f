//! Strategies for property tests (feature `arbitrary`): models, deployments and pass
//! shapes whose every field may be anything a hand-built value could hold (0,
//! `u64::MAX`, NaN, ±∞) or a plausible one, so a test reaches both the refusals and the
//! arithmetic. Cards come from [`hw_specs::arbitrary`].

use hw_specs::arbitrary::mostly;
use proptest::prelude::*;

use crate::{
    Arch, Deployment, Experts, ForwardShape, KvDtype, LLAMA31_8B, Mla, ModelConfig, Sliding,
    WeightDtype,
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

/// A published model half the time (built in or shipped), else one of [`size`]d fields.
pub fn model_config() -> BoxedStrategy<ModelConfig> {
    let published: Vec<ModelConfig> = crate::catalog::all_models().copied().collect();
    prop_oneof![proptest::sample::select(published), wild_model_config()].boxed()
}

/// What a block adds, any of it, of [`size`]d fields.
fn arch() -> BoxedStrategy<Arch> {
    let sliding =
        (size(1..8192), size(0..64)).prop_map(|(window, layers)| Sliding { window, layers });
    let mla = (
        size(0..2048),
        size(1..1024),
        size(0..256),
        size(0..128),
        size(1..256),
    )
        .prop_map(
            |(q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim)| Mla {
                q_lora_rank,
                kv_lora_rank,
                qk_nope_head_dim,
                qk_rope_head_dim,
                v_head_dim,
            },
        );
    (
        (any::<bool>(), any::<bool>(), any::<bool>()),
        prop_oneof![2 => Just(None), 1 => sliding.prop_map(Some)],
        prop_oneof![2 => Just(None), 1 => mla.prop_map(Some)],
    )
        .prop_map(
            |((o_bias, sandwich_norms, attention_sinks), sliding, mla)| Arch {
                o_bias,
                sandwich_norms,
                attention_sinks,
                sliding,
                mla,
            },
        )
        .boxed()
}

/// A model of [`size`]d fields, dense or mixture-of-experts, with anything added.
pub fn wild_model_config() -> BoxedStrategy<ModelConfig> {
    let experts = (
        (size(1..256), size(1..16), size(1..4096), size(0..8192)),
        (any::<bool>(), any::<bool>(), any::<bool>(), size(0..4)),
    )
        .prop_map(
            |(
                (routed, top_k, d_ff, shared_d_ff),
                (shared_gate, router_bias, expert_bias, dense),
            )| {
                Experts {
                    routed,
                    top_k,
                    d_ff,
                    shared_d_ff,
                    shared_gate,
                    router_bias,
                    expert_bias,
                    dense_layers: dense,
                }
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
        prop_oneof![Just(Arch::LLAMA), arch()],
    )
        .prop_map(
            |(shape, widths, (tied, bias, qk_norm, mut moe), mut arch)| {
                // Sliding and dense layers among the layers drawn (more is refused, and
                // would leave few models to price).
                let n_layers = shape.0;
                if let Some(s) = arch.sliding.as_mut() {
                    s.layers %= n_layers.saturating_add(1);
                }
                if let Some(x) = moe.as_mut() {
                    x.dense_layers %= n_layers.saturating_add(1);
                }
                ModelConfig {
                    name: "probe",
                    n_layers: shape.0,
                    d_model: shape.1,
                    n_heads: shape.2,
                    // Latent attention reads one KV head; half the time keep what was drawn.
                    n_kv_heads: if arch.mla.is_some() && shape.3 % 2 == 0 {
                        1
                    } else {
                        shape.3
                    },
                    head_dim: widths.0,
                    d_ff: widths.1,
                    vocab: widths.2,
                    max_context: widths.3,
                    tied_embeddings: tied,
                    qkv_bias: bias,
                    qk_norm,
                    moe,
                    arch,
                    ..LLAMA31_8B
                }
            },
        )
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
        Just(WeightDtype::W8A16),
        Just(WeightDtype::W8A8),
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
    )
        .prop_map(
            |(tp, weights, kv, compute, bandwidth, all_reduce)| Deployment {
                tp,
                weights,
                kv,
                compute_efficiency: compute,
                bandwidth_efficiency: bandwidth,
                all_reduce_latency: all_reduce,
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
