//! The trained target's draft heads as demos 3, 4 and 7 read them: the Medusa heads and
//! the EAGLE head `train_lab` trained on the frozen trained target (its shipped files),
//! and where each ranks the target's own continuations, round by round.
//!
//! A head has no weights of a draft model and guesses a round's deeper levels from where
//! the round started (Medusa: every level from the root's hidden state; EAGLE: each level
//! from the features it drafted before), so its ranks are known per round, not per
//! position (`decode_lab::round_accept_lengths`). Heads exist for the trained target
//! only: a head trained on a random model would learn nothing to measure.

use std::collections::HashMap;

use decode_lab::speculative::{EagleHead, MedusaHead, MedusaHeads};
use lecture_kit::Error;
use ndarray::{Array1, Array2, ArrayView2};
use rayon::prelude::*;
use transformer_lab::{Config, Params, TransformerLM, config_like};

/// The names of the heads in demos 3 and 4, in order: Medusa's, EAGLE's.
pub const HEAD_NAMES: [&str; 2] = ["Medusa 头（训练过）", "EAGLE 头（训练过）"];

/// The trained target's heads and what their files state of them.
#[derive(Debug, Clone)]
pub struct TrainedHeads {
    /// Medusa's heads, as the decoding loop reads them.
    pub medusa: MedusaHeads,
    /// How often each Medusa head's top token was the byte it guesses on the held-out
    /// text (`cargo xtask train medusa` measured it; `train_lab`'s `tests/shipped.rs`
    /// measures it again).
    pub medusa_top1: Vec<f64>,
    /// EAGLE's head.
    pub eagle: EagleWeights,
}

/// The shipped EAGLE head's weights with the target's embedding and LM head, ready to
/// make an [`EagleHead`], and what its file states of its first guess on held-out text.
#[derive(Debug, Clone)]
pub struct EagleWeights {
    fc: Array2<f32>,
    bias: Array1<f32>,
    params: Params,
    cfg: Config,
    /// How often its first guess is the target's own, and the text's byte.
    pub agreement: (f64, f64),
}

impl EagleWeights {
    /// The head the decoding loop runs.
    ///
    /// Errors: weights the toy model refuses.
    pub fn head(&self) -> Result<EagleHead<'_>, Error> {
        let layer = TransformerLM::new(&self.params, self.cfg, "EAGLE")?;
        Ok(EagleHead::new(self.fc.clone(), self.bias.clone(), layer)?)
    }
}

/// The shipped heads, for the trained target `target` (EAGLE's reads its embedding and
/// LM head).
///
/// Errors: a damaged file (a test reads the shipped ones), heads of another shape than
/// the target's.
pub fn load(target: &Params) -> Result<TrainedHeads, Error> {
    let lib = |e: train_lab::Error| Error::Library(e.to_string().into());
    let medusa = train_lab::shipped::medusa().map_err(lib)?;
    let stated = |meta: &HashMap<String, String>, file: &str, key: &str| {
        let value = meta.get(key).and_then(|v| v.parse::<f64>().ok());
        value.ok_or_else(|| Error::Library(format!("data/{file}: no {key}").into()))
    };
    let medusa_top1 = (1..=medusa.heads.heads.len())
        .map(|k| stated(&medusa.meta, "medusa.safetensors", &format!("head{k}_top1")))
        .collect::<Result<Vec<f64>, Error>>()?;
    let heads = medusa.heads.heads.into_iter().map(|h| MedusaHead {
        w: h.w,
        bias: h.bias,
        lm_head: h.lm_head,
    });
    let eagle = train_lab::shipped::eagle().map_err(lib)?;
    let agreement = (
        stated(&eagle.meta, "eagle.safetensors", "agree_target_top1")?,
        stated(&eagle.meta, "eagle.safetensors", "agree_text_top1")?,
    );
    let cfg = config_like(&eagle.cfg, 1);
    let mut one =
        train_lab::weights::Weights::<f32>::from_params(&transformer_lab::init_params(&cfg, 0)?);
    one.layers = vec![eagle.eagle.layer.clone()];
    one.final_norm = eagle.eagle.final_norm.clone();
    let mut params = one.to_params();
    params.embed = target.embed.clone();
    params.lm_head = target.lm_head.clone();
    Ok(TrainedHeads {
        medusa: MedusaHeads::new(heads.collect())?,
        medusa_top1,
        eagle: EagleWeights {
            fc: eagle.eagle.fc,
            bias: eagle.eagle.fc_bias,
            params,
            cfg,
            agreement,
        },
    })
}

impl TrainedHeads {
    /// Each head's ranks of the sequences `seqs` (`[sequences, tokens]`, the target's
    /// greedy continuations after their prompts), for a round from each root in `first ..
    /// first + rounds` of every sequence, sequence after sequence: Medusa's as deep as it
    /// has heads, EAGLE's `levels` deep. The target's hidden states come from one
    /// teacher-forced pass over every sequence.
    ///
    /// Errors: sequences the target or a head refuses.
    pub fn round_ranks(
        &self,
        target: &TransformerLM<'_>,
        seqs: ArrayView2<u32>,
        (first, rounds): (usize, usize),
        levels: usize,
    ) -> Result<[Vec<Vec<u32>>; 2], Error> {
        let tokens: Vec<Vec<u32>> = seqs.outer_iter().map(|r| r.to_vec()).collect();
        let (_, hidden) = target.full_hidden(seqs)?;
        let eagle = self.eagle.head()?;
        let roots = first..first + rounds;
        let per_sequence = tokens
            .par_iter()
            .enumerate()
            .map(|(i, t)| -> Result<[Vec<Vec<u32>>; 2], Error> {
                let h = hidden.slice(ndarray::s![i, .., ..]);
                Ok([
                    self.medusa.round_ranks(h, t, roots.clone())?,
                    eagle.round_ranks(h, t, roots.clone(), levels)?,
                ])
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let mut medusa = Vec::new();
        let mut eagle = Vec::new();
        for [m, e] in per_sequence {
            medusa.extend(m);
            eagle.extend(e);
        }
        Ok([medusa, eagle])
    }
}
