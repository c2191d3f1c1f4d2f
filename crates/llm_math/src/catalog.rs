//! The models: the seed's two built in ([`crate::MODELS`]: `LLAMA31_8B`, `LLAMA32_1B`),
//! every other one shipped as one data file (`data/models/*.json`, with the source of its
//! `config.json` and its published parameter count), in one catalogue
//! ([`hw_specs::catalog::Catalog`], the cards' loader); [`all_models`] is the registry
//! [`crate::model`] and `--list` read.

use hw_specs::catalog::{Catalog, Entry};
use serde::Deserialize;

use crate::{LLAMA31_8B, LLAMA32_1B, ModelConfig, Tokenizer};

/// The models: the seed's Llama-3.1-8B and Llama-3.2-1B built in, every other model one
/// data file, in the order `--list` shows them.
static MODELS_CATALOG: Catalog<ModelConfig> = Catalog::new(
    &[
        Entry::Built(&LLAMA31_8B),
        Entry::File(include_str!("../data/models/llama-3.1-70b.json")),
        Entry::File(include_str!("../data/models/llama-3.1-405b.json")),
        Entry::Built(&LLAMA32_1B),
        Entry::File(include_str!("../data/models/llama-3.2-3b.json")),
        Entry::File(include_str!("../data/models/mistral-7b-v0_3.json")),
        Entry::File(include_str!("../data/models/qwen2_5-7b.json")),
        Entry::File(include_str!("../data/models/llama-3.3-70b.json")),
        Entry::File(include_str!("../data/models/qwen3-8b.json")),
        Entry::File(include_str!("../data/models/qwen3-32b.json")),
        Entry::File(include_str!("../data/models/qwen3-0_6b.json")),
        Entry::File(include_str!("../data/models/qwen3-1_7b.json")),
        Entry::File(include_str!("../data/models/qwen3-30b-a3b.json")),
        Entry::File(include_str!("../data/models/llama-2-7b.json")),
        Entry::File(include_str!("../data/models/llama-2-13b.json")),
        Entry::File(include_str!("../data/models/llama-2-70b.json")),
        Entry::File(include_str!("../data/models/vicuna-7b-v1_5.json")),
        Entry::File(include_str!("../data/models/vicuna-13b-v1_5.json")),
        Entry::File(include_str!("../data/models/vicuna-33b-v1_3.json")),
        Entry::File(include_str!("../data/models/codellama-34b.json")),
        Entry::File(include_str!("../data/models/tinyllama-1_1b.json")),
        Entry::File(include_str!("../data/models/mistral-7b-v0_1.json")),
        Entry::File(include_str!("../data/models/zephyr-7b-beta.json")),
        Entry::File(include_str!("../data/models/mixtral-8x7b.json")),
        Entry::File(include_str!("../data/models/qwen2_5-0_5b.json")),
        Entry::File(include_str!("../data/models/qwen2_5-1_5b.json")),
        Entry::File(include_str!("../data/models/qwen2_5-3b.json")),
        Entry::File(include_str!("../data/models/qwen2_5-14b.json")),
        Entry::File(include_str!("../data/models/qwen2_5-32b.json")),
        Entry::File(include_str!("../data/models/qwq-32b.json")),
        Entry::File(include_str!("../data/models/qwen2_5-72b.json")),
        Entry::File(include_str!("../data/models/gemma-2b.json")),
        Entry::File(include_str!("../data/models/gemma-7b.json")),
        Entry::File(include_str!("../data/models/qwen3-4b.json")),
        Entry::File(include_str!("../data/models/qwen3-14b.json")),
        Entry::File(include_str!("../data/models/qwen3-235b-a22b.json")),
        Entry::File(include_str!("../data/models/qwen2-57b-a14b.json")),
        Entry::File(include_str!("../data/models/qwen1_5-moe-a2_7b.json")),
        Entry::File(include_str!("../data/models/phi-3-mini-4k.json")),
        Entry::File(include_str!("../data/models/phi-4.json")),
        Entry::File(include_str!("../data/models/internlm-20b.json")),
        Entry::File(include_str!("../data/models/internlm2_5-7b.json")),
        Entry::File(include_str!("../data/models/gemma-2-9b.json")),
        Entry::File(include_str!("../data/models/gemma-2-27b.json")),
        Entry::File(include_str!("../data/models/deepseek-v2-lite.json")),
        Entry::File(include_str!("../data/models/deepseek-v3.json")),
        Entry::File(include_str!("../data/models/gpt-oss-20b.json")),
        Entry::File(include_str!("../data/models/gpt-oss-120b.json")),
    ],
    read_model,
);

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

/// A model file's text as its model: its `config.json` read by
/// [`ModelConfig::from_hf_config`] under its name and tokenizer family.
fn read_model(text: &'static str) -> Result<ModelConfig, String> {
    let file = model_file(text)?;
    let family = family(file.tokenizer);
    ModelConfig::from_hf_config(&file.config.to_string(), file.name, family)
        .map_err(|e| format!("{}: {e}", file.name))
}

/// A model file's fields.
///
/// Errors: text that is not a model file, with serde's message.
pub fn model_file(text: &'static str) -> Result<ModelFile, String> {
    serde_json::from_str(text).map_err(|e| format!("a model file: {e}"))
}

/// The shipped model files' texts, in order.
pub fn model_files() -> impl Iterator<Item = &'static str> {
    MODELS_CATALOG.files()
}

/// A family's name as a [`Tokenizer`]: the built-in families by their names, any other
/// as [`Tokenizer::Declared`].
pub fn family(name: &'static str) -> Tokenizer {
    [Tokenizer::Llama3, Tokenizer::MistralV3, Tokenizer::Qwen]
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap_or(Tokenizer::Declared(name))
}

/// Looks a model up by name, ignoring case, spaces, `-` and `_` (`"llama-3.1-70b"`,
/// `"Llama 3.1 70B"` both work). A name with a `/` or `\\` is a path or a Hugging Face
/// repository (`"meta-llama/Llama-3.1-70B"`, `"../Llama-3.1-8B"`), not a name: refused, so
/// that it is never taken for the bare name at its end.
///
/// ```
/// assert_eq!(llm_math::model("qwen2.5-7b")?.n_params(), 7_615_616_512);
/// assert!(llm_math::model("GPT-4").is_err());
/// # Ok::<(), llm_math::Error>(())
/// ```
pub fn model(name: &str) -> Result<&'static ModelConfig, crate::Error> {
    if name.contains(['/', '\\']) {
        return Err(crate::Error::UnknownModel(name.to_string()));
    }
    find_model(name).ok_or_else(|| crate::Error::UnknownModel(name.to_string()))
}

/// Every model the registry knows, in the order `--list` shows them: what
/// [`crate::model`] looks names up in.
pub fn all_models() -> impl Iterator<Item = &'static ModelConfig> {
    MODELS_CATALOG.all()
}

/// The model whose name is `name` (any case, spaces, `-` and `_` ignored).
pub(crate) fn find_model(name: &str) -> Option<&'static ModelConfig> {
    MODELS_CATALOG.find(name, |m| vec![m.name])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_shape_gives_its_published_parameter_count() {
        let shipped = all_models().filter(|m| !crate::MODELS.contains(m));
        let mut files = 0;
        for (text, model) in model_files().zip(shipped) {
            files += 1;
            let file = model_file(text).unwrap();
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
        assert_eq!(files, 46, "every file read and compared");
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
            crate::model("Qwen3-0.6B").unwrap().tokenizer,
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
