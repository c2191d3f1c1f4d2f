//! The forward pass, the KV cache and generation, checked against each other.

use ndarray::{Array2, Axis, s};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use transformer_lab::{
    Config, Error, TransformerLM, argmax, autoregressive_generate, config_like, init_params,
    sample_categorical,
};

mod common;
use common::SMALL;

fn tokens(b: usize, t: usize, seed: u64) -> Array2<u32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Array2::from_shape_fn((b, t), |_| rng.random_range(0..SMALL.vocab as u32))
}

fn max_abs_diff(a: ndarray::ArrayView2<f32>, b: ndarray::ArrayView2<f32>) -> f32 {
    a.iter()
        .zip(b.iter())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn incremental_decoding_with_the_kv_cache_matches_full_logits() {
    let p = init_params(&SMALL, 7).unwrap();
    let m = TransformerLM::new(&p, SMALL, "m").unwrap();
    for &(b, t, prefix) in &[(1, 5, 1), (3, 12, 4), (8, 24, 10), (2, 16, 16)] {
        let toks = tokens(b, t, (b * 100 + t) as u64);
        let full = m.full_logits(toks.view()).unwrap();
        let (mut cache, pre) = m.prefill(toks.slice(s![.., ..prefix])).unwrap();
        let mut worst = max_abs_diff(
            pre.index_axis(Axis(1), prefix - 1),
            full.index_axis(Axis(1), prefix - 1),
        );
        for pos in prefix..t {
            let step = m.step(&mut cache, toks.column(pos)).unwrap();
            worst = worst.max(max_abs_diff(step.view(), full.index_axis(Axis(1), pos)));
        }
        assert_eq!(cache.len(), t);
        assert!(worst < 1e-4, "batch {b}, length {t}: max |Δ| = {worst}");
    }
}

#[test]
fn feeding_a_sequence_in_chunks_gives_the_same_logits() {
    let p = init_params(&SMALL, 3).unwrap();
    let m = TransformerLM::new(&p, SMALL, "m").unwrap();
    let toks = tokens(4, 20, 1);
    let full = m.full_logits(toks.view()).unwrap();
    let mut cache = m.new_cache(4, 20).unwrap();
    let mut got = Vec::new();
    for (a, z) in [(0, 7), (7, 8), (8, 15), (15, 20)] {
        got.push(m.extend(&mut cache, toks.slice(s![.., a..z])).unwrap());
    }
    let views: Vec<_> = got.iter().map(|g| g.view()).collect();
    let chunked = ndarray::concatenate(Axis(1), &views).unwrap();
    let worst = full
        .iter()
        .zip(chunked.iter())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max);
    assert!(worst < 1e-4, "{worst}");
}

#[test]
fn a_future_token_cannot_change_an_earlier_logit() {
    let p = init_params(&SMALL, 5).unwrap();
    let m = TransformerLM::new(&p, SMALL, "m").unwrap();
    let a = tokens(1, 10, 9);
    let mut b = a.clone();
    b[[0, 6]] = (a[[0, 6]] + 1) % SMALL.vocab as u32;
    let (la, lb) = (
        m.full_logits(a.view()).unwrap(),
        m.full_logits(b.view()).unwrap(),
    );
    assert_eq!(
        la.slice(s![.., ..6, ..]),
        lb.slice(s![.., ..6, ..]),
        "positions before 6 are bit-identical"
    );
    assert_ne!(
        la.slice(s![.., 6, ..]),
        lb.slice(s![.., 6, ..]),
        "position 6 sees its own token"
    );
}

#[test]
fn sequences_of_a_batch_do_not_see_each_other() {
    let p = init_params(&SMALL, 5).unwrap();
    let m = TransformerLM::new(&p, SMALL, "m").unwrap();
    let batch = tokens(3, 9, 2);
    let together = m.full_logits(batch.view()).unwrap();
    for i in 0..3 {
        let alone = m.full_logits(batch.slice(s![i..i + 1, ..])).unwrap();
        let worst = max_abs_diff(
            alone.index_axis(Axis(0), 0),
            together.index_axis(Axis(0), i),
        );
        assert!(worst < 1e-5, "sequence {i}: {worst}");
    }
}

#[test]
fn a_one_layer_config_uses_only_the_first_block_of_shared_params() {
    let p = init_params(&SMALL, 11).unwrap();
    let mut only_first = p.clone();
    only_first.layers.truncate(1);
    let shared = TransformerLM::new(&p, config_like(&SMALL, 1), "d1").unwrap();
    let owned = TransformerLM::new(&only_first, config_like(&SMALL, 1), "d1").unwrap();
    let toks = tokens(2, 8, 4);
    assert_eq!(
        shared.full_logits(toks.view()).unwrap(),
        owned.full_logits(toks.view()).unwrap()
    );
    let deep = TransformerLM::new(&p, SMALL, "t").unwrap();
    assert_ne!(
        shared.full_logits(toks.view()).unwrap(),
        deep.full_logits(toks.view()).unwrap()
    );
}

