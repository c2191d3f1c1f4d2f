//! A model from its Hugging Face `config.json`: the fields the roofline needs, read as the
//! `transformers` library reads them, and a refusal naming the field when one is missing
//! or describes what this roofline does not price.
//!
//! | `config.json` field | [`ModelConfig`] |
//! |---|---|
//! | `num_hidden_layers`, `hidden_size`, `num_attention_heads`, `vocab_size` | `n_layers`, `d_model`, `n_heads`, `vocab` (required) |
//! | `num_key_value_heads` | `n_kv_heads` (default: `num_attention_heads`, plain multi-head attention; 1 is MQA; 1 with MLA, not read) |
//! | `head_dim` | `head_dim` (default: `hidden_size / num_attention_heads`; with MLA `qk_nope_head_dim + qk_rope_head_dim`, not read) |
//! | `intermediate_size` | `d_ff` (required for a dense model, and for an MoE model with dense layers; else the experts replace it) |
//! | `max_position_embeddings` | `max_context` (required); a `sliding_window` on every layer below it becomes the maximum, where full attention and the window read the same KV |
//! | `layer_types` (`full_attention`, `sliding_attention`), or `model_type` `gemma2` (every other layer from the first), with `sliding_window` | `arch.sliding` ([`crate::Sliding`]): those layers read at most the window, the others the whole context, which stays `max_position_embeddings` |
//! | `use_sliding_window: false` | no window at all (Qwen2, Qwen3) |
//! | `tie_word_embeddings` | `tied_embeddings` (default: false; true for `model_type` `gemma`, `gemma2`) |
//! | `attention_bias` (InternLM, InternLM2: `bias`); `model_type` `qwen2`, `qwen2_moe` | `qkv_bias`, and `arch.o_bias` (q, k, v and o carry biases; Qwen2's q/k/v carry them without the field, its o never) |
//! | `model_type` `qwen3`, `qwen3_moe` | `qk_norm` |
//! | `model_type` `gemma2` | `arch.sandwich_norms` (4 RMSNorms per layer) |
//! | `model_type` `gpt_oss` | `arch.attention_sinks`, and the experts' `router_bias` and `expert_bias` |
//! | `num_local_experts` (Mixtral, gpt-oss), `num_experts` (Qwen-MoE) or `n_routed_experts` (DeepSeek), `num_experts_per_tok`, `moe_intermediate_size` (else `intermediate_size`) | `moe` ([`crate::Experts`]) |
//! | `shared_expert_intermediate_size` (Qwen2-MoE, with its `shared_expert_gate`) or `n_shared_experts · moe_intermediate_size` (DeepSeek) | `moe.shared_d_ff`, `moe.shared_gate` |
//! | `first_k_dense_replace` (DeepSeek) | `moe.dense_layers` |
//! | `model_type` `deepseek_v3` | `moe.router_bias` (`e_score_correction_bias`) |
//! | `kv_lora_rank`, `q_lora_rank` (`null`: none), `qk_nope_head_dim`, `qk_rope_head_dim`, `v_head_dim` | `arch.mla` ([`crate::Mla`]) |
//!
//! Not read: what costs no parameters and next to no time (RoPE and its scaling,
//! softcapping, norm epsilons, routing's groups and scaling, dropout), the checkpoint's
//! format (`torch_dtype`, `quantization_config`: the weights' format is a
//! [`crate::Deployment`]'s), and DeepSeek-V3's multi-token-prediction layer
//! (`num_nextn_predict_layers`: not part of the main model's 671B; a draft, if used).
//!
//! Refused, naming the field: dense layers among sparse ones elsewhere than first
//! (`mlp_only_layers` not empty, `decoder_sparse_step` or `moe_layer_freq` ≠ 1), shared
//! experts or dense layers without routed experts, biases on latent attention
//! (`attention_bias` with `kv_lora_rank`), a layer type other than full and sliding
//! attention in `layer_types` (linear or chunked attention), or a `layer_types` whose
//! length is not `num_hidden_layers`: the roofline prices none of them yet, and a wrong
//! byte count is worse than none.

