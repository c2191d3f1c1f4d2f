//! Model shapes and the parameter / KV-cache counts that follow from them.

/// The shape of a decoder-only, Llama-style transformer (GQA attention, SwiGLU MLP,
/// RMSNorm), as far as the roofline needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelConfig {
    /// Name used in lecture text.
    pub name: &'static str,
    /// Number of transformer blocks.
    pub n_layers: u64,
    /// Residual stream width.
    pub d_model: u64,
    /// Query heads.
    pub n_heads: u64,
    /// Key/value heads (grouped-query attention: `n_heads / n_kv_heads` queries share one).
    pub n_kv_heads: u64,
    /// Width of one head.
    pub head_dim: u64,
    /// Hidden width of the SwiGLU MLP (each of gate, up and down is `d_model × d_ff`).
    pub d_ff: u64,
    /// Vocabulary size.
    pub vocab: u64,
    /// Whether the LM head reuses the input embedding table.
    pub tied_embeddings: bool,
    /// Whether the q, k and v projections carry a bias (Qwen2 does, Llama does not).
    pub qkv_bias: bool,
}

/// Llama-3.1-8B, the lecture's target model.
///
/// Source: `config.json` of meta-llama/Llama-3.1-8B on the Hugging Face Hub
/// (num_hidden_layers 32, hidden_size 4096, num_attention_heads 32,
/// num_key_value_heads 8, intermediate_size 14336, vocab_size 128256,
/// tie_word_embeddings false). Published parameter count: 8,030,261,248.
pub const LLAMA31_8B: ModelConfig = ModelConfig {
    name: "Llama-3.1-8B",
    n_layers: 32,
    d_model: 4096,
    n_heads: 32,
    n_kv_heads: 8,
    head_dim: 128,
    d_ff: 14336,
    vocab: 128_256,
    tied_embeddings: false,
    qkv_bias: false,
};

impl ModelConfig {
    /// Parameters of one transformer block: q, k, v, o projections (plus q/k/v biases
    /// if any), the three SwiGLU matrices and the two RMSNorm gains.
    pub fn params_per_layer(&self) -> u64 {
        let q = self.n_heads * self.head_dim;
        let kv = self.n_kv_heads * self.head_dim;
        let attn = self.d_model * (q + 2 * kv) + q * self.d_model;
        let bias = if self.qkv_bias { q + 2 * kv } else { 0 };
        let mlp = 3 * self.d_model * self.d_ff;
        attn + bias + mlp + 2 * self.d_model
    }

    /// Total parameter count: all blocks, the embedding table (twice if untied: the
    /// LM head is a second `vocab × d_model` matrix) and the final norm.
    ///
    /// ```
    /// assert_eq!(llm_math::LLAMA31_8B.n_params(), 8_030_261_248);
    /// ```
    pub fn n_params(&self) -> u64 {
        let embed = self.vocab * self.d_model * if self.tied_embeddings { 1 } else { 2 };
        self.n_layers * self.params_per_layer() + embed + self.d_model
    }

    /// Parameters one forward pass actually streams from memory and multiplies by.
    ///
    /// For an untied model the input embedding is a table lookup that touches only the
    /// rows of the tokens in the batch (negligible), so it is left out; a tied model's
    /// shared table is read in full once, as the LM head. This is how GenZ,
    /// llm-analysis and LLM-Viewer count decode traffic.
    ///
    /// ```
    /// assert_eq!(llm_math::LLAMA31_8B.streamed_params(), 7_504_924_672);
    /// ```
    pub fn streamed_params(&self) -> u64 {
        if self.tied_embeddings {
            self.n_params()
        } else {
            self.n_params() - self.vocab * self.d_model
        }
    }

    /// Bytes of KV cache one token occupies: K and V, every layer, every KV head, in bf16.
    ///
    /// ```
    /// // 2 × 32 layers × 8 heads × 128 × 2 bytes = 128 KiB per token.
    /// assert_eq!(llm_math::LLAMA31_8B.kv_bytes_per_token(), 131_072);
    /// ```
    pub fn kv_bytes_per_token(&self) -> u64 {
        2 * self.n_layers * self.n_kv_heads * self.head_dim * crate::KV_BYTES_PER_ELEMENT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama31_8b_has_its_published_parameter_count() {
        assert_eq!(LLAMA31_8B.n_params(), 8_030_261_248);
    }

    #[test]
    fn streamed_params_of_an_untied_model_skip_the_input_embedding() {
        assert_eq!(LLAMA31_8B.streamed_params(), 8_030_261_248 - 128_256 * 4096);
    }

    #[test]
    fn a_block_counts_attention_mlp_and_norms_by_hand() {
        // q and o: 4096·4096 each; k and v: 4096·1024 each; MLP 3·4096·14336; norms 2·4096.
        let by_hand = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096;
        assert_eq!(LLAMA31_8B.params_per_layer(), by_hand);
    }

    #[test]
    fn qkv_bias_adds_one_bias_per_projected_output() {
        let with_bias = ModelConfig {
            qkv_bias: true,
            ..LLAMA31_8B
        };
        assert_eq!(
            with_bias.params_per_layer() - LLAMA31_8B.params_per_layer(),
            4096 + 2 * 1024
        );
    }
}
