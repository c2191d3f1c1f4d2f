//! The forward pass: teacher-forced logits and incremental decoding with a KV cache.

use std::cell::RefCell;

use ndarray::parallel::prelude::*;
use ndarray::{Array2, Array3, Array4, ArrayView1, ArrayView2, ArrayViewMut2, ArrayViewMut3, Axis};

use crate::gemm::{PackedMatrix, matmul_packed};
use crate::kernels::{attend, attend_tree, matmul_into, rope_row};
use crate::ops::{rms_norm_into, rope_tables, swiglu_into};
use crate::{Config, Error, Params};

/// Keys and values of every position fed so far, per layer, for a batch of sequences
/// that all have the same length.
///
/// Storage is allocated once, for `capacity` positions; feeding tokens only writes into
/// it. Layout per layer: keys `[batch, n_heads, head_dim, capacity]` (transposed, so a
/// query's scores are a sum of contiguous rows) and values `[batch, n_heads, capacity,
/// head_dim]`.
#[derive(Debug, Clone)]
pub struct KvCache {
    k: Vec<Array4<f32>>,
    v: Vec<Array4<f32>>,
    len: usize,
}

impl KvCache {
    /// Positions cached so far (the same for every sequence of the batch).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing has been fed yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Sequences in the batch.
    pub fn batch(&self) -> usize {
        self.k.first().map_or(0, |k| k.dim().0)
    }

    /// Positions the cache can hold.
    pub fn capacity(&self) -> usize {
        self.v.first().map_or(0, |v| v.dim().2)
    }

    /// Keeps, after the first `from` slots, only the slots listed in `slots` (strictly
    /// increasing, all ≥ `from` and below the cache's length), moved down to `from`,
    /// `from + 1`, …; the cache's length becomes `from + slots.len()`. This is how
    /// speculative decoding rolls back to the accepted path of a verified tree.
    /// Errors on slots that are out of range or not increasing.
    pub fn keep(&mut self, from: usize, slots: &[usize]) -> Result<(), Error> {
        let increasing = slots.windows(2).all(|w| w[0] < w[1]);
        if from > self.len || !increasing || slots.iter().any(|&s| s < from || s >= self.len) {
            return Err(Error::Shape(format!(
                "cannot keep slots {slots:?} after {from} of a cache holding {}",
                self.len
            )));
        }
        for (k, v) in self.k.iter_mut().zip(self.v.iter_mut()) {
            for (j, &slot) in slots.iter().enumerate() {
                let dst = from + j;
                if slot == dst {
                    continue;
                }
                // Keys are stored transposed (slot = last axis), values by slot (axis 2).
                let (batch, heads, hd, _) = k.dim();
                for seq in 0..batch {
                    for h in 0..heads {
                        for d in 0..hd {
                            k[[seq, h, d, dst]] = k[[seq, h, d, slot]];
                            v[[seq, h, dst, d]] = v[[seq, h, slot, d]];
                        }
                    }
                }
            }
        }
        self.len = from + slots.len();
        Ok(())
    }

    /// Forgets every position from `len` on (for rolling back rejected drafts). A `len`
    /// at or past the current length changes nothing.
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }
}

/// One sequence's chunk in a ragged batched pass ([`TransformerLM::extend_ragged`]).
#[derive(Debug, Clone, Copy)]
pub struct Feed<'a> {
    /// The new tokens, stored at the sequence's cache slots `cache.len() ..`.
    pub tokens: &'a [u32],
    /// `None`: causal, token i at position `cache.len() + i` seeing the whole cache and
    /// the new tokens up to itself ([`TransformerLM::extend`]). `Some`: a tree chunk
    /// ([`TransformerLM::extend_tree`]).
    pub tree: Option<TreeMask<'a>>,
}

/// Where the nodes of a tree chunk sit and what they see (see
/// [`TransformerLM::extend_tree`], whose arguments these are).
#[derive(Debug, Clone, Copy)]
pub struct TreeMask<'a> {
    /// The RoPE position of each node.
    pub positions: &'a [usize],
    /// Every node sees the cache slots `0 .. prefix` (the committed sequence).
    pub prefix: usize,
    /// And, for node i, the slots `visible[i]`: its ancestors and its own slot.
    pub visible: &'a [Vec<usize>],
}