use serde::Deserialize;
use serde_json::Value;

#[cfg(test)]
mod tests_blocks;

use crate::{Arch, Error, Experts, Mla, ModelConfig, Sliding, Tokenizer};

/// The most bytes a `config.json` may hold: a thousand times a real one (a few KiB), so
/// a path to something else (a device, a huge file) is refused before it is read.
pub const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// A `config.json` as `transformers` writes it: the fields the roofline reads, each
/// optional (defaults are applied by [`HfConfig::to_config`]), each number or flag kept
/// as written so that a wrong one is refused by name.
#[derive(Debug, Default, Deserialize)]
struct HfConfig {
    model_type: Option<Text>,
    hidden_size: Option<Num>,
    num_hidden_layers: Option<Num>,
    num_attention_heads: Option<Num>,
    num_key_value_heads: Option<Num>,
    head_dim: Option<Num>,
    intermediate_size: Option<Num>,
    vocab_size: Option<Num>,
    max_position_embeddings: Option<Num>,
    tie_word_embeddings: Option<Flag>,
    attention_bias: Option<Flag>,
    /// InternLM's and InternLM2's name for `attention_bias`.
    bias: Option<Flag>,
    use_sliding_window: Option<Flag>,
    sliding_window: Option<Num>,
    layer_types: Option<List>,
    mlp_only_layers: Option<List>,
    decoder_sparse_step: Option<Num>,
    moe_layer_freq: Option<Num>,
    num_local_experts: Option<Num>,
    num_experts: Option<Num>,
    n_routed_experts: Option<Num>,
    num_experts_per_tok: Option<Num>,
    moe_intermediate_size: Option<Num>,
    shared_expert_intermediate_size: Option<Num>,
    n_shared_experts: Option<Num>,
    first_k_dense_replace: Option<Num>,
    kv_lora_rank: Option<Num>,
    q_lora_rank: Option<Num>,
    qk_nope_head_dim: Option<Num>,
    qk_rope_head_dim: Option<Num>,
    v_head_dim: Option<Num>,
}

/// A number as written: a whole one, or anything else (refused where it is read).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum Num {
    Whole(u64),
    Other(Value),
}

/// A flag as written: `true`, `false`, or anything else (refused where it is read).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum Flag {
    Bool(bool),
    Other(Value),
}

/// A name as written: a string, or anything else (read as no name).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum Text {
    Str(String),
    Other(serde::de::IgnoredAny),
}

/// A list as written: a list, or anything else.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum List {
    Items(Vec<Value>),
    Other(Value),
}

/// Reading a [`HfConfig`]'s fields, with errors that name the model and the field.
struct Reader<'a> {
    cfg: &'a HfConfig,
    name: &'static str,
}

impl Reader<'_> {
    fn bad(&self, why: &str) -> Error {
        Error::Invalid(format!("{}'s config.json: {why}", self.name))
    }

    fn model_type(&self) -> &str {
        match &self.cfg.model_type {
            Some(Text::Str(t)) => t,
            _ => "",
        }
    }

    /// A count: a whole number (a float written with no fraction, as `4096.0`, is one).
    fn optional(&self, field: &str, value: &Option<Num>) -> Result<Option<u64>, Error> {
        match value {
            None => Ok(None),
            Some(Num::Whole(n)) => Ok(Some(*n)),
            Some(Num::Other(v)) => match v.as_f64() {
                Some(x) if x.fract() == 0.0 && (0.0..=u64::MAX as f64).contains(&x) => {
                    Ok(Some(x as u64))
                }
                _ => Err(self.bad(&format!("{field} is {v}, not a whole number"))),
            },
        }
    }

    fn required(&self, field: &str, value: &Option<Num>) -> Result<u64, Error> {
        self.optional(field, value)?
            .ok_or_else(|| self.bad(&format!("it has no {field}, which the roofline needs")))
    }

    fn flag(&self, field: &str, value: &Option<Flag>) -> Result<Option<bool>, Error> {
        match value {
            None => Ok(None),
            Some(Flag::Bool(b)) => Ok(Some(*b)),
            Some(Flag::Other(v)) => Err(self.bad(&format!("{field} is {v}, not true or false"))),
        }
    }
}

