//! A speculative round on a roofline: tokens per round, the best (or a fixed) draft
//! length γ, and what a tree of drafts buys.
//!
//! A round drafts γ tokens with the small model (γ draft steps) and verifies them with
//! one forward pass of the target over γ + 1 tokens. With per-token acceptance rate α the
//! round yields [`expected_tokens`]`(α, γ)` tokens on average (Leviathan et al. 2023,
//! eq. 1), so the speedup over plain decoding is
//!
//! `speedup = expected_tokens(α, γ) · t_base / (γ · t_draft + t_verify)`.
//!
//! Leviathan's analysis assumes verifying γ + 1 tokens costs the same as decoding one,
//! and that the draft costs a known fraction c of a target step. Here both come from the
//! roofline, through a [`Pricing`] (the seed's: [`crate::target_pass_time`],
//! [`crate::draft_step_time`]): verification is free only while the batch's
//! `batch · (γ + 1)` tokens stay under the critical batch.

use crate::scenario::check_alpha;
use crate::{Draft, Error, Pricing, Scenario, TreeShape};

/// The longest draft [`best_round`] tries, and the longest fixed draft a lecture takes.
/// The seed searched 1 … 16; with a cheap, accurate draft (`c` near 0, α near 1) the best
/// γ lies beyond 16, and a search stopped there was beaten by a fixed γ of 20. Where the
/// speedup still grows at 64, the best found is the limit ([`BestRound::at_limit`]).
pub const MAX_GAMMA: u32 = 64;

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

/// The figures of one speculative round with draft length γ (times in seconds).
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
    /// `γ · t_draft + t_verify + round extra` ([`Pricing::round_extra_time`]), seconds.
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

    /// Whether the best γ is the longest tried ([`MAX_GAMMA`]): a longer draft might do
    /// better still (the speedup was still growing), so a lecture says so.
    pub fn at_limit(&self) -> bool {
        self.gamma() == MAX_GAMMA
    }
}

/// The round a lecture prints: the best γ ([`best_round`]), or a fixed one as engines run
/// it ([`round_plan`]), with its figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Round {
    /// Whether to speculate: some γ beats plain decoding, or the γ is fixed (a fixed γ
    /// speculates whatever its speedup, and a speedup below 1 is a slow-down).
    pub speculate: bool,
    /// The γ to use: the best or fixed one, or 0 (plain decoding).
    pub gamma: u32,
    /// The speedup obtained: the plan's, or exactly 1 for plain decoding.
    pub speedup: f64,
    /// The plan of that γ (when not speculating, the best one tried, speedup ≤ 1).
    pub plan: RoundPlan,
    /// Whether the best γ is the longest searched ([`BestRound::at_limit`]): a longer draft
    /// might pay more. Never for a fixed γ.
    pub at_limit: bool,
}

/// The best round for `s` priced by `p`, or the round of the fixed γ `fixed` when one is
/// given.
///
/// Errors: as [`best_round`] and [`round_plan`].
///
/// ```
/// use decode_lab::{round, Scenario, Seed};
/// assert_eq!(round(&Scenario::LECTURE, &Seed, None)?.gamma, 4);
/// let slow = Scenario { batch: 512, ctx: 512, ..Scenario::LECTURE };
/// let r = round(&slow, &Seed, Some(8))?;
/// assert!(r.speculate && r.speedup < 1.0);
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn round(s: &Scenario, p: &dyn Pricing, fixed: Option<u32>) -> Result<Round, Error> {
    Ok(match fixed {
        Some(gamma) => {
            let plan = round_plan(s, p, gamma)?;
            Round {
                speculate: true,
                gamma,
                speedup: plan.speedup,
                plan,
                at_limit: false,
            }
        }
        None => {
            let best = best_round(s, p)?;
            let (BestRound::Speculate(plan) | BestRound::NoSpeculation(plan)) = best;
            Round {
                speculate: best.plan().is_some(),
                gamma: best.gamma(),
                speedup: best.speedup(),
                plan,
                at_limit: best.at_limit(),
            }
        }
    })
}

