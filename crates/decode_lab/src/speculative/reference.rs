//! Speculative decoding for one sequence, written to be read: plain loops, no KV cache,
//! no tree mask, no batch. Every model call is a whole teacher-forced pass over the
//! sequence so far ([`TransformerLM::full_logits`]), so nothing has to be rolled back.
//!
//! Read [`speculative_generate_chain`] first: the whole algorithm of Leviathan et al.
//! (2023) and Chen et al. (2023) on one screen, as gpt-fast's `generate.py` has it —
//!
//! 1. **Draft** γ tokens with the small model, one after another, each drawn from the
//!    draft's distribution q after the sequence so far (greedy: its argmax).
//! 2. **Verify** with the target: walk the drafts; draft x is accepted with probability
//!    min(1, p(x) / q(x)), p the target's distribution at that position (greedy: when it
//!    is the target's own argmax). On the first rejection the round's last token is drawn
//!    from normalise(max(0, p − q)) (greedy: the target's argmax); when every draft is
//!    accepted, a bonus token from the target's p after the last one.
//! 3. **Commit** the accepted drafts and that last token.
//!
//! Every output token is then distributed exactly as the target's own sample (greedy:
//! it is the target's own greedy token). Then trees ([`speculative_generate_tree`]: the
//! draft proposes its top-k_j at each level j, or k_j draws; at each node of the walk its
//! children are tried in order, p becoming the residual after each rejection — SpecInfer's
//! multi-step speculative sampling), EAGLE-2's dynamic trees
//! ([`speculative_generate_dynamic`]) and prompt lookup ([`prompt_lookup_generate`]).
//!
//! The batched path ([`speculative_generate_batch`](crate::speculative_generate_batch))
//! scores every node of a tree in one pass with a tree mask; these walks ask the target
//! only about the nodes they reach. Both give the same answers: the target's token after a
//! node depends only on the node's path. `Temperature(0.0)` is greedy in both. Random
//! numbers are drawn in the batched path's order for a batch of one: the draft's tokens
//! level by level (node after node, k draws each), then the acceptance tests in walk
//! order, then the last token.

use ndarray::{Array1, Array2};
use rand::Rng;
use transformer_lab::{TransformerLM, argmax, draw_weighted, softmax_probs};

use super::accept::Sampling;
use super::generate::check;
use super::proposers::{PromptLookup, check_draft, lookup_proposal};
use crate::{Error, MAX_TREE_NODES, TreeShape};

/// Generates `n_new` tokens after `prompt` with `target`, drafting `gamma` tokens a round
/// with `draft` (a chain), one sequence in plain loops (see the [module docs](self)).
/// Returns the tokens and, per round, how many drafts were accepted (the round's last
/// token not counted): what [`speculative_generate`](crate::speculative_generate) with a
/// chain ([`TreeShape::chain`]) returns as its tokens and
/// [`SpecStats::accepted`](crate::SpecStats::accepted).
///
/// Errors: those of [`speculative_generate`](crate::speculative_generate); γ = 0.
pub fn speculative_generate_chain<R: Rng + ?Sized>(
    target: &TransformerLM<'_>,
    draft: &TransformerLM<'_>,
    prompt: &[u32],
    n_new: usize,
    gamma: usize,
    sampling: Sampling,
    rng: &mut R,
) -> Result<(Vec<u32>, Vec<u32>), Error> {
    let t = check_pair(target, draft, prompt, n_new, sampling)?;
    TreeShape::chain(u32::try_from(gamma).unwrap_or(u32::MAX))?;
    let end = prompt.len() + n_new;
    let mut seq = prompt.to_vec(); // committed tokens [T]
    let mut accepted = Vec::new(); // drafts accepted, per round
    while seq.len() < end {
        // 1. Draft γ tokens (cut to the tokens still missing), keeping each one's q.
        let mut drafts: Vec<u32> = Vec::new();
        let mut qs: Vec<Vec<f64>> = Vec::new();
        for _ in 0..gamma.min(end - seq.len() - 1) {
            let logits = next_logits(draft, &[&seq[..], &drafts].concat())?; // [vocab]
            let (x, q) = choose(&logits, t, rng)?;
            drafts.push(x);
            qs.push(q);
        }
        // 2. Verify: the target's p after the sequence and each accepted draft.
        let mut n = 0; // drafts accepted so far
        let next = loop {
            let logits = next_logits(target, &[&seq[..], &drafts[..n]].concat())?;
            let Some(&x) = drafts.get(n) else {
                break choose(&logits, t, rng)?.0; // all accepted: the bonus token
            };
            if t == 0.0 {
                let want = argmax(logits.view())? as u32;
                if x != want {
                    break want; // greedy: the target's own token instead
                }
            } else {
                let p = softmax(&logits, t)?;
                let q = &qs[n];
                if rng.random::<f64>() >= (p[x as usize] / q[x as usize]).min(1.0) {
                    break draw_weighted(&residual(&p, q), rng)? as u32; // rejected
                }
            }
            n += 1;
        };
        // 3. Commit the accepted drafts and the round's last token.
        accepted.push(n as u32);
        seq.extend_from_slice(&drafts[..n]);
        seq.push(next);
    }
    Ok((seq.split_off(prompt.len()), accepted))
}

