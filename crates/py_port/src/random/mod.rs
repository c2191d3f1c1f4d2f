//! NumPy's `numpy.random.default_rng(seed)`, bit for bit: PCG64 seeded through
//! [`SeedSequence`], and the `Generator` methods lecture scripts call, each with NumPy's own
//! algorithm (ziggurat normals and exponentials, Lemire bounded integers, Floyd sampling).
//!
//! Checked against NumPy 2.4.6 (`numpy/random/_generator.pyx`, `bit_generator.pyx`,
//! `_bounded_integers.pyx.in`, `src/distributions/distributions.c`, `src/pcg64/pcg64.h`):
//! `tools/numpy_rng/check.sh` compares every method over 11 seeds × 10,000 draws with NumPy
//! itself, and `tests/numpy_golden.rs` with a small file NumPy wrote.
//!
//! # The bit generator
//!
//! [`rand_pcg::Pcg64`] is NumPy's PCG64 exactly: the same 128-bit LCG multiplier, the same
//! XSL-RR output, and `Pcg64::new(state, stream)` seeds as NumPy's `pcg64_set_seed(state, inc)`
//! does (`inc = 2·stream + 1`, one LCG step, add `state`, another step). NumPy's bit generator
//! adds one thing that `rand_pcg` lacks, and [`Generator`] keeps it: `next_uint32` hands out
//! the low half of a fresh 64-bit output and buffers the high half for the next 32-bit request,
//! and that buffer survives 64-bit draws in between (which neither use nor clear it).

mod choice;
mod distributions;
mod seed_sequence;
mod ziggurat;

pub use choice::choice_p;
pub use distributions::StandardNormal;
pub use seed_sequence::SeedSequence;

use crate::Error;
use rand::RngCore;
use rand_pcg::Pcg64;
use std::collections::HashSet;
use ziggurat::{
    FE_DOUBLE, FI_DOUBLE, KE_DOUBLE, KI_DOUBLE, WE_DOUBLE, WI_DOUBLE, ZIGGURAT_EXP_R,
    ZIGGURAT_NOR_INV_R, ZIGGURAT_NOR_R,
};

/// `numpy.random.default_rng(seed)` for a non-negative integer seed below 2^64.
///
/// ```
/// // NumPy 2.4.6: np.random.default_rng(42).random() == 0.7739560485559633
/// let mut rng = py_port::random::default_rng(42);
/// assert_eq!(rng.random(), 0.7739560485559633);
/// ```
///
/// Larger seeds (Python integers of any size) go through [`SeedSequence::new`] or
/// [`SeedSequence::from_words`] and [`Generator::from_seed_sequence`]. There is no
/// `default_rng()` without a seed: a port always passes the script's seed.
pub fn default_rng(seed: u64) -> Generator {
    Generator::from_seed_sequence(&SeedSequence::new(u128::from(seed)))
}

/// NumPy's `Generator` over a `PCG64` bit generator.
///
/// Methods carry NumPy's names; a method whose NumPy form takes `size=n` has a `_n` twin that
/// returns a `Vec` of `n` draws (the same values as `n` single calls, as in NumPy). It also
/// implements [`rand::RngCore`] (`next_u32` is NumPy's buffered `next_uint32`, `next_u64` its
/// `next_uint64`), so it can be passed to code taking `&mut impl Rng`; `rand`'s own
/// distributions on it do not reproduce NumPy's.
#[derive(Debug, Clone)]
pub struct Generator {
    pcg: Pcg64,
    /// NumPy's `pcg64_state.has_uint32` / `uinteger`: the buffered high half.
    buffered_u32: Option<u32>,
}

/// The largest f64 below 2^63 is 2^63 - 1024; NumPy clips at this "smallest double larger
/// than INT64_MAX".
const INT64_MAX_AS_F64: f64 = 9.223_372_036_854_776e18;

/// NumPy's switch from search to inversion in `random_geometric`, written there as
/// `0.333333333333333333333333`: the same f64 as `1.0 / 3.0`.
const GEOMETRIC_SEARCH_MIN_P: f64 = 0.333_333_333_333_333_3;

/// NumPy's default tolerance for `sum(p) == 1` in `choice`: `sqrt(finfo(float64).eps)`.
const P_SUM_ATOL: f64 = 1.490_116_119_384_765_6e-8;

