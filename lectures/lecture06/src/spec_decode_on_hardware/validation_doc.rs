//! Lecture 6's wording of the validation table (`decode_lab::validation`): the command
//! line that recomputes each published measurement, and `docs/validation.md`'s generated
//! part, in Markdown. Demo 5 prints the same figures as text; a test checks the page is
//! current.

use decode_lab::validation::{self, Calibration, Measurement, Prediction, Quantity, Role};
use lecture_kit::Error;

/// The command line that asks lecture 6 the same question as `m`, under `profile`.
pub fn command(m: &Measurement, profile: &Calibration) -> String {
    // Every row runs with the EAGLE-like head (`Measurement::scenario`); a step time
    // does not depend on it, and it drafts for any target (no tokenizer to match).
    let mut c = format!(
        "cargo run -p lecture06 -- --hw {} --target {} --tp {} --weights {} --kv {} --batch {} --ctx {} --calibration {} --draft-head",
        m.hw.name, m.target.name, m.tp, m.weights, m.kv, m.batch, m.ctx, profile.name
    );
    if let Quantity::Speedup(t) = m.quantity {
        c.push_str(&format!(
            " --gamma {} --tree-nodes {} --tau {}",
            t.depth, t.nodes, t.tau
        ));
    }
    c
}

/// `docs/validation.md`'s generated part: the table, the summary and the commands.
///
/// Errors: as `decode_lab::validation::predictions`.
pub fn markdown() -> Result<String, Error> {
    let rows = validation::predictions()?;
    let [seed, fitted] = validation::summary(&rows)?;
    let mut s = String::new();
    let fmt = |p: &Prediction, x: f64| match p.measurement.quantity {
        Quantity::StepTime => format!("{:.2} ms", x * 1e3),
        Quantity::Speedup(_) => format!("{x:.2}×"),
    };
    s.push_str(
        "| id | source | setup | published | measured | seed | ratio | fitted | ratio | role |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for p in &rows {
        let m = p.measurement;
        s.push_str(&format!(
            "| {} | [{}]({}) | {} | {} | {} | {} | {:.3} | {} | {:.3} | {} |\n",
            m.id,
            m.source,
            m.url,
            m.setup,
            m.published.as_printed(),
            fmt(p, p.measured),
            fmt(p, p.seed),
            p.seed_ratio(),
            fmt(p, p.fitted),
            p.fitted_ratio(),
            match m.role {
                Role::Calibration => "calibration",
                Role::HeldOut => "held out",
            }
        ));
    }
    s.push_str(
        "\n| profile | subset | rows | median ratio | worst ratio |\n|---|---|---|---|---|\n",
    );
    for p in [seed, fitted] {
        for (subset, r) in [("calibration", p.calibration), ("held out", p.held_out)] {
            s.push_str(&format!(
                "| {} | {subset} | {} | {:.3} | {:.3} |\n",
                p.profile, r.count, r.median, r.worst
            ));
        }
    }
    s.push_str("\nCommands (`--calibration seed` or `fitted`):\n\n");
    for m in validation::measurements()? {
        s.push_str(&format!(
            "- {}: `{}`\n",
            m.id,
            command(m, &validation::FITTED)
        ));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use decode_lab::validation::{FITTED, SEED};

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

    /// The prose of `docs/validation.md` quotes the fitted constants and the summary; those
    /// quotes must be the library's figures.
    #[test]
    fn validation_doc_prose_quotes_the_library_figures() {
        let doc = std::fs::read_to_string(DOC).unwrap();
        let prose = &doc[..doc.find("<!-- BEGIN GENERATED -->").unwrap()];
        let f = FITTED;
        for quote in [
            format!("bandwidth efficiency {:.2}", f.bandwidth_efficiency),
            format!("target overhead {:.2} ms", f.overhead_target * 1e3),
            format!("draft overhead {:.2} ms", f.overhead_draft * 1e3),
            format!("{:.1}% of a step", f.verify_cost_per_token * 100.0),
            format!("{:.0} µs per all-reduce", f.all_reduce_latency * 1e6),
        ] {
            assert!(prose.contains(&quote), "{quote}");
        }
        let [seed, fitted] = validation::summary(&validation::predictions().unwrap()).unwrap();
        for quote in [
            format!(
                "{:.3} → {:.3}",
                seed.held_out.median, fitted.held_out.median
            ),
            format!("{:.3} → {:.3}", seed.held_out.worst, fitted.held_out.worst),
        ] {
            assert!(prose.contains(&quote), "{quote}");
        }
    }

    /// `docs/validation.md` carries the generated table verbatim. To regenerate it after a
    /// change: `VALIDATION_DOC=write cargo test -p lecture06 --lib validation_doc`.
    #[test]
    fn validation_doc_is_generated_from_the_table() {
        let generated = markdown().unwrap();
        let doc = std::fs::read_to_string(DOC).unwrap_or_default();
        let (begin, end) = ("<!-- BEGIN GENERATED -->\n", "<!-- END GENERATED -->");
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
}
