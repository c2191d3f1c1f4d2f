//! Recomputes the lines of `tools/py_format/py_format.py` with py_port::format. Shared by
//! `examples/py_format.rs` (the full check against Python) and `tests/py_format_golden.rs`.

use py_port::format::{float_hex, format_f64, format_i64, repr_f64};

/// Python's `float.fromhex` for the strings `float.hex` prints (`[-]0x1.<13 hex>p<exp>`,
/// `[-]0x0.<13 hex>p-1022`, `[-]0x0.0p+0`, `inf`, `-inf`, `nan`), rebuilt from the bits.
pub fn parse_float_hex(s: &str) -> Option<f64> {
    match s {
        "inf" => return Some(f64::INFINITY),
        "-inf" => return Some(f64::NEG_INFINITY),
        "nan" => return Some(f64::NAN),
        _ => {}
    }
    let (negative, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let s = s.strip_prefix("0x")?;
    let (lead, s) = s.split_once('.')?;
    let (frac, exp) = s.split_once('p')?;
    let exp: i64 = exp.parse().ok()?;
    let frac = u64::from_str_radix(&format!("{frac:0<13}"), 16).ok()?;
    let magnitude = match lead {
        "1" => (((exp + 1023) as u64) << 52) | frac,
        "0" => frac,
        _ => return None,
    };
    let sign = if negative { 1u64 << 63 } else { 0 };
    Some(f64::from_bits(sign | magnitude))
}

/// The line with its last field recomputed by py_port (`!error` for an `Err`).
pub fn recompute(line: &str) -> String {
    let fields: Vec<&str> = line.split('\t').collect();
    let [kind, value, spec, _python] = fields[..] else {
        return format!("malformed line: {line}");
    };
    let ours = match kind {
        "i" => match value.parse::<i64>() {
            Ok(n) => format_i64(n, spec).unwrap_or_else(|_| "!error".to_owned()),
            Err(e) => format!("bad int {value}: {e}"),
        },
        _ => match (kind, parse_float_hex(value)) {
            ("f", Some(x)) => format_f64(x, spec).unwrap_or_else(|_| "!error".to_owned()),
            ("r", Some(x)) => repr_f64(x),
            ("h", Some(x)) => float_hex(x),
            _ => format!("bad line kind {kind} or value {value}"),
        },
    };
    format!("{kind}\t{value}\t{spec}\t{ours}")
}
