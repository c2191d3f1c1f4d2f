//! The roofline held against published measurements: decode step times and
//! speculative-decoding speedups from serving-framework docs, vendor blogs and engine
//! pull requests, each with its citation, and what this crate predicts for it under two
//! named profiles of assumptions.
//!
//! - [`SEED`]: lecture 6's assumptions (60% of peak FLOP/s, 80% of peak bandwidth, 1 ms
//!   per target pass, 0.3 ms per draft step, verification costed by the roofline alone,
//!   free all-reduces).
//! - [`FITTED`]: the same model with its overheads, bandwidth efficiency, all-reduce
//!   latency and verification cost per extra token fitted ([`fit_calibration`]) on the
//!   measurements marked [`Role::Calibration`], and judged on the [`Role::HeldOut`] rest.
//!
//! Every prediction is computed here ([`predictions`]); nothing predicted is typed in.
//! `docs/validation.md` is generated from [`markdown`], and a test checks it is current.
//!
//! A measured figure often depends on things the roofline does not see (the context
//! length the benchmark reached, prefill work mixed into decode steps at high
//! concurrency, CUDA graphs, the sampler): each row says what was assumed.

use crate::Error;
use crate::{Draft, Scenario, TreeRound, target_pass_time, tree_speedup};
use hw_specs::{Accelerator, H100, H200};
use llm_math::{Deployment, KvDtype, LLAMA31_8B, LLAMA33_70B, ModelConfig, QWEN3_8B, WeightDtype};

/// A named set of the roofline's free constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// Name a command line selects it by (`--calibration NAME`).
    pub name: &'static str,
    /// Fraction of peak FLOP/s reached.
    pub compute_efficiency: f64,
    /// Fraction of peak memory bandwidth reached.
    pub bandwidth_efficiency: f64,
    /// Fixed cost of a target pass, seconds.
    pub overhead_target: f64,
    /// Fixed cost of a draft step, seconds.
    pub overhead_draft: f64,
    /// Extra cost per verified token beyond the first, fraction of a plain step
    /// ([`Scenario::verify_cost_per_token`]).
    pub verify_cost_per_token: f64,
    /// Fixed cost of one tensor-parallel all-reduce, seconds
    /// ([`Deployment::all_reduce_latency`]).
    pub all_reduce_latency: f64,
}

/// Lecture 6's assumptions, as the seed script states them.
/// Read from [`Scenario::LECTURE`], the one default setup.
pub const SEED: Calibration = Calibration {
    name: "seed",
    compute_efficiency: Scenario::LECTURE.deployment.compute_efficiency,
    bandwidth_efficiency: Scenario::LECTURE.deployment.bandwidth_efficiency,
    overhead_target: Scenario::LECTURE.overhead_target,
    overhead_draft: Scenario::LECTURE.overhead_draft,
    verify_cost_per_token: Scenario::LECTURE.verify_cost_per_token,
    all_reduce_latency: Scenario::LECTURE.deployment.all_reduce_latency,
};

/// The constants [`fit_calibration`] finds on the calibration subset (a test recomputes
/// them): grid points of [`FIT_GRID`], so the equality is exact.
pub const FITTED: Calibration = Calibration {
    name: "fitted",
    compute_efficiency: Scenario::LECTURE.deployment.compute_efficiency,
    // Written as the grid computes them (step × index), so they compare equal.
    bandwidth_efficiency: 74.0 / 100.0,
    overhead_target: 5.0 * 0.05e-3,
    overhead_draft: 53.0 * 0.01e-3,
    verify_cost_per_token: 4.0 * 0.0025,
    all_reduce_latency: 50.0 * 0.5e-6,
};

/// Every named profile, in the order a `--list` would show them.
pub const CALIBRATIONS: &[Calibration] = &[SEED, FITTED];

/// Looks a profile up by name (case-insensitive).
///
/// Errors: an unknown name, with the list of known ones.
pub fn calibration(name: &str) -> Result<&'static Calibration, Error> {
    CALIBRATIONS
        .iter()
        .find(|c| c.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            let names: Vec<&str> = CALIBRATIONS.iter().map(|c| c.name).collect();
            Error::Argument(format!(
                "unknown calibration \"{name}\"; choose one of: {}",
                names.join(", ")
            ))
        })
}

