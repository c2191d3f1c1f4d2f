//! The what-if sweep: every command line of `sweep/commands.txt` prints what it printed when
//! the sweep was recorded, byte for byte — its text (or the format it asks for) and, where
//! it asks for no format, its `--format json` document too (every number at full
//! precision), with the exit code and standard error of each run.
//!
//! `sweep/expected.txt` holds, per command line, the exit code and the SHA-256 of standard
//! output and standard error of each run. It pins behaviour through refactors: a change
//! that moves code must leave it alone. A change meant to alter what some command prints
//! records the sweep again (`SWEEP_RECORD=1 cargo test -p lecture06 --test lecture sweep::`) and says
//! in its commit which lines changed and why (`git diff` of `expected.txt` names them).

use lecture_kit::testing::{Run, run_renderings};
use lecture06::Cli;
use sha2::{Digest, Sha256};

const COMMANDS: &str = include_str!("sweep/commands.txt");
const EXPECTED: &str = "tests/lecture/sweep/expected.txt";

/// One run's fingerprint: exit code, then the digests of standard output and error.
fn fingerprint(r: &Run) -> String {
    let digest = |s: &str| format!("{:x}", Sha256::digest(s.as_bytes()));
    format!(
        "{} {} {}",
        r.code,
        &digest(&r.stdout)[..16],
        &digest(&r.stderr)[..16]
    )
}

/// The sweep's line for one command line: its runs' fingerprints, then the command line.
/// The JSON document is the same report rendered again (`run_renderings`: the demos run
/// once), which prints what a second process with `--format json` prints.
fn line(command: &str) -> String {
    let args: Vec<&str> = command.split_whitespace().collect();
    let asks_a_format = args.iter().any(|a| *a == "--format" || *a == "--list");
    let renderings: &[&[&str]] = if asks_a_format {
        &[&[]]
    } else {
        &[&[], &["--format", "json"]]
    };
    let runs = run_renderings::<Cli>(&args, renderings);
    let own = fingerprint(&runs[0]);
    let json = runs.get(1).map_or("-".to_string(), fingerprint);
    format!("{own} | {json} | {command}")
}

#[test]
fn every_what_if_prints_what_it_printed_when_the_sweep_was_recorded() {
    let got: Vec<String> = COMMANDS.lines().map(line).collect();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(EXPECTED);
    if std::env::var_os("SWEEP_RECORD").is_some() {
        std::fs::write(&path, got.join("\n") + "\n").unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap();
    let want: Vec<&str> = expected.lines().collect();
    assert_eq!(
        want.len(),
        got.len(),
        "commands.txt and expected.txt differ in length"
    );
    let changed: Vec<String> = want
        .iter()
        .zip(&got)
        .filter(|(w, g)| *w != g)
        .map(|(w, g)| format!("  was {w}\n  now {g}"))
        .collect();
    assert!(
        changed.is_empty(),
        "{} of {} command lines print something else:\n{}",
        changed.len(),
        got.len(),
        changed.join("\n")
    );
}
