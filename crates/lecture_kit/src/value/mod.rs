//! Typed values: what a demo puts in a table cell or a line, written once.
//!
//! A [`Value`] is a number (or a label) together with how the lecture prints it and its
//! unit: `time(t)` prints `7.04 ms` (`console::fmt_time`) and exports `0.00704` seconds;
//! `speedup(s)` prints `1.93×`; `percent(0.15)` prints `15%` and exports `0.15`. The text
//! and Markdown renderers print the text; CSV and JSON get the raw number and the unit.
//! Each value also prints itself (`Display`), so a sentence reads like the Python f-string
//! it ports: `format!("c = {}", fixed(c, 3))` is `f"c = {c:.3f}"`.
//!
//! | Python | value | prints | exports |
//! |---|---|---|---|
//! | `n` (an int) | `int(n)`, or `n` itself in [`row!`](crate::row) | `17` | `17` |
//! | `"链 γ=4"` | `label(s)`, or `s` itself | `链 γ=4` | the text |
//! | `fmt_time(t)` | [`time`]`(t)` | `7.04 ms` | `0.00704` \[s\] |
//! | `f"{x:.3f}"` | [`fixed`]`(x, 3)` | `0.193` | `0.193` |
//! | `f"{t / t0:.3f}"` (a ratio) | [`ratio`]`(x, 3)` | `1.000` | `1.0` \[×\] |
//! | `f"{s:.2f}×"` | [`speedup`]`(s)` | `1.93×` | `1.93` \[×\] |
//! | `f"{x:.0%}"` | [`percent`]`(x)` | `15%` | `0.15` |
//! | `f"{x:.2%}"` | [`percent_fixed`]`(x, 2)` | `12.35%` | `0.123456` |
//! | `f"{x:,.0f}"` | [`thousands`]`(x)` | `1,234,567` | `1234567.0` |
//! | `f"{x:,.2f}"` | [`thousands_fixed`]`(x, 2)` | `1,234,567.89` | `1234567.891` |
//! | `f"{x}"` (a float) | [`py`]`(x)` | `0.8` | `0.8` |
//! | `f"{t*1e3:.2f} ms"` (any other format) | [`number`]`(text, x)` | the text | `x` |
//! | `"是" if ok else "否"` | [`boolean`]`(text, ok)` | `是` | `true` |
//! | `"放不下"` (nothing to compute) | [`missing`]`(s)` | `放不下` | empty / `null` |
//! | `f"γ={g}, {s:.2f}×"` | [`parts`]`("γ={}, {}", [int(g), speedup(s)])` | `γ=4, 1.93×` | one field per part |
//!
//! A figure measured while the lecture runs (a wall-clock time, this machine's bandwidth)
//! is [`measured`]: it prints as usual, and as a fixed placeholder ([`MASKED`]) when the
//! runner masks measured values (see [`crate::cli::MASK_ENV`]), so that a lecture's output
//! stays byte-identical from run to run.

pub mod pyfmt;

use std::fmt;

use serde::Serialize;

pub use crate::chrome::MASKED;

/// One raw value behind a cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Datum {
    /// An integer (a count, a batch size, γ).
    Int(i64),
    /// A real number in the field's unit.
    Number(f64),
    /// A label.
    Text(String),
    /// A yes/no.
    Bool(bool),
    /// Nothing (e.g. "放不下"): an empty CSV field, `null` in JSON.
    Missing,
}

/// One typed value: its printed text, its raw value and unit (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    /// The printed text; for [`parts`], the template with one `{}` per part.
    text: String,
    kind: Kind,
    unit: String,
    name: Option<String>,
    measured: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    One(Datum),
    Missing,
    Parts(Vec<Value>),
}

/// An integer (a count, a batch size, γ), printed as is.
pub fn int(n: impl TryInto<i64>) -> Value {
    match n.try_into() {
        Ok(n) => Value::one(n.to_string(), Datum::Int(n), ""),
        Err(_) => Value::one("overflow".into(), Datum::Missing, ""),
    }
}

