//! Helpers for a lecture's own tests: run its command line into strings, and check what
//! every lecture's command line must do.
//!
//! The helpers run the lecture in-process with measured values masked (as CI compares
//! runs), without touching the process environment. A lecture's tests are then a few lines
//! in its own `tests/` folder:
//!
//! ```ignore
//! #[test]
//! fn prints_what_the_snapshot_pins() {
//!     insta::assert_snapshot!(lecture_kit::testing::output::<lecture07::Cli>(&[]));
//! }
//!
//! #[test]
//! fn the_command_line_behaves_like_every_lectures() {
//!     lecture_kit::testing::check_command_line::<lecture07::Cli>(env!("CARGO_BIN_EXE_lecture07"));
//! }
//! ```

use std::process::Command;

use crate::cli::{Lecture, MASK_ENV, Options};
use crate::error::Error;
use crate::out::Out;
use crate::report::{Block, Report};

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

/// Runs lecture `L` with `args` (without the program name), measured values masked.
pub fn run<L: Lecture>(args: &[&str]) -> Run {
    run_with::<L>(
        args,
        Options {
            mask_measured: true,
        },
    )
}

/// Runs lecture `L` with `args` and `options`.
pub fn run_with<L: Lecture>(args: &[&str], options: Options) -> Run {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let argv = std::iter::once("lecture").chain(args.iter().copied());
    let code = crate::cli::run::<L>(argv, &mut out, &mut err, options);
    Run {
        code,
        stdout: String::from_utf8(out).expect("lecture output is UTF-8"),
        stderr: String::from_utf8(err).expect("lecture errors are UTF-8"),
    }
}

/// Runs lecture `L` once per entry of `renderings`, each time with `args` followed by that
/// entry's flags (`&[&[], &["--format", "json"]]`), measured values masked, as
/// [`run`] would, but computes the demos once: the report the first run makes is written
/// again for the others (a report that fails is made anew for each). For sweeps over many
/// command lines, where the demos take most of the time; the flags a rendering adds must not
/// change what the demos compute (`--format` does not). Panics on a rendering with `--out`
/// or `--plot`: a file written checks the files the demos read, which only [`run`] records.
pub fn run_renderings<L: Lecture>(args: &[&str], renderings: &[&[&str]]) -> Vec<Run> {
    let writes = |flag: &&str| flag.starts_with("--out") || flag.starts_with("--plot");
    assert!(
        !renderings.iter().any(|more| more.iter().any(writes)),
        "run_renderings prints to standard output: run each --out or --plot with `run`"
    );
    let mut made: Option<Report> = None;
    let mut report = |matches: &clap::ArgMatches| {
        if let Some(r) = &made {
            return Ok(r.clone());
        }
        let r = crate::cli::report_of::<L>(matches)?;
        made = Some(r.clone());
        Ok(r)
    };
    let options = Options {
        mask_measured: true,
    };
    renderings
        .iter()
        .map(|more| {
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let argv: Vec<std::ffi::OsString> = std::iter::once("lecture")
                .chain(args.iter().copied())
                .chain(more.iter().copied())
                .map(Into::into)
                .collect();
            let code =
                crate::cli::run_reporting::<L>(&argv, &mut out, &mut err, options, &mut report);
            Run {
                code,
                stdout: String::from_utf8(out).expect("lecture output is UTF-8"),
                stderr: String::from_utf8(err).expect("lecture errors are UTF-8"),
            }
        })
        .collect()
}

/// What lecture `L` prints with `args` (measured values masked); panics with its error
/// message if it fails.
pub fn output<L: Lecture>(args: &[&str]) -> String {
    let r = run::<L>(args);
    assert_eq!(r.code, 0, "lecture failed: {}", r.stderr);
    r.stdout
}

/// The JSON `data` that section `id` (`"demo1"`) attaches when lecture `L` runs with `args`
/// (as `--format json` prints it, measured values masked); panics with the error message if
/// the run fails or has no such section.
pub fn data<L: Lecture>(args: &[&str], id: &str) -> serde_json::Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let r = run::<L>(&all);
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).expect("--format json is JSON");
    doc["sections"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["id"] == id))
        .map(|s| s["data"].clone())
        .unwrap_or_else(|| panic!("{args:?}: no section {id}"))
}

