//! INT4 kernel against the f32 packed kernel at decode shapes.
#![allow(clippy::print_stdout)]
use ndarray::Array2;
use std::time::Instant;
fn main() {
    let (k, n) = (768, 4096);
    let w = Array2::from_shape_fn((k, n), |(i, j)| ((i * 7 + j * 3) % 17) as f32 * 0.01 - 0.08);
    let q = host_lab::int4::Int4Matrix::quantize(&[w.view()]).unwrap();
    let p = transformer_lab::gemm::PackedMatrix::new(&[w.view()]).unwrap();
    for m in [1, 2, 4, 16] {
        let a = Array2::from_shape_fn((m, k), |(i, j)| ((i + j) % 5) as f32 * 0.1);
        let mut out = Array2::zeros((m, n));
        let reps = 200;
        let t0 = Instant::now();
        for _ in 0..reps {
            host_lab::int4::matmul(a.view(), &q, out.view_mut()).unwrap();
        }
        let ti = t0.elapsed().as_secs_f64() / reps as f64;
        let t0 = Instant::now();
        for _ in 0..reps {
            transformer_lab::gemm::matmul(a.view(), &p, out.view_mut()).unwrap();
        }
        let tf = t0.elapsed().as_secs_f64() / reps as f64;
        let fl = 2.0 * (m * k * n) as f64;
        println!(
            "m{m}: int4 {:.1} GFLOP/s ({:.1} GB/s), f32 1-thread {:.1} GFLOP/s",
            fl / ti / 1e9,
            q.bytes() as f64 / ti / 1e9,
            fl / tf / 1e9
        );
    }
}
