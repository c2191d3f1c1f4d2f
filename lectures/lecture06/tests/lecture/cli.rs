//! Lecture 6's command line as students and instructors run it: setups, flags, exit codes
//! (in-process, see `run`; as the binary where the process itself is under test).

use crate::run;

use std::process::{Command, Stdio};

use run::{close, data, json, lecture06, process, stderr, stdout};
use serde_json::Value;

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
fn a_reader_that_leaves_early_still_gets_every_figure() {
    // `lecture06 --format json --plot D | head -1`, in every format.
    for format in ["text", "json", "html", "markdown"] {
        let dir =
            std::env::temp_dir().join(format!("lecture06-early-{format}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut child = Command::new(env!("CARGO_BIN_EXE_lecture06"))
            .args(["--format", format, "--plot", dir.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{format}: {:?}", out.status);
        for figure in ["knee.svg", "batch.svg", "trees.svg"] {
            assert!(dir.join(figure).is_file(), "{format}: no {figure}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn out_dash_is_standard_output_and_a_missing_folder_is_made() {
    let dash = lecture06(&["--demo", "1", "--format", "markdown", "--out", "-"]);
    assert!(dash.status.success(), "{}", stderr(&dash));
    assert_eq!(
        dash.stdout,
        lecture06(&["--demo", "1", "--format", "markdown"]).stdout
    );
    assert!(!std::path::Path::new("-").exists(), "no file named -");
    let dir = std::env::temp_dir().join(format!("lecture06-new-folder-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let page = dir.join("deeper").join("page.md");
    let o = lecture06(&[
        "--demo",
        "1",
        "--format",
        "markdown",
        "--out",
        page.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&page).unwrap(), dash.stdout);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_command_line_behaves_like_every_lectures() {
    // Two processes (RAYON_NUM_THREADS=1 and 2, measured values masked) print the same
    // bytes, every demo runs, every form prints, bad flags exit 2 with one line.
    lecture_kit::testing::check_command_line::<lecture06::Cli>(env!("CARGO_BIN_EXE_lecture06"));
}

#[test]
fn with_no_flags_the_binary_prints_the_default_lecture() {
    let out = lecture06(&[]);
    assert!(out.status.success());
    // The runner in-process, as the snapshot test calls it.
    let expected = lecture_kit::testing::output::<lecture06::Cli>(&[]);
    assert_eq!(out.stdout, expected.as_bytes());
}

#[test]
fn on_an_h200_the_figures_follow_the_card() {
    let out = lecture06(&["--hw", "h200", "--demo", "1", "--demo", "2"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("一块 H200"), "{text}");
    assert!(text.contains("KV 超出 141 GB 显存"));
    assert!(
        !text.contains("演示 3：树形验证"),
        "--demo 1 --demo 2 prints only those"
    );
    // By hand: t_base = (2·7,504,924,672 + 1025·131,072) B / (4.8e12 · 0.8) + 1 ms = 4.9438 ms;
    // t_draft = (2·1,235,814,400 + 1025·32,768) B / 3.84e12 + 0.3 ms = 0.9524 ms.
    assert!(
        text.contains("目标模型普通 decode 一步 4.94 ms；草稿模型一步 952.4 µs → c = 0.193"),
        "{text}"
    );
    // max batch at 32K: (141e9 − 2·8,030,261,248) / (32768 · 131,072) = 29.09 → 29.
    assert!(text.contains("上下文 32768 最多 29 个序列"));
    assert!(
        text.contains("【此条针对默认配置"),
        "H100-only wording is marked"
    );

    let doc = json(&["--hw", "H200"]);
    let d1 = data(&doc, "demo1");
    close(&d1["t_base_s"], 4.943_801_6e-3);
    close(&d1["t_draft_s"], 0.952_4e-3);
    close(&d1["c"], 0.952_4e-3 / 4.943_801_6e-3);
    assert_eq!(
        data(&doc, "demo2")["max_batch"],
        serde_json::json!([1861, 232, 29])
    );
    assert_eq!(doc["setup"]["hw"], "H200");
}

#[test]
fn a_70b_target_does_not_fit_on_one_h100_and_the_lecture_says_so() {
    let out = lecture06(&["--target", "Llama-3.1-70B", "--draft", "Llama-3.2-1B"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("Llama-3.1-70B 的 bf16 权重有 141.1 GB，一块 H100 只有 80 GB 显存：放不下"),
        "{text}"
    );
    assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
    assert!(
        !text.contains("目标模型普通 decode 一步"),
        "no demo 1 figures for a model that does not fit"
    );
    let doc = json(&["--target", "Llama-3.1-70B", "--demo", "1", "--demo", "2"]);
    assert!(data(&doc, "demo1").is_null(), "no demo 1 figures");
    assert_eq!(
        data(&doc, "demo2")["max_batch"],
        serde_json::json!([0, 0, 0])
    );
}

#[test]
fn a_70b_target_on_an_mi300x_gives_hand_checked_figures() {
    let doc = json(&[
        "--hw",
        "MI300X",
        "--target",
        "Llama-3.1-70B",
        "--draft",
        "Llama-3.2-1B",
    ]);
    let d1 = data(&doc, "demo1");
    // streamed = 70,553,706,496 − 128,256·8192 = 69,503,025,152 weights; KV 327,680 B/token.
    // t_base = (2·69,503,025,152 + 1025·327,680) / (5.3e12 · 0.8) + 1 ms = 33.8637 ms.
    close(&d1["t_base_s"], 33.863_664_784_9e-3);
    close(&d1["t_draft_s"], 0.890_852_830_2e-3);
    close(&d1["c"], 0.890_852_830_2e-3 / 33.863_664_784_9e-3);
    // max batch: (192e9 − 2·70,553,706,496) / (ctx · 327,680) at 512, 4096, 32768.
    assert_eq!(
        data(&doc, "demo2")["max_batch"],
        serde_json::json!([303, 37, 4])
    );
    let text = stdout(&lecture06(&[
        "--hw",
        "MI300X",
        "--target",
        "Llama-3.1-70B",
        "--demo",
        "1",
    ]));
    assert!(
        text.contains("演示 1：Llama-3.1-70B + Llama-3.2-1B，一块 MI300X"),
        "{text}"
    );
    assert!(text.contains("c = 0.026"), "{text}");
}

#[test]
fn bad_flags_exit_2_with_one_line_that_names_the_choices() {
    let cases: [(&[&str], &str); 14] = [
        (&["--hw", "H10"], "the closest: H100, H100-PCIe, H20"),
        (
            &["--target", "Llama-3.1-8b-instruct"],
            "the closest: Llama-3.1-8B, Llama-3.1-70B",
        ),
        (&["--draft", "tiny"], "the closest: TinyLlama-1.1B"),
        (
            &["--alpha", "0"],
            "expected an acceptance rate α in (0, 1], got \"0\"",
        ),
        (&["--alpha", "1.2"], "α in (0, 1]"),
        (
            &["--alpha", "-0.3"],
            "expected an acceptance rate α in (0, 1], got \"-0.3\"",
        ),
        (
            &["--demo", "-1"],
            "--demo takes 1, 2, 3, 4, 5, 6 or 7 (got \"-1\")",
        ),
        (
            &["--demo", "abc"],
            "--demo takes 1, 2, 3, 4, 5, 6 or 7 (got \"abc\")",
        ),
        (
            &["--demo", "99999999999999999999"],
            "--demo takes 1, 2, 3, 4, 5, 6 or 7 (got \"99999999999999999999\")",
        ),
        (&["--demo", "8"], "--demo takes 1, 2, 3, 4, 5, 6 or 7"),
        (
            &["--format", "xml"],
            "[possible values: text, markdown, csv, json, html]",
        ),
        (&["--frobnicate"], "valid flags: --script, --demo, --format"),
        (
            &["--script", "99_nope"],
            "choose one of: 05_spec_decode_on_hardware",
        ),
        (&["--format", "csv"], "add --out DIR for one file per table"),
    ];
    for (args, want) in cases {
        let o = lecture06(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line, got {err:?}");
        assert!(
            err.starts_with("lecture06: ") && err.contains(want),
            "{args:?}: {err}"
        );
        assert!(err.contains("--help"), "{args:?}: points to --help: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(o.stdout.is_empty(), "{args:?}: nothing printed on stdout");
    }
}

#[test]
fn a_flag_that_would_be_ignored_is_an_error_or_honoured() {
    // --plot with nothing to draw: an error, not silence.
    let dir = std::env::temp_dir().join(format!("lecture06-noplot-{}", std::process::id()));
    let o = lecture06(&["--list", "--plot", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("draws no figure"), "{}", stderr(&o));
    assert!(!dir.exists(), "nothing written");
    // --list in another form: honoured.
    let o = lecture06(&["--list", "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        doc["sections"][0]["blocks"][3]["content"]["id"],
        "accelerators"
    );
    let o = lecture06(&["--list", "--format", "markdown"]);
    assert!(stdout(&o).contains("### 加速卡（--hw）"));
}

#[test]
fn format_names_ignore_case_like_card_names() {
    let o = lecture06(&["--demo", "1", "--format", "JSON"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", stderr(&o)));
    assert_eq!(doc["lecture"], 6);
    let o = lecture06(&["--demo", "1", "--format", "Markdown"]);
    assert!(o.status.success() && stdout(&o).starts_with("### 演示 1"));
}

#[test]
fn an_extreme_alpha_prints_in_a_sane_width() {
    let o = lecture06(&["--alpha", "5e-324", "--demo", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("α = 5e-324"), "{text}");
    assert!(
        text.lines().all(|l| console::display_width(l) <= 200),
        "no 300-digit α"
    );
}

#[test]
fn writing_failures_exit_1_with_the_path() {
    let file = std::env::temp_dir().join(format!("lecture06-not-a-dir-{}", std::process::id()));
    std::fs::write(&file, "").unwrap();
    let plot_into_a_file = lecture06(&["--plot", file.to_str().unwrap(), "--demo", "1"]);
    let out_below_a_file = file.join("x.json");
    let out_into_nowhere = lecture06(&[
        "--demo",
        "1",
        "--format",
        "json",
        "--out",
        out_below_a_file.to_str().unwrap(),
    ]);
    for o in [plot_into_a_file, out_into_nowhere] {
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(file.to_str().unwrap()), "{err}");
        assert!(o.stdout.is_empty(), "nothing printed before the failure");
    }
    std::fs::remove_file(&file).unwrap();
    // Paths that cannot work are usage errors before anything is written: a single file's
    // --out that is a folder, and --out and --plot naming one path.
    let dir = std::env::temp_dir().join(format!("lecture06-a-dir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_str().unwrap();
    let page = dir.join("page.html");
    let p = page.to_str().unwrap();
    for (args, says) in [
        (
            vec!["--format", "html", "--out", d],
            "is a folder; --format html writes one file",
        ),
        (
            vec!["--format", "html", "--out", p, "--plot", p],
            "--out and --plot both name",
        ),
    ] {
        let o = lecture06(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{err}");
    }
    assert!(!page.exists(), "nothing written, no folder made");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn out_writes_the_same_bytes_to_a_file() {
    let file = std::env::temp_dir().join(format!("lecture06-out-{}.md", std::process::id()));
    let o = lecture06(&["--format", "markdown", "--out", file.to_str().unwrap()]);
    assert!(o.status.success() && o.stdout.is_empty(), "{}", stderr(&o));
    let written = std::fs::read(&file).unwrap();
    assert_eq!(written, lecture06(&["--format", "markdown"]).stdout);
    std::fs::remove_file(&file).unwrap();
}

#[test]
fn list_shows_the_scripts_and_registries() {
    let text = stdout(&lecture06(&["--list"]));
    for name in [
        "05_spec_decode_on_hardware",
        "H100-PCIe",
        "MI300X",
        "L40S",
        "Llama-3.1-405B",
        "Mistral-7B-v0.3",
        "Qwen2.5-7B",
    ] {
        assert!(text.contains(name), "{name}");
    }
}

/// `--help` fits a terminal (clap wraps it to 100 columns when the output is not one) and
/// its summary names every demo of the script, by its figure.
#[test]
fn the_help_is_wrapped_and_names_every_demo() {
    use unicode_width::UnicodeWidthStr;
    let help = lecture_kit::testing::run::<lecture06::Cli>(&["--help"]).stdout;
    for line in help.lines() {
        assert!(line.width() <= 100, "{} columns: {line}", line.width());
    }
    let summary = help.split("Which demo reads which flag:").next().unwrap();
    let summary = summary.split_whitespace().collect::<Vec<_>>().join(" ");
    for demo in &lecture06::spec_decode_on_hardware::script().demos {
        let n = demo.number();
        assert!(
            summary.contains(&format!(".svg ({n})")),
            "demo {n}: {summary}"
        );
    }
}

/// `--help` states the defaults of the flags whose value stays unset unless given (so that
/// a calibration profile's constants can take their place): they must be the library's.
#[test]
fn the_help_states_the_libraries_defaults() {
    let help = lecture_kit::testing::run::<lecture06::Cli>(&["--help"]).stdout;
    let s = decode_lab::Scenario::LECTURE;
    let dep = s.deployment;
    for (flag, default) in [
        (
            "--overhead-target",
            format!("{}ms", (s.overhead_target * 1e3).round()),
        ),
        (
            "--overhead-draft",
            format!("{}us", (s.overhead_draft * 1e6).round()),
        ),
        ("--eff-compute", format!("{}", dep.compute_efficiency)),
        ("--eff-bandwidth", format!("{}", dep.bandwidth_efficiency)),
    ] {
        let at = help
            .find(&format!("  {flag} "))
            .unwrap_or_else(|| panic!("{flag}"));
        let paragraph = &help[at..];
        let end = paragraph[2..]
            .find("\n  -")
            .map_or(paragraph.len(), |e| e + 2);
        assert!(
            paragraph[..end].contains(&format!("(default {default})")),
            "{flag}: {}",
            &paragraph[..end]
        );
    }
}

#[test]
fn out_dev_stdout_writes_through_a_pipe_and_appends_to_a_redirected_file() {
    let args = ["--demo", "1", "--format", "markdown"];
    let plain = lecture06(&args).stdout;
    let through = process(&[&args[..], &["--out", "/dev/stdout"]].concat());
    assert!(through.status.success(), "{}", stderr(&through));
    assert_eq!(through.stdout, plain, "through the pipe");
    // `lecture06 --out /dev/stdout >> log`: the log keeps what it held.
    let log = std::env::temp_dir().join(format!("lecture06-append-{}.log", std::process::id()));
    std::fs::write(&log, "earlier lines\n").unwrap();
    let appending = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_lecture06"))
        .args(args)
        .args(["--out", "/dev/stdout"])
        .stdout(Stdio::from(appending))
        .status()
        .unwrap();
    assert!(status.success());
    let held = std::fs::read(&log).unwrap();
    assert_eq!(held, [b"earlier lines\n".as_slice(), &plain].concat());
    std::fs::remove_file(&log).unwrap();
}
