//! py_port's default_rng streams against values NumPy 2.4.6 wrote
//! (`tests/data/numpy_streams_golden.txt`: seeds 0 and 42, 40 draws of every case of
//! `tools/numpy_rng/numpy_streams.py`). `tools/numpy_rng/check.sh` regenerates that file with
//! the installed NumPy and compares 11 seeds × 10,000 draws in full; this test needs no Python.

// The full seed list is for the example; this test draws seeds 0 and 42 only.
#[allow(dead_code)]
#[path = "support/streams.rs"]
mod streams;

const GOLDEN: &str = include_str!("data/numpy_streams_golden.txt");

#[test]
fn every_stream_matches_what_numpy_2_4_6_drew_for_seeds_0_and_42() {
    let header = GOLDEN.lines().next().unwrap();
    assert!(
        header.starts_with("# numpy 2.4.6:"),
        "golden written by {header}"
    );
    let numpy: Vec<&str> = GOLDEN.lines().filter(|l| !l.starts_with('#')).collect();

    let mut ours = Vec::new();
    streams::write_streams(&mut ours, &[0, 42], 40).unwrap();
    let ours = String::from_utf8(ours).unwrap();
    let ours: Vec<&str> = ours.lines().collect();

    // 2 seeds × every case × (a header + 40 values): a shorter file would compare less.
    assert_eq!(numpy.len(), 2 * streams::CASES.len() * 41);
    let mut case = "";
    for (i, (n, o)) in numpy.iter().zip(&ours).enumerate() {
        if n.starts_with("==") {
            case = n;
        }
        assert_eq!(n, o, "line {} of the golden file, in {case}", i + 2);
    }
    assert_eq!(numpy.len(), ours.len());
}
