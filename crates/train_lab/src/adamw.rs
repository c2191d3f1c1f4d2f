//! AdamW (Loshchilov & Hutter 2019): Adam's moments with the weight decay applied to the
//! weights directly, not through the gradient; the learning rate warms up linearly, then
//! follows a cosine down to a floor (as nanoGPT and llm.c train GPT-2).

use num_traits::Float;

use crate::Error;
use crate::weights::{Real, Tensors, is_matrix};

/// AdamW's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdamW {
    /// Peak learning rate.
    pub lr: f64,
    /// The first moment's decay.
    pub beta1: f64,
    /// The second moment's decay.
    pub beta2: f64,
    /// Added to the second moment's root.
    pub eps: f64,
    /// Decoupled weight decay, on matrices only (the norms' gains are not decayed).
    pub weight_decay: f64,
    /// Gradients whose global L2 norm exceeds this are scaled down to it.
    pub clip: f64,
}

impl AdamW {
    /// nanoGPT's settings for small models, with a learning rate for a 1 M-parameter
    /// model: β = (0.9, 0.95), ε = 1e-8, decay 0.1, clipping at 1.
    pub const SMALL: AdamW = AdamW {
        lr: 3e-3,
        beta1: 0.9,
        beta2: 0.95,
        eps: 1e-8,
        weight_decay: 0.1,
        clip: 1.0,
    };

    /// Checks every setting is finite and in range.
    pub fn check(&self) -> Result<(), Error> {
        let ok = self.lr.is_finite()
            && self.lr >= 0.0
            && (0.0..1.0).contains(&self.beta1)
            && (0.0..1.0).contains(&self.beta2)
            && self.eps.is_finite()
            && self.eps > 0.0
            && self.weight_decay.is_finite()
            && self.weight_decay >= 0.0
            && self.clip.is_finite()
            && self.clip > 0.0;
        match ok {
            true => Ok(()),
            false => Err(Error::Setting(format!(
                "AdamW settings out of range: {self:?}"
            ))),
        }
    }
}

/// The learning rate at `step` (from 0) of `steps`: linear warm-up over `warmup` steps to
/// `peak`, then a cosine from `peak` down to `peak · floor` at the last step.
///
/// ```
/// use train_lab::adamw::lr_at;
/// assert_eq!(lr_at(0, 100, 10, 1.0, 0.1), 0.1); // (0 + 1) / 10 of the peak
/// assert_eq!(lr_at(10, 100, 10, 1.0, 0.1), 1.0); // the peak, then the cosine
/// assert!((lr_at(99, 100, 10, 1.0, 0.1) - 0.1).abs() < 1e-12); // the floor
/// ```
pub fn lr_at(step: usize, steps: usize, warmup: usize, peak: f64, floor: f64) -> f64 {
    if step < warmup {
        return peak * (step + 1) as f64 / warmup as f64;
    }
    let span = steps.saturating_sub(warmup + 1).max(1) as f64;
    let progress = ((step - warmup) as f64 / span).min(1.0);
    let cosine = 0.5 * (1.0 + (std::f64::consts::PI * progress).cos());
    peak * (floor + (1.0 - floor) * cosine)
}

/// AdamW's state: the two moments and the steps taken.
#[derive(Debug, Clone)]
pub struct AdamState<W> {
    m: W,
    v: W,
    t: i32,
}

impl<W: Tensors> AdamState<W> {
    /// Zero moments for weights shaped like `w`.
    pub fn new(w: &W) -> Self {
        AdamState {
            m: w.zeros_like(),
            v: w.zeros_like(),
            t: 0,
        }
    }

    /// One update of `w` by its gradient `g` at learning rate `lr`: the gradient clipped
    /// to the global norm `opt.clip`, then per weight
    /// `m = β1 m + (1 − β1) g`, `v = β2 v + (1 − β2) g²`,
    /// `w −= lr · (m̂ / (√v̂ + ε) + λ w)` with `m̂`, `v̂` bias-corrected (λ on matrices).
    /// `frozen` names tensors left as they are. Returns the gradient's norm before
    /// clipping.
    pub fn step(
        &mut self,
        opt: &AdamW,
        w: &mut W,
        g: &mut W,
        lr: f64,
        frozen: &dyn Fn(&str) -> bool,
    ) -> f64 {
        self.t = self.t.saturating_add(1);
        let mut grads = g.tensors_mut();
        // Summed tensor by tensor, element by element: a fixed order.
        let mut sq = 0.0f64;
        for (name, x) in &grads {
            if !frozen(name) {
                sq += x.iter().map(|v| v.f64() * v.f64()).sum::<f64>();
            }
        }
        let norm = sq.sqrt();
        let clip = W::Elem::of(if norm > opt.clip {
            opt.clip / norm
        } else {
            1.0
        });
        let (b1, b2) = (W::Elem::of(opt.beta1), W::Elem::of(opt.beta2));
        let c1 = W::Elem::of(1.0 - opt.beta1.powi(self.t));
        let c2 = W::Elem::of(1.0 - opt.beta2.powi(self.t));
        let (lr_t, eps) = (W::Elem::of(lr), W::Elem::of(opt.eps));
        let tensors = w.tensors_mut();
        let ms = self.m.tensors_mut();
        let vs = self.v.tensors_mut();
        for (((name, x), (_, gx)), ((_, m), (_, v))) in tensors
            .into_iter()
            .zip(grads.iter_mut())
            .zip(ms.into_iter().zip(vs))
        {
            if frozen(&name) {
                continue;
            }
            let decay = W::Elem::of(if is_matrix(&name) {
                opt.weight_decay
            } else {
                0.0
            });
            for i in 0..x.len() {
                let gi = gx[i] * clip;
                m[i] = b1 * m[i] + (W::Elem::of(1.0) - b1) * gi;
                v[i] = b2 * v[i] + (W::Elem::of(1.0) - b2) * gi * gi;
                let update = (m[i] / c1) / ((v[i] / c2).sqrt() + eps) + decay * x[i];
                x[i] -= lr_t * update;
            }
        }
        norm
    }
}
