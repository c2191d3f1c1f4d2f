//! EAGLE's draft head (Li et al. 2024, EAGLE-1): one decoder layer that drafts at the
//! level of features. Its entry j reads the pair (f_j, x_{j+1}) — the target's last hidden
//! state at position j and the embedding of the token after it, fused by one linear layer —
//! and outputs f̂_{j+1}, which the target's LM head turns into a guess for x_{j+2}.
//!
//! A round, for a sequence whose root (its last committed token) sits at position R: the
//! head first reads the pairs of the committed positions it has not read, with the
//! target's true features (the verification's), the last of them (f_{R−1}, root) giving
//! f̂_R and the first level's distribution; then level by level, each node y drafted at
//! depth k is fed as the pair (f̂ of its parent, y) at position R + k − 1 under a tree
//! mask, its output giving its children's distribution. After the verification the head's
//! cache forgets every drafted entry (they read predicted features) and, next round, reads
//! the accepted ones again with the target's true features, as EAGLE's implementation
//! does.
//!
//! The head is a [`TransformerLM`] of one block whose embedding and LM head are the
//! target's (its final norm its own, as the target's features are read after the target's
//! final norm); the fusion layer runs here, its output fed through
//! [`TransformerLM::extend_ragged_inputs`].

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis, concatenate};
use rand::Rng;
use transformer_lab::{Feed, KvCache, TransformerLM, TreeMask};

use crate::speculative::accept::{draw, probabilities, top_k};
use crate::speculative::forward::pick;
use crate::speculative::lane::Lane;
use crate::speculative::propose::Proposer;
use crate::{Error, TreeShape};

/// EAGLE's draft head: the fusion layer and the one-block model it feeds.
pub struct EagleHead<'p> {
    fc: Array2<f32>,
    fc_bias: Array1<f32>,
    layer: TransformerLM<'p>,
}

impl<'p> EagleHead<'p> {
    /// The head: `fc [2 · d_model, d_model]` (its first `d_model` rows read the token's
    /// embedding, the rest the feature) and `fc_bias [d_model]`, feeding `layer`, a model
    /// of one block whose embedding and LM head are the target's (checked when it proposes
    /// for a target: [`Proposer::check`]).
    ///
    /// Errors: a `layer` of more than one block, a fusion layer of another width, a weight
    /// that is not finite.
    pub fn new(
        fc: Array2<f32>,
        fc_bias: Array1<f32>,
        layer: TransformerLM<'p>,
    ) -> Result<Self, Error> {
        let d = layer.cfg().d_model;
        if layer.cfg().n_layers != 1 || fc.dim() != (2 * d, d) || fc_bias.len() != d {
            return Err(Error::Argument(format!(
                "an EAGLE head needs one block and a fusion layer [{}, {d}] with a bias of {d}; \
                 got {} blocks, {:?} and {}",
                2 * d,
                layer.cfg().n_layers,
                fc.dim(),
                fc_bias.len()
            )));
        }
        if !fc.iter().chain(&fc_bias).all(|v| v.is_finite()) {
            return Err(Error::Argument(
                "the EAGLE head's fusion layer has a weight that is not finite".into(),
            ));
        }
        Ok(EagleHead { fc, fc_bias, layer })
    }

    /// The one-block model.
    pub fn layer(&self) -> &TransformerLM<'p> {
        &self.layer
    }

    /// The fused inputs of pairs (feature, token): `[e(token) | feature] · W_fc + b`, one
    /// row per pair.
    ///
    /// Errors: as many features as tokens, each of the head's width.
    pub(crate) fn fuse(
        &self,
        features: ArrayView2<f32>,
        tokens: &[u32],
    ) -> Result<Array2<f32>, Error> {
        let embed = &self.layer.params().embed;
        let rows: Vec<usize> = tokens.iter().map(|&t| t as usize).collect();
        let e = embed.select(Axis(0), &rows);
        let a = concatenate(Axis(1), &[e.view(), features]).map_err(|_| {
            Error::Argument(format!(
                "{} features of {} for {} tokens of width {}",
                features.nrows(),
                features.ncols(),
                tokens.len(),
                e.ncols()
            ))
        })?;
        Ok(a.dot(&self.fc) + &self.fc_bias)
    }
}

