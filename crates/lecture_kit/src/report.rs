//! What a lecture produces: a [`Report`] of [`Section`]s (one per demo), each a list of
//! [`Block`]s — header, text, tables, observations, figures — plus the demo's typed
//! figures as data.
//!
//! A lecture computes its figures once and builds a report; every output form (text,
//! Markdown, CSV, JSON, SVG, HTML) is a renderer of the same report (see [`crate::render`]),
//! never a second computation. A table cell carries the text the lecture prints *and*
//! the raw values behind it, so the text and Markdown keep the script's formats while CSV
//! and JSON get numbers with units.

use serde::Serialize;

use crate::chrome::MASKED;
use crate::figure::Figure;
use crate::value::Datum;

/// Everything one run of a lecture script produced, in print order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The lecture's number, e.g. 6.
    pub lecture: u32,
    /// The script's name, e.g. `"05_spec_decode_on_hardware"`.
    pub script: String,
    /// What the figures were computed for (hardware, models, assumptions), as data.
    pub setup: serde_json::Value,
    /// The units of the raw numbers in `sections[].data`, by field-name pattern.
    pub units: Vec<(String, String)>,
    /// One section per demo, in print order.
    pub sections: Vec<Section>,
}

impl Report {
    /// An empty report of `lecture`'s `script`.
    pub fn new(lecture: u32, script: impl Into<String>) -> Self {
        Report {
            lecture,
            script: script.into(),
            setup: serde_json::Value::Null,
            units: Vec::new(),
            sections: Vec::new(),
        }
    }

    /// The report as `lecture`'s `script`.
    pub fn named(mut self, lecture: u32, script: impl Into<String>) -> Self {
        self.lecture = lecture;
        self.script = script.into();
        self
    }

    /// Every block of every section, in print order.
    pub fn blocks(&self) -> impl Iterator<Item = &Block> {
        self.sections.iter().flat_map(|s| s.blocks.iter())
    }

    /// Every table, in print order.
    pub fn tables(&self) -> impl Iterator<Item = &Table> {
        self.blocks().filter_map(|b| match b {
            Block::Table(t) => Some(t),
            _ => None,
        })
    }

    /// Every figure, in print order.
    pub fn figures(&self) -> impl Iterator<Item = &Figure> {
        self.blocks().filter_map(|b| match b {
            Block::Figure(f) => Some(f),
            _ => None,
        })
    }

    /// The table `id`, if the report has one.
    pub fn table(&self, id: &str) -> Option<&Table> {
        self.tables().find(|t| t.id == id)
    }

    /// The same report with every measured value masked: a measured cell or part of a
    /// line prints [`MASKED`] and carries no number, a measured panel draws [`MASKED`]
    /// instead of its points. What is not measured is untouched, so a masked report is the
    /// same from run to run exactly when the lecture is deterministic but for what it measures.
    pub fn masked(&self) -> Report {
        let mut r = self.clone();
        for block in r.sections.iter_mut().flat_map(|s| s.blocks.iter_mut()) {
            match block {
                Block::Table(t) => t.rows.iter_mut().flatten().for_each(Cell::mask),
                Block::Line(line) => {
                    line.parts.iter_mut().for_each(Cell::mask);
                    line.text = crate::value::fill(
                        &line.template,
                        line.parts.iter().map(|c| c.text.clone()),
                    );
                }
                Block::Figure(f) => {
                    for p in f.panels.iter_mut().filter(|p| p.measured) {
                        p.series.clear();
                        p.hlines.clear();
                        p.regions.clear();
                        p.message = Some(MASKED.into());
                    }
                }
                Block::Header(_) | Block::Text(_) | Block::Observations(_) => {}
            }
        }
        r
    }
}

/// One demo's part of a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Section {
    /// A short identifier, e.g. `"demo1"` (the key of its figures in the JSON export).
    pub id: String,
    /// The blocks printed for it, in order.
    pub blocks: Vec<Block>,
    /// The demo's typed figures, serialised (raw numbers, units per [`Report::units`]).
    pub data: serde_json::Value,
    /// The flags the user typed that this demo does not read (so they cannot move its
    /// figures), also one typed at its default value: the runner fills them in. The text
    /// renderer notes them after the demo; JSON carries them (omitted when there are none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unread_flags: Vec<String>,
}

impl Section {
    /// A section `id` with its blocks and the demo's figures (any `Serialize` type).
    ///
    /// Errs only if `data` cannot be represented as JSON (a map with non-string keys).
    pub fn new(
        id: impl Into<String>,
        blocks: Vec<Block>,
        data: &impl Serialize,
    ) -> Result<Self, serde_json::Error> {
        Ok(Section {
            id: id.into(),
            blocks,
            data: serde_json::to_value(data)?,
            unread_flags: Vec::new(),
        })
    }
}