/// The figures of a round with a fixed draft length γ ≥ 1 — what an engine configured
/// with `num_speculative_tokens = γ` gets, **including a speedup below 1** when the round
/// costs more than it yields.
///
/// `t_round = γ · t_draft + t_verify(γ + 1) + round extra` ([`Pricing::round_extra_time`]),
/// `speedup = expected_tokens(α, γ) · t_base / t_round`, each pass priced by `p`.
///
/// Errors: γ = 0; whatever [`Scenario::validate`] and `p`'s checks and passes reject.
///
/// ```
/// use decode_lab::{round_plan, Scenario, Seed};
/// // γ = 8 at batch 512: verifying 9 tokens per sequence (4,608 tokens) is compute-bound.
/// let s = Scenario { batch: 512, ctx: 512, ..Scenario::LECTURE };
/// assert!(round_plan(&s, &Seed, 8)?.speedup < 1.0);
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn round_plan(s: &Scenario, p: &dyn Pricing, gamma: u32) -> Result<RoundPlan, Error> {
    if gamma == 0 || gamma > MAX_GAMMA {
        return Err(Error::Argument(format!(
            "a speculative round drafts from 1 to {MAX_GAMMA} tokens, got γ = {gamma}"
        )));
    }
    s.validate()?;
    p.check(s)?;
    let t_base = p.target_pass_time(s, 1)?;
    let t_draft = p.draft_step_time(s)?;
    let t_verify = p.target_pass_time(s, u64::from(gamma) + 1)?;
    plan_of(
        s.alpha,
        gamma,
        t_base,
        t_draft,
        t_verify,
        p.round_extra_time(s)?,
    )
}

/// The time of one speculative round, seconds: `γ · t_draft + t_verify + extra` — γ draft
/// steps, one verification of the γ + 1 tokens, and what a round costs beyond its passes.
///
/// Errors: a time that is negative or not finite, a verification that takes no time, a
/// round too long to be finite.
///
/// ```
/// assert_eq!(decode_lab::round_time(4, 1e-3, 7e-3, 0.5e-3)?, 11.5e-3);
/// assert!(decode_lab::round_time(4, f64::NAN, 7e-3, 0.0).is_err());
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn round_time(gamma: u32, t_draft: f64, t_verify: f64, extra: f64) -> Result<f64, Error> {
    check_time("a draft step", t_draft)?;
    check_time("what a round costs beyond its passes", extra)?;
    check_time("a verification", t_verify)?;
    if t_verify == 0.0 {
        return Err(Error::Argument(
            "a verification must take some time, got 0 s".into(),
        ));
    }
    let t = f64::from(gamma) * t_draft + t_verify + extra;
    if !t.is_finite() {
        return Err(Error::Argument(format!(
            "a round of {gamma} drafts of {t_draft} s and a {t_verify} s verification takes \
             longer than any finite time"
        )));
    }
    Ok(t)
}

/// Checks that `t`, the time of `what`, is a finite number of seconds, at least 0.
fn check_time(what: &str, t: f64) -> Result<(), Error> {
    if t.is_finite() && t >= 0.0 {
        Ok(())
    } else {
        Err(Error::Argument(format!(
            "the time of {what} must be a finite number of seconds, at least 0, got {t}"
        )))
    }
}

/// The speedup of speculative decoding over plain decoding (Leviathan et al.'s
/// accounting): a round of `t_round` seconds yields `tokens` tokens, plain decoding one
/// token per `t_base`: `tokens · t_base / t_round`.
///
/// Errors: tokens that are negative or not finite, a time that is not a positive finite
/// number of seconds.
///
/// ```
/// // 3.36 tokens a round of 12.4 ms against one token per 6.65 ms: 1.80×.
/// let s = decode_lab::round_speedup(3.36, 6.65e-3, 12.4e-3)?;
/// assert!((s - 1.802).abs() < 1e-3);
/// assert!(decode_lab::round_speedup(3.36, 6.65e-3, 0.0).is_err());
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn round_speedup(tokens: f64, t_base: f64, t_round: f64) -> Result<f64, Error> {
    if !(tokens.is_finite() && tokens >= 0.0) {
        return Err(Error::Argument(format!(
            "tokens per round must be a finite number, at least 0, got {tokens}"
        )));
    }
    for (what, t) in [("a plain step", t_base), ("a round", t_round)] {
        if !(t.is_finite() && t > 0.0) {
            return Err(Error::Argument(format!(
                "the time of {what} must be a positive finite number of seconds, got {t}"
            )));
        }
    }
    let speedup = tokens * t_base / t_round;
    if !speedup.is_finite() {
        return Err(Error::Argument(format!(
            "a speedup of {tokens} tokens in {t_round} s against {t_base} s a token is not finite"
        )));
    }
    Ok(speedup)
}

