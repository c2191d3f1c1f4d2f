//! Tests of `docs/validation.md`: generated from the table, its prose quoting the library's
//! figures.

use super::*;
use llm_math::WeightDtype;
use planner::validation::{FITTED, SEED};

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/validation.md");

/// A command by hand: M1 is Llama-3.1-8B on one H100, bf16, batch 1, context 512.
#[test]
fn the_first_rows_command_is_spelled_out() {
    let m1 = &validation::measurements().unwrap()[0];
    assert_eq!(
        command(m1, &SEED),
        "cargo run -p lecture06 -- --hw H100 --target Llama-3.1-8B --tp 1 --weights bf16 \
         --kv bf16 --batch 1 --ctx 512 --calibration seed --draft-head"
    );
}

/// The measured profile spelled as flags, by hand for M16 (MI300X, TP 4): its card
/// family's all-reduce latency, 43 · 2 = 86 µs; the verification cost per token at 88%
/// of the MI300X's 1307.4 TFLOP/s for 70,553,706,496 / 4 parameters a card, 2 ·
/// 17.64e9 / (1.3074e15 · 0.88) = 30.661873364 µs (nine decimals: it multiplies every
/// verified token); 14 · 0.05 = 0.7 µs per sequence per layer; and every other
/// non-neutral term that prices something in a bf16 row (not FP8's factors; the round's
/// fixed cost is 0, neutral; not the W8A16 factor, 65 · 0.01, nor INT4's 43 · 0.25
/// dequantization ops per weight, which a W8A16 and an INT4 row spell).
#[test]
fn the_explicit_command_spells_the_measured_profile_by_hand() {
    let ms = validation::measurements().unwrap();
    let m16 = ms.iter().find(|m| m.id == "M16").unwrap();
    assert_eq!(
        explicit_command(m16, &MEASURED).unwrap(),
        "cargo run -p lecture06 -- --hw MI300X --target Llama-3.1-70B --tp 4 --weights bf16 \
         --kv bf16 --batch 1 --ctx 512 --eff-compute 0.6 --eff-bandwidth 0.86 \
         --overhead-target 2.1ms --overhead-draft 0.6ms --overlap 0.65 \
         --verify-us-per-token 30.661873364 --round-overhead-per-seq-ms 0.09 \
         --all-reduce-us 86 --per-seq-layer-us 0.7 --draft-head"
    );
    assert!(left_out(m16, &MEASURED, true).is_empty());
    let m164 = ms.iter().find(|m| m.id == "M164").unwrap();
    let w8a16 = explicit_command(m164, &MEASURED).unwrap();
    assert!(w8a16.contains("--weights w8a16"), "{w8a16}");
    assert!(w8a16.contains(" --w8a16-bandwidth-factor 0.65 "), "{w8a16}");
    assert!(!w8a16.contains("--int4-dequant-ops"), "{w8a16}");
    let m165 = ms.iter().find(|m| m.id == "M165").unwrap();
    let int4 = explicit_command(m165, &MEASURED).unwrap();
    assert!(int4.contains("--weights int4"), "{int4}");
    assert!(int4.contains(" --int4-dequant-ops 10.75 "), "{int4}");
    // An MoE row's explicit command cannot say the expert latency; a closed-loop
    // row's commands carry its prompt tokens: 84 · 5000 / 500 at half the prompt.
    let m44 = ms.iter().find(|m| m.id == "M44").unwrap();
    assert_eq!(left_out(m44, &MEASURED, true).len(), 1);
    assert!(left_out(m44, &MEASURED, false).is_empty());
    let m66 = ms.iter().find(|m| m.id == "M66").unwrap();
    assert!(command(m66, &SEED).contains("--prefill-tokens 840 --prefill-ctx 2500"));
    assert!(left_out(m66, &SEED, true).is_empty());
    // The seed spells nothing beyond the lecture's own flags.
    let m1 = &ms[0];
    assert!(!explicit_command(m1, &SEED).unwrap().contains("--overlap"));
    // Nor a term that prices nothing in the row: M1 runs on one card in bf16, so
    // neither all-reduces nor FP8's factors; M9 (eight H100s) has its all-reduces.
    let fitted = explicit_command(m1, &FITTED).unwrap();
    assert!(!fitted.contains("--all-reduce-us") && !fitted.contains("--fp8"));
    let m9 = ms.iter().find(|m| m.id == "M9").unwrap();
    assert_eq!((m9.hw.name, m9.tp), ("H100", 8));
    assert!(
        explicit_command(m9, &FITTED)
            .unwrap()
            .contains("--all-reduce-us 25.5")
    );
}

