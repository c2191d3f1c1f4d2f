//! Mixture-of-experts models in the roofline: total against active parameters, and how
//! many experts a pass reads. A [`ModelConfig`] whose `moe` is set replaces its dense MLP
//! with `routed` experts per layer, of which each token uses `top_k`, beside a shared MLP
//! every token goes through (Qwen2-MoE, DeepSeek), in all layers but the first
//! `dense_layers` (DeepSeek's, which keep a dense MLP). At batch 1 a decode step streams
//! the attention, the router, the shared MLP and the `k` routed experts of each sparse
//! layer; with `t` tokens in the pass, each routing `k` of `E` experts, about
//! `E · (1 − (1 − k/E)^t)` distinct experts are read (uniform routing), so at large batch
//! nearly all of them. [`crate::forward_cost`] multiplies every token by its `k` experts
//! and reads the expected distinct ones.
//!
//! Motivated by Qwen3-30B-A3B measured on H100s with SGLang (the SpecForge and AngelSlim
//! threads of one user, batch 1–64 at TP 2 and TP 4), where a 3B-active model's step time
//! grows with batch far faster than a 3B dense model's would.

use crate::Error;
use crate::config::ModelConfig;
use crate::count::n;
use crate::experts::{Experts, expected_experts_read};

impl ModelConfig {
    /// Parameters one token is multiplied by, as model cards count "activated" parameters:
    /// [`ModelConfig::n_params`] less the routed experts a token does not use,
    /// `sparse layers · (E − k) · expert`. A dense model's are all of them.
    ///
    /// ```
    /// assert_eq!(llm_math::LLAMA31_8B.active_params(), llm_math::LLAMA31_8B.n_params());
    /// ```
    pub fn active_params(&self) -> u64 {
        self.n_params() - self.unused_expert_params()
    }

    /// Layers whose MLP is dense: all of a dense model's, an MoE model's first
    /// [`Experts::dense_layers`] (at most `n_layers`).
    pub fn dense_layers(&self) -> u64 {
        self.moe
            .map_or(self.n_layers, |x| x.dense_layers.min(self.n_layers))
    }

    /// Layers whose MLP is routed experts: `n_layers −` [`dense_layers`](Self::dense_layers).
    pub fn sparse_layers(&self) -> u64 {
        self.n_layers - self.dense_layers()
    }

    /// Parameters of the routed experts one token leaves unread, over the model:
    /// `sparse layers · (E − k) · expert` (0 for a dense model).
    pub(crate) fn unused_expert_params(&self) -> u64 {
        self.moe.map_or(0, |x| {
            let unused = x.routed.saturating_sub(x.top_k);
            (n(self.sparse_layers()) * n(unused) * n(x.per_expert(self.d_model))).0
        })
    }

    /// The experts and how many of them one sparse layer reads in a pass over `tokens`
    /// tokens ([`expected_experts_read`]); `None` for a dense model.
    pub(crate) fn experts_read(&self, tokens: u64) -> Result<Option<(Experts, f64)>, Error> {
        let Some(x) = self.moe else {
            return Ok(None);
        };
        x.check()?;
        let read = expected_experts_read(x.routed, x.top_k, tokens.max(1))?;
        Ok(Some((x, read)))
    }

