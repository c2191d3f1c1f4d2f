//! What the roofline demos are computed for, and the one rule for when the original
//! script's sentences hold as written.

use decode_lab::{Draft, Scenario};
use hw_specs::{Accelerator, H100};
use llm_math::{LLAMA31_8B, LLAMA32_1B, ModelConfig};
use serde::Serialize;

/// Fixed per-pass overhead of the target, seconds (the script's assumption).
pub const OVERHEAD_T: f64 = 1e-3;
/// Fixed per-pass overhead of the draft, seconds (the script's assumption).
pub const OVERHEAD_D: f64 = 0.3e-3;
/// Demo 2's default acceptance rate.
pub const DEMO2_ALPHA: f64 = 0.8;

/// What the roofline demos are computed for: one accelerator, a target and a draft
/// model, and demo 2's acceptance rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setup {
    /// The accelerator.
    pub hw: Accelerator,
    /// The target model.
    pub target: ModelConfig,
    /// The draft model.
    pub draft: ModelConfig,
    /// Demo 2's acceptance rate α.
    pub alpha: f64,
}

impl Default for Setup {
    /// The original script's setup: one H100, Llama-3.1-8B + Llama-3.2-1B, α = 0.8.
    fn default() -> Self {
        Setup {
            hw: H100,
            target: LLAMA31_8B,
            draft: LLAMA32_1B,
            alpha: DEMO2_ALPHA,
        }
    }
}

/// An input of the setup that a demo reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// The accelerator.
    Hw,
    /// The target model.
    Target,
    /// The draft model.
    Draft,
    /// The acceptance rate α.
    Alpha,
}

impl Setup {
    /// The roofline scenario of this setup at `batch`, `ctx` and `alpha`, with the
    /// script's overheads and a model draft.
    pub fn scenario(&self, batch: u64, ctx: u64, alpha: f64) -> Scenario {
        Scenario {
            hw: self.hw,
            target: self.target,
            draft: Draft::Model(self.draft),
            batch,
            ctx,
            alpha,
            overhead_target: OVERHEAD_T,
            overhead_draft: OVERHEAD_D,
            ..Scenario::lecture()
        }
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
        })
    }

    /// How the lecture names this setup: "一块 H200、Llama-3.1-70B + Llama-3.2-1B".
    pub fn label(&self) -> String {
        format!(
            "一块 {}、{} + {}",
            self.hw.name, self.target.name, self.draft.name
        )
    }

    /// The line a demo prints instead of its figures when the target does not fit at all.
    pub fn does_not_fit_line(&self) -> String {
        format!(
            "{} 的 bf16 权重有 {:.1} GB，一块 {} 只有 {} GB 显存：放不下，这个演示在这块卡上算不出来。\
             换一块显存更大的卡（--hw），或者换一个小一些的目标模型（--target）。",
            self.target.name,
            2.0 * self.target.n_params() as f64 / 1e9,
            self.hw.name,
            self.hw.memory_bytes / 1e9,
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
            draft: ModelData::of(&self.draft),
            alpha: self.alpha,
            overhead_target_s: OVERHEAD_T,
            overhead_draft_s: OVERHEAD_D,
            compute_efficiency: llm_math::COMPUTE_EFFICIENCY,
            bandwidth_efficiency: llm_math::BANDWIDTH_EFFICIENCY,
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
    /// The draft model.
    pub draft: ModelData,
    /// Demo 2's acceptance rate.
    pub alpha: f64,
    /// The target's fixed per-pass overhead, seconds.
    pub overhead_target_s: f64,
    /// The draft's fixed per-pass overhead, seconds.
    pub overhead_draft_s: f64,
    /// Fraction of peak FLOP/s reached.
    pub compute_efficiency: f64,
    /// Fraction of peak bandwidth reached.
    pub bandwidth_efficiency: f64,
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
