//! Python's number formats, character for character: `repr(float)`, `float.hex()`, and the
//! format-spec mini-language of `format(x, spec)` / f-strings (`f"{x:>10,.2f}"`) for `float`
//! and `int`, as CPython 3.11 implements them (`Python/formatter_unicode.c`,
//! `Python/pystrtod.c`).
//!
//! Rounding is Python's: the exact binary value rounded to the requested digits, ties to even
//! (`0.125` → `"0.12"`, `2.675` → `"2.67"` because 2.675 is stored as 2.67499999…). Rust's
//! `format!("{:.N}")` and `format!("{:.Ne}")` round the same way, and the shortest-digit
//! `{:e}` gives the digits of `repr`; this module only lays them out as Python does.
//!
//! `%` follows CPython literally: the float is multiplied by 100 *in floating point* first, so
//! `format(0.145, ".0%")` is `"14%"` (0.145 × 100 = 14.499999999999998), not 15%.
//!
//! Supported: `[[fill]align][sign][0][width][,|_][.precision][type]` with align `< > ^ =`,
//! sign `+ - space`, and types `f F e E g G %` and none for floats, `d` and none for ints (an
//! int with a float type is converted to float first, as in Python). Not implemented (a
//! [`Error::FormatSpec`] that says so): `#`, `z`, and the types `n x X o b c s`.

use crate::Error;
use std::fmt;
use std::str::FromStr;

/// The largest width or precision accepted. CPython allows up to `INT_MAX`; a port never needs
/// more than this, and it bounds the memory a spec can ask for.
pub const MAX_WIDTH_OR_PRECISION: usize = 100_000;

/// Python's `repr(x)` (and `str(x)`) for a float: the shortest digits that read back as `x`,
/// in scientific notation when the decimal exponent is below -4 or at least 16, with `.0` on
/// integral values.
///
/// ```
/// use py_port::format::repr_f64;
/// assert_eq!(repr_f64(0.1 + 0.2), "0.30000000000000004");
/// assert_eq!(repr_f64(2.0), "2.0");
/// assert_eq!(repr_f64(1e-5), "1e-05");
/// assert_eq!(repr_f64(0.0001), "0.0001");
/// assert_eq!(repr_f64(1e16), "1e+16");
/// assert_eq!(repr_f64(1.5e300), "1.5e+300");
/// assert_eq!(repr_f64(-0.0), "-0.0");
/// assert_eq!(repr_f64(f64::NAN), "nan");
/// ```
pub fn repr_f64(x: f64) -> String {
    let sign = if x.is_sign_negative() && !x.is_nan() {
        "-"
    } else {
        ""
    };
    format!("{sign}{}", float_body_repr(x.abs()))
}

/// Python's `float.hex(x)`: `[-]0x1.<13 hex digits>p<exponent>`, `0x0.…p-1022` for
/// subnormals, `0x0.0p+0` for zero, `inf`, `-inf`, `nan`. Exact, so handy for diffing streams.
///
/// ```
/// use py_port::format::float_hex;
/// assert_eq!(float_hex(1.0), "0x1.0000000000000p+0");
/// assert_eq!(float_hex(-0.1), "-0x1.999999999999ap-4");
/// assert_eq!(float_hex(5e-324), "0x0.0000000000001p-1022");
/// assert_eq!(float_hex(0.0), "0x0.0p+0");
/// ```
pub fn float_hex(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_owned();
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x.is_infinite() {
        return format!("{sign}inf");
    }
    if x == 0.0 {
        return format!("{sign}0x0.0p+0");
    }
    let bits = x.to_bits();
    let exp_bits = ((bits >> 52) & 0x7ff) as i32;
    let mantissa = bits & ((1u64 << 52) - 1);
    let (lead, exp) = if exp_bits == 0 {
        (0, -1022)
    } else {
        (1, exp_bits - 1023)
    };
    format!("{sign}0x{lead}.{mantissa:013x}p{exp:+}")
}