#[test]
fn greedy_generation_picks_the_argmax_of_the_teacher_forced_logits() {
    let p = init_params(&SMALL, 2).unwrap();
    let m = TransformerLM::new(&p, SMALL, "m").unwrap();
    let prompts = tokens(5, 4, 8);
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let generated = autoregressive_generate(&m, prompts.view(), 10, 0.0, &mut rng).unwrap();
    assert_eq!(generated.dim(), (5, 10));
    let seqs = ndarray::concatenate(Axis(1), &[prompts.view(), generated.view()]).unwrap();
    let logits = m.full_logits(seqs.view()).unwrap();
    for b in 0..5 {
        for j in 0..10 {
            let pos = 4 + j - 1;
            assert_eq!(
                generated[[b, j]] as usize,
                argmax(logits.slice(s![b, pos, ..])).unwrap(),
                "seq {b} token {j}"
            );
        }
    }
}

#[test]
fn sampling_is_the_documented_draw_from_the_seed_and_batching_does_not_change_greedy_output() {
    let p = init_params(&SMALL, 2).unwrap();
    let m = TransformerLM::new(&p, SMALL, "m").unwrap();
    let prompts = tokens(4, 3, 3);
    let (temperature, n_new) = (0.8, 8);
    let run = |seed| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        autoregressive_generate(&m, prompts.view(), n_new, temperature, &mut rng).unwrap()
    };
    // The same tokens, computed another way: the reference forward pass of each whole
    // sequence, and the documented draw written out here (one `random::<f64>()` per
    // token, sequences in batch order within a step, walked through the cumulative
    // weights exp((l − max) / T)).
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let mut seqs: Vec<Vec<u32>> = prompts.outer_iter().map(|r| r.to_vec()).collect();
    for _ in 0..n_new {
        for seq in seqs.iter_mut() {
            let logits = transformer_lab::reference::forward(&p, &SMALL, seq).unwrap();
            let last = logits.row(seq.len() - 1);
            let max = last.iter().fold(f32::NEG_INFINITY, |m, &l| m.max(l));
            let w: Vec<f64> = last
                .iter()
                .map(|&l| ((f64::from(l) - f64::from(max)) / temperature).exp())
                .collect();
            let mut u = rng.random::<f64>() * w.iter().sum::<f64>();
            let token = w
                .iter()
                .position(|&wi| {
                    let hit = u < wi;
                    u -= wi;
                    hit
                })
                .unwrap_or(w.len() - 1);
            seq.push(token as u32);
        }
    }
    let want: Vec<Vec<u32>> = seqs.iter().map(|s| s[3..].to_vec()).collect();
    let got: Vec<Vec<u32>> = run(42).outer_iter().map(|r| r.to_vec()).collect();
    assert_eq!(got, want);
    assert_ne!(run(42), run(43));
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let batched = autoregressive_generate(&m, prompts.view(), 8, 0.0, &mut rng).unwrap();
    for b in 0..4 {
        let one =
            autoregressive_generate(&m, prompts.slice(s![b..b + 1, ..]), 8, 0.0, &mut rng).unwrap();
        assert_eq!(one.row(0), batched.row(b));
    }
}

#[test]
fn temperature_sampling_follows_the_softmax_probabilities() {
    // logits ln(1), ln(2), ln(3), ln(4) at T = 1: probabilities 0.1, 0.2, 0.3, 0.4.
    let logits = ndarray::array![0.0f32, 2f32.ln(), 3f32.ln(), 4f32.ln()];
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let n = 40_000;
    let mut counts = [0usize; 4];
    for _ in 0..n {
        counts[sample_categorical(logits.view(), 1.0, &mut rng).unwrap()] += 1;
    }
    let chi2: f64 = counts
        .iter()
        .zip([0.1, 0.2, 0.3, 0.4])
        .map(|(&c, p)| (c as f64 - n as f64 * p).powi(2) / (n as f64 * p))
        .sum();
    assert!(
        chi2 < 16.27,
        "χ² = {chi2} with 3 degrees of freedom (p < 0.001 above 16.27)"
    );
    // T = 0 is greedy and never touches the probabilities.
    assert_eq!(sample_categorical(logits.view(), 0.0, &mut rng).unwrap(), 3);
}

