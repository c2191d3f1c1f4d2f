//! Cost terms the lecture's roofline leaves out, each one function with its unit, each
//! neutral by default (the neutral value gives back the seed's figures), each motivated
//! by a published measurement (`crates/planner/data/measurements.json`, and the research
//! notes it was gathered with).
//!
//! The seed prices a pass as `max(compute, memory) + overheads`: perfect overlap, free
//! verification of extra tokens below the ridge, one fixed overhead per pass, a draft
//! whose cost does not depend on its depth, the same efficiency for every dtype, free
//! all-reduces and free experts. [`CostTerms::NEUTRAL`] is exactly that.

use crate::Error;
use crate::units::{finite_time, seconds};
use hw_specs::Accelerator;
use llm_math::{MIN_EFFICIENCY, WeightDtype};

/// The extra cost terms, all in one place; [`CostTerms::NEUTRAL`] (also `default()`)
/// changes nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostTerms {
    /// Overlap of compute and memory in a pass, in [0, 1]: 1 is the seed's `max`, 0 a sum
    /// ([`overlapped_time`]).
    pub overlap: f64,
    /// Seconds per verified token of the whole batch beyond the first per sequence
    /// ([`verify_extra_time`]).
    pub verify_per_batch_token: f64,
    /// Fixed cost of a speculative round, seconds ([`round_overhead`]).
    pub round_fixed: f64,
    /// Cost of a speculative round per sequence of the batch, seconds ([`round_overhead`]).
    pub round_per_sequence: f64,
    /// Seconds per draft layer per draft step ([`draft_layer_time`]).
    pub draft_per_layer: f64,
    /// Seconds per sequence of the batch per layer, in every pass: target steps, plain
    /// ones included, and draft steps ([`sequence_layer_time`]).
    pub per_sequence_layer: f64,
    /// Factor on the bandwidth and compute efficiencies of FP8 weights
    /// ([`DtypeEfficiency`]).
    pub fp8: DtypeEfficiency,
    /// Latency of one all-reduce per interconnect family ([`AllReduceLatencies`]).
    pub all_reduce: AllReduceLatencies,
    /// Factor on the bandwidth efficiency of int8 weight-only (W8A16) weights, in (0, 1]
    /// ([`CostTerms::efficiencies`]).
    pub w8a16_bandwidth: f64,
    /// Vector-unit operations per INT4 weight a pass dequantizes ([`crate::dequant_time`]).
    pub int4_dequant_ops: f64,
    /// Fixed cost of each distinct routed expert a pass reads in each layer of an MoE
    /// model, seconds (the grouped expert kernel's per-expert scheduling and small-matrix
    /// latency, on every card at once, so not split by tensor parallelism;
    /// [`crate::expert_time`]). No effect on a dense model.
    pub expert_latency: f64,
    /// Extra cost of each verified token beyond the first, as a fraction of a plain target
    /// step: `t_verify(n) = … + (n − 1) · verify_cost_per_token · t_base` (tree masks,
    /// rejection sampling, bookkeeping; the `fitted` profile's form).
    pub verify_cost_per_token: f64,
}

/// The largest verification cost per extra token, as a fraction of a plain step: ten
/// steps for one token would make verifying slower than decoding it ten times over.
pub const MAX_VERIFY_COST: f64 = 10.0;

impl CostTerms {
    /// The seed's model: perfect overlap, nothing extra.
    pub const NEUTRAL: CostTerms = CostTerms {
        overlap: 1.0,
        verify_per_batch_token: 0.0,
        round_fixed: 0.0,
        round_per_sequence: 0.0,
        draft_per_layer: 0.0,
        per_sequence_layer: 0.0,
        fp8: DtypeEfficiency::NEUTRAL,
        all_reduce: AllReduceLatencies::NEUTRAL,
        w8a16_bandwidth: 1.0,
        int4_dequant_ops: 0.0,
        expert_latency: 0.0,
        verify_cost_per_token: 0.0,
    };
}

