//! Matrix products against weights packed once, when the model is built.
//!
//! A general matrix product (`matrixmultiply`, BLAS) copies both operands into
//! cache-friendly panels on every call. For a decode step of a few dozen rows that copy
//! of the *weights* costs as much as a sixth of the step, although the weights never
//! change. [`PackedMatrix`] does that copy once: the columns of `W [k, n]` are cut into
//! panels of [`NR`] columns, each stored as `k` contiguous rows of `NR` floats (the last
//! panel padded with zeros). A product then streams the activations row by row and the
//! panels straight from memory through a small register-blocked kernel: [`MR`] rows ×
//! [`NR`] columns of the output held in 10 of the 16 AVX registers, one fused
//! multiply-add per weight per row. (Measured on the CI machine: 4 rows leave the FMA
//! units waiting on their own results, 6 run out of registers and spill.) A CPU with
//! AVX-512 runs the same products 16 floats per instruction, a block over two panels at
//! once (`gemm/avx512.rs`); each output element is the same chain either way.
//!
//! A panel is read from memory by the first row block and from L2 by the others; the
//! hardware prefetcher follows only misses, so while the later blocks compute, memory
//! would sit idle. Each block therefore prefetches its share of the next panel
//! (`cpu::prefetch_l2`, x86-64 only; a hint, so it changes no bit): a product of several
//! blocks reads memory while it computes, which is what the roofline's `max` assumes. One
//! or two rows (one block, all of its loads misses, which the hardware prefetcher follows)
//! issue no prefetch; they run over 4 or 2 panels at once instead, to keep 8 sums in flight.
//!
//! # Bits and machines
//! Every output element is `fma(a[k-1], w[k-1], … fma(a[1], w[1], fma(a[0], w[0], 0)) …)`,
//! in that order, whatever the shapes, the tiling or the number of threads: a product
//! split into pieces gives exactly the bits of the whole. The kernel needs hardware
//! fused multiply-add: x86-64 with AVX2 and FMA (detected at run time; Intel since
//! Haswell, 2013, AMD since 2015, apart from some low-end parts) or any aarch64 CPU.
//! Elsewhere [`PackedMatrix::available`] is false and the model falls back to
//! `matrixmultiply` on the unpacked weights, whose last bits can differ.

use std::fmt;
use std::ops::Range;

use ndarray::parallel::prelude::*;
use ndarray::{ArrayView2, ArrayViewMut2, Axis};

use crate::Error;
use crate::kernels::{COL_PIECE, Pieces, pieces};

#[cfg(target_arch = "x86_64")]
mod avx512;

/// Columns per panel (two 8-float AVX registers).
pub const NR: usize = 16;
/// Rows per register block of the kernel (at most; blocks are evened out).
pub const MR: usize = 5;

// Whole panels per piece when a product is split by output columns.
const _: () = assert!(COL_PIECE.is_multiple_of(NR));

/// The weight matrix `W [k, n]` of `y = x · W`, packed for [`matmul`]: the
/// columns of one or more matrices with the same number of rows, side by side (so
/// `W_q | W_k | W_v` become one product), in panels of [`NR`] columns.
#[derive(Clone)]
pub struct PackedMatrix {
    k: usize,
    n: usize,
    /// Panel p holds columns `p·NR .. (p+1)·NR` as `k` rows of `NR` floats.
    data: Vec<f32>,
}

impl fmt::Debug for PackedMatrix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PackedMatrix [{} × {}]", self.k, self.n)
    }
}

impl PackedMatrix {
    /// Whether this machine runs the packed kernel (see the module documentation).
    pub fn available() -> bool {
        // aarch64: Advanced SIMD with fused multiply-add is part of every aarch64 CPU.
        cfg!(target_arch = "aarch64") || x86_avx2_fma()
    }

