//! Helpers for a lecture's own tests: run its command line into strings.
//!
//! A lecture's snapshot test is then a few lines in its own `tests/` folder:
//!
//! ```ignore
//! #[test]
//! fn prints_what_the_snapshot_pins() {
//!     insta::assert_snapshot!(lecture_kit::testing::output::<lecture07::Cli>(&[]));
//! }
//! ```

use crate::cli::{Lecture, exit_code};

/// What one run of a lecture's command line printed, and its exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// The process exit code (0, 1 or 2).
    pub code: u8,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs lecture `L` with `args` (without the program name).
pub fn run<L: Lecture>(args: &[&str]) -> Run {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let argv = std::iter::once("lecture").chain(args.iter().copied());
    let code = exit_code::<L>(argv, &mut out, &mut err);
    Run {
        code,
        stdout: String::from_utf8(out).expect("lecture output is UTF-8"),
        stderr: String::from_utf8(err).expect("lecture errors are UTF-8"),
    }
}

/// What lecture `L` prints with `args`; panics with its error message if it fails.
pub fn output<L: Lecture>(args: &[&str]) -> String {
    let r = run::<L>(args);
    assert_eq!(r.code, 0, "lecture failed: {}", r.stderr);
    r.stdout
}

/// Checks what every lecture's command line must do, with `L`'s own flags: the default
/// run succeeds and prints the same bytes twice; `--list` and every `--format` succeed
/// (JSON parses, HTML is one page); a demo that does not exist, a bad `--format` and an
/// unknown flag exit with 2 and one line that points to `--help`. Panics with what went
/// wrong.
pub fn check_command_line<L: Lecture>() {
    let first = run::<L>(&[]);
    assert_eq!(first.code, 0, "the default run fails: {}", first.stderr);
    assert!(!first.stdout.is_empty(), "the default run prints nothing");
    assert_eq!(run::<L>(&[]), first, "two runs print different bytes");
    for args in [&["--list"][..], &["--format", "markdown"], &["--help"]] {
        let r = run::<L>(args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    }
    let json = run::<L>(&["--format", "json"]);
    assert_eq!(json.code, 0, "--format json: {}", json.stderr);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("--format json is JSON");
    assert_eq!(doc["lecture"], L::NUMBER, "the JSON names the lecture");
    let html = run::<L>(&["--format", "html"]);
    assert_eq!(html.code, 0, "--format html: {}", html.stderr);
    assert!(
        html.stdout.starts_with("<!DOCTYPE html>") && html.stdout.ends_with("</html>\n"),
        "--format html prints one page"
    );
    for args in [
        &["--demo", "255"][..],
        &["--demo", "abc"],
        &["--format", "xml"],
        &["--no-such-flag"],
        &["--script", "no-such-script"],
    ] {
        let r = run::<L>(args);
        assert_eq!(r.code, 2, "{args:?} should be refused: {r:?}");
        assert_eq!(r.stderr.lines().count(), 1, "{args:?}: one line: {r:?}");
        assert!(
            r.stderr.contains("--help"),
            "{args:?}: points to --help: {r:?}"
        );
        assert!(r.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
}
