//! The passes of a speculative round: a target pass over n tokens per sequence, one
//! draft step, and the draft's cost coefficient c — each built on the one roofline pass,
//! [`llm_math::forward_cost`].

use crate::scenario::check_overhead;
use crate::{Draft, Error, Scenario};
use hw_specs::Accelerator;
use llm_math::{
    AllReduceLatencies, Deployment, ForwardCost, ForwardShape, ModelConfig, dequant_time,
    draft_layer_time, forward_cost, forward_cost_with_prefill, pass_time_with_overlap,
    sequence_layer_time, verify_extra_time,
};

/// The seed's `verify_time(cfg, hw, B, ctx, n, overhead)`: one forward pass of `cfg` on
/// one card of `hw` at the lecture's deployment ([`Deployment::LECTURE`]) over `batch`
/// sequences of `ctx` cached tokens, each feeding `n` new tokens, **checked against
/// memory**, plus a fixed per-pass `overhead` (kernel launches, sampling, scheduling), in
/// seconds. The formula lives in [`llm_math::forward_cost`]; in a [`Scenario`] use
/// [`target_pass_time`].
///
/// `n = 1` is a plain decode step; `n = γ + 1` verifies γ drafted tokens.
///
/// It prices any batch, as the Python's does: whether the batch fits is a separate question
/// ([`llm_math::max_batch`], which the script asks first).
///
/// Errors: a zero `batch`, `ctx` or `n`; an overhead that is negative or not finite.
///
/// ```
/// use decode_lab::{verify_time, LLAMA32_1B};
/// use llm_math::LLAMA31_8B;
/// use hw_specs::H100;
/// let t_base = verify_time(&LLAMA31_8B, &H100, 1, 1024, 1, 1e-3)?;
/// // 15.144 GB at 2.68 TB/s = 5.6508 ms, + 1 ms.
/// assert!((t_base - 6.6508e-3).abs() < 1e-6);
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn verify_time(
    cfg: &ModelConfig,
    hw: &Accelerator,
    batch: u64,
    ctx: u64,
    n: u64,
    overhead: f64,
) -> Result<f64, Error> {
    check_overhead(overhead)?;
    let shape = ForwardShape {
        batch,
        ctx,
        n_new: n,
    };
    Ok(forward_cost(cfg, hw, shape, &Deployment::LECTURE)?.time() + overhead)
}

/// The deployment every pass of `s` runs at: `s.deployment` with the efficiency factors
/// of `s.cost_terms` for its weights applied ([`llm_math::CostTerms::efficiencies`]) and the
/// all-reduce latency of the card's interconnect family added
/// ([`llm_math::AllReduceLatencies::for_card`]). The neutral terms give `s.deployment`
/// back unchanged.
///
/// Errors: a factor out of range; a card of no known interconnect family when a family
/// latency is set.
pub fn pass_deployment(s: &Scenario) -> Result<Deployment, Error> {
    with_cost_terms(s.deployment, &s.cost_terms, &s.hw)
}

/// `d` with the efficiency factors of `t` applied and the all-reduce latency of `hw`'s
/// interconnect family added: [`pass_deployment`] of a scenario with these pieces.
pub(crate) fn with_cost_terms(
    d: Deployment,
    t: &llm_math::CostTerms,
    hw: &Accelerator,
) -> Result<Deployment, Error> {
    let (bandwidth_efficiency, compute_efficiency) =
        t.efficiencies(d.weights, d.bandwidth_efficiency, d.compute_efficiency)?;
    let family = if t.all_reduce == AllReduceLatencies::NEUTRAL {
        0.0
    } else {
        t.all_reduce.for_card(hw)?
    };
    Ok(Deployment {
        bandwidth_efficiency,
        compute_efficiency,
        all_reduce_latency: d.all_reduce_latency + family,
        ..d
    })
}

