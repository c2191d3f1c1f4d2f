//! py_port's float32 reductions against what NumPy 2.4.6 computed
//! (`tests/data/numpy_f32_golden.txt`, written by `tools/port_example/numpy_f32.py`):
//! `x.sum()` and `x.mean()` of the flattened array ([`sum_f32`], [`mean_f32`]), `a.sum(0)`,
//! `a.sum(1)`, `a.mean(0)`, `a.mean(1)` ([`sum_axis`], [`mean_axis`]) of normal draws cast
//! to float32, at shapes around NumPy's pairwise blocks, bit for bit.

use ndarray::Array2;
use py_port::array::{mean_axis, sum_axis};
use py_port::random::default_rng;
use py_port::stats::{mean_f32, sum_f32};

const GOLDEN: &str = include_str!("data/numpy_f32_golden.txt");

/// The values of a golden field: float32s NumPy wrote as Python floats.
fn values(field: &str) -> Vec<f32> {
    let parse = |v: &str| v.parse::<f64>().unwrap() as f32;
    field.split(' ').map(parse).collect()
}

#[test]
fn float32_sums_and_means_match_numpy_bit_for_bit() {
    let mut checked = 0;
    for line in GOLDEN.lines().skip(1) {
        let parts: Vec<&str> = line.split(" | ").collect();
        let key: Vec<usize> = parts[0].split(' ').map(|v| v.parse().unwrap()).collect();
        let (seed, rows, cols) = (key[0] as u64, key[1], key[2]);
        let draws = default_rng(seed).normal_n(0.0, 1e3, rows * cols).unwrap();
        let draws: Vec<f32> = draws.iter().map(|&x| x as f32).collect();
        let a = Array2::from_shape_vec((rows, cols), draws.clone()).unwrap();
        let at = format!("{rows} × {cols}, seed {seed}");
        let whole = values(parts[1]);
        assert_eq!(sum_f32(&draws), whole[0], "sum, {at}");
        assert_eq!(mean_f32(&draws).unwrap(), whole[1], "mean, {at}");
        let first = |v: Vec<f32>| v.into_iter().take(16).collect::<Vec<_>>();
        assert_eq!(
            first(sum_axis(a.view(), 0).unwrap()),
            values(parts[2]),
            "sum(0), {at}"
        );
        assert_eq!(
            sum_axis(a.view(), 1).unwrap(),
            values(parts[3]),
            "sum(1), {at}"
        );
        assert_eq!(
            first(mean_axis(a.view(), 0).unwrap()),
            values(parts[4]),
            "mean(0), {at}"
        );
        assert_eq!(
            mean_axis(a.view(), 1).unwrap(),
            values(parts[5]),
            "mean(1), {at}"
        );
        checked += 1;
    }
    assert_eq!(checked, 14);
}

/// The golden values tell float32 pairwise summation from the alternatives a port would
/// write: a plain float32 loop, or float64 rounded once, differ on the long rows.
#[test]
fn the_golden_values_tell_pairwise_float32_from_other_sums() {
    let line = GOLDEN
        .lines()
        .find(|l| l.starts_with("0 4 8193 |"))
        .unwrap();
    let want = values(line.split(" | ").nth(1).unwrap())[0];
    let draws = default_rng(0).normal_n(0.0, 1e3, 4 * 8193).unwrap();
    let draws: Vec<f32> = draws.iter().map(|&x| x as f32).collect();
    assert_eq!(sum_f32(&draws), want);
    let plain: f32 = draws.iter().sum();
    let wide = draws.iter().map(|&x| f64::from(x)).sum::<f64>() as f32;
    assert_ne!(plain, want);
    assert_ne!(wide, want);
}
