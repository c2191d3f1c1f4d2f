//! Weights stored and read as 4-bit integers in groups, each group with its scale: the
//! INT4 draft's matrices, and the decode-shaped product that reads them without expanding
//! them to floats.
//!
//! A quantized copy kept in f32 ("fake quantization", as `quant_lab` measures accuracy)
//! reads exactly as many bytes as the model it copies, so as a draft it could never be
//! cheaper. [`Int4Matrix`] stores what an INT4 serving kernel stores: per weight a 4-bit
//! code, and per group of [`GROUP`] consecutive input rows of one output column a bf16
//! scale — 4 + 16/64 = 4.25 bits per weight, 0.133 of f32 (about an eighth).
//!
//! # The product (W4A8)
//! Turning every 4-bit code into a float costs more instructions than the multiply-add it
//! feeds, so at one row of input the product would be bound by unpacking, not by memory.
//! As llama.cpp's `Q4_0 × Q8_0` does, [`matmul`] instead quantizes each row of the
//! *activations* per group of [`GROUP`] to int8 (`s_a = absmax / 127`, round half to even)
//! and sums `a_q · nibble` in 32-bit integers — exact — then folds each group into the f32
//! result: `out += ((Σ a_q · nibble) − 8 · Σ a_q) · s' · s_a`. So the result is exactly (to
//! f32 rounding of the fold) the product of the int8-dequantized activations with the
//! INT4-dequantized weights ([`matmul_reference`] computes that in f64 for the tests).
//!
//! The codes and their layout are `int4/matrix.rs`'s; the kernels are `int4/kernel.rs`
//! (portable) and `int4/avx2.rs`, which give the same bits.

mod avx2;
mod kernel;
mod matrix;

use std::ops::Range;

use ndarray::parallel::prelude::*;
use ndarray::{Array2, ArrayView2, ArrayViewMut2, Axis};

use crate::Error;
use kernel::{QuantRows, product_portable, quantize_rows};
pub use matrix::{GROUP, Int4Matrix, PANEL};

/// Panels per parallel piece, at least.
const PANELS_PER_PIECE: usize = 8;

/// `out = a · W` for `a [m, k]`, `out [m, n]`, on all threads of rayon's pool: the W4A8
/// product of the module documentation (activations quantized to int8 per group).
///
/// Errors when the shapes do not agree or the rows of `out` are not contiguous.
///
/// ```
/// use ndarray::{Array2, array};
/// use host_lab::int4::{Int4Matrix, matmul};
/// // A column of 64 rows: 0.7 quantizes to 7 · 0.1, 0.3 to 3 · 0.1.
/// let mut w = Array2::<f32>::zeros((64, 1));
/// w[[0, 0]] = 0.7;
/// w[[1, 0]] = 0.3;
/// let q = Int4Matrix::quantize(&[w.view()]).unwrap();
/// let mut a = Array2::<f32>::zeros((1, 64));
/// a[[0, 0]] = 1.0;
/// a[[0, 1]] = 2.0;
/// let mut out = Array2::zeros((1, 1));
/// matmul(a.view(), &q, out.view_mut()).unwrap();
/// assert!((out[[0, 0]] - 1.3).abs() < 0.01); // 0.7 + 2 · 0.3, bf16 scale, int8 input
/// ```
pub fn matmul(a: ArrayView2<f32>, w: &Int4Matrix, out: ArrayViewMut2<f32>) -> Result<(), Error> {
    matmul_with(a, w, out, true)
}

/// [`matmul`] on the calling thread only (for measuring the kernel on every thread at once).
pub fn matmul_single_thread(
    a: ArrayView2<f32>,
    w: &Int4Matrix,
    out: ArrayViewMut2<f32>,
) -> Result<(), Error> {
    matmul_with(a, w, out, false)
}

/// What [`matmul`] computes, in f64 from the dequantized operands: `â · Ŵ` with `â` the
/// int8-dequantized activations and `Ŵ` [`Int4Matrix::dequantize`] (for tests).
///
/// Errors: `a`'s columns are not `w`'s rows.
pub fn matmul_reference(a: ArrayView2<f32>, w: &Int4Matrix) -> Result<Array2<f64>, Error> {
    if a.ncols() != w.k {
        return Err(Error::Argument(format!(
            "INT4 product: {:?} · [{} × {}]",
            a.dim(),
            w.k,
            w.n
        )));
    }
    let a = a.as_standard_layout();
    let qa = quantize_rows(a.as_slice().expect("standard layout"));
    let k = a.ncols();
    let groups = k / GROUP;
    let wd = w.dequantize();
    Ok(Array2::from_shape_fn((a.nrows(), w.n), |(r, c)| {
        (0..k)
            .map(|kk| {
                let ah = f64::from(qa.q[r * k + kk]) * f64::from(qa.scale[r * groups + kk / GROUP]);
                ah * f64::from(wd[[kk, c]])
            })
            .sum()
    }))
}

