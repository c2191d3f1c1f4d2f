//! What the roofline demos are computed for, as the named inputs each demo declares
//! ([`lecture_kit::Inputs`]): the kit gives a demo a view of the setup in which what it does
//! not declare is the default's, and prints the original script's sentences as written
//! exactly when none of its declared inputs changed.

use decode_lab::{Draft, Scenario, TreeShape};
use lecture_kit::Inputs;
use llm_math::{CostTerms, ModelConfig};
use serde::Serialize;

use super::round::Round;
use super::text::{self, cards, draft_label, memory_line};

/// What the roofline demos are computed for: a [`Scenario`] (card or `tp` cards, target,
/// draft, demo 2's α, and the model's assumptions — [`Scenario::LECTURE`] by default, so
/// every default is the library's), demo 1's point on the grid (the scenario's batch and
/// context), and what only the lecture asks (demo 2's grid, a fixed γ, a measured tree).
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    /// Card, models, α, deployment and overheads; its batch and context are demo 1's.
    pub base: Scenario,
    /// A fixed draft length instead of the best one (engines run a fixed γ).
    pub gamma: Option<u32>,
    /// Demo 2's batch sizes (rows).
    pub batches: Vec<u64>,
    /// Demo 2's context lengths (columns).
    pub ctxs: Vec<u64>,
    /// A tree known by its size (depth `--gamma`, `--tree-nodes`) and its measured
    /// acceptance length (`--tau`, tokens per round): demo 1 then also prints its speedup.
    pub measured_tree: Option<(TreeShape, f64)>,
    /// The calibration profile applied, if any (its name).
    pub calibration: Option<&'static str>,
}

impl Default for Setup {
    /// The original script's setup: [`Scenario::LECTURE`] and its grid.
    fn default() -> Self {
        Setup {
            base: Scenario::LECTURE,
            gamma: None,
            batches: DEMO2_BATCHES.to_vec(),
            ctxs: DEMO2_CTXS.to_vec(),
            measured_tree: None,
            calibration: None,
        }
    }
}

/// Demo 2's batch sizes (rows), the original script's.
pub const DEMO2_BATCHES: [u64; 6] = [1, 16, 64, 128, 256, 512];
/// Demo 2's context lengths (columns), the original script's.
pub const DEMO2_CTXS: [u64; 3] = [512, 4096, 32768];
/// Demo 1's context length, the original script's (the lecture scenario's).
pub const DEMO1_CTX: u64 = Scenario::LECTURE.ctx;

/// An input of the setup that a demo reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// The accelerator (`--hw`).
    Hw,
    /// The target model (`--target`).
    Target,
    /// What drafts (`--draft`, `--draft-head`, `--draft-cost`, `--draft-kv-window`).
    Draft,
    /// Demo 2's acceptance rate α (`--alpha`).
    Alpha,
    /// The model's assumptions: cards, dtypes, efficiencies, the target's overhead, the
    /// verification and round costs (`--tp`, `--weights`, `--kv`, `--eff-*`,
    /// `--overhead-target`, `--calibration`, the cost terms).
    Assumptions,
    /// What a draft step costs beyond its roofline pass (`--overhead-draft`,
    /// `--draft-layer-ms`; a calibration profile sets them too): nothing to a demo that
    /// drafts at a fixed cost.
    DraftCosts,
    /// A fixed draft length instead of the best one (`--gamma`).
    Gamma,
    /// A measured tree (`--tau`, `--tree-nodes`).
    Tree,
    /// Demo 2's batch and context grid and demo 1's point on it (`--batch`, `--ctx`).
    Grid,
}

/// The units of the raw numbers in the JSON export, by field-name pattern.
pub const UNITS: [(&str, &str); 6] = [
    ("*_s", "seconds"),
    ("*_tokens, n, gamma, nodes", "tokens"),
    ("*_bytes, *_bytes_per_token", "bytes"),
    ("peak_flops_bf16", "FLOP/s"),
    ("hbm_bandwidth", "bytes/s"),
    (
        "speedup, c, *_ratio, expected_tokens, tau*, *_fraction, alpha",
        "dimensionless",
    ),
];

