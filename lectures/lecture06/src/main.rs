//! `cargo run -p lecture06 [-- FLAGS]`: prints lecture 6 (see `--help`).

use std::process::ExitCode;

fn main() -> ExitCode {
    lecture06::cli::main_with(
        std::env::args_os(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    )
}