/// One piece of a lecture's output, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", content = "content", rename_all = "snake_case")]
pub enum Block {
    /// A demo's header (`console::print_header`).
    Header(String),
    /// A line of text, printed as is (a leading `\n` makes a blank line before it).
    Text(String),
    /// A line of text with values measured at run time in it (see [`Line`]).
    Line(Line),
    /// A table (`console::print_table`).
    Table(Table),
    /// The numbered observations that close a demo (`console::print_observations`).
    Observations(Vec<String>),
    /// A figure: drawn by the SVG and HTML renderers, carried by the JSON export, not
    /// printed in the terminal.
    Figure(Figure),
}

impl Block {
    /// Where this block would print or carry a number that is not finite (NaN or
    /// infinite: a cell's or a line's value, a figure's point, or the text `NaN`, `nan`,
    /// `inf` as a word), said in a few words; `None` when every number is finite. The
    /// kit refuses such a section ([`crate::run_demo`]): a lecture never prints one.
    pub fn non_finite(&self) -> Option<String> {
        let bad = |values: &[Datum]| {
            values
                .iter()
                .any(|d| matches!(d, Datum::Number(x) if !x.is_finite()))
        };
        let text_of = |t: &str, what: &str| has_non_finite_word(t).then(|| format!("{what} {t:?}"));
        match self {
            Block::Header(t) | Block::Text(t) => text_of(t, "the line"),
            Block::Observations(items) => items.iter().find_map(|t| text_of(t, "the observation")),
            Block::Line(l) => match l.parts.iter().any(|c| bad(&c.values)) {
                true => Some(format!("a value of the line {:?}", l.text)),
                false => text_of(&l.text, "the line"),
            },
            Block::Table(t) => t.rows.iter().enumerate().find_map(|(r, row)| {
                row.iter().zip(&t.columns).find_map(|(c, col)| {
                    (bad(&c.values) || has_non_finite_word(&c.text)).then(|| {
                        format!(
                            "table {}, row {}, column {:?}: {:?}",
                            t.id,
                            r + 1,
                            col.header,
                            c.text
                        )
                    })
                })
            }),
            Block::Figure(f) => f.panels.iter().find_map(|p| {
                let series = p.series.iter().find(|s| {
                    s.points
                        .iter()
                        .any(|&(x, y)| !(x.is_finite() && y.is_finite()))
                });
                series.map(|s| format!("figure {}, series {:?}", f.id, s.label))
            }),
        }
    }
}

/// Whether `text` holds `NaN`, `nan` or `inf` as a word of its own: how Rust and Python
/// print a float that is not finite (`inf`, `-inf`, `NaN`, `nan`). Not `Infinity`, which
/// names AMD's link.
fn has_non_finite_word(text: &str) -> bool {
    text.split(|c: char| !c.is_ascii_alphabetic())
        .any(|w| matches!(w, "NaN" | "nan" | "inf"))
}

/// A line of text with typed values in it, some measured at run time: printed as its
/// `text`; masked, its measured parts print [`MASKED`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Line {
    /// The line as printed.
    pub text: String,
    /// The line with one `{}` per part.
    pub template: String,
    /// The values in the line, in order.
    pub parts: Vec<Cell>,
}

/// One table: the cells as the lecture prints them, and the values behind them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    /// A file-name-safe identifier, unique in its report, e.g. `"demo2_grid"` (the CSV
    /// file's name).
    pub id: String,
    /// What the table shows, one line (the Markdown heading).
    pub caption: String,
    /// The columns as printed, each with the data fields its cells carry.
    pub columns: Vec<Column>,
    /// Rows of cells, one per column.
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// A table with these columns and no rows yet.
    pub fn new(id: impl Into<String>, caption: impl Into<String>, columns: Vec<Column>) -> Self {
        Table {
            id: id.into(),
            caption: caption.into(),
            columns,
            rows: Vec::new(),
        }
    }

    /// Adds a row (builder style).
    pub fn row(mut self, cells: Vec<Cell>) -> Self {
        self.rows.push(cells);
        self
    }

    /// The printed headers.
    pub fn headers(&self) -> Vec<String> {
        self.columns.iter().map(|c| c.header.clone()).collect()
    }

    /// Which columns are left-aligned whatever their cells look like ([`Column::left`]).
    pub fn lefts(&self) -> Vec<bool> {
        self.columns.iter().map(|c| c.left).collect()
    }

    /// The printed cells, row by row.
    pub fn texts(&self) -> Vec<Vec<String>> {
        self.rows
            .iter()
            .map(|r| r.iter().map(|c| c.text.clone()).collect())
            .collect()
    }

    /// The values of the column headed `header`, as numbers (integers converted, anything
    /// else — a label, "放不下", a masked value — left out); empty when there is no such
    /// column or it has several fields.
    pub fn numbers(&self, header: &str) -> Vec<f64> {
        let Some(j) = self.columns.iter().position(|c| c.header == header) else {
            return Vec::new();
        };
        self.rows
            .iter()
            .filter_map(|r| match r.get(j)?.values.as_slice() {
                [Datum::Number(x)] => Some(*x),
                [Datum::Int(n)] => Some(*n as f64),
                _ => None,
            })
            .collect()
    }

    /// Checks that every row has one cell per column and every cell one value per field
    /// of its column; says where it does not.
    pub fn check(&self) -> Result<(), String> {
        for (i, row) in self.rows.iter().enumerate() {
            if row.len() != self.columns.len() {
                return Err(format!(
                    "table {}: row {i} has {} cells for {} columns",
                    self.id,
                    row.len(),
                    self.columns.len()
                ));
            }
            for (cell, col) in row.iter().zip(&self.columns) {
                if cell.values.len() != col.fields.len() {
                    return Err(format!(
                        "table {}: row {i}, column {:?} has {} values for {} fields",
                        self.id,
                        col.header,
                        cell.values.len(),
                        col.fields.len()
                    ));
                }
            }
        }
        Ok(())
    }
}

