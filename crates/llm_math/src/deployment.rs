//! How a model is served: tensor parallelism, dtypes, and the fractions of peak a real
//! kernel reaches. [`Deployment::LECTURE`] is lecture 1's (and lecture 6's) setup.

use hw_specs::Accelerator;

use crate::{Error, KvDtype, ModelConfig, WeightDtype};

/// Fraction of peak FLOP/s a real decode kernel reaches (lecture 1's assumption).
pub const COMPUTE_EFFICIENCY: f64 = 0.6;
/// Fraction of peak HBM bandwidth a real decode kernel reaches (lecture 1's assumption).
pub const BANDWIDTH_EFFICIENCY: f64 = 0.8;

/// How a model is served: the roofline's knobs beyond the model and the card.
///
/// [`Deployment::LECTURE`] (also `Deployment::default()`) is the lecture's: one card, bf16
/// weights and KV, 60% of peak FLOP/s, 80% of peak bandwidth, no all-reduce latency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Deployment {
    /// Tensor-parallel degree: the model is split over this many cards of the same kind
    /// (Megatron-style: heads and the MLP's hidden width split N ways, two all-reduces
    /// of the activations per layer). Checked by [`Deployment::check`].
    pub tp: u64,
    /// How the weights are stored.
    pub weights: WeightDtype,
    /// How the KV cache is stored.
    pub kv: KvDtype,
    /// Fraction of peak FLOP/s reached, in (0, 1].
    pub compute_efficiency: f64,
    /// Fraction of peak memory bandwidth reached, in (0, 1].
    pub bandwidth_efficiency: f64,
    /// Fixed cost of one all-reduce, seconds (launch and synchronisation, independent of
    /// size); charged `2 · layers` times per pass when `tp > 1`. 0 in the lecture.
    pub all_reduce_latency: f64,
}

/// The longest fixed cost a pass may carry, seconds (an overhead, an all-reduce's
/// latency): an hour, far above any engine's milliseconds, and low enough that a round of
/// them stays finite.
pub const MAX_SECONDS: f64 = 3600.0;

/// The smallest fraction of a card's peak a deployment may reach (0.1%): any less and a
/// pass's time could overflow to infinity; no kernel is that slow.
pub const MIN_EFFICIENCY: f64 = 1e-3;

impl Deployment {
    /// The lecture's deployment: one card, bf16 weights and KV cache, 60% / 80% of peak,
    /// free all-reduces. Every other default of the course derives from this one.
    pub const LECTURE: Deployment = Deployment {
        tp: 1,
        weights: WeightDtype::Bf16,
        kv: KvDtype::Bf16,
        compute_efficiency: COMPUTE_EFFICIENCY,
        bandwidth_efficiency: BANDWIDTH_EFFICIENCY,
        all_reduce_latency: 0.0,
    };

    /// This deployment with the weights served as `weights`.
    ///
    /// ```
    /// use llm_math::{Deployment, WeightDtype};
    /// let fp8 = Deployment::LECTURE.with_weights(WeightDtype::Fp8);
    /// assert_eq!((fp8.weights, fp8.tp), (WeightDtype::Fp8, 1));
    /// ```
    pub const fn with_weights(self, weights: WeightDtype) -> Deployment {
        Deployment { weights, ..self }
    }

    /// Checks that both efficiencies are fractions of peak from [`MIN_EFFICIENCY`] to 1.
    ///
    /// Errors: the efficiency out of range, named.
    pub(crate) fn check_efficiencies(&self) -> Result<(), Error> {
        for (what, e) in [
            ("compute efficiency", self.compute_efficiency),
            ("bandwidth efficiency", self.bandwidth_efficiency),
        ] {
            if !(MIN_EFFICIENCY..=1.0).contains(&e) {
                return Err(Error::Invalid(format!(
                    "{what} must be a fraction of peak from {MIN_EFFICIENCY} to 1, got {e}"
                )));
            }
        }
        Ok(())
    }

    /// Whether the card can run this deployment: it runs the weights' format
    /// ([`WeightDtype::check_card`](crate::WeightDtype::check_card)), and more than one
    /// card needs a link that carries something between them.
    ///
    /// ```
    /// use llm_math::Deployment;
    /// let mut lone = hw_specs::H100;
    /// lone.interconnect.per_direction = 0.0;
    /// let tp2 = Deployment { tp: 2, ..Deployment::LECTURE };
    /// assert!(tp2.check_card(&lone).unwrap_err().to_string().contains("carries nothing"));
    /// assert!(Deployment::LECTURE.check_card(&lone).is_ok());
    /// ```
    pub fn check_card(&self, hw: &Accelerator) -> Result<(), Error> {
        self.weights.check_card(hw)?;
        if self.tp > 1 && hw.interconnect.all_reduce_bandwidth(self.tp) < 1.0 {
            return Err(Error::Invalid(format!(
                "tensor parallelism over {} cards needs a link between them, and {}'s \
                 interconnect carries nothing",
                self.tp, hw.name
            )));
        }
        Ok(())
    }

