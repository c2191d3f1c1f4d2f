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
/// From this many queries per sequence on, attention uses matrix products.
const MATMUL_QUERIES: usize = 8;
/// Columns per piece when a short input (a decode step) is split by output columns.
pub(crate) const COL_PIECE: usize = 64;

/// How a product `[m, k] · [k, n]` is cut into independent pieces for the rayon pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pieces {
    /// One piece (no split asked for, or too little work to share).
    Whole,
    /// Pieces of [`ROW_PIECE`] rows of `a` (tall inputs: prefill, full logits).
    Rows(usize),
    /// Pieces of [`COL_PIECE`] output columns (short inputs: a decode step of a few dozen
    /// sequences), so both cores have work even at batch 64 × 1 token.
    Columns(usize),
}

/// The pieces of `[m, k] · [k, n]`; `split` allows more than one. They depend only on
/// the shapes, never on the number of threads.
pub(crate) fn pieces(m: usize, k: usize, n: usize, split: bool) -> Pieces {
    if !split || 2 * m * k * n < SPLIT_FLOPS {
        Pieces::Whole
    } else if m >= 2 * ROW_PIECE {
        Pieces::Rows(ROW_PIECE)
    } else {
        Pieces::Columns(COL_PIECE)
    }
}

/// `out = a · w`. With `split`, the product is cut into independent [`pieces`] run on the
/// rayon pool. Each output element is computed entirely by one `matrixmultiply` call, so
/// the split does not change a single bit.
pub fn matmul_into(
    a: ArrayView2<f32>,
    w: ArrayView2<f32>,
    mut out: ArrayViewMut2<f32>,
    split: bool,
) {
    let (m, k) = a.dim();
    match pieces(m, k, w.ncols(), split) {
        Pieces::Whole => general_mat_mul(1.0, &a, &w, 0.0, &mut out),
        Pieces::Rows(rows) => out
            .axis_chunks_iter_mut(Axis(0), rows)
            .into_par_iter()
            .zip(a.axis_chunks_iter(Axis(0), rows))
            .for_each(|(mut o, a)| general_mat_mul(1.0, &a, &w, 0.0, &mut o)),
        Pieces::Columns(cols) => out
            .axis_chunks_iter_mut(Axis(1), cols)
            .into_par_iter()
            .zip(w.axis_chunks_iter(Axis(1), cols))
            .for_each(|(mut o, w)| general_mat_mul(1.0, &a, &w, 0.0, &mut o)),
    }
}

/// Rotates every head of one row `[n_heads · head_dim]` for one position, given that
/// position's angle tables `cos`, `sin` (`[head_dim / 2]` each). See [`crate::ops::apply_rope`].
#[inline]
pub fn rope_row(row: &mut [f32], head_dim: usize, cos: &[f32], sin: &[f32]) {
    for head in row.chunks_exact_mut(head_dim) {
        rope_pairs(head, cos, sin);
    }
}

crate::cpu::with_avx2! {
    /// Causal attention of one sequence's `n` new queries against its cache.
    ///
    /// `q [n, n_heads · head_dim]` are the (rotated) queries at positions `pos0 .. pos0 + n`.
    /// The cache holds positions `0 .. pos0 + n`: keys *transposed*, `kt [n_heads, head_dim,
    /// capacity]`, values `v [n_heads, capacity, head_dim]`. Query i sees keys `0 ..= pos0 + i`.
    /// Writes `softmax(q·kᵀ / √head_dim) · v` into `out [n, n_heads · head_dim]`.
    /// `scores` is scratch space of at least `n · (pos0 + n)` floats.
    ///
    /// With keys stored transposed, both products are sums of contiguous rows scaled by a
    /// scalar (`scores += q[d] · kt[d]`, `out += p[j] · v[j]`), which vectorise without
    /// horizontal reductions.
    pub fn attend(
        q: ArrayView2<f32>,
        kt: ArrayView3<f32>,
        v: ArrayView3<f32>,
        pos0: usize,
        out: ArrayViewMut2<f32>,
        scores: &mut [f32],
    ) => attend_body
}