/// EAGLE's head proposing a static tree (a chain of γ is `[1; γ]`).
#[derive(Clone, Copy)]
pub struct EagleDraft<'d, 'p> {
    /// The head.
    pub head: &'d EagleHead<'p>,
    /// The tree: its branching per level.
    pub shape: &'d TreeShape,
}

/// What the head keeps per sequence.
pub struct EagleState {
    /// The head's cache: the pairs of committed positions it has read.
    pub(crate) caches: Vec<KvCache>,
    /// The target's true features of the committed positions it has not read yet, from
    /// the first position past its cache.
    pub(crate) pending: Vec<Vec<Array1<f32>>>,
}

/// One node to expand: its index in the round's tree, the head's logits for its children,
/// the feature its children are fed with.
pub(crate) struct Frontier {
    pub(crate) node: usize,
    pub(crate) logits: Array1<f32>,
    pub(crate) feature: Array1<f32>,
}

impl Proposer for EagleDraft<'_, '_> {
    type State = EagleState;

    fn max_nodes(&self) -> usize {
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
        let (t, h) = (target.cfg(), self.head.layer.cfg());
        if t.vocab != h.vocab || t.d_model != h.d_model {
            return Err(Error::Argument(format!(
                "an EAGLE head of width {} and vocabulary {} cannot read a target of {} and {}",
                h.d_model, h.vocab, t.d_model, t.vocab
            )));
        }
        let (mine, theirs) = (self.head.layer.params(), target.params());
        if mine.embed != theirs.embed || mine.lm_head != theirs.lm_head {
            return Err(Error::Argument(
                "an EAGLE head reads with the target's own embedding and LM head; this one \
                 has others"
                    .into(),
            ));
        }
        if need > h.max_seq {
            return Err(Error::Model(transformer_lab::Error::TooLong {
                len: need,
                max: h.max_seq,
            }));
        }
        self.shape.levels_for("EAGLE")?;
        Ok(())
    }

    fn start(&self, lanes: &mut [Lane], slots: &[usize]) -> Result<EagleState, Error> {
        let caches = slots
            .iter()
            .map(|&n| self.head.layer.new_cache(1, n))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(EagleState {
            caches,
            pending: vec![Vec::new(); lanes.len()],
        })
    }

    fn reads_hidden(&self) -> bool {
        true
    }

    fn read_hidden(
        &self,
        state: &mut EagleState,
        index: usize,
        hidden: ArrayView2<f32>,
    ) -> Result<(), Error> {
        if hidden.ncols() != self.head.layer.cfg().d_model {
            return Err(Error::Argument(format!(
                "hidden states of {} for an EAGLE head of width {}",
                hidden.ncols(),
                self.head.layer.cfg().d_model
            )));
        }
        state.pending[index].extend(hidden.outer_iter().map(|r| r.to_owned()));
        Ok(())
    }

    /// The head's round (see the module's doc), each node's children its top-k (greedy)
    /// or k draws from its distribution q (sampling, lane after lane, node after node; q
    /// kept for the verification).
    fn propose<R: Rng + ?Sized>(
        &self,
        state: &mut EagleState,
        lanes: &mut [Lane],
        active: &[usize],
        temperature: f64,
        rng: &mut R,
    ) -> Result<(), Error> {
        let levels = self.shape.levels_for("EAGLE")?;
        let mut grow = |_: usize, lane: &mut Lane, frontier: Vec<Frontier>, depth: usize| {
            let k = levels[depth] as usize;
            let mut children = Vec::new();
            for f in frontier {
                let picked: Vec<u32> = if temperature == 0.0 {
                    top_k(f.logits.view(), k)
                } else {
                    let q = probabilities(f.logits.view(), temperature)?;
                    let drawn = (0..k)
                        .map(|_| draw(&q, rng))
                        .collect::<Result<Vec<_>, _>>()?;
                    lane.set_q(f.node, q);
                    drawn
                };
                for token in picked {
                    children.push((lane.nodes.len(), token, f.feature.clone()));
                    lane.push(token, f.node);
                }
            }
            Ok(children)
        };
        self.head
            .round(state, lanes, active, levels.len(), &mut grow)?;
        Ok(())
    }

