//! The models this crate ships, each as a recipe: its shape, its initialisation seed, its
//! schedule and optimiser, and the file it is shipped in. `cargo xtask train NAME` runs a
//! recipe on the corpus ([`crate::corpus`]) and writes the file.

use transformer_lab::{Config, QCFG};

use crate::adamw::AdamW;
use crate::train::Schedule;

/// Held-out windows of `max_seq + 1` bytes that a shipped model's test measures again (the
/// first ones of the held-out bytes, so the test takes seconds); the whole held-out
/// figure is measured once, when the model is trained.
pub const TEST_WINDOWS: usize = 24;

/// A model to train.
#[derive(Debug, Clone, PartialEq)]
pub struct Recipe {
    /// `target`, `draft`.
    pub name: &'static str,
    /// What it is for.
    pub about: &'static str,
    /// Its shape.
    pub cfg: Config,
    /// `transformer_lab::init_params`'s seed.
    pub init_seed: u64,
    /// Steps, batch, windows' seed.
    pub schedule: Schedule,
    /// AdamW's settings.
    pub opt: AdamW,
    /// The shipped file, relative to this crate's folder.
    pub file: &'static str,
}

/// Windows of the model's whole context; 16 sequences a step in 8 micro-batches of 2, so
/// two threads (or eight) share every step's work.
fn schedule(steps: usize, seed: u64) -> Schedule {
    Schedule {
        steps,
        batch: 16,
        micro: 2,
        seq: QCFG.max_seq,
        warmup: steps / 20,
        floor: 0.1,
        seed,
        exits: Vec::new(),
    }
}

/// The target: the toy model of lecture 6, `QCFG` (4 blocks, d = 128, 0.92 M parameters).
pub fn target() -> Recipe {
    Recipe {
        name: "target",
        about: "the toy model of lecture 6 (QCFG), trained on the corpus",
        cfg: QCFG,
        init_seed: 0,
        schedule: schedule(2000, 1),
        opt: AdamW {
            lr: 3e-3,
            ..AdamW::SMALL
        },
        file: "data/target.safetensors",
    }
}

/// The draft: a smaller model of the same vocabulary and context (2 blocks, d = 64,
/// 0.14 M parameters), trained on the same corpus from its own seed.
pub fn draft() -> Recipe {
    Recipe {
        name: "draft",
        about: "a smaller model (2 blocks, d_model 64) trained on the same corpus",
        cfg: Config {
            d_model: 64,
            n_layers: 2,
            n_heads: 2,
            d_ff: 192,
            ..QCFG
        },
        init_seed: 1,
        schedule: schedule(2000, 2),
        opt: AdamW {
            lr: 5e-3,
            ..AdamW::SMALL
        },
        file: "data/draft.safetensors",
    }
}

/// The draft distilled: [`draft`]'s shape, seed, windows and steps, trained on the shipped
/// target's next-byte distributions instead of the corpus's next bytes.
pub fn distilled() -> Recipe {
    Recipe {
        name: "distilled",
        about: "the draft's shape trained on the target's distributions (distillation)",
        file: "data/distilled.safetensors",
        ..draft()
    }
}

/// LayerSkip's target (Elhoushi et al. 2024, §4.2's early-exit loss, without its layer
/// dropout or curriculum): `QCFG` trained with the final norm and LM head read after every
/// block, the earlier exits weighted 0.25 each beside the last one's 1, so that its first
/// k blocks are a draft of the whole.
pub fn layerskip() -> Recipe {
    Recipe {
        name: "layerskip",
        about: "QCFG trained with early-exit losses after blocks 1, 2 and 3 (LayerSkip)",
        schedule: Schedule {
            exits: vec![(1, 0.25), (2, 0.25), (3, 0.25), (4, 1.0)],
            ..schedule(2000, 3)
        },
        file: "data/layerskip.safetensors",
        ..target()
    }
}

/// Medusa's heads on the shipped target ([`crate::medusa`]): how many.
pub const MEDUSA_HEADS: usize = 4;

/// Medusa's heads (Cai et al. 2024, Medusa-1): [`MEDUSA_HEADS`] heads trained on the
/// shipped target, frozen, read after its last block; `cfg` is the target's shape. AdamW
/// at the target's peak learning rate (Medusa's 1e-3 is for heads on a 7B model) without
/// weight decay (each head's LM head starts as the target's, which decay would only
/// shrink).
pub fn medusa() -> Recipe {
    Recipe {
        name: "medusa",
        about: "4 Medusa heads on the shipped target (frozen), each a residual block and an LM head",
        cfg: QCFG,
        init_seed: 0,
        schedule: schedule(2000, 5),
        opt: AdamW {
            lr: 3e-3,
            weight_decay: 0.0,
            ..AdamW::SMALL
        },
        file: "data/medusa.safetensors",
    }
}

/// EAGLE's draft head (Li et al. 2024, EAGLE-1; [`crate::eagle`]) on the shipped target,
/// frozen: one block of the target's shape, its fusion layer and final norm, from
/// `init_seed`; windows of `max_seq − 1` positions (the target reads one more); `cfg` is
/// the target's shape.
pub fn eagle() -> Recipe {
    Recipe {
        name: "eagle",
        about: "EAGLE's draft head on the shipped target (frozen): a fusion layer, one block, a norm",
        cfg: QCFG,
        init_seed: 6,
        schedule: Schedule {
            seq: QCFG.max_seq - 1,
            ..schedule(2000, 6)
        },
        opt: AdamW {
            lr: 3e-3,
            ..AdamW::SMALL
        },
        file: "data/eagle.safetensors",
    }
}

/// Held-out windows of `max_seq` bytes on which a draft's agreement with its target is
/// measured (the first ones of the held-out bytes): 24 × 128 = 3 072 positions.
pub const AGREE_WINDOWS: usize = 24;

/// Every recipe of a model, by name ([`medusa`]'s and [`eagle`]'s heads are not models:
/// `cargo xtask train medusa` and `eagle` run them on their own).
pub fn all() -> Vec<Recipe> {
    vec![target(), draft(), distilled(), layerskip()]
}