/// A label (a name, a shape), printed as is; its value is the text.
pub fn label(text: impl Into<String>) -> Value {
    let text = text.into();
    Value::one(text.clone(), Datum::Text(text), "")
}

/// A duration in seconds, printed as `console::fmt_time` does (`7.04 ms`, `952.4 µs`).
pub fn time(seconds: f64) -> Value {
    Value::one(console::fmt_time(seconds), Datum::Number(seconds), "s")
}

/// A number with `digits` decimals: Python's `f"{x:.3f}"`.
pub fn fixed(x: f64, digits: usize) -> Value {
    Value::one(pyfmt::fixed(x, digits), Datum::Number(x), "")
}

/// A ratio of two like quantities with `digits` decimals (`1.000`), unit `×`.
pub fn ratio(x: f64, digits: usize) -> Value {
    Value::one(pyfmt::fixed(x, digits), Datum::Number(x), "×")
}

/// A speedup: `1.93×` (two decimals), unit `×`.
pub fn speedup(x: f64) -> Value {
    Value::one(format!("{}×", pyfmt::fixed(x, 2)), Datum::Number(x), "×")
}

/// A fraction as a whole percentage: Python's `f"{x:.0%}"` (`15%`); exports the fraction.
pub fn percent(x: f64) -> Value {
    Value::one(pyfmt::percent(x, 0), Datum::Number(x), "")
}

/// A fraction as a percentage with `digits` decimals: Python's `f"{x:.2%}"` (`12.34%`,
/// CPython's rounding of `100 · x`); exports the fraction.
pub fn percent_fixed(x: f64, digits: usize) -> Value {
    Value::one(pyfmt::percent(x, digits), Datum::Number(x), "")
}

/// A number with thousands separators and no decimals: Python's `f"{x:,.0f}"`.
pub fn thousands(x: f64) -> Value {
    Value::one(pyfmt::thousands(x, 0), Datum::Number(x), "")
}

/// A number with thousands separators and `digits` decimals: Python's `f"{x:,.2f}"`.
pub fn thousands_fixed(x: f64, digits: usize) -> Value {
    Value::one(pyfmt::thousands(x, digits), Datum::Number(x), "")
}

/// A float as Python prints it with `f"{x}"` or `print(x)`: `0.8`, `1.0`, `1e-05`.
pub fn py(x: f64) -> Value {
    Value::one(pyfmt::repr(x), Datum::Number(x), "")
}

/// A number printed as the demo writes it (`number(format!("{:.2} ms", t * 1e3), t)`), for a
/// format the constructors above do not cover; its value is `x`.
pub fn number(text: impl Into<String>, x: f64) -> Value {
    Value::one(text.into(), Datum::Number(x), "")
}

/// A yes/no printed as `text` ("是" / "否"); its value is `b` (`true` / `false` in JSON).
pub fn boolean(text: impl Into<String>, b: bool) -> Value {
    Value::one(text.into(), Datum::Bool(b), "")
}

/// Words where there is nothing to compute ("放不下"): no value behind it (an empty CSV
/// field, `null` in JSON), in every field of its column.
pub fn missing(text: impl Into<String>) -> Value {
    Value {
        text: text.into(),
        kind: Kind::Missing,
        unit: String::new(),
        name: None,
        measured: false,
    }
}

/// Several values in one printed cell: `template` has one `{}` per part, filled with each
/// part's text (`parts("γ={}, {}", [int(4), speedup(1.93)])` prints `γ=4, 1.93×`). Each part
/// is one field of the column (its name from [`Value::named`], else the column's header).
/// A template without `{}` prints as is and carries the parts as data only
/// (`parts("不投机", [int(0), speedup(1.0)])`).
pub fn parts(template: impl Into<String>, parts: impl IntoIterator<Item = Value>) -> Value {
    Value {
        text: template.into(),
        kind: Kind::Parts(parts.into_iter().collect()),
        unit: String::new(),
        name: None,
        measured: false,
    }
}

