//! The roofline time of one forward pass: a shape and a deployment give a cost — its FLOPs
//! and bytes ([`forward_cost`]) — and the cost gives the seed's time, `max(FLOPs / (peak ·
//! eff_c), bytes / (bw · eff_b))` plus the all-reduces under tensor parallelism
//! ([`ForwardCost::time`]; checked against device memory, [`ForwardCost::checked_time`]).
//! decode_lab's `verify_time` and a scenario's passes add their fixed overheads to it.

use crate::memory::max_batch_checked;
use crate::{Deployment, Error, ModelConfig};
use hw_specs::Accelerator;

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
    /// One plain decode step: `batch` sequences, one new token each, on `ctx` cached tokens.
    ///
    /// ```
    /// use llm_math::ForwardShape;
    /// assert_eq!(ForwardShape::decode(8, 512), ForwardShape { batch: 8, ctx: 512, n_new: 1 });
    /// ```
    pub const fn decode(batch: u64, ctx: u64) -> Self {
        ForwardShape {
            batch,
            ctx,
            n_new: 1,
        }
    }

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
        let tokens = self.batch.checked_mul(self.n_new);
        if tokens.is_none_or(|t| t > MAX_PASS_TOKENS) || self.ctx > MAX_PASS_TOKENS {
            return Err(Error::Invalid(format!(
                "a pass of {} sequences × {} new tokens after {} cached ones: at most \
                 {MAX_PASS_TOKENS} tokens through the weights and {MAX_PASS_TOKENS} cached",
                self.batch, self.n_new, self.ctx
            )));
        }
        Ok(())
    }
}

/// The most tokens a pass may feed through the weights (batch × new tokens), and the most
/// it may have cached per sequence: 2³², a thousand times any engine's batch, so every
/// count stays exact in `f64` and no product of them overflows.
pub const MAX_PASS_TOKENS: u64 = 1 << 32;

/// The roofline cost of one forward pass on each of the deployment's cards, and what the
/// cards can hold at its context.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForwardCost {
    /// Floating-point operations (per card under tensor parallelism; so are `bytes`).
    pub flops: f64,
    /// Bytes moved to or from device memory.
    pub bytes: f64,
    /// The weights' part of `bytes`, read once for the whole pass (the rest is KV cache).
    pub weight_bytes: f64,
    /// `flops / (peak · compute_efficiency)`, seconds.
    pub compute_time: f64,
    /// `bytes / (bandwidth · bandwidth_efficiency)`, seconds.
    pub memory_time: f64,
    /// Tensor-parallel all-reduces, seconds ([`all_reduce_time`]); 0 on one card.
    pub comm_time: f64,
    /// The largest batch the cards hold at this pass's context
    /// ([`max_batch_on`](crate::max_batch_on)).
    pub max_batch: u64,
    /// Whether the weights alone fit in the cards' memory (when they do and `max_batch`
    /// is 0, it is one sequence's KV that does not fit beside them).
    pub weights_fit: bool,
    /// The pass's shape.
    pub shape: ForwardShape,
    /// The model's name (for [`ForwardCost::checked_time`]'s error).
    pub model: &'static str,
    /// The card's name.
    pub hw: &'static str,
    /// Cards the model is split over.
    pub cards: u64,
}

impl ForwardCost {
    /// The pass's time, seconds, whether or not its batch fits — the seed's formula: the
    /// slower of compute and memory (perfect overlap, the optimistic bound), plus the
    /// all-reduces (which wait for the matrix products and are waited for).
    pub fn time(&self) -> f64 {
        self.bound() + self.comm_time
    }

    /// The slower of compute and memory, seconds ([`roofline`]).
    pub fn bound(&self) -> f64 {
        roofline(self.compute_time, self.memory_time)
    }

    /// [`ForwardCost::time`] when the batch fits next to the weights at this context.
    ///
    /// Errors: [`Error::DoesNotFit`] when `batch > max_batch` (with `max_batch` 0 when
    /// not one sequence fits, and whether the weights alone do).
    pub fn checked_time(&self) -> Result<f64, Error> {
        if self.shape.batch > self.max_batch {
            return Err(Error::DoesNotFit {
                model: self.model,
                hw: self.hw,
                batch: self.shape.batch,
                ctx: self.shape.ctx,
                max_batch: self.max_batch,
                weights_fit: self.weights_fit,
                cards: self.cards,
            });
        }
        Ok(self.time())
    }

