//! The backward pass against finite differences of the loss itself, in f64, for every
//! weight tensor (train_lab::gradcheck), on a model small enough to check in seconds.

#![allow(clippy::print_stderr)] // the measured figures, for the closing note (--nocapture)

use train_lab::gradcheck::{TOLERANCE, check_gradients};
use transformer_lab::Config;

/// Two blocks, two heads of width 4 (RoPE's pairs), a vocabulary of 11.
const TINY: Config = Config {
    vocab: 11,
    d_model: 8,
    n_layers: 2,
    n_heads: 2,
    d_ff: 12,
    max_seq: 8,
    norm_eps: 1e-5,
    rope_theta: 10000.0,
};

fn assert_all_within(checks: &[train_lab::gradcheck::TensorCheck]) {
    assert_eq!(checks.len(), 1 + 2 * 9 + 2, "every tensor is checked");
    for c in checks {
        assert!(c.entries > 0, "{c:?}");
        assert!(c.worst < TOLERANCE, "{} off by {:e}", c.name, c.worst);
    }
}

#[test]
fn every_tensor_matches_finite_differences() {
    let checks = check_gradients(&TINY, 1, (2, 5), None, false, 24).unwrap();
    for c in &checks {
        eprintln!(
            "{:<18} {:>3} entries, worst relative error {:.1e}",
            c.name, c.entries, c.worst
        );
    }
    assert_all_within(&checks);
}

#[test]
fn early_exits_and_soft_targets_match_finite_differences() {
    let exits = Some(vec![(1, 0.5), (2, 1.0)]);
    let checks = check_gradients(&TINY, 2, (2, 4), exits, true, 12).unwrap();
    assert_all_within(&checks);
}
