//! How demos 1–3 name what the setup holds — the cards, the draft, what does not fit — and
//! how they print a round: the lecture's own words for the libraries' figures.

use decode_lab::{Draft, MemoryPlan, Round, RoundPlan, Scenario};
use lecture_kit::value::{fixed, int, missing, parts, percent, ratio, speedup};
use lecture_kit::{Error, Panel, RefLine, Value};
use llm_math::ModelConfig;
use serde::Serialize;

/// A round in demos 1 and 2's figures (`decode_lab::Round` as the JSON export names it:
/// times in seconds, the unit in the name).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RoundData {
    /// Whether to speculate.
    pub speculate: bool,
    /// The γ to use, or 0.
    pub gamma: u32,
    /// The speedup obtained (exactly 1 for plain decoding).
    pub speedup: f64,
    /// The plan of that γ (when not speculating, the best one tried).
    pub plan: PlanData,
    /// Whether the best γ is the longest searched.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub at_limit: bool,
}

/// A round's figures ([`RoundPlan`]), as the JSON export names them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PlanData {
    /// Drafted tokens per round.
    pub gamma: u32,
    /// Tokens a round yields on average.
    pub expected_tokens: f64,
    /// How much faster than plain decoding.
    pub speedup: f64,
    /// `t_verify / t_base`.
    pub verify_ratio: f64,
    /// The draft's cost coefficient.
    pub c: f64,
    /// One plain decode step of the target.
    pub t_base_s: f64,
    /// One decode step of the draft.
    pub t_draft_s: f64,
    /// One target pass over γ + 1 tokens.
    pub t_verify_s: f64,
    /// One round.
    pub t_round_s: f64,
}

impl From<&Round> for RoundData {
    fn from(r: &Round) -> Self {
        RoundData {
            speculate: r.speculate,
            gamma: r.gamma,
            speedup: r.speedup,
            plan: PlanData::from(&r.plan),
            at_limit: r.at_limit,
        }
    }
}

