//! The whole model's loss and its gradient with respect to every weight: the embedding,
//! the blocks ([`crate::block`]), then at each exit the final RMSNorm, the LM head and
//! cross-entropy ([`crate::loss`]), and back.
//!
//! An *exit* after block k reads the residual stream there through the final norm and
//! the LM head, as the full model reads it after its last block: the plain objective has
//! one exit, after the last block; LayerSkip's early-exit loss (Elhoushi et al. 2024)
//! adds exits after earlier blocks, so the model's first k layers learn to be its draft.

use ndarray::Array2;
use transformer_lab::Config;

use crate::Error;
use crate::block::{BlockCache, Shape, block_backward, block_forward};
use crate::layers::{
    embed_backward, embed_forward, rms_norm_backward, rms_norm_forward, rope_tables,
};
use crate::loss::{Targets, cross_entropy};
use crate::weights::{Real, Weights};

/// `b` sequences of `t` tokens, `tokens [b · t]`, sequence after sequence.
#[derive(Debug, Clone, Copy)]
pub struct Batch<'a> {
    /// The input tokens.
    pub tokens: &'a [u32],
    /// Sequences.
    pub b: usize,
    /// Tokens per sequence.
    pub t: usize,
}

/// What the loss is: the targets at every position, and the exits that read them — each
/// `(k, weight)`, the model's first k blocks, the final norm and the LM head; the loss is
/// `Σ weight · cross-entropy`.
#[derive(Debug, Clone)]
pub struct Objective<'a> {
    /// What each position should predict.
    pub targets: Targets<'a>,
    /// The exits, `(blocks, weight)`.
    pub exits: Vec<(usize, f64)>,
}

impl<'a> Objective<'a> {
    /// The plain objective: one exit after the last of `n_layers` blocks.
    pub fn last(targets: Targets<'a>, n_layers: usize) -> Self {
        Objective {
            targets,
            exits: vec![(n_layers, 1.0)],
        }
    }
}

/// Checks that `w` has `cfg`'s shapes, that `batch` and `obj` fit it.
pub fn check<T: Real>(
    w: &Weights<T>,
    cfg: &Config,
    batch: &Batch<'_>,
    obj: &Objective<'_>,
) -> Result<(), Error> {
    w.to_params().check_against(cfg)?;
    let n = batch
        .b
        .checked_mul(batch.t)
        .ok_or(Error::Shape("b · t overflows".into()))?;
    if n == 0 || batch.tokens.len() != n || obj.targets.len() != n {
        return Err(Error::Shape(format!(
            "a batch of {} × {} needs that many tokens and targets, got {} and {}",
            batch.b,
            batch.t,
            batch.tokens.len(),
            obj.targets.len()
        )));
    }
    if batch.t > cfg.max_seq {
        return Err(Error::Shape(format!(
            "t {} > max_seq {}",
            batch.t, cfg.max_seq
        )));
    }
    let bad_token = |t: u32| t as usize >= cfg.vocab;
    let bad_targets = match obj.targets {
        Targets::Tokens(t) => t.iter().any(|&t| bad_token(t)),
        Targets::Probs(p) => p.ncols() != cfg.vocab || p.iter().any(|v| !v.is_finite()),
    };
    if batch.tokens.iter().any(|&t| bad_token(t)) || bad_targets {
        return Err(Error::Shape(
            "a token or target outside the vocabulary".into(),
        ));
    }
    let bad_exit = |&(k, wt): &(usize, f64)| k == 0 || k > cfg.n_layers || !wt.is_finite();
    if obj.exits.is_empty() || obj.exits.iter().any(bad_exit) {
        return Err(Error::Shape(format!(
            "exits must be after blocks 1..={} with finite weights, got {:?}",
            cfg.n_layers, obj.exits
        )));
    }
    Ok(())
}

/// The loss `Σ_exits weight · Σ_positions cross-entropy` (nats) of `batch` under `obj`,
/// and the gradient of that loss divided by `denom` with respect to every weight (blocks
/// after the deepest exit get zeros). Dividing by the positions of the whole batch when a
/// micro-batch is one part of it makes the parts' gradients add up to the batch's.
///
/// Errors: as [`check`].
pub fn loss_and_grad<T: Real>(
    w: &Weights<T>,
    cfg: &Config,
    batch: &Batch<'_>,
    obj: &Objective<'_>,
    denom: f64,
) -> Result<(f64, Weights<T>), Error> {
    check(w, cfg, batch, obj)?;
    let mut g = w.zeros_like();
    let (loss, caches, exits) = forward(w, cfg, batch, obj, T::of(1.0 / denom), Some(&mut g));
    let sh_tables = rope_tables::<T>(batch.t, cfg.head_dim(), cfg.rope_theta);
    let sh = shape(cfg, batch, &sh_tables);
    // Back through the blocks, adding each exit's gradient where it reads the stream.
    let mut dx: Array2<T> = Array2::zeros((batch.b * batch.t, cfg.d_model));
    for (l, c) in caches.iter().enumerate().rev() {
        for (k, d) in &exits {
            if *k == l + 1 {
                dx += d;
            }
        }
        dx = block_backward(&w.layers[l], &sh, c, &dx, &mut g.layers[l]);
    }
    embed_backward(&mut g.embed, batch.tokens, &dx);
    Ok((loss, g))
}

