//! Model shapes and the parameter / KV-cache counts that follow from them.

use crate::Arch;
use crate::count::n;
use crate::experts::Experts;

/// The shape of a decoder-only, Llama-style transformer (GQA attention, SwiGLU MLP,
/// RMSNorm), as far as the roofline needs it, and what a model's blocks change in that
/// shape ([`Arch`]: sliding windows, latent attention, extra norms and biases).
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
    /// Hidden width of the SwiGLU MLP (each of gate, up and down is `d_model × d_ff`);
    /// in an MoE model, of its dense layers ([`Experts::dense_layers`]), 0 when it has none.
    pub d_ff: u64,
    /// Vocabulary size.
    pub vocab: u64,
    /// Whether the LM head reuses the input embedding table.
    pub tied_embeddings: bool,
    /// Whether the q, k and v projections carry a bias (Qwen2 does, Llama does not).
    pub qkv_bias: bool,
    /// Whether each layer RMS-normalises q and k per head before RoPE (Qwen3's
    /// `q_norm` and `k_norm`: two gains of `head_dim` weights per layer).
    pub qk_norm: bool,
    /// The tokenizer the model reads and writes. A draft can only propose tokens for a
    /// target that shares it (decode_lab checks a draft against its target).
    pub tokenizer: Tokenizer,
    /// The longest context the model was built for, tokens (`max_position_embeddings`).
    pub max_context: u64,
    /// The experts of a mixture-of-experts MLP, which replace the dense MLP in every
    /// layer but the first [`Experts::dense_layers`], or `None` for a dense model.
    pub moe: Option<Experts>,
    /// What the blocks add to the Llama block ([`Arch::LLAMA`]: nothing).
    pub arch: Arch,
}

/// A tokenizer family: models of one family share token ids, so one can draft for another.
///
/// The embedding table may be padded past the tokenizer's size (Qwen2.5-7B has 152,064
/// rows, Qwen3 151,936, both for the same 151,643-token BPE plus specials), so the family,
/// not `vocab`, says whether two models can speculate together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tokenizer {
    /// Llama 3's tiktoken-based BPE, 128,000 tokens + 256 special (Llama 3, 3.1, 3.2, 3.3).
    Llama3,
    /// Mistral's v3 SentencePiece vocabulary of 32,768 tokens (Mistral-7B-v0.3).
    MistralV3,
    /// Qwen's byte-level BPE of 151,643 tokens + specials (Qwen2, Qwen2.5, Qwen3).
    Qwen,
    /// A family named where the model is declared (a model read from its `config.json`,
    /// which does not say which tokenizer it reads): models of one name share token ids.
    Declared(&'static str),
}

impl Tokenizer {
    /// The family's name, as error messages print it.
    pub fn name(self) -> &'static str {
        match self {
            Tokenizer::Llama3 => "Llama 3",
            Tokenizer::MistralV3 => "Mistral v3",
            Tokenizer::Qwen => "Qwen",
            Tokenizer::Declared(name) => name,
        }
    }
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
    qk_norm: false,
    tokenizer: Tokenizer::Llama3,
    max_context: 131_072,
    moe: None,
    arch: Arch::LLAMA,
};

/// Llama-3.2-1B, the lecture's draft model.
///
/// Source: `config.json` of meta-llama/Llama-3.2-1B (16 layers, hidden 2048, 32 heads,
/// 8 KV heads, head_dim 64, intermediate 8192, vocab 128256, tie_word_embeddings true).
/// Published: 1,235,814,400.
pub const LLAMA32_1B: ModelConfig = ModelConfig {
    name: "Llama-3.2-1B",
    n_layers: 16,
    d_model: 2048,
    n_heads: 32,
    n_kv_heads: 8,
    head_dim: 64,
    d_ff: 8192,
    vocab: 128_256,
    tied_embeddings: true,
    qkv_bias: false,
    qk_norm: false,
    tokenizer: Tokenizer::Llama3,
    max_context: 131_072,
    moe: None,
    arch: Arch::LLAMA,
};

/// The models built in as constants: the seed's Llama-3.1-8B (the target) and Llama-3.2-1B
/// (the draft). Every other model is a data file ([`crate::catalog`]);
/// [`crate::catalog::all_models`] lists them all.
pub const MODELS: &[ModelConfig] = &[LLAMA31_8B, LLAMA32_1B];

