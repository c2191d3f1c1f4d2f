//! What the roofline predicts for a forward pass of one of this crate's models on this
//! machine, and where the knee of time against tokens fed lies.
//!
//! A pass feeding `n` tokens to each of `B` sequences after `ctx` cached ones does
//! `flops = Config::forward_flops(B, ctx, n)` and reads
//! `bytes = weights + B · ctx · kv + B · n · kv` (every weight once for the whole batch,
//! each sequence's cache once, the new keys and values written; the exact stored bytes:
//! 4 per f32 weight, 4.25 bits per INT4 weight, 4 per KV element). Four predictions, in
//! the order demo 6 prints them:
//! - **roofline**: `max(flops / peak, bytes / bandwidth)` — compute hidden under memory,
//!   the optimistic bound `llm_math` uses;
//! - **planner**: between the bounds, as the planner prices a pass on a GPU:
//!   `planner::overlapped_time` at the overlap of the planner's `measured` calibration
//!   ([`planner_overlap`], fitted on engines' published rows, never on this machine);
//! - **host**: the planner's formula at the overlap this machine's kernel reaches when its
//!   weights stream from memory, measured on products of the kernel alone
//!   ([`crate::measure::streamed_slowdown`], [`overlap_from_slowdown`]) and taken at the
//!   pass's row count ([`overlap_at`]): measured like the peak and the bandwidth, on other
//!   matrices than the model's, never fitted to a pass;
//! - **additive**: `flops / peak + bytes / bandwidth` — no overlap at all, the pessimistic
//!   bound. Decode-shaped products on real engines sit nearer it than `max` does.
//!
//! The peak a pass of `B · n` rows reaches is not the kernel's peak: below its 5-row
//! register block each weight loaded feeds fewer multiply-adds, so a 1-row product computes
//! at 60–85% of it on the development machine. [`blocked_peak`] gives the kernel's FLOP/s at any row count from
//! its efficiency measured at 1 … 5 rows ([`crate::measure::kernel_at`]); the lecture's
//! figures predict every f32 pass at that peak.

use crate::{Error, Lm};

/// The cost of one pass as the roofline counts it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PassPrediction {
    /// Floating-point operations.
    pub flops: f64,
    /// Bytes read or written.
    pub bytes: f64,
    /// `flops / peak`, seconds.
    pub compute: f64,
    /// `bytes / bandwidth`, seconds.
    pub memory: f64,
    /// Time the pass spends starting and joining its parallel regions, seconds: neither
    /// compute nor memory ([`with_overhead`](Self::with_overhead); 0 from [`predict`]).
    pub overhead: f64,
}

impl PassPrediction {
    /// The roofline's time, seconds: `max(compute, memory) + overhead`.
    pub fn roofline(&self) -> f64 {
        self.compute.max(self.memory) + self.overhead
    }

    /// The additive model's time, seconds: `compute + memory + overhead`.
    pub fn additive(&self) -> f64 {
        self.compute + self.memory + self.overhead
    }

    /// The same pass with `seconds` of overhead: `regions ·` [`crate::measure::dispatch`]
    /// for a model that starts `regions` parallel regions a pass ([`Lm::parallel_regions`]).
    ///
    /// ```
    /// use host_lab::predict::PassPrediction;
    /// let p = PassPrediction { flops: 1e9, bytes: 1e8, compute: 0.010, memory: 0.005, overhead: 0.0 };
    /// let q = p.with_overhead(0.001);
    /// assert_eq!((q.roofline(), q.additive()), (0.011, 0.016));
    /// ```
    pub fn with_overhead(self, seconds: f64) -> Self {
        PassPrediction {
            overhead: seconds,
            ..self
        }
    }

