//! The measurements that stream memory: the sustained read bandwidth, and the packed kernel
//! with its weights streamed from memory against a read of as many bytes (re-exported by
//! [`crate::measure`]).

use std::io::Write;
use std::time::Instant;

use ndarray::Array2;
use rayon::prelude::*;
use transformer_lab::gemm::{PackedMatrix, matmul_on_pool};

use super::{Sample, check_runs, kernel_available, operands};
use crate::Error;

/// The smallest buffer [`read_bandwidth`] streams, bytes.
pub const MIN_STREAM_BYTES: usize = 256 << 20;

/// The buffer [`read_bandwidth`] streams for a last-level cache of `llc` bytes: 8× it,
/// at least [`MIN_STREAM_BYTES`] (512 MiB when the cache size is unknown).
pub fn stream_bytes(llc: Option<u64>) -> usize {
    match llc {
        // Saturating: an impossible cache asks for an impossible buffer, which
        // `read_bandwidth` then refuses to allocate, rather than wrapping to a small one.
        Some(c) => usize::try_from(c.saturating_mul(8))
            .unwrap_or(usize::MAX)
            .max(MIN_STREAM_BYTES),
        None => 2 * MIN_STREAM_BYTES,
    }
}

/// Sustained read bandwidth, bytes/s, on all threads of rayon's current pool: the median
/// of `runs` full passes over a buffer of `bytes` (rounded down to whole blocks), after one
/// untimed pass. One line per run on `progress`. Errors: `runs` 0, fewer than 1 MiB, more
/// than can be allocated, a failed write.
pub fn read_bandwidth(
    bytes: usize,
    runs: usize,
    progress: &mut dyn Write,
) -> Result<Sample, Error> {
    check_runs(runs, 1.0)?;
    let buf = StreamBuffer::try_new(bytes)?;
    buf.read();
    let mut values = Vec::with_capacity(runs);
    for run in 0..runs {
        let bw = buf.bytes() as f64 / buf.read();
        writeln!(
            progress,
            "read bandwidth, run {}/{runs}: {:.1} GB/s over {} MiB",
            run + 1,
            bw / 1e9,
            buf.bytes() >> 20
        )?;
        values.push(bw);
    }
    Sample::new(values)
}

/// A buffer the bandwidth loop reads: whole blocks of [`BLOCK`] floats per thread of
/// rayon's pool, each thread's share first written by the thread that will read it.
pub(super) struct StreamBuffer {
    floats: Vec<f32>,
    per_thread: usize,
}

impl StreamBuffer {
    /// About `bytes` (rounded down to whole blocks per thread). Errors: fewer than 1 MiB, or
    /// more than can be allocated.
    pub(super) fn try_new(bytes: usize) -> Result<Self, Error> {
        if bytes < 1 << 20 {
            return Err(Error::Measure(format!(
                "a bandwidth buffer of {bytes} bytes would sit in cache; give at least 1 MiB"
            )));
        }
        let threads = rayon::current_num_threads().max(1);
        let per_thread = (bytes / 4 / threads / BLOCK * BLOCK).max(BLOCK);
        let mut floats = Vec::new();
        floats
            .try_reserve_exact(per_thread * threads)
            .map_err(|e| Error::Measure(format!("a bandwidth buffer of {bytes} bytes: {e}")))?;
        floats.resize(per_thread * threads, 0.0f32);
        floats
            .par_chunks_mut(per_thread)
            .enumerate()
            .for_each(|(t, c)| {
                c.iter_mut()
                    .enumerate()
                    .for_each(|(i, x)| *x = ((i + t) % 7) as f32)
            });
        Ok(StreamBuffer { floats, per_thread })
    }

    /// Its size, bytes.
    pub(super) fn bytes(&self) -> usize {
        4 * self.floats.len()
    }

    /// Seconds one read of the whole buffer takes, every thread summing its share with
    /// 64 running sums.
    pub(super) fn read(&self) -> f64 {
        let t0 = Instant::now();
        let parts: Vec<f32> = self
            .floats
            .par_chunks(self.per_thread)
            .map(sum_stream)
            .collect();
        std::hint::black_box(parts);
        t0.elapsed().as_secs_f64()
    }
}

/// [`streamed_slowdown`] at one row count.
#[derive(Debug, Clone, PartialEq)]
pub struct Streamed {
    /// Rows multiplied.
    pub rows: usize,
    /// The kernel's time over the read's, per run.
    pub slowdown: Sample,
    /// The read bandwidth of each run's paired read, bytes/s.
    pub bandwidth: Sample,
}

