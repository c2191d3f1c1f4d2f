//! Medusa's heads, trained on a frozen target (Cai et al. 2024, §2.2.1, Medusa-1): K
//! heads on the target's last hidden state h (after the final norm), head k guessing at
//! every position t the token x_{t+1+k}, k places after the one the target's LM head
//! predicts there. Head k is one residual block and its own LM head, as Medusa's `ResBlock` and
//! `Linear`:
//!
//! ```text
//! forward                        backward (d· is the gradient of ·)
//! z = h·W + b                    dL = yᵀ·dlogits,  dy = dlogits·Lᵀ
//! y = h + silu(z)                dz = dy ⊙ silu'(z)
//! logits = y·L                   dW = hᵀ·dz,  db = Σ_rows dz
//! loss = Σ_k λ_k · CE(logits_k, next_{k+1})
//! ```
//!
//! Each block starts at zero and each LM head as a copy of the target's (so a head starts
//! as the target's own guess, k places late), and head k's loss is weighted λ_k = 0.8^k
//! (Medusa's choice). The target is not trained: its hidden states come from
//! [`crate::model::hidden_at`], a micro-batch at a time, in parallel, the heads' gradients
//! added in a fixed order as [`crate::train`] adds a model's.

use ndarray::{Array1, Array2, Axis, Zip};
use rayon::prelude::*;
use transformer_lab::Config;

use crate::Error;
use crate::adamw::AdamW;
use crate::frozen;
use crate::layers::{silu, silu_grad};
use crate::loss::{Targets, cross_entropy};
use crate::model::{Batch, hidden_at};
use crate::train::{Schedule, StepLog};
use crate::weights::{Named, Real, Tensors, Weights};

/// Head k's loss weight is `LAMBDA^k` (Medusa-1's 0.8).
pub const LAMBDA: f64 = 0.8;

/// One head: a residual block on the hidden state and its own LM head.
#[derive(Debug, Clone, PartialEq)]
pub struct Head<T> {
    /// The block's matrix, `[d_model, d_model]`.
    pub w: Array2<T>,
    /// The block's bias, `[d_model]`.
    pub bias: Array1<T>,
    /// The head's LM head, `[d_model, vocab]`.
    pub lm_head: Array2<T>,
}

/// Medusa's heads, head 1 first.
#[derive(Debug, Clone, PartialEq)]
pub struct Heads<T> {
    /// The heads.
    pub heads: Vec<Head<T>>,
}

impl<T: Real> Heads<T> {
    /// `k` heads for a target whose LM head is `lm_head` (`[d_model, vocab]`): each block
    /// zero, each LM head a copy of the target's.
    pub fn new(k: usize, lm_head: &Array2<T>) -> Self {
        let d = lm_head.nrows();
        let head = Head {
            w: Array2::zeros((d, d)),
            bias: Array1::zeros(d),
            lm_head: lm_head.clone(),
        };
        Heads {
            heads: vec![head; k],
        }
    }

    /// `self += other`, element by element, head by head.
    pub fn add_assign(&mut self, other: &Heads<T>) {
        for (a, b) in self.heads.iter_mut().zip(&other.heads) {
            Zip::from(&mut a.w).and(&b.w).for_each(|a, &b| *a += b);
            Zip::from(&mut a.bias)
                .and(&b.bias)
                .for_each(|a, &b| *a += b);
            Zip::from(&mut a.lm_head)
                .and(&b.lm_head)
                .for_each(|a, &b| *a += b);
        }
    }

    /// The hidden width and the vocabulary.
    pub fn dims(&self) -> (usize, usize) {
        self.heads
            .first()
            .map_or((0, 0), |h| (h.w.nrows(), h.lm_head.ncols()))
    }

    /// The heads converted to another float type.
    pub fn cast<U: Real>(&self) -> Heads<U> {
        let f = |x: T| U::of(x.f64());
        Heads {
            heads: self
                .heads
                .iter()
                .map(|h| Head {
                    w: h.w.mapv(f),
                    bias: h.bias.mapv(f),
                    lm_head: h.lm_head.mapv(f),
                })
                .collect(),
        }
    }
}

impl<T: Real> Tensors for Heads<T> {
    type Elem = T;

    /// `heads.{i}.w`, `heads.{i}.bias`, `heads.{i}.lm_head`, head after head (i from 0).
    fn tensors_mut(&mut self) -> Vec<Named<'_, T>> {
        let mut out: Vec<Named<'_, T>> = Vec::new();
        for (i, h) in self.heads.iter_mut().enumerate() {
            let n = |s: &str| format!("heads.{i}.{s}");
            out.push((n("w"), h.w.as_slice_mut().expect("contiguous")));
            out.push((n("bias"), h.bias.as_slice_mut().expect("contiguous")));
            out.push((n("lm_head"), h.lm_head.as_slice_mut().expect("contiguous")));
        }
        out
    }

    fn zeros_like(&self) -> Self {
        Heads {
            heads: self
                .heads
                .iter()
                .map(|h| Head {
                    w: Array2::zeros(h.w.raw_dim()),
                    bias: Array1::zeros(h.bias.raw_dim()),
                    lm_head: Array2::zeros(h.lm_head.raw_dim()),
                })
                .collect(),
        }
    }
}