    /// The planner's time, seconds: `max(compute, memory) + (1 − overlap) · min(compute,
    /// memory) + overhead` (`planner::overlapped_time`) at [`planner_overlap`]. NaN only
    /// for a prediction whose times are negative or not finite, which [`predict`] never
    /// makes from a positive peak and bandwidth.
    ///
    /// ```
    /// use host_lab::predict::{PassPrediction, planner_overlap};
    /// let p = PassPrediction { flops: 1e9, bytes: 1e8, compute: 0.010, memory: 0.005, overhead: 0.001 };
    /// let t = 0.010 + (1.0 - planner_overlap()) * 0.005 + 0.001;
    /// assert!((p.planner() - t).abs() < 1e-15);
    /// assert!(p.roofline() < p.planner() && p.planner() < p.additive());
    /// ```
    pub fn planner(&self) -> f64 {
        self.overlapped(planner_overlap())
    }

    /// The planner's formula at `overlap` (in [0, 1]), seconds: `max(compute, memory) + (1 −
    /// overlap) · min(compute, memory) + overhead`; [`planner`](Self::planner) is it at the
    /// engines' overlap, the host's prediction at the overlap this machine's kernel reaches
    /// ([`overlap_from_slowdown`]). NaN for an overlap outside [0, 1] or times that are
    /// negative or not finite.
    ///
    /// ```
    /// use host_lab::predict::PassPrediction;
    /// let p = PassPrediction { flops: 1e9, bytes: 1e8, compute: 0.004, memory: 0.010, overhead: 0.001 };
    /// assert_eq!((p.overlapped(1.0), p.overlapped(0.0)), (p.roofline(), p.additive()));
    /// assert!((p.overlapped(0.25) - (0.010 + 0.75 * 0.004 + 0.001)).abs() < 1e-15);
    /// assert!(p.overlapped(1.5).is_nan());
    /// ```
    pub fn overlapped(&self, overlap: f64) -> f64 {
        planner::overlapped_time(self.compute, self.memory, overlap)
            .map_or(f64::NAN, |t| t + self.overhead)
    }

    /// The time under `model`, seconds.
    pub fn time(&self, model: TimeModel) -> f64 {
        match model {
            TimeModel::Roofline => self.roofline(),
            TimeModel::Additive => self.additive(),
        }
    }
}

/// The overlap of compute and memory in the planner's `measured` calibration (0.60): the
/// planner's fit on engines' published rows (`planner::validation::profile::MEASURED`),
/// which never saw this machine; 1 is the roofline's `max`, 0 the additive sum.
pub fn planner_overlap() -> f64 {
    planner::validation::profile::MEASURED.cost_terms.overlap
}

/// The overlap of compute and memory a product reaches when it takes `slowdown` times its
/// memory time and its compute alone would take `compute_over_memory` times that
/// (`planner::implied_overlap` of the two, in units of the memory time): what
/// [`crate::measure::streamed_slowdown`] measures, as the planner's formula takes it. For
/// the kernel multiplying `r` rows by f32 weights, `compute_over_memory` is `2 r / 4` FLOPs
/// per byte over the ridge point at the peak of `r` rows. NaN for a slowdown or ratio that
/// is negative or not finite.
///
/// ```
/// use host_lab::predict::overlap_from_slowdown;
/// // Compute 0.4 of the memory time: 1.0 is full overlap, 1.4 none, 1.1 three quarters.
/// assert!((overlap_from_slowdown(1.0, 0.4) - 1.0).abs() < 1e-12);
/// assert_eq!(overlap_from_slowdown(1.4, 0.4), 0.0);
/// assert_eq!(overlap_from_slowdown(0.9, 0.4), 1.0); // faster than its reads: clamped
/// assert!((overlap_from_slowdown(1.1, 0.4) - 0.75).abs() < 1e-12);
/// // Compute-bound (2.5 × memory), memory is what hides: 2.5 + (1 − o) · 1 = 3.0 at o = 0.5.
/// assert!((overlap_from_slowdown(3.0, 2.5) - 0.5).abs() < 1e-12);
/// ```
pub fn overlap_from_slowdown(slowdown: f64, compute_over_memory: f64) -> f64 {
    planner::implied_overlap(compute_over_memory, 1.0, slowdown).unwrap_or(f64::NAN)
}

