//! The shape of the toy model.

use crate::Error;

/// Hyper-parameters of a Llama-style decoder (multi-head attention, no GQA).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Vocabulary size (token ids are `0..vocab`).
    pub vocab: usize,
    /// Residual stream width.
    pub d_model: usize,
    /// Transformer blocks.
    pub n_layers: usize,
    /// Attention heads; `head_dim = d_model / n_heads`, which must be even for RoPE.
    pub n_heads: usize,
    /// SwiGLU hidden width.
    pub d_ff: usize,
    /// Longest sequence (prompt + generated) the model accepts.
    pub max_seq: usize,
    /// RMSNorm epsilon.
    pub norm_eps: f32,
    /// RoPE base θ: pair i of a head rotates by `pos / θ^(2i / head_dim)`.
    pub rope_theta: f32,
}

impl Config {
    /// Width of one attention head.
    pub fn head_dim(&self) -> usize {
        self.d_model / self.n_heads.max(1)
    }

    /// Parameter count: embedding, blocks (4 attention matrices, 3 MLP matrices, 2 norm
    /// gains), final norm, LM head.
    ///
    /// Errors: a count that overflows `usize` (sizes no machine could hold).
    pub fn n_params(&self) -> Result<usize, Error> {
        self.checked_n_params()
            .ok_or_else(|| Error::Config("the parameter count overflows usize".into()))
    }

    /// [`n_params`](Self::n_params), or `None` if it overflows `usize`.
    fn checked_n_params(&self) -> Option<usize> {
        let d = self.d_model;
        let block = d
            .checked_mul(d)?
            .checked_mul(4)?
            .checked_add(d.checked_mul(self.d_ff)?.checked_mul(3)?)?
            .checked_add(d.checked_mul(2)?)?;
        self.vocab
            .checked_mul(d)?
            .checked_mul(2)?
            .checked_add(self.n_layers.checked_mul(block)?)?
            .checked_add(d)
    }

    /// Floating-point operations of one forward pass that feeds `n_new` tokens to each of
    /// `batch` sequences after `ctx` cached positions, counted from the shapes:
    /// `2 · (weights multiplied per token) · tokens` for the matrix products (every block's
    /// four attention and three MLP matrices, then the LM head) plus, per layer, `4 · d_model`
    /// per (query, visible key) pair for `q·kᵀ` and `p·v` under the causal mask.
    /// Norms, RoPE, softmax and SwiGLU's elementwise work are left out (< 2%).
    ///
    /// ```
    /// # let cfg = transformer_lab::Config { vocab: 256, d_model: 128, n_layers: 4, n_heads: 4,
    /// #     d_ff: 384, max_seq: 128, norm_eps: 1e-5, rope_theta: 10000.0 };
    /// // One token at position 0: 2 · 884,736 weights + 4 layers · 4 · 128 · 1 key.
    /// assert_eq!(cfg.forward_flops(1, 0, 1), 2.0 * 884_736.0 + 4.0 * 4.0 * 128.0);
    /// ```
    pub fn forward_flops(&self, batch: usize, ctx: usize, n_new: usize) -> f64 {
        let d = self.d_model as f64;
        let weights = self.n_layers as f64 * (4.0 * d * d + 3.0 * d * self.d_ff as f64)
            + d * self.vocab as f64;
        // In floating point from the start: products of sizes overflow no integer type.
        let (batch_f, ctx_f, n_f) = (batch as f64, ctx as f64, n_new as f64);
        let tokens = batch_f * n_f;
        // Query at position p sees p + 1 keys: Σ_{p=ctx}^{ctx+n−1} (p + 1).
        let pairs = n_f * ctx_f + n_f * (n_f + 1.0) / 2.0;
        2.0 * weights * tokens + batch_f * self.n_layers as f64 * 4.0 * d * pairs
    }

