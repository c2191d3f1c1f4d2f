//! Speculative decoding on a roofline: draft cost c, verify cost, best γ, speedup.
//!
//! A round drafts γ tokens with the small model (γ draft steps) and verifies them with
//! one forward pass of the target over γ + 1 tokens. With per-token acceptance rate α the
//! round yields [`expected_tokens`]`(α, γ)` tokens on average (Leviathan et al. 2023,
//! eq. 1), so the speedup over plain decoding is
//!
//! `speedup = expected_tokens(α, γ) · t_base / (γ · t_draft + t_verify)`.
//!
//! Leviathan's analysis assumes verifying γ + 1 tokens costs the same as decoding one,
//! and that the draft costs a known fraction c of a target step. Here both come from
//! the roofline ([`llm_math::forward_time`]): verification is free only while the batch's
//! `batch · (γ + 1)` tokens stay under the critical batch.

use crate::Error;
use hw_specs::Accelerator;
pub use llm_math::LLAMA32_1B;
use llm_math::{ForwardShape, ModelConfig, forward_cost, forward_time};

/// The longest draft [`best_round`] tries.
pub const MAX_GAMMA: u32 = 16;

/// Time of one forward pass of `cfg` over `batch` sequences of `ctx` cached tokens, each
/// feeding `n` new tokens, plus a fixed per-pass `overhead` (kernel launches, sampling,
/// scheduling), in seconds.
///
/// `n = 1` is a plain decode step; `n = γ + 1` verifies γ drafted tokens. See
/// [`llm_math::forward_time`] for the FLOP and byte counts.
///
/// Errors: a zero `batch`, `ctx` or `n`; a batch that does not fit at `ctx`; an overhead
/// that is negative or not finite.
///
/// ```
/// use decode_lab::{verify_time, LLAMA32_1B};
/// use llm_math::LLAMA31_8B;
/// use hw_specs::H100;
/// let t_base = verify_time(&LLAMA31_8B, &H100, 1, 1024, 1, 1e-3)?;
/// let t_draft = verify_time(&LLAMA32_1B, &H100, 1, 1024, 1, 0.3e-3)?;
/// // 5.65 ms + 1 ms for the target, 0.93 ms + 0.3 ms for the draft: c ≈ 0.186.
/// assert!((t_base - 6.6508e-3).abs() < 1e-6);
/// assert!((t_draft / t_base - 0.1857).abs() < 1e-4);
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
    if !overhead.is_finite() || overhead < 0.0 {
        return Err(Error::Overhead(overhead));
    }
    let cost = forward_time(
        cfg,
        hw,
        ForwardShape {
            batch,
            ctx,
            n_new: n,
        },
    )?;
    Ok(cost.time() + overhead)
}

/// Time of one decode step of a *draft* model: like [`verify_time`] with `n = 1`, but
/// without the memory check — lecture 6 does not count the draft's weights and KV cache
/// against the card's memory (they would live in spare memory, or on another device).
///
/// Errors: a zero `batch` or `ctx`; an overhead that is negative or not finite.
///
/// ```
/// use decode_lab::{draft_time, verify_time, LLAMA32_1B};
/// use hw_specs::H100;
/// let t = draft_time(&LLAMA32_1B, &H100, 1, 1024, 0.3e-3)?;
/// assert_eq!(t, verify_time(&LLAMA32_1B, &H100, 1, 1024, 1, 0.3e-3)?);
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn draft_time(
    cfg: &ModelConfig,
    hw: &Accelerator,
    batch: u64,
    ctx: u64,
    overhead: f64,
) -> Result<f64, Error> {
    if !overhead.is_finite() || overhead < 0.0 {
        return Err(Error::Overhead(overhead));
    }
    let cost = forward_cost(
        cfg,
        hw,
        ForwardShape {
            batch,
            ctx,
            n_new: 1,
        },
    )?;
    Ok(cost.time() + overhead)
}

/// Expected tokens one round yields when each of γ drafted tokens is accepted
/// independently with probability α: `(1 − α^(γ+1)) / (1 − α)`, and `γ + 1` at α = 1.
///
/// It counts the accepted drafts plus the one token the target always adds (the
/// correction at the first rejection, or a bonus token when all γ are accepted).
/// Errors when α is outside [0, 1] or NaN.
///
/// ```
/// let t = decode_lab::expected_tokens(0.8, 4)?;
/// assert!((t - 3.3616).abs() < 1e-12); // (1 − 0.8⁵) / 0.2
/// assert_eq!(decode_lab::expected_tokens(1.0, 4)?, 5.0);
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn expected_tokens(alpha: f64, gamma: u32) -> Result<f64, Error> {
    check_alpha(alpha)?;
    if alpha == 1.0 {
        return Ok(f64::from(gamma) + 1.0);
    }
    Ok((1.0 - alpha.powf(f64::from(gamma) + 1.0)) / (1.0 - alpha))
}

