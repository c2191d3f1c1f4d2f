//! Every public function of `decode_lab`'s roofline side on scenarios holding anything
//! (cards, models and deployments from the `arbitrary` strategies, α and overheads that
//! are NaN, ±∞, 0, negative or huge, any γ, tree and τ), and its
//! acceptance side on logits holding NaN and ±∞: no panic, and every `Ok` finite.

use decode_lab::arbitrary::scenario;
use decode_lab::{
    Seed, TreeShape, best_round, cost_coefficient, draft_ranks, draft_step_time, expected_tokens,
    glance, plan_of, round, round_plan, round_speedup, round_time, target_pass_time,
    tree_accept_lengths, tree_round_time, tree_speedup, verify_time,
};
use hw_specs::arbitrary::{accelerator, extreme_f64};
use llm_math::arbitrary::{extreme_u64, model_config};
use ndarray::{Array1, Array2};
use proptest::prelude::*;

fn finite(x: f64) -> bool {
    x.is_finite() && x >= 0.0
}

fn tree() -> impl Strategy<Value = Result<TreeShape, decode_lab::Error>> {
    prop_oneof![
        any::<u32>().prop_map(TreeShape::chain),
        (1u32..20).prop_map(TreeShape::chain),
        prop::collection::vec(prop_oneof![0u32..6, Just(u32::MAX)], 0..6)
            .prop_map(|l| TreeShape::new(&l)),
        (extreme_u64(), extreme_u64()).prop_map(|(d, n)| TreeShape::sized(d, n)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn passes_and_rounds_are_refused_or_finite(
        s in scenario(),
        n in prop_oneof![1u64..64, extreme_u64()],
        gamma in prop_oneof![1u32..16, any::<u32>()],
    ) {
        for x in [target_pass_time(&s, n), draft_step_time(&s), cost_coefficient(&s, &Seed)].into_iter().flatten() {
            prop_assert!(finite(x), "{x}");
        }
        if let Ok(p) = round_plan(&s, &Seed, gamma) {
            for x in [p.expected_tokens, p.speedup, p.verify_ratio, p.c, p.t_base, p.t_draft, p.t_verify, p.t_round] {
                prop_assert!(finite(x), "{p:?}");
            }
        }
        if let Ok(b) = best_round(&s, &Seed) {
            prop_assert!(finite(b.speedup()) && b.gamma() <= decode_lab::MAX_GAMMA);
        }
        for fixed in [None, Some(gamma)] {
            if let Ok(r) = round(&s, &Seed, fixed) {
                prop_assert!(finite(r.speedup));
            }
        }
        if let Ok(m) = s.memory() {
            let _ = (m.target_fits(), m.weights_fit(), m.max_batch_with_draft());
        }
        for fixed in [None, Some(gamma)] {
            if let Ok(g) = glance(&s, &Seed, fixed) {
                prop_assert!(finite(g.kv) && finite(g.draft_kv) && finite(g.used()), "{g:?}");
                if let Some(step) = g.step {
                    prop_assert!(g.fit == decode_lab::Fit::Fits);
                    for x in [step.t_base, step.tokens_per_s, step.tokens_per_s_round] {
                        prop_assert!(finite(x), "{step:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn trees_are_refused_or_finite(s in scenario(), tree in tree(), tau in extreme_f64()) {
        if let Ok(tree) = tree {
            prop_assert!(tree.nodes() >= tree.depth());
            let _ = tree.label();
            if let Ok((t, c)) = tree_round_time(&s, &Seed, &tree) {
                prop_assert!(finite(t) && finite(c));
            }
            if let Ok(x) = tree_speedup(&s, &Seed, &tree, tau) {
                prop_assert!(finite(x), "{x}");
            }
        }
    }

    #[test]
    fn the_seeds_functions_are_refused_or_finite(
        hw in accelerator(),
        cfg in model_config(),
        b in extreme_u64(),
        ctx in extreme_u64(),
        n in extreme_u64(),
        overhead in extreme_f64(),
        alpha in extreme_f64(),
        gamma in any::<u32>(),
    ) {
        if let Ok(t) = verify_time(&cfg, &hw, b, ctx, n, overhead) {
            prop_assert!(finite(t));
        }
        if let Ok(e) = expected_tokens(alpha, gamma) {
            prop_assert!(finite(e) && e >= 1.0);
        }
    }

    #[test]
    fn ranks_of_broken_logits_are_refused(
        values in prop::collection::vec(
            prop_oneof![Just(f32::NAN), Just(f32::INFINITY), Just(f32::NEG_INFINITY), -4.0f32..4.0],
            1..40,
        ),
        vocab in 1usize..8,
        tokens in prop::collection::vec(0u32..10, 1..6),
        shape in prop::collection::vec(0u32..4, 0..4),
    ) {
        let rows = values.len() / vocab;
        let logits = Array2::from_shape_vec((rows, vocab), values[..rows * vocab].to_vec()).unwrap();
        let tokens: Array1<u32> = tokens.iter().cycle().take(rows).copied().collect();
        if let Ok(ranks) = draft_ranks(logits.view(), tokens.view()) {
            prop_assert!(logits.iter().all(|l| !l.is_nan()));
            prop_assert!(ranks.iter().all(|&r| (r as usize) < vocab));
            if let Ok(shape) = TreeShape::new(&shape)
                && let Ok(a) = tree_accept_lengths(&ranks, &shape) {
                    prop_assert!(finite(a.tau()));
                }
        }
    }
}

/// The properties above say little if almost every drawn scenario were refused: over a
/// fixed sample of 1,000, a good share must price a round.
#[test]
fn a_good_share_of_drawn_scenarios_prices_a_round() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = scenario();
    let mut priced = 0;
    for _ in 0..1000 {
        let s = strategy
            .new_tree(&mut runner)
            .expect("a scenario")
            .current();
        priced += usize::from(round_plan(&s, &Seed, 4).is_ok());
    }
    assert!(
        priced >= 50,
        "only {priced} of 1000 drawn scenarios priced a round"
    );
}

/// Speculative decoding on tiny models with any prompt, length, tree and temperature:
/// refused, or the target's own greedy tokens, in the vocabulary, as the plain reference.
mod decoding {
    use decode_lab::speculative::reference;
    use decode_lab::{Sampling, TreeDraft, TreeShape, speculative_generate_batch};
    use proptest::prelude::*;
    use rand::SeedableRng;
    use transformer_lab::{Config, TransformerLM, greedy_generate, init_params};

    const TINY: Config = Config {
        vocab: 9,
        d_model: 8,
        n_layers: 2,
        n_heads: 2,
        d_ff: 12,
        max_seq: 12,
        norm_eps: 1e-5,
        rope_theta: 10_000.0,
    };

    /// Prompts, lengths, trees and temperatures: valid ones most of the time.
    #[allow(clippy::type_complexity)]
    fn inputs() -> impl Strategy<Value = (Vec<Vec<u32>>, usize, Vec<u32>, f64)> {
        let token = prop_oneof![9 => 0u32..9, 1 => Just(99)];
        let prompt = prop_oneof![9 => prop::collection::vec(token, 1..5), 1 => Just(vec![])];
        let prompts = prop_oneof![9 => prop::collection::vec(prompt, 1..3), 1 => Just(vec![])];
        let n_new = prop_oneof![9 => 1usize..6, 1 => Just(0usize), 1 => Just(usize::MAX)];
        let level = prop_oneof![9 => 1u32..3, 1 => Just(0u32)];
        let levels = prop_oneof![9 => prop::collection::vec(level, 1..3), 1 => Just(vec![])];
        let temperature = prop_oneof![
            6 => Just(0.0),
            2 => Just(0.7),
            1 => Just(f64::NAN),
            1 => Just(-1.0)
        ];
        (prompts, n_new, levels, temperature)
    }

    /// What `speculative_generate_batch` gives on `inputs`, checked: `Ok(true)` when it
    /// decoded, `Ok(false)` when it refused, `Err` naming a broken property.
    fn decode(
        (prompts, n_new, levels, temperature): &(Vec<Vec<u32>>, usize, Vec<u32>, f64),
    ) -> Result<bool, String> {
        let p = init_params(&TINY, 0).unwrap();
        let q = init_params(&TINY, 1).unwrap();
        let target = TransformerLM::new(&p, TINY, "target").unwrap();
        let draft = TransformerLM::new(&q, TINY, "draft").unwrap();
        let Ok(shape) = TreeShape::new(levels) else {
            return Ok(false);
        };
        let sampling = Sampling::Temperature(*temperature);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        let Ok(out) = speculative_generate_batch(
            &target,
            &TreeDraft {
                draft: &draft,
                shape: &shape,
            },
            prompts,
            *n_new,
            sampling,
            &mut rng,
        ) else {
            return Ok(false);
        };
        if out.len() != prompts.len() {
            return Err(format!(
                "{} results for {} prompts",
                out.len(),
                prompts.len()
            ));
        }
        for ((tokens, _), prompt) in out.iter().zip(prompts) {
            if tokens.len() != *n_new || tokens.iter().any(|&t| t >= 9) {
                return Err(format!("{tokens:?} for {n_new} new tokens of 9"));
            }
            if *temperature == 0.0 {
                let row =
                    ndarray::Array2::from_shape_vec((1, prompt.len()), prompt.clone()).unwrap();
                let own = greedy_generate(&target, row.view(), *n_new).unwrap();
                if own.row(0).to_vec() != *tokens {
                    return Err(format!("{tokens:?} is not the target's own {own:?}"));
                }
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
                let plain = reference::speculative_generate_tree(
                    &target, &draft, prompt, *n_new, &shape, sampling, &mut rng,
                )
                .map_err(|e| e.to_string())?;
                if plain.0 != *tokens {
                    return Err(format!("{tokens:?} is not the reference's {:?}", plain.0));
                }
            }
        }
        Ok(true)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn decoding_is_refused_or_the_targets_own(i in inputs()) {
            prop_assert!(decode(&i).is_ok(), "{:?}: {:?}", i, decode(&i));
        }
    }

    #[test]
    fn a_good_share_of_drawn_inputs_decodes() {
        use proptest::strategy::ValueTree;
        use proptest::test_runner::TestRunner;
        let mut runner = TestRunner::deterministic();
        let strategy = inputs();
        let decoded = (0..200)
            .filter(|_| decode(&strategy.new_tree(&mut runner).unwrap().current()) == Ok(true))
            .count();
        assert!(decoded >= 40, "only {decoded} of 200 drawn inputs decoded");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn a_round_from_its_times_is_refused_or_finite(
        alpha in extreme_f64(),
        gamma in prop_oneof![1u32..16, any::<u32>()],
        times in prop::array::uniform4(extreme_f64()),
        tokens in extreme_f64(),
    ) {
        let [t_base, t_draft, t_verify, extra] = times;
        if let Ok(t) = round_time(gamma, t_draft, t_verify, extra) {
            prop_assert!(finite(t) && t > 0.0);
        }
        if let Ok(x) = round_speedup(tokens, t_base, t_verify) {
            prop_assert!(finite(x));
        }
        if let Ok(p) = plan_of(alpha, gamma, t_base, t_draft, t_verify, extra) {
            let figures = [p.expected_tokens, p.speedup, p.verify_ratio, p.c, p.t_round];
            prop_assert!(figures.into_iter().all(finite), "{p:?}");
        }
    }
}

/// A probability as drawn: in range mostly, else NaN, ±∞ or negative.
fn chance() -> impl Strategy<Value = f64> {
    prop_oneof![8 => 0.0..=1.0f64, 1 => extreme_f64()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// `accept_among` once panicked on a candidate past the vocabulary and answered `Ok`
    /// for p and q of different lengths or a NaN in p: now it refuses them, and an
    /// accepted index or drawn token is always one there is.
    #[test]
    fn one_node_of_speculative_sampling_is_refused_or_in_range(
        p in prop::collection::vec(chance(), 0..6),
        q in prop::collection::vec(chance(), 0..6),
        children in prop::collection::vec(prop_oneof![0u32..6, Just(u32::MAX)], 0..4),
        seed in any::<u64>(),
    ) {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let p = Array1::from(p);
        let q = Array1::from(q);
        match decode_lab::accept_among(&p, &q, &children, &mut rng) {
            Ok(decode_lab::Choice::Child(i)) => prop_assert!(i < children.len()),
            Ok(decode_lab::Choice::Token(t)) => prop_assert!((t as usize) < p.len()),
            Err(_) => {}
        }
        let probability = |v: &f64| v.is_finite() && *v >= 0.0;
        let valid = !p.is_empty()
            && p.len() == q.len()
            && p.iter().all(probability)
            && q.iter().all(probability)
            && children.iter().all(|&x| q.get(x as usize).is_some_and(|&c| c > 0.0));
        if !valid {
            prop_assert!(decode_lab::accept_among(&p, &q, &children, &mut rng).is_err());
        }
    }

    /// Bounds far past the tokens (usize::MAX) take what there is.
    #[test]
    fn a_lookup_proposal_is_at_most_gamma_tokens_of_the_sequence(
        tokens in prop::collection::vec(0u32..4, 0..12),
        max_ngram in prop_oneof![0usize..5, Just(usize::MAX)],
        gamma in prop_oneof![0usize..5, Just(usize::MAX)],
    ) {
        let proposal = decode_lab::speculative::lookup_proposal(&tokens, max_ngram, gamma);
        prop_assert!(proposal.len() <= gamma.min(tokens.len()));
    }
}
