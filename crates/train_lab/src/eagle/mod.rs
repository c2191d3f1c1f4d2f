//! EAGLE's draft head trained on a frozen target (Li et al. 2024, EAGLE-1, §3): one decoder
//! layer that runs one step ahead at the level of features. At position j it reads the
//! target's last hidden state f_j and the embedding of the token after it, x_{j+1}, and
//! predicts the next hidden state f_{j+1}, which the target's own LM head turns into a
//! guess for x_{j+2}. Unlike Medusa's heads ([`crate::medusa`]), drafting the next level
//! reads the token just drafted.
//!
//! ```text
//! forward                                   backward (d· is the gradient of ·)
//! a = [e(x_{j+1}) | f_j]                    (frozen: e, the target's embedding)
//! u = a·W_fc + b                            dW_fc = aᵀ·du, db = Σ_rows du
//! y = block(u)      (a transformer block)   du = block'(dy)
//! g = rms_norm(y)·γ (the draft's f̂_{j+1})   dy = rms_norm'(dg)
//! logits = g·L      (L: the target's head)  dg = dlogits·Lᵀ + smooth_l1'(g − f_{j+1}) / d
//! loss = Σ_j mean_d smooth_l1(g − f_{j+1}) + W_CLS · CE(logits, x_{j+2})
//! ```
//!
//! The target's hidden state here is read after its final norm (what its LM head reads),
//! so the draft ends in a norm of its own; EAGLE's weight of the classification loss, 0.1,
//! and its smooth-L1 regression are kept; its noise on the training features is not.

use ndarray::{Array1, Array2, Axis, Zip, concatenate};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use transformer_lab::{Config, config_like, init_params};

use crate::Error;
use crate::block::{BlockCache, Shape, block_backward, block_forward};
use crate::layers::{rms_norm_backward, rms_norm_forward, rope_tables};
use crate::loss::{Targets, cross_entropy};
use crate::weights::{Layer, Named, Real, Tensors, Weights};

mod run;

pub use run::{Agreement, agreement, train};

/// The classification loss's weight beside the regression's (EAGLE's 0.1).
pub const W_CLS: f64 = 0.1;

/// EAGLE's draft head: the fusion layer, one transformer block of the target's shape, a
/// final norm. The embedding and the LM head are the target's, frozen.
#[derive(Debug, Clone, PartialEq)]
pub struct Eagle<T> {
    /// The fusion layer, `[2 · d_model, d_model]`: its first `d_model` rows read the
    /// token's embedding, the rest the target's hidden state.
    pub fc: Array2<T>,
    /// The fusion layer's bias, `[d_model]`.
    pub fc_bias: Array1<T>,
    /// The block.
    pub layer: Layer<T>,
    /// The final norm's gain, `[d_model]`.
    pub final_norm: Array1<T>,
}

impl<T: Real> Eagle<T> {
    /// A head for a target of shape `cfg`: the block as `transformer_lab::init_params`
    /// initialises a one-block model of that shape from `seed`, the fusion layer uniform
    /// in ±1/√(2 · d_model) from the same seed, biases zero, the norm's gain 1.
    ///
    /// Errors: a shape the toy model refuses.
    pub fn new(cfg: &Config, seed: u64) -> Result<Self, Error> {
        let d = cfg.d_model;
        let one = Weights::<T>::from_params(&init_params(&config_like(cfg, 1), seed)?);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let r = 1.0 / ((2 * d) as f64).sqrt();
        let fc = Array2::from_shape_fn((2 * d, d), |_| T::of(rng.random_range(-r..r)));
        Ok(Eagle {
            fc,
            fc_bias: Array1::zeros(d),
            layer: one.layers.into_iter().next().expect("one block"),
            final_norm: Array1::ones(d),
        })
    }

    /// The head converted to another float type.
    pub fn cast<U: Real>(&self) -> Eagle<U> {
        let f = |x: T| U::of(x.f64());
        let l = &self.layer;
        Eagle {
            fc: self.fc.mapv(f),
            fc_bias: self.fc_bias.mapv(f),
            layer: Layer {
                attn_norm: l.attn_norm.mapv(f),
                wq: l.wq.mapv(f),
                wk: l.wk.mapv(f),
                wv: l.wv.mapv(f),
                wo: l.wo.mapv(f),
                mlp_norm: l.mlp_norm.mapv(f),
                w_gate: l.w_gate.mapv(f),
                w_up: l.w_up.mapv(f),
                w_down: l.w_down.mapv(f),
            },
            final_norm: self.final_norm.mapv(f),
        }
    }

    /// `self += other`, element by element, in [`Tensors::tensors_mut`]'s order.
    pub fn add_assign(&mut self, other: &Eagle<T>) {
        let mut other = other.clone();
        for ((_, a), (_, b)) in self.tensors_mut().into_iter().zip(other.tensors_mut()) {
            for (a, b) in a.iter_mut().zip(b.iter()) {
                *a += *b;
            }
        }
    }
}

