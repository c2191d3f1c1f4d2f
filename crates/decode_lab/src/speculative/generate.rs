//! The one decoding loop: every proposer's rounds, a whole batch at once, as serving
//! engines run it — propose ([`Proposer::propose`]), verify every tree in one batched
//! tree-masked pass of the target, accept (greedily, or by speculative sampling), roll
//! back.

use rand::Rng;
use transformer_lab::{Feed, TransformerLM};

use super::accept::{Sampling, greedy_path, sampled_path};
use super::forward::{forward, forward_hidden, pick};
use super::lane::{Lane, LevelMask, SpecStats, causal};
use super::propose::Proposer;
use crate::Error;

/// Speculative decoding of a whole batch of `prompts` (of any lengths) at once: every
/// round, `proposer` proposes every unfinished sequence's chain or tree, the target
/// verifies all of them in one batched tree-masked pass
/// ([`TransformerLM::extend_ragged`]), and each sequence accepts its own path and rolls
/// back its caches; a sequence that has its `n_new` tokens drops out. Returns, per prompt
/// in order, its `n_new` tokens and statistics.
///
/// Each sequence's tokens and statistics are what it would get alone: greedy output is
/// token for token the target's own greedy output, and what
/// [`reference`](super::reference) gives; sampled output has exactly the target's
/// distribution. When sampling, `rng` is drawn from in a fixed order (the proposer's
/// draws, lane after lane; then the acceptance tests, lane after lane), so a batch of one
/// draws exactly as a sequence alone — and as the plain reference.
///
/// Errors: a proposer that cannot propose for `target` ([`Proposer::check`]: another
/// vocabulary, a bad knob); an empty prompt, or `prompt.len() + n_new` beyond either
/// model's `max_seq`; a negative or non-finite temperature; a prompt token outside the
/// vocabulary.
pub fn speculative_generate_batch<P: Proposer, Q: AsRef<[u32]>, R: Rng + ?Sized>(
    target: &TransformerLM<'_>,
    proposer: &P,
    prompts: &[Q],
    n_new: usize,
    sampling: Sampling,
    rng: &mut R,
) -> Result<Vec<(Vec<u32>, SpecStats)>, Error> {
    let temperature = check(target, prompts, n_new, sampling)?;
    let longest = prompts.iter().map(|p| p.as_ref().len()).max().unwrap_or(0);
    proposer.check(target, longest.saturating_add(n_new), temperature)?;
    let slots: Vec<usize> = prompts
        .iter()
        .map(|p| p.as_ref().len() + n_new + proposer.max_nodes() + 1)
        .collect();
    let mut lanes = prompts
        .iter()
        .zip(&slots)
        .map(|(p, &slots)| Lane::new(target, p.as_ref(), slots))
        .collect::<Result<Vec<_>, Error>>()?;
    // Invariant: each target cache holds every committed token of its sequence but the
    // last one (the root of the next round).
    let hidden = prefill(target, &mut lanes, proposer.reads_hidden())?;
    let mut state = proposer.start(&mut lanes, &slots)?;
    for (i, rows) in hidden {
        proposer.read_hidden(&mut state, i, rows.view())?;
    }
    loop {
        let active: Vec<usize> = (0..lanes.len())
            .filter(|&i| lanes[i].stats.generated < n_new)
            .collect();
        if active.is_empty() {
            break;
        }
        // Each tree starts at its root and is cut to the tokens still missing.
        for &i in &active {
            let missing = n_new - lanes[i].stats.generated;
            lanes[i].start_round(proposer.depth().min(missing - 1));
        }
        proposer.propose(&mut state, &mut lanes, &active, temperature, rng)?;
        verify(
            target,
            proposer,
            &mut state,
            &mut lanes,
            &active,
            temperature,
            rng,
        )?;
    }
    Ok(lanes.into_iter().map(|lane| lane.finish(n_new)).collect())
}

/// [`speculative_generate_batch`] for one sequence: its `n_new` tokens after `prompt` and
/// its statistics.
///
/// Errors: as [`speculative_generate_batch`].
pub fn speculative_generate<P: Proposer, R: Rng + ?Sized>(
    target: &TransformerLM<'_>,
    proposer: &P,
    prompt: &[u32],
    n_new: usize,
    sampling: Sampling,
    rng: &mut R,
) -> Result<(Vec<u32>, SpecStats), Error> {
    let mut out = speculative_generate_batch(target, proposer, &[prompt], n_new, sampling, rng)?;
    Ok(out.pop().expect("one result per prompt"))
}

