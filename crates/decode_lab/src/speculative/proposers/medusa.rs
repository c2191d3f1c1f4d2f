//! Medusa's heads (Cai et al. 2024, §2.1.1): K small heads on the target's last hidden
//! state, head k guessing the token k places after the one the target's own LM head
//! predicts there. No draft model and no draft cache: one hidden state, the one the round's
//! root was predicted from, gives every level of the round's tree at once, so the tokens of
//! a level do not depend on the ones drafted before them (EAGLE's draft layer, which reads
//! them, accepts more: EAGLE, Li et al. 2024, table 1).
//!
//! Head k is one residual block and its own LM head: `y = h + SiLU(h·W_k + b_k)`,
//! `logits = y·L_k` (Medusa's `ResBlock` and `Linear`, `[in, out]` as the toy model's
//! matrices). Level k of a static tree ([`crate::TreeShape`]) gives every node of level
//! k − 1 head k's top-n_k tokens (greedy), or n_k tokens drawn from head k's distribution
//! (sampling), the same distribution under every parent.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2};
use rand::Rng;
use transformer_lab::TransformerLM;

use crate::speculative::accept::{draw, probabilities, top_k};
use crate::speculative::lane::Lane;
use crate::speculative::propose::Proposer;
use crate::{Error, TreeShape};

/// One head: a residual block on the hidden state and its own LM head.
#[derive(Debug, Clone, PartialEq)]
pub struct MedusaHead {
    /// The block's matrix, `[d_model, d_model]`.
    pub w: Array2<f32>,
    /// The block's bias, `[d_model]`.
    pub bias: Array1<f32>,
    /// The head's LM head, `[d_model, vocab]`.
    pub lm_head: Array2<f32>,
}

/// Medusa's heads, checked: the same width and vocabulary, finite weights.
#[derive(Debug, Clone, PartialEq)]
pub struct MedusaHeads {
    heads: Vec<MedusaHead>,
}

impl MedusaHeads {
    /// The heads, head 1 first.
    ///
    /// Errors: no head; a head whose shapes differ from the first's or do not fit each
    /// other; a weight that is not finite.
    pub fn new(heads: Vec<MedusaHead>) -> Result<Self, Error> {
        let first = heads
            .first()
            .ok_or_else(|| Error::Argument("Medusa needs at least one head".into()))?;
        let (d, vocab) = first.lm_head.dim();
        for (k, h) in heads.iter().enumerate() {
            if h.w.dim() != (d, d) || h.bias.len() != d || h.lm_head.dim() != (d, vocab) {
                return Err(Error::Argument(format!(
                    "Medusa head {}: W {:?}, bias {}, LM head {:?}; every head needs \
                     [{d}, {d}], {d} and [{d}, {vocab}]",
                    k + 1,
                    h.w.dim(),
                    h.bias.len(),
                    h.lm_head.dim()
                )));
            }
            let finite = h.w.iter().chain(&h.bias).chain(&h.lm_head);
            if !finite.into_iter().all(|v| v.is_finite()) {
                return Err(Error::Argument(format!(
                    "Medusa head {} has a weight that is not finite",
                    k + 1
                )));
            }
        }
        Ok(MedusaHeads { heads })
    }

    /// How many heads: the deepest tree they can draft.
    pub fn len(&self) -> usize {
        self.heads.len()
    }

    /// Always false (a value has at least one head).
    pub fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }

    /// The hidden state's width.
    pub fn d_model(&self) -> usize {
        self.heads[0].w.nrows()
    }

    /// The vocabulary.
    pub fn vocab(&self) -> usize {
        self.heads[0].lm_head.ncols()
    }

    /// Parameters: `K · (d² + d + d · vocab)`.
    pub fn n_params(&self) -> usize {
        let (d, v) = (self.d_model(), self.vocab());
        self.len() * (d * d + d + d * v)
    }

    /// Head `k`'s logits (k from 1) read from the hidden state `h`: `(h + SiLU(h·W + b))·L`.
    ///
    /// Errors: `k` not a head, `h` of another width.
    pub fn logits(&self, k: usize, h: ArrayView1<f32>) -> Result<Array1<f32>, Error> {
        let head = k
            .checked_sub(1)
            .and_then(|i| self.heads.get(i))
            .ok_or_else(|| Error::Argument(format!("no Medusa head {k} of {}", self.len())))?;
        if h.len() != self.d_model() {
            return Err(Error::Argument(format!(
                "a hidden state of {} for heads of width {}",
                h.len(),
                self.d_model()
            )));
        }
        let z = h.dot(&head.w) + &head.bias;
        let y = &h + &z.mapv(transformer_lab::reference::silu);
        Ok(y.dot(&head.lm_head))
    }
}

