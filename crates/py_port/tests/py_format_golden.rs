//! py_port::format against CPython 3.11.7 (`tests/data/py_format_golden.txt`: about 900
//! (value, spec, result) lines that `tools/py_format/py_format.py --golden` printed).
//! `tools/numpy_rng/check.sh` compares the full set (about 93,000 lines) with the installed
//! Python; this test needs no Python.

#[path = "support/py_format.rs"]
mod py_format;

const GOLDEN: &str = include_str!("data/py_format_golden.txt");

#[test]
fn every_formatted_number_matches_what_cpython_3_11_printed() {
    let header = GOLDEN.lines().next().unwrap();
    assert!(
        header.starts_with("# Python 3.11.7:"),
        "golden written by {header}"
    );
    let lines: Vec<&str> = GOLDEN.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(lines.len() > 800, "only {} lines", lines.len());
    let wrong: Vec<String> = lines
        .iter()
        .filter_map(|&line| {
            let ours = py_format::recompute(line);
            (ours != line).then(|| format!("python: {line}\n  ours: {ours}"))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} differ:\n{}",
        wrong.len(),
        lines.len(),
        wrong.join("\n")
    );
}

#[test]
fn float_hex_strings_parse_back_to_their_bits() {
    for x in [
        0.1,
        -2.5,
        5e-324,
        2.2250738585072014e-308,
        f64::MAX,
        -0.0,
        0.0,
    ] {
        let hex = py_port::format::float_hex(x);
        assert_eq!(
            py_format::parse_float_hex(&hex).unwrap().to_bits(),
            x.to_bits(),
            "{hex}"
        );
    }
}
