//! One transformer block forward and backward: pre-norm attention, then the pre-norm
//! SwiGLU MLP, each added to the residual stream (as
//! [`transformer_lab::reference::block`]).
//!
//! ```text
//! forward                                   backward (d· is the gradient of ·)
//! h1 = rms_norm(x) · attn_norm              dx  = dx2 + rms_norm'(dh1)
//! q, k, v = h1·Wq, h1·Wk, h1·Wv; rope(q, k) dh1 = dq·Wqᵀ + dk·Wkᵀ + dv·Wvᵀ (q, k rotated back)
//! o = attention(q, k, v)                    dq, dk, dv = attention'(do)
//! x2 = x + o·Wo                             do = dx2·Woᵀ, dWo += oᵀ·dx2
//! h2 = rms_norm(x2) · mlp_norm              dx2 = dy + rms_norm'(dh2)
//! a, u = h2·Wg, h2·Wu; s = silu(a) ⊙ u      da = ds ⊙ u ⊙ silu'(a), du = ds ⊙ silu(a)
//! y = x2 + s·Wd                             ds = dy·Wdᵀ, dWd += sᵀ·dy
//! ```

use ndarray::{Array1, Array2};

use crate::layers::{
    attention_backward, attention_forward, linear_backward, rms_norm_backward, rms_norm_forward,
    rope_rotate, silu, silu_grad,
};
use crate::weights::{Layer, Real};

/// The shape a block runs at: `b` sequences of `t` positions, `n_heads` heads, and the
/// RoPE tables for positions `0..t`.
pub struct Shape<'a, T> {
    /// Sequences.
    pub b: usize,
    /// Positions per sequence.
    pub t: usize,
    /// Attention heads.
    pub n_heads: usize,
    /// RMSNorm's epsilon.
    pub eps: T,
    /// RoPE's cos and sin, `[t, head_dim / 2]` each.
    pub rope: (&'a Array2<T>, &'a Array2<T>),
}

/// What a block's forward keeps for its backward.
pub struct BlockCache<T> {
    x: Array2<T>,
    r1: Array1<T>,
    h1: Array2<T>,
    q: Array2<T>,
    k: Array2<T>,
    v: Array2<T>,
    probs: Vec<T>,
    o: Array2<T>,
    x2: Array2<T>,
    r2: Array1<T>,
    h2: Array2<T>,
    a: Array2<T>,
    u: Array2<T>,
    s: Array2<T>,
}

/// A block's forward: `x [N, d] → y [N, d]`, and its cache.
pub fn block_forward<T: Real>(
    l: &Layer<T>,
    sh: &Shape<'_, T>,
    x: Array2<T>,
) -> (Array2<T>, BlockCache<T>) {
    let (h1, r1) = rms_norm_forward(&x, &l.attn_norm, sh.eps); // [N, d]
    let mut q = h1.dot(&l.wq); // [N, d]: the heads side by side
    let mut k = h1.dot(&l.wk);
    let v = h1.dot(&l.wv);
    rope_rotate(&mut q, sh.t, sh.n_heads, sh.rope, T::one());
    rope_rotate(&mut k, sh.t, sh.n_heads, sh.rope, T::one());
    let (o, probs) = attention_forward(&q, &k, &v, (sh.b, sh.t, sh.n_heads)); // [N, d]
    let x2 = &x + &o.dot(&l.wo); // residual
    let (h2, r2) = rms_norm_forward(&x2, &l.mlp_norm, sh.eps);
    let a = h2.dot(&l.w_gate); // [N, d_ff]
    let u = h2.dot(&l.w_up); // [N, d_ff]
    let s = &a.mapv(silu) * &u; // [N, d_ff]
    let y = &x2 + &s.dot(&l.w_down); // residual, [N, d]
    let cache = BlockCache {
        x,
        r1,
        h1,
        q,
        k,
        v,
        probs,
        o,
        x2,
        r2,
        h2,
        a,
        u,
        s,
    };
    (y, cache)
}

/// A block's backward: the gradient of its input from that of its output `dy`, adding
/// its parameters' gradients into `g`.
pub fn block_backward<T: Real>(
    l: &Layer<T>,
    sh: &Shape<'_, T>,
    c: &BlockCache<T>,
    dy: &Array2<T>,
    g: &mut Layer<T>,
) -> Array2<T> {
    // MLP: y = x2 + s·Wd.
    let ds = linear_backward(c.s.view(), &l.w_down, dy, &mut g.w_down); // [N, d_ff]
    let mut da = ds.clone();
    let mut du = ds;
    ndarray::Zip::from(&mut da)
        .and(&mut du)
        .and(&c.a)
        .and(&c.u)
        .for_each(|da, du, &a, &u| {
            let dsv = *da;
            *da = dsv * u * silu_grad(a);
            *du = dsv * silu(a);
        });
    let dh2 = linear_backward(c.h2.view(), &l.w_gate, &da, &mut g.w_gate)
        + linear_backward(c.h2.view(), &l.w_up, &du, &mut g.w_up);
    let dx2 = dy + &rms_norm_backward(&c.x2, &l.mlp_norm, &c.r2, &dh2, &mut g.mlp_norm);
    // Attention: x2 = x + o·Wo.
    let d_o = linear_backward(c.o.view(), &l.wo, &dx2, &mut g.wo);
    let shape = (sh.b, sh.t, sh.n_heads);
    let (mut dq, mut dk, dv) = attention_backward((&c.q, &c.k, &c.v), &c.probs, &d_o, shape);
    rope_rotate(&mut dq, sh.t, sh.n_heads, sh.rope, -T::one());
    rope_rotate(&mut dk, sh.t, sh.n_heads, sh.rope, -T::one());
    let dh1 = linear_backward(c.h1.view(), &l.wq, &dq, &mut g.wq)
        + linear_backward(c.h1.view(), &l.wk, &dk, &mut g.wk)
        + linear_backward(c.h1.view(), &l.wv, &dv, &mut g.wv);
    dx2 + rms_norm_backward(&c.x, &l.attn_norm, &c.r1, &dh1, &mut g.attn_norm)
}
