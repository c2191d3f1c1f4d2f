//! The INT4 kernel at one row on the scaled model's matrix shapes (a quick check).
#![allow(clippy::print_stdout)]
use ndarray::Array2;
use std::time::Instant;
fn main() {
    for (k, n) in [
        (768, 2304),
        (768, 768),
        (768, 4096),
        (2048, 768),
        (1024, 512),
    ] {
        let w = Array2::from_shape_fn((k, n), |(i, j)| ((i * 7 + j * 3) % 17) as f32 * 0.01 - 0.08);
        let q = host_lab::int4::Int4Matrix::quantize(&[w.view()]).unwrap();
        let a = Array2::from_shape_fn((1, k), |(_, j)| (j % 5) as f32 * 0.1);
        let mut out = Array2::zeros((1, n));
        let mut best = [f64::INFINITY; 2];
        for _ in 0..200 {
            let t0 = Instant::now();
            host_lab::int4::matmul(a.view(), &q, out.view_mut()).unwrap();
            best[0] = best[0].min(t0.elapsed().as_secs_f64());
            let t0 = Instant::now();
            host_lab::int4::matmul_single_thread(a.view(), &q, out.view_mut()).unwrap();
            best[1] = best[1].min(t0.elapsed().as_secs_f64());
        }
        let fl = 2.0 * (k * n) as f64;
        println!(
            "[{k} x {n}]: parallel {:.1} us {:.1} GFLOP/s; one thread {:.1} us {:.1} GFLOP/s",
            best[0] * 1e6,
            fl / best[0] / 1e9,
            best[1] * 1e6,
            fl / best[1] / 1e9
        );
    }
}
