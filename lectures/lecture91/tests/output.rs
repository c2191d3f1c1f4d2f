//! What lecture 91 prints (snapshots in `tests/snapshots/`), its claims checked against
//! values computed here by hand, and the command line every lecture shares. That it prints
//! what `tools/port_example/draft_agreement.py` prints is `tools/port_example/check.sh`'s job.

use lecture_kit::testing::{check_command_line, output, report};
use lecture91::Cli;

#[test]
fn lecture91_prints_what_the_snapshot_pins() {
    insta::assert_snapshot!(output::<Cli>(&[]));
}

#[test]
fn the_command_line_behaves_like_every_lectures() {
    check_command_line::<Cli>(env!("CARGO_BIN_EXE_lecture91"));
}

/// Demo 2 by hand: Llama-3.1-8B has 6,979,321,856 weights in its linear layers and
/// 1,050,939,392 in its embedding, LM head and norms, kept at 2 bytes; an H100 holds 80e9
/// bytes and a 4096-token sequence 4096 · 131,072 bytes of KV.
#[test]
fn the_capacity_keeps_the_embedding_and_lm_head_at_16_bits() {
    let r = report::<Cli>(&["--demo", "2"]);
    let t = r.table("demo2_table1").unwrap();
    let linear: f64 = 6_979_321_856.0;
    let sixteen: f64 = 1_050_939_392.0;
    for (row, bytes) in t.texts().iter().zip([2.0f64, 1.0, 0.5]) {
        let weights = bytes * linear + 2.0 * sixteen;
        let fits = ((80e9 - weights) / (4096.0 * 131_072.0)).floor();
        assert_eq!(row[1], format!("{:.2} GB", weights / 1e9), "{row:?}");
        assert_eq!(row[3], format!("{fits}"), "{row:?}");
    }
    assert_eq!(t.numbers("能装的序列"), [119.0, 132.0, 138.0]);
}

/// Demo 1's claims: fewer bits part from the target earlier, and a first difference is
/// never past the generated tokens; each bits-per-weight figure is bits + 16 / group.
#[test]
fn fewer_bits_part_from_the_target_earlier() {
    let r = report::<Cli>(&["--demo", "1"]);
    let t = r.table("demo1_table1").unwrap();
    assert_eq!(t.numbers("每个权重的位数"), [8.125, 4.125, 4.5]);
    let first = t.numbers("平均第几个 token 起不同");
    assert!(
        first.iter().all(|&f| (0.0..=32.0).contains(&f)),
        "{first:?}"
    );
    assert!(first[0] > first[1] && first[0] > first[2], "{first:?}");
    let agree = t.numbers("逐位置第一选择一致");
    assert!(agree[0] > 0.95 && agree[1] < agree[0], "{agree:?}");
}
