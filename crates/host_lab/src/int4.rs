//! Weights stored and read as 4-bit integers in groups, each group with its scale: the
//! INT4 draft's matrices, and the decode-shaped product that dequantizes them in registers.
//!
//! A quantized copy kept in f32 ("fake quantization", as `quant_lab` measures accuracy)
//! reads exactly as many bytes as the model it copies, so as a draft it could never be
//! cheaper. [`Int4Matrix`] stores what an INT4 serving kernel stores: per weight a 4-bit
//! code, and per group of [`GROUP`] consecutive input rows of one output column a bf16
//! scale — 4 + 16/64 = 4.25 bits per weight, 0.133 of f32 (about an eighth).
//!
//! # Quantization
//! Symmetric abs-max per group, as `quant_lab`'s `int4-gN` scheme: `s = absmax / 7`,
//! `q = clamp(round_half_even(w / s), −8, 7)`, stored as the nibble `q + 8`. The scale is
//! stored rounded to bf16 (`s'`), so a weight reads back as `(nibble − 8) · s'`, which is
//! `quant_lab`'s dequantized value to within bf16 rounding of the scale (2⁻⁹ relative).
//!
//! # Layout and kernel
//! Columns are cut into panels of 16 (as `transformer_lab::gemm` does for f32). In a
//! panel, input row `k` is 8 bytes: byte `j` holds column `j` in its low nibble and
//! column `j + 8` in its high nibble, so one 8-byte load, a mask and a shift give the 16
//! codes of the row as two 8-lane vectors. The product keeps per row of the input and per
//! group a 16-column partial sum `Σ a·nibble` in registers, then folds it into the output
//! as `s' ⊙ (partial − 8 · Σ a)` (the `− 8` of every code paid once per group and row).
//! It runs on all threads, split by whole panels, with AVX2 + FMA where the CPU has them.

use std::fmt;
use std::ops::Range;

use ndarray::parallel::prelude::*;
use ndarray::{Array2, ArrayView2, ArrayViewMut2, Axis};

use crate::Error;

/// Input rows sharing one scale (per output column).
pub const GROUP: usize = 64;
/// Columns per panel.
pub const PANEL: usize = 16;
/// Rows of the input per register block of the kernel (at most).
const ROWS: usize = 4;
/// Panels per parallel piece.
const PANELS_PER_PIECE: usize = 4;

/// A weight matrix `W [k, n]` of `y = x · W`, stored as 4-bit codes with one bf16 scale
/// per [`GROUP`] input rows of each column (see the module documentation).
#[derive(Clone)]
pub struct Int4Matrix {
    k: usize,
    n: usize,
    /// Panel p, row r: 8 bytes at `(p · k + r) · 8`.
    codes: Vec<u8>,
    /// Panel p, group g: 16 bf16 scales at `(p · groups + g) · 16`.
    scales: Vec<u16>,
}

impl fmt::Debug for Int4Matrix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Int4Matrix [{} × {}], g{GROUP}", self.k, self.n)
    }
}

/// `x.round_ties_even()` by two additions (|x| < 2²²), as `quant_lab` rounds.
fn round_half_even(x: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0;
    ((x + MAGIC) - MAGIC).copysign(x)
}

/// f32 → bf16, round to nearest even (finite inputs).
fn to_bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    let round = 0x7fff + ((bits >> 16) & 1);
    (bits.wrapping_add(round) >> 16) as u16
}

/// bf16 → f32 (exact).
#[inline(always)]
fn from_bf16(b: u16) -> f32 {
    f32::from_bits(u32::from(b) << 16)
}

impl Int4Matrix {
    /// Quantizes the columns of `parts` (matrices with the same number of rows, side by
    /// side, as `W_q | W_k | W_v`). Errors: no parts, parts of different row counts, a row
    /// count that [`GROUP`] does not divide, a weight that is not finite.
    pub fn quantize(parts: &[ArrayView2<f32>]) -> Result<Self, Error> {
        let Some(first) = parts.first() else {
            return Err(Error::Argument(
                "nothing to quantize: no matrices given".into(),
            ));
        };
        let k = first.nrows();
        if parts.iter().any(|p| p.nrows() != k) {
            return Err(Error::Argument(
                "matrices quantized side by side need the same number of rows".into(),
            ));
        }
        if k == 0 || k % GROUP != 0 {
            return Err(Error::Argument(format!(
                "INT4 groups of {GROUP} rows do not divide an input dimension of {k}"
            )));
        }
        if parts.iter().any(|p| p.iter().any(|x| !x.is_finite())) {
            return Err(Error::Argument(
                "cannot quantize a weight that is not finite".into(),
            ));
        }
        let n: usize = parts.iter().map(|p| p.ncols()).sum();
        let panels = n.div_ceil(PANEL);
        let groups = k / GROUP;
        let mut codes = vec![0x88u8; panels * k * 8]; // padding columns: code 8 = 0
        let mut scales = vec![0u16; panels * groups * PANEL];
        let mut c0 = 0;
        for part in parts {
            for j in 0..part.ncols() {
                let c = c0 + j;
                let (p, lane) = (c / PANEL, c % PANEL);
                let col = part.column(j);
                for g in 0..groups {
                    let rows = g * GROUP..(g + 1) * GROUP;
                    let absmax = rows.clone().map(|r| col[r].abs()).fold(0.0f32, f32::max);
                    let s = absmax / 7.0;
                    scales[(p * groups + g) * PANEL + lane] = to_bf16(s);
                    for r in rows {
                        let q = if s == 0.0 {
                            0.0
                        } else {
                            round_half_even((col[r] / s).clamp(-8.0, 7.0))
                        };
                        let nib = (q as i32 + 8) as u8;
                        let byte = &mut codes[(p * k + r) * 8 + lane % 8];
                        *byte = if lane < 8 {
                            (*byte & 0xf0) | nib
                        } else {
                            (*byte & 0x0f) | (nib << 4)
                        };
                    }
                }
            }
            c0 += part.ncols();
        }
        Ok(Int4Matrix {
            k,
            n,
            codes,
            scales,
        })
    }

