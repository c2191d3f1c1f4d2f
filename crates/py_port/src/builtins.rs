//! Python's one-liners over a list that Rust's iterators answer differently: `max(xs,
//! key=f)` and `min(xs, key=f)` keep the *first* of equal keys where `Iterator::max_by`
//! keeps the last, and skip a NaN key where `total_cmp` ranks it; `np.bincount(xs)` counts
//! in one call.
//!
//! ```
//! use py_port::builtins::{bincount, max_by_key, min_by_key};
//! // Python:  shapes = [("链", 1.93), ("树 2×2×2", 2.20), ("树 3×3×3", 2.20)]
//! //          max(shapes, key=lambda s: s[1])     # ('树 2×2×2', 2.2): the first of the two
//! let shapes = [("链", 1.93f64), ("树 2×2×2", 2.20), ("树 3×3×3", 2.20)];
//! assert_eq!(max_by_key(&shapes, |s| s.1)?.0, "树 2×2×2");
//! let last = shapes.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
//! assert_eq!(last.0, "树 3×3×3"); // what Iterator::max_by keeps
//! assert_eq!(min_by_key(&shapes, |s| s.1)?.0, "链");
//! // np.bincount([0, 2, 2, 5]) == [1, 0, 2, 0, 0, 1]
//! assert_eq!(bincount(&[0, 2, 2, 5], 0), [1, 0, 2, 0, 0, 1]);
//! # Ok::<(), py_port::Error>(())
//! ```

use crate::Error;

/// Python's `max(items, key=key)`: the first item whose key no later key exceeds. Keys are
/// compared with `>` as Python compares them, so an item keyed NaN never replaces the one
/// kept (and is kept only if it comes first).
///
/// Errors: no items (Python raises "max() iterable argument is empty").
pub fn max_by_key<T, K: PartialOrd>(items: &[T], key: impl Fn(&T) -> K) -> Result<&T, Error> {
    best_by(items, key, "max", |new, kept| new > kept)
}

/// Python's `min(items, key=key)`: the first item whose key no later key is below (`<`, as
/// Python compares).
///
/// Errors: no items (Python raises "min() iterable argument is empty").
pub fn min_by_key<T, K: PartialOrd>(items: &[T], key: impl Fn(&T) -> K) -> Result<&T, Error> {
    best_by(items, key, "min", |new, kept| new < kept)
}

fn best_by<'a, T, K>(
    items: &'a [T],
    key: impl Fn(&T) -> K,
    name: &'static str,
    better: impl Fn(&K, &K) -> bool,
) -> Result<&'a T, Error> {
    let (first, rest) = items
        .split_first()
        .ok_or_else(|| Error::invalid(name, format!("{name}() iterable argument is empty")))?;
    let mut kept = (first, key(first));
    for item in rest {
        let k = key(item);
        if better(&k, &kept.1) {
            kept = (item, k);
        }
    }
    Ok(kept.0)
}

/// `np.bincount(xs, minlength=minlength)`: how many times each of `0..=max(xs)` occurs,
/// at least `minlength` counts.
pub fn bincount(xs: &[usize], minlength: usize) -> Vec<usize> {
    let len = xs.iter().map(|&x| x + 1).max().unwrap_or(0).max(minlength);
    let mut counts = vec![0; len];
    for &x in xs {
        counts[x] += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_of_equal_keys_is_kept_as_python_keeps_it() {
        let xs = [3, 1, 3, 1];
        assert!(std::ptr::eq(max_by_key(&xs, |&x| x).unwrap(), &xs[0]));
        assert!(std::ptr::eq(min_by_key(&xs, |&x| x).unwrap(), &xs[1]));
        // Python: max([float("nan"), 1.0, 2.0]) is nan (first, never replaced);
        //         max([1.0, float("nan"), 2.0]) is 2.0 (nan > 1.0 is False).
        let nan_first = [f64::NAN, 1.0, 2.0];
        assert!(max_by_key(&nan_first, |&x| x).unwrap().is_nan());
        assert_eq!(*max_by_key(&[1.0, f64::NAN, 2.0], |&x| x).unwrap(), 2.0);
        assert_eq!(*min_by_key(&[1.0, f64::NAN, 0.5], |&x| x).unwrap(), 0.5);
        let none: [f64; 0] = [];
        assert!(max_by_key(&none, |&x| x).is_err());
        assert!(min_by_key(&none, |&x| x).is_err());
    }

    #[test]
    fn bincount_counts_every_value_up_to_the_largest() {
        assert_eq!(bincount(&[], 0), Vec::<usize>::new());
        assert_eq!(bincount(&[], 3), [0, 0, 0]);
        assert_eq!(bincount(&[1, 1, 1], 5), [0, 3, 0, 0, 0]);
        let xs: Vec<usize> = (0..1000).map(|i| (i * 7) % 13).collect();
        let counts = bincount(&xs, 0);
        assert_eq!(counts.iter().sum::<usize>(), 1000);
        for (v, &c) in counts.iter().enumerate() {
            assert_eq!(c, xs.iter().filter(|&&x| x == v).count());
        }
    }
}
