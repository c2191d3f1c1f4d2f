//! The roofline time of one forward pass, and what fits in memory.

use crate::{Error, ModelConfig};
use hw_specs::Accelerator;

/// Bytes per weight: the lecture serves in bf16.
pub const WEIGHT_BYTES_PER_PARAM: u64 = 2;
/// Bytes per cached K or V element: bf16.
pub const KV_BYTES_PER_ELEMENT: u64 = 2;
/// Fraction of peak FLOP/s a real decode kernel reaches (lecture 1's assumption).
pub const COMPUTE_EFFICIENCY: f64 = 0.6;
/// Fraction of peak HBM bandwidth a real decode kernel reaches (lecture 1's assumption).
pub const BANDWIDTH_EFFICIENCY: f64 = 0.8;

/// How weights are stored in device memory, and what a forward pass reads per weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WeightDtype {
    /// bf16: 2 bytes per weight (the lecture's default).
    #[default]
    Bf16,
    /// FP8 (e4m3): 1 byte per weight; multiplied at the card's FP8 peak where it has one
    /// (W8A8, as TensorRT-LLM and vLLM run FP8 checkpoints).
    Fp8,
    /// INT4 with bf16 activations (W4A16, AWQ/GPTQ-style): 0.5 bytes per weight, group
    /// scales ignored; dequantized and multiplied at the bf16 peak.
    Int4,
}

impl WeightDtype {
    /// Bytes per stored weight.
    pub fn bytes(self) -> f64 {
        match self {
            WeightDtype::Bf16 => 2.0,
            WeightDtype::Fp8 => 1.0,
            WeightDtype::Int4 => 0.5,
        }
    }

    /// The card's peak FLOP/s for matrix products with these weights: FP8's where the
    /// weights are FP8 and the card has FP8 tensor cores, bf16's otherwise.
    pub fn peak_flops(self, hw: &Accelerator) -> f64 {
        match self {
            WeightDtype::Fp8 => hw.peak_flops_fp8_or_bf16(),
            WeightDtype::Bf16 | WeightDtype::Int4 => hw.peak_flops_bf16,
        }
    }
}

/// How the KV cache is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KvDtype {
    /// bf16: 2 bytes per element (the lecture's default).
    #[default]
    Bf16,
    /// FP8: 1 byte per element.
    Fp8,
}

impl KvDtype {
    /// Bytes per cached K or V element.
    pub fn bytes(self) -> u64 {
        match self {
            KvDtype::Bf16 => 2,
            KvDtype::Fp8 => 1,
        }
    }
}

/// How a model is served: the roofline's knobs beyond the model and the card.
///
/// [`Deployment::default()`] is the lecture's: one card, bf16 weights and KV, 60% of
/// peak FLOP/s, 80% of peak bandwidth, no all-reduce latency; with it every function of
/// this module gives exactly what its plain twin gives ([`forward_cost`], [`max_batch`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Deployment {
    /// Tensor-parallel degree: the model is split over this many cards of the same kind
    /// (Megatron-style: heads and the MLP's hidden width split N ways, two all-reduces
    /// of the activations per layer). Must be ≥ 1 and divide the query heads.
    pub tp: u64,
    /// How the weights are stored.
    pub weights: WeightDtype,
    /// How the KV cache is stored.
    pub kv: KvDtype,
    /// Fraction of peak FLOP/s reached, in (0, 1].
    pub compute_efficiency: f64,
    /// Fraction of peak memory bandwidth reached, in (0, 1].
    pub bandwidth_efficiency: f64,
    /// Fixed cost of one all-reduce, seconds (launch and synchronisation, independent of
    /// size); charged `2 · layers` times per pass when `tp > 1`. 0 in the lecture.
    pub all_reduce_latency: f64,
}

impl Default for Deployment {
    fn default() -> Self {
        Deployment {
            tp: 1,
            weights: WeightDtype::Bf16,
            kv: KvDtype::Bf16,
            compute_efficiency: COMPUTE_EFFICIENCY,
            bandwidth_efficiency: BANDWIDTH_EFFICIENCY,
            all_reduce_latency: 0.0,
        }
    }
}

