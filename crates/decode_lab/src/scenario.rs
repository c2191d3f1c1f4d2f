//! One speculative-decoding setup, every knob named, and [`Scenario::LECTURE`]: the one
//! default setup of the course, from which every other default derives.

use crate::{Draft, Error, LLAMA32_1B};
use hw_specs::Accelerator;
use llm_math::{Deployment, ModelConfig};

/// One speculative-decoding setup, every knob named: what a lecture demo or a command
/// line asks the roofline about.
///
/// Command-line mapping (lecture 6): `--hw` → `hw`, `--target` → `target`, `--draft` /
/// `--draft-head` / `--draft-cost C` / `--draft-kv-window N` → `draft`, `--batch` → `batch`,
/// `--ctx` → `ctx`, `--alpha` → `alpha`, `--tp` → `deployment.tp`, `--weights` →
/// `deployment.weights`, `--kv` → `deployment.kv`, `--eff-compute` / `--eff-bandwidth` →
/// `deployment.compute_efficiency` / `bandwidth_efficiency`, `--overhead-target` /
/// `--overhead-draft` → `overhead_target` / `overhead_draft`, `--draft-tp` → `draft_tp`,
/// `--gamma N` → [`crate::round_plan`] instead of [`crate::best_round`]. The cost terms
/// engines show (`--calibration`, `--overlap`, …) are not a scenario's: they price its
/// passes (a [`crate::Pricing`] of the `planner` crate).
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
    /// Tensor parallelism of the draft model, or `None` to serve it as the target
    /// (`deployment.tp`): a small draft is often run on fewer cards than its target.
    pub draft_tp: Option<u64>,
}

impl Scenario {
    /// Lecture 6's seed, as the original script states it: one H100, Llama-3.1-8B +
    /// Llama-3.2-1B, batch 1, context 1024, α = 0.8, [`Deployment::LECTURE`] (bf16, 60% /
    /// 80% of peak), 1 ms per target pass and 0.3 ms per draft step, verification costed by
    /// the roofline alone. With it every function of this crate reproduces the seed's
    /// figures; every other default (a lecture's flags, the planner's `seed` profile) is
    /// read from here.
    pub const LECTURE: Scenario = Scenario {
        hw: hw_specs::H100,
        target: llm_math::LLAMA31_8B,
        draft: Draft::Model(LLAMA32_1B),
        batch: 1,
        ctx: 1024,
        alpha: 0.8,
        deployment: Deployment::LECTURE,
        overhead_target: 1e-3,
        overhead_draft: 0.3e-3,
        draft_tp: None,
    };

    /// The lecture's assumptions for another card, target and draft.
    pub fn new(hw: Accelerator, target: ModelConfig, draft: Draft) -> Scenario {
        Scenario {
            hw,
            target,
            draft,
            ..Scenario::LECTURE
        }
    }

    /// Checks that the scenario can exist: sizes ≥ 1; α in [0, 1]; overheads finite and
    /// ≥ 0; the serving knobs ([`Deployment::check`], for the draft model too); a draft
    /// model shares the target's tokenizer; the context fits the target's and the draft
    /// model's `max_context`; the weights of target and draft fit the `tp` cards together
    /// ([`Scenario::memory`]). Every function of this crate that computes a round calls it.
    ///
    /// ```
    /// use decode_lab::{Draft, Scenario, LLAMA32_1B};
    /// let s = Scenario { target: *llm_math::model("Mistral-7B-v0.3").unwrap(), ..Scenario::LECTURE };
    /// let e = s.validate().unwrap_err().to_string();
    /// assert!(e.contains("Llama-3.2-1B cannot draft for Mistral-7B-v0.3"), "{e}");
    /// let big = Scenario { target: LLAMA32_1B, draft: Draft::Model(*llm_math::model("Llama-3.1-405B").unwrap()), ..Scenario::LECTURE };
    /// let e = big.validate().unwrap_err().to_string();
    /// assert!(e.starts_with("the draft Llama-3.1-405B does not fit"), "{e}");
    /// # Ok::<(), decode_lab::Error>(())
    /// ```
    pub fn validate(&self) -> Result<(), Error> {
        self.validate_target()?;
        if let Draft::Model(m) = &self.draft {
            crate::check_tokenizers(&self.target, m)?;
            let on_its_cards = Deployment {
                tp: self.draft_cards(),
                ..self.deployment
            };
            on_its_cards.check(m)?;
            self.check_context(m)?;
        }
        if let Draft::FirstLayers { layers } = self.draft
            && layers >= self.target.n_layers
        {
            return Err(Error::Argument(format!(
                "a layer-skip draft runs 1 to {} of {}'s {} layers, got {layers}",
                self.target.n_layers - 1,
                self.target.name,
                self.target.n_layers
            )));
        }
        let mem = self.memory()?;
        if !mem.weights_fit() {
            return Err(Error::DraftDoesNotFit(Box::new(mem)));
        }
        Ok(())
    }

