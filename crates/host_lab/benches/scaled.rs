//! The scaled model on this machine: how close its passes come to the measured roofline.
//!
//! `cargo bench -p host_lab`. Before divan's table it prints, from one run of
//! [`ROUNDS`] rounds, each timing the machine and the passes side by side (a bandwidth run
//! then five decode steps; a kernel-peak run then one large pass), so that a change of
//! load on the shared host falls on both sides of each ratio:
//! - the batch-1 decode step's achieved read bandwidth, `(weight + KV bytes) / step time`,
//!   over the bandwidth measured beside it (target ≥ 0.8);
//! - the large-n pass's (batch 1, 512 tokens) FLOP/s over the kernel peak measured beside
//!   it (target ≥ 0.7);
//!
//! each as the median and range over the rounds. Divan's "item/s" column is FLOP/s
//! (`Config::forward_flops`). Run it when `uptime` shows little load, and compare runs by
//! their ratios.
#![allow(clippy::print_stdout)]

use divan::Bencher;
use divan::counter::ItemsCount;
use host_lab::machine::Machine;
use host_lab::measure::{Sample, kernel_peak, read_bandwidth};
use host_lab::scaled::{Models, params, scaled_config};
use host_lab::{CpuDevice, Lm};

const CTX: usize = 64;
const LARGE_N: usize = 512;
/// Rounds of side-by-side measurements.
const ROUNDS: usize = 9;

fn main() {
    // The main thread joins rayon's pool, as a lecture's does (`lecture_kit::join_the_pool`):
    // the passes are then timed as demo 6 times them.
    let _ = rayon::ThreadPoolBuilder::new()
        .use_current_thread()
        .build_global();
    let mut err = std::io::stderr();
    let machine = Machine::measure(3, &mut err).expect("machine measured");
    let cfg = scaled_config(machine.caches.last_level().unwrap_or(32 << 20)).expect("config");
    let p = params(&cfg, 0).expect("params");
    let models = Models::new(&p, cfg).expect("models");
    let t = &models.target;
    let mut dev = CpuDevice::new(t, 5, 10.0).expect("device");
    let bytes = (t.weight_bytes() + (CTX as u64 + 1) * t.kv_bytes_per_token()) as f64;
    let flops = t.flops(1, CTX, LARGE_N);
    let mut sink = std::io::sink();
    let (mut bw, mut step, mut peak, mut large) = (vec![], vec![], vec![], vec![]);
    dev.pass(1, LARGE_N, CTX).expect("warm-up");
    for _ in 0..ROUNDS {
        bw.push(
            read_bandwidth(machine.stream_bytes, 1, &mut sink)
                .expect("bandwidth")
                .median(),
        );
        step.push(dev.measure(1, 1, CTX).expect("step").median());
        peak.push(kernel_peak(1, 0.1, &mut sink).expect("peak").median());
        large.push(dev.pass(1, LARGE_N, CTX).expect("large pass"));
    }
    let ratio = |num: &[f64], den: &[f64]| {
        Sample::new(num.iter().zip(den).map(|(a, b)| a / b).collect()).expect("finite ratios")
    };
    let show = |s: &Sample, scale: f64| {
        let (lo, hi) = s.range();
        format!(
            "{:.2} [{:.2}, {:.2}]",
            s.median() * scale,
            lo * scale,
            hi * scale
        )
    };
    let achieved_bw: Vec<f64> = step.iter().map(|s| bytes / s).collect();
    let achieved_flops: Vec<f64> = large.iter().map(|s| flops / s).collect();
    let sample = |v: &[f64]| Sample::new(v.to_vec()).expect("finite");
    println!(
        "decode step (batch 1): {} ms; read {} GB/s = {} of the bandwidth measured beside it, {} GB/s (median [range] of {ROUNDS} rounds)",
        show(&sample(&step), 1e3),
        show(&sample(&achieved_bw), 1e-9),
        show(&ratio(&achieved_bw, &bw), 1.0),
        show(&sample(&bw), 1e-9),
    );
    println!(
        "large pass (batch 1, {LARGE_N} tokens): {} ms; {} GFLOP/s = {} of the kernel peak measured beside it, {} GFLOP/s",
        show(&sample(&large), 1e3),
        show(&sample(&achieved_flops), 1e-9),
        show(&ratio(&achieved_flops, &peak), 1.0),
        show(&sample(&peak), 1e-9),
    );
    drop(dev);
    divan::main();
}

fn models() -> (transformer_lab::Params, transformer_lab::Config) {
    let cfg = scaled_config(
        host_lab::host::cache_sizes()
            .last_level()
            .unwrap_or(32 << 20),
    )
    .expect("config");
    (params(&cfg, 0).expect("params"), cfg)
}

/// One decode step of the target at batch 1 after 64 cached tokens.
#[divan::bench(sample_count = 20)]
fn target_step_b1(bencher: Bencher) {
    let (p, cfg) = models();
    let m = Models::new(&p, cfg).expect("models");
    let mut dev = CpuDevice::new(&m.target, 1, 1.0).expect("device");
    bencher
        .counter(ItemsCount::new(m.target.flops(1, CTX, 1) as u64))
        .bench_local(|| dev.pass(1, 1, CTX).expect("pass"));
}

/// One decode step of the INT4 draft at batch 1.
#[divan::bench(sample_count = 20)]
fn int4_step_b1(bencher: Bencher) {
    let (p, cfg) = models();
    let m = Models::new(&p, cfg).expect("models");
    let mut dev = CpuDevice::new(&m.int4, 1, 1.0).expect("device");
    bencher
        .counter(ItemsCount::new(m.int4.flops(1, CTX, 1) as u64))
        .bench_local(|| dev.pass(1, 1, CTX).expect("pass"));
}

/// One decode step of the first-layer draft at batch 1.
#[divan::bench(sample_count = 20)]
fn first_layer_step_b1(bencher: Bencher) {
    let (p, cfg) = models();
    let m = Models::new(&p, cfg).expect("models");
    let mut dev = CpuDevice::new(&m.first_layer, 1, 1.0).expect("device");
    bencher
        .counter(ItemsCount::new(m.first_layer.flops(1, CTX, 1) as u64))
        .bench_local(|| dev.pass(1, 1, CTX).expect("pass"));
}

/// The target fed 512 tokens at batch 1 (compute-bound).
#[divan::bench(sample_count = 5)]
fn target_512_tokens(bencher: Bencher) {
    let (p, cfg) = models();
    let m = Models::new(&p, cfg).expect("models");
    let mut dev = CpuDevice::new(&m.target, 1, 1.0).expect("device");
    bencher
        .counter(ItemsCount::new(m.target.flops(1, CTX, LARGE_N) as u64))
        .bench_local(|| dev.pass(1, LARGE_N, CTX).expect("pass"));
}
