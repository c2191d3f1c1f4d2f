//! The χ² goodness-of-fit check the course's sampling tests share (speculative sampling
//! must draw exactly from the target's distribution, on any model): counts of draws against
//! the probabilities they should follow, and the critical value at a false-alarm rate of
//! 0.1% per comparison. A test-only crate: no lecture prints from it.

/// χ² statistic of `counts` (out of `n`) against expected probabilities `probs`, bins with
/// an expected count below 5 merged into one; returns (χ², degrees of freedom).
///
/// ```
/// // 100 draws of a fair coin, 60 heads: (60 − 50)²/50 + (40 − 50)²/50 = 4, one degree.
/// assert_eq!(stat_checks::chi_square(&[60, 40], &[0.5, 0.5], 100), (4.0, 1));
/// ```
pub fn chi_square(counts: &[usize], probs: &[f64], n: usize) -> (f64, usize) {
    let mut chi2 = 0.0;
    let mut bins = 0;
    let mut small_obs = 0.0;
    let mut small_exp = 0.0;
    for (&c, &p) in counts.iter().zip(probs) {
        let e = p * n as f64;
        if e < 5.0 {
            small_obs += c as f64;
            small_exp += e;
        } else {
            chi2 += (c as f64 - e).powi(2) / e;
            bins += 1;
        }
    }
    if small_exp > 0.0 {
        chi2 += (small_obs - small_exp).powi(2) / small_exp.max(1e-9);
        bins += 1;
    }
    (chi2, bins.max(1) - 1)
}

/// χ² critical value at p = 0.001 for `df` degrees of freedom (Wilson–Hilferty's
/// approximation: within 1.2% of the exact quantile for df ≥ 5, closer as df grows).
pub fn chi_square_critical(df: usize) -> f64 {
    let k = df as f64;
    let z = 3.090_232;
    k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_critical_value_matches_published_quantiles() {
        // χ²(0.999) quantiles from standard tables: df 5 → 20.515, 10 → 29.588, 30 → 59.703.
        for (df, q) in [(5, 20.515), (10, 29.588), (30, 59.703)] {
            let got = chi_square_critical(df);
            assert!((got / q - 1.0).abs() < 0.012, "df {df}: {got} vs {q}");
        }
    }

    #[test]
    fn bins_expected_below_five_are_merged() {
        // Expected 50, 45, 3, 2 of 100: the last two merge into one bin of 5, observed 7.
        let (chi2, df) = chi_square(&[50, 43, 4, 3], &[0.5, 0.45, 0.03, 0.02], 100);
        let want = 0.0 + (43.0f64 - 45.0).powi(2) / 45.0 + (7.0f64 - 5.0).powi(2) / 5.0;
        assert!((chi2 - want).abs() < 1e-12, "{chi2} vs {want}");
        assert_eq!(df, 2);
    }
}
