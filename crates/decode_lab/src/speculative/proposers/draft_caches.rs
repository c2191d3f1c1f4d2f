//! A draft model's side of a batched run, shared by the proposers that run one
//! ([`super::TreeDraft`], [`super::DynamicDraft`]): its KV cache per sequence, read up to
//! each round's root, fed the levels of the round's tree, rolled back to the path the
//! target accepts.

use ndarray::Array2;
use transformer_lab::{Feed, KvCache, TransformerLM};

use crate::Error;
use crate::speculative::forward::{forward, pick};
use crate::speculative::lane::{Lane, LevelMask, causal};

/// Checks that `draft` can draft for `target` in a run whose longest sequence reaches
/// `need` tokens: the same vocabulary, and room for it in the draft's `max_seq` too.
pub(crate) fn check_draft(
    target: &TransformerLM<'_>,
    draft: &TransformerLM<'_>,
    need: usize,
) -> Result<(), Error> {
    let (tc, dc) = (target.cfg(), draft.cfg());
    if tc.vocab != dc.vocab {
        return Err(Error::Argument(format!(
            "target and draft must share a vocabulary, got {} and {}",
            tc.vocab, dc.vocab
        )));
    }
    if need > dc.max_seq {
        return Err(Error::Model(transformer_lab::Error::TooLong {
            len: need,
            max: dc.max_seq,
        }));
    }
    Ok(())
}

/// A draft model's caches for a batch, and how far each round's drafting got.
pub struct DraftCaches {
    caches: Vec<KvCache>,
    /// Per lane: where the level the draft expands next starts in the round's tree; once
    /// drafting is done, the first node the draft was not fed (the last level is
    /// verified, never drafted from).
    pub(crate) level_start: Vec<usize>,
    /// Per lane: each node's index when it was drafted (its draft-cache slot past the
    /// root), when the tree was pruned after drafting; empty otherwise (each node its own).
    pub(crate) drafted_as: Vec<Vec<usize>>,
}

impl DraftCaches {
    /// Caches of `slots` tokens for `lanes`, each having read its prompt but the last
    /// token (one ragged pass over the prompts longer than one token).
    pub(crate) fn start(
        draft: &TransformerLM<'_>,
        lanes: &mut [Lane],
        slots: &[usize],
    ) -> Result<Self, Error> {
        let caches = slots
            .iter()
            .map(|&n| draft.new_cache(1, n))
            .collect::<Result<Vec<_>, _>>()?;
        let mut state = DraftCaches {
            caches,
            level_start: vec![0; lanes.len()],
            drafted_as: vec![Vec::new(); lanes.len()],
        };
        let long: Vec<usize> = (0..lanes.len())
            .filter(|&i| lanes[i].committed.len() > 1)
            .collect();
        let heads: Vec<Vec<u32>> = long
            .iter()
            .map(|&i| lanes[i].committed[..lanes[i].root_slot()].to_vec())
            .collect();
        let feeds: Vec<Feed<'_>> = heads.iter().map(|h| causal(h)).collect();
        state.pass(draft, lanes, &long, &feeds)?;
        Ok(state)
    }

    /// Feeds `feeds[j]` to the draft cache of lane `which[j]` (increasing) in one ragged
    /// pass of `draft`, counting it in their statistics.
    fn pass(
        &mut self,
        draft: &TransformerLM<'_>,
        lanes: &mut [Lane],
        which: &[usize],
        feeds: &[Feed<'_>],
    ) -> Result<Array2<f32>, Error> {
        for lane in pick(lanes, which) {
            lane.stats.draft_forwards += 1;
        }
        forward(draft, pick(&mut self.caches, which), feeds)
    }

    /// Starts a round for the `active` lanes: the draft catches up with the committed
    /// tokens it has not seen (the last round's deepest accepted node, which it was never
    /// fed), up to (not including) each root; nothing drafted yet.
    pub(crate) fn catch_up(
        &mut self,
        draft: &TransformerLM<'_>,
        lanes: &mut [Lane],
        active: &[usize],
    ) -> Result<(), Error> {
        for &i in active {
            self.level_start[i] = 0;
            self.drafted_as[i].clear();
        }
        let behind: Vec<usize> = active
            .iter()
            .copied()
            .filter(|&i| self.caches[i].len() < lanes[i].root_slot())
            .collect();
        let missing: Vec<Vec<u32>> = behind
            .iter()
            .map(|&i| lanes[i].committed[self.caches[i].len()..lanes[i].root_slot()].to_vec())
            .collect();
        let feeds: Vec<Feed<'_>> = missing.iter().map(|m| causal(m)).collect();
        self.pass(draft, lanes, &behind, &feeds)?;
        Ok(())
    }

    /// The `active` lanes that still grow at level `depth`: their round is that deep and
    /// their last level has nodes.
    pub(crate) fn growing(&self, lanes: &[Lane], active: &[usize], depth: usize) -> Vec<usize> {
        active
            .iter()
            .copied()
            .filter(|&i| depth < lanes[i].depth && self.level_start[i] < lanes[i].nodes.len())
            .collect()
    }

    /// Feeds each `growing` lane's last level (its nodes from `level_start`) to the draft in
    /// one batched tree-masked pass: the draft's logits after each node of those levels,
    /// lane after lane. The caller adds the children and moves `level_start` on.
    pub(crate) fn read_levels(
        &mut self,
        draft: &TransformerLM<'_>,
        lanes: &mut [Lane],
        growing: &[usize],
    ) -> Result<Array2<f32>, Error> {
        let masks: Vec<LevelMask> = growing
            .iter()
            .map(|&i| lanes[i].level_mask(self.level_start[i]))
            .collect();
        let feeds: Vec<Feed<'_>> = masks.iter().map(LevelMask::feed).collect();
        self.pass(draft, lanes, growing, &feeds)
    }

    /// The target accepted `path` of lane `index`'s tree (`lane`, before it commits): the
    /// draft cache keeps the root and the path's nodes it was fed (those drafted before
    /// `level_start`), each at the slot of its drafted index.
    pub(crate) fn accepted(
        &mut self,
        index: usize,
        lane: &Lane,
        path: &[usize],
    ) -> Result<(), Error> {
        let root_slot = lane.root_slot();
        let fed = self.level_start[index];
        let drafted_as = &self.drafted_as[index];
        let drafted = |i: usize| drafted_as.get(i).copied().unwrap_or(i);
        let in_draft: Vec<usize> = path
            .iter()
            .map(|&i| drafted(i))
            .filter(|&d| d < fed)
            .map(|d| root_slot + d)
            .collect();
        let cache = &mut self.caches[index];
        if cache.len() > root_slot {
            cache.keep(root_slot, &in_draft)?;
        }
        Ok(())
    }
}
