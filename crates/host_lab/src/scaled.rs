//! Lecture 3's model scaled past this machine's last-level cache, and its two drafts.
//!
//! The toy model (`transformer_lab::QCFG`, 0.9 M parameters, 3.7 MB) fits in any L3, so
//! on a CPU it is never memory-bound. [`scaled_config`] keeps its architecture
//! (Llama-style blocks, multi-head attention, SwiGLU, untied head) and widens it until its
//! f32 weights are at least 4× the last-level cache: at batch 1 each decode step must then
//! stream them from memory, as a GPU streams its HBM. The two drafts are the lecture's:
//! the target's **first layer** only (its own weights, nothing copied), and an **INT4
//! copy** stored and read as 4-bit groups ([`crate::Int4Lm`]).

use transformer_lab::{Config, Params, QCFG, TransformerLM, config_like, init_params};

use crate::{Error, Int4Lm, Lm, f32_weight_bytes};

/// The scaled model's width and everything but its depth; [`scaled_config`] sets the depth.
pub const SCALED_BASE: Config = Config {
    // A larger byte-pair-like vocabulary than QCFG's 256 bytes, still a small LM head
    // (1% of the weights); the prompts are random token ids either way.
    vocab: 512,
    // 6 × QCFG's 128: wide enough that each matrix is far beyond L2, and a multiple of the
    // INT4 groups (64) and of the kernels' 16-column panels.
    d_model: 768,
    // Placeholder: scaled_config chooses the depth from the cache size.
    n_layers: 1,
    // head_dim 64, as in Llama's smaller models (QCFG: 32).
    n_heads: 12,
    // ≈ 8/3 · d_model rounded to a multiple of 256 (QCFG: 3 × d_model).
    d_ff: 2048,
    // Room for a 64-token context plus 512 tokens fed at once (the forward-time sweep).
    max_seq: 640,
    norm_eps: QCFG.norm_eps,
    rope_theta: QCFG.rope_theta,
};

/// How many times the last-level cache the scaled model's f32 weights must be, at least.
pub const CACHE_MULTIPLE: u64 = 4;

/// The largest last-level cache [`scaled_config`] takes, bytes: 4 GiB, well above any
/// CPU's (so the scaled model, 16 GiB at most, is bounded).
pub const MAX_LLC_BYTES: u64 = 4 << 30;

/// [`SCALED_BASE`] with 2 layers, the fewest that keep "the first layer only" a real draft:
/// 14,552,832 floats read per step (two blocks of 7,077,888 weights and 2 · 768 norm gains,
/// the final norm and a 768 × 512 head), 58.2 MB of f32 weights.
///
/// ```
/// let cfg = host_lab::scaled::shallowest_config();
/// assert_eq!(cfg.n_layers, 2);
/// assert_eq!(host_lab::f32_weight_bytes(&cfg), 4 * 14_552_832);
/// ```
pub fn shallowest_config() -> Config {
    Config {
        n_layers: 2,
        ..SCALED_BASE
    }
}

/// [`SCALED_BASE`] with the fewest layers (at least 2, so that "the first layer only" is
/// a real draft) whose f32 weights are ≥ [`CACHE_MULTIPLE`] × `llc_bytes`, or, on a cache
/// above 256 MiB, the deepest `transformer_lab` builds (then fewer than 4 caches; demo 6
/// prints the multiple). Errors on a cache of 0 bytes or more than [`MAX_LLC_BYTES`], and
/// on one that holds even that deepest model.
///
/// ```
/// // A 32 MiB L3: 5 layers of 4·768² + 3·768·2048 = 7,077,888 weights and 2 · 768 norm
/// // gains, the final norm and a 768 × 512 head: 35,791,104 floats, 143.2 MB ≥ 4 · 33.5 MB.
/// let cfg = host_lab::scaled::scaled_config(32 << 20)?;
/// assert_eq!(cfg.n_layers, 5);
/// assert_eq!(host_lab::f32_weight_bytes(&cfg), 4 * 35_791_104);
/// # Ok::<(), host_lab::Error>(())
/// ```
pub fn scaled_config(llc_bytes: u64) -> Result<Config, Error> {
    if llc_bytes == 0 {
        return Err(Error::Argument("a last-level cache of 0 bytes".into()));
    }
    if llc_bytes > MAX_LLC_BYTES {
        return Err(Error::Argument(format!(
            "a last-level cache of {llc_bytes} bytes: at most {MAX_LLC_BYTES} (4 GiB; the \
             largest shipping, AMD's EPYC 9684X with 3D V-Cache, has 1,152 MiB)"
        )));
    }
    let want = CACHE_MULTIPLE * llc_bytes;
    let mut cfg = shallowest_config();
    cfg.validate()?;
    while f32_weight_bytes(&cfg) < want {
        let deeper = Config {
            n_layers: cfg.n_layers + 1,
            ..cfg
        };
        // A cache above a quarter of transformer_lab's MAX_FLOATS (256 Mi floats, 1 GiB)
        // asks for more weights than a toy model may hold (a 480 MiB L3, as Xeon 6 parts
        // and the virtual machines on them report): the largest model that builds, which
        // still streams from memory as long as it is larger than the cache.
        if deeper.validate().is_err() {
            break;
        }
        cfg = deeper;
    }
    if f32_weight_bytes(&cfg) <= llc_bytes {
        return Err(Error::Argument(format!(
            "a last-level cache of {llc_bytes} bytes holds the largest scaled model \
             transformer_lab builds ({} bytes of f32 weights): on this machine no toy \
             model is memory-bound",
            f32_weight_bytes(&cfg)
        )));
    }
    Ok(cfg)
}