    /// Whether compute, not bandwidth, sets the time.
    pub fn is_compute_bound(&self) -> bool {
        self.compute_time > self.memory_time
    }
}

/// The roofline's time of a pass that needs `compute` seconds of compute and `memory`
/// seconds of memory traffic: the slower of the two, as if every kernel hid the faster
/// under the slower (the optimistic bound the seed reasons with).
///
/// ```
/// assert_eq!(llm_math::roofline(2e-3, 5e-3), 5e-3);
/// ```
pub fn roofline(compute: f64, memory: f64) -> f64 {
    compute.max(memory)
}

/// The roofline cost of one pass of `cfg` on each of `dep.tp` cards of `hw`.
///
/// Per card, with `N = dep.tp`, `w` bytes per weight, `k` KV bytes per token at the KV
/// dtype, `S = min(N, kv_heads)` KV shards, `tokens = batch · n_new` and `C(ctx)` the
/// cached tokens summed over the layers a query reads ([`ModelConfig::cached_layer_tokens`]:
/// `layers · ctx`, less on sliding-window layers):
/// - FLOPs = (2 · streamed_params · tokens + a · C(ctx) · tokens) / N (the matrix
///   products, then QKᵀ and PV against the cache, `a` =
///   [`ModelConfig::attention_flops_per_cached_token`], `4 · heads · head_dim` for GQA),
///   at the weights' peak ([`WeightDtype::peak_flops`](crate::WeightDtype::peak_flops)) ×
///   `compute_efficiency`;
/// - bytes = w · streamed_params_for(tokens) / N + (batch · C(ctx) · k / layers + tokens · k) / S
///   (weights read once for the whole batch — for an MoE model, the experts its tokens
///   route to, [`ModelConfig::streamed_params_for`]; each sequence's KV read once for all
///   its `n_new` queries, as a fused attention kernel does, [`ModelConfig::kv_bytes_at`];
///   the new tokens' KV written), at peak bandwidth × `bandwidth_efficiency`;
/// - plus, when N > 1, the two all-reduces per layer ([`all_reduce_time`]), *added*: they
///   sit between the matrix products on the critical path.
///
/// Errors: a zero size, a knob out of its domain ([`Deployment::check`]), weights the card
/// cannot run, tensor parallelism over a card with no link. Whether the batch fits is not
/// an error here: [`ForwardCost::checked_time`] says.
///
/// ```
/// use llm_math::{forward_cost, Deployment, ForwardShape, WeightDtype, LLAMA31_8B};
/// use hw_specs::H100;
/// let shape = ForwardShape { batch: 1, ctx: 1024, n_new: 1 };
/// let bf16 = forward_cost(&LLAMA31_8B, &H100, shape, &Deployment::LECTURE)?;
/// // One decode step at batch 1, context 1024: memory-bound, 15.14 GB / 2.68 TB/s ≈ 5.65 ms.
/// assert!(!bf16.is_compute_bound());
/// assert!((bf16.checked_time()? - 5.6508e-3).abs() < 1e-6);
/// let fp8 = forward_cost(&LLAMA31_8B, &H100, shape,
///     &Deployment { weights: WeightDtype::Fp8, ..Deployment::LECTURE })?;
/// // The linear layers' 13.96 GB → 6.98 GB; the LM head (1.05 GB) and the KV read (134 MB)
/// // stay.
/// assert_eq!(bf16.bytes - fp8.bytes, 6_979_321_856.0);
/// # Ok::<(), llm_math::Error>(())
/// ```
pub fn forward_cost(
    cfg: &ModelConfig,
    hw: &Accelerator,
    shape: ForwardShape,
    dep: &Deployment,
) -> Result<ForwardCost, Error> {
    shape.check()?;
    dep.check(cfg)?;
    crate::validate::check_card(hw)?;
    dep.check_card(hw)?;
    let n = dep.tp as f64;
    let shards = dep.kv_shards(cfg) as f64;
    // Per token multiplied (its k experts for an MoE model); per pass read.
    let p = cfg.streamed_params() as f64;
    let tokens = shape.batch as f64 * shape.n_new as f64;
    // A new token's KV, written; a sequence's cached KV and a query's attention FLOPs at
    // its context, read (a sliding layer's capped at its window).
    let kv = cfg.kv_elements_per_token() as f64 * dep.kv.bytes() as f64;
    let flops = (2.0 * p * tokens + cfg.attention_flops(shape.ctx) * tokens) / n;
    let weight_bytes = cfg.streamed_weight_bytes(shape.tokens(), dep.weights)? / n;
    let bytes = weight_bytes
        + shape.batch as f64 * cfg.kv_bytes_at(shape.ctx, dep.kv) / shards
        + tokens * kv / shards;
    Ok(ForwardCost {
        flops,
        bytes,
        weight_bytes,
        compute_time: flops / (dep.weights.peak_flops(hw) * dep.compute_efficiency),
        memory_time: bytes / (hw.hbm_bandwidth * dep.bandwidth_efficiency),
        comm_time: all_reduce_time(cfg, hw, shape.tokens(), dep),
        // Checked above: the shape (ctx ≥ 1), the deployment of `cfg`, the card.
        max_batch: max_batch_checked(cfg, hw, shape.ctx, dep),
        weights_fit: cfg.weight_bytes(dep.weights) < dep.tp as f64 * hw.memory_bytes,
        shape,
        model: cfg.name,
        hw: hw.name,
        cards: dep.tp,
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
/// use llm_math::{all_reduce_time, Deployment};
/// use hw_specs::H100;
/// let tp2 = Deployment { tp: 2, ..Deployment::LECTURE };
/// // Batch 1: 8192 · 2 = 16 KiB per all-reduce; 2·(1/2)·16384 B / 450 GB/s = 36.4 ns; × 160.
/// let t = all_reduce_time(llm_math::model("Llama-3.1-70B").unwrap(), &H100, 1, &tp2);
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

/// The critical batch, in tokens per forward pass: below it a pass is limited by
/// reading the weights, above it by the matrix products.
///
/// Each token costs 2 FLOPs per weight, and the weights cost `w` bytes per weight once per
/// pass, so the two times are equal at
/// `tokens = peak · compute_efficiency · w / (2 · bandwidth · bandwidth_efficiency)`
/// (lecture 1 §3.6; attention and KV traffic ignored).
///
/// Errors: a card that cannot exist ([`Accelerator::validate`]), efficiencies out of range,
/// weights the card cannot run ([`WeightDtype::check_card`](crate::WeightDtype::check_card)).
///
/// ```
/// use llm_math::{critical_tokens, Deployment};
/// // H100 at 60% / 80% in bf16: 989e12 · 0.6 · 2 / (2 · 3.35e12 · 0.8) ≈ 221 tokens.
/// assert!((critical_tokens(&hw_specs::H100, &Deployment::LECTURE)? - 221.4).abs() < 0.1);
/// # Ok::<(), llm_math::Error>(())
/// ```
pub fn critical_tokens(hw: &Accelerator, dep: &Deployment) -> Result<f64, Error> {
    crate::validate::check_card(hw)?;
    dep.check_efficiencies()?;
    dep.weights.check_card(hw)?;
    critical_tokens_at(
        dep.weights.peak_flops(hw) * dep.compute_efficiency,
        hw.hbm_bandwidth * dep.bandwidth_efficiency,
        dep.weights.bytes(),
    )
}

/// [`critical_tokens`] at the rates a machine reaches: `peak · bytes_per_weight / (2 ·
/// bandwidth)` tokens, for `peak` FLOP/s and `bandwidth` bytes/s as reached (efficiencies
/// applied, or measured) and weights of `bytes_per_weight` bytes.
///
/// Errors: a rate or a weight size that is not a positive finite number, or a quotient too
/// large to be finite.
///
/// ```
/// // 138 GFLOP/s, 22 GB/s, f32 weights: 138e9 · 4 / 44e9 ≈ 12.5 tokens.
/// let t = llm_math::critical_tokens_at(138e9, 22e9, 4.0)?;
/// assert!((t - 12.545).abs() < 1e-3);
/// assert!(llm_math::critical_tokens_at(138e9, 0.0, 4.0).is_err());
/// # Ok::<(), llm_math::Error>(())
/// ```
pub fn critical_tokens_at(peak: f64, bandwidth: f64, bytes_per_weight: f64) -> Result<f64, Error> {
    let inputs = [
        ("peak", peak),
        ("bandwidth", bandwidth),
        ("bytes per weight", bytes_per_weight),
    ];
    for (name, x) in inputs {
        if !(x.is_finite() && x > 0.0) {
            return Err(Error::Invalid(format!(
                "the critical batch needs a positive finite {name}, got {x}"
            )));
        }
    }
    let tokens = peak * bytes_per_weight / (2.0 * bandwidth);
    if !tokens.is_finite() {
        return Err(Error::Invalid(format!(
            "the critical batch of {peak} FLOP/s over {bandwidth} B/s is not finite"
        )));
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{KvDtype, LLAMA31_8B, WeightDtype};
    use hw_specs::H100;

    const BW: f64 = 3.35e12 * 0.8;
    const PEAK: f64 = 989e12 * 0.6;
    const P8B: f64 = 7_504_924_672.0;

    fn shape(batch: u64, ctx: u64, n_new: u64) -> ForwardShape {
        ForwardShape { batch, ctx, n_new }
    }

    fn cost(s: ForwardShape, dep: &Deployment) -> ForwardCost {
        forward_cost(&LLAMA31_8B, &H100, s, dep).unwrap()
    }

    fn lecture(b: u64, c: u64, n: u64) -> ForwardCost {
        cost(shape(b, c, n), &Deployment::LECTURE)
    }

    fn dep(tp: u64, weights: WeightDtype, kv: KvDtype) -> Deployment {
        Deployment {
            tp,
            weights,
            kv,
            ..Deployment::LECTURE
        }
    }

    #[test]
    fn a_batch_one_decode_step_is_the_weight_read_plus_the_kv_read() {
        let c = lecture(1, 1024, 1);
        // bytes = 2·7,504,924,672 + 1024·131,072 + 131,072 = 15,144,198,144
        assert_eq!(c.bytes, 15_144_198_144.0);
        // flops = 2·7,504,924,672 + 4·32·32·128·1024 = 15,546,720,256
        assert_eq!(c.flops, 15_546_720_256.0);
        assert!(!c.is_compute_bound());
        assert!((c.time() - 15_144_198_144.0 / BW).abs() < 1e-15);
        assert!((c.checked_time().unwrap() - 5.650820e-3).abs() < 1e-9);
    }

    #[test]
    fn a_batch_512_pass_of_5_tokens_each_is_compute_bound() {
        let c = lecture(512, 512, 5);
        // tokens = 2560; flops = 2·P·2560 + 4·131,072·512·2560 = 3.9123e16 → 65.912 ms
        assert_eq!(
            c.flops,
            2.0 * P8B * 2560.0 + 4.0 * 131_072.0 * 512.0 * 2560.0
        );
        assert_eq!(
            c.bytes,
            2.0 * P8B + 512.0 * 512.0 * 131_072.0 + 2560.0 * 131_072.0
        );
        assert!(c.is_compute_bound());
        assert!((c.time() - 65.912e-3).abs() < 1e-5, "{}", c.time());
    }

    #[test]
    fn an_odd_shape_gives_the_hand_computed_figures() {
        // Batch 7, context 333, 17 new tokens (119 tokens), worked out by hand:
        // FLOPs = 2·P·119 + 4·131,072·333·119 = 1,786,172,071,936 + 20,775,960,576
        //       = 1,806,948,032,512 → 3.0451 ms at 593.4 TFLOP/s;
        // bytes = 2·P + 7·333·131,072 + 119·131,072 = 15,009,849,344 + 305,528,832 + 15,597,568
        //       = 15,330,975,744 → 5.7205 ms at 2.68 TB/s.
        let c = lecture(7, 333, 17);
        assert_eq!(c.flops, 1_806_948_032_512.0);
        assert_eq!(c.bytes, 15_330_975_744.0);
        assert!(
            (c.compute_time - 3.045_076e-3).abs() < 1e-9,
            "{}",
            c.compute_time
        );
        assert!(
            (c.memory_time - 5.720_513e-3).abs() < 1e-9,
            "{}",
            c.memory_time
        );
        // The seed's max: memory sets the time, and nothing is added on one card.
        assert_eq!(c.time(), c.memory_time);
        assert_eq!(c.comm_time, 0.0);
    }

    #[test]
    fn zero_sizes_are_errors_that_name_the_size() {
        let e = |b, c, n| {
            forward_cost(&LLAMA31_8B, &H100, shape(b, c, n), &Deployment::LECTURE).unwrap_err()
        };
        assert_eq!(e(0, 1, 1), Error::Zero("batch size"));
        assert_eq!(e(1, 0, 1), Error::Zero("context length"));
        assert_eq!(e(1, 1, 0), Error::Zero("number of new tokens"));
        assert_eq!(
            e(0, 1, 1).to_string(),
            "batch size must be at least 1, got 0"
        );
    }

    #[test]
    fn only_the_checked_time_refuses_a_batch_that_does_not_fit() {
        let big = lecture(64, 32768, 1);
        // 64 sequences of 32K tokens: 2P + 64·32768·131,072 + 64·131,072 bytes, by hand.
        assert_eq!(big.bytes, 2.0 * P8B + 274_877_906_944.0 + 8_388_608.0);
        assert!(big.time() > 0.1);
        let err = lecture(15, 32768, 1).checked_time().unwrap_err();
        assert_eq!(
            err,
            Error::DoesNotFit {
                model: "Llama-3.1-8B",
                hw: "H100",
                batch: 15,
                ctx: 32768,
                max_batch: 14,
                weights_fit: true,
                cards: 1
            }
        );
        assert!(err.to_string().contains("at most 14 sequences"), "{err}");
        assert!(lecture(14, 32768, 1).checked_time().is_ok());
        let small = Accelerator {
            memory_bytes: 16e9,
            ..H100
        };
        let c = forward_cost(&LLAMA31_8B, &small, shape(1, 1, 1), &Deployment::LECTURE).unwrap();
        assert!(
            c.checked_time()
                .unwrap_err()
                .to_string()
                .contains("weights alone")
        );
        let d = dep(2, WeightDtype::Bf16, KvDtype::Bf16);
        let e = forward_cost(
            crate::model("Llama-3.1-405B").unwrap(),
            &H100,
            shape(1, 1024, 1),
            &d,
        )
        .unwrap();
        assert!(
            e.checked_time()
                .unwrap_err()
                .to_string()
                .contains("2 × H100")
        );
        // Llama-3.1-70B's 141 GB of weights fit on 2 H100s; one sequence of 131,072
        // tokens (43 GB of KV) does not fit beside them: the KV is to blame, not them.
        let f = forward_cost(
            crate::model("Llama-3.1-70B").unwrap(),
            &H100,
            shape(1, 131_072, 1),
            &d,
        )
        .unwrap();
        let e = f.checked_time().unwrap_err().to_string();
        assert!(
            !e.contains("weights alone") && e.contains("not one sequence of 131072"),
            "{e}"
        );
    }

    #[test]
    fn time_grows_with_batch_context_and_new_tokens() {
        let t = |b, c, n| lecture(b, c, n).time();
        for &(b, c, n) in &[(1, 512, 1), (4, 1024, 3), (64, 2048, 9), (256, 512, 2)] {
            assert!(t(b + 1, c, n) > t(b, c, n));
            assert!(t(b, c + 1, n) > t(b, c, n));
            assert!(t(b, c, n + 1) > t(b, c, n));
        }
    }

    #[test]
    fn tp2_halves_the_weight_bytes_per_card_and_adds_the_all_reduces() {
        let two = cost(shape(1, 1024, 1), &dep(2, WeightDtype::Bf16, KvDtype::Bf16));
        // Per card: weights 2·P/2 = P bytes; KV (1024 + 1) · 131,072 / 2 (8 KV heads split 2 ways).
        assert_eq!(two.bytes, P8B + 1025.0 * 131_072.0 / 2.0);
        // 64 all-reduces of 4096 · 2 = 8 KiB, ring over 2: 2·(1/2)·8192 B at 450 GB/s each.
        let comm = 64.0 * 8192.0 / 450e9;
        assert!((two.comm_time - comm).abs() < 1e-18, "{}", two.comm_time);
        // ≈ 2.8254 ms + 1.165 µs: half the single card's 5.6508 ms, plus the all-reduces.
        assert!((two.time() - 2.826_575e-3).abs() < 1e-8, "{}", two.time());
        assert_eq!(lecture(1, 1024, 1).comm_time, 0.0);
    }

    #[test]
    fn fp8_and_int4_weights_cut_the_weight_bytes_and_fp8_uses_the_fp8_peak() {
        let s = shape(512, 512, 5);
        let bf16 = cost(s, &Deployment::LECTURE);
        let fp8 = cost(s, &dep(1, WeightDtype::Fp8, KvDtype::Bf16));
        // FP8 halves the linear layers' 6,979,321,856 weights; the LM head's 525,602,816
        // (and the norms) stay at 2 bytes.
        assert_eq!(bf16.bytes - fp8.bytes, 6_979_321_856.0);
        assert_eq!(fp8.flops, bf16.flops);
        // H100's dense FP8 peak is 1979 TFLOP/s: the compute time halves (to ≈ 32.94 ms).
        assert!(
            (fp8.compute_time - 32.939e-3).abs() < 1e-5,
            "{}",
            fp8.compute_time
        );
        // A100 has no FP8 tensor cores: FP8 weights are refused there, with the reason;
        // the weight-only 8-bit format runs at its bf16 peak.
        let on_a100 = |w| {
            forward_cost(
                &LLAMA31_8B,
                hw_specs::accelerator("A100").unwrap(),
                s,
                &dep(1, w, KvDtype::Bf16),
            )
        };
        let e = on_a100(WeightDtype::Fp8).unwrap_err().to_string();
        assert!(e.contains("A100 has no FP8 tensor cores"), "{e}");
        let a = on_a100(WeightDtype::W8A16).unwrap();
        assert!((a.compute_time - a.flops / (312e12 * 0.6)).abs() < 1e-15);
        assert_eq!(a.bytes, fp8.bytes);
        // INT4: a quarter of the linear layers' bf16 bytes (1.5 · 6,979,321,856 saved), bf16 peak.
        let int4 = cost(s, &dep(1, WeightDtype::Int4, KvDtype::Bf16));
        assert_eq!(bf16.bytes - int4.bytes, 1.5 * 6_979_321_856.0);
        assert_eq!(int4.compute_time, bf16.compute_time);
        let kv8 = cost(shape(1, 1024, 1), &dep(1, WeightDtype::Bf16, KvDtype::Fp8));
        assert_eq!(kv8.bytes, 2.0 * P8B + 1025.0 * 65_536.0);
    }

    #[test]
    fn past_the_kv_heads_the_kv_read_stops_splitting() {
        // TP=16 > 8 KV heads: each KV head lives on two cards, so the KV costs twice as much.
        let d16 = dep(16, WeightDtype::Bf16, KvDtype::Bf16);
        let c = forward_cost(
            crate::model("Llama-3.1-70B").unwrap(),
            &H100,
            shape(1, 1000, 1),
            &d16,
        )
        .unwrap();
        let p = crate::model("Llama-3.1-70B").unwrap().streamed_params() as f64;
        assert_eq!(
            c.bytes,
            2.0 * p / 16.0 + 1000.0 * 327_680.0 / 8.0 + 327_680.0 / 8.0
        );
    }

    #[test]
    fn the_critical_batch_on_h100_is_about_220_tokens() {
        let t = critical_tokens(&H100, &Deployment::LECTURE).unwrap();
        assert!((t - PEAK / BW).abs() < 1e-9);
        // FP8 weights: twice the peak and half the bytes per weight: the same 221 tokens.
        let fp8 = critical_tokens(&H100, &dep(1, WeightDtype::Fp8, KvDtype::Bf16)).unwrap();
        assert!((fp8 - 1979e12 * 0.6 / (2.0 * BW)).abs() < 1e-9, "{fp8}");
        // FP8 weights on a card without FP8 tensor cores: refused, not a made-up figure.
        let a100 = hw_specs::accelerator("A100").unwrap();
        assert!(critical_tokens(a100, &dep(1, WeightDtype::Fp8, KvDtype::Bf16)).is_err());
    }
}
