//! NumPy's `sum`, `mean` and `percentile` of a 1-D float64 array, bit for bit: the reductions a
//! lecture script prints at full precision or rounds near a boundary.
//!
//! - [`sum`] is NumPy's pairwise summation (`DOUBLE_pairwise_sum` in
//!   `numpy/_core/src/umath/loops_utils.h.src`): below 8 values a plain loop, up to 128 values
//!   eight interleaved accumulators added as `((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))`, above that
//!   two halves (the first a multiple of 8 long) summed recursively; the reduction starts from
//!   `0.0`. A plain `iter().sum()` differs from it in the last bits from 8 values on.
//! - [`mean`] is `sum(x) / len` (NumPy's `_mean`: `umr_sum`, then one division).
//! - [`percentile`] is `np.percentile(x, q)` with the default `method='linear'`
//!   (`numpy/lib/_function_base_impl.py`, `_quantile` and `_lerp`): `q / 100`, the virtual index
//!   `(n − 1) · q`, its floor and the next index (both the last element when the virtual index
//!   reaches `n − 1`), and NumPy's two-sided interpolation `a + (b − a)·γ`, or
//!   `b − (b − a)·(1 − γ)` when `γ ≥ 0.5`.
//!
//! Checked against NumPy 2.4.6 by `tests/numpy_stats_golden.rs` (values NumPy printed).
//!
//! ```
//! use py_port::stats::{mean, percentile, sum};
//! // NumPy:  x = np.array([0.1] * 10)
//! //         print(repr(np.sum(x)), repr(sum(x.tolist())))   # 1.0 0.9999999999999999
//! let x = [0.1; 10];
//! assert_eq!(sum(&x), 1.0);
//! assert_eq!(x.iter().sum::<f64>(), 0.9999999999999999);
//! assert_eq!(mean(&x)?, 0.1);
//! // np.percentile([1, 2, 3, 4], [50, 99]) == [2.5, 3.97]
//! assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0], 50.0)?, 2.5);
//! assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0], 99.0)?, 3.9699999999999998);
//! # Ok::<(), py_port::Error>(())
//! ```
//!
//! Differences: NumPy returns `nan` for the mean of an empty array and the percentile of an
//! array holding NaN; these are errors here, as is an empty array's percentile (NumPy raises
//! `IndexError`). Integer arrays: convert to `f64` first (exact below 2⁵³, where NumPy's cast
//! agrees). When the percentile's two neighbours are `0.0` and `-0.0`, the sign of a zero
//! result may differ from NumPy's (its partition leaves equal values in another order).

use crate::Error;

/// NumPy's unroll block: pairwise summation recurses above this many values.
const PAIRWISE_BLOCK: usize = 128;

/// `np.sum(x)` for a 1-D float64 array: NumPy's pairwise summation, from `0.0`.
pub fn sum(x: &[f64]) -> f64 {
    0.0 + pairwise(x)
}

/// `np.sum(x)` for a 1-D float32 array: NumPy's pairwise summation in float32
/// (`FLOAT_pairwise_sum`: the same blocks, float32 accumulators), from `0.0`. A float32
/// result, as NumPy's; summing in f64 and rounding once gives another value from a few
/// hundred terms on.
///
/// ```
/// // NumPy:  x = np.full(1000, 0.1, dtype=np.float32)
/// //         print(repr(float(x.sum())), repr(float(x.mean())))
/// //         100.00001525878906 0.10000001639127731   (a plain float32 loop: 99.9990463256836)
/// let x = [0.1f32; 1000];
/// assert_eq!(py_port::stats::sum_f32(&x), 100.00001525878906);
/// assert_eq!(py_port::stats::mean_f32(&x)?, 0.10000001639127731);
/// assert_eq!(x.iter().sum::<f32>(), 99.9990463256836);
/// # Ok::<(), py_port::Error>(())
/// ```
pub fn sum_f32(x: &[f32]) -> f32 {
    0.0 + pairwise(x)
}

