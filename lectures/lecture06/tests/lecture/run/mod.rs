//! Runs the `lecture06` binary as a user would, for the command-line tests.

use std::process::{Command, Output};

use serde_json::Value;

pub fn lecture06(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lecture06"))
        .args(args)
        .output()
        .unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

pub fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let o = lecture06(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("--format json prints one JSON document")
}

/// The typed figures of one demo in a `--format json` document.
pub fn data<'a>(doc: &'a Value, id: &str) -> &'a Value {
    doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .map(|s| &s["data"])
        .unwrap_or_else(|| panic!("no section {id}"))
}

pub fn close(got: &Value, want: f64) {
    let got = got
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {got}"));
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "{got} vs {want}"
    );
}
