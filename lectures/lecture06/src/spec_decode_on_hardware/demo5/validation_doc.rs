//! Lecture 6's wording of the validation table (`planner::validation`):
//! `docs/validation.md`'s generated part, in Markdown, with the command line that
//! recomputes each published measurement ([`super::commands`]). Demo 5 prints the same
//! figures as text; a test checks the page is current.

pub use super::commands::{command, explicit_command, left_out};
use super::cross::{Cross, CrossRow};
use super::trends;
use lecture_kit::Error;
use planner::validation::{self, CALIBRATIONS, Kind, MEASURED, Prediction, Quantity, Role};

/// A figure in its kind's unit: milliseconds for times, × for speedups, a plain ratio
/// for verification.
pub fn shown(q: &Quantity, x: f64) -> String {
    match q {
        Quantity::StepTime | Quantity::RoundTime { .. } => format!("{:.2} ms", x * 1e3),
        Quantity::Speedup { .. } => format!("{x:.2}×"),
        Quantity::VerifyRatio { .. } => format!("{x:.3}"),
    }
}

/// The kind as the tables name it.
pub fn kind_label(k: Kind) -> &'static str {
    match k {
        Kind::StepTime => "step time",
        Kind::VerifyOrRound => "verification / round cost",
        Kind::Speedup => "speedup",
    }
}

/// `docs/validation.md`'s generated part: the held-out summary per kind, the batch
/// series, the table of every row, and the commands.
///
/// Errors: as `planner::validation::predictions`.
pub fn markdown() -> Result<String, Error> {
    let rows = validation::predictions()?;
    let mut s = String::new();
    // The per-kind table's head: one median and one worst column per profile.
    let head = |s: &mut String, title: &str| {
        s.push_str(title);
        s.push_str("| kind | rows |");
        for c in CALIBRATIONS {
            s.push_str(&format!(" {} median | {} worst |", c.name, c.name));
        }
        s.push_str("\n|---|---|");
        s.push_str(&"---|---|".repeat(CALIBRATIONS.len()));
        s.push('\n');
    };
    head(
        &mut s,
        "### Held-out rows, per kind (ratio = prediction / measurement)\n\n",
    );
    for role in [Role::HeldOut, Role::Calibration] {
        let by_kind = validation::summary_by_kind(&rows, role)?;
        if role == Role::Calibration {
            head(
                &mut s,
                "\nCalibration rows, per kind (what the fits saw):\n\n",
            );
        }
        for kind in Kind::ALL {
            let of: Vec<_> = by_kind.iter().filter(|k| k.kind == kind).collect();
            s.push_str(&format!(
                "| {} | {} |",
                kind_label(kind),
                of[0].ratios.count
            ));
            for k in of {
                s.push_str(&format!(
                    " {:.3} | {:.3} |",
                    k.ratios.median, k.ratios.worst
                ));
            }
            s.push('\n');
        }
    }
    cross_markdown(&mut s, &super::cross::figures()?);
    s.push_str(
        "\n### Batch series: last / first (largest batch over smallest)\n\n\
         | series | batches | measured |",
    );
    for c in CALIBRATIONS {
        s.push_str(&format!(" {} |", c.name));
    }
    s.push_str("\n|---|---|---|");
    for _ in CALIBRATIONS {
        s.push_str("---|");
    }
    s.push('\n');
    for series in validation::batch_series(&rows) {
        let b = |p: &Prediction| p.measurement.batch;
        s.push_str(&format!(
            "| {} | {}–{} | ×{:.3} |",
            series.name,
            b(&series.rows[0]),
            b(&series.rows[series.rows.len() - 1]),
            series.measured_change()
        ));
        for i in 0..CALIBRATIONS.len() {
            s.push_str(&format!(" ×{:.3} |", series.predicted_change(i)));
        }
        s.push('\n');
    }
    s.push_str("\n### Every row\n\n| id | publisher | source | setup | published | measured |");
    for c in CALIBRATIONS {
        s.push_str(&format!(" {} | ratio |", c.name));
    }
    s.push_str(" role |\n|---|---|---|---|---|---|");
    for _ in CALIBRATIONS {
        s.push_str("---|---|");
    }
    s.push_str("---|\n");
    for p in &rows {
        let m = p.measurement;
        let mut flags = Vec::new();
        if m.tau_assumed {
            flags.push("τ borrowed");
        }
        if m.derived {
            flags.push("derived");
        }
        let flags = if flags.is_empty() {
            String::new()
        } else {
            format!(" ({})", flags.join(", "))
        };
        s.push_str(&format!(
            "| {} | {} | [{}]({}) | {}{flags} | {} | {} |",
            m.id,
            m.publisher.replace('|', "\\|"),
            m.source.replace('|', "\\|"),
            m.url,
            m.setup.replace('|', "\\|").replace('\n', " "),
            m.published.as_printed().replace('|', "\\|"),
            shown(&m.quantity, p.measured),
        ));
        for i in 0..CALIBRATIONS.len() {
            s.push_str(&format!(
                " {} | {:.3} |",
                shown(&m.quantity, p.predicted[i]),
                p.ratio(i)
            ));
        }
        s.push_str(match m.role {
            Role::Calibration => " calibration |\n",
            Role::HeldOut => " held out |\n",
        });
    }
    s.push_str(
        "\nCommands (`--calibration seed`, `fitted` or `measured`; the second line spells \
         the measured profile's constants as flags):\n\n",
    );
    for m in validation::measurements()? {
        s.push_str(&format!(
            "- {}: `{}`\n  `{}`\n",
            m.id,
            command(m, &MEASURED),
            explicit_command(m, &MEASURED)?
        ));
        let gaps = left_out(m, &MEASURED, true);
        if !gaps.is_empty() {
            s.push_str(&format!("  (not in the command: {})\n", gaps.join("; ")));
        }
    }
    Ok(s)
}

