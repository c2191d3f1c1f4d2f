//! Nothing silently wrong: every input that would print an infinite, negative or wrapped
//! number, every impossible setup and every misleading message found by running the
//! command line many ways is refused with exit 2 and one line that names the flag and the
//! reason (or, for units and µ, accepted).

use crate::run;

use run::{lecture06, stderr, stdout};

/// Runs `args`, expects exit 2 and one line on stderr containing every `words`.
fn refused(args: &[&str], words: &[&str]) {
    let o = lecture06(args);
    let err = stderr(&o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{args:?} should be refused: {err}"
    );
    assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
    assert!(stdout(&o).is_empty(), "{args:?}: nothing printed");
    for w in words {
        assert!(err.contains(w), "{args:?}: {err:?} should say {w:?}");
    }
}

/// Runs `args`, expects exit 0, and returns what it printed.
fn runs(args: &[&str]) -> String {
    let o = lecture06(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn inputs_that_would_print_inf_or_nan_are_refused_naming_the_flag() {
    refused(
        &["--overhead-target", "1e308s"],
        &["--overhead-target", "from 0 to 10 s"],
    );
    refused(
        &["--overhead-draft", "1e308s"],
        &["--overhead-draft", "from 0 to 10 s"],
    );
    refused(
        &["--eff-compute", "5e-324"],
        &["--eff-compute", "from 0.001 to 1"],
    );
    refused(
        &["--eff-bandwidth", "5e-324"],
        &["--eff-bandwidth", "from 0.001 to 1"],
    );
    refused(
        &["--draft-cost", "1e308"],
        &["--draft-cost", "from 0 to 10"],
    );
}

#[test]
fn counts_that_would_wrap_are_refused_with_their_range() {
    refused(
        &["--batch", "18446744073709551615"],
        &["expected batch sizes from 1 to 1000000"],
    );
    refused(&["--batch", "9223372036854775808"], &["from 1 to 1000000"]);
    refused(
        &["--ctx", "abc"],
        &[
            "expected context lengths in tokens from 1 to 10000000",
            "\"abc\"",
        ],
    );
    refused(&["--ctx="], &["--ctx", "got nothing"]);
    refused(&["--tp", "x"], &["expected numbers of cards from 1 to 64"]);
}

#[test]
fn negative_values_reach_the_value_parser_not_the_flag_detector() {
    refused(
        &["--overhead-target", "-1ms"],
        &["--overhead-target", "\"-1ms\""],
    );
    refused(
        &["--alpha", "-inf"],
        &["expected an acceptance rate α in (0, 1]", "\"-inf\""],
    );
    refused(
        &["--batch", "-5"],
        &["--batch <LIST>", "expected batch sizes", "\"-5\""],
    );
    refused(
        &["--overhead-target", "NaNms"],
        &["a time is a number", "\"NaNms\""],
    );
}

#[test]
fn units_are_accepted_in_any_case_and_with_either_mu() {
    let with = |t: &str| {
        let o = lecture06(&["--demo", "1", "--format", "json", "--overhead-target", t]);
        assert!(o.status.success(), "{t}: {}", stderr(&o));
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        doc["setup"]["overhead_target"].as_f64().unwrap()
    };
    for t in ["1000us", "1000µs", "1000μs", "1MS", "1Ms", "0.001S"] {
        assert!((with(t) - 1e-3).abs() < 1e-15, "{t}");
    }
}

#[test]
fn a_negative_zero_cost_prints_as_zero() {
    let text = runs(&["--demo", "1", "--draft-cost", "-0"]);
    assert!(!text.contains("-0"), "{text}");
    assert!(text.contains("c = 0.000"), "{text}");
}

#[test]
fn impossible_setups_are_refused_with_the_reason() {
    refused(
        &["--target", "Qwen2.5-7B", "--tp", "7", "--draft-head"],
        &["7 cards", "4 KV heads"],
    );
    refused(
        &["--target", "Llama-3.2-3B", "--tp", "3", "--draft-head"],
        &["3 cards", "8 KV heads"],
    );
    refused(
        &["--tau", "100", "--tree-nodes", "4", "--gamma", "4"],
        &["--tau", "to 65"],
    );
    refused(
        &["--tau", "6", "--tree-nodes", "4", "--gamma", "4"],
        &["at most depth + 1 = 5"],
    );
    refused(
        &["--tau", "2", "--tree-nodes", "2", "--gamma", "4"],
        &["at least 4 nodes"],
    );
    refused(
        &[
            "--target",
            "Qwen3-8B",
            "--draft",
            "Qwen3-0.6B",
            "--ctx",
            "131072",
        ],
        &["131072", "maximum"],
    );
    refused(&["--batch", "1,16,16"], &["--batch lists 16 twice"]);
    refused(&["--ctx", "512,512"], &["--ctx lists 512 twice"]);
}

#[test]
fn a_combination_is_refused_only_for_the_demos_that_read_it() {
    // The default draft (Llama 3's tokenizer) cannot draft for Qwen3: demo 1 reads the
    // draft and refuses; demo 3 drafts at a fixed cost and runs for the Qwen target.
    refused(
        &["--demo", "1", "--target", "Qwen3-8B"],
        &["Llama-3.2-1B cannot draft for Qwen3-8B"],
    );
    let text = runs(&["--demo", "3", "--target", "Qwen3-8B"]);
    assert!(text.contains("Qwen3-8B"), "{text}");
    // Demo 3 and demo 1 together: demo 1 still needs a draft of the family.
    refused(
        &["--demo", "3", "--demo", "1", "--target", "Qwen3-8B"],
        &["cannot draft for Qwen3-8B"],
    );
    runs(&["--target", "Qwen3-8B", "--draft", "Qwen3-0.6B"]);
}

#[test]
fn a_flag_whose_value_changes_nothing_in_the_setup_is_refused() {
    refused(
        &["--all-reduce-us", "20"],
        &["--all-reduce-us", "add --tp N"],
    );
    refused(
        &["--fp8-compute-factor", "0.9"],
        &["FP8 weights only", "--weights fp8"],
    );
    refused(
        &["--weights", "int4", "--fp8-bandwidth-factor", "0.9"],
        &["FP8 weights only"],
    );
    refused(
        &["--weights", "fp8", "--w8a16-bandwidth-factor", "0.7"],
        &["int8 weight-only weights only", "--weights w8a16"],
    );
    refused(
        &["--int4-dequant-ops", "6"],
        &["INT4 weights only", "--weights int4"],
    );
    // A card that publishes no FP32 vector peak cannot price INT4's dequantization.
    refused(
        &[
            "--hw",
            "Gaudi2",
            "--weights",
            "int4",
            "--calibration",
            "measured",
        ],
        &["Gaudi2 has no FP32 vector peak", "peak_flops_fp32"],
    );
    refused(
        &["--draft-cost", "0.1", "--overhead-draft", "1ms"],
        &["--overhead-draft changes nothing with --draft-cost"],
    );
    refused(
        &["--draft-kv-window", "512", "--overhead-draft", "1ms"],
        &["--overhead-draft changes nothing with --draft-kv-window"],
    );
    refused(
        &["--draft-cost", "0.1", "--draft-layer-ms", "0.1"],
        &["--draft-layer-ms changes nothing with --draft-cost"],
    );
    // The same values where they do change something run.
    for args in [
        &["--demo", "1", "--tp", "2", "--all-reduce-us", "20"][..],
        &[
            "--demo",
            "1",
            "--weights",
            "fp8",
            "--fp8-compute-factor",
            "0.9",
        ],
        &[
            "--demo",
            "1",
            "--weights",
            "w8a16",
            "--w8a16-bandwidth-factor",
            "0.7",
        ],
        &[
            "--demo",
            "1",
            "--weights",
            "int4",
            "--int4-dequant-ops",
            "6",
        ],
        &[
            "--demo",
            "1",
            "--overhead-draft",
            "1ms",
            "--draft-layer-ms",
            "0.1",
        ],
    ] {
        runs(args);
    }
}

#[test]
fn the_scripts_grid_typed_out_runs_demo_1_at_its_first_value() {
    let text = runs(&["--demo", "1", "--ctx", "512,4096,32768"]);
    assert!(text.contains("上下文 512"), "{text}");
}

#[test]
fn a_flag_no_chosen_demo_reads_is_refused_and_one_some_ignore_is_noted() {
    refused(
        &["--demo", "3", "--alpha", "0.7"],
        &["--alpha changes nothing in the chosen demos"],
    );
    refused(&["--demo", "5", "--hw", "H200"], &["--hw changes nothing"]);
    // The flag typed is named, not the first of its input's flags (--tp, --draft).
    refused(
        &["--demo", "5", "--weights", "fp8"],
        &["--weights changes nothing"],
    );
    refused(
        &["--demo", "3", "--draft-cost", "0.1"],
        &["--draft-cost changes nothing"],
    );
    // Typed at its default value, it changes nothing either.
    refused(
        &["--demo", "3", "--alpha", "0.8"],
        &["--alpha changes nothing"],
    );
    // --list runs no demo: every flag but the output's is refused.
    refused(
        &["--list", "--tp", "4"],
        &["--list", "--tp changes nothing"],
    );
    refused(&["--list", "--demo", "3"], &["--demo changes nothing"]);
    runs(&["--list", "--format", "markdown"]);
    // A note names the flag typed only.
    let text = runs(&["--demo", "1", "--demo", "3", "--draft-head"]);
    assert!(text.contains("（这个演示不读 --draft-head，"), "{text}");
    // Demo 2 reads α, demo 1 does not: demo 1 says so after its figures.
    let text = runs(&["--demo", "1", "--demo", "2", "--alpha", "0.7"]);
    assert_eq!(
        text.matches("（这个演示不读 --alpha，").count(),
        1,
        "{text}"
    );
    let demo2 = text.find("\n演示 2：").unwrap();
    assert!(
        text.find("不读 --alpha").unwrap() < demo2,
        "noted after demo 1"
    );
    let json = run::json(&["--demo", "1", "--demo", "2", "--alpha", "0.7"]);
    assert_eq!(
        json["sections"][0]["unread_flags"],
        serde_json::json!(["--alpha"])
    );
    assert!(json["sections"][1].get("unread_flags").is_none());
}

#[test]
fn a_reader_that_leaves_early_is_success_in_every_format() {
    use std::process::{Command, Stdio};
    for format in ["text", "markdown", "json", "html"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lecture06"))
            .args(["--format", format, "--demo", "1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // `| head -c 0`: every write gets EPIPE
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{format}: {:?} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stderr.is_empty(), "{format}");
    }
}

#[test]
fn list_messages_speak_of_the_list_not_of_demos() {
    refused(&["--list", "--format", "csv"], &["--list prints 3 tables"]);
    refused(
        &["--list", "--plot", "target/never"],
        &["--list draws no figure"],
    );
}

#[test]
fn user_driven_sizes_are_capped_and_refused_with_the_cap() {
    let many: Vec<String> = (1..=20_000).map(|b| b.to_string()).collect();
    let batches = many.join(",");
    refused(
        &["--demo", "2", "--batch", &batches],
        &["--batch lists 20000 values", "at most 64"],
    );
    let contexts: Vec<String> = (1..=65).map(|c| (c * 128).to_string()).collect();
    refused(
        &["--demo", "2", "--ctx", &contexts.join(",")],
        &["--ctx", "at most 64"],
    );
    // At the cap, it runs.
    let sixty_four: Vec<String> = (1..=64).map(|b| b.to_string()).collect();
    runs(&[
        "--demo",
        "2",
        "--batch",
        &sixty_four.join(","),
        "--ctx",
        "1024",
    ]);
}

#[test]
fn a_long_hostile_value_is_named_not_echoed_whole() {
    let hostile = "9".repeat(300);
    let o = lecture06(&["--batch", &hostile]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.len() < 400, "{} bytes: {err}", err.len());
    assert!(err.contains(&format!("{}…", "9".repeat(40))), "{err}");
    let o = lecture06(&["--target", &hostile]);
    assert!(stderr(&o).len() < 700, "{}", stderr(&o));
}

#[test]
fn a_path_or_a_repository_is_a_file_to_read_never_the_model_at_its_end() {
    for path in [
        "../Llama-3.1-8B",
        "meta-llama/Llama-3.1-8B",
        "models\\Llama-3.1-8B",
        "x.json",
    ] {
        refused(&["--target", path], &[path, "cannot read"]);
        refused(&["--draft", path], &["cannot read"]);
    }
}

#[test]
fn a_config_json_is_read_named_after_its_folder_and_priced() {
    let dir = std::env::temp_dir().join(format!("lecture06-cfg-{}", std::process::id()));
    let folder = dir.join("Llama-2-7b-hf");
    std::fs::create_dir_all(&folder).unwrap();
    let config = r#"{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
        "num_attention_heads": 32, "intermediate_size": 11008, "vocab_size": 32000,
        "max_position_embeddings": 4096}"#;
    let path = folder.join("config.json");
    std::fs::write(&path, config).unwrap();
    let p = path.to_str().unwrap();
    // The shipped Llama-2-7B's shape: the same figures, under its folder's name.
    let args = [
        "--demo",
        "1",
        "--draft-cost",
        "0.1",
        "--ctx",
        "1024",
        "--target",
    ];
    let from_file = runs(&[&args[..], &[p]].concat());
    let shipped = runs(&[&args[..], &["Llama-2-7B"]].concat());
    assert!(from_file.contains("Llama-2-7b-hf"), "{from_file}");
    // Headers and wrapped lines follow the name's width; the tables and the step do not.
    let figures = |text: &str| -> Vec<String> {
        let lines = text
            .lines()
            .filter(|l| l.starts_with('|') || l.contains("decode 一步"));
        lines.map(String::from).collect()
    };
    assert_eq!(figures(&from_file), figures(&shipped));
    // A field missing: named.
    std::fs::write(&path, config.replace("\"vocab_size\": 32000,", "")).unwrap();
    refused(&["--target", p], &["vocab_size"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_card_of_ones_own_is_read_validated_and_priced() {
    let dir = std::env::temp_dir().join(format!("lecture06-card-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let card = "name = \"my H100\"\npeak_flops_bf16 = 989e12\npeak_flops_fp8 = 1979e12\n\
                hbm_bandwidth = 3.35e12\nmemory_bytes = 80e9\n[interconnect]\n\
                kind = \"NVLink 4 (NVSwitch)\"\nper_direction = 450e9\n";
    let path = dir.join("card.toml");
    std::fs::write(&path, card).unwrap();
    let p = path.to_str().unwrap();
    // The H100's own figures under another name: the same tables.
    let tables = |text: &str| -> Vec<String> {
        let lines = text.lines().filter(|l| l.starts_with('|'));
        lines.map(String::from).collect()
    };
    let mine = runs(&["--demo", "1", "--hw", p]);
    assert!(mine.contains("my H100"), "{mine}");
    assert_eq!(
        tables(&mine),
        tables(&runs(&["--demo", "1", "--hw", "H100"]))
    );
    std::fs::write(&path, card.replace("80e9", "-80e9")).unwrap();
    refused(&["--hw", p], &["my H100: memory must be"]);
    std::fs::write(&path, card.replace("hbm_bandwidth", "hbm_bandwith")).unwrap();
    refused(&["--hw", p], &["hbm_bandwith"]);
    refused(
        &["--hw", "no/such/card.toml"],
        &["no/such/card.toml: cannot read it"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn formats_engines_and_draft_cards_that_cannot_exist_are_refused_with_the_reason() {
    refused(
        &["--hw", "A100", "--weights", "fp8"],
        &["A100 has no FP8 tensor cores", "w8a16"],
    );
    refused(
        &["--hw", "V100-SXM2-32GB", "--weights", "w8a8"],
        &["no INT8 tensor cores"],
    );
    refused(
        &["--engine", "vllm", "--calibration", "seed"],
        &["--engine vllm", "--calibration seed"],
    );
    refused(&["--engine", "magic"], &["unknown engine", "vllm, sglang"]);
    refused(
        &["--tp", "2", "--draft-tp", "4"],
        &["draft", "from 1 to 2, got 4"],
    );
    refused(&["--draft-cost", "0.1", "--draft-tp", "1"], &["--draft-tp"]);
    refused(&["--prefill-ctx", "100"], &["--prefill-tokens"]);
    refused(&["--prefill-tokens", "0"], &["--prefill-tokens"]);
    runs(&["--hw", "A100", "--weights", "w8a16", "--demo", "1"]);
}
