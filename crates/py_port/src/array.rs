//! The NumPy reductions over arrays that lecture scripts write as one-liners, with NumPy's
//! results and summation order: `a.argmax(-1)` of an array of any rank ([`argmax`]; rows
//! of a 2-D one, [`argmax_rows`]), `a.mean(axis)` of a 2-D one ([`mean_axis`]), and where
//! two token arrays first differ in each row (`np.where(d.any(1), d.argmax(1), n)` with
//! `d = a != b`, [`first_mismatch`]).
//!
//! ```
//! use ndarray::array;
//! use py_port::array::{argmax, argmax_rows, first_mismatch, mean_axis};
//!
//! let logits = array![[0.1, 0.9, 0.9], [2.0, -1.0, 0.5]];
//! assert_eq!(argmax_rows(logits.view())?, [1, 0]);          // logits.argmax(-1)
//! // logits.mean(0): NumPy prints [1.05, -0.05, 0.7]; its float64s are these.
//! assert_eq!(mean_axis(logits.view(), 0)?, [1.05, -0.04999999999999999, 0.7]);
//! let cube = array![[[0.0, 1.0], [3.0, 2.0]]];                 // [1, 2, 2]
//! assert_eq!(argmax(cube.view())?, array![[1, 0]]);         // cube.argmax(-1), [1, 2]
//! let a = array![[1, 2, 3], [1, 2, 3]];
//! let b = array![[1, 5, 3], [1, 2, 3]];
//! assert_eq!(first_mismatch(a.view(), b.view())?, [1, 3]); // row 2 never differs: its length
//! # Ok::<(), py_port::Error>(())
//! ```

use ndarray::{Array, Array1, ArrayView, ArrayView2, Axis, Dimension, RemoveAxis};

use crate::Error;
use crate::stats::{self, Float};

/// `a.argmax(-1)`: in each row the index of the largest value, the first of equal ones;
/// a NaN is NumPy's largest (the first NaN wins).
///
/// Errors: rows of no values (zero columns), which have no largest value (NumPy raises
/// "attempt to get argmax of an empty sequence").
///
/// ```
/// use py_port::array::argmax_rows;
/// let x = ndarray::array![[1.0, f64::NAN, 3.0, f64::NAN]];
/// assert_eq!(argmax_rows(x.view())?, [1]); // np.argmax gives the first NaN
/// assert!(argmax_rows(ndarray::Array2::<f64>::zeros((2, 0)).view()).is_err());
/// # Ok::<(), py_port::Error>(())
/// ```
pub fn argmax_rows<T: Copy + PartialOrd>(a: ArrayView2<T>) -> Result<Vec<usize>, Error> {
    if a.ncols() == 0 {
        return Err(Error::invalid(
            "ndarray.argmax",
            "attempt to get argmax of an empty sequence",
        ));
    }
    #[allow(clippy::eq_op)] // x != x: NaN, for any float type
    let is_nan = |x: T| x != x;
    let best = a
        .outer_iter()
        .map(|row| {
            let mut best = 0;
            for (i, &x) in row.iter().enumerate() {
                if is_nan(row[best]) {
                    break;
                }
                if is_nan(x) || x > row[best] {
                    best = i;
                }
            }
            best
        })
        .collect();
    Ok(best)
}

/// `a.argmax(-1)` of an array of any rank ≥ 1: for each position of the other axes, the
/// index of the largest value along the last one ([`argmax_rows`]'s rule: the first of
/// equal values, the first NaN). The result has the other axes' shape.
///
/// Errors: a last axis of length 0 (NumPy raises: there is no largest value).
pub fn argmax<T, D>(a: ArrayView<T, D>) -> Result<Array<usize, D::Smaller>, Error>
where
    T: Copy + PartialOrd,
    D: Dimension + RemoveAxis,
{
    let last = Axis(a.ndim() - 1);
    let len = a.len_of(last);
    if len == 0 {
        return Err(Error::invalid(
            "ndarray.argmax",
            "attempt to get argmax of an empty sequence",
        ));
    }
    let rows = a.len() / len;
    let shape = a.raw_dim().remove_axis(last);
    let flat = a
        .to_owned()
        .into_shape_with_order((rows, len))
        .expect("a standard layout");
    let best = argmax_rows(flat.view())?;
    Ok(Array::from_shape_vec(shape, best).expect("one index per row"))
}