impl<T: Real> Tensors for Eagle<T> {
    type Elem = T;

    /// `fc`, `fc_bias`, the block's tensors as `layer.{name}`, `final_norm`.
    fn tensors_mut(&mut self) -> Vec<Named<'_, T>> {
        let l = &mut self.layer;
        let mut out: Vec<Named<'_, T>> = vec![
            ("fc".into(), self.fc.as_slice_mut().expect("contiguous")),
            (
                "fc_bias".into(),
                self.fc_bias.as_slice_mut().expect("contiguous"),
            ),
        ];
        out.push(one(
            "attn_norm",
            l.attn_norm.as_slice_mut().expect("contiguous"),
        ));
        for (name, m) in [
            ("wq", &mut l.wq),
            ("wk", &mut l.wk),
            ("wv", &mut l.wv),
            ("wo", &mut l.wo),
        ] {
            out.push(one(name, m.as_slice_mut().expect("contiguous")));
        }
        out.push(one(
            "mlp_norm",
            l.mlp_norm.as_slice_mut().expect("contiguous"),
        ));
        for (name, m) in [
            ("w_gate", &mut l.w_gate),
            ("w_up", &mut l.w_up),
            ("w_down", &mut l.w_down),
        ] {
            out.push(one(name, m.as_slice_mut().expect("contiguous")));
        }
        out.push((
            "final_norm".into(),
            self.final_norm.as_slice_mut().expect("contiguous"),
        ));
        out
    }

    fn zeros_like(&self) -> Self {
        let mut z = self.clone();
        for (_, x) in z.tensors_mut() {
            x.fill(T::zero());
        }
        z
    }
}

/// A block tensor's name and slice.
fn one<'a, T>(name: &str, x: &'a mut [T]) -> Named<'a, T> {
    (format!("layer.{name}"), x)
}

/// What the head learns from, for `b` windows of `t` positions: at each position j of each
/// window the token after it `next [b · t]` (x_{j+1}), the one after that `after [b · t]`
/// (x_{j+2}), and the target's hidden states `features [b · (t + 1), d_model]` at positions
/// 0 … t of each window (f_j and f_{j+1} both come from it).
#[derive(Debug, Clone, Copy)]
pub struct Step<'a, T> {
    /// Windows.
    pub b: usize,
    /// Positions a window.
    pub t: usize,
    /// x_{j+1} at each position.
    pub next: &'a [u32],
    /// x_{j+2} at each position.
    pub after: &'a [u32],
    /// The target's hidden states, `t + 1` a window.
    pub features: &'a Array2<T>,
}

/// The frozen target tensors the head reads: its embedding `[vocab, d]` and LM head
/// `[d, vocab]`, and its shape.
#[derive(Debug, Clone, Copy)]
pub struct Frozen<'a, T> {
    /// The target's embedding.
    pub embed: &'a Array2<T>,
    /// The target's LM head.
    pub lm_head: &'a Array2<T>,
    /// The target's shape (the block's heads, RoPE, the norm's epsilon).
    pub cfg: &'a Config,
}

/// Whether the block has the shapes of a block of `cfg`.
fn layer_fits<T>(l: &Layer<T>, cfg: &Config) -> bool {
    let (d, ff) = (cfg.d_model, cfg.d_ff);
    let square = [&l.wq, &l.wk, &l.wv, &l.wo]
        .iter()
        .all(|m| m.dim() == (d, d));
    square
        && l.attn_norm.len() == d
        && l.mlp_norm.len() == d
        && l.w_gate.dim() == (d, ff)
        && l.w_up.dim() == (d, ff)
        && l.w_down.dim() == (ff, d)
        && d.is_multiple_of(cfg.n_heads.max(1))
}

fn check<T: Real>(e: &Eagle<T>, frozen: &Frozen<'_, T>, s: &Step<'_, T>) -> Result<(), Error> {
    let (d, vocab) = (frozen.cfg.d_model, frozen.cfg.vocab);
    let n = s.b * s.t;
    let fits = n > 0
        && s.t <= frozen.cfg.max_seq
        && e.fc.dim() == (2 * d, d)
        && e.fc_bias.len() == d
        && e.final_norm.len() == d
        && layer_fits(&e.layer, frozen.cfg)
        && frozen.embed.dim() == (vocab, d)
        && frozen.lm_head.dim() == (d, vocab)
        && s.next.len() == n
        && s.after.len() == n
        && s.features.dim() == (s.b * (s.t + 1), d);
    if !fits {
        return Err(Error::Shape(format!(
            "an EAGLE step of {} windows of {} positions for a target of width {d}: head, \
             frozen tensors, tokens or features of other shapes",
            s.b, s.t
        )));
    }
    let outside = |x: &[u32]| x.iter().any(|&v| v as usize >= vocab);
    if outside(s.next) || outside(s.after) {
        return Err(Error::Shape(format!(
            "a token outside the vocabulary of {vocab}"
        )));
    }
    Ok(())
}

