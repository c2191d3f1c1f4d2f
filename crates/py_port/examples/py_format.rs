//! Reads the lines `tools/py_format/py_format.py` printed and prints them again with the
//! result recomputed by py_port::format, so that `tools/numpy_rng/check.sh` can `cmp` the two.
//!
//! ```sh
//! cargo run -p py_port --example py_format -- target/py_format/python.txt > target/py_format/rust.txt
//! ```

#[path = "../tests/support/py_format.rs"]
mod py_format;

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

fn run() -> Result<(), String> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: py_format PYTHON_OUTPUT")?;
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let mut out = BufWriter::new(io::stdout().lock());
    let written = text
        .lines()
        .try_for_each(|line| writeln!(out, "{}", py_format::recompute(line)))
        .and_then(|()| out.flush());
    match written {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e.to_string()),
        _ => Ok(()),
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(io::stderr(), "py_format: {e}");
            ExitCode::FAILURE
        }
    }
}