/// The prose of `docs/validation.md` quotes the fitted and measured constants and the
/// cross-validated medians; those quotes must be the library's figures.
#[test]
fn validation_doc_prose_quotes_the_library_figures() {
    let doc = std::fs::read_to_string(DOC).unwrap();
    let prose = &doc[..doc.find("<!-- BEGIN GENERATED -->").unwrap()];
    let f = FITTED;
    let m = MEASURED;
    let t = m.cost_terms;
    let mut quotes = vec![
        format!("bandwidth efficiency {:.2}", f.bandwidth_efficiency),
        format!("target overhead {:.2} ms", f.overhead_target * 1e3),
        format!("draft overhead {:.2} ms", f.overhead_draft * 1e3),
        format!(
            "{:.1}% of a step",
            f.cost_terms.verify_cost_per_token * 100.0
        ),
        format!("{:.0} µs per all-reduce", f.all_reduce_latency * 1e6),
        format!(
            "bandwidth efficiency {:.2} (measured)",
            m.bandwidth_efficiency
        ),
        format!(
            "target overhead {:.2} ms (measured)",
            m.overhead_target * 1e3
        ),
        format!("draft overhead {:.2} ms (measured)", m.overhead_draft * 1e3),
        format!("overlap {:.2}", t.overlap),
        format!(
            "{:.2} ms + {:.3} ms per sequence a round",
            t.round_fixed * 1e3,
            t.round_per_sequence * 1e3
        ),
        format!(
            "{:.2} (bandwidth) and {:.2} (compute)",
            t.fp8.bandwidth, t.fp8.compute
        ),
        format!("W8A16 bandwidth factor of {:.2}", t.w8a16_bandwidth),
        format!(
            "INT4\n  dequantization at {:.2} operations per weight",
            t.int4_dequant_ops
        ),
        format!(
            "{:.0} µs (NVLink), {:.0} µs (Infinity\n  Fabric) and {:.0} µs (Ethernet)",
            t.all_reduce.nvlink * 1e6,
            t.all_reduce.infinity_fabric * 1e6,
            t.all_reduce.ethernet * 1e6
        ),
        format!(
            "expert latency {:.1} µs per expert read",
            m.cost_terms.expert_latency * 1e6
        ),
        format!(
            "{:.2} µs per\n  sequence per layer",
            t.per_sequence_layer * 1e6
        ),
        format!(
            "{:.0}% of the dtype's\n  peak",
            m.verify_efficiency.unwrap() * 100.0
        ),
    ];
    let c = super::super::cross::figures().unwrap();
    let steps: Vec<_> = c.by_band.iter().filter(|r| r.kind == "step_time").collect();
    quotes.push(format!(
        "median {:.3} (batch ≤ 4), {:.3} (5–31) and {:.3} (≥ 32), with {:.0}%,\n{:.0}% and {:.0}% of the rows",
        steps[0].median_ratio,
        steps[1].median_ratio,
        steps[2].median_ratio,
        steps[0].within_25 * 100.0,
        steps[1].within_25 * 100.0,
        steps[2].within_25 * 100.0
    ));
    let speedups: Vec<_> = c.by_band.iter().filter(|r| r.kind == "speedup").collect();
    quotes.push(format!(
        "speedups at median {:.3}, {:.3} and {:.3}",
        speedups[0].median_ratio, speedups[1].median_ratio, speedups[2].median_ratio
    ));
    quotes.push(format!("{} rows from {} publishers", c.rows, c.publishers));
    let range = super::super::cross::offset_range(&c).unwrap();
    // Held-out geometric means of the weight formats' plain steps.
    let held_out = validation::leave_one_publisher_out().unwrap();
    let mean = |keep: &dyn Fn(&validation::Measurement) -> bool| {
        let logs: Vec<f64> = held_out
            .iter()
            .filter(|p| p.measurement.quantity.kind() == Kind::StepTime)
            .filter(|p| keep(p.measurement))
            .map(|p| p.ratio().ln())
            .collect();
        assert!(!logs.is_empty());
        format!(
            "{:.2}",
            (logs.iter().sum::<f64>() / logs.len() as f64).exp()
        )
    };
    let int4_on = |card: &'static str| {
        move |m: &validation::Measurement| m.weights == WeightDtype::Int4 && m.hw.name == card
    };
    let int4_a100_of = |who: &'static str| {
        move |m: &validation::Measurement| int4_on("A100")(m) && m.publisher.starts_with(who)
    };
    quotes.push(format!(
        "held out by publisher those rows come out at geometric mean {}",
        mean(&|m| m.weights == WeightDtype::W8A16)
    ));
    quotes.push(format!(
        "geometric mean {} on the\n  A100 and {} on the RTX 4090",
        mean(&int4_on("A100")),
        mean(&int4_on("RTX-4090"))
    ));
    quotes.push(format!(
        "the Qwen team's vLLM rows come out at {} and the AutoAWQ pull request's at {}",
        mean(&int4_a100_of("Qwen team")),
        mean(&int4_a100_of("IlyasMoutawwakil"))
    ));
    quotes.push(format!("It runs from {:.2}\nto {:.2}.", range.0, range.1));
    quotes.push(format!(
        "{:.0}% of the plain steps are\nwithin ±25% ({:.0}% without)",
        c.shares_within_25.1 * 100.0,
        c.shares_within_25.0 * 100.0
    ));
    // Two engines whose own rows alone put the bandwidth efficiency on its grid's
    // bound, and what the pool draws them to.
    let every: Vec<&validation::Measurement> = validation::measurements()
        .unwrap()
        .iter()
        .filter(|m| m.role == validation::Role::Calibration)
        .collect();
    let rows = validation::FitRows::new(&every).unwrap();
    let (pooled, _) = validation::fit_measured().unwrap();
    let mut drawn = Vec::new();
    for engine in ["tensorrt-llm", "autoawq"] {
        let own = rows.filter(|m| m.engine == engine);
        let alone = validation::engine_profile_on(engine, &own, pooled).unwrap();
        assert_eq!(alone.calibration.bandwidth_efficiency, 1.0, "{engine}");
        let profile = validation::engine_profile(engine).unwrap();
        drawn.push(format!("{:.2}", profile.calibration.bandwidth_efficiency));
    }
    quotes.push(format!(
        "grid (1.00); drawn toward the pool, they find {} and {}.",
        drawn[0], drawn[1]
    ));
    // The prose says the other engines' rows weigh "as one publisher more".
    assert!(prose.contains("weigh in the refit as one publisher more"));
    assert_eq!(validation::ENGINE_PRIOR_PUBLISHERS, 1.0);
    for quote in quotes {
        assert!(prose.contains(&quote), "{quote}");
    }
}

/// `docs/validation.md` carries the generated table verbatim. To regenerate it after a
/// change: `VALIDATION_DOC=write cargo test -p lecture06 --lib validation_doc`.
#[test]
fn validation_doc_is_generated_from_the_table() {
    let generated = markdown().unwrap();
    let doc = std::fs::read_to_string(DOC).unwrap_or_default();
    let begin = "<!-- BEGIN GENERATED -->\n";
    let end = "<!-- END GENERATED -->";
    if std::env::var("VALIDATION_DOC").as_deref() == Ok("write") {
        let (head, tail) = match (doc.find(begin), doc.find(end)) {
            (Some(b), Some(e)) => (doc[..b].to_string(), doc[e + end.len()..].to_string()),
            _ => (doc.clone(), String::from("\n")),
        };
        std::fs::write(DOC, format!("{head}{begin}{generated}{end}{tail}")).unwrap();
        return;
    }
    let b = doc
        .find(begin)
        .expect("docs/validation.md has a generated block")
        + begin.len();
    let e = doc.find(end).expect("the generated block ends");
    assert_eq!(
        &doc[b..e],
        generated,
        "regenerate docs/validation.md (see this test's doc)"
    );
}
