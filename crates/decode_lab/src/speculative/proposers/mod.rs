//! The proposers, one per drafter: [`TreeDraft`] (a draft model's chain or static tree),
//! [`DynamicDraft`] (EAGLE-2's dynamic trees), [`EagleDraft`] (EAGLE's head on the
//! target's features), [`MedusaDraft`] (heads on the target's last
//! hidden state) and [`PromptLookup`] (n-gram lookup), with
//! the draft model's caches the first two share ([`DraftCaches`]). Beside them,
//! `head_ranks.rs`: where Medusa's heads and EAGLE's head rank a known continuation, round
//! by round (`MedusaHeads::round_ranks`, `EagleHead::round_ranks`), for the rank-based
//! estimate of demo 3.

mod draft_caches;
mod dynamic;
mod eagle;
mod eagle_dynamic;
mod head_ranks;
mod lookup;
mod medusa;
mod tree;

pub use draft_caches::DraftCaches;
pub(crate) use draft_caches::check_draft;
pub use dynamic::{DynamicDraft, DynamicState};
pub use eagle::{EagleDraft, EagleHead, EagleState};
pub use eagle_dynamic::EagleDynamic;
pub use lookup::{MAX_NGRAM, PromptLookup, lookup_proposal};
pub use medusa::{MedusaDraft, MedusaHead, MedusaHeads};
pub use tree::TreeDraft;