/// `format(x, spec)` for a Python float.
///
/// ```
/// use py_port::format::format_f64;
/// assert_eq!(format_f64(2.675, ".2f").unwrap(), "2.67");
/// assert_eq!(format_f64(0.125, ".2f").unwrap(), "0.12");
/// assert_eq!(format_f64(0.145, ".0%").unwrap(), "14%");
/// assert_eq!(format_f64(1234567.891, ">14,.2f").unwrap(), "  1,234,567.89");
/// assert_eq!(format_f64(1234.5, "010,.1f").unwrap(), "0,001,234.5");
/// assert_eq!(format_f64(0.000123456, ".3g").unwrap(), "0.000123");
/// assert_eq!(format_f64(100.0, ".3").unwrap(), "1e+02"); // no type: like g, but keeps a ".0"
/// assert_eq!(format_f64(6.0221e23, ".2e").unwrap(), "6.02e+23");
/// assert!(format_f64(1.0, ".2q").is_err());
/// ```
pub fn format_f64(x: f64, spec: &str) -> Result<String, Error> {
    spec.parse::<FormatSpec>()?.format_f64(x)
}

/// `format(x, spec)` for a Python int.
///
/// ```
/// use py_port::format::format_i64;
/// assert_eq!(format_i64(-1234567, ",").unwrap(), "-1,234,567");
/// assert_eq!(format_i64(42, "05d").unwrap(), "00042");
/// assert_eq!(format_i64(3, ".1f").unwrap(), "3.0"); // a float type converts, as in Python
/// assert!(format_i64(3, ".1").is_err()); // Python: precision not allowed for integers
/// ```
pub fn format_i64(x: i64, spec: &str) -> Result<String, Error> {
    spec.parse::<FormatSpec>()?.format_i64(x)
}

/// Where the value goes in its field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// `<`
    Left,
    /// `>` (the default for numbers)
    Right,
    /// `^` (extra padding goes right)
    Center,
    /// `=`: padding between the sign and the digits (what a leading `0` in the width selects)
    AfterSign,
}

/// The sign option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sign {
    /// `-` or nothing: a sign only for negative numbers
    Minus,
    /// `+`: always a sign
    Plus,
    /// space: a space for non-negative numbers
    Space,
}

/// The presentation type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatType {
    /// `f`: fixed point, `precision` digits after the point (default 6)
    Fixed,
    /// `F`: as `f`, with `INF` and `NAN`
    FixedUpper,
    /// `e`: scientific, `precision` digits after the point, exponent of at least two digits
    Exponent,
    /// `E`: as `e`, with `E`
    ExponentUpper,
    /// `g`: `precision` significant digits (default 6), fixed or scientific by exponent,
    /// trailing zeros removed
    General,
    /// `G`: as `g`, with `E`
    GeneralUpper,
    /// `%`: times 100 (in floating point), `f`, then `%`
    Percent,
    /// `d`: decimal integer (ints only)
    Decimal,
}

/// A parsed format spec (the part after `:` in `f"{x:spec}"`), CPython's
/// `InternalFormatSpec` for the supported subset.
///
/// ```
/// use py_port::format::{Align, FormatSpec, FormatType};
/// let spec: FormatSpec = "*^12,.1f".parse().unwrap();
/// assert_eq!((spec.fill, spec.align, spec.width), (Some('*'), Some(Align::Center), Some(12)));
/// assert_eq!(spec.format_type, Some(FormatType::Fixed));
/// assert_eq!(spec.format_f64(-1234.56).unwrap(), "**-1,234.6**");
/// assert!("10.2x".parse::<FormatSpec>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatSpec {
    /// The fill character, when given with an alignment (`*<`).
    pub fill: Option<char>,
    /// The alignment, when given.
    pub align: Option<Align>,
    /// The sign option.
    pub sign: Sign,
    /// A `0` before the width with no explicit fill: fill with `0`, and align `=` unless an
    /// alignment is given.
    pub zero_pad: bool,
    /// The minimum width in characters.
    pub width: Option<usize>,
    /// The thousands separator, `,` or `_`, grouping the integer digits by three.
    pub grouping: Option<char>,
    /// The precision.
    pub precision: Option<usize>,
    /// The presentation type; `None` is Python's empty type (`str()`-like).
    pub format_type: Option<FormatType>,
    /// The spec as written, for error messages and `Display`.
    text: String,
}