/// The token chosen after `logits` at temperature `t` and the distribution it was drawn
/// from: the argmax (ties to the lowest id) and no distribution when greedy.
fn choose<R: Rng + ?Sized>(
    logits: &Array1<f32>,
    t: f64,
    rng: &mut R,
) -> Result<(u32, Vec<f64>), Error> {
    if t == 0.0 {
        return Ok((argmax(logits.view())? as u32, Vec::new()));
    }
    let q = softmax(logits, t)?;
    Ok((draw_weighted(&q, rng)? as u32, q))
}

/// After a rejection, what the round's token is drawn from: max(0, p − q) (draws
/// normalise it), or p itself where p = q leaves nothing.
fn residual(p: &[f64], q: &[f64]) -> Vec<f64> {
    let left: Vec<f64> = p.iter().zip(q).map(|(a, b)| (a - b).max(0.0)).collect();
    if left.iter().sum::<f64>() > 0.0 {
        left
    } else {
        p.to_vec()
    }
}

/// The arguments of a run with a draft model, checked: the target's
/// ([`speculative_generate`](crate::speculative_generate)'s errors) and the draft's
/// vocabulary and context. Returns the temperature (0 = greedy).
fn check_pair(
    target: &TransformerLM<'_>,
    draft: &TransformerLM<'_>,
    prompt: &[u32],
    n_new: usize,
    sampling: Sampling,
) -> Result<f64, Error> {
    check_draft(target, draft, prompt.len().saturating_add(n_new))?;
    check(target, &[prompt], n_new, sampling)
}

/// Generates `n_new` tokens after `prompt` with `target`, drafting with `draft` in rounds
/// of `shape` (a tree, or a chain as the tree `[1; γ]`), one sequence in plain loops (see
/// the [module docs](self)).
///
/// Returns the `n_new` tokens and, per round, how many draft tokens were accepted (the
/// target's own token of each round not counted): what
/// [`speculative_generate`](crate::speculative_generate) returns as its tokens and
/// [`SpecStats::accepted`](crate::SpecStats::accepted). Each round's tree is cut to the
/// tokens still missing, so the last round cannot overshoot.
///
/// Errors: those of [`speculative_generate`](crate::speculative_generate).
pub fn speculative_generate_tree<R: Rng + ?Sized>(
    target: &TransformerLM<'_>,
    draft: &TransformerLM<'_>,
    prompt: &[u32],
    n_new: usize,
    shape: &TreeShape,
    sampling: Sampling,
    rng: &mut R,
) -> Result<(Vec<u32>, Vec<u32>), Error> {
    let temperature = check_pair(target, draft, prompt, n_new, sampling)?;
    let levels = shape.levels_for("speculative decoding")?;
    let end = prompt.len() + n_new;
    let mut seq = prompt.to_vec(); // committed tokens [T]
    let mut accepted = Vec::new(); // draft tokens accepted, per round
    while seq.len() < end {
        // A round adds at most depth + 1 tokens: cut the tree to the tokens still missing.
        let depth = levels.len().min(end - seq.len() - 1);
        let (path, next) = if temperature == 0.0 {
            let tree = draft_tree(draft, &seq, &levels[..depth])?;
            greedy_verify(target, &seq, &tree)?
        } else {
            sampled_round(target, draft, &seq, &levels[..depth], temperature, rng)?
        };
        accepted.push(path.len() as u32);
        seq.extend(&path);
        seq.push(next);
    }
    Ok((seq.split_off(prompt.len()), accepted))
}

