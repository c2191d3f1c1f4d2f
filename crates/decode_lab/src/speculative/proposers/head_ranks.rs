//! Where a draft head ranks a known continuation, round by round: what
//! [`round_accept_lengths`](crate::round_accept_lengths) reads for the drafters whose guess
//! at a level depends on where the round started. Medusa's heads read every level of a
//! round from the one hidden state its root was predicted from; EAGLE's head reads each
//! level from the features it drafted at the level before. (A draft model's guess at a
//! position is the same from any start: one rank a position,
//! [`draft_ranks`](crate::draft_ranks), says it all.)
//!
//! Both read a sequence and the target's last hidden states on it (after its final norm,
//! as [`TransformerLM::extend_ragged_hidden`](transformer_lab::TransformerLM::extend_ragged_hidden)
//! returns them) and, for a round whose root sits at R, rank the sequence's token R + k among
//! the head's candidates at level k, in a tree whose path so far is the sequence's own: the
//! only path a greedy target that produced the sequence accepts.

use std::ops::Range;

use ndarray::{Array1, ArrayView1, ArrayView2, Axis, s};
use transformer_lab::{Feed, TreeMask};

use super::eagle::EagleHead;
use super::medusa::MedusaHeads;
use crate::Error;
use crate::acceptance::rank;

impl MedusaHeads {
    /// For a round from each root R in `roots` of `tokens` (`hidden`: the target's last
    /// hidden state at each token, `[tokens, d_model]`): the rank of `tokens[R + k]` in head
    /// k's logits read from `hidden[R − 1]`, the state the root was predicted from, for k
    /// from 1 to the number of heads, as far as the sequence goes. Row i is the round from
    /// `roots.start + i`.
    ///
    /// Errors: as many hidden states as tokens, of the heads' width, all finite; roots from
    /// 1 (a root needs the state before it) up to the sequence's length; tokens inside the
    /// vocabulary; a NaN logit.
    pub fn round_ranks(
        &self,
        hidden: ArrayView2<f32>,
        tokens: &[u32],
        roots: Range<usize>,
    ) -> Result<Vec<Vec<u32>>, Error> {
        check(hidden, tokens, &roots, (self.d_model(), self.vocab()))?;
        roots
            .map(|r| {
                let levels = (1..=self.len()).take_while(|k| r + k < tokens.len());
                levels
                    .map(|k| {
                        let logits = self.logits(k, hidden.row(r - 1))?;
                        ranked(logits.view(), tokens[r + k])
                    })
                    .collect()
            })
            .collect()
    }
}

/// A round still drafting: which round, the feature its next node is fed with, the cache
/// slots of the nodes it has drafted.
struct Open {
    round: usize,
    feature: Array1<f32>,
    slots: Vec<usize>,
}