impl Calibration {
    /// `s` with this profile's constants in place of its own (card, models, batch,
    /// context, tensor parallelism and dtypes are kept).
    pub fn apply(&self, s: Scenario) -> Scenario {
        Scenario {
            deployment: Deployment {
                compute_efficiency: self.compute_efficiency,
                bandwidth_efficiency: self.bandwidth_efficiency,
                all_reduce_latency: self.all_reduce_latency,
                ..s.deployment
            },
            overhead_target: self.overhead_target,
            overhead_draft: self.overhead_draft,
            verify_cost_per_token: self.verify_cost_per_token,
            ..s
        }
    }
}

/// Whether a measurement was used to fit [`FITTED`] or is held out to judge it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Used by [`fit_calibration`].
    Calibration,
    /// Not used by the fit; the profile is judged on it.
    HeldOut,
}

/// A published figure, in the units its source prints.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Published {
    /// Output tokens per second of one sequence at batch 1 (the step time is its inverse).
    TokensPerSecond(f64),
    /// Inter-token latency, milliseconds (one decode step at the stated concurrency).
    ItlMs(f64),
    /// Throughput with and without speculation, tokens/s (speedup = with / without).
    ThroughputPair {
        /// With speculative decoding.
        with: f64,
        /// Without.
        without: f64,
    },
    /// Time per output token with and without speculation, ms (speedup = without / with).
    TpotPair {
        /// With speculative decoding.
        with: f64,
        /// Without.
        without: f64,
    },
}

impl Published {
    /// The figure the model predicts: a step time in seconds, or a speedup.
    pub fn measured(&self) -> f64 {
        match *self {
            Published::TokensPerSecond(t) => 1.0 / t,
            Published::ItlMs(ms) => ms * 1e-3,
            Published::ThroughputPair { with, without } => with / without,
            Published::TpotPair { with, without } => without / with,
        }
    }

    /// As the source prints it.
    pub fn as_printed(&self) -> String {
        match *self {
            Published::TokensPerSecond(t) => format!("{t} tokens/s"),
            Published::ItlMs(ms) => format!("ITL {ms} ms"),
            Published::ThroughputPair { with, without } => {
                format!("{without} → {with} tokens/s")
            }
            Published::TpotPair { with, without } => format!("TPOT {without} → {with} ms"),
        }
    }
}

/// What the measurement measures, as the model computes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Quantity {
    /// One plain decode step of the target ([`target_pass_time`] with n = 1), seconds.
    StepTime,
    /// The speedup of a speculative round with a draft head and a measured acceptance
    /// length ([`tree_speedup`] with τ = the published acceptance length).
    Speedup(TreeRound),
}

/// One published measurement and the setup it was taken in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measurement {
    /// Short id used in the tables (M1, M2, …).
    pub id: &'static str,
    /// Who published it, and where (title, table or comment).
    pub source: &'static str,
    /// Its address.
    pub url: &'static str,
    /// The setup in words, with every assumption this table adds.
    pub setup: &'static str,
    /// The card.
    pub hw: Accelerator,
    /// The model served.
    pub target: ModelConfig,
    /// Tensor parallelism.
    pub tp: u64,
    /// Weight dtype.
    pub weights: WeightDtype,
    /// KV-cache dtype.
    pub kv: KvDtype,
    /// Sequences decoded together (concurrency).
    pub batch: u64,
    /// Context length assumed for the step, tokens.
    pub ctx: u64,
    /// What is measured.
    pub quantity: Quantity,
    /// The figure as published.
    pub published: Published,
    /// Fit or judge.
    pub role: Role,
}

impl Measurement {
    /// The scenario this measurement runs in under `profile`: the published setup, with
    /// an EAGLE-like draft head for speedups.
    pub fn scenario(&self, profile: &Calibration) -> Scenario {
        profile.apply(Scenario {
            hw: self.hw,
            target: self.target,
            // A step time does not depend on the draft; a speedup uses the EAGLE-like head.
            draft: Draft::Head,
            batch: self.batch,
            ctx: self.ctx,
            deployment: Deployment {
                tp: self.tp,
                weights: self.weights,
                kv: self.kv,
                ..Deployment::LECTURE
            },
            ..Scenario::LECTURE
        })
    }

