//! The planner's passes: the seed's roofline pass ([`llm_math::forward_cost`], the same
//! FLOPs and bytes the lecture prices) with the cost terms engines show on top — partial
//! overlap of compute and memory, the weight formats' efficiency factors, all-reduce
//! latencies per card family, expert latencies, INT4 dequantization, per-sequence work,
//! verification extras — and the prompt tokens a serving step also carries ([`Prefill`]).
//! [`Plan`] prices a [`Scenario`]'s passes this way, as a [`Pricing`] every round function
//! of `decode_lab` takes; [`Plan::SEED`] gives the seed's figures, bit for bit.

use decode_lab::{Draft, Error, Pricing, Scenario, draft_pass};
use hw_specs::Accelerator;
use llm_math::{
    Deployment, ForwardCost, ForwardShape, MAX_PASS_TOKENS, ModelConfig, all_reduce_time,
    expected_experts_read, forward_cost,
};

use crate::{
    AllReduceLatencies, CostTerms, dequant_time, draft_layer_time, overlapped_time, round_overhead,
    sequence_layer_time, verify_extra_time,
};

/// Prompt tokens processed in the same pass as a decode step (chunked prefill, or a
/// serving engine's prefills of new requests between the steps of running ones): `tokens`
/// prompt tokens that each attend to `ctx` cached tokens of their own prompt on average.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefill {
    /// Prompt tokens through the weights in the pass.
    pub tokens: u64,
    /// Cached prompt tokens each attends to on average (its chunk's prefix, read once).
    pub ctx: u64,
}

impl Prefill {
    /// No prefill: a pure decode or verification pass.
    pub const NONE: Prefill = Prefill { tokens: 0, ctx: 0 };

    /// Checks that a step can carry it: at most [`MAX_PASS_TOKENS`] prompt tokens, and a
    /// context of at least one token when there are any.
    ///
    /// Errors: the bound broken, named.
    pub fn check(&self) -> Result<(), Error> {
        if self.tokens > MAX_PASS_TOKENS {
            return Err(Error::Argument(format!(
                "a step carries at most {MAX_PASS_TOKENS} prompt tokens, got {}",
                self.tokens
            )));
        }
        if self.tokens > 0 && self.ctx == 0 {
            return Err(llm_math::Error::Zero("prompt context of the prefill").into());
        }
        Ok(())
    }

    /// [`Prefill::check`], and a prompt context that `model` can hold: at most its
    /// maximum context, as a decode step's context is.
    ///
    /// Errors: a bound broken, named.
    ///
    /// ```
    /// let long = planner::Prefill { tokens: 512, ctx: 10_000_000 };
    /// let e = long.check_for(&llm_math::LLAMA31_8B).unwrap_err().to_string();
    /// assert!(e.contains("maximum of 131072"), "{e}");
    /// ```
    pub fn check_for(&self, model: &ModelConfig) -> Result<(), Error> {
        self.check()?;
        if self.tokens > 0 && self.ctx > model.max_context {
            return Err(Error::Argument(format!(
                "a prefill's prompt context of {} tokens is longer than {}'s maximum of {} \
                 tokens",
                self.ctx, model.name, model.max_context
            )));
        }
        Ok(())
    }
}

/// A scenario's passes priced by the seed's roofline plus the planner's cost terms, with
/// the prompt tokens each target step carries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// The cost terms ([`CostTerms::NEUTRAL`]: none).
    pub terms: CostTerms,
    /// Prompt tokens every target step also carries ([`Prefill::NONE`]: a step decodes
    /// only).
    pub prefill: Prefill,
}

impl Default for Plan {
    /// [`Plan::SEED`].
    fn default() -> Self {
        Plan::SEED
    }
}

impl Plan {
    /// No term and no prompt tokens: every figure is the seed's ([`decode_lab::Seed`]'s),
    /// bit for bit.
    pub const SEED: Plan = Plan {
        terms: CostTerms::NEUTRAL,
        prefill: Prefill::NONE,
    };