impl CostTerms {
    /// Checks every term: overlap in [0, 1]; costs and latencies finite and ≥ 0; the FP8
    /// and W8A16 factors in (0, 1]; INT4's dequantization ops from 0 to
    /// [`crate::MAX_DEQUANT_OPS`]; the verification cost per token from 0 to
    /// [`MAX_VERIFY_COST`].
    ///
    /// Errors: the first term out of range, named.
    pub fn check(&self) -> Result<(), Error> {
        overlapped_time(0.0, 0.0, self.overlap)?;
        seconds("verification cost per token", self.verify_per_batch_token)?;
        round_overhead(self.round_fixed, self.round_per_sequence, 1)?;
        seconds("draft cost per layer", self.draft_per_layer)?;
        seconds("cost per sequence per layer", self.per_sequence_layer)?;
        self.efficiencies(WeightDtype::Fp8, 1.0, 1.0)?;
        self.efficiencies(WeightDtype::W8A16, 1.0, 1.0)?;
        crate::dequant::check_dequant_ops(self.int4_dequant_ops)?;
        seconds("expert latency", self.expert_latency)?;
        if !(0.0..=MAX_VERIFY_COST).contains(&self.verify_cost_per_token) {
            return Err(Error::Argument(format!(
                "the verification cost per extra token must be a fraction of a step from 0 to \
                 {MAX_VERIFY_COST}, got {}",
                self.verify_cost_per_token
            )));
        }
        let l = self.all_reduce;
        for (what, x) in [
            ("NVLink", l.nvlink),
            ("Infinity Fabric", l.infinity_fabric),
            ("PCIe", l.pcie),
            ("Ethernet", l.ethernet),
        ] {
            seconds(format_args!("{what} all-reduce latency"), x)?;
        }
        Ok(())
    }
}

impl CostTerms {
    /// `(bandwidth, compute)` efficiencies of a pass over `weights`, from the bf16 ones:
    /// FP8 weights take the [`DtypeEfficiency`] factors of `fp8`, int8 weight-only (W8A16)
    /// weights the factor `w8a16_bandwidth` on the bandwidth (their products run in 16-bit,
    /// at bf16's rate); other weights keep both.
    ///
    /// Why: the Qwen team's speed benchmark runs Qwen2.5 7B–72B on an A100 in vLLM at batch
    /// 1 in bf16 and in GPTQ-Int8; the int8 steps take 66–73% of the bf16 ones, where
    /// halving the weight bytes would give about 55%. gpt-fast's int8 Llama-2 rows on an
    /// A100 are as slow against its bf16 ones. Dequantising each weight on the way to the
    /// 16-bit products keeps these kernels further from the bandwidth peak than bf16's.
    ///
    /// Errors: a factor or an efficiency outside (0, 1].
    ///
    /// ```
    /// use llm_math::WeightDtype;
    /// use planner::CostTerms;
    /// let t = CostTerms { w8a16_bandwidth: 0.7, ..CostTerms::NEUTRAL };
    /// assert_eq!(t.efficiencies(WeightDtype::W8A16, 0.8, 0.6)?, (0.8 * 0.7, 0.6));
    /// assert_eq!(t.efficiencies(WeightDtype::Bf16, 0.8, 0.6)?, (0.8, 0.6));
    /// # Ok::<(), planner::Error>(())
    /// ```
    pub fn efficiencies(
        &self,
        weights: WeightDtype,
        bandwidth_efficiency: f64,
        compute_efficiency: f64,
    ) -> Result<(f64, f64), Error> {
        let f = self.w8a16_bandwidth;
        if !(MIN_EFFICIENCY..=1.0).contains(&f) {
            return Err(Error::Argument(format!(
                "W8A16 bandwidth efficiency factor must be from {} to 1, got {f}",
                MIN_EFFICIENCY
            )));
        }
        let fp8 = self
            .fp8
            .apply(weights, bandwidth_efficiency, compute_efficiency)?;
        match weights {
            WeightDtype::W8A16 => Ok((fp8.0 * f, fp8.1)),
            WeightDtype::Bf16 | WeightDtype::Fp8 | WeightDtype::Int4 | WeightDtype::W8A8 => Ok(fp8),
        }
    }
}