/// The report lecture `L` computes for `args` (measured values as measured): its tables'
/// numbers, for claim tests (`report.table("demo1_table1").unwrap().numbers("时间")`).
/// Panics with the error message if the flags are refused or the lecture fails.
pub fn report<L: Lecture>(args: &[&str]) -> Report {
    crate::cli::report::<L>(args).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// Checks what every lecture's command line must do, with `L`'s own flags and its binary
/// `bin` (`env!("CARGO_BIN_EXE_lecture07")`). See [`check_command_line_with`].
pub fn check_command_line<L: Lecture>(bin: &str) {
    check_command_line_with::<L>(|| Command::new(bin));
}

/// Checks what every lecture's command line must do; `lecture()` makes a command that runs
/// its binary. Two processes of the binary, with `RAYON_NUM_THREADS=1` and `2` and measured
/// values masked ([`MASK_ENV`]), print the same bytes, and what the runner prints in-process;
/// every demo of every script runs; `--list`, `--help` and every `--format` succeed (JSON
/// parses, names the lecture, carries no number behind a masked value; HTML is one page); a
/// demo that does not exist, a bad `--format` and an unknown flag exit with 2 and one line
/// that points to `--help`. Panics with what went wrong.
pub fn check_command_line_with<L: Lecture>(lecture: impl Fn() -> Command) {
    // The default run in every form, its demos computed once.
    let forms: [&[&str]; 4] = [
        &[],
        &["--format", "markdown"],
        &["--format", "json"],
        &["--format", "html"],
    ];
    let mut runs = run_renderings::<L>(&[], &forms).into_iter();
    let mut next = || runs.next().expect("one run per form");
    let first = next();
    let markdown = next();
    let json = next();
    let html = next();
    assert_eq!(first.code, 0, "the default run fails: {}", first.stderr);
    assert!(!first.stdout.is_empty(), "the default run prints nothing");
    let process = |threads: &str| {
        let out = lecture()
            .env(MASK_ENV, "1")
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .expect("the lecture's binary runs");
        let stdout = String::from_utf8(out.stdout).expect("lecture output is UTF-8");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "the binary fails: {stderr}");
        stdout
    };
    let (one, two) = (process("1"), process("2"));
    assert!(
        one == two,
        "two processes print different bytes (RAYON_NUM_THREADS=1 and 2, {MASK_ENV}=1): {}",
        first_difference(&one, &two)
    );
    assert!(
        one == first.stdout,
        "the binary prints other bytes than the runner in-process: {}",
        first_difference(&one, &first.stdout)
    );
    let unmasked = run_with::<L>(&[], Options::default());
    assert_eq!(unmasked.code, 0, "unmasked: {}", unmasked.stderr);
    for script in L::scripts() {
        for demo in script.numbers() {
            let n = demo.to_string();
            let r = run::<L>(&["--script", script.name, "--demo", &n]);
            assert_eq!(
                r.code, 0,
                "--script {} --demo {n}: {}",
                script.name, r.stderr
            );
        }
    }
    for args in [&["--list"][..], &["--help"]] {
        let r = run::<L>(args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    }
    assert_eq!(markdown.code, 0, "--format markdown: {}", markdown.stderr);
    assert_eq!(json.code, 0, "--format json: {}", json.stderr);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("--format json is JSON");
    assert_eq!(doc["lecture"], L::NUMBER, "the JSON names the lecture");
    assert_masked(&doc);
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

/// Every JSON object marked `"measured": true` carries no number: its values are `null`.
fn assert_masked(doc: &serde_json::Value) {
    match doc {
        serde_json::Value::Object(map) => {
            if map.get("measured") == Some(&serde_json::Value::Bool(true)) {
                let values = map.get("values").and_then(|v| v.as_array());
                assert!(
                    values.is_none_or(|v| v.iter().all(serde_json::Value::is_null)),
                    "a masked value still carries a number: {doc}"
                );
            }
            map.values().for_each(assert_masked);
        }
        serde_json::Value::Array(items) => items.iter().for_each(assert_masked),
        _ => {}
    }
}

/// Where two outputs first differ: the line number and both lines.
fn first_difference(a: &str, b: &str) -> String {
    let mut lines = a.lines().zip(b.lines()).enumerate();
    match lines.find(|(_, (x, y))| x != y) {
        Some((i, (x, y))) => format!("line {}: {x:?} vs {y:?}", i + 1),
        None => format!(
            "one output is longer ({} vs {} lines)",
            a.lines().count(),
            b.lines().count()
        ),
    }
}

/// What `print` puts on demo `number`'s output, as blocks (observations as written): for a
/// claim test that prints figures built by hand, e.g. a demo's figures with one value
/// changed to see the sentence that says so.
///
/// Errs as [`crate::run_demo`] does: a table that does not fit its headers, a number that
/// is not finite.
pub fn blocks(
    number: u8,
    print: impl FnOnce(&mut Out) -> Result<(), Error>,
) -> Result<Vec<Block>, Error> {
    let mut out = Out::new(number);
    print(&mut out)?;
    Ok(out.finish(true, "")?.blocks)
}