impl ModelConfig {
    /// The model's first `layers` layers as a model of their own (a draft that runs them,
    /// or a one-layer head of the target's shape): the same widths, with the dense layers
    /// among them (an MoE model's dense layers come first, as DeepSeek's
    /// `first_k_dense_replace` says) and its share of sliding-window layers, rounded up
    /// (Gemma-2 and gpt-oss alternate from a sliding first layer).
    ///
    /// ```
    /// let gemma = llm_math::model("Gemma-2-9B").unwrap(); // 21 of 42 layers slide
    /// assert_eq!(gemma.first_layers(1).arch.sliding.unwrap().layers, 1);
    /// assert_eq!(gemma.first_layers(10).arch.sliding.unwrap().layers, 5);
    /// let v3 = llm_math::model("DeepSeek-V3").unwrap(); // its first 3 layers are dense
    /// assert_eq!(v3.first_layers(1).moe.unwrap().dense_layers, 1);
    /// assert!(v3.first_layers(1).validate().is_ok());
    /// ```
    pub fn first_layers(&self, layers: u64) -> ModelConfig {
        let mut arch = self.arch;
        if let Some(sliding) = arch.sliding.as_mut() {
            let share = u128::from(sliding.layers) * u128::from(layers);
            let rounded_up = share.div_ceil(u128::from(self.n_layers.max(1)));
            sliding.layers = u64::try_from(rounded_up).unwrap_or(u64::MAX).min(layers);
        }
        let mut moe = self.moe;
        if let Some(x) = moe.as_mut() {
            x.dense_layers = x.dense_layers.min(layers);
        }
        ModelConfig {
            n_layers: layers,
            arch,
            moe,
            ..*self
        }
    }

    /// Parameters of one transformer block (of a sparse one in an MoE model): the
    /// attention's projections (GQA's q, k, v, o or MLA's) and their biases and norms
    /// (Qwen3's per-head q and k gains, `2 · head_dim`), the three SwiGLU matrices or an
    /// MoE model's experts and router ([`Experts::per_layer`]), and the RMSNorm gains.
    ///
    /// This and the other counts are for a shape that [`validate`](Self::validate)s; on
    /// one that does not (sizes near `u64::MAX`) they saturate at `u64::MAX`, which is why
    /// every function that computes with a model validates it first.
    pub fn params_per_layer(&self) -> u64 {
        self.layer_params(self.moe.is_none())
    }

    /// One block's parameters, with a dense MLP of `d_ff` or the experts.
    fn layer_params(&self, dense: bool) -> u64 {
        let d = self.d_model;
        let mlp = match self.moe {
            Some(x) if !dense => n(x.per_layer(d)),
            _ => n(3) * n(d) * n(self.d_ff),
        };
        (self.attention_matrices() + self.attention_vectors() + mlp + self.norm_params()).0
    }

    /// Total parameter count: all blocks (an MoE model's dense ones and sparse ones),
    /// the embedding table (twice if untied: the LM head is a second `vocab × d_model`
    /// matrix) and the final norm.
    ///
    /// ```
    /// assert_eq!(llm_math::LLAMA31_8B.n_params(), 8_030_261_248);
    /// ```
    pub fn n_params(&self) -> u64 {
        let blocks = n(self.dense_layers()) * n(self.layer_params(true))
            + n(self.sparse_layers()) * n(self.layer_params(false));
        let tables = if self.tied_embeddings { 1 } else { 2 };
        let embed = n(self.vocab) * n(self.d_model) * n(tables);
        (blocks + embed + n(self.d_model)).0
    }

    /// Parameters one forward pass over one token actually streams from memory and
    /// multiplies by (each token of any pass is multiplied by these).
    ///
    /// For an untied model the input embedding is a table lookup that touches only the
    /// rows of the tokens in the batch (negligible), so it is left out; a tied model's
    /// shared table is read in full once, as the LM head. This is how GenZ,
    /// llm-analysis and LLM-Viewer count decode traffic. An MoE model's token reads its
    /// `k` routed experts of each sparse layer only (and the shared MLP); a pass over more
    /// tokens reads more of them ([`ModelConfig::streamed_params_for`]).
    ///
    /// ```
    /// assert_eq!(llm_math::LLAMA31_8B.streamed_params(), 7_504_924_672);
    /// ```
    pub fn streamed_params(&self) -> u64 {
        let lookup = if self.tied_embeddings {
            0
        } else {
            (n(self.vocab) * n(self.d_model)).0
        };
        self.active_params() - lookup
    }

