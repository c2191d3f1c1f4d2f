//! EAGLE-2's dynamic trees on EAGLE's head (Li et al. 2024, EAGLE-2): the head's round
//! ([`super::eagle`]) grown as [`super::DynamicDraft`] grows a draft model's — each level
//! keeps the `width` candidates with the highest cumulative draft probability among every
//! expanded node's top `width` children, and after `depth` levels the `budget` most
//! confident nodes of the whole tree are what the target verifies. Greedy only, as
//! `DynamicDraft`.

use rand::Rng;
use transformer_lab::TransformerLM;

use super::dynamic::{Candidate, keep_most_confident, prune, rerank};
use super::eagle::{Child, EagleDraft, EagleHead, EagleState, Frontier};
use crate::speculative::accept::{probabilities, top_k};
use crate::speculative::lane::Lane;
use crate::speculative::propose::Proposer;
use crate::{DynamicDraft, Error, TreeShape};

/// EAGLE's head growing dynamic trees: `depth` levels of at most `width` nodes, `budget`
/// of them verified.
#[derive(Clone, Copy)]
pub struct EagleDynamic<'d, 'p> {
    /// The head.
    pub head: &'d EagleHead<'p>,
    /// Levels drafted.
    pub depth: u32,
    /// Nodes kept per level (and children considered per node).
    pub width: u32,
    /// Nodes the target verifies.
    pub budget: u32,
}

impl EagleDynamic<'_, '_> {
    /// "6×8≤39": depth × width ≤ budget.
    pub fn label(&self) -> String {
        format!("{}×{}≤{}", self.depth, self.width, self.budget)
    }

    /// The knobs checked as a draft model's dynamic trees check them.
    fn knobs(&self) -> Result<(), Error> {
        let draft = self.head.layer();
        let same = DynamicDraft {
            draft,
            depth: self.depth,
            width: self.width,
            budget: self.budget,
        };
        same.check_knobs()
    }
}

impl Proposer for EagleDynamic<'_, '_> {
    type State = EagleState;

    fn max_nodes(&self) -> usize {
        self.depth as usize * self.width as usize
    }

    fn depth(&self) -> usize {
        self.depth as usize
    }

    fn check(
        &self,
        target: &TransformerLM<'_>,
        need: usize,
        temperature: f64,
    ) -> Result<(), Error> {
        self.knobs()?;
        if temperature != 0.0 {
            return Err(Error::Argument(format!(
                "dynamic trees are verified greedily here (their nodes are the head's top \
                 candidates, not draws from it), got temperature {temperature}"
            )));
        }
        let chain = TreeShape::chain(self.depth)?;
        self.as_static(&chain).check(target, need, temperature)
    }

    fn start(&self, lanes: &mut [Lane], slots: &[usize]) -> Result<EagleState, Error> {
        let chain = TreeShape::chain(self.depth)?;
        self.as_static(&chain).start(lanes, slots)
    }

    fn reads_hidden(&self) -> bool {
        true
    }

    fn read_hidden(
        &self,
        state: &mut EagleState,
        index: usize,
        hidden: ndarray::ArrayView2<f32>,
    ) -> Result<(), Error> {
        let chain = TreeShape::chain(self.depth)?;
        self.as_static(&chain).read_hidden(state, index, hidden)
    }

    /// The head's round, each level keeping the `width` most confident of every expanded
    /// node's top `width` children (score: the product of the head's probabilities at
    /// T = 1 from the root), then the `budget` most confident nodes of the tree.
    fn propose<R: Rng + ?Sized>(
        &self,
        state: &mut EagleState,
        lanes: &mut [Lane],
        active: &[usize],
        _temperature: f64,
        _rng: &mut R,
    ) -> Result<(), Error> {
        let width = self.width as usize;
        let mut scores: Vec<Vec<f64>> = vec![vec![1.0]; lanes.len()];
        let mut grow = |i: usize, lane: &mut Lane, frontier: Vec<Frontier>, _: usize| {
            let score = &mut scores[i];
            let mut candidates = Vec::new();
            let mut features = Vec::new();
            for f in frontier {
                let q = probabilities(f.logits.view(), 1.0)?;
                for token in top_k(f.logits.view(), width) {
                    candidates.push(Candidate {
                        parent: f.node,
                        token,
                        score: score[f.node] * q[token as usize],
                    });
                }
                features.push((f.node, f.feature));
            }
            let mut children: Vec<Child> = Vec::new();
            for c in keep_most_confident(candidates, width) {
                let feature = features.iter().find(|(node, _)| *node == c.parent);
                let feature = feature.map(|(_, f)| f.clone());
                let feature =
                    feature.ok_or(Error::Argument("a child without its parent".into()))?;
                children.push((lane.nodes.len(), c.token, feature));
                lane.push(c.token, c.parent);
                score.push(c.score);
            }
            Ok(children)
        };
        let drafted = self
            .head
            .round(state, lanes, active, self.depth as usize, &mut grow)?;
        for i in drafted {
            let kept = rerank(&scores[i], self.budget as usize);
            prune(&mut lanes[i].nodes, &kept);
        }
        Ok(())
    }

    fn accepted(
        &self,
        state: &mut EagleState,
        index: usize,
        lane: &Lane,
        path: &[usize],
    ) -> Result<(), Error> {
        let chain = TreeShape::chain(self.depth)?;
        self.as_static(&chain).accepted(state, index, lane, path)
    }
}

impl<'d, 'p> EagleDynamic<'d, 'p> {
    /// The same head proposing `shape`: what a dynamic round shares with a static one
    /// (the state, the checks, reading the target's states, forgetting drafted entries).
    fn as_static(&self, shape: &'d TreeShape) -> EagleDraft<'d, 'p> {
        EagleDraft {
            head: self.head,
            shape,
        }
    }
}
