//! The KV cache: keys and values of every position fed so far, and how speculative
//! decoding rolls it back.

use ndarray::Array4;

use crate::{Config, Error};

/// Keys and values of every position fed so far, per layer, for a batch of sequences
/// that all have the same length.
///
/// Storage is allocated once, for `capacity` positions; feeding tokens only writes into
/// it. Layout per layer: keys `[batch, n_heads, head_dim, capacity]` (transposed, so a
/// query's scores are a sum of contiguous rows) and values `[batch, n_heads, capacity,
/// head_dim]`.
#[derive(Debug, Clone)]
pub struct KvCache {
    pub(crate) k: Vec<Array4<f32>>,
    pub(crate) v: Vec<Array4<f32>>,
    pub(crate) len: usize,
}

impl KvCache {
    /// An empty cache of `cfg`'s shape for `batch` sequences and `capacity` slots (see
    /// [`TransformerLM::new_cache`](crate::TransformerLM::new_cache)). Errors if `batch`
    /// is 0 or the cache would hold more than [`MAX_FLOATS`](crate::MAX_FLOATS) floats.
    pub(crate) fn zeros(cfg: &Config, batch: usize, capacity: usize) -> Result<Self, Error> {
        check_size(cfg, batch, capacity)?;
        let (heads, hd, layers) = (cfg.n_heads, cfg.head_dim(), cfg.n_layers);
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

/// Checks that a cache of `cfg`'s shape for `batch` sequences and `capacity` slots can be
/// allocated: `batch ≥ 1` and at most [`MAX_FLOATS`](crate::MAX_FLOATS) floats, keys and
/// values of every layer together (`2 · n_layers · batch · d_model · capacity`).
pub(crate) fn check_size(cfg: &Config, batch: usize, capacity: usize) -> Result<(), Error> {
    if batch == 0 {
        return Err(Error::Shape("a batch needs at least one sequence".into()));
    }
    let floats = [2, cfg.n_layers, batch, cfg.d_model, capacity]
        .into_iter()
        .try_fold(1usize, usize::checked_mul);
    if floats.is_none_or(|n| n > crate::MAX_FLOATS) {
        return Err(Error::Shape(format!(
            "a KV cache of {batch} sequences × {capacity} slots for {} layers of width {} \
             exceeds the limit of {} floats (MAX_FLOATS)",
            cfg.n_layers,
            cfg.d_model,
            crate::MAX_FLOATS
        )));
    }
    Ok(())
}
