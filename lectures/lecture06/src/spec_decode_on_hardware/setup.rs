//! What the roofline demos are computed for, and the one rule for when the original
//! script's sentences hold as written.

use decode_lab::{Draft, Scenario, TreeRound};
use hw_specs::{Accelerator, H100};
use llm_math::{Deployment, LLAMA31_8B, LLAMA32_1B, ModelConfig, WeightDtype};
use serde::Serialize;

/// Fixed per-pass overhead of the target, seconds (the script's assumption).
pub const OVERHEAD_T: f64 = 1e-3;
/// Fixed per-pass overhead of the draft, seconds (the script's assumption).
pub const OVERHEAD_D: f64 = 0.3e-3;
/// Demo 2's default acceptance rate.
pub const DEMO2_ALPHA: f64 = 0.8;

/// What the roofline demos are computed for: an accelerator (one or `tp` of them), a
/// target, what drafts for it, demo 2's acceptance rate, and the assumptions of the model
/// (the seed's by default; every one can be replaced from the command line).
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    /// The accelerator.
    pub hw: Accelerator,
    /// The target model.
    pub target: ModelConfig,
    /// What drafts: a model (the seed's Llama-3.2-1B), an EAGLE-like head, a fixed cost, or
    /// the target itself with a bounded KV window.
    pub draft: Draft,
    /// Demo 2's acceptance rate α.
    pub alpha: f64,
    /// Tensor parallelism, dtypes and efficiencies.
    pub deployment: Deployment,
    /// Fixed cost of one target pass, seconds.
    pub overhead_target: f64,
    /// Fixed cost of one draft step, seconds.
    pub overhead_draft: f64,
    /// Extra cost of each verified token beyond the first, in plain target steps.
    pub verify_cost_per_token: f64,
    /// A fixed draft length instead of the best one (engines run a fixed γ).
    pub gamma: Option<u32>,
    /// Demo 2's batch sizes (rows); demo 1 runs at the first.
    pub batches: Vec<u64>,
    /// Demo 2's context lengths (columns); demo 1 runs at the first.
    pub ctxs: Vec<u64>,
    /// A measured acceptance length and tree (`--tau`, `--tree-nodes`, depth `--gamma`):
    /// demo 1 then also prints the speedup of that tree.
    pub measured_tree: Option<TreeRound>,
    /// The calibration profile applied, if any (its name).
    pub calibration: Option<&'static str>,
}

