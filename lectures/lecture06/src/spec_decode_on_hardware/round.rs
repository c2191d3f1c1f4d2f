//! One speculative round as the lecture reports and exports it.

use decode_lab::{BestRound, RoundPlan, Scenario, best_round, round_plan};
use lecture_kit::value::speedup;
use lecture_kit::{Panel, RefLine, Value};
use serde::{Deserialize, Serialize};

/// One speculative round as the lecture reports it: [`BestRound`] as data (and read back
/// from the JSON export).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// Whether some γ beats plain decoding.
    pub speculate: bool,
    /// The γ to use: the best one, or 0 (plain decoding).
    pub gamma: u32,
    /// The speedup obtained: the best plan's, or exactly 1 for plain decoding.
    pub speedup: f64,
    /// The best plan tried (when `speculate` is false, its speedup is ≤ 1).
    pub plan: Plan,
}

/// [`RoundPlan`] as data (times in seconds).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Drafted tokens per round.
    pub gamma: u32,
    /// Tokens a round yields on average.
    pub expected_tokens: f64,
    /// How much faster than plain decoding.
    pub speedup: f64,
    /// `t_verify / t_base`.
    pub verify_ratio: f64,
    /// `t_draft / t_base`.
    pub c: f64,
    /// One plain decode step of the target.
    pub t_base_s: f64,
    /// One decode step of the draft.
    pub t_draft_s: f64,
    /// One target pass over γ + 1 tokens.
    pub t_verify_s: f64,
    /// `γ · t_draft + t_verify`.
    pub t_round_s: f64,
}

impl From<&RoundPlan> for Plan {
    fn from(p: &RoundPlan) -> Self {
        Plan {
            gamma: p.gamma,
            expected_tokens: p.expected_tokens,
            speedup: p.speedup,
            verify_ratio: p.verify_ratio,
            c: p.c,
            t_base_s: p.t_base,
            t_draft_s: p.t_draft,
            t_verify_s: p.t_verify,
            t_round_s: p.t_round,
        }
    }
}

impl From<&BestRound> for Round {
    fn from(b: &BestRound) -> Self {
        let (speculate, plan) = match b {
            BestRound::Speculate(p) => (true, p),
            BestRound::NoSpeculation(p) => (false, p),
        };
        Round {
            speculate,
            gamma: b.gamma(),
            speedup: b.speedup(),
            plan: Plan::from(plan),
        }
    }
}

impl Round {
    /// The round at a fixed γ (engines run one): it "speculates" whatever its speedup, and
    /// a speedup below 1 is a slow-down the lecture prints as such.
    pub fn fixed(plan: &RoundPlan) -> Self {
        Round {
            speculate: true,
            gamma: plan.gamma,
            speedup: plan.speedup,
            plan: Plan::from(plan),
        }
    }

    /// The best γ for `s`, or the fixed `gamma` when one is given.
    pub fn of(s: &Scenario, gamma: Option<u32>) -> Result<Self, decode_lab::Error> {
        Ok(match gamma {
            Some(g) => Round::fixed(&round_plan(s, g)?),
            None => Round::from(&best_round(s)?),
        })
    }
}

/// A speedup panel's 1.0× break-even line, or, when it has no point, why (`why()`).
pub fn break_even(panel: &mut Panel, why: impl FnOnce() -> String) {
    match panel.has_points() {
        true => panel.hlines.push(RefLine::new(1.0, "1.0×：不投机")),
        false => panel.message = Some(why()),
    }
}

/// A speedup as a typed value: `1.93×`, or `0.54×（变慢）` for a slow-down.
pub fn slow_down(x: f64) -> Value {
    speedup(x).suffix(if x < 1.0 { "（变慢）" } else { "" })
}