impl Default for CostTerms {
    /// [`CostTerms::NEUTRAL`].
    fn default() -> Self {
        CostTerms::NEUTRAL
    }
}

/// A pass's time with partial overlap of compute and memory, seconds:
/// `max(c, m) + (1 − overlap) · min(c, m)`. `overlap = 1` is the seed's `max` (the
/// optimistic bound), `overlap = 0` a sum.
///
/// Why: engines' fitted pass models charge each extra verified token about its compute
/// time even at batch 1, where the weight read dominates (SpecDecode-Bench's vLLM
/// H100 Llama-3.1-8B fit: 21 µs per batched token on top of a memory-bound step; rows
/// M41–M43): decode-shaped matrix products do not hide compute under memory.
///
/// Errors: a time that is negative or not finite (the inputs, or their sum), an overlap
/// outside [0, 1].
///
/// ```
/// // 2 ms of compute, 3 ms of memory, a quarter overlapped: 3 + 0.75 · 2 = 4.5 ms.
/// let t = planner::overlapped_time(2e-3, 3e-3, 0.25).unwrap();
/// assert!((t - 4.5e-3).abs() < 1e-15);
/// ```
pub fn overlapped_time(compute: f64, memory: f64, overlap: f64) -> Result<f64, Error> {
    let (c, m) = (
        finite_time("compute time", compute)?,
        finite_time("memory time", memory)?,
    );
    if !(0.0..=1.0).contains(&overlap) {
        return Err(Error::Argument(format!(
            "overlap of compute and memory must be in [0, 1], got {overlap}"
        )));
    }
    finite_time(
        "compute plus memory",
        llm_math::roofline(c, m) + (1.0 - overlap) * c.min(m),
    )
}

/// The overlap at which [`overlapped_time`] of `compute` and `memory` is `time`, its
/// inverse: `(compute + memory − time) / min(compute, memory)`, clamped to [0, 1] (a time
/// above the sum is no overlap, one below the `max` full overlap). 1 when either is 0:
/// then every overlap gives the same time.
///
/// Errors: a compute, memory or total time that is negative or not finite.
///
/// ```
/// // 2 ms of compute, 3 ms of memory, 4.5 ms measured: a quarter overlapped.
/// let o = planner::implied_overlap(2e-3, 3e-3, 4.5e-3).unwrap();
/// assert!((o - 0.25).abs() < 1e-12);
/// assert_eq!(planner::implied_overlap(2.0, 3.0, 6.0).unwrap(), 0.0);
/// assert_eq!(planner::implied_overlap(2.0, 3.0, 2.5).unwrap(), 1.0);
/// ```
pub fn implied_overlap(compute: f64, memory: f64, time: f64) -> Result<f64, Error> {
    let (c, m, t) = (
        finite_time("compute time", compute)?,
        finite_time("memory time", memory)?,
        finite_time("time", time)?,
    );
    if c.min(m) == 0.0 {
        return Ok(1.0);
    }
    Ok(((c + m - t) / c.min(m)).clamp(0.0, 1.0))
}

