//! The shared command-line check on a made-up lecture with a measured table in its default
//! run (`tests/support`), run as separate processes of this test's own binary: the
//! lecture's `main` when `KIT_TOY_CHILD` is set (so this file has no libtest harness).
//!
//! It passes the check, and CI's determinism loop (`LECTURE_MASK_MEASURED=1`, then the
//! output of runs with `RAYON_NUM_THREADS=1`, `2` and unset compared byte for byte), while
//! its measured cells vary from run to run; a lecture that prints a measured value without
//! marking it fails the check.

mod support;

use std::panic;
use std::process::{Command, ExitCode};

use lecture_kit::MASK_ENV;
use lecture_kit::testing::check_command_line_with;
use support::Toy;

/// The lecture as a process: this binary with `KIT_TOY_CHILD` set (and `env`).
fn lecture(env: &[(&str, &str)]) -> Command {
    let mut c = Command::new(std::env::current_exe().expect("the test binary"));
    c.env("KIT_TOY_CHILD", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

fn stdout(mut c: Command) -> String {
    let out = c.output().expect("the lecture runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn the_shared_check_passes_with_a_measured_table_in_the_default_run() {
    check_command_line_with::<Toy>(|| lecture(&[]));
}

fn masked_runs_are_byte_identical_across_thread_counts_while_measured_cells_vary() {
    // What .ci/run does for every lecture, with the mask on.
    let masked = |threads: Option<&str>| {
        let mut c = lecture(&[(MASK_ENV, "1")]);
        match threads {
            Some(t) => c.env("RAYON_NUM_THREADS", t),
            None => c.env_remove("RAYON_NUM_THREADS"),
        };
        stdout(c)
    };
    let reference = masked(None);
    assert!(reference.contains("〔实测〕"), "{reference}");
    for threads in [Some("1"), Some("2"), None] {
        assert_eq!(masked(threads), reference, "RAYON_NUM_THREADS={threads:?}");
    }
    // Unmasked, the measured cells are live: the run's clock reading differs every time.
    let (a, b) = (stdout(lecture(&[])), stdout(lecture(&[])));
    assert_ne!(a, b, "two unmasked runs measure different values");
    assert!(!a.contains("〔实测〕"));
    let computed = |s: &str| s.split("演示 2").next().unwrap().to_string();
    assert_eq!(
        computed(&a),
        computed(&b),
        "what is computed stays identical"
    );
}

fn a_measured_value_that_is_not_marked_fails_the_check() {
    let hook = panic::take_hook();
    panic::set_hook(Box::new(|_| {})); // the panic is expected: keep stderr quiet
    let result = panic::catch_unwind(|| {
        check_command_line_with::<Toy>(|| lecture(&[("KIT_TOY_LEAK", "1")]));
    });
    panic::set_hook(hook);
    let message = result.expect_err("the check must fail");
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        message.contains("two processes print different bytes")
            && message.contains("本次运行的时刻"),
        "{message}"
    );
}

fn main() -> ExitCode {
    if std::env::var_os("KIT_TOY_CHILD").is_some() {
        return lecture_kit::main::<Toy>();
    }
    let tests: [(&str, fn()); 3] = [
        (
            "the_shared_check_passes_with_a_measured_table_in_the_default_run",
            the_shared_check_passes_with_a_measured_table_in_the_default_run,
        ),
        (
            "masked_runs_are_byte_identical_across_thread_counts_while_measured_cells_vary",
            masked_runs_are_byte_identical_across_thread_counts_while_measured_cells_vary,
        ),
        (
            "a_measured_value_that_is_not_marked_fails_the_check",
            a_measured_value_that_is_not_marked_fails_the_check,
        ),
    ];
    let mut failed = 0;
    for (name, test) in tests {
        let ok = panic::catch_unwind(test).is_ok();
        failed += usize::from(!ok);
        report(&format!(
            "test {name} ... {}",
            if ok { "ok" } else { "FAILED" }
        ));
    }
    report(&format!(
        "test result: {}. {} passed; {failed} failed",
        if failed == 0 { "ok" } else { "FAILED" },
        tests.len() - failed
    ));
    ExitCode::from(u8::from(failed > 0))
}

#[allow(clippy::print_stdout)] // a test harness's own report
fn report(line: &str) {
    println!("{line}");
}
