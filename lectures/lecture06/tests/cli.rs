//! The `lecture06` binary as a student runs it.

use std::process::{Command, Stdio};

#[test]
fn a_reader_that_leaves_early_is_not_an_error() {
    // `cargo run -p lecture06 | head -3`: the pipe closes before the lecture is done.
    let mut child = Command::new(env!("CARGO_BIN_EXE_lecture06"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // close the read end at once: every write gets EPIPE
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "",
        "no panic message, no error"
    );
}

#[test]
fn the_binary_prints_the_whole_lecture() {
    let out = Command::new(env!("CARGO_BIN_EXE_lecture06"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut expected = Vec::new();
    lecture06::run(&mut expected).unwrap();
    assert_eq!(out.stdout, expected);
}
