//! Medusa's heads through the one decoding loop: greedy output is the target's, each
//! round accepts what a plain reference (no cache, the reference forward's hidden states)
//! says it should, sampled output is drawn from the target, bad heads are errors.

mod common;
use common::heads::{hidden_states, medusa_heads, top};
use common::{TINY, sampled_pairs_match_the_target, sharpened};
use decode_lab::speculative::{MedusaDraft, MedusaHead, MedusaHeads};
use decode_lab::{Sampling, TreeShape, speculative_generate, speculative_generate_batch};
use ndarray::{Array1, Array2};
use quant_lab::{QCFG, sample_tokens};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use transformer_lab::{Config, Params, TransformerLM, autoregressive_generate, init_params};

/// What each greedy round accepts, from the target's greedy output alone: a round whose
/// root is followed (in the output) by g₁ g₂ …, with the hidden state its root came from,
/// accepts the longest run g₁ … g_m with each g_l among head l's top-n_l (every node of a
/// level has the same children); a one-token prompt's first round drafts nothing.
fn reference_accepted(
    p: &Params,
    cfg: &Config,
    heads: &MedusaHeads,
    levels: &[u32],
    prompt: &[u32],
    output: &[u32],
) -> Vec<u32> {
    let all: Vec<u32> = prompt.iter().chain(output).copied().collect();
    let hidden = hidden_states(p, cfg, &all);
    let (mut produced, mut rounds) = (0, Vec::new());
    while produced < output.len() {
        let root = prompt.len() + produced - 1; // the root's index in `all`
        let depth = levels.len().min(output.len() - produced - 1);
        let mut a = 0;
        if root > 0 {
            while a < depth {
                let logits = heads.logits(a + 1, hidden.row(root - 1)).unwrap();
                match top(logits.view(), levels[a] as usize).contains(&all[root + 1 + a]) {
                    true => a += 1,
                    false => break,
                }
            }
        }
        rounds.push(a as u32);
        produced += a + 1;
    }
    rounds
}

