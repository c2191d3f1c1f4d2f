//! Sweeps: the inputs a demo computes a table or a figure at, and computing it at each.
//!
//! A demo asks the same question at many inputs — a pass at n = 1, 2, 4 … 4096 tokens, a
//! round at every batch that fits. [`log_sweep`] writes such a list once (so many per
//! doubling on a log axis), [`cut_at`] stops it where the inputs stop making sense (the
//! largest batch that fits), and [`try_map`] computes at each input, stopping at the first
//! error, as a Python loop that raises would.

use crate::error::Error;

/// The integers from 1 to `max` on a log scale, `per_doubling` of them per doubling:
/// `round(2^(k / per_doubling))` for k = 0, 1, … while it is at most `max`, without
/// repeats (1, 2, 3, 4, 6, 8, 11, 16 … for two per doubling).
///
/// Errors: `per_doubling` 0, or over 64 (more than a figure can show).
///
/// ```
/// use lecture_kit::log_sweep;
/// assert_eq!(log_sweep(16, 1)?, [1, 2, 4, 8, 16]);
/// assert_eq!(log_sweep(20, 2)?, [1, 2, 3, 4, 6, 8, 11, 16]);
/// # Ok::<(), lecture_kit::Error>(())
/// ```
pub fn log_sweep(max: u64, per_doubling: u32) -> Result<Vec<u64>, Error> {
    if !(1..=64).contains(&per_doubling) {
        return Err(Error::Library(
            format!("a log sweep takes 1 to 64 values per doubling, got {per_doubling}").into(),
        ));
    }
    let at = |k: u32| 2f64.powf(k as f64 / per_doubling as f64).round();
    // Compared as floats, so that a `max` near `u64::MAX` still ends the sweep.
    let xs = (0..).map(at).take_while(|&x| x <= max as f64);
    let mut xs: Vec<u64> = xs.map(|x| x as u64).collect();
    xs.dedup();
    Ok(xs)
}

/// The values of `xs` (increasing) up to `limit`, ending at `limit` itself when it cuts the
/// list short: a figure's curve then stops exactly where its input stops fitting. Nothing
/// when `limit` is 0; all of `xs` when `limit` is at least their last.
///
/// ```
/// use lecture_kit::cut_at;
/// let xs = [1, 2, 4, 8, 16];
/// assert_eq!(cut_at(&xs, 5), [1, 2, 4, 5]);
/// assert_eq!(cut_at(&xs, 8), [1, 2, 4, 8]);
/// assert_eq!(cut_at(&xs, 100), xs);
/// assert!(cut_at(&xs, 0).is_empty());
/// ```
pub fn cut_at(xs: &[u64], limit: u64) -> Vec<u64> {
    let mut cut: Vec<u64> = xs.iter().copied().filter(|&x| x <= limit).collect();
    let inside = xs.last().is_some_and(|&last| limit < last);
    if inside && limit > 0 && cut.last() != Some(&limit) {
        cut.push(limit);
    }
    cut
}

/// `f` at each of `xs`, in order, or the first error `f` returns (converted to the kit's
/// [`Error`]): `try_map(ctxs, |c| max_batch(c))?` is Python's `[max_batch(c) for c in ctxs]`.
///
/// ```
/// use lecture_kit::try_map;
/// let halves = |n: u32| if n % 2 == 0 { Ok(n / 2) } else { Err(std::fmt::Error) };
/// assert_eq!(try_map([2, 4, 8], halves)?, [1, 2, 4]);
/// assert!(try_map([2, 3, 8], halves).is_err());
/// # Ok::<(), lecture_kit::Error>(())
/// ```
pub fn try_map<X, T, E: Into<Error>>(
    xs: impl IntoIterator<Item = X>,
    f: impl FnMut(X) -> Result<T, E>,
) -> Result<Vec<T>, Error> {
    xs.into_iter()
        .map(f)
        .map(|r| r.map_err(Into::into))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_per_doubling_to_8192_are_the_rounded_powers_of_the_square_root_of_two() {
        let xs = log_sweep(8192, 2).unwrap();
        // Written out by hand: round(√2^k), k = 0 … 26, the repeated 1 once.
        let want = [
            1, 2, 3, 4, 6, 8, 11, 16, 23, 32, 45, 64, 91, 128, 181, 256, 362, 512, 724, 1024, 1448,
            2048, 2896, 4096, 5793, 8192,
        ];
        assert_eq!(xs, want);
        assert_eq!(
            log_sweep(4096, 1).unwrap(),
            (0..13).map(|k| 1 << k).collect::<Vec<u64>>()
        );
        assert_eq!(log_sweep(0, 3).unwrap(), Vec::<u64>::new());
        for bad in [0, 65] {
            let err = log_sweep(8, bad).unwrap_err().to_string();
            assert!(err.contains("per doubling"), "{err}");
        }
        assert_eq!(
            log_sweep(u64::MAX, 1).unwrap().len(),
            65,
            "2^0 … 2^64 (saturated)"
        );
    }

    #[test]
    fn a_cut_keeps_what_is_below_the_limit_and_ends_on_it() {
        let xs = log_sweep(8192, 2).unwrap();
        for limit in [0, 1, 2, 5, 100, 181, 952, 8191, 8192, 8193, 20_000] {
            let cut = cut_at(&xs, limit);
            assert!(cut.iter().all(|&x| x <= limit), "{limit}: {cut:?}");
            assert!(cut.windows(2).all(|w| w[0] < w[1]), "{limit}: increasing");
            // Every sample below the limit is kept; the last point is the limit itself
            // when the limit falls inside the sweep.
            let below = xs.iter().filter(|&&x| x <= limit).count();
            assert_eq!(cut[..below], xs[..below], "{limit}");
            match limit {
                0 => assert!(cut.is_empty()),
                l if l < 8192 => assert_eq!(cut.last(), Some(&l)),
                _ => assert_eq!(cut, xs),
            }
        }
        assert!(cut_at(&[], 5).is_empty());
    }

    #[test]
    fn try_map_stops_at_the_first_error_and_keeps_its_message() {
        let calls = std::cell::Cell::new(0);
        let parse = |s: &str| {
            calls.set(calls.get() + 1);
            s.parse::<u64>()
        };
        assert_eq!(try_map(["1", "22", "333"], parse).unwrap(), [1, 22, 333]);
        calls.set(0);
        let err = try_map(["1", "x", "3"], parse).unwrap_err();
        assert_eq!(calls.get(), 2, "the third is never computed");
        assert_eq!(err.to_string(), "x".parse::<u64>().unwrap_err().to_string());
    }
}
