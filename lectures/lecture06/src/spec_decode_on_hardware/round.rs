//! One speculative round as the lecture reports and exports it — with a chain of drafts
//! ([`Round`]) or a tree ([`TreeReport`]) — what verifying costs beside a plain step
//! ([`Verification`]), and the small helpers the demos share to print them.

use decode_lab::{BestRound, RoundPlan, Scenario, best_round, round_plan};
use decode_lab::{TreeAcceptance, target_pass_cost, target_pass_time};
use lecture_kit::value::{fixed, int, label, missing, parts, ratio, speedup};
use lecture_kit::{Panel, RefLine, Value};
use serde::{Deserialize, Serialize};

use super::toy_model::shape_label;

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
    /// Whether the best γ is the longest searched ([`BestRound::at_limit`]): a longer
    /// draft might pay more. Never for a fixed γ.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub at_limit: bool,
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
            at_limit: b.at_limit(),
        }
    }
}

impl Round {
    /// The round as demo 2's grid prints it — "γ=4, 1.93×（验证 1.00）", with " 变慢" after a
    /// speedup below 1 and "（搜索上限）" after a best γ at the search's limit, or "不投机" —
    /// with its γ, speedup and verification ratio as values
    /// (γ 0 and 1×, and no ratio, where it does not speculate).
    pub fn cell(&self) -> Value {
        let gamma = self.gamma_value().named("γ");
        let x = speedup(self.speedup).named("加速比");
        if !self.speculate {
            return parts("不投机", [gamma, x, missing("").named("验证").unit("×")]);
        }
        let x = x.suffix(if self.speedup < 1.0 { " 变慢" } else { "" });
        let verify = ratio(self.plan.verify_ratio, 2).named("验证");
        parts("γ={}, {}（验证 {}）", [gamma, x, verify])
    }

    /// γ as a value: "4", or "64（搜索上限）" when the best γ is the longest searched.
    pub fn gamma_value(&self) -> Value {
        int(self.gamma).unit("tokens").suffix(if self.at_limit {
            "（搜索上限）"
        } else {
            ""
        })
    }

    /// The round at a fixed γ (engines run one): it "speculates" whatever its speedup, and
    /// a speedup below 1 is a slow-down the lecture prints as such.
    pub fn fixed(plan: &RoundPlan) -> Self {
        Round {
            speculate: true,
            gamma: plan.gamma,
            speedup: plan.speedup,
            plan: Plan::from(plan),
            at_limit: false,
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

/// A round with a draft tree (or chain) as demo 3 reports and exports it: its size and τ
/// measured on the toy model, and its speedup on the cards at each of a list of batches
/// (none where that batch does not fit). Its table row, the summary and the figure all
/// read it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TreeReport {
    /// Its name in the tables: "链 γ=4", "树 4×2×2×1" ([`shape_label`]).
    pub label: String,
    /// The draft's top k at each level.
    pub branching: Vec<u32>,
    /// Draft tokens verified per round.
    pub nodes: u64,
    /// τ: the tokens a round yields on average.
    pub tau: f64,
    /// Its speedup at each batch.
    pub speedup: Vec<Option<f64>>,
}

impl TreeReport {
    /// The tree of per-level top k `branching`, accepted as `acc`, at `speedup`.
    pub fn new(branching: &[u32], acc: &TreeAcceptance, speedup: Vec<Option<f64>>) -> Self {
        TreeReport {
            label: shape_label(branching),
            branching: branching.to_vec(),
            nodes: acc.nodes,
            tau: acc.tau(),
            speedup,
        }
    }

    /// Its row in demo 3's tables: the label, the nodes and τ (two decimals) in tokens, then
    /// each speedup ("1.93×"), or "放不下" where the batch does not fit.
    pub fn row(&self) -> Vec<Value> {
        let nodes = int(self.nodes).unit("tokens");
        let tau = fixed(self.tau, 2).unit("tokens");
        let x = self.speedup.iter();
        let x = x.map(|x| x.map_or(missing("放不下"), speedup));
        [label(&self.label), nodes, tau]
            .into_iter()
            .chain(x)
            .collect()
    }
}

/// A target pass over `n` tokens per sequence beside a plain decode step (n = 1) of the
/// same scenario: what verifying γ = n − 1 drafts costs (times in seconds).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Verification {
    /// One plain decode step of the target.
    pub t_base_s: f64,
    /// The target pass over the `n` tokens.
    pub t_verify_s: f64,
    /// Whether that pass is limited by its matrix products rather than its memory reads.
    pub compute_bound: bool,
}

impl Verification {
    /// Verifying `n` tokens per sequence in `s`: [`target_pass_time`] at `n` and at 1, and
    /// whether [`target_pass_cost`] at `n` is compute-bound.
    ///
    /// Errors: as [`target_pass_time`] (a batch that does not fit, a bad knob).
    pub fn of(s: &Scenario, n: u64) -> Result<Self, decode_lab::Error> {
        Ok(Verification {
            t_base_s: target_pass_time(s, 1)?,
            t_verify_s: target_pass_time(s, n)?,
            compute_bound: target_pass_cost(s, n)?.is_compute_bound(),
        })
    }