    /// What the model predicts under `profile`: seconds for a step, × for a speedup.
    ///
    /// Errors: whatever the roofline rejects for the setup (none of the table's do).
    pub fn predict(&self, profile: &Calibration) -> Result<f64, Error> {
        let s = self.scenario(profile);
        match self.quantity {
            Quantity::StepTime => target_pass_time(&s, 1),
            Quantity::Speedup(tree) => tree_speedup(&s, &tree),
        }
    }

    /// The command line that asks lecture 6 the same question (flags of issue 13).
    pub fn command(&self, profile: &Calibration) -> String {
        // Every row runs with the EAGLE-like head ([`Measurement::scenario`]); a step time
        // does not depend on it, and it drafts for any target (no tokenizer to match).
        let mut c = format!(
            "cargo run -p lecture06 -- --hw {} --target {} --tp {} --weights {} --kv {} --batch {} --ctx {} --calibration {} --draft-head",
            self.hw.name,
            self.target.name,
            self.tp,
            self.weights,
            self.kv,
            self.batch,
            self.ctx,
            profile.name
        );
        if let Quantity::Speedup(t) = self.quantity {
            c.push_str(&format!(
                " --gamma {} --tree-nodes {} --tau {}",
                t.depth, t.nodes, t.tau
            ));
        }
        c
    }
}

const NIM: &str = "NVIDIA NIM LLM Benchmarking, \"Performance\": Llama-3.3-70b-instruct, NIM 1.8.0, \
                   2 x H100 80G, fp8 TP2";
const NIM_URL: &str = "https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance";
const SGL_4716: &str = "SGLang PR #4716 \"Fix EAGLE3 for llama3.3 70b\", comment of 2025-03-24 \
                        (H100 TP8, MT-bench, 80 questions)";
const SGL_4716_URL: &str = "https://github.com/sgl-project/sglang/pull/4716";
const VLLM_20780: &str =
    "vLLM issue #20780, table \"TPOT ms, BS 1\" and \"AL\" (2025-07-10), Llama 3.1 8B, MT-bench";
const VLLM_20780_URL: &str = "https://github.com/vllm-project/vllm/issues/20780";

