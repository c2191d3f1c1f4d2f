//! Measures this machine's peak and bandwidth and a few passes of the scaled model.
#![allow(clippy::print_stdout)]
use host_lab::{CpuDevice, Lm, predict::predict, scaled};
fn main() -> Result<(), host_lab::Error> {
    let mut err = std::io::stderr();
    let m = host_lab::machine::Machine::measure(5, &mut err)?;
    let (peak, bw) = (m.peak_flops(), m.bandwidth_bytes());
    println!("bw {:.2} GB/s  peak {:.1} GFLOP/s", bw / 1e9, peak / 1e9);
    let cfg = scaled::scaled_config(m.caches.last_level().unwrap())?;
    let t0 = std::time::Instant::now();
    let p = scaled::params(&cfg, 0)?;
    let models = scaled::Models::new(&p, cfg)?;
    println!("built in {:.2}s", t0.elapsed().as_secs_f64());
    let mut t = CpuDevice::new(&models.target, "t", 7, 1.0)?;
    let mut f = CpuDevice::new(&models.first_layer, "f", 7, 1.0)?;
    let mut q = CpuDevice::new(&models.int4, "q", 7, 1.0)?;
    for b in [1, 4, 16] {
        for n in [1, 2, 4, 8, 16, 32, 64] {
            let s = t.measure(b, n, 64)?;
            let pr = predict(&models.target, peak, bw, b, 64, n);
            println!(
                "target b{b} n{n}: {:.2} ms (range {:.2}-{:.2})  roof {:.2} add {:.2}",
                s.median() * 1e3,
                s.range().0 * 1e3,
                s.range().1 * 1e3,
                pr.roofline() * 1e3,
                pr.additive() * 1e3
            );
        }
        let s = f.measure(b, 1, 64)?;
        let pr = predict(&models.first_layer, peak, bw, b, 64, 1);
        println!(
            "first b{b}: {:.3} ms roof {:.3} add {:.3}",
            s.median() * 1e3,
            pr.roofline() * 1e3,
            pr.additive() * 1e3
        );
        let s = q.measure(b, 1, 64)?;
        let pr = predict(&models.int4, peak, bw, b, 64, 1);
        println!(
            "int4 b{b}: {:.3} ms roof {:.3} add {:.3}",
            s.median() * 1e3,
            pr.roofline() * 1e3,
            pr.additive() * 1e3
        );
    }
    let _ = models.int4.weight_bytes();
    Ok(())
}
