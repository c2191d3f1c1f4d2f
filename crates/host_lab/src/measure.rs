//! Measuring this machine's two roofline figures: the peak FLOP/s of the workspace's own
//! matrix kernel, and the sustained memory read bandwidth; and, beside them, how far the
//! kernel falls short of their `max` when its weights stream from memory
//! ([`streamed_slowdown`]: the overlap of compute and memory this machine reaches).
//!
//! Both are *achieved* figures — what this code reaches here, on all threads of rayon's
//! pool — not a vendor's peak. A roofline built on them therefore uses efficiencies of
//! 1.0 ([`crate::machine`]).
//!
//! - **Peak**: rayon's threads run [`transformer_lab::gemm::matmul`] (the packed,
//!   register-blocked kernel the model's products use) on `[200, 256] · [256, 256]`
//!   products, as many tasks as the pool steals, sized so that a 5-row block of the input
//!   and one 16-column panel of the weights (16 KiB) sit in L1 and the whole product in L2:
//!   compute-bound by construction.
//! - **Bandwidth**: every thread sums its share of a buffer of at least 8× the last-level
//!   cache (at least 256 MiB) with 64 independent accumulators (eight 8-float registers), so
//!   that the loop waits on memory, not on its own additions.
//!
//! Each is the median of `runs` timed repetitions; a line per repetition goes to the
//! `progress` writer (stderr in a lecture; never stdout from here). A [`Probe`] takes both
//! again, one short run of each and silently, as often as a sweep asks.

use std::io::Write;
use std::time::Instant;

use ndarray::Array2;
use rayon::prelude::*;
use transformer_lab::gemm::{PackedMatrix, matmul};

use crate::Error;

mod probe;
mod stream;
pub use probe::Probe;
pub use stream::{MIN_STREAM_BYTES, Streamed, read_bandwidth, stream_bytes, streamed_slowdown};

/// The repeated measurements of one figure: each run's value, and their median.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The value of each run, in the figure's unit, in the order measured.
    pub runs: Vec<f64>,
}

impl Sample {
    /// A sample of at least one value. Errors on an empty list or a value that is not finite.
    pub fn new(runs: Vec<f64>) -> Result<Self, Error> {
        if runs.is_empty() || runs.iter().any(|x| !x.is_finite()) {
            return Err(Error::Measure(format!(
                "a sample needs at least one finite value, got {runs:?}"
            )));
        }
        Ok(Sample { runs })
    }

    /// The median (the mean of the two middle values for an even count).
    pub fn median(&self) -> f64 {
        median(&self.runs)
    }

    /// The smallest and the largest run.
    pub fn range(&self) -> (f64, f64) {
        let lo = self.runs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = self.runs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    }
}

/// The median of `xs` (NaN for an empty slice).
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// Shape of the per-thread product of [`kernel_peak`]: `[M, K] · [K, N]`.
const PEAK_SHAPE: (usize, usize, usize) = (200, 256, 256);

/// Peak FLOP/s of the packed kernel on all threads of rayon's current pool: the median
/// of `runs` repetitions, each about `seconds_per_run` long. One line per run on
/// `progress`. Errors: `runs` 0, a duration that is not positive, the kernel unavailable
/// on this CPU ([`PackedMatrix::available`]), a failed write to `progress`.
pub fn kernel_peak(
    runs: usize,
    seconds_per_run: f64,
    progress: &mut dyn Write,
) -> Result<Sample, Error> {
    let (m, k, n) = PEAK_SHAPE;
    kernel_at((m, k, n), runs, seconds_per_run, progress)
}

/// The packed kernel's FLOP/s on `[rows, k] · [k, n]` products, measured as [`kernel_peak`]
/// measures it at `[200, 256] · [256, 256]`. Below the kernel's 5-row register block each
/// weight loaded feeds fewer multiply-adds (one or two rows run 4 or 2 panels at once to
/// keep 8 sums in flight, and then may wait on their loads), and with a model's inner
/// dimension (k = 768: a panel of 48 KiB) each row block streams its panel from L2 rather
/// than L1; so a decode-shaped product may compute slower or faster than the peak's shape:
/// measure it. Choose `k · n` to fit in L2.
/// Errors: a zero size, and those of [`kernel_peak`].
pub fn kernel_at(
    (rows, k, n): (usize, usize, usize),
    runs: usize,
    seconds_per_run: f64,
    progress: &mut dyn Write,
) -> Result<Sample, Error> {
    check_runs(runs, seconds_per_run)?;
    if rows == 0 || k == 0 || n == 0 {
        return Err(Error::Measure(format!(
            "a product of [{rows}, {k}] · [{k}, {n}]"
        )));
    }
    kernel_available("no peak to measure")?;
    let (a, w) = operands(rows, k, n);
    let packed = PackedMatrix::new(&[w.view()])?;
    let what = if (rows, k, n) == PEAK_SHAPE {
        "kernel peak".to_string()
    } else {
        format!("packed kernel at [{rows}, {k}] · [{k}, {n}]")
    };
    let product = |out: &mut Array2<f32>| {
        matmul(a.view(), &packed, out.view_mut()).expect("shapes agree");
    };
    let runs = Runs::new(runs, seconds_per_run, (rows, k, n));
    runs.flops(&what, (rows, n), product, progress)
}

