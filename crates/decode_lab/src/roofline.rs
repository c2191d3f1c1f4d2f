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
use llm_math::{
    Deployment, ForwardShape, ModelConfig, forward_cost, forward_cost_with, forward_time,
    forward_time_with, max_batch_with,
};

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

/// What proposes the γ tokens of a round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Draft {
    /// A separate, smaller model of the target's tokenizer family (classic draft–target
    /// speculation), served like the target (same cards, tensor parallelism and dtypes).
    /// One draft step is a roofline pass of this model over one token per sequence.
    Model(ModelConfig),
    /// A draft head on the target's own features, EAGLE-style: one decoder layer of the
    /// target's shape plus the target's LM head (`vocab × d_model`), read once per draft
    /// step, with its one layer of KV cache. (EAGLE's small fusion layer, 2·d_model² weights,
    /// about 4% of the head's bytes for an 8B target, is left out.)
    Head,
    /// A draft whose step costs a fixed fraction `c` of a plain target step, whatever the
    /// batch: n-gram / prompt-lookup drafting (c ≈ 0), multi-token-prediction heads, or a
    /// measured c. `t_draft = c · t_base`; the draft overhead is not added on top.
    FixedCost(f64),
    /// Self-speculation (MagicDec, TriForce): the target drafts for itself while reading
    /// only the last `kv_window` tokens of each sequence's cache (StreamingLLM-style), so a
    /// draft step reads all the weights but only `min(ctx, kv_window)` tokens of KV. It uses
    /// the target's overhead: it runs the target's kernels.
    SelfSpec {
        /// Tokens of KV the draft reads per sequence (StreamingLLM's sink + window).
        kv_window: u64,
    },
}

impl Draft {
    /// How the lecture names the draft: the model's name, "EAGLE 式草稿头", …
    pub fn label(&self) -> String {
        match self {
            Draft::Model(m) => m.name.to_string(),
            Draft::Head => "一层草稿头（EAGLE 式）".to_string(),
            Draft::FixedCost(c) => format!("固定成本 c = {c}"),
            Draft::SelfSpec { kv_window } => format!("自投机（KV 窗口 {kv_window}）"),
        }
    }
}

/// One speculative-decoding setup, every knob named: what a lecture demo or a command
/// line asks the roofline about.
///
/// [`Scenario::lecture`] is lecture 6's seed (one H100, Llama-3.1-8B + Llama-3.2-1B,
/// batch 1, context 1024, α = 0.8, bf16, 60% / 80% efficiencies, 1 ms and 0.3 ms
/// overheads, verification costed by the roofline alone); with it every function here
/// reproduces the seed's figures bit for bit.
///
/// Command-line mapping (lecture 6): `--hw` → `hw`, `--target` → `target`, `--draft` /
/// `--draft-head` / `--draft-cost C` / `--draft-kv-window N` → `draft`, `--batch` → `batch`,
/// `--ctx` → `ctx`, `--alpha` → `alpha`, `--tp` → `deployment.tp`, `--weights` →
/// `deployment.weights`, `--kv` → `deployment.kv`, `--eff-compute` / `--eff-bandwidth` →
/// `deployment.compute_efficiency` / `bandwidth_efficiency`, `--overhead-target` /
/// `--overhead-draft` → `overhead_target` / `overhead_draft`, `--calibration NAME` →
/// [`crate::validation::Calibration::apply`], `--gamma N` → [`round_plan`] instead of
/// [`best_round`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scenario {
    /// The card (one of `deployment.tp` identical ones).
    pub hw: Accelerator,
    /// The model being served.
    pub target: ModelConfig,
    /// What drafts for it.
    pub draft: Draft,
    /// Sequences decoded together.
    pub batch: u64,
    /// Tokens already in each sequence's KV cache.
    pub ctx: u64,
    /// Per-token acceptance rate α, in [0, 1].
    pub alpha: f64,
    /// Tensor parallelism, dtypes and efficiencies; the draft model or head is served the
    /// same way as the target.
    pub deployment: Deployment,
    /// Fixed cost of one target pass (launches, sampling, scheduling), seconds.
    pub overhead_target: f64,
    /// Fixed cost of one draft step, seconds (not used by [`Draft::FixedCost`] and
    /// [`Draft::SelfSpec`]).
    pub overhead_draft: f64,
    /// Extra cost of each verified token beyond the first, as a fraction of a plain target
    /// step: `t_verify(n) = roofline(n) + overhead + (n − 1) · verify_cost_per_token · t_base`.
    /// 0 in the lecture (the roofline alone); engines measure more (tree masks, rejection
    /// sampling, bookkeeping), which a calibration profile fits.
    pub verify_cost_per_token: f64,
}

