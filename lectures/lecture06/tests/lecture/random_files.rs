//! Random files and outputs never lose a file, never panic and never hang: each of 1,000
//! runs (a fixed seed) reads a card and a `config.json` mutated at random (fields dropped,
//! values out of range, control characters, integers past i64, the wrong type) and writes
//! its output somewhere drawn from the run's own inputs, a file with a second name, a
//! folder, a new file or standard output. Every run exits 0, 1 or 2 with one error line;
//! a file the run read keeps its bytes, and so does every other file unless it is where a
//! successful run was asked to write (or another name of that file); no temporary is
//! left beside them.

#![cfg(unix)]

use std::fs;
use std::path::{Path, PathBuf};

use lecture_kit::testing::run;
use lecture06::Cli;
use proptest::prelude::*;

const CARD: &str = "name = \"mine\"\npeak_flops_bf16 = 989e12\nhbm_bandwidth = 3.35e12\n\
                    memory_bytes = 80e9\n[interconnect]\nkind = \"NVLink\"\n\
                    per_direction = 450e9\n";

const CONFIG: &str = r#"{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
"num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
"vocab_size": 128256, "max_position_embeddings": 131072}"#;

/// A mutation of a file's text: a value replaced by another, or nothing changed.
fn mutation(text: &'static str, targets: &'static [&'static str]) -> impl Strategy<Value = String> {
    let values: &'static [&'static str] = &[
        "0",
        "-1",
        "1e400",
        "99999999999999999999",
        "\"x\"",
        "\"a\\u001bb\"",
        "nan",
        "1000000",
        "true",
        "[]",
    ];
    prop_oneof![
        Just(text.to_string()),
        (
            proptest::sample::select(targets),
            proptest::sample::select(values)
        )
            .prop_map(move |(from, to)| text.replacen(from, to, 1)),
        proptest::sample::select(targets).prop_map(move |from| text.replacen(from, "", 1)),
    ]
}

/// Where a run writes.
const OUTS: &[&str] = &[
    "keep.txt",
    "link.txt",
    "card.toml",
    "m/config.json",
    "new.json",
    "m",
    "figs/knee.svg",
    "-",
];

/// The files a run may find, and whether each is another name of `keep.txt`.
const WATCHED: &[&str] = &["keep.txt", "link.txt", "card.toml", "m/config.json"];

#[derive(Debug)]
struct Case {
    card: String,
    config: String,
    hw_from_file: bool,
    target_from_file: bool,
    out: &'static str,
    format: &'static str,
    plot: bool,
}

fn case() -> impl Strategy<Value = Case> {
    (
        mutation(
            CARD,
            &[
                "\"mine\"",
                "989e12",
                "3.35e12",
                "80e9",
                "\"NVLink\"",
                "450e9",
            ],
        ),
        mutation(
            CONFIG,
            &["4096", "32", "8", "14336", "128256", "131072", "\"llama\""],
        ),
        any::<bool>(),
        any::<bool>(),
        proptest::sample::select(OUTS),
        proptest::sample::select(&["json", "text", "csv", "markdown"][..]),
        any::<bool>(),
    )
        .prop_map(
            |(card, config, hw_from_file, target_from_file, out, format, plot)| Case {
                card,
                config,
                hw_from_file,
                target_from_file,
                out,
                format,
                plot,
            },
        )
}

/// Every file under `dir`, with its bytes (folders as empty).
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut all = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            all.extend(tree(&path));
        } else {
            all.push((path.clone(), fs::read(&path).unwrap()));
        }
    }
    all.sort();
    all
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1000,
        rng_seed: proptest::test_runner::RngSeed::Fixed(43),
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_files_and_outputs_lose_nothing(c in case()) {
        let dir = std::env::temp_dir().join(format!("lecture06-rfiles-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("m")).unwrap();
        fs::write(dir.join("card.toml"), &c.card).unwrap();
        fs::write(dir.join("m/config.json"), &c.config).unwrap();
        fs::write(dir.join("keep.txt"), "the user's\n").unwrap();
        fs::hard_link(dir.join("keep.txt"), dir.join("link.txt")).unwrap();
        let at = |p: &str| dir.join(p).to_string_lossy().into_owned();
        let mut args = vec!["--demo".to_string(), "1".into(), "--format".into(), c.format.into()];
        if c.hw_from_file {
            args.extend(["--hw".into(), at("card.toml")]);
        }
        if c.target_from_file {
            args.extend(["--target".into(), at("m/config.json"), "--draft-cost".into(), "0.1".into()]);
        }
        let out = if c.out == "-" { "-".to_string() } else { at(c.out) };
        args.extend(["--out".into(), out]);
        if c.plot {
            args.extend(["--plot".into(), at("figs")]);
        }
        let before = tree(&dir);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = run::<Cli>(&argv);
        prop_assert!(matches!(r.code, 0..=2), "{argv:?}: exit {}", r.code);
        if r.code != 0 {
            prop_assert_eq!(r.stderr.lines().count(), 1, "{:?}: {}", argv, r.stderr);
        }
        // The files the run was asked to write: the output (both names of keep.txt).
        let written: &[&str] = match (r.code, c.out) {
            (0, "keep.txt" | "link.txt") => &["keep.txt", "link.txt"],
            (0, out) => std::slice::from_ref(&OUTS[OUTS.iter().position(|o| *o == out).unwrap()]),
            _ => &[],
        };
        let after = tree(&dir);
        // A file the run read is never written, asked or not.
        let read = |name: &str| {
            (c.hw_from_file && name == "card.toml")
                || (c.target_from_file && name == "m/config.json")
        };
        for name in WATCHED {
            let path = dir.join(name);
            let old = before.iter().find(|(p, _)| *p == path).map(|(_, b)| b);
            let new = after.iter().find(|(p, _)| *p == path).map(|(_, b)| b);
            if read(name) || !written.contains(name) {
                prop_assert!(old == new, "{argv:?}: {name} changed");
            }
        }
        let keep = fs::read(dir.join("keep.txt")).unwrap();
        let link = fs::read(dir.join("link.txt")).unwrap();
        prop_assert!(keep == link, "{argv:?}: the two names differ");
        let left = after.iter().find(|(p, _)| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.ends_with(".tmp") || n.ends_with(".old")
        });
        prop_assert!(left.is_none(), "{argv:?}: left {left:?}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