/// `a.mean(axis)` of a float64 or float32 array, in its own type, as NumPy sums it: along
/// the rows (`axis = 1`, the contiguous one) each row by its pairwise sum
/// ([`stats::sum_of`]); down the columns (`axis = 0`) row after row, one addition per row,
/// as NumPy's reduction over an outer axis does. Then one division by the count, in the
/// array's type (a float32 array's mean is float32, as NumPy's).
///
/// Errors: an axis other than 0 or 1, or an axis of length 0 (NumPy warns and gives NaN).
///
/// ```
/// use py_port::array::mean_axis;
/// let x = ndarray::array![[0.1; 10]];
/// assert_eq!(mean_axis(x.view(), 1)?, [0.1]); // pairwise: exactly 1.0 / 10
/// # Ok::<(), py_port::Error>(())
/// ```
pub fn mean_axis<F: Float>(a: ArrayView2<F>, axis: usize) -> Result<Vec<F>, Error> {
    const METHOD: &str = "ndarray.mean";
    let n = axis_len(a, axis, METHOD)?;
    if n == 0 {
        return Err(Error::invalid(METHOD, "the mean of an empty axis is NaN"));
    }
    let sums = sum_axis(a, axis)?;
    Ok(sums.into_iter().map(|s| s / F::count(n)).collect())
}

/// The length of `axis` of a 2-D array, or NumPy's error for another axis.
fn axis_len<F>(a: ArrayView2<F>, axis: usize, method: &'static str) -> Result<usize, Error> {
    match axis {
        0 | 1 => Ok(a.len_of(Axis(axis))),
        _ => Err(Error::invalid(
            method,
            format!("axis {axis} is out of bounds for a 2-D array"),
        )),
    }
}

/// `a.sum(axis)` of a float64 or float32 array, in its own type, as NumPy adds it: along
/// the rows (`axis = 1`) each row pairwise; down the columns (`axis = 0`) row after row.
///
/// An axis of length 0 sums to zeros, as NumPy's does.
///
/// Errors: an axis other than 0 or 1.
///
/// ```
/// use py_port::array::sum_axis;
/// // NumPy:  a = np.full((2, 1000), 0.1, dtype=np.float32)
/// //         a.sum(1)[0] == np.float32(100.00001525878906); a.sum(0)[0] == np.float32(0.2)
/// let a = ndarray::Array2::<f32>::from_elem((2, 1000), 0.1);
/// assert_eq!(sum_axis(a.view(), 1)?, [100.00001525878906f32; 2]);
/// assert_eq!(sum_axis(a.view(), 0)?[0], 0.2f32);
/// let none = ndarray::Array2::<f64>::zeros((0, 3));
/// assert_eq!(sum_axis(none.view(), 0)?, [0.0; 3]); // np.zeros((0, 3)).sum(0)
/// # Ok::<(), py_port::Error>(())
/// ```
pub fn sum_axis<F: Float>(a: ArrayView2<F>, axis: usize) -> Result<Vec<F>, Error> {
    if axis_len(a, axis, "ndarray.sum")? == 0 {
        let kept = a.len_of(Axis(1 - axis));
        return Ok(vec![F::default(); kept]);
    }
    let sums: Array1<F> = match axis {
        1 => a
            .outer_iter()
            .map(|row| stats::sum_of(&row.to_vec()))
            .collect(),
        _ => {
            let mut acc = a.row(0).to_owned();
            for row in a.outer_iter().skip(1) {
                acc.zip_mut_with(&row, |s, &v| *s += v);
            }
            acc
        }
    };
    Ok(sums.to_vec())
}

