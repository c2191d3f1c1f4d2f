//! Speculative decoding for real: a draft proposes a chain or a tree of tokens, the target
//! verifies all of them in one forward pass, both KV caches roll back to the accepted path.
//!
//! This is the mechanism of Leviathan et al. (2023) and Chen et al. (2023) for chains, and
//! of SpecInfer (Miao et al. 2024), Medusa and EAGLE for trees, on the toy model of
//! `transformer_lab`:
//!
//! - the draft expands the tree level by level with its KV cache: level j keeps the
//!   draft's top-k_j children of every node of level j − 1 ([`TreeShape`]);
//! - the target scores every node in one pass with a tree attention mask: each node sees
//!   the committed sequence and its own ancestors, at RoPE position = prefix length +
//!   depth ([`TransformerLM::extend_tree`]);
//! - greedy: the longest root-to-node path on which every token is the target's own argmax
//!   is accepted, plus the target's next token after it (the bonus token), so the output
//!   is exactly the target's greedy output;
//! - sampling: the draft gives every node of level j − 1 k_j children drawn independently
//!   from its distribution q there; from the root, each child x in turn is accepted with
//!   probability min(1, p(x)/q(x)), and on its rejection p becomes normalise(max(0, p − q))
//!   for the next; when all are rejected a token is drawn from what is left
//!   ([`accept_among`], SpecInfer's multi-step speculative sampling; on a chain, Leviathan
//!   et al.'s), so every output token is distributed exactly as if sampled from the target;
//! - both caches keep only the accepted path ([`KvCache::keep`](transformer_lab::KvCache::keep)).
//!
//! Start with [`reference`](mod@reference): the same algorithm for one sequence in plain loops, with no
//! cache, no mask and no batch — every model call is a whole teacher-forced pass over the
//! sequence so far. The fast path is tested against it token for token.
//!
//! A whole batch advances together, as serving engines run it ([`speculative_generate_batch`]):
//! every draft level and every verification is one ragged pass over all unfinished
//! sequences ([`TransformerLM::extend_ragged`]), each sequence with its own caches, its own
//! length and its own accepted path. [`speculative_generate`] is a batch of one.

mod accept;
mod batch;
mod dynamic;
mod lane;
mod lookup;
pub mod reference;

pub use accept::{Choice, accept_among};
pub use dynamic::DynamicTree;
pub use lookup::{MAX_NGRAM, PromptLookup, lookup_proposal, prompt_lookup_generate_batch};

use rand::Rng;
use transformer_lab::TransformerLM;

use crate::{Error, TreeShape};
use batch::{catch_up_draft, draft_level, draft_level_dynamic, prefill, rerank, verify};
use lane::Lane;

/// How the next token is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sampling {
    /// The argmax (ties to the lowest id); trees or chains.
    Greedy,
    /// Drawn from `softmax(logits / T)`, T > 0: chains and trees (a tree's children drawn
    /// from the draft, verified by [`accept_among`]). `Temperature(0.0)` is
    /// [`Greedy`](Self::Greedy), as temperature 0 is everywhere in `transformer_lab`
    /// (`rng` unused).
    Temperature(f64),
}

/// What one run of [`speculative_generate`] did, for one sequence.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpecStats {
    /// Draft-then-verify rounds.
    pub rounds: usize,
    /// Target forward passes this sequence took part in: one prefill (if the prompt has
    /// more than one token) and one verification per round.
    pub target_forwards: usize,
    /// Draft forward passes this sequence took part in: prefill, one per tree level per
    /// round, and catch-ups.
    pub draft_forwards: usize,
    /// Draft tokens accepted in each round (the bonus or correction token not counted).
    pub accepted: Vec<u32>,
    /// Tokens produced: exactly the `n_new` asked for (each round's tree is cut to the
    /// tokens still missing, so the last round cannot overshoot). Always `rounds` plus
    /// the sum of `accepted`.
    pub generated: usize,
}

impl SpecStats {
    /// Measured τ: tokens produced per verification pass (per round), = 1 + mean
    /// accepted. 1 when there was no round, like
    /// [`TreeAcceptance::tau`](crate::TreeAcceptance::tau) with no position.
    pub fn tau(&self) -> f64 {
        if self.rounds == 0 {
            1.0
        } else {
            self.generated as f64 / self.rounds as f64
        }
    }
}