    /// Packs the columns of `parts` side by side. Errors if `parts` is empty or the parts
    /// differ in their number of rows.
    pub fn new(parts: &[ArrayView2<f32>]) -> Result<Self, Error> {
        let Some(first) = parts.first() else {
            return Err(Error::Shape("nothing to pack: no matrices given".into()));
        };
        let k = first.nrows();
        if parts.iter().any(|p| p.nrows() != k) {
            let rows: Vec<usize> = parts.iter().map(|p| p.nrows()).collect();
            return Err(Error::Shape(format!(
                "matrices packed side by side need the same number of rows, got {rows:?}"
            )));
        }
        let n: usize = parts.iter().map(|p| p.ncols()).sum();
        let panels = n.div_ceil(NR);
        let mut data = vec![0.0f32; panels * k * NR];
        // Row by row: sequential reads, and each run of NR columns lands contiguously.
        let mut c0 = 0;
        for part in parts {
            for (row, values) in part.outer_iter().enumerate() {
                for (j, &x) in values.iter().enumerate() {
                    let c = c0 + j;
                    data[(c / NR) * k * NR + row * NR + c % NR] = x;
                }
            }
            c0 += part.ncols();
        }
        Ok(PackedMatrix { k, n, data })
    }

    /// Rows of `W` (the inner dimension of the product).
    pub fn nrows(&self) -> usize {
        self.k
    }

    /// Columns of `W` (all parts together).
    pub fn ncols(&self) -> usize {
        self.n
    }

    fn panels(&self) -> usize {
        self.n.div_ceil(NR)
    }

    fn panel(&self, p: usize) -> &[f32] {
        &self.data[p * self.k * NR..(p + 1) * self.k * NR]
    }
}

/// `out = a · W` for `a [m, k]` and `out [m, n]`, on the calling thread.
///
/// Errors when the shapes do not agree or the rows of `out` are not contiguous (a view
/// with an inner stride other than 1). On a machine without the fused multiply-add
/// kernel (see [`PackedMatrix::available`]) the result is the same, computed slowly.
///
/// ```
/// use ndarray::{Array2, array};
/// use transformer_lab::gemm::{PackedMatrix, matmul};
/// let w = array![[1.0f32, 2.0], [3.0, 4.0]];
/// let packed = PackedMatrix::new(&[w.view()]).unwrap();
/// let mut out = Array2::zeros((1, 2));
/// matmul(array![[1.0f32, 1.0]].view(), &packed, out.view_mut()).unwrap();
/// assert_eq!(out, array![[4.0, 6.0]]);
/// ```
pub fn matmul(a: ArrayView2<f32>, w: &PackedMatrix, out: ArrayViewMut2<f32>) -> Result<(), Error> {
    check_shapes(&a, w, &out)?;
    matmul_packed(a, w, out, false);
    Ok(())
}

/// `out = a · W` for `a [m, k]` and `out [m, n]`, on rayon's pool: cut into the pieces
/// the model's own products use (by rows of `a` when it is tall, by whole panels of `W`
/// when it is short, one piece when it is small), so a measurement of it sees the products
/// of a pass as the pass runs them. The bits are those of [`matmul`].
///
/// Errors as [`matmul`].
///
/// ```
/// use ndarray::Array2;
/// use transformer_lab::gemm::{PackedMatrix, matmul, matmul_on_pool};
/// let w = Array2::from_shape_fn((64, 300), |(i, j)| ((i * 3 + j) % 7) as f32 - 3.0);
/// let a = Array2::from_shape_fn((40, 64), |(i, j)| ((i + j) % 5) as f32 * 0.5);
/// let packed = PackedMatrix::new(&[w.view()]).unwrap();
/// let (mut one, mut pool) = (Array2::zeros((40, 300)), Array2::zeros((40, 300)));
/// matmul(a.view(), &packed, one.view_mut()).unwrap();
/// matmul_on_pool(a.view(), &packed, pool.view_mut()).unwrap();
/// assert_eq!(one, pool);
/// ```
pub fn matmul_on_pool(
    a: ArrayView2<f32>,
    w: &PackedMatrix,
    out: ArrayViewMut2<f32>,
) -> Result<(), Error> {
    check_shapes(&a, w, &out)?;
    matmul_packed(a, w, out, true);
    Ok(())
}