/// The published measurements, in the order of `docs/validation.md`.
pub const MEASUREMENTS: &[Measurement] = &[
    Measurement {
        id: "M1",
        source: "SGLang docs, \"Speculative Decoding\", Performance Highlights (figures from the EAGLE-3 paper)",
        url: "https://docs.sglang.io/advanced_features/speculative_decoding.html",
        setup: "Llama-3.1-8B-Instruct, 1×H100, bf16, one request, MT-bench; context assumed 512",
        hw: H100,
        target: LLAMA31_8B,
        tp: 1,
        weights: WeightDtype::Bf16,
        kv: KvDtype::Bf16,
        batch: 1,
        ctx: 512,
        quantity: Quantity::StepTime,
        published: Published::TokensPerSecond(158.34),
        role: Role::Calibration,
    },
    Measurement {
        id: "M2",
        source: "vLLM PR #16937 \"[V1][Spec Decode] EAGLE-3 Support\", comment of 2025-04-24 (\"Output tokens/s on H100 BS1\")",
        url: "https://github.com/vllm-project/vllm/pull/16937",
        setup: "Llama-3.1-8B-Instruct, 1×H100, bf16, batch 1, MT-bench, vanilla decoding; context assumed 512",
        hw: H100,
        target: LLAMA31_8B,
        tp: 1,
        weights: WeightDtype::Bf16,
        kv: KvDtype::Bf16,
        batch: 1,
        ctx: 512,
        quantity: Quantity::StepTime,
        published: Published::TokensPerSecond(133.0),
        role: Role::HeldOut,
    },
    Measurement {
        id: "M3",
        source: "SafeAILab/EAGLE issue #211, comment of 2025-07-02 (Tengyun team: SGLang, one H200)",
        url: "https://github.com/SafeAILab/EAGLE/issues/211",
        setup: "Qwen3-8B, 1×H200, bf16, SGLang, one request, without speculation; context assumed 1024",
        hw: H200,
        target: QWEN3_8B,
        tp: 1,
        weights: WeightDtype::Bf16,
        kv: KvDtype::Bf16,
        batch: 1,
        ctx: 1024,
        quantity: Quantity::StepTime,
        published: Published::TokensPerSecond(186.0),
        role: Role::HeldOut,
    },
    Measurement {
        id: "M4",
        source: "NVIDIA Technical Blog, \"Boost Llama 3.3 70B Inference Throughput 3x with NVIDIA TensorRT-LLM Speculative Decoding\" (Dec 2024), no-draft row",
        url: "https://developer.nvidia.com/blog/boost-llama-3-3-70b-inference-throughput-3x-with-nvidia-tensorrt-llm-speculative-decoding/",
        setup: "Llama-3.3-70B-Instruct, TensorRT-LLM, FP8, batch 1, one H200 (as the blog's setup is summarised elsewhere; \
                the excerpt available here gives the figure only); KV assumed bf16, context assumed 1024",
        hw: H200,
        target: LLAMA33_70B,
        tp: 1,
        weights: WeightDtype::Fp8,
        kv: KvDtype::Bf16,
        batch: 1,
        ctx: 1024,
        quantity: Quantity::StepTime,
        published: Published::TokensPerSecond(51.14),
        role: Role::HeldOut,
    },
    Measurement {
        id: "M5",
        source: NIM,
        url: NIM_URL,
        setup: "5000 input / 500 output tokens, concurrency 1; context taken as 5000 + 250 (mid-decode); KV assumed bf16",
        hw: H100,
        target: LLAMA33_70B,
        tp: 2,
        weights: WeightDtype::Fp8,
        kv: KvDtype::Bf16,
        batch: 1,
        ctx: 5250,
        quantity: Quantity::StepTime,
        published: Published::ItlMs(18.58),
        role: Role::Calibration,
    },
    Measurement {
        id: "M6",
        source: NIM,
        url: NIM_URL,
        setup: "5000 input / 500 output tokens, concurrency 5; context 5250; KV assumed bf16",
        hw: H100,
        target: LLAMA33_70B,
        tp: 2,
        weights: WeightDtype::Fp8,
        kv: KvDtype::Bf16,
        batch: 5,
        ctx: 5250,
        quantity: Quantity::StepTime,
        published: Published::ItlMs(21.83),
        role: Role::HeldOut,
    },
    Measurement {
        id: "M7",
        source: NIM,
        url: NIM_URL,
        setup: "5000 input / 500 output tokens, concurrency 25 (new requests' prefills share the steps); context 5250; KV assumed bf16",
        hw: H100,
        target: LLAMA33_70B,
        tp: 2,
        weights: WeightDtype::Fp8,
        kv: KvDtype::Bf16,
        batch: 25,
        ctx: 5250,
        quantity: Quantity::StepTime,
        published: Published::ItlMs(38.75),
        role: Role::HeldOut,
    },
    Measurement {
        id: "M8",
        source: NIM,
        url: NIM_URL,
        setup: "500 input / 2000 output tokens, concurrency 1; context taken as 500 + 1000; KV assumed bf16",
        hw: H100,
        target: LLAMA33_70B,
        tp: 2,
        weights: WeightDtype::Fp8,
        kv: KvDtype::Bf16,
        batch: 1,
        ctx: 1500,
        quantity: Quantity::StepTime,
        published: Published::ItlMs(18.91),
        role: Role::HeldOut,
    },
    Measurement {
        id: "M9",
        source: SGL_4716,
        url: SGL_4716_URL,
        setup: "Llama-3.3-70B-Instruct, 8×H100 TP8, fp16, batch 1 (cuda-graph-max-bs 1), without speculation; context assumed 512",
        hw: H100,
        target: LLAMA33_70B,
        tp: 8,
        weights: WeightDtype::Bf16,
        kv: KvDtype::Bf16,
        batch: 1,
        ctx: 512,
        quantity: Quantity::StepTime,
        published: Published::TokensPerSecond(88.61),
        role: Role::Calibration,
    },
    Measurement {
        id: "M10",
        source: SGL_4716,
        url: SGL_4716_URL,
        setup: "as M9, EAGLE-3 head, 8 draft steps, top-k 8, 64 draft tokens verified (modelled: 8 head steps, \
                one pass over 64 tokens), acceptance length 5.88",
        hw: H100,
        target: LLAMA33_70B,
        tp: 8,
        weights: WeightDtype::Bf16,
        kv: KvDtype::Bf16,
        batch: 1,
        ctx: 512,
        quantity: Quantity::Speedup(TreeRound {
            tau: 5.88,
            depth: 8,
            nodes: 63,
        }),
        published: Published::ThroughputPair {
            with: 234.54,
            without: 88.61,
        },
        role: Role::Calibration,
    },
    Measurement {
        id: "M11",
        source: VLLM_20780,
        url: VLLM_20780_URL,
        setup: "EAGLE-3 chain, K = 4, acceptance length 3.08, batch 1; hardware not stated in the issue, \
                assumed 1×H100 as in the same author's PR #16937 runs; bf16, context assumed 512",
        hw: H100,
        target: LLAMA31_8B,
        tp: 1,
        weights: WeightDtype::Bf16,
        kv: KvDtype::Bf16,
        batch: 1,
        ctx: 512,
        quantity: Quantity::Speedup(TreeRound {
            tau: 3.08,
            depth: 4,
            nodes: 4,
        }),
        published: Published::TpotPair {
            with: 4.05,
            without: 7.07,
        },
        role: Role::Calibration,
    },
    Measurement {
        id: "M12",
        source: VLLM_20780,
        url: VLLM_20780_URL,
        setup: "EAGLE-1 chain, K = 3, acceptance length 2.29, batch 1; as M11",
        hw: H100,
        target: LLAMA31_8B,
        tp: 1,
        weights: WeightDtype::Bf16,
        kv: KvDtype::Bf16,
        batch: 1,
        ctx: 512,
        quantity: Quantity::Speedup(TreeRound {
            tau: 2.29,
            depth: 3,
            nodes: 3,
        }),
        published: Published::TpotPair {
            with: 4.29,
            without: 7.07,
        },
        role: Role::HeldOut,
    },
    Measurement {
        id: "M13",
        source: VLLM_20780,
        url: VLLM_20780_URL,
        setup: "EAGLE-3 chain, K = 7, acceptance length 3.54, batch 1; as M11",
        hw: H100,
        target: LLAMA31_8B,
        tp: 1,
        weights: WeightDtype::Bf16,
        kv: KvDtype::Bf16,
        batch: 1,
        ctx: 512,
        quantity: Quantity::Speedup(TreeRound {
            tau: 3.54,
            depth: 7,
            nodes: 7,
        }),
        published: Published::TpotPair {
            with: 4.29,
            without: 7.07,
        },
        role: Role::HeldOut,
    },
];