/// [`speculative_generate_tree`] with dynamic trees (EAGLE-2) of `depth` levels, `width`
/// nodes expanded per level and `budget` nodes in all, greedy, in plain loops: what a
/// [`DynamicDraft`](crate::speculative::DynamicDraft) gives a batch of one. Returns the
/// tokens and the draft tokens accepted per round.
///
/// Errors: those of [`speculative_generate_tree`]; a zero knob, or a budget or a drafted
/// tree above [`MAX_TREE_NODES`].
pub fn speculative_generate_dynamic(
    target: &TransformerLM<'_>,
    draft: &TransformerLM<'_>,
    prompt: &[u32],
    n_new: usize,
    (depth, width, budget): (u32, u32, u32),
) -> Result<(Vec<u32>, Vec<u32>), Error> {
    let drafted = u64::from(depth) * u64::from(width);
    if depth == 0 || width == 0 || budget == 0 || drafted.max(budget.into()) > MAX_TREE_NODES {
        return Err(Error::Argument(format!(
            "a dynamic tree needs depth, width and budget from 1 to {MAX_TREE_NODES} nodes, \
             got {depth}, {width}, {budget}"
        )));
    }
    check_pair(target, draft, prompt, n_new, Sampling::Greedy)?;
    let end = prompt.len() + n_new;
    let mut seq = prompt.to_vec();
    let mut accepted = Vec::new();
    while seq.len() < end {
        let levels = (depth as usize).min(end - seq.len() - 1);
        let levels = confident_tree(draft, &seq, (width, budget), levels)?;
        let (path, next) = greedy_verify(target, &seq, &levels)?;
        accepted.push(path.len() as u32);
        seq.extend(&path);
        seq.push(next);
    }
    Ok((seq.split_off(prompt.len()), accepted))
}

/// Prompt-lookup speculative decoding for one sequence in plain loops: what a
/// [`PromptLookup`] proposer gives a batch of one. Each round proposes what followed the
/// latest earlier occurrence of the last n tokens (longest n first, [`lookup_proposal`]);
/// greedy accepts while the target's argmax is the proposal, sampling accepts proposed x
/// with probability p(x) and, on a rejection, draws from p with x removed. Returns the
/// tokens and the proposed tokens accepted per round.
///
/// Errors: those of [`speculative_generate_tree`], and bad knobs.
pub fn prompt_lookup_generate<R: Rng + ?Sized>(
    target: &TransformerLM<'_>,
    prompt: &[u32],
    n_new: usize,
    lookup: PromptLookup,
    sampling: Sampling,
    rng: &mut R,
) -> Result<(Vec<u32>, Vec<u32>), Error> {
    lookup.check_knobs()?;
    let t = check(target, &[prompt], n_new, sampling)?;
    let end = prompt.len() + n_new;
    let mut seq = prompt.to_vec();
    let mut accepted = Vec::new();
    while seq.len() < end {
        let gamma = (lookup.gamma as usize).min(end - seq.len() - 1);
        let proposal = lookup_proposal(&seq, lookup.max_ngram as usize, gamma);
        let mut taken = 0;
        let next = loop {
            let logits = next_logits(target, &[&seq[..], &proposal[..taken]].concat())?;
            let proposed = proposal.get(taken).copied();
            if t == 0.0 {
                let want = argmax(logits.view())? as u32;
                if proposed == Some(want) {
                    taken += 1;
                    continue;
                }
                break want;
            }
            let p = softmax(&logits, t)?;
            let Some(x) = proposed else {
                break draw_weighted(&p, rng)? as u32;
            };
            // The draft's q is a point mass on x: accept with p(x) / 1.
            if rng.random::<f64>() < p[x as usize].min(1.0) {
                taken += 1;
                continue;
            }
            let mut residual = p.clone();
            residual[x as usize] = 0.0;
            break if residual.iter().sum::<f64>() > 0.0 {
                draw_weighted(&residual, rng)? as u32
            } else {
                draw_weighted(&p, rng)? as u32
            };
        };
        accepted.push(taken as u32);
        seq.extend_from_slice(&proposal[..taken]);
        seq.push(next);
    }
    Ok((seq.split_off(prompt.len()), accepted))
}