impl fmt::Display for FormatSpec {
    /// The spec as written.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn align_of(c: char) -> Option<Align> {
    match c {
        '<' => Some(Align::Left),
        '>' => Some(Align::Right),
        '^' => Some(Align::Center),
        '=' => Some(Align::AfterSign),
        _ => None,
    }
}

impl FromStr for FormatSpec {
    type Err = Error;

    /// Parses like CPython's `parse_internal_render_format_spec`, with its error messages.
    fn from_str(text: &str) -> Result<Self, Error> {
        let err = |message: &str| Error::spec(text, message);
        let c: Vec<char> = text.chars().collect();
        let mut pos = 0;
        let mut spec = FormatSpec {
            fill: None,
            align: None,
            sign: Sign::Minus,
            zero_pad: false,
            width: None,
            grouping: None,
            precision: None,
            format_type: None,
            text: text.to_owned(),
        };
        if let Some(a) = c.get(1).and_then(|&ch| align_of(ch)) {
            spec.fill = Some(c[0]);
            spec.align = Some(a);
            pos = 2;
        } else if let Some(a) = c.first().and_then(|&ch| align_of(ch)) {
            spec.align = Some(a);
            pos = 1;
        }
        match c.get(pos) {
            Some('+') => (spec.sign, pos) = (Sign::Plus, pos + 1),
            Some('-') => (spec.sign, pos) = (Sign::Minus, pos + 1),
            Some(' ') => (spec.sign, pos) = (Sign::Space, pos + 1),
            _ => {}
        }
        if c.get(pos) == Some(&'z') {
            return Err(err("the 'z' option is not implemented by py_port"));
        }
        if c.get(pos) == Some(&'#') {
            return Err(err("the alternate form '#' is not implemented by py_port"));
        }
        if spec.fill.is_none() && c.get(pos) == Some(&'0') {
            spec.zero_pad = true;
            pos += 1;
        }
        let digits = |pos: &mut usize| -> Result<Option<usize>, Error> {
            let start = *pos;
            while c.get(*pos).is_some_and(char::is_ascii_digit) {
                *pos += 1;
            }
            if *pos == start {
                return Ok(None);
            }
            let s: String = c[start..*pos].iter().collect();
            match s.parse::<usize>() {
                Ok(n) if n <= MAX_WIDTH_OR_PRECISION => Ok(Some(n)),
                _ => Err(err(&format!(
                    "width and precision are limited to {MAX_WIDTH_OR_PRECISION} in py_port"
                ))),
            }
        };
        spec.width = digits(&mut pos)?;
        if c.get(pos) == Some(&',') {
            spec.grouping = Some(',');
            pos += 1;
        }
        if c.get(pos) == Some(&'_') {
            if spec.grouping.is_some() {
                return Err(err("Cannot specify both ',' and '_'."));
            }
            spec.grouping = Some('_');
            pos += 1;
        }
        if c.get(pos) == Some(&',') {
            return Err(err("Cannot specify both ',' and '_'."));
        }
        if c.get(pos) == Some(&'.') {
            pos += 1;
            spec.precision = digits(&mut pos)?;
            if spec.precision.is_none() {
                return Err(err("Format specifier missing precision"));
            }
        }
        if c.len() - pos > 1 {
            return Err(err("Invalid format specifier"));
        }
        if let Some(&t) = c.get(pos) {
            spec.format_type = Some(match t {
                'f' => FormatType::Fixed,
                'F' => FormatType::FixedUpper,
                'e' => FormatType::Exponent,
                'E' => FormatType::ExponentUpper,
                'g' => FormatType::General,
                'G' => FormatType::GeneralUpper,
                '%' => FormatType::Percent,
                'd' => FormatType::Decimal,
                'n' | 'x' | 'X' | 'o' | 'b' | 'c' | 's' => {
                    return Err(err(&format!(
                        "the type '{t}' is not implemented by py_port"
                    )));
                }
                _ => return Err(err(&format!("Unknown format code '{t}'"))),
            });
        }
        Ok(spec)
    }
}