impl Deployment {
    /// Checks every knob against `cfg`: `tp ≥ 1` dividing the query heads, efficiencies
    /// in (0, 1], a finite latency ≥ 0. Errors say which knob and why.
    pub fn check(&self, cfg: &ModelConfig) -> Result<(), Error> {
        if self.tp == 0 {
            return Err(Error::Zero("tensor-parallel degree"));
        }
        if cfg.n_heads % self.tp != 0 {
            return Err(Error::Invalid(format!(
                "tensor parallelism over {} cards does not divide {}'s {} query heads",
                self.tp, cfg.name, cfg.n_heads
            )));
        }
        for (what, e) in [
            ("compute efficiency", self.compute_efficiency),
            ("bandwidth efficiency", self.bandwidth_efficiency),
        ] {
            if !(e > 0.0 && e <= 1.0) {
                return Err(Error::Invalid(format!(
                    "{what} must be a fraction of peak in (0, 1], got {e}"
                )));
            }
        }
        if !(self.all_reduce_latency.is_finite() && self.all_reduce_latency >= 0.0) {
            return Err(Error::Invalid(format!(
                "all-reduce latency must be a finite number of seconds ≥ 0, got {}",
                self.all_reduce_latency
            )));
        }
        Ok(())
    }

    /// Bytes of KV cache one token occupies in all, over all cards, at this KV dtype.
    pub fn kv_bytes_per_token(&self, cfg: &ModelConfig) -> u64 {
        2 * cfg.n_layers * cfg.n_kv_heads * cfg.head_dim * self.kv.bytes()
    }

    /// How many ways the KV cache is split: `min(tp, kv_heads)` (past that, KV heads are
    /// replicated, as vLLM does when `tp > num_key_value_heads`).
    pub fn kv_shards(&self, cfg: &ModelConfig) -> u64 {
        self.tp.min(cfg.n_kv_heads).max(1)
    }
}

/// The shape of one forward pass: `batch` sequences, each feeding `n_new` new tokens
/// on top of `ctx` tokens already in its KV cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForwardShape {
    /// Sequences in the batch.
    pub batch: u64,
    /// Tokens already cached per sequence.
    pub ctx: u64,
    /// New tokens per sequence (1 for plain decode, γ + 1 to verify γ drafts).
    pub n_new: u64,
}

impl ForwardShape {
    /// Tokens through the weights in this pass: `batch · n_new`.
    pub fn tokens(&self) -> u64 {
        self.batch.saturating_mul(self.n_new)
    }

    fn check(&self) -> Result<(), Error> {
        if self.batch == 0 {
            return Err(Error::Zero("batch size"));
        }
        if self.ctx == 0 {
            return Err(Error::Zero("context length"));
        }
        if self.n_new == 0 {
            return Err(Error::Zero("number of new tokens"));
        }
        Ok(())
    }
}

/// The roofline cost of one forward pass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForwardCost {
    /// Floating-point operations.
    pub flops: f64,
    /// Bytes moved to or from device memory.
    pub bytes: f64,
    /// `flops / (peak · COMPUTE_EFFICIENCY)`, seconds (per card under tensor parallelism;
    /// so are `flops` and `bytes`).
    pub compute_time: f64,
    /// `bytes / (bandwidth · BANDWIDTH_EFFICIENCY)`, seconds.
    pub memory_time: f64,
    /// Tensor-parallel all-reduces, seconds ([`all_reduce_time`]); 0 on one card.
    pub comm_time: f64,
}

impl ForwardCost {
    /// The pass's time, seconds: the slower of compute and memory (perfect overlap),
    /// plus the all-reduces (which wait for the matrix products and are waited for).
    pub fn time(&self) -> f64 {
        self.compute_time.max(self.memory_time) + self.comm_time
    }

    /// Whether compute, not bandwidth, sets the time.
    pub fn is_compute_bound(&self) -> bool {
        self.compute_time > self.memory_time
    }
}

