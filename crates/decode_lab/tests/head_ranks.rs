//! Where a draft head ranks a known continuation, round by round
//! (`MedusaHeads::round_ranks`, `EagleHead::round_ranks`): each rank equals a cache-free
//! reference's (the reference forward's hidden states, EAGLE's head run from scratch along
//! the path), and at the roots where real greedy decoding started its rounds, the rounds'
//! ranks accept exactly what the decoder accepted.

mod common;
use common::heads::{
    attending_eagle_weights, eagle_head, eagle_weights, hidden, hidden_states, medusa_heads, top,
};
use common::{TINY, sharpened};

use decode_lab::speculative::{EagleDraft, MedusaDraft, Proposer};
use decode_lab::{Sampling, SpecStats, TreeShape, round_accept_lengths, speculative_generate};
use ndarray::{Array2, ArrayView1};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use transformer_lab::{Params, TransformerLM, autoregressive_generate, reference};

/// Prompts of 1 to 5 tokens.
const PROMPTS: [&[u32]; 3] = [&[1, 5, 2], &[6], &[3, 3, 0, 7, 1]];
/// Tokens the target generates after each.
const N_NEW: usize = 10;

/// The rank of `token` among `logits` from their sorted order (no ties in these tests).
fn sorted_rank(logits: ArrayView1<f32>, token: u32) -> u32 {
    let order = top(logits, logits.len());
    order.iter().position(|&t| t == token).unwrap() as u32
}

/// Each prompt followed by the target's greedy output.
fn sequences(target: &TransformerLM<'_>) -> Vec<Vec<u32>> {
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let mut one = |p: &[u32]| {
        let prompt = Array2::from_shape_vec((1, p.len()), p.to_vec()).unwrap();
        let out = autoregressive_generate(target, prompt.view(), N_NEW, 0.0, &mut rng).unwrap();
        [p, out.row(0).as_slice().unwrap()].concat()
    };
    PROMPTS.iter().map(|p| one(p)).collect()
}

/// The roots of `stats`' rounds after a prompt of `prompt` tokens, and how deep the
/// decoder drafted at each in a sequence of `n` tokens (never the last token, which the
/// target adds itself).
fn decoded_rounds(
    stats: &SpecStats,
    prompt: usize,
    n: usize,
    levels: usize,
) -> Vec<(usize, usize)> {
    let mut root = prompt - 1;
    let mut rounds = Vec::new();
    for &a in &stats.accepted {
        rounds.push((root, levels.min(n - root - 2)));
        root += a as usize + 1;
    }
    rounds
}

/// Decodes `seq`'s prompt greedily with `proposer` and checks that at every round's root
/// the head's ranks there, cut to the decoder's depth, accept what the round accepted.
fn decoding_accepts_what_the_ranks_say<P: Proposer>(
    target: &TransformerLM<'_>,
    proposer: &P,
    (seq, prompt): (&[u32], usize),
    (shape, levels): (&TreeShape, usize),
    ranks: &dyn Fn(usize) -> Vec<u32>,
) -> Vec<u32> {
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let (out, stats) = speculative_generate(
        target,
        proposer,
        &seq[..prompt],
        N_NEW,
        Sampling::Greedy,
        &mut rng,
    )
    .unwrap();
    assert_eq!(out[..], seq[prompt..]);
    let rounds = decoded_rounds(&stats, prompt, seq.len(), levels);
    let rows: Vec<Vec<u32>> = rounds
        .iter()
        .map(|&(root, depth)| {
            // A root at 0 (a prompt of one token) has no state before it: nothing drafted.
            let row = match root {
                0 => Vec::new(),
                _ => ranks(root),
            };
            row[..depth.min(row.len())].to_vec()
        })
        .collect();
    let estimate = round_accept_lengths(&rows, shape).unwrap();
    // A round the decoder could not draft (its prompt of one token, or the last token
    // left) accepts nothing either way.
    assert_eq!(estimate.accepted, stats.accepted, "{seq:?}");
    stats.accepted
}

/// Checks that the rounds accepted enough, and some of them two levels or more, for the
/// test to mean anything (deeper levels read what the head drafted).
fn accepted_enough(accepted: &[u32]) {
    let total: u32 = accepted.iter().sum();
    let deep = accepted.iter().filter(|&&a| a >= 2).count();
    assert!(
        total >= 10 && deep >= 3,
        "the head must accept for the test to mean anything: {total} tokens, {deep} rounds of 2 or more"
    );
}