#[inline(always)]
fn attend_body(
    q: ArrayView2<f32>,
    kt: ArrayView3<f32>,
    v: ArrayView3<f32>,
    pos0: usize,
    mut out: ArrayViewMut2<f32>,
    scores: &mut [f32],
) {
    let (heads, hd, cap) = kt.dim();
    let scale = 1.0 / (hd as f32).sqrt();
    let n = q.nrows();
    if n >= MATMUL_QUERIES {
        // Many queries (prefill, teacher forcing): two matrix products per head, on
        // matrixmultiply's vector kernels, then the causal mask. The masked half is
        // computed and thrown away; the faster kernels more than pay for it.
        let seen = pos0 + n;
        let mut s = ArrayViewMut2::from_shape((n, seen), &mut scores[..n * seen])
            .expect("scratch holds n × (pos0 + n) scores");
        for h in 0..heads {
            let cols = ndarray::s![.., h * hd..(h + 1) * hd];
            let keys = kt.slice(ndarray::s![h, .., ..seen]);
            general_mat_mul(scale, &q.slice(cols), &keys, 0.0, &mut s);
            for (i, mut row) in s.outer_iter_mut().enumerate() {
                let row = row.as_slice_mut().expect("score rows are contiguous");
                softmax_in_place(&mut row[..pos0 + i + 1]);
                row[pos0 + i + 1..].fill(0.0);
            }
            let values = v.slice(ndarray::s![h, ..seen, ..]);
            general_mat_mul(1.0, &s, &values, 0.0, &mut out.slice_mut(cols));
        }
        return;
    }
    for (i, (q_row, mut out_row)) in q.outer_iter().zip(out.outer_iter_mut()).enumerate() {
        let q_row = q_row.to_slice().expect("query rows are contiguous");
        let out_row = out_row.as_slice_mut().expect("output rows are contiguous");
        let seen = pos0 + i + 1;
        for h in 0..heads {
            let qh = &q_row[h * hd..(h + 1) * hd];
            let keys = kt.index_axis(Axis(0), h);
            let keys = keys.as_slice().expect("cache heads are contiguous");
            let values = v.index_axis(Axis(0), h);
            let values = values.as_slice().expect("cache heads are contiguous");
            let s = &mut scores[..seen];
            scores_of(qh, scale, keys, cap, s);
            softmax_in_place(s);
            weighted_values(s, values, hd, &mut out_row[h * hd..(h + 1) * hd]);
        }
    }
}

crate::cpu::with_avx2! {
    /// Attention of one sequence's tree nodes: node i sees cache slots `0 .. prefix` and the
    /// slots in `visible[i]`, nothing else (see `TransformerLM::extend_tree`). Same cache
    /// layout as [`attend`].
    pub fn attend_tree(
        q: ArrayView2<f32>,
        kt: ArrayView3<f32>,
        v: ArrayView3<f32>,
        prefix: usize,
        visible: &[Vec<usize>],
        out: ArrayViewMut2<f32>,
    ) => attend_tree_body
}

#[inline(always)]
fn attend_tree_body(
    q: ArrayView2<f32>,
    kt: ArrayView3<f32>,
    v: ArrayView3<f32>,
    prefix: usize,
    visible: &[Vec<usize>],
    mut out: ArrayViewMut2<f32>,
) {
    let (heads, hd, cap) = kt.dim();
    let scale = 1.0 / (hd as f32).sqrt();
    let mut s = Vec::new();
    for ((q_row, mut out_row), vis) in q.outer_iter().zip(out.outer_iter_mut()).zip(visible) {
        let q_row = q_row.to_slice().expect("query rows are contiguous");
        let out_row = out_row.as_slice_mut().expect("output rows are contiguous");
        for h in 0..heads {
            let qh = &q_row[h * hd..(h + 1) * hd];
            let keys = kt.index_axis(Axis(0), h);
            let keys = keys.as_slice().expect("cache heads are contiguous");
            let values = v.index_axis(Axis(0), h);
            let values = values.as_slice().expect("cache heads are contiguous");
            s.clear();
            s.resize(prefix + vis.len(), 0.0);
            for (d, &qd) in qh.iter().enumerate() {
                let row = &keys[d * cap..(d + 1) * cap];
                axpy(qd * scale, &row[..prefix], &mut s[..prefix]);
                for (sj, &slot) in s[prefix..].iter_mut().zip(vis) {
                    *sj += qd * scale * row[slot];
                }
            }
            softmax_in_place(&mut s);
            let oh = &mut out_row[h * hd..(h + 1) * hd];
            oh.fill(0.0);
            let slots = (0..prefix).chain(vis.iter().copied());
            for (&p, slot) in s.iter().zip(slots) {
                axpy(p, &values[slot * hd..(slot + 1) * hd], oh);
            }
        }
    }
}

/// Positions (or output floats) per block in [`scores_of`] and [`weighted_values`]: four
/// 8-float registers, four independent chains of additions, so the adds overlap instead of
/// waiting on each other; then single registers, then single floats.
const WIDE: usize = 32;
/// See [`WIDE`].
const NARROW: usize = 8;

