//! Strategies for property tests (feature `arbitrary`): drafts and scenarios whose every
//! piece may be the lecture's or anything a hand-built value could hold (0, `u64::MAX`,
//! NaN, ±∞), from [`hw_specs::arbitrary`] and [`llm_math::arbitrary`], so a test reaches
//! both the refusals and the arithmetic.

use hw_specs::arbitrary::{accelerator, mostly};
use llm_math::arbitrary::{deployment, model_config, size};
use proptest::prelude::*;

use crate::{Draft, LLAMA32_1B, Scenario};

/// Any draft: a published or wild model, a head, any fixed cost, any window or layers.
pub fn draft() -> BoxedStrategy<Draft> {
    prop_oneof![
        model_config().prop_map(Draft::Model),
        Just(Draft::Model(LLAMA32_1B)),
        Just(Draft::Head),
        mostly(0.0..1.0).prop_map(Draft::FixedCost),
        size(1..4096).prop_map(|kv_window| Draft::SelfSpec { kv_window }),
        size(0..200).prop_map(|layers| Draft::FirstLayers { layers }),
    ]
    .boxed()
}

/// A scenario of pieces each the lecture's half the time and drawn wild otherwise: it then
/// prices often enough for the computations to be reached, and every piece is still drawn
/// wild.
pub fn scenario() -> BoxedStrategy<Scenario> {
    let target = prop_oneof![Just(llm_math::LLAMA31_8B), model_config()];
    let hw = prop_oneof![Just(hw_specs::H100), accelerator()];
    let dep = prop_oneof![Just(llm_math::Deployment::LECTURE), deployment()];
    let drafter = prop_oneof![Just(Draft::Model(LLAMA32_1B)), draft()];
    (
        (hw, target, drafter, dep),
        (
            prop_oneof![Just(1), size(1..512)],
            prop_oneof![Just(1024), size(1..131_072)],
            prop_oneof![Just(0.8), mostly(0.0..1.0)],
        ),
        (
            prop_oneof![Just(1e-3), mostly(0.0..2e-3)],
            prop_oneof![Just(3e-4), mostly(0.0..1e-3)],
            prop_oneof![Just(None), size(0..16).prop_map(Some)],
        ),
    )
        .prop_map(
            |((hw, target, draft, deployment), (batch, ctx, alpha), (ot, od, draft_tp))| Scenario {
                hw,
                target,
                draft,
                batch,
                ctx,
                alpha,
                deployment,
                overhead_target: ot,
                overhead_draft: od,
                draft_tp,
            },
        )
        .boxed()
}