    /// The deployment every pass of `s` runs at: `s.deployment` with the efficiency factors
    /// of the terms for its weights applied ([`CostTerms::efficiencies`]) and the
    /// all-reduce latency of the card's interconnect family added
    /// ([`AllReduceLatencies::for_card`]). The neutral terms give `s.deployment` back.
    ///
    /// Errors: a factor out of range; a card of no known interconnect family when a family
    /// latency is set.
    pub fn deployment(&self, s: &Scenario) -> Result<Deployment, Error> {
        with_cost_terms(s.deployment, &self.terms, &s.hw)
    }

    /// The roofline cost of a target pass over `n` new tokens per sequence in `s` at
    /// [`Plan::deployment`], with the step's prompt tokens ([`mixed_pass`]): its FLOPs
    /// and bytes, compute and memory times (so whether it is compute-bound with the weight
    /// format's factors applied). Not checked against memory.
    ///
    /// Errors: a zero size, a bad knob or cost term.
    pub fn target_pass_cost(&self, s: &Scenario, n: u64) -> Result<ForwardCost, Error> {
        self.terms.check()?;
        let shape = ForwardShape {
            batch: s.batch,
            ctx: s.ctx,
            n_new: n,
        };
        mixed_pass(&s.target, &s.hw, shape, self.prefill, &self.deployment(s)?)
    }

    /// A pass's time from its roofline cost, seconds: compute and memory overlapped by
    /// `terms.overlap` ([`overlapped_time`]; 1 is the seed's `max`), the all-reduces, and
    /// an MoE model's expert latencies over `tokens` tokens ([`expert_time`]).
    fn pass_time(
        &self,
        cost: &ForwardCost,
        model: &ModelConfig,
        tokens: u64,
    ) -> Result<f64, Error> {
        let both = overlapped_time(cost.compute_time, cost.memory_time, self.terms.overlap)?;
        let expert = expert_time(model, tokens, self.terms.expert_latency)?;
        Ok(both + cost.comm_time + expert)
    }

    /// A target step over `n` tokens per sequence before its verification extras: the
    /// pass (memory-checked), the overhead, the per-sequence work and INT4's dequantization
    /// of the weights it reads.
    fn step(&self, s: &Scenario, n: u64) -> Result<f64, Error> {
        let cost = self.target_pass_cost(s, n)?;
        cost.checked_time()?;
        let t = &self.terms;
        let per_sequence = sequence_layer_time(t.per_sequence_layer, s.batch, s.target.n_layers)?;
        let tokens = s.batch * n + self.prefill.tokens;
        let dequant = self.dequant(&s.target, s, s.deployment.tp, tokens)?;
        Ok(self.pass_time(&cost, &s.target, tokens)? + s.overhead_target + per_sequence + dequant)
    }

    /// INT4's dequantization of a pass of `model` on `tp` cards over `tokens` tokens
    /// ([`dequant_time`]): the quantized weights one card reads
    /// ([`ModelConfig::streamed_quantized_params`]).
    fn dequant(
        &self,
        model: &ModelConfig,
        s: &Scenario,
        tp: u64,
        tokens: u64,
    ) -> Result<f64, Error> {
        let ops = self.terms.int4_dequant_ops;
        if ops == 0.0 {
            return Ok(0.0);
        }
        let per_card = quantized_weights_per_card(model, tp, tokens)?;
        dequant_time(per_card, &s.hw, s.deployment.weights, ops)
    }
}

impl Pricing for Plan {
    /// The terms in range, the card figures they need (INT4's dequantization needs the
    /// card's FP32 vector peak), the prompt tokens a step can carry.
    fn check(&self, s: &Scenario) -> Result<(), Error> {
        self.terms.check()?;
        dequant_time(
            0.0,
            &s.hw,
            s.deployment.weights,
            self.terms.int4_dequant_ops,
        )?;
        self.prefill.check_for(&s.target)
    }

