//! One speculative round as the lecture reports and exports it.

use decode_lab::{BestRound, RoundPlan, Scenario, best_round, round_plan, target_pass_time};
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

/// How far verification is free in `s`: the largest of `ns` (increasing) up to which one
/// target pass over n tokens per sequence costs less than 1% more than a plain decode
/// step — Leviathan's assumption (1) — or 0 when the first already costs more.
///
/// Errors: as [`target_pass_time`] (a batch that does not fit, a bad knob).
pub fn free_up_to(s: &Scenario, ns: &[u64]) -> Result<u64, decode_lab::Error> {
    let t_base = target_pass_time(s, 1)?;
    let mut free = 0;
    for &n in ns {
        if target_pass_time(s, n)? / t_base >= 1.01 {
            break;
        }
        free = n;
    }
    Ok(free)
}

/// The fastest of several options (draft shapes, γs) and its speedup, options without a
/// speedup (where the batch does not fit) left out; of equal speedups, the last. `None`
/// when no option has one.
pub fn fastest<L>(options: impl IntoIterator<Item = (L, Option<f64>)>) -> Option<(L, f64)> {
    let known = options
        .into_iter()
        .filter_map(|(label, x)| Some((label, x?)));
    known.max_by(|a, b| a.1.total_cmp(&b.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verification_is_free_until_its_compute_outgrows_the_weight_read() {
        // By hand, Llama-3.1-8B on an H100 at context 1024: a plain step reads 15.144 GB at
        // 2.68 TB/s = 5.6508 ms, + 1 ms; each token fed costs 15.547 GFLOP at 593.4 TFLOP/s
        // = 26.2 µs. Under 1% more (6.7173 ms) while n · 26.2 µs < 5.7173 ms: n ≤ 218.
        // At batch 64 the step reads 23.6 GB (8.81 ms) and a token costs 64 · 26.2 µs: n ≤ 5.
        let all: Vec<u64> = (1..=300).collect();
        assert_eq!(free_up_to(&Scenario::LECTURE, &all).unwrap(), 218);
        let ns = [1, 2, 3, 5, 9, 17, 33, 65, 129, 257];
        assert_eq!(free_up_to(&Scenario::LECTURE, &ns).unwrap(), 129);
        let b64 = Scenario {
            batch: 64,
            ..Scenario::LECTURE
        };
        assert_eq!(free_up_to(&b64, &all).unwrap(), 5);
        assert_eq!(
            free_up_to(&b64, &[300, 1]).unwrap(),
            0,
            "the first already costs more"
        );
        let too_big = Scenario {
            batch: 1 << 20,
            ..Scenario::LECTURE
        };
        assert!(free_up_to(&too_big, &ns).is_err());
    }

    #[test]
    fn the_fastest_option_is_the_largest_known_speedup() {
        let shapes = [
            ("链 γ=1", Some(1.4)),
            ("树 2×2×2", None),
            ("树 4×4×4×4", Some(2.1)),
        ];
        assert_eq!(fastest(shapes), Some(("树 4×4×4×4", 2.1)));
        assert_eq!(
            fastest([("a", Some(0.7)), ("b", Some(0.9))]),
            Some(("b", 0.9))
        );
        assert_eq!(
            fastest([("a", Some(1.2)), ("b", Some(1.2))]),
            Some(("b", 1.2))
        );
        assert_eq!(fastest([("a", None), ("b", None)]), None);
        assert_eq!(fastest(Vec::<(&str, Option<f64>)>::new()), None);
        // Against sorting: over many lists, the same speedup as the largest after a sort.
        for n in 1..40u32 {
            let xs: Vec<(u32, Option<f64>)> = (0..n)
                .map(|i| (i, (i % 3 != 0).then(|| f64::from((i * 37 + n) % 11))))
                .collect();
            let mut known: Vec<f64> = xs.iter().filter_map(|x| x.1).collect();
            known.sort_by(f64::total_cmp);
            assert_eq!(
                fastest(xs.clone()).map(|x| x.1),
                known.last().copied(),
                "{xs:?}"
            );
        }
    }
}
