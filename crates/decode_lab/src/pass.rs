//! The passes of a speculative round — a target pass over n tokens per sequence, one draft
//! step, and the draft's cost coefficient c — priced by the seed's roofline
//! ([`llm_math::forward_cost`], [`ForwardCost::time`]) plus each pass's fixed overhead.
//!
//! What prices them is a [`Pricing`]: [`Seed`], the lecture's formula, here; an annex (the
//! `planner` crate) prices the same passes with the cost terms engines show. Every function
//! of a round ([`crate::best_round`], [`crate::round_plan`], [`crate::tree_speedup`], …) takes
//! one, so a what-if on the pricing is not a second copy of the round.

use crate::scenario::check_overhead;
use crate::{Draft, Error, Scenario};
use hw_specs::Accelerator;
use llm_math::{Deployment, ForwardCost, ForwardShape, ModelConfig, forward_cost};

/// The seed's `verify_time(cfg, hw, B, ctx, n, overhead)`: one forward pass of `cfg` on
/// one card of `hw` at the lecture's deployment ([`Deployment::LECTURE`]) over `batch`
/// sequences of `ctx` cached tokens, each feeding `n` new tokens, plus a fixed per-pass
/// `overhead` (kernel launches, sampling, scheduling), in seconds: `max(FLOPs / (peak ·
/// 0.6), bytes / (bandwidth · 0.8)) + overhead` ([`ForwardCost::time`]). In a [`Scenario`]
/// use [`target_pass_time`].
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

/// What prices the passes of a speculative round in a [`Scenario`]: the seed's roofline
/// ([`Seed`]), or an annex's model with more terms (the `planner` crate's `Plan`).
pub trait Pricing {
    /// A target pass over `n` new tokens per sequence, seconds, checked against memory.
    ///
    /// Errors: a zero size, a batch that does not fit, a bad knob.
    fn target_pass_time(&self, s: &Scenario, n: u64) -> Result<f64, Error>;

    /// One draft step, seconds (the draft's memory is not checked here).
    ///
    /// Errors: a zero size, a bad knob or draft parameter.
    fn draft_step_time(&self, s: &Scenario) -> Result<f64, Error>;

    /// What a round costs beyond its passes, seconds: 0 for the seed.
    ///
    /// Errors: a bad cost.
    fn round_extra_time(&self, _s: &Scenario) -> Result<f64, Error> {
        Ok(0.0)
    }

    /// Whether this pricing can price `s` at all, beyond [`Scenario::validate`] (its own
    /// terms in range, the card figures they need): an error before any pass.
    ///
    /// Errors: a term out of its range, named.
    fn check(&self, _s: &Scenario) -> Result<(), Error> {
        Ok(())
    }
}

/// The seed's pricing: every pass is [`ForwardCost::time`] — `max(FLOPs / (peak · eff_c),
/// bytes / (bandwidth · eff_b))` plus the all-reduces under tensor parallelism — plus its
/// fixed overhead, and a round costs nothing beyond its passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Seed;

impl Pricing for Seed {
    fn target_pass_time(&self, s: &Scenario, n: u64) -> Result<f64, Error> {
        target_pass_time(s, n)
    }

    fn draft_step_time(&self, s: &Scenario) -> Result<f64, Error> {
        draft_step_time(s)
    }
}

/// The roofline cost of a target pass over `n` new tokens per sequence in scenario `s`:
/// its FLOPs and bytes on each card, compute and memory times, and so whether it is
/// compute-bound ([`ForwardCost::is_compute_bound`]). Not checked against memory
/// ([`ForwardCost::checked_time`] says whether the batch fits).
///
/// Errors: a zero size, a bad knob.
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
    let shape = ForwardShape {
        batch: s.batch,
        ctx: s.ctx,
        n_new: n,
    };
    Ok(forward_cost(&s.target, &s.hw, shape, &s.deployment)?)
}

