//! EAGLE's head through the one decoding loop: greedy output is the target's, a greedy
//! chain accepts in every round what a plain reference (no cache: the reference forward's
//! hidden states, the head run from scratch over the whole pair sequence each step) says,
//! sampled output is drawn from the target, a head that does not fit is an error.

mod common;
use common::heads::{EagleWeights, attending_eagle_weights, eagle_head, eagle_weights, top};
use common::{TINY, sampled_pairs_match_the_target, sharpened};
use std::cell::RefCell;

use decode_lab::speculative::{EagleDraft, EagleDynamic, EagleHead, EagleState, Lane, Proposer};
use decode_lab::{Error, Sampling, TreeShape, speculative_generate, speculative_generate_batch};
use ndarray::{Array1, Array2, ArrayView2, s};
use quant_lab::{QCFG, sample_tokens};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use transformer_lab::{
    Config, Params, TransformerLM, autoregressive_generate, config_like, init_params,
};

/// The rounds of a greedy static tree of `levels`, from the target's greedy output alone:
/// at a round whose root sits at R, the head reads the pairs (f_j, x_{j+1}) for j < R (the
/// target's true features), then along the output's own path each token y as the pair (its
/// parent's f̂, y) — the only nodes that can be accepted, each seeing only its ancestors;
/// the round accepts while the output's next token is among the level's top-k there.
fn reference_accepted(
    target: &Params,
    cfg: &Config,
    w: &EagleWeights,
    levels: &[u32],
    prompt: &[u32],
    output: &[u32],
) -> Vec<u32> {
    let all: Vec<u32> = prompt.iter().chain(output).copied().collect();
    let (mut produced, mut rounds) = (0, Vec::new());
    while produced < output.len() {
        let root = prompt.len() + produced - 1;
        let depth = levels.len().min(output.len() - produced - 1);
        let mut a = 0;
        if root > 0 {
            let mut inputs = w.committed_pairs(target, cfg, &all, root);
            while a < depth {
                let last = w.last_feature(cfg, &inputs);
                let want = all[root + 1 + a];
                let logits = last.dot(&w.params.lm_head);
                if !top(logits.view(), levels[a] as usize).contains(&want) {
                    break;
                }
                inputs.push(w.fuse(last.view(), want));
                a += 1;
            }
        }
        rounds.push(a as u32);
        produced += a + 1;
    }
    rounds
}

