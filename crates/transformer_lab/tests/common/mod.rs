//! What the model's test files share.

use transformer_lab::Config;

/// A model small enough for debug-build tests (two layers, four heads, 24 positions).
pub const SMALL: Config = Config {
    vocab: 64,
    d_model: 32,
    n_layers: 2,
    n_heads: 4,
    d_ff: 48,
    max_seq: 24,
    norm_eps: 1e-5,
    rope_theta: 10000.0,
};
