//! The attention side of the counts, for the block a model's [`Arch`](crate::Arch) describes: the
//! attention's parameters, the KV one token caches, the cached tokens a query reads (all of them, or a window on sliding layers) and the FLOPs it
//! spends on each. These are the one home of those formulas; [`crate::forward_cost`] and
//! [`crate::max_batch_on`] price them.
//! Counts are made in saturating arithmetic (`count.rs`).

use crate::count::{Count, n};
use crate::{KvDtype, ModelConfig};

impl ModelConfig {
    /// Weight matrices of one layer's attention. GQA: q, k, v and o,
    /// `d · (q + 2 · kv) + q · d` with `q = heads · head_dim`, `kv = kv_heads · head_dim`.
    /// MLA: the query (`d · heads · (nope + rope)`, or through its rank `r_q`:
    /// `d · r_q + r_q · heads · (nope + rope)`), the KV down-projection with the shared
    /// RoPE key (`d · (r_kv + rope)`), the KV up-projection (`r_kv · heads · (nope + v)`)
    /// and the output (`heads · v · d`).
    pub(crate) fn attention_matrices(&self) -> Count {
        let (d, h) = (n(self.d_model), n(self.n_heads));
        match self.arch.mla {
            None => {
                let q = h * n(self.head_dim);
                let kv = n(self.n_kv_heads) * n(self.head_dim);
                d * (q + n(2) * kv) + q * d
            }
            Some(m) => {
                let qk = h * (n(m.qk_nope_head_dim) + n(m.qk_rope_head_dim));
                let query = match m.q_lora_rank {
                    0 => d * qk,
                    r => d * n(r) + n(r) * qk,
                };
                let kv_down = d * (n(m.kv_lora_rank) + n(m.qk_rope_head_dim));
                let kv_up = n(m.kv_lora_rank) * h * (n(m.qk_nope_head_dim) + n(m.v_head_dim));
                query + kv_down + kv_up + h * n(m.v_head_dim) * d
            }
        }
    }

    /// One layer's attention parameters that are not matrices (kept at 16 bits): q/k/v
    /// biases (`q + 2 · kv`), an output bias (`d`), Qwen3's q and k norms (`2 · head_dim`),
    /// gpt-oss's sinks (`heads`), MLA's norms of the query and KV latents (`r_q + r_kv`).
    pub(crate) fn attention_vectors(&self) -> Count {
        let (q, kv) = (
            n(self.n_heads) * n(self.head_dim),
            n(self.n_kv_heads) * n(self.head_dim),
        );
        let on = |flag: bool, x: Count| if flag { x } else { n(0) };
        let mla = self
            .arch
            .mla
            .map_or(n(0), |m| n(m.q_lora_rank) + n(m.kv_lora_rank));
        on(self.qkv_bias, q + n(2) * kv)
            + on(self.arch.o_bias, n(self.d_model))
            + on(self.qk_norm, n(2) * n(self.head_dim))
            + on(self.arch.attention_sinks, n(self.n_heads))
            + mla
    }

    /// RMSNorm gains of one layer: 2 · `d_model`, Gemma 2's sandwich 4 · `d_model`.
    pub(crate) fn norm_params(&self) -> Count {
        n(if self.arch.sandwich_norms { 4 } else { 2 }) * n(self.d_model)
    }

    /// Elements one token caches in one layer: K and V of every KV head,
    /// `2 · kv_heads · head_dim`; MLA's latent and RoPE key, `kv_lora_rank + qk_rope_head_dim`.
    pub fn kv_elements_per_layer(&self) -> u64 {
        match self.arch.mla {
            None => (n(2) * n(self.n_kv_heads) * n(self.head_dim)).0,
            Some(m) => (n(m.kv_lora_rank) + n(m.qk_rope_head_dim)).0,
        }
    }

    /// Elements one token caches over all layers (what a new token writes):
    /// `layers · ` [`kv_elements_per_layer`](Self::kv_elements_per_layer).
    ///
    /// ```
    /// // DeepSeek-V3: 61 layers × (512 + 64), against 2 · 128 heads · 192 for plain MHA.
    /// let v3 = llm_math::model("DeepSeek-V3")?;
    /// assert_eq!(v3.kv_elements_per_token(), 61 * 576);
    /// # Ok::<(), llm_math::Error>(())
    /// ```
    pub fn kv_elements_per_token(&self) -> u64 {
        (n(self.n_layers) * n(self.kv_elements_per_layer())).0
    }