    /// Bytes of KV cache one token occupies in bf16, every layer:
    /// [`kv_elements_per_token`](Self::kv_elements_per_token)` · 2` (K and V of every KV
    /// head; MLA's latent). A sliding layer drops it once it leaves the window
    /// ([`cached_layer_tokens`](Self::cached_layer_tokens)).
    ///
    /// ```
    /// // 2 × 32 layers × 8 heads × 128 × 2 bytes = 128 KiB per token.
    /// assert_eq!(llm_math::LLAMA31_8B.kv_bytes_per_token(), 131_072);
    /// ```
    pub fn kv_bytes_per_token(&self) -> u64 {
        (n(self.kv_elements_per_token()) * n(crate::KvDtype::Bf16.bytes())).0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model;

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
    fn every_model_has_its_published_parameter_count() {
        let want = [
            ("Llama-3.1-8B", 8_030_261_248),
            ("Llama-3.1-70B", 70_553_706_496),
            ("Llama-3.1-405B", 405_853_388_800),
            ("Llama-3.2-1B", 1_235_814_400),
            ("Llama-3.2-3B", 3_212_749_824),
            ("Mistral-7B-v0.3", 7_248_023_552),
            ("Qwen2.5-7B", 7_615_616_512),
            ("Llama-3.3-70B", 70_553_706_496),
            ("Qwen3-8B", 8_190_735_360),
            ("Qwen3-32B", 32_762_123_264),
            ("Qwen3-0.6B", 596_049_920),
            ("Qwen3-1.7B", 1_720_574_976),
            // Checked against the model card's 30.5B in `moe`'s tests.
            ("Qwen3-30B-A3B", 30_532_122_624),
        ];
        let listed: Vec<&str> = crate::catalog::all_models().map(|m| m.name).collect();
        assert_eq!(
            listed[..want.len()],
            want.map(|(name, _)| name),
            "the first listed"
        );
        for (name, n) in want {
            assert_eq!(model(name).unwrap().n_params(), n, "{name}");
        }
        // Tied: the shared table is streamed once, as the LM head.
        assert_eq!(LLAMA32_1B.streamed_params(), 1_235_814_400);
    }

    #[test]
    fn models_are_found_whatever_the_spelling() {
        assert!(
            model("meta-llama/Llama-3.1-70B").is_err(),
            "a repository, not a name"
        );
        assert!(model("../Llama-3.1-8B").is_err(), "a path, not a name");
        assert_eq!(
            model("llama 3.2 3b").unwrap(),
            crate::model("Llama-3.2-3B").unwrap()
        );
        let e = model("Llama-3.1-8b-instruct").unwrap_err().to_string();
        assert!(
            e.starts_with("unknown model \"Llama-3.1-8b-instruct\"; the closest: Llama-3.1-8B,"),
            "{e}"
        );
        let n = crate::catalog::all_models().count();
        assert!(e.ends_with(&format!("(of {n} models)")), "{e}");
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

    #[test]
    fn tied_small_qwen3_models_match_the_hub_totals_once_the_stored_head_copy_is_added() {
        // The Hub's safetensors totals store the tied LM head a second time.
        for (m, hub) in [
            (*crate::model("Qwen3-0.6B").unwrap(), 751_632_384),
            (*crate::model("Qwen3-1.7B").unwrap(), 2_031_739_904),
        ] {
            assert_eq!(m.n_params() + m.vocab * m.d_model, hub, "{}", m.name);
        }
        // And the model cards' non-embedding figures: 0.44B and 1.4B.
        let non_embedding = |m: &ModelConfig| (m.n_params() - m.vocab * m.d_model) as f64 / 1e9;
        assert!((non_embedding(crate::model("Qwen3-0.6B").unwrap()) - 0.44).abs() < 0.005);
        assert!((non_embedding(crate::model("Qwen3-1.7B").unwrap()) - 1.41).abs() < 0.005);
    }

    #[test]
    fn qk_norm_adds_two_head_dim_gains_per_layer() {
        let without = ModelConfig {
            qk_norm: false,
            ..*crate::model("Qwen3-8B").unwrap()
        };
        assert_eq!(
            crate::model("Qwen3-8B").unwrap().params_per_layer() - without.params_per_layer(),
            256
        );
        // Without them Qwen3-8B would miss its published count by 36 · 256.
        assert_eq!(8_190_735_360 - without.n_params(), 36 * 256);
    }
}