/// `np.mean(x)` of a 1-D float32 array: [`sum_f32`], then one float32 division by the count
/// (a float32 result, as NumPy's).
///
/// Errors: an empty array (NumPy warns and gives NaN).
pub fn mean_f32(x: &[f32]) -> Result<f32, Error> {
    match x.len() {
        0 => Err(Error::invalid("mean", "the mean of an empty array is NaN")),
        n => Ok(sum_f32(x) / n as f32),
    }
}

/// The float types NumPy sums pairwise: float64 and float32, each in its own precision.
pub trait Float:
    Copy + Default + std::ops::Add<Output = Self> + std::ops::AddAssign + std::ops::Div<Output = Self>
{
    /// A count as this type (NumPy divides a mean's sum by its count in the array's type).
    fn count(n: usize) -> Self;
}

impl Float for f64 {
    fn count(n: usize) -> Self {
        n as f64
    }
}

impl Float for f32 {
    fn count(n: usize) -> Self {
        n as f32
    }
}

/// `np.sum` of a 1-D array of `F`, in `F`: [`sum`] or [`sum_f32`].
pub fn sum_of<F: Float>(x: &[F]) -> F {
    F::default() + pairwise(x)
}

/// `DOUBLE_pairwise_sum` and `FLOAT_pairwise_sum`.
fn pairwise<F: Float>(x: &[F]) -> F {
    let n = x.len();
    if n < 8 {
        let mut res = F::default();
        for &v in x {
            res += v;
        }
        res
    } else if n <= PAIRWISE_BLOCK {
        let mut r = [F::default(); 8];
        r.copy_from_slice(&x[..8]);
        let whole = n - n % 8;
        for chunk in x[8..whole].chunks_exact(8) {
            for (acc, &v) in r.iter_mut().zip(chunk) {
                *acc += v;
            }
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &v in &x[whole..] {
            res += v;
        }
        res
    } else {
        let half = n / 2;
        let half = half - half % 8;
        pairwise(&x[..half]) + pairwise(&x[half..])
    }
}

/// A value NumPy reads as a float64 in a reduction: integers (their value; exact below 2⁵³)
/// and booleans (0 or 1, so the mean of `a == b` is the share of equal entries).
pub trait AsF64: Copy {
    /// The value as NumPy's float64 cast gives it.
    fn as_f64(self) -> f64;
}

macro_rules! as_f64 {
    ($($t:ty),*) => {$(
        impl AsF64 for $t {
            fn as_f64(self) -> f64 {
                self as f64
            }
        }
    )*};
}
as_f64!(u8, u16, u32, u64, usize, i8, i16, i32, i64, f32, f64);

impl AsF64 for bool {
    fn as_f64(self) -> f64 {
        f64::from(u8::from(self))
    }
}

/// `np.mean(x)` of an integer or boolean array: each value as a float64, then [`mean`]
/// (NumPy's mean of an int or bool array accumulates in float64).
///
/// ```
/// use py_port::stats::mean_of;
/// assert_eq!(mean_of(&[3usize, 4, 32])?, 13.0);
/// assert_eq!(mean_of(&[true, false, true, true])?, 0.75); // (a == b).mean()
/// # Ok::<(), py_port::Error>(())
/// ```
pub fn mean_of<T: AsF64>(x: &[T]) -> Result<f64, Error> {
    let x: Vec<f64> = x.iter().map(|&v| v.as_f64()).collect();
    mean(&x)
}

/// `np.mean(x)` for a 1-D float64 array: [`sum`] divided by the length. Errs when `x` is
/// empty (NumPy warns and returns `nan`).
pub fn mean(x: &[f64]) -> Result<f64, Error> {
    if x.is_empty() {
        return Err(Error::invalid("numpy.mean", "mean of an empty array"));
    }
    Ok(sum(x) / x.len() as f64)
}

/// `np.percentile(x, q)` (`method='linear'`, NumPy's default) for a 1-D float64 array.
///
/// Errs when `x` is empty or holds a NaN, or `q` is outside [0, 100] (NumPy's message:
/// "Percentiles must be in the range [0, 100]").
pub fn percentile(x: &[f64], q: f64) -> Result<f64, Error> {
    Ok(percentiles(x, &[q])?[0])
}

/// `np.percentile(x, [q1, q2, …])`: one sort, one value per `q`, in order. Errs as
/// [`percentile`] does.
pub fn percentiles(x: &[f64], qs: &[f64]) -> Result<Vec<f64>, Error> {
    const METHOD: &str = "numpy.percentile";
    if x.is_empty() {
        return Err(Error::invalid(
            METHOD,
            "empty array (NumPy raises IndexError)",
        ));
    }
    if x.iter().any(|v| v.is_nan()) {
        return Err(Error::invalid(
            METHOD,
            "the array holds NaN (NumPy returns nan)",
        ));
    }
    if qs.iter().any(|q| !(0.0..=100.0).contains(q)) {
        return Err(Error::invalid(
            METHOD,
            "Percentiles must be in the range [0, 100]",
        ));
    }
    let mut sorted = x.to_vec();
    sorted.sort_by(f64::total_cmp);
    let last = sorted.len() - 1;
    Ok(qs
        .iter()
        .map(|&q| {
            let virtual_index = last as f64 * (q / 100.0);
            // `_get_indexes`: at or above the last index both neighbours are the last element,
            // and the previous index becomes -1 (which `_get_gamma` then subtracts).
            let (prev, below, above) = if virtual_index >= last as f64 {
                (-1.0, last, last)
            } else {
                let floor = virtual_index.floor();
                (floor, floor as usize, floor as usize + 1)
            };
            lerp(sorted[below], sorted[above], virtual_index - prev)
        })
        .collect())
}

/// NumPy's `_lerp(a, b, t)`: `a + (b − a)·t`, or `b − (b − a)·(1 − t)` when `t ≥ 0.5`.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_sum_is_a_plain_loop_and_a_long_one_adds_in_eight_lanes() {
        let x = [1e16, 1.0, -1e16, 1.0, 1.0, 1.0, 1.0];
        assert_eq!(sum(&x), x.iter().sum::<f64>());
        // NumPy 2.4.6: np.sum([1.0] * 7 + [1e16] + [1.0] * 7 + [-1e16]) == 14.0, where a plain
        // loop rounds the ones added to 1e16 and gives 8.0; lane 7 holds 1e16 − 1e16 exactly.
        let mut y = vec![1.0; 7];
        y.push(1e16);
        y.extend([1.0; 7]);
        y.push(-1e16);
        assert_eq!(sum(&y), 14.0);
        assert_eq!(y.iter().sum::<f64>(), 8.0);
        // np.percentile([1.0, np.inf], q) is nan for q = 50 and 100 (inf − inf in _lerp).
        assert!(percentile(&[1.0, f64::INFINITY], 50.0).unwrap().is_nan());
        assert!(percentile(&[1.0, f64::INFINITY], 100.0).unwrap().is_nan());
    }

    #[test]
    fn percentile_interpolates_between_order_statistics_like_the_textbook_formula() {
        // Hyndman & Fan's method 7: h = (n − 1)·p, x[⌊h⌋] + (h − ⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋]),
        // on integers where every step is exact.
        let x: Vec<f64> = (0..101).rev().map(|i| f64::from(i) * 2.0).collect();
        for q in [0.0, 10.0, 25.0, 50.0, 99.0, 100.0] {
            assert_eq!(percentile(&x, q).unwrap(), 2.0 * q, "q = {q}");
        }
        assert_eq!(percentile(&[3.0, 1.0], 25.0).unwrap(), 1.5);
        assert_eq!(percentile(&[7.0], 99.0).unwrap(), 7.0);
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        assert!(percentile(&[], 50.0).is_err());
        assert!(percentile(&[1.0, f64::NAN], 50.0).is_err());
        for q in [-1.0, 100.5, f64::NAN] {
            let e = percentile(&[1.0], q).unwrap_err().to_string();
            assert!(e.contains("[0, 100]"), "{e}");
        }
        assert!(mean(&[]).is_err());
        assert_eq!(sum(&[]), 0.0);
    }
}
