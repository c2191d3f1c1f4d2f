//! What lecture 6 prints, pinned byte for byte (insta snapshots in `tests/snapshots/`).

use lecture_kit::testing::output;
use lecture06::Cli;

#[test]
fn lecture06_prints_what_the_snapshot_pins() {
    insta::assert_snapshot!("lecture06", output::<Cli>(&[]));
}

#[test]
fn markdown_export_prints_every_table_under_a_heading_and_nothing_else() {
    let md = output::<Cli>(&["--format", "markdown"]);
    insta::assert_snapshot!("lecture06_markdown", md);
    assert_eq!(
        md.matches("### ").count(),
        5,
        "two tables in demo 1, one in demo 2, two in demo 3"
    );
    for line in md.lines().filter(|l| !l.is_empty()) {
        assert!(line.starts_with("### ") || line.starts_with('|'), "{line}");
    }
}
