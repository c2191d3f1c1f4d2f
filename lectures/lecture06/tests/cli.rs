//! The `lecture06` binary as students and instructors run it: flags, exit codes, exports.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn lecture06(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lecture06"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let o = lecture06(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("--format json prints one JSON document")
}

fn close(got: &Value, want: f64) {
    let got = got
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {got}"));
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "{got} vs {want}"
    );
}

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
fn with_no_flags_the_binary_prints_the_default_lecture() {
    let out = lecture06(&[]);
    assert!(out.status.success());
    let mut expected = Vec::new();
    lecture06::run(&mut expected).unwrap();
    assert_eq!(out.stdout, expected);
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
    let d1 = &doc["figures"]["demo1"];
    close(&d1["t_base_s"], 4.943_801_6e-3);
    close(&d1["t_draft_s"], 0.952_4e-3);
    close(&d1["c"], 0.952_4e-3 / 4.943_801_6e-3);
    assert_eq!(
        doc["figures"]["demo2"]["max_batch"],
        serde_json::json!([1861, 232, 29])
    );
    assert_eq!(doc["setup"]["hw"]["name"], "H200");
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
    assert_eq!(doc["figures"]["demo1"]["fits"], false);
    assert_eq!(
        doc["figures"]["demo2"]["max_batch"],
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
    let d1 = &doc["figures"]["demo1"];
    // streamed = 70,553,706,496 − 128,256·8192 = 69,503,025,152 weights; KV 327,680 B/token.
    // t_base = (2·69,503,025,152 + 1025·327,680) / (5.3e12 · 0.8) + 1 ms = 33.8637 ms.
    close(&d1["t_base_s"], 33.863_664_784_9e-3);
    close(&d1["t_draft_s"], 0.890_852_830_2e-3);
    close(&d1["c"], 0.890_852_830_2e-3 / 33.863_664_784_9e-3);
    // max batch: (192e9 − 2·70,553,706,496) / (ctx · 327,680) at 512, 4096, 32768.
    assert_eq!(
        doc["figures"]["demo2"]["max_batch"],
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
fn json_figures_agree_with_the_library() {
    use lecture06::spec_decode_on_hardware::{Setup, demo1_figures, demo2_figures};
    let doc = json(&[]);
    let setup = Setup::default();
    let d1 = demo1_figures(&setup).unwrap().unwrap();
    close(&doc["figures"]["demo1"]["t_base_s"], d1.t_base);
    close(&doc["figures"]["demo1"]["c"], d1.c);
    for (j, &(n, t)) in doc["figures"]["demo1"]["forward"]
        .as_array()
        .unwrap()
        .iter()
        .zip(&d1.forward)
    {
        assert_eq!(j["n"], n);
        close(&j["time_s"], t);
    }
    let d2 = demo2_figures(&setup).unwrap();
    let cell = &doc["figures"]["demo2"]["grid"][5]["cells"][0]; // batch 512, ctx 512
    assert_eq!(cell["gamma"], d2.grid[5].1[0].unwrap().gamma());
    close(&cell["speedup"], d2.grid[5].1[0].unwrap().speedup());
    assert_eq!(
        doc["figures"]["demo2"]["grid"][1]["cells"][2]["fits"],
        false
    );
    let d3 = &doc["figures"]["demo3"]["drafts"];
    assert_eq!(d3.as_array().unwrap().len(), 2);
    assert_eq!(d3[0]["shapes"][8]["nodes"], 340);
    assert!(doc["units"]["*_s"] == "seconds");
    assert_eq!(
        doc["tables"].as_array().unwrap().len(),
        5,
        "every table of the three demos"
    );
}

#[test]
fn csv_has_one_block_per_table_and_quotes_cells_with_commas() {
    let o = lecture06(&["--demo", "2", "--format", "csv"]);
    let text = stdout(&o);
    let blocks: Vec<&str> = text.trim_end().split("\n\n").collect();
    assert_eq!(blocks.len(), 1);
    let lines: Vec<&str> = blocks[0].lines().collect();
    assert_eq!(lines[1], "批大小,上下文 512,上下文 4096,上下文 32768");
    assert_eq!(lines.len(), 2 + 6);
    assert!(
        lines[2].starts_with("1,\"γ=4, 1.93×（验证 1.00）\""),
        "{}",
        lines[2]
    );
}

fn svg_texts(path: &Path) -> (Vec<String>, usize) {
    let svg = std::fs::read_to_string(path).unwrap();
    let doc =
        roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let texts = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect();
    let lines = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline") || n.has_tag_name("path"))
        .count();
    (texts, lines)
}

#[test]
fn plot_writes_three_well_formed_svg_figures_with_series_and_axis_labels() {
    let dir = std::env::temp_dir().join(format!("lecture06-plots-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let o = lecture06(&["--plot", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let expect: [(&str, &[&str]); 3] = [
        (
            "knee.svg",
            &[
                "每个序列送进的 token 数 n（对数坐标）",
                "时间（ms，对数坐标）",
                "批 1",
                "批 16",
                "批 64",
                "批 256",
            ],
        ),
        (
            "batch.svg",
            &[
                "批大小（对数坐标）",
                "最优加速比（×）",
                "上下文 512",
                "上下文 4096",
                "上下文 32768",
                "上下文 32768：批 > 14 放不下",
            ],
        ),
        (
            "trees.svg",
            &[
                "草稿形状",
                "τ / 加速比（×）",
                "τ = 每轮产出的 token",
                "批 1 加速",
                "批 32 加速",
                "草稿：只用前 1 层（弱）",
                "草稿：INT4 量化的自己（强）",
                "树 4×4×4×4",
            ],
        ),
    ];
    for (file, labels) in expect {
        let (texts, lines) = svg_texts(&dir.join(file));
        for label in labels {
            assert!(
                texts.iter().any(|t| t == label),
                "{file} lacks {label:?}: {texts:?}"
            );
        }
        assert!(lines >= 3, "{file}: {lines} lines drawn");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_flags_exit_2_with_one_line_that_lists_the_choices() {
    let file = std::env::temp_dir().join(format!("lecture06-not-a-dir-{}", std::process::id()));
    std::fs::write(&file, "").unwrap();
    let cases: [(&[&str], &str); 7] = [
        (
            &["--hw", "TPU-v5"],
            "choose one of: H100, H100-PCIe, H200, A100, B200, MI300X, L40S",
        ),
        (
            &["--target", "GPT-4"],
            "choose one of: Llama-3.1-8B, Llama-3.1-70B",
        ),
        (&["--draft", "tiny"], "choose one of: Llama-3.1-8B"),
        (&["--alpha", "0"], "α must be in (0, 1]"),
        (&["--alpha", "1.2"], "α must be in (0, 1]"),
        (
            &["--format", "xml"],
            "[possible values: text, markdown, csv, json]",
        ),
        (
            &["--plot", file.to_str().unwrap(), "--demo", "1"],
            "cannot create the plot folder",
        ),
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
        assert!(!err.contains("panicked"), "{err}");
        assert!(o.stdout.is_empty(), "{args:?}: nothing printed on stdout");
    }
    std::fs::remove_file(&file).unwrap();
}

#[test]
fn list_shows_the_registries() {
    let text = stdout(&lecture06(&["--list"]));
    for name in [
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
