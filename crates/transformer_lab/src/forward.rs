//! The forward pass itself: a batch cut into chunks of whole sequences, each chunk run
//! through every layer in this thread's scratch memory, each sequence attending to its
//! own cache under its own mask.

use ndarray::parallel::prelude::*;
use ndarray::{Array2, ArrayViewMut2, ArrayViewMut3, Axis};

use crate::TransformerLM;
use crate::kernels::{SPLIT_FLOPS, attend, attend_tree, rope_row};
use crate::ops::{rms_norm_into, swiglu_into};
use crate::scratch::{Scratch, matrix, split_rows, split_slice};
use crate::seq::Seq;
use crate::tree_mask::Mask;

/// Rows (sequences × new tokens) a chunk of the batch aims for: big enough that the
/// matrix products run near peak, small enough that a chunk's buffers stay in cache and
/// lecture 6's 64 × 56-token batch splits into 8 chunks for the cores to share.
const ROWS_PER_CHUNK: usize = 256;

/// At most this many sequences per chunk: a decode step of 64 sequences runs as two
/// independent halves (measured faster on one core and on two than splitting each
/// matrix product; with packed weights, one chunk of 64 was measured again and was no
/// faster).
pub(crate) const MAX_SEQS_PER_CHUNK: usize = 32;

/// What one sequence's attention in one layer works on: its attention output rows, its
/// q, k, v rows, its K and V caches, scratch space for its scores, and where its tokens
/// sit.
struct SeqLayer<'a> {
    out: ArrayViewMut2<'a, f32>,
    q: ArrayViewMut2<'a, f32>,
    k: ArrayViewMut2<'a, f32>,
    v: ArrayViewMut2<'a, f32>,
    kc: ArrayViewMut3<'a, f32>,
    vc: ArrayViewMut3<'a, f32>,
    scores: &'a mut [f32],
    pos0: usize,
    positions: &'a [usize],
    mask: Mask<'a>,
}

/// At most how many groups a sequence's heads are cut into when it has the pool to itself.
const HEAD_GROUPS: usize = 4;

/// The sizes of the groups of `heads` heads that attend in parallel for the only sequence
/// of a pass: groups of ⌈heads / HEAD_GROUPS⌉ heads, the last one smaller if they do not
/// divide (12 heads: 3, 3, 3, 3; 5 heads: 2, 2, 1; at most [`HEAD_GROUPS`] groups).
/// Shapes only, never the threads.
fn head_groups(heads: usize) -> impl Iterator<Item = usize> {
    let g = group_size(heads);
    (0..heads.div_ceil(g)).map(move |i| g.min(heads - i * g))
}

/// Scratch floats each of [`head_groups`] needs for the scores of `n` queries that see
/// `seen` positions (what `attend` needs for that many heads).
fn group_scores(heads: usize, n: usize, seen: usize) -> impl Iterator<Item = usize> {
    head_groups(heads).map(move |g| n.max(g) * seen)
}

/// Heads in each of [`head_groups`] but perhaps the last: ⌈heads / HEAD_GROUPS⌉, at least 1.
fn group_size(heads: usize) -> usize {
    heads.div_ceil(HEAD_GROUPS).max(1)
}

/// Runs `f` on a thread of the rayon pool (the current one if it already is one).
pub(crate) fn in_worker<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    rayon::scope(|_| f())
}