/// Roofline cost of one forward pass of `cfg` on `hw`.
///
/// With `tokens = batch · n_new`:
/// - FLOPs = 2 · streamed_params · tokens + 4 · layers · heads · head_dim · ctx · tokens
///   (the matrix products, then QKᵀ and PV against the cache);
/// - bytes = 2 · streamed_params + batch · ctx · kv_bytes_per_token + tokens · kv_bytes_per_token
///   (weights read once for the whole batch; each sequence's KV read once for all its
///   `n_new` queries, as a fused attention kernel does; the new tokens' KV written).
///
/// Errors: a zero size, or a batch that [`max_batch`] says does not fit at `ctx`.
///
/// ```
/// use llm_math::{forward_time, ForwardShape, LLAMA31_8B};
/// use hw_specs::H100;
/// // One decode step at batch 1, context 1024: memory-bound, 15.14 GB / 2.68 TB/s ≈ 5.65 ms.
/// let cost = forward_time(&LLAMA31_8B, &H100, ForwardShape { batch: 1, ctx: 1024, n_new: 1 })?;
/// assert!(!cost.is_compute_bound());
/// assert!((cost.time() - 5.6508e-3).abs() < 1e-6);
/// # Ok::<(), llm_math::Error>(())
/// ```
pub fn forward_time(
    cfg: &ModelConfig,
    hw: &Accelerator,
    shape: ForwardShape,
) -> Result<ForwardCost, Error> {
    forward_time_with(cfg, hw, shape, &Deployment::default())
}

/// [`forward_time`] without the memory check: the roofline cost of a pass whether or not
/// its weights and KV cache fit on the card. For a model whose memory is accounted
/// elsewhere (lecture 6 does not count the draft's). Errors only on a zero size.
pub fn forward_cost(
    cfg: &ModelConfig,
    hw: &Accelerator,
    shape: ForwardShape,
) -> Result<ForwardCost, Error> {
    forward_cost_with(cfg, hw, shape, &Deployment::default())
}

/// [`forward_time`] for a model served as `dep` says: the per-card cost of one pass, with
/// the memory check at [`max_batch_with`]. Errors: a zero size, a knob out of its domain
/// ([`Deployment::check`]), a batch that does not fit on the `dep.tp` cards.
pub fn forward_time_with(
    cfg: &ModelConfig,
    hw: &Accelerator,
    shape: ForwardShape,
    dep: &Deployment,
) -> Result<ForwardCost, Error> {
    shape.check()?;
    let fits = max_batch_with(cfg, hw, shape.ctx, dep)?;
    if shape.batch > fits {
        return Err(Error::DoesNotFit {
            model: cfg.name,
            hw: hw.name,
            batch: shape.batch,
            ctx: shape.ctx,
            max_batch: fits,
            cards: dep.tp,
        });
    }
    forward_cost_with(cfg, hw, shape, dep)
}

/// The roofline cost of one pass on each of `dep.tp` cards, without the memory check.
///
/// Per card, with `N = dep.tp`, `w` bytes per weight, `k` KV bytes per token at the KV
/// dtype, `S = min(N, kv_heads)` KV shards:
/// - FLOPs = (2 · streamed_params · tokens + 4 · layers · heads · head_dim · ctx · tokens) / N,
///   at the weights' peak ([`WeightDtype::peak_flops`]) × `compute_efficiency`;
/// - bytes = w · streamed_params / N + (batch · ctx · k + tokens · k) / S,
///   at peak bandwidth × `bandwidth_efficiency`;
/// - plus, when N > 1, the two all-reduces per layer ([`all_reduce_time`]), which sit
///   between the matrix products on the critical path and are *added*, not overlapped.
///
/// Errors: a zero size, or a knob out of its domain.
///
/// ```
/// use llm_math::{forward_cost, forward_cost_with, Deployment, ForwardShape, WeightDtype, LLAMA31_8B};
/// use hw_specs::H100;
/// let shape = ForwardShape { batch: 1, ctx: 1024, n_new: 1 };
/// let bf16 = forward_cost(&LLAMA31_8B, &H100, shape)?;
/// let fp8 = forward_cost_with(&LLAMA31_8B, &H100, shape,
///     &Deployment { weights: WeightDtype::Fp8, ..Deployment::default() })?;
/// // Weights 15.01 GB → 7.50 GB; the KV read (134 MB) stays.
/// assert_eq!(bf16.bytes - fp8.bytes, 7_504_924_672.0);
/// # Ok::<(), llm_math::Error>(())
/// ```
pub fn forward_cost_with(
    cfg: &ModelConfig,
    hw: &Accelerator,
    shape: ForwardShape,
    dep: &Deployment,
) -> Result<ForwardCost, Error> {
    shape.check()?;
    dep.check(cfg)?;
    let n = dep.tp as f64;
    let shards = dep.kv_shards(cfg) as f64;
    let p = cfg.streamed_params() as f64;
    let tokens = shape.batch as f64 * shape.n_new as f64;
    let ctx = shape.ctx as f64;
    let kv = dep.kv_bytes_per_token(cfg) as f64;
    let attn_width = (cfg.n_layers * cfg.n_heads * cfg.head_dim) as f64;
    let flops = (2.0 * p * tokens + 4.0 * attn_width * ctx * tokens) / n;
    let bytes =
        dep.weights.bytes() * p / n + shape.batch as f64 * ctx * kv / shards + tokens * kv / shards;
    Ok(ForwardCost {
        flops,
        bytes,
        compute_time: flops / (dep.weights.peak_flops(hw) * dep.compute_efficiency),
        memory_time: bytes / (hw.hbm_bandwidth * dep.bandwidth_efficiency),
        comm_time: all_reduce_time(cfg, hw, shape.tokens(), dep),
    })
}

