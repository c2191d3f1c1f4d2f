//! The hot loops of the forward pass: parallel matrix products, attention against the
//! cache, RoPE on whole rows.
//!
//! Every function here is deterministic: work is split into pieces whose boundaries
//! depend only on the shapes (never on the number of threads), each piece is computed
//! by one thread in a fixed order, and no floating-point reduction crosses pieces. So the
//! results are bit-identical for any `RAYON_NUM_THREADS`.

use ndarray::linalg::general_mat_mul;
use ndarray::parallel::prelude::*;
use ndarray::{ArrayView2, ArrayViewMut2, ArrayViewMut3, Axis};

use crate::ops::{rope_pairs, softmax_in_place};

/// Below this many FLOPs a product runs as one piece: splitting costs more than it saves.
pub(crate) const SPLIT_FLOPS: usize = 1 << 20;
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
    /// Appends one sequence's `n` new keys and values to its cache, then writes the causal
    /// attention of its `n` new queries into `out [n, n_heads · head_dim]`.
    ///
    /// `q`, `k`, `v [n, n_heads · head_dim]` are the (rotated) queries and keys and the
    /// values at positions `pos0 .. pos0 + n`; they are stored as [`write_cache`] does, in
    /// keys *transposed*, `kt [n_heads, head_dim, capacity]`, and values `vc [n_heads,
    /// capacity, head_dim]`. Query i sees keys `0 ..= pos0 + i`: `out = softmax(q·kᵀ /
    /// √head_dim) · v`. `scores` is scratch space of at least `max(n, n_heads) · (pos0 +
    /// n)` floats. `n_heads` is the number of heads in the views, so any run of a
    /// sequence's heads can be attended on its own (their columns of `q`, `k`, `v` and
    /// `out`, their slices of the caches), with the bits of the call for all of them.
    ///
    /// With keys stored transposed, both products are sums of contiguous rows scaled by a
    /// scalar (`scores += q[d] · kt[d]`, `out += p[j] · v[j]`), which vectorise without
    /// horizontal reductions.
    #[allow(clippy::too_many_arguments)]
    pub fn attend(
        q: ArrayView2<f32>,
        k: ArrayView2<f32>,
        v: ArrayView2<f32>,
        kt: ArrayViewMut3<f32>,
        vc: ArrayViewMut3<f32>,
        pos0: usize,
        out: ArrayViewMut2<f32>,
        scores: &mut [f32],
    ) => attend_body
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn attend_body(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    v: ArrayView2<f32>,
    mut kt: ArrayViewMut3<f32>,
    mut vc: ArrayViewMut3<f32>,
    pos0: usize,
    mut out: ArrayViewMut2<f32>,
    scores: &mut [f32],
) {
    let (heads, hd, cap) = kt.dim();
    let scale = 1.0 / (hd as f32).sqrt();
    let n = q.nrows();
    write_values(v, vc.view_mut(), pos0);
    if n >= MATMUL_QUERIES {
        // Many queries (prefill, teacher forcing): two matrix products per head, on
        // matrixmultiply's vector kernels, then the causal mask. The masked half is
        // computed and thrown away; the faster kernels more than pay for it.
        write_keys(k, kt.view_mut(), pos0);
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
            let values = vc.slice(ndarray::s![h, ..seen, ..]);
            general_mat_mul(1.0, &s, &values, 0.0, &mut out.slice_mut(cols));
        }
        return;
    }
    // Few queries (a decode step, a short extension): per query, every head's scores,
    // then every head's softmax, then every head's outputs, so that the keys and then the
    // values are read in one sweep each, in memory order.
    //
    // The new keys go into the cache only afterwards, and their scores are computed from
    // `k`: a key written just before would sit in the store buffer while the sweep loads
    // the 8-float block around it, and each such load would wait for the store to reach
    // memory (a few percent of a decode step, measured).
    let keys = kt.as_slice().expect("a sequence's cache is contiguous");
    let values = vc.as_slice().expect("a sequence's cache is contiguous");
    for (i, (q_row, mut out_row)) in q.outer_iter().zip(out.outer_iter_mut()).enumerate() {
        let q_row = q_row.to_slice().expect("query rows are contiguous");
        let out_row = out_row.as_slice_mut().expect("output rows are contiguous");
        let seen = pos0 + i + 1;
        let s = &mut scores[..heads * seen];
        for (h, ((qh, kh), sh)) in q_row
            .chunks_exact(hd)
            .zip(keys.chunks_exact(hd * cap))
            .zip(s.chunks_exact_mut(seen))
            .enumerate()
        {
            // Every score in blocks, the new positions' from whatever the cache holds
            // there; then those again from the new keys (the same sum, in the same order).
            scores_of(qh, scale, kh, cap, sh);
            for (sj, k_row) in sh[pos0..].iter_mut().zip(k.outer_iter()) {
                let k_row = k_row.to_slice().expect("key rows are contiguous");
                let kj = &k_row[h * hd..(h + 1) * hd];
                *sj = qh
                    .iter()
                    .zip(kj)
                    .fold(0.0, |acc, (&qd, &kd)| acc + qd * scale * kd);
            }
        }
        for sh in s.chunks_exact_mut(seen) {
            softmax_in_place(sh);
        }
        for ((ph, vh), oh) in s
            .chunks_exact(seen)
            .zip(values.chunks_exact(cap * hd))
            .zip(out_row.chunks_exact_mut(hd))
        {
            weighted_values(ph, vh, hd, oh);
        }
    }
    write_keys(k, kt.view_mut(), pos0);
}

