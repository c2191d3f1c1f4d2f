//! Prints py_port's default_rng streams in the format of `tools/numpy_rng/numpy_streams.py`,
//! so that `tools/numpy_rng/check.sh` can `cmp` the two.
//!
//! ```sh
//! cargo run -p py_port --example numpy_streams -- [--draws N] [--seeds 0,42]
//! ```

// The stream digests are for tests/numpy_golden.rs.
#[allow(dead_code)]
#[path = "../tests/support/streams.rs"]
mod streams;

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

fn run() -> Result<(), String> {
    let mut draws = 10_000;
    let mut seeds = streams::SEEDS.to_vec();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().ok_or(format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--draws" => draws = value.parse().map_err(|e| format!("--draws {value}: {e}"))?,
            "--seeds" => {
                seeds = value
                    .split(',')
                    .map(|s| s.parse().map_err(|e| format!("--seeds {s}: {e}")))
                    .collect::<Result<_, _>>()?;
            }
            _ => return Err(format!("unknown argument {arg}")),
        }
    }
    let mut out = BufWriter::new(io::stdout().lock());
    match streams::write_streams(&mut out, &seeds, draws).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e.to_string()),
        _ => Ok(()),
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(io::stderr(), "numpy_streams: {e}");
            ExitCode::FAILURE
        }
    }
}
