//! The whole forward pass written to be read: start here.
//!
//! This is the model of lecture 2, a Llama-style pre-norm decoder, as plain code: one
//! function per step, in the order the data flows, with the shape of every array in a
//! comment, plain loops and plain `ndarray` products. Nothing here is tuned: no scratch
//! buffers, no SIMD, no chunking, no `unsafe`, no cache. It is also written without the
//! crate's fast path ([`ops`](crate::ops), [`gemm`](crate::gemm), [`TransformerLM`](crate::TransformerLM)):
//! the fast path is tested against this module, so a mistake in one of them (a softmax
//! scale, a RoPE pair, where a norm sits) shows up as a disagreement instead of being
//! shared by both.
//!
//! ```text
//! x = embed[tokens]                                   [T, d_model]
//! for each layer:
//!     h = rms_norm(x) · attn_norm
//!     q, k, v = h · W_q, h · W_k, h · W_v             [T, d_model] = n_heads × [T, head_dim]
//!     q, k = rope(q), rope(k)                         rotate pairs (2i, 2i+1) by pos / θ^(2i/head_dim)
//!     a = softmax(q · kᵀ / √head_dim, causal) · v     per head
//!     x = x + a · W_o
//!     h = rms_norm(x) · mlp_norm
//!     x = x + (silu(h · W_gate) ⊙ (h · W_up)) · W_down
//! logits = rms_norm(x) · final_norm · lm_head         [T, vocab]
//! ```
//!
//! Matrices are `[in, out]`, so a product is `y = x · W` (as in [`Params`]). Everything
//! is f32, as in the fast path; the sums are plain left-to-right sums.

use ndarray::{Array1, Array2, Array3, ArrayView1, ArrayView2, Axis, s};

use crate::{Config, Error, LayerParams, Params};

/// Logits of every position of every sequence: `tokens [B, T] → [B, T, vocab]`, position
/// t of a sequence seeing its tokens `0..=t` (teacher forcing). The reading version of
/// [`TransformerLM::full_logits`](crate::TransformerLM::full_logits).
///
/// Errors: parameters that do not fit `cfg`, an empty batch, `T > max_seq`, a token id
/// ≥ vocab.
///
/// ```
/// # let cfg = transformer_lab::Config { vocab: 16, d_model: 8, n_layers: 1, n_heads: 2,
/// #     d_ff: 12, max_seq: 8, norm_eps: 1e-5, rope_theta: 10000.0 };
/// let p = transformer_lab::init_params(&cfg, 0)?;
/// let tokens = ndarray::array![[1u32, 2, 3], [4, 5, 6]];
/// let logits = transformer_lab::reference::full_logits(&p, &cfg, tokens.view())?;
/// assert_eq!(logits.dim(), (2, 3, 16));
/// # Ok::<(), transformer_lab::Error>(())
/// ```
pub fn full_logits(
    params: &Params,
    cfg: &Config,
    tokens: ArrayView2<u32>,
) -> Result<Array3<f32>, Error> {
    let (b, t) = tokens.dim();
    if b == 0 {
        return Err(Error::Shape("a batch needs at least one sequence".into()));
    }
    if t == 0 {
        return Err(Error::Shape("a pass needs at least one token".into()));
    }
    let mut out = Array3::zeros((b, t, cfg.vocab)); // [B, T, vocab]
    for (seq, mut dst) in tokens.outer_iter().zip(out.outer_iter_mut()) {
        let seq: Vec<u32> = seq.to_vec();
        dst.assign(&forward(params, cfg, &seq)?);
    }
    Ok(out)
}

/// Logits of every position of one sequence: `tokens [T] → [T, vocab]`.
///
/// Errors: parameters that do not fit `cfg`, `T > max_seq`, a token id ≥ vocab.
pub fn forward(params: &Params, cfg: &Config, tokens: &[u32]) -> Result<Array2<f32>, Error> {
    params.check_against(cfg)?;
    if tokens.len() > cfg.max_seq {
        return Err(Error::TooLong {
            len: tokens.len(),
            max: cfg.max_seq,
        });
    }
    let mut x = embed(&params.embed, tokens)?; // [T, d_model]
    for layer in &params.layers[..cfg.n_layers] {
        x = block(layer, cfg, &x); // [T, d_model]
    }
    let h = rms_norm(&x, params.final_norm.view(), cfg.norm_eps); // [T, d_model]
    Ok(h.dot(&params.lm_head)) // [T, d_model] · [d_model, vocab] = [T, vocab]
}