impl Scenario {
    /// Lecture 6's seed: one H100, Llama-3.1-8B + Llama-3.2-1B, batch 1, context 1024,
    /// α = 0.8, the default [`Deployment`], 1 ms / 0.3 ms overheads, no extra verify cost.
    pub fn lecture() -> Scenario {
        Scenario {
            hw: hw_specs::H100,
            target: llm_math::LLAMA31_8B,
            draft: Draft::Model(LLAMA32_1B),
            batch: 1,
            ctx: 1024,
            alpha: 0.8,
            deployment: Deployment::default(),
            overhead_target: 1e-3,
            overhead_draft: 0.3e-3,
            verify_cost_per_token: 0.0,
        }
    }

    /// The lecture's assumptions for another card, target and draft.
    pub fn new(hw: Accelerator, target: ModelConfig, draft: Draft) -> Scenario {
        Scenario {
            hw,
            target,
            draft,
            ..Scenario::lecture()
        }
    }

    /// Checks that the scenario can exist, beyond what the time functions check:
    /// a draft model shares the target's tokenizer; the context fits the target's
    /// `max_context`; the weights of target and draft fit the `tp` cards together
    /// ([`Scenario::memory`]); α, overheads and knobs are in range.
    ///
    /// The time functions ([`best_round`], …) do not call it: lecture 6's seed computes a
    /// round for any pair, as the original script did; a command line should call it first
    /// and stop on its error.
    ///
    /// ```
    /// use decode_lab::{Draft, Scenario, LLAMA32_1B};
    /// let s = Scenario { target: llm_math::MISTRAL_7B, ..Scenario::lecture() };
    /// let e = s.validate().unwrap_err().to_string();
    /// assert!(e.contains("Llama-3.2-1B cannot draft for Mistral-7B-v0.3"), "{e}");
    /// let big = Scenario { target: LLAMA32_1B, draft: Draft::Model(llm_math::LLAMA31_405B), ..Scenario::lecture() };
    /// let e = big.validate().unwrap_err().to_string();
    /// assert!(e.starts_with("the draft Llama-3.1-405B does not fit"), "{e}");
    /// // The same figures as data, in the lecture's words:
    /// assert!(big.memory()?.to_string().ends_with("放不下"));
    /// # Ok::<(), decode_lab::Error>(())
    /// ```
    pub fn validate(&self) -> Result<(), Error> {
        check_alpha(self.alpha)?;
        check_overhead(self.overhead_target)?;
        check_overhead(self.overhead_draft)?;
        self.deployment.check(&self.target)?;
        if let Draft::Model(m) = &self.draft {
            self.target.check_same_tokenizer(m)?;
            self.deployment.check(m)?;
        }
        check_draft(&self.draft)?;
        if !(self.verify_cost_per_token.is_finite() && self.verify_cost_per_token >= 0.0) {
            return Err(Error::Argument(format!(
                "the verification cost per extra token must be a finite fraction ≥ 0 of a step, got {}",
                self.verify_cost_per_token
            )));
        }
        if self.ctx > self.target.max_context {
            return Err(Error::Argument(format!(
                "context {} is longer than {}'s maximum of {} tokens",
                self.ctx, self.target.name, self.target.max_context
            )));
        }
        let mem = self.memory()?;
        if !mem.weights_fit() {
            return Err(Error::DraftDoesNotFit(mem));
        }
        Ok(())
    }