/// `value`, measured while the lecture runs: see [`Value::measured`].
pub fn measured(value: Value) -> Value {
    value.measured()
}

impl Value {
    fn one(text: String, datum: Datum, unit: &str) -> Self {
        Value {
            text,
            kind: Kind::One(datum),
            unit: unit.to_string(),
            name: None,
            measured: false,
        }
    }

    /// The same value in `unit` (`int(n).unit("tokens")`); the CSV header says it.
    pub fn unit(mut self, unit: &str) -> Self {
        self.unit = unit.to_string();
        self
    }

    /// The same value named `name`: its field's name when it is a part of [`parts`].
    pub fn named(mut self, name: &str) -> Self {
        self.name = Some(name.to_string());
        self
    }

    /// The same value with `text` printed after it (`speedup(s).suffix("（变慢）")`).
    pub fn suffix(mut self, text: &str) -> Self {
        self.text.push_str(text);
        self
    }

    /// The same value, marked as measured at run time (a wall-clock time, this machine's
    /// bandwidth): printed as usual, or as [`MASKED`] when the runner masks measured values;
    /// the JSON export says `"measured": true` (and, when masked, carries no number).
    pub fn measured(mut self) -> Self {
        self.measured = true;
        self
    }

    /// Whether this value, or one of its parts, was measured at run time.
    pub fn is_measured(&self) -> bool {
        self.measured || matches!(&self.kind, Kind::Parts(p) if p.iter().any(Value::is_measured))
    }

    /// The printed text (a template filled with its parts' texts).
    pub fn text(&self) -> String {
        match &self.kind {
            Kind::Parts(parts) => fill(&self.text, parts.iter().map(|p| p.text())),
            _ => self.text.clone(),
        }
    }

    /// The unit of a single value (`""` for none).
    pub fn unit_str(&self) -> &str {
        &self.unit
    }

    /// The raw values behind the text: one for a single value, one per part, none for
    /// [`missing`].
    pub fn data(&self) -> Vec<Datum> {
        match &self.kind {
            Kind::One(d) => vec![d.clone()],
            Kind::Missing => Vec::new(),
            // A missing part is one empty field of its own.
            Kind::Parts(parts) => parts
                .iter()
                .flat_map(|p| {
                    if p.is_missing() {
                        vec![Datum::Missing]
                    } else {
                        p.data()
                    }
                })
                .collect(),
        }
    }

    /// Whether there is nothing behind this value ([`missing`]).
    pub fn is_missing(&self) -> bool {
        self.kind == Kind::Missing
    }

    /// The `(name, unit)` of each field this value fills, the name defaulting to `header`;
    /// `None` for [`missing`] (it fits any column). Errs when a template's `{}` do not match
    /// its parts, or a part is itself made of parts.
    pub(crate) fn fields(&self, header: &str) -> Result<Option<Vec<(String, String)>>, String> {
        let field = |v: &Value| {
            let name = v.name.clone().unwrap_or_else(|| header.to_string());
            (name, v.unit.clone())
        };
        match &self.kind {
            Kind::Missing => Ok(None),
            Kind::One(_) => Ok(Some(vec![field(self)])),
            Kind::Parts(parts) => {
                let holes = self.text.matches("{}").count();
                if holes != 0 && holes != parts.len() {
                    return Err(format!(
                        "{:?} has {holes} {{}} for {} parts",
                        self.text,
                        parts.len()
                    ));
                }
                if parts.iter().any(|p| matches!(p.kind, Kind::Parts(_))) {
                    return Err(format!("{:?}: a part is itself made of parts", self.text));
                }
                Ok(Some(parts.iter().map(field).collect()))
            }
        }
    }

