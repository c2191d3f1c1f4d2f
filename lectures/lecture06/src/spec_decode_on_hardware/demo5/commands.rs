//! The command line that recomputes each published measurement in lecture 6: the row's
//! setup as flags, then `--calibration NAME` or the profile's constants spelled out.

use decode_lab::Draft;
use lecture_kit::Error;
use planner::CostTerms;
use planner::validation::{Calibration, Measurement, Quantity};

/// The command line that asks lecture 6 the same question as `m`, under `profile`
/// (`--calibration NAME`).
pub fn command(m: &Measurement, profile: &Calibration) -> String {
    format!(
        "{} --calibration {}{}",
        setup_flags(m),
        profile.name,
        question_flags(m)
    )
}

/// The same command with `profile`'s constants spelled as flags instead of
/// `--calibration`: the efficiencies and overheads, and every cost term that is not
/// neutral (`--overlap`, `--verify-us-per-token`, `--round-overhead-ms`,
/// `--round-overhead-per-seq-ms`, `--draft-layer-ms`, `--fp8-bandwidth-factor`,
/// `--fp8-compute-factor`, `--w8a16-bandwidth-factor`, `--int4-dequant-ops`,
/// `--all-reduce-us` for the row's card family,
/// `--per-seq-layer-us`).
///
/// Errors: the row's card has no known interconnect family.
pub fn explicit_command(m: &Measurement, profile: &Calibration) -> Result<String, Error> {
    let s = m.scenario(profile);
    let t = m.plan(profile).terms;
    let n = CostTerms::NEUTRAL;
    let mut c = format!(
        "{} --eff-compute {} --eff-bandwidth {} --overhead-target {}ms",
        setup_flags(m),
        fig(profile.compute_efficiency),
        fig(profile.bandwidth_efficiency),
        fig(profile.overhead_target * 1e3),
    );
    // Only the terms that price something in this row's setup: the lecture refuses a
    // flag whose value would change nothing (a draft's own costs for a fixed-cost draft,
    // FP8, W8A16 and INT4 terms for other weights, all-reduces on one card).
    let own_draft_pass = !matches!(s.draft, Draft::FixedCost(_));
    if own_draft_pass && !matches!(s.draft, Draft::SelfSpec { .. }) {
        c.push_str(&format!(
            " --overhead-draft {}ms",
            fig(profile.overhead_draft * 1e3)
        ));
    }
    let fp8 = s.deployment.weights == llm_math::WeightDtype::Fp8;
    let w8a16 = s.deployment.weights == llm_math::WeightDtype::W8A16;
    let int4 = s.deployment.weights == llm_math::WeightDtype::Int4;
    let tp = s.deployment.tp > 1;
    let all_reduce = s.deployment.all_reduce_latency + t.all_reduce.for_card(&m.hw)?;
    let terms = [
        ("--overlap", t.overlap, n.overlap, 1.0, true),
        (
            "--verify-us-per-token",
            t.verify_per_batch_token,
            n.verify_per_batch_token,
            1e6,
            true,
        ),
        (
            "--round-overhead-ms",
            t.round_fixed,
            n.round_fixed,
            1e3,
            true,
        ),
        (
            "--round-overhead-per-seq-ms",
            t.round_per_sequence,
            n.round_per_sequence,
            1e3,
            true,
        ),
        (
            "--draft-layer-ms",
            t.draft_per_layer,
            n.draft_per_layer,
            1e3,
            own_draft_pass,
        ),
        (
            "--fp8-bandwidth-factor",
            t.fp8.bandwidth,
            n.fp8.bandwidth,
            1.0,
            fp8,
        ),
        (
            "--fp8-compute-factor",
            t.fp8.compute,
            n.fp8.compute,
            1.0,
            fp8,
        ),
        (
            "--w8a16-bandwidth-factor",
            t.w8a16_bandwidth,
            n.w8a16_bandwidth,
            1.0,
            w8a16,
        ),
        (
            "--int4-dequant-ops",
            t.int4_dequant_ops,
            n.int4_dequant_ops,
            1.0,
            int4,
        ),
        ("--all-reduce-us", all_reduce, 0.0, 1e6, tp),
        (
            "--per-seq-layer-us",
            t.per_sequence_layer,
            n.per_sequence_layer,
            1e6,
            true,
        ),
    ];
    for (flag, x, neutral, scale, prices) in terms {
        if prices && x != neutral {
            // A per-token cost is multiplied by every verified token of the batch: spelled
            // to nine decimals so the command recomputes the row to 1e-9.
            let v = if flag == "--verify-us-per-token" {
                fine(x * scale)
            } else {
                fig(x * scale)
            };
            c.push_str(&format!(" {flag} {v}"));
        }
    }
    c.push_str(&question_flags(m));
    Ok(c)
}

/// What `m`'s commands leave out, in words (empty when they price the whole row): in the
/// explicit command of an MoE row, the profile's expert latency (no flag sets it;
/// `--calibration` does).
pub fn left_out(m: &Measurement, profile: &Calibration, explicit: bool) -> Vec<String> {
    let mut out = Vec::new();
    if explicit && m.target.moe.is_some() && profile.cost_terms.expert_latency > 0.0 {
        out.push(format!(
            "the expert latency, {} µs per expert read (no flag yet; --calibration {} sets it)",
            fig(profile.cost_terms.expert_latency * 1e6),
            profile.name
        ));
    }
    out
}

/// A computed constant as a flag value: up to nine decimals, trailing zeros dropped.
fn fine(x: f64) -> String {
    let s = format!("{x:.9}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A constant as a flag value: up to four decimals, trailing zeros dropped.
fn fig(x: f64) -> String {
    let s = format!("{x:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

fn setup_flags(m: &Measurement) -> String {
    // Every row runs with the EAGLE-like head (`Measurement::scenario`); a step time
    // does not depend on it, and it drafts for any target (no tokenizer to match).
    let p = m.prefill();
    let prefill = if p.tokens > 0 {
        format!(" --prefill-tokens {} --prefill-ctx {}", p.tokens, p.ctx)
    } else {
        String::new()
    };
    format!(
        "cargo run -p lecture06 -- --hw {} --target {} --tp {} --weights {} --kv {} --batch {} --ctx {}{prefill}",
        m.hw.name, m.target.name, m.tp, m.weights, m.kv, m.batch, m.ctx
    )
}

fn question_flags(m: &Measurement) -> String {
    match m.quantity {
        Quantity::StepTime => " --draft-head".into(),
        Quantity::Speedup { tau, depth, nodes } => {
            format!(" --draft-head --gamma {depth} --tree-nodes {nodes} --tau {tau}")
        }
        // The round's time does not depend on τ; 1 is the smallest it can be.
        Quantity::RoundTime { depth, nodes } => {
            format!(" --draft-head --gamma {depth} --tree-nodes {nodes} --tau 1")
        }
        // A chain of `nodes` drafts: demo 1's t_verify / t_base at γ = nodes.
        Quantity::VerifyRatio { nodes } => format!(" --draft-head --gamma {nodes}"),
    }
}