/// The overlap at `rows` rows from overlaps measured at some row counts (`(rows, overlap)`,
/// increasing rows, each at least 1): linear in log rows between the two measured counts
/// around it, the nearest measured one outside them. NaN for no points, and between a
/// point at 0 rows (whose log is −∞) and the next.
///
/// ```
/// use host_lab::predict::overlap_at;
/// let pts = [(1, 0.9), (4, 0.3), (16, 0.7)];
/// assert_eq!(overlap_at(&pts, 4), 0.3);
/// assert!((overlap_at(&pts, 2) - 0.6).abs() < 1e-12); // halfway from 1 to 4 in log rows
/// assert!((overlap_at(&pts, 8) - 0.5).abs() < 1e-12);
/// assert_eq!((overlap_at(&pts, 64), overlap_at(&pts, 0)), (0.7, 0.9));
/// assert!(overlap_at(&[], 3).is_nan());
/// ```
pub fn overlap_at(points: &[(usize, f64)], rows: usize) -> f64 {
    let (Some(&(r0, o0)), Some(&(r1, o1))) = (points.first(), points.last()) else {
        return f64::NAN;
    };
    if rows <= r0 {
        return o0;
    }
    if rows >= r1 {
        return o1;
    }
    // The first window ending at or after `rows` (rows > r0, so never at its start).
    points.windows(2).find(|w| rows <= w[1].0).map_or(o1, |w| {
        let ((a, oa), (b, ob)) = (w[0], w[1]);
        if rows == b {
            return ob; // a measured count: its own value, no rounding
        }
        let (x, la, lb) = ((rows as f64).ln(), (a as f64).ln(), (b as f64).ln());
        oa + (ob - oa) * (x - la) / (lb - la)
    })
}

/// Which of the two bounds (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeModel {
    /// `max(compute, memory)`.
    Roofline,
    /// `compute + memory`.
    Additive,
}

/// The prediction for `model` at `peak` FLOP/s and `bandwidth` bytes/s.
///
/// ```
/// use host_lab::predict::predict;
/// use host_lab::{scaled, Lm};
/// let cfg = transformer_lab::Config { n_layers: 2, d_model: 64, n_heads: 2, d_ff: 128,
///     vocab: 64, max_seq: 32, ..scaled::SCALED_BASE };
/// let p = scaled::params(&cfg, 0)?;
/// let m = transformer_lab::TransformerLM::new(&p, cfg, "t")?;
/// let one = predict(&m, 100e9, 20e9, 1, 16, 1);
/// // Weights 4 · (2 · (4·64² + 3·64·128 + 128) + 64 + 64·64) bytes, KV 2·2·64·4 per token.
/// assert_eq!(one.bytes, m.weight_bytes() as f64 + 17.0 * 1024.0);
/// assert!(!(one.compute > one.memory)); // one token: memory-bound
/// # Ok::<(), host_lab::Error>(())
/// ```
pub fn predict<L: Lm + ?Sized>(
    model: &L,
    peak: f64,
    bandwidth: f64,
    batch: usize,
    ctx: usize,
    n_new: usize,
) -> PassPrediction {
    let flops = model.flops(batch, ctx, n_new);
    let kv = model.kv_bytes_per_token() as f64;
    let bytes =
        model.weight_bytes() as f64 + (batch * ctx) as f64 * kv + (batch * n_new) as f64 * kv;
    PassPrediction {
        flops,
        bytes,
        compute: flops / peak,
        memory: bytes / bandwidth,
        overhead: 0.0,
    }
}

