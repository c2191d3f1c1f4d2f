//! The building blocks of the fast forward pass, each a pure function on arrays
//! ([`reference`](mod@crate::reference) writes the same steps out plainly, for reading).
//!
//! The functions on arrays ([`rms_norm`], [`apply_rope`], [`swiglu`]) check their shapes
//! and return an error for arrays that do not fit together. The functions on slices and
//! numbers ([`rope_pairs`], [`softmax_in_place`], [`fast_exp`], [`silu`]) are public too
//! and check nothing; they never panic (mismatched slice lengths use the shorter one).
//! The forward pass, whose shapes `TransformerLM::new` has already checked, calls those
//! and crate-private unchecked versions of the array functions.

use ndarray::{Array2, ArrayView1, ArrayView2, ArrayViewMut1, ArrayViewMut2, Axis, Zip};

use crate::Error;

/// RMSNorm of every row: `x / √(mean(x²) + eps) · gain` (Zhang & Sennrich 2019).
///
/// ```
/// use ndarray::array;
/// // mean(3², 4²) = 12.5 → 3/√12.5, 4/√12.5
/// let y = transformer_lab::ops::rms_norm(array![[3.0f32, 4.0]].view(), array![1.0f32, 2.0].view(), 0.0)?;
/// assert!((y[[0, 0]] - 0.848528).abs() < 1e-6 && (y[[0, 1]] - 2.262742).abs() < 1e-6);
/// # Ok::<(), transformer_lab::Error>(())
/// ```
///
/// Errors when `gain` is not as long as a row.
pub fn rms_norm(x: ArrayView2<f32>, gain: ArrayView1<f32>, eps: f32) -> Result<Array2<f32>, Error> {
    if gain.len() != x.ncols() {
        return Err(Error::Shape(format!(
            "rms_norm: gain of {} for rows of {}",
            gain.len(),
            x.ncols()
        )));
    }
    let mut y = Array2::zeros(x.raw_dim());
    rms_norm_into(x, gain, eps, y.view_mut());
    Ok(y)
}

crate::cpu::with_avx2! {
    /// [`rms_norm`] written into `out` (same shape as `x`), allocating nothing; shapes
    /// unchecked.
    pub(crate) fn rms_norm_into(
        x: ArrayView2<f32>,
        gain: ArrayView1<f32>,
        eps: f32,
        out: ArrayViewMut2<f32>,
    ) => rms_norm_body
}

#[inline(always)]
fn rms_norm_body(x: ArrayView2<f32>, gain: ArrayView1<f32>, eps: f32, mut out: ArrayViewMut2<f32>) {
    let d = x.ncols() as f32;
    // Each row's sum of squares is one chain of additions, in order. Eight rows at a time
    // run eight chains side by side, so the adds overlap instead of waiting on each other.
    const ROWS: usize = 8;
    for (xs, mut outs) in x
        .axis_chunks_iter(Axis(0), ROWS)
        .zip(out.axis_chunks_iter_mut(Axis(0), ROWS))
    {
        let mut sums = [0.0f32; ROWS];
        let mut rows: [&[f32]; ROWS] = [&[]; ROWS];
        let mut whole = xs.nrows() == ROWS;
        for (slot, row) in rows.iter_mut().zip(xs.outer_iter()) {
            match row.to_slice() {
                Some(row) => *slot = row,
                None => whole = false,
            }
        }
        if whole {
            for c in 0..xs.ncols() {
                for (sum, row) in sums.iter_mut().zip(&rows) {
                    *sum += row[c] * row[c];
                }
            }
        } else {
            for (sum, row) in sums.iter_mut().zip(xs.outer_iter()) {
                *sum = row.iter().fold(0.0, |acc, v| acc + v * v);
            }
        }
        for ((row, mut dst), &sum) in xs.outer_iter().zip(outs.outer_iter_mut()).zip(&sums) {
            let inv = 1.0 / (sum / d + eps).sqrt();
            Zip::from(&mut dst)
                .and(&row)
                .and(&gain)
                .for_each(|y, &v, &g| *y = v * inv * g);
        }
    }
}

