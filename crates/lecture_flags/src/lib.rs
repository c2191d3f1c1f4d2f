//! The course's shared command-line flags: "on which card, with which models?" — the flag
//! group [`ModelArgs`] (`--hw`, `--target`, `--draft`), the value parsers that look cards and
//! models up by name ([`parse_hw`], [`parse_model`]), and what `--list` shows of them
//! ([`catalog`]).
//!
//! The defaults are the libraries' constants ([`DEFAULT_HW`], [`DEFAULT_TARGET`],
//! [`DEFAULT_DRAFT`]: the H100, Llama-3.1-8B and Llama-3.2-1B of lecture 6's script), never
//! names typed again. [`ModelArgs`] is also a setup of named inputs ([`lecture_kit::Inputs`]):
//! a lecture whose demos need only a card and models registers its demos on it directly, and
//! a demo that does not declare `--draft` provably ignores it.
//!
//! ```
//! use clap::Parser;
//! use lecture_flags::ModelArgs;
//!
//! #[derive(Parser)]
//! struct Cli {
//!     #[command(flatten)]
//!     models: ModelArgs,
//! }
//!
//! let cli = Cli::try_parse_from(["lecture", "--hw", "h200"]).unwrap();
//! assert_eq!(cli.models.hw.name, "H200");
//! assert_eq!(cli.models.target, llm_math::LLAMA31_8B);
//! ```

mod catalog;
pub mod chrome;

pub use catalog::catalog;

use hw_specs::Accelerator;
use lecture_kit::Inputs;
use llm_math::ModelConfig;

/// The default accelerator: one H100 (lecture 6's script).
pub const DEFAULT_HW: Accelerator = hw_specs::H100;
/// The default target model: Llama-3.1-8B.
pub const DEFAULT_TARGET: ModelConfig = llm_math::LLAMA31_8B;
/// The default draft model: Llama-3.2-1B.
pub const DEFAULT_DRAFT: ModelConfig = llm_math::LLAMA32_1B;

/// "On which card, with which models?": the registry flags, with the course's defaults.
#[derive(Debug, Clone, Copy, PartialEq, clap::Args)]
pub struct ModelArgs {
    /// Accelerator (see --list), e.g. H200, A100, MI300X.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_HW.name, value_parser = parse_hw)]
    pub hw: Accelerator,
    /// Target model (see --list), e.g. Llama-3.1-70B.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_TARGET.name, value_parser = parse_model)]
    pub target: ModelConfig,
    /// Draft model (see --list), e.g. Llama-3.2-3B.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_DRAFT.name, value_parser = parse_model)]
    pub draft: ModelConfig,
}

impl Default for ModelArgs {
    /// What no flag means: [`DEFAULT_HW`], [`DEFAULT_TARGET`], [`DEFAULT_DRAFT`].
    fn default() -> Self {
        ModelArgs {
            hw: DEFAULT_HW,
            target: DEFAULT_TARGET,
            draft: DEFAULT_DRAFT,
        }
    }
}

/// `--hw NAME`: an accelerator of the registry, by name or alias, any case.
pub fn parse_hw(name: &str) -> Result<Accelerator, String> {
    hw_specs::accelerator(name)
        .copied()
        .map_err(|e| e.to_string())
}

/// `--target NAME`, `--draft NAME`: a model of the registry, any case.
pub fn parse_model(name: &str) -> Result<ModelConfig, String> {
    llm_math::model(name).copied().map_err(|e| e.to_string())
}

/// The inputs of [`ModelArgs`], one per flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelInput {
    /// `--hw`.
    Hw,
    /// `--target`.
    Target,
    /// `--draft`.
    Draft,
}

impl Inputs for ModelArgs {
    type Input = ModelInput;
    const INPUTS: &'static [ModelInput] = &[ModelInput::Hw, ModelInput::Target, ModelInput::Draft];

    fn flags(input: ModelInput) -> &'static [&'static str] {
        match input {
            ModelInput::Hw => &["--hw"],
            ModelInput::Target => &["--target"],
            ModelInput::Draft => &["--draft"],
        }
    }

    fn same(&self, other: &Self, input: ModelInput) -> bool {
        match input {
            ModelInput::Hw => self.hw == other.hw,
            ModelInput::Target => self.target == other.target,
            ModelInput::Draft => self.draft == other.draft,
        }
    }

    fn take(&mut self, input: ModelInput, from: &Self) {
        match input {
            ModelInput::Hw => self.hw = from.hw,
            ModelInput::Target => self.target = from.target,
            ModelInput::Draft => self.draft = from.draft,
        }
    }

    /// `【此条针对默认配置：一块 H100、Llama-3.1-8B + Llama-3.2-1B】` before the sentence.
    fn default_only(sentence: &str) -> String {
        let (hw, target, draft) = (DEFAULT_HW.name, DEFAULT_TARGET.name, DEFAULT_DRAFT.name);
        chrome::default_only(hw, target, draft, sentence)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        models: ModelArgs,
    }

    fn parse(args: &[&str]) -> Result<ModelArgs, String> {
        let argv = std::iter::once("lecture").chain(args.iter().copied());
        Cli::try_parse_from(argv)
            .map(|c| c.models)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn no_flag_parses_to_the_default_and_the_default_is_lecture_6s_script() {
        assert_eq!(parse(&[]).unwrap(), ModelArgs::default());
        assert_eq!(
            (DEFAULT_HW.name, DEFAULT_TARGET.name, DEFAULT_DRAFT.name),
            ("H100", "Llama-3.1-8B", "Llama-3.2-1B")
        );
    }

    #[test]
    fn cards_and_models_are_found_by_name_or_alias_in_any_case() {
        let m = parse(&["--hw", "mi300x", "--target", "llama-3.1-70b"]).unwrap();
        assert_eq!((m.hw, m.target), (hw_specs::MI300X, llm_math::LLAMA31_70B));
        assert_eq!(parse(&["--hw", "H100-SXM5"]).unwrap().hw, hw_specs::H100);
        let e = parse(&["--hw", "TPU"]).unwrap_err();
        assert!(
            e.contains("unknown accelerator") && e.contains("MI300X"),
            "{e}"
        );
        assert!(parse(&["--draft", "GPT-5"]).is_err());
    }

    #[test]
    fn a_changed_flag_is_a_changed_input_and_the_view_resets_the_others() {
        let m = parse(&["--hw", "H200", "--draft", "Llama-3.2-3B"]).unwrap();
        assert_eq!(m.changed(), [ModelInput::Hw, ModelInput::Draft]);
        let view = m.view(&[ModelInput::Hw, ModelInput::Target]);
        assert_eq!(view.hw, hw_specs::H200);
        assert_eq!(
            view.draft, DEFAULT_DRAFT,
            "an undeclared input is the default's"
        );
        assert_eq!(m.unread_flags(&[ModelInput::Hw]), ["--draft"]);
        assert!(ModelArgs::default().changed().is_empty());
    }
}