/// `s[j] = Σ_d (q[d] · scale) · kt[d][j]` for the first `s.len()` positions, the sum taken
/// over d in order (the same bits as accumulating whole rows of `kt`), a block of
/// positions at a time so the partial sums stay in registers.
#[inline(always)]
fn scores_of(q: &[f32], scale: f32, kt: &[f32], cap: usize, s: &mut [f32]) {
    let mut j0 = 0;
    let (wide, rest) = s.split_at_mut(s.len() / WIDE * WIDE);
    for block in wide.chunks_exact_mut(WIDE) {
        score_block::<WIDE>(q, scale, kt, cap, j0, block);
        j0 += WIDE;
    }
    let (narrow, rest) = rest.split_at_mut(rest.len() / NARROW * NARROW);
    for block in narrow.chunks_exact_mut(NARROW) {
        score_block::<NARROW>(q, scale, kt, cap, j0, block);
        j0 += NARROW;
    }
    if rest.is_empty() {
        return;
    }
    // A last partial register, computed whole as one chain instead of one per position:
    // over the slots after it when the cache has them (older or unused entries, whose
    // scores are dropped), else over the last NARROW positions (recomputing, bit for bit,
    // a few scores already there).
    if j0 + NARROW <= cap {
        let mut block = [0.0f32; NARROW];
        score_block::<NARROW>(q, scale, kt, cap, j0, &mut block);
        rest.copy_from_slice(&block[..rest.len()]);
        return;
    }
    if j0 + rest.len() >= NARROW {
        let start = j0 + rest.len() - NARROW;
        let mut block = [0.0f32; NARROW];
        score_block::<NARROW>(q, scale, kt, cap, start, &mut block);
        rest.copy_from_slice(&block[NARROW - rest.len()..]);
        return;
    }
    for (j, sj) in rest.iter_mut().enumerate() {
        *sj = q
            .iter()
            .enumerate()
            .fold(0.0, |acc, (d, &qd)| acc + qd * scale * kt[d * cap + j0 + j]);
    }
}

#[inline(always)]
fn score_block<const W: usize>(
    q: &[f32],
    scale: f32,
    kt: &[f32],
    cap: usize,
    j0: usize,
    out: &mut [f32],
) {
    let mut acc = [0.0f32; W];
    for (d, &qd) in q.iter().enumerate() {
        let keys = &kt[d * cap + j0..][..W];
        for (a, &k) in acc.iter_mut().zip(keys) {
            *a += qd * scale * k;
        }
    }
    out.copy_from_slice(&acc);
}

/// `out = Σ_j p[j] · v[j]` over the rows `v[j]` (`hd` floats each), summed over j in
/// order, a block of output floats at a time.
#[inline(always)]
fn weighted_values(p: &[f32], v: &[f32], hd: usize, out: &mut [f32]) {
    let mut c0 = 0;
    let (wide, rest) = out.split_at_mut(out.len() / WIDE * WIDE);
    for block in wide.chunks_exact_mut(WIDE) {
        value_block::<WIDE>(p, v, hd, c0, block);
        c0 += WIDE;
    }
    let (narrow, rest) = rest.split_at_mut(rest.len() / NARROW * NARROW);
    for block in narrow.chunks_exact_mut(NARROW) {
        value_block::<NARROW>(p, v, hd, c0, block);
        c0 += NARROW;
    }
    for (c, oc) in rest.iter_mut().enumerate() {
        *oc = p
            .iter()
            .enumerate()
            .fold(0.0, |acc, (j, &pj)| acc + pj * v[j * hd + c0 + c]);
    }
}

#[inline(always)]
fn value_block<const W: usize>(p: &[f32], v: &[f32], hd: usize, c0: usize, out: &mut [f32]) {
    let mut acc = [0.0f32; W];
    for (j, &pj) in p.iter().enumerate() {
        let row = &v[j * hd + c0..][..W];
        for (a, &x) in acc.iter_mut().zip(row) {
            *a += pj * x;
        }
    }
    out.copy_from_slice(&acc);
}

/// `y += a · x` over two equal-length slices.
#[inline]
fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
    for (yi, &xi) in y.iter_mut().zip(x) {
        *yi += a * xi;
    }
}