    /// Parameters a pass over `tokens` tokens streams from memory:
    /// [`ModelConfig::streamed_params`] (one token's) plus, for an MoE model, the routed
    /// experts the other tokens add, `sparse layers · (read(tokens) − k) · expert` with
    /// `read` = [`expected_experts_read`]. A dense model's do not depend on `tokens`.
    ///
    /// Errors: an MoE model whose experts break [`Experts::check`].
    ///
    /// ```
    /// use llm_math::LLAMA31_8B;
    /// assert_eq!(LLAMA31_8B.streamed_params_for(64)?, LLAMA31_8B.streamed_params() as f64);
    /// // Two tokens read 15.5 experts per layer instead of 8: 48 · 7.5 · 3 · 2048 · 768 more.
    /// let qwen3 = llm_math::model("Qwen3-30B-A3B").unwrap();
    /// let more = qwen3.streamed_params_for(2)? - qwen3.streamed_params() as f64;
    /// assert_eq!(more, 48.0 * 7.5 * 3.0 * 2048.0 * 768.0);
    /// # Ok::<(), llm_math::Error>(())
    /// ```
    pub fn streamed_params_for(&self, tokens: u64) -> Result<f64, Error> {
        let one = self.streamed_params() as f64;
        let Some((x, read)) = self.experts_read(tokens)? else {
            return Ok(one);
        };
        let extra = read - x.top_k as f64;
        Ok(one + self.sparse_layers() as f64 * extra * x.per_expert(self.d_model) as f64)
    }