    /// Cached tokens summed over the layers that one query at context `ctx` reads:
    /// `layers · ctx` when every layer attends to everything, and with sliding layers
    /// `full · ctx + sliding · min(ctx, window)` ([`Sliding`](crate::Sliding)). Each is one layer's K and
    /// V of one token ([`kv_elements_per_layer`](Self::kv_elements_per_layer)); an engine
    /// with a hybrid cache keeps just as many per sequence.
    ///
    /// ```
    /// // Gemma-2-9B: 21 of its 42 layers slide over 4096 tokens.
    /// let g = llm_math::model("Gemma-2-9B")?;
    /// assert_eq!(g.cached_layer_tokens(8192), 21.0 * 8192.0 + 21.0 * 4096.0);
    /// assert_eq!(g.cached_layer_tokens(1000), 42.0 * 1000.0);
    /// # Ok::<(), llm_math::Error>(())
    /// ```
    pub fn cached_layer_tokens(&self, ctx: u64) -> f64 {
        let layers = self.n_layers as f64;
        let ctx = ctx as f64;
        match self.arch.sliding {
            None => layers * ctx,
            Some(s) => {
                let sliding = s.layers.min(self.n_layers) as f64;
                (layers - sliding) * ctx + sliding * ctx.min(s.window as f64)
            }
        }
    }

    /// Bytes of KV cache one sequence at context `ctx` holds, and a pass reads, at `kv`:
    /// [`cached_layer_tokens`](Self::cached_layer_tokens)` · `
    /// [`kv_elements_per_layer`](Self::kv_elements_per_layer)` · bytes` (over all cards,
    /// once: tensor parallelism splits or replicates it, [`crate::Deployment::kv_shards`]).
    pub fn kv_bytes_at(&self, ctx: u64, kv: KvDtype) -> f64 {
        self.cached_layer_tokens(ctx) * self.kv_elements_per_layer() as f64 * kv.bytes() as f64
    }

    /// FLOPs one query token spends in one layer on one cached token, `QKᵀ` and `PV`:
    /// `2 · heads · head_dim` each; with MLA's absorbed weights each head scores the
    /// latent and RoPE key (`2 · heads · (kv_lora_rank + qk_rope_head_dim)`) and sums
    /// the latent (`2 · heads · kv_lora_rank`); the absorbed up-projections are per new
    /// token, counted with the weights.
    pub fn attention_flops_per_cached_token(&self) -> f64 {
        let h = self.n_heads as f64;
        match self.arch.mla {
            None => 4.0 * h * self.head_dim as f64,
            Some(m) => {
                let latent = m.kv_lora_rank as f64;
                2.0 * h * (latent + m.qk_rope_head_dim as f64) + 2.0 * h * latent
            }
        }
    }

    /// Attention FLOPs of one query token at context `ctx`, all layers:
    /// [`attention_flops_per_cached_token`](Self::attention_flops_per_cached_token)` · `
    /// [`cached_layer_tokens`](Self::cached_layer_tokens)`(ctx)`.
    pub fn attention_flops(&self, ctx: u64) -> f64 {
        self.attention_flops_per_cached_token() * self.cached_layer_tokens(ctx)
    }
}

#[cfg(test)]
mod tests {
    use crate::{
        Deployment, ForwardShape, KvDtype, WeightDtype, forward_cost, max_batch_on, model,
    };
    use hw_specs::{Accelerator, H100};

    fn shape(batch: u64, ctx: u64) -> ForwardShape {
        ForwardShape::decode(batch, ctx)
    }

    /// DeepSeek-V3 caches 512 + 64 elements per token and layer: 61 · 576 · 2 = 70,272 B
    /// in bf16 (plain MHA of 128 heads of 192/128 would cache 61 · 128 · (192 + 128) · 2 =
    /// 4,997,120 B). Under TP 8 every card reads and holds all of it.
    #[test]
    fn deepseek_v3_caches_one_latent_per_layer_that_every_card_holds() {
        let v3 = model("DeepSeek-V3").unwrap();
        assert_eq!(v3.kv_bytes_per_token(), 70_272);
        let tp8 = Deployment {
            tp: 8,
            weights: WeightDtype::Fp8,
            ..Deployment::LECTURE
        };
        assert_eq!(tp8.kv_shards(v3), 1);
        let big = Accelerator {
            memory_bytes: 141e9,
            ..H100
        };
        let (one, two) = (shape(1, 1000), shape(1, 2000));
        let c1 = forward_cost(v3, &big, one, &tp8).unwrap();
        let c2 = forward_cost(v3, &big, two, &tp8).unwrap();
        // 1000 more cached tokens: their latents read on each card, in full.
        assert_eq!(c2.bytes - c1.bytes, 1000.0 * 70_272.0);
        // Absorbed attention: 2 · 128 · 576 + 2 · 128 · 512 FLOPs per cached token and
        // layer, the heads split 8 ways.
        assert_eq!(v3.attention_flops_per_cached_token(), 278_528.0);
        assert_eq!(c2.flops - c1.flops, 61.0 * 278_528.0 * 1000.0 / 8.0);
        // Memory: every card holds each sequence's latents: 8 copies.
        let ctx = 4096;
        let w = v3.weight_bytes(WeightDtype::Fp8);
        let want = ((8.0 * 141e9 - w) / (4096.0 * 70_272.0 * 8.0)).floor() as u64;
        assert_eq!(max_batch_on(v3, &big, ctx, &tp8).unwrap(), want);
        assert!(want > 0, "{w}");
    }