/// The embedding: row `tokens[t]` of the table `[vocab, d_model]` for each position t,
/// `[T, d_model]`.
///
/// Errors: a token id at or past the vocabulary size (the table's rows).
///
/// ```
/// use transformer_lab::reference::embed;
/// let table = ndarray::array![[0.0f32, 1.0], [2.0, 3.0]]; // 2 tokens, d_model 2
/// assert_eq!(embed(&table, &[1, 0])?, ndarray::array![[2.0f32, 3.0], [0.0, 1.0]]);
/// assert!(embed(&table, &[2]).is_err());
/// # Ok::<(), transformer_lab::Error>(())
/// ```
pub fn embed(table: &Array2<f32>, tokens: &[u32]) -> Result<Array2<f32>, Error> {
    let vocab = table.nrows();
    if let Some(&token) = tokens.iter().find(|&&t| t as usize >= vocab) {
        return Err(Error::TokenOutOfRange { token, vocab });
    }
    let mut x = Array2::zeros((tokens.len(), table.ncols())); // [T, d_model]
    for (t, &token) in tokens.iter().enumerate() {
        x.row_mut(t).assign(&table.row(token as usize));
    }
    Ok(x)
}

/// One transformer block, pre-norm: `x + Attn(RMSNorm(x))`, then `+ MLP(RMSNorm(·))`.
/// `x [T, d_model] → [T, d_model]`, positions `0..T`.
pub fn block(layer: &LayerParams, cfg: &Config, x: &Array2<f32>) -> Array2<f32> {
    // Attention sub-block.
    let h = rms_norm(x, layer.attn_norm.view(), cfg.norm_eps); // [T, d_model]
    let q = h.dot(&layer.wq); // [T, d_model]: n_heads heads of head_dim side by side
    let k = h.dot(&layer.wk); // [T, d_model]
    let v = h.dot(&layer.wv); // [T, d_model]
    let q = rope(&q, cfg.n_heads, cfg.rope_theta); // [T, d_model]
    let k = rope(&k, cfg.n_heads, cfg.rope_theta); // [T, d_model]
    let a = causal_attention(&q, &k, &v, cfg.n_heads); // [T, d_model]
    let x = x + &a.dot(&layer.wo); // residual, [T, d_model]

    // MLP sub-block.
    let h = rms_norm(&x, layer.mlp_norm.view(), cfg.norm_eps); // [T, d_model]
    let m = swiglu_mlp(&h, layer); // [T, d_model]
    x + &m // residual, [T, d_model]
}

/// RMSNorm of each row: `x / √(mean(x²) + eps) · gain` (Zhang & Sennrich 2019).
/// `x [T, d] → [T, d]`, `gain [d]`.
///
/// ```
/// // mean(3², 4²) = 12.5, so [3, 4] → [3, 4] / √12.5 · [1, 2]
/// let y = transformer_lab::reference::rms_norm(
///     &ndarray::array![[3.0f32, 4.0]], ndarray::array![1.0f32, 2.0].view(), 0.0);
/// assert!((y[[0, 0]] - 0.848528).abs() < 1e-6 && (y[[0, 1]] - 2.262742).abs() < 1e-6);
/// ```
pub fn rms_norm(x: &Array2<f32>, gain: ArrayView1<f32>, eps: f32) -> Array2<f32> {
    let d = x.ncols();
    let mut y = Array2::zeros(x.raw_dim()); // [T, d]
    for t in 0..x.nrows() {
        let mut sum_sq = 0.0f32;
        for j in 0..d {
            sum_sq += x[[t, j]] * x[[t, j]];
        }
        let rms = (sum_sq / d as f32 + eps).sqrt();
        for j in 0..d {
            y[[t, j]] = x[[t, j]] / rms * gain[j];
        }
    }
    y
}