fn check_alpha(alpha: f64) -> Result<(), Error> {
    if (0.0..=1.0).contains(&alpha) {
        Ok(())
    } else {
        Err(Error::Alpha(alpha))
    }
}

/// The figures of one speculative round with draft length γ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundPlan {
    /// Drafted tokens per round.
    pub gamma: u32,
    /// Tokens the round yields on average, [`expected_tokens`]`(α, γ)`.
    pub expected_tokens: f64,
    /// `expected_tokens · t_base / t_round`: how much faster than plain decoding.
    pub speedup: f64,
    /// `t_verify / t_base`: what verifying γ + 1 tokens costs, in plain decode steps.
    pub verify_ratio: f64,
    /// `t_draft / t_base`: the draft's cost coefficient c.
    pub c: f64,
    /// One plain decode step of the target, seconds.
    pub t_base: f64,
    /// One decode step of the draft, seconds.
    pub t_draft: f64,
    /// One target pass over γ + 1 tokens, seconds.
    pub t_verify: f64,
    /// `γ · t_draft + t_verify`, seconds.
    pub t_round: f64,
}

/// The answer of [`best_round`]: speculate with the best γ, or don't speculate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BestRound {
    /// Some γ beats plain decoding; this is the best one.
    Speculate(RoundPlan),
    /// No γ in 1..=[`MAX_GAMMA`] beats plain decoding; carries the best one tried,
    /// whose speedup is ≤ 1.
    NoSpeculation(RoundPlan),
}

impl BestRound {
    /// The chosen plan, or `None` when speculation does not pay.
    pub fn plan(&self) -> Option<&RoundPlan> {
        match self {
            BestRound::Speculate(p) => Some(p),
            BestRound::NoSpeculation(_) => None,
        }
    }

    /// The draft length to use: the best γ, or 0 (plain decoding).
    pub fn gamma(&self) -> u32 {
        self.plan().map_or(0, |p| p.gamma)
    }

    /// The speedup obtained: the best plan's, or exactly 1 for plain decoding.
    pub fn speedup(&self) -> f64 {
        self.plan().map_or(1.0, |p| p.speedup)
    }
}

/// Finds the draft length γ in 1..=[`MAX_GAMMA`] with the highest speedup for a target
/// `tgt` and a draft `drf` on `hw`, at `batch` sequences of `ctx` cached tokens and
/// acceptance rate `alpha`; `overhead_t` and `overhead_d` are the fixed per-pass
/// overheads of target and draft, seconds.
///
/// The round time is `γ · t_draft + t_verify(γ + 1)` with `t_draft` from [`draft_time`];
/// ties go to the smaller γ. The draft's own weights and KV cache are not counted against
/// the device memory.
///
/// Errors: α outside [0, 1]; a zero `batch` or `ctx`; a batch the target cannot fit at
/// `ctx`; an invalid overhead.
///
/// ```
/// use decode_lab::{best_round, BestRound, LLAMA32_1B};
/// use llm_math::LLAMA31_8B;
/// use hw_specs::H100;
/// let best = best_round(&LLAMA31_8B, &LLAMA32_1B, &H100, 1, 1024, 0.8, 1e-3, 0.3e-3)?;
/// let BestRound::Speculate(plan) = best else { panic!("speculation pays at batch 1") };
/// assert_eq!(plan.gamma, 4);
/// assert!((plan.speedup - 1.929).abs() < 1e-3);
/// # Ok::<(), decode_lab::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn best_round(
    tgt: &ModelConfig,
    drf: &ModelConfig,
    hw: &Accelerator,
    batch: u64,
    ctx: u64,
    alpha: f64,
    overhead_t: f64,
    overhead_d: f64,
) -> Result<BestRound, Error> {
    check_alpha(alpha)?;
    let t_base = verify_time(tgt, hw, batch, ctx, 1, overhead_t)?;
    let t_draft = draft_time(drf, hw, batch, ctx, overhead_d)?;
    let mut best: Option<RoundPlan> = None;
    for gamma in 1..=MAX_GAMMA {
        let t_verify = verify_time(tgt, hw, batch, ctx, u64::from(gamma) + 1, overhead_t)?;
        let t_round = f64::from(gamma) * t_draft + t_verify;
        let tokens = expected_tokens(alpha, gamma)?;
        let plan = RoundPlan {
            gamma,
            expected_tokens: tokens,
            speedup: tokens * t_base / t_round,
            verify_ratio: t_verify / t_base,
            c: t_draft / t_base,
            t_base,
            t_draft,
            t_verify,
            t_round,
        };
        if best.is_none_or(|b| plan.speedup > b.speedup) {
            best = Some(plan);
        }
    }
    let best = best.expect("MAX_GAMMA ≥ 1, so at least one γ was tried");
    Ok(if best.speedup > 1.0 {
        BestRound::Speculate(best)
    } else {
        BestRound::NoSpeculation(best)
    })
}