/// One row of the validation table: a measurement and both profiles' predictions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    /// The measurement.
    pub measurement: Measurement,
    /// The measured figure in model units (seconds per step, or ×).
    pub measured: f64,
    /// [`SEED`]'s prediction, same units.
    pub seed: f64,
    /// [`FITTED`]'s prediction, same units.
    pub fitted: f64,
}

impl Prediction {
    /// `seed / measured`.
    pub fn seed_ratio(&self) -> f64 {
        self.seed / self.measured
    }

    /// `fitted / measured`.
    pub fn fitted_ratio(&self) -> f64 {
        self.fitted / self.measured
    }
}

/// Computes every row of [`MEASUREMENTS`] under [`SEED`] and [`FITTED`].
///
/// Errors: a setup the roofline rejects (a test checks none does).
pub fn predictions() -> Result<Vec<Prediction>, Error> {
    MEASUREMENTS
        .iter()
        .map(|m| {
            Ok(Prediction {
                measurement: *m,
                measured: m.published.measured(),
                seed: m.predict(&SEED)?,
                fitted: m.predict(&FITTED)?,
            })
        })
        .collect()
}

/// Median and worst of a set of prediction / measurement ratios.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioSummary {
    /// Rows summarised.
    pub count: usize,
    /// Median ratio (mean of the two middle ones for an even count).
    pub median: f64,
    /// The ratio farthest from 1 in the log sense (an over- or an under-prediction).
    pub worst: f64,
}

