//! What proposes the γ tokens of a speculative round, and what one of its steps reads.

use crate::Error;
use llm_math::ModelConfig;

/// What proposes the γ tokens of a round.
#[derive(Debug, Clone, Copy, PartialEq)]
// `Copy` and built in consts (`Scenario::LECTURE`): a model's shape by value is the
// point, however much larger than a fixed cost it is.
#[allow(clippy::large_enum_variant)]
pub enum Draft {
    /// A separate, smaller model of the target's tokenizer family (classic draft–target
    /// speculation), served like the target (same cards, tensor parallelism and dtypes).
    /// One draft step is a roofline pass of this model over one token per sequence.
    Model(ModelConfig),
    /// A draft head on the target's own features, EAGLE-style: one decoder layer of the
    /// target's shape plus the target's LM head (`vocab × d_model`), read once per draft
    /// step, with its one layer of KV cache. (EAGLE's small fusion layer, 2·d_model² weights,
    /// about 4% of the head's bytes for an 8B target, is left out.)
    Head,
    /// A draft whose step costs a fixed fraction `c` of a plain target step, whatever the
    /// batch: n-gram / prompt-lookup drafting (c ≈ 0), multi-token-prediction heads, or a
    /// measured c. `t_draft = c · t_base`; the draft overhead is not added on top.
    FixedCost(f64),
    /// Self-speculation (MagicDec, TriForce): the target drafts for itself while reading
    /// only the last `kv_window` tokens of each sequence's cache (StreamingLLM-style), so a
    /// draft step reads all the weights but only `min(ctx, kv_window)` tokens of KV. It uses
    /// the target's overhead: it runs the target's kernels.
    SelfSpec {
        /// Tokens of KV the draft reads per sequence (StreamingLLM's sink + window).
        kv_window: u64,
    },
    /// Layer-skip self-drafting (Draft & Verify, Zhang et al. 2024; LayerSkip, Elhoushi et
    /// al. 2024): the target's first `layers` layers and its LM head draft, sharing the
    /// target's weights and those layers' KV cache, so a draft step reads `layers` of its
    /// layers, the head, and their KV. It uses the target's overhead.
    FirstLayers {
        /// Target layers the draft runs, from 1 to the target's layers − 1.
        layers: u64,
    },
}

/// The largest fixed draft cost c: a draft step ten times a target step never pays, and
/// a round of them stays finite.
pub const MAX_DRAFT_COST: f64 = 10.0;

impl Draft {
    /// A plain-English name for errors and logs ("Llama-3.2-1B", "a one-layer draft head");
    /// a lecture words drafts in its own language.
    pub fn name(&self) -> String {
        match self {
            Draft::Model(m) => m.name.to_string(),
            Draft::Head => "a one-layer draft head".to_string(),
            Draft::FixedCost(c) => format!("a draft at fixed cost c = {c}"),
            Draft::SelfSpec { kv_window } => {
                format!("self-speculation with a {kv_window}-token KV window")
            }
            Draft::FirstLayers { layers } => format!("the target's first {layers} layers"),
        }
    }

    /// The model one draft step runs as a roofline pass, and the context it reads, for
    /// a target `target` at context `ctx`; `None` for [`Draft::FixedCost`], which costs
    /// a fraction of a target step instead.
    pub fn pass_model(&self, target: &ModelConfig, ctx: u64) -> Option<(ModelConfig, u64)> {
        match *self {
            Draft::Model(m) => Some((m, ctx)),
            // One layer of the target's shape, and the target's (untied) LM head.
            Draft::Head => Some((
                ModelConfig {
                    tied_embeddings: false,
                    ..target.first_layers(1)
                },
                ctx,
            )),
            Draft::SelfSpec { kv_window } => Some((*target, ctx.min(kv_window))),
            Draft::FirstLayers { layers } => Some((target.first_layers(layers), ctx)),
            Draft::FixedCost(_) => None,
        }
    }

    /// Checks the draft's own parameter: c from 0 to [`MAX_DRAFT_COST`], a window of at
    /// least 1 token.
    pub fn check(&self) -> Result<(), Error> {
        match *self {
            Draft::FixedCost(c) if !(0.0..=MAX_DRAFT_COST).contains(&c) => {
                Err(Error::Argument(format!(
                    "the draft cost per level must be a fraction of a target step from 0 to \
                 {MAX_DRAFT_COST}, got {c}"
                )))
            }
            Draft::SelfSpec { kv_window: 0 } => Err(Error::Argument(
                "a self-speculation KV window must hold at least 1 token".into(),
            )),
            Draft::FirstLayers { layers: 0 } => Err(Error::Argument(
                "a layer-skip draft runs at least 1 of the target's layers".into(),
            )),
            _ => Ok(()),
        }
    }
}

/// Whether `draft` can propose tokens for `target`: both must share a tokenizer.
///
/// Errors with [`Error::TokenizerMismatch`], naming both models and families.
///
/// ```
/// use decode_lab::{check_tokenizers, LLAMA32_1B};
/// use llm_math::LLAMA31_8B;
/// assert!(check_tokenizers(&LLAMA31_8B, &LLAMA32_1B).is_ok());
/// let e = check_tokenizers(llm_math::model("Mistral-7B-v0.3").unwrap(), &LLAMA32_1B).unwrap_err().to_string();
/// assert!(e.contains("Mistral v3") && e.contains("Llama 3"), "{e}");
/// ```
pub fn check_tokenizers(target: &ModelConfig, draft: &ModelConfig) -> Result<(), Error> {
    if target.tokenizer == draft.tokenizer {
        return Ok(());
    }
    Err(Error::TokenizerMismatch {
        target: target.name,
        target_tokenizer: target.tokenizer.name(),
        draft: draft.name,
        draft_tokenizer: draft.tokenizer.name(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use llm_math::LLAMA32_1B;

    #[test]
    fn different_tokenizers_cannot_speculate_together() {
        assert!(
            check_tokenizers(
                llm_math::model("Qwen3-32B").unwrap(),
                llm_math::model("Qwen3-0.6B").unwrap()
            )
            .is_ok()
        );
        assert!(check_tokenizers(llm_math::model("Llama-3.3-70B").unwrap(), &LLAMA32_1B).is_ok());
        for target in [
            *llm_math::model("Mistral-7B-v0.3").unwrap(),
            *llm_math::model("Qwen2.5-7B").unwrap(),
        ] {
            let msg = check_tokenizers(&target, &LLAMA32_1B)
                .unwrap_err()
                .to_string();
            assert!(
                msg.contains(target.name) && msg.contains("Llama-3.2-1B"),
                "{msg}"
            );
            assert!(msg.contains("tokenizer"), "{msg}");
        }
        // Qwen2.5's embedding is padded to 152,064 rows, Qwen3's to 151,936: same tokenizer.
        assert!(
            check_tokenizers(
                llm_math::model("Qwen2.5-7B").unwrap(),
                llm_math::model("Qwen3-0.6B").unwrap()
            )
            .is_ok()
        );
    }
}