/// The roofline cost of a target pass over `n` new tokens per sequence in scenario `s`
/// (with the prompt tokens the step carries, `s.prefill`:
/// [`llm_math::forward_cost_with_prefill`]), at
/// [`pass_deployment`] (the deployment [`target_pass_time`] prices it at): its FLOPs and
/// bytes, compute and memory times, and so whether it is compute-bound
/// ([`ForwardCost::is_compute_bound`]) with the weight format's efficiency factors applied
/// ([`llm_math::CostTerms::efficiencies`]). Not
/// checked against memory ([`ForwardCost::checked_time`] says whether the batch fits).
///
/// Errors: a zero size, a bad knob or cost term.
///
/// ```
/// use decode_lab::{target_pass_cost, Scenario};
/// // Batch 512 at context 512, 5 tokens each: 2560 tokens through the weights and the
/// // cache at 60% of 989 TFLOP/s take 65.91 ms; 49.7 GB at 80% of 3.35 TB/s, 18.55 ms.
/// let s = Scenario { batch: 512, ctx: 512, ..Scenario::LECTURE };
/// let cost = target_pass_cost(&s, 5)?;
/// assert!(cost.is_compute_bound());
/// assert!((cost.compute_time - 65.912e-3).abs() < 1e-5);
/// assert!((cost.memory_time - 18.547e-3).abs() < 1e-5);
/// assert!(!target_pass_cost(&Scenario::LECTURE, 5)?.is_compute_bound());
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn target_pass_cost(s: &Scenario, n: u64) -> Result<ForwardCost, Error> {
    s.cost_terms.check()?;
    let shape = ForwardShape {
        batch: s.batch,
        ctx: s.ctx,
        n_new: n,
    };
    Ok(forward_cost_with_prefill(
        &s.target,
        &s.hw,
        shape,
        s.prefill,
        &pass_deployment(s)?,
    )?)
}

/// The deployment a draft step of `s` runs at: [`pass_deployment`] on the draft's own
/// tensor parallelism (`s.draft_tp`, or the target's when it is `None`).
///
/// Errors: as [`pass_deployment`].
pub fn draft_deployment(s: &Scenario) -> Result<Deployment, Error> {
    Ok(Deployment {
        tp: s.draft_tp.unwrap_or(s.deployment.tp),
        ..pass_deployment(s)?
    })
}

/// A target pass over `n` new tokens per sequence in scenario `s`, seconds: the roofline
/// time on the `tp` cards (memory-checked) at [`pass_deployment`], with compute and
/// memory overlapped by `cost_terms.overlap` ([`llm_math::overlapped_time`]; 1 is the
/// seed's `max`), plus the target overhead, plus `batch · layers ·
/// cost_terms.per_sequence_layer` ([`llm_math::sequence_layer_time`]), plus `batch · (n − 1) ·
/// cost_terms.verify_per_batch_token` ([`llm_math::verify_extra_time`]), plus INT4's
/// dequantization of the weights the pass reads ([`llm_math::dequant_time`]), plus
/// `(n − 1) · verify_cost_per_token · t_base`.
///
/// Errors: a zero size, a batch that does not fit, a bad knob, overhead or cost term.
pub fn target_pass_time(s: &Scenario, n: u64) -> Result<f64, Error> {
    s.check_knobs()?;
    let step = |n_new| -> Result<f64, Error> {
        let cost = target_pass_cost(s, n_new)?;
        cost.checked_time()?;
        let per_sequence =
            sequence_layer_time(s.cost_terms.per_sequence_layer, s.batch, s.target.n_layers)?;
        let tokens = s.batch * n_new + s.prefill.tokens;
        let dequant = pass_dequant_time(&s.target, s, s.deployment.tp, tokens)?;
        Ok(pass_time_with_overlap(&cost, s.cost_terms.overlap)?
            + s.overhead_target
            + per_sequence
            + dequant)
    };
    let t = step(n)? + verify_extra_time(s.batch, n, s.cost_terms.verify_per_batch_token)?;
    if n <= 1 || s.verify_cost_per_token == 0.0 {
        return Ok(t);
    }
    Ok(t + (n - 1) as f64 * s.verify_cost_per_token * step(1)?)
}