    /// The experts' biases (16-bit parameters) a pass over `tokens` tokens leaves
    /// unread: `sparse layers · (E − read(tokens)) · ` their biases; 0 without any.
    pub(crate) fn unread_expert_vectors(&self, tokens: u64) -> Result<f64, Error> {
        Ok(self.experts_read(tokens)?.map_or(0.0, |(x, read)| {
            let vectors = x.per_expert_vectors(self.d_model).0 as f64;
            self.sparse_layers() as f64 * (x.routed as f64 - read) * vectors
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Deployment, ForwardShape, forward_cost};
    use hw_specs::H100;

    #[test]
    fn qwen3_30b_a3b_has_the_model_cards_total_and_active_counts() {
        let total = crate::model("Qwen3-30B-A3B").unwrap().n_params() as f64;
        let active = crate::model("Qwen3-30B-A3B").unwrap().active_params() as f64;
        assert!((total / 30.5e9 - 1.0).abs() < 0.01, "{total}");
        assert!((active / 3.3e9 - 1.0).abs() < 0.02, "{active}");
        // By hand, per layer: attention 2·2048·4096 + 2·2048·512 + q/k norms 256 + norms
        // 2·2048; router 2048·128; experts 128 · 3·2048·768. Plus 2 · 151,936 · 2048 + 2048.
        let layer = 2 * 2048 * 4096 + 2 * 2048 * 512 + 256 + 2 * 2048 + 2048 * 128;
        let experts = 128 * 3 * 2048 * 768;
        let embed = 2 * 151_936 * 2048 + 2048;
        assert_eq!(
            crate::model("Qwen3-30B-A3B").unwrap().n_params(),
            48 * (layer + experts) + embed
        );
        assert_eq!(
            crate::model("Qwen3-30B-A3B").unwrap().active_params(),
            48 * (layer + 8 * 3 * 2048 * 768) + embed
        );
    }

    #[test]
    fn experts_read_go_from_k_to_all_of_them() {
        assert_eq!(expected_experts_read(16, 16, 1).unwrap(), 16.0);
        // 1 − (7/8)^3 = 169/512 of 8 experts.
        assert!((expected_experts_read(8, 1, 3).unwrap() - 8.0 * 169.0 / 512.0).abs() < 1e-12);
        let many = expected_experts_read(128, 8, 1024).unwrap();
        assert!(many <= 128.0 && 128.0 - many < 1e-9, "{many}");
        assert!(expected_experts_read(8, 9, 1).is_err());
        assert!(expected_experts_read(0, 0, 1).is_err());
    }

    /// Batch 1, context 512, bf16 on one H100 at 80% of 3.35 TB/s: 8 experts per layer;
    /// 2 B · (48 · (2·2048·4096 + 2·2048·512 + 256 + 4096 + 2048·128 + 8 · 3·2048·768)
    /// plus 151,936 · 2048 + 2048) plus 513 · 98,304 B = 6,134,165,504 B, so 2.2889 ms;
    /// compute is light: 2 · 3,041,867,776 FLOPs (the active parameters less the input
    /// embedding) + 4 · 48 · 32 · 128 · 512 for attention = 6,486,388,736 FLOPs at 60% of
    /// 989 TFLOP/s, 0.010931 ms.
    #[test]
    fn a_batch_one_step_reads_the_routed_experts_only_by_hand() {
        let shape = ForwardShape {
            batch: 1,
            ctx: 512,
            n_new: 1,
        };
        let c = forward_cost(
            crate::model("Qwen3-30B-A3B").unwrap(),
            &H100,
            shape,
            &Deployment::LECTURE,
        )
        .unwrap();
        let bytes = 2.0
            * (48.0
                * (2.0 * 2048.0 * 4096.0
                    + 2.0 * 2048.0 * 512.0
                    + 256.0
                    + 4096.0
                    + 2048.0 * 128.0
                    + 8.0 * 3.0 * 2048.0 * 768.0)
                + 151_936.0 * 2048.0
                + 2048.0)
            + 513.0 * 98_304.0;
        assert_eq!(bytes, 6_134_165_504.0);
        assert_eq!(c.bytes, bytes);
        assert_eq!(c.flops, 6_486_388_736.0);
        assert!((c.memory_time - bytes / (3.35e12 * 0.8)).abs() < 1e-15);
        assert!((c.time() - 2.2889e-3).abs() < 1e-7, "{}", c.time());
        assert!(
            (c.compute_time - 0.010931e-3).abs() < 1e-9,
            "{}",
            c.compute_time
        );
    }

    /// Batch 256: 128 · (1 − (15/16)^256) = 127.99999 experts, i.e. all of them: the step
    /// streams all 30.5B parameters (less the input embedding) plus 256 · 513 KV entries:
    /// 2 · 30,220,957,696 + 256 · 513 · 98,304 = 73.35 GB at 2.68 TB/s, 27.370 ms — where a
    /// dense model of 3.3B would still read only its 3.3B. Compute: 256 times the batch-1
    /// step's 6.47 GFLOP, 2.79 ms, still below the memory time.
    #[test]
    fn a_large_batch_step_reads_nearly_every_expert_by_hand() {
        let shape = ForwardShape {
            batch: 256,
            ctx: 512,
            n_new: 1,
        };
        let c = forward_cost(
            crate::model("Qwen3-30B-A3B").unwrap(),
            &H100,
            shape,
            &Deployment::LECTURE,
        )
        .unwrap();
        let read = expected_experts_read(128, 8, 256).unwrap();
        assert!((read - 127.99999145).abs() < 1e-7, "{read}");
        let all = (crate::model("Qwen3-30B-A3B").unwrap().n_params() - 151_936 * 2048) as f64;
        assert_eq!(all, 30_220_957_696.0);
        let upper = (2.0 * all + 256.0 * 513.0 * 98_304.0) / (3.35e12 * 0.8);
        assert!(
            c.memory_time < upper && upper - c.memory_time < 1e-6,
            "{}",
            c.memory_time
        );
        assert!((c.time() - 27.370e-3).abs() < 1e-6, "{}", c.time());
        assert!((c.compute_time - 256.0 * 6_486_388_736.0 / (989e12 * 0.6)).abs() < 1e-15);
        assert!(c.compute_time < c.memory_time);
    }

    #[test]
    fn bad_experts_are_errors_not_panics() {
        let bad = ModelConfig {
            moe: Some(Experts {
                top_k: 129,
                ..crate::model("Qwen3-30B-A3B").unwrap().moe.unwrap()
            }),
            ..*crate::model("Qwen3-30B-A3B").unwrap()
        };
        let e = bad.streamed_params_for(1).unwrap_err().to_string();
        assert!(e.contains("k = 129"), "{e}");
        let shape = ForwardShape {
            batch: 1,
            ctx: 1,
            n_new: 1,
        };
        assert!(forward_cost(&bad, &H100, shape, &Deployment::LECTURE).is_err());
        let tp3 = Deployment {
            tp: 3,
            ..Deployment::LECTURE
        };
        assert!(forward_cost(crate::model("Qwen3-30B-A3B").unwrap(), &H100, shape, &tp3).is_err());
    }
}
