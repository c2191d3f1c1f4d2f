//! One interface over the models this crate times: feed each sequence of a batch its own
//! new tokens, get their logits. The target and its first-layer draft are
//! [`transformer_lab::TransformerLM`]s; the INT4 draft is [`crate::Int4Lm`].

use ndarray::Array2;
use transformer_lab::{Config, Feed, KvCache, TransformerLM};

use crate::Error;

/// A decoder-only language model with a per-sequence KV cache.
pub trait Lm: Sync {
    /// One sequence's cached keys and values.
    type Cache: Send;

    /// Vocabulary size.
    fn vocab(&self) -> usize;

    /// Longest sequence the model accepts.
    fn max_seq(&self) -> usize;

    /// An empty cache for one sequence of up to [`max_seq`](Self::max_seq) positions.
    fn new_cache(&self) -> Result<Self::Cache, Error>;

    /// Positions cached so far.
    fn cache_len(cache: &Self::Cache) -> usize;

    /// Forgets every position from `len` on (a `len` at or past the length changes nothing).
    fn truncate(cache: &mut Self::Cache, len: usize);

    /// Feeds sequence `i` the tokens `feeds[i]` after what `caches[i]` holds (causally) and
    /// returns the logits of every fed token, sequence after sequence: `[Σ feeds[i].len(),
    /// vocab]`. Errors: different counts of caches and feeds, a token out of range, a
    /// sequence growing past [`max_seq`](Self::max_seq).
    fn extend(
        &self,
        caches: &mut [&mut Self::Cache],
        feeds: &[&[u32]],
    ) -> Result<Array2<f32>, Error>;

    /// Bytes of weights one forward pass reads (every matrix once, whatever the batch; the
    /// embedding rows of the fed tokens are left out).
    fn weight_bytes(&self) -> u64;

    /// Bytes of KV cache one position of one sequence occupies.
    fn kv_bytes_per_token(&self) -> u64;

    /// The model's shape.
    fn config(&self) -> Config;

    /// FLOPs of one pass feeding `n_new` tokens to each of `batch` sequences after `ctx`
    /// cached positions (`transformer_lab::Config::forward_flops`: the matrix products and
    /// attention under the causal mask).
    fn flops(&self, batch: usize, ctx: usize, n_new: usize) -> f64 {
        self.config().forward_flops(batch, ctx, n_new)
    }

    /// Parallel regions a pass starts and joins on rayon's pool, an estimate: per layer the
    /// Q·K·V, output, gate·up and down products and the attention, then the head's product,
    /// `5 · layers + 1`. Exact for [`crate::Int4Lm`]; for `TransformerLM` about right at a
    /// small batch of demo 6's model (it also runs products under 2²⁰ FLOPs whole, and wraps
    /// its pass in two more regions), and an overstatement at a large batch, which runs as
    /// pieces in one region: by at most this many regions, negligible beside such a pass.
    fn parallel_regions(&self) -> usize {
        5 * self.config().n_layers + 1
    }
}

impl Lm for TransformerLM<'_> {
    type Cache = KvCache;

    fn vocab(&self) -> usize {
        self.cfg().vocab
    }

    fn max_seq(&self) -> usize {
        self.cfg().max_seq
    }

    fn new_cache(&self) -> Result<KvCache, Error> {
        Ok(TransformerLM::new_cache(self, 1, self.cfg().max_seq)?)
    }

    fn cache_len(cache: &KvCache) -> usize {
        cache.len()
    }

    fn truncate(cache: &mut KvCache, len: usize) {
        cache.truncate(len);
    }

    fn extend(&self, caches: &mut [&mut KvCache], feeds: &[&[u32]]) -> Result<Array2<f32>, Error> {
        let feeds: Vec<Feed<'_>> = feeds
            .iter()
            .map(|tokens| Feed { tokens, tree: None })
            .collect();
        Ok(self.extend_ragged(caches, &feeds)?)
    }

    fn weight_bytes(&self) -> u64 {
        f32_weight_bytes(self.cfg())
    }

    fn kv_bytes_per_token(&self) -> u64 {
        f32_kv_bytes_per_token(self.cfg())
    }

    fn config(&self) -> Config {
        *self.cfg()
    }
}

/// Bytes of an f32 number: the toy models' weights, activations and KV cache.
pub const F32_BYTES: u64 = 4;

/// Bytes an f32 model of shape `cfg` reads per pass: every block's seven matrices and two
/// norm gains, the final norm and the LM head, 4 bytes each (the embedding table is a
/// lookup of the fed tokens' rows, left out, as `llm_math` leaves it out).
pub fn f32_weight_bytes(cfg: &transformer_lab::Config) -> u64 {
    // Saturating: a shape whose bytes overflow u64 holds more than any machine, and then
    // reads as u64::MAX, which no memory check lets through.
    let (d, f, v) = (cfg.d_model as u64, cfg.d_ff as u64, cfg.vocab as u64);
    let block = (d.saturating_mul(d).saturating_mul(4))
        .saturating_add(d.saturating_mul(f).saturating_mul(3))
        .saturating_add(d.saturating_mul(2));
    let all = (cfg.n_layers as u64)
        .saturating_mul(block)
        .saturating_add(d)
        .saturating_add(d.saturating_mul(v));
    F32_BYTES.saturating_mul(all)
}

/// Bytes of f32 KV cache one token takes in a model of shape `cfg`: a key and a value of
/// `d_model` numbers in every layer (no grouped KV heads in the toy models).
pub fn f32_kv_bytes_per_token(cfg: &transformer_lab::Config) -> u64 {
    2 * cfg.n_layers as u64 * cfg.d_model as u64 * F32_BYTES
}