/// A dynamic tree after `seq`, `depth` levels, each node its path. Expansion: every node
/// of a level proposes the draft's top `width` next tokens, scored by the product of the
/// draft's probabilities along the path, and the `width` best of the level are expanded
/// next (ties to the earlier-proposed). Reranking: of every node drafted, the `budget`
/// best by score (ties to the earlier drafted) are the tree, given level by level.
fn confident_tree(
    draft: &TransformerLM<'_>,
    seq: &[u32],
    (width, budget): (u32, u32),
    depth: usize,
) -> Result<Vec<Vec<Vec<u32>>>, Error> {
    let mut drafted: Vec<(Vec<u32>, f64)> = Vec::new(); // in the order drafted
    let mut frontier: Vec<(Vec<u32>, f64)> = vec![(Vec::new(), 1.0)];
    for _ in 0..depth {
        let mut candidates: Vec<(Vec<u32>, f64)> = Vec::new();
        for (path, score) in &frontier {
            let logits = next_logits(draft, &[seq, path].concat())?;
            let q = softmax(&logits, 1.0)?;
            for token in top_k(&logits, width) {
                let child = [path.as_slice(), &[token]].concat();
                candidates.push((child, score * q[token as usize]));
            }
        }
        frontier = best(&candidates, width as usize);
        drafted.extend(frontier.iter().cloned());
    }
    let kept = best(&drafted, budget as usize);
    Ok((1..=depth)
        .map(|d| {
            kept.iter()
                .filter(|(p, _)| p.len() == d)
                .map(|(p, _)| p.clone())
                .collect::<Vec<_>>()
        })
        .take_while(|level| !level.is_empty())
        .collect())
}

/// The `keep` highest-scored of `nodes`, in their order (a stable sort: ties to the
/// earlier).
fn best(nodes: &[(Vec<u32>, f64)], keep: usize) -> Vec<(Vec<u32>, f64)> {
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by(|&a, &b| nodes[b].1.total_cmp(&nodes[a].1));
    order.truncate(keep);
    order.sort_unstable();
    order.iter().map(|&i| nodes[i].clone()).collect()
}

/// The draft's tree after `seq`, level by level: `tree[j]` holds the nodes of level
/// j + 1, each as its path (the j + 1 tokens from the root down to it). Level j keeps
/// the draft's top-`branching[j]` next tokens after every node of level j − 1.
fn draft_tree(
    draft: &TransformerLM<'_>,
    seq: &[u32],
    branching: &[u32],
) -> Result<Vec<Vec<Vec<u32>>>, Error> {
    let mut tree: Vec<Vec<Vec<u32>>> = Vec::new();
    let mut parents: Vec<Vec<u32>> = vec![Vec::new()]; // the root: the empty path
    for &k in branching {
        let mut level = Vec::new();
        for path in &parents {
            let logits = next_logits(draft, &[seq, path].concat())?; // [vocab]
            for token in top_k(&logits, k) {
                let mut child = path.clone();
                child.push(token);
                level.push(child);
            }
        }
        tree.push(level.clone());
        parents = level;
    }
    Ok(tree)
}

/// Greedy verification of `tree` after `seq`: from the root, accept the target's own
/// next token while the draft proposed it (it is a node of the tree). Returns the
/// accepted path and the target's token after it (the bonus token).
fn greedy_verify(
    target: &TransformerLM<'_>,
    seq: &[u32],
    tree: &[Vec<Vec<u32>>],
) -> Result<(Vec<u32>, u32), Error> {
    let mut path: Vec<u32> = Vec::new();
    loop {
        let logits = next_logits(target, &[seq, &path].concat())?; // [vocab]
        let want = argmax(logits.view())? as u32; // the target's own next token
        path.push(want);
        let proposed = tree
            .get(path.len() - 1)
            .is_some_and(|level| level.contains(&path));
        if !proposed {
            path.pop();
            return Ok((path, want));
        }
    }
}

