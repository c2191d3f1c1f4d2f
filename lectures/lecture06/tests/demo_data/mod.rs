//! What demos 1–3 export, read back: each demo's JSON `data` as the report carries it
//! (`--format json` prints the same value), deserialized into types written here from the
//! demos' docs. A field the export lacks or adds fails the read, so these types also pin
//! the export's schema; the claim tests then assert on plain typed fields.
#![allow(dead_code)] // each test binary uses some of these

use lecture_kit::Figure;
use lecture06::spec_decode_on_hardware::{Round, Setup, report};
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// Demo `n`'s JSON `data` for `setup`, read as a `T`.
pub fn data<T: DeserializeOwned>(setup: &Setup, n: u8) -> T {
    let report = report(setup, &[n]).unwrap();
    let section = report.sections.into_iter().next().unwrap();
    serde_json::from_value(section.data.clone())
        .unwrap_or_else(|e| panic!("demo {n}'s data does not read back: {e}\n{}", section.data))
}

/// Demo 1's export; `None` where it prints why it cannot compute (its data is then null).
pub fn demo1(setup: &Setup) -> Option<Demo1> {
    data(setup, 1)
}

/// Demo 2's export.
pub fn demo2(setup: &Setup) -> Demo2 {
    data(setup, 2)
}

/// Demo 3's export.
pub fn demo3(setup: &Setup) -> Demo3 {
    data(setup, 3)
}

/// The figures of demos 1–3 for `setup`, as the lecture prints them: knee, batch, trees.
pub fn figures(setup: &Setup) -> [Figure; 3] {
    let report = report(setup, &[1, 2, 3]).unwrap();
    let figures: Vec<Figure> = report.figures().cloned().collect();
    figures.try_into().expect("one figure per demo")
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Demo1 {
    pub batch: u64,
    pub ctx_tokens: u64,
    pub t_base_s: f64,
    pub t_draft_s: f64,
    pub c: f64,
    pub forward: Vec<Forward>,
    pub best: Vec<AlphaBest>,
    pub measured_tree: Option<MeasuredTree>,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Forward {
    pub n: u64,
    pub time_s: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlphaBest {
    pub alpha: f64,
    pub round: Round,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasuredTree {
    pub tau: f64,
    pub depth: u64,
    pub nodes: u64,
    pub speedup: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Demo2 {
    pub alpha: f64,
    pub ctxs_tokens: Vec<u64>,
    pub grid: Vec<GridRow>,
    pub example: Option<Example>,
    pub max_batch: Vec<u64>,
    pub critical_tokens: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridRow {
    pub batch: u64,
    pub cells: Vec<Option<Round>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Example {
    pub t_base_s: f64,
    pub t_verify_s: f64,
    pub compute_bound: bool,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Demo3 {
    pub ctx_tokens: u64,
    pub batches: Vec<u64>,
    pub draft_cost_per_level: f64,
    pub top_k: Vec<u32>,
    pub drafts: Vec<DraftFigures>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DraftFigures {
    pub name: String,
    pub top_k_fraction: Vec<f64>,
    pub shapes: Vec<ShapeFigures>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShapeFigures {
    pub label: String,
    pub branching: Vec<u32>,
    pub nodes: u64,
    pub tau: f64,
    pub speedup: Vec<Option<f64>>,
}