    /// Checks every knob against `cfg`: `tp ≥ 1`, dividing the query heads, the MLP's
    /// hidden width `d_ff` and `d_model`, and either dividing the KV heads or a multiple of
    /// them (past the KV heads each KV head is replicated, as vLLM does); efficiencies in
    /// (0, 1]; a finite latency ≥ 0. Errors say which knob and why.
    ///
    /// ```
    /// use llm_math::Deployment;
    /// let tp7 = Deployment { tp: 7, ..Deployment::LECTURE };
    /// // 28 query heads split 7 ways, but 4 KV heads cannot be.
    /// let e = tp7.check(llm_math::model("Qwen2.5-7B").unwrap()).unwrap_err().to_string();
    /// assert!(e.contains("4 KV heads"), "{e}");
    /// ```
    pub fn check(&self, cfg: &ModelConfig) -> Result<(), Error> {
        cfg.validate()?;
        let tp = self.tp;
        if tp == 0 {
            return Err(Error::Zero("tensor-parallel degree"));
        }
        let split = |what: &str, n: u64| -> Result<(), Error> {
            if n.is_multiple_of(tp) {
                Ok(())
            } else {
                Err(Error::Invalid(format!(
                    "tensor parallelism over {tp} cards does not divide {}'s {n} {what}",
                    cfg.name
                )))
            }
        };
        split("query heads", cfg.n_heads)?;
        let kv = cfg.n_kv_heads;
        if !(kv.is_multiple_of(tp) || tp.is_multiple_of(kv)) {
            return Err(Error::Invalid(format!(
                "tensor parallelism over {tp} cards neither divides {}'s {kv} KV heads nor is \
                 a multiple of them",
                cfg.name
            )));
        }
        split("MLP hidden units (d_ff)", cfg.d_ff)?;
        if let Some(x) = cfg.moe {
            x.check()?;
            split("expert hidden units", x.d_ff)?;
        }
        split("model dimensions (d_model)", cfg.d_model)?;
        self.check_efficiencies()?;
        let latency = self.all_reduce_latency;
        if !(latency.is_finite() && (0.0..=MAX_SECONDS).contains(&latency)) {
            return Err(Error::Invalid(format!(
                "all-reduce latency must be a number of seconds from 0 to {MAX_SECONDS}, got \
                 {latency}"
            )));
        }
        Ok(())
    }

    /// Bytes of KV cache one token occupies in all, over all cards, at this KV dtype:
    /// every layer's cached elements ([`ModelConfig::kv_elements_per_token`]: K and V of
    /// every KV head, or MLA's latent and RoPE key).
    pub fn kv_bytes_per_token(&self, cfg: &ModelConfig) -> u64 {
        cfg.kv_elements_per_token().saturating_mul(self.kv.bytes())
    }

    /// How many ways the KV cache is split: `min(tp, kv_heads)` (past that, KV heads are
    /// replicated, as vLLM does when `tp > num_key_value_heads`).
    pub fn kv_shards(&self, cfg: &ModelConfig) -> u64 {
        self.tp.min(cfg.n_kv_heads).max(1)
    }

    /// Bytes of memory one token's KV cache takes over all the cards: its
    /// [`kv_bytes_per_token`](Self::kv_bytes_per_token) times the copies kept when `tp`
    /// exceeds the KV heads (`tp / kv_shards`). What memory must hold, where
    /// `kv_bytes_per_token` is what a pass reads.
    ///
    /// ```
    /// use llm_math::Deployment;
    /// let tp = |n| Deployment { tp: n, ..Deployment::LECTURE };
    /// // 8 KV heads: up to 8 cards split them, 16 cards hold each twice.
    /// assert_eq!(tp(8).kv_bytes_held_per_token(llm_math::model("Llama-3.1-70B").unwrap()), 327_680);
    /// assert_eq!(tp(16).kv_bytes_held_per_token(llm_math::model("Llama-3.1-70B").unwrap()), 2 * 327_680);
    /// ```
    pub fn kv_bytes_held_per_token(&self, cfg: &ModelConfig) -> u64 {
        self.kv_bytes_per_token(cfg) * (self.tp / self.kv_shards(cfg)).max(1)
    }