    /// A target pass over `n` new tokens per sequence, seconds: the roofline time of
    /// [`Plan::target_pass_cost`] (memory-checked) with compute and memory overlapped by
    /// `terms.overlap`, plus the all-reduces and expert latencies, the target overhead,
    /// `batch · layers · terms.per_sequence_layer` ([`sequence_layer_time`]), INT4's
    /// dequantization ([`dequant_time`]), `batch · (n − 1) · terms.verify_per_batch_token`
    /// ([`verify_extra_time`]) and `(n − 1) · terms.verify_cost_per_token · t_base`.
    fn target_pass_time(&self, s: &Scenario, n: u64) -> Result<f64, Error> {
        s.check_knobs()?;
        self.check(s)?;
        let t = &self.terms;
        let pass = self.step(s, n)? + verify_extra_time(s.batch, n, t.verify_per_batch_token)?;
        if n <= 1 || t.verify_cost_per_token == 0.0 {
            return Ok(pass);
        }
        Ok(pass + (n - 1) as f64 * t.verify_cost_per_token * self.step(s, 1)?)
    }

    /// One draft step, seconds: the draft's roofline pass ([`decode_lab::draft_pass`]) at
    /// [`Plan::deployment`] on its own cards, with the scenario's overlap and expert
    /// latencies, plus its overhead, `terms.draft_per_layer` per layer of the draft model
    /// ([`draft_layer_time`]), `batch · layers · terms.per_sequence_layer` over the draft's
    /// layers and INT4's dequantization of the draft's weights on its own cards; or `c ·
    /// t_base` for a [`Draft::FixedCost`].
    fn draft_step_time(&self, s: &Scenario) -> Result<f64, Error> {
        s.check_knobs()?;
        self.check(s)?;
        let Some((model, ctx, deployment, overhead)) = draft_pass(s) else {
            let Draft::FixedCost(c) = s.draft else {
                unreachable!("only a fixed-cost draft has no pass")
            };
            return Ok(c * self.target_pass_time(s, 1)?);
        };
        let shape = ForwardShape {
            batch: s.batch,
            ctx,
            n_new: 1,
        };
        let deployment = with_cost_terms(deployment, &self.terms, &s.hw)?;
        let cost = forward_cost(&model, &s.hw, shape, &deployment)?;
        let t = &self.terms;
        let layers = draft_layer_time(t.draft_per_layer, model.n_layers, 1)?;
        let per_sequence = sequence_layer_time(t.per_sequence_layer, s.batch, model.n_layers)?;
        let dequant = self.dequant(&model, s, deployment.tp, s.batch)?;
        Ok(self.pass_time(&cost, &model, s.batch)? + overhead + layers + per_sequence + dequant)
    }

    /// `terms.round_fixed + terms.round_per_sequence · batch` ([`round_overhead`]).
    fn round_extra_time(&self, s: &Scenario) -> Result<f64, Error> {
        round_overhead(
            self.terms.round_fixed,
            self.terms.round_per_sequence,
            s.batch,
        )
    }
}

/// `d` with the efficiency factors of `t` applied and the all-reduce latency of `hw`'s
/// interconnect family added: [`Plan::deployment`] of a scenario with these pieces.
///
/// Errors: a factor out of range; a card of no known interconnect family when a family
/// latency is set.
pub fn with_cost_terms(
    d: Deployment,
    t: &CostTerms,
    hw: &Accelerator,
) -> Result<Deployment, Error> {
    let (bandwidth_efficiency, compute_efficiency) =
        t.efficiencies(d.weights, d.bandwidth_efficiency, d.compute_efficiency)?;
    let family = if t.all_reduce == AllReduceLatencies::NEUTRAL {
        0.0
    } else {
        t.all_reduce.for_card(hw)?
    };
    Ok(Deployment {
        bandwidth_efficiency,
        compute_efficiency,
        all_reduce_latency: d.all_reduce_latency + family,
        ..d
    })
}

