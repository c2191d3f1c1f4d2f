//! The report as one self-contained HTML page: the lecture's handout.
//!
//! Headers, text, tables, observations and the figures (their SVG markup inline) in print
//! order, one `<section>` per demo. The page loads nothing: no script, no stylesheet or
//! font from elsewhere — the CSS is in the page, and its font-family list
//! ([`super::svg::FONT_FAMILY`]) names the CJK fonts each system ships or installs (see
//! `docs/figures.md`). It prints to PDF in one go: each demo starts a new page, and no
//! table row, observation or figure is split across pages. On paper the type and figures
//! are set small enough that each of a lecture's default demos fits on one A4 page (the
//! contents list, whose links paper cannot follow, is left out); `.ci/browser-check.cjs`
//! prints every lecture's default handout and fails on a demo that spills over.
//!
//! Written with plain `write!`: every text of the report is escaped ([`escape`]); the
//! only markup that is not is the SVG the [`super::svg`] renderer drew. Every element is
//! closed (`<meta …/>`), so the page is also well-formed XML and tests read it back with an
//! XML parser.

use std::io::{self, Write};

use crate::chrome;
use crate::figure::Figure;
use crate::render::svg;
use crate::report::{Block, Cell, Report, Table};
use crate::value::Datum;

/// The page's style sheet: screen first, then what changes on paper.
const STYLE: &str = r#"
:root { color-scheme: light; }
body {
  font-family: FONTS;
  color: #1e1e1e; background: #fff;
  max-width: 1000px; margin: 0 auto; padding: 24px 28px 48px;
  line-height: 1.6; font-size: 15px;
}
h1 { font-size: 24px; margin: 8px 0 4px; }
h2 { font-size: 19px; margin: 36px 0 12px; padding-bottom: 6px; border-bottom: 2px solid #0072b2; }
h3 { font-size: 15px; margin: 18px 0 6px; }
nav ol { margin: 8px 0 0; padding-left: 1.6em; }
nav a { color: #0060a0; text-decoration: none; }
p { margin: 8px 0; }
p.note { color: #555; font-size: 13px; }
.generated { color: #666; font-size: 13px; }
figure.table { margin: 12px 0 16px; }
figure.table figcaption { font-weight: 600; font-size: 13.5px; margin-bottom: 6px; }
table { border-collapse: collapse; font-size: 13.5px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d0d0d0; padding: 3px 9px; vertical-align: top; }
th { background: #f2f5f8; font-weight: 600; text-align: center; }
td.num { text-align: right; white-space: nowrap; }
td.missing { color: #963; text-align: center; }
tbody tr:nth-child(even) td { background: #fafafa; }
ol.observations { padding-left: 1.8em; }
ol.observations li { margin: 4px 0; }
figure.chart { margin: 16px 0 24px; }
figure.chart svg { display: block; width: 100%; max-width: 960px; height: auto; border: 1px solid #e4e4e4; }
@page { size: A4; margin: 14mm 12mm 16mm; }
@media print {
  body { max-width: none; padding: 0; font-size: 9pt; line-height: 1.4; }
  section { break-before: page; }
  section:first-of-type { break-before: auto; }
  header h1 { font-size: 14pt; margin: 0; }
  header p.generated { margin: 0 0 2mm; }
  nav { display: none; }
  h2 { margin: 0 0 2mm; font-size: 13pt; padding-bottom: 1mm; }
  h3 { margin: 2mm 0 1mm; }
  p { margin: 1mm 0; }
  h2, h3, figcaption { break-after: avoid; }
  figure.table { margin: 1.5mm 0 2mm; }
  figure.table figcaption { font-size: 8.5pt; margin-bottom: 0.5mm; }
  table { font-size: 7.5pt; }
  th, td { padding: 0 5px; line-height: 1.3; }
  thead { display: table-header-group; }
  tr, li, figure { break-inside: avoid; }
  ol.observations { margin: 1mm 0; }
  ol.observations li { margin: 0.5mm 0; font-size: 8.5pt; }
  figure.chart svg { border: none; max-height: 90mm; }
  figure.chart { margin: 1mm 0; }
  figure.chart.one-panel svg { max-height: 95mm; }
  a { color: inherit; }
}
"#;

/// Escapes `s` for HTML text and attribute values (the SVG renderer's titles too).
pub use super::escape::escape;

/// The CSS font-family list of [`svg::FONT_FAMILY`], each name quoted but the generic one.
fn css_fonts() -> String {
    svg::FONT_FAMILY
        .split(',')
        .map(str::trim)
        .map(|f| {
            if f == "sans-serif" {
                f.to_string()
            } else {
                format!("\"{f}\"")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The page's title: "CS349E 第 6 讲 · 05_spec_decode_on_hardware".
fn page_title(report: &Report) -> String {
    chrome::page_title(report.lecture, report.script.as_str())
}

/// Writes `report` as one HTML page. Errs if writing fails or a figure cannot be drawn.
pub fn write(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    let title = escape(&page_title(report));
    writeln!(out, "<!DOCTYPE html>")?;
    writeln!(out, "<html lang=\"zh-CN\">")?;
    writeln!(out, "<head>")?;
    writeln!(out, "<meta charset=\"utf-8\"/>")?;
    writeln!(
        out,
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>"
    )?;
    writeln!(out, "<title>{title}</title>")?;
    writeln!(out, "<style>{}</style>", style())?;
    writeln!(out, "</head>")?;
    writeln!(out, "<body>")?;
    writeln!(out, "<header>")?;
    writeln!(out, "<h1>{title}</h1>")?;
    writeln!(
        out,
        "<p class=\"generated\">{}</p>",
        chrome::generated_by(report.lecture)
    )?;
    writeln!(out, "</header>")?;
    contents(out, report)?;
    sections(out, report)?;
    writeln!(out, "</body>")?;
    writeln!(out, "</html>")
}

/// The page's style sheet, its font list filled in: what [`write()`] puts in its `<head>`,
/// for a page that shows [`sections`] inside its own (the browser page, `crate::web`).
pub fn style() -> String {
    STYLE.replace("FONTS", &css_fonts())
}

/// The report's sections as [`write()`] puts them in its `<body>`: one `<section>` per demo,
/// with no page around them.
pub fn sections(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    for section in &report.sections {
        writeln!(out, "<section id=\"{}\">", escape(&section.id))?;
        for block in &section.blocks {
            match block {
                Block::Header(h) => writeln!(out, "<h2>{}</h2>", escape(h))?,
                Block::Text(text) => paragraph(out, text)?,
                Block::Line(line) => paragraph(out, &line.text)?,
                Block::Table(t) => table(out, t)?,
                Block::Observations(items) => {
                    writeln!(out, "<h3>{}</h3>", chrome::OBSERVATIONS)?;
                    writeln!(out, "<ol class=\"observations\">")?;
                    for item in items {
                        writeln!(out, "<li>{}</li>", escape(item))?;
                    }
                    writeln!(out, "</ol>")?;
                }
                Block::Figure(f) => figure(out, f)?,
            }
        }
        if !section.unread_flags.is_empty() {
            paragraph(out, &chrome::unread_note(&section.unread_flags))?;
        }
        writeln!(out, "</section>")?;
    }
    Ok(())
}

/// A list of the sections' headers, linked (only when there are several).
fn contents(out: &mut dyn Write, report: &Report) -> io::Result<()> {
    let headers: Vec<(&str, &str)> = report
        .sections
        .iter()
        .filter_map(|s| {
            s.blocks.iter().find_map(|b| match b {
                Block::Header(h) => Some((s.id.as_str(), h.as_str())),
                _ => None,
            })
        })
        .collect();
    if headers.len() < 2 {
        return Ok(());
    }
    writeln!(out, "<nav>")?;
    writeln!(out, "<h3>{}</h3>", chrome::CONTENTS)?;
    writeln!(out, "<ol>")?;
    for (id, h) in headers {
        writeln!(
            out,
            "<li><a href=\"#{}\">{}</a></li>",
            escape(id),
            escape(h)
        )?;
    }
    writeln!(out, "</ol>")?;
    writeln!(out, "</nav>")
}

/// A text block: one paragraph per line; a line in full-width parentheses is a note.
fn paragraph(out: &mut dyn Write, text: &str) -> io::Result<()> {
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let class = if line.starts_with(chrome::NOTE.0) && line.ends_with(chrome::NOTE.1) {
            " class=\"note\""
        } else {
            ""
        };
        writeln!(out, "<p{class}>{}</p>", escape(line))?;
    }
    Ok(())
}

/// One table cell: numbers right-aligned, "放不下" (nothing behind it) marked.
fn cell(out: &mut dyn Write, c: &Cell) -> io::Result<()> {
    let numeric = !c.values.is_empty()
        && c.values
            .iter()
            .all(|v| matches!(v, Datum::Int(_) | Datum::Number(_)));
    let missing = !c.values.is_empty() && c.values.iter().all(|v| *v == Datum::Missing);
    let class = if missing {
        " class=\"missing\""
    } else if numeric {
        " class=\"num\""
    } else {
        ""
    };
    write!(out, "<td{class}>{}</td>", escape(&c.text))
}

fn table(out: &mut dyn Write, t: &Table) -> io::Result<()> {
    writeln!(out, "<figure class=\"table\" id=\"{}\">", escape(&t.id))?;
    writeln!(out, "<figcaption>{}</figcaption>", escape(&t.caption))?;
    writeln!(out, "<table>")?;
    write!(out, "<thead><tr>")?;
    for h in t.headers() {
        write!(out, "<th scope=\"col\">{}</th>", escape(&h))?;
    }
    writeln!(out, "</tr></thead>")?;
    writeln!(out, "<tbody>")?;
    for row in &t.rows {
        write!(out, "<tr>")?;
        for c in row {
            cell(out, c)?;
        }
        writeln!(out, "</tr>")?;
    }
    writeln!(out, "</tbody>")?;
    writeln!(out, "</table>")?;
    writeln!(out, "</figure>")
}

/// A figure: the SVG drawn by [`svg::to_string`], inline, labelled with its title. A page
/// or a handout scrolls in one column, so its panels stack there whatever rows the figure
/// asks for ([`Figure::rows`]: side by side is for the SVG files a slide shows), each as
/// wide as its text is drawn for.
fn figure(out: &mut dyn Write, f: &Figure) -> io::Result<()> {
    let stacked = Figure {
        rows: Vec::new(),
        ..f.clone()
    };
    let markup = svg::to_string(&stacked).map_err(io::Error::other)?;
    let body = markup.strip_prefix("<svg ").ok_or_else(|| {
        io::Error::other(format!("figure {}: the SVG does not start with <svg", f.id))
    })?;
    // A one-panel figure may shrink a little on paper to share a page with its text.
    let class = if f.panels.len() <= 1 {
        "chart one-panel"
    } else {
        "chart"
    };
    writeln!(
        out,
        "<figure class=\"{class}\" id=\"fig-{}\">",
        escape(&f.id)
    )?;
    write!(
        out,
        "<svg role=\"img\" aria-label=\"{}\" {}",
        escape(&f.title),
        body
    )?;
    if !body.ends_with('\n') {
        writeln!(out)?;
    }
    writeln!(out, "</figure>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::{Axis, Panel, Series};
    use crate::report::{Column, Section};

    /// A report whose every text tries to break out of its element.
    fn hostile() -> Report {
        let evil = "<script>alert('x')</script> & \"q\"";
        let mut panel = Panel::new(evil, Axis::linear(evil), Axis::linear("y"));
        panel
            .series
            .push(Series::line(evil, vec![(1.0, 2.0), (2.0, 3.0)]));
        let figure = Figure::new(evil, vec![panel]).id("f");
        let table = Table::new("t", evil, vec![Column::text(evil), Column::number("n", "")])
            .row(vec![Cell::text(evil), Cell::number("1.50", 1.5)])
            .row(vec![Cell::text("x"), Cell::missing("放不下", 1)]);
        let blocks = vec![
            Block::Header(evil.into()),
            Block::Text(format!("\n{evil}")),
            Block::Table(table),
            Block::Observations(vec![evil.into()]),
            Block::Figure(figure),
        ];
        let mut report = Report::new(99, evil);
        report
            .sections
            .push(Section::new("s", blocks, &()).unwrap());
        report
    }

    fn page(report: &Report) -> String {
        let mut out = Vec::new();
        write(&mut out, report).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_figure_in_rows_stacks_on_the_page_and_goes_side_by_side_in_its_file() {
        let panel = || {
            let mut p = Panel::new("p", Axis::linear("x"), Axis::linear("y"));
            p.series.push(Series::line("s", vec![(1.0, 2.0)]));
            p
        };
        let figure = Figure::new("图", vec![panel(), panel(), panel()]).rows(&[1, 2]);
        let file = svg::to_string(&figure).unwrap();
        assert!(
            file.starts_with("<svg width=\"1920\" height=\"844\""),
            "{}",
            &file[..60]
        );
        let mut report = hostile();
        report.sections[0].blocks = vec![Block::Figure(figure)];
        let html = page(&report);
        let at = html.find("<svg role=\"img\"").unwrap();
        let drawn = &html[at..at + 200];
        assert!(drawn.contains("width=\"960\" height=\"1244\""), "{drawn}");
    }

    #[test]
    fn every_text_is_escaped_and_the_page_is_well_formed() {
        let html = page(&hostile());
        let options = roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        };
        let doc = roxmltree::Document::parse_with_options(&html, options).expect("well-formed");
        assert!(
            !doc.descendants().any(|n| n.has_tag_name("script")),
            "no text became a script element"
        );
        let evil = "<script>alert('x')</script> & \"q\"";
        let with_text = |tag: &str| {
            doc.descendants()
                .filter(|n| n.tag_name().name() == tag && n.text().map(str::trim) == Some(evil))
                .count()
        };
        // h1 = "CS349E 第 99 讲 · <evil>", so not counted; the rest carry the text as is.
        for tag in ["h2", "p", "figcaption", "th", "td", "li", "text"] {
            assert!(with_text(tag) >= 1, "{tag} lost or mangled the text");
        }
        let svg = doc.descendants().find(|n| n.has_tag_name("svg")).unwrap();
        assert_eq!(svg.attribute("aria-label"), Some(evil));
        let cells: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("td")).collect();
        assert_eq!(cells[1].attribute("class"), Some("num"));
        assert_eq!(cells[3].attribute("class"), Some("missing"));
    }

    #[test]
    fn the_flags_a_demo_does_not_read_are_said_on_the_page_as_in_the_terminal() {
        let mut report = hostile();
        report.sections[0].unread_flags = vec!["--hw".into(), "--alpha".into()];
        let mut text = Vec::new();
        crate::render::text(&mut text, &report).unwrap();
        let text = String::from_utf8(text).unwrap();
        let note = text.lines().last().unwrap();
        assert_eq!(
            note,
            "（这个演示不读 --hw、--alpha，改了也不影响这里的数字。）"
        );
        let mut body = Vec::new();
        sections(&mut body, &report).unwrap();
        let body = String::from_utf8(body).unwrap();
        assert!(body.ends_with(&format!("<p class=\"note\">{note}</p>\n</section>\n")));
        assert!(
            page(&report).contains(&body),
            "the handout holds the same sections"
        );
    }

    #[test]
    fn the_page_asks_for_cjk_fonts_and_breaks_pages_per_section() {
        let html = page(&hostile());
        assert!(html.contains(
            "font-family: \"Noto Sans CJK SC\", \"Noto Sans SC\", \"Source Han Sans SC\", \
             \"WenQuanYi Micro Hei\", \"PingFang SC\", \"Hiragino Sans GB\", \
             \"Microsoft YaHei\", sans-serif;"
        ));
        assert!(html.contains("@media print"));
        assert!(html.contains("section { break-before: page; }"));
        assert!(html.contains("tr, li, figure { break-inside: avoid; }"));
    }
}
