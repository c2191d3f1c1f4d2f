//! `cargo run -p lecture90 [-- FLAGS]`: prints lecture 90 (see `--help`).

fn main() -> std::process::ExitCode {
    lecture_kit::main::<lecture90::Cli>()
}
