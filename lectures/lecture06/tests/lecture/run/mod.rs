//! Runs lecture 6's command line as a user would, for the command-line tests: in-process
//! (the runner the binary calls, with the binary's options: nothing masked), so that a test
//! process computes the toy model's run once for every command line it tries; and, where
//! the process itself is under test (its pipes, its folder, its own stdout), as the binary.

use std::process::{Command, Output};

use lecture_kit::cli::Options;
use lecture06::Cli;
use serde_json::Value;

/// What a run exits with: the code, as [`std::process::ExitStatus`] says it.
#[derive(Debug, Clone, Copy)]
pub struct Status(u8);

impl Status {
    pub fn success(self) -> bool {
        self.0 == 0
    }

    pub fn code(self) -> Option<i32> {
        Some(i32::from(self.0))
    }
}

/// One run of the command line: its exit status and what it printed.
#[derive(Debug)]
pub struct Ran {
    pub status: Status,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// What a run printed, in-process or as a process.
pub trait Printed {
    fn out(&self) -> &[u8];
    fn err(&self) -> &[u8];
}

impl Printed for Ran {
    fn out(&self) -> &[u8] {
        &self.stdout
    }
    fn err(&self) -> &[u8] {
        &self.stderr
    }
}

impl Printed for Output {
    fn out(&self) -> &[u8] {
        &self.stdout
    }
    fn err(&self) -> &[u8] {
        &self.stderr
    }
}

/// `lecture06 args`, in-process: the same runner and options as the binary (the kit's
/// command-line check holds the binary to the runner's bytes).
pub fn lecture06(args: &[&str]) -> Ran {
    let r = lecture_kit::testing::run_with::<Cli>(args, Options::default());
    Ran {
        status: Status(r.code),
        stdout: r.stdout.into_bytes(),
        stderr: r.stderr.into_bytes(),
    }
}

/// `lecture06 args` as a process of the binary.
pub fn process(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lecture06"))
        .args(args)
        .output()
        .unwrap()
}

pub fn stdout(o: &impl Printed) -> String {
    String::from_utf8(o.out().to_vec()).unwrap()
}

pub fn stderr(o: &impl Printed) -> String {
    String::from_utf8(o.err().to_vec()).unwrap()
}

pub fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let o = lecture06(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("--format json prints one JSON document")
}

/// The typed figures of one demo in a `--format json` document.
pub fn data<'a>(doc: &'a Value, id: &str) -> &'a Value {
    doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .map(|s| &s["data"])
        .unwrap_or_else(|| panic!("no section {id}"))
}

pub fn close(got: &Value, want: f64) {
    let got = got
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {got}"));
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "{got} vs {want}"
    );
}
