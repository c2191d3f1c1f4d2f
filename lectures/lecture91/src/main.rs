//! `cargo run -p lecture91 [-- FLAGS]`: prints lecture 91 (see `--help`).

fn main() -> std::process::ExitCode {
    lecture_kit::main::<lecture91::Cli>()
}