impl TransformerLM<'_> {
    /// The forward pass of checked sequences, each writing its new keys and values into
    /// its own cache from slot `pos0` on (which the caller then advances) or, without a
    /// cache, into scratch memory that lives for one layer of one chunk. Returns the
    /// logits of every new token, sequence after sequence, `[Σ n_i, vocab]`.
    pub(crate) fn run_chunks(&self, seqs: Vec<Seq<'_>>, inner_split: bool) -> Array2<f32> {
        self.run_chunks_reading(seqs, inner_split, false).0
    }

    /// [`run_chunks`](Self::run_chunks), and with `hidden` the last hidden state of every
    /// new token too (after the final norm, what the LM head reads), `[Σ n_i, d_model]`;
    /// the logits are the same bits either way.
    pub(crate) fn run_chunks_reading(
        &self,
        seqs: Vec<Seq<'_>>,
        inner_split: bool,
        hidden: bool,
    ) -> (Array2<f32>, Option<Array2<f32>>) {
        let rows: usize = seqs.iter().map(|s| s.tokens.len()).sum();
        let mut logits = Array2::<f32>::zeros((rows, self.cfg.vocab));
        let mut states = hidden.then(|| Array2::<f32>::zeros((rows, self.cfg.d_model)));
        // The batch is cut into chunks of whole sequences whose size depends only on the
        // shapes (never on the thread count): up to ROWS_PER_CHUNK rows and
        // MAX_SEQS_PER_CHUNK sequences each, at least one sequence. Chunks run in parallel,
        // each through every layer with its own small buffers, so a chunk stays in cache
        // and the result is bit-identical for any number of threads.
        let mut chunks: Vec<(Vec<Seq<'_>>, usize)> = Vec::new();
        for seq in seqs {
            let n = seq.tokens.len();
            match chunks.last_mut() {
                Some((last, r)) if last.len() < MAX_SEQS_PER_CHUNK && *r + n <= ROWS_PER_CHUNK => {
                    last.push(seq);
                    *r += n;
                }
                _ => chunks.push((vec![seq], n)),
            }
        }
        let split = inner_split && chunks.len() == 1; // one chunk: parallelise inside it
        let mut rest = logits.view_mut();
        let mut rest_states = states.as_mut().map(|s| s.view_mut());
        let mut work = Vec::with_capacity(chunks.len());
        for (seqs, r) in chunks {
            let (out, tail) = rest.split_at(Axis(0), r);
            rest = tail;
            let state_rows = rest_states.take().map(|s| s.split_at(Axis(0), r));
            let (state_out, state_tail) = state_rows.unzip();
            rest_states = state_tail;
            work.push((seqs, out, state_out));
        }
        // A pass whose matrix products come to fewer than SPLIT_FLOPS together (its
        // tokens' `forward_flops` with nothing cached: a test's tiny model) splits none of
        // them: the pool would share out only microseconds of attention, for a hand-over
        // from the caller's thread and back and an idle core spinning. It runs on the
        // calling thread, unsplit: the same bits, as the chunks' arithmetic never depends
        // on the thread that runs it.
        if self.cfg.forward_flops(1, 0, rows) < SPLIT_FLOPS as f64 {
            for (mut seqs, out, state_out) in work {
                self.forward_chunk(&mut seqs, out, state_out, false);
            }
            return (logits, states);
        }
        // `in_worker` keeps every nested parallel loop on a pool thread: without it each
        // of a decode step's few dozen parallel loops would be handed over from the
        // caller's thread and back (a context switch each).
        in_worker(|| {
            work.into_par_iter().for_each(|(mut seqs, out, state_out)| {
                self.forward_chunk(&mut seqs, out, state_out, split)
            })
        });
        (logits, states)
    }

    /// The forward pass of a chunk of whole sequences (all with caches, or all without),
    /// logits written to `out [Σ n_i, vocab]` (and with `states`, the last hidden states
    /// the LM head reads, `[Σ n_i, d_model]`). `split` lets the matrix products and the
    /// attention use the rayon pool (when the chunk is the whole batch): one task per
    /// sequence, or, for a chunk of one sequence under a causal mask, one per group of its
    /// heads ([`head_groups`]).
    fn forward_chunk(
        &self,
        seqs: &mut [Seq<'_>],
        out: ArrayViewMut2<f32>,
        states: Option<ArrayViewMut2<f32>>,
        split: bool,
    ) {
        let cfg = &self.cfg;
        let lens: Vec<usize> = seqs.iter().map(|s| s.tokens.len()).collect();
        let rows: usize = lens.iter().sum();
        let (d, hd, heads) = (cfg.d_model, cfg.head_dim(), cfg.n_heads);
        // Activations live in this thread's scratch memory, reused from call to call (a
        // decode step would otherwise allocate, fault in and free them every time).
        let widths = [d, d, 3 * d, d, 2 * cfg.d_ff, cfg.d_ff];
        // Without a cache (teacher forcing): one layer's keys and values, reused by every
        // layer, with exactly the slots this pass fills.
        let own_cache = seqs.iter().all(|s| s.kv.is_empty());
        let kv = if own_cache { rows * d } else { 0 };
        // One sequence on the whole pool (batch 1: a decode step, a verification, a
        // prefill): its heads share the pool, in groups, rather than one core attending
        // while the other waits for the next product.
        let by_heads = split && seqs.len() == 1;
        // Attention scores: what `attend` needs per sequence (or per group of heads), more
        // than `attend_tree` does. By groups, a pass of n ≥ ⌈heads / 4⌉ tokens holds up to
        // 4 · n · (pos0 + n) floats (4.7 MB for demo 6's 512-token prefill), reused from
        // pass to pass in this thread's scratch.
        let score_lens: Vec<usize> = seqs
            .iter()
            .map(|s| {
                let (n, seen) = (s.tokens.len(), s.pos0 + s.tokens.len());
                if by_heads {
                    group_scores(heads, n, seen).sum()
                } else {
                    n.max(heads) * seen
                }
            })
            .collect();
        let all_scores: usize = score_lens.iter().sum();
        let mut scratch = Scratch::take(rows * widths.iter().sum::<usize>() + 2 * kv + all_scores);
        let [x, h, qkv, attn, gate_up, act, own_k, own_v, scores] = scratch.split([
            rows * widths[0],
            rows * widths[1],
            rows * widths[2],
            rows * widths[3],
            rows * widths[4],
            rows * widths[5],
            kv,
            kv,
            all_scores,
        ]);
        let (mut x, mut h, mut qkv, mut attn, mut gate_up, mut act) = (
            matrix(x, rows, widths[0]),
            matrix(h, rows, widths[1]),
            matrix(qkv, rows, widths[2]),
            matrix(attn, rows, widths[3]),
            matrix(gate_up, rows, widths[4]),
            matrix(act, rows, widths[5]),
        );
        // One layer of keys `[heads, hd, n_i]` and values `[heads, n_i, hd]` per sequence.
        let mut own: Vec<(ArrayViewMut3<f32>, ArrayViewMut3<f32>)> = if own_cache {
            let ks = split_slice(own_k, lens.iter().map(|&n| n * d));
            let vs = split_slice(own_v, lens.iter().map(|&n| n * d));
            ks.into_iter()
                .zip(vs)
                .zip(&lens)
                .map(|((k, v), &n)| {
                    (
                        ArrayViewMut3::from_shape((heads, hd, n), k).expect("a layer of keys"),
                        ArrayViewMut3::from_shape((heads, n, hd), v).expect("a layer of values"),
                    )
                })
                .collect()
        } else {
            Vec::new()
        };
        let meta: Vec<(usize, &[usize], Mask<'_>)> =
            seqs.iter().map(|s| (s.pos0, s.positions, s.mask)).collect();
        // x: [Σ n_i, d_model], the rows of each sequence in turn.
        // Each sequence's rows start from its tokens' embeddings, or from the vectors given.
        let mut rows = x.outer_iter_mut();
        for s in seqs.iter() {
            match &s.inputs {
                Some(inputs) => {
                    for (input, mut row) in inputs.outer_iter().zip(rows.by_ref()) {
                        row.assign(&input);
                    }
                }
                None => {
                    for (&t, mut row) in s.tokens.iter().zip(rows.by_ref()) {
                        row.assign(&self.params.embed.row(t as usize));
                    }
                }
            }
        }
        for (l, [w_qkv, w_o, w_gate_up, w_down]) in self.layers.iter().enumerate() {
            let layer = &self.params.layers[l];
            rms_norm_into(x.view(), layer.attn_norm.view(), cfg.norm_eps, h.view_mut());
            w_qkv.apply(h.view(), qkv.view_mut(), split);
            let (q, k, v) = qkv.multi_slice_mut((
                ndarray::s![.., ..d],
                ndarray::s![.., d..2 * d],
                ndarray::s![.., 2 * d..],
            ));
            // Per sequence: rotate q and k, append k and v to its cache, attend. Sequences
            // never read each other's rows.
            let caches: Vec<(ArrayViewMut3<f32>, ArrayViewMut3<f32>)> = if own_cache {
                own.iter_mut()
                    .map(|(k, v)| (k.view_mut(), v.view_mut()))
                    .collect()
            } else {
                seqs.iter_mut()
                    .map(|s| {
                        let (k, v) = &mut s.kv[l];
                        (k.view_mut(), v.view_mut())
                    })
                    .collect()
            };
            let items: Vec<SeqLayer<'_>> = split_rows(attn.view_mut(), &lens)
                .into_iter()
                .zip(split_rows(q, &lens))
                .zip(split_rows(k, &lens))
                .zip(split_rows(v, &lens))
                .zip(caches)
                .zip(split_slice(&mut *scores, score_lens.iter().copied()))
                .zip(&meta)
                .map(
                    |((((((out, q), k), v), (kc, vc)), scores), &(pos0, positions, mask))| {
                        SeqLayer {
                            out,
                            q,
                            k,
                            v,
                            kc,
                            vc,
                            scores,
                            pos0,
                            positions,
                            mask,
                        }
                    },
                )
                .collect();
            let per_seq = |s: SeqLayer<'_>| self.attend_seq(s, by_heads);
            if split && !by_heads {
                items.into_par_iter().for_each(per_seq);
            } else {
                items.into_iter().for_each(per_seq);
            }
            w_o.apply(attn.view(), h.view_mut(), split);
            x += &h;
            rms_norm_into(x.view(), layer.mlp_norm.view(), cfg.norm_eps, h.view_mut());
            w_gate_up.apply(h.view(), gate_up.view_mut(), split);
            swiglu_into(gate_up.view(), act.view_mut());
            w_down.apply(act.view(), h.view_mut(), split);
            x += &h;
        }
        rms_norm_into(
            x.view(),
            self.params.final_norm.view(),
            cfg.norm_eps,
            h.view_mut(),
        );
        if let Some(mut states) = states {
            states.assign(&h);
        }
        self.head.apply(h.view(), out, split);
    }

    /// One sequence's attention in one layer: rotates its queries and keys for their
    /// positions, appends keys and values to its cache and writes its attention output.
    /// With `by_heads` (the only sequence of a pass), a causal mask attends its
    /// [`head_groups`] on the rayon pool: heads never read each other's queries, keys or
    /// values, and each group computes its heads exactly as one call for all of them would,
    /// so the bits are the same. A tree mask is one call either way.
    fn attend_seq(&self, s: SeqLayer<'_>, by_heads: bool) {
        let SeqLayer {
            mut out,
            mut q,
            mut k,
            v,
            mut kc,
            mut vc,
            scores,
            pos0,
            positions,
            mask,
        } = s;
        let hd = self.cfg.head_dim();
        for (i, (mut qr, mut kr)) in q.outer_iter_mut().zip(k.outer_iter_mut()).enumerate() {
            let (c, s) = (
                self.rope_cos.row(positions[i]),
                self.rope_sin.row(positions[i]),
            );
            let (c, s) = (
                c.as_slice().expect("contiguous"),
                s.as_slice().expect("contiguous"),
            );
            rope_row(qr.as_slice_mut().expect("contiguous"), hd, c, s);
            rope_row(kr.as_slice_mut().expect("contiguous"), hd, c, s);
        }
        match mask {
            Mask::Causal if by_heads => {
                let heads = self.cfg.n_heads;
                let (n, seen) = (q.nrows(), pos0 + q.nrows());
                let g = group_size(heads);
                let cols = g * hd;
                let groups: Vec<_> = out
                    .axis_chunks_iter_mut(Axis(1), cols)
                    .zip(q.axis_chunks_iter(Axis(1), cols))
                    .zip(k.axis_chunks_iter(Axis(1), cols))
                    .zip(v.axis_chunks_iter(Axis(1), cols))
                    .zip(kc.axis_chunks_iter_mut(Axis(0), g))
                    .zip(vc.axis_chunks_iter_mut(Axis(0), g))
                    .zip(split_slice(scores, group_scores(heads, n, seen)))
                    .collect();
                debug_assert_eq!(groups.len(), head_groups(heads).count());
                groups
                    .into_par_iter()
                    .for_each(|((((((out, q), k), v), kc), vc), scores)| {
                        attend(q, k, v, kc, vc, pos0, out, scores)
                    });
            }
            Mask::Causal => attend(
                q.view(),
                k.view(),
                v.view(),
                kc.view_mut(),
                vc.view_mut(),
                pos0,
                out.view_mut(),
                scores,
            ),
            Mask::Tree { prefix, visible } => attend_tree(
                q.view(),
                k.view(),
                v.view(),
                kc.view_mut(),
                vc.view_mut(),
                pos0,
                prefix,
                visible,
                out.view_mut(),
                scores,
            ),
        }
    }
}
