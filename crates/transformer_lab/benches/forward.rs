//! Throughput of the toy model at lecture 6's shapes (QCFG: 4 layers, d_model 128).
//!
//! `cargo bench -p transformer_lab`. Divan's "item/s" column is FLOP/s: every benchmark
//! counts its FLOPs with `Config::forward_flops`, from the shapes, not by guess.
//! Set `RAYON_NUM_THREADS=1` for single-core figures.

use divan::Bencher;
use divan::counter::ItemsCount;
use ndarray::{Array2, s};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use transformer_lab::{QCFG, TransformerLM, autoregressive_generate, init_params};

fn main() {
    divan::main();
}

fn tokens(b: usize, t: usize) -> Array2<u32> {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    Array2::from_shape_fn((b, t), |_| rng.random_range(0..256))
}

/// Teacher-forced logits of 64 sequences of 56 tokens: demo 3's draft pass.
#[divan::bench]
fn full_logits_64x56(bencher: Bencher) {
    let p = init_params(&QCFG, 0).unwrap();
    let m = TransformerLM::new(&p, QCFG, "t").unwrap();
    let toks = tokens(64, 56);
    let flops = QCFG.forward_flops(64, 0, 56);
    bencher
        .counter(ItemsCount::new(flops as u64))
        .bench_local(|| m.full_logits(divan::black_box(toks.view())).unwrap());
}

/// One decode step of 64 sequences at position 32 (mid-generation in demo 3).
#[divan::bench]
fn decode_step_64(bencher: Bencher) {
    let p = init_params(&QCFG, 0).unwrap();
    let m = TransformerLM::new(&p, QCFG, "t").unwrap();
    let toks = tokens(64, 33);
    let mut cache = m.new_cache(64, 33).unwrap();
    m.extend(&mut cache, toks.slice(s![.., ..32])).unwrap();
    let last = toks.column(32).to_owned();
    let flops = QCFG.forward_flops(64, 32, 1);
    bencher
        .counter(ItemsCount::new(flops as u64))
        .bench_local(|| {
            cache.truncate(32);
            m.step(&mut cache, divan::black_box(last.view())).unwrap()
        });
}

/// Greedy generation of 48 tokens after 64 prompts of 8: demo 3's target run.
#[divan::bench]
fn generate_64x48(bencher: Bencher) {
    let p = init_params(&QCFG, 0).unwrap();
    let m = TransformerLM::new(&p, QCFG, "t").unwrap();
    let prompts = tokens(64, 8);
    let flops = QCFG.forward_flops(64, 0, 8)
        + (8..8 + 47)
            .map(|pos| QCFG.forward_flops(64, pos, 1))
            .sum::<f64>();
    bencher
        .counter(ItemsCount::new(flops as u64))
        .bench_local(|| {
            let mut rng = ChaCha8Rng::seed_from_u64(0);
            autoregressive_generate(&m, prompts.view(), 48, 0.0, &mut rng).unwrap()
        });
}

/// For comparison: a plain `Array2::dot` of two 512 × 512 f32 matrices.
#[divan::bench]
fn plain_dot_512(bencher: Bencher) {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let a = Array2::from_shape_fn((512, 512), |_| rng.random::<f32>());
    let b = Array2::from_shape_fn((512, 512), |_| rng.random::<f32>());
    bencher
        .counter(ItemsCount::new(2 * 512u64 * 512 * 512))
        .bench_local(|| divan::black_box(&a).dot(divan::black_box(&b)));
}

/// The packed kernel alone at the decode step's widest product (32 rows × W_gate|W_up) and
/// at a prefill chunk's (256 rows).
#[divan::bench(args = [32, 256])]
fn packed_matmul_x128x768(bencher: Bencher, m: usize) {
    use transformer_lab::gemm::{PackedMatrix, matmul};
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let a = Array2::from_shape_fn((m, 128), |_| rng.random::<f32>());
    let w = Array2::from_shape_fn((128, 768), |_| rng.random::<f32>());
    let p = PackedMatrix::new(&[w.view()]).unwrap();
    let mut out = Array2::zeros((m, 768));
    bencher
        .counter(ItemsCount::new(2 * m as u64 * 128 * 768))
        .bench_local(|| matmul(divan::black_box(a.view()), &p, out.view_mut()).unwrap());
}

/// `matrixmultiply` at the same shape, for comparison.
#[divan::bench(args = [32, 256])]
fn general_matmul_x128x768(bencher: Bencher, m: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let a = Array2::from_shape_fn((m, 128), |_| rng.random::<f32>());
    let w = Array2::from_shape_fn((128, 768), |_| rng.random::<f32>());
    let mut out = Array2::zeros((m, 768));
    bencher
        .counter(ItemsCount::new(2 * m as u64 * 128 * 768))
        .bench_local(|| {
            ndarray::linalg::general_mat_mul(1.0, &divan::black_box(a.view()), &w, 0.0, &mut out)
        });
}