/// The packed kernel's FLOP/s on a product of `rows` rows, from its `peak` and its
/// measured `efficiency` at 1 … MR rows (`efficiency[r - 1]`: FLOP/s at r rows over the
/// peak, MR = `efficiency.len()`). The rows are cut into ⌈rows / MR⌉ blocks as even as
/// possible, as `transformer_lab::gemm` cuts them, and each block takes time in proportion
/// to its rows over its efficiency. `peak` itself for no rows or no efficiencies.
///
/// ```
/// use host_lab::predict::blocked_peak;
/// let eff = [0.25, 0.5, 0.75, 1.0, 1.0];
/// assert_eq!(blocked_peak(100.0, &eff, 1), 25.0);
/// // 7 rows: blocks of 4 and 3, time 4 / 1 + 3 / 0.75 = 8 for 7 rows.
/// assert_eq!(blocked_peak(100.0, &eff, 7), 100.0 * 7.0 / 8.0);
/// assert_eq!(blocked_peak(100.0, &eff, 200), 100.0);
/// ```
pub fn blocked_peak(peak: f64, efficiency: &[f64], rows: usize) -> f64 {
    let mr = efficiency.len();
    if rows == 0 || mr == 0 {
        return peak;
    }
    let blocks = rows.div_ceil(mr);
    let time: f64 = (0..blocks)
        .map(|b| {
            let r = rows / blocks + usize::from(b < rows % blocks);
            r as f64 / efficiency[r - 1]
        })
        .sum();
    peak * rows as f64 / time
}

/// How much longer than feeding one token a pass must take to be past the knee.
pub const KNEE_FACTOR: f64 = 2.0;

/// The knee of a time curve: the number of tokens fed (continuous) at which the time first
/// reaches [`KNEE_FACTOR`] × the time at n = 1, interpolated linearly in log n and log t
/// between the two measured or predicted points that bracket it. `points` are `(n, t)`
/// with increasing n, the first at n = 1. `None` if no point reaches it (or no points).
///
/// ```
/// use host_lab::predict::knee;
/// // Flat to n = 4, then proportional to n: 2 × t(1) at n = 8.
/// let pts = [(1.0, 1.0), (2.0, 1.0), (4.0, 1.0), (8.0, 2.0), (16.0, 4.0)];
/// assert!((knee(&pts).unwrap() - 8.0).abs() < 1e-9);
/// // Halfway in log t between 1.5 (n = 4) and 3 (n = 8): 2 is at log-fraction 0.415.
/// let pts = [(1.0, 1.0), (4.0, 1.5), (8.0, 3.0)];
/// assert!((knee(&pts).unwrap() - 4.0 * 2f64.powf((2.0f64 / 1.5).ln() / 2f64.ln())).abs() < 1e-9);
/// assert_eq!(knee(&[(1.0, 1.0), (2.0, 1.5)]), None);
/// ```
pub fn knee(points: &[(f64, f64)]) -> Option<f64> {
    let &(_, t1) = points.first()?;
    let goal = KNEE_FACTOR * t1;
    for w in points.windows(2) {
        let ((n0, t0), (n1, t1)) = (w[0], w[1]);
        if t1 >= goal {
            if t0 >= goal {
                return Some(n0);
            }
            let f = (goal.ln() - t0.ln()) / (t1.ln() - t0.ln());
            return Some((n0.ln() + f * (n1.ln() - n0.ln())).exp());
        }
    }
    None
}

/// The predicted knee under `time` as a function of integer n (evaluated at every n up to
/// `n_max`, so the curve is exact rather than sampled at powers of 2).
pub fn predicted_knee(n_max: usize, time: impl Fn(usize) -> f64) -> Option<f64> {
    let points: Vec<(f64, f64)> = (1..=n_max).map(|n| (n as f64, time(n))).collect();
    knee(&points)
}