impl ModelConfig {
    /// Reads a model from the text of its `config.json`, named `name`, of tokenizer family
    /// `tokenizer` (a `config.json` does not say which tokenizer the model reads: see
    /// [`Tokenizer::Declared`]). The model is [validated](ModelConfig::validate); the
    /// fields read are in [`crate::hf_config`]'s table.
    ///
    /// Errors: text that is not a JSON object, a required field missing or not a whole
    /// number, a field this roofline does not price (named), a shape that cannot exist.
    ///
    /// ```
    /// use llm_math::{ModelConfig, Tokenizer};
    /// let json = r#"{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
    ///   "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
    ///   "vocab_size": 128256, "max_position_embeddings": 131072, "tie_word_embeddings": false}"#;
    /// let m = ModelConfig::from_hf_config(json, "my-8b", Tokenizer::Llama3)?;
    /// assert_eq!(m.n_params(), llm_math::LLAMA31_8B.n_params());
    /// let e = ModelConfig::from_hf_config("{}", "empty", Tokenizer::Llama3).unwrap_err();
    /// assert!(e.to_string().contains("hidden_size"), "{e}");
    /// # Ok::<(), llm_math::Error>(())
    /// ```
    pub fn from_hf_config(
        text: &str,
        name: &'static str,
        tokenizer: Tokenizer,
    ) -> Result<ModelConfig, Error> {
        parse(text, name)?.to_config(name, tokenizer)
    }

    /// [`ModelConfig::from_hf_config`] of the file at `path`, named after its folder (a
    /// downloaded model's `…/Llama-2-7b-hf/config.json` is `Llama-2-7b-hf`) or, for a file
    /// of another name, after the file; its tokenizer family is a built-in one where the
    /// file's `model_type` and `vocab_size` name one (`built_in_family`: a Llama-3 config
    /// drafts with the built-in Llama 3 models), else named by those two fields (two
    /// configs that declare the same are taken to share token ids: check before drafting
    /// across them). The name and family are kept for
    /// the rest of the program (leaked, a few bytes): this is for a command line, once per
    /// model. Only a regular file of at most [`MAX_CONFIG_BYTES`] is read.
    ///
    /// Errors: a file that cannot be read, is not a regular file or is too big, and as
    /// [`ModelConfig::from_hf_config`].
    pub fn from_hf_config_file(path: &std::path::Path) -> Result<ModelConfig, Error> {
        let shown = path.display();
        let text = hw_specs::user_file::read(path, MAX_CONFIG_BYTES, "a config.json")
            .map_err(|e| Error::Invalid(format!("{shown}: {e}")))?;
        Self::from_hf_config_at(path, &text)
    }