    /// The template of a value made of parts, or the text of a single one.
    pub(crate) fn template(&self) -> &str {
        &self.text
    }

    /// The parts of a value made of parts (each measured if the whole is); the value
    /// itself otherwise.
    pub(crate) fn pieces(&self) -> Vec<Value> {
        match &self.kind {
            Kind::Parts(parts) => parts
                .iter()
                .map(|p| {
                    if self.measured {
                        p.clone().measured()
                    } else {
                        p.clone()
                    }
                })
                .collect(),
            _ => vec![self.clone()],
        }
    }
}

/// The printed texts of `items` (values, strings, numbers), separated by `sep`: Python's
/// `sep.join(...)` for a list of anything printable.
///
/// ```
/// use lecture_kit::value::{fixed, join};
/// assert_eq!(join([0.42, 0.671].map(|f| fixed(f, 2)), " / "), "0.42 / 0.67");
/// assert_eq!(join(["batch 1", "batch 16"], ", "), "batch 1, batch 16");
/// ```
pub fn join<T: fmt::Display>(items: impl IntoIterator<Item = T>, sep: &str) -> String {
    let mut out = String::new();
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(&item.to_string());
    }
    out
}

/// `template` with each `{}` replaced by the next of `texts`, in order.
pub(crate) fn fill(template: &str, texts: impl IntoIterator<Item = String>) -> String {
    let mut texts = texts.into_iter();
    let mut out = String::new();
    let mut pieces = template.split("{}");
    if let Some(first) = pieces.next() {
        out.push_str(first);
    }
    for piece in pieces {
        out.push_str(&texts.next().unwrap_or_default());
        out.push_str(piece);
    }
    out
}

impl fmt::Display for Value {
    /// The printed text, so that a value reads inside a sentence: `format!("c = {}", fixed(c, 3))`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        label(s)
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        label(s)
    }
}

macro_rules! from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(n: $t) -> Self {
                int(n)
            }
        }
    )*};
}

from_int!(i32, i64, u8, u32, u64, usize);

/// A table row of [`Value`]s, each converted with `Value::from`: integers and strings as
/// they are, typed values as written.
///
/// ```
/// use lecture_kit::{row, value::{time, ratio}};
/// let r = row![17, time(7.04e-3), ratio(1.0, 3)];
/// assert_eq!(r.iter().map(|v| v.to_string()).collect::<Vec<_>>(), ["17", "7.04 ms", "1.000"]);
/// ```
#[macro_export]
macro_rules! row {
    ($($value:expr),* $(,)?) => {
        vec![$($crate::Value::from($value)),*]
    };
}

