//! The course's shared command-line flags, as typed groups a demo's inputs flatten
//! ([`lecture_kit::Inputs`]): "on which card, with which models?" — [`Card`] (`--hw`),
//! [`Target`] (`--target`), [`DraftModel`] (`--draft`) — and the what-ifs of speculative
//! decoding: the roofline's assumptions and what drafts ([`roofline`]), the round's α, γ, a
//! measured tree and the grid ([`round`]); with the value parsers that look cards and models
//! up by name ([`parse_hw`], [`parse_model`]) and what `--list` shows of them ([`catalog`]).
//!
//! Each flag is declared once, here, with its doc, range and default; the defaults are the
//! libraries' constants ([`DEFAULT_HW`], [`DEFAULT_TARGET`], [`DEFAULT_DRAFT`]: the H100,
//! Llama-3.1-8B and Llama-3.2-1B of lecture 6's script, `decode_lab::Scenario::LECTURE`),
//! never names typed again. A demo that reads a card and a target:
//!
//! ```
//! use lecture_flags::{Card, Target};
//!
//! #[derive(Debug, Clone, PartialEq, clap::Args, serde::Serialize)]
//! struct Inputs {
//!     #[command(flatten)]
//!     #[serde(flatten)]
//!     card: Card,
//!     #[command(flatten)]
//!     #[serde(flatten)]
//!     target: Target,
//! }
//! impl lecture_kit::Inputs for Inputs {}
//!
//! let i: Inputs = lecture_kit::inputs::parse(&["--hw", "h200"])?;
//! assert_eq!(i.card.hw.name, "H200");
//! assert_eq!(i.target.target, llm_math::LLAMA31_8B);
//! # Ok::<(), lecture_kit::Error>(())
//! ```

mod catalog;
pub mod chrome;
pub mod roofline;
pub mod round;

pub use catalog::catalog;

use hw_specs::Accelerator;
use llm_math::ModelConfig;
use serde::Serialize;

/// The default accelerator: one H100 (lecture 6's script).
pub const DEFAULT_HW: Accelerator = decode_lab::Scenario::LECTURE.hw;
/// The default target model: Llama-3.1-8B.
pub const DEFAULT_TARGET: ModelConfig = decode_lab::Scenario::LECTURE.target;
/// The default draft model: Llama-3.2-1B.
pub const DEFAULT_DRAFT: ModelConfig = decode_lab::LLAMA32_1B;

/// `--hw NAME`: the accelerator.
#[derive(Debug, Clone, Copy, PartialEq, clap::Args, Serialize)]
pub struct Card {
    /// Accelerator (see --list), e.g. H200, A100, MI300X, or a path to a card of your own
    /// (a TOML file of the same fields: see hw_specs::card_file).
    #[arg(long, value_name = "NAME", default_value = DEFAULT_HW.name, value_parser = parse_hw)]
    #[serde(serialize_with = "accelerator_name")]
    pub hw: Accelerator,
}

/// `--target NAME`: the model served.
#[derive(Debug, Clone, Copy, PartialEq, clap::Args, Serialize)]
pub struct Target {
    /// Target model (see --list), e.g. Llama-3.1-70B, or a path to a Hugging Face config.json.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_TARGET.name, value_parser = parse_model)]
    #[serde(serialize_with = "model_name")]
    pub target: ModelConfig,
}

/// `--draft NAME`: a draft model.
#[derive(Debug, Clone, Copy, PartialEq, clap::Args, Serialize)]
pub struct DraftModel {
    /// Draft model (see --list), e.g. Llama-3.2-3B, or a path to a Hugging Face config.json.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_DRAFT.name, value_parser = parse_model)]
    #[serde(serialize_with = "model_name")]
    pub draft: ModelConfig,
}

/// A card and a target (`--hw`, `--target`): the inputs of a demo that asks about one model
/// served on one card, as they are (`Demo::new(1, demo1)` with `demo1(out, &TargetOnCard)`).
#[derive(Debug, Clone, Copy, PartialEq, clap::Args, Serialize)]
pub struct TargetOnCard {
    /// `--hw`.
    #[command(flatten)]
    #[serde(flatten)]
    pub card: Card,
    /// `--target`.
    #[command(flatten)]
    #[serde(flatten)]
    pub target: Target,
}

impl lecture_kit::Inputs for TargetOnCard {}

impl TargetOnCard {
    /// The card.
    pub fn hw(&self) -> &Accelerator {
        &self.card.hw
    }

    /// The target model.
    pub fn target(&self) -> &ModelConfig {
        &self.target.target
    }
}

/// `--hw NAME`: an accelerator of the registry, by name or alias, any case; or `PATH`, a
/// card of one's own as a TOML file ([`hw_specs::card_file`]). A value is a path when it
/// looks like one (a `/`, a `\\` or a `.toml` ending), whatever files the
/// current folder holds: a file named `H200` there never hijacks `--hw H200`.
pub fn parse_hw(text: &str) -> Result<Accelerator, String> {
    if let Some(path) = as_path(text, ".toml") {
        lecture_kit::files::note_input(path);
        return match opened(text) {
            Some(file) if file.len() as u64 > hw_specs::card_file::MAX_CARD_BYTES => Err(format!(
                "{}: more than {} bytes, far more than a card file holds",
                path.display(),
                hw_specs::card_file::MAX_CARD_BYTES
            )),
            Some(file) => {
                Accelerator::from_toml(&file).map_err(|e| format!("{}: {e}", path.display()))
            }
            None => Accelerator::from_toml_file(path).map_err(|e| e.to_string()),
        };
    }
    hw_specs::accelerator(text)
        .copied()
        .map_err(|e| with_file_hint(e.to_string(), text))
}