impl Inputs for Setup {
    type Input = Input;
    const INPUTS: &'static [Input] = &[
        Input::Hw,
        Input::Target,
        Input::Draft,
        Input::Alpha,
        Input::Assumptions,
        Input::DraftCosts,
        Input::Gamma,
        Input::Tree,
        Input::Grid,
    ];
    const UNITS: &'static [(&'static str, &'static str)] = &UNITS;

    fn flags(input: Input) -> &'static [&'static str] {
        match input {
            Input::Hw => &["--hw"],
            Input::Target => &["--target"],
            Input::Draft => &[
                "--draft",
                "--draft-head",
                "--draft-cost",
                "--draft-kv-window",
            ],
            Input::Alpha => &["--alpha"],
            Input::Assumptions => &[
                "--tp",
                "--weights",
                "--kv",
                "--eff-compute",
                "--eff-bandwidth",
                "--overhead-target",
                "--calibration",
                "--overlap",
                "--verify-us-per-token",
                "--round-overhead-ms",
                "--round-overhead-per-seq-ms",
                "--fp8-bandwidth-factor",
                "--fp8-compute-factor",
                "--all-reduce-us",
            ],
            Input::DraftCosts => &["--overhead-draft", "--draft-layer-ms"],
            Input::Gamma => &["--gamma"],
            Input::Tree => &["--tau", "--tree-nodes"],
            Input::Grid => &["--batch", "--ctx"],
        }
    }

    fn same(&self, other: &Self, input: Input) -> bool {
        let (a, b) = (&self.base, &other.base);
        match input {
            Input::Hw => a.hw == b.hw,
            Input::Target => a.target == b.target,
            Input::Draft => a.draft == b.draft,
            Input::Alpha => a.alpha == b.alpha,
            Input::Assumptions => {
                let without_draft = |s: &Scenario| CostTerms {
                    draft_per_layer: 0.0,
                    ..s.cost_terms
                };
                a.deployment == b.deployment
                    && a.overhead_target == b.overhead_target
                    && a.verify_cost_per_token == b.verify_cost_per_token
                    && without_draft(a) == without_draft(b)
            }
            Input::DraftCosts => {
                a.overhead_draft == b.overhead_draft
                    && a.cost_terms.draft_per_layer == b.cost_terms.draft_per_layer
            }
            Input::Gamma => self.gamma == other.gamma,
            Input::Tree => self.measured_tree == other.measured_tree,
            Input::Grid => {
                self.batches == other.batches
                    && self.ctxs == other.ctxs
                    && (a.batch, a.ctx) == (b.batch, b.ctx)
            }
        }
    }

    fn take(&mut self, input: Input, from: &Self) {
        let (a, b) = (&mut self.base, &from.base);
        match input {
            Input::Hw => a.hw = b.hw,
            Input::Target => a.target = b.target,
            Input::Draft => a.draft = b.draft,
            Input::Alpha => a.alpha = b.alpha,
            Input::Assumptions => {
                a.deployment = b.deployment;
                a.overhead_target = b.overhead_target;
                a.verify_cost_per_token = b.verify_cost_per_token;
                a.cost_terms = CostTerms {
                    draft_per_layer: a.cost_terms.draft_per_layer,
                    ..b.cost_terms
                };
                self.calibration = from.calibration;
            }
            Input::DraftCosts => {
                a.overhead_draft = b.overhead_draft;
                a.cost_terms.draft_per_layer = b.cost_terms.draft_per_layer;
            }
            Input::Gamma => self.gamma = from.gamma,
            Input::Tree => self.measured_tree = from.measured_tree.clone(),
            Input::Grid => {
                (a.batch, a.ctx) = (b.batch, b.ctx);
                self.batches.clone_from(&from.batches);
                self.ctxs.clone_from(&from.ctxs);
            }
        }
    }

    fn default_only(sentence: &str) -> String {
        text::default_only(sentence)
    }

    /// The scenario of each context the demo reads (the grid's, or demo 1's) can exist;
    /// the draft is checked only for a demo that reads it (demo 3 drafts at a fixed cost,
    /// whatever `--draft` says). A draft that does not fit is printed, not refused.
    fn check(&self, reads: &[Input]) -> Result<(), String> {
        let ctxs = if reads.contains(&Input::Grid) {
            &self.ctxs[..]
        } else {
            &[self.base.ctx][..]
        };
        for &ctx in ctxs {
            let s = self.scenario(self.batches[0], ctx, self.base.alpha);
            let checked = if reads.contains(&Input::Draft) {
                s.validate()
            } else {
                s.validate_target()
            };
            match checked {
                Ok(()) | Err(decode_lab::Error::DraftDoesNotFit(_)) => {}
                Err(e) => return Err(e.to_string()),
            }
        }
        Ok(())
    }

    fn export(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::to_value(self.data())
    }
}

