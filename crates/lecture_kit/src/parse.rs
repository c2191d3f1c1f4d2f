//! Value parsers for a lecture's flags: each takes a range, says what it expected and what it
//! got (clap puts the flag's name before the message), and keeps every figure a lecture
//! prints finite: a value outside its range would make a time infinite or a count wrap.
//!
//! ```
//! use lecture_kit::parse::{count, duration, real};
//!
//! #[derive(Debug, clap::Parser)]
//! struct Cli {
//!     #[arg(long, value_parser = count("draft lengths", 1, 64))]
//!     gamma: u64,
//!     #[arg(long, value_parser = real("a rate in (0, 1]", |a| a > 0.0 && a <= 1.0))]
//!     alpha: f64,
//!     #[arg(long, value_parser = duration(10.0))]
//!     overhead: f64,
//! }
//!
//! use clap::Parser;
//! let cli = Cli::try_parse_from(["x", "--gamma", "4", "--alpha", "0.8", "--overhead", "300us"]).unwrap();
//! assert_eq!((cli.gamma, cli.alpha, cli.overhead), (4, 0.8, 300e-6));
//! let e = Cli::try_parse_from(["x", "--gamma", "0", "--alpha", "1", "--overhead", "1ms"]);
//! assert!(e.unwrap_err().to_string().contains("expected draft lengths from 1 to 64, got \"0\""));
//! ```

/// A whole number of `what` in `min..=max`.
pub fn count(
    what: &'static str,
    min: u64,
    max: u64,
) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    move |text: &str| {
        let range = format!("expected {what} from {min} to {max}");
        let t = text.trim();
        if t.is_empty() {
            return Err(format!("{range}, got nothing"));
        }
        match t.parse::<u64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(format!("{range}, got {text:?}")),
        }
    }
}

/// A finite number for which `ok` holds, described as `range`; `-0` reads as `0`.
pub fn real(
    range: &'static str,
    ok: fn(f64) -> bool,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |text: &str| match text.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && ok(x) => Ok(x + 0.0),
        _ => Err(format!("expected {range}, got {text:?}")),
    }
}

/// A cost in `unit` (`"µs"` or `"ms"`, `scale` seconds each) from 0 to `max_s` seconds;
/// returns seconds.
pub fn cost(
    unit: &'static str,
    scale: f64,
    max_s: f64,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |text: &str| {
        let max = max_s / scale;
        match text.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && (0.0..=max).contains(&x) => Ok((x + 0.0) * scale),
            _ => Err(format!(
                "expected a cost in {unit} from 0 to {max}, got {text:?}"
            )),
        }
    }
}

/// A duration with its unit — `1ms`, `300us` (or `300µs`, `300μs`), `0.5ms`, `2s`, `800ns`,
/// in any case — from 0 to `max_s` seconds, in seconds. A bare number is refused: the unit
/// is the point.
pub fn duration(
    max_s: f64,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |text: &str| {
        let lower = text.trim().to_lowercase();
        let units = [
            ("ns", 1e-9),
            ("us", 1e-6),
            ("µs", 1e-6),
            ("μs", 1e-6),
            ("ms", 1e-3),
            ("s", 1.0),
        ];
        let Some((number, scale)) = units
            .iter()
            .find_map(|&(u, scale)| lower.strip_suffix(u).map(|n| (n, scale)))
        else {
            return Err(format!(
                "a time needs a unit: s, ms, us (µs) or ns, e.g. 1ms or 300us, got {text:?}"
            ));
        };
        match number.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 && v * scale <= max_s => Ok(v * scale + 0.0),
            _ => Err(format!(
                "a time is a number from 0 to {max_s} s with a unit (e.g. 1ms), got {text:?}"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_state_their_range_and_what_they_got() {
        let batch = count("batch sizes", 1, 1_000_000);
        assert_eq!(batch("16"), Ok(16));
        assert_eq!(
            batch("abc").unwrap_err(),
            "expected batch sizes from 1 to 1000000, got \"abc\""
        );
        assert_eq!(
            batch("").unwrap_err(),
            "expected batch sizes from 1 to 1000000, got nothing"
        );
        assert!(
            batch("18446744073709551615")
                .unwrap_err()
                .contains("1000000")
        );
        assert!(batch("0").is_err() && batch("-5").is_err());
    }

    #[test]
    fn reals_are_finite_in_range_and_never_negative_zero() {
        let alpha = real("a rate in (0, 1]", |a| a > 0.0 && a <= 1.0);
        assert_eq!(alpha("0.7"), Ok(0.7));
        assert_eq!(alpha("1"), Ok(1.0));
        for bad in ["0", "-0.3", "1.5", "NaN", "x", "-inf", ""] {
            let e = alpha(bad).unwrap_err();
            assert!(e.starts_with("expected a rate in (0, 1]"), "{bad}: {e}");
        }
        let c = real("c", |c| (0.0..=10.0).contains(&c));
        let zero = c("-0").unwrap();
        assert!(zero == 0.0 && zero.is_sign_positive());
        assert!(c("11").is_err() && c("inf").is_err());
    }

    #[test]
    fn costs_are_read_in_their_units_and_bounded() {
        let us = cost("µs", 1e-6, 10.0);
        let ms = cost("ms", 1e-3, 10.0);
        assert_eq!(us("20"), Ok(20.0 * 1e-6));
        assert_eq!(ms("0.35"), Ok(0.35 * 1e-3));
        assert!(ms("1e308").unwrap_err().contains("from 0 to 10000"));
        assert!(us("-1").is_err() && us("NaN").is_err());
        assert!(ms("-0").unwrap().is_sign_positive());
    }

    #[test]
    fn durations_need_a_unit_in_any_case_and_either_mu() {
        let d = duration(10.0);
        assert_eq!(d("1ms"), Ok(1e-3));
        assert_eq!(d("1MS"), Ok(1e-3));
        assert_eq!(d("300us"), Ok(300.0 * 1e-6));
        assert_eq!(d("300µs"), Ok(300.0 * 1e-6)); // U+00B5 MICRO SIGN
        assert_eq!(d("300μs"), Ok(300.0 * 1e-6)); // U+03BC GREEK SMALL MU
        assert_eq!(d("0.5 ms"), Ok(0.5e-3));
        assert_eq!(d("2s"), Ok(2.0));
        assert_eq!(d("1e-3s"), Ok(1e-3));
        assert!(d("1").unwrap_err().contains("needs a unit"));
        for bad in ["-1ms", "NaNms", "1e308s", "11s", "infms"] {
            let e = d(bad).unwrap_err();
            assert!(
                e.contains("a time is a number from 0 to 10 s"),
                "{bad}: {e}"
            );
        }
        assert!(d("ms").is_err() && d("1h").unwrap_err().contains("unit"));
    }
}
