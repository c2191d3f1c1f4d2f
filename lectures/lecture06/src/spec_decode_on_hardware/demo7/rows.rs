//! What demo 7 computes, row by row: the figures `measure` makes and the demo prints.

use serde::Serialize;

use crate::spec_decode_on_hardware::demo3::toy_model::ToyModel;

/// What demo 7 computes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Demo7 {
    /// The toy model (named in the export only when it is the trained one).
    #[serde(skip_serializing_if = "ToyModel::is_random")]
    pub model: ToyModel,
    /// Prompts decoded, tokens each.
    pub prompts: usize,
    /// Tokens generated per prompt.
    pub n_new: usize,
    /// Dynamic against static trees, per draft.
    pub trees: Vec<TreeRow>,
    /// Sampled trees.
    pub sampled: Vec<SampledRow>,
    /// Prompt lookup per n.
    pub lookup: Vec<LookupRow>,
    /// Measured time of one lookup, seconds (this machine): in the tables as a measured
    /// value (masked), not in the JSON figures, which stay byte-identical across runs.
    #[serde(skip)]
    pub lookup_seconds: f64,
    /// Layer skip per k.
    pub layer_skip: Vec<SkipRow>,
    /// Medusa's heads per shape and temperature (the trained model only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub medusa: Vec<HeadRow>,
    /// Each Medusa head's held-out top-1, as its file states it (the trained model only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub medusa_top1: Vec<f64>,
    /// EAGLE's head per shape and temperature (the trained model only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub eagle: Vec<HeadRow>,
    /// EAGLE's first guess on held-out text, teacher-forced: how often it is the target's
    /// own, and the text's byte, as its file states them (the trained model only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eagle_agreement: Option<(f64, f64)>,
}

/// A static shape or a dynamic tree of as many nodes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TreeRow {
    /// The draft.
    pub draft: &'static str,
    /// "树 3×3×3" or "动态 6×8≤39".
    pub label: String,
    /// Drafted nodes per round (the budget for a dynamic tree).
    pub nodes: u64,
    /// Measured τ.
    pub tau: f64,
    /// Speedup on the card at each batch of demo 3.
    pub speedup: Vec<f64>,
    /// Whether every output equals the target's greedy one.
    pub identical: bool,
}

/// A tree sampled at T.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SampledRow {
    /// The draft.
    pub draft: &'static str,
    /// The shape.
    pub label: String,
    /// Temperature.
    pub temperature: f64,
    /// Measured τ.
    pub tau: f64,
    /// α per level (per draft position for a chain): of the rounds that reached a level,
    /// the share that accepted a token there (`decode_lab::SpecStats::per_level`); `None`
    /// where no round reached the level.
    pub alphas: Vec<Option<f64>>,
}

/// Prompt lookup with n-grams up to `max_ngram`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LookupRow {
    /// Longest n-gram matched.
    pub max_ngram: u32,
    /// τ on greedy output.
    pub tau_greedy: f64,
    /// τ on sampled output (T = 1).
    pub tau_sampled: f64,
    /// Speedup on the card at each batch, greedy, c from the measured lookup time (a
    /// measured value, like it: not in the JSON figures).
    #[serde(skip)]
    pub speedup: Vec<f64>,
}

/// The target's first k layers as its draft.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkipRow {
    /// Whose first layers (the trained model has two targets; the random one, none named).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<&'static str>,
    /// Toy layers drafting.
    pub layers: usize,
    /// The card target's layers drafting (the same fraction).
    pub card_layers: u64,
    /// Measured τ (greedy chain of [`super::GAMMA`]).
    pub tau: f64,
    /// c on the card at each batch.
    pub c: Vec<f64>,
    /// Speedup on the card at each batch.
    pub speedup: Vec<f64>,
    /// Whether every output equals the target's greedy one.
    pub identical: bool,
}

/// One run of a draft head (Medusa's, EAGLE's): a shape at a temperature.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeadRow {
    /// "链 γ=4", "树 2×2×2".
    pub label: String,
    /// 0: greedy.
    pub temperature: f64,
    /// Drafted nodes per round.
    pub nodes: u64,
    /// Measured τ.
    pub tau: f64,
    /// α per level (`decode_lab::SpecStats::per_level`).
    pub alphas: Vec<Option<f64>>,
    /// Speedup on the card at each batch of demo 3, a level costing what the head reads
    /// there (Medusa: [`super::medusa::card_cost`]; EAGLE: `decode_lab::Draft::Head`).
    pub speedup: Vec<f64>,
    /// Greedy: whether every output equals the target's greedy one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identical: Option<bool>,
}