impl Setup {
    /// The roofline scenario of this setup at `batch`, `ctx` and `alpha`.
    pub fn scenario(&self, batch: u64, ctx: u64, alpha: f64) -> Scenario {
        Scenario {
            batch,
            ctx,
            alpha,
            ..self.base
        }
    }

    /// Demo 1's batch and context: the first of `--batch` and the first of `--ctx`, each
    /// when given; batch 1 and context 1024 otherwise.
    pub fn demo1_point(&self) -> (u64, u64) {
        (self.base.batch, self.base.ctx)
    }

    /// The largest batch the target holds at `ctx` on the setup's cards, at its dtypes
    /// (the draft not counted, the script's rule).
    pub fn max_batch(&self, ctx: u64) -> Result<u64, decode_lab::Error> {
        Ok(self.scenario(1, ctx, self.base.alpha).memory()?.max_batch)
    }

    /// The largest batch the demos can run at `ctx`: [`Setup::max_batch`], or 0 when the
    /// weights do not fit ([`Setup::weights_problem`]).
    pub fn fitting_batch(&self, ctx: u64) -> Result<u64, decode_lab::Error> {
        match self.weights_problem()? {
            Some(_) => Ok(0),
            None => self.max_batch(ctx),
        }
    }

    /// The round demos 1 and 2 print at `batch`, `ctx` and `alpha`: the best γ, or the
    /// fixed one (`--gamma`).
    pub fn round(&self, batch: u64, ctx: u64, alpha: f64) -> Result<Round, decode_lab::Error> {
        Round::of(&self.scenario(batch, ctx, alpha), self.gamma)
    }

    /// [`Setup::round`] at the setup's α where `batch` fits at `ctx`
    /// ([`Setup::fitting_batch`]), `None` where it does not (demo 2's "放不下").
    pub fn fitting_round(&self, batch: u64, ctx: u64) -> Result<Option<Round>, decode_lab::Error> {
        let fits = batch <= self.fitting_batch(ctx)?;
        fits.then(|| self.round(batch, ctx, self.base.alpha))
            .transpose()
    }

    /// How the tables name their γ: "固定 γ" when `--gamma` fixes it, else "最优 γ".
    pub fn gamma_name(&self) -> &'static str {
        match self.gamma {
            Some(_) => "固定 γ",
            None => "最优 γ",
        }
    }

    /// The memory of the setup's cards together, GB.
    pub fn memory_gb(&self) -> f64 {
        self.base.deployment.tp as f64 * self.base.hw.memory_bytes / 1e9
    }

    /// How the lecture names the cards: "一块 H100", "2 块 H100".
    pub fn cards(&self) -> String {
        cards(self.base.deployment.tp, self.base.hw.name)
    }

    /// The card by its name alone, or the cards when there are several: "H100", "4 块 H100".
    pub fn hw_name(&self) -> String {
        match self.base.deployment.tp {
            1 => self.base.hw.name.to_string(),
            _ => self.cards(),
        }
    }

    /// How the lecture names this setup: "一块 H200、Llama-3.1-70B + Llama-3.2-1B".
    pub fn label(&self) -> String {
        format!(
            "{}、{} + {}",
            self.cards(),
            self.base.target.name,
            draft_label(&self.base.draft)
        )
    }

    /// Why nothing can be computed on these cards, if so: the target's weights alone do
    /// not fit ("放不下"), or the target's and the draft's together do not. `None` when
    /// both fit.
    pub fn weights_problem(&self) -> Result<Option<String>, decode_lab::Error> {
        let mem = self.base.memory()?;
        Ok(if !mem.target_fits() {
            Some(self.does_not_fit_line())
        } else if !mem.weights_fit() {
            Some(format!(
                "{}，这个演示在这块卡上算不出来。换一个小一些的草稿（--draft）、草稿头（--draft-head），或者更多的卡（--tp）。",
                memory_line(&mem)
            ))
        } else {
            None
        })
    }

    /// The line a demo prints instead of its figures when the target does not fit at all.
    pub fn does_not_fit_line(&self) -> String {
        let Scenario {
            hw,
            target,
            deployment: dep,
            ..
        } = self.base;
        let memory = if dep.tp == 1 {
            format!("一块 {} 只有 {} GB 显存", hw.name, hw.memory_bytes / 1e9)
        } else {
            let gb = self.memory_gb();
            format!("{} 块 {} 一共只有 {gb} GB 显存", dep.tp, hw.name)
        };
        format!(
            "{} 的 {} 权重有 {:.1} GB，{memory}：放不下，这个演示在这块卡上算不出来。\
             换一块显存更大的卡（--hw），或者换一个小一些的目标模型（--target）。",
            target.name,
            dep.weights,
            dep.weights.bytes() * target.n_params() as f64 / 1e9,
        )
    }

    /// The setup as data, for the JSON export.
    pub fn data(&self) -> SetupData {
        let Scenario {
            hw,
            target,
            draft,
            alpha,
            deployment,
            ..
        } = self.base;
        SetupData {
            hw: HwData {
                name: hw.name,
                peak_flops_bf16: hw.peak_flops_bf16,
                hbm_bandwidth: hw.hbm_bandwidth,
                memory_bytes: hw.memory_bytes,
            },
            target: ModelData::of(&target),
            draft: draft_label(&draft),
            draft_model: match draft {
                Draft::Model(m) => Some(ModelData::of(&m)),
                _ => None,
            },
            alpha,
            tp: deployment.tp,
            weights: deployment.weights.to_string(),
            kv: deployment.kv.to_string(),
            overhead_target_s: self.base.overhead_target,
            overhead_draft_s: self.base.overhead_draft,
            compute_efficiency: deployment.compute_efficiency,
            bandwidth_efficiency: deployment.bandwidth_efficiency,
            verify_cost_per_token: self.base.verify_cost_per_token,
            gamma: self.gamma,
            batches: self.batches.clone(),
            ctxs_tokens: self.ctxs.clone(),
            calibration: self.calibration,
        }
    }
}