/// The compute time of one verified token, seconds per token of the batch:
/// `2 · params / (efficiency · peak(dtype))`, the dense matrix products' FLOPs at a
/// fraction of the card's peak for the weights' dtype.
///
/// Why: SpecDecode-Bench's fitted vLLM pass model (H100, Llama-3.1-8B bf16) charges
/// 2.10e-5 s per batched token — 16 GFLOP at about 77% of the bf16 peak; GPUStack's FP8
/// runs put the FP8 figure near half of it (rows M37–M43, M23–M32).
///
/// Errors: zero parameters, an efficiency outside (0, 1].
///
/// ```
/// // Llama-3.1-8B (8.03e9 parameters) in bf16 on an H100 (989 TFLOP/s) at 77%: ≈ 21 µs.
/// let t = planner::verify_time_per_token(8.03e9, &hw_specs::H100, llm_math::WeightDtype::Bf16, 0.77).unwrap();
/// assert!((t - 2.109e-5).abs() < 1e-8, "{t}");
/// ```
pub fn verify_time_per_token(
    params: f64,
    hw: &Accelerator,
    weights: WeightDtype,
    efficiency: f64,
) -> Result<f64, Error> {
    if !(1.0..=llm_math::MAX_PARAMS).contains(&params) {
        return Err(Error::Argument(format!(
            "parameter count must be from 1 to {:e}, got {params}",
            llm_math::MAX_PARAMS
        )));
    }
    if !(MIN_EFFICIENCY..=1.0).contains(&efficiency) {
        return Err(Error::Argument(format!(
            "compute efficiency must be a fraction of peak from {} to 1, got {efficiency}",
            MIN_EFFICIENCY
        )));
    }
    hw.validate().map_err(|e| Error::Argument(e.to_string()))?;
    Ok(2.0 * params / (efficiency * weights.peak_flops(hw)))
}

/// The verification cost beyond the seed's roofline, seconds: `batch · (n − 1) ·
/// per_token`, where `per_token` is in seconds per verified token of the whole batch
/// ([`verify_time_per_token`]); 0 for `n ≤ 1` or `per_token = 0` (the seed).
///
/// Why: see [`verify_time_per_token`]; the EAGLE-3 paper's SGLang table (rows of its
/// batch 2–64 series) shows the gain shrinking with batch faster than the roofline says.
///
/// Errors: a per-token cost that is negative or not finite.
pub fn verify_extra_time(batch: u64, n: u64, per_token: f64) -> Result<f64, Error> {
    let p = seconds("verification cost per token", per_token)?;
    Ok(batch as f64 * n.saturating_sub(1) as f64 * p)
}

/// The fixed cost of one speculative round beyond its passes, seconds:
/// `fixed + per_sequence · batch` (sampling, acceptance, KV bookkeeping, scheduling).
///
/// Why: vLLM's K-sweeps at batch 1 (round time = TPOT × acceptance length, linear in
/// K) put the K = 0 intercept ≈ 0.6 ms (EAGLE-1) and ≈ 1.3 ms (EAGLE-3) above a plain
/// step; GPUStack's EAGLE-3 round grows from 8.74 ms at batch 1 to 13.06 ms at batch 8
/// (rows M56–M64, M28–M32).
///
/// Errors: a negative or non-finite cost.
pub fn round_overhead(fixed: f64, per_sequence: f64, batch: u64) -> Result<f64, Error> {
    Ok(seconds("round fixed cost", fixed)?
        + seconds("round cost per sequence", per_sequence)? * batch as f64)
}

/// The cost of `steps` draft steps of a `layers`-layer draft, seconds:
/// `per_layer · layers · steps` (on top of the draft's roofline and overhead).
///
/// Why: vLLM's K-sweeps add 0.74 ms per draft step with an EAGLE-1 head and 1.02 ms with
/// an EAGLE-3 head on the same 8B target; SpecDecode-Bench reports a draft pass at 12.5%
/// (70B target) to 37.5% (8B) of the target's (rows M39, M40, M56–M64).
///
/// Errors: a negative or non-finite cost.
pub fn draft_layer_time(per_layer: f64, layers: u64, steps: u64) -> Result<f64, Error> {
    Ok(seconds("draft cost per layer", per_layer)? * layers as f64 * steps as f64)
}