#[test]
fn greedy_eagle_is_the_targets_output_and_a_chain_accepts_what_the_reference_says() {
    let params = sharpened(&TINY, 3, 8.0);
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let prompts: Vec<Vec<u32>> = (1..=12)
        .map(|i| (0..1 + i % 3).map(|_| rng.random_range(0..8)).collect())
        .collect();
    let w = eagle_weights(&TINY, &params, 2, 1.0);
    let h = eagle_head(&TINY, &w);
    let target = TransformerLM::new(&params, TINY, "t").unwrap();
    let n_new = 12;
    let (mut accepted, mut deepest) = (0, 0);
    for levels in [&[1u32, 1, 1][..], &[4, 4, 2][..], &[3, 2][..]] {
        let shape = TreeShape::new(levels).unwrap();
        let eagle = EagleDraft {
            head: &h,
            shape: &shape,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let out = speculative_generate_batch(
            &target,
            &eagle,
            &prompts,
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
            let reference = reference_accepted(&params, &TINY, &w, levels, prompt, tokens);
            assert_eq!(stats.accepted, reference, "{levels:?}, {prompt:?}");
            accepted += stats.accepted.iter().sum::<u32>();
            deepest = deepest.max(stats.accepted.iter().copied().max().unwrap_or(0));
        }
    }
    assert!(
        accepted > 50 && deepest >= 2,
        "the head must accept for the test to mean anything: {accepted} tokens, at most \
         {deepest} a round"
    );
    // Lecture 6's toy model in one batch with prompts of 8, 3 and 1 tokens: lossless.
    let params = init_params(&QCFG, 0).unwrap();
    let sampled = sample_tokens(&params, &QCFG, 4, 8, 3).unwrap();
    let mut prompts: Vec<Vec<u32>> = sampled.outer_iter().map(|r| r.to_vec()).collect();
    prompts.push(prompts[0][..3].to_vec());
    prompts.push(vec![7]);
    let w = eagle_weights(&QCFG, &params, 4, 1.0);
    let h = eagle_head(&QCFG, &w);
    let target = TransformerLM::new(&params, QCFG, "t").unwrap();
    let shape = TreeShape::new(&[4, 2, 2, 1]).unwrap();
    let eagle = EagleDraft {
        head: &h,
        shape: &shape,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let out = speculative_generate_batch(&target, &eagle, &prompts, 30, Sampling::Greedy, &mut rng)
        .unwrap();
    for (prompt, (tokens, stats)) in prompts.iter().zip(&out) {
        let p = Array2::from_shape_vec((1, prompt.len()), prompt.clone()).unwrap();
        let want = autoregressive_generate(&target, p.view(), 30, 0.0, &mut rng).unwrap();
        assert_eq!(tokens[..], want.row(0).to_vec()[..], "{prompt:?}");
        assert_eq!(stats.generated, 30);
    }
}

#[test]
fn sampled_eagle_draws_exactly_from_the_target() {
    let p = sharpened(&TINY, 5, 30.0);
    let target = TransformerLM::new(&p, TINY, "t").unwrap();
    let w = eagle_weights(&TINY, &p, 9, 1.0);
    let h = eagle_head(&TINY, &w);
    for levels in [&[1u32, 1][..], &[3, 2][..]] {
        let shape = TreeShape::new(levels).unwrap();
        let eagle = EagleDraft {
            head: &h,
            shape: &shape,
        };
        let label = format!("{levels:?}");
        let rate = sampled_pairs_match_the_target(&target, &eagle, 2026, &label);
        assert!(rate > 0.05 && rate < 0.95, "{levels:?}: acceptance {rate}");
    }
}

#[test]
fn a_head_that_does_not_fit_is_an_error_not_a_panic() {
    let p = init_params(&TINY, 1).unwrap();
    let w = eagle_weights(&TINY, &p, 1, 1.0);
    let two = TransformerLM::new(&p, TINY, "two blocks").unwrap();
    let e = EagleHead::new(w.fc.clone(), w.bias.clone(), two)
        .err()
        .unwrap();
    assert!(e.to_string().contains("one block"), "{e}");
    let layer = TransformerLM::new(&w.params, config_like(&TINY, 1), "eagle").unwrap();
    let e = EagleHead::new(w.fc.slice(s![..16, ..]).to_owned(), w.bias.clone(), layer).err();
    assert!(e.unwrap().to_string().contains("fusion layer"));
    let h = eagle_head(&TINY, &w);
    let wide = init_params(&QCFG, 0).unwrap();
    let other = TransformerLM::new(&wide, QCFG, "other").unwrap();
    let chain = TreeShape::chain(2).unwrap();
    let eagle = EagleDraft {
        head: &h,
        shape: &chain,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let e = speculative_generate(&other, &eagle, &[1, 2], 4, Sampling::Greedy, &mut rng);
    assert!(e.unwrap_err().to_string().contains("cannot read a target"));
    // A head whose embedding or LM head is not the target's own.
    let other_params = init_params(&TINY, 2).unwrap();
    let other = TransformerLM::new(&other_params, TINY, "another").unwrap();
    let e = speculative_generate(&other, &eagle, &[1, 2], 4, Sampling::Greedy, &mut rng);
    assert!(e.unwrap_err().to_string().contains("own embedding"));
}

#[test]
fn dynamic_trees_on_the_head_are_lossless_within_their_budget_and_greedy_only() {
    // EAGLE-2's trees grown from the head: every output the target's own; a budget as
    // large as everything drafted keeps every node, so it accepts at least what the
    // smallest budget does; sampling is refused.
    let params = sharpened(&TINY, 3, 8.0);
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let prompts: Vec<Vec<u32>> = (1..=12)
        .map(|i| (0..1 + i % 3).map(|_| rng.random_range(0..8)).collect())
        .collect();
    let w = eagle_weights(&TINY, &params, 2, 1.0);
    let h = eagle_head(&TINY, &w);
    let target = TransformerLM::new(&params, TINY, "t").unwrap();
    let mut taus = Vec::new();
    for budget in [1, 4, 12] {
        let dynamic = EagleDynamic {
            head: &h,
            depth: 3,
            width: 4,
            budget,
        };
        assert_eq!(dynamic.label(), format!("3×4≤{budget}"));
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let out =
            speculative_generate_batch(&target, &dynamic, &prompts, 12, Sampling::Greedy, &mut rng)
                .unwrap();
        let (mut rounds, mut generated) = (0, 0);
        for (prompt, (tokens, stats)) in prompts.iter().zip(&out) {
            let p = Array2::from_shape_vec((1, prompt.len()), prompt.clone()).unwrap();
            let want = autoregressive_generate(&target, p.view(), 12, 0.0, &mut rng).unwrap();
            assert_eq!(
                tokens[..],
                want.row(0).to_vec()[..],
                "budget {budget}, {prompt:?}"
            );
            // A budget of one node verifies one draft token a round at most.
            if budget == 1 {
                assert!(stats.accepted.iter().all(|&a| a <= 1), "{stats:?}");
            }
            rounds += stats.rounds;
            generated += stats.generated;
        }
        taus.push(generated as f64 / rounds as f64);
    }
    assert!(taus[2] >= taus[0] && taus[2] > 1.2, "{taus:?}");
    let dynamic = EagleDynamic {
        head: &h,
        depth: 3,
        width: 4,
        budget: 4,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let hot = speculative_generate(
        &target,
        &dynamic,
        &[1, 2],
        4,
        Sampling::Temperature(1.0),
        &mut rng,
    );
    assert!(hot.unwrap_err().to_string().contains("greedily"));
    let zero = EagleDynamic {
        budget: 0,
        ..dynamic
    };
    assert!(speculative_generate(&target, &zero, &[1, 2], 4, Sampling::Greedy, &mut rng).is_err());
}

/// Every round's tree as the target saw it: the committed tokens (the root last) and each
/// node's token and parent.
type Rounds = RefCell<Vec<(Vec<u32>, Vec<(u32, Option<usize>)>)>>;

/// [`EagleDraft`] recording every round's tree before it is verified.
struct Recorder<'d, 'p> {
    inner: EagleDraft<'d, 'p>,
    rounds: Rounds,
}

impl Proposer for Recorder<'_, '_> {
    type State = EagleState;

    fn max_nodes(&self) -> usize {
        self.inner.max_nodes()
    }

    fn depth(&self) -> usize {
        self.inner.depth()
    }

    fn check(&self, t: &TransformerLM<'_>, need: usize, temperature: f64) -> Result<(), Error> {
        self.inner.check(t, need, temperature)
    }

    fn start(&self, lanes: &mut [Lane], slots: &[usize]) -> Result<EagleState, Error> {
        self.inner.start(lanes, slots)
    }

    fn reads_hidden(&self) -> bool {
        true
    }

    fn read_hidden(&self, s: &mut EagleState, i: usize, h: ArrayView2<f32>) -> Result<(), Error> {
        self.inner.read_hidden(s, i, h)
    }

    fn propose<R: Rng + ?Sized>(
        &self,
        s: &mut EagleState,
        lanes: &mut [Lane],
        active: &[usize],
        temperature: f64,
        rng: &mut R,
    ) -> Result<(), Error> {
        self.inner.propose(s, lanes, active, temperature, rng)
    }

    fn accepted(
        &self,
        s: &mut EagleState,
        i: usize,
        lane: &Lane,
        path: &[usize],
    ) -> Result<(), Error> {
        let nodes = lane.nodes().iter().map(|n| (n.token, n.parent)).collect();
        self.rounds
            .borrow_mut()
            .push((lane.committed().to_vec(), nodes));
        self.inner.accepted(s, i, lane, path)
    }
}

#[test]
fn every_drafted_node_has_the_children_a_cache_free_reference_gives_it() {
    // Every node of every round's tree, not only the accepted path: its children are the
    // top-k of the head run from scratch over the committed pairs (the target's true
    // features) and the node's own ancestors — so a wrong tree mask, RoPE position or
    // feature shows up wherever it changes a child.
    let params = sharpened(&TINY, 3, 8.0);
    let w = attending_eagle_weights(&TINY, &params, 2);
    let h = eagle_head(&TINY, &w);
    let target = TransformerLM::new(&params, TINY, "t").unwrap();
    let levels = [3u32, 2, 2];
    let shape = TreeShape::new(&levels).unwrap();
    let recorder = Recorder {
        inner: EagleDraft {
            head: &h,
            shape: &shape,
        },
        rounds: RefCell::new(Vec::new()),
    };
    let prompts: Vec<Vec<u32>> = vec![vec![1, 5, 2], vec![6], vec![3, 3, 0, 7, 1]];
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    speculative_generate_batch(&target, &recorder, &prompts, 8, Sampling::Greedy, &mut rng)
        .unwrap();
    let mut checked = 0;
    for (committed, nodes) in recorder.rounds.borrow().iter() {
        let r = committed.len() - 1;
        if r == 0 {
            assert_eq!(
                nodes.len(),
                1,
                "nothing to read before a one-token prompt's first round"
            );
            continue;
        }
        let base = w.committed_pairs(&params, &TINY, committed, r);
        for n in 0..nodes.len() {
            let children: Vec<u32> = nodes
                .iter()
                .filter(|c| c.1 == Some(n))
                .map(|c| c.0)
                .collect();
            if children.is_empty() {
                continue;
            }
            // The node's ancestors from the root down to it, then their pairs in turn.
            let mut path = vec![n];
            while let Some(p) = nodes[*path.last().unwrap()].1 {
                path.push(p);
            }
            path.reverse();
            let mut inputs = base.clone();
            let mut last = Array1::zeros(TINY.d_model);
            for k in 0..path.len() {
                last = w.last_feature(&TINY, &inputs);
                if let Some(&next) = path.get(k + 1) {
                    inputs.push(w.fuse(last.view(), nodes[next].0));
                }
            }
            let want = top(
                last.dot(&w.params.lm_head).view(),
                levels[path.len() - 1] as usize,
            );
            assert_eq!(children, want, "node {n} of a round after {committed:?}");
            checked += 1;
        }
    }
    assert!(checked > 30, "{checked} nodes checked");
}