impl Generator {
    /// `Generator(PCG64(seed_seq))`: the bit generator seeded from `generate_state(4, uint64)`,
    /// the first two words the 128-bit state (high word first), the last two the increment.
    pub fn from_seed_sequence(seed: &SeedSequence) -> Self {
        let w = seed.generate_state_u64(4);
        let state = (u128::from(w[0]) << 64) | u128::from(w[1]);
        let inc = (u128::from(w[2]) << 64) | u128::from(w[3]);
        Generator {
            pcg: Pcg64::new(state, inc),
            buffered_u32: None,
        }
    }

    /// `bit_generator.random_raw()`: the next raw 64-bit output of PCG64 (`next_uint64`).
    /// Does not touch the 32-bit buffer.
    pub fn random_raw(&mut self) -> u64 {
        self.pcg.next_u64()
    }

    /// NumPy's `pcg64_next32`: the buffered high half if there is one, else the low half of a
    /// fresh 64-bit output, buffering its high half.
    fn next_uint32(&mut self) -> u32 {
        if let Some(high) = self.buffered_u32.take() {
            return high;
        }
        let next = self.pcg.next_u64();
        self.buffered_u32 = Some((next >> 32) as u32);
        next as u32
    }

    /// NumPy's `next_double`.
    fn next_double(&mut self) -> f64 {
        next_double(&mut self.pcg)
    }

    /// `random()`: a float in [0, 1), `(next_uint64 >> 11) · 2⁻⁵³` (NumPy's
    /// `random_standard_uniform`, dtype float64).
    pub fn random(&mut self) -> f64 {
        self.next_double()
    }

    /// `random(size=n)`. Errs when `n` is past [`MAX_SIZE`].
    pub fn random_n(&mut self, n: usize) -> Result<Vec<f64>, Error> {
        check_size("Generator.random", n)?;
        Ok((0..n).map(|_| self.next_double()).collect())
    }

    /// `random(out=out)`: fills `out` in order.
    pub fn fill_random(&mut self, out: &mut [f64]) {
        for x in out {
            *x = self.next_double();
        }
    }

    /// `integers(low, high)`: an `i64` in `[low, high)` (NumPy's default `dtype=np.int64`,
    /// `endpoint=False`). Errs when `high <= low`.
    ///
    /// NumPy's algorithm (`_rand_int64` → `random_bounded_uint64_fill`, Lemire's method): with
    /// `rng = high - 1 - low`, a range that fits in 32 bits (`rng < 2^32 - 1`) draws buffered
    /// 32-bit words (`buffered_bounded_lemire_uint32`), `rng == 2^32 - 1` takes one 32-bit
    /// word as is, and wider ranges draw 64-bit words (`bounded_lemire_uint64`).
    ///
    /// ```
    /// let mut rng = py_port::random::default_rng(42);
    /// // NumPy 2.4.6: np.random.default_rng(42).integers(0, 10, size=5) == [0, 7, 6, 4, 4]
    /// assert_eq!(rng.integers_n(0, 10, 5).unwrap(), [0, 7, 6, 4, 4]);
    /// assert!(rng.integers(3, 3).is_err());
    /// ```
    pub fn integers(&mut self, low: i64, high: i64) -> Result<i64, Error> {
        if high <= low {
            return Err(Error::invalid(
                "Generator.integers",
                format!("low >= high ({low} >= {high})"),
            ));
        }
        Ok(self.bounded_i64(low, high - 1))
    }

    /// `integers(low, high, size=n)`. Errs as [`Generator::integers`], and when `n` is past
    /// [`MAX_SIZE`].
    ///
    /// ```
    /// let mut rng = py_port::random::default_rng(0);
    /// assert!(rng.integers_n(0, 10, usize::MAX).is_err()); // once a capacity overflow
    /// ```
    pub fn integers_n(&mut self, low: i64, high: i64, n: usize) -> Result<Vec<i64>, Error> {
        if high <= low {
            return Err(Error::invalid(
                "Generator.integers",
                format!("low >= high ({low} >= {high})"),
            ));
        }
        check_size("Generator.integers", n)?;
        Ok((0..n).map(|_| self.bounded_i64(low, high - 1)).collect())
    }

    /// `integers(low, high, endpoint=True)`: an `i64` in `[low, high]`. Errs when `high < low`.
    pub fn integers_inclusive(&mut self, low: i64, high: i64) -> Result<i64, Error> {
        if high < low {
            return Err(Error::invalid(
                "Generator.integers",
                format!("low > high ({low} > {high})"),
            ));
        }
        Ok(self.bounded_i64(low, high))
    }

    /// A draw in the closed range `[low, high]`, `low <= high`.
    fn bounded_i64(&mut self, low: i64, high: i64) -> i64 {
        let rng = high.wrapping_sub(low) as u64;
        let off = low as u64;
        off.wrapping_add(self.bounded_u64(rng)) as i64
    }

