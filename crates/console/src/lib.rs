//! How every lecture prints: a header per demo, tables, numbered observations, times.
//!
//! Every lecture of the course prints the same four kinds of thing, so they look the
//! same in every lecture: a [`print_header`] per demo, [`print_table`]s of figures, a
//! numbered list of [`print_observations`] that says what the figures mean, and times
//! formatted by [`fmt_time`]. Everything writes to an [`io::Write`] (never `println!`),
//! so tests can capture the bytes and a broken pipe is an error, not a panic.
//!
//! A lecture does not call these one by one: it builds a report of blocks
//! (`lecture_kit::report`), and `lecture_kit`'s text renderer prints each block with the
//! function here that prints its kind.
//!
//! Widths are *display* widths (Unicode East Asian Width, via `unicode-width`): a Chinese
//! character takes two terminal columns, `×`, `α`, `γ` and `—` one. Tables are drawn with
//! ASCII rules only, because box-drawing characters are "ambiguous width" and render two
//! columns wide in many CJK terminals, which would break the alignment.

pub mod chrome;

use std::io::{self, Write};

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Style};
use unicode_width::UnicodeWidthStr;

/// Observations are wrapped to this many terminal columns.
pub const WRAP_WIDTH: usize = 100;

/// Terminal columns `s` occupies (Chinese characters count 2).
///
/// ```
/// assert_eq!(console::display_width("批大小 16"), 9);
/// assert_eq!(console::display_width("1.97×"), 5);
/// ```
pub fn display_width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// Prints a demo's header: a blank line, a rule, the title, a rule. The rules are as
/// wide as the title.
///
/// ```
/// let mut out = Vec::new();
/// console::print_header(&mut out, "演示 1：c")?;
/// assert_eq!(String::from_utf8(out).unwrap(), "\n=========\n演示 1：c\n=========\n");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn print_header(out: &mut dyn Write, title: &str) -> io::Result<()> {
    let rule = "=".repeat(display_width(title).max(1));
    writeln!(out, "\n{rule}\n{title}\n{rule}")
}

/// Prints a blank line, then a table with a header row, in Markdown pipe style (it pastes
/// into slides).
///
/// Columns whose every body cell looks like a number (starts with a digit, or a minus
/// and a digit) are right-aligned; the rest are left-aligned. Rows shorter than the
/// header are padded with empty cells.
///
/// ```
/// let mut out = Vec::new();
/// console::print_table(&mut out, &["n", "时间"], &[vec!["1".into(), "5.65 ms".into()]])?;
/// assert_eq!(String::from_utf8(out).unwrap(), "
/// | n |    时间 |
/// |---|---------|
/// | 1 | 5.65 ms |
/// ");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn print_table<S: AsRef<str>>(
    out: &mut dyn Write,
    headers: &[S],
    rows: &[Vec<String>],
) -> io::Result<()> {
    print_table_aligned(out, headers, rows, &[])
}

/// [`print_table`], with the columns marked `true` in `left` left-aligned whatever their
/// cells look like (a column of names, some of which start with a digit); the other
/// columns follow [`print_table`]'s rule.
///
/// ```
/// let mut out = Vec::new();
/// let rows = [vec!["05_spec".into(), "2".into()]];
/// console::print_table_aligned(&mut out, &["脚本", "n"], &rows, &[true])?;
/// assert!(String::from_utf8(out).unwrap().contains("| 05_spec | 2 |"));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn print_table_aligned<S: AsRef<str>>(
    out: &mut dyn Write,
    headers: &[S],
    rows: &[Vec<String>],
    left: &[bool],
) -> io::Result<()> {
    let width = headers
        .len()
        .max(rows.iter().map(Vec::len).max().unwrap_or(0));
    let mut builder = Builder::with_capacity(rows.len() + 1, width);
    builder.push_record(pad(headers.iter().map(|h| h.as_ref().to_string()), width));
    for row in rows {
        builder.push_record(pad(row.iter().cloned(), width));
    }
    let mut table = builder.build();
    table.with(Style::markdown());
    for col in 0..width {
        let numeric = !left.get(col).copied().unwrap_or(false)
            && !rows.is_empty()
            && rows
                .iter()
                .all(|r| r.get(col).is_some_and(|c| looks_numeric(c)));
        if numeric {
            table.modify(Columns::one(col), Alignment::right());
        }
    }
    writeln!(out, "\n{table}")
}

fn pad(cells: impl Iterator<Item = String>, width: usize) -> Vec<String> {
    let mut v: Vec<String> = cells.collect();
    v.resize(width, String::new());
    v
}

fn looks_numeric(cell: &str) -> bool {
    let digits = cell.strip_prefix('-').unwrap_or(cell);
    digits.starts_with(|c: char| c.is_ascii_digit())
}

