//! A setup at a glance: what a student asks first about a card, a target and a draft —
//! does it fit (weights and KV against memory), how long one decode step takes and how
//! many tokens per second that makes, and whether to speculate (the best γ and its
//! speedup). The figures the serving calculators show on top of their pages, computed
//! from the same pass times and rounds as everything else ([`crate::round`],
//! [`Scenario::memory`]); a lecture words them.

use crate::{Error, MemoryPlan, Pricing, Round, Scenario, round};

/// Whether a scenario's batch fits its cards, by the lecture's rule: the target's and the
/// draft's weights, plus the target's KV cache for every sequence (the draft's KV is not
/// counted, as the script counts it; [`MemoryPlan::max_batch`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Weights and the batch's KV fit.
    Fits,
    /// The target's weights alone do not fit.
    TargetWeights,
    /// The target's weights fit, the draft's on top of them do not.
    DraftWeights,
    /// The weights fit, the batch's KV cache at its context does not.
    Kv,
}

/// One decode step of the setup and what speculating makes of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// One plain decode step of the whole batch (one target pass over one token per
    /// sequence), seconds.
    pub t_base: f64,
    /// Tokens per second of plain decoding, the whole batch: `batch / t_base`.
    pub tokens_per_s: f64,
    /// The round: the best γ (or the fixed one), its speedup, or plain decoding.
    pub round: Round,
    /// Tokens per second with that round: `tokens_per_s · speedup` (plain decoding's when
    /// it does not speculate).
    pub tokens_per_s_round: f64,
}

/// A setup at a glance ([`glance`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Glance {
    /// The weights and KV per sequence, against the cards' memory.
    pub memory: MemoryPlan,
    /// Sequences decoded together.
    pub batch: u64,
    /// Tokens of context per sequence.
    pub ctx: u64,
    /// The batch's target KV cache at `ctx`, bytes over all cards (`batch` sequences).
    pub kv: f64,
    /// The batch's draft KV cache, bytes (not counted against memory, as the script
    /// does not count it).
    pub draft_kv: f64,
    /// Whether it fits.
    pub fit: Fit,
    /// The step and the round, when it fits (nothing runs on cards it does not fit).
    pub step: Option<Step>,
}

impl Glance {
    /// Bytes the lecture's rule counts against memory: both models' weights and the
    /// target's KV cache.
    pub fn used(&self) -> f64 {
        self.memory.target_weights + self.memory.draft_weights + self.kv
    }
}

/// `s` at a glance, its passes priced by `p`, with the best γ or the `fixed` one.
///
/// Errors: whatever [`Scenario::memory`] and [`round`] refuse (a scenario that cannot
/// exist, a knob out of range, a fixed γ of 0 or beyond [`crate::MAX_GAMMA`]).
///
/// ```
/// use decode_lab::{Fit, Scenario, Seed, glance};
/// let g = glance(&Scenario::LECTURE, &Seed, None)?;
/// // 8B at bf16 (16.06 GB) and the 1B draft (2.47 GB) on one 80 GB H100, batch 1 at 1,024.
/// assert_eq!(g.fit, Fit::Fits);
/// let step = g.step.unwrap();
/// assert!((step.t_base - 6.6508e-3).abs() < 1e-6); // one token: 6.65 ms
/// assert!((step.tokens_per_s - 150.36).abs() < 0.01); // 1 / 6.65 ms
/// assert_eq!(step.round.gamma, 4);
/// assert!((step.tokens_per_s_round / step.tokens_per_s - step.round.speedup).abs() < 1e-12);
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn glance(s: &Scenario, p: &dyn Pricing, fixed: Option<u32>) -> Result<Glance, Error> {
    let memory = s.memory()?;
    let batch = s.batch as f64;
    let kv = batch * memory.target_kv_per_seq;
    let draft_kv = batch * memory.draft_kv_per_seq;
    let fit = if !memory.target_fits() {
        Fit::TargetWeights
    } else if !memory.weights_fit() {
        Fit::DraftWeights
    } else if s.batch > memory.max_batch {
        Fit::Kv
    } else {
        Fit::Fits
    };
    let step = match fit {
        Fit::Fits => {
            let t_base = p.target_pass_time(s, 1)?;
            let round = round(s, p, fixed)?;
            let tokens_per_s = batch / t_base;
            Some(Step {
                t_base,
                tokens_per_s,
                round,
                tokens_per_s_round: tokens_per_s * round.speedup,
            })
        }
        _ => None,
    };
    Ok(Glance {
        memory,
        batch: s.batch,
        ctx: s.ctx,
        kv,
        draft_kv,
        fit,
        step,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Seed;

    #[test]
    fn the_lecture_s_batch_holds_its_kv_as_counted_by_hand() {
        let g = glance(&Scenario::LECTURE, &Seed, None).unwrap();
        // Llama-3.1-8B: 32 layers × 8 KV heads × 128 dims × (K and V) × 2 bytes = 128 KiB
        // per token; 1,024 tokens of one sequence hold 128 MiB.
        assert_eq!(g.kv, 131_072.0 * 1024.0);
        assert_eq!(
            g.used(),
            g.memory.target_weights + g.memory.draft_weights + g.kv
        );
        assert!(g.used() < 80e9);
    }

    #[test]
    fn what_does_not_fit_is_named_and_nothing_is_timed() {
        let big = Scenario {
            target: *llm_math::model("Llama-3.1-70B").unwrap(),
            ..Scenario::LECTURE
        };
        let g = glance(&big, &Seed, None).unwrap();
        // 70.6 B parameters at 2 bytes are 141 GB: more than one H100's 80 GB.
        assert_eq!((g.fit, g.step), (Fit::TargetWeights, None));
        // 1,000 sequences of 131,072 tokens hold 17.2 TB of KV.
        let long = Scenario {
            batch: 1000,
            ctx: 131_072,
            ..Scenario::LECTURE
        };
        let g = glance(&long, &Seed, None).unwrap();
        assert_eq!((g.fit, g.step), (Fit::Kv, None));
        assert_eq!(g.kv, 1000.0 * 131_072.0 * 131_072.0);
    }

    #[test]
    fn a_fixed_gamma_that_slows_down_is_shown_as_a_slow_down() {
        // γ = 8 at batch 512 costs more than it yields (round_plan's own example).
        let s = Scenario {
            batch: 512,
            ctx: 512,
            ..Scenario::LECTURE
        };
        let step = glance(&s, &Seed, Some(8)).unwrap().step.unwrap();
        assert!(step.round.speculate && step.round.speedup < 1.0);
        assert!(step.tokens_per_s_round < step.tokens_per_s);
        // 512 sequences per step: tokens per second is 512 over the step.
        assert!((step.tokens_per_s * step.t_base - 512.0).abs() < 1e-9);
        let best = glance(&s, &Seed, None).unwrap().step.unwrap();
        assert!(best.round.speedup >= 1.0);
    }
}