#[test]
fn init_params_follows_the_spec_scales() {
    let cfg = Config {
        vocab: 256,
        d_model: 128,
        n_layers: 4,
        n_heads: 4,
        d_ff: 384,
        ..SMALL
    };
    let p = init_params(&cfg, 0).unwrap();
    let std = |a: &Array2<f32>| {
        let n = a.len() as f64;
        let mean = a.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
        (a.iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / n)
            .sqrt()
    };
    let close = |got: f64, want: f64| assert!((got / want - 1.0).abs() < 0.03, "{got} vs {want}");
    close(std(&p.embed), 0.03);
    close(std(&p.lm_head), 0.02);
    close(std(&p.layers[0].wq), 0.02);
    close(std(&p.layers[2].w_up), 0.02);
    close(std(&p.layers[1].wo), 0.02 / 8f64.sqrt());
    close(std(&p.layers[3].w_down), 0.02 / 8f64.sqrt());
    assert!(p.layers[0].attn_norm.iter().all(|&g| g == 1.0));
    assert_ne!(p.layers[0].wq, p.layers[1].wq);
    assert_ne!(init_params(&cfg, 1).unwrap().embed, p.embed);
}

#[test]
fn bad_inputs_are_errors_that_say_what_was_wrong() {
    let p = init_params(&SMALL, 0).unwrap();
    let m = TransformerLM::new(&p, SMALL, "m").unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(0);

    let mut bad = tokens(1, 4, 0);
    bad[[0, 2]] = 64;
    assert_eq!(
        m.full_logits(bad.view()).unwrap_err(),
        Error::TokenOutOfRange {
            token: 64,
            vocab: 64
        }
    );
    assert_eq!(
        m.full_logits(tokens(1, 25, 0).view()).unwrap_err(),
        Error::TooLong { len: 25, max: 24 }
    );
    assert!(matches!(
        m.full_logits(Array2::zeros((0, 3)).view()),
        Err(Error::Shape(_))
    ));

    let pr = tokens(2, 10, 0);
    let e = autoregressive_generate(&m, pr.view(), 15, 0.0, &mut rng).unwrap_err();
    assert_eq!(e, Error::TooLong { len: 25, max: 24 });
    assert!(e.to_string().contains("exceeds the limit of 24"));
    for t in [-0.5, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            autoregressive_generate(&m, pr.view(), 2, t, &mut rng),
            Err(Error::Temperature(_))
        ));
    }
    assert!(matches!(
        autoregressive_generate(&m, Array2::zeros((2, 0)).view(), 2, 0.0, &mut rng),
        Err(Error::Shape(_))
    ));
    assert_eq!(
        autoregressive_generate(&m, pr.view(), 0, 0.0, &mut rng)
            .unwrap()
            .dim(),
        (2, 0)
    );

    let mut cache = m.new_cache(2, 4).unwrap();
    assert!(matches!(
        m.extend(&mut cache, tokens(3, 1, 0).view()),
        Err(Error::Shape(_))
    ));
    assert_eq!(
        m.extend(&mut cache, tokens(2, 5, 0).view()).unwrap_err(),
        Error::TooLong { len: 5, max: 4 }
    );
    assert!(m.new_cache(0, 4).is_err());
    let mut roomy = m.new_cache(1, 40).unwrap(); // slots may exceed max_seq; positions may not
    assert_eq!(
        m.extend(&mut roomy, tokens(1, 25, 0).view()).unwrap_err(),
        Error::TooLong { len: 25, max: 24 }
    );

    let deeper = config_like(&SMALL, 3);
    assert!(
        matches!(TransformerLM::new(&p, deeper, "x"), Err(Error::Shape(m)) if m.contains("only 2"))
    );
    let odd = Config {
        n_heads: 3,
        ..SMALL
    };
    assert!(matches!(init_params(&odd, 0), Err(Error::Config(m)) if m.contains("not divisible")));
    let odd_head = Config {
        d_model: 36,
        n_heads: 4,
        ..SMALL
    };
    assert!(matches!(init_params(&odd_head, 0), Err(Error::Config(m)) if m.contains("even")));
    assert!(matches!(
        init_params(&Config { vocab: 0, ..SMALL }, 0),
        Err(Error::Config(_))
    ));
    let wide = Config {
        d_model: 64,
        ..SMALL
    };
    assert!(
        matches!(TransformerLM::new(&p, wide, "x"), Err(Error::Shape(m)) if m.contains("embed"))
    );
}

/// A small tree over a 5-token prefix: node 0 is the root (the last committed token),
/// nodes 1 and 2 its children, node 3 a child of 1, node 4 a child of 2, node 5 a child of 3.
const PARENTS: [Option<usize>; 6] = [None, Some(0), Some(0), Some(1), Some(2), Some(3)];

fn ancestors(i: usize) -> Vec<usize> {
    let mut path = vec![i];
    while let Some(p) = PARENTS[*path.last().unwrap()] {
        path.push(p);
    }
    path.reverse();
    path
}