/// How much longer the packed kernel takes when its weights stream from memory than reading
/// them takes, with the products run as a model's pass runs them: for each row count `r`
/// of `rows`, `runs` ratios of the time to multiply `r` rows by a set of `[k, n]` packed
/// matrices of at least `bytes` in all, one product after another on a thread of rayon's
/// pool, each cut into pieces over the pool ([`matmul_on_pool`]; every weight read once a
/// run), over the time the bandwidth loop of [`read_bandwidth`] takes to read as many
/// bytes from a buffer of its own. Each ratio comes from one run of each, taken one right
/// after the other, so that a change of load on a shared host falls on both sides; each
/// run's read bandwidth is returned with it. For the weights to stream from memory rather
/// than from cache, `bytes` must be several times the last-level cache (demo 6 passes the
/// scaled model's weight bytes, ≥ 4× it).
///
/// Full overlap is a ratio of `max(1, compute / memory)`: below the ridge the multiply-adds
/// hide under the reads, past it the reads under the multiply-adds. The roofline's `max`
/// assumes it; [`crate::predict::overlap_from_slowdown`] turns a ratio into the overlap
/// the planner's formula takes. One line per run and row count on `progress`. Errors: no
/// row counts, a row count or a size of 0, fewer than 1 MiB, `runs` 0, the kernel
/// unavailable on this CPU, a failed write.
pub fn streamed_slowdown(
    rows: &[usize],
    (k, n): (usize, usize),
    bytes: usize,
    runs: usize,
    progress: &mut dyn Write,
) -> Result<Vec<Streamed>, Error> {
    check_runs(runs, 1.0)?;
    if rows.is_empty() || rows.contains(&0) || k == 0 || n == 0 || bytes < 1 << 20 {
        return Err(Error::Measure(format!(
            "streamed products need row counts of at least 1, a matrix shape and at least 1 MiB; \
             got rows {rows:?}, [{k}, {n}], {bytes} bytes"
        )));
    }
    kernel_available("nothing to stream")?;
    let matrix_bytes = 4usize.saturating_mul(k).saturating_mul(n);
    let count = bytes.div_ceil(matrix_bytes);
    // The read buffer first: a size that cannot be allocated is an error, not an abort.
    let buf = StreamBuffer::try_new(count.saturating_mul(matrix_bytes))?;
    let (_, w) = operands(1, k, n);
    let matrices = vec![PackedMatrix::new(&[w.view()])?; count];
    let weight_bytes = (matrix_bytes * count) as f64;
    // Every input with its output, written once before any timing (no page faults timed).
    let mut pairs: Vec<(Array2<f32>, Array2<f32>)> = rows
        .iter()
        .map(|&r| (operands(r, k, n).0, Array2::from_elem((r, n), 1.0)))
        .collect();
    // On a thread of the pool, as a pass runs (from outside, each product would be sent to
    // the pool as a job and waited for).
    let product = |(a, out): &mut (Array2<f32>, Array2<f32>)| -> f64 {
        rayon::scope(|_| {
            let t0 = Instant::now();
            for w in &matrices {
                matmul_on_pool(a.view(), w, out.view_mut()).expect("shapes agree");
                std::hint::black_box(out[[0, 0]]);
            }
            t0.elapsed().as_secs_f64()
        })
    };
    buf.read();
    product(&mut pairs[0]);
    let mut ratios = vec![(Vec::with_capacity(runs), Vec::with_capacity(runs)); rows.len()];
    for run in 0..runs {
        for ((pair, &r), (ratios, bws)) in pairs.iter_mut().zip(rows).zip(&mut ratios) {
            let bandwidth = buf.bytes() as f64 / buf.read();
            let ratio = product(pair) / (weight_bytes / bandwidth);
            writeln!(
                progress,
                "packed kernel at {r} rows, weights streamed ({} MiB), run {}/{runs}: {ratio:.2}× the read",
                weight_bytes as usize >> 20,
                run + 1,
            )?;
            ratios.push(ratio);
            bws.push(bandwidth);
        }
    }
    rows.iter()
        .zip(ratios)
        .map(|(&rows, (ratios, bws))| {
            Ok(Streamed {
                rows,
                slowdown: Sample::new(ratios)?,
                bandwidth: Sample::new(bws)?,
            })
        })
        .collect()
}

/// Floats per iteration of the streaming sum: 8 registers of 8 floats.
const BLOCK: usize = 64;

transformer_lab::cpu::with_avx2! {
    /// The sum of `xs` (a whole number of [`BLOCK`]s) in 64 running sums, with AVX2 where
    /// the CPU has it.
    fn sum_stream(xs: &[f32]) -> f32 => sum_stream_body
}

#[inline(always)]
fn sum_stream_body(xs: &[f32]) -> f32 {
    let mut acc = [0.0f32; BLOCK];
    for block in xs.chunks_exact(BLOCK) {
        for (a, &x) in acc.iter_mut().zip(block) {
            *a += x;
        }
    }
    acc.iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_streaming_sum_is_the_sum() {
        let xs: Vec<f32> = (0..BLOCK * 10).map(|i| (i % 5) as f32).collect();
        let plain: f32 = xs.iter().sum();
        assert_eq!(sum_stream(&xs), plain); // small integers: exact in any order
    }

    #[test]
    fn buffers_are_8x_the_last_level_cache_at_least_256_mib() {
        assert_eq!(stream_bytes(Some(32 << 20)), 256 << 20);
        assert_eq!(stream_bytes(Some(96 << 20)), 768 << 20);
        assert_eq!(stream_bytes(Some(1 << 20)), 256 << 20);
        assert_eq!(stream_bytes(None), 512 << 20);
    }
}
