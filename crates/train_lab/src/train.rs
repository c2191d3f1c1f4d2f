//! The seeded training loop: windows of a byte corpus drawn by a seeded generator, each
//! step's batch split into micro-batches whose gradients are computed in parallel and
//! added in a fixed order, then one AdamW update (nanoGPT's `train.py` loop, llm.c's
//! `train_gpt2.c` `main`).
//!
//! Determinism: a micro-batch's gradient is one thread's sequential computation, the same
//! whichever thread runs it, and the micro-batches' gradients are added first to last
//! whatever order they finish in; so the weights after any number of steps are bit for bit
//! the same for any `RAYON_NUM_THREADS`.

use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use transformer_lab::Config;

use crate::Error;
use crate::adamw::{AdamState, AdamW, lr_at};
use crate::loss::Targets;
use crate::model::{Batch, Objective, logits_at, loss, loss_and_grad};
use crate::weights::Weights;

/// How long and on what a run trains.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// Optimiser steps.
    pub steps: usize,
    /// Sequences per step.
    pub batch: usize,
    /// Sequences per micro-batch: the unit of parallel work (a divisor of `batch`).
    pub micro: usize,
    /// Tokens per sequence (at most the model's `max_seq`).
    pub seq: usize,
    /// Linear warm-up steps.
    pub warmup: usize,
    /// The learning rate's last value, as a fraction of the peak.
    pub floor: f64,
    /// Seeds the windows drawn from the corpus.
    pub seed: u64,
    /// The exits the loss reads, `(blocks, weight)` (see [`Objective`]); empty means the
    /// last block's only.
    pub exits: Vec<(usize, f64)>,
}

/// One step's record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepLog {
    /// The step, from 0.
    pub step: usize,
    /// The batch's mean loss per position (nats, weighted over the exits) before the update.
    pub loss: f64,
    /// The learning rate used.
    pub lr: f64,
    /// The gradient's global norm before clipping.
    pub grad_norm: f64,
}

impl Schedule {
    pub(crate) fn check(&self, cfg: &Config, data_len: usize) -> Result<(), Error> {
        let ok = self.steps > 0
            && self.micro > 0
            && self.batch > 0
            && self.batch.is_multiple_of(self.micro)
            && self.seq > 0
            && self.seq <= cfg.max_seq
            && data_len > self.seq + 1
            && self.floor.is_finite()
            && (0.0..=1.0).contains(&self.floor);
        match ok {
            true => Ok(()),
            false => Err(Error::Setting(format!(
                "a schedule needs steps, a batch that micro-batches divide, 0 < seq ≤ {} and \
                 more data than one window ({data_len} bytes): {self:?}",
                cfg.max_seq
            ))),
        }
    }

    fn exits(&self, cfg: &Config) -> Vec<(usize, f64)> {
        match self.exits.is_empty() {
            true => vec![(cfg.n_layers, 1.0)],
            false => self.exits.clone(),
        }
    }
}

/// The window starts of one step: `batch` offsets into `data`, each leaving room for
/// `seq + 1` bytes (the inputs and the next byte after each).
pub(crate) fn windows(
    rng: &mut ChaCha8Rng,
    data_len: usize,
    batch: usize,
    seq: usize,
) -> Vec<usize> {
    (0..batch)
        .map(|_| rng.random_range(0..data_len - seq))
        .collect()
}

/// Inputs and next-byte targets of the windows starting at `starts`.
fn tokens_of(data: &[u8], starts: &[usize], seq: usize) -> (Vec<u32>, Vec<u32>) {
    let mut x = Vec::with_capacity(starts.len() * seq);
    let mut y = Vec::with_capacity(starts.len() * seq);
    for &s in starts {
        x.extend(data[s..s + seq].iter().map(|&b| u32::from(b)));
        y.extend(data[s + 1..s + seq + 1].iter().map(|&b| u32::from(b)));
    }
    (x, y)
}

/// Trains `w` (a model of shape `cfg`, vocabulary ≥ 256) on windows of the byte corpus
/// `data` for `sched.steps` AdamW steps, calling `log` after each. The windows come from
/// a ChaCha8 generator seeded with `sched.seed`; the weights come out bit for bit the
/// same for any number of threads (see the module's doc). (`log` is a trait object so
/// that this function, and the generic passes it calls, are compiled here, optimised,
/// whichever crate calls it.)
///
/// Errors: a schedule or AdamW setting out of range, a model the batch does not fit.
pub fn train(
    w: &mut Weights<f32>,
    cfg: &Config,
    data: &[u8],
    sched: &Schedule,
    opt: &AdamW,
    log: &mut dyn FnMut(&StepLog),
) -> Result<(), Error> {
    train_from(w, cfg, data, sched, opt, None, log)
}

/// A teacher for distillation: a model whose next-byte distribution (its last block's)
/// the student learns instead of the corpus's next byte.
#[derive(Debug, Clone, Copy)]
pub struct Teacher<'a> {
    /// Its weights.
    pub w: &'a Weights<f32>,
    /// Its shape (the same vocabulary and at least the schedule's context).
    pub cfg: &'a Config,
}

