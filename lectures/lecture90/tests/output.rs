//! What lecture 90 prints (snapshots in `tests/snapshots/`), what it claims, and the
//! command line every lecture shares.

use lecture_kit::testing::{check_command_line, output, report};
use lecture90::Cli;

#[test]
fn lecture90_prints_what_the_snapshot_pins() {
    insta::assert_snapshot!(output::<Cli>(&[]));
}

#[test]
fn the_command_line_behaves_like_every_lectures() {
    check_command_line::<Cli>(env!("CARGO_BIN_EXE_lecture90"));
}

/// The claim of demo 1, on the cards that hold batch 256 at context 1024: a step takes longer with the batch, but less than the
/// batch grows, so each token costs less.
#[test]
fn a_bigger_batch_shares_the_weight_reads_so_each_token_costs_less() {
    for hw in ["H100", "H200", "A100", "B200", "MI300X"] {
        let report = report::<Cli>(&["--hw", hw]);
        let table = report.table("demo1_table1").expect("demo 1's table");
        let (step, per_token) = (table.numbers("一步"), table.numbers("每个 token"));
        assert_eq!(step.len(), 4, "{hw}");
        assert!(step.windows(2).all(|w| w[0] <= w[1]), "{hw}: {step:?}");
        assert!(
            per_token.windows(2).all(|w| w[1] < w[0]),
            "{hw}: {per_token:?}"
        );
    }
}
