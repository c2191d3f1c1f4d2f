//! Runs demo 6's measurements and prints the figures (`cargo run --release -p host_lab
//! --example figures`). The lecture words them; this prints them raw.
#![allow(clippy::print_stdout)]
fn main() -> Result<(), host_lab::Error> {
    let f = host_lab::figures::run(&host_lab::figures::Plan::demo(), &mut std::io::stderr())?;
    let m = &f.machine;
    println!(
        "peak {:.1} GFLOP/s {:?}",
        m.machine.peak_flops() / 1e9,
        m.machine.peak.range()
    );
    println!(
        "bandwidth {:.2} GB/s {:?}",
        m.machine.bandwidth_bytes() / 1e9,
        m.machine.bandwidth.range()
    );
    println!(
        "ridge {:.2} FLOP/B, critical f32 {:.1}, int4 {:.1} tokens",
        m.ridge_point, m.critical_tokens_f32, m.critical_tokens_int4
    );
    println!(
        "model {:?}\n target {} B, first {} B, int4 {} B, llc {} B ({:.2}x)",
        f.model.cfg,
        f.model.target_bytes,
        f.model.first_layer_bytes,
        f.model.int4_bytes,
        f.model.llc_bytes,
        f.model.target_bytes as f64 / f.model.llc_bytes as f64
    );
    for p in &f.sweep {
        let t = p.measured.median();
        println!(
            "b{:>2} n{:>3}: {:>9.2} ms  roof {:>9.2} ({:+.0}%)  add {:>9.2} ({:+.0}%)  runs {}",
            p.batch,
            p.n_new,
            t * 1e3,
            p.predicted.roofline() * 1e3,
            (p.predicted.roofline() / t - 1.0) * 100.0,
            p.predicted.additive() * 1e3,
            (p.predicted.additive() / t - 1.0) * 100.0,
            p.measured.runs.len()
        );
    }
    for k in &f.knees {
        println!("{k:?}");
    }
    for d in &f.drafts {
        println!(
            "{:?}: c measured {:.3} roofline {:.3} additive {:.3} ({} B)",
            d.draft, d.measured, d.roofline, d.additive, d.weight_bytes
        );
    }
    for s in &f.spec {
        println!(
            "batch {} {:?} γ {}: τ {:.2} (α {:.3}); {:.1} → {:.1} tokens/s: measured {:.2}×, predicted roofline {:.2}× additive {:.2}×, with measured passes {:.2}×; best round roofline {:?} additive {:?}; lossless {}",
            s.batch,
            s.draft,
            s.gamma,
            s.tau,
            s.alpha,
            s.plain_tokens_per_s,
            s.spec_tokens_per_s,
            s.measured_speedup,
            s.predicted_roofline,
            s.predicted_additive,
            s.accounted_measured,
            s.best_round_roofline,
            s.best_round_additive,
            s.lossless
        );
    }
    for (r, s) in &f.machine.int4_peaks {
        println!(
            "INT4 kernel at {r} rows: {:.1} GFLOP/s {:?}",
            s.median() / 1e9,
            s.range()
        );
    }
    println!(
        "total {:.1} s; load {:?} → {:?}; drift bandwidth {:.2}, peak {:.2}",
        f.seconds, f.load.0, f.load.1, f.drift.0, f.drift.1
    );
    Ok(())
}
