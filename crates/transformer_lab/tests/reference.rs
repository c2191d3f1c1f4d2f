//! Every fast entry point of the model against `transformer_lab::reference`, the plain
//! forward pass written from the architecture's definition: teacher-forced logits,
//! prefill and batched decode steps with the KV cache, chunked extension, tree-masked
//! extension, and rolling the cache back (`KvCache::keep`, `KvCache::truncate`). Several
//! shapes (lecture 3's model, an odd number of RoPE pairs per head, one layer), batch
//! sizes (1, a few, more than one chunk of the batch) and lengths.
//!
//! Logits must agree within 1e-4 and greedy tokens must be identical.

use ndarray::{Array2, ArrayView1, ArrayView2, Axis, s};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use transformer_lab::{
    Config, KvCache, Params, QCFG, TransformerLM, autoregressive_generate, init_params, reference,
};

/// Logits may differ from the reference by this much (f32, different summation orders).
const TOL: f32 = 1e-4;

/// Two layers of three heads of width 14: seven RoPE pairs per head (an odd number), a
/// hidden width that is not a multiple of the packed kernel's 16-column panels.
const ODD: Config = Config {
    vocab: 50,
    d_model: 42,
    n_layers: 2,
    n_heads: 3,
    d_ff: 70,
    max_seq: 40,
    norm_eps: 1e-5,
    rope_theta: 10000.0,
};

/// One layer, two heads of 16, a different RoPE base.
const ONE: Config = Config {
    vocab: 64,
    d_model: 32,
    n_layers: 1,
    n_heads: 2,
    d_ff: 48,
    max_seq: 24,
    norm_eps: 1e-6,
    rope_theta: 500.0,
};

fn tokens(cfg: &Config, b: usize, t: usize, seed: u64) -> Array2<u32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Array2::from_shape_fn((b, t), |_| rng.random_range(0..cfg.vocab as u32))
}

/// The reference logits of the last position of `seq`.
fn last_logits(p: &Params, cfg: &Config, seq: &[u32]) -> ndarray::Array1<f32> {
    let logits = reference::forward(p, cfg, seq).unwrap();
    logits.row(seq.len() - 1).to_owned()
}

fn max_abs_diff(a: ArrayView1<f32>, b: ArrayView1<f32>) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b.iter())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Asserts every row of `fast` is within [`TOL`] of the same row of `want`.
fn assert_rows_close(fast: ArrayView2<f32>, want: ArrayView2<f32>, what: &str) {
    assert_eq!(fast.dim(), want.dim(), "{what}: shapes");
    for (i, (f, w)) in fast.outer_iter().zip(want.outer_iter()).enumerate() {
        let d = max_abs_diff(f, w);
        assert!(d < TOL, "{what}, row {i}: max |Δ| = {d}");
    }
}

#[test]
fn full_logits_match_the_reference_for_every_shape_batch_and_length() {
    let cases: [(Config, &[(usize, usize)]); 3] = [
        // 35 sequences: more than one chunk of the batch (chunks hold at most 32).
        (QCFG, &[(1, 1), (2, 56), (35, 9)]),
        (ODD, &[(1, 40), (3, 7), (4, 8)]),
        (ONE, &[(1, 3), (5, 24)]),
    ];
    for (cfg, shapes) in cases {
        let p = init_params(&cfg, 11).unwrap();
        let m = TransformerLM::new(&p, cfg, "m").unwrap();
        for &(b, t) in shapes {
            let toks = tokens(&cfg, b, t, (b * 1000 + t) as u64);
            let fast = m.full_logits(toks.view()).unwrap();
            let want = reference::full_logits(&p, &cfg, toks.view()).unwrap();
            for seq in 0..b {
                assert_rows_close(
                    fast.index_axis(Axis(0), seq),
                    want.index_axis(Axis(0), seq),
                    &format!("{cfg:?} batch {b} × {t}, sequence {seq}"),
                );
            }
        }
    }
}

#[test]
fn prefill_and_batched_decode_steps_match_the_reference() {
    for (cfg, b, prompt, total) in [(QCFG, 33, 8, 20), (ODD, 3, 1, 40), (ONE, 1, 5, 24)] {
        let p = init_params(&cfg, 5).unwrap();
        let m = TransformerLM::new(&p, cfg, "m").unwrap();
        let toks = tokens(&cfg, b, total, 77);
        let want = reference::full_logits(&p, &cfg, toks.view()).unwrap();
        let (mut cache, pre) = m.prefill(toks.slice(s![.., ..prompt])).unwrap();
        for seq in 0..b {
            assert_rows_close(
                pre.index_axis(Axis(0), seq),
                want.slice(s![seq, ..prompt, ..]),
                &format!("{cfg:?} prefill of sequence {seq}"),
            );
        }
        for pos in prompt..total {
            let step = m.step(&mut cache, toks.column(pos)).unwrap();
            assert_rows_close(
                step.view(),
                want.slice(s![.., pos, ..]),
                &format!("{cfg:?} batch {b}, step at position {pos}"),
            );
        }
        assert_eq!(cache.len(), total);
    }
}

