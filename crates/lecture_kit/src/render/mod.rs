//! The renderers of a [`Report`]: each output form is a function of the
//! same report, never a second computation.
//!
//! | form | function | what it shows |
//! |---|---|---|
//! | text | [`text`] | the lecture as the original script prints it (figures are not printed) |
//! | Markdown | [`markdown`] | the tables, each under a `### caption` heading |
//! | CSV | [`csv`] | one tidy file per table: raw values, units in the headers |
//! | JSON | [`json`] | everything: setup, every section's blocks and typed figures |
//! | SVG | [`svg`] | the figures |
//! | HTML | [`html`] | one self-contained page: everything the text shows, tables as tables, the figures inline |

pub mod csv;
mod escape;
pub mod html;
pub mod svg;

use std::io::{self, Write};

use crate::report::{Block, Report};

/// Prints the report the way a lecture prints in a terminal (`console`'s header, table
/// and observation styles). Figures are skipped: a terminal cannot show them.
pub fn text(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    for section in &report.sections {
        for block in &section.blocks {
            match block {
                Block::Header(title) => console::print_header(out, title)?,
                Block::Text(line) => writeln!(out, "{line}")?,
                Block::Line(line) => writeln!(out, "{}", line.text)?,
                Block::Table(t) => {
                    console::print_table_aligned(out, &t.headers(), &t.texts(), &t.lefts())?
                }
                Block::Observations(items) => console::print_observations(out, items)?,
                Block::Figure(_) => {}
            }
        }
        if !section.unread_flags.is_empty() {
            writeln!(
                out,
                "\n{}",
                crate::chrome::unread_note(&section.unread_flags)
            )?;
        }
    }
    Ok(())
}

/// Prints only the tables, as Markdown, each under a `### caption` heading: ready to paste
/// into slides or notes. A `|` in a header or cell is escaped (`\|`), so it cannot end a
/// cell.
pub fn markdown(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    let escape = |s: &String| s.replace('|', "\\|");
    for t in report.tables() {
        writeln!(out, "### {}", t.caption)?;
        let headers: Vec<String> = t.headers().iter().map(escape).collect();
        let rows = t.texts();
        let rows: Vec<Vec<String>> = rows
            .iter()
            .map(|r| r.iter().map(escape).collect())
            .collect();
        console::print_table_aligned(out, &headers, &rows, &t.lefts())?;
        writeln!(out)?;
    }
    Ok(())
}

/// Prints the whole report as one pretty-printed JSON document (serde, derived).
pub fn json(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report).map_err(io::Error::other)?;
    writeln!(out)
}
