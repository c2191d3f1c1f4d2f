//! The one batched forward of speculative decoding: chunks of several sequences, each on
//! its own KV cache, through one model in one ragged pass — the target's prefill and
//! verifications, a draft model's prefill, catch-ups and levels alike.

use ndarray::Array2;
use transformer_lab::{Feed, KvCache, TransformerLM};

use crate::Error;

/// Feeds `feeds[j]` to `caches[j]`, all in one ragged pass of `model`
/// ([`TransformerLM::extend_ragged`]), and returns the logits, the rows of the first
/// chunk first. Nothing to feed is no pass (no rows).
pub(crate) fn forward(
    model: &TransformerLM<'_>,
    mut caches: Vec<&mut KvCache>,
    feeds: &[Feed<'_>],
) -> Result<Array2<f32>, Error> {
    if feeds.is_empty() {
        return Ok(Array2::zeros((0, model.cfg().vocab)));
    }
    Ok(model.extend_ragged(&mut caches, feeds)?)
}

/// The items of `items` at the increasing indices `which`, mutably, in that order.
pub(crate) fn pick<'a, T>(items: &'a mut [T], which: &[usize]) -> Vec<&'a mut T> {
    let mut wanted = which.iter().peekable();
    let mut out = Vec::with_capacity(which.len());
    for (i, item) in items.iter_mut().enumerate() {
        if wanted.next_if_eq(&&i).is_some() {
            out.push(item);
        }
    }
    out
}

/// [`forward`], and the last hidden state of every fed token beside its logits
/// ([`TransformerLM::extend_ragged_hidden`]).
pub(crate) fn forward_hidden(
    model: &TransformerLM<'_>,
    mut caches: Vec<&mut KvCache>,
    feeds: &[Feed<'_>],
) -> Result<(Array2<f32>, Array2<f32>), Error> {
    if feeds.is_empty() {
        let cfg = model.cfg();
        return Ok((
            Array2::zeros((0, cfg.vocab)),
            Array2::zeros((0, cfg.d_model)),
        ));
    }
    Ok(model.extend_ragged_hidden(&mut caches, feeds)?)
}