/// Generates `n_new` tokens after `prompt` with `target`, drafting with `draft` in rounds
/// of the given `shape`, and returns them with statistics.
///
/// Greedy output is token for token what [`autoregressive_generate`](crate::autoregressive_generate)
/// gives the target alone; sampled output has exactly the target's distribution. `rng` is
/// used only when sampling. This is [`speculative_generate_batch`] with a batch of one.
///
/// Errors: models of different vocabularies; an empty prompt, or one longer than either
/// model's `max_seq`; `prompt.len() + n_new` beyond `max_seq`; a negative or non-finite
/// temperature; a tree known only by its size ([`TreeShape::sized`]); a prompt token
/// outside the vocabulary.
pub fn speculative_generate<R: Rng + ?Sized>(
    target: &TransformerLM<'_>,
    draft: &TransformerLM<'_>,
    prompt: &[u32],
    n_new: usize,
    shape: &TreeShape,
    sampling: Sampling,
    rng: &mut R,
) -> Result<(Vec<u32>, SpecStats), Error> {
    let mut out =
        speculative_generate_batch(target, draft, &[prompt], n_new, shape, sampling, rng)?;
    Ok(out.pop().expect("one result per prompt"))
}

/// Speculative decoding of a whole batch of `prompts` (of any lengths) at once, as
/// serving engines do: every round, the draft proposes every unfinished sequence's chain
/// or tree in one batched pass per level, the target verifies all of them in one batched
/// tree-masked pass ([`TransformerLM::extend_ragged`]), and each sequence accepts its own
/// path and rolls back its own caches; a sequence that has its `n_new` tokens drops out.
/// Returns, per prompt in order, its `n_new` tokens and statistics.
///
/// Each sequence's tokens and statistics are what it would get alone: greedy output is
/// token for token the target's own greedy output, and what [`reference`](mod@reference) gives. When
/// sampling, `rng` is drawn from in a fixed order (per level, sequence after sequence;
/// then the acceptance tests, sequence after sequence), so a batch of one draws exactly
/// as a sequence alone — and as [`reference::speculative_generate`].
///
/// Errors: those of [`speculative_generate`], for any prompt.
pub fn speculative_generate_batch<P: AsRef<[u32]>, R: Rng + ?Sized>(
    target: &TransformerLM<'_>,
    draft: &TransformerLM<'_>,
    prompts: &[P],
    n_new: usize,
    shape: &TreeShape,
    sampling: Sampling,
    rng: &mut R,
) -> Result<Vec<(Vec<u32>, SpecStats)>, Error> {
    let (levels, temperature) = check(target, draft, prompts, n_new, shape, sampling)?;
    // The shape has at most MAX_TREE_NODES nodes, so this fits a usize.
    let nodes = shape.nodes() as usize;
    run(
        target,
        draft,
        prompts,
        n_new,
        Plan::Static(levels),
        nodes,
        temperature,
        rng,
    )
}

/// Greedy speculative decoding of a batch with dynamic trees ([`DynamicTree`], EAGLE-2):
/// each round the draft expands its `width` most confident candidates level by level,
/// the `budget` most confident of all of them are kept (EAGLE-2's reranking), and the
/// target verifies that tree in one tree-masked pass. Output is token for token the
/// target's own greedy output, as with any tree; [`reference::speculative_generate_dynamic`]
/// is the same in plain loops.
///
/// Errors: those of [`speculative_generate`] (a dynamic tree is checked by
/// [`DynamicTree::new`]; a zero knob here is an error too).
pub fn speculative_generate_dynamic_batch<P: AsRef<[u32]>>(
    target: &TransformerLM<'_>,
    draft: &TransformerLM<'_>,
    prompts: &[P],
    n_new: usize,
    tree: DynamicTree,
) -> Result<Vec<(Vec<u32>, SpecStats)>, Error> {
    let tree = DynamicTree::new(tree.depth, tree.width, tree.budget)?;
    let chain = TreeShape::chain(1)?;
    check(target, draft, prompts, n_new, &chain, Sampling::Greedy)?;
    // Greedy draws nothing; any generator will do.
    let mut unused = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(0);
    // Every level's `width` nodes are drafted before the rerank keeps `budget` of them.
    let drafted = tree.depth as usize * tree.width as usize;
    run(
        target,
        draft,
        prompts,
        n_new,
        Plan::Dynamic(tree),
        drafted,
        0.0,
        &mut unused,
    )
}