/// The per-sequence work of a pass, seconds: `per_sequence_layer · batch · layers`.
///
/// Why: serving engines' plain decode steps grow with the batch far faster than the
/// roofline's KV reads alone: at short context each added sequence costs 70B–405B models
/// about 0.1–0.35 ms a step (≈ 1.4–3 µs per sequence per layer: attention kernels' per-
/// sequence setup, paged-KV block tables, sampling and detokenisation of each sequence),
/// where the weights are read once for the whole batch. The batch series of
/// `crates/planner/data/measurements.json` fix it.
///
/// Errors: a cost per sequence per layer outside 0 to [`llm_math::MAX_SECONDS`].
///
/// ```
/// // 2 µs per sequence per layer, 32 sequences, 80 layers: 5.12 ms.
/// let t = planner::sequence_layer_time(2e-6, 32, 80).unwrap();
/// assert!((t - 5.12e-3).abs() < 1e-15);
/// ```
pub fn sequence_layer_time(per_sequence_layer: f64, batch: u64, layers: u64) -> Result<f64, Error> {
    let per = seconds("cost per sequence per layer", per_sequence_layer)?;
    Ok(per * batch as f64 * layers as f64)
}

/// Factors on the bandwidth and compute efficiencies for one weight dtype (1 = the same
/// fraction of peak as bf16).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DtypeEfficiency {
    /// Factor on the bandwidth efficiency, in (0, 1].
    pub bandwidth: f64,
    /// Factor on the compute efficiency, in (0, 1].
    pub compute: f64,
}

impl DtypeEfficiency {
    /// No change: the seed's efficiencies for every dtype.
    pub const NEUTRAL: DtypeEfficiency = DtypeEfficiency {
        bandwidth: 1.0,
        compute: 1.0,
    };

    /// `(bandwidth, compute)` efficiencies for `weights`: the factors apply to FP8 only.
    ///
    /// Why: SGLang on an H100 runs Qwen3-8B at batch 4 in 5.65 ms (FP8) against 7.19 ms
    /// (bf16): 0.79, where halving the weight bytes would give ≈ 0.5 (GPUStack rows).
    ///
    /// Errors: a factor or an efficiency outside (0, 1].
    pub fn apply(
        &self,
        weights: WeightDtype,
        bandwidth_efficiency: f64,
        compute_efficiency: f64,
    ) -> Result<(f64, f64), Error> {
        for (what, f) in [("bandwidth", self.bandwidth), ("compute", self.compute)] {
            if !(MIN_EFFICIENCY..=1.0).contains(&f) {
                return Err(Error::Argument(format!(
                    "FP8 {what} efficiency factor must be from {} to 1, got {f}",
                    MIN_EFFICIENCY
                )));
            }
        }
        for (what, e) in [
            ("bandwidth", bandwidth_efficiency),
            ("compute", compute_efficiency),
        ] {
            if !(MIN_EFFICIENCY..=1.0).contains(&e) {
                return Err(Error::Argument(format!(
                    "{what} efficiency must be a fraction of peak from {} to 1, got {e}",
                    MIN_EFFICIENCY
                )));
            }
        }
        Ok(match weights {
            WeightDtype::Fp8 => (
                bandwidth_efficiency * self.bandwidth,
                compute_efficiency * self.compute,
            ),
            WeightDtype::Bf16 | WeightDtype::Int4 | WeightDtype::W8A16 | WeightDtype::W8A8 => {
                (bandwidth_efficiency, compute_efficiency)
            }
        })
    }
}

/// Latency of one tensor-parallel all-reduce per interconnect family, seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AllReduceLatencies {
    /// NVLink / NVSwitch cards.
    pub nvlink: f64,
    /// AMD Infinity Fabric cards.
    pub infinity_fabric: f64,
    /// Cards that talk over PCIe.
    pub pcie: f64,
    /// Cards whose scale-up links are Ethernet (RoCE), as Intel's Gaudi.
    pub ethernet: f64,
}

impl AllReduceLatencies {
    /// Free all-reduces everywhere (the seed).
    pub const NEUTRAL: AllReduceLatencies = AllReduceLatencies {
        nvlink: 0.0,
        infinity_fabric: 0.0,
        pcie: 0.0,
        ethernet: 0.0,
    };