impl Default for Setup {
    /// The original script's setup: one H100, Llama-3.1-8B + Llama-3.2-1B, α = 0.8, and
    /// its assumptions.
    fn default() -> Self {
        Setup {
            hw: H100,
            target: LLAMA31_8B,
            draft: Draft::Model(LLAMA32_1B),
            alpha: DEMO2_ALPHA,
            deployment: Deployment::default(),
            overhead_target: OVERHEAD_T,
            overhead_draft: OVERHEAD_D,
            verify_cost_per_token: 0.0,
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
/// Demo 1's context length, the original script's.
pub const DEMO1_CTX: u64 = 1024;

/// An input of the setup that a demo reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// The accelerator.
    Hw,
    /// The target model.
    Target,
    /// What drafts.
    Draft,
    /// The acceptance rate α.
    Alpha,
    /// The model's assumptions: deployment, overheads, verification cost, fixed γ.
    Assumptions,
    /// Demo 2's batch and context grid (and demo 1's point on it).
    Grid,
}

impl Setup {
    /// The roofline scenario of this setup at `batch`, `ctx` and `alpha`.
    pub fn scenario(&self, batch: u64, ctx: u64, alpha: f64) -> Scenario {
        Scenario {
            hw: self.hw,
            target: self.target,
            draft: self.draft,
            batch,
            ctx,
            alpha,
            deployment: self.deployment,
            overhead_target: self.overhead_target,
            overhead_draft: self.overhead_draft,
            verify_cost_per_token: self.verify_cost_per_token,
        }
    }

    /// Demo 1's batch and context: batch 1 and context 1024, or the first of `--batch`,
    /// the first of `--ctx`, each when that grid is not the script's.
    pub fn demo1_point(&self) -> (u64, u64) {
        let batch = if self.batches == DEMO2_BATCHES {
            1
        } else {
            self.batches[0]
        };
        let ctx = if self.ctxs == DEMO2_CTXS {
            DEMO1_CTX
        } else {
            self.ctxs[0]
        };
        (batch, ctx)
    }

    /// The one rule for the original sentences: a demo's seed observations hold as written
    /// exactly when every input the demo `reads` is the default setup's. Otherwise the
    /// demo prints a line computed for this setup and marks the seed's sentences with
    /// [`DEFAULT_ONLY`](super::text::DEFAULT_ONLY).
    pub fn seed_wording_holds(&self, reads: &[Input]) -> bool {
        let d = Setup::default();
        reads.iter().all(|input| match input {
            Input::Hw => self.hw == d.hw,
            Input::Target => self.target == d.target,
            Input::Draft => self.draft == d.draft,
            Input::Alpha => self.alpha == d.alpha,
            Input::Assumptions => {
                self.deployment == d.deployment
                    && self.overhead_target == d.overhead_target
                    && self.overhead_draft == d.overhead_draft
                    && self.verify_cost_per_token == d.verify_cost_per_token
                    && self.gamma == d.gamma
            }
            Input::Grid => self.batches == d.batches && self.ctxs == d.ctxs,
        })
    }

    /// How the lecture names the cards: "一块 H100", "2 块 H100".
    pub fn cards(&self) -> String {
        if self.deployment.tp == 1 {
            format!("一块 {}", self.hw.name)
        } else {
            format!("{} 块 {}", self.deployment.tp, self.hw.name)
        }
    }

    /// How the lecture names this setup: "一块 H200、Llama-3.1-70B + Llama-3.2-1B".
    pub fn label(&self) -> String {
        format!(
            "{}、{} + {}",
            self.cards(),
            self.target.name,
            self.draft.label()
        )
    }

    /// Why nothing can be computed on these cards, if so: the target's weights alone do
    /// not fit ("放不下"), or the target's and the draft's together do not. `None` when
    /// both fit.
    pub fn weights_problem(&self) -> Result<Option<String>, decode_lab::Error> {
        let (batch, ctx) = self.demo1_point();
        let mem = self.scenario(batch, ctx, self.alpha).memory()?;
        Ok(if mem.target_weights > mem.capacity {
            Some(self.does_not_fit_line())
        } else if !mem.weights_fit() {
            Some(format!(
                "{mem}，这个演示在这块卡上算不出来。换一个小一些的草稿（--draft）、草稿头（--draft-head），或者更多的卡（--tp）。"
            ))
        } else {
            None
        })
    }

    /// The line a demo prints instead of its figures when the target does not fit at all.
    pub fn does_not_fit_line(&self) -> String {
        let dtype = match self.deployment.weights {
            WeightDtype::Bf16 => "bf16",
            WeightDtype::Fp8 => "FP8",
            WeightDtype::Int4 => "INT4",
        };
        let cards = if self.deployment.tp == 1 {
            format!(
                "一块 {} 只有 {} GB 显存",
                self.hw.name,
                self.hw.memory_bytes / 1e9
            )
        } else {
            format!(
                "{} 块 {} 一共只有 {} GB 显存",
                self.deployment.tp,
                self.hw.name,
                self.deployment.tp as f64 * self.hw.memory_bytes / 1e9
            )
        };
        format!(
            "{} 的 {dtype} 权重有 {:.1} GB，{cards}：放不下，这个演示在这块卡上算不出来。\
             换一块显存更大的卡（--hw），或者换一个小一些的目标模型（--target）。",
            self.target.name,
            self.deployment.weights.bytes() * self.target.n_params() as f64 / 1e9,
        )
    }

    /// The setup as data, for the JSON export.
    pub fn data(&self) -> SetupData {
        SetupData {
            hw: HwData {
                name: self.hw.name,
                peak_flops_bf16: self.hw.peak_flops_bf16,
                hbm_bandwidth: self.hw.hbm_bandwidth,
                memory_bytes: self.hw.memory_bytes,
            },
            target: ModelData::of(&self.target),
            draft: self.draft.label(),
            draft_model: match self.draft {
                Draft::Model(m) => Some(ModelData::of(&m)),
                _ => None,
            },
            alpha: self.alpha,
            tp: self.deployment.tp,
            weights: format!("{:?}", self.deployment.weights).to_lowercase(),
            kv: format!("{:?}", self.deployment.kv).to_lowercase(),
            overhead_target_s: self.overhead_target,
            overhead_draft_s: self.overhead_draft,
            compute_efficiency: self.deployment.compute_efficiency,
            bandwidth_efficiency: self.deployment.bandwidth_efficiency,
            verify_cost_per_token: self.verify_cost_per_token,
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

/// Python's `f"{x:.0%}"`: a ratio as a whole percentage.
pub fn percent(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// Python's `f"{alpha}"` (its `repr`): `0.8`, `1.0`, `5e-324` — the shortest form that
/// reads back the same number, with an exponent when it is very small or large.
pub fn python_float(x: f64) -> String {
    format!("{x:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_python_prints_them() {
        assert_eq!(python_float(0.8), "0.8");
        assert_eq!(python_float(0.6), "0.6");
        assert_eq!(python_float(1.0), "1.0");
        assert_eq!(python_float(5e-324), "5e-324");
        assert_eq!(python_float(1e-7), "1e-7");
    }

    #[test]
    fn demo1_runs_at_the_first_of_each_list_given() {
        assert_eq!(Setup::default().demo1_point(), (1, DEMO1_CTX));
        let batch_only = Setup {
            batches: vec![8, 64],
            ..Setup::default()
        };
        assert_eq!(batch_only.demo1_point(), (8, DEMO1_CTX));
        let ctx_only = Setup {
            ctxs: vec![32768],
            ..Setup::default()
        };
        assert_eq!(ctx_only.demo1_point(), (1, 32768));
    }

    #[test]
    fn the_seed_wording_rule_looks_only_at_what_a_demo_reads() {
        let alpha_only = Setup {
            alpha: 0.7,
            ..Setup::default()
        };
        assert!(alpha_only.seed_wording_holds(&[Input::Hw, Input::Target, Input::Draft]));
        assert!(!alpha_only.seed_wording_holds(&[Input::Alpha]));
        let h200 = Setup {
            hw: hw_specs::H200,
            ..Setup::default()
        };
        assert!(!h200.seed_wording_holds(&[Input::Hw]));
        assert!(h200.seed_wording_holds(&[Input::Target, Input::Draft, Input::Alpha]));
    }
}