#[test]
fn extending_the_cache_in_uneven_chunks_matches_the_reference() {
    // Chunks below and above the 8 queries where attention switches to matrix products.
    for cfg in [QCFG, ODD] {
        let p = init_params(&cfg, 2).unwrap();
        let m = TransformerLM::new(&p, cfg, "m").unwrap();
        let toks = tokens(&cfg, 3, 36, 4);
        let want = reference::full_logits(&p, &cfg, toks.view()).unwrap();
        let mut cache = m.new_cache(3, 36).unwrap();
        let mut at = 0;
        for n in [1, 3, 8, 9, 2, 7, 6] {
            let got = m
                .extend(&mut cache, toks.slice(s![.., at..at + n]))
                .unwrap();
            for seq in 0..3 {
                assert_rows_close(
                    got.index_axis(Axis(0), seq),
                    want.slice(s![seq, at..at + n, ..]),
                    &format!("{cfg:?} chunk of {n} at {at}, sequence {seq}"),
                );
            }
            at += n;
        }
        assert_eq!(at, 36);
    }
}

#[test]
fn greedy_generation_gives_the_tokens_of_the_reference() {
    for (cfg, b, prompt, n_new) in [(QCFG, 6, 8, 24), (ODD, 3, 2, 30), (ONE, 2, 1, 20)] {
        let p = init_params(&cfg, 0).unwrap();
        let m = TransformerLM::new(&p, cfg, "m").unwrap();
        let prompts = tokens(&cfg, b, prompt, 9);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let fast = autoregressive_generate(&m, prompts.view(), n_new, 0.0, &mut rng).unwrap();
        for seq in 0..b {
            let prompt: Vec<u32> = prompts.row(seq).to_vec();
            let want = reference::greedy_generate(&p, &cfg, &prompt, n_new).unwrap();
            assert_eq!(fast.row(seq).to_vec(), want, "{cfg:?} sequence {seq}");
        }
    }
}

/// A random tree of `n` nodes: node 0 is the root, node i > 0 hangs under a random
/// earlier node. Returns each node's path from the root (inclusive).
fn random_tree(n: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut paths: Vec<Vec<usize>> = vec![vec![0]];
    for i in 1..n {
        let parent = rng.random_range(0..i);
        let mut path = paths[parent].clone();
        path.push(i);
        paths.push(path);
    }
    paths
}

/// Feeds the tree `paths` (tokens `nodes [B, n]`) after the `prefix` slots of `cache`.
fn feed_tree(
    m: &TransformerLM<'_>,
    cache: &mut KvCache,
    nodes: ArrayView2<u32>,
    paths: &[Vec<usize>],
) -> ndarray::Array3<f32> {
    let prefix = cache.len();
    let positions: Vec<usize> = paths.iter().map(|p| prefix + p.len() - 1).collect();
    let visible: Vec<Vec<usize>> = paths
        .iter()
        .map(|p| p.iter().map(|&a| prefix + a).collect())
        .collect();
    m.extend_tree(cache, nodes, &positions, prefix, &visible)
        .unwrap()
}

/// The tokens of sequence `seq` up to tree node `node`: its prefix, then its path.
fn path_tokens(
    prefix: ArrayView2<u32>,
    nodes: ArrayView2<u32>,
    path: &[usize],
    seq: usize,
) -> Vec<u32> {
    let mut out: Vec<u32> = prefix.row(seq).to_vec();
    out.extend(path.iter().map(|&a| nodes[[seq, a]]));
    out
}

#[test]
fn tree_masked_extension_scores_every_node_as_the_reference_scores_its_path() {
    for (cfg, b, prefix_len, n_nodes, seed) in
        [(QCFG, 3, 6, 12, 1), (ODD, 2, 1, 9, 2), (ONE, 1, 4, 15, 3)]
    {
        let p = init_params(&cfg, 8).unwrap();
        let m = TransformerLM::new(&p, cfg, "m").unwrap();
        let paths = random_tree(n_nodes, seed);
        let prefix = tokens(&cfg, b, prefix_len, seed + 10);
        let nodes = tokens(&cfg, b, n_nodes, seed + 20);
        let mut cache = m.new_cache(b, prefix_len + n_nodes).unwrap();
        m.extend(&mut cache, prefix.view()).unwrap();
        let logits = feed_tree(&m, &mut cache, nodes.view(), &paths);
        for seq in 0..b {
            for (i, path) in paths.iter().enumerate() {
                let want = last_logits(
                    &p,
                    &cfg,
                    &path_tokens(prefix.view(), nodes.view(), path, seq),
                );
                let d = max_abs_diff(logits.slice(s![seq, i, ..]), want.view());
                assert!(
                    d < TOL,
                    "{cfg:?} sequence {seq}, node {i} (path {path:?}): {d}"
                );
            }
        }
    }
}

