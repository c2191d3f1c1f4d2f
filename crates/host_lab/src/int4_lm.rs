//! The INT4 draft: a model's own weights stored as 4-bit groups ([`crate::int4`]), run
//! by a forward pass of its own (the same Llama-style block as `transformer_lab`'s:
//! pre-norm RMSNorm, fused Q/K/V, RoPE, causal attention over a KV cache, SwiGLU, LM head).
//!
//! It exists because `transformer_lab::TransformerLM` holds f32 weights only: a
//! dequantized f32 copy would read as many bytes as the target and could never be a
//! cheaper draft. Its products are W4A8 ([`crate::int4::matmul`]: inputs quantized to int8
//! per group), so it is the dequantized model to about 1% of its logits. The matrix
//! products are the INT4 kernel's. Attention is plain loops over a row-per-position cache;
//! a pass of one sequence (a draft step at batch 1) attends in groups of heads on the
//! pool: its weights are so few that one core attending while the other waited made the
//! step 1.16–1.38× slower (two builds timed in turn, on the development machine).

use ndarray::parallel::prelude::*;
use ndarray::{Array1, Array2, ArrayView2, ArrayViewMut2, Axis};
use transformer_lab::ops::{rms_norm, rope_pairs, rope_tables, silu, softmax_in_place};
use transformer_lab::{Config, Params};

use crate::int4::{Int4Matrix, matmul};
use crate::{Error, Lm};

/// Heads per attention task when an [`Int4Lm`] pass has one sequence.
const HEAD_GROUP: usize = 3;

/// One block's INT4 weights and f32 norm gains.
#[derive(Debug, Clone)]
struct Block {
    attn_norm: Array1<f32>,
    mlp_norm: Array1<f32>,
    qkv: Int4Matrix,
    o: Int4Matrix,
    gate_up: Int4Matrix,
    down: Int4Matrix,
}

/// A model whose every matrix (blocks and LM head) is an [`Int4Matrix`].
#[derive(Debug, Clone)]
pub struct Int4Lm {
    cfg: Config,
    embed: Array2<f32>,
    blocks: Vec<Block>,
    final_norm: Array1<f32>,
    head: Int4Matrix,
    rope_cos: Array2<f32>,
    rope_sin: Array2<f32>,
    /// Tests only: multiply by the dequantized weights in f32 instead of the W4A8 kernel,
    /// so the forward pass can be compared with `transformer_lab`'s bit-closely.
    exact_products: bool,
}

/// One sequence's keys and values for an [`Int4Lm`]: per layer `[capacity, d_model]`, row
/// = position (keys after RoPE).
#[derive(Debug, Clone)]
pub struct Int4Cache {
    k: Vec<Array2<f32>>,
    v: Vec<Array2<f32>>,
    len: usize,
}