    /// The checks of [`Scenario::validate`] that concern the target alone: the knobs, the
    /// serving knobs for the target, its context. For a question that never uses the
    /// draft (plain decoding, or a round whose draft cost is given), whatever the draft.
    ///
    /// ```
    /// use decode_lab::Scenario;
    /// // The default draft (Llama 3) cannot draft for Mistral; the target alone is fine.
    /// let s = Scenario { target: *llm_math::model("Mistral-7B-v0.3").unwrap(), ..Scenario::LECTURE };
    /// assert!(s.validate().is_err() && s.validate_target().is_ok());
    /// let long = Scenario { ctx: 40_000, ..s };
    /// assert!(long.validate_target().unwrap_err().to_string().contains("maximum of 32768"));
    /// ```
    pub fn validate_target(&self) -> Result<(), Error> {
        self.check_knobs()?;
        self.deployment.check(&self.target)?;
        self.check_context(&self.target)
    }

    /// The context fits `m`'s maximum.
    fn check_context(&self, m: &ModelConfig) -> Result<(), Error> {
        if self.ctx > m.max_context {
            return Err(Error::Argument(format!(
                "context {} is longer than {}'s maximum of {} tokens",
                self.ctx, m.name, m.max_context
            )));
        }
        Ok(())
    }

    /// The cards the draft model runs on: `draft_tp`, or the target's `tp` when it is
    /// `None`.
    pub fn draft_cards(&self) -> u64 {
        self.draft_tp.unwrap_or(self.deployment.tp)
    }

    /// The checks of [`Scenario::validate`] that need no model arithmetic: sizes, α, the
    /// weights' format on the card, overheads, the draft's parameter and its cards. Every
    /// pass checks them.
    ///
    /// Errors: the first knob out of its domain, named.
    pub fn check_knobs(&self) -> Result<(), Error> {
        if self.batch == 0 {
            return Err(llm_math::Error::Zero("batch size").into());
        }
        if self.ctx == 0 {
            return Err(llm_math::Error::Zero("context length").into());
        }
        check_alpha(self.alpha)?;
        self.deployment.check_card(&self.hw)?;
        check_overhead(self.overhead_target)?;
        check_overhead(self.overhead_draft)?;
        self.draft.check()?;
        if let Some(d) = self.draft_tp
            && !(1..=self.deployment.tp).contains(&d)
        {
            return Err(Error::Argument(format!(
                "the draft runs on some of the target's cards: its tensor parallelism must be \
                 from 1 to {}, got {d}",
                self.deployment.tp
            )));
        }
        Ok(())
    }
}

/// α in [0, 1] (NaN is refused).
pub(crate) fn check_alpha(alpha: f64) -> Result<(), Error> {
    if (0.0..=1.0).contains(&alpha) {
        Ok(())
    } else {
        Err(Error::Alpha(alpha))
    }
}

/// A per-pass overhead: seconds from 0 to [`llm_math::MAX_SECONDS`].
pub(crate) fn check_overhead(o: f64) -> Result<(), Error> {
    if !(o.is_finite() && (0.0..=llm_math::MAX_SECONDS).contains(&o)) {
        return Err(Error::Overhead(o));
    }
    Ok(())
}