/// The shapes [`matmul`] and [`matmul_on_pool`] accept.
fn check_shapes(
    a: &ArrayView2<f32>,
    w: &PackedMatrix,
    out: &ArrayViewMut2<f32>,
) -> Result<(), Error> {
    if a.ncols() != w.k || out.dim() != (a.nrows(), w.n) {
        return Err(Error::Shape(format!(
            "{:?} · [{} × {}] into {:?}",
            a.dim(),
            w.k,
            w.n,
            out.dim()
        )));
    }
    if out.nrows() > 0 && out.ncols() > 1 && out.strides()[1] != 1 {
        return Err(Error::Shape("the output's rows must be contiguous".into()));
    }
    Ok(())
}

/// `out = a · W`, `a [m, k]`, `out [m, n]`. With `split`, the product is cut into the
/// same [`pieces`] as the model's other products (by rows of `a` when it is tall, by whole
/// panels of `W` when it is short); the bits do not depend on it.
///
/// Callers check the shapes; rows of `out` must be contiguous (inner stride 1), which they
/// are for any slice of a standard-layout array.
pub(crate) fn matmul_packed(
    a: ArrayView2<f32>,
    w: &PackedMatrix,
    mut out: ArrayViewMut2<f32>,
    split: bool,
) {
    debug_assert_eq!(a.ncols(), w.k);
    debug_assert_eq!(out.dim(), (a.nrows(), w.n));
    let a = a.as_standard_layout();
    let panels = w.panels();
    match pieces(a.nrows(), w.k, w.n, split) {
        Pieces::Whole => product(a.view(), w, 0..panels, out),
        Pieces::Rows(rows) => out
            .axis_chunks_iter_mut(Axis(0), rows)
            .into_par_iter()
            .zip(a.axis_chunks_iter(Axis(0), rows))
            .for_each(|(o, a)| product(a, w, 0..panels, o)),
        Pieces::Columns(cols) => {
            let per = cols / NR;
            let parts: Vec<_> = out
                .axis_chunks_iter_mut(Axis(1), cols)
                .enumerate()
                .map(|(i, o)| (i * per..((i + 1) * per).min(panels), o))
                .collect();
            parts
                .into_par_iter()
                .for_each(|(range, o)| product(a.view(), w, range, o));
        }
    }
}

/// One piece: `out = a · W[:, panels]`, `out` having the columns of those panels.
fn product(
    a: ArrayView2<f32>,
    w: &PackedMatrix,
    panels: Range<usize>,
    mut out: ArrayViewMut2<f32>,
) {
    let a = a.as_slice().expect("a standard-layout input");
    let mut rows: Vec<&mut [f32]> = out
        .outer_iter_mut()
        .map(|r| r.into_slice().expect("output rows are contiguous"))
        .collect();
    product_rows(a, w, panels, &mut rows);
}

/// `rows = a · W[:, panels]`: the AVX-512 kernel ([`avx512`]) where the CPU has it, else
/// [`product_body`] ([`product_rows_avx2`]); the same bits either way.
fn product_rows(a: &[f32], w: &PackedMatrix, panels: Range<usize>, rows: &mut [&mut [f32]]) {
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::has_avx512() {
        return avx512::product_rows(a, w, panels, rows);
    }
    product_rows_avx2(a, w, panels, rows);
}

crate::cpu::with_avx2! {
    /// [`product_body`], with AVX2 + FMA where the CPU has them. Without them `mul_add` is
    /// a (slow but exact) library call on x86-64, where the model does not pack its
    /// weights; aarch64 always has fused multiply-add.
    fn product_rows_avx2(a: &[f32], w: &PackedMatrix, panels: Range<usize>, rows: &mut [&mut [f32]])
        => product_body
}

