//! The hot loops of the forward pass: parallel matrix products, attention against the
//! cache, RoPE on whole rows.
//!
//! Every function here is deterministic: work is split into pieces whose boundaries
//! depend only on the shapes (never on the number of threads), each piece is computed
//! by one thread in a fixed order, and no floating-point reduction crosses pieces. So the
//! results are bit-identical for any `RAYON_NUM_THREADS`.

use ndarray::linalg::general_mat_mul;
use ndarray::parallel::prelude::*;
use ndarray::{ArrayView2, ArrayView3, ArrayViewMut2, ArrayViewMut3, Axis};

use crate::ops::{rope_pairs, softmax_in_place};

/// Below this many FLOPs a product runs as one piece: splitting costs more than it saves.
const SPLIT_FLOPS: usize = 1 << 20;
/// Rows per piece when a product is split by rows (tall inputs: prefill, full logits).
const ROW_PIECE: usize = 256;
/// Columns per piece when a short input (a decode step) is split by output columns.
const COL_PIECE: usize = 64;

/// `out = a · w`. With `split`, the product is cut into independent pieces run on the
/// rayon pool: tall inputs by rows of `a`, short ones (a decode step of a few dozen
/// sequences) by columns of `w`, so both cores have work even at batch 64 × 1 token.
/// Each output element is computed entirely by one `matrixmultiply` call, so the split
/// does not change a single bit.
pub fn matmul_into(
    a: ArrayView2<f32>,
    w: ArrayView2<f32>,
    mut out: ArrayViewMut2<f32>,
    split: bool,
) {
    let (m, k) = a.dim();
    let n = w.ncols();
    if !split || 2 * m * k * n < SPLIT_FLOPS {
        general_mat_mul(1.0, &a, &w, 0.0, &mut out);
    } else if m >= 2 * ROW_PIECE {
        out.axis_chunks_iter_mut(Axis(0), ROW_PIECE)
            .into_par_iter()
            .zip(a.axis_chunks_iter(Axis(0), ROW_PIECE))
            .for_each(|(mut o, a)| general_mat_mul(1.0, &a, &w, 0.0, &mut o));
    } else {
        out.axis_chunks_iter_mut(Axis(1), COL_PIECE)
            .into_par_iter()
            .zip(w.axis_chunks_iter(Axis(1), COL_PIECE))
            .for_each(|(mut o, w)| general_mat_mul(1.0, &a, &w, 0.0, &mut o));
    }
}

/// Dot product of two equal-length slices with eight independent accumulators (so the
/// compiler can vectorise it), summed in a fixed order.
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

/// Rotates every head of one row `[n_heads · head_dim]` for one position, given that
/// position's angle tables `cos`, `sin` (`[head_dim / 2]` each). See [`crate::ops::apply_rope`].
#[inline]
pub fn rope_row(row: &mut [f32], head_dim: usize, cos: &[f32], sin: &[f32]) {
    for head in row.chunks_exact_mut(head_dim) {
        rope_pairs(head, cos, sin);
    }
}

/// Causal attention of one sequence's `n` new queries against its cache.
///
/// `q [n, n_heads · head_dim]` are the (rotated) queries at positions `pos0 .. pos0 + n`;
/// `k`, `v` are the sequence's cache `[n_heads, capacity, head_dim]`, already holding
/// positions `0 .. pos0 + n`. Query i sees keys `0 ..= pos0 + i`. Writes
/// `softmax(q·kᵀ / √head_dim) · v` into `out [n, n_heads · head_dim]`.
/// `scores` is scratch space of at least `pos0 + n` floats.
pub fn attend(
    q: ArrayView2<f32>,
    k: ArrayView3<f32>,
    v: ArrayView3<f32>,
    pos0: usize,
    mut out: ArrayViewMut2<f32>,
    scores: &mut [f32],
) {
    let (heads, _, hd) = k.dim();
    let scale = 1.0 / (hd as f32).sqrt();
    for (i, (q_row, mut out_row)) in q.outer_iter().zip(out.outer_iter_mut()).enumerate() {
        let q_row = q_row.to_slice().expect("query rows are contiguous");
        let out_row = out_row.as_slice_mut().expect("output rows are contiguous");
        let seen = pos0 + i + 1;
        for h in 0..heads {
            let qh = &q_row[h * hd..(h + 1) * hd];
            let keys = k.index_axis(Axis(0), h);
            let keys = keys.as_slice().expect("cache heads are contiguous");
            let values = v.index_axis(Axis(0), h);
            let values = values.as_slice().expect("cache heads are contiguous");
            let s = &mut scores[..seen];
            for (j, sj) in s.iter_mut().enumerate() {
                *sj = dot(qh, &keys[j * hd..(j + 1) * hd]) * scale;
            }
            softmax_in_place(s);
            let oh = &mut out_row[h * hd..(h + 1) * hd];
            oh.fill(0.0);
            for (j, &p) in s.iter().enumerate() {
                for (o, &x) in oh.iter_mut().zip(&values[j * hd..(j + 1) * hd]) {
                    *o += p * x;
                }
            }
        }
    }
}