/// The memory demo 6's run takes with the scaled model `cfg` and a bandwidth probe of
/// `stream_bytes`, bytes: the probe's buffer ([`crate::measure::stream_bytes`] of the
/// last-level cache, or the quick plan's [`crate::measure::MIN_STREAM_BYTES`]) and ten times
/// the model's f32 weights (the parameters, the target's packed copy, the first layer, the
/// INT4 draft, the kernels' operands, the KV caches and activations of the timed passes, and
/// the allocator's arenas). On a 32 MiB L3: 0.27 + 10 × 0.143 = 1.70 GB, where a release
/// run's peak address space (`VmPeak`) was 1.39 GB (a dev run's 1.29 GB) and its peak
/// resident memory 0.93 GB (1.14 GB).
pub fn memory_needed(cfg: &Config, stream_bytes: u64) -> u64 {
    stream_bytes.saturating_add(f32_weight_bytes(cfg).saturating_mul(10))
}

/// The scaled target and its two drafts, over one set of parameters.
#[derive(Debug)]
pub struct Models<'p> {
    /// The target: all layers, f32.
    pub target: TransformerLM<'p>,
    /// Draft 1: the target's first layer and its LM head (lecture 6's "first layer only").
    pub first_layer: TransformerLM<'p>,
    /// Draft 2: the whole target, its matrices stored as INT4 groups.
    pub int4: Int4Lm,
}

impl<'p> Models<'p> {
    /// Builds the three models over `params` of shape `cfg`. Errors as
    /// [`TransformerLM::new`] and [`Int4Lm::quantize`] do.
    pub fn new(params: &'p Params, cfg: Config) -> Result<Self, Error> {
        Ok(Models {
            target: TransformerLM::new(params, cfg, "target")?,
            first_layer: TransformerLM::new(params, config_like(&cfg, 1), "first layer")?,
            int4: Int4Lm::quantize(params, cfg)?,
        })
    }

    /// The target's weight bytes over the last-level cache's.
    pub fn cache_multiple(&self, llc_bytes: u64) -> f64 {
        self.target.weight_bytes() as f64 / llc_bytes as f64
    }
}

/// Seeded parameters for `cfg` (`transformer_lab::init_params`).
pub fn params(cfg: &Config, seed: u64) -> Result<Params, Error> {
    Ok(init_params(cfg, seed)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scaled_model_is_at_least_four_caches_and_one_layer_less_is_not() {
        for llc in [8u64 << 20, 32 << 20, 96 << 20] {
            let cfg = scaled_config(llc).unwrap();
            assert!(f32_weight_bytes(&cfg) >= 4 * llc);
            let shallower = Config {
                n_layers: cfg.n_layers - 1,
                ..cfg
            };
            assert!(cfg.n_layers == 2 || f32_weight_bytes(&shallower) < 4 * llc);
            cfg.validate().unwrap();
        }
        assert!(scaled_config(0).is_err());
        assert!(
            scaled_config(u64::MAX).is_err(),
            "refused, not a hang or a wrap"
        );
        assert!(
            scaled_config(MAX_LLC_BYTES).is_err(),
            "a cache that holds the largest toy model"
        );
        assert!(scaled_config(128 << 20).is_ok());
    }

    #[test]
    fn a_cache_too_large_for_four_models_gets_the_deepest_that_still_outgrows_it() {
        // A 480 MiB L3 (Xeon 6): 4 × 480 MiB is past transformer_lab's 256 Mi floats.
        let llc = 480u64 << 20;
        let cfg = scaled_config(llc).unwrap();
        cfg.validate().unwrap();
        let bytes = f32_weight_bytes(&cfg);
        assert!(bytes > llc && bytes < 4 * llc, "{bytes}");
        let deeper = Config {
            n_layers: cfg.n_layers + 1,
            ..cfg
        };
        assert!(deeper.validate().is_err(), "the deepest that builds");
        // By hand: 7,077,888 + 1,536 floats a layer, 768 + 393,216 besides; the embedding
        // table (512 × 768) counts toward transformer_lab's limit, not toward the weights.
        let per_layer = 4 * 768 * 768 + 3 * 768 * 2048 + 2 * 768;
        let limit = transformer_lab::MAX_FLOATS as u64;
        let layers = (limit - 2 * 512 * 768 - 768) / per_layer;
        assert_eq!(cfg.n_layers as u64, layers);
        // A cache the deepest model fits in is refused, not priced as memory-bound.
        let err = scaled_config(bytes).unwrap_err().to_string();
        assert!(err.contains("no toy model is memory-bound"), "{err}");
    }

    #[test]
    fn weight_bytes_are_four_per_parameter_read_and_the_int4_draft_reads_about_an_eighth() {
        // Small sizes: the same counting on a model that builds in milliseconds.
        let cfg = Config {
            n_layers: 3,
            d_model: 128,
            n_heads: 2,
            d_ff: 256,
            vocab: 64,
            max_seq: 16,
            ..SCALED_BASE
        };
        let p = params(&cfg, 1).unwrap();
        let m = Models::new(&p, cfg).unwrap();
        // transformer_lab's parameter count less the embedding table, 4 bytes each.
        assert_eq!(
            m.target.weight_bytes(),
            4 * (cfg.n_params().unwrap() - 64 * 128) as u64
        );
        let ratio = m.int4.weight_bytes() as f64 / m.target.weight_bytes() as f64;
        // 4.25 bits of 32 for the matrices; the f32 norm gains are a sliver more.
        assert!((ratio - 4.25 / 32.0).abs() < 0.005, "{ratio}");
        let first = m.first_layer.weight_bytes() as f64 / m.target.weight_bytes() as f64;
        assert!(first > 1.0 / 3.0 && first < 0.4, "{first}");
    }
}
