//! The scaled model on this machine: how close its passes come to the measured roofline.
//!
//! `cargo bench -p host_lab`. Before divan's table it prints, from one measurement of the
//! machine and its own timing of the passes (medians of 9 runs):
//! - the batch-1 decode step's achieved read bandwidth, `(weight + KV bytes) / step time`,
//!   over the measured bandwidth (target ≥ 0.8);
//! - the large-n pass's (batch 1, 512 tokens) FLOP/s over the measured kernel peak
//!   (target ≥ 0.7).
//!
//! Divan's "item/s" column is FLOP/s (`Config::forward_flops`). The host is shared: run it
//! when `uptime` shows little load, and compare runs by their ratios.
#![allow(clippy::print_stdout)]

use divan::Bencher;
use divan::counter::ItemsCount;
use host_lab::machine::Machine;
use host_lab::scaled::{Models, params, scaled_config};
use host_lab::{CpuDevice, Lm};

const CTX: usize = 64;
const LARGE_N: usize = 512;

fn main() {
    let mut err = std::io::stderr();
    let machine = Machine::measure(7, &mut err).expect("machine measured");
    let cfg = scaled_config(machine.caches.last_level().unwrap_or(32 << 20)).expect("config");
    let p = params(&cfg, 0).expect("params");
    let models = Models::new(&p, cfg).expect("models");
    let t = &models.target;
    let mut dev = CpuDevice::new(t, "target", 9, 2.0).expect("device");
    let step = dev.measure(1, 1, CTX).expect("step");
    let bytes = (t.weight_bytes() + (CTX as u64 + 1) * t.kv_bytes_per_token()) as f64;
    let achieved_bw = bytes / step.median();
    let large = dev.measure(1, LARGE_N, CTX).expect("large pass");
    let achieved_flops = t.flops(1, CTX, LARGE_N) / large.median();
    let (lo, hi) = step.range();
    println!(
        "decode step (batch 1): {:.2} ms [{:.2}, {:.2}]; read {:.2} GB/s = {:.2} of the measured {:.2} GB/s",
        step.median() * 1e3,
        lo * 1e3,
        hi * 1e3,
        achieved_bw / 1e9,
        achieved_bw / machine.bandwidth_bytes(),
        machine.bandwidth_bytes() / 1e9
    );
    let (lo, hi) = large.range();
    println!(
        "large pass (batch 1, {LARGE_N} tokens): {:.1} ms [{:.1}, {:.1}]; {:.1} GFLOP/s = {:.2} of the measured kernel peak {:.1} GFLOP/s",
        large.median() * 1e3,
        lo * 1e3,
        hi * 1e3,
        achieved_flops / 1e9,
        achieved_flops / machine.peak_flops(),
        machine.peak_flops() / 1e9
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
    let mut dev = CpuDevice::new(&m.target, "t", 1, 1.0).expect("device");
    bencher
        .counter(ItemsCount::new(m.target.flops(1, CTX, 1) as u64))
        .bench_local(|| dev.pass(1, 1, CTX).expect("pass"));
}

/// One decode step of the INT4 draft at batch 1.
#[divan::bench(sample_count = 20)]
fn int4_step_b1(bencher: Bencher) {
    let (p, cfg) = models();
    let m = Models::new(&p, cfg).expect("models");
    let mut dev = CpuDevice::new(&m.int4, "q", 1, 1.0).expect("device");
    bencher
        .counter(ItemsCount::new(m.int4.flops(1, CTX, 1) as u64))
        .bench_local(|| dev.pass(1, 1, CTX).expect("pass"));
}

/// One decode step of the first-layer draft at batch 1.
#[divan::bench(sample_count = 20)]
fn first_layer_step_b1(bencher: Bencher) {
    let (p, cfg) = models();
    let m = Models::new(&p, cfg).expect("models");
    let mut dev = CpuDevice::new(&m.first_layer, "f", 1, 1.0).expect("device");
    bencher
        .counter(ItemsCount::new(m.first_layer.flops(1, CTX, 1) as u64))
        .bench_local(|| dev.pass(1, 1, CTX).expect("pass"));
}

/// The target fed 512 tokens at batch 1 (compute-bound).
#[divan::bench(sample_count = 5)]
fn target_512_tokens(bencher: Bencher) {
    let (p, cfg) = models();
    let m = Models::new(&p, cfg).expect("models");
    let mut dev = CpuDevice::new(&m.target, "t", 1, 1.0).expect("device");
    bencher
        .counter(ItemsCount::new(m.target.flops(1, CTX, LARGE_N) as u64))
        .bench_local(|| dev.pass(1, LARGE_N, CTX).expect("pass"));
}