/// A pass of `shape` that also carries `prefill`'s prompt tokens: the weights are read
/// once for all of them; every token, decode or prompt, is multiplied by the weights and
/// routes to its experts (an MoE model reads the experts of `tokens + prefill.tokens`
/// tokens); the prompt tokens are one more sequence of the pass, of `prefill.tokens` new
/// tokens on `prefill.ctx` cached ones ([`forward_cost`] of that shape gives their FLOPs
/// and KV traffic); the all-reduces carry every token. [`Prefill::NONE`] is
/// [`forward_cost`] of `shape`.
///
/// Errors: as [`forward_cost`], for either part.
///
/// ```
/// use llm_math::{forward_cost, Deployment, ForwardShape, LLAMA31_8B};
/// use planner::{mixed_pass, Prefill};
/// use hw_specs::H100;
/// let shape = ForwardShape { batch: 8, ctx: 1024, n_new: 1 };
/// let dep = Deployment::LECTURE;
/// let plain = forward_cost(&LLAMA31_8B, &H100, shape, &dep)?;
/// let mixed = mixed_pass(&LLAMA31_8B, &H100, shape, Prefill { tokens: 512, ctx: 256 }, &dep)?;
/// // 512 prompt tokens: 2 · 7,504,924,672 + 4 · 131,072 · 256 FLOPs each; the same weights.
/// assert_eq!(mixed.flops - plain.flops, 512.0 * (2.0 * 7_504_924_672.0 + 4.0 * 131_072.0 * 256.0));
/// assert_eq!(mixed.bytes - plain.bytes, (256.0 + 512.0) * 131_072.0);
/// # Ok::<(), decode_lab::Error>(())
/// ```
pub fn mixed_pass(
    cfg: &ModelConfig,
    hw: &Accelerator,
    shape: ForwardShape,
    prefill: Prefill,
    dep: &Deployment,
) -> Result<ForwardCost, Error> {
    let decode = forward_cost(cfg, hw, shape, dep)?;
    if prefill.tokens == 0 {
        return Ok(decode);
    }
    prefill.check_for(cfg)?;
    let prompt_shape = ForwardShape {
        batch: 1,
        ctx: prefill.ctx,
        n_new: prefill.tokens,
    };
    let prompt = forward_cost(cfg, hw, prompt_shape, dep)?;
    let all = shape.tokens().saturating_add(prefill.tokens);
    let weight_bytes = cfg.streamed_weight_bytes(all, dep.weights)? / dep.tp as f64;
    let flops = decode.flops + prompt.flops;
    let kv = (decode.bytes - decode.weight_bytes) + (prompt.bytes - prompt.weight_bytes);
    let bytes = weight_bytes + kv;
    Ok(ForwardCost {
        flops,
        bytes,
        weight_bytes,
        compute_time: flops / (dep.weights.peak_flops(hw) * dep.compute_efficiency),
        memory_time: bytes / (hw.hbm_bandwidth * dep.bandwidth_efficiency),
        comm_time: all_reduce_time(cfg, hw, all, dep),
        ..decode
    })
}

/// An MoE model's expert latencies in a pass over `tokens` tokens, seconds: `layers ·
/// experts_read · latency` ([`expected_experts_read`]; every card runs every expert's
/// slice, so tensor parallelism does not split it); 0 for a dense model or a latency of 0.
///
/// Errors: an MoE model whose experts are invalid.
pub fn expert_time(model: &ModelConfig, tokens: u64, latency: f64) -> Result<f64, Error> {
    match model.moe {
        Some(_) if latency > 0.0 => Ok(expert_reads(model, tokens)? * latency),
        _ => Ok(0.0),
    }
}

/// The routed experts a pass of `model` over `tokens` tokens reads over all its sparse
/// layers (`layers · experts_read`; 0 for a dense model).
///
/// Errors: an MoE model whose experts are invalid.
pub fn expert_reads(model: &ModelConfig, tokens: u64) -> Result<f64, Error> {
    let Some(x) = model.moe else {
        return Ok(0.0);
    };
    let per_layer = expected_experts_read(x.routed, x.top_k, tokens)?;
    Ok(model.sparse_layers() as f64 * per_layer)
}

