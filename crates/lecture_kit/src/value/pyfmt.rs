//! Python's number formats, in the one place the kit calls them.
//!
//! Every typed value that prints as Python prints ([`super::py`], [`super::percent`],
//! [`super::thousands`], [`super::fixed`]) formats through these functions, which call
//! `py_port::format` (CPython's formatter, ported and checked against CPython).

use py_port::format::{format_f64, repr_f64};

/// `repr(x)`: the shortest digits that read back as `x`, in scientific notation with a signed
/// two-digit exponent when the decimal exponent is below −4 or at least 16 (`1e-05`, `1e+16`).
pub fn repr(x: f64) -> String {
    repr_f64(x)
}

/// `format(x, spec)` for a spec this module writes (always valid; an error would print as
/// its message rather than panic).
fn format(x: f64, spec: &str) -> String {
    format_f64(x, spec).unwrap_or_else(|e| e.to_string())
}

/// `f"{x:.{digits}f}"`.
pub fn fixed(x: f64, digits: usize) -> String {
    format(x, &format!(".{digits}f"))
}

/// `f"{x:.{digits}%}"`: `x` times 100 (in floating point, as CPython does), then `%`.
pub fn percent(x: f64, digits: usize) -> String {
    format(x, &format!(".{digits}%"))
}

/// `f"{x:,.{digits}f}"`: thousands separated by commas.
pub fn thousands(x: f64, digits: usize) -> String {
    format(x, &format!(",.{digits}f"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each expected string is what CPython 3.11 prints for the same call.
    #[test]
    fn formats_match_what_python_prints() {
        for (x, want) in [
            (0.8, "0.8"),
            (1.0, "1.0"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1e16, "1e+16"),
            (1.5e300, "1.5e+300"),
            (-2.5e-7, "-2.5e-07"),
            (5e-324, "5e-324"),
            (f64::INFINITY, "inf"),
            (f64::NAN, "nan"),
        ] {
            assert_eq!(repr(x), want, "repr({x:?})");
        }
        assert_eq!(fixed(2.675, 2), "2.67"); // 2.675 is stored as 2.67499999…
        assert_eq!(fixed(0.125, 2), "0.12"); // ties to even
        assert_eq!(percent(0.145, 0), "14%"); // 0.145 × 100 = 14.499999999999998
        assert_eq!(percent(0.15, 0), "15%");
        assert_eq!(thousands(1234567.0, 0), "1,234,567");
        assert_eq!(thousands(-1234.5, 1), "-1,234.5");
        assert_eq!(thousands(999.0, 0), "999");
        assert_eq!(thousands(0.0, 2), "0.00");
    }
}
