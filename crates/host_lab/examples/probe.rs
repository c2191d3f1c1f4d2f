//! Measures this machine's peak and bandwidth and prints them.
#![allow(clippy::print_stdout)]
fn main() -> Result<(), host_lab::Error> {
    let caches = host_lab::host::cache_sizes();
    println!("{caches:?}");
    let mut err = std::io::stderr();
    let bw = host_lab::measure::read_bandwidth(
        host_lab::measure::stream_bytes(caches.last_level()),
        7,
        &mut err,
    )?;
    let peak = host_lab::measure::kernel_peak(7, 0.1, &mut err)?;
    println!(
        "bw {:.2} GB/s {:?}  peak {:.1} GFLOP/s {:?}",
        bw.median() / 1e9,
        bw.range(),
        peak.median() / 1e9,
        peak.range()
    );
    Ok(())
}