impl EagleHead<'_> {
    /// For a round from each root R in `roots` of `tokens`, at most `levels` deep: the rank
    /// of `tokens[R + k]` in the head's logits at level k, as [`EagleDraft`](super::EagleDraft)
    /// drafts it — the head has read the pairs (f_j, x_{j+1}) for j < R with the target's
    /// true features `hidden` (`[tokens, d_model]`), and each token x_{R+1} … x_{R+k−1} of
    /// the path as a drafted node: fed with its parent's f̂, at position R + depth − 1,
    /// seeing the committed pairs and its ancestors only. Row i is the round from
    /// `roots.start + i`, as far as the sequence goes.
    ///
    /// One pass reads every true pair; then one pass a level feeds every round's node of
    /// that level, each under a mask that shows it its own round's past.
    ///
    /// Errors: as [`MedusaHeads::round_ranks`]; the head refuses its inputs.
    pub fn round_ranks(
        &self,
        hidden: ArrayView2<f32>,
        tokens: &[u32],
        roots: Range<usize>,
        levels: usize,
    ) -> Result<Vec<Vec<u32>>, Error> {
        let layer = self.layer();
        let cfg = layer.cfg();
        check(hidden, tokens, &roots, (cfg.d_model, cfg.vocab))?;
        let n = tokens.len();
        let roots: Vec<usize> = roots.collect();
        let mut rows = vec![Vec::new(); roots.len()];
        if roots.is_empty() || levels == 0 {
            return Ok(rows);
        }
        // The true pairs j = 0 … n − 2; the output of pair R − 1 is level 1 of the round
        // from R.
        let pairs = n - 1;
        let mut cache = layer.new_cache(1, pairs + (levels - 1) * roots.len())?;
        let inputs = self.fuse(hidden.slice(s![..pairs, ..]), &tokens[1..])?;
        let feed = Feed {
            tokens: &tokens[1..],
            tree: None,
        };
        let (logits, features) =
            layer.extend_ragged_inputs(&mut [&mut cache], &[feed], &[inputs.view()])?;
        let mut open = Vec::new();
        for (i, &r) in roots.iter().enumerate() {
            if r + 1 < n {
                rows[i].push(ranked(logits.row(r - 1), tokens[r + 1])?);
                open.push(Open {
                    round: i,
                    feature: features.row(r - 1).to_owned(),
                    slots: Vec::new(),
                });
            }
        }
        for depth in 2..=levels {
            // The rounds with a token at R + depth feed their node of depth − 1: the
            // token x_{R+depth−1} with its parent's f̂.
            open.retain(|o| roots[o.round] + depth < n);
            if open.is_empty() {
                break;
            }
            let base = cache.len();
            let mut node_tokens = Vec::new();
            let mut positions = Vec::new();
            let mut visible = Vec::new();
            for (j, o) in open.iter_mut().enumerate() {
                let r = roots[o.round];
                o.slots.push(base + j);
                node_tokens.push(tokens[r + depth - 1]);
                positions.push(r + depth - 2);
                visible.push((0..r).chain(o.slots.iter().copied()).collect());
            }
            let parents: Vec<ArrayView1<f32>> = open.iter().map(|o| o.feature.view()).collect();
            let parents = ndarray::stack(Axis(0), &parents)
                .map_err(|_| Error::Argument("features of different widths".into()))?;
            let inputs = self.fuse(parents.view(), &node_tokens)?;
            let feed = Feed {
                tokens: &node_tokens,
                tree: Some(TreeMask {
                    positions: &positions,
                    prefix: 0,
                    visible: &visible,
                }),
            };
            let (logits, features) =
                layer.extend_ragged_inputs(&mut [&mut cache], &[feed], &[inputs.view()])?;
            for (j, o) in open.iter_mut().enumerate() {
                let r = roots[o.round];
                rows[o.round].push(ranked(logits.row(j), tokens[r + depth])?);
                o.feature = features.row(j).to_owned();
            }
        }
        Ok(rows)
    }
}

/// Checks a sequence, its hidden states (`width` = (d_model, vocab) of the head) and the
/// roots asked for.
fn check(
    hidden: ArrayView2<f32>,
    tokens: &[u32],
    roots: &Range<usize>,
    (d_model, vocab): (usize, usize),
) -> Result<(), Error> {
    if hidden.dim() != (tokens.len(), d_model) {
        return Err(Error::Argument(format!(
            "hidden states {:?} for {} tokens and a head of width {d_model}",
            hidden.dim(),
            tokens.len()
        )));
    }
    if roots.start == 0 || roots.end > tokens.len() {
        return Err(Error::Argument(format!(
            "roots {roots:?} of a sequence of {}: a root needs the state before it, so roots \
             run from 1 to the sequence's length",
            tokens.len()
        )));
    }
    if let Some(bad) = tokens.iter().find(|&&t| t as usize >= vocab) {
        return Err(Error::Argument(format!(
            "token {bad} is outside a vocabulary of {vocab}"
        )));
    }
    if !hidden.iter().all(|v| v.is_finite()) {
        return Err(Error::Argument("a hidden state that is not finite".into()));
    }
    Ok(())
}

/// The rank of `token` in `logits`, a NaN refused (it would rank every token first).
fn ranked(logits: ArrayView1<f32>, token: u32) -> Result<u32, Error> {
    if logits.iter().any(|l| l.is_nan()) {
        return Err(Error::Argument(
            "a NaN logit: the head's weights are broken".into(),
        ));
    }
    Ok(rank(logits, token))
}
