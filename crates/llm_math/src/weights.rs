//! What the weights weigh, part by part: the linear layers' matrices at the format the
//! weights are served in, everything else (embedding, LM head, norms, biases, an MoE
//! router) at 16 bits, as engines serve FP8 and INT4 checkpoints.

use crate::count::n;
use crate::{Error, ModelConfig, WeightDtype};

impl ModelConfig {
    /// Parameters that stay at 16 bits whatever format the weights are served in: the
    /// embedding table (and an untied LM head), the norm gains, biases, attention sinks,
    /// an MoE router and shared-expert gate — everything but the linear layers' matrices. FP8 and INT4 recipes quantize the
    /// attention and MLP projections and leave these out (vLLM's and TensorRT-LLM's FP8,
    /// AWQ and GPTQ all keep `lm_head` and the embedding in 16 bits).
    ///
    /// ```
    /// use llm_math::LLAMA31_8B;
    /// // Two 128,256 × 4096 tables, 2 · 4096 norm gains per layer and the final norm.
    /// let sixteen = 2 * 128_256 * 4096 + 32 * 2 * 4096 + 4096;
    /// assert_eq!(LLAMA31_8B.sixteen_bit_params(), sixteen);
    /// ```
    pub fn sixteen_bit_params(&self) -> u64 {
        let per_layer = self.attention_vectors() + self.norm_params();
        let experts = self.moe.map_or(n(0), |x| x.vectors(self.d_model));
        let tables = if self.tied_embeddings { 1 } else { 2 };
        let embed = n(self.vocab) * n(self.d_model) * n(tables);
        (n(self.n_layers) * per_layer + n(self.sparse_layers()) * experts + embed + n(self.d_model))
            .0
    }

    /// Bytes the weights take in device memory served as `weights`: the linear layers'
    /// matrices at `weights`' bytes per weight, the [`sixteen_bit_params`](Self::sixteen_bit_params)
    /// at 2 bytes (INT4's group scales are left out). bf16 is `2 · n_params`.
    ///
    /// ```
    /// use llm_math::{LLAMA31_8B, WeightDtype};
    /// assert_eq!(LLAMA31_8B.weight_bytes(WeightDtype::Bf16), 2.0 * 8_030_261_248.0);
    /// // FP8: 6,979,321,856 linear weights at 1 byte, 1,050,939,392 others at 2.
    /// assert_eq!(LLAMA31_8B.weight_bytes(WeightDtype::Fp8), 6_979_321_856.0 + 2.0 * 1_050_939_392.0);
    /// ```
    pub fn weight_bytes(&self, weights: WeightDtype) -> f64 {
        self.bytes_of(
            self.n_params() as f64,
            self.sixteen_bit_params() as f64,
            weights,
        )
    }

    /// Bytes of weights a pass over `tokens` tokens streams from memory at `weights`:
    /// [`ModelConfig::streamed_params_for`], the linear layers' at `weights`' bytes, the
    /// rest at 2 bytes (the input embedding is a lookup, not streamed, when untied; the
    /// biases of experts no token routes to, gpt-oss's, are not read either).
    ///
    /// Errors: an MoE model whose experts break [`crate::Experts::check`].
    ///
    /// ```
    /// use llm_math::{LLAMA31_8B, WeightDtype};
    /// let bf16 = LLAMA31_8B.streamed_weight_bytes(1, WeightDtype::Bf16)?;
    /// assert_eq!(bf16, 2.0 * 7_504_924_672.0);
    /// // FP8: the LM head (525 M weights) stays at 2 bytes.
    /// let fp8 = LLAMA31_8B.streamed_weight_bytes(1, WeightDtype::Fp8)?;
    /// assert_eq!(fp8, 6_979_321_856.0 + 2.0 * 525_602_816.0);
    /// # Ok::<(), llm_math::Error>(())
    /// ```
    pub fn streamed_weight_bytes(&self, tokens: u64, weights: WeightDtype) -> Result<f64, Error> {
        let read = self.streamed_params_for(tokens)?;
        let sixteen = self.streamed_sixteen_bit_params(tokens)?;
        Ok(self.bytes_of(read, sixteen, weights))
    }

    /// Weights of the linear layers' matrices a pass over `tokens` tokens streams: what a
    /// quantized format (FP8, INT8, INT4) holds and a dequantizing kernel converts, the
    /// [`streamed_params_for`](Self::streamed_params_for) less the 16-bit ones
    /// ([`sixteen_bit_params`](Self::sixteen_bit_params)) the pass reads.
    ///
    /// Errors: an MoE model whose experts break [`crate::Experts::check`].
    ///
    /// ```
    /// use llm_math::LLAMA31_8B;
    /// // 7,504,924,672 streamed, of which the LM head (525,336,576) and the norms
    /// // (266,240) stay at 16 bits.
    /// assert_eq!(LLAMA31_8B.streamed_quantized_params(1)?, 6_979_321_856.0);
    /// # Ok::<(), llm_math::Error>(())
    /// ```
    pub fn streamed_quantized_params(&self, tokens: u64) -> Result<f64, Error> {
        Ok(self.streamed_params_for(tokens)? - self.streamed_sixteen_bit_params(tokens)?)
    }

    /// The 16-bit weights a pass over `tokens` tokens streams: every one but an untied
    /// input embedding (a lookup) and the biases of experts no token routes to.
    fn streamed_sixteen_bit_params(&self, tokens: u64) -> Result<f64, Error> {
        let lookup = if self.tied_embeddings {
            0
        } else {
            self.vocab * self.d_model
        };
        Ok((self.sixteen_bit_params() - lookup) as f64 - self.unread_expert_vectors(tokens)?)
    }

    /// `params` weights of which `sixteen` are kept at 16 bits, the rest at `weights`.
    fn bytes_of(&self, params: f64, sixteen: f64, weights: WeightDtype) -> f64 {
        weights.bytes() * (params - sixteen) + 2.0 * sixteen
    }
}