/// Speedup of speculative decoding as `decode_lab::round_plan` accounts it, at a measured
/// τ: `τ · t_step / (γ · t_draft + t_verify)` — τ tokens per round, a round costing γ draft
/// steps and one target pass over γ + 1 tokens (nothing beyond them), against one target
/// step per token (`decode_lab::round_speedup` of `decode_lab::round_time`).
///
/// Errors: what those refuse (a time that is not a positive finite number of seconds), or
/// a γ above `u32::MAX`.
///
/// ```
/// // τ = 3 at γ = 4, draft 0.2 of a step, verification 1.3 steps: 3 / 2.1.
/// let s = host_lab::predict::speculative_speedup(3.0, 4, 1.0, 0.2, 1.3)?;
/// assert!((s - 3.0 / 2.1).abs() < 1e-12);
/// # Ok::<(), host_lab::Error>(())
/// ```
pub fn speculative_speedup(
    tau: f64,
    gamma: usize,
    t_step: f64,
    t_draft: f64,
    t_verify: f64,
) -> Result<f64, Error> {
    let gamma = u32::try_from(gamma)
        .map_err(|_| Error::Argument(format!("γ = {gamma} drafts is more than a round has")))?;
    let t_round = decode_lab::round_time(gamma, t_draft, t_verify, 0.0)?;
    Ok(decode_lab::round_speedup(tau, t_step, t_round)?)
}