impl From<&RoundPlan> for PlanData {
    fn from(p: &RoundPlan) -> Self {
        PlanData {
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

/// How the lecture names what drafts: the model's name, "一层草稿头（EAGLE 式）", …
pub fn draft_label(draft: &Draft) -> String {
    match draft {
        Draft::Model(m) => m.name.to_string(),
        Draft::Head => "一层草稿头（EAGLE 式）".to_string(),
        Draft::FixedCost(c) => format!("固定成本 c = {c}"),
        Draft::SelfSpec { kv_window } => format!("自投机（KV 窗口 {kv_window}）"),
        Draft::FirstLayers { layers } => format!("目标模型前 {layers} 层自起草"),
    }
}

/// How demo 1 sizes the draft against the target: "草稿参数 1.24 B，是目标的 15%" for a
/// model; against a mixture-of-experts target, the parameters a token is multiplied by,
/// which is what c compares ("是目标每个 token 激活的 22.10 B 的 2.7%"); "草稿：一层草稿头
/// （EAGLE 式）" for anything else.
pub fn draft_share(draft: &Draft, target: &ModelConfig) -> String {
    match draft {
        Draft::Model(m) => {
            let p = m.n_params() as f64;
            let b = fixed(p / 1e9, 2);
            let active = target.active_params() as f64;
            let f = percent(p / active);
            match target.moe {
                None => format!("草稿参数 {b} B，是目标的 {f}"),
                Some(_) => format!(
                    "草稿参数 {b} B，是目标每个 token 激活的 {} B 的 {f}",
                    fixed(active / 1e9, 2)
                ),
            }
        }
        other => format!("草稿：{}", draft_label(other)),
    }
}

/// How the lecture names the cards: "一块 H100", "2 块 H100".
pub fn cards(s: &Scenario) -> String {
    match s.deployment.tp {
        1 => format!("一块 {}", s.hw.name),
        tp => format!("{tp} 块 {}", s.hw.name),
    }
}

/// The card by its name alone, or the cards when there are several: "H100", "4 块 H100".
pub fn hw_name(s: &Scenario) -> String {
    match s.deployment.tp {
        1 => s.hw.name.to_string(),
        _ => cards(s),
    }
}

/// How the lecture names a setup: "一块 H200、Llama-3.1-70B + Llama-3.2-1B".
pub fn label(s: &Scenario) -> String {
    let drf = draft_label(&s.draft);
    format!("{}、{} + {drf}", cards(s), s.target.name)
}

/// The memory of the cards together, GB.
pub fn memory_gb(s: &Scenario) -> f64 {
    s.deployment.tp as f64 * s.hw.memory_bytes / 1e9
}

/// "目标模型 … 的权重 … 加上草稿 … 的权重 …，一块 H100 只有 80 GB 显存：放不下".
pub fn memory_line(m: &MemoryPlan) -> String {
    let fits = match m.weights_fit() {
        true => "放得下",
        false => "放不下",
    };
    let cards = match m.cards {
        1 => format!("一块 {}", m.hw),
        n => format!("{n} 块 {}", m.hw),
    };
    format!(
        "目标模型 {} 的权重 {:.1} GB 加上草稿 {} 的权重 {:.1} GB，{cards} 只有 {} GB 显存：{fits}",
        m.target,
        m.target_weights / 1e9,
        draft_label(&m.draft),
        m.draft_weights / 1e9,
        m.capacity / 1e9,
    )
}

/// The line a demo prints instead of its figures when the target does not fit at all.
pub fn does_not_fit_line(s: &Scenario) -> String {
    let dep = &s.deployment;
    let memory = match dep.tp {
        1 => format!(
            "一块 {} 只有 {} GB 显存",
            s.hw.name,
            s.hw.memory_bytes / 1e9
        ),
        tp => format!("{tp} 块 {} 一共只有 {} GB 显存", s.hw.name, memory_gb(s)),
    };
    let gb = s.target.weight_bytes(dep.weights) / 1e9;
    format!(
        "{} 的 {} 权重有 {gb:.1} GB，{memory}：放不下，这个演示在这块卡上算不出来。\
         换一块显存更大的卡（--hw），或者换一个小一些的目标模型（--target）。",
        s.target.name, dep.weights,
    )
}

/// Why nothing can be computed on these cards, if so: the target's weights alone do not
/// fit ("放不下"), or the target's and the draft's together do not. `None` when both fit.
pub fn weights_problem(s: &Scenario) -> Result<Option<String>, Error> {
    let mem = s.memory()?;
    Ok(if !mem.target_fits() {
        Some(does_not_fit_line(s))
    } else if !mem.weights_fit() {
        Some(format!(
            "{}，这个演示在这块卡上算不出来。换一个小一些的草稿（--draft）、草稿头（--draft-head），或者更多的卡（--tp）。",
            memory_line(&mem)
        ))
    } else {
        None
    })
}

/// The largest batch of `ctx` tokens the target holds on `s`'s cards (the draft not
/// counted, the script's rule), or 0 when the weights do not fit ([`weights_problem`]).
pub fn fitting_batch(s: &Scenario, ctx: u64) -> Result<u64, Error> {
    if weights_problem(s)?.is_some() {
        return Ok(0);
    }
    let at_ctx = Scenario { ctx, ..*s };
    Ok(at_ctx.memory()?.max_batch)
}

/// A speedup as a typed value: `1.93×`, or `0.54×（变慢）` for a slow-down.
pub fn slow_down(x: f64) -> Value {
    let suffix = if x < 1.0 { "（变慢）" } else { "" };
    speedup(x).suffix(suffix)
}

/// γ as a value: "4", or "64（搜索上限）" when the best γ is the longest searched.
pub fn gamma_value(r: &Round) -> Value {
    let suffix = if r.at_limit { "（搜索上限）" } else { "" };
    int(r.gamma).unit("tokens").suffix(suffix)
}

/// The round as demo 2's grid prints it — "γ=4, 1.93×（验证 1.00）", with " 变慢" after a
/// speedup below 1 and "（搜索上限）" after a best γ at the search's limit, or "不投机" —
/// with its γ, speedup and verification ratio as values (γ 0 and 1×, and no ratio, where
/// it does not speculate).
pub fn round_cell(r: &Round) -> Value {
    let gamma = gamma_value(r).named("γ");
    let x = speedup(r.speedup).named("加速比");
    if !r.speculate {
        return parts("不投机", [gamma, x, missing("").named("验证").unit("×")]);
    }
    let x = x.suffix(if r.speedup < 1.0 { " 变慢" } else { "" });
    let verify = ratio(r.plan.verify_ratio, 2).named("验证");
    parts("γ={}, {}（验证 {}）", [gamma, x, verify])
}

/// A speedup panel's 1.0× break-even line, or, when it has no point, why (`why()`).
pub fn break_even(panel: &mut Panel, why: impl FnOnce() -> String) {
    match panel.has_points() {
        true => panel.hlines.push(RefLine::new(1.0, "1.0×：不投机")),
        false => panel.message = Some(why()),
    }
}

/// The value `v` of the constant of `axis` of the measured profile's grid
/// (`planner::validation::MEASURED_GRID`), in its unit: µs or ms for a time (a name that
/// ends in "(s)"), else the plain number.
pub fn constant(axis: usize, v: f64) -> String {
    constant_in(axis, v, v)
}

/// [`constant`] in the unit `scale` calls for: two values of a range both in the unit of
/// the larger ("66.00 µs–180.00 µs").
pub fn constant_in(axis: usize, v: f64, scale: f64) -> String {
    let seconds = planner::validation::MEASURED_GRID
        .get(axis)
        .is_some_and(|a| a.name.ends_with("(s)"));
    match seconds {
        true if scale < 1e-4 => format!("{:.2} µs", v * 1e6),
        true => format!("{:.2} ms", v * 1e3),
        false => format!("{v:.2}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use decode_lab::RoundPlan;

    fn round(speculate: bool, gamma: u32, speedup: f64, verify_ratio: f64) -> Round {
        let plan = RoundPlan {
            gamma,
            expected_tokens: 3.0,
            speedup,
            verify_ratio,
            c: 0.2,
            t_base: 1e-2,
            t_draft: 2e-3,
            t_verify: verify_ratio * 1e-2,
            t_round: 2e-2,
        };
        Round {
            speculate,
            gamma: if speculate { gamma } else { 0 },
            speedup: if speculate { speedup } else { 1.0 },
            plan,
            at_limit: false,
        }
    }

    #[test]
    fn a_grid_cell_prints_gamma_speedup_and_verify_ratio_and_exports_each() {
        use lecture_kit::Datum::{Int, Missing, Number};
        let c = round_cell(&round(true, 4, 1.925, 1.004));
        assert_eq!(c.to_string(), "γ=4, 1.93×（验证 1.00）");
        assert_eq!(c.data(), [Int(4), Number(1.925), Number(1.004)]);
        let slow = round_cell(&round(true, 8, 0.7, 2.5));
        assert_eq!(slow.to_string(), "γ=8, 0.70× 变慢（验证 2.50）");
        // Plain decoding: γ 0 and 1×, no ratio, whatever the best plan tried was.
        let plain = round_cell(&round(false, 2, 0.97, 1.3));
        assert_eq!(plain.to_string(), "不投机");
        assert_eq!(plain.data(), [Int(0), Number(1.0), Missing]);
        let at_limit = Round {
            at_limit: true,
            ..round(true, 64, 3.0, 1.0)
        };
        assert_eq!(gamma_value(&at_limit).to_string(), "64（搜索上限）");
        assert_eq!(slow_down(0.54).to_string(), "0.54×（变慢）");
    }

    #[test]
    fn the_cards_and_a_70b_target_that_does_not_fit_are_said_in_words() {
        let one = Scenario::LECTURE;
        assert_eq!(
            (cards(&one), hw_name(&one)),
            ("一块 H100".into(), "H100".into())
        );
        let mut four = Scenario::LECTURE;
        four.deployment.tp = 4;
        assert_eq!(
            (cards(&four), hw_name(&four)),
            ("4 块 H100".into(), "4 块 H100".into())
        );
        let big = Scenario {
            target: *llm_math::model("Llama-3.1-70B").unwrap(),
            ..Scenario::LECTURE
        };
        // 70.55 B parameters · 2 bytes = 141.1 GB > 80 GB: nothing fits, batch 0.
        let why = weights_problem(&big).unwrap().unwrap();
        assert!(
            why.starts_with("Llama-3.1-70B 的 bf16 权重有 141.1 GB，一块 H100 只有 80 GB"),
            "{why}"
        );
        assert_eq!(fitting_batch(&big, 1024).unwrap(), 0);
        assert_eq!(fitting_batch(&Scenario::LECTURE, 32768).unwrap(), 14);
    }
}