/// Medusa's heads proposing a static tree (a chain of γ is `[1; γ]`), at most as deep as
/// there are heads.
#[derive(Clone, Copy)]
pub struct MedusaDraft<'h> {
    /// The heads.
    pub heads: &'h MedusaHeads,
    /// The tree: its branching per level.
    pub shape: &'h TreeShape,
}

impl Proposer for MedusaDraft<'_> {
    /// Per lane, the hidden state the next root was predicted from (none before the first
    /// verification of a one-token prompt: that round drafts nothing).
    type State = Vec<Option<Array1<f32>>>;

    fn max_nodes(&self) -> usize {
        self.shape.nodes() as usize
    }

    fn depth(&self) -> usize {
        self.shape.depth() as usize
    }

    fn check(
        &self,
        target: &TransformerLM<'_>,
        _need: usize,
        _temperature: f64,
    ) -> Result<(), Error> {
        let cfg = target.cfg();
        if cfg.d_model != self.heads.d_model() || cfg.vocab != self.heads.vocab() {
            return Err(Error::Argument(format!(
                "Medusa heads of width {} and vocabulary {} cannot read a target of {} and {}",
                self.heads.d_model(),
                self.heads.vocab(),
                cfg.d_model,
                cfg.vocab
            )));
        }
        let levels = self.shape.levels_for("Medusa")?;
        if levels.len() > self.heads.len() {
            return Err(Error::Argument(format!(
                "a tree {} levels deep needs as many Medusa heads, there are {}",
                levels.len(),
                self.heads.len()
            )));
        }
        Ok(())
    }

    fn start(&self, lanes: &mut [Lane], _slots: &[usize]) -> Result<Self::State, Error> {
        Ok(vec![None; lanes.len()])
    }

    fn reads_hidden(&self) -> bool {
        true
    }

    /// Keeps the last row: the state the next root was predicted from.
    fn read_hidden(
        &self,
        state: &mut Self::State,
        index: usize,
        hidden: ArrayView2<f32>,
    ) -> Result<(), Error> {
        if hidden.ncols() != self.heads.d_model() {
            return Err(Error::Argument(format!(
                "hidden states of {} for Medusa heads of width {}",
                hidden.ncols(),
                self.heads.d_model()
            )));
        }
        if let Some(last) = hidden.outer_iter().last() {
            state[index] = Some(last.to_owned());
        }
        Ok(())
    }

    /// Lane after lane: level k gives every node of level k − 1 head k's top-n_k tokens
    /// (greedy), or n_k tokens drawn from head k's distribution q (sampling: node after
    /// node, q kept at every parent for the verification).
    fn propose<R: Rng + ?Sized>(
        &self,
        state: &mut Self::State,
        lanes: &mut [Lane],
        active: &[usize],
        temperature: f64,
        rng: &mut R,
    ) -> Result<(), Error> {
        let levels = self.shape.levels_for("Medusa")?;
        for &i in active {
            let (lane, Some(h)) = (&mut lanes[i], &state[i]) else {
                continue;
            };
            let mut parents = vec![0usize];
            for (level, &n) in levels.iter().enumerate().take(lane.depth) {
                let logits = self.heads.logits(level + 1, h.view())?;
                let mut children = Vec::new();
                if temperature == 0.0 {
                    let best = top_k(logits.view(), n as usize);
                    for &parent in &parents {
                        for &token in &best {
                            children.push(lane.nodes.len());
                            lane.push(token, parent);
                        }
                    }
                } else {
                    let q = probabilities(logits.view(), temperature)?;
                    for &parent in &parents {
                        for _ in 0..n {
                            children.push(lane.nodes.len());
                            lane.push(draw(&q, rng)?, parent);
                        }
                        lane.set_q(parent, q.clone());
                    }
                }
                parents = children;
            }
            lane.stats.draft_forwards += 1;
        }
        Ok(())
    }

    fn accepted(
        &self,
        _state: &mut Self::State,
        _index: usize,
        _lane: &Lane,
        _path: &[usize],
    ) -> Result<(), Error> {
        Ok(())
    }
}
