//! Where a demo prints ([`Out`]): headers, lines, typed tables, observations and
//! figures, in the order of the Python script, gathered into the demo's section of the
//! report; and the observations' kinds ([`seed`], [`what_if`], [`always`]).

use std::any::Any;

use serde::Serialize;

use crate::chrome;
use crate::error::Error;
use crate::figure::Figure;
use crate::report::{Block, Cell, Column, Field, Line, Section, Table};
use crate::value::{Datum, Value};

/// One sentence of a demo's observations, and for which setups it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    text: String,
    holds: Holds,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Holds {
    /// The original script's sentence: holds for the default setup.
    Default,
    /// A sentence computed for the setup: printed only when the demo's inputs changed.
    WhatIf,
    /// Holds for every setup.
    Always,
}

/// A sentence of the original script, true for the default setup (a plain string is one
/// too). Printed as written when the demo's inputs are the defaults; otherwise behind the
/// lecture's marker ([`crate::Lecture::DEFAULT_ONLY`]). It is a sentence about the default
/// setup, so a figure in it is the default setup's (`cost_coefficient(&Scenario::LECTURE)`,
/// not the what-if's): a demo runs once, and the marker decides nothing about its numbers.
pub fn seed(text: impl Into<String>) -> Observation {
    Observation {
        text: text.into(),
        holds: Holds::Default,
    }
}

/// A sentence computed for the setup at hand, printed only when one of the demo's inputs
/// differs from the default (in its place in the list).
pub fn what_if(text: impl Into<String>) -> Observation {
    Observation {
        text: text.into(),
        holds: Holds::WhatIf,
    }
}

/// A sentence that holds for every setup: always printed as written.
pub fn always(text: impl Into<String>) -> Observation {
    Observation {
        text: text.into(),
        holds: Holds::Always,
    }
}

impl From<&str> for Observation {
    fn from(s: &str) -> Self {
        seed(s)
    }
}

impl From<String> for Observation {
    fn from(s: String) -> Self {
        seed(s)
    }
}

enum Piece {
    Block(Block),
    Observations(Vec<Observation>),
}

/// Where a demo prints: headers, lines, tables, observations, figures, in order.
pub struct Out {
    number: u8,
    pieces: Vec<Piece>,
    data: serde_json::Value,
    typed: Option<Box<dyn Any>>,
    errors: Vec<String>,
    tables: usize,
    figures: usize,
    header: Option<String>,
    last_line: Option<String>,
}

/// The table just printed, to give it an id, a caption or left-aligned columns of its own.
pub struct TableRef<'a> {
    table: &'a mut Table,
    errors: &'a mut Vec<String>,
}

impl TableRef<'_> {
    /// Names the table (its CSV file name), instead of `demo{N}_table{k}`.
    pub fn id(self, id: impl Into<String>) -> Self {
        self.table.id = id.into();
        self
    }

    /// Gives the table a caption (its Markdown heading), instead of the line before it.
    pub fn caption(self, caption: impl Into<String>) -> Self {
        self.table.caption = caption.into();
        self
    }

    /// Left-aligns the columns under `headers` in the terminal whatever their cells look
    /// like (names, of which some start with a digit), and says so in the export
    /// ([`Column::left`]). A header the table does not have is the demo's error.
    pub fn left<'h>(self, headers: impl IntoIterator<Item = &'h str>) -> Self {
        for header in headers {
            match self.table.columns.iter_mut().find(|c| c.header == header) {
                Some(column) => column.left = true,
                None => self
                    .errors
                    .push(format!("table {}: no column {header:?}", self.table.id)),
            }
        }
        self
    }
}

impl Out {
    /// An empty output for demo `number`.
    pub fn new(number: u8) -> Self {
        Out {
            number,
            pieces: Vec::new(),
            data: serde_json::Value::Null,
            typed: None,
            errors: Vec::new(),
            tables: 0,
            figures: 0,
            header: None,
            last_line: None,
        }
    }