/// `rows = a · W[:, panels]` for `a` of `rows.len()` contiguous rows of `k` floats.
#[inline(always)]
fn product_body(a: &[f32], w: &PackedMatrix, panels: Range<usize>, rows: &mut [&mut [f32]]) {
    let k = w.k;
    let c0 = panels.start * NR;
    let n_out = rows.first().map_or(0, |r| r.len());
    // Row blocks as even as possible (32 rows: four of 5 and three of 4, rather than six
    // of 5 and a slow one of 2).
    let m = rows.len();
    let blocks = m.div_ceil(MR);
    let block_rows = |b: usize| m / blocks + usize::from(b < m % blocks);
    // One or two rows: each panel alone would keep only 2 or 4 sums in flight, each waiting
    // on its own last multiply-add; 4 or 2 panels at once keep 8 (the same sums, in the
    // same order).
    match m {
        1 => return across::<1, 4>(a, w, panels, rows),
        2 => return across::<2, 2>(a, w, panels, rows),
        _ => {}
    }
    for p in panels {
        let panel = w.panel(p);
        // The next panel, a share of it prefetched by each row block (past the end of a
        // piece too: the same thread usually takes the next piece).
        let next = (p + 1 < w.panels()).then(|| w.panel(p + 1));
        let col = p * NR - c0;
        let width = NR.min(n_out - col);
        let mut r0 = 0;
        for b in 0..blocks {
            let r = block_rows(b);
            let a_block = &a[r0 * k..(r0 + r) * k];
            let out_block = &mut rows[r0..r0 + r];
            r0 += r;
            let ahead = next.map(|n| Ahead::share(n, k, b, blocks));
            macro_rules! rows {
                ($r:literal) => {{
                    let t = tile::<$r>(a_block, k, panel, ahead);
                    for (row, t) in out_block.iter_mut().zip(&t) {
                        if width == NR {
                            let dst: &mut [f32; NR] =
                                (&mut row[col..col + NR]).try_into().expect("NR floats");
                            *dst = *t;
                        } else {
                            row[col..col + width].copy_from_slice(&t[..width]);
                        }
                    }
                }};
            }
            match out_block.len() {
                5 => rows!(5),
                4 => rows!(4),
                3 => rows!(3),
                2 => rows!(2),
                _ => rows!(1),
            }
        }
    }
}

/// `rows = a · W[:, panels]` for `R` ≤ 2 rows, `G` panels at a time ([`tile_across`]), the
/// panels left over one at a time ([`tile`]). One row block per panel: its lines are all
/// misses, which the hardware prefetcher follows, so no prefetch is issued.
#[inline(always)]
fn across<const R: usize, const G: usize>(
    a: &[f32],
    w: &PackedMatrix,
    panels: Range<usize>,
    rows: &mut [&mut [f32]],
) {
    let (k, c0) = (w.k, panels.start * NR);
    let n_out = rows.first().map_or(0, |r| r.len());
    let mut store = |p: usize, t: &[[f32; NR]; R]| {
        let col = p * NR - c0;
        let width = NR.min(n_out - col);
        for (row, t) in rows.iter_mut().zip(t) {
            row[col..col + width].copy_from_slice(&t[..width]);
        }
    };
    let mut p = panels.start;
    while p + G <= panels.end {
        let group: [&[f32]; G] = std::array::from_fn(|g| w.panel(p + g));
        let t = tile_across::<R, G>(a, k, group);
        for g in 0..G {
            store(p + g, &t.map(|row| row[g]));
        }
        p += G;
    }
    for p in p..panels.end {
        store(p, &tile::<R>(a, k, w.panel(p), None));
    }
}

