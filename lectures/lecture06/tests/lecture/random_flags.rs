//! Random command lines never panic and never print a number that is not finite: each of
//! 1,000 runs of random flag combinations (values in and out of range, hostile ones
//! included) either exits 0 with only finite numbers in its JSON, the same bytes when run
//! again, or exits 2 with one line that points to `--help`.

use lecture_kit::testing::run;
use lecture06::Cli;
use proptest::prelude::*;
use serde_json::Value;

/// Every number in a JSON document (measured values are masked to `null`).
fn numbers(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Number(n) => out.push(n.as_f64().unwrap_or(f64::NAN)),
        Value::Array(a) => a.iter().for_each(|x| numbers(x, out)),
        Value::Object(o) => o.values().for_each(|x| numbers(x, out)),
        _ => {}
    }
}

/// A hostile value: a 294-digit number, which an error line must not echo whole.
const LONG_VALUE: &str = "999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999";

/// A flag and a value drawn from a list of good, edge and bad ones.
fn flag() -> impl Strategy<Value = Vec<String>> {
    let pick = |flag: &'static str, values: &'static [&'static str]| {
        proptest::sample::select(values).prop_map(move |v| vec![flag.to_string(), v.to_string()])
    };
    prop_oneof![
        pick(
            "--hw",
            &[
                "H100", "H200", "A100", "B200", "MI300X", "L40S", "Gaudi2", "TPU"
            ]
        ),
        pick(
            "--target",
            &[
                "Llama-3.1-8B",
                "Llama-3.1-70B",
                "Qwen3-8B",
                "Llama-3.2-1B",
                "Mistral-7B-v0.3"
            ]
        ),
        pick(
            "--draft",
            &[
                "Llama-3.2-1B",
                "Llama-3.2-3B",
                "Qwen3-0.6B",
                "Llama-3.1-405B"
            ]
        ),
        pick(
            "--alpha",
            &["0.6", "1", "0", "-inf", "NaN", "5e-324", "1.0000001"]
        ),
        pick(
            "--batch",
            &["1", "16,512", "0", "18446744073709551615", "7,7", "1000000"]
        ),
        pick(
            "--ctx",
            &["512", "131072", "1", "200000", "x", "8192,32768"]
        ),
        pick("--gamma", &["1", "8", "64", "65", "0"]),
        pick("--tp", &["1", "2", "3", "4", "7", "8", "64"]),
        pick("--weights", &["bf16", "fp8", "int4", "w8a16", "fp4"]),
        pick("--kv", &["bf16", "fp8", "int8"]),
        pick(
            "--overhead-target",
            &["0ms", "1ms", "300us", "10s", "1e308s", "-1ms", "1"]
        ),
        pick("--overhead-draft", &["0ns", "2ms", "NaNms", "11s"]),
        pick("--eff-compute", &["1", "0.001", "5e-324", "0.6"]),
        pick("--eff-bandwidth", &["0.74", "0.0005", "1"]),
        pick("--draft-cost", &["0", "-0", "10", "1e308"]),
        pick("--draft-kv-window", &["1", "256", "0"]),
        pick("--calibration", &["seed", "fitted", "measured", "nope"]),
        pick("--overlap", &["0", "1", "0.5", "2"]),
        pick("--round-overhead-ms", &["0.35", "10000", "1e308"]),
        pick("--all-reduce-us", &["14", "0", "-1"]),
        pick("--fp8-compute-factor", &["0.25", "1", "0"]),
        pick("--w8a16-bandwidth-factor", &["0.65", "1", "0", "NaN"]),
        pick("--int4-dequant-ops", &["10.75", "0", "1000", "1001", "-1"]),
        pick("--demo", &["1", "2", "5", "3", "9"]),
        pick(
            "--target",
            &[
                "../Llama-3.1-8B",
                "meta-llama/Llama-3.1-8B",
                "",
                "\u{202e}8B"
            ]
        ),
        pick(
            "--batch",
            &[LONG_VALUE, "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17"]
        ),
        pick("--out", &["-"]),
        pick("--tau", &["3", "0", "NaN"]),
        pick("--tree-nodes", &["8", "0", "5000"]),
        pick("--verify-us-per-token", &["21", "1e308", "-3"]),
        // Other spellings and shapes of a command line.
        proptest::sample::select(
            &[
                "--alpha=0.7",
                "--batch=1,8",
                "--hw=",
                "--no-such-flag",
                "-x",
                "--demo",
                "--target=Llama-3.1-8B\nLlama-3.2-1B",
                "--ctx=\r512",
                "--list",
                "--format=markdown",
            ][..]
        )
        .prop_map(|a| vec![a.to_string()]),
    ]
}

proptest! {
    // A fixed seed: the same 1,000 command lines on every run and machine.
    #![proptest_config(ProptestConfig {
        cases: 1000,
        rng_seed: proptest::test_runner::RngSeed::Fixed(349),
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_flags_give_finite_json_or_one_line_exit_2(
        flags in proptest::collection::vec(flag(), 1..6)
    ) {
        let mut args: Vec<String> = flags.into_iter().flatten().collect();
        // Keep each case fast: demo 3 and 4 run the toy model.
        if !args.iter().any(|a| a == "--demo") {
            args.extend(["--demo".into(), "1".into(), "--demo".into(), "2".into()]);
        }
        args.extend(["--format".into(), "json".into()]);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = run::<Cli>(&argv);
        match r.code {
            0 => {
                let doc: Value = serde_json::from_str(&r.stdout).expect("JSON");
                let mut all = Vec::new();
                numbers(&doc, &mut all);
                prop_assert!(all.iter().all(|x| x.is_finite()), "{argv:?}");
                prop_assert!(r.stderr.is_empty(), "{argv:?}: {}", r.stderr);
                prop_assert_eq!(&run::<Cli>(&argv).stdout, &r.stdout, "{:?}: not deterministic", argv);
                // JSON writes a non-finite number as null, so read the text too.
                let text = run::<Cli>(&argv[..argv.len() - 2]).stdout;
                let bad = text
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '.'))
                    .find(|w| matches!(w.trim_start_matches('-'), "inf" | "NaN" | "nan"));
                prop_assert!(bad.is_none(), "{argv:?} prints {bad:?}");
            }
            2 => {
                prop_assert_eq!(r.stderr.lines().count(), 1, "{:?}: {}", argv, r.stderr);
                prop_assert!(r.stderr.len() < 1000, "{argv:?}: {} bytes", r.stderr.len());
                prop_assert!(r.stderr.contains("--help"), "{argv:?}: {}", r.stderr);
                prop_assert!(r.stdout.is_empty());
            }
            code => prop_assert!(false, "{argv:?}: exit {code}: {}", r.stderr),
        }
    }
}

/// The property above says nothing if every drawn command line were refused: over a fixed
/// sample of 100 lines from the same strategy, a good share must run (exit 0).
#[test]
fn a_good_share_of_random_command_lines_runs() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let lines = proptest::collection::vec(flag(), 1..4);
    let mut ran = 0;
    let mut refused = 0;
    for _ in 0..100 {
        let mut args: Vec<String> = lines
            .new_tree(&mut runner)
            .expect("a command line")
            .current()
            .into_iter()
            .flatten()
            .collect();
        if !args.iter().any(|a| a == "--demo") {
            args.extend(["--demo".into(), "1".into()]);
        }
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        match run::<Cli>(&argv).code {
            0 => ran += 1,
            2 => refused += 1,
            code => panic!("{argv:?}: exit {code}"),
        }
    }
    assert!(ran >= 20, "{ran} of 100 ran, {refused} refused");
}