/// Rotary position embedding (Su et al. 2021) of every head of every row, row t being
/// position t: in each head, the pair of dimensions `(2i, 2i+1)` turns by the angle
/// `t / θ^(2i / head_dim)`. `x [T, n_heads · head_dim] → [T, n_heads · head_dim]`.
///
/// ```
/// // head_dim 4, θ = 100: at position 1, pair 0 turns by 1 rad, pair 1 by 1/√100 = 0.1 rad.
/// let x = ndarray::array![[1.0f32, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0, 0.0]];
/// let y = transformer_lab::reference::rope(&x, 1, 100.0);
/// assert_eq!(y.row(0), x.row(0)); // position 0 does not move
/// let want = [1f32.cos(), 1f32.sin(), 0.1f32.cos(), 0.1f32.sin()];
/// assert!(y.row(1).iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6));
/// ```
pub fn rope(x: &Array2<f32>, n_heads: usize, theta: f32) -> Array2<f32> {
    let head_dim = x.ncols() / n_heads;
    let mut y = x.clone(); // [T, n_heads · head_dim]
    for pos in 0..x.nrows() {
        for h in 0..n_heads {
            for i in 0..head_dim / 2 {
                // The angle in f64, then rounded once to f32.
                let freq = f64::from(theta).powf(-(2.0 * i as f64) / head_dim as f64);
                let angle = pos as f64 * freq;
                let (sin, cos) = (angle.sin() as f32, angle.cos() as f32);
                let (a, b) = (h * head_dim + 2 * i, h * head_dim + 2 * i + 1);
                let (x0, x1) = (x[[pos, a]], x[[pos, b]]);
                y[[pos, a]] = x0 * cos - x1 * sin;
                y[[pos, b]] = x0 * sin + x1 * cos;
            }
        }
    }
    y
}

/// Causal multi-head attention: for each head, `softmax(q · kᵀ / √head_dim) · v` with
/// query t seeing keys `0..=t` only. `q`, `k`, `v [T, n_heads · head_dim]` (q and k
/// already rotated) → `[T, n_heads · head_dim]`, the heads side by side.
pub fn causal_attention(
    q: &Array2<f32>,
    k: &Array2<f32>,
    v: &Array2<f32>,
    n_heads: usize,
) -> Array2<f32> {
    let (t_len, d) = q.dim();
    let head_dim = d / n_heads;
    let scale = 1.0 / (head_dim as f32).sqrt();
    let mut out = Array2::zeros((t_len, d)); // [T, n_heads · head_dim]
    for h in 0..n_heads {
        let cols = s![.., h * head_dim..(h + 1) * head_dim];
        let (qh, kh, vh) = (q.slice(cols), k.slice(cols), v.slice(cols)); // [T, head_dim]
        for i in 0..t_len {
            // Pass 1: scores of query i against keys 0..=i.
            let mut scores = Array1::<f32>::zeros(i + 1); // [i + 1]
            for j in 0..=i {
                let mut dot = 0.0f32;
                for c in 0..head_dim {
                    dot += qh[[i, c]] * kh[[j, c]];
                }
                scores[j] = dot * scale;
            }
            // Pass 2: softmax (subtract the maximum so exp cannot overflow).
            let probs = softmax(scores.view()); // [i + 1]
            // Pass 3: the output is the probability-weighted sum of the values.
            for j in 0..=i {
                for c in 0..head_dim {
                    out[[i, h * head_dim + c]] += probs[j] * vh[[j, c]];
                }
            }
        }
    }
    out
}

/// Softmax of a vector: `exp(x − max) / Σ exp(x − max)`.
pub fn softmax(x: ArrayView1<f32>) -> Array1<f32> {
    let max = x.fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    let e = x.mapv(|v| (v - max).exp());
    let sum = e.sum_axis(Axis(0)).into_scalar();
    e / sum
}

/// SiLU (swish): `x · σ(x) = x / (1 + e^(−x))`.
pub fn silu(x: f32) -> f32 {
    x / (1.0 + (-x).exp())
}