/// The teacher's probabilities at every position of `batch`, `[b · t, vocab]`.
fn teacher_probs(t: &Teacher<'_>, batch: &Batch<'_>) -> Result<Array2<f32>, Error> {
    let mut p = logits_at(t.w, t.cfg, batch, t.cfg.n_layers)?;
    for mut row in p.outer_iter_mut() {
        let max = row.fold(f32::NEG_INFINITY, |m, &v| m.max(v));
        row.mapv_inplace(|v| (v - max).exp());
        let sum = row.sum();
        row.mapv_inplace(|v| v / sum);
    }
    Ok(p)
}

/// [`train`], or with a `teacher`, distillation (Hinton et al. 2015, at temperature 1): the
/// same windows and steps, the loss the cross-entropy of the student's distribution
/// against the teacher's at every position.
///
/// Errors: as [`train`], and a teacher of another vocabulary or a shorter context.
pub fn train_from(
    w: &mut Weights<f32>,
    cfg: &Config,
    data: &[u8],
    sched: &Schedule,
    opt: &AdamW,
    teacher: Option<Teacher<'_>>,
    log: &mut dyn FnMut(&StepLog),
) -> Result<(), Error> {
    if let Some(t) = teacher
        && (t.cfg.vocab != cfg.vocab || t.cfg.max_seq < sched.seq)
    {
        return Err(Error::Setting(format!(
            "a teacher of vocabulary {} and context {} cannot teach a model of {} at {}",
            t.cfg.vocab, t.cfg.max_seq, cfg.vocab, sched.seq
        )));
    }
    sched.check(cfg, data.len())?;
    opt.check()?;
    if cfg.vocab < 256 {
        return Err(Error::Setting(format!(
            "a byte corpus needs 256 tokens, the model has {}",
            cfg.vocab
        )));
    }
    let exits = sched.exits(cfg);
    let mut rng = ChaCha8Rng::seed_from_u64(sched.seed);
    let mut state = AdamState::new(w);
    let positions = (sched.batch * sched.seq) as f64;
    for step in 0..sched.steps {
        let starts = windows(&mut rng, data.len(), sched.batch, sched.seq);
        let parts: Vec<Result<(f64, Weights<f32>), Error>> = starts
            .par_chunks(sched.micro)
            .map(|chunk| {
                let (x, y) = tokens_of(data, chunk, sched.seq);
                let batch = Batch {
                    tokens: &x,
                    b: chunk.len(),
                    t: sched.seq,
                };
                let probs = teacher.map(|t| teacher_probs(&t, &batch)).transpose()?;
                let targets = match &probs {
                    Some(p) => Targets::Probs(p.view()),
                    None => Targets::Tokens(&y),
                };
                let obj = Objective {
                    targets,
                    exits: exits.clone(),
                };
                loss_and_grad(w, cfg, &batch, &obj, positions)
            })
            .collect(); // in chunk order, whatever order they finished in
        let mut total = 0.0;
        let mut grad: Option<Weights<f32>> = None;
        for part in parts {
            let (l, g) = part?;
            total += l;
            match grad.as_mut() {
                Some(sum) => sum.add_assign(&g),
                None => grad = Some(g),
            }
        }
        let mut grad = grad.ok_or(Error::Setting("an empty batch".into()))?;
        let lr = lr_at(step, sched.steps, sched.warmup, opt.lr, sched.floor);
        let grad_norm = state.step(opt, w, &mut grad, lr, &|_| false);
        log(&StepLog {
            step,
            loss: total / positions,
            lr,
            grad_norm,
        });
    }
    Ok(())
}

/// The mean loss per predicted byte, in bits, of the model's last block on `data` cut into
/// consecutive windows of `seq + 1` bytes (each window predicts its last `seq` bytes from
/// the ones before, within the window); a tail shorter than a window is left out. Windows
/// are evaluated in parallel, their losses added in order.
///
/// Errors: `seq` beyond the model, or `data` shorter than one window.
pub fn bits_per_byte(
    w: &Weights<f32>,
    cfg: &Config,
    data: &[u8],
    seq: usize,
) -> Result<f64, Error> {
    let n = data.len().checked_div(seq + 1).unwrap_or(0);
    if n == 0 || seq > cfg.max_seq {
        return Err(Error::Setting(format!(
            "{} bytes hold no window of {} at max_seq {}",
            data.len(),
            seq + 1,
            cfg.max_seq
        )));
    }
    let starts: Vec<usize> = (0..n).map(|i| i * (seq + 1)).collect();
    let parts: Vec<Result<f64, Error>> = starts
        .par_chunks(8)
        .map(|chunk| {
            let (x, y) = tokens_of(data, chunk, seq);
            let batch = Batch {
                tokens: &x,
                b: chunk.len(),
                t: seq,
            };
            loss(
                w,
                cfg,
                &batch,
                &Objective::last(Targets::Tokens(&y), cfg.n_layers),
            )
        })
        .collect();
    let mut nats = 0.0;
    for p in parts {
        nats += p?;
    }
    Ok(nats / (n * seq) as f64 / std::f64::consts::LN_2)
}
