//! Reading one `config.json`: its fields with errors that name the model and the field,
//! and the parts of a block beyond Llama's (experts, latent attention, sliding windows,
//! biases), each read as the `transformers` library reads it.

use serde_json::Value;

use crate::moe::Experts;
use crate::{Error, Mla, Sliding};

/// The fields of one `config.json`, read with errors that name the model and the field.
pub(super) struct Fields<'a> {
    pub(super) doc: &'a Value,
    pub(super) name: &'static str,
}

impl Fields<'_> {
    pub(super) fn bad(&self, why: &str) -> Error {
        Error::Invalid(format!("{}'s config.json: {why}", self.name))
    }

    pub(super) fn present(&self, field: &str) -> bool {
        self.doc.get(field).is_some_and(|v| !v.is_null())
    }

    pub(super) fn model_type(&self) -> &str {
        self.doc["model_type"].as_str().unwrap_or("")
    }

    pub(super) fn optional(&self, field: &str) -> Result<Option<u64>, Error> {
        match self.doc.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| self.bad(&format!("{field} is {v}, not a whole number"))),
        }
    }

    pub(super) fn required(&self, field: &str) -> Result<u64, Error> {
        self.optional(field)?
            .ok_or_else(|| self.bad(&format!("it has no {field}, which the roofline needs")))
    }

    pub(super) fn flag(&self, field: &str) -> Result<Option<bool>, Error> {
        match self.doc.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.bad(&format!("{field} is {v}, not true or false"))),
        }
    }

    /// Fields whose value describes what the roofline does not price: refused, named.
    pub(super) fn refuse_unpriced(&self) -> Result<(), Error> {
        let dense_among = "(dense layers among sparse ones) is not priced yet";
        if self.doc["mlp_only_layers"]
            .as_array()
            .is_some_and(|a| !a.is_empty())
        {
            return Err(self.bad(&format!("field mlp_only_layers {dense_among}")));
        }
        for field in ["decoder_sparse_step", "moe_layer_freq"] {
            if self.optional(field)?.is_some_and(|s| s != 1) {
                return Err(self.bad(&format!("field {field} ≠ 1 {dense_among}")));
            }
        }
        Ok(())
    }

    /// The experts: E from `num_local_experts` (Mixtral, gpt-oss), `num_experts`
    /// (Qwen-MoE) or `n_routed_experts` (DeepSeek); `None` for a dense model.
    pub(super) fn experts(&self) -> Result<Option<Experts>, Error> {
        let mut routed = None;
        for field in ["num_local_experts", "num_experts", "n_routed_experts"] {
            routed = routed.or(self.optional(field)?);
        }
        let Some(routed) = routed else {
            let needs_experts = [
                "n_shared_experts",
                "shared_expert_intermediate_size",
                "first_k_dense_replace",
            ];
            for field in needs_experts {
                if self.present(field) {
                    return Err(self.bad(&format!("{field} without routed experts")));
                }
            }
            return Ok(None);
        };
        let d_ff = match self.optional("moe_intermediate_size")? {
            Some(w) => w,
            None => self.optional("intermediate_size")?.ok_or_else(|| {
                self.bad(
                    "it has no moe_intermediate_size (nor intermediate_size), the experts' width",
                )
            })?,
        };
        let qwen_shared = self.optional("shared_expert_intermediate_size")?;
        let deepseek_shared = match self.optional("n_shared_experts")? {
            Some(k) => k.saturating_mul(self.required("moe_intermediate_size")?),
            None => 0,
        };
        let model_type = self.model_type();
        Ok(Some(Experts {
            top_k: self.required("num_experts_per_tok")?,
            shared_d_ff: qwen_shared.unwrap_or(deepseek_shared),
            // Qwen2-MoE's shared expert comes with its gate.
            shared_gate: qwen_shared.is_some(),
            router_bias: matches!(model_type, "deepseek_v3" | "gpt_oss"),
            expert_bias: model_type == "gpt_oss",
            dense_layers: self.optional("first_k_dense_replace")?.unwrap_or(0),
            ..Experts::routed(routed, 0, d_ff)
        }))
    }

    /// DeepSeek's latent attention, when `kv_lora_rank` is set.
    pub(super) fn mla(&self) -> Result<Option<Mla>, Error> {
        let Some(kv_lora_rank) = self.optional("kv_lora_rank")? else {
            return Ok(None);
        };
        Ok(Some(Mla {
            q_lora_rank: self.optional("q_lora_rank")?.unwrap_or(0),
            kv_lora_rank,
            qk_nope_head_dim: self.required("qk_nope_head_dim")?,
            qk_rope_head_dim: self.required("qk_rope_head_dim")?,
            v_head_dim: self.required("v_head_dim")?,
        }))
    }

    /// Which layers slide: `Ok((sliding, cap))` with `sliding` the sliding layers among
    /// full ones (`layer_types`, or Gemma 2's every other layer) and `cap` a window every
    /// layer shares (then the context's maximum: past it full attention and the window
    /// read the same KV). `use_sliding_window: false` turns the window off.
    pub(super) fn sliding(&self, n_layers: u64) -> Result<(Option<Sliding>, Option<u64>), Error> {
        if self.flag("use_sliding_window")? == Some(false) {
            return Ok((None, None));
        }
        let sliding_layers = match self.doc.get("layer_types") {
            None | Some(Value::Null) if self.model_type() == "gemma2" => Some(n_layers.div_ceil(2)),
            None | Some(Value::Null) => None,
            Some(Value::Array(types)) => {
                if types.len() as u64 != n_layers {
                    return Err(self.bad(&format!(
                        "layer_types names {} layers, num_hidden_layers {n_layers}",
                        types.len()
                    )));
                }
                let mut sliding = 0;
                for t in types {
                    match t.as_str() {
                        Some("full_attention") => {}
                        Some("sliding_attention") => sliding += 1,
                        _ => {
                            return Err(self.bad(&format!(
                                "layer_types holds {t}, which the roofline does not price \
                                 (it prices full_attention and sliding_attention)"
                            )));
                        }
                    }
                }
                Some(sliding)
            }
            Some(v) => return Err(self.bad(&format!("layer_types is {v}, not a list"))),
        };
        Ok(match sliding_layers {
            Some(0) => (None, None),
            Some(layers) => {
                let window = self.required("sliding_window")?;
                (Some(Sliding { window, layers }), None)
            }
            None => (None, self.optional("sliding_window")?),
        })
    }
}
