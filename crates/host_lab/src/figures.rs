//! The figures a lecture prints about this machine, computed once as typed data: its
//! measured roofline, forward time against tokens fed (measured and predicted), the draft
//! cost c of each draft, and speculative decoding timed for real.
//!
//! [`run`] does everything [`Plan`] asks for and returns [`HostFigures`]; the lecture words
//! them. Every time in here is measured on this machine now, so it changes from run to run:
//! print ratios and say that they are measured.

use std::io::Write;
use std::time::Instant;

use crate::device::{CpuDevice, beside_each_pass, round_costs};
use crate::host::{check_room, load_average};
use crate::machine::Machine;
use crate::measure::{self, Probe, dispatch, int4_peak, kernel_peak, median, read_bandwidth};
use crate::predict::{
    TimeModel, alpha_from_tau, best_round, knee, predicted_knee, speculative_speedup,
};
use crate::scaled::{Models, memory_needed, params, scaled_config, shallowest_config};
use crate::spec::{greedy, speculative};
use crate::{Error, F32_BYTES, Lm};

pub use crate::figure_data::{
    DraftCost, DraftKind, HostFigures, Knee, MachineFigures, ModelFigures, SpecFigures, SweepPoint,
};

pub use crate::plan::Plan;

/// The row counts at which the kernel is timed with its weights streamed from memory (those
/// up to the plan's `max_tokens`): each power of 2 to 64, past the ridge of any machine the
/// demo has met (9 tokens for f32 on the development machine).
pub const STREAM_ROWS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];

/// Seconds of the peak's product in each [`Probe`] of the sweep: about a compute-bound
/// pass's length at batch 1 (16–32 tokens).
pub const PROBE_SECONDS: f64 = 0.02;