fn matmul_with(
    a: ArrayView2<f32>,
    w: &Int4Matrix,
    mut out: ArrayViewMut2<f32>,
    parallel: bool,
) -> Result<(), Error> {
    if a.ncols() != w.k || out.dim() != (a.nrows(), w.n) {
        return Err(Error::Argument(format!(
            "INT4 product: {:?} · [{} × {}] into {:?}",
            a.dim(),
            w.k,
            w.n,
            out.dim()
        )));
    }
    if out.nrows() > 0 && out.ncols() > 1 && out.strides()[1] != 1 {
        return Err(Error::Argument(
            "the output's rows must be contiguous".into(),
        ));
    }
    if a.nrows() == 0 || w.n == 0 {
        return Ok(());
    }
    // The activations are quantized to int8 per group: a NaN or infinite one has no
    // scale, and its whole group would silently read as zeros.
    if let Some(((r, c), v)) = a.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(Error::Argument(format!(
            "INT4 product: activation [{r}, {c}] is {v}; the int8 activations need finite inputs"
        )));
    }
    let a = a.as_standard_layout();
    let qa = quantize_rows(a.as_slice().expect("standard layout"));
    let panels = w.panels();
    // Pieces of at least 2¹⁸ multiply-adds (a rayon task costs about a microsecond), at
    // least PANELS_PER_PIECE panels, but no fewer than two pieces per thread.
    let per_piece = ((1usize << 18) / (w.k * PANEL * a.nrows().max(1)))
        .min(panels / (2 * rayon::current_num_threads()).max(1))
        .max(PANELS_PER_PIECE);
    let cols = per_piece * PANEL;
    let pieces: Vec<(Range<usize>, ArrayViewMut2<f32>)> = out
        .axis_chunks_iter_mut(Axis(1), cols)
        .enumerate()
        .map(|(i, o)| (i * per_piece..((i + 1) * per_piece).min(panels), o))
        .collect();
    let piece = |(range, mut o): (Range<usize>, ArrayViewMut2<f32>)| {
        let mut rows: Vec<&mut [f32]> = o
            .outer_iter_mut()
            .map(|r| r.into_slice().expect("contiguous output rows"))
            .collect();
        product(&qa, w, range, &mut rows);
    };
    if parallel {
        pieces.into_par_iter().for_each(piece);
    } else {
        pieces.into_iter().for_each(piece);
    }
    Ok(())
}