/// Summarises `ratios` (none may be empty or non-positive). Errors on an empty set.
pub fn summarize(ratios: &[f64]) -> Result<RatioSummary, Error> {
    if ratios.is_empty() || ratios.iter().any(|r| !(r.is_finite() && *r > 0.0)) {
        return Err(Error::Argument(
            "ratios to summarise must be a non-empty set of finite numbers > 0".into(),
        ));
    }
    let mut sorted = ratios.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    };
    let worst =
        sorted.iter().copied().fold(
            1.0_f64,
            |w, r| if r.ln().abs() > w.ln().abs() { r } else { w },
        );
    Ok(RatioSummary {
        count: n,
        median,
        worst,
    })
}

/// The error of one profile on both subsets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProfileSummary {
    /// Profile name.
    pub profile: &'static str,
    /// On the measurements used to fit [`FITTED`].
    pub calibration: RatioSummary,
    /// On the rest.
    pub held_out: RatioSummary,
}

/// Median and worst ratio of each profile on the calibration subset and the held-out rest.
pub fn summary(rows: &[Prediction]) -> Result<[ProfileSummary; 2], Error> {
    let pick = |role: Role, f: fn(&Prediction) -> f64| -> Vec<f64> {
        rows.iter()
            .filter(|p| p.measurement.role == role)
            .map(f)
            .collect()
    };
    let of = |name, f: fn(&Prediction) -> f64| -> Result<ProfileSummary, Error> {
        Ok(ProfileSummary {
            profile: name,
            calibration: summarize(&pick(Role::Calibration, f))?,
            held_out: summarize(&pick(Role::HeldOut, f))?,
        })
    };
    Ok([
        of(SEED.name, Prediction::seed_ratio)?,
        of(FITTED.name, Prediction::fitted_ratio)?,
    ])
}

/// The grid [`fit_calibration`] searches: bandwidth efficiency 0.50–1.00 by 0.01; target
/// overhead 0–3 ms by 0.05 ms; all-reduce latency 0–30 µs by 0.5 µs; draft overhead
/// 0–1 ms by 0.01 ms; verification cost per extra token 0–0.2 by 0.0025.
pub const FIT_GRID: &str = "e_bw 0.50..=1.00 step 0.01; o_t 0..=3 ms step 0.05 ms; \
                            all-reduce 0..=30 µs step 0.5 µs; o_d 0..=1 ms step 0.01 ms; \
                            verify 0..=0.2 step 0.0025";

/// Fits [`FITTED`]'s constants on the [`Role::Calibration`] rows, minimising the sum of
/// squared log ratios (prediction / measurement) on a grid ([`FIT_GRID`]), in two stages:
/// bandwidth efficiency, target overhead and all-reduce latency on the step-time rows;
/// then draft overhead and verification cost per token on the speedup rows. Compute
/// efficiency stays at 0.6 (no calibration row is compute-bound).
///
/// Errors: a setup the roofline rejects.
pub fn fit_calibration() -> Result<Calibration, Error> {
    let rows: Vec<&Measurement> = MEASUREMENTS
        .iter()
        .filter(|m| m.role == Role::Calibration)
        .collect();
    let loss = |c: &Calibration, want_steps: bool| -> Result<f64, Error> {
        let mut sum = 0.0;
        for m in &rows {
            if matches!(m.quantity, Quantity::StepTime) != want_steps {
                continue;
            }
            let r = m.predict(c)? / m.published.measured();
            sum += r.ln() * r.ln();
        }
        Ok(sum)
    };
    let mut best = (f64::INFINITY, SEED);
    for bw in 50..=100 {
        for ot in 0..=60 {
            for ar in 0..=60 {
                let c = Calibration {
                    name: "fitted",
                    bandwidth_efficiency: f64::from(bw) / 100.0,
                    overhead_target: f64::from(ot) * 0.05e-3,
                    all_reduce_latency: f64::from(ar) * 0.5e-6,
                    ..SEED
                };
                let l = loss(&c, true)?;
                if l < best.0 {
                    best = (l, c);
                }
            }
        }
    }
    let stage1 = best.1;
    let mut best = (f64::INFINITY, stage1);
    for od in 0..=100 {
        for v in 0..=80 {
            let c = Calibration {
                overhead_draft: f64::from(od) * 0.01e-3,
                verify_cost_per_token: f64::from(v) * 0.0025,
                ..stage1
            };
            let l = loss(&c, false)?;
            if l < best.0 {
                best = (l, c);
            }
        }
    }
    Ok(best.1)
}

