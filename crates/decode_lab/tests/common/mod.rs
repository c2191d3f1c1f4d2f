//! What the speculative-decoding test files share.

/// χ² critical value at p = 0.001 for `df` degrees of freedom (Wilson–Hilferty's
/// approximation: within 1.2% of the exact quantile for df ≥ 5, closer as df grows).
pub fn chi_square_critical(df: usize) -> f64 {
    let k = df as f64;
    let z = 3.090_232;
    k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3)
}

#[test]
fn the_critical_value_matches_published_quantiles() {
    // χ²(0.999) quantiles from standard tables: df 5 → 20.515, 10 → 29.588, 30 → 59.703.
    for (df, q) in [(5, 20.515), (10, 29.588), (30, 59.703)] {
        let got = chi_square_critical(df);
        assert!((got / q - 1.0).abs() < 0.012, "df {df}: {got} vs {q}");
    }
}
