//! Each layer's forward beside its backward, llm.c's `train_gpt2.c` style: the forward
//! keeps what the backward needs, the backward takes the gradient of the layer's output
//! and returns the gradient of its input, adding its parameters' gradients into `d…`.
//!
//! Rows are positions: a micro-batch of `b` sequences of `t` tokens is `[N = b·t, width]`,
//! sequence after sequence, so row `n` is position `n % t` of sequence `n / t`. Matrices
//! are `[in, out]` (`y = x · W`), as in [`transformer_lab::Params`]; the math is
//! [`transformer_lab::reference`]'s, written again here in any float type.

use ndarray::{Array1, Array2, ArrayView2};

use crate::weights::Real;

/// The embedding: row `tokens[n]` of `table [vocab, d]` for each position, `[N, d]`.
pub fn embed_forward<T: Real>(table: &Array2<T>, tokens: &[u32]) -> Array2<T> {
    let mut x = Array2::zeros((tokens.len(), table.ncols())); // [N, d]
    for (n, &tok) in tokens.iter().enumerate() {
        x.row_mut(n).assign(&table.row(tok as usize));
    }
    x
}

/// The embedding's backward: row `tokens[n]` of `d_table` gains `dx[n]`.
pub fn embed_backward<T: Real>(d_table: &mut Array2<T>, tokens: &[u32], dx: &Array2<T>) {
    for (n, &tok) in tokens.iter().enumerate() {
        let mut row = d_table.row_mut(tok as usize);
        row += &dx.row(n);
    }
}

/// RMSNorm of each row, `y = x · r · g` with `r = 1 / √(mean(x²) + eps)`; returns `y [N, d]`
/// and `r [N]`.
pub fn rms_norm_forward<T: Real>(x: &Array2<T>, g: &Array1<T>, eps: T) -> (Array2<T>, Array1<T>) {
    let d = T::of(x.ncols() as f64);
    let mut y = x.clone();
    let mut r = Array1::zeros(x.nrows());
    for (n, mut row) in y.outer_iter_mut().enumerate() {
        let mut sum_sq = T::zero();
        for &v in row.iter() {
            sum_sq += v * v;
        }
        let rn = T::one() / (sum_sq / d + eps).sqrt();
        r[n] = rn;
        for (v, &gj) in row.iter_mut().zip(g) {
            *v = *v * rn * gj;
        }
    }
    (y, r)
}

/// RMSNorm's backward. With `ĝ = dy ⊙ g`: `dg += Σ_n dy ⊙ x · r`, and
/// `dx = r · ĝ − x · r³ · (ĝ · x) / d` (the second term: how each input moves `r`).
pub fn rms_norm_backward<T: Real>(
    x: &Array2<T>,
    g: &Array1<T>,
    r: &Array1<T>,
    dy: &Array2<T>,
    dg: &mut Array1<T>,
) -> Array2<T> {
    let d = T::of(x.ncols() as f64);
    let mut dx = Array2::zeros(x.raw_dim());
    for n in 0..x.nrows() {
        let (xn, dyn_, rn) = (x.row(n), dy.row(n), r[n]);
        let mut dot = T::zero(); // ĝ · x
        for j in 0..xn.len() {
            dg[j] += dyn_[j] * xn[j] * rn;
            dot += dyn_[j] * g[j] * xn[j];
        }
        let c = rn * rn * rn * dot / d;
        for j in 0..xn.len() {
            dx[[n, j]] = rn * dyn_[j] * g[j] - xn[j] * c;
        }
    }
    dx
}

/// RoPE's cos and sin at each position `0..t` and pair `0..head_dim/2`: the angle
/// `pos / θ^(2i / head_dim)` in f64, as [`transformer_lab::reference::rope`] computes it.
pub fn rope_tables<T: Real>(t: usize, head_dim: usize, theta: f32) -> (Array2<T>, Array2<T>) {
    let half = head_dim / 2;
    let mut cos = Array2::zeros((t, half));
    let mut sin = Array2::zeros((t, half));
    for pos in 0..t {
        for i in 0..half {
            let freq = f64::from(theta).powf(-(2.0 * i as f64) / head_dim as f64);
            let angle = pos as f64 * freq;
            // Rounded as the model rounds them (f32), whatever T is.
            cos[[pos, i]] = T::of(f64::from(angle.cos() as f32));
            sin[[pos, i]] = T::of(f64::from(angle.sin() as f32));
        }
    }
    (cos, sin)
}

