//! Ragged batched passes (`extend_ragged`): sequences of different lengths, each with its
//! own cache, fed causally or as trees in one pass, checked against each sequence alone.

use ndarray::{Array2, ArrayView2, s};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use transformer_lab::{Error, Feed, KvCache, TransformerLM, TreeMask, init_params};

mod common;
use common::SMALL;

/// One sequence of a test batch: a prefix already in its cache, then a chunk to feed.
struct Case {
    prefix: Vec<u32>,
    chunk: Vec<u32>,
    /// `None`: causal. `Some(parents)`: a tree, node i's parent among the chunk's nodes.
    tree: Option<Vec<Option<usize>>>,
    positions: Vec<usize>,
    visible: Vec<Vec<usize>>,
}

impl Case {
    fn new(rng: &mut ChaCha8Rng, prefix_len: usize, n: usize, tree: bool) -> Case {
        let mut toks = |len| -> Vec<u32> {
            (0..len)
                .map(|_| rng.random_range(0..SMALL.vocab as u32))
                .collect()
        };
        let (prefix, chunk) = (toks(prefix_len), toks(n));
        // A tree: node 0 the root, node i > 0 a child of node (i − 1) / 2.
        let parents: Option<Vec<Option<usize>>> =
            tree.then(|| (0..n).map(|i| (i > 0).then(|| (i - 1) / 2)).collect());
        let (mut positions, mut visible) = (Vec::new(), Vec::new());
        if let Some(parents) = &parents {
            for i in 0..n {
                let mut path = vec![prefix_len + i];
                let mut cur = parents[i];
                while let Some(p) = cur {
                    path.push(prefix_len + p);
                    cur = parents[p];
                }
                path.reverse();
                positions.push(prefix_len + path.len() - 1);
                visible.push(path);
            }
        }
        Case {
            prefix,
            chunk,
            tree: parents,
            positions,
            visible,
        }
    }

    fn feed(&self) -> Feed<'_> {
        Feed {
            tokens: &self.chunk,
            tree: self.tree.as_ref().map(|_| TreeMask {
                positions: &self.positions,
                prefix: self.prefix.len(),
                visible: &self.visible,
            }),
        }
    }

    /// A cache holding the prefix, with room for the chunk and one more token.
    fn cache(&self, m: &TransformerLM<'_>) -> KvCache {
        let mut cache = m
            .new_cache(1, self.prefix.len() + self.chunk.len() + 1)
            .unwrap();
        if !self.prefix.is_empty() {
            m.extend(&mut cache, row(&self.prefix).view()).unwrap();
        }
        cache
    }

    /// The chunk fed alone, with `extend` or `extend_tree`: logits `[n, vocab]`.
    fn alone(&self, m: &TransformerLM<'_>, cache: &mut KvCache) -> Array2<f32> {
        let logits = match &self.tree {
            None => m.extend(cache, row(&self.chunk).view()),
            Some(_) => m.extend_tree(
                cache,
                row(&self.chunk).view(),
                &self.positions,
                self.prefix.len(),
                &self.visible,
            ),
        };
        logits.unwrap().index_axis_move(ndarray::Axis(0), 0)
    }
}

fn row(tokens: &[u32]) -> Array2<u32> {
    Array2::from_shape_vec((1, tokens.len()), tokens.to_vec()).unwrap()
}

/// Feeds every case in one ragged pass and checks each sequence's logits, and the next
/// step from its cache, bit for bit against the sequence fed alone.
fn check_against_alone(m: &TransformerLM<'_>, cases: &[Case]) {
    let mut caches: Vec<KvCache> = cases.iter().map(|c| c.cache(m)).collect();
    let mut alone_caches = caches.clone();
    let feeds: Vec<Feed<'_>> = cases.iter().map(Case::feed).collect();
    let mut refs: Vec<&mut KvCache> = caches.iter_mut().collect();
    let logits = m.extend_ragged(&mut refs, &feeds).unwrap();
    let total: usize = cases.iter().map(|c| c.chunk.len()).sum();
    assert_eq!(logits.dim(), (total, m.cfg().vocab));
    let mut row0 = 0;
    for (i, (case, (cache, alone_cache))) in cases
        .iter()
        .zip(caches.iter_mut().zip(&mut alone_caches))
        .enumerate()
    {
        let n = case.chunk.len();
        let alone = case.alone(m, alone_cache);
        let batched: ArrayView2<f32> = logits.slice(s![row0..row0 + n, ..]);
        assert_eq!(batched, alone.view(), "sequence {i}: logits");
        row0 += n;
        assert_eq!(cache.len(), case.prefix.len() + n, "sequence {i}: length");
        // The caches hold the same keys and values: the next step agrees bit for bit.
        let next = ndarray::array![5u32];
        if case.tree.is_none() {
            assert_eq!(
                m.step(cache, next.view()).unwrap(),
                m.step(alone_cache, next.view()).unwrap(),
                "sequence {i}: the step after"
            );
        }
    }
}