/// `R` rows of `a` times `G` panels at once (`[r][g]`): each output element the same chain
/// of fused multiply-adds over `k` as [`tile`] computes, `2 · R · G` of them in flight.
/// (Written so that the compiler keeps every sum in a register: returning the sums panel
/// by panel instead made it spill them one float at a time, 7× slower at two rows.)
#[inline(always)]
fn tile_across<const R: usize, const G: usize>(
    a: &[f32],
    k: usize,
    panels: [&[f32]; G],
) -> [[[f32; NR]; G]; R] {
    let mut acc = [[[[0.0f32; HALF]; 2]; G]; R];
    let a: [&[f32]; R] = std::array::from_fn(|r| &a[r * k..(r + 1) * k]);
    let panels: [&[f32]; G] = panels.map(|p| &p[..k * NR]);
    for kk in 0..k {
        let halves: [[&[f32; HALF]; 2]; G] = std::array::from_fn(|g| {
            let b = &panels[g][kk * NR..(kk + 1) * NR];
            let (lo, hi) = b.split_at(HALF);
            [
                lo.try_into().expect("HALF floats"),
                hi.try_into().expect("HALF floats"),
            ]
        });
        for r in 0..R {
            let x = a[r][kk];
            for (sums, b) in acc[r].iter_mut().zip(&halves) {
                for (sums, b) in sums.iter_mut().zip(b) {
                    for (s, &w) in sums.iter_mut().zip(*b) {
                        *s = x.mul_add(w, *s);
                    }
                }
            }
        }
    }
    acc.map(|row| {
        row.map(|[lo, hi]| std::array::from_fn(|j| if j < HALF { lo[j] } else { hi[j - HALF] }))
    })
}

/// The share of the next panel one row block prefetches: its `k` rows of [`NR`] floats
/// (64 bytes each, about one cache line: the hint is issued every 64 bytes, so every line
/// of the panel is asked for whatever its alignment) cut into `blocks` contiguous shares, share `b` for block
/// `b`, one line every `blocks` steps of the block's loop over `k`.
#[derive(Clone, Copy)]
struct Ahead<'w> {
    lines: &'w [f32],
    every: usize,
}

impl<'w> Ahead<'w> {
    fn share(next: &'w [f32], k: usize, b: usize, blocks: usize) -> Self {
        let (start, end) = (b * k / blocks, (b + 1) * k / blocks);
        Ahead {
            lines: &next[start * NR..end * NR],
            every: blocks,
        }
    }
}

/// `R` rows of `a` (contiguous, `k` floats each) times one panel (`k × NR`), prefetching
/// `ahead` meanwhile (a hint only: the result is the same without it).
#[inline(always)]
fn tile<const R: usize>(
    a: &[f32],
    k: usize,
    panel: &[f32],
    ahead: Option<Ahead<'_>>,
) -> [[f32; NR]; R] {
    // Each row's 16 sums as two 8-float halves, one AVX register each (a flat 16-float
    // row let the compiler split two rows' sums into odd pieces and spill them).
    let mut acc = [[[0.0f32; HALF]; 2]; R];
    let a: [&[f32]; R] = std::array::from_fn(|r| &a[r * k..(r + 1) * k]);
    let (lines, every) = ahead.map_or((&[][..], 1), |h| (h.lines, h.every));
    let (mut due, mut line) = (0, 0);
    for (kk, b) in panel[..k * NR].chunks_exact(NR).enumerate() {
        if kk == due && line < lines.len() {
            crate::cpu::prefetch_l2(&lines[line]);
            line += NR;
            due += every;
        }
        let (lo, hi) = b.split_at(HALF);
        let halves: [&[f32; HALF]; 2] = [
            lo.try_into().expect("HALF floats"),
            hi.try_into().expect("HALF floats"),
        ];
        for r in 0..R {
            let x = a[r][kk];
            for (sums, b) in acc[r].iter_mut().zip(halves) {
                for (s, &w) in sums.iter_mut().zip(b) {
                    *s = x.mul_add(w, *s);
                }
            }
        }
    }
    acc.map(|[lo, hi]| std::array::from_fn(|j| if j < HALF { lo[j] } else { hi[j - HALF] }))
}

