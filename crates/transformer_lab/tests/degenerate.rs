//! Empty and degenerate inputs are errors: no silent index 0, no NaN, no allocation a
//! mistyped number can make fail.

use ndarray::{Array1, array};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use transformer_lab::ops::rope_tables;
use transformer_lab::{
    Config, Error, MAX_FLOATS, TransformerLM, argmax, draw_weighted, init_params,
    sample_categorical, sample_tokens_from, softmax_probs,
};

mod common;
use common::SMALL;

/// The next draw of a generator, to check that an error consumed nothing from it.
fn next(rng: &ChaCha8Rng) -> f64 {
    rng.clone().random::<f64>()
}

#[test]
fn argmax_of_an_empty_row_or_one_holding_nan_is_an_error() {
    let empty = Array1::<f32>::zeros(0);
    assert!(matches!(argmax(empty.view()), Err(Error::Shape(m)) if m.contains("empty")));
    let nans = array![f32::NAN, f32::NAN];
    assert!(matches!(argmax(nans.view()), Err(Error::Shape(m)) if m.contains("NaN")));
    // A NaN anywhere: the logits are broken, and no token is the right one.
    for row in [
        array![f32::NAN, -5.0, f32::NAN],
        array![1.0f32, 3.0, f32::NAN, 3.0],
    ] {
        assert!(matches!(argmax(row.view()), Err(Error::Shape(m)) if m.contains("NaN")));
    }
    // Ties go to the lowest index.
    assert_eq!(argmax(array![1.0f32, 3.0, 3.0].view()), Ok(1));
    assert_eq!(argmax(array![f32::NEG_INFINITY].view()), Ok(0));
}

#[test]
fn draw_weighted_refuses_weights_it_cannot_draw_from_and_draws_nothing_then() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let before = next(&rng);
    let bad: [&[f64]; 7] = [
        &[],
        &[0.0, 0.0],
        &[1.0, -0.5],
        &[1.0, f64::NAN],
        &[1.0, f64::INFINITY],
        &[f64::MAX, f64::MAX], // the sum overflows
        &[-0.0, -1.0],
    ];
    for w in bad {
        assert!(
            matches!(draw_weighted(w, &mut rng), Err(Error::Shape(_))),
            "{w:?}"
        );
    }
    assert_eq!(next(&rng), before, "an error draws nothing");
    // Valid weights: the draw walks the cumulative sum of one uniform number (hand
    // check: with u the next uniform, weights 1, 3 give index 0 iff 4u < 1).
    let u = next(&rng);
    let got = draw_weighted(&[1.0, 3.0], &mut rng).unwrap();
    assert_eq!(got, usize::from(4.0 * u >= 1.0), "u = {u}");
    assert_eq!(draw_weighted(&[0.0, 0.0, 2.0], &mut rng), Ok(2));
}

#[test]
fn softmax_at_temperature_zero_is_greedy_and_bad_temperatures_are_errors() {
    let logits = array![0.5f32, 2.0, 2.0, -1.0];
    // T = 0 is greedy, as everywhere in the crate: weight 1 on the argmax (ties to the
    // lowest id), 0 elsewhere — and sample_categorical at T = 0 picks the same token.
    let greedy = softmax_probs(logits.view(), 0.0).unwrap();
    assert_eq!(greedy, vec![0.0, 1.0, 0.0, 0.0]);
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let before = next(&rng);
    assert_eq!(sample_categorical(logits.view(), 0.0, &mut rng), Ok(1));
    assert_eq!(next(&rng), before, "greedy draws nothing");
    assert_eq!(draw_weighted(&greedy, &mut rng), Ok(1));
    // With a unique maximum, T = 0 is the limit of T → 0⁺.
    let unique = array![0.5f32, 2.0, 1.9, -1.0];
    let cold = softmax_probs(unique.view(), 1e-3).unwrap();
    let zero = softmax_probs(unique.view(), 0.0).unwrap();
    for (c, z) in cold.iter().zip(&zero) {
        assert!((c - z).abs() < 1e-40, "{cold:?} vs {zero:?}");
    }
    for t in [-1.0, -1e-300, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(
            matches!(softmax_probs(logits.view(), t), Err(Error::Temperature(_))),
            "T = {t}"
        );
        assert!(matches!(
            sample_categorical(logits.view(), t, &mut rng),
            Err(Error::Temperature(_))
        ));
    }
}