#[test]
fn a_ragged_pass_gives_each_sequence_what_it_gets_alone() {
    let p = init_params(&SMALL, 11).unwrap();
    let m = TransformerLM::new(&p, SMALL, "m").unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    // Different prefixes (one empty), causal chunks of 1–9 tokens (the few-query and the
    // matrix-product attention), trees of 1–7 nodes, side by side.
    let cases = vec![
        Case::new(&mut rng, 3, 2, false),
        Case::new(&mut rng, 5, 7, true),
        Case::new(&mut rng, 0, 9, false),
        Case::new(&mut rng, 12, 1, false),
        Case::new(&mut rng, 1, 1, true),
        Case::new(&mut rng, 8, 4, true),
    ];
    check_against_alone(&m, &cases);
}

#[test]
fn a_sequence_alone_attends_in_uneven_groups_of_heads_with_the_bits_it_gets_in_a_batch() {
    // Alone, a pass attends in groups of ⌈heads / 4⌉ heads: five heads make groups of 2, 2
    // and 1 (SMALL's four are groups of one). Few-query and matrix-product attention, and a
    // tree (which attends as one task), each checked against the same sequence in a batch.
    let cfg = transformer_lab::Config {
        d_model: 40,
        n_heads: 5,
        d_ff: 56,
        ..SMALL
    };
    let p = init_params(&cfg, 13).unwrap();
    let m = TransformerLM::new(&p, cfg, "five heads").unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let cases = vec![
        Case::new(&mut rng, 4, 1, false),
        Case::new(&mut rng, 2, 4, false),
        Case::new(&mut rng, 0, 9, false),
        Case::new(&mut rng, 3, 5, true),
    ];
    check_against_alone(&m, &cases);
}

#[test]
fn a_ragged_pass_of_many_chunks_gives_each_sequence_what_it_gets_alone() {
    // 70 sequences of up to 14 new tokens: several chunks (by rows and by sequences).
    let p = init_params(&SMALL, 12).unwrap();
    let m = TransformerLM::new(&p, SMALL, "m").unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let cases: Vec<Case> = (0..70)
        .map(|i| {
            let (prefix, n) = (rng.random_range(0..10), rng.random_range(1..=14));
            Case::new(&mut rng, prefix, n, i % 3 == 0)
        })
        .collect();
    check_against_alone(&m, &cases);
}

#[test]
fn bad_ragged_batches_are_errors() {
    let p = init_params(&SMALL, 4).unwrap();
    let m = TransformerLM::new(&p, SMALL, "m").unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let case = Case::new(&mut rng, 3, 2, true);
    let run = |caches: &mut [KvCache], feeds: &[Feed<'_>]| {
        let mut refs: Vec<&mut KvCache> = caches.iter_mut().collect();
        m.extend_ragged(&mut refs, feeds).unwrap_err()
    };
    let feed = case.feed();
    assert!(matches!(run(&mut [], &[feed]), Error::Shape(_)), "counts");
    let two = m.new_cache(2, 8).unwrap();
    assert!(
        matches!(run(&mut [two], &[feed]), Error::Shape(_)),
        "batch 2"
    );
    let five = [1u32, 2, 3, 4, 5];
    let causal = Feed {
        tokens: &five[..],
        tree: None,
    };
    assert!(
        matches!(
            run(&mut [m.new_cache(1, 4).unwrap()], &[causal]),
            Error::TooLong { len: 5, max: 4 }
        ),
        "a cache without room"
    );
    let bad = [1u32, 64];
    let out_of_vocab = Feed {
        tokens: &bad[..],
        tree: None,
    };
    assert!(matches!(
        run(&mut [m.new_cache(1, 8).unwrap()], &[out_of_vocab]),
        Error::TokenOutOfRange { token: 64, .. }
    ));
    let wrong_vis = [vec![3usize], vec![4, 5]];
    let bad_tree = Feed {
        tokens: &case.chunk,
        tree: Some(TreeMask {
            positions: &case.positions,
            prefix: 3,
            visible: &wrong_vis,
        }),
    };
    assert!(matches!(
        run(&mut [case.cache(&m)], &[bad_tree]),
        Error::Shape(_)
    ));
    // A failed batch changes no cache.
    let mut caches = [case.cache(&m), case.cache(&m)];
    run(&mut caches, &[feed, bad_tree]);
    assert!(caches.iter().all(|c| c.len() == 3));
}