/// Floats per AVX register: half a panel's width.
const HALF: usize = NR / 2;

#[cfg(target_arch = "x86_64")]
fn x86_avx2_fma() -> bool {
    crate::cpu::has_avx2_fma()
}

#[cfg(not(target_arch = "x86_64"))]
fn x86_avx2_fma() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array2, s};

    /// The documented order of operations, one element at a time.
    fn fma_chain(a: ArrayView2<f32>, w: ArrayView2<f32>) -> Array2<f32> {
        Array2::from_shape_fn((a.nrows(), w.ncols()), |(i, j)| {
            (0..a.ncols()).fold(0.0f32, |acc, kk| a[[i, kk]].mul_add(w[[kk, j]], acc))
        })
    }

    fn matrix(rows: usize, cols: usize, seed: usize) -> Array2<f32> {
        Array2::from_shape_fn((rows, cols), |(i, j)| {
            ((i * 31 + j * 17 + seed * 7) % 23) as f32 * 0.071 - 0.77
        })
    }

    fn packed_product(a: ArrayView2<f32>, w: &PackedMatrix, split: bool) -> Array2<f32> {
        let mut out = Array2::from_elem((a.nrows(), w.ncols()), f32::NAN);
        matmul_packed(a, w, out.view_mut(), split);
        out
    }

    #[test]
    fn packing_puts_each_column_in_its_panel_and_pads_with_zeros() {
        let w = matrix(3, 20, 0);
        let p = PackedMatrix::new(&[w.view()]).unwrap();
        assert_eq!((p.nrows(), p.ncols(), p.data.len()), (3, 20, 2 * 3 * NR));
        // Column 17 is lane 1 of panel 1; row 2 of that panel starts at 2·NR.
        assert_eq!(p.panel(1)[2 * NR + 1], w[[2, 17]]);
        assert_eq!(p.panel(0)[NR + 5], w[[1, 5]]);
        assert!(p.panel(1)[4..NR].iter().all(|&x| x == 0.0), "padding");
    }

    #[test]
    fn parts_side_by_side_are_one_wider_matrix() {
        let (a, b) = (matrix(5, 7, 1), matrix(5, 12, 2));
        let joined = ndarray::concatenate![Axis(1), a, b];
        let p = PackedMatrix::new(&[a.view(), b.view()]).unwrap();
        let whole = PackedMatrix::new(&[joined.view()]).unwrap();
        assert_eq!(p.data, whole.data);
        let err = |r: Result<PackedMatrix, Error>| r.unwrap_err().to_string();
        assert_eq!(
            err(PackedMatrix::new(&[])),
            "wrong shape: nothing to pack: no matrices given"
        );
        assert_eq!(
            err(PackedMatrix::new(&[a.view(), matrix(4, 2, 0).view()])),
            "wrong shape: matrices packed side by side need the same number of rows, got [5, 4]"
        );
    }

    #[test]
    fn products_are_the_documented_fma_chain_bit_for_bit() {
        // Odd sizes exercise every row remainder (1..=5) and a padded last panel; one and
        // two rows their groups of panels (AVX2: 4 and 2; AVX-512: 8 and 4, and 2 for
        // blocks of more rows) with panels left over, whole and split into pieces of 64
        // columns.
        for (m, k, n) in [
            (1, 1, 1),
            (1, 37, 16 * 5 + 3),
            (1, 37, 16 * 3 + 5),
            (1, 37, 16 * 9 + 3),
            (2, 64, 16 * 3 + 5),
            (2, 64, 16 * 6 + 5),
            (3, 50, 16 * 5 + 1),
            (1, 512, 1040),
            (2, 300, 1000),
            (7, 3, 17),
            (13, 128, 40),
            (600, 96, 80),
            (64, 128, 384),
        ] {
            let a = matrix(m, k, m);
            let w = matrix(k, n, n);
            let p = PackedMatrix::new(&[w.view()]).unwrap();
            let expected = fma_chain(a.view(), w.view());
            for split in [false, true] {
                assert_eq!(
                    packed_product(a.view(), &p, split),
                    expected,
                    "{m}×{k}×{n} split={split}"
                );
                // The AVX2 kernel too, on a CPU that would take the AVX-512 one.
                #[cfg(target_arch = "x86_64")]
                assert_eq!(
                    crate::cpu::avx2_pool().install(|| packed_product(a.view(), &p, split)),
                    expected,
                    "AVX2: {m}×{k}×{n} split={split}"
                );
            }
            // And they are the same product as ndarray's, to rounding.
            let diff = (&expected - &a.dot(&w)).mapv(f32::abs);
            assert!(diff.iter().all(|&d| d < 1e-4), "{m}×{k}×{n}");
        }
    }

    #[test]
    fn mismatched_shapes_and_strided_rows_are_errors_and_empty_sizes_work() {
        let p = PackedMatrix::new(&[matrix(4, 3, 0).view()]).unwrap();
        let a = matrix(2, 4, 1);
        let mut out = Array2::zeros((2, 3));
        let e = matmul(matrix(2, 5, 1).view(), &p, out.view_mut()).unwrap_err();
        assert_eq!(e.to_string(), "wrong shape: (2, 5) · [4 × 3] into (2, 3)");
        let mut wrong = Array2::zeros((3, 3));
        assert!(matmul(a.view(), &p, wrong.view_mut()).is_err());
        let mut wide = Array2::zeros((2, 6));
        let e = matmul(a.view(), &p, wide.slice_mut(s![.., ..;2])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "wrong shape: the output's rows must be contiguous"
        );
        // No rows, and an inner dimension of 0 (a sum of nothing is 0).
        let mut none = Array2::zeros((0, 3));
        matmul(matrix(0, 4, 0).view(), &p, none.view_mut()).unwrap();
        let p0 = PackedMatrix::new(&[matrix(0, 3, 0).view()]).unwrap();
        let mut out = Array2::from_elem((2, 3), 1.0f32);
        matmul(matrix(2, 0, 0).view(), &p0, out.view_mut()).unwrap();
        assert_eq!(out, Array2::zeros((2, 3)));
    }

    #[test]
    fn outputs_may_be_column_slices_and_inputs_any_layout() {
        let a = matrix(9, 16, 3);
        let w = matrix(16, 32, 4);
        let p = PackedMatrix::new(&[w.view()]).unwrap();
        let mut out = Array2::from_elem((9, 40), -1.0f32);
        matmul_packed(a.t().t(), &p, out.slice_mut(s![.., 4..36]), false);
        assert_eq!(out.slice(s![.., 4..36]), fma_chain(a.view(), w.view()));
        assert!(
            out.slice(s![.., ..4]).iter().all(|&x| x == -1.0),
            "left alone"
        );
        let at = a.t().to_owned(); // column-major view of the same values
        assert_eq!(
            packed_product(at.t(), &p, false),
            fma_chain(a.view(), w.view())
        );
    }

    #[test]
    fn the_blocks_shares_of_the_next_panel_cover_it_once_each_line() {
        let k = 37;
        let next: Vec<f32> = (0..k * NR).map(|i| i as f32).collect();
        for blocks in 1..=9 {
            let mut seen = Vec::new();
            for b in 0..blocks {
                let share = Ahead::share(&next, k, b, blocks);
                assert_eq!(share.every, blocks);
                assert_eq!(share.lines.len() % NR, 0, "whole lines");
                // A share has at most one line more than a block's loop over k prefetches.
                assert!(share.lines.len() / NR <= k.div_ceil(blocks), "{blocks} {b}");
                seen.extend(share.lines.iter().step_by(NR).copied());
            }
            let starts: Vec<f32> = (0..k).map(|r| (r * NR) as f32).collect();
            assert_eq!(seen, starts, "{blocks} blocks");
        }
    }
}