    /// The head forgets every drafted entry: next round it reads the accepted positions
    /// with the target's true features.
    fn accepted(
        &self,
        state: &mut EagleState,
        index: usize,
        lane: &Lane,
        _path: &[usize],
    ) -> Result<(), Error> {
        state.caches[index].truncate(lane.root_slot());
        Ok(())
    }
}

/// One level's growth of a lane's tree: given the lane's index, the lane, its nodes to
/// expand and the level's depth (from 0), pushes their children on the lane and returns
/// each child (its index, its token, the feature it is fed with).
pub(crate) type Grow<'g> =
    dyn FnMut(usize, &mut Lane, Vec<Frontier>, usize) -> Result<Vec<Child>, Error> + 'g;

/// A child pushed on a lane's tree: its index, its token, its parent's feature.
pub(crate) type Child = (usize, u32, Array1<f32>);

impl EagleHead<'_> {
    /// A round for the `active` lanes, at most `levels` deep: the catch-up of every lane
    /// with pairs to read in one ragged pass (its last row the root's), then level by level
    /// `grow` adds each lane's children and one ragged tree-masked pass feeds the ones that
    /// will have children of their own. Returns the lanes that drafted (a one-token prompt
    /// has no pair to read before its first round).
    ///
    /// Errors: the head refuses its inputs; whatever `grow` returns.
    pub(crate) fn round(
        &self,
        state: &mut EagleState,
        lanes: &mut [Lane],
        active: &[usize],
        levels: usize,
        grow: &mut Grow<'_>,
    ) -> Result<Vec<usize>, Error> {
        let reading: Vec<usize> = active
            .iter()
            .copied()
            .filter(|&i| !state.pending[i].is_empty())
            .collect();
        let mut frontiers: Vec<Vec<Frontier>> = (0..lanes.len()).map(|_| Vec::new()).collect();
        if reading.is_empty() {
            return Ok(reading);
        }
        let mut tokens = Vec::new();
        let mut inputs = Vec::new();
        for &i in &reading {
            let p = state.caches[i].len();
            let r = lanes[i].root_slot();
            let features: Vec<ArrayView1<f32>> =
                state.pending[i].iter().map(|f| f.view()).collect();
            let next = lanes[i].committed[p + 1..=r].to_vec();
            inputs.push(self.fuse(stack(&features)?.view(), &next)?);
            tokens.push(next);
        }
        let feeds: Vec<Feed<'_>> = tokens
            .iter()
            .map(|t| Feed {
                tokens: t,
                tree: None,
            })
            .collect();
        let (logits, hidden) = self.pass(state, lanes, &reading, &feeds, &inputs)?;
        let mut row = 0;
        for (&i, t) in reading.iter().zip(&tokens) {
            row += t.len();
            state.pending[i].clear();
            frontiers[i].push(Frontier {
                node: 0,
                logits: logits.row(row - 1).to_owned(),
                feature: hidden.row(row - 1).to_owned(),
            });
        }
        let mut slots: Vec<Vec<Option<usize>>> = (0..lanes.len()).map(|_| Vec::new()).collect();
        for depth in 0..levels {
            let mut fed_lanes = Vec::new();
            let mut chunks: Vec<Chunk> = Vec::new();
            for &i in &reading {
                if depth >= lanes[i].depth {
                    continue;
                }
                let lane = &mut lanes[i];
                let children = grow(i, lane, std::mem::take(&mut frontiers[i]), depth)?;
                slots[i].resize(lane.nodes.len(), None);
                // The last level is verified, never fed.
                if depth + 1 < lane.depth && !children.is_empty() {
                    let cache = &state.caches[i];
                    let chunk = Chunk::new(self, lane, cache, &mut slots[i], children)?;
                    chunks.push(chunk);
                    fed_lanes.push(i);
                }
            }
            if fed_lanes.is_empty() {
                break;
            }
            let feeds: Vec<Feed<'_>> = chunks.iter().map(Chunk::feed).collect();
            let inputs: Vec<Array2<f32>> = chunks.iter().map(|c| c.inputs.clone()).collect();
            let (logits, hidden) = self.pass(state, lanes, &fed_lanes, &feeds, &inputs)?;
            let mut row = 0;
            for (&i, c) in fed_lanes.iter().zip(&chunks) {
                for (j, &node) in c.nodes.iter().enumerate() {
                    frontiers[i].push(Frontier {
                        node,
                        logits: logits.row(row + j).to_owned(),
                        feature: hidden.row(row + j).to_owned(),
                    });
                }
                row += c.nodes.len();
            }
        }
        Ok(reading)
    }

    /// One ragged pass of the head over `which` lanes' feeds, counted in their statistics.
    fn pass(
        &self,
        state: &mut EagleState,
        lanes: &mut [Lane],
        which: &[usize],
        feeds: &[Feed<'_>],
        inputs: &[Array2<f32>],
    ) -> Result<(Array2<f32>, Array2<f32>), Error> {
        for lane in pick(lanes, which) {
            lane.stats.draft_forwards += 1;
        }
        let views: Vec<ArrayView2<f32>> = inputs.iter().map(|i| i.view()).collect();
        let mut caches = pick(&mut state.caches, which);
        Ok(self
            .layer
            .extend_ragged_inputs(&mut caches, feeds, &views)?)
    }
}