crate::cpu::with_avx2! {
    /// Appends one sequence's tree nodes (keys `k`, values `v`, `[n, n_heads · head_dim]`)
    /// to its cache at slots `pos0 .. pos0 + n`, then writes their attention into `out`:
    /// node i sees cache slots `0 .. prefix` and the slots in `visible[i]`, nothing else
    /// (see `TransformerLM::extend_tree`). Same cache layout as [`attend`], and as there,
    /// the new keys and values are read from `k` and `v` and stored afterwards. `scores`
    /// is scratch space of at least `prefix` + the longest `visible[i]` floats.
    #[allow(clippy::too_many_arguments)]
    pub fn attend_tree(
        q: ArrayView2<f32>,
        k: ArrayView2<f32>,
        v: ArrayView2<f32>,
        kt: ArrayViewMut3<f32>,
        vc: ArrayViewMut3<f32>,
        pos0: usize,
        prefix: usize,
        visible: &[Vec<usize>],
        out: ArrayViewMut2<f32>,
        scores: &mut [f32],
    ) => attend_tree_body
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn attend_tree_body(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    v: ArrayView2<f32>,
    kt: ArrayViewMut3<f32>,
    vc: ArrayViewMut3<f32>,
    pos0: usize,
    prefix: usize,
    visible: &[Vec<usize>],
    mut out: ArrayViewMut2<f32>,
    scores: &mut [f32],
) {
    let (_, hd, cap) = kt.dim();
    let scale = 1.0 / (hd as f32).sqrt();
    let keys = kt.as_slice().expect("a sequence's cache is contiguous");
    let values = vc.as_slice().expect("a sequence's cache is contiguous");
    for ((q_row, mut out_row), vis) in q.outer_iter().zip(out.outer_iter_mut()).zip(visible) {
        let q_row = q_row.to_slice().expect("query rows are contiguous");
        let out_row = out_row.as_slice_mut().expect("output rows are contiguous");
        for (h, ((qh, kh), vh)) in q_row
            .chunks_exact(hd)
            .zip(keys.chunks_exact(hd * cap))
            .zip(values.chunks_exact(cap * hd))
            .enumerate()
        {
            // A visible slot's value: from the cache, or from `v` for the nodes of this
            // call (and likewise its key, below).
            let value = |slot: usize| match slot.checked_sub(pos0) {
                Some(i) => &v.row(i).to_slice().expect("value rows are contiguous")[h * hd..],
                None => &vh[slot * hd..],
            };
            let s = &mut scores[..prefix + vis.len()];
            // Every sum in the same order as one float at a time: over d for a score,
            // over the slots (prefix, then the visible ones) for an output.
            scores_of(qh, scale, kh, cap, &mut s[..prefix]);
            for (sj, &slot) in s[prefix..].iter_mut().zip(vis) {
                *sj = match slot.checked_sub(pos0) {
                    Some(i) => {
                        let k_row = k.row(i).to_slice().expect("key rows are contiguous");
                        let kj = &k_row[h * hd..(h + 1) * hd];
                        qh.iter()
                            .zip(kj)
                            .fold(0.0, |acc, (&qd, &kd)| acc + qd * scale * kd)
                    }
                    None => (0..hd).fold(0.0, |acc, d| acc + qh[d] * scale * kh[d * cap + slot]),
                };
            }
            softmax_in_place(s);
            let oh = &mut out_row[h * hd..(h + 1) * hd];
            weighted_values(&s[..prefix], vh, hd, oh);
            for (&p, &slot) in s[prefix..].iter().zip(vis) {
                for (o, &x) in oh.iter_mut().zip(&value(slot)[..hd]) {
                    *o += p * x;
                }
            }
        }
    }
    write_cache(k, v, kt, vc, pos0);
}

/// Floats per block of positions (scores) or of output columns (values): one 8-float
/// register.
const LANES: usize = 8;
/// Blocks in one pass over a head's keys or values: five accumulators, five independent
/// chains of additions (enough to keep the adders busy), and registers to spare.
const BLOCKS: usize = 5;

/// Runs `$body` with the constant `$r` equal to `$n` (1 to [`BLOCKS`]), so that each
/// pass is compiled for its number of blocks, with the accumulators in registers.
macro_rules! with_blocks {
    ($n:expr, $r:ident => $body:expr) => {
        match $n {
            1 => {
                const $r: usize = 1;
                $body
            }
            2 => {
                const $r: usize = 2;
                $body
            }
            3 => {
                const $r: usize = 3;
                $body
            }
            4 => {
                const $r: usize = 4;
                $body
            }
            _ => {
                const $r: usize = BLOCKS;
                $body
            }
        }
    };
}

/// The passes that cover `0 .. len` of a row of `room` floats with blocks of [`LANES`]:
/// `(first, r, last)`, a window from `first` of `r` blocks, block `b < r − 1` at
/// `first + b · LANES` and the last one at `first + last`. Passes are as even as possible
/// (6 blocks: 3 + 3), so a pass has one block only if the row has one. The block of a
/// partial tail starts where the tail starts if the row has room for it (the floats past
/// `len` are computed and dropped), else it ends at `len` (recomputing, bit for bit, a
/// few floats already covered). Also returns where the floats no block covers start:
/// `len`, unless the row is shorter than one block.
fn passes(len: usize, room: usize) -> (impl Iterator<Item = (usize, usize, usize)>, usize) {
    let roomy = len.div_ceil(LANES) * LANES <= room;
    let blocks = if roomy || len >= LANES {
        len.div_ceil(LANES)
    } else {
        0
    };
    let covered = if blocks > 0 { len } else { 0 };
    let n = blocks.div_ceil(BLOCKS);
    let passes = (0..n).map(move |i| {
        let (per, extra) = (blocks / n, blocks % n);
        let first = (i * per + i.min(extra)) * LANES;
        let r = per + usize::from(i < extra);
        let natural = (r - 1) * LANES;
        let last = if roomy {
            natural
        } else {
            natural.min(len - LANES - first)
        };
        (first, r, last)
    });
    (passes, covered)
}

/// `s[j] = Σ_d (q[d] · scale) · kt[d][j]`: the first `s.len()` scores of one head, from
/// its keys stored transposed, `cap` floats per row.
#[inline(always)]
fn scores_of(q: &[f32], scale: f32, kt: &[f32], cap: usize, s: &mut [f32]) {
    weighted_rows(q.iter().map(|&qd| qd * scale), kt, cap, s);
}

/// `out = Σ_j p[j] · v[j]`: one head's output from its values, `hd` floats per row.
#[inline(always)]
fn weighted_values(p: &[f32], v: &[f32], hd: usize, out: &mut [f32]) {
    weighted_rows(p.iter().copied(), v, hd, out);
}

/// `out[c] = Σ_t w[t] · rows[t · stride + c]` for `c < out.len() ≤ stride`, each sum taken
/// over t in order (so the same bits as adding whole scaled rows one after the other),
/// a few blocks of [`LANES`] floats at a time so the partial sums stay in registers.
#[inline(always)]
fn weighted_rows(
    weights: impl Iterator<Item = f32> + Clone,
    rows: &[f32],
    stride: usize,
    out: &mut [f32],
) {
    let (passes, covered) = passes(out.len(), stride);
    for (first, r, last) in passes {
        with_blocks!(r, R => {
            let acc = pass::<R>(weights.clone(), rows, stride, first, last);
            for (b, acc) in acc.iter().enumerate() {
                let start = first + if b + 1 == R { last } else { b * LANES };
                // Lane by lane with constant indices, so `acc` stays in registers; lanes
                // past the end of `out` are dropped.
                for (l, &a) in acc.iter().enumerate() {
                    if let Some(o) = out.get_mut(start + l) {
                        *o = a;
                    }
                }
            }
        });
    }
    for (c, o) in out.iter_mut().enumerate().skip(covered) {
        *o = weights
            .clone()
            .enumerate()
            .fold(0.0, |acc, (t, w)| acc + w * rows[t * stride + c]);
    }
}

/// One pass of [`weighted_rows`]: `R` blocks of output floats (see [`passes`]).
#[inline(always)]
fn pass<const R: usize>(
    weights: impl Iterator<Item = f32>,
    rows: &[f32],
    stride: usize,
    first: usize,
    last: usize,
) -> [[f32; LANES]; R] {
    let mut acc = [[0.0f32; LANES]; R];
    for (t, w) in weights.enumerate() {
        let window = &rows[t * stride + first..][..last + LANES];
        for (b, acc) in acc.iter_mut().enumerate() {
            let x = lanes(&window[if b + 1 == R { last } else { b * LANES }..]);
            for l in 0..LANES {
                acc[l] += w * x[l];
            }
        }
    }
    acc
}

/// The first [`LANES`] floats of `x`, as an array (so that loops over it are unrolled
/// into vector instructions).
#[inline(always)]
fn lanes(x: &[f32]) -> &[f32; LANES] {
    x[..LANES].try_into().expect("a block lies inside its row")
}

/// Writes one sequence's new keys `k` and values `v` (`[n, n_heads · head_dim]` each) into
/// its cache at positions `pos0 .. pos0 + n`: keys transposed into `kt [n_heads, head_dim,
/// capacity]`, values into `vc [n_heads, capacity, head_dim]`.
pub fn write_cache(
    k: ArrayView2<f32>,
    v: ArrayView2<f32>,
    kt: ArrayViewMut3<f32>,
    vc: ArrayViewMut3<f32>,
    pos0: usize,
) {
    write_keys(k, kt, pos0);
    write_values(v, vc, pos0);
}

/// The keys half of [`write_cache`].
fn write_keys(k: ArrayView2<f32>, mut kt: ArrayViewMut3<f32>, pos0: usize) {
    let (_, hd, cap) = kt.dim();
    let kt = kt.as_slice_mut().expect("a sequence's cache is contiguous");
    for (i, k_row) in k.outer_iter().enumerate() {
        let k_row = k_row.to_slice().expect("contiguous");
        for (kh, rows) in k_row.chunks_exact(hd).zip(kt.chunks_exact_mut(hd * cap)) {
            for (&x, row) in kh.iter().zip(rows.chunks_exact_mut(cap)) {
                row[pos0 + i] = x;
            }
        }
    }
}

/// The values half of [`write_cache`].
fn write_values(v: ArrayView2<f32>, mut vc: ArrayViewMut3<f32>, pos0: usize) {
    let (_, cap, hd) = vc.dim();
    let vc = vc.as_slice_mut().expect("a sequence's cache is contiguous");
    for (i, v_row) in v.outer_iter().enumerate() {
        let v_row = v_row.to_slice().expect("contiguous");
        for (vh, rows) in v_row.chunks_exact(hd).zip(vc.chunks_exact_mut(cap * hd)) {
            rows[(pos0 + i) * hd..(pos0 + i + 1) * hd].copy_from_slice(vh);
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

    /// The new keys and values (`[n, heads · hd]`) at positions `pos0 .. pos0 + n` of full
    /// caches.
    fn new_rows(kt: &Array3<f32>, v: &Array3<f32>, pos0: usize, n: usize) -> [Array2<f32>; 2] {
        let (heads, hd, _) = kt.dim();
        let k = Array2::from_shape_fn((n, heads * hd), |(i, c)| kt[[c / hd, c % hd, pos0 + i]]);
        let v = Array2::from_shape_fn((n, heads * hd), |(i, c)| v[[c / hd, pos0 + i, c % hd]]);
        [k, v]
    }

    #[test]
    fn blocked_decode_attention_is_the_plain_sums_bit_for_bit() {
        // Heads of whole registers, with a partial one, below one, and several passes wide;
        // lengths around every block and pass boundary; caches exactly full and with room
        // to spare; one new query and three.
        for (heads, hd) in [(2, 32), (3, 12), (1, 4), (1, 48)] {
            for seen in 1..=90 {
                for (spare, n) in [(0, 1), (5, 1), (0, 3), (2, 3)] {
                    if n > seen {
                        continue;
                    }
                    let (cap, pos0) = (seen + spare, seen - n);
                    let f = |i: usize| ((i * 37 + seen * 11) % 19) as f32 * 0.13 - 1.1;
                    let kt =
                        Array3::from_shape_fn((heads, hd, cap), |(h, d, j)| f(h + d * 7 + j * 3));
                    let v =
                        Array3::from_shape_fn((heads, cap, hd), |(h, j, c)| f(h * 5 + j + c * 2));
                    let q = Array2::from_shape_fn((n, heads * hd), |(i, c)| f(i * 5 + c * 13));
                    // The cache before: NaN where the new positions go (nothing may read it).
                    let [k_new, v_new] = new_rows(&kt, &v, pos0, n);
                    let (mut kc, mut vc) = (kt.clone(), v.clone());
                    kc.slice_mut(ndarray::s![.., .., pos0..seen]).fill(f32::NAN);
                    vc.slice_mut(ndarray::s![.., pos0..seen, ..]).fill(f32::NAN);
                    let mut out = Array2::zeros((n, heads * hd));
                    let mut scores = vec![0.0; heads.max(n) * seen];
                    attend(
                        q.view(),
                        k_new.view(),
                        v_new.view(),
                        kc.view_mut(),
                        vc.view_mut(),
                        pos0,
                        out.view_mut(),
                        &mut scores,
                    );
                    let case = format!("{heads}×{hd}, seen {seen}, cap {cap}, n {n}");
                    for (i, row) in out.outer_iter().enumerate() {
                        let q_row = q.row(i).to_vec();
                        let want = naive_attention(&q_row, &kt, &v, pos0 + i + 1);
                        assert_eq!(row.to_vec(), want, "{case}, query {i}");
                    }
                    let filled = ndarray::s![.., .., ..seen];
                    assert_eq!(kc.slice(filled), kt.slice(filled), "{case}: keys stored");
                    let filled = ndarray::s![.., ..seen, ..];
                    assert_eq!(vc.slice(filled), v.slice(filled), "{case}: values stored");
                }
            }
        }
    }

    #[test]
    fn tree_attention_is_the_plain_sums_bit_for_bit() {
        // Node i of 4 sees the prefix, the older tree slots between prefix and pos0, and
        // the new slots pos0 + j for even j ≤ i and its own.
        for (heads, hd) in [(2, 32), (3, 12), (1, 4)] {
            for (pos0, prefix) in [(0, 0), (5, 5), (17, 14), (40, 33), (41, 41)] {
                let (n, cap) = (4, pos0 + 4 + 3);
                let f = |i: usize| ((i * 37 + pos0 * 11) % 19) as f32 * 0.13 - 1.1;
                let kt = Array3::from_shape_fn((heads, hd, cap), |(h, d, j)| f(h + d * 7 + j * 3));
                let v = Array3::from_shape_fn((heads, cap, hd), |(h, j, c)| f(h * 5 + j + c * 2));
                let q = Array2::from_shape_fn((n, heads * hd), |(i, c)| f(i * 5 + c * 13));
                let visible: Vec<Vec<usize>> = (0..n)
                    .map(|i| {
                        let new = (0..=i).filter(|&j| j % 2 == 0 || j == i).map(|j| pos0 + j);
                        (prefix..pos0).chain(new).collect()
                    })
                    .collect();
                let [k_new, v_new] = new_rows(&kt, &v, pos0, n);
                let (mut kc, mut vc) = (kt.clone(), v.clone());
                kc.slice_mut(ndarray::s![.., .., pos0..pos0 + n])
                    .fill(f32::NAN);
                vc.slice_mut(ndarray::s![.., pos0..pos0 + n, ..])
                    .fill(f32::NAN);
                let mut out = Array2::zeros((n, heads * hd));
                attend_tree(
                    q.view(),
                    k_new.view(),
                    v_new.view(),
                    kc.view_mut(),
                    vc.view_mut(),
                    pos0,
                    prefix,
                    &visible,
                    out.view_mut(),
                    &mut vec![0.0; pos0 + n],
                );
                let case = format!("{heads}×{hd}, pos0 {pos0}, prefix {prefix}");
                let scale = 1.0 / (hd as f32).sqrt();
                for (i, vis) in visible.iter().enumerate() {
                    let slots: Vec<usize> = (0..prefix).chain(vis.iter().copied()).collect();
                    let mut want = Vec::new();
                    for h in 0..heads {
                        let mut p: Vec<f32> = slots
                            .iter()
                            .map(|&j| {
                                (0..hd).fold(0.0, |acc, d| {
                                    acc + q[[i, h * hd + d]] * scale * kt[[h, d, j]]
                                })
                            })
                            .collect();
                        softmax_in_place(&mut p);
                        want.extend((0..hd).map(|c| {
                            slots
                                .iter()
                                .zip(&p)
                                .fold(0.0, |acc, (&j, &pj)| acc + pj * v[[h, j, c]])
                        }));
                    }
                    assert_eq!(out.row(i).to_vec(), want, "{case}, node {i}");
                }
                let filled = ndarray::s![.., .., ..pos0 + n];
                assert_eq!(kc.slice(filled), kt.slice(filled), "{case}: keys stored");
                let filled = ndarray::s![.., ..pos0 + n, ..];
                assert_eq!(vc.slice(filled), v.slice(filled), "{case}: values stored");
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
        let k = Array2::from_shape_vec((1, 2), vec![0.5f32, 0.0]).unwrap();
        let v = Array2::from_shape_vec((1, 2), vec![2.0f32, -4.0]).unwrap();
        let mut kt = Array3::<f32>::zeros((1, 2, 4)); // transposed: [head, dim, position]
        let mut vc = Array3::<f32>::zeros((1, 4, 2));
        let mut out = Array2::zeros((1, 2));
        attend(
            q.view(),
            k.view(),
            v.view(),
            kt.view_mut(),
            vc.view_mut(),
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
        // Keys k0 = (0, 1) (cached, transposed: [dim 0: 0, ·; dim 1: 1, ·]) and k1 = (l, 0)
        // (new); values v0 = (4, 0) (cached) and v1 = (0, 8) (new).
        let mut kt = Array3::from_shape_vec((1, 2, 2), vec![0.0f32, 0.0, 1.0, 0.0]).unwrap();
        let mut vc = Array3::from_shape_vec((1, 2, 2), vec![4.0f32, 0.0, 0.0, 0.0]).unwrap();
        let k = Array2::from_shape_vec((1, 2), vec![l, 0.0]).unwrap();
        let v = Array2::from_shape_vec((1, 2), vec![0.0f32, 8.0]).unwrap();
        let mut out = Array2::zeros((1, 2));
        attend(
            q.view(),
            k.view(),
            v.view(),
            kt.view_mut(),
            vc.view_mut(),
            1,
            out.view_mut(),
            &mut [0.0; 2],
        );
        assert!(
            (out[[0, 0]] - 1.0).abs() < 1e-5 && (out[[0, 1]] - 6.0).abs() < 1e-5,
            "{out}"
        );
    }

    /// The baseline and AVX2 copies of the elementwise and attention loops do the same
    /// operations in the same order, so they give the same bits.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_baseline_and_avx2_copies_of_the_loops_give_the_same_bits() {
        use crate::ops::{rms_norm_into, swiglu_into};
        let f = |i: usize| ((i * 7919) % 211) as f32 / 211.0 - 0.5;
        let (heads, hd, cap, pos0) = (2, 8, 24, 5);
        let kernels = |n: usize| {
            let d = heads * hd;
            let q = Array2::from_shape_fn((n, d), |(i, j)| f(i * d + j));
            let k = Array2::from_shape_fn((n, d), |(i, j)| f(1000 + i * d + j));
            let v = Array2::from_shape_fn((n, d), |(i, j)| f(2000 + i * d + j));
            let kt0 =
                Array3::from_shape_fn((heads, hd, cap), |(h, c, s)| f(3000 + h * 99 + c * 31 + s));
            let vc0 =
                Array3::from_shape_fn((heads, cap, hd), |(h, s, c)| f(5000 + h * 97 + s * 29 + c));
            let (mut kt, mut vc) = (kt0.clone(), vc0.clone());
            let mut out = Array2::zeros((n, d));
            let mut scores = vec![0.0f32; n.max(heads) * (pos0 + n)];
            let (qv, kv, vv) = (q.view(), k.view(), v.view());
            attend(
                qv,
                kv,
                vv,
                kt.view_mut(),
                vc.view_mut(),
                pos0,
                out.view_mut(),
                &mut scores,
            );
            // A chain as a tree: node i sees the cache and the nodes up to itself.
            let visible: Vec<Vec<usize>> = (0..n).map(|i| (pos0..=pos0 + i).collect()).collect();
            let (mut kt_tree, mut vc_tree) = (kt0.clone(), vc0.clone());
            let mut tree = Array2::zeros((n, d));
            attend_tree(
                qv,
                kv,
                vv,
                kt_tree.view_mut(),
                vc_tree.view_mut(),
                pos0,
                pos0,
                &visible,
                tree.view_mut(),
                &mut scores,
            );
            let x = Array2::from_shape_fn((9, 40), |(i, j)| f(7000 + i * 40 + j) * 3.0);
            let gain = ndarray::Array1::from_shape_fn(40, |j| 0.5 + f(9000 + j));
            let mut normed = Array2::zeros((9, 40));
            rms_norm_into(x.view(), gain.view(), 1e-5, normed.view_mut());
            let mut act = Array2::zeros((9, 20));
            swiglu_into(x.view(), act.view_mut());
            (out, tree, kt, vc, normed, act)
        };
        for n in [3, 9] {
            let baseline = crate::cpu::baseline_pool().install(|| kernels(n));
            assert_eq!(baseline, kernels(n), "{n} queries");
        }
    }
}
