//! py_port::stats against what NumPy 2.4.6 computed (`tests/data/numpy_stats_golden.txt`,
//! written by `tools/port_example/numpy_stats.py`): the sum, mean and ten percentiles of
//! normal and exponential arrays from `default_rng`, 3 seeds × 14 lengths chosen around
//! NumPy's pairwise blocks (7, 8, 9, 127, 128, 129) and its 8192-element buffer, bit for bit.

use py_port::format::repr_f64;
use py_port::random::default_rng;
use py_port::stats::{mean, percentiles, sum};

const GOLDEN: &str = include_str!("data/numpy_stats_golden.txt");

#[test]
fn sum_mean_and_percentiles_match_numpy_bit_for_bit() {
    let mut lines = GOLDEN.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("# numpy 2.4.6:"), "{header}");
    let qs: Vec<f64> = header
        .split("percentiles at ")
        .nth(1)
        .unwrap()
        .split(' ')
        .map(|q| q.parse().unwrap())
        .collect();
    let mut checked = 0;
    let mut pending: Vec<(String, Vec<f64>)> = Vec::new();
    for line in lines {
        let (key, values) = line.split_once(" | ").unwrap();
        let key: Vec<&str> = key.split(' ').collect();
        let (seed, n): (u64, usize) = (key[1].parse().unwrap(), key[2].parse().unwrap());
        if pending.is_empty() {
            let mut rng = default_rng(seed);
            let normal = rng.normal_n(0.0, 1.0, n).unwrap();
            let exponential = rng.exponential_n(1000.0, n).unwrap();
            pending = vec![
                ("exponential".into(), exponential),
                ("normal".into(), normal),
            ];
        }
        let (name, x) = pending.pop().unwrap();
        assert_eq!(
            name, key[0],
            "the file's cases are normal, then exponential"
        );
        let mut ours = vec![sum(&x), mean(&x).unwrap()];
        ours.extend(percentiles(&x, &qs).unwrap());
        let ours: Vec<String> = ours.into_iter().map(repr_f64).collect();
        assert_eq!(ours.join(" "), values, "{name}, seed {seed}, n = {n}");
        checked += 1;
    }
    assert_eq!(checked, 84);
}