    /// Rows of `W` (the inner dimension of the product).
    pub fn nrows(&self) -> usize {
        self.k
    }

    /// Columns of `W`.
    pub fn ncols(&self) -> usize {
        self.n
    }

    /// Bytes a product reads from this matrix: the codes and the scales, padding included.
    pub fn bytes(&self) -> usize {
        self.codes.len() + 2 * self.scales.len()
    }

    /// The weights as they read back, `(nibble − 8) · scale`, as an f32 matrix `[k, n]`.
    pub fn dequantize(&self) -> Array2<f32> {
        let groups = self.k / GROUP;
        Array2::from_shape_fn((self.k, self.n), |(r, c)| {
            let (p, lane) = (c / PANEL, c % PANEL);
            let byte = self.codes[(p * self.k + r) * 8 + lane % 8];
            let nib = if lane < 8 { byte & 0x0f } else { byte >> 4 };
            let s = from_bf16(self.scales[(p * groups + r / GROUP) * PANEL + lane]);
            (f32::from(nib) - 8.0) * s
        })
    }

    fn panels(&self) -> usize {
        self.n.div_ceil(PANEL)
    }
}

/// `out = a · W` for `a [m, k]`, `out [m, n]`, on all threads of rayon's pool.
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
/// assert!((out[[0, 0]] - 1.3).abs() < 0.01); // 0.7 + 2 · 0.3, bf16 scale
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
    let a = a.as_standard_layout();
    let a = a.as_slice().expect("standard layout");
    let groups = w.k / GROUP;
    // Σ a over each group of each row: [m, groups].
    let asum: Vec<f32> = a
        .chunks_exact(GROUP)
        .map(|g| g.iter().sum::<f32>())
        .collect();
    let cols = PANELS_PER_PIECE * PANEL;
    let panels = w.panels();
    let pieces: Vec<(Range<usize>, ArrayViewMut2<f32>)> = out
        .axis_chunks_iter_mut(Axis(1), cols)
        .enumerate()
        .map(|(i, o)| {
            (
                i * PANELS_PER_PIECE..((i + 1) * PANELS_PER_PIECE).min(panels),
                o,
            )
        })
        .collect();
    let piece = |(range, mut o): (Range<usize>, ArrayViewMut2<f32>)| {
        let mut rows: Vec<&mut [f32]> = o
            .outer_iter_mut()
            .map(|r| r.into_slice().expect("contiguous output rows"))
            .collect();
        product(a, &asum, groups, w, range, &mut rows);
    };
    if parallel {
        pieces.into_par_iter().for_each(piece);
    } else {
        pieces.into_iter().for_each(piece);
    }
    Ok(())
}

crate::cpu::with_avx2! {
    /// [`product_body`], with AVX2 + FMA where the CPU has them.
    fn product(a: &[f32], asum: &[f32], groups: usize, w: &Int4Matrix, panels: Range<usize>, rows: &mut [&mut [f32]])
        => product_body
}

