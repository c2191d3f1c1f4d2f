//! The backward pass checked against finite differences, in f64: for each weight tensor,
//! the analytic gradient of a few of its entries against the five-point central
//! difference of the loss itself, `(8 (L(w+h) − L(w−h)) − (L(w+2h) − L(w−2h))) / 12h`,
//! whose error shrinks as h⁴.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use transformer_lab::{Config, init_params};

use crate::Error;
use crate::eagle::{self, Eagle, Frozen, Step};
use crate::loss::Targets;
use crate::medusa::{self, Heads};
use crate::model::{Batch, Objective, loss, loss_and_grad};
use crate::weights::{Tensors, Weights};

/// The finite difference's step: its truncation error (∝ h⁴) and the loss's rounding
/// in f64 divided by h (≈ 1e-16 / h) both stay far below the tolerance (at 1e-3 the
/// embedding's h⁴ term alone reached 1e-6).
pub const STEP: f64 = 3e-4;
/// The largest relative error the check accepts, `|g − g_fd| / max(|g| + |g_fd|, FLOOR)`.
pub const TOLERANCE: f64 = 1e-6;
/// The relative error's denominator is at least this: an entry whose gradient is below
/// it is compared absolutely (its relative error would measure the loss's rounding).
pub const FLOOR: f64 = 1e-6;

/// One tensor's check: its name, the entries compared and the worst relative error.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorCheck {
    /// `embed`, `layers.0.wq`, …, `lm_head`.
    pub name: String,
    /// Entries compared.
    pub entries: usize,
    /// The worst `|g − g_fd| / max(|g| + |g_fd|, FLOOR)` among them.
    pub worst: f64,
}

/// Checks every tensor of a model of shape `cfg` (random weights from `seed`, norm gains
/// perturbed off 1 so their gradients are general), on `b` random sequences of `t`
/// tokens, against `objective`'s exits (`None`: the last block's only), with hard
/// targets or, if `soft`, random teacher distributions. Compares `per_tensor` entries of
/// each tensor chosen at random (all of a smaller tensor).
///
/// Errors: a shape the model refuses.
pub fn check_gradients(
    cfg: &Config,
    seed: u64,
    (b, t): (usize, usize),
    exits: Option<Vec<(usize, f64)>>,
    soft: bool,
    per_tensor: usize,
) -> Result<Vec<TensorCheck>, Error> {
    let mut w: Weights<f64> = Weights::from_params(&init_params(cfg, seed)?);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Larger weights than the init's, so every path carries a visible gradient.
    for (_, x) in w.tensors_mut() {
        for v in x.iter_mut() {
            *v = *v * 4.0 + rng.random_range(-0.1..0.1);
        }
    }
    let n = b * t;
    let tokens: Vec<u32> = (0..n)
        .map(|_| rng.random_range(0..cfg.vocab as u32))
        .collect();
    let next: Vec<u32> = (0..n)
        .map(|_| rng.random_range(0..cfg.vocab as u32))
        .collect();
    let probs = ndarray::Array2::from_shape_fn((n, cfg.vocab), |_| rng.random_range(0.1f32..1.0));
    let probs = &probs
        / &probs
            .sum_axis(ndarray::Axis(1))
            .insert_axis(ndarray::Axis(1));
    let targets = match soft {
        true => Targets::Probs(probs.view()),
        false => Targets::Tokens(&next),
    };
    let obj = Objective {
        targets,
        exits: exits.unwrap_or(vec![(cfg.n_layers, 1.0)]),
    };
    let batch = Batch {
        tokens: &tokens,
        b,
        t,
    };
    let (_, mut grad) = loss_and_grad(&w, cfg, &batch, &obj, n as f64)?;
    let loss_of = |w: &Weights<f64>| Ok(loss(w, cfg, &batch, &obj)? / n as f64);
    compare(&mut w, &mut grad, &loss_of, per_tensor, &mut rng)
}