/// Time of the tensor-parallel all-reduces of one pass, seconds: 0 on one card.
///
/// Each layer all-reduces its activations twice (after attention's output projection and
/// after the MLP's down projection), `bytes = tokens · d_model · 2` (bf16) each time. A ring
/// all-reduce over N cards sends and receives `2 (N − 1) / N · bytes` per card, each way at
/// once, so one costs `2 (N − 1) / N · bytes / link + latency` with `link` the card's
/// per-direction bandwidth for N cards ([`hw_specs::Interconnect::all_reduce_bandwidth`]).
/// Total: `2 · layers` of them.
///
/// ```
/// use llm_math::{all_reduce_time, Deployment, LLAMA31_70B};
/// use hw_specs::H100;
/// let tp2 = Deployment { tp: 2, ..Deployment::default() };
/// // Batch 1: 8192 · 2 = 16 KiB per all-reduce; 2·(1/2)·16384 B / 450 GB/s = 36.4 ns; × 160.
/// let t = all_reduce_time(&LLAMA31_70B, &H100, 1, &tp2);
/// assert!((t - 160.0 * 16384.0 / 450e9).abs() < 1e-15);
/// ```
pub fn all_reduce_time(cfg: &ModelConfig, hw: &Accelerator, tokens: u64, dep: &Deployment) -> f64 {
    if dep.tp <= 1 {
        return 0.0;
    }
    let n = dep.tp as f64;
    let bytes = tokens as f64 * cfg.d_model as f64 * 2.0;
    let link = hw.interconnect.all_reduce_bandwidth(dep.tp);
    let one = 2.0 * (n - 1.0) / n * bytes / link + dep.all_reduce_latency;
    2.0 * cfg.n_layers as f64 * one
}

/// The largest number of sequences of `ctx` tokens whose KV caches fit next to the
/// model's weights: `floor((memory − 2 · n_params) / (ctx · kv_bytes_per_token))`.
///
/// All weights stay resident, the embedding table included. Returns 0 when the weights
/// alone do not fit. Errors when `ctx` is 0.
///
/// ```
/// use llm_math::{max_batch, LLAMA31_8B};
/// use hw_specs::H100;
/// // (80e9 − 2 · 8,030,261,248) / (32768 · 131,072) = 14.89 → 14 sequences.
/// assert_eq!(max_batch(&LLAMA31_8B, &H100, 32768)?, 14);
/// # Ok::<(), llm_math::Error>(())
/// ```
pub fn max_batch(cfg: &ModelConfig, hw: &Accelerator, ctx: u64) -> Result<u64, Error> {
    max_batch_with(cfg, hw, ctx, &Deployment::default())
}