    /// The demo's number.
    pub fn number(&self) -> u8 {
        self.number
    }

    /// `print_header(title)`.
    pub fn header(&mut self, title: impl Into<String>) {
        let title = title.into();
        self.header = Some(title.clone());
        self.last_line = None;
        self.pieces.push(Piece::Block(Block::Header(title)));
    }

    /// `print(line)`: a string, or a value ([`crate::value::parts`] for a line with values in
    /// it). A line holding a measured value is masked with it.
    pub fn print(&mut self, line: impl Into<Value>) {
        let line = line.into();
        let text = line.text();
        let block = if line.is_measured() {
            let (template, pieces) = match line.pieces().as_slice() {
                [one] if one.template() == line.template() => ("{}".to_string(), vec![one.clone()]),
                many => (line.template().to_string(), many.to_vec()),
            };
            Block::Line(Line {
                text: text.clone(),
                template,
                parts: pieces.iter().map(|p| cell(p, 1)).collect(),
            })
        } else {
            Block::Text(text.clone())
        };
        // A table captioned by this line names what it shows, not what this run measured:
        // a measured value in the line stands as the mask in the caption, so the caption is
        // the same from run to run.
        let caption = match &block {
            Block::Line(l) => crate::value::fill(
                &l.template,
                l.parts.iter().map(|c| match c.measured {
                    true => crate::value::MASKED.to_string(),
                    false => c.text.clone(),
                }),
            ),
            _ => text,
        };
        let trimmed = caption.trim().trim_end_matches([chrome::COLON, ':']).trim();
        if !trimmed.is_empty() {
            self.last_line = Some(trimmed.to_string());
        }
        self.pieces.push(Piece::Block(block));
    }

    /// `print_table(headers, rows)`: one row of [`Value`]s per row. Each column's data
    /// fields and units come from its values (a [`crate::value::parts`] value gives one field
    /// per part). The table is `demo{N}_table{k}`, captioned by the line printed just before
    /// it (else the header); the returned handle renames it.
    pub fn table<H: Into<String>>(
        &mut self,
        headers: impl IntoIterator<Item = H>,
        rows: impl IntoIterator<Item = Vec<Value>>,
    ) -> TableRef<'_> {
        self.tables += 1;
        let id = format!("demo{}_table{}", self.number, self.tables);
        let caption = match (self.last_line.take(), &self.header) {
            (Some(line), _) => line,
            (None, Some(h)) if self.tables == 1 => h.clone(),
            (None, Some(h)) => chrome::table_caption(h, self.tables),
            (None, None) => id.clone(),
        };
        let headers: Vec<String> = headers.into_iter().map(Into::into).collect();
        let rows: Vec<Vec<Value>> = rows.into_iter().collect();
        let table = match build(id.clone(), caption, &headers, &rows) {
            Ok(t) => t,
            Err(e) => {
                self.errors.push(e);
                Table::new(id, "", Vec::new())
            }
        };
        self.pieces.push(Piece::Block(Block::Table(table)));
        match self.pieces.last_mut() {
            Some(Piece::Block(Block::Table(table))) => TableRef {
                table,
                errors: &mut self.errors,
            },
            _ => unreachable!("a table was just pushed"),
        }
    }

    /// `print_observations(items)`: the numbered sentences that close a demo.
    pub fn observations<T: Into<Observation>>(&mut self, items: impl IntoIterator<Item = T>) {
        self.last_line = None;
        let items = items.into_iter().map(Into::into).collect();
        self.pieces.push(Piece::Observations(items));
    }

    /// A figure (drawn by `--plot` and the HTML page, carried by the JSON export). One
    /// without an id is written to `demo{N}.svg` (`demo{N}_{k}.svg` after the first).
    pub fn figure(&mut self, mut figure: Figure) {
        self.figures += 1;
        if figure.id.is_empty() {
            figure.id = match self.figures {
                1 => format!("demo{}", self.number),
                k => format!("demo{}_{k}", self.number),
            };
        }
        self.pieces.push(Piece::Block(Block::Figure(figure)));
    }

    /// Attaches the demo's typed figures to its section of the JSON export, and keeps them
    /// for [`crate::Ran::data`] (a lecture's claim tests read them there). Only figures computed
    /// from the setup belong here: the mask does not reach into them, so a value measured at
    /// run time goes into a table or a line, where it is masked.
    pub fn data<T: Serialize + 'static>(&mut self, data: T) {
        match serde_json::to_value(&data) {
            Ok(v) => self.data = v,
            Err(e) => self.errors.push(format!("its data is not JSON: {e}")),
        }
        self.typed = Some(Box::new(data));
    }

    /// The typed figures the demo attached ([`Out::data`]), taken out.
    pub(crate) fn take_data(&mut self) -> Option<Box<dyn Any>> {
        self.typed.take()
    }

    /// The section: observations resolved — as written when `as_written`, else the what-if
    /// sentences and the seed sentences behind the marker `default_only`.
    pub(crate) fn finish(self, as_written: bool, default_only: &str) -> Result<Section, Error> {
        if !self.errors.is_empty() {
            return Err(Error::Library(
                format!("demo {}: {}", self.number, self.errors.join("; ")).into(),
            ));
        }
        let mut blocks = Vec::new();
        for piece in self.pieces {
            let items = match piece {
                Piece::Block(b) => {
                    blocks.push(b);
                    continue;
                }
                Piece::Observations(items) => items,
            };
            let mut printed = Vec::new();
            for o in items {
                match (o.holds, as_written) {
                    (Holds::Always, _) | (Holds::Default, true) | (Holds::WhatIf, false) => {
                        printed.push(o.text);
                    }
                    (Holds::WhatIf, true) => {}
                    (Holds::Default, false) => printed.push(format!("{default_only}{}", o.text)),
                }
            }
            blocks.push(Block::Observations(printed));
        }
        if let Some(where_) = blocks.iter().find_map(Block::non_finite) {
            return Err(Error::Library(
                format!(
                    "demo {}: a number that is not finite, in {where_}",
                    self.number
                )
                .into(),
            ));
        }
        Ok(Section {
            id: format!("demo{}", self.number),
            blocks,
            data: self.data,
            unread_flags: Vec::new(),
        })
    }
}

