//! What a scenario asks of device memory: the target's and the draft's weights and KV.

use crate::{Draft, Error, Scenario};
use llm_math::max_batch_on;

/// What a scenario asks of device memory, in bytes over all `cards` (a lecture prints
/// that it does not fit when [`MemoryPlan::weights_fit`] is false).
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryPlan {
    /// Card name.
    pub hw: &'static str,
    /// Cards (tensor-parallel degree).
    pub cards: u64,
    /// Target name.
    pub target: &'static str,
    /// What drafts.
    pub draft: Draft,
    /// `cards · memory`, bytes.
    pub capacity: f64,
    /// The target's weights at the deployment's dtype, bytes.
    pub target_weights: f64,
    /// The draft's own weights, bytes (0 for fixed-cost and self-speculation; one layer
    /// for a draft head, which shares the target's LM head).
    pub draft_weights: f64,
    /// One sequence's target KV cache at `ctx` over all cards, copies included, bytes
    /// ([`llm_math::Deployment::kv_bytes_held_at`]: a sliding layer holds its window).
    pub target_kv_per_seq: f64,
    /// One sequence's draft KV cache at `ctx` over all cards, copies included, bytes.
    pub draft_kv_per_seq: f64,
    /// The target's largest batch at `ctx`, the draft not counted (lecture 6's rule).
    pub max_batch: u64,
}

impl MemoryPlan {
    /// Whether the target's weights alone fit in the cards.
    pub fn target_fits(&self) -> bool {
        self.target_weights <= self.capacity
    }

    /// Whether the target's and the draft's weights fit in the cards together.
    pub fn weights_fit(&self) -> bool {
        self.target_weights + self.draft_weights <= self.capacity
    }

    /// The largest batch at `ctx` when the draft's weights and KV are counted too
    /// (0 when the weights alone do not fit).
    pub fn max_batch_with_draft(&self) -> u64 {
        let free = self.capacity - self.target_weights - self.draft_weights;
        let per_seq = self.target_kv_per_seq + self.draft_kv_per_seq;
        if free <= 0.0 || per_seq <= 0.0 {
            return 0;
        }
        (free / per_seq).floor() as u64
    }
}

impl Scenario {
    /// What the cards must hold for this scenario, as data a lecture can print.
    /// Errors: `ctx` 0, a knob out of its domain, a card or a model (the target, a draft
    /// model) that cannot exist.
    pub fn memory(&self) -> Result<MemoryPlan, Error> {
        let dep = &self.deployment;
        // The capacity first: it checks the card, the target and the deployment.
        let max_batch = max_batch_on(&self.target, &self.hw, self.ctx, dep)?;
        if let Draft::Model(m) = &self.draft {
            m.validate()?;
        }
        let w = dep.weights;
        let ctx = self.ctx as f64;
        let (draft_weights, draft_kv_per_seq) = match &self.draft {
            Draft::Model(m) => (m.weight_bytes(w), dep.kv_bytes_held_at(m, self.ctx)),
            // One full-attention layer of the target's shape.
            Draft::Head => (
                w.bytes() * self.target.params_per_layer() as f64,
                ctx * dep.kv_bytes_held_per_token(&self.target) as f64
                    / self.target.n_layers as f64,
            ),
            // Layer-skip shares the target's weights and its first layers' cache.
            Draft::FixedCost(_) | Draft::SelfSpec { .. } | Draft::FirstLayers { .. } => (0.0, 0.0),
        };
        Ok(MemoryPlan {
            hw: self.hw.name,
            cards: dep.tp,
            target: self.target.name,
            draft: self.draft,
            capacity: dep.tp as f64 * self.hw.memory_bytes,
            target_weights: self.target.weight_bytes(w),
            draft_weights,
            target_kv_per_seq: dep.kv_bytes_held_at(&self.target, self.ctx),
            draft_kv_per_seq,
            max_batch,
        })
    }
}