/// [`max_batch`] on `dep.tp` cards at `dep`'s dtypes: the cards hold `tp · memory` bytes,
/// the weights take `w · n_params`, each sequence `ctx` tokens of KV at the KV dtype
/// (replicated `tp / kv_shards` times when `tp` exceeds the KV heads):
/// `floor((tp · memory − w · n_params) / (ctx · k · tp / S))`. Errors: `ctx` 0, a bad knob.
///
/// ```
/// use llm_math::{max_batch_with, Deployment, LLAMA31_70B};
/// use hw_specs::H100;
/// let tp = |n| Deployment { tp: n, ..Deployment::default() };
/// assert_eq!(max_batch_with(&LLAMA31_70B, &H100, 8192, &tp(1))?, 0); // 141 GB of weights
/// // (2 · 80e9 − 141,107,412,992) / (8192 · 327,680) = 7.04 → 7.
/// assert_eq!(max_batch_with(&LLAMA31_70B, &H100, 8192, &tp(2))?, 7);
/// # Ok::<(), llm_math::Error>(())
/// ```
pub fn max_batch_with(
    cfg: &ModelConfig,
    hw: &Accelerator,
    ctx: u64,
    dep: &Deployment,
) -> Result<u64, Error> {
    if ctx == 0 {
        return Err(Error::Zero("context length"));
    }
    dep.check(cfg)?;
    let weights = dep.weights.bytes() * cfg.n_params() as f64;
    let free = dep.tp as f64 * hw.memory_bytes - weights;
    if free <= 0.0 {
        return Ok(0);
    }
    let replicas = (dep.tp / dep.kv_shards(cfg)) as f64;
    let per_seq = ctx as f64 * dep.kv_bytes_per_token(cfg) as f64 * replicas;
    Ok((free / per_seq).floor() as u64)
}