    /// Bytes of memory one sequence at context `ctx` takes over all the cards: its KV
    /// cache at this KV dtype ([`ModelConfig::kv_bytes_at`]: a sliding-window layer holds
    /// at most its window) times the copies kept when `tp` exceeds the KV heads. What a
    /// batch is counted in against memory ([`crate::max_batch_on`]).
    ///
    /// ```
    /// use llm_math::{Deployment, LLAMA31_8B};
    /// // 32 layers · 32768 tokens · 8 KV heads · 128 · 2 (K, V) · 2 bytes: 4 GiB.
    /// assert_eq!(Deployment::LECTURE.kv_bytes_held_at(&LLAMA31_8B, 32768), 4.0 * 1024f64.powi(3));
    /// ```
    pub fn kv_bytes_held_at(&self, cfg: &ModelConfig, ctx: u64) -> f64 {
        let copies = (self.tp / self.kv_shards(cfg)).max(1) as f64;
        cfg.kv_bytes_at(ctx, self.kv) * copies
    }
}

impl Default for Deployment {
    /// [`Deployment::LECTURE`].
    fn default() -> Self {
        Deployment::LECTURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LLAMA31_8B;

    fn tp(n: u64) -> Deployment {
        Deployment {
            tp: n,
            ..Deployment::LECTURE
        }
    }

    #[test]
    fn tensor_parallelism_must_split_heads_kv_heads_and_the_mlp() {
        // Llama-3.2-3B: 24 heads, 8 KV heads, d_ff 8192: 3 divides 24 but not 8.
        let e = tp(3)
            .check(crate::model("Llama-3.2-3B").unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("8 KV heads"), "{e}");
        // 70B: 8 KV heads; TP 16 replicates each KV head twice (allowed), TP 2/4/8 split them.
        for n in [1, 2, 4, 8, 16] {
            assert_eq!(
                tp(n).check(crate::model("Llama-3.1-70B").unwrap()),
                Ok(()),
                "tp {n}"
            );
        }
        // 8B: 32 heads; TP 64 does not divide them.
        assert!(
            tp(64)
                .check(&LLAMA31_8B)
                .unwrap_err()
                .to_string()
                .contains("32 query heads")
        );
        let d_ff = ModelConfig {
            d_ff: 14_335,
            ..LLAMA31_8B
        };
        assert!(
            tp(2)
                .check(&d_ff)
                .unwrap_err()
                .to_string()
                .contains("14335 MLP hidden units")
        );
    }

    #[test]
    fn bad_knobs_are_errors_that_say_which() {
        assert_eq!(
            tp(0).check(&LLAMA31_8B),
            Err(Error::Zero("tensor-parallel degree"))
        );
        for x in [0.0, 1.5, f64::NAN, -0.1, f64::INFINITY] {
            let c = Deployment {
                compute_efficiency: x,
                ..Deployment::LECTURE
            };
            assert!(
                c.check(&LLAMA31_8B)
                    .unwrap_err()
                    .to_string()
                    .contains("compute efficiency")
            );
            let b = Deployment {
                bandwidth_efficiency: x,
                ..Deployment::LECTURE
            };
            assert!(
                b.check(&LLAMA31_8B)
                    .unwrap_err()
                    .to_string()
                    .contains("bandwidth efficiency")
            );
        }
        for x in [-1.0, f64::NAN, f64::INFINITY] {
            let l = Deployment {
                all_reduce_latency: x,
                ..Deployment::LECTURE
            };
            assert!(matches!(l.check(&LLAMA31_8B), Err(Error::Invalid(_))));
        }
    }

    #[test]
    fn the_kv_cache_splits_up_to_the_kv_heads() {
        assert_eq!(tp(4).kv_shards(crate::model("Llama-3.1-70B").unwrap()), 4);
        assert_eq!(tp(16).kv_shards(crate::model("Llama-3.1-70B").unwrap()), 8);
        // 2 · 80 layers · 8 KV heads · 128 · 1 byte at FP8.
        let fp8 = Deployment {
            kv: KvDtype::Fp8,
            ..Deployment::LECTURE
        };
        assert_eq!(
            fp8.kv_bytes_per_token(crate::model("Llama-3.1-70B").unwrap()),
            163_840
        );
    }
}