/// A decoder-only language model: a [`Config`] run over borrowed [`Params`].
///
/// The model uses the first `cfg.n_layers` blocks of `params`, so a shallower model can
/// share a deeper one's weights without copying them (lecture 6's "first layer only"
/// draft is the target's own parameters with `config_like(&cfg, 1)`).
#[derive(Debug, Clone)]
pub struct TransformerLM<'p> {
    params: &'p Params,
    cfg: Config,
    name: String,
    rope_cos: Array2<f32>,
    rope_sin: Array2<f32>,
    /// Per used layer: `W_q | W_k | W_v`, `W_o`, `W_gate | W_up`, `W_down`.
    layers: Vec<[Linear<'p>; 4]>,
    head: Linear<'p>,
}

/// The weights of one matrix product `y = x · W`: the parts of `W` as `Params` stores them
/// (side by side) and, on machines that run [`crate::gemm`]'s kernel, their packed copy.
#[derive(Debug, Clone)]
struct Linear<'p> {
    parts: Vec<ArrayView2<'p, f32>>,
    packed: Option<PackedMatrix>,
}

impl<'p> Linear<'p> {
    fn new(parts: Vec<ArrayView2<'p, f32>>, pack: bool) -> Self {
        let packed = if pack {
            // The parts were checked against the config (same rows); packing cannot fail.
            PackedMatrix::new(&parts).ok()
        } else {
            None
        };
        Linear { parts, packed }
    }

    /// `out = a · W`.
    fn apply(&self, a: ArrayView2<f32>, mut out: ArrayViewMut2<f32>, split: bool) {
        if let Some(w) = &self.packed {
            return matmul_packed(a, w, out, split);
        }
        let mut c0 = 0;
        for w in &self.parts {
            let cols = ndarray::s![.., c0..c0 + w.ncols()];
            matmul_into(a, *w, out.slice_mut(cols), split);
            c0 += w.ncols();
        }
    }
}

impl<'p> TransformerLM<'p> {
    /// A model of shape `cfg` over `params`. Errors if `cfg` is invalid or the parameters
    /// do not have the shapes it needs (see [`Params::check_against`]).
    pub fn new(params: &'p Params, cfg: Config, name: impl Into<String>) -> Result<Self, Error> {
        Self::build(params, cfg, name.into(), PackedMatrix::available())
    }

    /// [`new`](Self::new), choosing whether to pack the weights for [`crate::gemm`]
    /// (tests compare the two paths).
    pub(crate) fn build(
        params: &'p Params,
        cfg: Config,
        name: String,
        pack: bool,
    ) -> Result<Self, Error> {
        params.check_against(&cfg)?;
        let (rope_cos, rope_sin) = rope_tables(cfg.max_seq, cfg.head_dim(), cfg.rope_theta);
        let layers = params.layers[..cfg.n_layers]
            .par_iter()
            .map(|l| {
                [
                    Linear::new(vec![l.wq.view(), l.wk.view(), l.wv.view()], pack),
                    Linear::new(vec![l.wo.view()], pack),
                    Linear::new(vec![l.w_gate.view(), l.w_up.view()], pack),
                    Linear::new(vec![l.w_down.view()], pack),
                ]
            })
            .collect();
        Ok(TransformerLM {
            params,
            cfg,
            name,
            rope_cos,
            rope_sin,
            layers,
            head: Linear::new(vec![params.lm_head.view()], pack),
        })
    }

    /// The model's shape.
    pub fn cfg(&self) -> &Config {
        &self.cfg
    }

