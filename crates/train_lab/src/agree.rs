//! How often a draft agrees with its target on held-out text, position by position with
//! the text itself as context (teacher forcing): the greedy agreement (both argmaxes the
//! same: the acceptance of one drafted token at T = 0) and the expected acceptance of one
//! token sampled at T = 1, `Σ_v min(p_v, q_v) = 1 − TV(p, q)` (Leviathan et al. 2023, §3.8;
//! Chen et al. 2023). These are α for the first draft position; later positions draft
//! from the draft's own tokens, which the lecture's demos measure.

use ndarray::{Array2, ArrayView1};
use rayon::prelude::*;
use transformer_lab::Config;

use crate::Error;
use crate::model::{Batch, logits_at};
use crate::weights::Weights;

/// A model and the exit it is read at (its last block, or fewer for an early exit).
#[derive(Debug, Clone, Copy)]
pub struct Reader<'a> {
    /// Weights.
    pub w: &'a Weights<f32>,
    /// Shape.
    pub cfg: &'a Config,
    /// Blocks run before the final norm and the head.
    pub exit: usize,
}

impl Reader<'_> {
    /// The model read at its last block.
    pub fn full<'a>(w: &'a Weights<f32>, cfg: &'a Config) -> Reader<'a> {
        Reader {
            w,
            cfg,
            exit: cfg.n_layers,
        }
    }

    fn logits(&self, batch: &Batch<'_>) -> Result<Array2<f32>, Error> {
        logits_at(self.w, self.cfg, batch, self.exit)
    }
}

/// Agreement of a draft with its target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agreement {
    /// Positions compared.
    pub positions: usize,
    /// Fraction with the same argmax.
    pub greedy: f64,
    /// Mean `Σ_v min(p_v, q_v)` at T = 1.
    pub sampled: f64,
}

fn softmax(row: ArrayView1<'_, f32>) -> Vec<f64> {
    let max = row.fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    let e: Vec<f64> = row.iter().map(|&v| f64::from(v - max).exp()).collect();
    let sum: f64 = e.iter().sum();
    e.into_iter().map(|x| x / sum).collect()
}

fn argmax(row: ArrayView1<'_, f32>) -> usize {
    let mut best = 0;
    for (i, &v) in row.iter().enumerate() {
        if v > row[best] {
            best = i;
        }
    }
    best
}

/// The agreement of `draft` with `target` on the first `windows` consecutive windows of
/// `seq` bytes of `data`, every position of each.
///
/// Errors: `data` shorter than the windows, a shape either model refuses.
pub fn agreement(
    target: Reader<'_>,
    draft: Reader<'_>,
    data: &[u8],
    seq: usize,
    windows: usize,
) -> Result<Agreement, Error> {
    if windows == 0 || data.len() < windows * seq {
        return Err(Error::Setting(format!(
            "{} bytes hold fewer than {windows} windows of {seq}",
            data.len()
        )));
    }
    let parts: Vec<Result<(usize, f64), Error>> = (0..windows)
        .into_par_iter()
        .map(|i| {
            let tokens: Vec<u32> = data[i * seq..(i + 1) * seq]
                .iter()
                .map(|&b| u32::from(b))
                .collect();
            let batch = Batch {
                tokens: &tokens,
                b: 1,
                t: seq,
            };
            let (p, q) = (target.logits(&batch)?, draft.logits(&batch)?);
            let mut same = 0;
            let mut overlap = 0.0;
            for (pr, qr) in p.outer_iter().zip(q.outer_iter()) {
                same += usize::from(argmax(pr) == argmax(qr));
                let (ps, qs) = (softmax(pr), softmax(qr));
                overlap += ps.iter().zip(&qs).map(|(a, b)| a.min(*b)).sum::<f64>();
            }
            Ok((same, overlap))
        })
        .collect();
    let (mut same, mut overlap) = (0, 0.0);
    for p in parts {
        let (s, o) = p?;
        same += s;
        overlap += o;
    }
    let positions = windows * seq;
    Ok(Agreement {
        positions,
        greedy: same as f64 / positions as f64,
        sampled: overlap / positions as f64,
    })
}
