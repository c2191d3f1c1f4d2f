//! What the roofline demos are computed for, and the one rule for when the original
//! script's sentences hold as written.

use decode_lab::{Draft, Scenario, TreeRound};
use llm_math::ModelConfig;
use serde::Serialize;

use super::text::{cards, draft_label, memory_line};

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
    /// A measured acceptance length and tree (`--tau`, `--tree-nodes`, depth `--gamma`):
    /// demo 1 then also prints the speedup of that tree.
    pub measured_tree: Option<TreeRound>,
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

    /// The one rule for the original sentences: a demo's seed observations hold as written
    /// exactly when every input the demo `reads` is the default setup's. Otherwise the
    /// demo prints a line computed for this setup and marks the seed's sentences with
    /// [`DEFAULT_ONLY`](super::text::DEFAULT_ONLY).
    pub fn seed_wording_holds(&self, reads: &[Input]) -> bool {
        let d = Setup::default();
        reads.iter().all(|input| match input {
            Input::Hw => self.base.hw == d.base.hw,
            Input::Target => self.base.target == d.base.target,
            Input::Draft => self.base.draft == d.base.draft,
            Input::Alpha => self.base.alpha == d.base.alpha,
            Input::Assumptions => {
                self.base.deployment == d.base.deployment
                    && self.base.overhead_target == d.base.overhead_target
                    && self.base.overhead_draft == d.base.overhead_draft
                    && self.base.verify_cost_per_token == d.base.verify_cost_per_token
                    && self.gamma == d.gamma
            }
            Input::Grid => {
                self.batches == d.batches
                    && self.ctxs == d.ctxs
                    && self.demo1_point() == d.demo1_point()
            }
        })
    }

    /// How the lecture names the cards: "一块 H100", "2 块 H100".
    pub fn cards(&self) -> String {
        cards(self.base.deployment.tp, self.base.hw.name)
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
            format!(
                "{} 块 {} 一共只有 {} GB 显存",
                dep.tp,
                hw.name,
                dep.tp as f64 * hw.memory_bytes / 1e9
            )
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
        use clap::Parser;
        let setup = |args: &[&str]| {
            let argv = std::iter::once("lecture06").chain(args.iter().copied());
            crate::Cli::try_parse_from(argv).unwrap().setup().unwrap()
        };
        assert_eq!(setup(&["--batch", "8,64"]).demo1_point(), (8, DEMO1_CTX));
        assert_eq!(setup(&["--ctx", "32768"]).demo1_point(), (1, 32768));
        // The script's grid typed out: demo 1 still runs at the first value given.
        assert_eq!(setup(&["--ctx", "512,4096,32768"]).demo1_point(), (1, 512));
    }

    #[test]
    fn the_seed_wording_rule_looks_only_at_what_a_demo_reads() {
        let alpha_only = Setup {
            base: Scenario {
                alpha: 0.7,
                ..Scenario::LECTURE
            },
            ..Setup::default()
        };
        assert!(alpha_only.seed_wording_holds(&[Input::Hw, Input::Target, Input::Draft]));
        assert!(!alpha_only.seed_wording_holds(&[Input::Alpha]));
        let h200 = Setup {
            base: Scenario {
                hw: hw_specs::H200,
                ..Scenario::LECTURE
            },
            ..Setup::default()
        };
        assert!(!h200.seed_wording_holds(&[Input::Hw]));
        assert!(h200.seed_wording_holds(&[Input::Target, Input::Draft, Input::Alpha]));
    }
}
