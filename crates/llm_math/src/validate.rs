//! Whether a model's shape can exist ([`ModelConfig::validate`]), asked by every pass and
//! capacity before any count is made.

use crate::ModelConfig;

/// The most parameters a [`ModelConfig`] may have: 10¹⁵, some 500 times the largest model
/// published, and far enough below `u64::MAX` that no count or byte total overflows.
pub const MAX_PARAMS: f64 = 1e15;

impl ModelConfig {
    /// Whether the shape can exist: every size at least 1 (a dense MLP width of 0 only
    /// beside experts), the query heads a multiple of the KV heads, an MoE block that
    /// checks ([`crate::Experts::check`]), at most [`MAX_PARAMS`] parameters. Every pass
    /// and capacity asks this first, so a hand-built model with no layers or heads is an
    /// error, never an unbounded batch or a made-up speedup.
    ///
    /// ```
    /// use llm_math::{LLAMA31_8B, ModelConfig};
    /// assert!(LLAMA31_8B.validate().is_ok());
    /// let e = ModelConfig { n_layers: 0, ..LLAMA31_8B }.validate().unwrap_err();
    /// assert_eq!(e.to_string(), "Llama-3.1-8B's number of layers must be at least 1, got 0");
    /// ```
    pub fn validate(&self) -> Result<(), crate::Error> {
        let sizes = [
            ("number of layers", self.n_layers),
            ("model width (d_model)", self.d_model),
            ("number of query heads", self.n_heads),
            ("number of KV heads", self.n_kv_heads),
            ("head width", self.head_dim),
            // An MoE model's MLPs are its experts: its dense width may be 0.
            (
                "MLP width (d_ff)",
                self.d_ff.max(u64::from(self.moe.is_some())),
            ),
            ("vocabulary", self.vocab),
            ("maximum context", self.max_context),
        ];
        let name = self.name;
        for (what, v) in sizes {
            if v == 0 {
                return Err(crate::Error::Invalid(format!(
                    "{name}'s {what} must be at least 1, got 0"
                )));
            }
        }
        if !self.n_heads.is_multiple_of(self.n_kv_heads) {
            return Err(crate::Error::Invalid(format!(
                "{name}'s {} query heads are not a multiple of its {} KV heads",
                self.n_heads, self.n_kv_heads
            )));
        }
        if let Some(x) = self.moe {
            x.check()?;
        }
        // Counted in floating point, which cannot overflow, before any integer count is.
        let (d, l) = (self.d_model as f64, self.n_layers as f64);
        let heads = self.n_heads as f64 + 2.0 * self.n_kv_heads as f64;
        let attn =
            d * heads * self.head_dim as f64 + self.n_heads as f64 * self.head_dim as f64 * d;
        let mlp = 3.0 * d * self.d_ff as f64;
        let experts = self.moe.map_or(0.0, |x| {
            (x.routed as f64 + x.shared as f64) * 3.0 * d * x.d_ff as f64 + x.routed as f64 * d
        });
        let params = l * (attn + mlp + experts) + 2.0 * self.vocab as f64 * d;
        if params.is_nan() || params > MAX_PARAMS {
            return Err(crate::Error::Invalid(format!(
                "{name} would have about {params:.3e} parameters; at most {MAX_PARAMS:e}"
            )));
        }
        Ok(())
    }
}
