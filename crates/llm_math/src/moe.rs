//! Mixture-of-experts models in the roofline: total against active parameters, and how
//! many experts a decode step reads. At batch 1 a step streams the attention, the
//! router and the `k` routed experts of each layer; with `t` tokens in the step, each
//! routing `k` of `E` experts, about `E · (1 − (1 − k/E)^t)` distinct experts are read
//! (uniform routing), so at large batch nearly all of them.
//!
//! Motivated by SpecForge issue 339's Qwen3-30B-A3B series (H100, TP2, batch 1–64),
//! where an EAGLE-3 head slows a 3B-active target down (rows M44–M55 of the research
//! measurements).

use crate::{Deployment, Error};
use hw_specs::Accelerator;

/// A mixture-of-experts decoder (no shared dense MLP unless `shared_experts > 0`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MoeConfig {
    /// Display name.
    pub name: &'static str,
    /// Decoder layers.
    pub n_layers: u64,
    /// Hidden size.
    pub d_model: u64,
    /// Query heads.
    pub n_heads: u64,
    /// KV heads (grouped-query attention).
    pub n_kv_heads: u64,
    /// Dimensions per head.
    pub head_dim: u64,
    /// Vocabulary size.
    pub vocab: u64,
    /// Routed experts per layer (E).
    pub experts: u64,
    /// Experts each token is routed to (k).
    pub top_k: u64,
    /// Hidden width of one expert's gated MLP.
    pub expert_d_ff: u64,
    /// Experts every token goes through (0 for Qwen3-MoE).
    pub shared_experts: u64,
    /// Whether the input embedding and the LM head share one table.
    pub tied_embeddings: bool,
}

/// Qwen3-30B-A3B, from its `config.json` (as mirrored in the slime repository's
/// `scripts/models/qwen3-30B-A3B.sh`): 48 layers, hidden 2048, 32 query / 4 KV heads of
/// 128, 128 experts of width 768, top-8, no shared expert, vocabulary 151,936, untied.
/// The model card gives 30.5B total and 3.3B activated parameters (a test checks both).
pub const QWEN3_30B_A3B: MoeConfig = MoeConfig {
    name: "Qwen3-30B-A3B",
    n_layers: 48,
    d_model: 2048,
    n_heads: 32,
    n_kv_heads: 4,
    head_dim: 128,
    vocab: 151_936,
    experts: 128,
    top_k: 8,
    expert_d_ff: 768,
    shared_experts: 0,
    tied_embeddings: false,
};

/// Expected distinct experts read by one layer when `tokens` tokens each route to `k` of
/// `e` experts, uniformly and independently: `e · (1 − (1 − k/e)^tokens)`.
///
/// Errors: `e = 0`, or `k` outside 1..=e.
///
/// ```
/// // One token reads its 8 experts; two read 128 · (1 − (15/16)²) = 15.5 on average.
/// assert_eq!(llm_math::expected_experts_read(128, 8, 1).unwrap(), 8.0);
/// assert_eq!(llm_math::expected_experts_read(128, 8, 2).unwrap(), 15.5);
/// ```
pub fn expected_experts_read(e: u64, k: u64, tokens: u64) -> Result<f64, Error> {
    if e == 0 || k == 0 || k > e {
        return Err(Error::Invalid(format!(
            "an MoE layer routes each token to k of E experts with 1 ≤ k ≤ E, got k = {k}, E = {e}"
        )));
    }
    let miss = 1.0 - k as f64 / e as f64;
    Ok(e as f64 * (1.0 - miss.powf(tokens as f64)))
}

impl MoeConfig {
    /// Parameters of one layer outside the routed experts: attention (q, k, v, o), QK
    /// norms, the two RMSNorms, the router and any shared experts.
    fn dense_per_layer(&self) -> u64 {
        let q = self.n_heads * self.head_dim;
        let kv = self.n_kv_heads * self.head_dim;
        let attn = 2 * self.d_model * q + 2 * self.d_model * kv + 2 * self.head_dim;
        attn + 2 * self.d_model + self.d_model * self.experts + self.shared_experts * self.expert()
    }

    /// Parameters of one routed expert (gate, up and down projections).
    fn expert(&self) -> u64 {
        3 * self.d_model * self.expert_d_ff
    }