    /// [`ModelConfig::from_hf_config_file`] of `text`, the file at `path` as someone else
    /// read it (a browser page's file picker): named and typed as that file would be.
    ///
    /// Errors: a text longer than [`MAX_CONFIG_BYTES`], and as
    /// [`ModelConfig::from_hf_config`].
    pub fn from_hf_config_at(path: &std::path::Path, text: &str) -> Result<ModelConfig, Error> {
        if text.len() as u64 > MAX_CONFIG_BYTES {
            return Err(Error::Invalid(format!(
                "{}: more than {MAX_CONFIG_BYTES} bytes, far more than any config.json",
                path.display()
            )));
        }
        let stem = match path.file_name().and_then(|n| n.to_str()) {
            Some("config.json") => path.parent().and_then(|p| p.file_name()),
            _ => path.file_stem(),
        };
        let name = stem.map_or("config.json".into(), |s| printable(&s.to_string_lossy()));
        let name: &'static str = Box::leak(name.into_boxed_str());
        let cfg = parse(text, name)?;
        let model_type = match &cfg.model_type {
            Some(Text::Str(t)) => printable(t),
            _ => "unnamed".to_string(),
        };
        let vocab = match &cfg.vocab_size {
            Some(Num::Whole(n)) => n.to_string(),
            Some(Num::Other(v)) => v.to_string(),
            None => "null".to_string(),
        };
        let tokenizer = match built_in_family(&model_type, &cfg.vocab_size) {
            Some(known) => known,
            None => {
                let family = format!("{model_type} ({vocab} tokens)");
                Tokenizer::Declared(Box::leak(family.into_boxed_str()))
            }
        };
        cfg.to_config(name, tokenizer)
    }
}

/// The built-in tokenizer family a `config.json` of `model_type` with `vocab` embedding
/// rows reads, where the pair names exactly one: `llama` with 128,256 rows is Llama 3 (Llama
/// 2's 32,000 is not), `mistral` with 32,768 is Mistral v3 (v0.1's 32,000 is not), Qwen2
/// and Qwen3 (dense or MoE) with 151,936 or 152,064 are Qwen. So a downloaded Llama-3
/// target takes the built-in Llama-3.2-1B as its draft.
fn built_in_family(model_type: &str, vocab: &Option<Num>) -> Option<Tokenizer> {
    let Some(Num::Whole(rows)) = vocab else {
        return None;
    };
    match (model_type, *rows) {
        ("llama", 128_256) => Some(Tokenizer::Llama3),
        ("mistral", 32_768) => Some(Tokenizer::MistralV3),
        ("qwen2" | "qwen3" | "qwen2_moe" | "qwen3_moe", 151_936 | 152_064) => Some(Tokenizer::Qwen),
        _ => None,
    }
}

/// `text` with each control character written as its escape (`\u{1b}` for ESC): a
/// folder's name or a file's field goes to a terminal, an SVG and a table header, which
/// cannot show one.
fn printable(text: &str) -> String {
    let shown = |c: char| {
        if c.is_control() {
            c.escape_unicode().to_string()
        } else {
            c.to_string()
        }
    };
    text.chars().map(shown).collect()
}

/// The text of a `config.json` as its fields.
fn parse(text: &str, name: &'static str) -> Result<HfConfig, Error> {
    serde_json::from_str(text).map_err(|e| match e.classify() {
        // With every field read leniently, the only data error left is the whole file's
        // (an array, a number) — or a field written twice.
        serde_json::error::Category::Data if !e.to_string().starts_with("duplicate field") => {
            Error::Invalid(format!(
                "{name}'s config.json: the file is not a JSON object"
            ))
        }
        serde_json::error::Category::Data => Error::Invalid(format!("{name}'s config.json: {e}")),
        _ => Error::Invalid(format!("{name}: config.json is not JSON: {e}")),
    })
}