/// The figures of a round of `gamma` drafts at acceptance rate `alpha` from its times,
/// seconds: a plain target step `t_base`, a draft step `t_draft`, the verification of
/// γ + 1 tokens `t_verify`, and what the round costs beyond its passes `extra`.
///
/// Errors: α outside [0, 1]; a time [`round_time`] or [`round_speedup`] refuses.
///
/// ```
/// // γ = 4 at α = 0.8: 3.3616 tokens from a round of 4 · 1 + 7 ms against 6.65 ms a token.
/// let p = decode_lab::plan_of(0.8, 4, 6.65e-3, 1e-3, 7e-3, 0.0)?;
/// assert!((p.speedup - 3.3616 * 6.65 / 11.0).abs() < 1e-12);
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn plan_of(
    alpha: f64,
    gamma: u32,
    t_base: f64,
    t_draft: f64,
    t_verify: f64,
    extra: f64,
) -> Result<RoundPlan, Error> {
    let t_round = round_time(gamma, t_draft, t_verify, extra)?;
    let tokens = expected_tokens(alpha, gamma)?;
    let speedup = round_speedup(tokens, t_base, t_round)?;
    let verify_ratio = t_verify / t_base;
    let c = t_draft / t_base;
    if !(verify_ratio.is_finite() && c.is_finite()) {
        return Err(Error::Argument(format!(
            "a round of {t_draft} s drafts and a {t_verify} s verification against a {t_base} s \
             step has no finite ratio"
        )));
    }
    Ok(RoundPlan {
        gamma,
        expected_tokens: tokens,
        speedup,
        verify_ratio,
        c,
        t_base,
        t_draft,
        t_verify,
        t_round,
    })
}

/// Finds the draft length γ in 1..=[`MAX_GAMMA`] with the highest speedup for scenario
/// `s` priced by `p` ([`best_of`] the plans of every γ). For a fixed γ, see [`round_plan`].
///
/// Errors: whatever [`Scenario::validate`] rejects (α outside [0, 1], a zero size, a
/// draft of another tokenizer, …) and `p`'s checks; a batch the target cannot fit at
/// `ctx`.
///
/// ```
/// use decode_lab::{best_round, BestRound, Scenario, Seed};
/// let best = best_round(&Scenario::LECTURE, &Seed)?;
/// let BestRound::Speculate(plan) = best else { panic!("speculation pays at batch 1") };
/// assert_eq!(plan.gamma, 4);
/// assert!((plan.speedup - 1.929).abs() < 1e-3);
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn best_round(s: &Scenario, p: &dyn Pricing) -> Result<BestRound, Error> {
    s.validate()?;
    p.check(s)?;
    let t_base = p.target_pass_time(s, 1)?;
    let t_draft = p.draft_step_time(s)?;
    let extra = p.round_extra_time(s)?;
    let plan = |gamma: u32| {
        let t_verify = p.target_pass_time(s, u64::from(gamma) + 1)?;
        plan_of(s.alpha, gamma, t_base, t_draft, t_verify, extra)
    };
    best_of((1..=MAX_GAMMA).map(plan))
}