    /// The model's name (for printing).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The parameters it runs over (all of them, including blocks it does not use).
    pub fn params(&self) -> &'p Params {
        self.params
    }

    /// An empty cache for `batch` sequences with room for `capacity` positions.
    ///
    /// Capacity counts cache *slots*. It may exceed `max_seq`: speculative decoding stores
    /// a whole tree of candidates for a moment ([`extend_tree`](Self::extend_tree)); the
    /// RoPE *positions* fed are what `max_seq` limits. Errors if `batch` is 0.
    pub fn new_cache(&self, batch: usize, capacity: usize) -> Result<KvCache, Error> {
        if batch == 0 {
            return Err(Error::Shape("a batch needs at least one sequence".into()));
        }
        let (heads, hd, layers) = (self.cfg.n_heads, self.cfg.head_dim(), self.cfg.n_layers);
        Ok(KvCache {
            k: (0..layers)
                .map(|_| Array4::zeros((batch, heads, hd, capacity)))
                .collect(),
            v: (0..layers)
                .map(|_| Array4::zeros((batch, heads, capacity, hd)))
                .collect(),
            len: 0,
        })
    }

    /// Teacher-forced logits of every position: `tokens [B, T] → logits [B, T, vocab]`,
    /// position t seeing tokens `0..=t` of its own sequence.
    ///
    /// Errors: an empty batch, `T > max_seq`, a token id ≥ vocab.
    pub fn full_logits(&self, tokens: ArrayView2<u32>) -> Result<Array3<f32>, Error> {
        let (b, t) = tokens.dim();
        if b == 0 {
            return Err(Error::Shape("a batch needs at least one sequence".into()));
        }
        if t > self.cfg.max_seq {
            return Err(Error::TooLong {
                len: t,
                max: self.cfg.max_seq,
            });
        }
        self.check_tokens(tokens)?;
        // No cache to keep: each chunk holds one layer's keys and values at a time.
        let positions: Vec<usize> = (0..t).collect();
        let seqs = tokens
            .outer_iter()
            .map(|tokens| Seq {
                tokens,
                pos0: 0,
                positions: &positions,
                mask: Mask::Causal,
                kv: Vec::new(),
            })
            .collect();
        let logits = self.run_chunks(seqs, true);
        Ok(logits
            .into_shape_with_order((b, t, self.cfg.vocab))
            .expect("B·T rows of logits"))
    }

    /// Prefill: feeds `prompts [B, T]` to a new cache with room for `max_seq` positions,
    /// returning the cache and the logits of every prompt position `[B, T, vocab]`.
    pub fn prefill(&self, prompts: ArrayView2<u32>) -> Result<(KvCache, Array3<f32>), Error> {
        let mut cache = self.new_cache(prompts.nrows(), self.cfg.max_seq)?;
        let logits = self.extend(&mut cache, prompts)?;
        Ok((cache, logits))
    }

    /// One decode step: feeds one token per sequence, `tokens [B]`, at position
    /// `cache.len()`, and returns the next-token logits `[B, vocab]`.
    pub fn step(&self, cache: &mut KvCache, tokens: ArrayView1<u32>) -> Result<Array2<f32>, Error> {
        let logits = self.extend(cache, tokens.insert_axis(Axis(1)))?;
        Ok(logits.index_axis_move(Axis(1), 0))
    }

    /// Feeds `tokens [B, n]` at positions `cache.len() .. cache.len() + n`, each attending
    /// to the whole cache and causally within the chunk; returns logits `[B, n, vocab]`.
    /// [`prefill`](Self::prefill), [`step`](Self::step) and
    /// [`full_logits`](Self::full_logits) are this on a new or existing cache.
    ///
    /// Errors: a batch that differs from the cache's, a chunk that would overflow the
    /// cache, a token id ≥ vocab.
    pub fn extend(
        &self,
        cache: &mut KvCache,
        tokens: ArrayView2<u32>,
    ) -> Result<Array3<f32>, Error> {
        self.extend_with(cache, tokens, true)
    }

    /// [`extend`](Self::extend); `inner_split` allows a batch that forms a single chunk to
    /// split its matrix products across the pool (off when the caller already runs
    /// several batches in parallel).
    pub(crate) fn extend_with(
        &self,
        cache: &mut KvCache,
        tokens: ArrayView2<u32>,
        inner_split: bool,
    ) -> Result<Array3<f32>, Error> {
        let pos0 = cache.len;
        let n = tokens.ncols();
        if pos0 + n > self.cfg.max_seq {
            return Err(Error::TooLong {
                len: pos0 + n,
                max: self.cfg.max_seq,
            });
        }
        let positions: Vec<usize> = (pos0..pos0 + n).collect();
        self.extend_masked(cache, tokens, &positions, Mask::Causal, inner_split)
    }

    /// Feeds a chunk of a *tree* of candidate tokens, `tokens [B, n]` (the same tree shape
    /// for every sequence of the batch), at cache slots `cache.len() ..`.
    ///
    /// Node i is rotated for RoPE position `positions[i]` and attends to the first
    /// `prefix` slots of the cache (the committed sequence) plus the slots listed in
    /// `visible[i]` — its ancestors among earlier tree nodes and its own slot
    /// `cache.len() + i` — and to nothing else. Returns the logits `[B, n, vocab]`.
    /// Speculative decoding verifies a whole draft tree this way in one pass, then keeps
    /// the accepted path with [`KvCache::keep`].
    ///
    /// Errors: mismatched lengths; a visible slot that is below `prefix`, not yet written
    /// or not before the node's own slot or equal to it; a position ≥ `max_seq`; `prefix`
    /// beyond the cache; plus everything [`extend`](Self::extend) rejects.
    pub fn extend_tree(
        &self,
        cache: &mut KvCache,
        tokens: ArrayView2<u32>,
        positions: &[usize],
        prefix: usize,
        visible: &[Vec<usize>],
    ) -> Result<Array3<f32>, Error> {
        self.check_tree(cache.len, tokens.ncols(), positions, prefix, visible)?;
        self.extend_masked(
            cache,
            tokens,
            positions,
            Mask::Tree { prefix, visible },
            true,
        )
    }

    /// Checks one tree chunk of `n` nodes fed at slots `base ..` (see
    /// [`extend_tree`](Self::extend_tree)).
    fn check_tree(
        &self,
        base: usize,
        n: usize,
        positions: &[usize],
        prefix: usize,
        visible: &[Vec<usize>],
    ) -> Result<(), Error> {
        if positions.len() != n || visible.len() != n {
            return Err(Error::Shape(format!(
                "a tree chunk of {n} nodes needs {n} positions and {n} visibility lists, got {} and {}",
                positions.len(),
                visible.len()
            )));
        }
        if prefix > base {
            return Err(Error::Shape(format!(
                "prefix {prefix} is beyond the {base} cached slots"
            )));
        }
        if let Some(&p) = positions.iter().find(|&&p| p >= self.cfg.max_seq) {
            return Err(Error::TooLong {
                len: p + 1,
                max: self.cfg.max_seq,
            });
        }
        for (i, vis) in visible.iter().enumerate() {
            let own = base + i;
            if vis.iter().any(|&slot| slot < prefix || slot > own) || !vis.contains(&own) {
                return Err(Error::Shape(format!(
                    "node {i} may see its own slot {own} and earlier tree slots ≥ {prefix}, got {vis:?}"
                )));
            }
        }
        Ok(())
    }

    /// Feeds every sequence of a *ragged* batch its own chunk in one forward pass: each
    /// sequence has its own cache (of batch 1) holding its own number of positions, feeds
    /// its own number of tokens, causally or as a tree ([`Feed`]). This is how a serving
    /// engine runs speculative decoding over many requests at once: the matrix products
    /// see every sequence's rows together, each sequence attends only to its own cache.
    ///
    /// Returns the logits of every fed token, sequence after sequence: `[Σ n_i, vocab]`,
    /// the rows of `feeds[0]` first. Each cache's length grows by its sequence's tokens.
    /// The result for a sequence is bit for bit what [`extend`](Self::extend) or
    /// [`extend_tree`](Self::extend_tree) give it alone.
    ///
    /// Errors: as many caches as feeds; a cache of another batch than 1 or of another
    /// model; everything `extend` and `extend_tree` reject, for any sequence.
    pub fn extend_ragged(
        &self,
        caches: &mut [&mut KvCache],
        feeds: &[Feed<'_>],
    ) -> Result<Array2<f32>, Error> {
        if caches.len() != feeds.len() {
            return Err(Error::Shape(format!(
                "{} feeds for {} caches",
                feeds.len(),
                caches.len()
            )));
        }
        let cfg = &self.cfg;
        let mut causal: Vec<Vec<usize>> = Vec::with_capacity(feeds.len());
        for (cache, feed) in caches.iter().zip(feeds) {
            let (pos0, n) = (cache.len, feed.tokens.len());
            if cache.k.len() != cfg.n_layers || cache.batch() != 1 {
                return Err(Error::Shape(format!(
                    "a ragged batch needs one cache of batch 1 and {} layers per sequence, got batch {} and {} layers",
                    cfg.n_layers,
                    cache.batch(),
                    cache.k.len()
                )));
            }
            if pos0 + n > cache.capacity() {
                return Err(Error::TooLong {
                    len: pos0 + n,
                    max: cache.capacity(),
                });
            }
            if let Some(&token) = feed.tokens.iter().find(|&&t| t as usize >= cfg.vocab) {
                return Err(Error::TokenOutOfRange {
                    token,
                    vocab: cfg.vocab,
                });
            }
            match &feed.tree {
                Some(t) => self.check_tree(pos0, n, t.positions, t.prefix, t.visible)?,
                None if pos0 + n > cfg.max_seq => {
                    return Err(Error::TooLong {
                        len: pos0 + n,
                        max: cfg.max_seq,
                    });
                }
                None => {}
            }
            causal.push(match feed.tree {
                Some(_) => Vec::new(),
                None => (pos0..pos0 + n).collect(),
            });
        }
        let fed: Vec<usize> = feeds.iter().map(|f| f.tokens.len()).collect();
        let seqs = caches
            .iter_mut()
            .zip(feeds)
            .zip(&causal)
            .map(|((cache, feed), causal)| {
                let pos0 = cache.len;
                let kv = cache
                    .k
                    .iter_mut()
                    .zip(cache.v.iter_mut())
                    .map(|(k, v)| (k.index_axis_mut(Axis(0), 0), v.index_axis_mut(Axis(0), 0)))
                    .collect();
                let (positions, mask) = match feed.tree {
                    Some(t) => (
                        t.positions,
                        Mask::Tree {
                            prefix: t.prefix,
                            visible: t.visible,
                        },
                    ),
                    None => (&causal[..], Mask::Causal),
                };
                Seq {
                    tokens: ArrayView1::from(feed.tokens),
                    pos0,
                    positions,
                    mask,
                    kv,
                }
            })
            .collect();
        let logits = self.run_chunks(seqs, true);
        for (cache, n) in caches.iter_mut().zip(fed) {
            cache.len += n;
        }
        Ok(logits)
    }

    fn extend_masked(
        &self,
        cache: &mut KvCache,
        tokens: ArrayView2<u32>,
        positions: &[usize],
        mask: Mask<'_>,
        inner_split: bool,
    ) -> Result<Array3<f32>, Error> {
        let (b, n) = tokens.dim();
        let cfg = &self.cfg;
        if cache.k.len() != cfg.n_layers {
            return Err(Error::Shape(format!(
                "the cache has {} layers, the model {}",
                cache.k.len(),
                cfg.n_layers
            )));
        }
        if b != cache.batch() {
            return Err(Error::Shape(format!(
                "{b} sequences fed to a cache of batch {}",
                cache.batch()
            )));
        }
        let pos0 = cache.len;
        if pos0 + n > cache.capacity() {
            return Err(Error::TooLong {
                len: pos0 + n,
                max: cache.capacity(),
            });
        }
        self.check_tokens(tokens)?;
        let mut kv: Vec<Vec<_>> = (0..b).map(|_| Vec::with_capacity(cfg.n_layers)).collect();
        for (k, v) in cache.k.iter_mut().zip(cache.v.iter_mut()) {
            for ((seq, k), v) in kv
                .iter_mut()
                .zip(k.outer_iter_mut())
                .zip(v.outer_iter_mut())
            {
                seq.push((k, v));
            }
        }
        let seqs = tokens
            .outer_iter()
            .zip(kv)
            .map(|(tokens, kv)| Seq {
                tokens,
                pos0,
                positions,
                mask,
                kv,
            })
            .collect();
        let logits = self.run_chunks(seqs, inner_split);
        cache.len = pos0 + n;
        Ok(logits
            .into_shape_with_order((b, n, cfg.vocab))
            .expect("B·n rows of logits"))
    }

    fn check_tokens(&self, tokens: ArrayView2<u32>) -> Result<(), Error> {
        match tokens.iter().find(|&&t| t as usize >= self.cfg.vocab) {
            Some(&token) => Err(Error::TokenOutOfRange {
                token,
                vocab: self.cfg.vocab,
            }),
            None => Ok(()),
        }
    }

    /// The forward pass of checked sequences, each writing its new keys and values into
    /// its own cache from slot `pos0` on (which the caller then advances) or, without a
    /// cache, into scratch memory that lives for one layer of one chunk. Returns the
    /// logits of every new token, sequence after sequence, `[Σ n_i, vocab]`.
    fn run_chunks(&self, seqs: Vec<Seq<'_>>, inner_split: bool) -> Array2<f32> {
        let rows: usize = seqs.iter().map(|s| s.tokens.len()).sum();
        let mut logits = Array2::<f32>::zeros((rows, self.cfg.vocab));
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
        let mut work = Vec::with_capacity(chunks.len());
        for (seqs, r) in chunks {
            let (out, tail) = rest.split_at(Axis(0), r);
            rest = tail;
            work.push((seqs, out));
        }
        // `in_worker` keeps every nested parallel loop on a pool thread: without it each
        // of a decode step's few dozen parallel loops would be handed over from the
        // caller's thread and back (a context switch each).
        in_worker(|| {
            work.into_par_iter()
                .for_each(|(mut seqs, out)| self.forward_chunk(&mut seqs, out, split))
        });
        logits
    }

    /// The forward pass of a chunk of whole sequences (all with caches, or all without),
    /// logits written to `out [Σ n_i, vocab]`. `split` lets the matrix products and the
    /// per-sequence attention use the rayon pool (when the chunk is the whole batch).
    fn forward_chunk(&self, seqs: &mut [Seq<'_>], out: ArrayViewMut2<f32>, split: bool) {
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
        // Attention scores: what `attend` needs per sequence, more than `attend_tree` does.
        let score_lens: Vec<usize> = seqs
            .iter()
            .map(|s| s.tokens.len().max(heads) * (s.pos0 + s.tokens.len()))
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
        for (mut row, &t) in x
            .outer_iter_mut()
            .zip(seqs.iter().flat_map(|s| s.tokens.iter()))
        {
            row.assign(&self.params.embed.row(t as usize));
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
            let per_seq = |s: SeqLayer<'_>| self.attend_seq(s);
            if split {
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
        self.head.apply(h.view(), out, split);
    }

    /// One sequence's attention in one layer: rotates its queries and keys for their
    /// positions, appends keys and values to its cache and writes its attention output.
    fn attend_seq(&self, s: SeqLayer<'_>) {
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

/// `m` cut into consecutive row blocks of the given lengths.
fn split_rows<'a>(mut m: ArrayViewMut2<'a, f32>, lens: &[usize]) -> Vec<ArrayViewMut2<'a, f32>> {
    let mut parts = Vec::with_capacity(lens.len());
    for &n in lens {
        let (head, tail) = m.split_at(Axis(0), n);
        parts.push(head);
        m = tail;
    }
    parts
}

/// `buf` cut into consecutive slices of the given lengths.
fn split_slice(mut buf: &mut [f32], lens: impl Iterator<Item = usize>) -> Vec<&mut [f32]> {
    lens.map(|n| {
        let (head, tail) = std::mem::take(&mut buf).split_at_mut(n);
        buf = tail;
        head
    })
    .collect()
}

thread_local! {
    /// This thread's activation buffers for [`TransformerLM::forward_chunk`].
    static SCRATCH: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// `buf` as a `[rows, width]` matrix.
fn matrix(buf: &mut [f32], rows: usize, width: usize) -> ArrayViewMut2<'_, f32> {
    ArrayViewMut2::from_shape((rows, width), buf).expect("rows × width floats")
}

/// A thread's scratch memory, taken for one forward pass of a chunk and given back when
/// dropped. A pass that starts on the same thread meanwhile (rayon runs other tasks
/// while it waits) finds the slot empty and allocates its own, so nothing is shared.
struct Scratch(Vec<f32>);

impl Scratch {
    /// At least `len` floats; their values are whatever the last user left.
    fn take(len: usize) -> Self {
        let mut buf = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
        if buf.len() < len {
            buf.resize(len, 0.0);
        }
        Scratch(buf)
    }

    /// Consecutive slices of the given lengths.
    fn split<const N: usize>(&mut self, lens: [usize; N]) -> [&mut [f32]; N] {
        let mut rest = &mut self.0[..];
        lens.map(|len| {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(len);
            rest = tail;
            head
        })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.0);
        SCRATCH.with(|s| {
            let mut slot = s.borrow_mut();
            if slot.capacity() < buf.capacity() {
                *slot = buf;
            }
        });
    }
}

/// Runs `f` on a thread of the rayon pool (the current one if it already is one).
pub(crate) fn in_worker<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    rayon::scope(|_| f())
}

/// Which cached slots each new token attends to.
#[derive(Debug, Clone, Copy)]
enum Mask<'a> {
    /// Everything before it, and the new tokens up to itself.
    Causal,
    /// The first `prefix` slots, and the slots listed for it.
    Tree {
        prefix: usize,
        visible: &'a [Vec<usize>],
    },
}