impl HfConfig {
    /// The model these fields describe, with `transformers`' defaults, validated.
    fn to_config(&self, name: &'static str, tokenizer: Tokenizer) -> Result<ModelConfig, Error> {
        let r = Reader { cfg: self, name };
        self.refuse_unpriced(&r)?;
        let model_type = r.model_type();
        let d_model = r.required("hidden_size", &self.hidden_size)?;
        let n_heads = r.required("num_attention_heads", &self.num_attention_heads)?;
        let n_layers = r.required("num_hidden_layers", &self.num_hidden_layers)?;
        let mla = self.mla(&r)?;
        let head_dim = match (mla, r.optional("head_dim", &self.head_dim)?) {
            (Some(m), _) => m.qk_nope_head_dim.saturating_add(m.qk_rope_head_dim),
            (None, Some(h)) => h,
            (None, None) if n_heads > 0 && d_model % n_heads == 0 => d_model / n_heads,
            (None, None) => {
                return Err(
                    r.bad("no head_dim, and hidden_size is not a multiple of num_attention_heads")
                );
            }
        };
        let n_kv_heads = match mla {
            // The latent is one KV that every head reads.
            Some(_) => 1,
            None => r
                .optional("num_key_value_heads", &self.num_key_value_heads)?
                .unwrap_or(n_heads),
        };
        let moe = self.experts(&r)?;
        let d_ff = match moe {
            Some(x) if x.dense_layers == 0 => 0,
            _ => r.required("intermediate_size", &self.intermediate_size)?,
        };
        let qwen2 = matches!(model_type, "qwen2" | "qwen2_moe");
        let bias = match model_type {
            "internlm" | "internlm2" => r.flag("bias", &self.bias)?,
            _ => r.flag("attention_bias", &self.attention_bias)?,
        };
        if mla.is_some() && bias == Some(true) {
            return Err(r.bad("field attention_bias on latent attention is not priced yet"));
        }
        let positions = r.required("max_position_embeddings", &self.max_position_embeddings)?;
        let (sliding, cap) = self.sliding(&r, n_layers)?;
        let tied = r.flag("tie_word_embeddings", &self.tie_word_embeddings)?;
        let model = ModelConfig {
            name,
            n_layers,
            d_model,
            n_heads,
            n_kv_heads,
            head_dim,
            d_ff,
            vocab: r.required("vocab_size", &self.vocab_size)?,
            tied_embeddings: tied.unwrap_or(matches!(model_type, "gemma" | "gemma2")),
            qkv_bias: bias.unwrap_or(qwen2),
            qk_norm: matches!(model_type, "qwen3" | "qwen3_moe"),
            tokenizer,
            max_context: cap.map_or(positions, |w| w.min(positions)),
            moe,
            arch: Arch {
                o_bias: bias == Some(true) && !qwen2,
                sandwich_norms: model_type == "gemma2",
                attention_sinks: model_type == "gpt_oss",
                sliding,
                mla,
            },
        };
        model.validate()?;
        Ok(model)
    }

    /// Fields whose value describes what the roofline does not price: refused, named.
    fn refuse_unpriced(&self, r: &Reader<'_>) -> Result<(), Error> {
        let dense_among = "(dense layers among sparse ones) is not priced yet";
        if matches!(&self.mlp_only_layers, Some(List::Items(l)) if !l.is_empty()) {
            return Err(r.bad(&format!("field mlp_only_layers {dense_among}")));
        }
        for (field, value) in [
            ("decoder_sparse_step", &self.decoder_sparse_step),
            ("moe_layer_freq", &self.moe_layer_freq),
        ] {
            if r.optional(field, value)?.is_some_and(|s| s != 1) {
                return Err(r.bad(&format!("field {field} ≠ 1 {dense_among}")));
            }
        }
        Ok(())
    }

