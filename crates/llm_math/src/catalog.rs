//! The models shipped as data (`data/models/*.json`, one per model, each with the source
//! of its `config.json` and its published parameter count), beside the ones built in
//! ([`MODELS`]); [`all_models`] is both, the registry `model` and `--list` read.

use once_cell::sync::Lazy;
use serde::Deserialize;

use crate::{MODELS, ModelConfig, Tokenizer};

/// The shipped files, in the order `--list` shows them.
const MODEL_FILES: [&str; 35] = [
    include_str!("../data/models/llama-2-7b.json"),
    include_str!("../data/models/llama-2-13b.json"),
    include_str!("../data/models/llama-2-70b.json"),
    include_str!("../data/models/vicuna-7b-v1_5.json"),
    include_str!("../data/models/vicuna-13b-v1_5.json"),
    include_str!("../data/models/vicuna-33b-v1_3.json"),
    include_str!("../data/models/codellama-34b.json"),
    include_str!("../data/models/tinyllama-1_1b.json"),
    include_str!("../data/models/mistral-7b-v0_1.json"),
    include_str!("../data/models/zephyr-7b-beta.json"),
    include_str!("../data/models/mixtral-8x7b.json"),
    include_str!("../data/models/qwen2_5-0_5b.json"),
    include_str!("../data/models/qwen2_5-1_5b.json"),
    include_str!("../data/models/qwen2_5-3b.json"),
    include_str!("../data/models/qwen2_5-14b.json"),
    include_str!("../data/models/qwen2_5-32b.json"),
    include_str!("../data/models/qwq-32b.json"),
    include_str!("../data/models/qwen2_5-72b.json"),
    include_str!("../data/models/gemma-2b.json"),
    include_str!("../data/models/gemma-7b.json"),
    include_str!("../data/models/qwen3-4b.json"),
    include_str!("../data/models/qwen3-14b.json"),
    include_str!("../data/models/qwen3-235b-a22b.json"),
    include_str!("../data/models/qwen2-57b-a14b.json"),
    include_str!("../data/models/qwen1_5-moe-a2_7b.json"),
    include_str!("../data/models/phi-3-mini-4k.json"),
    include_str!("../data/models/phi-4.json"),
    include_str!("../data/models/internlm-20b.json"),
    include_str!("../data/models/internlm2_5-7b.json"),
    include_str!("../data/models/gemma-2-9b.json"),
    include_str!("../data/models/gemma-2-27b.json"),
    include_str!("../data/models/deepseek-v2-lite.json"),
    include_str!("../data/models/deepseek-v3.json"),
    include_str!("../data/models/gpt-oss-20b.json"),
    include_str!("../data/models/gpt-oss-120b.json"),
];

/// One shipped model file.
#[derive(Debug, Deserialize)]
pub struct ModelFile {
    /// The name the lecture prints.
    pub name: &'static str,
    /// Its tokenizer family.
    pub tokenizer: &'static str,
    /// Where its `config.json` is published.
    pub source: &'static str,
    /// Its published parameter count.
    pub published_params: u64,
    /// Where that count is published.
    pub params_source: &'static str,
    /// The fields of its `config.json` the roofline reads.
    pub config: serde_json::Value,
}

/// The shipped files, read once. A file that does not read is a bug in the data (the
/// crate's tests read every one), so it panics with the file's name.
pub static MODEL_DATA: Lazy<Vec<ModelFile>> = Lazy::new(|| {
    MODEL_FILES
        .iter()
        .map(|text| {
            serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("a shipped model file does not read: {e}"))
        })
        .collect()
});

static SHIPPED: Lazy<Vec<ModelConfig>> = Lazy::new(|| {
    MODEL_DATA
        .iter()
        .map(|f| {
            let family = family(f.tokenizer);
            ModelConfig::from_hf_config(&f.config.to_string(), f.name, family)
                .unwrap_or_else(|e| panic!("{}: {e}", f.name))
        })
        .collect()
});

/// A family's name as a [`Tokenizer`]: the built-in families by their names, any other
/// as [`Tokenizer::Declared`].
pub fn family(name: &'static str) -> Tokenizer {
    [Tokenizer::Llama3, Tokenizer::MistralV3, Tokenizer::Qwen]
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap_or(Tokenizer::Declared(name))
}

/// Every model the registry knows: the built-in ones ([`MODELS`]), then the shipped files.
pub fn all_models() -> impl Iterator<Item = &'static ModelConfig> {
    MODELS.iter().chain(SHIPPED.iter())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_shape_gives_its_published_parameter_count() {
        assert_eq!(MODEL_DATA.len(), MODEL_FILES.len());
        for (file, model) in MODEL_DATA.iter().zip(SHIPPED.iter()) {
            assert_eq!(model.n_params(), file.published_params, "{}", file.name);
            assert!(
                file.source.starts_with("https://huggingface.co/")
                    && file.source.ends_with("/config.json"),
                "{}: {}",
                file.name,
                file.source
            );
            assert_eq!(crate::model(file.name), Ok(model), "found by its name");
        }
    }

    #[test]
    fn names_are_unique_and_families_shared_where_token_ids_are() {
        let names: Vec<String> = all_models().map(|m| hw_specs::normalize(m.name)).collect();
        for (i, n) in names.iter().enumerate() {
            assert!(!names[..i].contains(n), "{n} twice");
        }
        let vicuna = crate::model("Vicuna-7B-v1.5").unwrap();
        let tiny = crate::model("TinyLlama-1.1B").unwrap();
        assert_eq!(vicuna.tokenizer, tiny.tokenizer);
        let qwq = crate::model("QwQ-32B").unwrap();
        assert_eq!(
            qwq.tokenizer,
            crate::QWEN3_0_6B.tokenizer,
            "one Qwen family"
        );
        let mistral = crate::model("Mistral-7B-v0.1").unwrap();
        assert_ne!(
            mistral.tokenizer, vicuna.tokenizer,
            "different SentencePiece models"
        );
        // A sliding window caps the context where full attention would read the same KV.
        assert_eq!(mistral.max_context, 4096);
        let mixtral = crate::model("Mixtral-8x7B").unwrap();
        assert_eq!(mixtral.moe.map(|x| (x.routed, x.top_k)), Some((8, 2)));
    }
}