/// One round of speculative sampling on a tree of `branching` after `seq`. Returns the
/// accepted drafts and the round's last token (drawn after the last rejection, or after a
/// leaf).
fn sampled_round<R: Rng + ?Sized>(
    target: &TransformerLM<'_>,
    draft: &TransformerLM<'_>,
    seq: &[u32],
    branching: &[u32],
    t: f64,
    rng: &mut R,
) -> Result<(Vec<u32>, u32), Error> {
    // Draft: every node of a level gets k children drawn from q after it. Each node is
    // its path from the root; q of a node is kept under that path.
    let mut q_at: Vec<(Vec<u32>, Vec<f64>)> = Vec::new();
    let mut children: Vec<(Vec<u32>, Vec<u32>)> = Vec::new(); // (parent path, child tokens)
    let mut parents: Vec<Vec<u32>> = vec![Vec::new()];
    for &k in branching {
        let mut level = Vec::new();
        for path in &parents {
            let q = softmax(&next_logits(draft, &[seq, path].concat())?, t)?;
            let mut drawn = Vec::new();
            for _ in 0..k {
                let token = draw_weighted(&q, rng)? as u32;
                drawn.push(token);
                level.push([path.as_slice(), &[token]].concat());
            }
            children.push((path.clone(), drawn));
            q_at.push((path.clone(), q));
        }
        parents = level;
    }
    // Verify: walk from the root, trying each node's children in order.
    let mut path: Vec<u32> = Vec::new();
    loop {
        let mut p = softmax(&next_logits(target, &[seq, &path].concat())?, t)?;
        let kids = children
            .iter()
            .find(|(c, _)| *c == path)
            .map(|(_, k)| k.clone());
        let Some(kids) = kids.filter(|k| !k.is_empty()) else {
            // A leaf: the round's last token is the target's own.
            return Ok((path, draw_weighted(&p, rng)? as u32));
        };
        let q = &q_at
            .iter()
            .find(|(c, _)| *c == path)
            .expect("q of an expanded node")
            .1;
        let mut weights = p.clone();
        let mut accepted = None;
        for &x in &kids {
            if rng.random::<f64>() < (p[x as usize] / q[x as usize]).min(1.0) {
                accepted = Some(x);
                break;
            }
            // Rejected: p ← normalise(max(0, p − q)) for the next child (p = q exactly
            // leaves nothing there, and p itself stays the answer).
            let residual: Vec<f64> = p.iter().zip(q).map(|(a, b)| (a - b).max(0.0)).collect();
            let total: f64 = residual.iter().sum();
            if total > 0.0 {
                p = residual.iter().map(|r| r / total).collect();
                weights = residual;
            } else {
                weights = p.clone();
            }
        }
        match accepted {
            Some(x) => path.push(x),
            None => return Ok((path, draw_weighted(&weights, rng)? as u32)),
        }
    }
}

/// The model's next-token logits after `tokens`: the last row of a teacher-forced pass
/// over the whole sequence, `[vocab]`.
fn next_logits(model: &TransformerLM<'_>, tokens: &[u32]) -> Result<Array1<f32>, Error> {
    let batch = Array2::from_shape_vec((1, tokens.len()), tokens.to_vec())
        .expect("one row of tokens.len()");
    let logits = model.full_logits(batch.view())?; // [1, T, vocab]
    Ok(logits
        .slice(ndarray::s![0, tokens.len() - 1, ..])
        .to_owned())
}

/// The `k` tokens with the largest logits, best first, ties to the lowest id.
fn top_k(logits: &Array1<f32>, k: u32) -> Vec<u32> {
    let mut ids: Vec<u32> = (0..logits.len() as u32).collect();
    // A stable sort keeps equal logits in id order.
    ids.sort_by(|&a, &b| logits[b as usize].total_cmp(&logits[a as usize]));
    ids.truncate(k as usize);
    ids
}

/// `softmax(logits / t)` in f64, normalised to sum to 1.
fn softmax(logits: &Array1<f32>, t: f64) -> Result<Vec<f64>, Error> {
    Ok(softmax_probs(logits.view(), t)?)
}