/// One draft step in scenario `s`, seconds: a roofline pass of the draft's model over one
/// token per sequence ([`Draft::pass_model`]) at [`draft_deployment`] with the scenario's
/// overlap, plus its overhead, plus `cost_terms.draft_per_layer` per layer of the draft
/// model ([`llm_math::draft_layer_time`]; one for a head, the target's for
/// self-speculation), plus `batch · layers · cost_terms.per_sequence_layer` over the
/// draft's layers, plus INT4's dequantization of the draft's weights on its own cards
/// ([`llm_math::dequant_time`]); or `c · t_base` for a [`Draft::FixedCost`]. The draft's memory is not checked here ([`Scenario::validate`]
/// counts its weights; lecture 6 does not count its KV cache).
///
/// Errors: a zero size, a bad knob, overhead or draft parameter.
pub fn draft_step_time(s: &Scenario) -> Result<f64, Error> {
    s.check_knobs()?;
    let Some((model, ctx)) = s.draft.pass_model(&s.target, s.ctx) else {
        let Draft::FixedCost(c) = s.draft else {
            unreachable!("only a fixed-cost draft has no pass")
        };
        return Ok(c * target_pass_time(s, 1)?);
    };
    // Self-speculation runs the target's kernels, with the target's overhead.
    let overhead = match s.draft {
        Draft::SelfSpec { .. } | Draft::FirstLayers { .. } => s.overhead_target,
        _ => s.overhead_draft,
    };
    check_overhead(overhead)?;
    let shape = ForwardShape {
        batch: s.batch,
        ctx,
        n_new: 1,
    };
    let deployment = draft_deployment(s)?;
    let cost = forward_cost(&model, &s.hw, shape, &deployment)?;
    let layers = draft_layer_time(s.cost_terms.draft_per_layer, model.n_layers, 1)?;
    let per_sequence =
        sequence_layer_time(s.cost_terms.per_sequence_layer, s.batch, model.n_layers)?;
    let dequant = pass_dequant_time(&model, s, deployment.tp, s.batch)?;
    Ok(pass_time_with_overlap(&cost, s.cost_terms.overlap)?
        + overhead
        + layers
        + per_sequence
        + dequant)
}

/// The INT4 dequantization of a pass of `model` on `tp` cards over `tokens` tokens in
/// scenario `s` ([`llm_math::dequant_time`]): the quantized weights one card reads
/// ([`ModelConfig::streamed_quantized_params`]), at the scenario's weights and
/// `cost_terms.int4_dequant_ops`.
///
/// Errors: as [`llm_math::dequant_time`], or an MoE model whose experts are invalid.
pub(crate) fn pass_dequant_time(
    model: &ModelConfig,
    s: &Scenario,
    tp: u64,
    tokens: u64,
) -> Result<f64, Error> {
    let ops = s.cost_terms.int4_dequant_ops;
    if ops == 0.0 {
        return Ok(0.0);
    }
    let per_card = quantized_weights_per_card(model, tp, tokens)?;
    Ok(dequant_time(per_card, &s.hw, s.deployment.weights, ops)?)
}

/// The quantized weights one of `tp` cards reads in a pass of `model` over `tokens`
/// tokens ([`ModelConfig::streamed_quantized_params`]): what INT4 dequantizes.
///
/// Errors: an MoE model whose experts are invalid.
pub(crate) fn quantized_weights_per_card(
    model: &ModelConfig,
    tp: u64,
    tokens: u64,
) -> Result<f64, Error> {
    Ok(model.streamed_quantized_params(tokens)? / tp.max(1) as f64)
}