/// RoPE angle tables for positions `0..max_seq`: `(cos, sin)`, each `[max_seq, head_dim/2]`,
/// with angle `pos / θ^(2i / head_dim)` for pair i (Su et al. 2021). Computed in f64.
///
/// Errors: `head_dim` odd or 0, `θ` not finite or ≤ 1, or tables of more than
/// [`MAX_FLOATS`](crate::MAX_FLOATS) floats (`max_seq · head_dim`).
pub fn rope_tables(
    max_seq: usize,
    head_dim: usize,
    theta: f32,
) -> Result<(Array2<f32>, Array2<f32>), Error> {
    if head_dim == 0 || !head_dim.is_multiple_of(2) {
        return Err(Error::Shape(format!(
            "RoPE rotates pairs of dimensions: head_dim must be even and ≥ 2, got {head_dim}"
        )));
    }
    if !(theta.is_finite() && theta > 1.0) {
        return Err(Error::Config(format!(
            "rope_theta must be finite and > 1, got {theta}"
        )));
    }
    if max_seq
        .checked_mul(head_dim)
        .is_none_or(|n| n > crate::MAX_FLOATS)
    {
        return Err(Error::Shape(format!(
            "RoPE tables for {max_seq} positions × {head_dim} dimensions exceed the limit of \
             {} floats (MAX_FLOATS)",
            crate::MAX_FLOATS
        )));
    }
    let half = head_dim / 2;
    let angle =
        |pos: usize, i: usize| pos as f64 / f64::from(theta).powf(2.0 * i as f64 / head_dim as f64);
    let cos = Array2::from_shape_fn((max_seq, half), |(p, i)| angle(p, i).cos() as f32);
    let sin = Array2::from_shape_fn((max_seq, half), |(p, i)| angle(p, i).sin() as f32);
    Ok((cos, sin))
}

/// Rotates one head vector in place for position `pos`: each pair `(x[2i], x[2i+1])`
/// becomes `(x0·cos − x1·sin, x0·sin + x1·cos)` with the angle of pair i at `pos`
/// (`cos`, `sin` from [`rope_tables`]).
///
/// Position 0 is the identity; relative position is all that survives in `q · k`.
/// Errors when `pos` is beyond the tables or `x` is not `2 × ` their width long.
pub fn apply_rope(
    mut x: ArrayViewMut1<f32>,
    pos: usize,
    cos: ArrayView2<f32>,
    sin: ArrayView2<f32>,
) -> Result<(), Error> {
    if pos >= cos.nrows() || pos >= sin.nrows() {
        return Err(Error::TooLong {
            len: pos + 1,
            max: cos.nrows().min(sin.nrows()),
        });
    }
    if x.len() != 2 * cos.ncols() || cos.ncols() != sin.ncols() {
        return Err(Error::Shape(format!(
            "apply_rope: a head of {} for tables of {} pairs",
            x.len(),
            cos.ncols()
        )));
    }
    let (c, s) = (cos.row(pos).to_vec(), sin.row(pos).to_vec());
    match x.as_slice_mut() {
        Some(head) => rope_pairs(head, &c, &s),
        None => {
            let mut head = x.to_vec();
            rope_pairs(&mut head, &c, &s);
            x.assign(&ArrayView1::from(&head));
        }
    }
    Ok(())
}

/// RoPE on one head stored as a slice: pair i rotates by the angle whose cosine and
/// sine are `cos[i]`, `sin[i]`.
#[inline]
pub fn rope_pairs(head: &mut [f32], cos: &[f32], sin: &[f32]) {
    for ((pair, &c), &s) in head.chunks_exact_mut(2).zip(cos).zip(sin) {
        let (x0, x1) = (pair[0], pair[1]);
        pair[0] = x0 * c - x1 * s;
        pair[1] = x0 * s + x1 * c;
    }
}

/// Softmax of each row in place, subtracting the row maximum first. `-inf` entries (masked
/// positions) get probability 0; a row must have at least one finite entry.
pub fn softmax_rows(mut x: ArrayViewMut2<f32>) {
    for mut row in x.outer_iter_mut() {
        match row.as_slice_mut() {
            Some(r) => softmax_in_place(r),
            None => {
                let mut r = row.to_vec();
                softmax_in_place(&mut r);
                row.assign(&ArrayView1::from(&r));
            }
        }
    }
}