/// `--target NAME`, `--draft NAME`: a model of the registry, any case; or `PATH`, a
/// Hugging Face `config.json`. A value is a path when it looks like one (a
/// `/`, a `\\` or a `.json` ending; a missing file is then an error, never a name),
/// whatever files the current folder holds.
pub fn parse_model(text: &str) -> Result<ModelConfig, String> {
    if let Some(path) = as_path(text, ".json") {
        lecture_kit::files::note_input(path);
        let model = match opened(text) {
            Some(file) => ModelConfig::from_hf_config_at(path, &file),
            None => ModelConfig::from_hf_config_file(path),
        };
        return model.map_err(|e| e.to_string());
    }
    llm_math::model(text)
        .copied()
        .map_err(|e| with_file_hint(e.to_string(), text))
}

std::thread_local! {
    /// Files a browser page opened with its file picker, by the path it names them: the
    /// page has no file system, and its reader picks the file instead of typing its path.
    static OPENED: std::cell::RefCell<Vec<(String, String)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Makes `text` the contents of the file `path` for [`parse_hw`] and [`parse_model`] on
/// this thread (a browser page's file picker; the command line never calls it), in place
/// of any earlier text under that path.
pub fn open_file(path: &str, text: String) {
    OPENED.with_borrow_mut(|files| {
        files.retain(|(p, _)| p != path);
        files.push((path.to_string(), text));
    });
}

/// Forgets the file [`open_file`] gave under `path`.
pub fn close_file(path: &str) {
    OPENED.with_borrow_mut(|files| files.retain(|(p, _)| p != path));
}

fn opened(path: &str) -> Option<String> {
    OPENED.with_borrow(|files| {
        files
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, t)| t.clone())
    })
}

/// `text` as a path when it looks like one: it holds a `/` or a `\\`, or ends with
/// `extension`. Nothing else is: the current folder's files are not asked, so a name means
/// the same in every folder (write `./NAME` for a file without the ending), and a
/// mistyped path is an error about the file, never a name.
fn as_path<'a>(text: &'a str, extension: &str) -> Option<&'a std::path::Path> {
    let looks_like_one = text.contains(['/', '\\']) || text.ends_with(extension);
    looks_like_one.then_some(std::path::Path::new(text))
}

/// An unknown name's error, with how to read the file of that name when there is one.
fn with_file_hint(error: String, text: &str) -> String {
    if std::path::Path::new(text).is_file() {
        format!("{error} (a file of that name is here: write ./{text} to read it)")
    } else {
        error
    }
}

/// A card in the JSON export's setup: its name.
fn accelerator_name<S: serde::Serializer>(a: &Accelerator, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(a.name)
}

/// A model in the JSON export's setup: its name.
fn model_name<S: serde::Serializer>(m: &ModelConfig, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(m.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lecture_kit::inputs::parse;

    #[derive(Debug, Clone, PartialEq, clap::Args, Serialize)]
    struct Models {
        #[command(flatten)]
        #[serde(flatten)]
        card: Card,
        #[command(flatten)]
        #[serde(flatten)]
        target: Target,
        #[command(flatten)]
        #[serde(flatten)]
        draft: DraftModel,
    }

    impl lecture_kit::Inputs for Models {}

    fn models(args: &[&str]) -> Result<Models, String> {
        parse(args).map_err(|e| e.to_string())
    }

    #[test]
    fn no_flag_parses_to_the_default_and_the_default_is_lecture_6s_script() {
        let m = models(&[]).unwrap();
        assert_eq!(
            (m.card.hw.name, m.target.target.name, m.draft.draft.name),
            ("H100", "Llama-3.1-8B", "Llama-3.2-1B")
        );
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"hw": "H100", "target": "Llama-3.1-8B", "draft": "Llama-3.2-1B"})
        );
    }

    #[test]
    fn cards_and_models_are_found_by_name_or_alias_in_any_case() {
        let m = models(&["--hw", "mi300x", "--target", "llama-3.1-70b"]).unwrap();
        assert_eq!(
            (m.card.hw, m.target.target),
            (
                *hw_specs::accelerator("MI300X").unwrap(),
                *llm_math::model("Llama-3.1-70B").unwrap()
            )
        );
        assert_eq!(
            models(&["--hw", "H100-SXM5"]).unwrap().card.hw,
            hw_specs::H100
        );
        let e = models(&["--hw", "MI300"]).unwrap_err();
        assert!(
            e.contains("unknown accelerator") && e.contains("the closest: MI300X"),
            "{e}"
        );
        assert!(models(&["--draft", "GPT-5"]).is_err());
    }
}