    /// Every parameter, embeddings included.
    pub fn n_params(&self) -> u64 {
        let embed = self.vocab * self.d_model * if self.tied_embeddings { 1 } else { 2 };
        self.n_layers * (self.dense_per_layer() + self.experts * self.expert())
            + embed
            + self.d_model
    }

    /// Parameters one token is multiplied by (its `k` experts per layer), embeddings
    /// included, as model cards count "activated" parameters.
    pub fn active_params(&self) -> u64 {
        let embed = self.vocab * self.d_model * if self.tied_embeddings { 1 } else { 2 };
        self.n_layers * (self.dense_per_layer() + self.top_k * self.expert()) + embed + self.d_model
    }

    /// Parameters a step over `tokens` tokens streams from memory: every layer's dense part
    /// and its expected distinct experts ([`expected_experts_read`]), the LM head (the
    /// untied input embedding is a lookup and is not streamed).
    ///
    /// Errors: as [`expected_experts_read`].
    pub fn streamed_params(&self, tokens: u64) -> Result<f64, Error> {
        let read = expected_experts_read(self.experts, self.top_k, tokens)?;
        let layer = self.dense_per_layer() as f64 + read * self.expert() as f64;
        Ok(self.n_layers as f64 * layer + (self.vocab * self.d_model + self.d_model) as f64)
    }

    /// Bytes of KV cache per token in the deployment's KV dtype, all cards together.
    pub fn kv_bytes_per_token(&self, dep: &Deployment) -> u64 {
        2 * self.n_layers * self.n_kv_heads * self.head_dim * dep.kv.bytes()
    }
}

/// The roofline of one plain decode step of an MoE model, per card.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MoeStep {
    /// Distinct experts each layer reads (expected).
    pub experts_read: f64,
    /// `2 · active · batch / (tp · peak · compute_efficiency)`, seconds.
    pub compute_time: f64,
    /// `(streamed weights / tp + KV read / kv shards) / (bandwidth · efficiency)`, seconds.
    pub memory_time: f64,
}

impl MoeStep {
    /// The seed's `max(compute, memory)`, seconds (no overhead, no all-reduces).
    pub fn time(&self) -> f64 {
        self.compute_time.max(self.memory_time)
    }
}

