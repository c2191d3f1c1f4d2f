//! The training loop of a head on a frozen target (Medusa's heads, EAGLE's draft layer):
//! windows drawn by a seeded generator, each step's micro-batches' gradients computed in
//! parallel and added first to last, one AdamW update — [`crate::train`]'s loop for weights
//! that are not a model's.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::Error;
use crate::adamw::{AdamState, AdamW, lr_at};
use crate::train::{Schedule, StepLog, windows};
use crate::weights::Tensors;

/// A micro-batch's loss and gradient: the head, the window starts.
pub(crate) type GradOf<'a, W> = dyn Fn(&W, &[usize]) -> Result<(f64, W), Error> + Sync + 'a;

/// `sched.steps` AdamW steps of `w`: each step draws `sched.batch` window starts in
/// `data_len` bytes, each leaving `span` bytes (ChaCha8 seeded with `sched.seed`), hands
/// every `sched.micro` of them to `grad_of` in parallel, adds the parts with `add` in order
/// and updates; `log` after each step, its loss per position (`sched.seq` a window).
/// The same weights for any number of threads.
///
/// Errors: whatever `grad_of` returns; an empty batch.
pub(crate) fn steps<W: Tensors + Send + Sync>(
    w: &mut W,
    sched: &Schedule,
    opt: &AdamW,
    (data_len, span): (usize, usize),
    grad_of: &GradOf<'_, W>,
    add: fn(&mut W, &W),
    log: &mut dyn FnMut(&StepLog),
) -> Result<(), Error> {
    let mut rng = ChaCha8Rng::seed_from_u64(sched.seed);
    let mut state = AdamState::new(w);
    let positions = (sched.batch * sched.seq) as f64;
    for step in 0..sched.steps {
        let starts = windows(&mut rng, data_len, sched.batch, span - 1);
        let parts: Vec<Result<(f64, W), Error>> = starts
            .par_chunks(sched.micro)
            .map(|chunk| grad_of(w, chunk))
            .collect(); // in chunk order
        let mut total = 0.0;
        let mut grad: Option<W> = None;
        for part in parts {
            let (l, g) = part?;
            total += l;
            match grad.as_mut() {
                Some(sum) => add(sum, &g),
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