/// Softmax of a slice in place (max subtracted first; `-inf` → 0). The attention kernel
/// and [`softmax_rows`] both use it.
///
/// A slice of nothing but `-inf` (no position visible) has no softmax and comes out NaN, as
/// does one holding NaN or `+inf`; the kernels never pass one (a query always sees
/// itself). Checked for the caller: [`softmax_checked`].
#[inline]
pub fn softmax_in_place(x: &mut [f32]) {
    let max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    // Exponentiate in one loop (it vectorises), sum in another (a sequential reduction).
    for v in x.iter_mut() {
        *v = fast_exp(*v - max);
    }
    let inv = 1.0 / x.iter().sum::<f32>();
    for v in x.iter_mut() {
        *v *= inv;
    }
}

/// [`softmax_in_place`], refusing a slice that is empty, holds a NaN or `+inf`, or is all
/// `-inf`, where no distribution exists.
///
/// ```
/// let mut x = [0.0f32, f32::NEG_INFINITY];
/// transformer_lab::ops::softmax_checked(&mut x)?;
/// assert_eq!(x, [1.0, 0.0]);
/// assert!(transformer_lab::ops::softmax_checked(&mut [f32::NEG_INFINITY; 3]).is_err());
/// # Ok::<(), transformer_lab::Error>(())
/// ```
pub fn softmax_checked(x: &mut [f32]) -> Result<(), crate::Error> {
    let bad = x.iter().any(|v| v.is_nan() || *v == f32::INFINITY);
    if bad || x.iter().all(|v| *v == f32::NEG_INFINITY) {
        return Err(crate::Error::Shape(
            "softmax of a row that is empty, all -inf, or holds NaN or +inf".into(),
        ));
    }
    softmax_in_place(x);
    Ok(())
}

