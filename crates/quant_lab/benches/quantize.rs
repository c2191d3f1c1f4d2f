//! `cargo bench -p quant_lab`: int4-g32 quantization of lecture 3's model, LM head included
//! (lecture 6's strong draft). Throughput is in weights quantized per second.

use divan::Bencher;
use divan::counter::ItemsCount;
use quant_lab::{QCFG, Scheme, quantize_params};
use transformer_lab::init_params;

fn main() {
    divan::main();
}

#[divan::bench]
fn quantize_params_int4_g32(bencher: Bencher) {
    let p = init_params(&QCFG, 0).unwrap();
    let int4 = Scheme::parse("int4-g32").unwrap();
    let (_, report) = quantize_params(&p, int4, true).unwrap();
    bencher
        .counter(ItemsCount::new(report.n_weights))
        .bench_local(|| quantize_params(divan::black_box(&p), int4, true).unwrap());
}