/// [`Setup`] as exported: raw numbers, units per the report's unit table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SetupData {
    /// The accelerator.
    pub hw: HwData,
    /// The target model.
    pub target: ModelData,
    /// What drafts, as the lecture names it.
    pub draft: String,
    /// The draft model, when a model drafts.
    pub draft_model: Option<ModelData>,
    /// Demo 2's acceptance rate.
    pub alpha: f64,
    /// Tensor parallelism: cards.
    pub tp: u64,
    /// Weight dtype.
    pub weights: String,
    /// KV-cache dtype.
    pub kv: String,
    /// The target's fixed per-pass overhead, seconds.
    pub overhead_target_s: f64,
    /// The draft's fixed per-pass overhead, seconds.
    pub overhead_draft_s: f64,
    /// Fraction of peak FLOP/s reached.
    pub compute_efficiency: f64,
    /// Fraction of peak bandwidth reached.
    pub bandwidth_efficiency: f64,
    /// Extra cost per verified token beyond the first, in plain target steps.
    pub verify_cost_per_token: f64,
    /// The fixed γ, if any.
    pub gamma: Option<u32>,
    /// Demo 2's batch sizes.
    pub batches: Vec<u64>,
    /// Demo 2's contexts.
    pub ctxs_tokens: Vec<u64>,
    /// The calibration profile applied.
    pub calibration: Option<&'static str>,
}

/// An accelerator as exported.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HwData {
    /// Its name.
    pub name: &'static str,
    /// Peak dense bf16, FLOP/s.
    pub peak_flops_bf16: f64,
    /// Peak memory bandwidth, bytes/s.
    pub hbm_bandwidth: f64,
    /// Memory, bytes.
    pub memory_bytes: f64,
}

/// A model as exported.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelData {
    /// Its name.
    pub name: &'static str,
    /// Parameters.
    pub n_params: u64,
    /// Parameters a forward pass multiplies by.
    pub streamed_params: u64,
    /// KV cache bytes per token.
    pub kv_bytes_per_token: u64,
    /// Layers.
    pub n_layers: u64,
    /// Hidden size.
    pub d_model: u64,
}

impl ModelData {
    fn of(m: &ModelConfig) -> Self {
        ModelData {
            name: m.name,
            n_params: m.n_params(),
            streamed_params: m.streamed_params(),
            kv_bytes_per_token: m.kv_bytes_per_token(),
            n_layers: m.n_layers,
            d_model: m.d_model,
        }
    }
}