/// `rows = a · W[:, panels]`: the AVX2 kernel where the CPU has AVX2, the portable one
/// otherwise (same bits).
fn product(a: &QuantRows, w: &Int4Matrix, panels: Range<usize>, rows: &mut [&mut [f32]]) {
    #[cfg(target_arch = "x86_64")]
    if transformer_lab::cpu::has_avx2_fma() {
        // SAFETY: the AVX2 kernel needs nothing but a CPU with AVX2 and FMA, which was
        // checked on the line above.
        #[allow(unsafe_code)]
        return unsafe { avx2::product(a, w, panels, rows) };
    }
    product_portable(a, w, panels, rows);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::s;

    fn matrix(rows: usize, cols: usize, seed: u64) -> Array2<f32> {
        // A small xorshift stream: values in (−0.05, 0.05), no structure to lean on.
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        Array2::from_shape_fn((rows, cols), |_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.1
        })
    }

    fn kernel(a: ArrayView2<f32>, q: &Int4Matrix) -> Array2<f32> {
        let mut out = Array2::from_elem((a.nrows(), q.ncols()), f32::NAN);
        matmul(a, q, out.view_mut()).unwrap();
        out
    }

    const SHAPES: [(usize, usize, usize); 6] = [
        // Every row remainder (1..=4 and more), a padded last panel, several pieces.
        (1, 64, 8),
        (3, 128, 40),
        (5, 192, 100),
        (9, 64, 129),
        (32, 256, 256),
        (2, 768, 2304),
    ];

    #[test]
    fn the_kernel_is_the_product_of_the_dequantized_activations_and_weights() {
        for (m, k, n) in SHAPES {
            let w = matrix(k, n, (m * n) as u64);
            let a = matrix(m, k, k as u64) * 20.0;
            let q = Int4Matrix::quantize(&[w.view()]).unwrap();
            let exact = matmul_reference(a.view(), &q).unwrap();
            let out = kernel(a.view(), &q);
            let scale = exact.iter().fold(0.0f64, |s, x| s.max(x.abs()));
            let worst = out
                .iter()
                .zip(exact.iter())
                .fold(0.0f64, |s, (x, y)| s.max((f64::from(*x) - y).abs()));
            assert!(
                worst <= 1e-5 * scale.max(1.0),
                "{m}×{k}×{n}: {worst} of {scale}"
            );
            // And int8 activations cost little: close to the f32 activations' product.
            let f32_act = a.dot(&q.dequantize());
            let size = f32_act.iter().fold(0.0f32, |s, x| s.max(x.abs()));
            let off = (&out - &f32_act).iter().fold(0.0f32, |s, x| s.max(x.abs()));
            assert!(off < 0.03 * size, "{m}×{k}×{n}: {off} of {size}");
        }
    }

    #[test]
    fn the_avx2_kernel_gives_the_portable_kernels_bits() {
        for (m, k, n) in SHAPES {
            let w = matrix(k, n, n as u64 + 1);
            let a = matrix(m, k, m as u64 + 2);
            let q = Int4Matrix::quantize(&[w.view()]).unwrap();
            let qa = quantize_rows(a.as_slice().unwrap());
            let mut portable = Array2::from_elem((m, n), f32::NAN);
            {
                let mut rows: Vec<&mut [f32]> = portable
                    .outer_iter_mut()
                    .map(|r| r.into_slice().unwrap())
                    .collect();
                product_portable(&qa, &q, 0..q.panels(), &mut rows);
            }
            assert_eq!(kernel(a.view(), &q), portable, "{m}×{k}×{n}");
        }
    }

    #[test]
    fn activations_quantize_to_int8_per_group_with_their_sums() {
        let mut a = vec![0.0f32; 2 * GROUP];
        a[0] = 1.27;
        a[1] = -0.5; // −0.5 / 0.01 = −50
        a[2] = 0.005; // 0.5 → rounds half to even: 0
        a[3] = 0.015; // 1.5 → 2
        let q = quantize_rows(&a);
        assert_eq!(&q.q[..4], &[127, -50, 0, 2]);
        assert!((q.scale[0] - 0.01).abs() < 1e-9);
        assert_eq!(q.sum, vec![127 - 50 + 2, 0]);
        assert_eq!(q.scale[1], 0.0); // a group of zeros
    }

    #[test]
    fn dequantized_weights_are_quant_labs_int4_to_bf16_rounding_of_the_scale() {
        let w = matrix(128, 48, 7);
        let scheme = quant_lab::Scheme::parse(&format!("int4-g{GROUP}")).unwrap();
        let reference = quant_lab::quantize_matrix(w.view(), scheme).unwrap();
        let ours = Int4Matrix::quantize(&[w.view()]).unwrap().dequantize();
        for (x, y) in ours.iter().zip(reference.iter()) {
            assert!(
                (x - y).abs() <= y.abs() * 2f32.powi(-8) + 1e-12,
                "{x} vs {y}"
            );
        }
        // And the quantization is not the identity: it moved the weights.
        assert!(ours.iter().zip(w.iter()).any(|(x, y)| (x - y).abs() > 1e-4));
    }

    #[test]
    fn an_int4_matrix_reads_about_an_eighth_of_its_f32_bytes() {
        let q = Int4Matrix::quantize(&[matrix(768, 2048, 1).view()]).unwrap();
        let f32_bytes = 4 * 768 * 2048;
        assert_eq!(q.bytes(), 768 * 2048 / 2 + 2 * 768 * 2048 / GROUP);
        let ratio = q.bytes() as f64 / f32_bytes as f64;
        assert!((ratio - 4.25 / 32.0).abs() < 1e-12, "{ratio}");
    }

    #[test]
    fn parts_side_by_side_are_one_wider_matrix_and_bad_shapes_are_errors() {
        let (a, b) = (matrix(64, 10, 1), matrix(64, 20, 2));
        let joined = ndarray::concatenate![Axis(1), a, b];
        let two = Int4Matrix::quantize(&[a.view(), b.view()]).unwrap();
        let one = Int4Matrix::quantize(&[joined.view()]).unwrap();
        assert_eq!(two.dequantize(), one.dequantize());
        assert_eq!(
            two.dequantize().slice(s![.., 10..]),
            Int4Matrix::quantize(&[b.view()]).unwrap().dequantize()
        );
        assert!(Int4Matrix::quantize(&[]).is_err());
        assert!(Int4Matrix::quantize(&[matrix(60, 4, 0).view()]).is_err());
        assert!(Int4Matrix::quantize(&[a.view(), matrix(128, 2, 0).view()]).is_err());
        let mut out = Array2::zeros((2, 31));
        assert!(matmul(matrix(2, 64, 0).view(), &one, out.view_mut()).is_err());
        let mut wide = Array2::zeros((2, 60));
        assert!(matmul(matrix(2, 64, 0).view(), &one, wide.slice_mut(s![.., ..;2])).is_err());
    }
}