/// Turns each head's pairs `(2i, 2i+1)` of every row by its position's angle, in place;
/// `sign` −1 turns them back, which is RoPE's backward (a rotation's transpose is its
/// inverse). `x [N, n_heads · head_dim]`, row n at position `n % t`.
pub fn rope_rotate<T: Real>(
    x: &mut Array2<T>,
    t: usize,
    n_heads: usize,
    (cos, sin): (&Array2<T>, &Array2<T>),
    sign: T,
) {
    let head_dim = x.ncols() / n_heads;
    for (n, mut row) in x.outer_iter_mut().enumerate() {
        let pos = n % t;
        for h in 0..n_heads {
            for i in 0..head_dim / 2 {
                let (c, s) = (cos[[pos, i]], sign * sin[[pos, i]]);
                let (a, b) = (h * head_dim + 2 * i, h * head_dim + 2 * i + 1);
                let (x0, x1) = (row[a], row[b]);
                row[a] = x0 * c - x1 * s;
                row[b] = x0 * s + x1 * c;
            }
        }
    }
}

/// `x`'s row `n`, columns `c0..c0 + w`, as a slice (the arrays here are row-major).
fn cols<T>(x: &[T], d: usize, n: usize, c0: usize, w: usize) -> &[T] {
    &x[n * d + c0..n * d + c0 + w]
}

/// `Σ a_c b_c`, in eight running sums (lane `c % 8`) added at the end, first lane to
/// last: a fixed order the compiler can vectorise.
fn dot<T: Real>(a: &[T], b: &[T]) -> T {
    let mut lanes = [T::zero(); 8];
    let (ac, bc) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ar, br) = (ac.remainder(), bc.remainder());
    for (x, y) in ac.zip(bc) {
        for l in 0..8 {
            lanes[l] += x[l] * y[l];
        }
    }
    for (l, (&x, &y)) in ar.iter().zip(br).enumerate() {
        lanes[l] += x * y;
    }
    lanes.iter().fold(T::zero(), |acc, &x| acc + x)
}

/// `y += alpha · x`, element by element.
fn axpy<T: Real>(y: &mut [T], alpha: T, x: &[T]) {
    for (y, &x) in y.iter_mut().zip(x) {
        *y += alpha * x;
    }
}

fn row_major<T: Clone>(x: &Array2<T>) -> std::borrow::Cow<'_, [T]> {
    match x.as_slice() {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(x.iter().cloned().collect()),
    }
}

/// Causal attention of `b` sequences of `t` rows each, per head:
/// `o = softmax(q · kᵀ / √head_dim, causal) · v`. Returns `o [N, d]` and the
/// probabilities `[b, n_heads, t, t]` (zero above the diagonal), which the backward needs.
pub fn attention_forward<T: Real>(
    q: &Array2<T>,
    k: &Array2<T>,
    v: &Array2<T>,
    (b, t, n_heads): (usize, usize, usize),
) -> (Array2<T>, Vec<T>) {
    let d = q.ncols();
    let hd = d / n_heads;
    let scale = T::one() / T::of(hd as f64).sqrt();
    let (qs, ks, vs) = (row_major(q), row_major(k), row_major(v));
    let mut out = vec![T::zero(); q.nrows() * d];
    let mut probs = vec![T::zero(); b * n_heads * t * t];
    for s in 0..b {
        for h in 0..n_heads {
            let c0 = h * hd;
            for i in 0..t {
                let p = &mut probs[((s * n_heads + h) * t + i) * t..][..t];
                let qi = cols(&qs, d, s * t + i, c0, hd);
                // Pass 1: scores of query i against keys 0..=i, and their maximum.
                let mut max = T::neg_infinity();
                for (j, pj) in p.iter_mut().enumerate().take(i + 1) {
                    *pj = dot(qi, cols(&ks, d, s * t + j, c0, hd)) * scale;
                    max = max.max(*pj);
                }
                // Pass 2: softmax.
                let mut sum = T::zero();
                for pj in p.iter_mut().take(i + 1) {
                    *pj = (*pj - max).exp();
                    sum += *pj;
                }
                for pj in p.iter_mut().take(i + 1) {
                    *pj /= sum;
                }
                // Pass 3: the probability-weighted sum of the values.
                let oi = &mut out[(s * t + i) * d + c0..][..hd];
                for (j, &pj) in p.iter().enumerate().take(i + 1) {
                    axpy(oi, pj, cols(&vs, d, s * t + j, c0, hd));
                }
            }
        }
    }
    let out = Array2::from_shape_vec(q.raw_dim(), out).expect("N × d values");
    (out, probs)
}

