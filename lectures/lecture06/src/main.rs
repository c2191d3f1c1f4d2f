//! `cargo run -p lecture06`: prints lecture 6 to standard output.

use std::io::{self, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut out = io::BufWriter::new(io::stdout().lock());
    let result =
        lecture06::run(&mut out).and_then(|()| out.flush().map_err(lecture06::Error::from));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // `lecture06 | head -3`: the reader left; that is not a failure.
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("lecture06: {e}");
            }
            ExitCode::FAILURE
        }
    }
}
