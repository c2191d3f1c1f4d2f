//! What fits in device memory: the weights stay resident, the rest holds KV caches.

use crate::{Deployment, Error, ModelConfig};
use hw_specs::Accelerator;

/// The seed's `max_batch(cfg, hw, ctx)`: [`max_batch_on`] one card in bf16
/// ([`Deployment::LECTURE`]):
/// `floor((memory − 2 · n_params) / (ctx · kv_bytes_per_token))`.
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
    max_batch_on(cfg, hw, ctx, &Deployment::LECTURE)
}

/// The largest number of sequences of `ctx` tokens whose KV caches fit next to the
/// weights on `dep.tp` cards at `dep`'s dtypes: the cards hold `tp · memory` bytes, the
/// weights take [`ModelConfig::weight_bytes`] (the linear layers at the weights' format,
/// the embedding and norms at 16 bits), each sequence `ctx` tokens of KV at the KV dtype
/// (a sliding layer's at most its window, [`ModelConfig::kv_bytes_at`]; replicated
/// `tp / kv_shards` times when `tp` exceeds the KV heads, as
/// [`Deployment::kv_bytes_held_per_token`] counts, and so on every card for MLA's one
/// latent): `floor((tp · memory − W) / (ctx · k · tp / S))`. Errors: `ctx` 0, a bad knob.
///
/// ```
/// use llm_math::{max_batch_on, Deployment};
/// use hw_specs::H100;
/// let tp = |n| Deployment { tp: n, ..Deployment::LECTURE };
/// assert_eq!(max_batch_on(llm_math::model("Llama-3.1-70B").unwrap(), &H100, 8192, &tp(1))?, 0); // 141 GB of weights
/// // (2 · 80e9 − 141,107,412,992) / (8192 · 327,680) = 7.04 → 7.
/// assert_eq!(max_batch_on(llm_math::model("Llama-3.1-70B").unwrap(), &H100, 8192, &tp(2))?, 7);
/// # Ok::<(), llm_math::Error>(())
/// ```
pub fn max_batch_on(
    cfg: &ModelConfig,
    hw: &Accelerator,
    ctx: u64,
    dep: &Deployment,
) -> Result<u64, Error> {
    if ctx == 0 {
        return Err(Error::Zero("context length"));
    }
    dep.check(cfg)?;
    crate::validate::check_card(hw)?;
    Ok(max_batch_checked(cfg, hw, ctx, dep))
}

/// [`max_batch_on`] for a setup already checked (`ctx` ≥ 1, [`Deployment::check`] of
/// `cfg`, the card): what a pass's price asks, which checks them first.
pub(crate) fn max_batch_checked(
    cfg: &ModelConfig,
    hw: &Accelerator,
    ctx: u64,
    dep: &Deployment,
) -> u64 {
    let weights = cfg.weight_bytes(dep.weights);
    let free = dep.tp as f64 * hw.memory_bytes - weights;
    if free <= 0.0 {
        return 0;
    }
    // Split `kv_shards` ways, so held `tp / kv_shards` times when `tp` exceeds the KV
    // heads (MLA's one latent: by every card).
    let per_seq = dep.kv_bytes_held_at(cfg, ctx);
    (free / per_seq).floor() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{KvDtype, LLAMA31_8B};
    use hw_specs::H100;

    #[test]
    fn max_batch_counts_whole_sequences_after_the_weights() {
        // free = 80e9 − 16,060,522,496 = 63,939,477,504 bytes
        // ctx 512: 67,108,864 B/seq → 952.8 → 952; ctx 4096 → 119; ctx 32768 → 14
        assert_eq!(max_batch(&LLAMA31_8B, &H100, 512).unwrap(), 952);
        assert_eq!(max_batch(&LLAMA31_8B, &H100, 4096).unwrap(), 119);
        assert_eq!(max_batch(&LLAMA31_8B, &H100, 32768).unwrap(), 14);
        assert_eq!(
            max_batch(&LLAMA31_8B, &H100, 0),
            Err(Error::Zero("context length"))
        );
    }

    #[test]
    fn max_batch_is_zero_when_the_weights_alone_do_not_fit() {
        let small = Accelerator {
            memory_bytes: 16e9,
            ..H100
        };
        assert_eq!(max_batch(&LLAMA31_8B, &small, 1).unwrap(), 0);
    }

    #[test]
    fn fp8_weights_keep_the_embedding_and_the_lm_head_at_16_bits() {
        let fp8 = Deployment {
            weights: crate::WeightDtype::Fp8,
            ..Deployment::LECTURE
        };
        // By hand: 6,979,321,856 linear weights at 1 byte and 1,050,939,392 others at 2:
        // 9,081,200,640 bytes; (80e9 − 9,081,200,640) / (32768 · 131,072) = 16.51 → 16.
        // (Every weight at 1 byte would leave room for 16.75: the same 16; at 4096, 132
        // against 134.)
        assert_eq!(
            LLAMA31_8B.weight_bytes(crate::WeightDtype::Fp8),
            9_081_200_640.0
        );
        assert_eq!(max_batch_on(&LLAMA31_8B, &H100, 32768, &fp8).unwrap(), 16);
        assert_eq!(max_batch_on(&LLAMA31_8B, &H100, 4096, &fp8).unwrap(), 132);
        let all_at_one_byte: f64 = (80e9 - 8_030_261_248.0) / (4096.0 * 131_072.0);
        assert_eq!(all_at_one_byte.floor(), 134.0);
    }

    #[test]
    fn an_fp8_kv_cache_doubles_what_fits() {
        let d = Deployment {
            kv: KvDtype::Fp8,
            ..Deployment::LECTURE
        };
        // free 63,939,477,504 B / (32768 · 65,536) = 29.77 → 29 (bf16: 14).
        assert_eq!(max_batch_on(&LLAMA31_8B, &H100, 32768, &d).unwrap(), 29);
    }

    #[test]
    fn tensor_parallelism_lets_a_70b_fit_and_replicates_kv_past_the_kv_heads() {
        let tp = |n| Deployment {
            tp: n,
            ..Deployment::LECTURE
        };
        // TP=2 on H100: (160e9 − 141,107,412,992) / (4096 · 327,680) = 14.08 → 14.
        assert_eq!(
            max_batch_on(crate::model("Llama-3.1-70B").unwrap(), &H100, 4096, &tp(2)).unwrap(),
            14
        );
        assert_eq!(
            max_batch(crate::model("Llama-3.1-70B").unwrap(), &H100, 4096).unwrap(),
            0
        );
        // TP=16 over 8 KV heads: each sequence's KV is stored twice.
        // (16 · 80e9 − 141,107,412,992) / (4096 · 327,680 · 2) = 424.3 → 424.
        assert_eq!(
            max_batch_on(crate::model("Llama-3.1-70B").unwrap(), &H100, 4096, &tp(16)).unwrap(),
            424
        );
    }
}