    /// `t_verify / t_base`: what the pass costs in plain steps.
    pub fn ratio(&self) -> f64 {
        self.t_verify_s / self.t_base_s
    }

    /// Whether the pass costs less than 1% more than a plain step: Leviathan's assumption
    /// (1), verification for free.
    pub fn is_free(&self) -> bool {
        self.ratio() < 1.01
    }
}

/// How far verification is free: the largest `n` of `passes` (`(n, its verification)`, n
/// increasing) up to which every pass is free ([`Verification::is_free`]), or 0 when the
/// first already is not.
pub fn free_up_to(passes: &[(u64, Verification)]) -> u64 {
    let free = passes.iter().take_while(|(_, v)| v.is_free());
    free.last().map_or(0, |(n, _)| *n)
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

    /// Each of `ns` verified in `s`.
    fn passes(s: &Scenario, ns: impl IntoIterator<Item = u64>) -> Vec<(u64, Verification)> {
        ns.into_iter()
            .map(|n| (n, Verification::of(s, n).unwrap()))
            .collect()
    }

    #[test]
    fn verification_is_free_until_its_compute_outgrows_the_weight_read() {
        // By hand, Llama-3.1-8B on an H100 at context 1024: a plain step reads 15.144 GB at
        // 2.68 TB/s = 5.6508 ms, + 1 ms; each token fed costs 15.547 GFLOP at 593.4 TFLOP/s
        // = 26.2 µs. Under 1% more (6.7173 ms) while n · 26.2 µs < 5.7173 ms: n ≤ 218.
        // At batch 64 the step reads 23.6 GB (8.81 ms) and a token costs 64 · 26.2 µs: n ≤ 5.
        let lecture = passes(&Scenario::LECTURE, 1..=300);
        assert_eq!(free_up_to(&lecture), 218);
        let ns = [1, 2, 3, 5, 9, 17, 33, 65, 129, 257];
        assert_eq!(free_up_to(&passes(&Scenario::LECTURE, ns)), 129);
        let b64 = Scenario {
            batch: 64,
            ..Scenario::LECTURE
        };
        assert_eq!(free_up_to(&passes(&b64, 1..=300)), 5);
        assert_eq!(
            free_up_to(&passes(&b64, [300, 1])),
            0,
            "the first already costs more"
        );
        assert_eq!(free_up_to(&[]), 0);
    }

    #[test]
    fn a_verification_is_priced_beside_the_plain_step_of_its_own_batch() {
        // By hand, batch 1 at context 1024: 2 · 7,504,924,672 weight bytes and 1025 tokens
        // of 131,072 KV bytes at 80% of 3.35 TB/s, + 1 ms; one token is the plain step.
        let t_1 = (2.0 * 7_504_924_672.0 + 1025.0 * 131_072.0) / 2.68e12 + 1e-3;
        let v = Verification::of(&Scenario::LECTURE, 1).unwrap();
        assert!((v.t_base_s - t_1).abs() < 1e-12 && v.t_verify_s == v.t_base_s);
        assert!(v.ratio() == 1.0 && v.is_free() && !v.compute_bound);
        // Batch 512 at context 512: the plain step reads the weights and 512 · 513 tokens of
        // KV (18.45 ms, its 512 tokens of compute take less), + 1 ms = 19.45 ms; 5 tokens
        // each are 2560 tokens of compute, 65.912 ms at 60% of 989 TFLOP/s (decode_lab's
        // target_pass_cost), + 1 ms = 66.912 ms. The target's 1 ms overhead is in both.
        let s = Scenario {
            batch: 512,
            ctx: 512,
            ..Scenario::LECTURE
        };
        let v = Verification::of(&s, 5).unwrap();
        let t_base = (2.0 * 7_504_924_672.0 + 512.0 * 513.0 * 131_072.0) / 2.68e12 + 1e-3;
        assert!((v.t_base_s - t_base).abs() < 1e-12, "{v:?}");
        assert!((v.t_verify_s - 66.912e-3).abs() < 1e-5, "{v:?}");
        assert!(v.compute_bound && !v.is_free());
        assert!((v.ratio() - 66.912 / 19.4465).abs() < 1e-3, "{}", v.ratio());
        let too_big = Scenario {
            batch: 1 << 20,
            ..Scenario::LECTURE
        };
        assert!(Verification::of(&too_big, 2).is_err());
    }

    fn round(speculate: bool, gamma: u32, speedup: f64, verify_ratio: f64) -> Round {
        let plan = Plan {
            gamma,
            expected_tokens: 3.0,
            speedup,
            verify_ratio,
            c: 0.2,
            t_base_s: 1e-2,
            t_draft_s: 2e-3,
            t_verify_s: verify_ratio * 1e-2,
            t_round_s: 2e-2,
        };
        let gamma = if speculate { gamma } else { 0 };
        let speedup = if speculate { speedup } else { 1.0 };
        Round {
            speculate,
            gamma,
            speedup,
            plan,
            at_limit: false,
        }
    }

    #[test]
    fn a_grid_cell_prints_gamma_speedup_and_verify_ratio_and_exports_each() {
        use lecture_kit::Datum::{Int, Missing, Number};
        let c = round(true, 4, 1.925, 1.004).cell();
        assert_eq!(c.to_string(), "γ=4, 1.93×（验证 1.00）");
        assert_eq!(c.data(), [Int(4), Number(1.925), Number(1.004)]);
        let slow = round(true, 8, 0.7, 2.5).cell();
        assert_eq!(slow.to_string(), "γ=8, 0.70× 变慢（验证 2.50）");
        // Plain decoding: γ 0 and 1×, no ratio, whatever the best plan tried was.
        let plain = round(false, 2, 0.97, 1.3).cell();
        assert_eq!(plain.to_string(), "不投机");
        assert_eq!(plain.data(), [Int(0), Number(1.0), Missing]);
    }

    #[test]
    fn a_tree_round_is_its_shape_its_acceptance_and_its_speedups() {
        // Four start positions accepting 0, 1, 2 and 3 levels: τ = 1 + 6/4 = 2.5.
        let acc = TreeAcceptance {
            accepted: vec![0, 1, 2, 3],
            nodes: 6,
        };
        let t = TreeReport::new(&[2, 2], &acc, vec![Some(1.925), None]);
        assert_eq!(
            (t.label.as_str(), t.branching.as_slice()),
            ("树 2×2", &[2, 2][..])
        );
        assert_eq!((t.nodes, t.tau), (6, 2.5));
        let row: Vec<String> = t.row().iter().map(ToString::to_string).collect();
        assert_eq!(row, ["树 2×2", "6", "2.50", "1.93×", "放不下"]);
        assert_eq!(t.row()[2].unit_str(), "tokens");
        let chain = TreeReport::new(&[1, 1, 1], &acc, vec![]);
        assert_eq!((chain.label.as_str(), chain.row().len()), ("链 γ=3", 3));
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