    /// What the cards must hold for this scenario, as data a lecture can print.
    /// Errors: `ctx` 0, or a knob out of its domain.
    pub fn memory(&self) -> Result<MemoryPlan, Error> {
        let dep = &self.deployment;
        let w = dep.weights.bytes();
        let (draft_weights, draft_kv_per_token) = match &self.draft {
            Draft::Model(m) => (w * m.n_params() as f64, dep.kv_bytes_per_token(m) as f64),
            Draft::Head => (
                w * self.target.params_per_layer() as f64,
                dep.kv_bytes_per_token(&self.target) as f64 / self.target.n_layers as f64,
            ),
            Draft::FixedCost(_) | Draft::SelfSpec { .. } => (0.0, 0.0),
        };
        Ok(MemoryPlan {
            hw: self.hw.name,
            cards: dep.tp,
            target: self.target.name,
            draft: self.draft.label(),
            capacity: dep.tp as f64 * self.hw.memory_bytes,
            target_weights: w * self.target.n_params() as f64,
            draft_weights,
            target_kv_per_seq: self.ctx as f64 * dep.kv_bytes_per_token(&self.target) as f64,
            draft_kv_per_seq: self.ctx as f64 * draft_kv_per_token,
            max_batch: max_batch_with(&self.target, &self.hw, self.ctx, dep)?,
        })
    }
}

/// What a scenario asks of device memory, in bytes over all `cards` (the lecture prints
/// "放不下" when [`MemoryPlan::weights_fit`] is false, as for a target that does not fit).
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryPlan {
    /// Card name.
    pub hw: &'static str,
    /// Cards (tensor-parallel degree).
    pub cards: u64,
    /// Target name.
    pub target: &'static str,
    /// Draft label ([`Draft::label`]).
    pub draft: String,
    /// `cards · memory`, bytes.
    pub capacity: f64,
    /// The target's weights at the deployment's dtype, bytes.
    pub target_weights: f64,
    /// The draft's own weights, bytes (0 for fixed-cost and self-speculation; one layer
    /// for a draft head, which shares the target's LM head).
    pub draft_weights: f64,
    /// One sequence's target KV cache at `ctx`, bytes.
    pub target_kv_per_seq: f64,
    /// One sequence's draft KV cache at `ctx`, bytes.
    pub draft_kv_per_seq: f64,
    /// The target's largest batch at `ctx`, the draft not counted (lecture 6's rule).
    pub max_batch: u64,
}

impl MemoryPlan {
    /// Whether the target's and the draft's weights fit in the cards together.
    pub fn weights_fit(&self) -> bool {
        self.target_weights + self.draft_weights <= self.capacity
    }

    /// The largest batch at `ctx` when the draft's weights and KV are counted too
    /// (0 when the weights alone do not fit).
    pub fn max_batch_with_draft(&self) -> u64 {
        let free = self.capacity - self.target_weights - self.draft_weights;
        let per_seq = self.target_kv_per_seq + self.draft_kv_per_seq;
        if free <= 0.0 || per_seq <= 0.0 {
            return 0;
        }
        (free / per_seq).floor() as u64
    }
}

impl std::fmt::Display for MemoryPlan {
    /// "Llama-3.1-405B（草稿）的 bf16 权重 …：放不下" style line, in the lecture's words.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cards = if self.cards == 1 {
            format!("一块 {}", self.hw)
        } else {
            format!("{} 块 {}", self.cards, self.hw)
        };
        write!(
            f,
            "目标模型 {} 的权重 {:.1} GB 加上草稿 {} 的权重 {:.1} GB，{cards} 只有 {} GB 显存：{}",
            self.target,
            self.target_weights / 1e9,
            self.draft,
            self.draft_weights / 1e9,
            self.capacity / 1e9,
            if self.weights_fit() {
                "放得下"
            } else {
                "放不下"
            }
        )
    }
}