/// `eˣ` in f32 without calling libm: Cody–Waite range reduction `x = k·ln 2 + r` and
/// Cephes' degree-5 polynomial for `eʳ` on |r| ≤ ln 2 / 2, then `2ᵏ` from the exponent
/// bits (as `2^⌊k/2⌋ · 2^⌈k/2⌉`, so k = 128 just below `f32::MAX` does not overflow).
/// Relative error below 3·2⁻²⁴ (1.5 ulp) wherever the result is a normal number; 0 below
/// −87.336 54 (so `-inf` gives 0), `+inf` above 88.722 83 (where `eˣ` passes
/// `f32::MAX`), NaN for NaN.
///
/// It is branch-free, so a loop over a slice vectorises (softmax, SiLU), and it is plain
/// IEEE arithmetic, so it gives the same bits on every machine, unlike libm's `expf`.
///
/// ```
/// use transformer_lab::ops::fast_exp;
/// for x in [-20.0f32, -1.0, 0.0, 0.5, 1.0, 10.0, 80.0] {
///     assert!((fast_exp(x) / x.exp() - 1.0).abs() < 3e-7, "{x}");
/// }
/// assert_eq!(fast_exp(f32::NEG_INFINITY), 0.0);
/// ```
#[inline]
pub fn fast_exp(x: f32) -> f32 {
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // 1.5 · 2²³: adding and subtracting it rounds to the nearest integer (round half to
    // even) with plain additions, which vectorise where `round` may not.
    const ROUND: f32 = 12_582_912.0;
    let xc = x.clamp(-87.336_54, 88.722_83); // NaN stays NaN, and propagates below
    let t = xc * std::f32::consts::LOG2_E + ROUND;
    let k = t - ROUND;
    let r = xc - k * LN2_HI - k * LN2_LO;
    let p = ((((1.987_569_1e-4 * r + 1.398_199_9e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r
        + 1.666_666_5e-1)
        * r
        + 0.5;
    let er = 1.0 + r + r * r * p;
    // t = 1.5 · 2²³ + k exactly, so its low bits are k: 2ᵏ from integer operations only
    // (a float-to-int cast would not vectorise). k runs from −126 to 128, and 2¹²⁸ is not
    // an f32: scale by 2^⌊k/2⌋ then 2^⌈k/2⌉, both normal. The first product is exact, so
    // the result is `er · 2ᵏ` rounded once, as if 2ᵏ were a float.
    let k = t.to_bits().wrapping_sub(ROUND.to_bits()) as i32;
    let half = k >> 1;
    let two_half = f32::from_bits(((half + 127) as u32) << 23);
    let two_rest = f32::from_bits(((k - half + 127) as u32) << 23);
    if x < -87.336_54 {
        0.0
    } else if x > 88.722_83 {
        f32::INFINITY
    } else {
        er * two_half * two_rest
    }
}

/// SiLU (swish): `x · σ(x) = x / (1 + e^(−x))`.
#[inline]
pub fn silu(x: f32) -> f32 {
    x / (1.0 + fast_exp(-x))
}

/// SwiGLU's elementwise part in place: `gate ← silu(gate) ⊙ up` (Shazeer 2020).
/// Errors when the two arrays differ in shape.
pub fn swiglu(gate: ArrayViewMut2<f32>, up: ArrayView2<f32>) -> Result<(), Error> {
    if gate.dim() != up.dim() {
        return Err(Error::Shape(format!(
            "swiglu: gate {:?} and up {:?}",
            gate.dim(),
            up.dim()
        )));
    }
    swiglu_in_place(gate, up);
    Ok(())
}

/// [`swiglu`] with shapes unchecked.
pub(crate) fn swiglu_in_place(mut gate: ArrayViewMut2<f32>, up: ArrayView2<f32>) {
    match (gate.as_slice_mut(), up.as_slice()) {
        // The common, contiguous case as a plain loop, which vectorises.
        (Some(g), Some(u)) if g.len() == u.len() => {
            for (g, &u) in g.iter_mut().zip(u) {
                *g = silu(*g) * u;
            }
        }
        _ => Zip::from(&mut gate)
            .and(&up)
            .for_each(|g, &u| *g = silu(*g) * u),
    }
}

crate::cpu::with_avx2! {
    /// SwiGLU's elementwise part from a fused `[gate | up]` product: `act ← silu(gate) ⊙
    /// up` for `gate_up [rows, 2 · d_ff]` and `act [rows, d_ff]` (shapes unchecked).
    pub(crate) fn swiglu_into(gate_up: ArrayView2<f32>, act: ArrayViewMut2<f32>) => swiglu_body
}

#[inline(always)]
fn swiglu_body(gate_up: ArrayView2<f32>, mut act: ArrayViewMut2<f32>) {
    let f = act.ncols();
    for (gu, mut a) in gate_up.outer_iter().zip(act.outer_iter_mut()) {
        match (gu.as_slice(), a.as_slice_mut()) {
            (Some(gu), Some(a)) => {
                let (g, u) = gu.split_at(f);
                for ((a, &g), &u) in a.iter_mut().zip(g).zip(u) {
                    *a = silu(g) * u;
                }
            }
            _ => {
                let (g, u) = gu.split_at(Axis(0), f);
                Zip::from(&mut a)
                    .and(&g)
                    .and(&u)
                    .for_each(|a, &g, &u| *a = silu(g) * u);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array1, array};

    #[test]
    fn rms_norm_divides_by_the_root_mean_square_and_applies_the_gain() {
        let x = array![[1.0f32, -1.0, 1.0, -1.0], [2.0, 0.0, 0.0, 0.0]];
        let g = array![1.0f32, 1.0, 2.0, 0.5];
        let y = rms_norm(x.view(), g.view(), 0.0).unwrap();
        // Row 0: rms 1 → x·g. Row 1: rms √(4/4) = 1 → [2, 0, 0, 0].
        assert_eq!(y, array![[1.0, -1.0, 2.0, -0.5], [2.0, 0.0, 0.0, 0.0]]);
        // eps keeps a zero row at zero instead of NaN.
        let z = rms_norm(Array2::zeros((1, 4)).view(), g.view(), 1e-5).unwrap();
        assert!(z.iter().all(|v| *v == 0.0));
    }

    #[test]
    fn rms_norm_of_eight_rows_at_a_time_gives_the_bits_of_one_row_at_a_time() {
        // Row counts around the groups of eight, and a strided view (the fallback).
        let f = |i: usize| ((i * 37) % 23) as f32 * 0.17 - 1.9;
        let gain = Array1::from_shape_fn(48, |j| f(j * 3) + 2.0);
        let one_at_a_time = |x: ArrayView2<f32>| {
            Array2::from_shape_fn(x.raw_dim(), |(i, j)| {
                let sum = x.row(i).iter().fold(0.0f32, |acc, v| acc + v * v);
                let inv = 1.0 / (sum / 48.0 + 1e-5).sqrt();
                x[[i, j]] * inv * gain[j]
            })
        };
        for rows in [1, 7, 8, 9, 16, 21] {
            let x = Array2::from_shape_fn((rows, 48), |(i, j)| f(i * 48 + j));
            let y = rms_norm(x.view(), gain.view(), 1e-5).unwrap();
            assert_eq!(y, one_at_a_time(x.view()), "{rows} rows");
        }
        let wide = Array2::from_shape_fn((10, 96), |(i, j)| f(i * 96 + j));
        let strided = wide.slice(ndarray::s![.., ..;2]);
        let y = rms_norm(strided, gain.view(), 1e-5).unwrap();
        assert_eq!(y, one_at_a_time(strided), "strided rows");
    }

    #[test]
    fn rope_at_position_zero_is_a_no_op() {
        let (cos, sin) = rope_tables(8, 4, 10000.0).unwrap();
        let mut x = array![0.3f32, -1.2, 0.7, 2.0];
        let before = x.clone();
        apply_rope(x.view_mut(), 0, cos.view(), sin.view()).unwrap();
        assert_eq!(x, before);
    }

    #[test]
    fn rope_rotates_each_pair_by_its_own_angle() {
        // head_dim 4, θ = 100: pair 0 turns by pos rad, pair 1 by pos / 100^(2/4) = pos / 10.
        let (cos, sin) = rope_tables(4, 4, 100.0).unwrap();
        let mut x = array![1.0f32, 0.0, 1.0, 0.0];
        apply_rope(x.view_mut(), 2, cos.view(), sin.view()).unwrap();
        let want = [2f32.cos(), 2f32.sin(), 0.2f32.cos(), 0.2f32.sin()];
        for (a, b) in x.iter().zip(want) {
            assert!((a - b).abs() < 1e-6, "{x} vs {want:?}");
        }
    }

    #[test]
    fn rope_keeps_lengths_and_makes_dot_products_depend_on_relative_position() {
        let (cos, sin) = rope_tables(32, 8, 10000.0).unwrap();
        let q0 = Array1::from(vec![0.1f32, 0.5, -0.3, 0.8, 1.0, -0.2, 0.4, 0.0]);
        let k0 = Array1::from(vec![0.7f32, -0.1, 0.2, 0.3, -0.5, 0.9, 0.1, 0.6]);
        let dot_at = |pq: usize, pk: usize| {
            let (mut q, mut k) = (q0.clone(), k0.clone());
            apply_rope(q.view_mut(), pq, cos.view(), sin.view()).unwrap();
            apply_rope(k.view_mut(), pk, cos.view(), sin.view()).unwrap();
            assert!((q.dot(&q) - q0.dot(&q0)).abs() < 1e-5);
            q.dot(&k)
        };
        assert!((dot_at(5, 3) - dot_at(12, 10)).abs() < 1e-5);
        assert!((dot_at(7, 7) - q0.dot(&k0)).abs() < 1e-5);
    }

    #[test]
    fn softmax_matches_hand_values_and_gives_masked_entries_zero() {
        let mut x = array![[0.0f32, (2.0f32).ln(), f32::NEG_INFINITY, (5.0f32).ln()]];
        softmax_rows(x.view_mut());
        // e^0 : e^ln2 : 0 : e^ln5 = 1 : 2 : 0 : 5
        let want = [1.0 / 8.0, 2.0 / 8.0, 0.0, 5.0 / 8.0];
        for (a, b) in x.iter().zip(want) {
            assert!((a - b).abs() < 1e-6, "{x}");
        }
        let mut big = array![[1000.0f32, 1000.0]];
        softmax_rows(big.view_mut());
        assert_eq!(
            big,
            array![[0.5, 0.5]],
            "subtracting the max avoids overflow"
        );
    }

    #[test]
    fn mismatched_shapes_are_errors_not_panics() {
        let x = array![[1.0f32, 2.0]];
        assert!(matches!(
            rms_norm(x.view(), array![1.0f32].view(), 0.0),
            Err(Error::Shape(_))
        ));
        let (cos, sin) = rope_tables(4, 4, 10000.0).unwrap();
        let mut h = array![1.0f32, 2.0, 3.0, 4.0];
        assert!(matches!(
            apply_rope(h.view_mut(), 4, cos.view(), sin.view()),
            Err(Error::TooLong { .. })
        ));
        let mut odd = array![1.0f32, 2.0];
        assert!(matches!(
            apply_rope(odd.view_mut(), 1, cos.view(), sin.view()),
            Err(Error::Shape(_))
        ));
        let mut g = array![[1.0f32, 2.0]];
        assert!(matches!(
            swiglu(g.view_mut(), array![[1.0f32]].view()),
            Err(Error::Shape(_))
        ));
    }

    /// u = 2⁻²⁴, the unit roundoff of f32.
    const U: f64 = 1.0 / 16_777_216.0;

    /// The relative error `fast_exp` promises, from its error budget (in units of u):
    /// - the polynomial against `eʳ` on |r| ≤ ln 2 / 2, exact arithmetic: below 0.05 u
    ///   (checked by `fast_exps_polynomial_is_close_to_exp_in_exact_arithmetic`);
    /// - range reduction: `k·LN2_HI` and `xc − k·LN2_HI` are exact (LN2_HI has 9
    ///   significant bits, |k| ≤ 128); rounding `k·LN2_LO` and the last subtraction
    ///   leave an error in r of at most (128 · 2.2·10⁻⁴ + 0.35) u, and an error δ in r is
    ///   a relative error δ in eʳ: below 0.4 u;
    /// - evaluation: `1 + r` rounded (≤ u relative to eʳ ≥ 0.707), the small term
    ///   `r²·p` (≤ 0.07) rounded a few times (≤ 0.3 u), the final sum rounded (≤ u);
    /// - `· 2ᵏ`: exact while the result is normal.
    ///
    /// Total below 2.8 u; we promise 3 u. (Every f32 input was checked once, outside the
    /// test suite: the worst is 2.0 u, at small |x| where `1 + r` rounds.)
    const BOUND: f64 = 3.0 * U;

    /// `fast_exp(x)` against `f64::exp`: relative error within [`BOUND`], or, where eˣ is
    /// below the smallest normal f32, an absolute error within half a subnormal step.
    fn check_fast_exp(x: f32) {
        let want = f64::from(x).exp();
        let got = f64::from(fast_exp(x));
        let err = (got - want).abs();
        let ok = if want >= f64::from(f32::MIN_POSITIVE) {
            err <= BOUND * want
        } else {
            err <= BOUND * f64::from(f32::MIN_POSITIVE)
        };
        assert!(
            ok,
            "x = {x:e}: {got:e} vs {want:e}, {:.2} u",
            err / want / U
        );
    }

    #[test]
    fn fast_exp_is_within_3_units_of_roundoff_of_f64_exp_over_its_whole_range() {
        // Two million inputs spread over the whole finite range, from the clamp at the
        // bottom to the one at the top (88.4 … 88.7 included: there 2ᵏ is 2¹²⁸).
        let (lo, hi) = (-87.336_54f32, 88.722_83f32);
        let n = 2_000_000;
        for i in 0..=n {
            let x = lo + (hi - lo) * (i as f32 / n as f32);
            check_fast_exp(x.clamp(lo, hi));
        }
        // Every f32 bit pattern in [−1, 1] with a stride, where r = x and the polynomial
        // carries the whole result; and the bits around each k = round(x / ln 2).
        for bits in (0..0x3f80_0000u32).step_by(331) {
            check_fast_exp(f32::from_bits(bits));
            check_fast_exp(-f32::from_bits(bits));
        }
        for k in -125..=127 {
            let edge = (k as f32 + 0.5) * std::f32::consts::LN_2;
            let mut x = edge;
            for _ in 0..64 {
                check_fast_exp(x);
                x = f32::from_bits(x.to_bits() + 1);
            }
        }
    }

    #[test]
    fn fast_exps_polynomial_is_close_to_exp_in_exact_arithmetic() {
        // The polynomial part of the budget: Cephes' coefficients (as f32), evaluated in
        // f64 so only the truncation error is left.
        let coef = [
            1.987_569_1e-4f32,
            1.398_199_9e-3,
            8.333_452e-3,
            4.166_579_6e-2,
        ];
        let coef = coef.map(f64::from);
        let half_ln2 = std::f64::consts::LN_2 / 2.0;
        let mut worst = 0.0f64;
        for i in 0..=100_000 {
            let r = -half_ln2 + 2.0 * half_ln2 * f64::from(i) / 100_000.0;
            let p = coef.iter().fold(0.0, |acc, &c| acc * r + c);
            let p = (p * r + f64::from(1.666_666_5e-1f32)) * r + 0.5;
            let er = 1.0 + r + r * r * p;
            worst = worst.max((er / r.exp() - 1.0).abs());
        }
        assert!(worst < 0.05 * U, "truncation error {:.3} u", worst / U);
    }

    #[test]
    fn fast_exp_hand_values_clamps_and_non_finite_inputs() {
        // Exact where the result is a float: e⁰ = 1, and e^(k·ln 2) rounds to 2ᵏ.
        assert_eq!(fast_exp(0.0), 1.0);
        assert_eq!(fast_exp(-0.0), 1.0);
        assert_eq!(fast_exp(1.0), 2.718_281_7); // e rounded to f32
        assert_eq!(fast_exp(std::f32::consts::LN_2), 2.0);
        assert_eq!(fast_exp(-10.0 * std::f32::consts::LN_2), 1.0 / 1024.0);
        // The bottom clamp: e^−87.336 54 ≈ 1.175 500·10⁻³⁸, just above the smallest
        // normal f32 (1.175 494·10⁻³⁸), is the smallest non-zero result; anything below,
        // down to −∞, gives 0.
        let floor = fast_exp(-87.336_54);
        assert!(floor >= f32::MIN_POSITIVE, "{floor:e}");
        assert!(
            (f64::from(floor) / 1.175_500e-38 - 1.0).abs() < 1e-6,
            "{floor:e}"
        );
        for x in [
            -87.336_55f32,
            -88.0,
            -100.0,
            -1e30,
            f32::MIN,
            f32::NEG_INFINITY,
        ] {
            assert_eq!(fast_exp(x), 0.0, "x = {x}");
        }
        // The top clamp: e^88.722 83 ≈ 3.402 799·10³⁸ is still finite (just below
        // f32::MAX ≈ 3.402 823·10³⁸), and so is e^88.5 ≈ 2.723·10³⁸ (k = 128); the next
        // f32 above the clamp overflows, as eˣ does.
        let top = fast_exp(88.722_83);
        assert!(top.is_finite() && (f64::from(top) / 3.402_799e38 - 1.0).abs() < 1e-6);
        assert!((f64::from(fast_exp(88.5)) / 88.5f64.exp() - 1.0).abs() < BOUND);
        let above = f32::from_bits(88.722_83f32.to_bits() + 1);
        assert!(f64::from(above).exp() > f64::from(f32::MAX));
        for x in [above, 89.0, 100.0, f32::MAX, f32::INFINITY] {
            assert_eq!(fast_exp(x), f32::INFINITY, "x = {x}");
        }
        assert!(fast_exp(f32::NAN).is_nan());
        assert!(fast_exp(-f32::NAN).is_nan());
    }

    #[test]
    fn fused_swiglu_reads_gate_then_up_from_one_row() {
        let gate_up = array![
            [1.0f32, 0.0, -2.0, 2.0, 5.0, -1.0],
            [0.5, 0.5, 0.5, 1.0, 2.0, 3.0]
        ];
        let mut act = Array2::zeros((2, 3));
        swiglu_into(gate_up.view(), act.view_mut());
        let mut gate = gate_up.slice(ndarray::s![.., ..3]).to_owned();
        swiglu(gate.view_mut(), gate_up.slice(ndarray::s![.., 3..])).unwrap();
        assert_eq!(act, gate);
        // A strided output (every other column) takes the general path, same values.
        let mut wide = Array2::zeros((2, 6));
        swiglu_into(gate_up.view(), wide.slice_mut(ndarray::s![.., ..;2]));
        assert_eq!(wide.slice(ndarray::s![.., ..;2]), gate);
    }

    #[test]
    fn swiglu_is_silu_of_the_gate_times_up() {
        assert_eq!(silu(0.0), 0.0);
        assert!((silu(1.0) - 0.731_058_6).abs() < 1e-6); // 1 / (1 + e^-1)
        assert!((silu(-2.0) - (-0.238_405_8)).abs() < 1e-6); // -2 / (1 + e^2)
        let mut gate = array![[1.0f32, 0.0, -2.0]];
        swiglu(gate.view_mut(), array![[2.0f32, 5.0, -1.0]].view()).unwrap();
        let want = [2.0 * 0.731_058_6, 0.0, 0.238_405_8];
        for (a, b) in gate.iter().zip(want) {
            assert!((a - b).abs() < 1e-6, "{gate}");
        }
    }
}
