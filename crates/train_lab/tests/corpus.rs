//! The corpus and its baselines: the pinned crates read from Cargo's cache (their
//! archives' and both streams' SHA-256s are checked inside `corpus::load`), the split,
//! and the unigram and bigram baselines against values computed by hand.

use train_lab::corpus::{self, HELD_OUT_EVERY, baselines};

#[test]
fn the_corpus_is_over_five_megabytes_and_holds_out_one_file_in_twenty() {
    let home = corpus::cargo_home().expect("a CARGO_HOME or HOME");
    let c = corpus::load(&home).unwrap();
    let total = c.train.len() + c.held_out.len();
    assert!(total >= 5_000_000, "{total} bytes");
    // Files 0, 20, 40, …: ⌈files / 20⌉ of them, about a twentieth of the bytes.
    assert_eq!(c.files, 587);
    let share = c.held_out.len() as f64 / total as f64;
    assert!(
        (share - 1.0 / HELD_OUT_EVERY as f64).abs() < 0.03,
        "{share}"
    );
}

#[test]
fn the_baselines_are_laplace_counts() {
    // Training "abab": c(a) = c(b) = 2 of n = 4; pairs ab ×2, ba ×1.
    let (uni, bi) = baselines(b"abab", b"ab");
    let p_a = 3.0f64 / 260.0; // (2 + 1) / (4 + 256)
    let p_b = 3.0f64 / 260.0;
    let want_uni = -(p_a.log2() + p_b.log2()) / 2.0;
    // The first byte by the unigram, then p(b | a) = (2 + 1) / (c(a ·) = 2 + 256).
    let want_bi = -(p_a.log2() + (3.0f64 / 258.0).log2()) / 2.0;
    assert!((uni - want_uni).abs() < 1e-12, "{uni} vs {want_uni}");
    assert!((bi - want_bi).abs() < 1e-12, "{bi} vs {want_bi}");
}
