//! A draft model proposing a static tree (vLLM's `draft_model.py`; SpecInfer, Medusa,
//! EAGLE's static trees): level j gives every node of level j − 1 the draft's top-k_j
//! next tokens as children (greedy), or k_j tokens drawn independently from the draft's
//! distribution q there (sampling). A chain of γ is the tree `[1; γ]`. The draft is any
//! model of the target's vocabulary: a smaller model, a one-layer head, or the target's
//! own first layers (layer skip).

use rand::Rng;
use transformer_lab::TransformerLM;

use super::draft_caches::{DraftCaches, check_draft};
use crate::speculative::accept::{draw, probabilities, top_k};
use crate::speculative::lane::Lane;
use crate::speculative::propose::Proposer;
use crate::{Error, TreeShape};

/// A draft model and the static tree it proposes each round.
#[derive(Clone, Copy)]
pub struct TreeDraft<'d, 'p> {
    /// The draft model.
    pub draft: &'d TransformerLM<'p>,
    /// The tree: its branching per level (a tree known only by its size will not do).
    pub shape: &'d TreeShape,
}

impl Proposer for TreeDraft<'_, '_> {
    type State = DraftCaches;

    fn max_nodes(&self) -> usize {
        // At most MAX_TREE_NODES, so it fits a usize.
        self.shape.nodes() as usize
    }

    fn depth(&self) -> usize {
        self.shape.depth() as usize
    }

    fn check(
        &self,
        target: &TransformerLM<'_>,
        need: usize,
        _temperature: f64,
    ) -> Result<(), Error> {
        check_draft(target, self.draft, need)?;
        self.shape.levels_for("speculative decoding")?;
        Ok(())
    }

    fn start(&self, lanes: &mut [Lane], slots: &[usize]) -> Result<DraftCaches, Error> {
        DraftCaches::start(self.draft, lanes, slots)
    }

    /// Level by level, one batched pass of the draft over the lanes still growing: every
    /// node of the level the tree ended with gets `k` children, its top-k (greedy) or `k`
    /// drawn independently from its distribution q (sampling: lane after lane, node after
    /// node, `k` draws each; q is kept for the verification).
    fn propose<R: Rng + ?Sized>(
        &self,
        state: &mut DraftCaches,
        lanes: &mut [Lane],
        active: &[usize],
        temperature: f64,
        rng: &mut R,
    ) -> Result<(), Error> {
        let levels = self.shape.levels_for("speculative decoding")?;
        state.catch_up(self.draft, lanes, active)?;
        for (depth, &k) in levels.iter().enumerate() {
            let growing = state.growing(lanes, active, depth);
            if growing.is_empty() {
                break;
            }
            let logits = state.read_levels(self.draft, lanes, &growing)?;
            let mut rows = logits.outer_iter();
            for &i in &growing {
                let lane = &mut lanes[i];
                let level_end = lane.nodes.len();
                for (parent, logits) in (state.level_start[i]..level_end).zip(&mut rows) {
                    if temperature == 0.0 {
                        for token in top_k(logits, k as usize) {
                            lane.push(token, parent);
                        }
                    } else {
                        let q = probabilities(logits, temperature)?;
                        for _ in 0..k {
                            lane.push(draw(&q, rng)?, parent);
                        }
                        lane.set_q(parent, q);
                    }
                }
                state.level_start[i] = level_end;
            }
        }
        Ok(())
    }

    fn accepted(
        &self,
        state: &mut DraftCaches,
        index: usize,
        lane: &Lane,
        path: &[usize],
    ) -> Result<(), Error> {
        state.accepted(index, lane, path)
    }
}