/// One lane's level fed to the head: the nodes, their fused inputs, where they sit and
/// what they see.
struct Chunk {
    nodes: Vec<usize>,
    tokens: Vec<u32>,
    inputs: Array2<f32>,
    positions: Vec<usize>,
    prefix: usize,
    visible: Vec<Vec<usize>>,
}

impl Chunk {
    /// The `children` (node, token, parent's feature) of one level of `lane`'s tree, at
    /// the cache slots after `cache`'s: a node at depth k sits at position root + k − 1
    /// and sees the committed entries and its drafted ancestors' slots (recorded in
    /// `slots`, by node) and its own.
    fn new(
        head: &EagleHead<'_>,
        lane: &Lane,
        cache: &KvCache,
        slots: &mut [Option<usize>],
        children: Vec<Child>,
    ) -> Result<Chunk, Error> {
        let prefix = lane.root_slot();
        let first = cache.len();
        let mut chunk = Chunk {
            nodes: Vec::new(),
            tokens: Vec::new(),
            inputs: Array2::zeros((0, 0)),
            positions: Vec::new(),
            prefix,
            visible: Vec::new(),
        };
        let mut features = Vec::new();
        for (j, (node, token, feature)) in children.into_iter().enumerate() {
            let slot = first + j;
            slots[node] = Some(slot);
            let mut seen = vec![slot];
            let mut up = lane.nodes[node].parent;
            while let Some(p) = up {
                seen.extend(slots[p]);
                up = lane.nodes[p].parent;
            }
            seen.reverse();
            chunk.positions.push(prefix + lane.nodes[node].depth - 1);
            chunk.visible.push(seen);
            chunk.nodes.push(node);
            chunk.tokens.push(token);
            features.push(feature);
        }
        let views: Vec<ArrayView1<f32>> = features.iter().map(|f| f.view()).collect();
        chunk.inputs = head.fuse(stack(&views)?.view(), &chunk.tokens)?;
        Ok(chunk)
    }

    fn feed(&self) -> Feed<'_> {
        Feed {
            tokens: &self.tokens,
            tree: Some(TreeMask {
                positions: &self.positions,
                prefix: self.prefix,
                visible: &self.visible,
            }),
        }
    }
}

/// Rows of one width stacked.
fn stack(rows: &[ArrayView1<'_, f32>]) -> Result<Array2<f32>, Error> {
    ndarray::stack(Axis(0), rows)
        .map_err(|_| Error::Argument("features of different widths".into()))
}
