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
    statistic(counts.iter().map(|&c| c as f64), probs, n)
}

/// [`chi_square`] of counts `observed` (not necessarily whole) out of `n`.
fn statistic(observed: impl Iterator<Item = f64>, probs: &[f64], n: usize) -> (f64, usize) {
    let mut chi2 = 0.0;
    let mut bins = 0;
    let mut small_obs = 0.0;
    let mut small_exp = 0.0;
    for (c, &p) in observed.zip(probs) {
        let e = p * n as f64;
        if e < 5.0 {
            small_obs += c;
            small_exp += e;
        } else {
            chi2 += (c - e).powi(2) / e;
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

/// The fewest draws with which [`chi_square`] tells draws from `wrong` apart from `probs`
/// almost surely: a test of that many draws fails them with probability about 99.9%
/// (three standard deviations), besides its 0.1% false alarms on right draws. How a
/// sampling test is sized: by the mistake it must catch, not by habit.
///
/// At `n` draws, with the bins [`chi_square`] would merge merged alike, draws from `wrong`
/// give a χ² statistic whose mean is `df + λ` and whose variance is `2 (df + 2λ)`, with
/// `λ = n · Σ (wrong − probs)² / probs` over the bins (the noncentral χ²); the answer is
/// the fewest `n` (to within one, by bisection) for which the mean less three standard
/// deviations passes the critical value. `usize::MAX` when the two do not differ.
///
/// ```
/// // Eight equal bins against a sample that puts 0.16 where 0.125 belongs and 0.09 in
/// // its neighbour: Σ (w − p)² / p = 2 · 0.035² / 0.125 = 0.0196 a draw.
/// let p = [0.125; 8];
/// let w = [0.16, 0.09, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125];
/// let n = stat_checks::draws_to_detect(&p, &w);
/// assert!((2_500..3_500).contains(&n), "{n}");
/// ```
pub fn draws_to_detect(probs: &[f64], wrong: &[f64]) -> usize {
    let detects = |n: usize| {
        let (lambda, df) = noncentrality(probs, wrong, n);
        let k = df as f64;
        k + lambda - 3.0 * (2.0 * (k + 2.0 * lambda)).sqrt() > chi_square_critical(df)
    };
    let mut n = 1usize;
    while !detects(n) {
        if n > 1 << 40 {
            return usize::MAX;
        }
        n *= 2;
    }
    // The fewest between n / 2 and n.
    let mut low = n / 2;
    let mut high = n;
    while high - low > 1 {
        let mid = (low + high) / 2;
        if detects(mid) {
            high = mid;
        } else {
            low = mid;
        }
    }
    high
}

/// `λ` and the degrees of freedom (at least one) of [`chi_square`] at `n` draws from
/// `wrong` against `probs`: the statistic of the counts `wrong` expects, bins merged alike.
fn noncentrality(probs: &[f64], wrong: &[f64], n: usize) -> (f64, usize) {
    let expected = wrong.iter().map(|w| w * n as f64);
    let (lambda, df) = statistic(expected, probs, n);
    (lambda, df.max(1))
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
    fn draws_to_detect_is_where_wrong_draws_pass_the_critical_value_by_three_deviations() {
        // By hand, 8 bins (df 7, critical 24.32 by the approximation): λ = 0.0196 n; at
        // n the mean 7 + λ less 3 √(2 (7 + 2λ)) first exceeds 24.32.
        let p = [0.125; 8];
        let w = [0.16, 0.09, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125];
        let n = draws_to_detect(&p, &w);
        let gap = |n: usize| {
            let lambda = 0.0196 * n as f64;
            7.0 + lambda - 3.0 * (2.0 * (7.0 + 2.0 * lambda)).sqrt() - chi_square_critical(7)
        };
        assert!(gap(n) > 0.0 && gap(n - 1) <= 0.0, "{n}");
        // Wrong draws of that many fail the check nearly always; right ones pass it.
        let (chi2, _) = chi_square(&expected(&w, n), &p, n);
        assert!(chi2 > chi_square_critical(7), "{chi2}");
        assert_eq!(draws_to_detect(&p, &p), usize::MAX);
    }

    /// The counts `n` draws of `probs` give on average, rounded.
    fn expected(probs: &[f64], n: usize) -> Vec<usize> {
        probs
            .iter()
            .map(|p| (p * n as f64).round() as usize)
            .collect()
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