/// The draft's cost coefficient `c = t_draft / t_base`: one draft step over one plain
/// target step (Leviathan et al.'s c), in scenario `s`.
///
/// Errors: whatever [`Scenario::validate`], [`target_pass_time`] and [`draft_step_time`]
/// reject.
///
/// ```
/// use decode_lab::{cost_coefficient, Scenario};
/// // 1.2348 ms (2.47 GB at 2.68 TB/s + 0.3 ms) over 6.6508 ms: c ≈ 0.186.
/// assert!((cost_coefficient(&Scenario::LECTURE)? - 0.18566).abs() < 1e-5);
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn cost_coefficient(s: &Scenario) -> Result<f64, Error> {
    s.validate()?;
    Ok(draft_step_time(s)? / target_pass_time(s, 1)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use llm_math::{DtypeEfficiency, WeightDtype};

    /// Batch 512, context 512, 5 tokens each, FP8 weights, with these FP8 factors.
    fn fp8(bandwidth: f64, compute: f64) -> Scenario {
        let mut s = Scenario {
            batch: 512,
            ctx: 512,
            ..Scenario::LECTURE
        };
        s.deployment.weights = WeightDtype::Fp8;
        s.cost_terms.fp8 = DtypeEfficiency { bandwidth, compute };
        s
    }

    #[test]
    fn the_fp8_factors_decide_whether_a_verification_is_compute_bound() {
        // By hand, Llama-3.1-8B on an H100: 2560 tokens · (2 · 7,504,924,672 + 4 · 131,072 ·
        // 512) = 3.9112e13 FLOPs at 60% of 1979 TFLOP/s (FP8) = 32.94 ms; 6,979,321,856
        // linear weights at 1 byte and 525,602,816 others (the LM head, norms) at 2 +
        // 512 · 512 · 131,072 KV bytes read + 2560 · 131,072 written = 42,725,810,176 bytes
        // at 80% of 3.35 TB/s = 15.94 ms. Compute-bound, until the bandwidth factor drops
        // below 15.94 / 32.94 = 0.484.
        let plain = target_pass_cost(&fp8(1.0, 1.0), 5).unwrap();
        assert_eq!(plain.bytes, 42_725_810_176.0);
        assert!((plain.compute_time - 32.9395e-3).abs() < 1e-6, "{plain:?}");
        assert!((plain.memory_time - 15.9425e-3).abs() < 1e-6, "{plain:?}");
        assert!(plain.is_compute_bound());
        let slow = target_pass_cost(&fp8(0.4, 1.0), 5).unwrap();
        assert!(
            (slow.memory_time - 15.9425e-3 / 0.4).abs() < 1e-6,
            "{slow:?}"
        );
        assert!(
            !slow.is_compute_bound(),
            "39.86 ms of memory over 32.94 of compute"
        );
        assert!(
            target_pass_cost(&fp8(0.5, 1.0), 5)
                .unwrap()
                .is_compute_bound()
        );
        // A slower FP8 compute path is compute-bound again: 65.88 ms over 39.86.
        assert!(
            target_pass_cost(&fp8(0.4, 0.5), 5)
                .unwrap()
                .is_compute_bound()
        );
        // The scenario's own deployment, without the factors, says compute-bound: the
        // pass's cost must be read at the deployment its time is priced at.
        let s = fp8(0.4, 1.0);
        let shape = ForwardShape {
            batch: 512,
            ctx: 512,
            n_new: 5,
        };
        assert!(
            forward_cost(&s.target, &s.hw, shape, &s.deployment)
                .unwrap()
                .is_compute_bound()
        );
    }

    #[test]
    fn a_pass_is_priced_at_the_slower_of_its_costs_plus_the_overhead() {
        // By hand: batch 1, context 1024, one token: 15.144 GB at 2.68 TB/s = 5.6508 ms,
        // memory-bound, + 1 ms; batch 512, context 512, 5 tokens (bf16): 65.912 ms of
        // compute over 18.547 of memory, + 1 ms.
        let decode = target_pass_cost(&Scenario::LECTURE, 1).unwrap();
        assert!(!decode.is_compute_bound());
        assert!((target_pass_time(&Scenario::LECTURE, 1).unwrap() - 6.6508e-3).abs() < 1e-6);
        let s = Scenario {
            batch: 512,
            ctx: 512,
            ..Scenario::LECTURE
        };
        assert!((target_pass_time(&s, 5).unwrap() - 66.912e-3).abs() < 1e-6);
        assert!(
            target_pass_cost(&fp8(1.5, 1.0), 5).is_err(),
            "a factor over 1"
        );
    }
}