/// Measures everything `plan` asks for, with progress lines on `progress`.
///
/// Errors: a plan with a zero size, a `max_n` beyond the model's `max_seq` after `ctx`,
/// a last-level cache that cannot be read, and the errors of the measurements.
pub fn run(plan: &Plan, progress: &mut dyn Write) -> Result<HostFigures, Error> {
    let start = Instant::now();
    let load_start = load_average();
    if plan.batches.contains(&0)
        || plan.spec_batches.contains(&0)
        || plan.max_n == 0
        || plan.max_tokens == 0
        || plan.gamma == 0
        || plan.spec_runs == 0
    {
        return Err(Error::Argument(
            "every batch, max_n, max_tokens, γ and spec_runs must be at least 1".into(),
        ));
    }
    // Sized from the caches: whether they fit is said before the first allocation.
    let caches = crate::host::cache_sizes();
    let llc = caches.last_level().ok_or_else(|| {
        Error::Measure(format!(
            "no cache size to scale the model against: {}",
            caches.source
        ))
    })?;
    let (cfg, stream) = if plan.past_cache {
        (scaled_config(llc)?, measure::stream_bytes(Some(llc)))
    } else {
        (shallowest_config(), measure::MIN_STREAM_BYTES)
    };
    check_room("the scaled model", memory_needed(&cfg, stream as u64))?;
    writeln!(progress, "measuring this machine…")?;
    let machine = Machine::measure_streaming(stream, plan.machine_runs, progress)?;
    let (peak, bw) = (machine.peak_flops(), machine.bandwidth_bytes());
    if plan.ctx.saturating_add(plan.max_n) > cfg.max_seq
        || plan.prompt_len.saturating_add(plan.n_new) > cfg.max_seq
    {
        return Err(Error::Argument(format!(
            "the plan needs sequences longer than the scaled model's {} tokens",
            cfg.max_seq
        )));
    }
    writeln!(
        progress,
        "building the scaled model ({} layers)…",
        cfg.n_layers
    )?;
    let p = params(&cfg, plan.seed)?;
    let models = Models::new(&p, cfg)?;
    let model = ModelFigures {
        cfg,
        llc_bytes: llc,
        target_bytes: models.target.weight_bytes(),
        first_layer_bytes: models.first_layer.weight_bytes(),
        int4_bytes: models.int4.weight_bytes(),
        target_regions: models.target.parallel_regions(),
    };
    // Bytes per weight of the INT4 copy: its bytes over the target's f32 weights' count.
    let f32_bytes = F32_BYTES as f64;
    let int4_bpw = f32_bytes * model.int4_bytes as f64 / model.target_bytes as f64;
    let mut int4_peaks = Vec::new();
    for rows in plan.spec_batches {
        int4_peaks.push((rows, int4_peak(rows, plan.machine_runs, 0.1, progress)?));
    }
    // The kernel's efficiency at 1 … MR rows and the model's inner dimension, each run
    // paired with one at the peak's shape.
    let again = plan.machine_runs.min(3);
    let mut kernel_efficiency = Vec::new();
    for rows in 1..=transformer_lab::gemm::MR {
        // The model's inner dimension, 128 columns (384 KiB at d_model 768: in L2).
        let shape = (rows, cfg.d_model, 128);
        kernel_efficiency
            .push(measure::kernel_efficiency(shape, plan.machine_runs, 0.03, progress)?.median());
    }
    // The kernel with its weights streamed from memory, as many bytes as the target's, on
    // matrices of the model's inner and feed-forward dimensions (6.3 MB at 768 × 2048).
    let rows: Vec<usize> = STREAM_ROWS
        .into_iter()
        .filter(|&r| r <= plan.max_tokens)
        .collect();
    let streamed = measure::streamed_slowdown(
        &rows,
        (cfg.d_model, cfg.d_ff),
        model.target_bytes as usize,
        plan.machine_runs,
        progress,
    )?;
    let dispatch = dispatch(plan.machine_runs, progress)?;
    let machine = MachineFigures {
        dispatch,
        kernel_efficiency,
        streamed,
        ridge_point: machine.ridge_point(),
        critical_tokens_f32: machine.critical_tokens(f32_bytes)?,
        critical_tokens_int4: machine.critical_tokens(int4_bpw)?,
        int4_peaks,
        machine,
    };

    let mut target = CpuDevice::new(&models.target, plan.runs, plan.pass_budget)?;
    let ns: Vec<usize> = std::iter::successors(Some(1usize), |n| Some(n * 2))
        .take_while(|&n| n <= plan.max_n)
        .collect();
    let mut sweep = Vec::new();
    let mut knees = Vec::new();
    // The machine again right before every timed pass and once after each batch's last:
    // each shape is predicted from the probes on either side of its own passes.
    let probe = Probe::new(machine.machine.stream_bytes, PROBE_SECONDS)?;
    for &batch in &plan.batches {
        let (mut order, mut probes) = (Vec::new(), Vec::new());
        let ns: Vec<usize> = ns
            .iter()
            .copied()
            .filter(|&n| n == 1 || batch * n <= plan.max_tokens)
            .collect();
        let samples = target.measure_each_with(batch, &ns, plan.ctx, &mut |i| {
            order.push(i);
            probes.push(probe.take());
            Ok(())
        })?;
        probes.push(probe.take());
        let beside = beside_each_pass(&order, &probes, ns.len())?;
        let medians = |v: &[(f64, f64)]| {
            let (p, b): (Vec<f64>, Vec<f64>) = v.iter().copied().unzip();
            (median(&p), median(&b))
        };
        // The knees are predicted over every n, not only the measured ones: at the
        // machine over all of this batch's probes.
        let (peak_b, bw_b) = medians(&probes);
        let model_at = |(peak, bw): (f64, f64), n: usize| {
            let peak = machine.f32_peak(peak, batch * n);
            machine.predict(&models.target, (peak, bw), batch, plan.ctx, n)
        };
        let model = |n| model_at((peak_b, bw_b), n);
        for ((&n, measured), beside) in ns.iter().zip(samples).zip(&beside) {
            let (peak, bandwidth) = medians(beside);
            writeln!(
                progress,
                "forward pass, batch {batch}, {n} tokens: {:.2} ms (beside it: {:.1} GFLOP/s, {:.1} GB/s)",
                measured.median() * 1e3,
                peak / 1e9,
                bandwidth / 1e9
            )?;
            sweep.push(SweepPoint {
                batch,
                n_new: n,
                measured,
                predicted: model_at((peak, bandwidth), n),
                peak,
                bandwidth,
                host_overlap: machine.host_overlap(batch * n),
            });
        }
        let points: Vec<(f64, f64)> = sweep
            .iter()
            .filter(|p| p.batch == batch)
            .map(|p| (p.n_new as f64, p.measured.median()))
            .collect();
        let at = |m: TimeModel| predicted_knee(plan.max_n, |n| model(n).time(m));
        knees.push(Knee {
            batch,
            measured: knee(&points),
            roofline: at(TimeModel::Roofline),
            planner: predicted_knee(plan.max_n, |n| model(n).planner()),
            host: predicted_knee(plan.max_n, |n| {
                model(n).overlapped(machine.host_overlap(batch * n))
            }),
            additive: at(TimeModel::Additive),
        });
    }

    // (c) c at batch 1, mid-generation context: the draft's steps as a round pays them,
    // right after a verification; the target's step as plain decoding pays it, back to back.
    let ctx = plan.mid_generation_ctx();
    let target_step = target.measure(1, 1, ctx)?;
    let f32_peak = |rows| machine.f32_peak(peak, rows);
    let pred_t = machine.predict(&models.target, (f32_peak(1), bw), 1, ctx, 1);
    let mut drafts = Vec::new();
    for kind in DraftKind::ALL {
        let round = (1, ctx);
        let (step, pred, bytes) = match kind {
            DraftKind::FirstLayer => (
                round_costs(
                    &mut target,
                    &models.first_layer,
                    round,
                    plan.gamma,
                    plan.runs,
                )?
                .0,
                machine.predict(&models.first_layer, (f32_peak(1), bw), 1, ctx, 1),
                model.first_layer_bytes,
            ),
            DraftKind::Int4 => (
                round_costs(&mut target, &models.int4, round, plan.gamma, plan.runs)?.0,
                machine.predict(&models.int4, (machine.int4_peak(1), bw), 1, ctx, 1),
                model.int4_bytes,
            ),
        };
        writeln!(
            progress,
            "draft step ({kind:?}): {:.3} ms",
            step.median() * 1e3
        )?;
        drafts.push(DraftCost {
            draft: kind,
            weight_bytes: bytes,
            measured: step.median() / target_step.median(),
            roofline: pred.roofline() / pred_t.roofline(),
            additive: pred.additive() / pred_t.additive(),
            draft_step: step,
            target_step: target_step.clone(),
        });
    }

    // (d) Real speculative decoding.
    let mut spec = Vec::new();
    let [small, large] = plan.spec_batches;
    for kind in DraftKind::ALL {
        spec.push(spec_run(plan, &models, &machine, small, kind, progress)?);
    }
    // The draft that accepts more at batch 1 goes on to the large batch: τ comes from greedy
    // decoding, not a clock, so the choice (and the row's label, which masking keeps) is the
    // same on every run; a measured speedup could pick either when the two are close.
    let better = spec
        .iter()
        .max_by(|a, b| a.tau.total_cmp(&b.tau))
        .map_or(DraftKind::Int4, |s| s.draft);
    spec.push(spec_run(plan, &models, &machine, large, better, progress)?);
    writeln!(progress, "measuring this machine again…")?;
    let bw_end = read_bandwidth(machine.machine.stream_bytes, again, progress)?.median();
    let peak_end = kernel_peak(again, 0.1, progress)?.median();
    let drift = (
        bw_end / machine.machine.bandwidth_bytes(),
        peak_end / machine.machine.peak_flops(),
    );
    Ok(HostFigures {
        load: (load_start, load_average()),
        drift,
        machine,
        model,
        sweep,
        knees,
        drafts,
        spec,
        seconds: start.elapsed().as_secs_f64(),
    })
}

