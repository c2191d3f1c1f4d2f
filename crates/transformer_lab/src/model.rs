//! The forward pass: teacher-forced logits and incremental decoding with a KV cache.

use ndarray::{Array2, Array3, Array4, ArrayView1, ArrayView2, Axis, s};

use crate::ops::{apply_rope, rms_norm, rope_tables, softmax_rows, swiglu_in_place};
use crate::{Config, Error, Params};

/// Keys and values of every position fed so far, per layer, for a batch of sequences
/// that all have the same length.
///
/// Storage is allocated once, for `capacity` positions; feeding tokens only writes into
/// it. Layout per layer: `[batch, n_heads, capacity, head_dim]`, so one head of one
/// sequence is a contiguous `[len, head_dim]` block.
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
        self.k.first().map_or(0, |k| k.dim().2)
    }

    /// Forgets every position from `len` on (for rolling back rejected drafts). A `len`
    /// at or past the current length changes nothing.
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }
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
}

impl<'p> TransformerLM<'p> {
    /// A model of shape `cfg` over `params`. Errors if `cfg` is invalid or the parameters
    /// do not have the shapes it needs (see [`Params::check_against`]).
    pub fn new(params: &'p Params, cfg: Config, name: impl Into<String>) -> Result<Self, Error> {
        params.check_against(&cfg)?;
        let (rope_cos, rope_sin) = rope_tables(cfg.max_seq, cfg.head_dim(), cfg.rope_theta);
        Ok(TransformerLM {
            params,
            cfg,
            name: name.into(),
            rope_cos,
            rope_sin,
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

    /// An empty cache for `batch` sequences of up to `capacity` positions.
    /// Errors if `batch` is 0 or `capacity` exceeds `max_seq`.
    pub fn new_cache(&self, batch: usize, capacity: usize) -> Result<KvCache, Error> {
        if batch == 0 {
            return Err(Error::Shape("a batch needs at least one sequence".into()));
        }
        if capacity > self.cfg.max_seq {
            return Err(Error::TooLong {
                len: capacity,
                max: self.cfg.max_seq,
            });
        }
        let shape = (batch, self.cfg.n_heads, capacity, self.cfg.head_dim());
        let layers = self.cfg.n_layers;
        Ok(KvCache {
            k: (0..layers).map(|_| Array4::zeros(shape)).collect(),
            v: (0..layers).map(|_| Array4::zeros(shape)).collect(),
            len: 0,
        })
    }

    /// Teacher-forced logits of every position: `tokens [B, T] → logits [B, T, vocab]`,
    /// position t seeing tokens `0..=t` of its own sequence.
    ///
    /// Errors: an empty batch, `T > max_seq`, a token id ≥ vocab.
    pub fn full_logits(&self, tokens: ArrayView2<u32>) -> Result<Array3<f32>, Error> {
        let (b, t) = tokens.dim();
        let mut cache = self.new_cache(b, t)?;
        self.extend(&mut cache, tokens)
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
        if let Some(&token) = tokens.iter().find(|&&t| t as usize >= cfg.vocab) {
            return Err(Error::TokenOutOfRange {
                token,
                vocab: cfg.vocab,
            });
        }

        // x: [B·n, d_model], row r = (sequence r / n, position pos0 + r % n).
        let ids: Vec<usize> = tokens.iter().map(|&t| t as usize).collect();
        let mut x = self.params.embed.select(Axis(0), &ids);
        let (hd, heads) = (cfg.head_dim(), cfg.n_heads);
        let scale = 1.0 / (hd as f32).sqrt();
        for (l, layer) in self.params.layers[..cfg.n_layers].iter().enumerate() {
            let h = rms_norm(x.view(), layer.attn_norm.view(), cfg.norm_eps);
            let mut q = h.dot(&layer.wq);
            let mut k = h.dot(&layer.wk);
            let v = h.dot(&layer.wv);
            for r in 0..b * n {
                let (seq, pos) = (r / n, pos0 + r % n);
                for head in 0..heads {
                    let cols = s![r, head * hd..(head + 1) * hd];
                    apply_rope(
                        q.slice_mut(cols),
                        pos,
                        self.rope_cos.view(),
                        self.rope_sin.view(),
                    );
                    apply_rope(
                        k.slice_mut(cols),
                        pos,
                        self.rope_cos.view(),
                        self.rope_sin.view(),
                    );
                    cache.k[l]
                        .slice_mut(s![seq, head, pos, ..])
                        .assign(&k.slice(cols));
                    cache.v[l]
                        .slice_mut(s![seq, head, pos, ..])
                        .assign(&v.slice(cols));
                }
            }
            // Causal attention per (sequence, head) against the cache.
            let total = pos0 + n;
            let mut attn = Array2::<f32>::zeros((b * n, cfg.d_model));
            for seq in 0..b {
                for head in 0..heads {
                    let qh = q.slice(s![seq * n..(seq + 1) * n, head * hd..(head + 1) * hd]);
                    let kh = cache.k[l].slice(s![seq, head, ..total, ..]);
                    let vh = cache.v[l].slice(s![seq, head, ..total, ..]);
                    let mut scores = qh.dot(&kh.t()) * scale; // [n, total]
                    for i in 0..n {
                        scores
                            .slice_mut(s![i, pos0 + i + 1..])
                            .fill(f32::NEG_INFINITY);
                    }
                    softmax_rows(scores.view_mut());
                    attn.slice_mut(s![seq * n..(seq + 1) * n, head * hd..(head + 1) * hd])
                        .assign(&scores.dot(&vh));
                }
            }
            x += &attn.dot(&layer.wo);
            let h = rms_norm(x.view(), layer.mlp_norm.view(), cfg.norm_eps);
            let mut gate = h.dot(&layer.w_gate);
            swiglu_in_place(gate.view_mut(), h.dot(&layer.w_up).view());
            x += &gate.dot(&layer.w_down);
        }
        cache.len = pos0 + n;
        let h = rms_norm(x.view(), self.params.final_norm.view(), cfg.norm_eps);
        let logits = h.dot(&self.params.lm_head);
        Ok(logits
            .into_shape_with_order((b, n, cfg.vocab))
            .expect("B·n rows reshape to [B, n, vocab]"))
    }
}