    /// Gemma-2-9B: 2 · 8 KV heads · 256 = 4096 elements per token and layer, 8 KiB in
    /// bf16. Past 4096 tokens only the 21 full layers read more: from context 4096 to
    /// 8192, 21 · 4096 · 8192 B and 4 · 16 · 256 · 21 · 4096 FLOPs per sequence.
    #[test]
    fn gemma2_reads_a_window_on_half_its_layers_by_hand() {
        let g = model("Gemma-2-9B").unwrap();
        assert_eq!(g.kv_elements_per_layer(), 4096);
        let d = Deployment::LECTURE;
        let c = |ctx| forward_cost(g, &H100, shape(1, ctx), &d).unwrap();
        let (short, long, longer) = (c(2048), c(4096), c(8192));
        assert_eq!(long.bytes - short.bytes, 42.0 * 2048.0 * 8192.0);
        assert_eq!(longer.bytes - long.bytes, 21.0 * 4096.0 * 8192.0);
        assert_eq!(
            longer.flops - long.flops,
            4.0 * 16.0 * 256.0 * 21.0 * 4096.0
        );
        // What a sequence holds at 8192: 21 · 8192 + 21 · 4096 layer-tokens.
        assert_eq!(
            g.kv_bytes_at(8192, KvDtype::Bf16),
            (21.0 * 8192.0 + 21.0 * 4096.0) * 8192.0
        );
        let free = 80e9 - g.weight_bytes(WeightDtype::Bf16);
        let want = (free / g.kv_bytes_at(8192, KvDtype::Bf16)).floor() as u64;
        assert_eq!(max_batch_on(g, &H100, 8192, &d).unwrap(), want);
    }

    /// Active parameters against the model cards: DeepSeek-V3 "37B activated" (37.55B with
    /// both embedding tables), V2-Lite "2.4B" (without them), Qwen3-235B-A22B "22B",
    /// Qwen2-57B-A14B "14B", Qwen1.5-MoE-A2.7B "2.7B", gpt-oss "3.6B" and "5.1B" active
    /// (without the input embedding: `streamed_params`).
    #[test]
    fn moe_models_have_their_cards_active_counts() {
        let active = |name| model(name).unwrap().active_params() as f64 / 1e9;
        let streamed = |name| model(name).unwrap().streamed_params() as f64 / 1e9;
        assert_eq!(
            model("DeepSeek-V3").unwrap().active_params(),
            37_552_297_472
        );
        for (got, card) in [
            (active("DeepSeek-V3"), 37.0),
            (streamed("DeepSeek-V2-Lite"), 2.4),
            (active("Qwen3-235B-A22B"), 22.0),
            (active("Qwen2-57B-A14B"), 14.0),
            (active("Qwen1.5-MoE-A2.7B"), 2.7),
            (streamed("gpt-oss-20B"), 3.6),
            (streamed("gpt-oss-120B"), 5.1),
        ] {
            assert!((got / card - 1.0).abs() < 0.025, "{got} against {card}");
        }
    }

    /// DeepSeek-V3's count by hand, per part: 3 dense layers and 58 sparse ones around
    /// the same MLA attention, two embedding tables and the final norm.
    #[test]
    fn deepseek_v3_counts_by_hand() {
        let v3 = model("DeepSeek-V3").unwrap();
        let (d, h) = (7168u64, 128u64);
        let attn = d * 1536 + 1536 + 1536 * h * 192 // query through its rank, and its norm
            + d * 576 + 512 + 512 * h * 256 // KV latent with the RoPE key, norm, up-projection
            + h * 128 * d; // output
        let norms = 2 * d;
        let dense = attn + norms + 3 * d * 18432;
        let sparse = attn + norms + 256 * 3 * d * 2048 + 3 * d * 2048 + d * 256 + 256;
        let total = 3 * dense + 58 * sparse + 2 * 129_280 * d + d;
        assert_eq!(v3.n_params(), total);
        assert_eq!(total, 671_026_419_200);
    }
}