#[test]
fn the_hidden_states_are_what_the_lm_head_reads_beside_the_same_logits() {
    // Two causal sequences (one with a prefix) and a tree, in several chunks' worth of
    // sequences: the logits are extend_ragged's bits; the hidden states are the reference
    // forward's last normed stream (a causal sequence from position 0 is exactly what
    // `reference::forward` reads), and each row times the LM head gives its logits.
    let p = init_params(&SMALL, 21).unwrap();
    let m = TransformerLM::new(&p, SMALL, "m").unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut cases = vec![Case::new(&mut rng, 0, 9, false)];
    cases.extend((0..40).map(|i| Case::new(&mut rng, i % 5, 1 + i % 6, i % 2 == 1)));
    let mut caches: Vec<KvCache> = cases.iter().map(|c| c.cache(&m)).collect();
    let mut twins = caches.clone();
    let feeds: Vec<Feed<'_>> = cases.iter().map(Case::feed).collect();
    let mut refs: Vec<&mut KvCache> = caches.iter_mut().collect();
    let (logits, hidden) = m.extend_ragged_hidden(&mut refs, &feeds).unwrap();
    let mut twin_refs: Vec<&mut KvCache> = twins.iter_mut().collect();
    assert_eq!(logits, m.extend_ragged(&mut twin_refs, &feeds).unwrap());
    assert_eq!(hidden.dim(), (logits.nrows(), SMALL.d_model));
    let first = &cases[0].chunk;
    let mut x = transformer_lab::reference::embed(&p.embed, first).unwrap();
    for layer in &p.layers {
        x = transformer_lab::reference::block(layer, &SMALL, &x);
    }
    let want = transformer_lab::reference::rms_norm(&x, p.final_norm.view(), SMALL.norm_eps);
    let got = hidden.slice(s![..first.len(), ..]);
    let worst = (&got - &want).iter().fold(0.0f32, |m, v| m.max(v.abs()));
    assert!(worst < 1e-4, "hidden state off the reference by {worst}");
    let again = hidden.dot(&p.lm_head);
    let worst = (&again - &logits)
        .iter()
        .fold(0.0f32, |m, v| m.max(v.abs()));
    assert!(worst < 1e-4, "hidden · lm_head off the logits by {worst}");
}

#[test]
fn full_hidden_is_full_logits_beside_the_states_a_causal_pass_reads() {
    // Three sequences of 9 tokens, no cache: the logits are full_logits' bits, and each
    // sequence's hidden states are those extend_ragged_hidden returns for it from an empty
    // cache, bit for bit.
    let p = init_params(&SMALL, 21).unwrap();
    let m = TransformerLM::new(&p, SMALL, "m").unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let tokens =
        ndarray::Array2::from_shape_fn((3, 9), |_| rng.random_range(0..SMALL.vocab as u32));
    let (logits, hidden) = m.full_hidden(tokens.view()).unwrap();
    assert_eq!(logits, m.full_logits(tokens.view()).unwrap());
    assert_eq!(hidden.dim(), (3, 9, SMALL.d_model));
    for (i, row) in tokens.outer_iter().enumerate() {
        let seq = row.to_vec();
        let mut cache = m.new_cache(1, 9).unwrap();
        let feed = Feed {
            tokens: &seq,
            tree: None,
        };
        let (_, want) = m.extend_ragged_hidden(&mut [&mut cache], &[feed]).unwrap();
        assert_eq!(hidden.slice(s![i, .., ..]), want, "sequence {i}");
    }
    assert!(m.full_hidden(tokens.slice(s![..0, ..])).is_err());
}