/// `docs/validation.md`'s generated part: the table and the summary, in Markdown.
///
/// Errors: as [`predictions`].
pub fn markdown() -> Result<String, Error> {
    let rows = predictions()?;
    let [seed, fitted] = summary(&rows)?;
    let mut s = String::new();
    let fmt = |p: &Prediction, x: f64| match p.measurement.quantity {
        Quantity::StepTime => format!("{:.2} ms", x * 1e3),
        Quantity::Speedup(_) => format!("{x:.2}×"),
    };
    s.push_str(
        "| id | source | setup | published | measured | seed | ratio | fitted | ratio | role |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for p in &rows {
        let m = &p.measurement;
        s.push_str(&format!(
            "| {} | [{}]({}) | {} | {} | {} | {} | {:.3} | {} | {:.3} | {} |\n",
            m.id,
            m.source,
            m.url,
            m.setup,
            m.published.as_printed(),
            fmt(p, p.measured),
            fmt(p, p.seed),
            p.seed_ratio(),
            fmt(p, p.fitted),
            p.fitted_ratio(),
            match m.role {
                Role::Calibration => "calibration",
                Role::HeldOut => "held out",
            }
        ));
    }
    s.push_str(
        "\n| profile | subset | rows | median ratio | worst ratio |\n|---|---|---|---|---|\n",
    );
    for p in [seed, fitted] {
        for (subset, r) in [("calibration", p.calibration), ("held out", p.held_out)] {
            s.push_str(&format!(
                "| {} | {subset} | {} | {:.3} | {:.3} |\n",
                p.profile, r.count, r.median, r.worst
            ));
        }
    }
    s.push_str("\nCommands (flags of issue 13; `--calibration seed` or `fitted`):\n\n");
    for m in MEASUREMENTS {
        s.push_str(&format!("- {}: `{}`\n", m.id, m.command(&FITTED)));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_enough_rows_from_enough_independent_sources() {
        assert!(MEASUREMENTS.len() >= 8);
        // NVIDIA (NIM docs and blog), SGLang, vLLM, the EAGLE repository.
        let orgs = ["nvidia.com", "sglang", "vllm-project", "SafeAILab"];
        for org in orgs {
            assert!(MEASUREMENTS.iter().any(|m| m.url.contains(org)), "{org}");
        }
        let ids: std::collections::HashSet<_> = MEASUREMENTS.iter().map(|m| m.id).collect();
        assert_eq!(ids.len(), MEASUREMENTS.len(), "ids are unique");
        let cal = MEASUREMENTS
            .iter()
            .filter(|m| m.role == Role::Calibration)
            .count();
        assert!(cal >= 3 && MEASUREMENTS.len() - cal >= 5);
    }

    #[test]
    fn every_setup_is_valid_and_every_prediction_finite() {
        for m in MEASUREMENTS {
            for p in CALIBRATIONS {
                let s = m.scenario(p);
                assert_eq!(s.validate(), Ok(()), "{}", m.id);
                let x = m.predict(p).unwrap();
                assert!(x.is_finite() && x > 0.0, "{} {}", m.id, p.name);
            }
        }
    }

    #[test]
    fn published_figures_convert_to_model_units_by_hand() {
        assert!((Published::TokensPerSecond(158.34).measured() - 6.3155e-3).abs() < 1e-7);
        assert_eq!(Published::ItlMs(18.58).measured(), 0.01858);
        let s = Published::ThroughputPair {
            with: 234.54,
            without: 88.61,
        };
        assert!((s.measured() - 2.6469).abs() < 1e-4);
        let t = Published::TpotPair {
            with: 4.05,
            without: 7.07,
        };
        assert!((t.measured() - 1.7457).abs() < 1e-4);
    }

    /// M1 under the seed profile, by hand: 8B on one H100 at batch 1, context 512:
    /// (2 · 7,504,924,672 + 513 · 131,072) B / (3.35e12 · 0.8) + 1 ms = 6.6258 ms.
    #[test]
    fn the_seed_prediction_of_m1_is_the_lecture_roofline() {
        let m1 = &MEASUREMENTS[0];
        let bytes = 2.0 * 7_504_924_672.0 + 513.0 * 131_072.0;
        let by_hand = bytes / (3.35e12 * 0.8) + 1e-3;
        assert!((m1.predict(&SEED).unwrap() - by_hand).abs() < 1e-15);
        assert!((by_hand - 6.6258e-3).abs() < 1e-7, "{by_hand}");
    }

    #[test]
    fn the_fitted_profile_is_what_the_fit_finds_on_the_calibration_rows() {
        assert_eq!(fit_calibration().unwrap(), FITTED);
    }

    #[test]
    fn the_fitted_profile_does_better_than_the_seed_on_the_calibration_rows() {
        let rows = predictions().unwrap();
        let [seed, fitted] = summary(&rows).unwrap();
        let off = |r: RatioSummary| r.worst.ln().abs();
        assert!(off(fitted.calibration) < off(seed.calibration));
    }

    #[test]
    fn summaries_take_the_median_and_the_ratio_farthest_from_one() {
        let s = summarize(&[1.1, 0.5, 1.3]).unwrap();
        assert_eq!((s.count, s.median, s.worst), (3, 1.1, 0.5));
        let s = summarize(&[1.0, 1.2, 3.0, 0.9]).unwrap();
        assert_eq!((s.median, s.worst), (1.1, 3.0));
        assert!(summarize(&[]).is_err());
        assert!(summarize(&[1.0, 0.0]).is_err());
        assert!(summarize(&[f64::NAN]).is_err());
    }

    #[test]
    fn calibrations_are_found_by_name() {
        assert_eq!(calibration("Fitted").unwrap(), &FITTED);
        assert_eq!(calibration("seed").unwrap(), &SEED);
        let e = calibration("magic").unwrap_err().to_string();
        assert!(e.contains("seed, fitted"), "{e}");
        // The seed profile applied to the lecture's scenario changes nothing.
        assert_eq!(SEED.apply(Scenario::LECTURE), Scenario::LECTURE);
    }

    /// The prose of `docs/validation.md` quotes the fitted constants and the summary; those
    /// quotes must be the library's figures.
    #[test]
    fn validation_doc_prose_quotes_the_library_figures() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/validation.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let prose = &doc[..doc.find("<!-- BEGIN GENERATED -->").unwrap()];
        let f = FITTED;
        for quote in [
            format!("bandwidth efficiency {:.2}", f.bandwidth_efficiency),
            format!("target overhead {:.2} ms", f.overhead_target * 1e3),
            format!("draft overhead {:.2} ms", f.overhead_draft * 1e3),
            format!("{:.1}% of a step", f.verify_cost_per_token * 100.0),
            format!("{:.0} µs per all-reduce", f.all_reduce_latency * 1e6),
        ] {
            assert!(prose.contains(&quote), "{quote}");
        }
        let [seed, fitted] = summary(&predictions().unwrap()).unwrap();
        for quote in [
            format!(
                "{:.3} → {:.3}",
                seed.held_out.median, fitted.held_out.median
            ),
            format!("{:.3} → {:.3}", seed.held_out.worst, fitted.held_out.worst),
        ] {
            assert!(prose.contains(&quote), "{quote}");
        }
    }

    /// `docs/validation.md` carries the generated table verbatim. To regenerate it after a
    /// change: `VALIDATION_DOC=write cargo test -p decode_lab validation_doc`.
    #[test]
    fn validation_doc_is_generated_from_the_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/validation.md");
        let generated = markdown().unwrap();
        let doc = std::fs::read_to_string(path).unwrap_or_default();
        let (begin, end) = ("<!-- BEGIN GENERATED -->\n", "<!-- END GENERATED -->");
        if std::env::var("VALIDATION_DOC").as_deref() == Ok("write") {
            let (head, tail) = match (doc.find(begin), doc.find(end)) {
                (Some(b), Some(e)) => (doc[..b].to_string(), doc[e + end.len()..].to_string()),
                _ => (doc.clone(), String::from("\n")),
            };
            let new = format!("{head}{begin}{generated}{end}{tail}");
            std::fs::write(path, new).unwrap();
            return;
        }
        let b = doc
            .find(begin)
            .expect("docs/validation.md has a generated block")
            + begin.len();
        let e = doc.find(end).expect("the generated block ends");
        assert_eq!(
            &doc[b..e],
            generated,
            "regenerate docs/validation.md (see this test's doc)"
        );
    }
}