/// A target pass over `n` new tokens per sequence in scenario `s`, seconds — the seed's
/// formula: the roofline time on the `tp` cards ([`ForwardCost::time`], checked against
/// memory) plus the target's overhead.
///
/// Errors: a zero size, a batch that does not fit, a bad knob or overhead.
///
/// ```
/// use decode_lab::{target_pass_time, Scenario};
/// // 15.144 GB at 80% of 3.35 TB/s = 5.6508 ms, + 1 ms.
/// assert!((target_pass_time(&Scenario::LECTURE, 1)? - 6.6508e-3).abs() < 1e-6);
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn target_pass_time(s: &Scenario, n: u64) -> Result<f64, Error> {
    s.check_knobs()?;
    let cost = target_pass_cost(s, n)?;
    Ok(cost.checked_time()? + s.overhead_target)
}

/// The model one draft step of `s` runs, the context it reads, the deployment it runs at
/// (the target's, on the draft's own cards: [`Scenario::draft_cards`]) and its fixed
/// overhead (the target's for a draft that runs the target's kernels); `None` for a
/// [`Draft::FixedCost`], which costs a fraction of a target step instead.
pub fn draft_pass(s: &Scenario) -> Option<(ModelConfig, u64, Deployment, f64)> {
    let (model, ctx) = s.draft.pass_model(&s.target, s.ctx)?;
    let overhead = match s.draft {
        Draft::SelfSpec { .. } | Draft::FirstLayers { .. } => s.overhead_target,
        _ => s.overhead_draft,
    };
    let deployment = Deployment {
        tp: s.draft_cards(),
        ..s.deployment
    };
    Some((model, ctx, deployment, overhead))
}

/// One draft step in scenario `s`, seconds — the seed's formula: a roofline pass of the
/// draft's model over one token per sequence ([`draft_pass`]) plus its overhead; or `c ·
/// t_base` for a [`Draft::FixedCost`]. The draft's memory is not checked here
/// ([`Scenario::validate`] counts its weights; lecture 6 does not count its KV cache).
///
/// Errors: a zero size, a bad knob, overhead or draft parameter.
pub fn draft_step_time(s: &Scenario) -> Result<f64, Error> {
    s.check_knobs()?;
    let Some((model, ctx, deployment, overhead)) = draft_pass(s) else {
        let Draft::FixedCost(c) = s.draft else {
            unreachable!("only a fixed-cost draft has no pass")
        };
        return Ok(c * target_pass_time(s, 1)?);
    };
    let shape = ForwardShape {
        batch: s.batch,
        ctx,
        n_new: 1,
    };
    Ok(forward_cost(&model, &s.hw, shape, &deployment)?.time() + overhead)
}

/// The draft's cost coefficient `c = t_draft / t_base`: one draft step over one plain
/// target step (Leviathan et al.'s c), in scenario `s` priced by `p`.
///
/// Errors: whatever [`Scenario::validate`], `p`'s checks and passes reject.
///
/// ```
/// use decode_lab::{cost_coefficient, Scenario, Seed};
/// // 1.2348 ms (2.47 GB at 2.68 TB/s + 0.3 ms) over 6.6508 ms: c ≈ 0.186.
/// assert!((cost_coefficient(&Scenario::LECTURE, &Seed)? - 0.18566).abs() < 1e-5);
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn cost_coefficient(s: &Scenario, p: &dyn Pricing) -> Result<f64, Error> {
    s.validate()?;
    p.check(s)?;
    Ok(p.draft_step_time(s)? / p.target_pass_time(s, 1)?)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }

    /// The draft step by hand: the 1B model's 2,471,628,800 weight bytes plus 1025 tokens
    /// of its 32,768-byte KV at 80% of 3.35 TB/s, + 0.3 ms.
    #[test]
    fn a_draft_step_is_the_draft_models_pass_plus_its_overhead() {
        let t = draft_step_time(&Scenario::LECTURE).unwrap();
        let bytes = 2_471_628_800.0 + 1025.0 * 32_768.0;
        assert!(
            (t - (bytes / (3.35e12 * 0.8) + 0.3e-3)).abs() < 1e-12,
            "{t}"
        );
        let fixed = Scenario {
            draft: Draft::FixedCost(0.25),
            ..Scenario::LECTURE
        };
        let t_base = target_pass_time(&fixed, 1).unwrap();
        assert_eq!(draft_step_time(&fixed).unwrap(), 0.25 * t_base);
    }
}