fn prompts(batch: usize, len: usize, vocab: usize, seed: u64) -> Vec<Vec<u32>> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..batch)
        .map(|_| {
            (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % vocab as u64) as u32
                })
                .collect()
        })
        .collect()
}

fn spec_run(
    plan: &Plan,
    models: &Models<'_>,
    machine: &MachineFigures,
    batch: usize,
    kind: DraftKind,
    progress: &mut dyn Write,
) -> Result<SpecFigures, Error> {
    let (peak, bw) = (
        machine.machine.peak_flops(),
        machine.machine.bandwidth_bytes(),
    );
    let f32 = |rows| machine.f32_peak(peak, rows);
    let ctx = plan.mid_generation_ctx();
    let ps = prompts(batch, plan.prompt_len, models.target.vocab(), plan.seed + 1);
    let spec = || match kind {
        DraftKind::FirstLayer => speculative(
            &models.target,
            &models.first_layer,
            &ps,
            plan.n_new,
            plan.gamma,
        ),
        DraftKind::Int4 => speculative(&models.target, &models.int4, &ps, plan.n_new, plan.gamma),
    };
    // Plain and speculative runs alternate, `spec_runs` of each, and each side keeps its
    // fastest: a burst of load on the shared host then hits both alike.
    let mut plain = greedy(&models.target, &ps, plan.n_new)?;
    let mut run = spec()?;
    let runs = if batch == 1 { plan.spec_runs } else { 1 };
    for _ in 1..runs {
        let p = greedy(&models.target, &ps, plan.n_new)?;
        if p.seconds < plain.seconds {
            plain = p;
        }
        let r = spec()?;
        if r.seconds < run.seconds {
            run = r;
        }
    }
    let mut device = CpuDevice::new(&models.target, plan.runs, plan.pass_budget)?;
    let round = (batch, ctx);
    let (draft_pred, (draft_step, m_verify)) = match kind {
        DraftKind::FirstLayer => (
            machine.predict(&models.first_layer, (f32(batch), bw), batch, ctx, 1),
            round_costs(
                &mut device,
                &models.first_layer,
                round,
                plan.gamma,
                plan.runs,
            )?,
        ),
        DraftKind::Int4 => (
            machine.predict(&models.int4, (machine.int4_peak(batch), bw), batch, ctx, 1),
            round_costs(&mut device, &models.int4, round, plan.gamma, plan.runs)?,
        ),
    };
    let step = machine.predict(&models.target, (f32(batch), bw), batch, ctx, 1);
    let verify = machine.predict(
        &models.target,
        (f32(batch * (plan.gamma + 1)), bw),
        batch,
        ctx,
        plan.gamma + 1,
    );
    let tau = run.tau();
    let alpha = alpha_from_tau(tau, plan.gamma);
    let best = |m: TimeModel| {
        best_round(
            alpha,
            decode_lab::MAX_GAMMA as usize,
            draft_pred.time(m),
            |n| {
                machine
                    .predict(&models.target, (f32(batch * n), bw), batch, ctx, n)
                    .time(m)
            },
        )
    };
    let accounted = |m: TimeModel| {
        speculative_speedup(
            tau,
            plan.gamma,
            step.time(m),
            draft_pred.time(m),
            verify.time(m),
        )
    };
    let m_step = device.measure(batch, 1, ctx)?.median();
    let out = SpecFigures {
        batch,
        draft: kind,
        gamma: plan.gamma,
        tau,
        plain_tokens_per_s: plain.tokens_per_second(),
        spec_tokens_per_s: run.tokens_per_second(),
        measured_speedup: run.tokens_per_second() / plain.tokens_per_second(),
        predicted_roofline: accounted(TimeModel::Roofline)?,
        predicted_additive: accounted(TimeModel::Additive)?,
        accounted_measured: speculative_speedup(
            tau,
            plan.gamma,
            m_step,
            draft_step.median(),
            m_verify.median(),
        )?,
        lossless: run.tokens == plain.tokens,
        alpha,
        best_round_additive: best(TimeModel::Additive),
        best_round_roofline: best(TimeModel::Roofline),
    };
    writeln!(
        progress,
        "speculative decoding, batch {batch}, {kind:?} draft: τ = {tau:.2}, {:.2}× measured, {:.2}× predicted",
        out.measured_speedup, out.predicted_additive
    )?;
    Ok(out)
}
