//! The model's weights as training sees them: the same tensors as
//! [`transformer_lab::Params`], in any float type (f32 to train, f64 to check gradients),
//! and the same structure again for their gradients and AdamW's moments.

use ndarray::{Array1, Array2, Zip};
use num_traits::Float;
use transformer_lab::{LayerParams, Params};

/// The float types the forward and backward passes run in: f32 (training) and f64 (the
/// gradient check).
pub trait Real:
    Float
    + num_traits::NumAssign
    + ndarray::LinalgScalar
    + ndarray::ScalarOperand
    + Send
    + Sync
    + std::fmt::Debug
{
    /// From an f64 constant.
    fn of(x: f64) -> Self;
    /// To f64, for losses and reports.
    fn f64(self) -> f64;
}

impl Real for f32 {
    fn of(x: f64) -> Self {
        x as f32
    }
    fn f64(self) -> f64 {
        f64::from(self)
    }
}

impl Real for f64 {
    fn of(x: f64) -> Self {
        x
    }
    fn f64(self) -> f64 {
        self
    }
}

/// One block's tensors (the fields of [`LayerParams`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Layer<T> {
    /// RMSNorm gain before attention, `[d_model]`.
    pub attn_norm: Array1<T>,
    /// `[d_model, d_model]`.
    pub wq: Array2<T>,
    /// `[d_model, d_model]`.
    pub wk: Array2<T>,
    /// `[d_model, d_model]`.
    pub wv: Array2<T>,
    /// `[d_model, d_model]`.
    pub wo: Array2<T>,
    /// RMSNorm gain before the MLP, `[d_model]`.
    pub mlp_norm: Array1<T>,
    /// `[d_model, d_ff]`.
    pub w_gate: Array2<T>,
    /// `[d_model, d_ff]`.
    pub w_up: Array2<T>,
    /// `[d_ff, d_model]`.
    pub w_down: Array2<T>,
}

/// The whole model's tensors (the fields of [`Params`]): the LM head is untied from the
/// embedding, as the toy model has it.
#[derive(Debug, Clone, PartialEq)]
pub struct Weights<T> {
    /// `[vocab, d_model]`.
    pub embed: Array2<T>,
    /// The blocks, first to last.
    pub layers: Vec<Layer<T>>,
    /// Final RMSNorm gain, `[d_model]`.
    pub final_norm: Array1<T>,
    /// `[d_model, vocab]`.
    pub lm_head: Array2<T>,
}

/// A tensor of any rank as one mutable slice, with its name.
pub type Named<'a, T> = (String, &'a mut [T]);

/// Named tensors that AdamW updates ([`crate::adamw::AdamState`]): a model's [`Weights`],
/// Medusa's heads ([`crate::medusa::Heads`]).
pub trait Tensors: Sized {
    /// Their float type.
    type Elem: Real;
    /// Every tensor as a flat slice with its name, always in the same order; AdamW decays
    /// those [`is_matrix`] names.
    fn tensors_mut(&mut self) -> Vec<Named<'_, Self::Elem>>;
    /// The same shapes, all zeros.
    fn zeros_like(&self) -> Self;
}

impl<T: Real> Tensors for Weights<T> {
    type Elem = T;

    fn tensors_mut(&mut self) -> Vec<Named<'_, T>> {
        Weights::tensors_mut(self)
    }

    fn zeros_like(&self) -> Self {
        Weights::zeros_like(self)
    }
}

fn cast1<A: Copy, B>(x: &Array1<A>, f: impl Fn(A) -> B) -> Array1<B> {
    x.mapv(f)
}

fn cast2<A: Copy, B>(x: &Array2<A>, f: impl Fn(A) -> B) -> Array2<B> {
    x.mapv(f)
}

impl<T: Real> Weights<T> {
    /// The toy model's weights, converted to `T`.
    pub fn from_params(p: &Params) -> Self {
        let f = |x: f32| T::of(f64::from(x));
        Weights {
            embed: cast2(&p.embed, f),
            layers: p
                .layers
                .iter()
                .map(|l| Layer {
                    attn_norm: cast1(&l.attn_norm, f),
                    wq: cast2(&l.wq, f),
                    wk: cast2(&l.wk, f),
                    wv: cast2(&l.wv, f),
                    wo: cast2(&l.wo, f),
                    mlp_norm: cast1(&l.mlp_norm, f),
                    w_gate: cast2(&l.w_gate, f),
                    w_up: cast2(&l.w_up, f),
                    w_down: cast2(&l.w_down, f),
                })
                .collect(),
            final_norm: cast1(&p.final_norm, f),
            lm_head: cast2(&p.lm_head, f),
        }
    }