/// The leave-one-publisher-out tables of `docs/validation.md`: by kind and batch band,
/// plain steps by engine, each plain-step series' log-slope, and the engine profiles.
fn cross_markdown(s: &mut String, c: &Cross) {
    s.push_str(&format!(
        "\n### Leave one publisher out ({} publishers, {} rows)\n\n\
         | kind | batch | rows | median | worst | within ±25% |\n|---|---|---|---|---|---|\n",
        c.publishers, c.rows
    ));
    let line = |s: &mut String, r: &CrossRow, label: &str| {
        s.push_str(&format!(
            "| {} | {} | {} | {:.3} | {:.3} | {:.0}% |\n",
            label,
            r.subset,
            r.count,
            r.median_ratio,
            r.worst_ratio,
            r.within_25 * 100.0
        ));
    };
    for r in &c.by_band {
        let kind = Kind::ALL.into_iter().find(|k| k.name() == r.kind);
        line(s, r, kind.map_or(r.kind, kind_label));
    }
    s.push_str(
        "\nPlain steps by engine:\n\n| kind | engine | rows | median | worst | within ±25% |\n\
         |---|---|---|---|---|---|\n",
    );
    for r in &c.by_engine {
        line(s, r, kind_label(Kind::StepTime));
    }
    s.push_str(
        "\nPlain-step batch series, log-slope d ln t / d ln batch (predicted with the \
         series' publisher left out):\n\n| series | batches | measured | predicted | ratio |\n\
         |---|---|---|---|---|\n",
    );
    for r in &c.slopes {
        s.push_str(&format!(
            "| {} | {}–{} | {:.3} | {:.3} | {:.2} |\n",
            r.series,
            r.from,
            r.to,
            r.measured,
            r.predicted,
            r.predicted / r.measured
        ));
    }
    s.push_str(&trends::markdown(&c.trends));
    s.push_str(&trends::intervals_markdown(&c.intervals));
    s.push_str(
        "\nPlain steps by publisher: the offset is the geometric mean of its rows' ratios, \
         what no fit without the publisher can know:\n\n\
         | publisher | rows | offset | within ±25% | within ±25%, offset set aside |\n\
         |---|---|---|---|---|\n",
    );
    for o in &c.offsets {
        s.push_str(&format!(
            "| {} | {} | {:.3} | {:.0}% | {:.0}% |\n",
            o.publisher,
            o.rows,
            o.offset,
            o.within_25 * 100.0,
            o.within_25_own_offset * 100.0
        ));
    }
    s.push_str(&format!(
        "| all | {} | | {:.0}% | {:.0}% |\n",
        c.offsets.iter().map(|o| o.rows).sum::<usize>(),
        c.shares_within_25.0 * 100.0,
        c.shares_within_25.1 * 100.0
    ));
    s.push_str("\nEngine profiles (`--engine NAME`; a term its rows do not fix keeps the pooled value, \"pooled\"):\n\n| engine | calibration rows |");
    for &a in &validation::ENGINE_AXES {
        s.push_str(&format!(" {} |", validation::MEASURED_GRID[a].name));
    }
    s.push_str("\n|---|---|");
    s.push_str(&"---|".repeat(validation::ENGINE_AXES.len()));
    s.push('\n');
    for e in &c.engines {
        s.push_str(&format!("| {} | {} |", e.engine, e.rows));
        for v in &e.terms {
            match v {
                Some(v) => s.push_str(&format!(" {v:.9} |")),
                None => s.push_str(" pooled |"),
            }
        }
        s.push('\n');
    }
    s.push_str(&format!(
        "\nWhat fixes each constant of the pooled fit (`planner::validation::term_support`): the publishers whose rows' predictions move by more than {:.0}% between grid indices 1 and `max` of the constant. Held out, a constant of two publishers rests on the other's rows alone; of one, on none (the fold keeps the value fitted on every calibration row, the held-out publisher's included):\n\n| constant | publishers | rows | only |\n|---|---|---|---|\n",
        (validation::FIXES_BY - 1.0) * 100.0
    ));
    for t in &c.support {
        let only = if t.thin {
            t.publishers.join(", ")
        } else {
            String::new()
        };
        s.push_str(&format!(
            "| {} | {} | {} | {only} |\n",
            t.term,
            t.publishers.len(),
            t.rows
        ));
    }
    s.push_str(
        "\nUnder `--calibration measured` or `--engine`, demos 1 and 2 name a constant of the last column where it moves their step or a speedup by more than that, between where refitting without one of its publishers puts it (the folds above that hold it out) and the profile's own value, with the figures at both (`planner::flags::Terms::thin_ends`).\n",
    );
}

#[cfg(test)]
mod tests;