/// Head `k`'s (from 0) logits `[N, vocab]` read from hidden states `h [N, d_model]`, and
/// what its backward needs (z, y).
fn head_forward<T: Real>(head: &Head<T>, h: &Array2<T>) -> (Array2<T>, Array2<T>, Array2<T>) {
    let z = h.dot(&head.w) + &head.bias; // [N, d]
    let y = h + &z.mapv(silu); // residual, [N, d]
    let logits = y.dot(&head.lm_head); // [N, vocab]
    (z, y, logits)
}

/// Checks that `targets` (one slice per head) and `weights` fit `heads` and `h`.
fn check<T: Real>(
    heads: &Heads<T>,
    h: &Array2<T>,
    targets: &[&[u32]],
    weights: &[f64],
) -> Result<(), Error> {
    let (d, vocab) = heads.dims();
    let k = heads.heads.len();
    let alike = heads
        .heads
        .iter()
        .all(|h| h.w.dim() == (d, d) && h.bias.len() == d && h.lm_head.dim() == (d, vocab));
    let fits = k > 0
        && alike
        && targets.len() == k
        && weights.len() == k
        && h.ncols() == d
        && h.nrows() > 0
        && targets.iter().all(|t| t.len() == h.nrows())
        && weights.iter().all(|w| w.is_finite());
    if !fits {
        return Err(Error::Shape(format!(
            "{k} heads of width {d} need as many target lists and finite weights ({} and {}) \
             and hidden states of that width with a target each ({:?})",
            targets.len(),
            weights.len(),
            h.dim()
        )));
    }
    if targets
        .iter()
        .any(|t| t.iter().any(|&x| x as usize >= vocab))
    {
        return Err(Error::Shape(format!(
            "a target outside the vocabulary of {vocab}"
        )));
    }
    Ok(())
}

/// The heads' loss `Σ_k weights[k] · Σ_positions CE(head k at h, targets[k])` (nats), and
/// its gradient divided by `denom` with respect to every head's tensors.
///
/// Errors: as many target lists and weights as heads, each list a target per row of `h`,
/// inside the vocabulary.
pub fn loss_and_grad<T: Real>(
    heads: &Heads<T>,
    h: &Array2<T>,
    targets: &[&[u32]],
    weights: &[f64],
    denom: f64,
) -> Result<(f64, Heads<T>), Error> {
    check(heads, h, targets, weights)?;
    let mut g = heads.zeros_like();
    let mut total = 0.0;
    for (((head, gh), &tk), &wk) in heads
        .heads
        .iter()
        .zip(&mut g.heads)
        .zip(targets)
        .zip(weights)
    {
        let (z, y, logits) = head_forward(head, h);
        let (loss, dlogits) = cross_entropy(&logits, Targets::Tokens(tk), T::of(wk / denom));
        total += wk * loss;
        gh.lm_head = y.t().dot(&dlogits);
        let mut dz = dlogits.dot(&head.lm_head.t()); // dy, then dz in place
        Zip::from(&mut dz)
            .and(&z)
            .for_each(|d, &z| *d *= silu_grad(z));
        gh.w = h.t().dot(&dz);
        gh.bias = dz.sum_axis(Axis(0));
    }
    Ok((total, g))
}

/// The bytes each head should predict after windows starting at `starts`: inputs
/// `data[s .. s + seq]`, and for head k (from 1) `data[s + 1 + k .. s + 1 + k + seq]`.
fn head_windows(data: &[u8], starts: &[usize], seq: usize, k: usize) -> (Vec<u32>, Vec<Vec<u32>>) {
    let bytes = |from: usize| -> Vec<u32> {
        starts
            .iter()
            .flat_map(|&s| data[s + from..s + from + seq].iter().map(|&b| u32::from(b)))
            .collect()
    };
    (bytes(0), (1..=k).map(|k| bytes(1 + k)).collect())
}

/// The loss weights `λ^k`, k = 1 … `k`.
pub fn weights(k: usize) -> Vec<f64> {
    (1..=k as i32).map(|k| LAMBDA.powi(k)).collect()
}

