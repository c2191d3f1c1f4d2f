//! The passes of a speculative round: a target pass over n tokens per sequence, one
//! draft step, and the draft's cost coefficient c — each built on the one roofline pass,
//! [`llm_math::forward_cost`].

use crate::scenario::check_overhead;
use crate::{Draft, Error, Scenario};
use hw_specs::Accelerator;
use llm_math::{Deployment, ForwardShape, ModelConfig, forward_cost};

/// The seed's `verify_time(cfg, hw, B, ctx, n, overhead)`: one forward pass of `cfg` on
/// one card of `hw` at the lecture's deployment ([`Deployment::LECTURE`]) over `batch`
/// sequences of `ctx` cached tokens, each feeding `n` new tokens, **checked against
/// memory**, plus a fixed per-pass `overhead` (kernel launches, sampling, scheduling), in
/// seconds. The formula lives in [`llm_math::forward_cost`]; in a [`Scenario`] use
/// [`target_pass_time`].
///
/// `n = 1` is a plain decode step; `n = γ + 1` verifies γ drafted tokens.
///
/// Errors: a zero `batch`, `ctx` or `n`; a batch that does not fit at `ctx` (where the
/// Python printed a time anyway: use [`llm_math::ForwardCost::time`] for that); an
/// overhead that is negative or not finite.
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
    Ok(forward_cost(cfg, hw, shape, &Deployment::LECTURE)?.checked_time()? + overhead)
}

/// A target pass over `n` new tokens per sequence in scenario `s`, seconds: the roofline
/// time on the `tp` cards (memory-checked), plus the target overhead, plus
/// `(n − 1) · verify_cost_per_token · t_base`.
///
/// Errors: a zero size, a batch that does not fit, a bad knob or overhead.
pub fn target_pass_time(s: &Scenario, n: u64) -> Result<f64, Error> {
    check_overhead(s.overhead_target)?;
    let step = |n_new| -> Result<f64, Error> {
        let shape = ForwardShape {
            batch: s.batch,
            ctx: s.ctx,
            n_new,
        };
        let cost = forward_cost(&s.target, &s.hw, shape, &s.deployment)?;
        Ok(cost.checked_time()? + s.overhead_target)
    };
    let t = step(n)?;
    if n <= 1 || s.verify_cost_per_token == 0.0 {
        return Ok(t);
    }
    Ok(t + (n - 1) as f64 * s.verify_cost_per_token * step(1)?)
}

/// One draft step in scenario `s`, seconds: a roofline pass of the draft's model over one
/// token per sequence ([`Draft::pass_model`]) plus its overhead, or `c · t_base` for a
/// [`Draft::FixedCost`]. The draft's memory is not checked here ([`Scenario::validate`]
/// counts its weights; lecture 6 does not count its KV cache).
///
/// Errors: a zero size, a bad knob, overhead or draft parameter.
pub fn draft_step_time(s: &Scenario) -> Result<f64, Error> {
    s.draft.check()?;
    let Some((model, ctx)) = s.draft.pass_model(&s.target, s.ctx) else {
        let Draft::FixedCost(c) = s.draft else {
            unreachable!("only a fixed-cost draft has no pass")
        };
        return Ok(c * target_pass_time(s, 1)?);
    };
    // Self-speculation runs the target's kernels, with the target's overhead.
    let overhead = match s.draft {
        Draft::SelfSpec { .. } => s.overhead_target,
        _ => s.overhead_draft,
    };
    check_overhead(overhead)?;
    let shape = ForwardShape {
        batch: s.batch,
        ctx,
        n_new: 1,
    };
    Ok(forward_cost(&model, &s.hw, shape, &s.deployment)?.time() + overhead)
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