    /// Checks that the shape is usable: every size ≥ 1, `d_model` divisible by `n_heads`
    /// into an even head width, at most [`MAX_FLOATS`](crate::MAX_FLOATS) parameters and
    /// `max_seq · d_model` at most that too, a finite positive epsilon and θ.
    pub fn validate(&self) -> Result<(), Error> {
        let sizes = [
            ("vocab", self.vocab),
            ("d_model", self.d_model),
            ("n_layers", self.n_layers),
            ("n_heads", self.n_heads),
            ("d_ff", self.d_ff),
            ("max_seq", self.max_seq),
        ];
        for (name, v) in sizes {
            if v == 0 {
                return Err(Error::Config(format!("{name} must be at least 1")));
            }
        }
        if !self.d_model.is_multiple_of(self.n_heads) {
            return Err(Error::Config(format!(
                "d_model {} is not divisible by n_heads {}",
                self.d_model, self.n_heads
            )));
        }
        if !self.head_dim().is_multiple_of(2) {
            return Err(Error::Config(format!(
                "head_dim {} must be even: RoPE rotates pairs of dimensions",
                self.head_dim()
            )));
        }
        let n_params = self.checked_n_params();
        if n_params.is_none_or(|n| n > crate::MAX_FLOATS) {
            return Err(Error::Config(format!(
                "{} parameters exceed the limit of {} (MAX_FLOATS)",
                n_params.map_or("too many to count".into(), |n| n.to_string()),
                crate::MAX_FLOATS
            )));
        }
        if self
            .max_seq
            .checked_mul(self.d_model)
            .is_none_or(|n| n > crate::MAX_FLOATS)
        {
            return Err(Error::Config(format!(
                "max_seq {} × d_model {} exceeds the limit of {} floats (MAX_FLOATS) for a \
                 sequence's activations and RoPE tables",
                self.max_seq,
                self.d_model,
                crate::MAX_FLOATS
            )));
        }
        if self.vocab > u32::MAX as usize {
            return Err(Error::Config(format!(
                "vocab {} does not fit token ids of 32 bits",
                self.vocab
            )));
        }
        if !(self.norm_eps.is_finite() && self.norm_eps > 0.0) {
            return Err(Error::Config(format!(
                "norm_eps must be finite and > 0, got {}",
                self.norm_eps
            )));
        }
        if !(self.rope_theta.is_finite() && self.rope_theta > 1.0) {
            return Err(Error::Config(format!(
                "rope_theta must be finite and > 1, got {}",
                self.rope_theta
            )));
        }
        Ok(())
    }
}

/// Lecture 3's model, the toy model every later lecture experiments on: a 4-layer,
/// 128-wide byte-level decoder (0.9 M parameters). `quant_lab` re-exports it as
/// `quant_lab::QCFG`, the name the Python lectures import it by.
///
/// ```
/// // 4 blocks × (4·128² + 3·128·384 + 2·128) + embedding and head 2 · 256·128 + final norm 128
/// assert_eq!(transformer_lab::QCFG.n_params()?, 918_656);
/// # Ok::<(), transformer_lab::Error>(())
/// ```
pub const QCFG: Config = Config {
    // Byte-level vocabulary: every token is one byte value.
    vocab: 256,
    // Wide enough that int4 groups of 32 divide every input dimension (128 and 384).
    d_model: 128,
    // Deep enough that "the first layer only" is a visibly weaker draft (lecture 6).
    n_layers: 4,
    // head_dim 32: even, as RoPE needs.
    n_heads: 4,
    // 3 × d_model, the usual SwiGLU width (≈ 8/3 · d rounded up to a multiple of 128).
    d_ff: 384,
    // Room for lecture 6's 8-token prompts plus 48 generated tokens, and more.
    max_seq: 128,
    // Llama's RMSNorm epsilon.
    norm_eps: 1e-5,
    // Llama 2's RoPE base.
    rope_theta: 10000.0,
};

/// A copy of `base` with `n_layers` blocks, every other field unchanged.
///
/// This is how lecture 6 builds its "first layer only" draft: `config_like(&QCFG, 1)` run
/// over the target's own parameters uses just their first block. For other overrides use
/// struct update syntax: `Config { max_seq: 256, ..base }`.
///
/// ```
/// let one = transformer_lab::config_like(&transformer_lab::QCFG, 1);
/// assert_eq!((one.n_layers, one.d_model), (1, 128));
/// ```
pub fn config_like(base: &Config, n_layers: usize) -> Config {
    Config { n_layers, ..*base }
}
