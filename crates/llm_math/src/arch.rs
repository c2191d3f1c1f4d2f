//! What a block adds to, or changes in, the Llama block ([`Arch`]): biases, extra norms,
//! attention sinks, sliding-window layers ([`Sliding`]), latent attention ([`Mla`]). What
//! they cost is [`crate::attention`]'s.

/// What a model's blocks add to the Llama block (GQA attention without an output bias,
/// two RMSNorms, every layer attending to the whole context); [`Arch::LLAMA`] adds nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arch {
    /// Whether the output projection carries a bias too (`d_model` per layer): Llama's,
    /// Qwen3's, Gemma 2's and gpt-oss's `attention_bias` set q, k, v *and* o biases,
    /// InternLM2's `bias` its `wqkv` and `wo`; Qwen2's q/k/v biases come without one.
    pub o_bias: bool,
    /// Gemma 2's sandwich norms (`model_type` `gemma2`): besides the two pre-norms, a
    /// post-attention and a post-feedforward RMSNorm, 4 gains of `d_model` per layer.
    pub sandwich_norms: bool,
    /// gpt-oss's attention sinks (`model_type` `gpt_oss`): one learned logit per query
    /// head per layer.
    pub attention_sinks: bool,
    /// Layers that attend to a window of the last tokens only, among full ones
    /// ([`Sliding`]); `None` when every layer reads the whole context.
    pub sliding: Option<Sliding>,
    /// DeepSeek's multi-head latent attention instead of GQA ([`Mla`]).
    pub mla: Option<Mla>,
}

impl Arch {
    /// The Llama block: nothing added.
    pub const LLAMA: Arch = Arch {
        o_bias: false,
        sandwich_norms: false,
        attention_sinks: false,
        sliding: None,
        mla: None,
    };
}

/// Sliding-window layers among full-attention ones (Gemma 2: every other layer, from
/// the first; gpt-oss: the `sliding_attention` entries of `layer_types`). Such a layer
/// reads, and an engine with a hybrid cache (vLLM's, SGLang's, `transformers`'
/// `HybridCache`) keeps, at most `window` cached tokens per sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sliding {
    /// Tokens a sliding layer attends to (`sliding_window`).
    pub window: u64,
    /// How many of the layers slide (at most `n_layers` count).
    pub layers: u64,
}

/// DeepSeek's multi-head latent attention (MLA), with the up-projections absorbed as
/// inference engines run it: each token caches one latent of `kv_lora_rank` plus a
/// shared RoPE key of `qk_rope_head_dim` per layer, which every query head reads —
/// multi-query attention over the latent, so a model with MLA has `n_kv_heads` 1 and
/// tensor parallelism does not split its cache (every card holds all of it).
/// `head_dim` is then the query/key width, `qk_nope_head_dim + qk_rope_head_dim`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mla {
    /// Rank of the query's low-rank projection (`q_lora_rank`; 0 when `null`: a full
    /// `d_model × heads · (nope + rope)` query projection, as DeepSeek-V2-Lite has).
    pub q_lora_rank: u64,
    /// Width of the compressed KV latent, cached per token and layer (`kv_lora_rank`).
    pub kv_lora_rank: u64,
    /// Per-head query/key width without position (`qk_nope_head_dim`).
    pub qk_nope_head_dim: u64,
    /// Per-head query/key width with RoPE (`qk_rope_head_dim`); the key's is shared by
    /// the heads and cached beside the latent.
    pub qk_rope_head_dim: u64,
    /// Per-head value width (`v_head_dim`).
    pub v_head_dim: u64,
}
