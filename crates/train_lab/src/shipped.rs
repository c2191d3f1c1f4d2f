//! The trained models as a program gets them: the files `cargo xtask train` wrote under
//! `data/`, compiled in, and the held-out prompts acceptance is measured on.
//!
//! Compiled in rather than read from disk, so a binary built from this workspace carries
//! the models it was built with wherever it runs; not in a WebAssembly build (lecture 6's
//! page), which they would make 8.5 MB heavier: there each function refuses.

use ndarray::Array2;

use crate::Error;
use crate::accept::{N_SEQ, PROMPT_LEN};
use crate::checkpoint::{
    Checkpoint, EagleCheckpoint, HeadsCheckpoint, eagle_from_bytes, from_bytes, heads_from_bytes,
};

/// `data/target.safetensors`: the trained target, `QCFG`'s shape ([`crate::recipe::target`]).
#[cfg(not(target_arch = "wasm32"))]
pub const TARGET: &[u8] = include_bytes!("../data/target.safetensors");
/// `data/draft.safetensors`: the draft trained on the text ([`crate::recipe::draft`]).
#[cfg(not(target_arch = "wasm32"))]
pub const DRAFT: &[u8] = include_bytes!("../data/draft.safetensors");
/// `data/distilled.safetensors`: the draft distilled on the target's distributions
/// ([`crate::recipe::distilled`]).
#[cfg(not(target_arch = "wasm32"))]
pub const DISTILLED: &[u8] = include_bytes!("../data/distilled.safetensors");
/// `data/layerskip.safetensors`: the target trained with early exits after every block
/// ([`crate::recipe::layerskip`]).
#[cfg(not(target_arch = "wasm32"))]
pub const LAYERSKIP: &[u8] = include_bytes!("../data/layerskip.safetensors");
/// `data/medusa.safetensors`: Medusa's heads on the trained target ([`crate::recipe::medusa`]).
#[cfg(not(target_arch = "wasm32"))]
pub const MEDUSA: &[u8] = include_bytes!("../data/medusa.safetensors");
/// `data/eagle.safetensors`: EAGLE's head on the trained target ([`crate::recipe::eagle`]).
#[cfg(not(target_arch = "wasm32"))]
pub const EAGLE: &[u8] = include_bytes!("../data/eagle.safetensors");
/// `data/prompts.bin`: the [`N_SEQ`] prompts of [`PROMPT_LEN`] bytes that
/// [`crate::accept::prompts`] takes from the held-out bytes, one after the other (written by
/// `cargo xtask train prompts`; `tests/shipped.rs` takes them from the corpus again).
pub const PROMPTS: &[u8] = include_bytes!("../data/prompts.bin");

/// The shipped models by name, as [`compiled`] finds them.
#[cfg(not(target_arch = "wasm32"))]
const MODELS: [(&str, &[u8]); 4] = [
    ("target", TARGET),
    ("draft", DRAFT),
    ("distilled", DISTILLED),
    ("layerskip", LAYERSKIP),
];
/// None in a WebAssembly build.
#[cfg(target_arch = "wasm32")]
const MODELS: [(&str, &[u8]); 0] = [];
/// The heads shipped, as [`medusa`] finds them.
#[cfg(not(target_arch = "wasm32"))]
const HEADS: [(&str, &[u8]); 2] = [("medusa", MEDUSA), ("eagle", EAGLE)];
/// None in a WebAssembly build.
#[cfg(target_arch = "wasm32")]
const HEADS: [(&str, &[u8]); 0] = [];

/// The trained target.
///
/// Errors: none for the files shipped (a test reads them); a damaged file is named; in
/// a WebAssembly build, always (the models are not in it).
pub fn target() -> Result<Checkpoint, Error> {
    compiled("target")
}

/// The draft trained on the text.
///
/// Errors: as [`target`].
pub fn draft() -> Result<Checkpoint, Error> {
    compiled("draft")
}

/// The draft distilled on the target's distributions.
///
/// Errors: as [`target`].
pub fn distilled() -> Result<Checkpoint, Error> {
    compiled("distilled")
}

/// The target trained with LayerSkip's early-exit loss.
///
/// Errors: as [`target`].
pub fn layerskip() -> Result<Checkpoint, Error> {
    compiled("layerskip")
}

/// Medusa's heads on the trained target.
///
/// Errors: as [`target`].
pub fn medusa() -> Result<HeadsCheckpoint, Error> {
    let bytes = bytes_of(&HEADS, "medusa")?;
    heads_from_bytes(bytes).map_err(|e| Error::File(format!("data/medusa.safetensors: {e}")))
}

/// EAGLE's head on the trained target.
///
/// Errors: as [`target`].
pub fn eagle() -> Result<EagleCheckpoint, Error> {
    let bytes = bytes_of(&HEADS, "eagle")?;
    eagle_from_bytes(bytes).map_err(|e| Error::File(format!("data/eagle.safetensors: {e}")))
}

/// The model `data/{name}.safetensors` compiled in, read.
fn compiled(name: &str) -> Result<Checkpoint, Error> {
    named(name, bytes_of(&MODELS, name)?)
}

/// The bytes of `data/{name}.safetensors` in `table`.
fn bytes_of(table: &[(&str, &'static [u8])], name: &str) -> Result<&'static [u8], Error> {
    match table.iter().find(|(n, _)| *n == name) {
        Some((_, bytes)) => Ok(bytes),
        None => Err(Error::File(format!(
            "data/{name}.safetensors: the trained models are not in the WebAssembly build; \
             run it in a terminal"
        ))),
    }
}

fn named(name: &str, bytes: &[u8]) -> Result<Checkpoint, Error> {
    from_bytes(bytes).map_err(|e| Error::File(format!("data/{name}.safetensors: {e}")))
}

/// The held-out prompts, `[N_SEQ, PROMPT_LEN]`, each byte a token.
///
/// Errors: a `prompts.bin` of another size.
pub fn prompts() -> Result<Array2<u32>, Error> {
    let tokens = PROMPTS.iter().map(|&b| u32::from(b)).collect();
    Array2::from_shape_vec((N_SEQ, PROMPT_LEN), tokens).map_err(|_| {
        Error::Shape(format!(
            "data/prompts.bin holds {} bytes, not {N_SEQ} prompts of {PROMPT_LEN}",
            PROMPTS.len()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_models_read_back_with_the_recipes_shapes() {
        assert_eq!(target().unwrap().cfg, crate::recipe::target().cfg);
        assert_eq!(draft().unwrap().cfg, crate::recipe::draft().cfg);
        assert_eq!(distilled().unwrap().cfg, crate::recipe::distilled().cfg);
        assert_eq!(layerskip().unwrap().cfg, crate::recipe::layerskip().cfg);
        let heads = medusa().unwrap().heads;
        assert_eq!(heads.heads.len(), crate::recipe::MEDUSA_HEADS);
        assert_eq!(heads.dims(), (crate::recipe::medusa().cfg.d_model, 256));
        assert_eq!(eagle().unwrap().cfg, crate::recipe::eagle().cfg);
        assert_eq!(prompts().unwrap().dim(), (N_SEQ, PROMPT_LEN));
    }

    #[test]
    fn a_model_not_shipped_is_named_not_a_panic() {
        let e = compiled("eagle").unwrap_err().to_string();
        assert!(e.starts_with("data/eagle.safetensors: "), "{e}");
    }

    #[test]
    fn damaged_bytes_are_named() {
        let e = named("target", &TARGET[..100]).unwrap_err().to_string();
        assert!(e.starts_with("data/target.safetensors: "), "{e}");
    }
}