impl FormatSpec {
    /// The fill character and alignment in effect for a number (CPython's defaults: fill
    /// space, align right; a `0` flag without explicit fill gives fill `0` and, without an
    /// explicit alignment, `=`).
    fn fill_and_align(&self) -> (char, Align) {
        match (self.fill, self.zero_pad) {
            (Some(f), _) => (f, self.align.unwrap_or(Align::Right)),
            (None, true) => ('0', self.align.unwrap_or(Align::AfterSign)),
            (None, false) => (' ', self.align.unwrap_or(Align::Right)),
        }
    }

    /// `format(x, spec)` for a float. Errs for the integer type `d`, as Python does.
    pub fn format_f64(&self, x: f64) -> Result<String, Error> {
        let body = match self.format_type {
            None => match self.precision {
                None => float_body_repr(x.abs()),
                Some(p) => float_body_general(x.abs(), p, true, false),
            },
            Some(FormatType::Fixed) => float_body_fixed(x.abs(), self.precision_or_6(), false),
            Some(FormatType::FixedUpper) => float_body_fixed(x.abs(), self.precision_or_6(), true),
            Some(FormatType::Exponent) => float_body_exp(x.abs(), self.precision_or_6(), false),
            Some(FormatType::ExponentUpper) => float_body_exp(x.abs(), self.precision_or_6(), true),
            Some(FormatType::General) => {
                float_body_general(x.abs(), self.precision_or_6(), false, false)
            }
            Some(FormatType::GeneralUpper) => {
                float_body_general(x.abs(), self.precision_or_6(), false, true)
            }
            Some(FormatType::Percent) => {
                // CPython: `val *= 100` in floating point, then 'f'.
                let mut s = float_body_fixed((x * 100.0).abs(), self.precision_or_6(), false);
                s.push('%');
                s
            }
            Some(FormatType::Decimal) => {
                return Err(Error::spec(
                    &self.text,
                    "Unknown format code 'd' for object of type 'float'",
                ));
            }
        };
        let negative = x.is_sign_negative() && !x.is_nan();
        Ok(self.layout(negative, &body))
    }

    /// `format(x, spec)` for an int. A float type (`f e g %` …) formats `float(x)`, as Python
    /// does; a precision with `d` or no type errs, as in Python.
    pub fn format_i64(&self, x: i64) -> Result<String, Error> {
        match self.format_type {
            None | Some(FormatType::Decimal) => {
                if self.precision.is_some() {
                    return Err(Error::spec(
                        &self.text,
                        "Precision not allowed in integer format specifier",
                    ));
                }
                Ok(self.layout(x < 0, &x.unsigned_abs().to_string()))
            }
            // Python's int.__format__ converts with float(x), correctly rounded like `as`.
            Some(_) => self.format_f64(x as f64),
        }
    }

    fn precision_or_6(&self) -> usize {
        self.precision.unwrap_or(6)
    }