/// The critical batch, in tokens per forward pass: below it a pass is limited by
/// reading the weights, above it by the matrix products.
///
/// Each token costs 2 FLOPs per weight, and the weights cost
/// `WEIGHT_BYTES_PER_PARAM` bytes per weight once per pass, so the two times are equal at
/// `tokens = peak · COMPUTE_EFFICIENCY · WEIGHT_BYTES_PER_PARAM / (2 · bandwidth · BANDWIDTH_EFFICIENCY)`
/// (lecture 1 §3.6; attention and KV traffic ignored).
///
/// ```
/// // H100 at 60% / 80%: 989e12 · 0.6 / (3.35e12 · 0.8) ≈ 221 tokens.
/// assert!((llm_math::critical_tokens(&hw_specs::H100) - 221.4).abs() < 0.1);
/// ```
pub fn critical_tokens(hw: &Accelerator) -> f64 {
    hw.peak_flops_bf16 * COMPUTE_EFFICIENCY * WEIGHT_BYTES_PER_PARAM as f64
        / (2.0 * hw.hbm_bandwidth * BANDWIDTH_EFFICIENCY)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LLAMA31_8B;
    use hw_specs::H100;

    const BW: f64 = 3.35e12 * 0.8;
    const PEAK: f64 = 989e12 * 0.6;

    fn shape(batch: u64, ctx: u64, n_new: u64) -> ForwardShape {
        ForwardShape { batch, ctx, n_new }
    }

    #[test]
    fn a_batch_one_decode_step_is_the_weight_read_plus_the_kv_read() {
        let c = forward_time(&LLAMA31_8B, &H100, shape(1, 1024, 1)).unwrap();
        // bytes = 2·7,504,924,672 + 1024·131,072 + 131,072 = 15,144,198,144
        assert_eq!(c.bytes, 15_144_198_144.0);
        // flops = 2·7,504,924,672 + 4·32·32·128·1024 = 15,546,720,256
        assert_eq!(c.flops, 15_546_720_256.0);
        assert!(!c.is_compute_bound());
        assert!((c.time() - 15_144_198_144.0 / BW).abs() < 1e-15);
        assert!((c.time() - 5.650820e-3).abs() < 1e-9);
    }

    #[test]
    fn a_batch_512_verify_of_5_tokens_is_compute_bound() {
        let c = forward_time(&LLAMA31_8B, &H100, shape(512, 512, 5)).unwrap();
        // tokens = 2560; flops = 2·P·2560 + 4·131,072·512·2560
        let p = 7_504_924_672.0_f64;
        let flops = 2.0 * p * 2560.0 + 4.0 * 131_072.0 * 512.0 * 2560.0;
        assert_eq!(c.flops, flops);
        // bytes = 2P + 512·512·131,072 + 2560·131,072
        let bytes = 2.0 * p + 512.0 * 512.0 * 131_072.0 + 2560.0 * 131_072.0;
        assert_eq!(c.bytes, bytes);
        assert!(c.is_compute_bound());
        assert!((c.time() - flops / PEAK).abs() < 1e-15);
        // = 65.912 ms
        assert!((c.time() - 65.912e-3).abs() < 1e-5, "{}", c.time());
    }

    #[test]
    fn max_batch_counts_whole_sequences_after_the_weights() {
        // free = 80e9 − 16,060,522,496 = 63,939,477,504 bytes
        // ctx 512: 67,108,864 B/seq → 952.8 → 952; ctx 4096 → 119; ctx 32768 → 14
        assert_eq!(max_batch(&LLAMA31_8B, &H100, 512).unwrap(), 952);
        assert_eq!(max_batch(&LLAMA31_8B, &H100, 4096).unwrap(), 119);
        assert_eq!(max_batch(&LLAMA31_8B, &H100, 32768).unwrap(), 14);
    }

    #[test]
    fn max_batch_is_zero_when_the_weights_alone_do_not_fit() {
        let small = Accelerator {
            memory_bytes: 16e9,
            ..H100
        };
        assert_eq!(max_batch(&LLAMA31_8B, &small, 1).unwrap(), 0);
        let err = forward_time(&LLAMA31_8B, &small, shape(1, 1, 1)).unwrap_err();
        assert!(err.to_string().contains("weights alone"), "{err}");
    }

    #[test]
    fn zero_sizes_are_errors_that_name_the_size() {
        let e = |b, c, n| forward_time(&LLAMA31_8B, &H100, shape(b, c, n)).unwrap_err();
        assert_eq!(e(0, 1, 1), Error::Zero("batch size"));
        assert_eq!(e(1, 0, 1), Error::Zero("context length"));
        assert_eq!(e(1, 1, 0), Error::Zero("number of new tokens"));
        assert_eq!(
            max_batch(&LLAMA31_8B, &H100, 0),
            Err(Error::Zero("context length"))
        );
        assert_eq!(
            e(0, 1, 1).to_string(),
            "batch size must be at least 1, got 0"
        );
    }

    #[test]
    fn forward_cost_skips_only_the_memory_check() {
        let big = shape(64, 32768, 1);
        assert!(forward_time(&LLAMA31_8B, &H100, big).is_err());
        let c = forward_cost(&LLAMA31_8B, &H100, big).unwrap();
        // 64 sequences of 32K tokens: 2P + 64·32768·131,072 + 64·131,072 bytes, by hand.
        let p = 7_504_924_672.0_f64;
        assert_eq!(c.bytes, 2.0 * p + 274_877_906_944.0 + 8_388_608.0);
        let ok = shape(4, 1024, 3);
        assert_eq!(
            forward_cost(&LLAMA31_8B, &H100, ok),
            forward_time(&LLAMA31_8B, &H100, ok)
        );
        assert_eq!(
            forward_cost(&LLAMA31_8B, &H100, shape(0, 1, 1)),
            Err(Error::Zero("batch size"))
        );
    }

    #[test]
    fn a_batch_over_max_batch_does_not_fit() {
        let err = forward_time(&LLAMA31_8B, &H100, shape(15, 32768, 1)).unwrap_err();
        assert_eq!(
            err,
            Error::DoesNotFit {
                model: "Llama-3.1-8B",
                hw: "H100",
                batch: 15,
                ctx: 32768,
                max_batch: 14,
                cards: 1,
            }
        );
        assert!(err.to_string().contains("at most 14 sequences"), "{err}");
        assert!(forward_time(&LLAMA31_8B, &H100, shape(14, 32768, 1)).is_ok());
    }

    #[test]
    fn the_critical_batch_on_h100_is_about_220_tokens() {
        let t = critical_tokens(&H100);
        assert!((t - PEAK / BW).abs() < 1e-9);
        assert!((215.0..=225.0).contains(&t), "{t}");
    }

    #[test]
    fn time_grows_with_batch_context_and_new_tokens() {
        let t = |b, c, n| {
            forward_time(&LLAMA31_8B, &H100, shape(b, c, n))
                .unwrap()
                .time()
        };
        for &(b, c, n) in &[(1, 512, 1), (4, 1024, 3), (64, 2048, 9), (256, 512, 2)] {
            assert!(t(b + 1, c, n) > t(b, c, n));
            assert!(t(b, c + 1, n) > t(b, c, n));
            assert!(t(b, c, n + 1) > t(b, c, n));
        }
    }

    fn dep(tp: u64, weights: WeightDtype, kv: KvDtype) -> Deployment {
        Deployment {
            tp,
            weights,
            kv,
            ..Deployment::default()
        }
    }

    #[test]
    fn tp2_halves_the_weight_bytes_per_card_and_adds_the_all_reduces() {
        let s = shape(1, 1024, 1);
        let one = forward_cost(&LLAMA31_8B, &H100, s).unwrap();
        let two = forward_cost_with(
            &LLAMA31_8B,
            &H100,
            s,
            &dep(2, WeightDtype::Bf16, KvDtype::Bf16),
        )
        .unwrap();
        // Per card: weights 2·P/2 = P bytes; KV (1024 + 1) · 131,072 / 2 (8 KV heads split 2 ways).
        let p = 7_504_924_672.0_f64;
        assert_eq!(two.bytes, p + 1025.0 * 131_072.0 / 2.0);
        assert_eq!(two.bytes, one.bytes / 2.0);
        // 64 all-reduces of 4096 · 2 = 8 KiB, ring over 2: 2·(1/2)·8192 B at 450 GB/s each.
        let comm = 64.0 * 8192.0 / 450e9;
        assert!((two.comm_time - comm).abs() < 1e-18, "{}", two.comm_time);
        assert!((two.time() - (two.bytes / BW + comm)).abs() < 1e-15);
        // ≈ 2.8254 ms + 1.165 µs: half the single card's 5.6508 ms, plus the all-reduces.
        assert!((two.time() - 2.826_575e-3).abs() < 1e-8, "{}", two.time());
        assert_eq!(one.comm_time, 0.0);
    }

    #[test]
    fn fp8_weights_halve_the_weight_bytes_and_use_the_fp8_peak() {
        let s = shape(512, 512, 5);
        let bf16 = forward_cost(&LLAMA31_8B, &H100, s).unwrap();
        let fp8 = forward_cost_with(
            &LLAMA31_8B,
            &H100,
            s,
            &dep(1, WeightDtype::Fp8, KvDtype::Bf16),
        )
        .unwrap();
        let p = 7_504_924_672.0_f64;
        assert_eq!(bf16.bytes - fp8.bytes, p);
        assert_eq!(fp8.flops, bf16.flops);
        // H100's dense FP8 peak is 1979 TFLOP/s: the compute time halves (to ≈ 32.96 ms).
        assert!((fp8.compute_time - fp8.flops / (1979e12 * 0.6)).abs() < 1e-15);
        assert!(
            (fp8.compute_time - 32.939e-3).abs() < 1e-5,
            "{}",
            fp8.compute_time
        );
        // A100 has no FP8 tensor cores: FP8 weights still run at its bf16 peak.
        let a = forward_cost_with(
            &LLAMA31_8B,
            &hw_specs::A100,
            s,
            &dep(1, WeightDtype::Fp8, KvDtype::Bf16),
        )
        .unwrap();
        assert!((a.compute_time - a.flops / (312e12 * 0.6)).abs() < 1e-15);
        // INT4: a quarter of bf16's weight bytes, bf16 peak.
        let int4 = forward_cost_with(
            &LLAMA31_8B,
            &H100,
            s,
            &dep(1, WeightDtype::Int4, KvDtype::Bf16),
        )
        .unwrap();
        assert_eq!(bf16.bytes - int4.bytes, 1.5 * p);
        assert_eq!(int4.compute_time, bf16.compute_time);
    }

    #[test]
    fn an_fp8_kv_cache_halves_the_kv_bytes_and_doubles_what_fits() {
        let d = dep(1, WeightDtype::Bf16, KvDtype::Fp8);
        assert_eq!(d.kv_bytes_per_token(&LLAMA31_8B), 65_536);
        // free 63,939,477,504 B / (32768 · 65,536) = 29.77 → 29 (bf16: 14).
        assert_eq!(max_batch_with(&LLAMA31_8B, &H100, 32768, &d).unwrap(), 29);
        let c = forward_cost_with(&LLAMA31_8B, &H100, shape(1, 1024, 1), &d).unwrap();
        assert_eq!(c.bytes, 2.0 * 7_504_924_672.0 + 1025.0 * 65_536.0);
    }

    #[test]
    fn the_default_deployment_is_the_plain_functions_bit_for_bit() {
        for &(b, c, n) in &[(1, 1024, 1), (512, 512, 5), (7, 333, 17), (64, 32768, 1)] {
            let s = shape(b, c, n);
            let plain = forward_cost(&LLAMA31_8B, &H100, s).unwrap();
            let with = forward_cost_with(&LLAMA31_8B, &H100, s, &Deployment::default()).unwrap();
            assert_eq!(plain.time().to_bits(), with.time().to_bits());
            // The seed's expression, written out: max(FLOPs / (peak·0.6), bytes / (bw·0.8)).
            let seed = (plain.flops / (989e12 * 0.6)).max(plain.bytes / (3.35e12 * 0.8));
            assert_eq!(plain.time().to_bits(), seed.to_bits());
        }
    }

    #[test]
    fn tensor_parallelism_lets_a_70b_fit_and_splits_its_kv_up_to_the_kv_heads() {
        use crate::LLAMA31_70B;
        let weights = 2.0 * 70_553_706_496.0_f64;
        // TP=2 on H100: (160e9 − 141.1e9) / (4096 · 327,680) = 14.08 → 14.
        let two = max_batch_with(
            &LLAMA31_70B,
            &H100,
            4096,
            &dep(2, WeightDtype::Bf16, KvDtype::Bf16),
        );
        assert_eq!(
            two.unwrap(),
            ((160e9_f64 - weights) / (4096.0 * 327_680.0)).floor() as u64
        );
        assert_eq!(max_batch(&LLAMA31_70B, &H100, 4096).unwrap(), 0);
        // TP=16 > 8 KV heads: each KV head lives on two cards, so the KV costs twice as much.
        let d16 = dep(16, WeightDtype::Bf16, KvDtype::Bf16);
        assert_eq!(d16.kv_shards(&LLAMA31_70B), 8);
        let c = forward_cost_with(&LLAMA31_70B, &H100, shape(1, 1000, 1), &d16).unwrap();
        let p = LLAMA31_70B.streamed_params() as f64;
        assert_eq!(
            c.bytes,
            2.0 * p / 16.0 + 1000.0 * 327_680.0 / 8.0 + 327_680.0 / 8.0
        );
    }

    #[test]
    fn bad_knobs_are_errors_that_say_which() {
        let s = shape(1, 1, 1);
        let e = |d: Deployment| forward_cost_with(&LLAMA31_8B, &H100, s, &d).unwrap_err();
        assert_eq!(
            e(Deployment {
                tp: 0,
                ..Deployment::default()
            }),
            Error::Zero("tensor-parallel degree")
        );
        assert!(
            e(Deployment {
                tp: 3,
                ..Deployment::default()
            })
            .to_string()
            .contains("32 query heads")
        );
        for x in [0.0, 1.5, f64::NAN, -0.1] {
            let m = e(Deployment {
                compute_efficiency: x,
                ..Deployment::default()
            })
            .to_string();
            assert!(m.contains("compute efficiency"), "{m}");
            let m = e(Deployment {
                bandwidth_efficiency: x,
                ..Deployment::default()
            })
            .to_string();
            assert!(m.contains("bandwidth efficiency"), "{m}");
        }
        assert!(matches!(
            e(Deployment {
                all_reduce_latency: -1.0,
                ..Deployment::default()
            }),
            Error::Invalid(_)
        ));
    }

    #[test]
    fn a_model_that_does_not_fit_on_tp_cards_says_how_many() {
        let d = dep(2, WeightDtype::Bf16, KvDtype::Bf16);
        let e = forward_time_with(&crate::LLAMA31_405B, &H100, shape(1, 1024, 1), &d).unwrap_err();
        assert!(e.to_string().contains("2 × H100"), "{e}");
    }
}