/// Speedup of tree (or chain) verification over plain decoding, lecture 6 demo 3's
/// accounting: a round drafts `depth` levels, each costing `draft_cost · t_base` (an
/// EAGLE-style one-layer draft is about 0.05), then verifies the whole tree in one target
/// pass over `nodes + 1` tokens; it yields `tau` tokens on average.
///
/// `t_round = depth · draft_cost · t_base + verify_time(tgt, hw, batch, ctx, nodes + 1, overhead)`,
/// `speedup = tau · t_base / t_round`.
///
/// Errors: `tau` below 1 or not finite, `depth` 0, a negative or non-finite `draft_cost`,
/// and whatever [`verify_time`] rejects.
///
/// ```
/// use decode_lab::tree_speedup;
/// use llm_math::LLAMA31_8B;
/// use hw_specs::H100;
/// // A chain of 4 that yields 3 tokens a round at batch 1: ≈ 3 / 1.2 = 2.5×.
/// let s = tree_speedup(&LLAMA31_8B, &H100, 1, 1024, 3.0, 4, 4, 0.05, 1e-3)?;
/// assert!((s - 2.5).abs() < 0.01);
/// # Ok::<(), decode_lab::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn tree_speedup(
    tgt: &ModelConfig,
    hw: &Accelerator,
    batch: u64,
    ctx: u64,
    tau: f64,
    depth: u64,
    nodes: u64,
    draft_cost: f64,
    overhead: f64,
) -> Result<f64, Error> {
    if !(tau.is_finite() && tau >= 1.0) {
        return Err(Error::Argument(format!(
            "τ (tokens per round) must be ≥ 1, got {tau}"
        )));
    }
    if depth == 0 {
        return Err(Error::Argument(
            "a draft tree needs at least one level".into(),
        ));
    }
    if !(draft_cost.is_finite() && draft_cost >= 0.0) {
        return Err(Error::Argument(format!(
            "the draft cost per level must be a finite fraction ≥ 0 of a target step, got {draft_cost}"
        )));
    }
    let t_base = verify_time(tgt, hw, batch, ctx, 1, overhead)?;
    let t_verify = verify_time(tgt, hw, batch, ctx, nodes.saturating_add(1), overhead)?;
    let t_round = depth as f64 * draft_cost * t_base + t_verify;
    Ok(tau * t_base / t_round)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hw_specs::H100;
    use llm_math::LLAMA31_8B;

    const BW: f64 = 3.35e12 * 0.8;

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
        let best = best_round(&LLAMA31_8B, &LLAMA32_1B, &H100, 1, 1024, 0.8, 1e-3, 0.3e-3).unwrap();
        let p = *best.plan().unwrap();
        assert_eq!(p.gamma, 4);
        // t_base = 6.650820 ms, t_draft = 1.234782 ms, t_verify(5) = t_base + 4 KV writes.
        let t_base = 15_144_198_144.0 / BW + 1e-3;
        let t_verify = (15_144_198_144.0 + 4.0 * 131_072.0) / BW + 1e-3;
        assert!((p.t_base - t_base).abs() < 1e-15);
        assert!((p.t_verify - t_verify).abs() < 1e-15);
        assert!((p.t_round - (4.0 * p.t_draft + t_verify)).abs() < 1e-15);
        assert!((p.speedup - 3.3616 * t_base / p.t_round).abs() < 1e-12);
        assert!((p.speedup - 1.9290).abs() < 1e-4);
        assert_eq!(best.gamma(), 4);
        assert_eq!(best.speedup(), p.speedup);
    }

    #[test]
    fn with_alpha_zero_no_draft_length_pays() {
        let best = best_round(&LLAMA31_8B, &LLAMA32_1B, &H100, 1, 1024, 0.0, 1e-3, 0.3e-3).unwrap();
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
    fn alpha_outside_the_unit_interval_is_an_error() {
        for a in [-0.1, 1.0001, f64::NAN, f64::INFINITY] {
            assert!(matches!(expected_tokens(a, 3), Err(Error::Alpha(_))), "{a}");
            let r = best_round(&LLAMA31_8B, &LLAMA32_1B, &H100, 1, 1024, a, 1e-3, 0.3e-3);
            assert!(matches!(r, Err(Error::Alpha(_))), "{a}");
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
        assert!(matches!(
            v(15, 32768, 1),
            Err(Error::Math(llm_math::Error::DoesNotFit { .. }))
        ));
        let r = best_round(
            &LLAMA31_8B,
            &LLAMA32_1B,
            &H100,
            128,
            4096,
            0.8,
            1e-3,
            0.3e-3,
        );
        assert!(matches!(
            r,
            Err(Error::Math(llm_math::Error::DoesNotFit {
                max_batch: 119,
                ..
            }))
        ));
        assert!(best_round(&LLAMA31_8B, &LLAMA32_1B, &H100, 0, 4096, 0.8, 1e-3, 0.3e-3).is_err());
    }

    #[test]
    fn a_bad_overhead_is_an_error_not_a_nan() {
        for o in [-1e-3, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                verify_time(&LLAMA31_8B, &H100, 1, 1024, 1, o),
                Err(Error::Overhead(_))
            ));
            let r = best_round(&LLAMA31_8B, &LLAMA32_1B, &H100, 1, 1024, 0.8, 1e-3, o);
            assert!(matches!(r, Err(Error::Overhead(_))));
        }
    }

    #[test]
    fn speedup_never_exceeds_expected_tokens_and_verify_never_beats_a_step() {
        for batch in [1, 8, 64, 300, 470] {
            for ctx in [128, 512, 1024] {
                for alpha in [0.0, 0.3, 0.6, 0.8, 0.95, 1.0] {
                    let best = best_round(
                        &LLAMA31_8B,
                        &LLAMA32_1B,
                        &H100,
                        batch,
                        ctx,
                        alpha,
                        1e-3,
                        0.3e-3,
                    )
                    .unwrap();
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
        assert!(verify_time(&llm_math::LLAMA32_3B, &H100, 64, 32768, 1, 0.3e-3).is_err());
        assert!(draft_time(&llm_math::LLAMA32_3B, &H100, 64, 32768, 0.3e-3).is_ok());
        let r = best_round(
            &LLAMA32_1B,
            &llm_math::LLAMA32_3B,
            &H100,
            64,
            32768,
            0.8,
            1e-3,
            0.3e-3,
        );
        assert!(r.is_ok(), "{r:?}");
        assert!(matches!(
            draft_time(&LLAMA32_1B, &H100, 1, 1024, -1.0),
            Err(Error::Overhead(_))
        ));
    }

    #[test]
    fn tree_speedup_charges_each_level_and_the_verified_nodes() {
        // Batch 32, ctx 1024, 340 nodes: 32·341 = 10,912 tokens, far past the knee.
        let s = tree_speedup(&LLAMA31_8B, &H100, 32, 1024, 4.0, 4, 340, 0.05, 1e-3).unwrap();
        let t_base = verify_time(&LLAMA31_8B, &H100, 32, 1024, 1, 1e-3).unwrap();
        let t_verify = verify_time(&LLAMA31_8B, &H100, 32, 1024, 341, 1e-3).unwrap();
        assert!((s - 4.0 * t_base / (4.0 * 0.05 * t_base + t_verify)).abs() < 1e-12);
        assert!(
            s < 1.0,
            "verifying 10,912 tokens costs more than 4 tokens gain: {s}"
        );
        let chain = tree_speedup(&LLAMA31_8B, &H100, 1, 1024, 2.0, 2, 2, 0.0, 1e-3).unwrap();
        assert!(
            (chain - 2.0 * t_base_1() / verify_time(&LLAMA31_8B, &H100, 1, 1024, 3, 1e-3).unwrap())
                .abs()
                < 1e-12
        );
    }

    fn t_base_1() -> f64 {
        verify_time(&LLAMA31_8B, &H100, 1, 1024, 1, 1e-3).unwrap()
    }

    #[test]
    fn tree_speedup_rejects_a_meaningless_round() {
        let t =
            |tau, depth, cost| tree_speedup(&LLAMA31_8B, &H100, 1, 1024, tau, depth, 4, cost, 1e-3);
        assert!(matches!(t(0.5, 4, 0.05), Err(Error::Argument(m)) if m.contains("τ")));
        assert!(matches!(t(f64::NAN, 4, 0.05), Err(Error::Argument(_))));
        assert!(matches!(t(2.0, 0, 0.05), Err(Error::Argument(m)) if m.contains("one level")));
        assert!(matches!(t(2.0, 4, -0.1), Err(Error::Argument(_))));
        assert!(tree_speedup(&LLAMA31_8B, &H100, 0, 1024, 2.0, 1, 1, 0.05, 1e-3).is_err());
    }

    #[test]
    fn the_best_speedup_falls_as_the_batch_grows() {
        let s = |b| {
            best_round(&LLAMA31_8B, &LLAMA32_1B, &H100, b, 512, 0.8, 1e-3, 0.3e-3)
                .unwrap()
                .speedup()
        };
        let batches = [1, 16, 64, 128, 256, 512, 900];
        for w in batches.windows(2) {
            assert!(s(w[1]) < s(w[0]), "{w:?}");
        }
    }
}