    /// CPython's `calc_number_widths` + `fill_number`: `body` is the unsigned number
    /// (digits, then an optional `.` and the remainder).
    fn layout(&self, negative: bool, body: &str) -> String {
        let n_digits = body.bytes().take_while(u8::is_ascii_digit).count();
        let (digits, rest) = body.split_at(n_digits);
        let (has_decimal, remainder) = match rest.strip_prefix('.') {
            Some(r) => (true, r),
            None => (false, rest),
        };
        let sign = match (negative, self.sign) {
            (true, _) => Some('-'),
            (false, Sign::Plus) => Some('+'),
            (false, Sign::Space) => Some(' '),
            (false, Sign::Minus) => None,
        };
        let (fill, align) = self.fill_and_align();
        let width = self.width.map_or(-1, |w| w as i64);
        let n_non_digit =
            i64::from(sign.is_some()) + i64::from(has_decimal) + remainder.chars().count() as i64;
        let min_width = if fill == '0' && align == Align::AfterSign {
            width - n_non_digit
        } else {
            0
        };
        let grouped = if n_digits == 0 {
            String::new()
        } else {
            insert_grouping(digits, min_width, self.grouping)
        };
        let n_padding = (width - (n_non_digit + grouped.len() as i64)).max(0) as usize;
        let (lpad, spad, rpad) = match align {
            Align::Left => (0, 0, n_padding),
            Align::Right => (n_padding, 0, 0),
            Align::Center => (n_padding / 2, 0, n_padding - n_padding / 2),
            Align::AfterSign => (0, n_padding, 0),
        };
        let mut out = String::with_capacity(body.len() + n_padding + 8);
        out.extend(std::iter::repeat_n(fill, lpad));
        out.extend(sign);
        out.extend(std::iter::repeat_n(fill, spad));
        out.push_str(&grouped);
        if has_decimal {
            out.push('.');
        }
        out.push_str(remainder);
        out.extend(std::iter::repeat_n(fill, rpad));
        out
    }
}

/// CPython's `_PyUnicode_InsertThousandsGrouping` for groups of three: the digits, padded
/// with zeros to `min_width` characters (separators included), separated by `sep`. A
/// zero-padded number can come out one longer than `min_width`: a group never starts with a
/// separator (`format(1234, "08,")` is `"0,001,234"`).
fn insert_grouping(digits: &str, min_width: i64, sep: Option<char>) -> String {
    let Some(sep) = sep else {
        let zeros = (min_width - digits.len() as i64).max(0) as usize;
        return "0".repeat(zeros) + digits;
    };
    let bytes = digits.as_bytes();
    let mut remaining = bytes.len() as i64;
    let mut min_width = min_width;
    // Groups from the right, each as (zeros, digits), joined at the end.
    let mut groups: Vec<String> = Vec::new();
    loop {
        let l = 3.min(remaining.max(min_width).max(1));
        let n_zeros = (l - remaining).max(0);
        let n_chars = remaining.min(l).max(0);
        let end = remaining as usize;
        let start = (remaining - n_chars) as usize;
        let mut g = "0".repeat(n_zeros as usize);
        g.push_str(&digits[start..end]);
        groups.push(g);
        remaining -= n_chars;
        min_width -= l;
        if remaining <= 0 && min_width <= 0 {
            break;
        }
        min_width -= 1; // the separator
    }
    groups.reverse();
    groups.join(&sep.to_string())
}

fn non_finite(x: f64, upper: bool) -> Option<String> {
    let s = if x.is_nan() {
        "nan"
    } else if x.is_infinite() {
        "inf"
    } else {
        return None;
    };
    Some(if upper {
        s.to_uppercase()
    } else {
        s.to_owned()
    })
}

/// Decimal digits (no trailing zeros, at least one digit) and `decpt`, the position of the
/// decimal point relative to the first digit (CPython's `_Py_dg_dtoa` convention: the value
/// is `0.d1d2… × 10^decpt`), from Rust's scientific formatting of `x >= 0`.
fn digits_and_decpt(sci: &str) -> (String, i32) {
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    if digits == "0" {
        return (digits, 1);
    }
    (digits, exp + 1)
}

