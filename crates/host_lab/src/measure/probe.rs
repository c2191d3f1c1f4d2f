//! The machine's two roofline figures measured again and again, one short run of each,
//! between the passes of a sweep (re-exported by [`crate::measure`]).

use std::time::Instant;

use ndarray::Array2;
use transformer_lab::gemm::{PackedMatrix, matmul};

use super::stream::StreamBuffer;
use super::{PEAK_SHAPE, check_runs, kernel_available, operands, par_calls};
use crate::Error;

/// One run of [`super::kernel_peak`] and one of [`super::read_bandwidth`], as often as a
/// caller asks: right before and after each timed pass of a sweep, say, so that each pass
/// is predicted from the machine as it was while that pass ran. On a shared host both
/// figures drift by tens of percent within seconds (on the 2-core development machine, two
/// sets of 60 runs of 30 ms in a row: the middle 80% of the peak's runs spanned 0.71–1.24
/// of its median); the speed of a compute-bound pass follows the peak measured right beside
/// it (correlations of 0.66–0.80 in three sets of 40 passes of 16 and 32 tokens there).
///
/// Its buffer is allocated and written once, and the peak's product calibrated once (to
/// about `seconds` a run), so a probe costs one read of the buffer and one run of the
/// product (its only allocations are the product's small outputs).
pub struct Probe {
    buffer: StreamBuffer,
    a: Array2<f32>,
    w: PackedMatrix,
    /// Calls of the peak's product a run (all threads together).
    calls: usize,
}

impl Probe {
    /// A probe reading about `bytes` (as [`super::read_bandwidth`] does: give at least 8×
    /// the last-level cache) and running the peak's product for about `seconds` each time
    /// (whole rounds of the pool's threads, at least one). Errors: fewer than 1 MiB, a
    /// buffer that cannot be allocated, a duration that is not positive or is over
    /// [`MAX_RUN_SECONDS`](super::MAX_RUN_SECONDS), the kernel unavailable on this CPU.
    pub fn new(bytes: usize, seconds: f64) -> Result<Probe, Error> {
        check_runs(1, seconds)?;
        kernel_available("no peak to measure")?;
        let (m, k, n) = PEAK_SHAPE;
        let (a, w) = operands(m, k, n);
        let w = PackedMatrix::new(&[w.view()])?;
        let buffer = StreamBuffer::try_new(bytes)?;
        buffer.read(); // untimed: the first read after the writes
        let threads = rayon::current_num_threads().max(1);
        let mut probe = Probe {
            buffer,
            a,
            w,
            calls: 4 * threads,
        };
        probe.product_seconds(); // untimed: wakes the pool, faults in the outputs
        let per_call = probe.product_seconds() / probe.calls as f64;
        // Whole rounds of the pool's threads, as `kernel_peak` runs them.
        let rounds = (seconds / (per_call.max(1e-9) * threads as f64)) as usize;
        probe.calls = rounds.max(1) * threads;
        Ok(probe)
    }

    /// FLOPs of one run of the peak's product: `2 · M · K · N` a call, `calls` calls.
    pub fn flops_per_run(&self) -> f64 {
        let (m, k, n) = PEAK_SHAPE;
        2.0 * (m * k * n) as f64 * self.calls as f64
    }

    /// `(peak FLOP/s, read bandwidth bytes/s)` now: one read of the buffer, then one run of
    /// the peak's product.
    pub fn take(&self) -> (f64, f64) {
        let bandwidth = self.buffer.bytes() as f64 / self.buffer.read();
        (self.flops_per_run() / self.product_seconds(), bandwidth)
    }

    fn product_seconds(&self) -> f64 {
        let product = |out: &mut Array2<f32>| {
            matmul(self.a.view(), &self.w, out.view_mut()).expect("shapes agree");
        };
        let t0 = Instant::now();
        std::hint::black_box(par_calls(
            self.calls,
            (PEAK_SHAPE.0, PEAK_SHAPE.2),
            &product,
        ));
        t0.elapsed().as_secs_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_counts_whole_rounds_of_its_product_and_refuses_bad_sizes() {
        let probe = Probe::new(8 << 20, 0.01).unwrap();
        // Whole rounds of the pool, and 2 · 200 · 256 · 256 FLOPs a call.
        let threads = rayon::current_num_threads();
        assert!(probe.calls >= threads && probe.calls.is_multiple_of(threads));
        assert_eq!(probe.flops_per_run(), 26_214_400.0 * probe.calls as f64);
        let takes: Vec<(f64, f64)> = (0..3).map(|_| probe.take()).collect();
        assert!(
            takes
                .iter()
                .all(|&(p, b)| p.is_finite() && p > 0.0 && b.is_finite() && b > 0.0),
            "{takes:?}"
        );
        assert!(Probe::new(1000, 0.01).is_err());
        assert!(
            Probe::new(usize::MAX, 0.01).is_err(),
            "a buffer that cannot exist"
        );
        assert!(Probe::new(8 << 20, 0.0).is_err());
        assert!(Probe::new(8 << 20, f64::NAN).is_err());
        assert!(Probe::new(8 << 20, 1e9).is_err());
    }
}
