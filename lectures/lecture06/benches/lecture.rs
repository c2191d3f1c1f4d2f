//! `cargo bench -p lecture06`: demo 3 end to end (toy model: sample prompts, generate,
//! quantize, two drafts' logits, ranks, tables of figures) and the whole lecture printed
//! into memory. Demo 3's throughput is in FLOPs of its toy-model forward passes, counted
//! from the config.

use divan::Bencher;
use divan::counter::ItemsCount;
use lecture06::spec_decode_on_hardware::toy_model;
use lecture06::spec_decode_on_hardware::{Setup, demo3};
use quant_lab::QCFG;
use transformer_lab::config_like;

fn main() {
    divan::main();
}

/// FLOPs of demo 3's forward passes: sampling the prompts (prefill of 1 token, then 6
/// steps), the target's greedy generation (prefill of 8, then 47 steps), and each
/// draft's teacher-forced pass over 64 × 56 tokens.
fn demo3_flops() -> u64 {
    let (b, t, n) = (toy_model::N_SEQ, toy_model::PROMPT_LEN, toy_model::N_NEW);
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
        .bench(|| demo3::figures(&Setup::default()).unwrap());
}

#[divan::bench(sample_count = 20)]
fn whole_lecture_run(bencher: Bencher) {
    bencher.bench(|| {
        let mut out = Vec::with_capacity(16 << 10);
        lecture06::run(&mut out).unwrap();
        out
    });
}