/// Prints the numbered "观察" (observations) list that closes a demo, each item wrapped
/// to [`WRAP_WIDTH`] columns with a hanging indent.
///
/// ```
/// let mut out = Vec::new();
/// console::print_observations(&mut out, &["验证几乎免费。", "c ≈ 0.21。"])?;
/// assert_eq!(String::from_utf8(out).unwrap(), "\n观察：\n  1. 验证几乎免费。\n  2. c ≈ 0.21。\n");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn print_observations<S: AsRef<str>>(out: &mut dyn Write, items: &[S]) -> io::Result<()> {
    writeln!(out, "\n{}", chrome::OBSERVATIONS_LINE)?;
    for (i, item) in items.iter().enumerate() {
        let marker = format!("  {}. ", i + 1);
        let indent = " ".repeat(display_width(&marker));
        let width = WRAP_WIDTH.saturating_sub(indent.len()).max(10);
        for (j, line) in wrap(item.as_ref(), width).iter().enumerate() {
            let lead = if j == 0 { &marker } else { &indent };
            writeln!(out, "{lead}{line}")?;
        }
    }
    Ok(())
}

/// Punctuation that must not begin a line (kinsoku): it stays with the text before it.
const NO_LINE_START: &str = "，。、；：！？）》」』】”’,.;:!?)]%×";

/// Wraps `text` into lines of at most `width` display columns.
///
/// Lines break at spaces or between wide (CJK) characters, never inside an ASCII word,
/// and never before closing punctuation such as `，` or `）`. A single word wider than
/// `width` gets a line of its own. No line has leading or trailing spaces.
///
/// ```
/// assert_eq!(console::wrap("投机解码在长上下文里最值钱", 10), ["投机解码在", "长上下文里", "最值钱"]);
/// assert_eq!(console::wrap("one two three", 7), ["one two", "three"]);
/// ```
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for unit in break_units(text) {
        let candidate_width = display_width(line.trim_end()) + display_width(unit.trim_end());
        if !line.trim().is_empty() && candidate_width > width {
            lines.push(line.trim_end().to_string());
            line.clear();
        }
        if line.is_empty() {
            line.push_str(unit.trim_start());
        } else {
            line.push_str(unit);
        }
    }
    if !line.trim().is_empty() {
        lines.push(line.trim_end().to_string());
    }
    lines
}

/// Splits text into units that must stay on one line: an ASCII word with its trailing
/// spaces, or one wide character; closing punctuation is glued to the unit before it.
fn break_units(text: &str) -> Vec<&str> {
    let mut units: Vec<&str> = Vec::new();
    let mut start = 0;
    let mut prev_wide = false;
    let mut prev_space = false;
    for (i, c) in text.char_indices() {
        let wide = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0) > 1;
        let glue = NO_LINE_START.contains(c);
        let boundary = i > start && !glue && (wide || prev_wide || (prev_space && c != ' '));
        if boundary {
            units.push(&text[start..i]);
            start = i;
        }
        prev_wide = wide;
        prev_space = c == ' ';
    }
    if start < text.len() {
        units.push(&text[start..]);
    }
    units
}