    /// The latency for `hw`, by its interconnect's kind (`hw.interconnect.kind`).
    ///
    /// Why: AMD's MI300X TP sweep of Llama-3.1-70B (46.71 / 30.42 / 19.11 ms at TP 1/2/4)
    /// fits ≈ 40 µs per all-reduce over Infinity Fabric; H100 rows over NVLink fit ≈ 25 µs
    /// or less (rows M14–M16, M5, M9, M33–M34).
    ///
    /// Errors: an interconnect of no known family, or a latency that is negative.
    pub fn for_card(&self, hw: &Accelerator) -> Result<f64, Error> {
        let what = card_family(hw)?;
        let x = match what {
            "NVLink" => self.nvlink,
            "Infinity Fabric" => self.infinity_fabric,
            "PCIe" => self.pcie,
            _ => self.ethernet,
        };
        seconds(format_args!("{what} all-reduce latency"), x)
    }
}

/// The family of a card, by its interconnect's kind: "NVLink" (NVIDIA's data-centre
/// cards), "Infinity Fabric" (AMD's), "PCIe" (cards that talk over PCIe: workstation and
/// consumer cards) or "Ethernet" (scale-up over RoCE, as Intel's Gaudi).
///
/// Errors: an interconnect of no known family.
pub fn card_family(hw: &Accelerator) -> Result<&'static str, Error> {
    let kind = hw.interconnect.kind;
    if kind.starts_with("NVLink") {
        Ok("NVLink")
    } else if kind.starts_with("Infinity Fabric") {
        Ok("Infinity Fabric")
    } else if kind.starts_with("PCIe") {
        Ok("PCIe")
    } else if kind.contains("RoCE") || kind.contains("Ethernet") {
        Ok("Ethernet")
    } else {
        Err(Error::Argument(format!(
            "{}'s interconnect \"{kind}\" is of no known family",
            hw.name
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hw_specs::H100;
    use llm_math::{Deployment, ForwardShape, LLAMA31_8B, forward_cost};

    #[test]
    fn a_bad_term_is_named_and_the_neutral_terms_pass() {
        assert_eq!(CostTerms::NEUTRAL.check(), Ok(()));
        let bad = |t: CostTerms| t.check().unwrap_err().to_string();
        let n = CostTerms::NEUTRAL;
        assert!(bad(CostTerms { overlap: 1.5, ..n }).contains("overlap"));
        assert!(
            bad(CostTerms {
                round_per_sequence: -1.0,
                ..n
            })
            .contains("per sequence")
        );
        let ar = AllReduceLatencies {
            pcie: f64::NAN,
            ..AllReduceLatencies::NEUTRAL
        };
        assert!(
            bad(CostTerms {
                all_reduce: ar,
                ..n
            })
            .contains("PCIe")
        );
        let fp8 = DtypeEfficiency {
            compute: 2.0,
            bandwidth: 1.0,
        };
        assert!(bad(CostTerms { fp8, ..n }).contains("FP8 compute"));
    }

    #[test]
    fn overlap_runs_from_the_seeds_max_to_a_sum_by_hand() {
        assert_eq!(overlapped_time(2.0, 3.0, 1.0).unwrap(), 3.0);
        assert_eq!(overlapped_time(2.0, 3.0, 0.0).unwrap(), 5.0);
        assert_eq!(overlapped_time(3.0, 2.0, 0.5).unwrap(), 4.0);
        assert!(overlapped_time(2.0, 3.0, 1.5).is_err());
        assert!(overlapped_time(-1.0, 3.0, 1.0).is_err());
    }

    /// The inverse gives back every overlap it is handed, on either side of the ridge.
    #[test]
    fn the_implied_overlap_inverts_the_overlapped_time() {
        for (c, m) in [(2.0, 3.0), (3.0, 2.0), (0.1, 8.0), (8.0, 0.1)] {
            for o in [0.0, 0.1, 0.5, 0.7, 1.0] {
                let t = overlapped_time(c, m, o).unwrap();
                let back = implied_overlap(c, m, t).unwrap();
                assert!((back - o).abs() < 1e-12, "c {c}, m {m}, o {o}: {back}");
            }
        }
        assert_eq!(implied_overlap(0.0, 3.0, 3.0).unwrap(), 1.0);
        assert!(implied_overlap(1.0, 3.0, f64::NAN).is_err());
        assert!(implied_overlap(1.0, -3.0, 3.0).is_err());
    }

    /// The neutral overlap gives back `ForwardCost::time` (the seed's `max`) for the
    /// lecture's passes, on one card and under tensor parallelism.
    #[test]
    fn full_overlap_reproduces_the_seeds_pass_time() {
        for (cfg, tp) in [
            (LLAMA31_8B, 1),
            (*llm_math::model("Llama-3.1-70B").unwrap(), 4),
        ] {
            for (batch, n) in [(1, 1), (1, 5), (64, 8), (256, 1)] {
                let dep = Deployment {
                    tp,
                    ..Deployment::LECTURE
                };
                let shape = ForwardShape {
                    batch,
                    ctx: 1024,
                    n_new: n,
                };
                let cost = forward_cost(&cfg, &H100, shape, &dep).unwrap();
                let (c, m) = (cost.compute_time, cost.memory_time);
                let t = overlapped_time(c, m, CostTerms::NEUTRAL.overlap).unwrap();
                assert_eq!(
                    t + cost.comm_time,
                    cost.time(),
                    "{} B={batch} n={n}",
                    cfg.name
                );
                // And no overlap costs exactly the smaller of the two more.
                let sum = overlapped_time(c, m, 0.0).unwrap();
                let gap = cost.compute_time.min(cost.memory_time);
                assert!((sum - t - gap).abs() <= 1e-15 * sum);
            }
        }
    }

    /// 2 · 8.03e9 FLOP / (0.77 · 989e12 FLOP/s) = 21.09 µs (bf16); FP8 at 1979e12 FLOP/s.
    #[test]
    fn a_verified_token_costs_its_compute_by_hand() {
        let bf16 = verify_time_per_token(8.03e9, &H100, WeightDtype::Bf16, 0.77).unwrap();
        assert!((bf16 - 2.0 * 8.03e9 / (0.77 * 989e12)).abs() < 1e-18);
        assert!((bf16 - 21.09e-6).abs() < 0.01e-6, "{bf16}");
        let fp8 = verify_time_per_token(8.03e9, &H100, WeightDtype::Fp8, 0.77).unwrap();
        assert!(
            (fp8 - 2.0 * 8.03e9 / (0.77 * 1979e12)).abs() < 1e-18,
            "{fp8}"
        );
        assert!(verify_time_per_token(0.0, &H100, WeightDtype::Bf16, 0.77).is_err());
        assert!(verify_time_per_token(8e9, &H100, WeightDtype::Bf16, 0.0).is_err());
        // 4 sequences verifying 5 tokens each: 4 · 4 · 21 µs = 336 µs; the seed adds nothing.
        assert!((verify_extra_time(4, 5, 21e-6).unwrap() - 336e-6).abs() < 1e-15);
        assert_eq!(verify_extra_time(4, 1, 21e-6).unwrap(), 0.0);
        let neutral = CostTerms::NEUTRAL.verify_per_batch_token;
        assert_eq!(verify_extra_time(256, 64, neutral).unwrap(), 0.0);
        assert!(verify_extra_time(1, 2, f64::NAN).is_err());
    }

    #[test]
    fn a_round_and_a_deep_draft_cost_their_terms_by_hand() {
        // 0.6 ms + 8 sequences · 0.5 ms = 4.6 ms; 0.74 ms per layer · 1 layer · 4 steps.
        assert!((round_overhead(0.6e-3, 0.5e-3, 8).unwrap() - 4.6e-3).abs() < 1e-15);
        assert!((draft_layer_time(0.74e-3, 1, 4).unwrap() - 2.96e-3).abs() < 1e-15);
        assert_eq!(draft_layer_time(1e-4, 16, 3).unwrap(), 1e-4 * 48.0);
        let n = CostTerms::NEUTRAL;
        assert_eq!(
            round_overhead(n.round_fixed, n.round_per_sequence, 256).unwrap(),
            0.0
        );
        assert_eq!(draft_layer_time(n.draft_per_layer, 80, 8).unwrap(), 0.0);
        assert!(round_overhead(-1.0, 0.0, 1).is_err());
        assert!(draft_layer_time(f64::INFINITY, 1, 1).is_err());
    }

    #[test]
    fn an_fp8_factor_scales_fp8_only_and_the_neutral_one_nothing() {
        let f = DtypeEfficiency {
            bandwidth: 0.5,
            compute: 0.8,
        };
        assert_eq!(
            f.apply(WeightDtype::Fp8, 0.8, 0.6).unwrap(),
            (0.4, 0.6 * 0.8)
        );
        assert_eq!(f.apply(WeightDtype::Bf16, 0.8, 0.6).unwrap(), (0.8, 0.6));
        let lecture = Deployment::LECTURE;
        for w in WeightDtype::ALL {
            assert_eq!(
                DtypeEfficiency::NEUTRAL
                    .apply(w, lecture.bandwidth_efficiency, lecture.compute_efficiency)
                    .unwrap(),
                (0.8, 0.6)
            );
        }
        let bad = DtypeEfficiency {
            bandwidth: 0.0,
            compute: 1.0,
        };
        assert!(bad.apply(WeightDtype::Fp8, 0.8, 0.6).is_err());
    }

    /// The W8A16 factor scales that format's bandwidth efficiency only, and the FP8
    /// factors stay FP8's: each format keeps its own.
    #[test]
    fn a_w8a16_factor_scales_w8a16_only() {
        let t = CostTerms {
            w8a16_bandwidth: 0.5,
            fp8: DtypeEfficiency {
                bandwidth: 0.9,
                compute: 0.7,
            },
            ..CostTerms::NEUTRAL
        };
        for w in WeightDtype::ALL {
            let expected = match w {
                WeightDtype::W8A16 => (0.4, 0.6),
                WeightDtype::Fp8 => (0.8 * 0.9, 0.6 * 0.7),
                _ => (0.8, 0.6),
            };
            assert_eq!(t.efficiencies(w, 0.8, 0.6).unwrap(), expected, "{w:?}");
        }
        for f in [0.0, 1.5, f64::NAN] {
            let bad = CostTerms {
                w8a16_bandwidth: f,
                ..CostTerms::NEUTRAL
            };
            let e = bad.check().unwrap_err().to_string();
            assert!(e.contains("W8A16 bandwidth"), "{e}");
        }
    }

    #[test]
    fn all_reduce_latency_follows_the_cards_interconnect() {
        let l = AllReduceLatencies {
            nvlink: 25e-6,
            infinity_fabric: 40e-6,
            pcie: 60e-6,
            ethernet: 80e-6,
        };
        assert_eq!(l.for_card(&H100).unwrap(), 25e-6);
        assert_eq!(
            l.for_card(hw_specs::accelerator("MI300X").unwrap())
                .unwrap(),
            40e-6
        );
        assert_eq!(
            l.for_card(hw_specs::accelerator("H100-PCIe").unwrap())
                .unwrap(),
            60e-6
        );
        let gaudi3 = hw_specs::accelerator("Gaudi3").unwrap();
        assert_eq!(l.for_card(gaudi3).unwrap(), 80e-6);
        // Every card, built in or shipped, has a family, and the neutral latencies are the
        // seed's free all-reduce.
        for hw in hw_specs::catalog::all_accelerators() {
            assert_eq!(
                AllReduceLatencies::NEUTRAL.for_card(hw).unwrap(),
                Deployment::LECTURE.all_reduce_latency,
                "{}",
                hw.name
            );
        }
        let odd = Accelerator {
            interconnect: hw_specs::Interconnect {
                kind: "smoke signals",
                ..H100.interconnect
            },
            ..H100
        };
        assert!(
            l.for_card(&odd)
                .unwrap_err()
                .to_string()
                .contains("smoke signals")
        );
    }
}