/// The packed kernel's efficiency on `[rows, k] · [k, n]` products: its FLOP/s there over
/// its [`kernel_peak`], as `runs` ratios of one run at that shape and one at the peak's
/// shape taken one right after the other (each about `seconds_per_run`), so that a change
/// of load on a shared host falls on both sides of each ratio. Errors as [`kernel_at`].
pub fn kernel_efficiency(
    shape: (usize, usize, usize),
    runs: usize,
    seconds_per_run: f64,
    progress: &mut dyn Write,
) -> Result<Sample, Error> {
    check_runs(runs, seconds_per_run)?;
    let ratios = (0..runs)
        .map(|_| {
            let at = kernel_at(shape, 1, seconds_per_run, progress)?.median();
            Ok(at / kernel_peak(1, seconds_per_run, progress)?.median())
        })
        .collect::<Result<Vec<f64>, Error>>()?;
    Sample::new(ratios)
}

/// The operands a kernel measurement multiplies: `a` (`rows × k`) and `w` (`k × n`), fixed
/// values in ±0.1 (no zeros to skip, no denormals).
fn operands(rows: usize, k: usize, n: usize) -> (Array2<f32>, Array2<f32>) {
    let a = Array2::from_shape_fn((rows, k), |(i, j)| ((i * 5 + j) % 13) as f32 * 0.02 - 0.1);
    let w = Array2::from_shape_fn((k, n), |(i, j)| ((i * 7 + j * 3) % 17) as f32 * 0.01 - 0.08);
    (a, w)
}

/// How a kernel's FLOP/s is timed: `runs` runs of about `seconds_per_run`, each of
/// `reps · threads` calls of `flops_per_call` FLOPs on rayon's pool.
struct Runs {
    runs: usize,
    seconds_per_run: f64,
    threads: usize,
    flops_per_call: f64,
}

impl Runs {
    /// Runs of a `[rows, k] · [k, n]` product (`2 · rows · k · n` FLOPs a call) on all of
    /// rayon's threads.
    fn new(runs: usize, seconds_per_run: f64, (rows, k, n): (usize, usize, usize)) -> Self {
        Runs {
            runs,
            seconds_per_run,
            threads: rayon::current_num_threads(),
            flops_per_call: 2.0 * (rows * k * n) as f64,
        }
    }

    /// Calibrates how many calls per thread make one run last `seconds_per_run`, then times
    /// the runs; one line per run on `progress`, headed `what`. A call is `product` writing
    /// its own `out_shape` output. The calls are many small tasks, work-stolen: on a shared
    /// host a thread that loses its core does not hold the others up (a fixed share per
    /// thread would measure the slowest thread).
    fn flops(
        &self,
        what: &str,
        out_shape: (usize, usize),
        product: impl Fn(&mut Array2<f32>) + Sync,
        progress: &mut dyn Write,
    ) -> Result<Sample, Error> {
        let (runs, threads) = (self.runs, self.threads);
        let calls = |reps: usize| par_calls(reps * threads, out_shape, &product);
        let t0 = Instant::now();
        std::hint::black_box(calls(4));
        let per_call = t0.elapsed().as_secs_f64() / 4.0;
        let reps = ((self.seconds_per_run / per_call.max(1e-9)) as usize).max(1);
        let mut values = Vec::with_capacity(runs);
        for run in 0..runs {
            let t0 = Instant::now();
            std::hint::black_box(calls(reps));
            let secs = t0.elapsed().as_secs_f64();
            let flops = self.flops_per_call * (reps * threads) as f64 / secs;
            writeln!(
                progress,
                "{what}, run {}/{runs}: {:.1} GFLOP/s ({threads} threads)",
                run + 1,
                flops / 1e9
            )?;
            values.push(flops);
        }
        Sample::new(values)
    }
}

/// `calls` calls of `product` on rayon's pool as many small tasks, work-stolen (each
/// thread writing its own `out_shape` output); a value of the outputs, to keep them.
fn par_calls(
    calls: usize,
    out_shape: (usize, usize),
    product: &(impl Fn(&mut Array2<f32>) + Sync),
) -> f32 {
    (0..calls)
        .into_par_iter()
        .map_init(
            || Array2::<f32>::zeros(out_shape),
            |out, _| {
                product(out);
                out[[0, 0]]
            },
        )
        .sum()
}

