//! py_port's default_rng streams against what NumPy 2.4.6 drew, without Python:
//! - `tests/data/numpy_streams_golden.txt`: the values of seeds 0 and 42, 40 draws of every
//!   case of `tools/numpy_rng/numpy_streams.py`, to read and to point at the first wrong value;
//! - `tests/data/numpy_streams_digests.txt`: the length and CRC-32 of every full stream
//!   (11 seeds × 23 cases × 10,000 draws), which catches what 40 draws miss (a wrong ziggurat
//!   wedge test changes about one normal draw in 150).
//!
//! `tools/numpy_rng/check.sh` regenerates both files with the installed NumPy and compares the
//! full streams value by value.

#[path = "support/streams.rs"]
mod streams;

const GOLDEN: &str = include_str!("data/numpy_streams_golden.txt");
const DIGESTS: &str = include_str!("data/numpy_streams_digests.txt");

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

#[test]
fn every_full_stream_has_the_length_and_crc_of_numpys() {
    let header = DIGESTS.lines().next().unwrap();
    assert!(
        header.starts_with("# numpy 2.4.6:"),
        "digests written by {header}"
    );
    let numpy: Vec<&str> = DIGESTS.lines().filter(|l| !l.starts_with('#')).collect();
    let ours = streams::digest_lines(&streams::SEEDS, 10_000);
    assert_eq!(numpy.len(), streams::SEEDS.len() * streams::CASES.len());
    let wrong: Vec<String> = numpy
        .iter()
        .zip(&ours)
        .filter(|(n, o)| n != o)
        .map(|(n, o)| format!("numpy: {n}\n ours: {o}"))
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} streams differ:\n{}",
        wrong.len(),
        numpy.len(),
        wrong.join("\n")
    );
}

#[test]
fn crc32_is_zlibs() {
    // Python: zlib.crc32(b"123456789") == 0xcbf43926, the standard check value.
    assert_eq!(streams::crc32(b"123456789"), 0xcbf4_3926);
    assert_eq!(streams::crc32(b""), 0);
}
