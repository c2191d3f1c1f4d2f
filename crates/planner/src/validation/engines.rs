//! The serving engines a measurement names ([`ENGINES`]), as `--engine` takes them.

use crate::Error;

/// The serving engines a measurement names, as `--engine` takes them. `other` is a research
/// engine or one named only once (its rows are pooled, never refitted).
pub const ENGINES: &[&str] = &[
    "vllm",
    "sglang",
    "tensorrt-llm",
    "tgi",
    "lmdeploy",
    "gpt-fast",
    "mlc-llm",
    "deepspeed-mii",
    "lightllm",
    "autoawq",
    "tinychat",
    "transformers",
    "optimum-habana",
    "other",
];

/// `name` as one of [`ENGINES`] (any case).
///
/// Errors: an unknown engine, with the list.
pub fn engine_name(name: &str) -> Result<&'static str, Error> {
    ENGINES
        .iter()
        .copied()
        .find(|e| e.eq_ignore_ascii_case(name.trim()))
        .ok_or_else(|| {
            Error::Argument(format!(
                "unknown engine \"{name}\"; choose one of: {}",
                ENGINES.join(", ")
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_are_found_by_name_and_an_unknown_one_is_refused_with_the_list() {
        assert_eq!(engine_name("vLLM").unwrap(), "vllm");
        let e = engine_name("magic").unwrap_err().to_string();
        assert!(e.contains("vllm, sglang, tensorrt-llm"), "{e}");
    }
}