/// Greedy runs of `heads` on `target` (`params`, `cfg`) over `prompts` with each tree of
/// `shapes`: every output is the target's own greedy output, every round accepts what
/// [`reference_accepted`] says; returns the draft tokens accepted and the most in a round.
fn check_greedy(
    params: &Params,
    cfg: &Config,
    heads: &MedusaHeads,
    shapes: &[&[u32]],
    prompts: &[Vec<u32>],
    n_new: usize,
) -> (u32, u32) {
    let target = TransformerLM::new(params, *cfg, "t").unwrap();
    let (mut accepted, mut deepest) = (0, 0);
    for &levels in shapes {
        let shape = TreeShape::new(levels).unwrap();
        let medusa = MedusaDraft {
            heads,
            shape: &shape,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let out = speculative_generate_batch(
            &target,
            &medusa,
            prompts,
            n_new,
            Sampling::Greedy,
            &mut rng,
        )
        .unwrap();
        for (prompt, (tokens, stats)) in prompts.iter().zip(&out) {
            let p = Array2::from_shape_vec((1, prompt.len()), prompt.clone()).unwrap();
            let want = autoregressive_generate(&target, p.view(), n_new, 0.0, &mut rng).unwrap();
            assert_eq!(
                tokens[..],
                want.row(0).to_vec()[..],
                "{levels:?}, {prompt:?}"
            );
            let reference = reference_accepted(params, cfg, heads, levels, prompt, tokens);
            assert_eq!(stats.accepted, reference, "{levels:?}, {prompt:?}");
            let no_state = usize::from(prompt.len() == 1);
            assert_eq!(stats.draft_forwards, stats.rounds - no_state);
            accepted += stats.accepted.iter().sum::<u32>();
            deepest = deepest.max(stats.accepted.iter().copied().max().unwrap_or(0));
        }
    }
    (accepted, deepest)
}

#[test]
fn greedy_medusa_is_the_targets_output_and_accepts_what_the_reference_says() {
    // Lecture 6's toy model, prompts of 8, 3 and 1 tokens (the last: its first round has
    // no hidden state yet) in one batch; random heads accept little there.
    let params = init_params(&QCFG, 0).unwrap();
    let sampled = sample_tokens(&params, &QCFG, 6, 8, 3).unwrap();
    let mut prompts: Vec<Vec<u32>> = sampled.outer_iter().map(|r| r.to_vec()).collect();
    prompts.push(prompts[0][..3].to_vec());
    prompts.push(vec![7]);
    let h = medusa_heads(&QCFG, &params, 4, 1, 0.5);
    check_greedy(
        &params,
        &QCFG,
        &h,
        &[&[1, 1, 1], &[4, 2, 2, 1]],
        &prompts,
        30,
    );
    // Eight tokens, where a level's top 4 often holds the target's token: rounds accept
    // several levels, through chains and trees.
    let params = sharpened(&TINY, 3, 8.0);
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let prompts: Vec<Vec<u32>> = (1..=12)
        .map(|i| (0..1 + i % 3).map(|_| rng.random_range(0..8)).collect())
        .collect();
    let h = medusa_heads(&TINY, &params, 3, 2, 0.5);
    let shapes: [&[u32]; 3] = [&[1, 1, 1], &[4, 4, 2], &[3, 2]];
    let (accepted, deepest) = check_greedy(&params, &TINY, &h, &shapes, &prompts, 12);
    assert!(
        accepted > 100 && deepest >= 2,
        "the heads must accept for the test to mean anything: {accepted} tokens, at most \
         {deepest} a round"
    );
}

#[test]
fn sampled_medusa_draws_exactly_from_the_target() {
    // Three tokens after [3, 6] on an 8-token model (so the first round drafts both
    // levels): the first token and the pairs counted against the target's own
    // distributions, with a chain of 2 and a tree of [3, 2].
    let p = sharpened(&TINY, 5, 60.0);
    let target = TransformerLM::new(&p, TINY, "t").unwrap();
    let h = medusa_heads(&TINY, &p, 2, 9, 2.0);
    for levels in [&[1u32, 1][..], &[3, 2][..]] {
        let shape = TreeShape::new(levels).unwrap();
        let medusa = MedusaDraft {
            heads: &h,
            shape: &shape,
        };
        let label = format!("{levels:?}");
        let rate = sampled_pairs_match_the_target(&target, &medusa, 2025, &label);
        assert!(rate > 0.05 && rate < 0.95, "{levels:?}: acceptance {rate}");
    }
}

#[test]
fn heads_that_do_not_fit_are_errors_not_panics() {
    let p = init_params(&TINY, 1).unwrap();
    let target = TransformerLM::new(&p, TINY, "t").unwrap();
    let h = medusa_heads(&TINY, &p, 2, 1, 1.0);
    assert_eq!((h.len(), h.d_model(), h.vocab()), (2, 16, 8));
    assert_eq!(h.n_params(), 2 * (16 * 16 + 16 + 16 * 8));
    let deep = TreeShape::chain(3).unwrap();
    let medusa = MedusaDraft {
        heads: &h,
        shape: &deep,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let e = speculative_generate(&target, &medusa, &[1, 2], 4, Sampling::Greedy, &mut rng);
    assert!(e.unwrap_err().to_string().contains("3 levels deep"));
    let wide = init_params(&QCFG, 0).unwrap();
    let other = TransformerLM::new(&wide, QCFG, "other").unwrap();
    let chain = TreeShape::chain(2).unwrap();
    let medusa = MedusaDraft {
        heads: &h,
        shape: &chain,
    };
    let e = speculative_generate(&other, &medusa, &[1, 2], 4, Sampling::Greedy, &mut rng);
    assert!(e.unwrap_err().to_string().contains("cannot read a target"));
    assert!(MedusaHeads::new(Vec::new()).is_err());
    let bad = medusa_heads(&TINY, &p, 1, 1, 1.0);
    let mut one = bad
        .logits(1, Array1::zeros(16).view())
        .map(|_| ())
        .and(Ok(()));
    assert!(one.is_ok());
    one = bad.logits(2, Array1::zeros(16).view()).map(|_| ());
    assert!(one.unwrap_err().to_string().contains("no Medusa head 2"));
    assert!(bad.logits(1, Array1::zeros(15).view()).is_err());
    let mut head = MedusaHead {
        w: Array2::zeros((16, 16)),
        bias: Array1::zeros(16),
        lm_head: Array2::zeros((16, 8)),
    };
    head.bias[3] = f32::NAN;
    assert!(
        MedusaHeads::new(vec![head.clone()])
            .unwrap_err()
            .to_string()
            .contains("finite")
    );
    head.bias = Array1::zeros(15);
    assert!(
        MedusaHeads::new(vec![head])
            .unwrap_err()
            .to_string()
            .contains("head 1")
    );
}