/// The forward pass of a step, kept for the backward.
struct Pass<T> {
    /// `[e(x_{j+1}) | f_j]`, `[n, 2d]`.
    a: Array2<T>,
    /// The block's output.
    y: Array2<T>,
    cache: BlockCache<T>,
    /// The draft's features (after its norm) and the norm's factors.
    g: Array2<T>,
    r: Array1<T>,
    logits: Array2<T>,
    /// f_{j+1} at each position.
    f_next: Array2<T>,
    /// RoPE's tables for the step's positions.
    tables: (Array2<T>, Array2<T>),
}

fn shape<'a, T: Real>(
    cfg: &Config,
    s: &Step<'_, T>,
    tables: &'a (Array2<T>, Array2<T>),
) -> Shape<'a, T> {
    Shape {
        b: s.b,
        t: s.t,
        n_heads: cfg.n_heads,
        eps: T::of(f64::from(cfg.norm_eps)),
        rope: (&tables.0, &tables.1),
    }
}

fn forward<T: Real>(
    e: &Eagle<T>,
    frozen: &Frozen<'_, T>,
    s: &Step<'_, T>,
) -> Result<Pass<T>, Error> {
    check(e, frozen, s)?;
    let cfg = frozen.cfg;
    let n = s.b * s.t;
    // f_j and f_{j+1} of every position, window after window.
    let rows = |shift: usize| -> Vec<usize> {
        (0..n)
            .map(|i| (i / s.t) * (s.t + 1) + i % s.t + shift)
            .collect()
    };
    let f_now = s.features.select(Axis(0), &rows(0));
    let f_next = s.features.select(Axis(0), &rows(1));
    let mut emb = Array2::zeros((n, cfg.d_model));
    for (mut row, &x) in emb.outer_iter_mut().zip(s.next) {
        row.assign(&frozen.embed.row(x as usize));
    }
    let a = concatenate(Axis(1), &[emb.view(), f_now.view()]).expect("two [n, d] halves");
    let u = a.dot(&e.fc) + &e.fc_bias;
    let tables = rope_tables::<T>(s.t, cfg.head_dim(), cfg.rope_theta);
    let sh = shape(cfg, s, &tables);
    let (y, cache) = block_forward(&e.layer, &sh, u);
    let (g, r) = rms_norm_forward(&y, &e.final_norm, sh.eps);
    let logits = g.dot(frozen.lm_head);
    Ok(Pass {
        a,
        y,
        cache,
        g,
        r,
        logits,
        f_next,
        tables,
    })
}

/// The loss (the regression's and [`W_CLS`] times the classification's, summed over the
/// positions) and its gradient divided by `denom` with respect to every tensor of `e`.
///
/// Errors: shapes that do not fit (see [`Step`] and [`Frozen`]), a token outside the
/// vocabulary.
pub fn loss_and_grad<T: Real>(
    e: &Eagle<T>,
    frozen: &Frozen<'_, T>,
    s: &Step<'_, T>,
    denom: f64,
) -> Result<(f64, Eagle<T>), Error> {
    let p = forward(e, frozen, s)?;
    let d = frozen.cfg.d_model;
    let scale = T::of(1.0 / denom);
    let (ce, dlogits) = cross_entropy(&p.logits, Targets::Tokens(s.after), scale * T::of(W_CLS));
    // Smooth L1 of each element, averaged over the width.
    let mut reg = 0.0;
    let mut dg = dlogits.dot(&frozen.lm_head.t());
    let per = T::of(1.0 / d as f64);
    Zip::from(&mut dg)
        .and(&p.g)
        .and(&p.f_next)
        .for_each(|dg, &g, &f| {
            let x = g - f;
            let (value, slope) = match x.abs() < T::one() {
                true => (T::of(0.5) * x * x, x),
                false => (x.abs() - T::of(0.5), x.signum()),
            };
            reg += value.f64() / d as f64;
            *dg += slope * per * scale;
        });
    let mut grad = e.zeros_like();
    let sh = shape(frozen.cfg, s, &p.tables);
    let dy = rms_norm_backward(&p.y, &e.final_norm, &p.r, &dg, &mut grad.final_norm);
    let du = block_backward(&e.layer, &sh, &p.cache, &dy, &mut grad.layer);
    grad.fc = p.a.t().dot(&du);
    grad.fc_bias = du.sum_axis(Axis(0));
    Ok((reg + W_CLS * ce, grad))
}

/// The head's logits for x_{j+2} at every position of `s`, teacher-forced.
///
/// Errors: as [`loss_and_grad`].
pub fn draft_logits<T: Real>(
    e: &Eagle<T>,
    frozen: &Frozen<'_, T>,
    s: &Step<'_, T>,
) -> Result<Array2<T>, Error> {
    Ok(forward(e, frozen, s)?.logits)
}