    /// The experts: E from `num_local_experts` (Mixtral, gpt-oss), `num_experts`
    /// (Qwen-MoE) or `n_routed_experts` (DeepSeek); `None` for a dense model.
    fn experts(&self, r: &Reader<'_>) -> Result<Option<Experts>, Error> {
        let mut routed = None;
        for (field, value) in [
            ("num_local_experts", &self.num_local_experts),
            ("num_experts", &self.num_experts),
            ("n_routed_experts", &self.n_routed_experts),
        ] {
            routed = routed.or(r.optional(field, value)?);
        }
        let Some(routed) = routed else {
            for (field, present) in [
                ("n_shared_experts", self.n_shared_experts.is_some()),
                (
                    "shared_expert_intermediate_size",
                    self.shared_expert_intermediate_size.is_some(),
                ),
                (
                    "first_k_dense_replace",
                    self.first_k_dense_replace.is_some(),
                ),
            ] {
                if present {
                    return Err(r.bad(&format!("{field} without routed experts")));
                }
            }
            return Ok(None);
        };
        let moe_width = r.optional("moe_intermediate_size", &self.moe_intermediate_size)?;
        let d_ff = match moe_width {
            Some(w) => w,
            None => r.optional("intermediate_size", &self.intermediate_size)?.ok_or_else(|| {
                r.bad("it has no moe_intermediate_size (nor intermediate_size), the experts' width")
            })?,
        };
        let qwen_shared = r.optional(
            "shared_expert_intermediate_size",
            &self.shared_expert_intermediate_size,
        )?;
        let deepseek_shared = match r.optional("n_shared_experts", &self.n_shared_experts)? {
            Some(k) => {
                k.saturating_mul(r.required("moe_intermediate_size", &self.moe_intermediate_size)?)
            }
            None => 0,
        };
        let model_type = r.model_type();
        let dense_layers = r.optional("first_k_dense_replace", &self.first_k_dense_replace)?;
        Ok(Some(Experts {
            top_k: r.required("num_experts_per_tok", &self.num_experts_per_tok)?,
            shared_d_ff: qwen_shared.unwrap_or(deepseek_shared),
            // Qwen2-MoE's shared expert comes with its gate.
            shared_gate: qwen_shared.is_some(),
            router_bias: matches!(model_type, "deepseek_v3" | "gpt_oss"),
            expert_bias: model_type == "gpt_oss",
            dense_layers: dense_layers.unwrap_or(0),
            ..Experts::routed(routed, 0, d_ff)
        }))
    }

    /// DeepSeek's latent attention, when `kv_lora_rank` is set.
    fn mla(&self, r: &Reader<'_>) -> Result<Option<Mla>, Error> {
        let Some(kv_lora_rank) = r.optional("kv_lora_rank", &self.kv_lora_rank)? else {
            return Ok(None);
        };
        Ok(Some(Mla {
            q_lora_rank: r.optional("q_lora_rank", &self.q_lora_rank)?.unwrap_or(0),
            kv_lora_rank,
            qk_nope_head_dim: r.required("qk_nope_head_dim", &self.qk_nope_head_dim)?,
            qk_rope_head_dim: r.required("qk_rope_head_dim", &self.qk_rope_head_dim)?,
            v_head_dim: r.required("v_head_dim", &self.v_head_dim)?,
        }))
    }