#[test]
fn medusa_ranks_are_the_heads_own_and_accept_what_decoding_accepts() {
    let params = sharpened(&TINY, 3, 8.0);
    let heads = medusa_heads(&TINY, &params, 3, 2, 0.5);
    let target = TransformerLM::new(&params, TINY, "t").unwrap();
    let mut accepted = Vec::new();
    for (seq, prompt) in sequences(&target).iter().zip(PROMPTS) {
        let h = hidden_states(&params, &TINY, seq);
        let n = seq.len();
        let rows = heads.round_ranks(h.view(), seq, 1..n).unwrap();
        assert_eq!(rows.len(), n - 1);
        for (row, root) in rows.iter().zip(1..) {
            // Head k reads the state the root was predicted from and ranks the token k
            // places after the next one.
            let want: Vec<u32> = (1..=heads.len())
                .take_while(|k| root + k < n)
                .map(|k| {
                    let logits = heads.logits(k, h.row(root - 1)).unwrap();
                    sorted_rank(logits.view(), seq[root + k])
                })
                .collect();
            assert_eq!(*row, want, "root {root} of {seq:?}");
        }
        for levels in [&[1, 1, 1][..], &[3, 2, 1], &[2, 2]] {
            let shape = TreeShape::new(levels).unwrap();
            let medusa = MedusaDraft {
                heads: &heads,
                shape: &shape,
            };
            let ranks = |root: usize| rows[root - 1].clone();
            let case = (seq.as_slice(), prompt.len());
            accepted.extend(decoding_accepts_what_the_ranks_say(
                &target,
                &medusa,
                case,
                (&shape, levels.len()),
                &ranks,
            ));
        }
    }
    accepted_enough(&accepted);
}

/// EAGLE's ranks along `seq` from a cache-free reference: for the round from each root R,
/// the head reads the true pairs j < R, then the path's tokens each with its parent's f̂,
/// run from scratch at every level.
fn eagle_reference(
    target: &Params,
    w: &common::heads::EagleWeights,
    seq: &[u32],
    levels: usize,
) -> Vec<Vec<u32>> {
    (1..seq.len())
        .map(|root| {
            let mut inputs = w.committed_pairs(target, &TINY, seq, root);
            let mut row = Vec::new();
            for k in 1..=levels {
                if root + k >= seq.len() {
                    break;
                }
                let last = w.last_feature(&TINY, &inputs);
                let logits = last.dot(&w.params.lm_head);
                row.push(sorted_rank(logits.view(), seq[root + k]));
                inputs.push(w.fuse(last.view(), seq[root + k]));
            }
            row
        })
        .collect()
}

#[test]
fn eagle_ranks_follow_the_drafted_features_and_accept_what_decoding_accepts() {
    let params = sharpened(&TINY, 3, 8.0);
    let w = attending_eagle_weights(&TINY, &params, 2);
    let head = eagle_head(&TINY, &w);
    let target = TransformerLM::new(&params, TINY, "t").unwrap();
    let levels = 4;
    let mut accepted = Vec::new();
    for (seq, prompt) in sequences(&target).iter().zip(PROMPTS) {
        let f = hidden(
            &params,
            &TINY,
            reference::embed(&params.embed, seq).unwrap(),
        );
        let n = seq.len();
        let rows = head.round_ranks(f.view(), seq, 1..n, levels).unwrap();
        assert_eq!(rows, eagle_reference(&params, &w, seq, levels), "{seq:?}");
        // Roots from the middle on: row i is the round from root 4 + i.
        let tail = head.round_ranks(f.view(), seq, 4..n, levels).unwrap();
        assert_eq!(tail[..], rows[3..]);
        for levels in [&[1, 1, 1, 1][..], &[3, 2, 2], &[2, 1]] {
            let shape = TreeShape::new(levels).unwrap();
            let eagle = EagleDraft {
                head: &head,
                shape: &shape,
            };
            let ranks = |root: usize| rows[root - 1].clone();
            let case = (seq.as_slice(), prompt.len());
            accepted.extend(decoding_accepts_what_the_ranks_say(
                &target,
                &eagle,
                case,
                (&shape, levels.len()),
                &ranks,
            ));
        }
    }
    accepted_enough(&accepted);
}

#[test]
fn bad_sequences_and_roots_are_errors_not_panics() {
    let params = sharpened(&TINY, 3, 8.0);
    let heads = medusa_heads(&TINY, &params, 2, 2, 0.5);
    let w = eagle_weights(&TINY, &params, 2, 1.0);
    let head = eagle_head(&TINY, &w);
    let seq = [1u32, 5, 2, 6];
    let h = hidden_states(&params, &TINY, &seq);
    let medusa = |h: &Array2<f32>, seq: &[u32], roots| heads.round_ranks(h.view(), seq, roots);
    let eagle = |h: &Array2<f32>, seq: &[u32], roots| head.round_ranks(h.view(), seq, roots, 3);
    // Root 0 has no state before it; a root past the sequence; hidden states of another
    // count; a token outside the vocabulary; a state that is not finite.
    let mut nan = h.clone();
    nan[[1, 2]] = f32::NAN;
    let cases: [(&Array2<f32>, &[u32], std::ops::Range<usize>); 5] = [
        (&h, &seq, 0..3),
        (&h, &seq, 1..5),
        (&h, &seq[..3], 1..3),
        (&h, &[1, 5, 99, 6], 1..4),
        (&nan, &seq, 1..4),
    ];
    for (h, s, roots) in cases {
        assert!(medusa(h, s, roots.clone()).is_err(), "{roots:?} {s:?}");
        assert!(eagle(h, s, roots.clone()).is_err(), "{roots:?} {s:?}");
    }
    // No roots, or no level: nothing to rank.
    assert_eq!(medusa(&h, &seq, 2..2).unwrap(), Vec::<Vec<u32>>::new());
    assert_eq!(
        head.round_ranks(h.view(), &seq, 1..4, 0).unwrap(),
        vec![Vec::<u32>::new(); 3]
    );
}