/// One plain decode step of `batch` sequences at context `ctx` (each reads `ctx + 1`
/// KV entries), on `dep.tp` cards: weights split evenly, the KV cache over
/// `min(tp, kv_heads)` cards. All-reduces and overheads are left to the caller.
///
/// Errors: a zero batch, or a bad deployment (`Deployment::check`'s efficiency and tp
/// rules, against the attention heads).
pub fn moe_step(
    cfg: &MoeConfig,
    hw: &Accelerator,
    batch: u64,
    ctx: u64,
    dep: &Deployment,
) -> Result<MoeStep, Error> {
    if batch == 0 {
        return Err(Error::Zero("batch"));
    }
    if dep.tp == 0 || cfg.n_heads % dep.tp != 0 {
        return Err(Error::Invalid(format!(
            "tensor parallelism over {} cards does not divide {}'s {} query heads",
            dep.tp, cfg.name, cfg.n_heads
        )));
    }
    for e in [dep.compute_efficiency, dep.bandwidth_efficiency] {
        if !(e > 0.0 && e <= 1.0) {
            return Err(Error::Invalid(format!(
                "efficiency must be in (0, 1], got {e}"
            )));
        }
    }
    let tp = dep.tp as f64;
    let experts_read = expected_experts_read(cfg.experts, cfg.top_k, batch)?;
    let weights = cfg.streamed_params(batch)? * dep.weights.bytes() / tp;
    let kv_shards = dep.tp.min(cfg.n_kv_heads).max(1) as f64;
    let kv = (batch * (ctx + 1) * cfg.kv_bytes_per_token(dep)) as f64 / kv_shards;
    let embed = (cfg.vocab * cfg.d_model) as f64;
    let flops = 2.0 * (cfg.active_params() as f64 - embed) * batch as f64 / tp;
    Ok(MoeStep {
        experts_read,
        compute_time: flops / (dep.weights.peak_flops(hw) * dep.compute_efficiency),
        memory_time: (weights + kv) / (hw.hbm_bandwidth * dep.bandwidth_efficiency),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hw_specs::H100;

    #[test]
    fn qwen3_30b_a3b_has_the_model_cards_total_and_active_counts() {
        let total = QWEN3_30B_A3B.n_params() as f64;
        let active = QWEN3_30B_A3B.active_params() as f64;
        assert!((total / 30.5e9 - 1.0).abs() < 0.01, "{total}");
        assert!((active / 3.3e9 - 1.0).abs() < 0.02, "{active}");
    }

    #[test]
    fn experts_read_go_from_k_to_all_of_them() {
        assert_eq!(expected_experts_read(16, 16, 1).unwrap(), 16.0);
        // 1 − (7/8)^3 = 169/512 of 8 experts.
        assert!((expected_experts_read(8, 1, 3).unwrap() - 8.0 * 169.0 / 512.0).abs() < 1e-12);
        let many = expected_experts_read(128, 8, 1024).unwrap();
        assert!(many <= 128.0 && 128.0 - many < 1e-9, "{many}");
        assert!(expected_experts_read(8, 9, 1).is_err());
        assert!(expected_experts_read(0, 0, 1).is_err());
    }

    /// Batch 1, context 512, bf16 on one H100 at 80% of 3.35 TB/s: 8 experts per layer;
    /// 2 B · (48 · (2·2048·4096 + 2·2048·512 + 256 + 4096 + 2048·128 + 8 · 3·2048·768)
    /// plus 151,936 · 2048 + 2048) plus 513 · 98,304 B = 6,134,165,504 B, so 2.2889 ms;
    /// compute is light (0.0103 ms at 60% of 989 TFLOP/s).
    #[test]
    fn a_batch_one_step_reads_the_routed_experts_only_by_hand() {
        let s = moe_step(&QWEN3_30B_A3B, &H100, 1, 512, &Deployment::LECTURE).unwrap();
        assert_eq!(s.experts_read, 8.0);
        let bytes = 2.0
            * (48.0
                * (2.0 * 2048.0 * 4096.0
                    + 2.0 * 2048.0 * 512.0
                    + 256.0
                    + 4096.0
                    + 2048.0 * 128.0
                    + 8.0 * 3.0 * 2048.0 * 768.0)
                + 151_936.0 * 2048.0
                + 2048.0)
            + 513.0 * 98_304.0;
        assert_eq!(bytes, 6_134_165_504.0);
        assert!((s.memory_time - bytes / (3.35e12 * 0.8)).abs() < 1e-15);
        assert!((s.time() - 2.2889e-3).abs() < 1e-7, "{}", s.time());
        assert!(
            (s.compute_time - 0.010252e-3).abs() < 1e-9,
            "{}",
            s.compute_time
        );
    }

    /// Batch 256: 128 · (1 − (15/16)^256) = 127.99999 experts, i.e. all of them: the step
    /// streams all 30.5B parameters (less the input embedding) plus 256 · 513 KV entries:
    /// 27.370 ms, where a dense model of 3.3B would still read only its 3.3B.
    #[test]
    fn a_large_batch_step_reads_nearly_every_expert_by_hand() {
        let s = moe_step(&QWEN3_30B_A3B, &H100, 256, 512, &Deployment::LECTURE).unwrap();
        assert!(
            (s.experts_read - 127.99999145).abs() < 1e-7,
            "{}",
            s.experts_read
        );
        let all = (QWEN3_30B_A3B.n_params() - 151_936 * 2048) as f64;
        let upper = (2.0 * all + 256.0 * 513.0 * 98_304.0) / (3.35e12 * 0.8);
        assert!(
            s.memory_time < upper && upper - s.memory_time < 1e-6,
            "{}",
            s.memory_time
        );
        assert!((s.time() - 27.370e-3).abs() < 1e-6, "{}", s.time());
        // Eight times the batch-1 step's compute per token, still below its memory time.
        assert!(s.compute_time < s.memory_time);
    }

    #[test]
    fn bad_moe_inputs_are_errors() {
        let d = Deployment::LECTURE;
        assert!(moe_step(&QWEN3_30B_A3B, &H100, 0, 512, &d).is_err());
        let tp3 = Deployment { tp: 3, ..d };
        assert!(moe_step(&QWEN3_30B_A3B, &H100, 1, 512, &tp3).is_err());
    }
}