#[test]
fn softmax_of_logits_with_no_finite_maximum_is_an_error_not_nan() {
    let empty = Array1::<f32>::zeros(0);
    assert!(softmax_probs(empty.view(), 1.0).is_err());
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    assert!(sample_categorical(empty.view(), 1.0, &mut rng).is_err());
    for bad in [
        array![0.0f32, f32::NAN],
        array![0.0f32, f32::INFINITY],
        array![f32::NEG_INFINITY, f32::NEG_INFINITY],
    ] {
        for t in [0.0, 1.0] {
            assert!(softmax_probs(bad.view(), t).is_err(), "{bad} at T = {t}");
        }
        assert!(
            sample_categorical(bad.view(), 1.0, &mut rng).is_err(),
            "{bad}"
        );
    }
    // A −∞ logit beside finite ones is a masked token: weight 0, never drawn.
    let masked = softmax_probs(array![0.0f32, f32::NEG_INFINITY].view(), 1.0).unwrap();
    assert_eq!(masked, vec![1.0, 0.0]);
}

#[test]
fn sizes_that_would_allocate_past_the_limit_are_errors_that_name_it() {
    let p = init_params(&SMALL, 0).unwrap();
    let m = TransformerLM::new(&p, SMALL, "m").unwrap();
    // A cache of 2 · 2 layers · 32 wide = 128 floats per slot and sequence.
    let per_slot = 2 * SMALL.n_layers * SMALL.d_model;
    for (batch, capacity) in [
        (1, usize::MAX),
        (usize::MAX, 1),
        (1, MAX_FLOATS / per_slot + 1),
        (1 << 20, 1 << 20),
    ] {
        let e = m.new_cache(batch, capacity).unwrap_err();
        assert!(e.to_string().contains("MAX_FLOATS"), "{e}");
    }
    assert!(m.new_cache(0, 4).is_err());

    // Configs whose weights or RoPE tables would pass the limit (or overflow counting).
    for cfg in [
        Config {
            vocab: 1 << 40,
            ..SMALL
        },
        Config {
            d_model: 1 << 33,
            n_heads: 1,
            ..SMALL
        },
        Config {
            n_layers: usize::MAX,
            ..SMALL
        },
        Config {
            max_seq: MAX_FLOATS,
            ..SMALL
        },
    ] {
        let e = cfg.validate().unwrap_err();
        assert!(e.to_string().contains("MAX_FLOATS"), "{e}");
        assert!(init_params(&cfg, 0).is_err());
    }
    for (max_seq, head_dim) in [(usize::MAX, 8), (MAX_FLOATS / 8 + 1, 8)] {
        let e = rope_tables(max_seq, head_dim, 10000.0).unwrap_err();
        assert!(e.to_string().contains("MAX_FLOATS"), "{e}");
    }
    assert!(rope_tables(8, 3, 10000.0).is_err());
    assert!(rope_tables(8, 0, 10000.0).is_err());
    assert!(rope_tables(8, 4, 1.0).is_err());
    assert!(rope_tables(8, 4, f32::NAN).is_err());

    // Sampled data: too many sequences or too long ones are refused before anything
    // is allocated.
    for (n_seq, length) in [(usize::MAX, 8), (MAX_FLOATS, 8), (2, 25)] {
        assert!(
            sample_tokens_from(&m, n_seq, length, 0).is_err(),
            "{n_seq} × {length}"
        );
    }
    assert_eq!(sample_tokens_from(&m, 3, 24, 0).unwrap().dim(), (3, 24));
}
