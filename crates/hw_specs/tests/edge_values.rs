//! Every public function of `hw_specs` on cards holding anything (NaN, ±∞, 0, negative,
//! `f64::MAX`): no panic, and whatever validates gives finite figures.

use hw_specs::arbitrary::accelerator;
use hw_specs::{accelerator as by_name, normalize};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn a_card_that_validates_has_finite_positive_figures(a in accelerator(), n in 0u64..1000) {
        match a.validate() {
            Ok(()) => {
                prop_assert!(a.ridge_point().is_finite() && a.ridge_point() > 0.0);
                prop_assert!(a.peak_flops_fp8_or_bf16().is_finite());
                prop_assert!(a.peak_ops_int8_or_bf16().is_finite() && a.peak_ops_int8_or_bf16() >= 1.0);
                prop_assert!(a.peak_flops_fp4_or_fp8().is_finite() && a.peak_flops_fp4_or_fp8() >= 1.0);
                let bw = a.interconnect.all_reduce_bandwidth(n);
                prop_assert!(bw.is_finite() && bw >= 0.0);
                prop_assert!(a.interconnect.bidirectional().is_finite());
            }
            Err(e) => prop_assert!(e.to_string().starts_with("probe: ")),
        }
    }

    #[test]
    fn any_name_is_looked_up_without_panicking(name in ".{0,40}") {
        let _ = normalize(&name);
        if let Ok(a) = by_name(&name) {
            prop_assert_eq!(a.validate(), Ok(()));
        }
    }
}
