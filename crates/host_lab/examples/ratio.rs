//! Fastest-of-N pass times of the scaled target at batch 1 (a quick structural check).
#![allow(clippy::print_stdout)]
use host_lab::CpuDevice;
use host_lab::scaled::{Models, params, scaled_config};
fn main() -> Result<(), host_lab::Error> {
    let cfg = scaled_config(32 << 20)?;
    let p = params(&cfg, 0)?;
    let m = Models::new(&p, cfg)?;
    let mut t = CpuDevice::new(&m.target, 1, 1.0)?;
    let mut q = CpuDevice::new(&m.int4, 1, 1.0)?;
    let mut f = CpuDevice::new(&m.first_layer, 1, 1.0)?;
    let mut best = [f64::INFINITY; 6];
    for _ in 0..15 {
        for (i, n) in [1, 2, 4, 8].iter().enumerate() {
            best[i] = best[i].min(t.pass(1, *n, 32)?);
        }
        best[4] = best[4].min(q.pass(1, 1, 32)?);
        best[5] = best[5].min(f.pass(1, 1, 32)?);
    }
    println!(
        "target n=1,2,4,8: {:.2} {:.2} {:.2} {:.2} ms; int4 {:.2} ms; first layer {:.2} ms",
        best[0] * 1e3,
        best[1] * 1e3,
        best[2] * 1e3,
        best[3] * 1e3,
        best[4] * 1e3,
        best[5] * 1e3
    );
    println!(
        "ratios n2/n1 {:.3}, c int4 {:.3}, c first {:.3}",
        best[1] / best[0],
        best[4] / best[0],
        best[5] / best[0]
    );
    Ok(())
}