/// Prefill: the target reads every prompt but its last token (the first round's root),
/// in one ragged pass over the prompts longer than one token. With `hidden`, returns each
/// of those lanes' hidden states (every prompt token's but the last), by lane index.
fn prefill(
    target: &TransformerLM<'_>,
    lanes: &mut [Lane],
    hidden: bool,
) -> Result<Vec<(usize, ndarray::Array2<f32>)>, Error> {
    let long: Vec<usize> = (0..lanes.len())
        .filter(|&i| lanes[i].committed.len() > 1)
        .collect();
    let heads: Vec<Vec<u32>> = long
        .iter()
        .map(|&i| lanes[i].committed[..lanes[i].root_slot()].to_vec())
        .collect();
    let feeds: Vec<Feed<'_>> = heads.iter().map(|h| causal(h)).collect();
    if !hidden {
        forward(target, target_caches(lanes, &long), &feeds)?;
        return Ok(Vec::new());
    }
    let (_, states) = forward_hidden(target, target_caches(lanes, &long), &feeds)?;
    let mut first = 0;
    let mut out = Vec::with_capacity(long.len());
    for (&i, head) in long.iter().zip(&heads) {
        let rows = states.slice(ndarray::s![first..first + head.len(), ..]);
        out.push((i, rows.to_owned()));
        first += head.len();
    }
    Ok(out)
}

/// The target caches of the lanes `which`, each pass counted in their statistics.
fn target_caches<'a>(
    lanes: &'a mut [Lane],
    which: &[usize],
) -> Vec<&'a mut transformer_lab::KvCache> {
    let picked = pick(lanes, which).into_iter();
    picked
        .map(|lane| {
            lane.stats.target_forwards += 1;
            &mut lane.cache
        })
        .collect()
}

/// The target verifies every `active` lane's tree in one batched tree-masked pass; each
/// lane accepts its path (lane after lane, drawing from `rng` when sampling), the proposer
/// keeps its own state on that path, and the lane commits it.
fn verify<P: Proposer, R: Rng + ?Sized>(
    target: &TransformerLM<'_>,
    proposer: &P,
    state: &mut P::State,
    lanes: &mut [Lane],
    active: &[usize],
    temperature: f64,
    rng: &mut R,
) -> Result<(), Error> {
    let masks: Vec<LevelMask> = active.iter().map(|&i| lanes[i].level_mask(0)).collect();
    let feeds: Vec<Feed<'_>> = masks.iter().map(LevelMask::feed).collect();
    let (logits, hidden) = match proposer.reads_hidden() {
        true => {
            let (logits, hidden) = forward_hidden(target, target_caches(lanes, active), &feeds)?;
            (logits, Some(hidden))
        }
        false => (forward(target, target_caches(lanes, active), &feeds)?, None),
    };
    let mut row = 0;
    for &i in active {
        let lane = &mut lanes[i];
        let first = row;
        let rows = logits.slice(ndarray::s![row..row + lane.nodes.len(), ..]);
        row += lane.nodes.len();
        let (path, next) = if temperature == 0.0 {
            greedy_path(&lane.nodes, rows)?
        } else {
            sampled_path(&lane.nodes, &lane.q, rows, temperature, rng)?
        };
        proposer.accepted(state, i, lane, &path)?;
        if let Some(hidden) = &hidden {
            // The root's and the accepted nodes' states; the last predicted `next`.
            let rows: Vec<usize> = path.iter().map(|&node| first + node).collect();
            proposer.read_hidden(state, i, hidden.select(ndarray::Axis(0), &rows).view())?;
        }
        lane.commit(&path, next)?;
    }
    Ok(())
}

/// Checks the arguments of a run against the target (see [`speculative_generate_batch`]'s
/// errors) and returns the temperature (0 = greedy).
pub(crate) fn check<Q: AsRef<[u32]>>(
    target: &TransformerLM<'_>,
    prompts: &[Q],
    n_new: usize,
    sampling: Sampling,
) -> Result<f64, Error> {
    let tc = target.cfg();
    for prompt in prompts {
        let prompt = prompt.as_ref();
        if prompt.is_empty() {
            return Err(Error::Argument(
                "the prompt needs at least one token".into(),
            ));
        }
        if prompt.len().saturating_add(n_new) > tc.max_seq {
            return Err(Error::Model(transformer_lab::Error::TooLong {
                len: prompt.len().saturating_add(n_new),
                max: tc.max_seq,
            }));
        }
        if let Some(&token) = prompt.iter().find(|&&t| t as usize >= tc.vocab) {
            return Err(Error::Model(transformer_lab::Error::TokenOutOfRange {
                token,
                vocab: tc.vocab,
            }));
        }
    }
    sampling.temperature()
}