/// One sequence of a forward pass: its new tokens, where they go and what they see.
struct Seq<'a> {
    /// The new tokens `[n]`.
    tokens: ArrayView1<'a, u32>,
    /// The cache slot of the first new token (0 without a cache).
    pos0: usize,
    /// The RoPE position of each new token `[n]`.
    positions: &'a [usize],
    /// Which slots each new token attends to.
    mask: Mask<'a>,
    /// Per layer, its keys *transposed* `[heads, head_dim, capacity]` and values `[heads, capacity,
    /// head_dim]`; empty without a cache (teacher forcing).
    kv: Vec<(ArrayViewMut3<'a, f32>, ArrayViewMut3<'a, f32>)>,
}

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

/// Rows (sequences × new tokens) a chunk of the batch aims for: big enough that the
/// matrix products run near peak, small enough that a chunk's buffers stay in cache and
/// lecture 6's 64 × 56-token batch splits into 8 chunks for the cores to share.
const ROWS_PER_CHUNK: usize = 256;

/// At most this many sequences per chunk: a decode step of 64 sequences runs as two
/// independent halves (measured faster on one core and on two than splitting each
/// matrix product; with packed weights, one chunk of 64 was measured again and was no
/// faster).
pub(crate) const MAX_SEQS_PER_CHUNK: usize = 32;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::init_params;

    #[test]
    fn packed_and_plain_weights_give_the_same_model() {
        let cfg = Config {
            vocab: 96,
            d_model: 32,
            n_layers: 2,
            n_heads: 4,
            d_ff: 72, // not a multiple of the panel width: a padded last panel
            max_seq: 24,
            norm_eps: 1e-5,
            rope_theta: 10000.0,
        };
        let params = init_params(&cfg, 7).unwrap();
        let tokens = Array2::from_shape_fn((5, 24), |(b, t)| ((b * 37 + t * 11) % 96) as u32);
        let packed = TransformerLM::build(&params, cfg, "packed".into(), true).unwrap();
        let plain = TransformerLM::build(&params, cfg, "plain".into(), false).unwrap();
        assert!(packed.head.packed.is_some() && plain.head.packed.is_none());
        let (a, b) = (
            packed.full_logits(tokens.view()).unwrap(),
            plain.full_logits(tokens.view()).unwrap(),
        );
        let worst = (&a - &b).iter().fold(0.0f32, |m, d| m.max(d.abs()));
        assert!(worst < 1e-4, "max |Δ| = {worst}");
        // A decode step (short input: the column split) agrees too.
        let mut caches = (
            packed.new_cache(5, 24).unwrap(),
            plain.new_cache(5, 24).unwrap(),
        );
        packed
            .extend(&mut caches.0, tokens.slice(ndarray::s![.., ..23]))
            .unwrap();
        plain
            .extend(&mut caches.1, tokens.slice(ndarray::s![.., ..23]))
            .unwrap();
        let last = tokens.column(23);
        let step = (&packed.step(&mut caches.0, last).unwrap()
            - &plain.step(&mut caches.1, last).unwrap())
            .iter()
            .fold(0.0f32, |m, d| m.max(d.abs()));
        assert!(step < 1e-4, "step max |Δ| = {step}");
    }

    /// The x86-64 path for CPUs without AVX2 or FMA, run on threads that pretend to be
    /// such a CPU ([`crate::cpu::baseline_pool`]): unpacked weights, `matrixmultiply`, and
    /// the baseline copies of the elementwise and attention loops.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_x86_64_baseline_path_matches_the_reference_and_the_default_path() {
        use crate::gemm::PackedMatrix;
        let cfg = Config {
            vocab: 80,
            d_model: 48,
            n_layers: 2,
            n_heads: 4,
            d_ff: 88,
            max_seq: 20,
            norm_eps: 1e-5,
            rope_theta: 10000.0,
        };
        let params = init_params(&cfg, 9).unwrap();
        let tokens = Array2::from_shape_fn((5, 20), |(b, t)| ((b * 29 + t * 13) % 80) as u32);
        let run = || {
            let m = TransformerLM::new(&params, cfg, "m").unwrap();
            let full = m.full_logits(tokens.view()).unwrap();
            // Prefill 12 positions (attention by matrix products), then one step at a time.
            let (mut cache, _) = m.prefill(tokens.slice(ndarray::s![.., ..12])).unwrap();
            let steps: Vec<Array2<f32>> = (12..20)
                .map(|pos| m.step(&mut cache, tokens.column(pos)).unwrap())
                .collect();
            (full, steps, m.head.packed.is_some())
        };
        let pool = crate::cpu::baseline_pool();
        let (full, steps, packed) = pool.install(|| {
            assert!(!crate::cpu::has_avx2_fma() && !PackedMatrix::available());
            run()
        });
        assert!(!packed, "no packed weights without FMA");
        let want = crate::reference::full_logits(&params, &cfg, tokens.view()).unwrap();
        let worst = (&full - &want).iter().fold(0.0f32, |m, d| m.max(d.abs()));
        assert!(worst < 1e-4, "baseline full_logits vs reference: {worst}");
        for (i, step) in steps.iter().enumerate() {
            let want = want.slice(ndarray::s![.., 12 + i, ..]);
            let worst = (step - &want).iter().fold(0.0f32, |m, d| m.max(d.abs()));
            assert!(worst < 1e-4, "baseline step {i} vs reference: {worst}");
        }
        // The default path (packed weights and AVX2 copies on this machine, if it has
        // them) agrees with the baseline to rounding.
        let (default_full, _, _) = run();
        let worst = (&full - &default_full)
            .iter()
            .fold(0.0f32, |m, d| m.max(d.abs()));
        assert!(worst < 1e-4, "baseline vs default: {worst}");
    }

    /// The baseline and AVX2 copies of the elementwise and attention loops do the same
    /// operations in the same order, so they give the same bits.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_baseline_and_avx2_copies_of_the_loops_give_the_same_bits() {
        use crate::kernels::{attend, attend_tree};
        use ndarray::Array3;
        let f = |i: usize| ((i * 7919) % 211) as f32 / 211.0 - 0.5;
        let (heads, hd, cap, pos0) = (2, 8, 24, 5);
        let kernels = |n: usize| {
            let d = heads * hd;
            let q = Array2::from_shape_fn((n, d), |(i, j)| f(i * d + j));
            let k = Array2::from_shape_fn((n, d), |(i, j)| f(1000 + i * d + j));
            let v = Array2::from_shape_fn((n, d), |(i, j)| f(2000 + i * d + j));
            let kt0 =
                Array3::from_shape_fn((heads, hd, cap), |(h, c, s)| f(3000 + h * 99 + c * 31 + s));
            let vc0 =
                Array3::from_shape_fn((heads, cap, hd), |(h, s, c)| f(5000 + h * 97 + s * 29 + c));
            let (mut kt, mut vc) = (kt0.clone(), vc0.clone());
            let mut out = Array2::zeros((n, d));
            let mut scores = vec![0.0f32; n.max(heads) * (pos0 + n)];
            let (qv, kv, vv) = (q.view(), k.view(), v.view());
            attend(
                qv,
                kv,
                vv,
                kt.view_mut(),
                vc.view_mut(),
                pos0,
                out.view_mut(),
                &mut scores,
            );
            // A chain as a tree: node i sees the cache and the nodes up to itself.
            let visible: Vec<Vec<usize>> = (0..n).map(|i| (pos0..=pos0 + i).collect()).collect();
            let (mut kt_tree, mut vc_tree) = (kt0.clone(), vc0.clone());
            let mut tree = Array2::zeros((n, d));
            attend_tree(
                qv,
                kv,
                vv,
                kt_tree.view_mut(),
                vc_tree.view_mut(),
                pos0,
                pos0,
                &visible,
                tree.view_mut(),
                &mut scores,
            );
            let x = Array2::from_shape_fn((9, 40), |(i, j)| f(7000 + i * 40 + j) * 3.0);
            let gain = ndarray::Array1::from_shape_fn(40, |j| 0.5 + f(9000 + j));
            let mut normed = Array2::zeros((9, 40));
            rms_norm_into(x.view(), gain.view(), 1e-5, normed.view_mut());
            let mut act = Array2::zeros((9, 20));
            swiglu_into(x.view(), act.view_mut());
            (out, tree, kt, vc, normed, act)
        };
        for n in [3, 9] {
            let baseline = crate::cpu::baseline_pool().install(|| kernels(n));
            assert_eq!(baseline, kernels(n), "{n} queries");
        }
    }
}