/// `rows = a · W[:, panels]`, `a` being `rows.len()` rows of `k` floats.
#[inline(always)]
fn product_body(
    a: &[f32],
    asum: &[f32],
    groups: usize,
    w: &Int4Matrix,
    panels: Range<usize>,
    rows: &mut [&mut [f32]],
) {
    let k = w.k;
    let c0 = panels.start * PANEL;
    let n_out = rows.first().map_or(0, |r| r.len());
    let m = rows.len();
    for p in panels {
        let codes = &w.codes[p * k * 8..(p + 1) * k * 8];
        let scales = &w.scales[p * groups * PANEL..(p + 1) * groups * PANEL];
        let col = p * PANEL - c0;
        let width = PANEL.min(n_out - col);
        let mut r0 = 0;
        while r0 < m {
            let r = ROWS.min(m - r0);
            macro_rules! block {
                ($r:literal, $u:literal) => {{
                    let t = tile::<$r, $u>(
                        &a[r0 * k..],
                        &asum[r0 * groups..],
                        k,
                        groups,
                        codes,
                        scales,
                    );
                    for (row, t) in rows[r0..r0 + $r].iter_mut().zip(&t) {
                        row[col..col + width].copy_from_slice(&t[..width]);
                    }
                }};
            }
            match r {
                4 => block!(4, 1),
                3 => block!(3, 1),
                2 => block!(2, 2),
                _ => block!(1, 4),
            }
            r0 += r;
        }
    }
}

/// `R` rows of `a` times one panel: per group, partial sums of `a · nibble` in registers,
/// folded into the result with the group's scales. The group's rows are dealt round-robin
/// to `U` sets of partial sums, so that `U · R · 2` independent chains of fused
/// multiply-adds hide the instruction's latency even for a single row.
// Indices, not iterators: the register tile reads as the arithmetic it does.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn tile<const R: usize, const U: usize>(
    a: &[f32],
    asum: &[f32],
    k: usize,
    groups: usize,
    codes: &[u8],
    scales: &[u16],
) -> [[f32; PANEL]; R] {
    let mut total = [[0.0f32; PANEL]; R];
    let a: [&[f32]; R] = std::array::from_fn(|r| &a[r * k..(r + 1) * k]);
    for g in 0..groups {
        let mut part = [[[0.0f32; PANEL]; R]; U];
        let g0 = g * GROUP;
        // Fixed-size views: every index below is checked at compile time.
        let group_codes: &[u8; GROUP * 8] = codes[g0 * 8..(g0 + GROUP) * 8]
            .try_into()
            .expect("a group of codes");
        let ag: [&[f32; GROUP]; R] =
            std::array::from_fn(|r| a[r][g0..g0 + GROUP].try_into().expect("a group of inputs"));
        for step in 0..GROUP / U {
            for u in 0..U {
                let kk = step * U + u;
                // One 8-byte row, zero-extended to 32-bit lanes once; the low nibbles are
                // columns 0..8, the high ones 8..16.
                let z: [i32; 8] = std::array::from_fn(|j| i32::from(group_codes[kk * 8 + j]));
                let mut wv = [0.0f32; PANEL];
                for j in 0..8 {
                    wv[j] = (z[j] & 0x0f) as f32;
                    wv[j + 8] = (z[j] >> 4) as f32;
                }
                for r in 0..R {
                    let x = ag[r][kk];
                    for j in 0..PANEL {
                        part[u][r][j] = x.mul_add(wv[j], part[u][r][j]);
                    }
                }
            }
        }
        let s: [f32; PANEL] = std::array::from_fn(|j| from_bf16(scales[g * PANEL + j]));
        for r in 0..R {
            let shift = 8.0 * asum[r * groups + g];
            for j in 0..PANEL {
                let mut p = part[0][r][j];
                for pu in &part[1..] {
                    p += pu[r][j];
                }
                total[r][j] = s[j].mul_add(p - shift, total[r][j]);
            }
        }
    }
    total
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

    #[test]
    fn the_kernel_equals_the_dequantized_product() {
        // Every row remainder (1..=4 and more), a padded last panel, several pieces.
        for (m, k, n) in [
            (1, 64, 16),
            (3, 128, 40),
            (5, 192, 100),
            (9, 64, 129),
            (32, 256, 256),
        ] {
            let w = matrix(k, n, (m * n) as u64);
            let a = matrix(m, k, k as u64) * 20.0;
            let q = Int4Matrix::quantize(&[w.view()]).unwrap();
            let expected = a.dot(&q.dequantize());
            let mut out = Array2::from_elem((m, n), f32::NAN);
            matmul(a.view(), &q, out.view_mut()).unwrap();
            let scale = expected.iter().fold(0.0f32, |s, x| s.max(x.abs()));
            let worst = (&out - &expected)
                .iter()
                .fold(0.0f32, |s, x| s.max(x.abs()));
            assert!(
                worst <= 1e-5 * scale.max(1.0),
                "{m}×{k}×{n}: {worst} of {scale}"
            );
        }
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

    #[test]
    fn bf16_rounds_to_nearest_even() {
        assert_eq!(from_bf16(to_bf16(1.0)), 1.0);
        // 1 + 2⁻⁸ is halfway between bf16 neighbours 1 and 1 + 2⁻⁷: ties to even (1).
        assert_eq!(from_bf16(to_bf16(1.0 + 2f32.powi(-8))), 1.0);
        assert_eq!(
            from_bf16(to_bf16(1.0 + 3.0 * 2f32.powi(-8))),
            1.0 + 2f32.powi(-6)
        );
    }
}
