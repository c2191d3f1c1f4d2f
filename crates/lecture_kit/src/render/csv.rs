//! Tables as tidy CSV: one rectangular table per file, one value per cell, raw numbers,
//! the unit in the column header.
//!
//! A printed column whose cells hold several numbers ("γ=4, 1.93×（验证 1.00）") becomes one
//! CSV column per [`Field`](crate::report::Field): `上下文 512 · γ`, `上下文 512 · 加速比 [×]`, ….
//! A cell with nothing behind it ("放不下") is an empty field. Written with the `csv`
//! crate (RFC 4180 quoting).

use std::io::{self, Write};

use crate::report::Table;
use crate::value::Datum;

/// The CSV header row of `table`: one name per field, `name [unit]` where it has a unit.
pub fn headers(table: &Table) -> Vec<String> {
    table
        .columns
        .iter()
        .flat_map(|col| {
            col.fields.iter().map(move |f| {
                let name = if col.fields.len() == 1 {
                    f.name.clone()
                } else {
                    format!("{} · {}", col.header, f.name)
                };
                if f.unit.is_empty() {
                    name
                } else {
                    format!("{name} [{}]", f.unit)
                }
            })
        })
        .collect()
}

/// One value as a CSV field: integers as integers, reals in Rust's shortest round-trip
/// form (`1e-7`, `0.8`), yes/no as `true`/`false`, nothing as an empty field.
pub fn field(d: &Datum) -> String {
    match d {
        Datum::Int(v) => v.to_string(),
        Datum::Number(v) => format!("{v:?}"),
        Datum::Text(s) => s.clone(),
        Datum::Bool(b) => b.to_string(),
        Datum::Missing => String::new(),
    }
}

/// Writes `table` as one CSV table (header row, then one row per table row).
///
/// ```
/// use lecture_kit::{Cell, Column, Datum, Table};
/// let t = Table::new("grid", "演示 2", vec![
///     Column::number("批大小", ""),
///     Column::with_fields("上下文 512", &[("γ", ""), ("加速比", "×")]),
/// ])
/// .row(vec![Cell::int(1), Cell::values("γ=4, 1.93×", vec![Datum::Int(4), Datum::Number(1.93)])])
/// .row(vec![Cell::int(512), Cell::missing("放不下", 2)]);
/// let mut out = Vec::new();
/// lecture_kit::render::csv::write(&mut out, &t)?;
/// assert_eq!(String::from_utf8(out).unwrap(),
///            "批大小,上下文 512 · γ,上下文 512 · 加速比 [×]\n1,4,1.93\n512,,\n");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn write(out: &mut dyn Write, table: &Table) -> io::Result<()> {
    table.check().map_err(io::Error::other)?;
    let mut w = ::csv::Writer::from_writer(out);
    w.write_record(headers(table))?;
    for row in &table.rows {
        w.write_record(row.iter().flat_map(|c| c.values.iter().map(field)))?;
    }
    w.flush()
}