    /// NumPy's `random_bounded_uint64(state, off=0, rng, mask=0, use_masked=False)`: a draw in
    /// `[0, rng]`.
    fn bounded_u64(&mut self, rng: u64) -> u64 {
        if rng == 0 {
            0
        } else if rng < 0xFFFF_FFFF {
            u64::from(self.bounded_lemire_u32(rng as u32))
        } else if rng == 0xFFFF_FFFF {
            // The 32-bit Lemire method does not handle rng = 2^32 - 1.
            u64::from(self.next_uint32())
        } else if rng == u64::MAX {
            self.pcg.next_u64()
        } else {
            self.bounded_lemire_u64(rng)
        }
    }

    /// NumPy's `buffered_bounded_lemire_uint32` (Lemire, arXiv:1805.10941), `rng < 2^32 - 1`.
    fn bounded_lemire_u32(&mut self, rng: u32) -> u32 {
        let rng_excl = rng + 1;
        let mut m = u64::from(self.next_uint32()) * u64::from(rng_excl);
        let mut leftover = m as u32;
        if leftover < rng_excl {
            let threshold = (u32::MAX - rng) % rng_excl;
            while leftover < threshold {
                m = u64::from(self.next_uint32()) * u64::from(rng_excl);
                leftover = m as u32;
            }
        }
        (m >> 32) as u32
    }

    /// NumPy's `bounded_lemire_uint64`, `rng < 2^64 - 1`.
    fn bounded_lemire_u64(&mut self, rng: u64) -> u64 {
        let rng_excl = rng + 1;
        let mut m = u128::from(self.pcg.next_u64()) * u128::from(rng_excl);
        let mut leftover = m as u64;
        if leftover < rng_excl {
            let threshold = (u64::MAX - rng) % rng_excl;
            while leftover < threshold {
                m = u128::from(self.pcg.next_u64()) * u128::from(rng_excl);
                leftover = m as u64;
            }
        }
        (m >> 64) as u64
    }

    /// NumPy's `random_interval(max)`: a draw in `[0, max]` by masked rejection, from 32-bit
    /// words when `max` fits in 32 bits. Used by `shuffle` and `permutation`.
    fn random_interval(&mut self, max: u64) -> u64 {
        if max == 0 {
            return 0;
        }
        let mask = gen_mask(max);
        if max <= 0xFFFF_FFFF {
            loop {
                let value = u64::from(self.next_uint32()) & mask;
                if value <= max {
                    return value;
                }
            }
        } else {
            loop {
                let value = self.pcg.next_u64() & mask;
                if value <= max {
                    return value;
                }
            }
        }
    }
}

impl RngCore for Generator {
    /// NumPy's buffered `next_uint32`.
    fn next_u32(&mut self) -> u32 {
        self.next_uint32()
    }

    /// NumPy's `next_uint64` (`random_raw`).
    fn next_u64(&mut self) -> u64 {
        self.pcg.next_u64()
    }

    fn fill_bytes(&mut self, dst: &mut [u8]) {
        rand::rand_core::impls::fill_bytes_via_next(self, dst)
    }
}

/// NumPy's `next_double` on any bit generator: the top 53 bits of one 64-bit word scaled into
/// [0, 1) (also what `rand`'s `random::<f64>()` draws).
fn next_double<R: RngCore + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
}

/// NumPy's `gen_mask`: the smallest all-ones bit mask `>= max`.
fn gen_mask(max: u64) -> u64 {
    let mut mask = max;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    mask |= mask >> 32;
    mask
}

/// NumPy's `kahan_sum` (used only to check that `p` sums to 1).
fn kahan_sum(x: &[f64]) -> f64 {
    let Some((&first, rest)) = x.split_first() else {
        return 0.0;
    };
    let mut sum = first;
    let mut c = 0.0;
    for &v in rest {
        let y = v - c;
        let t = sum + y;
        c = (t - sum) - y;
        sum = t;
    }
    sum
}

/// `cdf = p.cumsum(); cdf /= cdf[-1]` (a sequential cumulative sum, as `np.cumsum`).
fn normalised_cdf(p: &[f64]) -> Vec<f64> {
    let mut acc = 0.0;
    let mut cdf: Vec<f64> = p
        .iter()
        .map(|&x| {
            acc += x;
            acc
        })
        .collect();
    if let Some(&last) = cdf.last() {
        for c in &mut cdf {
            *c /= last;
        }
    }
    cdf
}