fn check_overhead(o: f64) -> Result<(), Error> {
    if !o.is_finite() || o < 0.0 {
        return Err(Error::Overhead(o));
    }
    Ok(())
}

fn check_draft(d: &Draft) -> Result<(), Error> {
    match *d {
        Draft::FixedCost(c) if !(c.is_finite() && c >= 0.0) => Err(Error::Argument(format!(
            "the draft cost per level must be a finite fraction ≥ 0 of a target step, got {c}"
        ))),
        Draft::SelfSpec { kv_window: 0 } => Err(Error::Argument(
            "a self-speculation KV window must hold at least 1 token".into(),
        )),
        _ => Ok(()),
    }
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
        Ok(forward_time_with(&s.target, &s.hw, shape, &s.deployment)?.time() + s.overhead_target)
    };
    let t = step(n)?;
    if n <= 1 || s.verify_cost_per_token == 0.0 {
        return Ok(t);
    }
    Ok(t + (n - 1) as f64 * s.verify_cost_per_token * step(1)?)
}

/// One draft step in scenario `s`, seconds (see [`Draft`] for each kind's cost). The
/// draft's memory is not checked here ([`Scenario::validate`] does).
///
/// Errors: a zero size, a bad knob, overhead or draft parameter.
pub fn draft_step_time(s: &Scenario) -> Result<f64, Error> {
    check_draft(&s.draft)?;
    let one = |cfg: &ModelConfig, ctx: u64, overhead: f64| -> Result<f64, Error> {
        check_overhead(overhead)?;
        let shape = ForwardShape {
            batch: s.batch,
            ctx,
            n_new: 1,
        };
        Ok(forward_cost_with(cfg, &s.hw, shape, &s.deployment)?.time() + overhead)
    };
    match s.draft {
        Draft::Model(m) => one(&m, s.ctx, s.overhead_draft),
        Draft::Head => {
            let head = ModelConfig {
                n_layers: 1,
                tied_embeddings: false,
                ..s.target
            };
            one(&head, s.ctx, s.overhead_draft)
        }
        Draft::FixedCost(c) => Ok(c * target_pass_time(s, 1)?),
        Draft::SelfSpec { kv_window } => one(&s.target, s.ctx.min(kv_window), s.overhead_target),
    }
}

/// The figures of a round with a fixed draft length γ ≥ 1 — what an engine configured
/// with `num_speculative_tokens = γ` gets, **including a speedup below 1** when the round
/// costs more than it yields.
///
/// `t_round = γ · t_draft + t_verify(γ + 1)`, `speedup = expected_tokens(α, γ) · t_base / t_round`.
///
/// Errors: γ = 0; whatever [`target_pass_time`] and [`draft_step_time`] reject; α outside [0, 1].
///
/// ```
/// use decode_lab::{round_plan, Scenario};
/// // γ = 8 at batch 512: verifying 9 tokens per sequence (4,608 tokens) is compute-bound.
/// let s = Scenario { batch: 512, ctx: 512, ..Scenario::lecture() };
/// assert!(round_plan(&s, 8)?.speedup < 1.0);
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn round_plan(s: &Scenario, gamma: u32) -> Result<RoundPlan, Error> {
    if gamma == 0 {
        return Err(Error::Argument(
            "a speculative round drafts at least 1 token (γ ≥ 1)".into(),
        ));
    }
    check_alpha(s.alpha)?;
    let t_base = target_pass_time(s, 1)?;
    let t_draft = draft_step_time(s)?;
    plan_from(s, gamma, t_base, t_draft)
}

fn plan_from(s: &Scenario, gamma: u32, t_base: f64, t_draft: f64) -> Result<RoundPlan, Error> {
    let t_verify = target_pass_time(s, u64::from(gamma) + 1)?;
    let t_round = f64::from(gamma) * t_draft + t_verify;
    let tokens = expected_tokens(s.alpha, gamma)?;
    Ok(RoundPlan {
        gamma,
        expected_tokens: tokens,
        speedup: tokens * t_base / t_round,
        verify_ratio: t_verify / t_base,
        c: t_draft / t_base,
        t_base,
        t_draft,
        t_verify,
        t_round,
    })
}

