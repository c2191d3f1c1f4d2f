//! The format-spec mini-language parsed: `[[fill]align][sign][0][width][,|_][.precision][type]`,
//! as CPython's `parse_internal_render_format_spec` reads it.

use super::MAX_WIDTH_OR_PRECISION;
use crate::Error;
use std::fmt;
use std::str::FromStr;

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
    pub(super) text: String,
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