/// The loss alone (nats, as [`loss_and_grad`] sums it).
///
/// Errors: as [`check`].
pub fn loss<T: Real>(
    w: &Weights<T>,
    cfg: &Config,
    batch: &Batch<'_>,
    obj: &Objective<'_>,
) -> Result<f64, Error> {
    check(w, cfg, batch, obj)?;
    Ok(forward(w, cfg, batch, obj, T::one(), None).0)
}

fn shape<'a, T: Real>(
    cfg: &Config,
    batch: &Batch<'_>,
    rope: &'a (Array2<T>, Array2<T>),
) -> Shape<'a, T> {
    Shape {
        b: batch.b,
        t: batch.t,
        n_heads: cfg.n_heads,
        eps: T::of(f64::from(cfg.norm_eps)),
        rope: (&rope.0, &rope.1),
    }
}

type Forward<T> = (f64, Vec<BlockCache<T>>, Vec<(usize, Array2<T>)>);

/// The forward pass up to the deepest exit: the loss, each block's cache, and (with `g`)
/// each exit's gradient of the stream it reads, the head's and final norm's gradients
/// added into `g`.
fn forward<T: Real>(
    w: &Weights<T>,
    cfg: &Config,
    batch: &Batch<'_>,
    obj: &Objective<'_>,
    scale: T,
    mut g: Option<&mut Weights<T>>,
) -> Forward<T> {
    let tables = rope_tables::<T>(batch.t, cfg.head_dim(), cfg.rope_theta);
    let sh = shape(cfg, batch, &tables);
    let deepest = obj.exits.iter().map(|e| e.0).max().unwrap_or(0);
    let mut x = embed_forward(&w.embed, batch.tokens); // [N, d]
    let (mut total, mut caches, mut exits) = (0.0, Vec::new(), Vec::new());
    for l in 0..deepest {
        let (y, c) = block_forward(&w.layers[l], &sh, x);
        x = y;
        if g.is_some() {
            caches.push(c);
        }
        for &(k, weight) in obj.exits.iter().filter(|e| e.0 == l + 1) {
            // The exit: final norm, LM head, cross-entropy.
            let (h, r) = rms_norm_forward(&x, &w.final_norm, sh.eps); // [N, d]
            let logits = h.dot(&w.lm_head); // [N, vocab]
            let (loss, dlogits) = cross_entropy(&logits, obj.targets, scale * T::of(weight));
            total += weight * loss;
            if let Some(g) = g.as_deref_mut() {
                g.lm_head += &h.t().dot(&dlogits);
                let dh = dlogits.dot(&w.lm_head.t());
                let dx = rms_norm_backward(&x, &w.final_norm, &r, &dh, &mut g.final_norm);
                exits.push((k, dx));
            }
        }
    }
    (total, caches, exits)
}

/// The logits `[b · t, vocab]` read at the exit after the first `k` blocks (`k =
/// n_layers`: the model's own output; fewer: LayerSkip's early exit).
///
/// Errors: as [`check`], with `k` as the one exit.
pub fn logits_at<T: Real>(
    w: &Weights<T>,
    cfg: &Config,
    batch: &Batch<'_>,
    k: usize,
) -> Result<Array2<T>, Error> {
    Ok(hidden_at(w, cfg, batch, k)?.dot(&w.lm_head))
}

/// The hidden state `[b · t, d_model]` the LM head reads at the exit after the first `k`
/// blocks: the residual stream there through the final norm (what Medusa's heads read
/// after the last block).
///
/// Errors: as [`check`], with `k` as the one exit.
pub fn hidden_at<T: Real>(
    w: &Weights<T>,
    cfg: &Config,
    batch: &Batch<'_>,
    k: usize,
) -> Result<Array2<T>, Error> {
    let obj = Objective {
        targets: Targets::Tokens(batch.tokens),
        exits: vec![(k, 1.0)],
    };
    check(w, cfg, batch, &obj)?;
    let tables = rope_tables::<T>(batch.t, cfg.head_dim(), cfg.rope_theta);
    let sh = shape(cfg, batch, &tables);
    let mut x = embed_forward(&w.embed, batch.tokens); // [N, d]
    for l in &w.layers[..k] {
        x = block_forward(l, &sh, x).0;
    }
    Ok(rms_norm_forward(&x, &w.final_norm, sh.eps).0)
}