/// Compares `grad`, the gradient of `loss_of` at `w`, with five-point finite differences
/// of `loss_of`, on `per_tensor` entries of each tensor drawn from `rng` (all of a smaller
/// tensor); `w` is left as it was.
///
/// Errors: whatever `loss_of` returns.
pub fn compare<W: Tensors<Elem = f64>>(
    w: &mut W,
    grad: &mut W,
    loss_of: &dyn Fn(&W) -> Result<f64, Error>,
    per_tensor: usize,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<TensorCheck>, Error> {
    let grads: Vec<Vec<f64>> = grad
        .tensors_mut()
        .into_iter()
        .map(|(_, g)| g.to_vec())
        .collect();
    let mut out = Vec::new();
    for (ti, g) in grads.iter().enumerate() {
        let len = g.len();
        let picks: Vec<usize> = match len <= per_tensor {
            true => (0..len).collect(),
            false => (0..per_tensor).map(|_| rng.random_range(0..len)).collect(),
        };
        let mut worst = 0.0f64;
        let name = w.tensors_mut()[ti].0.clone();
        for &i in &picks {
            let mut at = |delta: f64| -> Result<f64, Error> {
                let old = w.tensors_mut()[ti].1[i];
                w.tensors_mut()[ti].1[i] = old + delta;
                let l = loss_of(w)?;
                w.tensors_mut()[ti].1[i] = old;
                Ok(l)
            };
            let near = at(STEP)? - at(-STEP)?;
            let far = at(2.0 * STEP)? - at(-2.0 * STEP)?;
            let fd = (8.0 * near - far) / (12.0 * STEP);
            let err = (g[i] - fd).abs() / (g[i].abs() + fd.abs()).max(FLOOR);
            worst = worst.max(err);
        }
        out.push(TensorCheck {
            name,
            entries: picks.len(),
            worst,
        });
    }
    Ok(out)
}

/// Checks Medusa's heads' gradient ([`crate::medusa::loss_and_grad`]): `k` heads of width
/// `d` over a vocabulary of `vocab`, random weights from `seed` (blocks away from zero, so
/// SiLU's curve matters), `n` random hidden states and targets per head, the heads'
/// weights [`crate::medusa::weights`]; `per_tensor` entries of each tensor.
///
/// Errors: a shape the heads refuse.
pub fn check_head_gradients(
    (k, d, vocab): (usize, usize, usize),
    seed: u64,
    n: usize,
    per_tensor: usize,
) -> Result<Vec<TensorCheck>, Error> {
    if k == 0 || d == 0 || vocab == 0 || n == 0 {
        return Err(Error::Shape(format!(
            "a gradient check needs heads, a width, a vocabulary and positions, got {k}, {d}, \
             {vocab} and {n}"
        )));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut random = |shape: (usize, usize)| {
        ndarray::Array2::from_shape_fn(shape, |_| rng.random_range(-1.0..1.0))
    };
    let lm_head = random((d, vocab));
    let mut heads: Heads<f64> = Heads::new(k, &lm_head);
    let h = random((n, d));
    for (_, x) in heads.tensors_mut() {
        for v in x.iter_mut() {
            *v += rng.random_range(-1.0..1.0);
        }
    }
    let targets: Vec<Vec<u32>> = (0..k)
        .map(|_| (0..n).map(|_| rng.random_range(0..vocab as u32)).collect())
        .collect();
    let targets: Vec<&[u32]> = targets.iter().map(Vec::as_slice).collect();
    let lambdas = medusa::weights(k);
    let (_, mut grad) = medusa::loss_and_grad(&heads, &h, &targets, &lambdas, n as f64)?;
    let loss_of = |w: &Heads<f64>| -> Result<f64, Error> {
        Ok(medusa::loss_and_grad(w, &h, &targets, &lambdas, n as f64)?.0 / n as f64)
    };
    compare(&mut heads, &mut grad, &loss_of, per_tensor, &mut rng)
}

/// Checks EAGLE's draft head's gradient ([`crate::eagle::loss_and_grad`]) for a target of
/// shape `cfg`: a head from `seed` with every tensor moved off its initial value, a random
/// frozen embedding and LM head, `b` windows of `t` positions with random tokens and
/// hidden states (spread wide enough that the smooth L1 meets both its pieces);
/// `per_tensor` entries of each tensor.
///
/// Errors: a shape the head refuses.
pub fn check_eagle_gradients(
    cfg: &Config,
    seed: u64,
    (b, t): (usize, usize),
    per_tensor: usize,
) -> Result<Vec<TensorCheck>, Error> {
    let mut head: Eagle<f64> = Eagle::new(cfg, seed)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for (_, x) in head.tensors_mut() {
        for v in x.iter_mut() {
            *v = *v * 3.0 + rng.random_range(-0.2..0.2);
        }
    }
    let (d, vocab) = (cfg.d_model, cfg.vocab);
    let mut random = |shape: (usize, usize), r: f64| {
        ndarray::Array2::from_shape_fn(shape, |_| rng.random_range(-r..r))
    };
    let embed = random((vocab, d), 1.0);
    let lm_head = random((d, vocab), 1.0);
    let features = random((b * (t + 1), d), 2.5);
    let mut tokens =
        |n: usize| -> Vec<u32> { (0..n).map(|_| rng.random_range(0..vocab as u32)).collect() };
    let (next, after) = (tokens(b * t), tokens(b * t));
    let frozen = Frozen {
        embed: &embed,
        lm_head: &lm_head,
        cfg,
    };
    let step = Step {
        b,
        t,
        next: &next,
        after: &after,
        features: &features,
    };
    let n = (b * t) as f64;
    let (_, mut grad) = eagle::loss_and_grad(&head, &frozen, &step, n)?;
    let loss_of = |e: &Eagle<f64>| -> Result<f64, Error> {
        Ok(eagle::loss_and_grad(e, &frozen, &step, n)?.0 / n)
    };
    compare(&mut head, &mut grad, &loss_of, per_tensor, &mut rng)
}
