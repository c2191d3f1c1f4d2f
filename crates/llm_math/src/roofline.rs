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
    /// `flops / (peak · COMPUTE_EFFICIENCY)`, seconds.
    pub compute_time: f64,
    /// `bytes / (bandwidth · BANDWIDTH_EFFICIENCY)`, seconds.
    pub memory_time: f64,
}

impl ForwardCost {
    /// The pass's time, seconds: the slower of compute and memory (perfect overlap).
    pub fn time(&self) -> f64 {
        self.compute_time.max(self.memory_time)
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
    shape.check()?;
    let fits = max_batch(cfg, hw, shape.ctx)?;
    if shape.batch > fits {
        return Err(Error::DoesNotFit {
            model: cfg.name,
            hw: hw.name,
            batch: shape.batch,
            ctx: shape.ctx,
            max_batch: fits,
        });
    }
    forward_cost(cfg, hw, shape)
}

/// [`forward_time`] without the memory check: the roofline cost of a pass whether or not
/// its weights and KV cache fit on the card. For a model whose memory is accounted
/// elsewhere (lecture 6 does not count the draft's). Errors only on a zero size.
pub fn forward_cost(
    cfg: &ModelConfig,
    hw: &Accelerator,
    shape: ForwardShape,
) -> Result<ForwardCost, Error> {
    shape.check()?;
    let p = cfg.streamed_params() as f64;
    let tokens = shape.batch as f64 * shape.n_new as f64;
    let ctx = shape.ctx as f64;
    let kv = cfg.kv_bytes_per_token() as f64;
    let attn_width = (cfg.n_layers * cfg.n_heads * cfg.head_dim) as f64;
    let flops = 2.0 * p * tokens + 4.0 * attn_width * ctx * tokens;
    let bytes = WEIGHT_BYTES_PER_PARAM as f64 * p + shape.batch as f64 * ctx * kv + tokens * kv;
    Ok(ForwardCost {
        flops,
        bytes,
        compute_time: flops / (hw.peak_flops_bf16 * COMPUTE_EFFICIENCY),
        memory_time: bytes / (hw.hbm_bandwidth * BANDWIDTH_EFFICIENCY),
    })
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
    if ctx == 0 {
        return Err(Error::Zero("context length"));
    }
    let weights = (WEIGHT_BYTES_PER_PARAM * cfg.n_params()) as f64;
    let free = hw.memory_bytes - weights;
    if free <= 0.0 {
        return Ok(0);
    }
    let per_seq = ctx as f64 * cfg.kv_bytes_per_token() as f64;
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
        assert_eq!(c, forward_cost(&LLAMA31_8B, &H100, big).unwrap());
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
                max_batch: 14
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
}