/// Writes one sequence's new keys `k` and values `v` (`[n, n_heads · head_dim]` each) into
/// its cache at positions `pos0 .. pos0 + n`: keys transposed into `kt [n_heads, head_dim,
/// capacity]`, values into `vc [n_heads, capacity, head_dim]`.
pub fn write_cache(
    k: ArrayView2<f32>,
    v: ArrayView2<f32>,
    mut kt: ArrayViewMut3<f32>,
    mut vc: ArrayViewMut3<f32>,
    pos0: usize,
) {
    let (heads, hd, cap) = kt.dim();
    let kt = kt.as_slice_mut().expect("a sequence's cache is contiguous");
    let vc = vc.as_slice_mut().expect("a sequence's cache is contiguous");
    for (i, (k_row, v_row)) in k.outer_iter().zip(v.outer_iter()).enumerate() {
        let (k_row, v_row) = (
            k_row.to_slice().expect("contiguous"),
            v_row.to_slice().expect("contiguous"),
        );
        let pos = pos0 + i;
        for h in 0..heads {
            let head = h * hd * cap; // both layouts hold hd · cap floats per head
            for (d, &x) in k_row[h * hd..(h + 1) * hd].iter().enumerate() {
                kt[head + d * cap + pos] = x;
            }
            vc[head + pos * hd..head + (pos + 1) * hd]
                .copy_from_slice(&v_row[h * hd..(h + 1) * hd]);
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

    /// Attention written the plain way: every sum in index order, one float at a time.
    fn naive_attention(q: &[f32], kt: &Array3<f32>, v: &Array3<f32>, seen: usize) -> Vec<f32> {
        let (heads, hd, _) = kt.dim();
        let scale = 1.0 / (hd as f32).sqrt();
        let mut out = Vec::new();
        for h in 0..heads {
            let mut s: Vec<f32> = (0..seen)
                .map(|j| (0..hd).fold(0.0, |acc, d| acc + q[h * hd + d] * scale * kt[[h, d, j]]))
                .collect();
            softmax_in_place(&mut s);
            out.extend((0..hd).map(|c| (0..seen).fold(0.0, |acc, j| acc + s[j] * v[[h, j, c]])));
        }
        out
    }

    #[test]
    fn blocked_decode_attention_is_the_plain_sums_bit_for_bit() {
        // Head widths with and without a partial register; lengths around every block
        // boundary; caches exactly full and with room to spare.
        for (heads, hd) in [(2, 32), (3, 12)] {
            for seen in 1..=70 {
                for spare in [0, 5] {
                    let cap = seen + spare;
                    let f = |i: usize| ((i * 37 + seen * 11) % 19) as f32 * 0.13 - 1.1;
                    let kt =
                        Array3::from_shape_fn((heads, hd, cap), |(h, d, j)| f(h + d * 7 + j * 3));
                    let v =
                        Array3::from_shape_fn((heads, cap, hd), |(h, j, c)| f(h * 5 + j + c * 2));
                    let q = Array2::from_shape_fn((1, heads * hd), |(_, i)| f(i * 13));
                    let mut out = Array2::zeros((1, heads * hd));
                    let mut scores = vec![0.0; cap];
                    attend(
                        q.view(),
                        kt.view(),
                        v.view(),
                        seen - 1,
                        out.view_mut(),
                        &mut scores,
                    );
                    let want = naive_attention(q.as_slice().unwrap(), &kt, &v, seen);
                    assert_eq!(
                        out.row(0).to_vec(),
                        want,
                        "{heads}×{hd}, seen {seen}, cap {cap}"
                    );
                }
            }
        }
    }

    #[test]
    fn write_cache_transposes_keys_and_keeps_values_by_position() {
        // Two heads of width 2, one new token at position 1.
        let k = Array2::from_shape_vec((1, 4), vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let v = Array2::from_shape_vec((1, 4), vec![5.0f32, 6.0, 7.0, 8.0]).unwrap();
        let mut kt = Array3::<f32>::zeros((2, 2, 3));
        let mut vc = Array3::<f32>::zeros((2, 3, 2));
        write_cache(k.view(), v.view(), kt.view_mut(), vc.view_mut(), 1);
        assert_eq!(kt.slice(ndarray::s![1, .., 1]).to_vec(), vec![3.0, 4.0]);
        assert_eq!(vc.slice(ndarray::s![0, 1, ..]).to_vec(), vec![5.0, 6.0]);
        assert_eq!(kt.sum() + vc.sum(), 36.0, "nothing else written");
    }

    #[test]
    fn a_single_key_gets_all_the_attention() {
        // One head of width 2; position 0 only: the output is v_0 whatever q is.
        let q = Array2::from_shape_vec((1, 2), vec![3.0f32, -1.0]).unwrap();
        let mut k = Array3::<f32>::zeros((1, 2, 4)); // transposed: [head, dim, position]
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
        // Keys k0 = (0, 1), k1 = (l, 0), stored transposed: [dim 0: 0, l; dim 1: 1, 0].
        let k = Array3::from_shape_vec((1, 2, 2), vec![0.0f32, l, 1.0, 0.0]).unwrap();
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
