//! py_port::array against what NumPy 2.4.6 computed (`tests/data/numpy_arrays_golden.txt`,
//! written by `tools/port_example/numpy_arrays.py`): `a.argmax(-1)`, `a.mean(0)` and
//! `a.mean(1)` of normal arrays from `default_rng` (every other row rounded to small
//! integers, so argmax meets ties), at shapes around NumPy's pairwise blocks, bit for bit.

use ndarray::Array2;
use py_port::array::{argmax_rows, mean_axis};
use py_port::format::repr_f64;
use py_port::random::default_rng;

const GOLDEN: &str = include_str!("data/numpy_arrays_golden.txt");

#[test]
fn argmax_and_means_match_numpy_bit_for_bit() {
    let mut checked = 0;
    for line in GOLDEN.lines().skip(1) {
        let parts: Vec<&str> = line.split(" | ").collect();
        let key: Vec<usize> = parts[0].split(' ').map(|v| v.parse().unwrap()).collect();
        let (seed, rows, cols) = (key[0] as u64, key[1], key[2]);
        let draws = default_rng(seed).normal_n(0.0, 1e6, rows * cols).unwrap();
        let mut a = Array2::from_shape_vec((rows, cols), draws).unwrap();
        for (i, mut row) in a.outer_iter_mut().enumerate() {
            if i % 2 == 0 {
                row.mapv_inplace(|x| (x / 1e6).round_ties_even());
            }
        }
        let text = |v: Vec<String>| v.join(" ");
        let argmax = argmax_rows(a.view())
            .unwrap()
            .iter()
            .map(usize::to_string)
            .collect();
        let mean0 = mean_axis(a.view(), 0)
            .unwrap()
            .iter()
            .map(|&x| repr_f64(x))
            .collect();
        let mean1 = mean_axis(a.view(), 1)
            .unwrap()
            .iter()
            .map(|&x| repr_f64(x))
            .collect();
        assert_eq!(
            text(argmax),
            parts[1],
            "argmax, {rows} × {cols}, seed {seed}"
        );
        assert_eq!(
            text(mean0),
            parts[2],
            "mean(0), {rows} × {cols}, seed {seed}"
        );
        assert_eq!(
            text(mean1),
            parts[3],
            "mean(1), {rows} × {cols}, seed {seed}"
        );
        checked += 1;
    }
    assert_eq!(checked, 10);
}
