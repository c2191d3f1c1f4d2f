//! EAGLE's head trained and measured: the seeded loop on a frozen target
//! ([`crate::frozen`]) and the head's first guess on held-out text.

use ndarray::{Array2, ArrayView1};
use rayon::prelude::*;
use transformer_lab::Config;

use super::{Eagle, Frozen, Step, forward, loss_and_grad};
use crate::Error;
use crate::adamw::AdamW;
use crate::frozen;
use crate::model::{Batch, hidden_at};
use crate::train::{Schedule, StepLog};
use crate::weights::Weights;

/// A step's data: the target's hidden states, x_{j+1} and x_{j+2} at each position.
type StepData = (Array2<f32>, Vec<u32>, Vec<u32>);

/// The windows starting at `starts`, `t` positions each: the target's inputs (`t + 1`
/// bytes a window), x_{j+1} and x_{j+2} at each position.
fn eagle_windows(data: &[u8], starts: &[usize], t: usize) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let bytes = |from: usize, len: usize| -> Vec<u32> {
        starts
            .iter()
            .flat_map(|&s| data[s + from..s + from + len].iter().map(|&b| u32::from(b)))
            .collect()
    };
    (bytes(0, t + 1), bytes(1, t), bytes(2, t))
}

/// The target's hidden states and the step of windows starting at `starts`.
fn step_data(
    target: &Weights<f32>,
    cfg: &Config,
    data: &[u8],
    starts: &[usize],
    t: usize,
) -> Result<StepData, Error> {
    let (x, next, after) = eagle_windows(data, starts, t);
    let batch = Batch {
        tokens: &x,
        b: starts.len(),
        t: t + 1,
    };
    let features = hidden_at(target, cfg, &batch, cfg.n_layers)?;
    Ok((features, next, after))
}

/// Trains `e` on the frozen `target` (shape `cfg`) on windows of `data`: `sched.seq`
/// positions a window (the target reads one more, so at most `max_seq − 1`), as
/// [`crate::medusa::train`] trains Medusa's heads: seeded windows, micro-batches in
/// parallel added in order, the same head for any number of threads.
///
/// Errors: a head of another width, a schedule or AdamW setting out of range, data too
/// short for one window.
pub fn train(
    target: &Weights<f32>,
    cfg: &Config,
    e: &mut Eagle<f32>,
    data: &[u8],
    sched: &Schedule,
    opt: &AdamW,
    log: &mut dyn FnMut(&StepLog),
) -> Result<(), Error> {
    if e.fc.dim() != (2 * cfg.d_model, cfg.d_model) || cfg.vocab < 256 {
        return Err(Error::Shape(format!(
            "an EAGLE head of fusion layer {:?} for a byte-level target of width {}",
            e.fc.dim(),
            cfg.d_model
        )));
    }
    let room = Schedule {
        seq: sched.seq + 1,
        ..sched.clone()
    };
    room.check(cfg, data.len().saturating_sub(1))?;
    opt.check()?;
    let positions = (sched.batch * sched.seq) as f64;
    let frozen = Frozen {
        embed: &target.embed,
        lm_head: &target.lm_head,
        cfg,
    };
    let grad_of = |e: &Eagle<f32>, chunk: &[usize]| {
        let (features, next, after) = step_data(target, cfg, data, chunk, sched.seq)?;
        let step = Step {
            b: chunk.len(),
            t: sched.seq,
            next: &next,
            after: &after,
            features: &features,
        };
        loss_and_grad(e, &frozen, &step, positions)
    };
    let span = (data.len(), sched.seq + 2);
    frozen::steps(e, sched, opt, span, &grad_of, Eagle::add_assign, log)
}

/// How the head's first guess does on held-out text, teacher-forced (the target's true
/// f_j and x_{j+1}).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agreement {
    /// How often its top token is the target's own top token at the next position (what
    /// greedy speculative decoding accepts at the first draft position, on this text).
    pub with_target: f64,
    /// How often its top token is the text's byte x_{j+2}.
    pub with_text: f64,
}

/// The first index of the largest value.
fn argmax(row: ArrayView1<'_, f32>) -> usize {
    let mut best = 0;
    for (i, &v) in row.iter().enumerate() {
        if v > row[best] {
            best = i;
        }
    }
    best
}

/// The head's [`Agreement`] on `data` cut into consecutive windows of `t + 2` bytes (a
/// tail shorter than a window left out). Windows in parallel, added in order.
///
/// Errors: `t` beyond the target's `max_seq − 1`, data shorter than one window, a head
/// that does not fit the target.
pub fn agreement(
    target: &Weights<f32>,
    cfg: &Config,
    e: &Eagle<f32>,
    data: &[u8],
    t: usize,
) -> Result<Agreement, Error> {
    let n = data.len() / (t + 2);
    if n == 0 || t == 0 || t >= cfg.max_seq {
        return Err(Error::Setting(format!(
            "{} bytes hold no window of {} positions at max_seq {}",
            data.len(),
            t,
            cfg.max_seq
        )));
    }
    let starts: Vec<usize> = (0..n).map(|i| i * (t + 2)).collect();
    let frozen = Frozen {
        embed: &target.embed,
        lm_head: &target.lm_head,
        cfg,
    };
    let parts: Vec<Result<(usize, usize), Error>> = starts
        .par_chunks(8)
        .map(|chunk| {
            let (features, next, after) = step_data(target, cfg, data, chunk, t)?;
            let step = Step {
                b: chunk.len(),
                t,
                next: &next,
                after: &after,
                features: &features,
            };
            let p = forward(e, &frozen, &step)?;
            let own = p.f_next.dot(&target.lm_head);
            let (mut target_hits, mut text_hits) = (0, 0);
            for ((draft, own), &want) in p.logits.outer_iter().zip(own.outer_iter()).zip(&after) {
                let guess = argmax(draft);
                target_hits += usize::from(guess == argmax(own));
                text_hits += usize::from(guess == want as usize);
            }
            Ok((target_hits, text_hits))
        })
        .collect();
    let (mut with_target, mut with_text) = (0, 0);
    for p in parts {
        let (a, b) = p?;
        with_target += a;
        with_text += b;
    }
    let count = (n * t) as f64;
    Ok(Agreement {
        with_target: with_target as f64 / count,
        with_text: with_text as f64 / count,
    })
}