/// Feeds the six `nodes` of [`PARENTS`] as one tree chunk after a 5-token prefix.
fn feed_tree(
    m: &TransformerLM<'_>,
    cache: &mut transformer_lab::KvCache,
    nodes: &[u32; 6],
) -> ndarray::Array3<f32> {
    let positions: Vec<usize> = (0..6).map(|i| 5 + ancestors(i).len() - 1).collect();
    let visible: Vec<Vec<usize>> = (0..6)
        .map(|i| ancestors(i).iter().map(|a| 5 + a).collect())
        .collect();
    let tree = Array2::from_shape_vec((1, 6), nodes.to_vec()).unwrap();
    m.extend_tree(cache, tree.view(), &positions, 5, &visible)
        .unwrap()
}

#[test]
fn one_tree_pass_scores_every_node_as_if_its_path_ran_alone() {
    let p = init_params(&SMALL, 4).unwrap();
    let m = TransformerLM::new(&p, SMALL, "m").unwrap();
    let prefix = tokens(1, 5, 12);
    let nodes = [7u32, 3, 9, 1, 60, 22];
    let mut cache = m.new_cache(1, 5 + nodes.len()).unwrap();
    m.extend(&mut cache, prefix.view()).unwrap();
    let logits = feed_tree(&m, &mut cache, &nodes);
    for i in 0..6 {
        let mut seq: Vec<u32> = prefix.row(0).to_vec();
        seq.extend(ancestors(i).iter().map(|&a| nodes[a]));
        let alone = m
            .full_logits(
                Array2::from_shape_vec((1, seq.len()), seq.clone())
                    .unwrap()
                    .view(),
            )
            .unwrap();
        let worst = max_abs_diff(
            logits.slice(s![.., i, ..]),
            alone.slice(s![.., seq.len() - 1, ..]),
        );
        assert!(worst < 1e-4, "node {i}: {worst}");
    }
}

#[test]
fn keeping_the_accepted_path_leaves_a_cache_that_decodes_like_a_fresh_one() {
    let p = init_params(&SMALL, 4).unwrap();
    let m = TransformerLM::new(&p, SMALL, "m").unwrap();
    let prefix = tokens(1, 5, 13);
    let nodes = [7u32, 3, 9, 1, 60, 22];
    let mut cache = m.new_cache(1, 5 + nodes.len() + 1).unwrap();
    m.extend(&mut cache, prefix.view()).unwrap();
    feed_tree(&m, &mut cache, &nodes);
    // Accept the path root → 1 → 3 → 5 (slots 5, 6, 8, 10), then feed one more token.
    cache.keep(5, &[5, 6, 8, 10]).unwrap();
    assert_eq!(cache.len(), 9);
    let next = m.step(&mut cache, ndarray::array![42u32].view()).unwrap();
    let mut seq: Vec<u32> = prefix.row(0).to_vec();
    seq.extend([7, 3, 1, 22, 42]);
    let full = m
        .full_logits(Array2::from_shape_vec((1, 10), seq).unwrap().view())
        .unwrap();
    let worst = max_abs_diff(next.view(), full.slice(s![.., 9, ..]));
    assert!(worst < 1e-4, "{worst}");
}

#[test]
fn bad_trees_and_bad_keeps_are_errors() {
    let p = init_params(&SMALL, 4).unwrap();
    let m = TransformerLM::new(&p, SMALL, "m").unwrap();
    let mut cache = m.new_cache(1, 10).unwrap();
    m.extend(&mut cache, tokens(1, 3, 1).view()).unwrap();
    let t = Array2::from_shape_vec((1, 2), vec![1u32, 2]).unwrap();
    let e = |pos: &[usize], prefix: usize, vis: &[Vec<usize>]| {
        let mut c = cache.clone();
        m.extend_tree(&mut c, t.view(), pos, prefix, vis)
            .unwrap_err()
    };
    assert!(
        matches!(e(&[3], 3, &[vec![3], vec![3, 4]]), Error::Shape(_)),
        "lengths"
    );
    assert!(
        matches!(e(&[3, 4], 3, &[vec![3], vec![4, 5]]), Error::Shape(_)),
        "a future slot"
    );
    assert!(
        matches!(e(&[3, 4], 3, &[vec![3], vec![3]]), Error::Shape(_)),
        "not its own slot"
    );
    assert!(
        matches!(
            e(&[3, 24], 3, &[vec![3], vec![3, 4]]),
            Error::TooLong { .. }
        ),
        "position past max_seq"
    );
    assert!(
        matches!(e(&[3, 4], 4, &[vec![3], vec![3, 4]]), Error::Shape(_)),
        "prefix past the cache"
    );
    let mut c = cache.clone();
    assert!(c.keep(1, &[2, 1]).is_err() && c.keep(1, &[0]).is_err() && c.keep(1, &[3]).is_err());
    assert!(c.keep(1, &[2]).is_ok() && c.len() == 2);
}