/// Shape of the per-thread product of [`int4_peak`]: `[rows, K] · [K, N]` with INT4 weights
/// (`K · N / 2` bytes of codes: 256 KiB, in L2).
const INT4_SHAPE: (usize, usize) = (1024, 512);

/// FLOP/s of the INT4 kernel ([`crate::int4`]) on all threads of rayon's pool, each thread
/// multiplying `rows` rows by its own L2-resident INT4 matrix: the kernel's compute ceiling
/// at that many rows (at one row it is bound by unpacking the codes, not by the
/// multiply-adds; more rows share the unpacking). Median of `runs` runs of about
/// `seconds_per_run`; one line per run on `progress`. Errors: `rows` or `runs` 0, a
/// duration that is not positive, a failed write.
pub fn int4_peak(
    rows: usize,
    runs: usize,
    seconds_per_run: f64,
    progress: &mut dyn Write,
) -> Result<Sample, Error> {
    check_runs(runs, seconds_per_run)?;
    if rows == 0 {
        return Err(Error::Measure(
            "an INT4 product needs at least one row".into(),
        ));
    }
    let (k, n) = INT4_SHAPE;
    let (a, w) = operands(rows, k, n);
    let q = crate::int4::Int4Matrix::quantize(&[w.view()])?;
    let product = |out: &mut Array2<f32>| {
        crate::int4::matmul_single_thread(a.view(), &q, out.view_mut()).expect("shapes agree");
    };
    let runs = Runs::new(runs, seconds_per_run, (rows, k, n));
    runs.flops(
        &format!("INT4 kernel at {rows} rows"),
        (rows, n),
        product,
        progress,
    )
}

/// Parallel regions [`dispatch`] times per run.
const REGIONS_PER_RUN: usize = 1000;

/// Seconds one parallel region costs on rayon's current pool when its work is nothing:
/// the start and the join of `REGIONS_PER_RUN` (1000) regions of 2 pieces per thread, each
/// piece empty, per run; the median of `runs` runs, one line per run on `progress`. A
/// model's pass starts one per product ([`crate::Lm::parallel_regions`]): on a GPU this is
/// the launch overhead of a kernel. It depends on the calling thread: one outside the pool
/// sends each region as a job and waits for it (about 12 µs on a 2-core virtual machine),
/// one of the pool's threads (a lecture's main thread joins it: `lecture_kit::join_the_pool`)
/// starts it as its own work (about 0.1 µs). A lower bound either way: with no work in its
/// pieces no other thread is woken to steal one. Errors: `runs` 0, a failed write.
pub fn dispatch(runs: usize, progress: &mut dyn Write) -> Result<Sample, Error> {
    check_runs(runs, 1.0)?;
    let pieces = 2 * rayon::current_num_threads();
    let mut values = Vec::with_capacity(runs);
    for run in 0..runs {
        let t0 = Instant::now();
        for _ in 0..REGIONS_PER_RUN {
            (0..pieces).into_par_iter().for_each(|i| {
                std::hint::black_box(i);
            });
        }
        let each = t0.elapsed().as_secs_f64() / REGIONS_PER_RUN as f64;
        writeln!(
            progress,
            "parallel region, run {}/{runs}: {:.1} µs",
            run + 1,
            each * 1e6
        )?;
        values.push(each);
    }
    Sample::new(values)
}

/// An error saying what cannot be measured (`what`) when this CPU does not run the packed
/// kernel ([`PackedMatrix::available`]).
fn kernel_available(what: &str) -> Result<(), Error> {
    if PackedMatrix::available() {
        return Ok(());
    }
    Err(Error::Measure(format!(
        "this CPU has no fused multiply-add kernel (transformer_lab::gemm): {what}"
    )))
}

/// The most runs a measurement takes (each is timed, kept and printed).
pub const MAX_RUNS: usize = 10_000;

/// The longest run a measurement takes, seconds (a probe sits between the passes of a
/// sweep; a peak of minutes would measure a different host).
pub const MAX_RUN_SECONDS: f64 = 10.0;

