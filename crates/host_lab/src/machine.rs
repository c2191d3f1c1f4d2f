//! This machine as the roofline sees it: the measured peak and bandwidth, its caches and
//! memory, and an [`Accelerator`] value so that every roofline function of `llm_math` and
//! `decode_lab` can be asked about it.
//!
//! The peak and the bandwidth are figures *this code reaches here* ([`crate::measure`]),
//! not a vendor's peaks; so the [`Deployment`] to use with them has efficiencies of 1.0
//! ([`Machine::deployment`]), where lecture 6's H100 uses 0.6 and 0.8.

use std::io::Write;

use hw_specs::{Accelerator, Interconnect};
use llm_math::Deployment;

use crate::Error;
use crate::host::{CacheSizes, cache_sizes, memory_bytes};
use crate::measure::{Sample, kernel_peak, read_bandwidth, stream_bytes};

/// What was measured and read about this machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// Cache sizes from the OS.
    pub caches: CacheSizes,
    /// RAM, bytes (`/proc/meminfo`), or why it could not be read.
    pub memory: Result<u64, String>,
    /// Threads the measurements ran on (rayon's pool).
    pub threads: usize,
    /// Peak FLOP/s of the packed f32 kernel, per run.
    pub peak: Sample,
    /// Sustained read bandwidth, bytes/s, per run.
    pub bandwidth: Sample,
    /// Bytes of the buffer the bandwidth was measured over.
    pub stream_bytes: usize,
}

/// The name the [`Accelerator`] of this machine carries.
pub const NAME: &str = "this machine";

impl Machine {
    /// Reads the caches and memory, then measures the bandwidth and the peak, `runs` times
    /// each (the peak's runs about 0.1 s each), with a line per run on `progress`.
    /// Errors as [`kernel_peak`] and [`read_bandwidth`] do.
    /// The bandwidth's buffer is [`stream_bytes`] for the last-level cache (8 caches).
    pub fn measure(runs: usize, progress: &mut dyn Write) -> Result<Self, Error> {
        let bytes = stream_bytes(cache_sizes().last_level());
        Self::measure_streaming(bytes, runs, progress)
    }

    /// [`Machine::measure`] with the bandwidth read over a buffer of `bytes` (the quick plan
    /// of demo 6 streams [`crate::measure::MIN_STREAM_BYTES`], which a cache may partly hold).
    pub fn measure_streaming(
        bytes: usize,
        runs: usize,
        progress: &mut dyn Write,
    ) -> Result<Self, Error> {
        let caches = cache_sizes();
        let bandwidth = read_bandwidth(bytes, runs, progress)?;
        let peak = kernel_peak(runs, 0.1, progress)?;
        Ok(Machine {
            caches,
            memory: memory_bytes(),
            threads: rayon::current_num_threads(),
            peak,
            bandwidth,
            stream_bytes: bytes,
        })
    }

    /// The median peak, FLOP/s.
    pub fn peak_flops(&self) -> f64 {
        self.peak.median()
    }

    /// The median bandwidth, bytes/s.
    pub fn bandwidth_bytes(&self) -> f64 {
        self.bandwidth.median()
    }

    /// FLOPs per byte at which compute and memory take equally long.
    pub fn ridge_point(&self) -> f64 {
        self.peak_flops() / self.bandwidth_bytes()
    }

    /// The critical batch, tokens per pass, for weights of `bytes_per_weight` bytes: each
    /// token costs 2 FLOPs per weight, the pass reads each weight once, so compute and
    /// memory take equally long at `peak · bytes_per_weight / (2 · bandwidth)`
    /// (`llm_math::critical_tokens_at`, with this machine's achieved figures and so no
    /// efficiencies; attention and KV traffic ignored).
    ///
    /// Errors: a machine or weight size whose figures are not positive and finite.
    pub fn critical_tokens(&self, bytes_per_weight: f64) -> Result<f64, Error> {
        let peak = self.peak_flops();
        let bandwidth = self.bandwidth_bytes();
        Ok(llm_math::critical_tokens_at(
            peak,
            bandwidth,
            bytes_per_weight,
        )?)
    }