/// Where each row of `a` first differs from the same row of `b`, and the row's length where
/// the rows are equal: NumPy's `d = a != b; np.where(d.any(1), d.argmax(1), n)` with `n`
/// the row length (so "all n tokens agree" is the count itself, as a port of a script that
/// writes `-1` there compares with `n` instead). Used to find where a drafted or generated
/// sequence leaves a reference one.
///
/// ```
/// use ndarray::array;
/// let a = array![[1, 2, 3], [4, 5, 6]];
/// let b = array![[1, 9, 3], [4, 5, 6]];
/// assert_eq!(py_port::array::first_mismatch(a.view(), b.view())?, [1, 3]);
/// # Ok::<(), py_port::Error>(())
/// ```
///
/// Errors: arrays of different shapes (NumPy broadcasts or raises; a port compares equal
/// shapes).
pub fn first_mismatch<T: PartialEq>(
    a: ArrayView2<T>,
    b: ArrayView2<T>,
) -> Result<Vec<usize>, Error> {
    if a.dim() != b.dim() {
        return Err(Error::invalid(
            "first_mismatch",
            format!("shapes {:?} and {:?} differ", a.dim(), b.dim()),
        ));
    }
    Ok(a.outer_iter()
        .zip(b.outer_iter())
        .map(|(x, y)| {
            let at = x.iter().zip(y.iter()).position(|(p, q)| p != q);
            at.unwrap_or(x.len())
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn argmax_takes_the_first_of_equal_values_and_nan_wins() {
        let a = array![
            [3.0f32, 3.0, 1.0],
            [f32::NAN, 5.0, f32::NAN],
            [-1.0, 2.0, f32::NAN]
        ];
        assert_eq!(argmax_rows(a.view()).unwrap(), [0, 0, 2]);
        let ints = array![[1, 7, 7], [9, 0, 9]];
        assert_eq!(argmax_rows(ints.view()).unwrap(), [1, 0]);
    }

    #[test]
    fn argmax_of_any_rank_is_argmax_rows_of_its_last_axis() {
        let a = ndarray::Array3::from_shape_fn((2, 3, 4), |(i, j, k)| {
            ((i * 7 + j * 5 + k * 3) % 4) as f64
        });
        let by_rows = argmax_rows(a.view().into_shape_with_order((6, 4)).unwrap()).unwrap();
        let all = argmax(a.view()).unwrap();
        assert_eq!(all.clone().into_raw_vec_and_offset().0, by_rows);
        assert_eq!(all.dim(), (2, 3));
        assert_eq!(
            argmax(array![5.0, 9.0, 9.0].view()).unwrap().into_scalar(),
            1
        );
        let empty = ndarray::Array3::<f64>::zeros((2, 3, 0));
        assert!(argmax(empty.view()).is_err());
    }

    #[test]
    fn a_mean_down_the_columns_adds_row_after_row() {
        // 0.1 + 0.2 + 0.3 row by row is 0.6000000000000001; a pairwise or Kahan sum of the
        // same three is the same here, so build a case where the order shows: 1e16, 1, −1e16.
        let a = array![[1e16], [1.0], [-1e16]];
        // Sequential: (1e16 + 1) − 1e16 = 0 (the 1 is lost), over 3.
        assert_eq!(mean_axis(a.view(), 0).unwrap(), [0.0]);
        let b = array![[1.0, 2.0], [3.0, 4.0]];
        assert_eq!(mean_axis(b.view(), 0).unwrap(), [2.0, 3.0]);
        assert_eq!(mean_axis(b.view(), 1).unwrap(), [1.5, 3.5]);
        assert!(mean_axis(b.view(), 2).is_err());
        let empty = ndarray::Array2::<f64>::zeros((0, 3));
        assert!(mean_axis(empty.view(), 0).is_err());
    }

    #[test]
    fn rows_first_differ_where_a_token_does() {
        let a = array![[1u32, 2, 3, 4], [5, 6, 7, 8], [0, 0, 0, 0]];
        let b = array![[1u32, 2, 9, 4], [5, 6, 7, 8], [1, 0, 0, 1]];
        assert_eq!(first_mismatch(a.view(), b.view()).unwrap(), [2, 4, 0]);
        let c = array![[1u32, 2]];
        assert!(first_mismatch(a.view(), c.view()).is_err());
    }
}
