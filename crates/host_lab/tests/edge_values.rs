//! host_lab's public functions on sizes and inputs holding anything (a cache of 0 or
//! `u64::MAX` bytes, shapes that overflow, NaN and ±∞ activations): no panic, no hang, and
//! what returns `Ok` is finite.

use host_lab::int4::{Int4Matrix, matmul};
use host_lab::measure::{MIN_STREAM_BYTES, stream_bytes};
use host_lab::scaled::{MAX_LLC_BYTES, scaled_config};
use ndarray::Array2;
use proptest::prelude::*;

fn cache() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(u64::MAX),
        Just(1 << 61),
        Just(MAX_LLC_BYTES),
        Just(MAX_LLC_BYTES + 1),
        1u64..(256 << 20),
        (256u64 << 20)..(1100 << 20),
        any::<u64>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn a_scaled_model_is_refused_or_valid_and_a_stream_never_shrinks(llc in cache()) {
        match scaled_config(llc) {
            Ok(cfg) => {
                prop_assert!(cfg.validate().is_ok());
                let bytes = host_lab::f32_weight_bytes(&cfg);
                // Four caches, or the deepest model that builds, still larger than the cache.
                let deepest = transformer_lab::Config { n_layers: cfg.n_layers + 1, ..cfg }.validate().is_err();
                prop_assert!(bytes >= 4 * llc || (bytes > llc && deepest));
            }
            // 0, beyond the cap, or a cache that holds the deepest model (about 1 GiB).
            Err(_) => prop_assert!(llc == 0 || llc > (1000 << 20)),
        }
        let bytes = stream_bytes(Some(llc));
        prop_assert!(bytes >= MIN_STREAM_BYTES);
        prop_assert!(bytes as u128 >= (8 * u128::from(llc)).min(usize::MAX as u128));
    }

    #[test]
    fn an_int4_product_of_broken_activations_is_refused(
        values in prop::collection::vec(
            prop_oneof![6 => -2.0f32..2.0, 1 => Just(f32::NAN), 1 => Just(f32::INFINITY)],
            64,
        ),
    ) {
        let w = Array2::from_shape_fn((64, 2), |(r, c)| ((r * 3 + c) % 7) as f32 * 0.1 - 0.3);
        let q = Int4Matrix::quantize(&[w.view()]).unwrap();
        let a = Array2::from_shape_vec((1, 64), values.clone()).unwrap();
        let mut out = Array2::zeros((1, 2));
        match matmul(a.view(), &q, out.view_mut()) {
            Ok(()) => {
                prop_assert!(values.iter().all(|v| v.is_finite()));
                prop_assert!(out.iter().all(|v| v.is_finite()));
            }
            Err(e) => prop_assert!(e.to_string().contains("activation"), "{e}"),
        }
    }
}
