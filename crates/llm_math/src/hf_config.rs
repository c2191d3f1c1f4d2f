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

use serde_json::Value;

mod fields;
#[cfg(test)]
mod tests_blocks;

use crate::{Arch, Error, ModelConfig, Tokenizer};
use fields::Fields;

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
        let doc: Value = serde_json::from_str(text)
            .map_err(|e| Error::Invalid(format!("{name}: config.json is not JSON: {e}")))?;
        Self::from_hf_value(&doc, name, tokenizer)
    }

    /// [`ModelConfig::from_hf_config`] of a `config.json` already parsed.
    fn from_hf_value(
        doc: &Value,
        name: &'static str,
        tokenizer: Tokenizer,
    ) -> Result<ModelConfig, Error> {
        let cfg = Fields { doc, name };
        let Value::Object(_) = doc else {
            return Err(cfg.bad("the file is not a JSON object"));
        };
        cfg.refuse_unpriced()?;
        let model_type = cfg.model_type();
        let d_model = cfg.required("hidden_size")?;
        let n_heads = cfg.required("num_attention_heads")?;
        let n_layers = cfg.required("num_hidden_layers")?;
        let mla = cfg.mla()?;
        let head_dim = match (mla, cfg.optional("head_dim")?) {
            (Some(m), _) => m.qk_nope_head_dim.saturating_add(m.qk_rope_head_dim),
            (None, Some(h)) => h,
            (None, None) if n_heads > 0 && d_model % n_heads == 0 => d_model / n_heads,
            (None, None) => {
                return Err(cfg
                    .bad("no head_dim, and hidden_size is not a multiple of num_attention_heads"));
            }
        };
        let n_kv_heads = match mla {
            // The latent is one KV that every head reads.
            Some(_) => 1,
            None => cfg.optional("num_key_value_heads")?.unwrap_or(n_heads),
        };
        let moe = cfg.experts()?;
        let d_ff = match moe {
            Some(x) if x.dense_layers == 0 => 0,
            _ => cfg.required("intermediate_size")?,
        };
        let qwen2 = matches!(model_type, "qwen2" | "qwen2_moe");
        let bias = cfg.flag(if matches!(model_type, "internlm" | "internlm2") {
            "bias"
        } else {
            "attention_bias"
        })?;
        if mla.is_some() && bias == Some(true) {
            return Err(cfg.bad("field attention_bias on latent attention is not priced yet"));
        }
        let positions = cfg.required("max_position_embeddings")?;
        let (sliding, cap) = cfg.sliding(n_layers)?;
        let model = ModelConfig {
            name,
            n_layers,
            d_model,
            n_heads,
            n_kv_heads,
            head_dim,
            d_ff,
            vocab: cfg.required("vocab_size")?,
            tied_embeddings: cfg
                .flag("tie_word_embeddings")?
                .unwrap_or(matches!(model_type, "gemma" | "gemma2")),
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
}

impl ModelConfig {
    /// [`ModelConfig::from_hf_config`] of the file at `path`, named after its folder (a
    /// downloaded model's `…/Llama-2-7b-hf/config.json` is `Llama-2-7b-hf`) or, for a file
    /// of another name, after the file; its tokenizer family is named by the file's
    /// `model_type` and `vocab_size` (two configs that declare the same are taken to share
    /// token ids: check before drafting across them). The name and family are kept for
    /// the rest of the program (leaked, a few bytes): this is for a command line, once per
    /// model.
    ///
    /// Errors: a file that cannot be read, and as [`ModelConfig::from_hf_config`].
    pub fn from_hf_config_file(path: &std::path::Path) -> Result<ModelConfig, Error> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Invalid(format!("cannot read {}: {e}", path.display())))?;
        let stem = match path.file_name().and_then(|n| n.to_str()) {
            Some("config.json") => path.parent().and_then(|p| p.file_name()),
            _ => path.file_stem(),
        };
        let name = stem.map_or("config.json".into(), |s| s.to_string_lossy().into_owned());
        let doc: Value = serde_json::from_str(&text).map_err(|e| {
            Error::Invalid(format!("{}: config.json is not JSON: {e}", path.display()))
        })?;
        let family = format!(
            "{} ({} tokens)",
            doc["model_type"].as_str().unwrap_or("unnamed"),
            doc["vocab_size"]
        );
        let name: &'static str = Box::leak(name.into_boxed_str());
        let family: &'static str = Box::leak(family.into_boxed_str());
        ModelConfig::from_hf_value(&doc, name, Tokenizer::Declared(family))
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
