//! The model: teacher-forced logits and incremental decoding with a KV cache, a whole
//! draft tree in one pass, and ragged batches — the entry points, each checking its
//! arguments before the forward pass (`forward.rs`) runs them.

use ndarray::parallel::prelude::*;
use ndarray::{Array2, Array3, ArrayView1, ArrayView2, Axis};

use crate::gemm::PackedMatrix;
use crate::linear::Linear;
use crate::ops::rope_tables;
use crate::seq::Seq;
use crate::tree_mask::{Mask, check_tree};
use crate::{Config, Error, Feed, KvCache, Params};

///
/// The model uses the first `cfg.n_layers` blocks of `params`, so a shallower model can
/// share a deeper one's weights without copying them (lecture 6's "first layer only"
/// draft is the target's own parameters with `config_like(&cfg, 1)`).
#[derive(Debug, Clone)]
pub struct TransformerLM<'p> {
    pub(crate) params: &'p Params,
    pub(crate) cfg: Config,
    pub(crate) name: String,
    pub(crate) rope_cos: Array2<f32>,
    pub(crate) rope_sin: Array2<f32>,
    /// Per used layer: `W_q | W_k | W_v`, `W_o`, `W_gate | W_up`, `W_down`.
    pub(crate) layers: Vec<[Linear<'p>; 4]>,
    pub(crate) head: Linear<'p>,
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
        let (rope_cos, rope_sin) = rope_tables(cfg.max_seq, cfg.head_dim(), cfg.rope_theta)?;
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
    /// RoPE *positions* fed are what `max_seq` limits. Errors if `batch` is 0 or the cache
    /// would hold more than [`MAX_FLOATS`](crate::MAX_FLOATS) floats.
    pub fn new_cache(&self, batch: usize, capacity: usize) -> Result<KvCache, Error> {
        KvCache::zeros(&self.cfg, batch, capacity)
    }

    /// Teacher-forced logits of every position: `tokens [B, T] → logits [B, T, vocab]`,
    /// position t seeing tokens `0..=t` of its own sequence.
    ///
    /// Errors: an empty batch, no token, `T > max_seq`, a token id ≥ vocab.
    pub fn full_logits(&self, tokens: ArrayView2<u32>) -> Result<Array3<f32>, Error> {
        Ok(self.teacher_forced(tokens, false)?.0)
    }

    /// [`full_logits`](Self::full_logits), and beside them (the same bits) the last hidden
    /// state of every position, `[B, T, d_model]`: the residual stream after the final
    /// RMSNorm, what the LM head reads and what draft heads read (Medusa's heads, EAGLE's
    /// draft layer), with no cache built.
    ///
    /// Errors: as [`full_logits`](Self::full_logits).
    pub fn full_hidden(
        &self,
        tokens: ArrayView2<u32>,
    ) -> Result<(Array3<f32>, Array3<f32>), Error> {
        let (logits, hidden) = self.teacher_forced(tokens, true)?;
        let (b, t) = tokens.dim();
        let hidden = hidden.expect("asked for the hidden states");
        let hidden = hidden.into_shape_with_order((b, t, self.cfg.d_model));
        Ok((logits, hidden.expect("B·T rows of hidden states")))
    }

    /// Every position of `tokens [B, T]` teacher-forced: the logits `[B, T, vocab]` and,
    /// with `hidden`, the last hidden states `[B · T, d_model]`.
    fn teacher_forced(
        &self,
        tokens: ArrayView2<u32>,
        hidden: bool,
    ) -> Result<(Array3<f32>, Option<Array2<f32>>), Error> {
        let (b, t) = tokens.dim();
        if b == 0 {
            return Err(Error::Shape("a batch needs at least one sequence".into()));
        }
        if t == 0 {
            return Err(Error::Shape("a pass needs at least one token".into()));
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
                inputs: None,
                pos0: 0,
                positions: &positions,
                mask: Mask::Causal,
                kv: Vec::new(),
            })
            .collect();
        let (logits, states) = self.run_chunks_reading(seqs, true, hidden);
        let logits = logits
            .into_shape_with_order((b, t, self.cfg.vocab))
            .expect("B·T rows of logits");
        Ok((logits, states))
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
    /// Errors: a batch that differs from the cache's, no token, a chunk that would overflow
    /// the cache, a token id ≥ vocab.
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
        check_tree(
            self.cfg.max_seq,
            cache.len,
            tokens.ncols(),
            positions,
            prefix,
            visible,
        )?;
        self.extend_masked(
            cache,
            tokens,
            positions,
            Mask::Tree { prefix, visible },
            true,
        )
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
        Ok(self.ragged(caches, feeds, false, None)?.0)
    }

    /// [`extend_ragged`](Self::extend_ragged), returning beside the logits (the same bits)
    /// the last hidden state of every fed token: the residual stream after the final
    /// RMSNorm, what the LM head reads, `[Σ n_i, d_model]`. Draft heads read it (Medusa's
    /// heads, EAGLE's draft layer).
    ///
    /// Errors: as [`extend_ragged`](Self::extend_ragged).
    pub fn extend_ragged_hidden(
        &self,
        caches: &mut [&mut KvCache],
        feeds: &[Feed<'_>],
    ) -> Result<(Array2<f32>, Array2<f32>), Error> {
        let (logits, hidden) = self.ragged(caches, feeds, true, None)?;
        Ok((logits, hidden.expect("asked for the hidden states")))
    }

    /// [`extend_ragged_hidden`](Self::extend_ragged_hidden), each fed position starting
    /// from the vector `inputs[j]` row gives it (`[n_j, d_model]`, one per token of
    /// `feeds[j]`) instead of its token's embedding: a draft head that reads features and
    /// tokens together (EAGLE's draft layer, whose fusion layer makes these vectors). The
    /// feeds' tokens are checked as ever but not read.
    ///
    /// Errors: as many inputs as feeds, each `[n_j, d_model]` with finite values; as
    /// [`extend_ragged`](Self::extend_ragged).
    pub fn extend_ragged_inputs(
        &self,
        caches: &mut [&mut KvCache],
        feeds: &[Feed<'_>],
        inputs: &[ArrayView2<'_, f32>],
    ) -> Result<(Array2<f32>, Array2<f32>), Error> {
        let fits = inputs.len() == feeds.len()
            && inputs
                .iter()
                .zip(feeds)
                .all(|(i, f)| i.dim() == (f.tokens.len(), self.cfg.d_model));
        if !fits {
            return Err(Error::Shape(format!(
                "{} inputs for {} feeds: each needs [tokens, {}]",
                inputs.len(),
                feeds.len(),
                self.cfg.d_model
            )));
        }
        if inputs.iter().any(|i| i.iter().any(|v| !v.is_finite())) {
            return Err(Error::Shape("an input that is not finite".into()));
        }
        let (logits, hidden) = self.ragged(caches, feeds, true, Some(inputs))?;
        Ok((logits, hidden.expect("asked for the hidden states")))
    }

    fn ragged(
        &self,
        caches: &mut [&mut KvCache],
        feeds: &[Feed<'_>],
        hidden: bool,
        inputs: Option<&[ArrayView2<'_, f32>]>,
    ) -> Result<(Array2<f32>, Option<Array2<f32>>), Error> {
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
                Some(t) => check_tree(cfg.max_seq, pos0, n, t.positions, t.prefix, t.visible)?,
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
            .enumerate()
            .map(|(j, ((cache, feed), causal))| {
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
                    inputs: inputs.map(|i| i[j].view()),
                    pos0,
                    positions,
                    mask,
                    kv,
                }
            })
            .collect();
        let out = self.run_chunks_reading(seqs, true, hidden);
        for (cache, n) in caches.iter_mut().zip(fed) {
            cache.len += n;
        }
        Ok(out)
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
        if n == 0 {
            return Err(Error::Shape("a pass needs at least one token".into()));
        }
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
                inputs: None,
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
}

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
}