/// `cdf.searchsorted(u, side='right')`: the number of entries `<= u`, clamped to a valid
/// index (it is one already: `u < 1 == cdf[-1]`).
fn search_right(cdf: &[f64], u: f64) -> usize {
    cdf.partition_point(|&c| c <= u)
        .min(cdf.len().saturating_sub(1))
}

fn check_scale(method: &'static str, scale: f64) -> Result<(), Error> {
    if scale.is_nan() {
        return Err(Error::invalid(method, "scale is NaN"));
    }
    if scale.is_sign_negative() {
        return Err(Error::invalid(method, format!("scale < 0 (got {scale})")));
    }
    Ok(())
}

fn check_location(method: &'static str, name: &str, value: f64) -> Result<(), Error> {
    if value.is_nan() {
        return Err(Error::invalid(method, format!("{name} is NaN")));
    }
    Ok(())
}

fn check_probability(method: &'static str, p: f64) -> Result<(), Error> {
    if p > 0.0 && p <= 1.0 {
        Ok(())
    } else {
        Err(Error::invalid(
            method,
            format!("p <= 0, p > 1 or p contains NaNs (got {p})"),
        ))
    }
}

/// The most values one `*_n` call (a `size=n` array) draws: 2³⁰, 8 GiB of `f64`. NumPy
/// refuses a size it cannot allocate with a `MemoryError`; this refuses it before asking.
pub const MAX_SIZE: usize = 1 << 30;

