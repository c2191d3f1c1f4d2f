//! The files a run is given and the files it writes: a name is a name whatever the
//! current folder holds, an output never lands on an input or on another output, a file
//! is read only when it is a regular file of a sensible size, and what a card or a
//! prefill sets is checked like the fields beside it.

use crate::run;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use run::{lecture06, stderr, stdout};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lecture06-given-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// `lecture06 args` run in the folder `dir`, stopped and failed after 60 s.
fn in_folder(dir: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lecture06"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("{args:?} still running after 60 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

fn ran(args: &[&str]) {
    let o = lecture06(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
}

fn refused_in(dir: &Path, args: &[&str], words: &[&str]) {
    let o = in_folder(dir, args);
    let err = stderr(&o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{args:?} should be refused: {err}"
    );
    assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
    for w in words {
        assert!(err.contains(w), "{args:?}: {err:?} should say {w:?}");
    }
}

/// A file named `H200` or `Llama-3.1-8B` in the current folder once made `--hw H200` read
/// it as a card file, and the default `--target` fail on a flag never given.
#[test]
fn a_file_named_like_a_card_or_model_never_takes_the_name() {
    let d = scratch("names");
    fs::write(d.join("Llama-3.1-8B"), "x\n").unwrap();
    fs::write(d.join("H200"), "x\n").unwrap();
    let elsewhere = stdout(&lecture06(&["--demo", "2"]));
    let here = in_folder(&d, &["--demo", "2"]);
    assert!(here.status.success(), "{}", stderr(&here));
    assert_eq!(stdout(&here), elsewhere, "the default target is the name's");
    // An output named like the card, written, then the card by name again.
    let o = in_folder(&d, &["--demo", "2", "--hw", "H200", "--out", "H200"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = in_folder(&d, &["--demo", "2", "--hw", "H200"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(fs::read_to_string(d.join("H200")).unwrap(), stdout(&o));
    // A file by a name that is no model's: how to read it is said.
    fs::write(d.join("mine"), "{}").unwrap();
    refused_in(&d, &["--target", "mine"], &["unknown", "./mine"]);
    fs::remove_dir_all(&d).unwrap();
}

const CONFIG: &str = r#"{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
    "num_attention_heads": 32, "intermediate_size": 11008, "vocab_size": 32000,
    "max_position_embeddings": 4096}"#;

const CARD: &str = "name = \"mine\"\npeak_flops_bf16 = 989e12\nhbm_bandwidth = 3.35e12\n\
                    memory_bytes = 80e9\n[interconnect]\nkind = \"NVLink\"\n\
                    per_direction = 450e9\n";

/// `--target m/config.json --out m/config.json` once replaced the model with the lecture.
#[test]
fn an_output_over_an_input_or_over_another_output_is_refused() {
    let d = scratch("overlap");
    fs::create_dir_all(d.join("m")).unwrap();
    fs::write(d.join("m/config.json"), CONFIG).unwrap();
    fs::write(d.join("card.toml"), CARD).unwrap();
    fs::hard_link(d.join("card.toml"), d.join("same-card")).unwrap();
    let both = ["--demo", "1", "--draft-cost", "0.1", "--ctx", "1024"];
    for (input, out) in [
        (&["--target", "m/config.json"][..], "m/config.json"),
        (&["--target", "m/config.json"], "./m/../m/config.json"),
        (&["--hw", "card.toml"], "card.toml"),
        (&["--hw", "./card.toml"], "same-card"),
    ] {
        let args = [&both[..], input, &["--out", out]].concat();
        refused_in(&d, &args, &["--out", "which this run reads"]);
    }
    assert_eq!(fs::read_to_string(d.join("m/config.json")).unwrap(), CONFIG);
    assert_eq!(fs::read_to_string(d.join("card.toml")).unwrap(), CARD);
    // The text and a figure into one file: once the figure silently won.
    refused_in(
        &d,
        &["--demo", "1", "--plot", "figs", "--out", "figs/knee.svg"],
        &["--out and --plot both write", "knee.svg"],
    );
    assert!(!d.join("figs/knee.svg").exists());
    fs::remove_dir_all(&d).unwrap();
}

/// `--target /dev/zero` once read 4.2 GB before running out of memory, and a FIFO waited
/// for a writer forever.
#[cfg(unix)]
#[test]
fn a_special_or_huge_file_is_refused_at_once() {
    let d = scratch("special");
    refused_in(&d, &["--target", "/dev/zero"], &["not a regular file"]);
    refused_in(&d, &["--hw", "/dev/zero"], &["not a regular file"]);
    let fifo = d.join("fifo.json");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        refused_in(&d, &["--target", "fifo.json"], &["not a regular file"]);
    }
    fs::write(d.join("big.toml"), " ".repeat(1 << 20)).unwrap();
    refused_in(&d, &["--hw", "big.toml"], &["more than 65536 bytes"]);
    fs::remove_dir_all(&d).unwrap();
}

/// Setups the command line once priced: a prefill's context past the model's maximum
/// (while `--ctx` was refused), and tensor parallelism on a card whose link carries
/// nothing (exit 1, as if the output had failed).
#[test]
fn a_prefill_and_a_link_are_checked_like_the_fields_beside_them() {
    refused_in(
        &std::env::temp_dir(),
        &["--prefill-tokens", "512", "--prefill-ctx", "10000000"],
        &["prompt context of 10000000 tokens", "maximum of 131072"],
    );
    ran(&[
        "--prefill-tokens",
        "512",
        "--prefill-ctx",
        "131072",
        "--demo",
        "1",
    ]);
    let dir = std::env::temp_dir().join(format!("lecture06-link-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("alone.toml");
    std::fs::write(
        &path,
        "name = \"alone\"\npeak_flops_bf16 = 989e12\nhbm_bandwidth = 3.35e12\n\
         memory_bytes = 80e9\n[interconnect]\nkind = \"none\"\nper_direction = 0\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    refused_in(
        &std::env::temp_dir(),
        &["--hw", p, "--tp", "2", "--demo", "1"],
        &["carries nothing"],
    );
    ran(&["--hw", p, "--demo", "1"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