/// How a round's tree grows: a static shape's top-k per level, or a dynamic tree.
#[derive(Debug, Clone, Copy)]
enum Plan<'s> {
    Static(&'s [u32]),
    Dynamic(DynamicTree),
}

/// The batched loop of rounds shared by static and dynamic trees (arguments checked).
#[allow(clippy::too_many_arguments)]
fn run<P: AsRef<[u32]>, R: Rng + ?Sized>(
    target: &TransformerLM<'_>,
    draft: &TransformerLM<'_>,
    prompts: &[P],
    n_new: usize,
    plan: Plan<'_>,
    max_nodes: usize,
    temperature: f64,
    rng: &mut R,
) -> Result<Vec<(Vec<u32>, SpecStats)>, Error> {
    let mut lanes = prompts
        .iter()
        .map(|p| Lane::new(target, draft, p.as_ref(), n_new, max_nodes))
        .collect::<Result<Vec<_>, Error>>()?;
    let levels = match plan {
        Plan::Static(levels) => levels.len(),
        Plan::Dynamic(t) => t.depth as usize,
    };
    // Invariant: each target cache holds every committed token of its sequence but the
    // last one (the root of the next round); each draft cache holds at most that much.
    prefill(target, draft, &mut lanes)?;
    loop {
        let active: Vec<usize> = (0..lanes.len())
            .filter(|&i| lanes[i].stats.generated < n_new)
            .collect();
        if active.is_empty() {
            break;
        }
        catch_up_draft(draft, &mut lanes, &active)?;
        // Each tree starts at its root and is cut to the tokens still missing.
        for &i in &active {
            let missing = n_new - lanes[i].stats.generated;
            lanes[i].start_round(levels.min(missing - 1));
        }
        for depth in 0..levels {
            // A lane grows while its round is not that deep and its last level has nodes.
            let growing: Vec<usize> = active
                .iter()
                .copied()
                .filter(|&i| depth < lanes[i].depth && lanes[i].level_start < lanes[i].nodes.len())
                .collect();
            if growing.is_empty() {
                break;
            }
            match plan {
                Plan::Static(k) => {
                    draft_level(draft, &mut lanes, &growing, k[depth], temperature, rng)?
                }
                Plan::Dynamic(t) => draft_level_dynamic(draft, &mut lanes, &growing, t)?,
            }
        }
        if let Plan::Dynamic(t) = plan {
            rerank(&mut lanes, &active, t.budget as usize);
        }
        verify(target, &mut lanes, &active, temperature, rng)?;
    }
    Ok(lanes.into_iter().map(|lane| lane.finish(n_new)).collect())
}

/// Checks the arguments of a run (see [`speculative_generate`]'s errors) and returns the
/// shape's levels and the temperature (0 = greedy).
fn check<'s, P: AsRef<[u32]>>(
    target: &TransformerLM<'_>,
    draft: &TransformerLM<'_>,
    prompts: &[P],
    n_new: usize,
    shape: &'s TreeShape,
    sampling: Sampling,
) -> Result<(&'s [u32], f64), Error> {
    let (tc, dc) = (target.cfg(), draft.cfg());
    if tc.vocab != dc.vocab {
        return Err(Error::Argument(format!(
            "target and draft must share a vocabulary, got {} and {}",
            tc.vocab, dc.vocab
        )));
    }
    let max_seq = tc.max_seq.min(dc.max_seq);
    for prompt in prompts {
        let prompt = prompt.as_ref();
        if prompt.is_empty() {
            return Err(Error::Argument(
                "the prompt needs at least one token".into(),
            ));
        }
        if prompt.len().saturating_add(n_new) > max_seq {
            return Err(Error::Model(transformer_lab::Error::TooLong {
                len: prompt.len().saturating_add(n_new),
                max: max_seq,
            }));
        }
        if let Some(&token) = prompt.iter().find(|&&t| t as usize >= tc.vocab) {
            return Err(Error::Model(transformer_lab::Error::TokenOutOfRange {
                token,
                vocab: tc.vocab,
            }));
        }
    }
    let temperature = match sampling {
        Sampling::Greedy => 0.0,
        Sampling::Temperature(t) if !t.is_finite() || t < 0.0 => {
            return Err(Error::Model(transformer_lab::Error::Temperature(t)));
        }
        Sampling::Temperature(t) => t,
    };
    let levels = shape.levels_for("speculative decoding")?;
    Ok((levels, temperature))
}