/// Attention's backward: from `dout`, the gradients of q, k and v. Per row i of a head,
/// `dp_j = dout_i · v_j`, `dv_j += p_ij · dout_i`, the softmax's
/// `ds_j = p_ij (dp_j − Σ_l p_il dp_l)`, then `dq_i = Σ_j ds_j k_j / √hd` and
/// `dk_j += ds_j q_i / √hd`.
#[allow(clippy::type_complexity)]
pub fn attention_backward<T: Real>(
    (q, k, v): (&Array2<T>, &Array2<T>, &Array2<T>),
    probs: &[T],
    dout: &Array2<T>,
    (b, t, n_heads): (usize, usize, usize),
) -> (Array2<T>, Array2<T>, Array2<T>) {
    let d = q.ncols();
    let hd = d / n_heads;
    let scale = T::one() / T::of(hd as f64).sqrt();
    let (qs, ks, vs, dos) = (row_major(q), row_major(k), row_major(v), row_major(dout));
    let n = q.nrows() * d;
    let (mut dq, mut dk, mut dv) = (vec![T::zero(); n], vec![T::zero(); n], vec![T::zero(); n]);
    let mut ds = vec![T::zero(); t];
    for s in 0..b {
        for h in 0..n_heads {
            let c0 = h * hd;
            for i in 0..t {
                let p = &probs[((s * n_heads + h) * t + i) * t..][..t];
                let (row_i, doi) = (s * t + i, cols(&dos, d, s * t + i, c0, hd));
                let mut weighted = T::zero(); // Σ_j p_ij dp_j
                for j in 0..=i {
                    let dp = dot(doi, cols(&vs, d, s * t + j, c0, hd));
                    ds[j] = dp;
                    weighted += p[j] * dp;
                    axpy(&mut dv[(s * t + j) * d + c0..][..hd], p[j], doi);
                }
                let qi = cols(&qs, d, row_i, c0, hd);
                for j in 0..=i {
                    let dsj = p[j] * (ds[j] - weighted) * scale;
                    axpy(
                        &mut dq[row_i * d + c0..][..hd],
                        dsj,
                        cols(&ks, d, s * t + j, c0, hd),
                    );
                    axpy(&mut dk[(s * t + j) * d + c0..][..hd], dsj, qi);
                }
            }
        }
    }
    let shaped = |x: Vec<T>| Array2::from_shape_vec(q.raw_dim(), x).expect("N × d values");
    (shaped(dq), shaped(dk), shaped(dv))
}

/// SiLU, `a · σ(a)`.
pub fn silu<T: Real>(a: T) -> T {
    a / (T::one() + (-a).exp())
}

/// SiLU's derivative, `σ(a) · (1 + a · (1 − σ(a)))`.
pub fn silu_grad<T: Real>(a: T) -> T {
    let sig = T::one() / (T::one() + (-a).exp());
    sig * (T::one() + a * (T::one() - sig))
}

/// A linear layer's backward for `y = x · W`: `dW += xᵀ · dy`, returns `dx = dy · Wᵀ`.
pub fn linear_backward<T: Real>(
    x: ArrayView2<T>,
    w: &Array2<T>,
    dy: &Array2<T>,
    dw: &mut Array2<T>,
) -> Array2<T> {
    *dw += &x.t().dot(dy);
    dy.dot(&w.t())
}
