//! Workspace-level tests: one module per lecture.
//!
//! Each module pins the lecture's whole printed output with an insta snapshot (so any
//! change to a printed byte is reviewed), and asserts the claims the lecture's text
//! makes against the figures it computes (so a snapshot is never the only check).

mod lecture06;

/// Runs a lecture's `run` into a string.
fn capture(run: impl FnOnce(&mut dyn std::io::Write) -> Result<(), ::lecture06::Error>) -> String {
    let mut out = Vec::new();
    run(&mut out).expect("the lecture prints without error");
    String::from_utf8(out).expect("lecture output is UTF-8")
}