/// Trains `heads` on the frozen `target` (shape `cfg`) on windows of the byte corpus
/// `data`: `sched.steps` AdamW steps, windows of `sched.seq` inputs drawn by a ChaCha8
/// generator seeded with `sched.seed` (each leaving room for the bytes the last head
/// predicts), micro-batches in parallel, their gradients added in order, so the heads come
/// out bit for bit the same for any number of threads. Calls `log` after each step.
///
/// Errors: heads of another width or vocabulary than the target, a schedule or AdamW
/// setting out of range, data too short for one window.
pub fn train(
    target: &Weights<f32>,
    cfg: &Config,
    heads: &mut Heads<f32>,
    data: &[u8],
    sched: &Schedule,
    opt: &AdamW,
    log: &mut dyn FnMut(&StepLog),
) -> Result<(), Error> {
    let k = heads.heads.len();
    if k == 0 || heads.dims() != (cfg.d_model, cfg.vocab) || cfg.vocab < 256 {
        return Err(Error::Shape(format!(
            "{k} heads of (width, vocabulary) {:?} for a byte-level target of {:?}",
            heads.dims(),
            (cfg.d_model, cfg.vocab)
        )));
    }
    let room = Schedule {
        seq: sched.seq + k,
        ..sched.clone()
    };
    room.check(
        &Config {
            max_seq: cfg.max_seq + k,
            ..*cfg
        },
        data.len(),
    )?;
    opt.check()?;
    let lambdas = weights(k);
    let positions = (sched.batch * sched.seq) as f64;
    let grad_of = |heads: &Heads<f32>, chunk: &[usize]| {
        let (x, next) = head_windows(data, chunk, sched.seq, k);
        let batch = Batch {
            tokens: &x,
            b: chunk.len(),
            t: sched.seq,
        };
        let h = hidden_at(target, cfg, &batch, cfg.n_layers)?;
        let targets: Vec<&[u32]> = next.iter().map(Vec::as_slice).collect();
        loss_and_grad(heads, &h, &targets, &lambdas, positions)
    };
    let span = (data.len(), sched.seq + k + 1);
    frozen::steps(heads, sched, opt, span, &grad_of, Heads::add_assign, log)
}

/// How one head does on held-out text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeadScore {
    /// Its cross-entropy, bits per byte.
    pub bits: f64,
    /// How often its top token is the byte it should predict.
    pub top1: f64,
}

/// Each head's score on `data` cut into consecutive windows of `seq` inputs and the bytes
/// the last head predicts after them (a tail shorter than a window left out); the target
/// gives the hidden states. Windows in parallel, added in order.
///
/// Errors: `seq` beyond the target, `data` shorter than one window, heads that do not fit
/// the target.
pub fn held_out(
    target: &Weights<f32>,
    cfg: &Config,
    heads: &Heads<f32>,
    data: &[u8],
    seq: usize,
) -> Result<Vec<HeadScore>, Error> {
    let k = heads.heads.len();
    let span = seq + 1 + k;
    let n = data.len() / span;
    if n == 0 || seq > cfg.max_seq || seq == 0 || heads.dims() != (cfg.d_model, cfg.vocab) {
        return Err(Error::Setting(format!(
            "{} bytes hold no window of {span}, or {seq} is no context for max_seq {}, or \
             the heads do not fit the target",
            data.len(),
            cfg.max_seq
        )));
    }
    let starts: Vec<usize> = (0..n).map(|i| i * span).collect();
    let parts: Vec<Result<Vec<(f64, usize)>, Error>> = starts
        .par_chunks(8)
        .map(|chunk| {
            let (x, next) = head_windows(data, chunk, seq, k);
            let batch = Batch {
                tokens: &x,
                b: chunk.len(),
                t: seq,
            };
            let h = hidden_at(target, cfg, &batch, cfg.n_layers)?;
            let mut out = Vec::with_capacity(k);
            for (head, want) in heads.heads.iter().zip(&next) {
                let (_, _, logits) = head_forward(head, &h);
                let (nats, _) = cross_entropy(&logits, Targets::Tokens(want), 0.0);
                let hits = logits
                    .outer_iter()
                    .zip(want)
                    .filter(|(row, w)| argmax(row.as_slice().expect("a row")) == **w as usize)
                    .count();
                out.push((nats, hits));
            }
            Ok(out)
        })
        .collect();
    let mut sums = vec![(0.0, 0usize); k];
    for part in parts {
        for (sum, (nats, hits)) in sums.iter_mut().zip(part?) {
            sum.0 += nats;
            sum.1 += hits;
        }
    }
    let count = (n * seq) as f64;
    Ok(sums
        .into_iter()
        .map(|(nats, hits)| HeadScore {
            bits: nats / count / std::f64::consts::LN_2,
            top1: hits as f64 / count,
        })
        .collect())
}

/// The first index of the largest value.
fn argmax(row: &[f32]) -> usize {
    let mut best = 0;
    for (i, &v) in row.iter().enumerate() {
        if v > row[best] {
            best = i;
        }
    }
    best
}