/// The round with the highest speedup among `plans` (ties to the earlier: list γ
/// increasing, and ties go to the smaller γ): [`BestRound::Speculate`] when it beats plain
/// decoding, else [`BestRound::NoSpeculation`] with the best one tried.
///
/// Errors: the first plan that is an error; no plan at all.
///
/// ```
/// use decode_lab::{best_of, plan_of, BestRound};
/// let plans = (1..=3).map(|g| plan_of(0.5, g, 1.0, 0.6, 1.0, 0.0));
/// // γ = 1: 1.5 / 1.6 < 1 — no γ pays when a draft step costs 60% of a target step.
/// assert!(matches!(best_of(plans)?, BestRound::NoSpeculation(p) if p.gamma == 1));
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn best_of(
    plans: impl IntoIterator<Item = Result<RoundPlan, Error>>,
) -> Result<BestRound, Error> {
    let mut best: Option<RoundPlan> = None;
    for plan in plans {
        let plan = plan?;
        if best.is_none_or(|b| plan.speedup > b.speedup) {
            best = Some(plan);
        }
    }
    let best = best.ok_or_else(|| Error::Argument("no draft length was tried".into()))?;
    Ok(if best.speedup > 1.0 {
        BestRound::Speculate(best)
    } else {
        BestRound::NoSpeculation(best)
    })
}

/// Speedup of tree (or chain) verification over plain decoding, lecture 6 demo 3's
/// accounting, each pass priced by `p`: a round drafts `depth` levels, each costing one
/// draft step of `s.draft`
/// (demo 3 uses [`Draft::FixedCost`]`(0.05)`, an EAGLE-style one-layer draft), then
/// verifies the whole tree in one target pass over `nodes + 1` tokens; it yields `tau`
/// tokens on average (an acceptance length measured on that tree, or published for it).
///
/// `t_round = depth · t_draft + t_verify(nodes + 1) + round extra` ([`tree_round_time`]),
/// `speedup = tau · t_base / t_round`. Only the tree's depth and size matter here, so a
/// tree known only by its size ([`TreeShape::sized`]) will do.
///
/// Errors: `tau` below 1, above `depth + 1` (a round cannot accept more levels than it
/// drafted) or not finite; and whatever [`Scenario::validate`] and `p` reject.
///
/// ```
/// use decode_lab::{tree_speedup, Draft, Scenario, Seed, TreeShape};
/// // A chain of 4 that yields 3 tokens a round at batch 1: ≈ 3 / 1.2 = 2.5×.
/// let s = Scenario { draft: Draft::FixedCost(0.05), ..Scenario::LECTURE };
/// let x = tree_speedup(&s, &Seed, &TreeShape::chain(4)?, 3.0)?;
/// assert!((x - 2.5).abs() < 0.01);
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn tree_speedup(
    s: &Scenario,
    p: &dyn Pricing,
    tree: &TreeShape,
    tau: f64,
) -> Result<f64, Error> {
    let depth = tree.depth();
    if !(tau.is_finite() && tau >= 1.0 && tau <= depth as f64 + 1.0) {
        return Err(Error::Argument(format!(
            "τ (tokens per round) must be between 1 and depth + 1 = {}, got {tau}",
            depth + 1
        )));
    }
    let (t_base, t_round) = tree_round_time(s, p, tree)?;
    round_speedup(tau, t_base, t_round)
}

/// One plain target step and one round of tree (or chain) verification in scenario `s`
/// priced by `p`, `(t_base, t_round)` in seconds: `t_round = depth · t_draft +
/// t_verify(nodes + 1) +` [`Pricing::round_extra_time`] (the accounting of
/// [`tree_speedup`]).
///
/// Errors: whatever [`Scenario::validate`] and `p` reject.
pub fn tree_round_time(
    s: &Scenario,
    p: &dyn Pricing,
    tree: &TreeShape,
) -> Result<(f64, f64), Error> {
    let depth = tree.depth();
    let nodes = tree.nodes();
    s.validate()?;
    p.check(s)?;
    let t_base = p.target_pass_time(s, 1)?;
    let t_verify = p.target_pass_time(s, nodes.saturating_add(1))?;
    let drafting = match s.draft {
        // Written as demo 3 always computed it: depth · c · t_base.
        Draft::FixedCost(c) => depth as f64 * c * t_base,
        _ => depth as f64 * p.draft_step_time(s)?,
    };
    Ok((t_base, drafting + t_verify + p.round_extra_time(s)?))
}