#[test]
fn keeping_an_accepted_path_then_decoding_matches_the_reference() {
    for (cfg, b, prefix_len, n_nodes, seed) in [(QCFG, 2, 5, 10, 4), (ODD, 3, 3, 8, 5)] {
        let p = init_params(&cfg, 3).unwrap();
        let m = TransformerLM::new(&p, cfg, "m").unwrap();
        let paths = random_tree(n_nodes, seed);
        let prefix = tokens(&cfg, b, prefix_len, seed + 30);
        let nodes = tokens(&cfg, b, n_nodes, seed + 40);
        let after = tokens(&cfg, b, 4, seed + 50);
        let mut cache = m
            .new_cache(b, prefix_len + n_nodes + after.ncols())
            .unwrap();
        m.extend(&mut cache, prefix.view()).unwrap();
        feed_tree(&m, &mut cache, nodes.view(), &paths);
        // Accept the longest path (the last one of that length), drop every other node.
        let accepted = paths.iter().rev().max_by_key(|p| p.len()).unwrap().clone();
        let slots: Vec<usize> = accepted.iter().map(|&a| prefix_len + a).collect();
        cache.keep(prefix_len, &slots).unwrap();
        assert_eq!(cache.len(), prefix_len + accepted.len());
        // Then feed more tokens: a chunk of 3 and one step.
        let chunk = m.extend(&mut cache, after.slice(s![.., ..3])).unwrap();
        let step = m.step(&mut cache, after.column(3)).unwrap();
        for seq in 0..b {
            let mut seq_tokens = path_tokens(prefix.view(), nodes.view(), &accepted, seq);
            seq_tokens.extend(after.row(seq).iter());
            let want = reference::forward(&p, &cfg, &seq_tokens).unwrap();
            let end = seq_tokens.len();
            assert_rows_close(
                chunk.index_axis(Axis(0), seq),
                want.slice(s![end - 4..end - 1, ..]),
                &format!("{cfg:?} after keep {accepted:?}, sequence {seq}"),
            );
            let d = max_abs_diff(step.row(seq), want.row(end - 1));
            assert!(d < TOL, "{cfg:?} step after keep, sequence {seq}: {d}");
        }
    }
}

#[test]
fn truncating_the_cache_forgets_exactly_the_positions_past_the_new_length() {
    for cfg in [QCFG, ODD] {
        let p = init_params(&cfg, 6).unwrap();
        let m = TransformerLM::new(&p, cfg, "m").unwrap();
        let first = tokens(&cfg, 2, 14, 60);
        let other = tokens(&cfg, 2, 9, 61);
        let mut cache = m.new_cache(2, 24).unwrap();
        m.extend(&mut cache, first.view()).unwrap();
        // Past the length: nothing changes.
        cache.truncate(30);
        assert_eq!(cache.len(), 14);
        // Roll back to 10 positions and feed different tokens: the 4 forgotten positions
        // must not be seen (their stale keys and values are still in the buffer).
        cache.truncate(10);
        assert_eq!(cache.len(), 10);
        let got = m.extend(&mut cache, other.view()).unwrap();
        for seq in 0..2 {
            let mut seq_tokens: Vec<u32> = first.slice(s![seq, ..10]).to_vec();
            seq_tokens.extend(other.row(seq).iter());
            let want = reference::forward(&p, &cfg, &seq_tokens).unwrap();
            assert_rows_close(
                got.index_axis(Axis(0), seq),
                want.slice(s![10.., ..]),
                &format!("{cfg:?} after truncate(10), sequence {seq}"),
            );
        }
        // Truncating to 0 starts over.
        cache.truncate(0);
        assert!(cache.is_empty());
        let again = m.extend(&mut cache, other.view()).unwrap();
        let want = reference::full_logits(&p, &cfg, other.view()).unwrap();
        for seq in 0..2 {
            assert_rows_close(
                again.index_axis(Axis(0), seq),
                want.index_axis(Axis(0), seq),
                &format!("{cfg:?} after truncate(0), sequence {seq}"),
            );
        }
    }
}

#[test]
fn the_reference_rejects_what_the_model_rejects() {
    let p = init_params(&ONE, 0).unwrap();
    let bad = ndarray::array![[1u32, 64]];
    assert!(matches!(
        reference::full_logits(&p, &ONE, bad.view()),
        Err(transformer_lab::Error::TokenOutOfRange {
            token: 64,
            vocab: 64
        })
    ));
    let long = tokens(&ONE, 1, 25, 0);
    assert!(matches!(
        reference::full_logits(&p, &ONE, long.view()),
        Err(transformer_lab::Error::TooLong { len: 25, max: 24 })
    ));
    assert!(reference::full_logits(&p, &ONE, Array2::zeros((0, 2)).view()).is_err());
    assert!(reference::forward(&p, &QCFG, &[1]).is_err(), "wrong shapes");
    assert!(reference::greedy_generate(&p, &ONE, &[], 3).is_err());
    assert!(reference::greedy_generate(&p, &ONE, &[1; 20], 5).is_err());
}
