//! A model from its Hugging Face `config.json`: the fields the roofline needs, read as the
//! `transformers` library reads them, and a refusal naming the field when one is missing
//! or describes what this roofline does not price.
//!
//! | `config.json` field | [`ModelConfig`] |
//! |---|---|
//! | `num_hidden_layers`, `hidden_size`, `num_attention_heads`, `vocab_size` | `n_layers`, `d_model`, `n_heads`, `vocab` (required) |
//! | `num_key_value_heads` | `n_kv_heads` (default: `num_attention_heads`, plain multi-head attention; 1 is MQA) |
//! | `head_dim` | `head_dim` (default: `hidden_size / num_attention_heads`) |
//! | `intermediate_size` | `d_ff` (required for a dense model; an MoE model's experts replace it) |
//! | `max_position_embeddings` | `max_context` (required); a `sliding_window` below it becomes the maximum, where full attention and the window read the same KV |
//! | `tie_word_embeddings` | `tied_embeddings` (default: false) |
//! | `attention_bias`; `model_type` `qwen2` | `qkv_bias` (Qwen2's q/k/v carry biases without the field) |
//! | `model_type` `qwen3`, `qwen3_moe` | `qk_norm` |
//! | `num_local_experts` (Mixtral) or `num_experts` (Qwen-MoE), `num_experts_per_tok`, `moe_intermediate_size` (else `intermediate_size`) | `moe` |
//!
//! Refused, naming the field: DeepSeek's compressed KV (`kv_lora_rank`, MLA), shared
//! experts (`n_shared_experts`, `shared_expert_intermediate_size`), dense layers among
//! sparse ones (`first_k_dense_replace`, `mlp_only_layers`, `decoder_sparse_step` ≠ 1),
//! sliding-window layers among full ones (`layer_types`, gpt-oss):
//! the roofline prices none of them yet, and a wrong byte count is worse than none.

use serde_json::Value;

use crate::moe::Experts;
use crate::{Error, ModelConfig, Tokenizer};

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
        for field in [
            "kv_lora_rank",
            "n_shared_experts",
            "shared_expert_intermediate_size",
            "first_k_dense_replace",
            "layer_types",
        ] {
            if cfg.present(field) {
                return Err(cfg.bad(&format!(
                    "field {field} describes what this roofline does not price yet"
                )));
            }
        }
        if cfg.present("mlp_only_layers")
            && doc["mlp_only_layers"]
                .as_array()
                .is_some_and(|a| !a.is_empty())
        {
            return Err(
                cfg.bad("field mlp_only_layers (dense layers among sparse ones) is not priced yet")
            );
        }
        if cfg.optional("decoder_sparse_step")?.is_some_and(|s| s != 1) {
            return Err(cfg.bad(
                "field decoder_sparse_step ≠ 1 (dense layers among sparse ones) is not priced yet",
            ));
        }
        let model_type = doc["model_type"].as_str().unwrap_or("");
        let d_model = cfg.required("hidden_size")?;
        let n_heads = cfg.required("num_attention_heads")?;
        let head_dim = match cfg.optional("head_dim")? {
            Some(h) => h,
            None if n_heads > 0 && d_model % n_heads == 0 => d_model / n_heads,
            None => {
                return Err(cfg
                    .bad("no head_dim, and hidden_size is not a multiple of num_attention_heads"));
            }
        };
        let routed = match cfg.optional("num_local_experts")? {
            Some(e) => Some(e),
            None => cfg.optional("num_experts")?,
        };
        let moe = match routed {
            Some(routed) => Some(Experts {
                routed,
                top_k: cfg.required("num_experts_per_tok")?,
                d_ff: match cfg.optional("moe_intermediate_size")? {
                    Some(w) => w,
                    None => cfg.required("intermediate_size")?,
                },
                shared: 0,
            }),
            None => None,
        };
        let d_ff = match moe {
            Some(_) => 0,
            None => cfg.required("intermediate_size")?,
        };
        let positions = cfg.required("max_position_embeddings")?;
        let window = match doc.get("use_sliding_window") {
            Some(Value::Bool(false)) => None,
            _ => cfg.optional("sliding_window")?,
        };
        let model = ModelConfig {
            name,
            n_layers: cfg.required("num_hidden_layers")?,
            d_model,
            n_heads,
            n_kv_heads: cfg.optional("num_key_value_heads")?.unwrap_or(n_heads),
            head_dim,
            d_ff,
            vocab: cfg.required("vocab_size")?,
            tied_embeddings: doc["tie_word_embeddings"].as_bool().unwrap_or(false),
            qkv_bias: doc["attention_bias"]
                .as_bool()
                .unwrap_or(model_type == "qwen2"),
            qk_norm: matches!(model_type, "qwen3" | "qwen3_moe"),
            tokenizer,
            max_context: window.map_or(positions, |w| w.min(positions)),
            moe,
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

/// The fields of one `config.json`, read with errors that name the model and the field.
struct Fields<'a> {
    doc: &'a Value,
    name: &'static str,
}

impl Fields<'_> {
    fn bad(&self, why: &str) -> Error {
        Error::Invalid(format!("{}'s config.json: {why}", self.name))
    }

    fn present(&self, field: &str) -> bool {
        self.doc.get(field).is_some_and(|v| !v.is_null())
    }

    fn optional(&self, field: &str) -> Result<Option<u64>, Error> {
        match self.doc.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| self.bad(&format!("{field} is {v}, not a whole number"))),
        }
    }

    fn required(&self, field: &str) -> Result<u64, Error> {
        self.optional(field)?
            .ok_or_else(|| self.bad(&format!("it has no {field}, which the roofline needs")))
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
        for field in ["kv_lora_rank", "n_shared_experts", "first_k_dense_replace"] {
            let text = LLAMA2_7B.replace("{", &format!("{{\"{field}\": 1,"));
            let e = read(&text).unwrap_err().to_string();
            assert!(e.contains(field), "{e}");
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