    /// Which layers slide: `Ok((sliding, cap))` with `sliding` the sliding layers among
    /// full ones (`layer_types`, or Gemma 2's every other layer) and `cap` a window every
    /// layer shares (then the context's maximum: past it full attention and the window
    /// read the same KV). `use_sliding_window: false` turns the window off.
    fn sliding(
        &self,
        r: &Reader<'_>,
        n_layers: u64,
    ) -> Result<(Option<Sliding>, Option<u64>), Error> {
        if r.flag("use_sliding_window", &self.use_sliding_window)? == Some(false) {
            return Ok((None, None));
        }
        let sliding_layers = match &self.layer_types {
            None if r.model_type() == "gemma2" => Some(n_layers.div_ceil(2)),
            None => None,
            Some(List::Items(types)) => {
                if types.len() as u64 != n_layers {
                    return Err(r.bad(&format!(
                        "layer_types names {} layers, num_hidden_layers {n_layers}",
                        types.len()
                    )));
                }
                let mut sliding = 0;
                for t in types {
                    match t.as_str() {
                        Some("full_attention") => {}
                        Some("sliding_attention") => sliding += 1,
                        _ => {
                            return Err(r.bad(&format!(
                                "layer_types holds {t}, which the roofline does not price \
                                 (it prices full_attention and sliding_attention)"
                            )));
                        }
                    }
                }
                Some(sliding)
            }
            Some(List::Other(v)) => return Err(r.bad(&format!("layer_types is {v}, not a list"))),
        };
        let window = r.optional("sliding_window", &self.sliding_window)?;
        if window == Some(0) {
            return Err(r.bad("sliding_window is 0: a window holds at least one token"));
        }
        Ok(match sliding_layers {
            Some(0) => (None, None),
            Some(layers) => {
                let window = r.required("sliding_window", &self.sliding_window)?;
                (Some(Sliding { window, layers }), None)
            }
            None => (None, window),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LLAMA2_7B: &str = r#"{"model_type": "llama", "hidden_size": 4096,
        "num_hidden_layers": 32, "num_attention_heads": 32, "intermediate_size": 11008,
        "vocab_size": 32000, "max_position_embeddings": 4096, "rms_norm_eps": 1e-05}"#;

    fn read(text: &str) -> Result<ModelConfig, Error> {
        ModelConfig::from_hf_config(text, "probe", Tokenizer::Declared("probe"))
    }

    #[test]
    fn defaults_are_the_transformers_librarys() {
        let m = read(LLAMA2_7B).unwrap();
        assert_eq!(
            (m.n_kv_heads, m.head_dim),
            (32, 128),
            "no GQA field: plain MHA"
        );
        assert!(!m.tied_embeddings && !m.qkv_bias && !m.qk_norm && m.moe.is_none());
        assert_eq!(m.n_params(), 6_738_415_616);
    }

    #[test]
    fn a_missing_or_unpriced_field_is_named() {
        let without = LLAMA2_7B.replace("\"vocab_size\": 32000,", "");
        assert!(
            read(&without)
                .unwrap_err()
                .to_string()
                .contains("vocab_size")
        );
        let text = LLAMA2_7B.replace("\"hidden_size\": 4096", "\"hidden_size\": 4096.5");
        assert!(
            read(&text)
                .unwrap_err()
                .to_string()
                .contains("not a whole number")
        );
        // Latent attention needs its widths; shared experts or dense layers need experts.
        for (field, named) in [
            ("kv_lora_rank", "qk_nope_head_dim"),
            ("n_shared_experts", "n_shared_experts"),
            (
                "shared_expert_intermediate_size",
                "shared_expert_intermediate_size",
            ),
            ("first_k_dense_replace", "first_k_dense_replace"),
            ("decoder_sparse_step\": 2, \"x", "decoder_sparse_step"),
        ] {
            let text = LLAMA2_7B.replace("{", &format!("{{\"{field}\": 1,"));
            let e = read(&text).unwrap_err().to_string();
            assert!(e.contains(named), "{e}");
        }
        assert!(
            read("[1, 2]")
                .unwrap_err()
                .to_string()
                .contains("not a JSON object")
        );
        assert!(read("not json").is_err());
        let zero = LLAMA2_7B.replace("\"num_hidden_layers\": 32", "\"num_hidden_layers\": 0");
        assert!(read(&zero).unwrap_err().to_string().contains("layers"));
    }

    #[test]
    fn a_whole_number_written_as_a_float_reads_and_a_zero_window_is_refused() {
        let float = LLAMA2_7B.replace("\"hidden_size\": 4096", "\"hidden_size\": 4096.0");
        assert_eq!(read(&float).unwrap(), read(LLAMA2_7B).unwrap());
        let zero = LLAMA2_7B.replace("{", "{\"sliding_window\": 0,");
        let e = read(&zero).unwrap_err().to_string();
        assert!(e.contains("sliding_window is 0"), "{e}");
        let twice = LLAMA2_7B.replace("{", "{\"vocab_size\": 1,");
        let e = read(&twice).unwrap_err().to_string();
        assert!(e.contains("duplicate field `vocab_size`"), "{e}");
    }

    /// An ESC in a model's folder name once reached the terminal and made `--plot` write
    /// an SVG that is not XML.
    #[cfg(unix)]
    #[test]
    fn a_control_character_in_a_folder_name_is_written_as_its_escape() {
        let dir = std::env::temp_dir().join(format!("llm_math_ctl_{}", std::process::id()));
        let folder = dir.join("bad\u{1b}[31mname\nx");
        std::fs::create_dir_all(&folder).unwrap();
        let path = folder.join("config.json");
        std::fs::write(&path, LLAMA2_7B.replace("llama", "lla\\u001bma")).unwrap();
        let m = ModelConfig::from_hf_config_file(&path).unwrap();
        assert_eq!(m.name, "bad\\u{1b}[31mname\\u{a}x");
        assert!(!m.tokenizer.name().chars().any(char::is_control));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A config.json target once never took a built-in draft ("another tokenizer family").
    #[test]
    fn a_config_of_a_built_in_family_shares_its_tokenizer() {
        let dir = std::env::temp_dir().join(format!("llm_math_fam_{}", std::process::id()));
        let path = dir.join("Meta-Llama-3-8B").join("config.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let llama3 = LLAMA2_7B.replace("\"vocab_size\": 32000", "\"vocab_size\": 128256");
        std::fs::write(&path, &llama3).unwrap();
        let m = ModelConfig::from_hf_config_file(&path).unwrap();
        assert_eq!(m.tokenizer, Tokenizer::Llama3);
        // Llama 2's 32,000 rows are another tokenizer, named by the file.
        std::fs::write(&path, LLAMA2_7B).unwrap();
        let m = ModelConfig::from_hf_config_file(&path).unwrap();
        assert_eq!(m.tokenizer.name(), "llama (32000 tokens)");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A MoE of 32 layers with `first_k_dense_replace: 1000000` was once priced as dense.
    #[test]
    fn more_dense_layers_than_layers_are_refused() {
        let moe = LLAMA2_7B.replace(
            "{",
            "{\"n_routed_experts\": 8, \"num_experts_per_tok\": 2, \"first_k_dense_replace\": 1000000,",
        );
        let e = read(&moe).unwrap_err().to_string();
        assert!(e.contains("fewer than its 1000000 dense layers"), "{e}");
        let fits = moe.replace("1000000", "1");
        assert_eq!(read(&fits).unwrap().moe.unwrap().dense_layers, 1);
    }

    /// A path to what is not a config file is refused before it is read whole: a device, a
    /// FIFO (opening one would wait for a writer), a file bigger than any config.
    #[test]
    fn only_a_regular_file_of_sensible_size_is_read() {
        let dir = std::env::temp_dir().join(format!("llm_math_hf_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = ModelConfig::from_hf_config_file(std::path::Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let fifo = dir.join("fifo.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = ModelConfig::from_hf_config_file(&fifo)
                .unwrap_err()
                .to_string();
            assert!(e.contains("not a regular file"), "{e}");
        }
        let big = dir.join("config.json");
        let padding = " ".repeat(MAX_CONFIG_BYTES as usize);
        std::fs::write(&big, format!("{padding}{LLAMA2_7B}")).unwrap();
        let e = ModelConfig::from_hf_config_file(&big)
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than"), "{e}");
        std::fs::write(&big, LLAMA2_7B).unwrap();
        let m = ModelConfig::from_hf_config_file(&big).unwrap();
        assert!(
            m.name.starts_with("llm_math_hf_"),
            "named after its folder: {}",
            m.name
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn qwen2_carries_biases_and_qwen3_norms_q_and_k() {
        let qwen2 = LLAMA2_7B.replace("\"llama\"", "\"qwen2\"");
        assert!(read(&qwen2).unwrap().qkv_bias);
        let qwen3 = LLAMA2_7B.replace("\"llama\"", "\"qwen3\"");
        let m = read(&qwen3).unwrap();
        assert!(m.qk_norm && !m.qkv_bias);
        let said = qwen2.replace("{", "{\"attention_bias\": false,");
        assert!(!read(&said).unwrap().qkv_bias, "the field wins");
    }
}