/// The SwiGLU MLP (Shazeer 2020): `(silu(h · W_gate) ⊙ (h · W_up)) · W_down`.
/// `h [T, d_model] → [T, d_model]`, through a hidden width `d_ff`.
pub fn swiglu_mlp(h: &Array2<f32>, layer: &LayerParams) -> Array2<f32> {
    let gate = h.dot(&layer.w_gate); // [T, d_ff]
    let up = h.dot(&layer.w_up); // [T, d_ff]
    let act = gate.mapv(silu) * &up; // [T, d_ff]
    act.dot(&layer.w_down) // [T, d_ff] · [d_ff, d_model] = [T, d_model]
}

/// Greedy decoding the slow, obvious way: append the argmax of the last position's
/// logits (ties to the lowest id), recompute the whole sequence, repeat. Returns the
/// `n_new` new tokens. The reading version of
/// [`autoregressive_generate`](crate::autoregressive_generate) at temperature 0.
///
/// Errors as [`forward`], including a prompt plus `n_new` longer than `max_seq`.
pub fn greedy_generate(
    params: &Params,
    cfg: &Config,
    prompt: &[u32],
    n_new: usize,
) -> Result<Vec<u32>, Error> {
    if prompt.is_empty() {
        return Err(Error::Shape("greedy_generate needs a prompt".into()));
    }
    if prompt.len().saturating_add(n_new) > cfg.max_seq {
        return Err(Error::TooLong {
            len: prompt.len().saturating_add(n_new),
            max: cfg.max_seq,
        });
    }
    let mut seq = prompt.to_vec();
    for _ in 0..n_new {
        let logits = forward(params, cfg, &seq)?; // [T, vocab]
        let last = logits.row(seq.len() - 1);
        let mut best = 0;
        for (id, &l) in last.iter().enumerate() {
            if l > last[best] {
                best = id;
            }
        }
        seq.push(best as u32);
    }
    Ok(seq.split_off(prompt.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn attention_of_the_first_position_is_its_own_value() {
        // Query 0 sees only key 0: probability 1, output v[0].
        let q = array![[1.0f32, 2.0], [0.5, -1.0]];
        let k = array![[0.3f32, 0.1], [2.0, 1.0]];
        let v = array![[7.0f32, -3.0], [1.0, 1.0]];
        let a = causal_attention(&q, &k, &v, 1);
        assert_eq!(a.row(0), v.row(0));
        // Query 1: scores (0.5·0.3 − 0.1, 0.5·2 − 1) / √2 = (0.05, 0) / √2.
        let s0 = 0.05f32 / 2f32.sqrt();
        let p0 = s0.exp() / (s0.exp() + 1.0);
        let want = [p0 * 7.0 + (1.0 - p0), p0 * -3.0 + (1.0 - p0)];
        for (got, want) in a.row(1).iter().zip(want) {
            assert!((got - want).abs() < 1e-6, "{a}");
        }
    }

    #[test]
    fn heads_attend_independently() {
        // Two heads of width 2; the second head's keys make query 1 attend to key 1 only
        // (a score of 100 against 0), the first head's are all zero (uniform).
        let q = array![[0.0f32, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]];
        let k = array![
            [0.0f32, 0.0, 0.0, 0.0],
            [0.0, 0.0, 100.0 * 2f32.sqrt(), 0.0]
        ];
        let v = array![[2.0f32, 4.0, 5.0, 5.0], [0.0, 0.0, 9.0, -9.0]];
        let a = causal_attention(&q, &k, &v, 2);
        assert_eq!(a.row(1).to_vec(), vec![1.0, 2.0, 9.0, -9.0]);
    }

    #[test]
    fn silu_and_softmax_match_hand_values() {
        assert!((silu(1.0) - 0.731_058_6).abs() < 1e-6);
        let p = softmax(array![0.0f32, 2f32.ln(), 5f32.ln()].view());
        for (got, want) in p.iter().zip([0.125, 0.25, 0.625]) {
            assert!((got - want).abs() < 1e-6);
        }
    }
}
