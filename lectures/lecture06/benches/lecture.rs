//! `cargo bench -p lecture06`: demo 3 end to end (toy model: sample prompts, generate,
//! quantize, two drafts' logits, ranks, tables of figures) and the whole lecture printed
//! into memory. Demo 3's throughput is in FLOPs of its toy-model forward passes, counted
//! from the config.
//!
//! Before the benchmarks, the run prints one ratio measured side by side: the whole
//! lecture's FLOP rate over (the packed kernel's FLOP rate on one thread × threads), the
//! fraction of the machine's matrix speed the lecture reaches. A ratio of two figures from
//! one run moves far less than either figure on a shared host.

use std::io::Write;
use std::time::{Duration, Instant};

use divan::Bencher;
use divan::counter::ItemsCount;
use lecture06::Cli;
use lecture06::spec_decode_on_hardware::demo3::toy_model;
use ndarray::Array2;
use quant_lab::QCFG;
use transformer_lab::config_like;
use transformer_lab::gemm::{PackedMatrix, matmul};

fn main() {
    // Under `cargo bench` (not when `cargo test` runs the benches once as tests).
    if std::env::args().any(|a| a == "--bench") {
        report_efficiency().expect("the efficiency report");
    }
    divan::main();
}

/// The median of `runs` timings of `f`, after one warm-up call.
fn median_time<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    divan::black_box(f());
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            divan::black_box(f());
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

/// Prints the whole lecture's efficiency: demo 3's FLOPs (the lecture's only real
/// computation; demos 1–2 are formulas) over the median time of the whole lecture
/// printed into memory, divided by the packed kernel's median rate on one thread (at a
/// decode chunk's widest product, 256 rows × 128 × 768) times the rayon threads.
/// Kernel and lecture runs alternate, so both see the same host.
fn report_efficiency() -> std::io::Result<()> {
    let m = 256;
    let k = 128;
    let n = 768;
    let a = Array2::from_shape_fn((m, k), |(i, j)| ((i * 7 + j * 3) % 13) as f32 * 0.1 - 0.6);
    let w = Array2::from_shape_fn((k, n), |(i, j)| ((i * 5 + j) % 11) as f32 * 0.05 - 0.25);
    let packed = PackedMatrix::new(&[w.view()]).expect("a packable matrix");
    let mut c = Array2::zeros((m, n));
    let kernel_flops = 2.0 * (m * k * n) as f64;
    let mut kernel = Vec::new();
    let mut lecture = Vec::new();
    for _ in 0..5 {
        kernel.push(median_time(200, || {
            matmul(a.view(), &packed, c.view_mut()).expect("shapes fit")
        }));
        lecture.push(median_time(3, || {
            let mut out = Vec::with_capacity(16 << 10);
            print_lecture(&mut out);
            out
        }));
    }
    kernel.sort();
    lecture.sort();
    let kernel = kernel[2].as_secs_f64();
    let lecture = lecture[2].as_secs_f64();
    let threads = rayon::current_num_threads();
    let kernel_rate = kernel_flops / kernel;
    let lecture_rate = demo3_flops() as f64 / lecture;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "whole lecture: {:.1} GFLOP in {:.1} ms = {:.1} GFLOP/s; packed kernel {:.1} GFLOP/s \
         per thread × {threads} threads; efficiency {:.2}",
        demo3_flops() as f64 / 1e9,
        lecture * 1e3,
        lecture_rate / 1e9,
        kernel_rate / 1e9,
        lecture_rate / (kernel_rate * threads as f64)
    )
}

/// FLOPs of demo 3's forward passes: sampling the prompts (prefill of 1 token, then 6
/// steps), the target's greedy generation (prefill of 8, then 47 steps), and each
/// draft's teacher-forced pass over 64 × 56 tokens.
fn demo3_flops() -> u64 {
    let b = toy_model::N_SEQ;
    let t = toy_model::PROMPT_LEN;
    let n = toy_model::N_NEW;
    let steps = |from: usize, count: usize| -> f64 {
        (from..from + count)
            .map(|pos| QCFG.forward_flops(b, pos, 1))
            .sum()
    };
    let sample = QCFG.forward_flops(b, 0, 1) + steps(1, t - 2);
    let generate = QCFG.forward_flops(b, 0, t) + steps(t, n - 1);
    let drafts = config_like(&QCFG, 1).forward_flops(b, 0, t + n) + QCFG.forward_flops(b, 0, t + n);
    (sample + generate + drafts) as u64
}

#[divan::bench(sample_count = 20)]
fn demo3_end_to_end(bencher: Bencher) {
    bencher
        .counter(ItemsCount::new(demo3_flops()))
        .bench(|| lecture_kit::report::<Cli>(&["--demo", "3"]).unwrap());
}

#[divan::bench(sample_count = 20)]
fn whole_lecture_run(bencher: Bencher) {
    bencher.bench(|| {
        let mut out = Vec::with_capacity(16 << 10);
        print_lecture(&mut out);
        out
    });
}

/// Prints the whole lecture, as `cargo run -p lecture06` does.
fn print_lecture(out: &mut Vec<u8>) {
    let code =
        lecture_kit::run::<Cli>(["lecture06"], out, &mut std::io::sink(), Default::default());
    assert_eq!(code, 0, "the lecture runs");
}