    /// These weights as the toy model's `Params` (rounded to f32).
    pub fn to_params(&self) -> Params {
        let f = |x: T| x.f64() as f32;
        Params {
            embed: cast2(&self.embed, f),
            layers: self
                .layers
                .iter()
                .map(|l| LayerParams {
                    attn_norm: cast1(&l.attn_norm, f),
                    wq: cast2(&l.wq, f),
                    wk: cast2(&l.wk, f),
                    wv: cast2(&l.wv, f),
                    wo: cast2(&l.wo, f),
                    mlp_norm: cast1(&l.mlp_norm, f),
                    w_gate: cast2(&l.w_gate, f),
                    w_up: cast2(&l.w_up, f),
                    w_down: cast2(&l.w_down, f),
                })
                .collect(),
            final_norm: cast1(&self.final_norm, f),
            lm_head: cast2(&self.lm_head, f),
        }
    }

    /// The same shapes, all zeros (a gradient's or a moment's start).
    pub fn zeros_like(&self) -> Self {
        let z1 = |x: &Array1<T>| Array1::zeros(x.raw_dim());
        let z2 = |x: &Array2<T>| Array2::zeros(x.raw_dim());
        Weights {
            embed: z2(&self.embed),
            layers: self
                .layers
                .iter()
                .map(|l| Layer {
                    attn_norm: z1(&l.attn_norm),
                    wq: z2(&l.wq),
                    wk: z2(&l.wk),
                    wv: z2(&l.wv),
                    wo: z2(&l.wo),
                    mlp_norm: z1(&l.mlp_norm),
                    w_gate: z2(&l.w_gate),
                    w_up: z2(&l.w_up),
                    w_down: z2(&l.w_down),
                })
                .collect(),
            final_norm: z1(&self.final_norm),
            lm_head: z2(&self.lm_head),
        }
    }

    /// Every tensor as a flat slice with its name (`embed`, `layers.0.wq`, …), in a fixed
    /// order: the embedding, each block's tensors in [`Layer`]'s order, the final norm,
    /// the LM head. Whether a tensor is a matrix (AdamW decays matrices only) is
    /// [`is_matrix`].
    pub fn tensors_mut(&mut self) -> Vec<Named<'_, T>> {
        let mut out: Vec<Named<'_, T>> = Vec::new();
        out.push(("embed".into(), slice2(&mut self.embed)));
        for (i, l) in self.layers.iter_mut().enumerate() {
            let n = |s: &str| format!("layers.{i}.{s}");
            out.push((
                n("attn_norm"),
                l.attn_norm.as_slice_mut().expect("contiguous"),
            ));
            out.push((n("wq"), slice2(&mut l.wq)));
            out.push((n("wk"), slice2(&mut l.wk)));
            out.push((n("wv"), slice2(&mut l.wv)));
            out.push((n("wo"), slice2(&mut l.wo)));
            out.push((
                n("mlp_norm"),
                l.mlp_norm.as_slice_mut().expect("contiguous"),
            ));
            out.push((n("w_gate"), slice2(&mut l.w_gate)));
            out.push((n("w_up"), slice2(&mut l.w_up)));
            out.push((n("w_down"), slice2(&mut l.w_down)));
        }
        out.push((
            "final_norm".into(),
            self.final_norm.as_slice_mut().expect("contiguous"),
        ));
        out.push(("lm_head".into(), slice2(&mut self.lm_head)));
        out
    }

    /// `self += other`, tensor by tensor, element by element (a fixed order, so sums of
    /// gradients do not depend on threads).
    pub fn add_assign(&mut self, other: &Weights<T>) {
        let add1 = |a: &mut Array1<T>, b: &Array1<T>| Zip::from(a).and(b).for_each(|a, &b| *a += b);
        let add2 = |a: &mut Array2<T>, b: &Array2<T>| Zip::from(a).and(b).for_each(|a, &b| *a += b);
        add2(&mut self.embed, &other.embed);
        for (a, b) in self.layers.iter_mut().zip(&other.layers) {
            add1(&mut a.attn_norm, &b.attn_norm);
            add2(&mut a.wq, &b.wq);
            add2(&mut a.wk, &b.wk);
            add2(&mut a.wv, &b.wv);
            add2(&mut a.wo, &b.wo);
            add1(&mut a.mlp_norm, &b.mlp_norm);
            add2(&mut a.w_gate, &b.w_gate);
            add2(&mut a.w_up, &b.w_up);
            add2(&mut a.w_down, &b.w_down);
        }
        add1(&mut self.final_norm, &other.final_norm);
        add2(&mut self.lm_head, &other.lm_head);
    }
}

fn slice2<T>(x: &mut Array2<T>) -> &mut [T] {
    x.as_slice_mut().expect("weights are contiguous")
}

/// Whether the tensor named `name` (as [`Tensors::tensors_mut`] names it) is a matrix:
/// every tensor but the norms' gains and the biases.
pub fn is_matrix(name: &str) -> bool {
    !name.ends_with("norm") && !name.ends_with("bias")
}