/// A table's column names, in order, from names (`&str` or `String`, each `to_string`ed)
/// and, after `..`, lists of them: Python's `["批", f"{N} 个"] + [f"γ={g}" for g in gammas]`
/// in one line, where an array of `&str` cannot hold a formatted name.
///
/// ```
/// use lecture_kit::columns;
/// const N: usize = 48;
/// let gammas = [2, 4];
/// let names = columns!["批", format!("{N} 个"), ..gammas.iter().map(|g| format!("γ={g}"))];
/// assert_eq!(names, ["批", "48 个", "γ=2", "γ=4"]);
/// ```
#[macro_export]
macro_rules! columns {
    (@push $names:ident;) => {};
    (@push $names:ident; .. $list:expr $(, $($rest:tt)*)?) => {
        $names.extend(::core::iter::IntoIterator::into_iter($list).map(|n| n.to_string()));
        $($crate::columns!(@push $names; $($rest)*);)?
    };
    (@push $names:ident; $name:expr $(, $($rest:tt)*)?) => {
        $names.push($name.to_string());
        $($crate::columns!(@push $names; $($rest)*);)?
    };
    () => {
        ::std::vec::Vec::<::std::string::String>::new()
    };
    ($($items:tt)+) => {{
        let mut names: ::std::vec::Vec<::std::string::String> = ::std::vec::Vec::new();
        $crate::columns!(@push names; $($items)*);
        names
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_keep_the_order_of_names_and_lists_and_take_a_trailing_comma() {
        let none: [&str; 0] = [];
        let names = columns![..["a", "b"], "c", ..none, String::from("d"), ..vec![1, 2],];
        assert_eq!(names, ["a", "b", "c", "d", "1", "2"]);
        assert!(columns![].is_empty());
        assert_eq!(columns![..(1..=3)], ["1", "2", "3"]);
    }

    #[test]
    fn each_value_prints_like_its_python_format_and_keeps_the_number() {
        let cases = [
            (time(7.0437e-3), "7.04 ms", Datum::Number(7.0437e-3), "s"),
            (fixed(0.19253, 3), "0.193", Datum::Number(0.19253), ""),
            (ratio(1.0, 3), "1.000", Datum::Number(1.0), "×"),
            (speedup(1.925), "1.93×", Datum::Number(1.925), "×"),
            (percent(0.154), "15%", Datum::Number(0.154), ""),
            // CPython: f"{0.123456:.2%}", f"{0.0005:.1%}", f"{1234567.891:,.2f}".
            (
                percent_fixed(0.123456, 2),
                "12.35%",
                Datum::Number(0.123456),
                "",
            ),
            (percent_fixed(0.0005, 1), "0.1%", Datum::Number(0.0005), ""),
            (
                thousands_fixed(1234567.891, 2),
                "1,234,567.89",
                Datum::Number(1234567.891),
                "",
            ),
            (
                thousands(1234567.4),
                "1,234,567",
                Datum::Number(1234567.4),
                "",
            ),
            (py(0.8), "0.8", Datum::Number(0.8), ""),
            (int(17u64), "17", Datum::Int(17), ""),
            (label("链 γ=4"), "链 γ=4", Datum::Text("链 γ=4".into()), ""),
        ];
        for (v, text, datum, unit) in cases {
            assert_eq!(
                (v.text(), v.data(), v.unit_str()),
                (text.into(), vec![datum], unit)
            );
        }
        assert_eq!(int(u64::MAX).data(), vec![Datum::Missing], "no silent wrap");
    }

    #[test]
    fn parts_fill_their_template_and_export_one_value_each() {
        let v = parts(
            "γ={}, {}（验证 {}）",
            [
                int(4).named("γ"),
                speedup(1.93).named("加速比"),
                ratio(1.0, 2),
            ],
        );
        assert_eq!(v.to_string(), "γ=4, 1.93×（验证 1.00）");
        assert_eq!(
            v.data(),
            [Datum::Int(4), Datum::Number(1.93), Datum::Number(1.0)]
        );
        let fields = v.fields("上下文 512").unwrap().unwrap();
        assert_eq!(fields[0], ("γ".into(), "".into()));
        assert_eq!(fields[2], ("上下文 512".into(), "×".into()));
        assert!(parts("{} {}", [int(1)]).fields("h").is_err());
        assert!(parts("{}", [parts("{}", [int(1)])]).fields("h").is_err());
        assert_eq!(parts("不投机", [int(0)]).to_string(), "不投机");
        assert!(parts("{}", [measured(time(1.0))]).is_measured());
        assert_eq!(missing("放不下").fields("h").unwrap(), None);
    }

    #[test]
    fn join_puts_the_separator_between_the_texts_only() {
        assert_eq!(join(Vec::<String>::new(), ", "), "");
        assert_eq!(join([speedup(1.925)], ", "), "1.93×");
        assert_eq!(
            join([int(1), time(7.0437e-3), py(0.8)], "; "),
            "1; 7.04 ms; 0.8"
        );
        // std's join on the same texts.
        let texts = ["batch 1 1.93×", "batch 16 1.89×", "batch 512 plain"];
        assert_eq!(join(texts, "; "), texts.join("; "));
    }
}