/// `runs` in 1 ..= [`MAX_RUNS`], `seconds` a positive number up to [`MAX_RUN_SECONDS`].
fn check_runs(runs: usize, seconds: f64) -> Result<(), Error> {
    if runs == 0 || runs > MAX_RUNS {
        return Err(Error::Measure(format!(
            "a measurement takes from 1 to {MAX_RUNS} runs, got {runs}"
        )));
    }
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= MAX_RUN_SECONDS) {
        return Err(Error::Measure(format!(
            "a run lasts a positive number of seconds up to {MAX_RUN_SECONDS}, got {seconds}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_ranges_of_hand_values() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        let s = Sample::new(vec![5.0, 1.0, 3.0]).unwrap();
        assert_eq!((s.median(), s.range()), (3.0, (1.0, 5.0)));
        assert!(Sample::new(vec![]).is_err());
        assert!(Sample::new(vec![f64::NAN]).is_err());
    }

    #[test]
    fn bad_arguments_are_errors() {
        let mut sink = Vec::new();
        assert!(kernel_peak(0, 0.1, &mut sink).is_err());
        assert!(kernel_peak(1, 0.0, &mut sink).is_err());
        assert!(read_bandwidth(1000, 1, &mut sink).is_err());
        assert!(read_bandwidth(4 << 20, 0, &mut sink).is_err());
        // Past the caps: errors before anything is allocated or timed (they used to
        // overflow a run's call count, or abort on a vector of usize::MAX runs).
        for e in [
            kernel_peak(1, 1e12, &mut sink).unwrap_err(),
            kernel_peak(MAX_RUNS + 1, 0.1, &mut sink).unwrap_err(),
            read_bandwidth(4 << 20, usize::MAX, &mut sink).unwrap_err(),
            dispatch(usize::MAX, &mut sink).unwrap_err(),
            Probe::new(4 << 20, 11.0).err().unwrap(),
        ] {
            let e = e.to_string();
            assert!(e.contains("10000 runs") || e.contains("up to 10,"), "{e}");
        }
        let huge = streamed_slowdown(&[1], (64, 128), usize::MAX, 1, &mut sink).unwrap_err();
        assert!(huge.to_string().contains("bandwidth buffer"), "{huge}");
        assert!(sink.is_empty(), "nothing was measured");
    }

    #[test]
    fn measurements_report_one_progress_line_per_run() {
        let mut log = Vec::new();
        let bw = read_bandwidth(8 << 20, 2, &mut log).unwrap();
        let peak = kernel_peak(2, 0.01, &mut log).unwrap();
        let int4 = int4_peak(3, 1, 0.01, &mut log).unwrap();
        assert_eq!((bw.runs.len(), peak.runs.len(), int4.runs.len()), (2, 2, 1));
        assert!(bw.median() > 0.0 && peak.median() > 0.0 && int4.median() > 0.0);
        let log = String::from_utf8(log).unwrap();
        assert_eq!(log.lines().count(), 5);
        assert!(
            log.contains("kernel peak, run 2/2: ")
                && log.contains("INT4 kernel at 3 rows, run 1/1: "),
            "{log}"
        );
        assert!(int4_peak(0, 1, 0.01, &mut Vec::new()).is_err());
        let d = dispatch(2, &mut Vec::new()).unwrap();
        assert!(d.runs.len() == 2 && d.median() > 0.0, "{d:?}");
        assert!(dispatch(0, &mut Vec::new()).is_err());
        let eff = kernel_efficiency((3, 64, 32), 3, 0.01, &mut Vec::new()).unwrap();
        assert!(eff.runs.len() == 3 && eff.median() > 0.0);
        assert!(kernel_efficiency((0, 64, 32), 1, 0.01, &mut Vec::new()).is_err());
        let mut log = Vec::new();
        let s = streamed_slowdown(&[1, 4], (64, 128), 1 << 20, 2, &mut log).unwrap();
        assert_eq!(s.iter().map(|s| s.rows).collect::<Vec<_>>(), [1, 4]);
        assert!(
            s.iter()
                .all(|s| s.slowdown.runs.len() == 2 && s.slowdown.median() > 0.0)
        );
        assert!(
            s.iter()
                .all(|s| s.bandwidth.runs.len() == 2 && s.bandwidth.median() > 0.0)
        );
        let log = String::from_utf8(log).unwrap();
        assert_eq!(log.lines().count(), 4, "{log}");
        assert!(log.contains("packed kernel at 4 rows, weights streamed (1 MiB), run 2/2: "));
        for bad in [&[][..], &[0, 1]] {
            assert!(streamed_slowdown(bad, (64, 128), 1 << 20, 1, &mut Vec::new()).is_err());
        }
        assert!(streamed_slowdown(&[1], (64, 0), 1 << 20, 1, &mut Vec::new()).is_err());
        assert!(streamed_slowdown(&[1], (64, 128), 1000, 1, &mut Vec::new()).is_err());
        assert!(streamed_slowdown(&[1], (64, 128), 1 << 20, 0, &mut Vec::new()).is_err());
        let at = kernel_at((3, 64, 32), 2, 0.01, &mut Vec::new()).unwrap();
        assert!(at.runs.len() == 2 && at.median() > 0.0);
        assert!(kernel_at((0, 64, 32), 1, 0.01, &mut Vec::new()).is_err());
    }
}
