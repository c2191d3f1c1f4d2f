//! What the training test files share: a byte-level model small enough to train in a test,
//! and the text it trains on.
#![allow(dead_code)] // each test binary uses some of it

use transformer_lab::Config;

/// A byte-level model small enough to train for a few dozen steps in a test.
pub const SMALL: Config = Config {
    vocab: 256,
    d_model: 32,
    n_layers: 2,
    n_heads: 2,
    d_ff: 64,
    max_seq: 32,
    norm_eps: 1e-5,
    rope_theta: 10000.0,
};

/// Real text, frozen in `data/` so that editing this crate does not change what the tests
/// train on: three of its source files as they once were train, a fourth is held out.
pub const TEXT: &str = include_str!("../data/train.txt");
/// See [`TEXT`].
pub const HELD_OUT: &str = include_str!("../data/held_out.txt");