/// One value as a cell of a column of `n_fields` fields.
fn cell(v: &Value, n_fields: usize) -> Cell {
    let values = if v.is_missing() {
        vec![Datum::Missing; n_fields]
    } else {
        v.data()
    };
    Cell {
        text: v.text(),
        values,
        measured: v.is_measured(),
    }
}

/// The table of `rows` under `headers`; errs when a row or a value does not fit its column.
fn build(
    id: String,
    caption: String,
    headers: &[String],
    rows: &[Vec<Value>],
) -> Result<Table, String> {
    let mut columns = Vec::new();
    for (j, header) in headers.iter().enumerate() {
        let mut fields = None;
        for v in rows.iter().filter_map(|r| r.get(j)) {
            let f = v.fields(header).map_err(|e| format!("table {id}: {e}"))?;
            if let (None, Some(f)) = (&fields, f) {
                fields = Some(f);
            }
        }
        let fields = fields.unwrap_or_else(|| vec![(header.clone(), String::new())]);
        columns.push(Column {
            header: header.clone(),
            fields: fields
                .iter()
                .map(|(n, u)| Field::new(n.clone(), u))
                .collect(),
            left: false,
        });
    }
    let mut table = Table::new(id, caption, columns);
    for (i, row) in rows.iter().enumerate() {
        if row.len() != headers.len() {
            return Err(format!(
                "table {}: row {i} has {} values for {} headers",
                table.id,
                row.len(),
                headers.len()
            ));
        }
        table.rows.push(
            row.iter()
                .zip(&table.columns)
                .map(|(v, c)| cell(v, c.fields.len()))
                .collect(),
        );
    }
    table.check()?;
    Ok(table)
}