/// Finds the draft length γ in 1..=[`MAX_GAMMA`] with the highest speedup for scenario
/// `s`; ties go to the smaller γ. Returns [`BestRound::NoSpeculation`] when no γ beats
/// plain decoding. For a fixed γ, see [`round_plan`].
///
/// Errors: α outside [0, 1]; a zero `batch` or `ctx`; a batch the target cannot fit at
/// `ctx`; an invalid overhead, knob or draft parameter.
///
/// ```
/// use decode_lab::{best_round, BestRound, Scenario};
/// let best = best_round(&Scenario::lecture())?;
/// let BestRound::Speculate(plan) = best else { panic!("speculation pays at batch 1") };
/// assert_eq!(plan.gamma, 4);
/// assert!((plan.speedup - 1.929).abs() < 1e-3);
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn best_round(s: &Scenario) -> Result<BestRound, Error> {
    check_alpha(s.alpha)?;
    let t_base = target_pass_time(s, 1)?;
    let t_draft = draft_step_time(s)?;
    let mut best: Option<RoundPlan> = None;
    for gamma in 1..=MAX_GAMMA {
        let plan = plan_from(s, gamma, t_base, t_draft)?;
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

/// One round of tree (or chain) verification, as lecture 6 demo 3 measures it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TreeRound {
    /// Tokens the round yields on average (τ ≥ 1: the target always adds one).
    pub tau: f64,
    /// Draft levels (one draft step each).
    pub depth: u64,
    /// Draft tokens in the tree, all verified in one target pass over `nodes + 1` tokens.
    pub nodes: u64,
}

/// Speedup of tree (or chain) verification over plain decoding, lecture 6 demo 3's
/// accounting: a round drafts `depth` levels, each costing one draft step of `s.draft`
/// (demo 3 uses [`Draft::FixedCost`]`(0.05)`, an EAGLE-style one-layer draft), then
/// verifies the whole tree in one target pass over `nodes + 1` tokens; it yields `tau`
/// tokens on average.
///
/// `t_round = depth · t_draft + t_verify(nodes + 1)`, `speedup = tau · t_base / t_round`.
///
/// Errors: `tau` below 1 or not finite, `depth` 0, a bad draft parameter, and whatever
/// [`target_pass_time`] rejects.
///
/// ```
/// use decode_lab::{tree_speedup, Draft, Scenario, TreeRound};
/// // A chain of 4 that yields 3 tokens a round at batch 1: ≈ 3 / 1.2 = 2.5×.
/// let s = Scenario { draft: Draft::FixedCost(0.05), ..Scenario::lecture() };
/// let x = tree_speedup(&s, &TreeRound { tau: 3.0, depth: 4, nodes: 4 })?;
/// assert!((x - 2.5).abs() < 0.01);
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn tree_speedup(s: &Scenario, tree: &TreeRound) -> Result<f64, Error> {
    let TreeRound { tau, depth, nodes } = *tree;
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
    check_draft(&s.draft)?;
    let t_base = target_pass_time(s, 1)?;
    let t_verify = target_pass_time(s, nodes.saturating_add(1))?;
    let drafting = match s.draft {
        // Written as demo 3 always computed it: depth · c · t_base.
        Draft::FixedCost(c) => depth as f64 * c * t_base,
        _ => depth as f64 * draft_step_time(s)?,
    };
    Ok(tau * t_base / (drafting + t_verify))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hw_specs::H100;
    use llm_math::{KvDtype, LLAMA31_8B, WeightDtype};

    const BW: f64 = 3.35e12 * 0.8;
    /// Llama-3.1-8B's streamed parameters, and its KV bytes per token in bf16.
    const P8B: f64 = 7_504_924_672.0;
    const KV8B: f64 = 131_072.0;

    fn at(batch: u64, ctx: u64, alpha: f64) -> Scenario {
        Scenario {
            batch,
            ctx,
            alpha,
            ..Scenario::lecture()
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
        let best = best_round(&Scenario::lecture()).unwrap();
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
    fn the_scenario_reproduces_the_seed_functions_bit_for_bit() {
        // The seed's round, written with the plain functions, against the scenario's.
        for &(b, ctx, alpha) in &[
            (1, 1024, 0.8),
            (64, 512, 0.6),
            (64, 4096, 0.9),
            (512, 512, 0.8),
        ] {
            let t_base = verify_time(&LLAMA31_8B, &H100, b, ctx, 1, 1e-3).unwrap();
            let t_draft = draft_time(&LLAMA32_1B, &H100, b, ctx, 0.3e-3).unwrap();
            let s = at(b, ctx, alpha);
            for gamma in 1..=MAX_GAMMA {
                let t_verify =
                    verify_time(&LLAMA31_8B, &H100, b, ctx, u64::from(gamma) + 1, 1e-3).unwrap();
                let seed = expected_tokens(alpha, gamma).unwrap() * t_base
                    / (f64::from(gamma) * t_draft + t_verify);
                let p = round_plan(&s, gamma).unwrap();
                assert_eq!(p.speedup.to_bits(), seed.to_bits(), "{b} {ctx} {gamma}");
            }
        }
    }

    #[test]
    fn with_alpha_zero_no_draft_length_pays() {
        let best = best_round(&at(1, 1024, 0.0)).unwrap();
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
        let p = round_plan(&s, 8).unwrap();
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
        let best = best_round(&s).unwrap();
        assert!(best.gamma() < 8);
        assert!(round_plan(&s, 0).is_err());
    }

    #[test]
    fn tp2_splits_the_70b_and_pays_for_the_all_reduces() {
        let one = Scenario {
            target: llm_math::LLAMA33_70B,
            hw: hw_specs::H200,
            ..Scenario::lecture()
        };
        let two = Scenario {
            deployment: Deployment {
                tp: 2,
                ..Deployment::default()
            },
            ..one
        };
        // One H200: 141.1 GB of weights fill 141 GB. Two: per card 70.55 GB of weights.
        assert!(target_pass_time(&one, 1).is_err());
        let t = target_pass_time(&two, 1).unwrap();
        let p = llm_math::LLAMA33_70B.streamed_params() as f64;
        let kv = 327_680.0; // 2·80·8·128·2
        let bytes = p + 1025.0 * kv / 2.0;
        let comm = 160.0 * (8192.0 * 2.0) / 450e9; // 2·80 all-reduces, ring over 2
        assert!(
            (t - (bytes / (4.8e12 * 0.8) + comm + 1e-3)).abs() < 1e-12,
            "{t}"
        );
    }

    #[test]
    fn fp8_weights_halve_the_draft_and_target_weight_reads() {
        let bf16 = Scenario::lecture();
        let fp8 = Scenario {
            deployment: Deployment {
                weights: WeightDtype::Fp8,
                kv: KvDtype::Fp8,
                ..Deployment::default()
            },
            ..bf16
        };
        // Target: (P + 1025 · 65,536) B; draft: (1,235,814,400 + 1025 · 16,384) B.
        let t = target_pass_time(&fp8, 1).unwrap();
        assert!((t - ((P8B + 1025.0 * 65_536.0) / BW + 1e-3)).abs() < 1e-15);
        let d = draft_step_time(&fp8).unwrap();
        assert!((d - ((1_235_814_400.0 + 1025.0 * 16_384.0) / BW + 0.3e-3)).abs() < 1e-15);
    }

    #[test]
    fn draft_kinds_cost_what_they_read() {
        let s = Scenario::lecture();
        let t_base = target_pass_time(&s, 1).unwrap();
        // A fixed c: exactly c · t_base.
        let c = Scenario {
            draft: Draft::FixedCost(0.25),
            ..s
        };
        assert_eq!(draft_step_time(&c).unwrap(), 0.25 * t_base);
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
    fn the_verification_cost_per_token_adds_a_fraction_of_a_step_per_extra_token() {
        let s = Scenario {
            verify_cost_per_token: 0.05,
            ..Scenario::lecture()
        };
        let base = target_pass_time(&Scenario::lecture(), 1).unwrap();
        let five = target_pass_time(&Scenario::lecture(), 5).unwrap();
        assert_eq!(target_pass_time(&s, 1).unwrap(), base);
        // 4 extra tokens · 5% of a step = 20% of a step on top.
        assert!((target_pass_time(&s, 5).unwrap() - (five + 0.2 * base)).abs() < 1e-15);
    }

    #[test]
    fn a_vocabulary_mismatch_is_an_error_naming_both_tokenizers() {
        for target in [llm_math::MISTRAL_7B, llm_math::QWEN25_7B] {
            let s = Scenario {
                target,
                ..Scenario::lecture()
            };
            let e = s.validate().unwrap_err();
            assert!(
                matches!(e, Error::Math(llm_math::Error::TokenizerMismatch { .. })),
                "{e:?}"
            );
            let msg = e.to_string();
            assert!(
                msg.contains("Llama-3.2-1B cannot draft for") && msg.contains("tokenizer"),
                "{msg}"
            );
        }
        let qwen = Scenario {
            target: llm_math::QWEN3_32B,
            draft: Draft::Model(llm_math::QWEN3_0_6B),
            ..Scenario::lecture()
        };
        assert_eq!(qwen.validate(), Ok(()));
        assert!(Scenario::lecture().validate().is_ok());
    }

    #[test]
    fn a_draft_that_does_not_fit_is_reported_as_data_and_as_an_error() {
        // A 405B draft (811.7 GB of bf16 weights) for a 1B target on one 80 GB card.
        let s = Scenario {
            target: LLAMA32_1B,
            draft: Draft::Model(llm_math::LLAMA31_405B),
            ..Scenario::lecture()
        };
        let m = s.memory().unwrap();
        assert!(!m.weights_fit());
        assert_eq!(m.draft_weights, 2.0 * 405_853_388_800.0);
        assert_eq!(m.max_batch_with_draft(), 0);
        assert!(m.to_string().ends_with("放不下"), "{m}");
        assert!(matches!(s.validate(), Err(Error::DraftDoesNotFit(_))));
        // Eight cards of TP hold it (811.7 + 2.5 GB ≤ 640 GB? no) — sixteen do.
        let tp16 = Scenario {
            deployment: Deployment {
                tp: 16,
                ..Deployment::default()
            },
            ..s
        };
        assert!(tp16.memory().unwrap().weights_fit());
        // The lecture's 1B draft fits next to the 8B and costs it a little batch.
        let m = Scenario::lecture().memory().unwrap();
        assert!(m.weights_fit());
        assert!(m.max_batch_with_draft() < m.max_batch);
    }

    #[test]
    fn a_context_past_the_model_maximum_is_an_error_naming_it() {
        let s = Scenario {
            ctx: 200_000,
            ..Scenario::lecture()
        };
        let e = s.validate().unwrap_err().to_string();
        assert!(e.contains("131072"), "{e}");
    }

    #[test]
    fn alpha_outside_the_unit_interval_is_an_error() {
        for a in [-0.1, 1.0001, f64::NAN, f64::INFINITY] {
            assert!(matches!(expected_tokens(a, 3), Err(Error::Alpha(_))), "{a}");
            assert!(
                matches!(best_round(&at(1, 1024, a)), Err(Error::Alpha(_))),
                "{a}"
            );
            assert!(
                matches!(round_plan(&at(1, 1024, a), 2), Err(Error::Alpha(_))),
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
        assert!(matches!(
            v(15, 32768, 1),
            Err(Error::Math(llm_math::Error::DoesNotFit { .. }))
        ));
        assert!(matches!(
            best_round(&at(128, 4096, 0.8)),
            Err(Error::Math(llm_math::Error::DoesNotFit {
                max_batch: 119,
                ..
            }))
        ));
        assert!(best_round(&at(0, 4096, 0.8)).is_err());
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
                ..Scenario::lecture()
            };
            assert!(matches!(best_round(&s), Err(Error::Overhead(_))));
            let s = Scenario {
                overhead_target: o,
                ..Scenario::lecture()
            };
            assert!(matches!(best_round(&s), Err(Error::Overhead(_))));
        }
    }

    #[test]
    fn speedup_never_exceeds_expected_tokens_and_verify_never_beats_a_step() {
        for batch in [1, 8, 64, 300, 470] {
            for ctx in [128, 512, 1024] {
                for alpha in [0.0, 0.3, 0.6, 0.8, 0.95, 1.0] {
                    let best = best_round(&at(batch, ctx, alpha)).unwrap();
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
        let s = Scenario {
            target: LLAMA32_1B,
            draft: Draft::Model(llm_math::LLAMA32_3B),
            batch: 64,
            ctx: 32768,
            ..Scenario::lecture()
        };
        assert!(best_round(&s).is_ok());
        assert!(matches!(
            draft_time(&LLAMA32_1B, &H100, 1, 1024, -1.0),
            Err(Error::Overhead(_))
        ));
    }

    #[test]
    fn tree_speedup_charges_each_level_and_the_verified_nodes() {
        // Batch 32, ctx 1024, 340 nodes: 32·341 = 10,912 tokens, far past the knee.
        let s = Scenario {
            draft: Draft::FixedCost(0.05),
            ..at(32, 1024, 0.8)
        };
        let x = tree_speedup(
            &s,
            &TreeRound {
                tau: 4.0,
                depth: 4,
                nodes: 340,
            },
        )
        .unwrap();
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
            ..Scenario::lecture()
        };
        let chain = tree_speedup(
            &free,
            &TreeRound {
                tau: 2.0,
                depth: 2,
                nodes: 2,
            },
        )
        .unwrap();
        let t1 = (2.0 * P8B + 1025.0 * KV8B) / BW + 1e-3;
        let t3 = (2.0 * P8B + 1025.0 * KV8B + 2.0 * KV8B) / BW + 1e-3;
        assert!((chain - 2.0 * t1 / t3).abs() < 1e-12);
        // With a draft model, each level costs one of its steps: 1.234782 ms for the 1B.
        let model = tree_speedup(
            &Scenario::lecture(),
            &TreeRound {
                tau: 2.0,
                depth: 2,
                nodes: 2,
            },
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
            ..Scenario::lecture()
        };
        let t = |tau, depth, s: &Scenario| {
            tree_speedup(
                s,
                &TreeRound {
                    tau,
                    depth,
                    nodes: 4,
                },
            )
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
        let s = |b| best_round(&at(b, 512, 0.8)).unwrap().speedup();
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
            Draft::Model(llm_math::QWEN3_0_6B),
            Draft::Model(llm_math::LLAMA31_405B),
            Draft::Head,
            Draft::FixedCost(0.0),
            Draft::FixedCost(0.3),
            Draft::SelfSpec { kv_window: 1 },
            Draft::SelfSpec { kv_window: 512 },
        ];
        let (mut ok, mut err) = (0, 0);
        for hw in hw_specs::ACCELERATORS {
            for target in llm_math::MODELS {
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
                                            ..Deployment::default()
                                        },
                                        ..Scenario::lecture()
                                    };
                                    let _ = s.validate();
                                    let m = s.memory();
                                    if let Ok(m) = &m {
                                        assert!(
                                            m.capacity.is_finite() && m.draft_weights.is_finite()
                                        );
                                    }
                                    match best_round(&s) {
                                        Ok(b) => {
                                            let (BestRound::Speculate(p)
                                            | BestRound::NoSpeculation(p)) = b;
                                            for x in [
                                                p.speedup,
                                                p.c,
                                                p.t_round,
                                                p.t_verify,
                                                p.verify_ratio,
                                            ] {
                                                assert!(x.is_finite() && x >= 0.0, "{s:?}: {p:?}");
                                            }
                                            let fixed = round_plan(&s, 8).unwrap();
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
}
