//! Speculative decoding for real: a proposer drafts a chain or a tree of tokens, the target
//! verifies all of them in one forward pass, and every cache rolls back to the accepted
//! path.
//!
//! This is the mechanism of Leviathan et al. (2023) and Chen et al. (2023) for chains, and
//! of SpecInfer (Miao et al. 2024), Medusa and EAGLE for trees, on the toy model of
//! `transformer_lab`. Start with [`reference`](mod@reference): the chain in one plain
//! function, then trees, with no cache, no mask and no batch. The fast path, tested
//! against it token for token, is laid out as serving engines lay it out (vLLM's
//! `v1/spec_decode`):
//!
//! - one seam for every drafter, [`Proposer`]: a draft model's chain or static tree
//!   ([`TreeDraft`]: level j keeps the draft's top-k_j children of every node of level
//!   j − 1, [`crate::TreeShape`]), its dynamic trees ([`DynamicDraft`], EAGLE-2), EAGLE's
//!   head on the target's features ([`EagleDraft`]), Medusa's
//!   heads on the target's last hidden state ([`MedusaDraft`]), or n-gram lookup with no
//!   model ([`PromptLookup`]);
//! - one loop, [`speculative_generate_batch`]: a whole batch advances together, each round
//!   the proposer's trees, then one batched forward of the target over every tree with a
//!   tree attention mask — each node sees the committed sequence and its own ancestors, at
//!   RoPE position = prefix length + depth ([`transformer_lab::TransformerLM::extend_ragged`]);
//! - one verification: greedy, the longest root-to-node path on which every token is the
//!   target's own argmax, plus the target's next token after it (the bonus token), so the
//!   output is exactly the target's greedy output; sampling, from the root each child x in
//!   turn accepted with probability min(1, p(x)/q(x)), p becoming normalise(max(0, p − q))
//!   on its rejection, a token drawn from what is left when all are rejected
//!   ([`accept_among`], SpecInfer's multi-step speculative sampling; on a chain, Leviathan
//!   et al.'s), so every output token is distributed exactly as if sampled from the target;
//! - every cache keeps only the accepted path ([`KvCache::keep`](transformer_lab::KvCache::keep)).

mod accept;
mod forward;
mod generate;
mod lane;
mod propose;
mod proposers;
pub mod reference;

pub use accept::{Choice, Sampling, accept_among};
pub use generate::{speculative_generate, speculative_generate_batch};
pub use lane::{Lane, Node, SpecStats};
pub use propose::Proposer;
pub use proposers::{
    DraftCaches, DynamicDraft, DynamicState, EagleDraft, EagleDynamic, EagleHead, EagleState,
    MAX_NGRAM, MedusaDraft, MedusaHead, MedusaHeads, PromptLookup, TreeDraft, lookup_proposal,
};
