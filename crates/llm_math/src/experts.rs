//! The experts of one mixture-of-experts layer: `routed` experts of which each token uses
//! `top_k`, a shared MLP every token goes through, their parameters, and how many distinct
//! experts `t` tokens read, `E · (1 − (1 − k/E)^t)` with uniform routing. What they add to a
//! model is [`crate::moe`]'s.

use crate::Error;
use crate::count::{Count, n};

/// The experts of a mixture-of-experts MLP, per sparse layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Experts {
    /// Routed experts per layer (E: `num_local_experts`, `num_experts`, `n_routed_experts`).
    pub routed: u64,
    /// Experts each token is routed to (k: `num_experts_per_tok`).
    pub top_k: u64,
    /// Hidden width of one routed expert's gated MLP (gate, up and down are
    /// `d_model × d_ff`: `moe_intermediate_size`, else `intermediate_size`).
    pub d_ff: u64,
    /// Hidden width of the shared MLP every token goes through besides its routed
    /// experts, 0 for none: Qwen2-MoE's `shared_expert_intermediate_size`, DeepSeek's
    /// `n_shared_experts · moe_intermediate_size` (n experts side by side are one MLP
    /// n times as wide).
    pub shared_d_ff: u64,
    /// Whether the shared MLP's output is scaled by a gate `d_model → 1` (Qwen2-MoE's
    /// `shared_expert_gate`: `d_model` parameters per layer).
    pub shared_gate: bool,
    /// Whether the router carries a bias of one per routed expert (DeepSeek-V3's
    /// `e_score_correction_bias`, gpt-oss's router bias).
    pub router_bias: bool,
    /// Whether each routed expert's projections carry biases, `2 · d_ff + d_model` (gpt-oss).
    pub expert_bias: bool,
    /// The first layers whose MLP is a dense one of the model's `d_ff` instead of experts
    /// (DeepSeek's `first_k_dense_replace`); the rest are sparse.
    pub dense_layers: u64,
}

impl Experts {
    /// `routed` experts of width `d_ff`, `top_k` per token, and nothing else (Mixtral, Qwen3-MoE).
    pub const fn routed(routed: u64, top_k: u64, d_ff: u64) -> Experts {
        Experts {
            routed,
            top_k,
            d_ff,
            shared_d_ff: 0,
            shared_gate: false,
            router_bias: false,
            expert_bias: false,
            dense_layers: 0,
        }
    }

    /// Checks `1 ≤ k ≤ E` and a non-zero expert width.
    ///
    /// Errors: the rule broken, with the figures.
    pub fn check(&self) -> Result<(), Error> {
        if self.routed == 0 || self.top_k == 0 || self.top_k > self.routed || self.d_ff == 0 {
            return Err(Error::Invalid(format!(
                "an MoE layer routes each token to k of E experts of width ≥ 1 with 1 ≤ k ≤ E, \
                 got k = {}, E = {}, width {}",
                self.top_k, self.routed, self.d_ff
            )));
        }
        Ok(())
    }

    /// Parameters of one routed expert (gate, up and down projections, and their biases
    /// if any) in a model of width `d`.
    pub fn per_expert(&self, d: u64) -> u64 {
        (n(3) * n(d) * n(self.d_ff) + self.per_expert_vectors(d)).0
    }

    /// One routed expert's biases (kept at 16 bits): `2 · d_ff + d` when it has them.
    pub(crate) fn per_expert_vectors(&self, d: u64) -> Count {
        if self.expert_bias {
            n(2) * n(self.d_ff) + n(d)
        } else {
            n(0)
        }
    }

    /// Parameters of one sparse layer's MoE MLP: every routed expert, the shared MLP,
    /// and the per-expert vectors.
    pub fn per_layer(&self, d: u64) -> u64 {
        let matrices =
            n(self.routed) * n(3) * n(d) * n(self.d_ff) + n(3) * n(d) * n(self.shared_d_ff);
        (matrices + self.vectors(d)).0
    }

    /// One sparse layer's MoE parameters kept at 16 bits: the router (`d × E`, and its
    /// bias `E`), the shared gate (`d`), the experts' biases.
    pub(crate) fn vectors(&self, d: u64) -> Count {
        let (d, e) = (n(d), n(self.routed));
        let on = |flag: bool, x: Count| if flag { x } else { n(0) };
        d * e + on(self.router_bias, e) + on(self.shared_gate, d) + e * self.per_expert_vectors(d.0)
    }
}

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
