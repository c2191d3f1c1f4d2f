//! Whether a model's shape ([`ModelConfig::validate`]) and a card can exist, asked by every
//! pass and capacity before any count is made.

use crate::ModelConfig;

/// The most parameters a [`ModelConfig`] may have: 10¹⁵, some 500 times the largest model
/// published, and far enough below `u64::MAX` that no count or byte total overflows.
pub const MAX_PARAMS: f64 = 1e15;

impl ModelConfig {
    /// Whether the shape can exist: every size at least 1 (a dense MLP width of 0 only
    /// beside experts, unless some layers are dense), the query heads a multiple of the KV
    /// heads, an MoE block that checks ([`crate::Experts::check`]) with no more dense
    /// layers than layers, a latent attention of non-zero widths over one KV head
    /// ([`crate::Mla`]), a sliding window of at least one token over no more layers than
    /// there are, at most [`MAX_PARAMS`] parameters, no control character in its name. Every pass
    /// and capacity asks this first, so a hand-built model with no layers or heads is an
    /// error, never an unbounded batch or a made-up speedup.
    ///
    /// ```
    /// use llm_math::{LLAMA31_8B, ModelConfig};
    /// assert!(LLAMA31_8B.validate().is_ok());
    /// let e = ModelConfig { n_layers: 0, ..LLAMA31_8B }.validate().unwrap_err();
    /// assert_eq!(e.to_string(), "Llama-3.1-8B's number of layers must be at least 1, got 0");
    /// // More sliding-window layers than layers: refused, never priced.
    /// let gemma = *llm_math::model("Gemma-2-9B").unwrap();
    /// let mut arch = gemma.arch;
    /// arch.sliding = arch.sliding.map(|s| llm_math::Sliding { layers: 43, ..s });
    /// assert!(ModelConfig { arch, ..gemma }.validate().unwrap_err().to_string().contains("43 sliding"));
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
        if name.chars().any(char::is_control) {
            return Err(crate::Error::Invalid(format!(
                "the model name {name:?} holds a control character (a terminal, an SVG and a \
                 table header cannot show one)"
            )));
        }
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
            if x.dense_layers > self.n_layers {
                return Err(crate::Error::Invalid(format!(
                    "{name} has {} layers, fewer than its {} dense layers",
                    self.n_layers, x.dense_layers
                )));
            }
            if x.dense_layers > 0 && self.d_ff == 0 {
                return Err(crate::Error::Invalid(format!(
                    "{name}'s {} dense layers need an MLP width (d_ff) of at least 1",
                    x.dense_layers
                )));
            }
        }
        if let Some(m) = self.arch.mla {
            let qk = m.qk_nope_head_dim.saturating_add(m.qk_rope_head_dim);
            let latent = [m.kv_lora_rank, m.v_head_dim, qk];
            if latent.contains(&0) || self.n_kv_heads != 1 {
                return Err(crate::Error::Invalid(format!(
                    "{name}'s latent attention needs a KV latent, a value and a query/key \
                     width of at least 1 and one KV head (the latent every head reads), got \
                     {m:?} and {} KV heads",
                    self.n_kv_heads
                )));
            }
        }
        if let Some(sliding) = self.arch.sliding {
            if sliding.window == 0 {
                return Err(crate::Error::Invalid(format!(
                    "{name}'s sliding window must be at least 1 token, got 0"
                )));
            }
            if sliding.layers > self.n_layers {
                return Err(crate::Error::Invalid(format!(
                    "{name} has {} layers, fewer than its {} sliding-window layers",
                    self.n_layers, sliding.layers
                )));
            }
        }
        // Counted in saturating arithmetic: a shape too big to count is `u64::MAX`.
        let params = self.n_params();
        if params as f64 > MAX_PARAMS {
            return Err(crate::Error::Invalid(format!(
                "{name} would have about {:.3e} parameters; at most {MAX_PARAMS:e}",
                params as f64
            )));
        }
        Ok(())
    }
}

/// [`Accelerator::validate`](hw_specs::Accelerator::validate), as this crate's error.
pub(crate) fn check_card(hw: &hw_specs::Accelerator) -> Result<(), crate::Error> {
    hw.validate()
        .map_err(|e| crate::Error::Invalid(e.to_string()))
}