    /// This machine as an [`Accelerator`]: peak = the measured f32 kernel peak (in the
    /// bf16 field, the one every roofline function reads; no FP8), bandwidth = the
    /// measured one, memory = RAM (0 if it could not be read), no interconnect (one device),
    /// and no FP32 vector peak (`peak_flops_fp32` is `None`: the measured kernel peak
    /// stands in the bf16 field only).
    ///
    /// `llm_math` counts weights and KV in bf16 (2 bytes); this crate's models are f32
    /// (4 bytes) and INT4 (4.25 bits), and its own predictions ([`crate::predict`]) count
    /// their exact bytes.
    pub fn accelerator(&self) -> Accelerator {
        Accelerator {
            name: NAME,
            aliases: &[],
            peak_flops_bf16: self.peak_flops(),
            peak_flops_fp8: None,
            peak_ops_int8: None,
            peak_flops_fp4: None,
            peak_flops_fp32: None,
            hbm_bandwidth: self.bandwidth_bytes(),
            memory_bytes: self.memory.as_ref().map_or(0.0, |&m| m as f64),
            interconnect: Interconnect {
                kind: "none (one device)",
                per_direction: 0.0,
                mesh_link_per_direction: None,
            },
        }
    }

    /// The deployment to use with [`accelerator`](Self::accelerator): the lecture's, with
    /// efficiencies of 1.0, because the figures are already achieved ones.
    pub fn deployment() -> Deployment {
        Deployment {
            compute_efficiency: 1.0,
            bandwidth_efficiency: 1.0,
            ..Deployment::LECTURE
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn fake() -> Machine {
        Machine {
            caches: CacheSizes {
                l1d: Some(32 << 10),
                l2: Some(512 << 10),
                l3: Some(32 << 20),
                source: "test".into(),
            },
            memory: Ok(24 << 30),
            threads: 2,
            peak: Sample::new(vec![130e9, 140e9, 138e9]).unwrap(),
            bandwidth: Sample::new(vec![20e9, 22e9, 23e9]).unwrap(),
            stream_bytes: 256 << 20,
        }
    }

    #[test]
    fn the_critical_batch_is_llm_maths_without_its_efficiencies() {
        let m = fake();
        let hw = m.accelerator();
        // llm_math with this machine's deployment: bf16 weights, efficiencies 1.0.
        let theirs = llm_math::critical_tokens(&hw, &Machine::deployment()).unwrap();
        assert!((m.critical_tokens(2.0).unwrap() - theirs).abs() < 1e-9 * theirs);
        // By hand: 138e9 · 4 / (2 · 22e9) = 12.545 tokens for f32 weights.
        assert!((m.critical_tokens(4.0).unwrap() - 12.545_454_545).abs() < 1e-6);
        assert!((m.ridge_point() - 138.0 / 22.0).abs() < 1e-12);
    }

    #[test]
    fn the_accelerator_answers_llm_maths_questions() {
        let m = fake();
        let hw = m.accelerator();
        // Llama-3.1-8B in bf16 (16.06 GB) fits 24 GiB, next to its KV cache of 128 KiB a token.
        let fits = llm_math::max_batch_on(&llm_math::LLAMA31_8B, &hw, 8192, &Machine::deployment())
            .unwrap();
        let free = (24u64 << 30) as f64 - 2.0 * 8_030_261_248.0;
        assert_eq!(fits, (free / (8192.0 * 131_072.0)).floor() as u64);
        // One decode step: memory-bound, 15.0 GB + KV over 22 GB/s, at efficiency 1.
        let shape = llm_math::ForwardShape {
            batch: 1,
            ctx: 1024,
            n_new: 1,
        };
        let cost =
            llm_math::forward_cost(&llm_math::LLAMA31_8B, &hw, shape, &Machine::deployment())
                .unwrap();
        assert!(!cost.is_compute_bound());
        assert!((cost.memory_time - cost.bytes / 22e9).abs() < 1e-12);
    }

    #[test]
    fn decode_labs_round_accounting_runs_on_this_machine() {
        use decode_lab::{Draft, Scenario, Seed, best_round, target_pass_time, verify_time};
        let m = fake();
        let hw = m.accelerator();
        // verify_time keeps the lecture's efficiencies (60% / 80%) and its memory check.
        let t = verify_time(&llm_math::LLAMA31_8B, &hw, 1, 1024, 1, 0.0).unwrap();
        let bytes = 2.0 * 7_504_924_672.0 + 1024.0 * 131_072.0 + 131_072.0;
        assert!((t - bytes / (22e9 * 0.8)).abs() < 1e-9, "{t}");
        // A scenario with this machine's deployment: efficiencies 1.0, no overheads.
        let s = Scenario {
            deployment: Machine::deployment(),
            overhead_target: 0.0,
            overhead_draft: 0.0,
            ..Scenario::new(
                hw,
                llm_math::LLAMA31_8B,
                Draft::Model(decode_lab::LLAMA32_1B),
            )
        };
        assert!((target_pass_time(&s, 1).unwrap() - bytes / 22e9).abs() < 1e-9);
        // Memory-bound at batch 1 on a CPU too: speculation pays, with a long draft.
        let best = best_round(&s, &Seed).unwrap();
        assert!(best.speedup() > 1.5 && best.gamma() >= 3, "{best:?}");
    }
}