/// CPython's `format_float_short` layout of `digits` × 10^(decpt - len).
fn lay_out(digits: &str, decpt: i32, use_exp: bool, add_dot_0: bool, upper: bool) -> String {
    if use_exp {
        let exp = decpt - 1;
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        let e = if upper { 'E' } else { 'e' };
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{first}{dot}{rest}{e}{sign}{:02}", exp.unsigned_abs());
    }
    let n = digits.len() as i32;
    if decpt <= 0 {
        format!("0.{}{digits}", "0".repeat((-decpt) as usize))
    } else if decpt >= n {
        let zeros = "0".repeat((decpt - n) as usize);
        if add_dot_0 {
            format!("{digits}{zeros}.0")
        } else {
            format!("{digits}{zeros}")
        }
    } else {
        let (int, frac) = digits.split_at(decpt as usize);
        format!("{int}.{frac}")
    }
}

/// `repr` of `x >= 0` (CPython's mode 'r': shortest round-trip digits, exponent when
/// `decpt <= -4 || decpt > 16`, `.0` added to integers).
fn float_body_repr(x: f64) -> String {
    if let Some(s) = non_finite(x, false) {
        return s;
    }
    let (digits, decpt) = digits_and_decpt(&format!("{x:e}"));
    lay_out(&digits, decpt, !(-4 < decpt && decpt <= 16), true, false)
}

/// `f` of `x >= 0`.
fn float_body_fixed(x: f64, precision: usize, upper: bool) -> String {
    if let Some(s) = non_finite(x, upper) {
        return s;
    }
    format!("{x:.precision$}")
}

/// `e` of `x >= 0`: Rust's correctly rounded digits, exponent as `e+05`.
fn float_body_exp(x: f64, precision: usize, upper: bool) -> String {
    if let Some(s) = non_finite(x, upper) {
        return s;
    }
    let sci = format!("{x:.precision$e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let e = if upper { 'E' } else { 'e' };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}{e}{sign}{:02}", exp.unsigned_abs())
}

/// `g` of `x >= 0` with `precision` significant digits; `add_dot_0` is the no-type case
/// (`format(x, ".3")`), which keeps a `.0` and switches to an exponent one digit earlier.
fn float_body_general(x: f64, precision: usize, add_dot_0: bool, upper: bool) -> String {
    if let Some(s) = non_finite(x, upper) {
        return s;
    }
    let p = precision.max(1);
    let (digits, decpt) = digits_and_decpt(&format!("{x:.prec$e}", prec = p - 1));
    let limit = if add_dot_0 { p as i64 - 1 } else { p as i64 };
    let use_exp = decpt <= -4 || i64::from(decpt) > limit;
    lay_out(&digits, decpt, use_exp, add_dot_0, upper)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected strings below were printed by CPython 3.11.7.

    #[test]
    fn zero_padding_with_grouping_pads_the_digits_not_the_field() {
        assert_eq!(format_i64(1234, "08,").unwrap(), "0,001,234");
        assert_eq!(format_i64(1234, "07,").unwrap(), "001,234");
        assert_eq!(format_f64(-1234.5, "012,.1f").unwrap(), "-0,001,234.5");
        assert_eq!(format_f64(f64::INFINITY, "08").unwrap(), "00000inf");
    }

    #[test]
    fn nan_never_shows_a_minus_sign() {
        assert_eq!(format_f64(-f64::NAN, "+").unwrap(), "+nan");
        assert_eq!(format_f64(-f64::NAN, ".2f").unwrap(), "nan");
        assert_eq!(repr_f64(-f64::NAN), "nan");
    }

    #[test]
    fn a_bad_spec_is_an_error_not_a_panic() {
        for spec in [
            ".",
            ".f",
            ",_",
            "_,",
            "10.2ff",
            "q",
            "#x",
            "z.2f",
            "10.2n",
            "99999999999f",
        ] {
            assert!(spec.parse::<FormatSpec>().is_err(), "{spec:?} parsed");
        }
        assert!(format_f64(1.0, "d").is_err());
    }
}