/// Formats a duration in seconds the way the lectures print times.
///
/// ≥ 1 s → `"1.23 s"`; ≥ 1 ms → `"7.04 ms"`; ≥ 1 µs → `"812.3 µs"`; otherwise `"640 ns"`.
/// A value that would round up to 1000 of a unit moves to the next unit
/// (`0.99999995e-3` → `"1.00 ms"`, not `"1000.0 µs"`). Negative times keep their sign; a
/// non-finite input prints as Rust formats it (`"NaN s"`, `"inf s"`).
///
/// ```
/// use console::fmt_time;
/// assert_eq!(fmt_time(1.234), "1.23 s");
/// assert_eq!(fmt_time(7.04e-3), "7.04 ms");
/// assert_eq!(fmt_time(812.3e-6), "812.3 µs");
/// assert_eq!(fmt_time(640e-9), "640 ns");
/// ```
pub fn fmt_time(seconds: f64) -> String {
    if !seconds.is_finite() {
        return format!("{seconds} s");
    }
    const UNITS: [(f64, &str, usize); 4] = [
        (1.0, "s", 2),
        (1e-3, "ms", 2),
        (1e-6, "µs", 1),
        (1e-9, "ns", 0),
    ];
    let sign = if seconds < 0.0 { "-" } else { "" };
    let t = seconds.abs();
    let mut k = UNITS
        .iter()
        .position(|&(scale, _, _)| t >= scale)
        .unwrap_or(UNITS.len() - 1);
    let shown = |k: usize| format!("{:.*}", UNITS[k].2, t / UNITS[k].0);
    // A value that rounds up to 1000 of its unit is shown in the next unit up.
    if k > 0 && shown(k).parse::<f64>().is_ok_and(|v| v >= 1000.0) {
        k -= 1;
    }
    format!("{sign}{} {}", shown(k), UNITS[k].1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(headers: &[&str], rows: &[Vec<&str>]) -> String {
        let rows: Vec<Vec<String>> = rows
            .iter()
            .map(|r| r.iter().map(|c| c.to_string()).collect())
            .collect();
        let mut out = Vec::new();
        print_table(&mut out, headers, &rows).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn fmt_time_picks_the_unit_and_precision_of_each_range() {
        assert_eq!(fmt_time(2.0), "2.00 s");
        assert_eq!(fmt_time(5.650820e-3), "5.65 ms");
        assert_eq!(fmt_time(1e-3), "1.00 ms");
        assert_eq!(fmt_time(999.94e-6), "999.9 µs");
        assert_eq!(fmt_time(1e-6), "1.0 µs");
        assert_eq!(fmt_time(0.5e-9), "0 ns");
        assert_eq!(fmt_time(0.0), "0 ns");
    }

    #[test]
    fn fmt_time_never_prints_a_thousand_of_a_smaller_unit() {
        assert_eq!(fmt_time(0.99999), "999.99 ms");
        assert_eq!(fmt_time(0.999999), "1.00 s");
        assert_eq!(fmt_time(999.97e-6), "1.00 ms");
        assert_eq!(fmt_time(999.7e-9), "1.0 µs");
    }

    #[test]
    fn fmt_time_handles_signs_and_non_finite_values_without_panicking() {
        assert_eq!(fmt_time(-2.5e-3), "-2.50 ms");
        assert_eq!(fmt_time(f64::NAN), "NaN s");
        assert_eq!(fmt_time(f64::INFINITY), "inf s");
    }

    #[test]
    fn table_columns_line_up_by_display_width_with_chinese_cells() {
        let t = table(
            &["批大小", "上下文 512"],
            &[vec!["1", "γ=4, 1.97×（验证 1.01）"], vec!["512", "放不下"]],
        );
        let t = t.trim_start();
        let widths: Vec<usize> = t.lines().map(display_width).collect();
        assert!(widths.iter().all(|&w| w == widths[0]), "{t}\n{widths:?}");
        // Every column separator sits at the same display column on every line.
        let bars = |line: &str| {
            let mut col = 0;
            let mut at = Vec::new();
            for c in line.chars() {
                if c == '|' {
                    at.push(col);
                }
                col += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            }
            at
        };
        let first = bars(t.lines().next().unwrap());
        assert!(t.lines().all(|l| bars(l) == first), "{t}");
    }

    #[test]
    fn numeric_columns_are_right_aligned_and_text_columns_left() {
        let t = table(&["n", "名字"], &[vec!["1", "a"], vec!["129", "bb"]]);
        assert_eq!(
            t,
            "\n|   n | 名字 |\n|-----|------|\n|   1 | a    |\n| 129 | bb   |\n"
        );
    }

    #[test]
    fn short_rows_are_padded_and_an_empty_table_prints_its_header() {
        assert_eq!(
            table(&["a", "b"], &[vec!["x"]]),
            "\n| a | b |\n|---|---|\n| x |   |\n"
        );
        assert_eq!(table(&["a"], &[]), "\n| a |\n|---|\n");
    }

    #[test]
    fn wrap_breaks_between_chinese_characters_but_not_inside_ascii_words() {
        let lines = wrap("用 Llama-3.1-8B 做目标模型", 12);
        assert_eq!(lines, ["用", "Llama-3.1-8B", "做目标模型"]);
        for l in wrap("批小时验证几乎免费，加速约 1.9 倍；批大到临界批大小", 9)
        {
            assert!(display_width(&l) <= 9, "{l}");
        }
    }

    #[test]
    fn wrap_never_starts_a_line_with_closing_punctuation() {
        let lines = wrap("一二三四，五六七八。", 8);
        assert_eq!(lines, ["一二三", "四，五六", "七八。"]);
        assert!(
            lines
                .iter()
                .all(|l| !l.starts_with(|c| NO_LINE_START.contains(c)))
        );
    }

    #[test]
    fn wrap_keeps_every_non_space_character_in_order() {
        let text =
            "c ≈ 0.21。按 04 演示 2 的表，c ≈ 0.2 时最优只草稿几个、加速 2 倍左右（α = 0.8）。";
        let joined: String = wrap(text, 11).concat();
        let strip = |s: &str| s.chars().filter(|c| *c != ' ').collect::<String>();
        assert_eq!(strip(&joined), strip(text));
    }

    #[test]
    fn observations_are_numbered_with_a_hanging_indent() {
        let long = "很".repeat(60);
        let mut out = Vec::new();
        print_observations(&mut out, &[long.as_str()]).unwrap();
        let s = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[1], "观察：");
        assert!(lines[2].starts_with("  1. 很"));
        assert!(lines[3].starts_with("     很"));
        assert!(lines.iter().all(|l| display_width(l) <= WRAP_WIDTH));
    }
}
