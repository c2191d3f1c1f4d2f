//! Every public function of `quant_lab` on schemes and weights holding anything (0 bits, a
//! group of 0 or `usize::MAX`, NaN, ±∞ and ±`f32::MAX` weights): no panic, and what returns
//! `Ok` is finite.

use ndarray::Array2;
use proptest::prelude::*;
use quant_lab::{Scheme, quantize_matrix};

fn weight() -> impl Strategy<Value = f32> {
    prop_oneof![
        6 => -2.0f32..2.0,
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NEG_INFINITY),
        1 => Just(f32::MAX),
        1 => Just(-f32::MAX),
        1 => Just(0.0),
        1 => Just(f32::MIN_POSITIVE),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn a_scheme_is_refused_or_finite(bits in any::<u32>(), group in prop_oneof![0usize..300, Just(usize::MAX)]) {
        let s = Scheme { bits, group };
        match s.bits_per_weight() {
            Ok(b) => prop_assert!(b.is_finite() && b > 0.0 && s.validate().is_ok()),
            Err(_) => prop_assert!(s.validate().is_err()),
        }
        let _ = (s.qmax(), s.qmin(), s.to_string());
        let _ = Scheme::parse(&format!("int{bits}-g{group}"));
    }

    #[test]
    fn quantized_weights_are_refused_or_finite(
        values in prop::collection::vec(weight(), 1..64),
        cols in 1usize..4,
        bits in 2u32..9,
        group in 1usize..5,
    ) {
        let rows = values.len() / cols;
        prop_assume!(rows > 0);
        let w = Array2::from_shape_vec((rows, cols), values[..rows * cols].to_vec()).unwrap();
        if let Ok(q) = quantize_matrix(w.view(), Scheme { bits, group }) {
            prop_assert!(w.iter().all(|v| v.is_finite()));
            prop_assert!(q.iter().all(|v| v.is_finite()), "{w:?} → {q:?}");
        }
    }
}

#[test]
fn an_infinite_weight_is_refused_and_the_largest_finite_one_stays_finite() {
    let s = Scheme { bits: 8, group: 2 };
    let inf = ndarray::array![[f32::INFINITY], [1.0]];
    assert!(
        quantize_matrix(inf.view(), s)
            .unwrap_err()
            .to_string()
            .contains("inf")
    );
    let max = ndarray::array![[f32::MAX], [-f32::MAX]];
    let q = quantize_matrix(max.view(), s).unwrap();
    assert_eq!(q.column(0).to_vec(), [f32::MAX, -f32::MAX]);
}