/// Writes one sequence's new keys and values `[n, n_heads · head_dim]` into its cache
/// `[n_heads, capacity, head_dim]` at positions `pos0 .. pos0 + n`.
pub fn write_cache(new: ArrayView2<f32>, mut cache: ArrayViewMut3<f32>, pos0: usize) {
    let hd = cache.dim().2;
    for (i, row) in new.outer_iter().enumerate() {
        let row = row.to_slice().expect("rows are contiguous");
        for (h, mut head) in cache.outer_iter_mut().enumerate() {
            head.row_mut(pos0 + i)
                .as_slice_mut()
                .expect("cache rows are contiguous")
                .copy_from_slice(&row[h * hd..(h + 1) * hd]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array2, Array3};

    #[test]
    fn matmul_pieces_give_exactly_the_unsplit_product() {
        let a = Array2::from_shape_fn((600, 128), |(i, j)| {
            ((i * 7 + j * 3) % 13) as f32 * 0.1 - 0.6
        });
        let w = Array2::from_shape_fn((128, 384), |(i, j)| ((i * 5 + j) % 11) as f32 * 0.05 - 0.25);
        let product = |a: ArrayView2<f32>, split| {
            let mut out = Array2::from_elem((a.nrows(), 384), f32::NAN);
            matmul_into(a, w.view(), out.view_mut(), split);
            out
        };
        assert_eq!(product(a.view(), true), a.dot(&w), "row split");
        assert_eq!(product(a.view(), false), a.dot(&w), "one piece");
        let short = a.slice(ndarray::s![..64, ..]);
        assert_eq!(product(short, true), short.dot(&w), "column split");
    }

    #[test]
    fn dot_handles_lengths_that_are_not_multiples_of_eight() {
        let a: Vec<f32> = (0..13).map(|i| i as f32).collect();
        let b = vec![1.0f32; 13];
        assert_eq!(dot(&a, &b), 78.0);
        assert_eq!(dot(&[], &[]), 0.0);
    }

    #[test]
    fn a_single_key_gets_all_the_attention() {
        // One head of width 2; position 0 only: the output is v_0 whatever q is.
        let q = Array2::from_shape_vec((1, 2), vec![3.0f32, -1.0]).unwrap();
        let mut k = Array3::<f32>::zeros((1, 4, 2));
        let mut v = Array3::<f32>::zeros((1, 4, 2));
        k[[0, 0, 0]] = 0.5;
        v[[0, 0, 0]] = 2.0;
        v[[0, 0, 1]] = -4.0;
        let mut out = Array2::zeros((1, 2));
        attend(
            q.view(),
            k.view(),
            v.view(),
            0,
            out.view_mut(),
            &mut [0.0; 4],
        );
        assert_eq!(out.row(0).to_vec(), vec![2.0, -4.0]);
    }

    #[test]
    fn two_keys_are_weighted_by_the_softmax_of_their_scores() {
        // head_dim 2 → scale 1/√2. q·k0 = 0, q·k1 = √2·ln 3 → weights e^0 : e^{ln 3} = 1 : 3.
        let l = 3f32.ln() * 2f32.sqrt();
        let q = Array2::from_shape_vec((1, 2), vec![1.0f32, 0.0]).unwrap();
        let k = Array3::from_shape_vec((1, 2, 2), vec![0.0f32, 1.0, l, 0.0]).unwrap();
        let v = Array3::from_shape_vec((1, 2, 2), vec![4.0f32, 0.0, 0.0, 8.0]).unwrap();
        let mut out = Array2::zeros((1, 2));
        attend(
            q.view(),
            k.view(),
            v.view(),
            1,
            out.view_mut(),
            &mut [0.0; 2],
        );
        assert!(
            (out[[0, 0]] - 1.0).abs() < 1e-5 && (out[[0, 1]] - 6.0).abs() < 1e-5,
            "{out}"
        );
    }
}