/// The quantized weights one of `tp` cards reads in a pass of `model` over `tokens`
/// tokens ([`ModelConfig::streamed_quantized_params`]): what INT4 dequantizes.
///
/// Errors: an MoE model whose experts are invalid.
pub fn quantized_weights_per_card(model: &ModelConfig, tp: u64, tokens: u64) -> Result<f64, Error> {
    Ok(model.streamed_quantized_params(tokens)? / tp.max(1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DtypeEfficiency;
    use decode_lab::Seed;
    use llm_math::WeightDtype;

    /// Batch 512, context 512, 5 tokens each, FP8 weights, with these FP8 factors.
    fn fp8(bandwidth: f64, compute: f64) -> (Scenario, Plan) {
        let mut s = Scenario {
            batch: 512,
            ctx: 512,
            ..Scenario::LECTURE
        };
        s.deployment.weights = WeightDtype::Fp8;
        let mut plan = Plan::SEED;
        plan.terms.fp8 = DtypeEfficiency { bandwidth, compute };
        (s, plan)
    }

    #[test]
    fn the_fp8_factors_decide_whether_a_verification_is_compute_bound() {
        // By hand, Llama-3.1-8B on an H100: 2560 tokens · (2 · 7,504,924,672 + 4 · 131,072 ·
        // 512) = 3.9112e13 FLOPs at 60% of 1979 TFLOP/s (FP8) = 32.94 ms; 6,979,321,856
        // linear weights at 1 byte and 525,602,816 others (the LM head, norms) at 2 +
        // 512 · 512 · 131,072 KV bytes read + 2560 · 131,072 written = 42,725,810,176 bytes
        // at 80% of 3.35 TB/s = 15.94 ms. Compute-bound, until the bandwidth factor drops
        // below 15.94 / 32.94 = 0.484.
        let cost = |b, c| {
            let (s, plan) = fp8(b, c);
            plan.target_pass_cost(&s, 5).unwrap()
        };
        let plain = cost(1.0, 1.0);
        assert_eq!(plain.bytes, 42_725_810_176.0);
        assert!((plain.compute_time - 32.9395e-3).abs() < 1e-6, "{plain:?}");
        assert!((plain.memory_time - 15.9425e-3).abs() < 1e-6, "{plain:?}");
        assert!(plain.is_compute_bound());
        let slow = cost(0.4, 1.0);
        assert!(
            (slow.memory_time - 15.9425e-3 / 0.4).abs() < 1e-6,
            "{slow:?}"
        );
        assert!(
            !slow.is_compute_bound(),
            "39.86 ms of memory over 32.94 of compute"
        );
        assert!(cost(0.5, 1.0).is_compute_bound());
        // A slower FP8 compute path is compute-bound again: 65.88 ms over 39.86.
        assert!(cost(0.4, 0.5).is_compute_bound());
        // The scenario's own deployment, without the factors, says compute-bound: the
        // pass's cost must be read at the deployment its time is priced at.
        let (s, _) = fp8(0.4, 1.0);
        assert!(
            decode_lab::target_pass_cost(&s, 5)
                .unwrap()
                .is_compute_bound()
        );
        let (s, plan) = fp8(1.5, 1.0);
        assert!(plan.target_pass_cost(&s, 5).is_err(), "a factor over 1");
    }

    /// The seed plan is the seed, bit for bit, on every pass of the lecture's setups.
    #[test]
    fn the_seed_plan_prices_every_pass_as_the_seed() {
        for (batch, ctx) in [(1, 1024), (64, 4096), (512, 512)] {
            let s = Scenario {
                batch,
                ctx,
                ..Scenario::LECTURE
            };
            for n in [1, 2, 5, 17, 129] {
                assert_eq!(
                    Plan::SEED.target_pass_time(&s, n).unwrap(),
                    Seed.target_pass_time(&s, n).unwrap()
                );
            }
            assert_eq!(
                Plan::SEED.draft_step_time(&s).unwrap(),
                Seed.draft_step_time(&s).unwrap()
            );
            assert_eq!(Plan::SEED.round_extra_time(&s).unwrap(), 0.0);
        }
    }

    /// The expert latency by hand: at batch 1 each of the 48 layers reads its 8 routed
    /// experts, so 3 µs each adds 48 · 8 · 3 µs = 1.152 ms; at batch 2, 48 · 15.5 · 3 µs =
    /// 2.232 ms; on two cards the same (every card runs every expert's slice). At 0
    /// (neutral) the pass is the plain one; a dense model has none.
    #[test]
    fn the_expert_latency_adds_per_expert_read_by_hand() {
        let moe = *llm_math::model("Qwen3-30B-A3B").unwrap();
        assert!((expert_time(&moe, 1, 3e-6).unwrap() - 1.152e-3).abs() < 1e-15);
        assert!((expert_time(&moe, 2, 3e-6).unwrap() - 2.232e-3).abs() < 1e-15);
        assert_eq!(expert_time(&moe, 1, 0.0).unwrap(), 0.0);
        assert_eq!(expert_time(&llm_math::LLAMA31_8B, 1, 3e-6).unwrap(), 0.0);
        let s = Scenario {
            target: moe,
            draft: Draft::Head,
            ctx: 512,
            ..Scenario::LECTURE
        };
        let mut plan = Plan::SEED;
        plan.terms.expert_latency = 3e-6;
        let gap = plan.target_pass_time(&s, 1).unwrap() - Seed.target_pass_time(&s, 1).unwrap();
        assert!((gap - 1.152e-3).abs() < 1e-15, "{gap}");
        let tp2 = Scenario {
            deployment: Deployment {
                tp: 2,
                ..s.deployment
            },
            ..s
        };
        let gap2 =
            plan.target_pass_time(&tp2, 1).unwrap() - Seed.target_pass_time(&tp2, 1).unwrap();
        assert!((gap2 - 1.152e-3).abs() < 1e-15, "{gap2}");
        plan.terms.expert_latency = -1.0;
        assert!(plan.target_pass_time(&s, 1).is_err());
    }

    /// Neutral: no prompt tokens is a plain pass, whatever context they would have read.
    /// By hand: 100 prompt tokens at a prefix of 2500 on top of a batch-4 step of the 8B
    /// model add 100 · (2 · P + 4 · 131,072 · 2500) FLOPs and (2500 + 100) · 131,072 bytes,
    /// and 100 tokens more through the all-reduces under TP 2.
    #[test]
    fn prompt_tokens_in_a_decode_step_add_their_flops_and_kv_by_hand() {
        let cfg = llm_math::LLAMA31_8B;
        let h100 = hw_specs::H100;
        let s = ForwardShape {
            batch: 4,
            ctx: 1000,
            n_new: 1,
        };
        let d = Deployment::LECTURE;
        let plain = forward_cost(&cfg, &h100, s, &d).unwrap();
        let none = Prefill {
            tokens: 0,
            ctx: 2500,
        };
        assert_eq!(mixed_pass(&cfg, &h100, s, none, &d).unwrap(), plain);
        let p = Prefill {
            tokens: 100,
            ctx: 2500,
        };
        let mixed = mixed_pass(&cfg, &h100, s, p, &d).unwrap();
        let p8b = 7_504_924_672.0;
        assert_eq!(
            mixed.flops - plain.flops,
            100.0 * (2.0 * p8b + 4.0 * 131_072.0 * 2500.0)
        );
        assert_eq!(mixed.bytes - plain.bytes, 2600.0 * 131_072.0);
        let tp2 = Deployment { tp: 2, ..d };
        let two = mixed_pass(&cfg, &h100, s, p, &tp2).unwrap();
        assert_eq!(two.comm_time, all_reduce_time(&cfg, &h100, 104, &tp2));
    }
}
