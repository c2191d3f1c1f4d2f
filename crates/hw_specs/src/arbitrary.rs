//! Strategies for property tests (feature `arbitrary`): cards whose every figure may be
//! anything a hand-built value could hold (NaN, ±∞, 0, negative, `f64::MAX`) or a
//! plausible one, so that a test reaches both the refusals and the computations.

use proptest::prelude::*;

use crate::{Accelerator, Interconnect};

/// Any `f64` a field could hold, the awkward ones often.
pub fn extreme_f64() -> BoxedStrategy<f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(0.0),
        Just(-0.0),
        Just(-1.0),
        Just(f64::MAX),
        Just(f64::MIN_POSITIVE),
        Just(1e308),
        any::<f64>(),
    ]
    .boxed()
}

/// A figure that is plausible (within `range`) seven times in eight, else [`extreme_f64`]:
/// a value of many fields then validates often enough for the computations to be reached.
pub fn mostly(range: std::ops::Range<f64>) -> BoxedStrategy<f64> {
    prop_oneof![7 => range, 1 => extreme_f64()].boxed()
}

/// A shipped card half the time, else one of [`mostly`] plausible figures.
pub fn accelerator() -> BoxedStrategy<Accelerator> {
    prop_oneof![
        proptest::sample::select(crate::ACCELERATORS),
        wild_accelerator()
    ]
    .boxed()
}

/// A card of [`mostly`] plausible figures; the optional peaks (FP8, INT8, FP4, FP32) and the
/// mesh link are each absent half the time.
pub fn wild_accelerator() -> BoxedStrategy<Accelerator> {
    let peaks = (
        optional(1e12..1e16),
        optional(1e12..1e16),
        optional(1e12..1e17),
        optional(1e12..1e15),
    );
    let mesh = optional(1e9..1e12);
    (
        mostly(1e12..1e16),
        peaks,
        mostly(1e11..1e13),
        mostly(1e9..1e12),
        mostly(1e9..1e12),
        mesh,
    )
        .prop_map(
            |(bf16, (fp8, int8, fp4, fp32), bandwidth, memory, link, mesh)| Accelerator {
                name: "probe",
                aliases: &[],
                peak_flops_bf16: bf16,
                peak_flops_fp8: fp8,
                peak_ops_int8: int8,
                peak_flops_fp4: fp4,
                peak_flops_fp32: fp32,
                hbm_bandwidth: bandwidth,
                memory_bytes: memory,
                interconnect: Interconnect {
                    kind: "probe link",
                    per_direction: link,
                    mesh_link_per_direction: mesh,
                },
            },
        )
        .boxed()
}

/// `None` half the time, else `Some` of a [`mostly`] plausible figure.
fn optional(range: std::ops::Range<f64>) -> BoxedStrategy<Option<f64>> {
    prop_oneof![Just(None), mostly(range).prop_map(Some)].boxed()
}