/// One printed column: its header and the data fields behind its cells. A column whose
/// cells print several numbers ("γ=4, 1.93×（验证 1.00）") has one field per number, and
/// becomes that many columns in CSV.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Column {
    /// The printed header.
    pub header: String,
    /// The values each cell of this column carries, in order.
    pub fields: Vec<Field>,
    /// Left-aligned in the terminal whatever its cells look like (a column of names, of
    /// which some start with a digit). Otherwise a column of cells that all start with a
    /// digit is right-aligned, as the Python scripts' `print_table` does.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub left: bool,
}

impl Column {
    /// A column of one number in `unit` (`""` for a pure count or ratio without unit).
    pub fn number(header: impl Into<String>, unit: &str) -> Self {
        let header = header.into();
        Column {
            fields: vec![Field::new(header.clone(), unit)],
            header,
            left: false,
        }
    }

    /// A column of text (labels, names): left-aligned.
    pub fn text(header: impl Into<String>) -> Self {
        Column {
            left: true,
            ..Column::number(header, "")
        }
    }

    /// A column whose cells carry several values: `fields` are `(name, unit)` pairs.
    pub fn with_fields(header: impl Into<String>, fields: &[(&str, &str)]) -> Self {
        Column {
            header: header.into(),
            fields: fields.iter().map(|&(n, u)| Field::new(n, u)).collect(),
            left: false,
        }
    }
}

/// One data field of a column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Field {
    /// The field's name (the CSV header, with the unit).
    pub name: String,
    /// Its unit, e.g. `"s"`, `"×"`, `"tokens"`; empty for a count, a label or a ratio.
    pub unit: String,
}

impl Field {
    /// A field `name` in `unit`.
    pub fn new(name: impl Into<String>, unit: &str) -> Self {
        Field {
            name: name.into(),
            unit: unit.to_string(),
        }
    }
}

/// One cell: the text printed, and the values behind it (one per field of its column).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// What the text and Markdown renderers print.
    pub text: String,
    /// The raw values, one per field of the column.
    pub values: Vec<Datum>,
    /// Whether the value was measured at run time (exported as `"measured": true`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub measured: bool,
}

impl Cell {
    /// A cell printing `text` for the number `value`.
    pub fn number(text: impl Into<String>, value: f64) -> Self {
        Cell {
            text: text.into(),
            values: vec![Datum::Number(value)],
            measured: false,
        }
    }

    /// A cell printing the integer `value` as is.
    pub fn int(value: impl Into<i64>) -> Self {
        let value = value.into();
        Cell {
            text: value.to_string(),
            values: vec![Datum::Int(value)],
            measured: false,
        }
    }

    /// A cell of text whose value is the text itself.
    pub fn text(text: impl Into<String>) -> Self {
        let text = text.into();
        Cell {
            values: vec![Datum::Text(text.clone())],
            text,
            measured: false,
        }
    }

    /// A cell printing `text` for a yes/no value.
    pub fn boolean(text: impl Into<String>, value: bool) -> Self {
        Cell {
            text: text.into(),
            values: vec![Datum::Bool(value)],
            measured: false,
        }
    }

    /// A cell printing `text` with no value behind it, for a column of `n_fields` fields
    /// (e.g. "放不下": nothing to compute).
    pub fn missing(text: impl Into<String>, n_fields: usize) -> Self {
        Cell {
            text: text.into(),
            values: vec![Datum::Missing; n_fields],
            measured: false,
        }
    }

    /// A cell printing `text` for several values.
    pub fn values(text: impl Into<String>, values: Vec<Datum>) -> Self {
        Cell {
            text: text.into(),
            values,
            measured: false,
        }
    }

    /// Masks a measured cell: [`MASKED`] and no value behind it.
    fn mask(&mut self) {
        if self.measured {
            self.text = MASKED.into();
            self.values.iter_mut().for_each(|v| *v = Datum::Missing);
        }
    }
}