/// The per-token acceptance rate α at which `decode_lab::expected_tokens(α, γ)` is `tau`
/// (τ measured with chains of γ drafts), by bisection; 0 for τ ≤ 1, 1 for τ ≥ γ + 1.
///
/// ```
/// // (1 − 0.8⁵) / 0.2 = 3.3616 tokens per round at γ = 4.
/// let a = host_lab::predict::alpha_from_tau(3.3616, 4);
/// assert!((a - 0.8).abs() < 1e-9);
/// ```
pub fn alpha_from_tau(tau: f64, gamma: usize) -> f64 {
    let g = gamma as u32;
    let tokens = |a: f64| decode_lab::expected_tokens(a, g).unwrap_or(f64::NAN);
    if tau.is_nan() || tau <= 1.0 {
        return 0.0;
    }
    if tau >= gamma as f64 + 1.0 {
        return 1.0;
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if tokens(mid) < tau {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The best draft length and its speedup at acceptance rate `alpha`, for γ = 1 …
/// `max_gamma`, on this machine's times: `t_pass(n)` is the target's pass feeding n tokens
/// per sequence and `t_draft` a draft step — `decode_lab::best_of` the rounds
/// `decode_lab::plan_of` prices from them, as `decode_lab::best_round` chooses on a card.
/// `(0, 1.0)` when no γ beats plain decoding.
pub fn best_round(
    alpha: f64,
    max_gamma: usize,
    t_draft: f64,
    t_pass: impl Fn(usize) -> f64,
) -> (usize, f64) {
    let t1 = t_pass(1);
    let alpha = alpha.clamp(0.0, 1.0);
    let plan = |g: usize| {
        let gamma = u32::try_from(g).unwrap_or(u32::MAX);
        decode_lab::plan_of(alpha, gamma, t1, t_draft, t_pass(g + 1), 0.0)
    };
    match decode_lab::best_of((1..=max_gamma).map(plan)) {
        Ok(best) => (best.gamma() as usize, best.speedup()),
        Err(_) => (0, 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Machine;
    use crate::scaled::{Models, SCALED_BASE, params};

    /// The scaled model's architecture at a size that builds in milliseconds.
    fn small() -> transformer_lab::Config {
        transformer_lab::Config {
            n_layers: 2,
            d_model: 128,
            n_heads: 2,
            d_ff: 256,
            vocab: 64,
            max_seq: 64,
            ..SCALED_BASE
        }
    }

    #[test]
    fn the_f32_prediction_is_llm_maths_with_bytes_doubled_and_the_int4_one_an_eighth() {
        let cfg = small();
        let p = params(&cfg, 0).unwrap();
        let m = Models::new(&p, cfg).unwrap();
        let ours = predict(&m.target, 100e9, 20e9, 3, 40, 5);
        // The same model as llm_math describes it (multi-head: kv heads = heads), in bf16.
        let llm = llm_math::ModelConfig {
            name: "scaled",
            n_layers: 2,
            d_model: 128,
            n_heads: 2,
            n_kv_heads: 2,
            head_dim: 64,
            d_ff: 256,
            vocab: 64,
            tied_embeddings: false,
            qkv_bias: false,
            qk_norm: false,
            tokenizer: llm_math::Tokenizer::Llama3,
            max_context: 64,
            moe: None,
            arch: llm_math::Arch::LLAMA,
        };
        let hw = hw_specs::Accelerator {
            peak_flops_bf16: 100e9,
            hbm_bandwidth: 20e9,
            ..hw_specs::H100
        };
        let shape = llm_math::ForwardShape {
            batch: 3,
            ctx: 40,
            n_new: 5,
        };
        let theirs = llm_math::forward_cost(&llm, &hw, shape, &Machine::deployment()).unwrap();
        assert_eq!(ours.bytes, 2.0 * theirs.bytes);
        // FLOPs: llm_math counts every query against the whole context, plus the norms.
        assert!(
            (ours.flops / theirs.flops - 1.0).abs() < 0.02,
            "{} {}",
            ours.flops,
            theirs.flops
        );
        let q = predict(&m.int4, 100e9, 20e9, 1, 1, 1);
        let f = predict(&m.target, 100e9, 20e9, 1, 1, 1);
        assert!(
            (q.bytes / f.bytes - 0.133).abs() < 0.01,
            "{}",
            q.bytes / f.bytes
        );
        assert_eq!(q.flops, f.flops);
    }

    #[test]
    fn the_best_round_is_decode_labs_on_the_same_times() {
        use decode_lab::{Draft, Scenario, Seed};
        // decode_lab with a fixed-cost draft and this machine's deployment, no overheads.
        let m = crate::machine::Machine {
            caches: crate::host::cache_sizes(),
            memory: Ok(24 << 30),
            threads: 2,
            peak: crate::measure::Sample::new(vec![140e9]).unwrap(),
            bandwidth: crate::measure::Sample::new(vec![22e9]).unwrap(),
            stream_bytes: 1 << 28,
        };
        let s = Scenario {
            deployment: crate::machine::Machine::deployment(),
            overhead_target: 0.0,
            overhead_draft: 0.0,
            alpha: 0.7,
            ..Scenario::new(
                m.accelerator(),
                llm_math::LLAMA31_8B,
                Draft::FixedCost(0.15),
            )
        };
        let theirs = decode_lab::best_round(&s, &Seed).unwrap();
        let t = |n: usize| decode_lab::target_pass_time(&s, n as u64).unwrap();
        let ours = best_round(0.7, decode_lab::MAX_GAMMA as usize, 0.15 * t(1), t);
        assert_eq!(ours.0 as u32, theirs.gamma());
        assert!((ours.1 - theirs.speedup()).abs() < 1e-12);
        assert!(
            (alpha_from_tau(decode_lab::expected_tokens(0.7, 3).unwrap(), 3) - 0.7).abs() < 1e-9
        );
        assert_eq!(best_round(0.0, 4, 1.0, |_| 1.0), (0, 1.0));
    }

    #[test]
    fn a_machines_prediction_adds_one_dispatch_per_parallel_region() {
        use crate::figures::MachineFigures;
        use crate::measure::Sample;
        let cfg = small();
        let p = params(&cfg, 0).unwrap();
        let m = Models::new(&p, cfg).unwrap();
        let fig = MachineFigures {
            machine: crate::machine::tests::fake(),
            ridge_point: 1.0,
            critical_tokens_f32: 1.0,
            critical_tokens_int4: 1.0,
            int4_peaks: vec![],
            dispatch: Sample::new(vec![2e-5, 1e-5, 3e-5]).unwrap(),
            kernel_efficiency: vec![1.0],
            streamed: vec![],
        };
        let plain = predict(&m.target, 100e9, 20e9, 1, 8, 1);
        let with = fig.predict(&m.target, (100e9, 20e9), 1, 8, 1);
        assert!((with.overhead - 11.0 * 2e-5).abs() < 1e-15);
        assert!((with.additive() - plain.additive() - 2.2e-4).abs() < 1e-12);
        assert!((with.roofline() - plain.roofline() - 2.2e-4).abs() < 1e-12);
    }

    /// The host's overlap from hand-made slowdowns: at the fake machine's 138 GFLOP/s and
    /// paired reads of 11 GB/s (the machine's own median is 22 GB/s: the pairing is what
    /// counts), r rows times W f32 weights compute for 2 r W / 138e9 s and read for
    /// 4 W / 11e9 s.
    #[test]
    fn the_hosts_overlap_is_the_one_each_streamed_slowdown_implies_between_them_in_log_rows() {
        use crate::figures::MachineFigures;
        use crate::measure::{Sample, Streamed};
        let x = |r: f64| (2.0 * r / 138e9) / (4.0 / 11e9);
        let one = |s: f64| Sample::new(vec![s]).unwrap();
        let at = |rows, s| Streamed {
            rows,
            slowdown: one(s),
            bandwidth: Sample::new(vec![10e9, 11e9, 40e9]).unwrap(),
        };
        let fig = |streamed| MachineFigures {
            machine: crate::machine::tests::fake(),
            ridge_point: 1.0,
            critical_tokens_f32: 1.0,
            critical_tokens_int4: 1.0,
            int4_peaks: vec![],
            dispatch: Sample::new(vec![0.0]).unwrap(),
            kernel_efficiency: vec![1.0],
            streamed,
        };
        // 1 row as fast as the read: all hidden. 4 rows: half the compute shows. 32 rows
        // (compute-bound, x = 1.28): 80% of the memory time hidden under the compute.
        let f = fig(vec![
            at(1, 1.0),
            at(4, 1.0 + 0.5 * x(4.0)),
            at(32, x(32.0) + 0.2),
        ]);
        for (rows, want) in [
            (1, 1.0),
            (2, 0.75),
            (4, 0.5),
            (8, 0.6), // a third of the way from 4 to 32 in log rows
            (16, 0.7),
            (32, 0.8),
            (64, 0.8),
        ] {
            let got = f.host_overlap(rows);
            assert!((got - want).abs() < 1e-9, "{rows} rows: {got}, want {want}");
        }
        // Slower than the sum is no overlap, not a negative one.
        assert_eq!(fig(vec![at(2, 1.0 + 3.0 * x(2.0))]).host_overlap(2), 0.0);
        assert!(fig(vec![]).host_overlap(4).is_nan());
        // The prediction at it lies between the bounds, by the hand formula.
        let p = PassPrediction {
            flops: 0.0,
            bytes: 0.0,
            compute: 3e-3,
            memory: 8e-3,
            overhead: 1e-4,
        };
        assert!((p.overlapped(f.host_overlap(4)) - (8e-3 + 0.5 * 3e-3 + 1e-4)).abs() < 1e-15);
    }

    #[test]
    fn the_roofline_knee_of_a_weight_bound_pass_is_twice_the_critical_batch() {
        // Memory 1 s whatever n; compute n / 10 s: max crosses 2 s at n = 20.
        let t = |n: usize| (n as f64 / 10.0).max(1.0);
        assert!((predicted_knee(64, t).unwrap() - 20.0).abs() < 1e-9);
        // Additive: 1 + n/10 reaches 2 · 1.1 at n = 12.
        let a = |n: usize| 1.0 + n as f64 / 10.0;
        assert!((predicted_knee(64, a).unwrap() - 12.0).abs() < 1e-9);
        assert_eq!(predicted_knee(5, t), None);
    }
}