/// `n` values are a size [`MAX_SIZE`] allows.
pub(crate) fn check_size(method: &'static str, n: usize) -> Result<(), Error> {
    if n > MAX_SIZE {
        return Err(Error::invalid(
            method,
            format!("size {n} is past the {MAX_SIZE} values one call draws"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_normal_tables_are_a_ziggurat_of_the_gaussian() {
        // Strip i's edge x_i = wi[i] * 2^52; fi[i] is the density exp(-x²/2) there, ki[i] the
        // ratio of neighbouring edges in 52-bit fixed point, and the last edge is r.
        let x = |i: usize| WI_DOUBLE[i] * 2f64.powi(52);
        for (i, &fi) in FI_DOUBLE.iter().enumerate().skip(1) {
            let f = (-0.5 * x(i) * x(i)).exp();
            assert!((fi - f).abs() <= 1e-15 * f, "fi[{i}]");
        }
        for i in 2..256 {
            let ratio = WI_DOUBLE[i - 1] / WI_DOUBLE[i] * 2f64.powi(52);
            assert!((KI_DOUBLE[i] as f64 - ratio).abs() <= 0.5, "ki[{i}]");
        }
        assert!((x(255) - ZIGGURAT_NOR_R).abs() < 1e-14);
        assert!((ZIGGURAT_NOR_R * ZIGGURAT_NOR_INV_R - 1.0).abs() < 1e-15);
    }

    #[test]
    fn the_exponential_tables_are_a_ziggurat_of_the_exponential() {
        let x = |i: usize| WE_DOUBLE[i] * 2f64.powi(53);
        for (i, &fe) in FE_DOUBLE.iter().enumerate().skip(1) {
            let f = (-x(i)).exp();
            assert!((fe - f).abs() <= 1e-15 * f, "fe[{i}]");
        }
        for i in 2..256 {
            let ratio = WE_DOUBLE[i - 1] / WE_DOUBLE[i] * 2f64.powi(53);
            assert!((KE_DOUBLE[i] as f64 - ratio).abs() <= 4.0, "ke[{i}]");
        }
        assert!((x(255) - ZIGGURAT_EXP_R).abs() < 1e-13);
    }

    #[test]
    fn rand_pcg_steps_from_the_state_numpy_reports_as_numpys_pcg64_does() {
        // NumPy 2.4.6: default_rng(42).bit_generator.state after seeding, and random_raw(3).
        let state: u128 = 274_674_114_334_540_486_603_088_602_300_644_985_544;
        let inc: u128 = 332_724_090_758_049_132_448_979_897_138_935_081_983;
        let numpy = [
            14_276_969_152_011_380_360,
            8_095_878_257_575_067_585,
            15_838_336_090_824_644_132,
        ];
        // NumPy's pcg64_random_r, written out: one LCG step, then XSL-RR of the new state.
        const MULTIPLIER: u128 = (2_549_297_995_355_413_924 << 64) | 4_865_540_595_714_422_341;
        let mut s = state;
        let reference: Vec<u64> = (0..3)
            .map(|_| {
                s = s.wrapping_mul(MULTIPLIER).wrapping_add(inc);
                (((s >> 64) as u64) ^ (s as u64)).rotate_right((s >> 122) as u32)
            })
            .collect();
        assert_eq!(reference, numpy);
        let mut g = default_rng(42);
        assert_eq!([g.random_raw(), g.random_raw(), g.random_raw()], numpy);
    }

    #[test]
    fn two_32_bit_draws_are_the_low_then_high_half_of_one_64_bit_draw() {
        let mut a = default_rng(7);
        let mut b = a.clone();
        let raw = b.random_raw();
        assert_eq!(a.next_u32(), raw as u32);
        // A 64-bit draw in between neither uses nor clears the buffered half.
        assert_eq!(a.random_raw(), b.random_raw());
        assert_eq!(a.next_u32(), (raw >> 32) as u32);
    }

    #[test]
    fn the_full_i64_range_is_one_raw_draw_offset_by_i64_min() {
        let mut a = default_rng(3);
        let mut b = a.clone();
        let got = a.integers_inclusive(i64::MIN, i64::MAX).unwrap();
        assert_eq!(got, (b.random_raw() as i64).wrapping_add(i64::MIN));
    }

    #[test]
    fn numpys_one_third_literal_is_the_f64_nearest_one_third() {
        assert_eq!(GEOMETRIC_SEARCH_MIN_P, 1.0 / 3.0);
        assert_eq!("0.333333333333333333333333".parse::<f64>(), Ok(1.0 / 3.0));
    }

    #[test]
    fn geometric_with_p_1_always_takes_one_trial() {
        let mut g = default_rng(1);
        assert!(g.geometric_n(1.0, 1000).unwrap().iter().all(|&k| k == 1));
    }

    #[test]
    fn sampling_without_replacement_never_repeats_and_covers_the_population() {
        let mut g = default_rng(5);
        for (n, size) in [(100, 100), (20_000, 20_000), (20_000, 300), (10, 0)] {
            let mut got = g.choice_index(n, size, false, None).unwrap();
            assert_eq!(got.len(), size);
            got.sort_unstable();
            got.dedup();
            assert_eq!(got.len(), size, "n={n} size={size}");
            assert!(got.iter().all(|&i| i < n));
        }
        let p = [0.5, 0.0, 0.25, 0.25];
        let mut got = g.choice_index(4, 3, false, Some(&p)).unwrap();
        got.sort_unstable();
        assert_eq!(got, [0, 2, 3]);
    }

    #[test]
    fn bad_arguments_are_errors_with_numpys_message() {
        let mut g = default_rng(0);
        let msg = |e: Error| e.to_string();
        assert_eq!(
            msg(g.integers(3, 3).unwrap_err()),
            "Generator.integers: low >= high (3 >= 3)"
        );
        assert!(g.integers_n(3, 2, 5).is_err());
        assert!(g.integers_inclusive(3, 2).is_err());
        assert_eq!(
            msg(g.normal(0.0, -1.0).unwrap_err()),
            "Generator.normal: scale < 0 (got -1)"
        );
        assert!(g.normal(0.0, -0.0).is_err()); // NumPy tests the sign bit
        assert!(g.normal(f64::NAN, 1.0).is_err());
        assert!(g.normal_n(0.0, f64::NAN, 3).is_err());
        assert!(g.exponential(-0.5).is_err());
        assert!(g.exponential_n(f64::NAN, 3).is_err());
        for p in [0.0, -0.1, 1.0000001, f64::NAN, f64::INFINITY] {
            assert!(g.geometric(p).is_err(), "p = {p}");
            assert!(g.geometric_n(p, 2).is_err(), "p = {p}");
        }
        assert!(g.choice_index(0, 1, true, None).is_err());
        assert_eq!(
            g.choice_index(0, 0, true, None).unwrap(),
            Vec::<usize>::new()
        );
        assert!(g.choice::<u8>(&[], 1, false, None).is_err());
        assert!(g.choice_index(3, 1, true, Some(&[0.5, 0.5])).is_err());
        assert!(g.choice_index(2, 1, true, Some(&[f64::NAN, 1.0])).is_err());
        assert!(g.choice_index(2, 1, true, Some(&[-0.5, 1.5])).is_err());
        assert!(g.choice_index(2, 1, true, Some(&[0.5, 0.6])).is_err());
        assert!(
            g.choice_index(2, 1, true, Some(&[f64::INFINITY, 0.0]))
                .is_err()
        );
        assert!(g.choice_index(3, 4, false, None).is_err());
        assert!(g.choice_index(3, 2, false, Some(&[1.0, 0.0, 0.0])).is_err());
        // A tolerance of sqrt(eps), as NumPy's.
        assert!(g.choice_index(2, 1, true, Some(&[0.5, 0.5 + 1e-9])).is_ok());
    }
}