impl Int4Lm {
    /// Quantizes the first `cfg.n_layers` blocks of `params` and its LM head. Errors: an
    /// invalid `cfg`, parameters of other shapes, widths the INT4 groups do not divide.
    pub fn quantize(params: &Params, cfg: Config) -> Result<Self, Error> {
        params.check_against(&cfg)?;
        let blocks = params.layers[..cfg.n_layers]
            .par_iter()
            .map(|l| -> Result<Block, Error> {
                Ok(Block {
                    attn_norm: l.attn_norm.clone(),
                    mlp_norm: l.mlp_norm.clone(),
                    qkv: Int4Matrix::quantize(&[l.wq.view(), l.wk.view(), l.wv.view()])?,
                    o: Int4Matrix::quantize(&[l.wo.view()])?,
                    gate_up: Int4Matrix::quantize(&[l.w_gate.view(), l.w_up.view()])?,
                    down: Int4Matrix::quantize(&[l.w_down.view()])?,
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let (rope_cos, rope_sin) = rope_tables(cfg.max_seq, cfg.head_dim(), cfg.rope_theta)?;
        Ok(Int4Lm {
            cfg,
            embed: params.embed.clone(),
            blocks,
            final_norm: params.final_norm.clone(),
            head: Int4Matrix::quantize(&[params.lm_head.view()])?,
            rope_cos,
            rope_sin,
            exact_products: false,
        })
    }

    /// `out = a · W` by the INT4 kernel (or, in tests, exactly by the dequantized weights).
    fn product(
        &self,
        a: ArrayView2<f32>,
        w: &Int4Matrix,
        mut out: ArrayViewMut2<f32>,
    ) -> Result<(), Error> {
        if self.exact_products {
            out.assign(&a.dot(&w.dequantize()));
            return Ok(());
        }
        matmul(a, w, out)
    }

    /// The model's shape.
    pub fn cfg(&self) -> &Config {
        &self.cfg
    }

    /// The f32 parameters these INT4 weights read back as (norms and embedding as they
    /// were), for comparing this forward pass with `transformer_lab`'s.
    ///
    /// Errors: `like` is not of this model's shape.
    pub fn dequantized(&self, like: &Params) -> Result<Params, Error> {
        like.check_against(&self.cfg)?;
        let mut p = like.clone();
        let d = self.cfg.d_model;
        let f = self.cfg.d_ff;
        for (l, b) in p.layers.iter_mut().zip(&self.blocks) {
            let qkv = b.qkv.dequantize();
            l.wq.assign(&qkv.slice(ndarray::s![.., ..d]));
            l.wk.assign(&qkv.slice(ndarray::s![.., d..2 * d]));
            l.wv.assign(&qkv.slice(ndarray::s![.., 2 * d..]));
            l.wo.assign(&b.o.dequantize());
            let gu = b.gate_up.dequantize();
            l.w_gate.assign(&gu.slice(ndarray::s![.., ..f]));
            l.w_up.assign(&gu.slice(ndarray::s![.., f..]));
            l.w_down.assign(&b.down.dequantize());
        }
        p.lm_head.assign(&self.head.dequantize());
        Ok(p)
    }

    /// One sequence's new rows for one layer: RoPE on q and k, the new keys and values
    /// appended to the cache.
    fn rope_and_store(&self, layer: usize, cache: &mut Int4Cache, qkv: &mut ArrayViewMut2<f32>) {
        let (d, heads, hd) = (self.cfg.d_model, self.cfg.n_heads, self.cfg.head_dim());
        let pos0 = cache.len;
        for (i, mut row) in qkv.outer_iter_mut().enumerate() {
            let p = pos0 + i;
            let row = row.as_slice_mut().expect("contiguous rows");
            let (c, s) = (self.rope_cos.row(p), self.rope_sin.row(p));
            let (c, s) = (
                c.as_slice().expect("table row"),
                s.as_slice().expect("table row"),
            );
            for h in 0..2 * heads {
                rope_pairs(&mut row[h * hd..(h + 1) * hd], c, s); // q heads, then k heads
            }
            cache.k[layer]
                .row_mut(p)
                .assign(&ndarray::ArrayView1::from(&row[d..2 * d]));
            cache.v[layer]
                .row_mut(p)
                .assign(&ndarray::ArrayView1::from(&row[2 * d..]));
        }
    }

    /// Attention of one sequence's new rows (`qkv`, already rotated and stored in `cache`
    /// from position `cache.len`) for one layer, heads `h0 ..` for as many as `out` has
    /// columns: each query against positions `0..=p`.
    fn attend_heads(
        &self,
        layer: usize,
        cache: &Int4Cache,
        qkv: ArrayView2<f32>,
        h0: usize,
        mut out: ArrayViewMut2<f32>,
    ) {
        let (hd, pos0) = (self.cfg.head_dim(), cache.len);
        let scale = 1.0 / (hd as f32).sqrt();
        let mut scores = vec![0.0f32; pos0 + qkv.nrows()];
        let (kc, vc) = (&cache.k[layer], &cache.v[layer]);
        for (i, (row, mut o)) in qkv.outer_iter().zip(out.outer_iter_mut()).enumerate() {
            let seen = pos0 + i + 1;
            let o = o.as_slice_mut().expect("contiguous rows");
            for (g, oh) in o.chunks_exact_mut(hd).enumerate() {
                let h = h0 + g;
                let q = &row.as_slice().expect("contiguous rows")[h * hd..(h + 1) * hd];
                for (j, s) in scores[..seen].iter_mut().enumerate() {
                    let k = &kc.row(j).to_slice().expect("contiguous rows")[h * hd..(h + 1) * hd];
                    *s = dot(q, k) * scale;
                }
                softmax_in_place(&mut scores[..seen]);
                oh.fill(0.0);
                for (j, &w) in scores[..seen].iter().enumerate() {
                    let v = &vc.row(j).to_slice().expect("contiguous rows")[h * hd..(h + 1) * hd];
                    for (x, &y) in oh.iter_mut().zip(v) {
                        *x += w * y;
                    }
                }
            }
        }
    }
}

impl Lm for Int4Lm {
    type Cache = Int4Cache;

    fn vocab(&self) -> usize {
        self.cfg.vocab
    }

    fn max_seq(&self) -> usize {
        self.cfg.max_seq
    }

    fn new_cache(&self) -> Result<Int4Cache, Error> {
        let (n, d) = (self.cfg.max_seq, self.cfg.d_model);
        Ok(Int4Cache {
            k: (0..self.cfg.n_layers)
                .map(|_| Array2::zeros((n, d)))
                .collect(),
            v: (0..self.cfg.n_layers)
                .map(|_| Array2::zeros((n, d)))
                .collect(),
            len: 0,
        })
    }

    fn cache_len(cache: &Int4Cache) -> usize {
        cache.len
    }

    fn truncate(cache: &mut Int4Cache, len: usize) {
        cache.len = cache.len.min(len);
    }

    fn extend(
        &self,
        caches: &mut [&mut Int4Cache],
        feeds: &[&[u32]],
    ) -> Result<Array2<f32>, Error> {
        let cfg = &self.cfg;
        check_feeds(caches.iter().map(|c| c.len), feeds, cfg.vocab, cfg.max_seq)?;
        let rows: usize = feeds.iter().map(|f| f.len()).sum();
        let d = cfg.d_model;
        let mut x = Array2::<f32>::zeros((rows, d));
        for (mut row, &t) in x.outer_iter_mut().zip(feeds.iter().flat_map(|f| f.iter())) {
            row.assign(&self.embed.row(t as usize));
        }
        let mut qkv = Array2::<f32>::zeros((rows, 3 * d));
        let mut attn = Array2::<f32>::zeros((rows, d));
        let mut h2 = Array2::<f32>::zeros((rows, d));
        let mut gu = Array2::<f32>::zeros((rows, 2 * cfg.d_ff));
        for (l, b) in self.blocks.iter().enumerate() {
            let h = rms_norm(x.view(), b.attn_norm.view(), cfg.norm_eps)?;
            self.product(h.view(), &b.qkv, qkv.view_mut())?;
            let mut parts = Vec::with_capacity(caches.len());
            let (mut q_rest, mut a_rest) = (qkv.view_mut(), attn.view_mut());
            for (cache, f) in caches.iter_mut().zip(feeds) {
                let (q, qt) = q_rest.split_at(Axis(0), f.len());
                let (a, at) = a_rest.split_at(Axis(0), f.len());
                (q_rest, a_rest) = (qt, at);
                parts.push((&mut **cache, q, a));
            }
            // A few rows per sequence: on this thread, so that a layer still opens the
            // five parallel regions `Lm::parallel_regions` counts.
            for (cache, q, _) in parts.iter_mut() {
                self.rope_and_store(l, cache, q);
            }
            // One sequence (batch 1): its heads in groups of HEAD_GROUP on the pool, so
            // that both cores attend rather than one while the other waits for the next
            // product. Several: one task per sequence (its heads share the cache lines).
            let per_task = if parts.len() == 1 {
                HEAD_GROUP
            } else {
                cfg.n_heads
            };
            let cols = per_task * cfg.head_dim();
            let mut tasks = Vec::new();
            for (cache, q, a) in parts.iter_mut() {
                let (cache, q) = (&**cache, q.view());
                for (g, a) in a.axis_chunks_iter_mut(Axis(1), cols).enumerate() {
                    tasks.push((cache, q, g * per_task, a));
                }
            }
            tasks
                .into_par_iter()
                .for_each(|(c, q, h0, a)| self.attend_heads(l, c, q, h0, a));
            self.product(attn.view(), &b.o, h2.view_mut())?;
            x += &h2;
            let h = rms_norm(x.view(), b.mlp_norm.view(), cfg.norm_eps)?;
            self.product(h.view(), &b.gate_up, gu.view_mut())?;
            let f = cfg.d_ff;
            let mut act = Array2::<f32>::zeros((rows, f));
            for (mut a, g) in act.outer_iter_mut().zip(gu.outer_iter()) {
                for (j, a) in a.iter_mut().enumerate() {
                    *a = silu(g[j]) * g[f + j];
                }
            }
            self.product(act.view(), &b.down, h2.view_mut())?;
            x += &h2;
        }
        for (cache, f) in caches.iter_mut().zip(feeds) {
            cache.len += f.len();
        }
        let h = rms_norm(x.view(), self.final_norm.view(), cfg.norm_eps)?;
        let mut logits = Array2::<f32>::zeros((rows, cfg.vocab));
        self.product(h.view(), &self.head, logits.view_mut())?;
        Ok(logits)
    }

    fn weight_bytes(&self) -> u64 {
        let norms = 4 * (2 * self.blocks.len() + 1) * self.cfg.d_model;
        let matrices: usize = self
            .blocks
            .iter()
            .map(|b| b.qkv.bytes() + b.o.bytes() + b.gate_up.bytes() + b.down.bytes())
            .sum::<usize>()
            + self.head.bytes();
        (matrices + norms) as u64
    }

    fn kv_bytes_per_token(&self) -> u64 {
        crate::lm::f32_kv_bytes_per_token(&self.cfg)
    }

    fn config(&self) -> Config {
        self.cfg
    }
}

transformer_lab::cpu::with_avx2! {
    /// `Σ a_i · b_i` in 8 running sums (lanes `i mod 8`) added at the end, so that the
    /// additions of a score do not wait on each other (with one running sum the attention
    /// took 13% of a batch-1 draft step's samples under perf). With AVX2 where the CPU has
    /// it. `a` and `b` have the same length.
    fn dot(a: &[f32], b: &[f32]) -> f32 => dot_body
}

#[inline(always)]
fn dot_body(a: &[f32], b: &[f32]) -> f32 {
    debug_assert_eq!(a.len(), b.len());
    let mut acc = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for ((s, &x), &y) in acc.iter_mut().zip(x).zip(y) {
            *s += x * y;
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// The checks every [`Lm::extend`] makes: one feed per cache, tokens in range, no
/// sequence past `max_seq`.
pub(crate) fn check_feeds(
    lens: impl Iterator<Item = usize>,
    feeds: &[&[u32]],
    vocab: usize,
    max_seq: usize,
) -> Result<(), Error> {
    let lens: Vec<usize> = lens.collect();
    if lens.len() != feeds.len() {
        return Err(Error::Argument(format!(
            "{} feeds for {} caches",
            feeds.len(),
            lens.len()
        )));
    }
    for (len, f) in lens.iter().zip(feeds) {
        if let Some(&token) = f.iter().find(|&&t| t as usize >= vocab) {
            return Err(transformer_lab::Error::TokenOutOfRange { token, vocab }.into());
        }
        if len + f.len() > max_seq {
            return Err(transformer_lab::Error::TooLong {
                len: len + f.len(),
                max: max_seq,
            }
            .into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use transformer_lab::{TransformerLM, init_params};

    fn small() -> Config {
        Config {
            vocab: 96,
            d_model: 128,
            n_layers: 2,
            n_heads: 4,
            d_ff: 192,
            max_seq: 32,
            norm_eps: 1e-5,
            rope_theta: 10000.0,
        }
    }

    #[test]
    fn the_int4_forward_pass_is_transformer_labs_on_the_dequantized_weights_to_int8_inputs() {
        let cfg = small();
        let params = init_params(&cfg, 3).unwrap();
        let kernel = Int4Lm::quantize(&params, cfg).unwrap();
        let deq = kernel.dequantized(&params).unwrap();
        let other = init_params(
            &Config {
                d_ff: cfg.d_ff + 8,
                ..cfg
            },
            3,
        )
        .unwrap();
        assert!(
            kernel.dequantized(&other).is_err(),
            "another shape is an error"
        );
        let reference = TransformerLM::new(&deq, cfg, "dequantized").unwrap();
        let exact = Int4Lm {
            exact_products: true,
            ..kernel.clone()
        };
        for (q, tolerance) in [(&exact, 1e-4), (&kernel, 0.02)] {
            // Two sequences of different lengths, fed in two ragged passes.
            let (a, b): (Vec<u32>, Vec<u32>) = (
                (0..9).map(|i| i * 7 % 96).collect(),
                (0..5).map(|i| i * 11 % 96).collect(),
            );
            let mut qc = [q.new_cache().unwrap(), q.new_cache().unwrap()];
            let mut rc = [
                Lm::new_cache(&reference).unwrap(),
                Lm::new_cache(&reference).unwrap(),
            ];
            for (fa, fb) in [(&a[..6], &b[..2]), (&a[6..], &b[2..])] {
                let [q0, q1] = &mut qc;
                let [r0, r1] = &mut rc;
                let ours = q.extend(&mut [q0, q1], &[fa, fb]).unwrap();
                let theirs = Lm::extend(&reference, &mut [r0, r1], &[fa, fb]).unwrap();
                let worst = (&ours - &theirs).iter().fold(0.0f32, |m, x| m.max(x.abs()));
                let size = theirs.iter().fold(0.0f32, |m, x| m.max(x.abs()));
                // Exact products: the same model to rounding. The INT4 kernel quantizes its
                // inputs to int8 per group (W4A8): logits agree to well under 2% of their range.
                assert!(
                    worst < tolerance * size,
                    "{worst} against logits up to {size}"
                );
            }
            assert_eq!((qc[0].len, qc[1].len), (9, 5));
        }
    }

    #[test]
    fn a_sequence_alone_gets_the_bits_it_gets_beside_another() {
        // Alone, a pass attends in groups of heads (4 heads: a group of 3 and one of 1);
        // beside another sequence, each sequence's heads are one task.
        let cfg = small();
        let q = Int4Lm::quantize(&init_params(&cfg, 5).unwrap(), cfg).unwrap();
        let a: Vec<u32> = (0..8).map(|i| i * 5 % 96).collect();
        let b: Vec<u32> = (0..8).map(|i| i * 13 % 96).collect();
        let mut alone = q.new_cache().unwrap();
        let [mut c0, mut c1] = [q.new_cache().unwrap(), q.new_cache().unwrap()];
        // A prefill, a verification-sized pass, then decode steps.
        for (lo, hi) in [(0, 3), (3, 6), (6, 7), (7, 8)] {
            let by_itself = q.extend(&mut [&mut alone], &[&a[lo..hi]]).unwrap();
            let beside = q
                .extend(&mut [&mut c0, &mut c1], &[&a[lo..hi], &b[..hi - lo]])
                .unwrap();
            assert_eq!(by_itself, beside.slice(ndarray::s![..hi - lo, ..]));
            <Int4Lm as Lm>::truncate(&mut c1, 0);
        }
    }

    #[test]
    fn the_int4_copy_is_close_to_the_f32_model_but_not_equal() {
        let cfg = small();
        let params = init_params(&cfg, 4).unwrap();
        let q = Int4Lm::quantize(&params, cfg).unwrap();
        let f = TransformerLM::new(&params, cfg, "f32").unwrap();
        let toks: Vec<u32> = (0..12).map(|i| i * 5 % 96).collect();
        let ours = q
            .extend(&mut [&mut q.new_cache().unwrap()], &[&toks])
            .unwrap();
        let theirs = Lm::extend(&f, &mut [&mut Lm::new_cache(&f).unwrap()], &[&toks]).unwrap();
        let diff = (&ours - &theirs).iter().fold(0.0f32, |m, x| m.max(x.abs()));
        let size = theirs.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        assert!(diff > 1e-4 * size && diff < 0.3 * size, "{diff} of {size}");
    }

    #[test]
    fn the_attention_dot_product_is_the_sum_of_products() {
        // Small integers: exact in any order; 19 elements leave a tail of 3.
        let a: Vec<f32> = (0..19).map(|i| (i % 5) as f32 - 2.0).collect();
        let b: Vec<f32> = (0..19).map(|i| (i % 3) as f32).collect();
        let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert_eq!(dot(&a, &b), plain);
        // [-2, -1, 0, 1, 2, -2, -1, 0] · [0, 1, 2, 0, 1, 2, 0, 1] = -1 + 2 - 4.
        assert_eq!(dot(&a[..8], &b[..8]), -3.0);
        assert_eq!(dot(&[], &[]), 0.0);
    }

    #[test]
    fn bad_feeds_are_errors() {
        let cfg = small();
        let params = init_params(&cfg, 5).unwrap();
        let q = Int4Lm::quantize(&params, cfg).unwrap();
        let mut c = q.new_cache().unwrap();
        assert!(q.extend(&mut [&mut c], &[&[1], &[2]]).is_err());
        assert!(q.extend(&mut [&mut c], &[&[96]]).is_err());
        assert!(q.extend(&mut [&mut c], &[&[1; 33]]).is_err());
        assert_eq!(c.len, 0);
    }
}
