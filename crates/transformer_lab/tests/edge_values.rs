//! Every public function of `transformer_lab` on shapes and inputs holding anything (sizes
//! of 0 or `usize::MAX`, token arrays of no token or ids past the vocabulary, logits with
//! NaN and ±∞): no panic, and what returns `Ok` is finite. Models are kept tiny so that
//! thousands of cases run in seconds.

use ndarray::{Array1, Array2};
use proptest::prelude::*;
use rand::SeedableRng;
use transformer_lab::ops::softmax_checked;
use transformer_lab::{
    Config, TransformerLM, argmax, autoregressive_generate, greedy_generate, init_params,
    reference, sample_tokens,
};

fn size() -> impl Strategy<Value = usize> {
    prop_oneof![
        4 => 1usize..9,
        1 => Just(0),
        1 => Just(usize::MAX),
        1 => Just(1 << 40),
        1 => any::<usize>(),
    ]
}

fn real() -> impl Strategy<Value = f32> {
    prop_oneof![
        4 => 1e-6f32..1e4,
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => Just(0.0),
        1 => Just(-1.0),
    ]
}

/// A configuration of tiny sizes three times in four; any sizes otherwise.
fn config() -> impl Strategy<Value = Config> {
    (
        size(),
        size(),
        size(),
        size(),
        size(),
        size(),
        real(),
        real(),
    )
        .prop_map(
            |(vocab, d, layers, heads, d_ff, max_seq, eps, theta)| Config {
                vocab,
                d_model: 2 * d.min(usize::MAX / 2),
                n_layers: layers,
                n_heads: heads,
                d_ff,
                max_seq,
                norm_eps: eps,
                rope_theta: theta * 1e3,
            },
        )
}

/// A tiny configuration that validates, for the passes.
fn tiny_config() -> impl Strategy<Value = Config> {
    (
        1usize..12,
        1usize..3,
        1usize..3,
        1usize..3,
        1usize..12,
        1usize..8,
    )
        .prop_map(|(vocab, heads, half_head, layers, d_ff, max_seq)| Config {
            vocab,
            d_model: heads * 2 * half_head,
            n_layers: layers,
            n_heads: heads,
            d_ff,
            max_seq,
            norm_eps: 1e-5,
            rope_theta: 10_000.0,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn a_shape_is_refused_or_counted(cfg in config(), b in size(), c in size(), n in size()) {
        let _ = cfg.validate();
        let _ = cfg.n_params();
        let flops = cfg.forward_flops(b, c, n);
        prop_assert!(flops.is_finite() && flops >= 0.0, "{flops}");
    }

    #[test]
    fn a_pass_on_any_tokens_is_refused_or_finite(
        cfg in tiny_config(),
        rows in 0usize..3,
        cols in 0usize..6,
        tokens in prop::collection::vec(prop_oneof![0u32..8, Just(u32::MAX)], 1..18),
    ) {
        cfg.validate().unwrap();
        let p = init_params(&cfg, 0).unwrap();
        let model = TransformerLM::new(&p, cfg, "probe").unwrap();
        let ids: Vec<u32> = tokens.iter().cycle().take(rows * cols).copied().collect();
        let ids = Array2::from_shape_vec((rows, cols), ids).unwrap();
        if let Ok(l) = model.full_logits(ids.view()) {
            prop_assert!(l.iter().all(|x| x.is_finite()));
        }
        if let Ok(l) = reference::full_logits(&p, &cfg, ids.view()) {
            prop_assert!(l.iter().all(|x| x.is_finite()));
        }
        if let Ok((mut cache, l)) = model.prefill(ids.view()) {
            prop_assert!(l.iter().all(|x| x.is_finite()));
            let next: Array1<u32> = Array1::from_elem(rows, tokens.first().copied().unwrap_or(0));
            if let Ok(l) = model.step(&mut cache, next.view()) {
                prop_assert!(l.iter().all(|x| x.is_finite()));
            }
            let empty = Array2::<u32>::zeros((rows, 0));
            prop_assert!(model.extend(&mut cache, empty.view()).is_err());
        }
        let _ = model.new_cache(rows, cols);
    }

    #[test]
    fn argmax_and_softmax_refuse_what_has_no_answer(
        row in prop::collection::vec(
            prop_oneof![Just(f32::NAN), Just(f32::INFINITY), Just(f32::NEG_INFINITY), -8.0f32..8.0],
            0..12,
        ),
    ) {
        match argmax(Array1::from(row.clone()).view()) {
            Ok(i) => {
                prop_assert!(row.iter().all(|v| !v.is_nan()));
                prop_assert!(row.iter().all(|&v| v <= row[i]));
            }
            Err(_) => prop_assert!(row.is_empty() || row.iter().any(|v| v.is_nan())),
        }
        let mut x = row.clone();
        if softmax_checked(&mut x).is_ok() {
            prop_assert!(x.iter().all(|p| p.is_finite() && *p >= 0.0));
            let sum: f32 = x.iter().sum();
            prop_assert!((sum - 1.0).abs() < 1e-4, "{sum}");
        }
    }

    #[test]
    fn generation_and_sampling_are_refused_or_in_the_vocabulary(
        cfg in tiny_config(),
        rows in 0usize..3,
        cols in 0usize..5,
        n_new in prop_oneof![0usize..6, Just(usize::MAX)],
        temperature in prop_oneof![Just(0.0), Just(1.0), Just(f64::NAN), Just(-1.0), Just(f64::INFINITY), 0.0f64..3.0],
        n_seq in prop_oneof![0usize..4, Just(usize::MAX)],
        length in prop_oneof![0usize..9, Just(usize::MAX)],
        slots in prop::collection::vec(0usize..12, 0..4),
    ) {
        let p = init_params(&cfg, 1).unwrap();
        let model = TransformerLM::new(&p, cfg, "probe").unwrap();
        let prompts = Array2::<u32>::zeros((rows, cols));
        let in_vocab = |a: &Array2<u32>| a.iter().all(|&t| (t as usize) < cfg.vocab);
        if let Ok(out) = greedy_generate(&model, prompts.view(), n_new) {
            prop_assert!(in_vocab(&out) && out.dim() == (rows, n_new));
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        if let Ok(out) = autoregressive_generate(&model, prompts.view(), n_new, temperature, &mut rng) {
            prop_assert!(in_vocab(&out) && temperature.is_finite() && temperature >= 0.0);
        }
        if let Ok(s) = sample_tokens(&p, &cfg, n_seq, length, 3) {
            prop_assert!(in_vocab(&s) && s.dim() == (n_seq, length));
        }
        // A cache's rollback on any slots: refused or kept within the cache.
        if let Ok((mut cache, _)) = model.prefill(Array2::<u32>::zeros((1, cfg.max_seq.min(4))).view()) {
            let before = cache.len();
            if cache.keep(1, &slots).is_ok() {
                prop_assert!(cache.len() <= before);
            }
        }
    }
}
