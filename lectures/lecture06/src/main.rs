//! `cargo run -p lecture06 [-- FLAGS]`: prints lecture 6 (see `--help`).

fn main() -> std::process::ExitCode {
    lecture_kit::main::<lecture06::Cli>()
}
