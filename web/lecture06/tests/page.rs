//! The page's answers against the command line's: the same flags through
//! `lecture_kit::run` (what `cargo run -p lecture06 -- FLAGS` does) must give the same
//! sections as `--format html` draws, or the same refusal it prints on standard error.
//! (`.ci/web-check.cjs` checks the page itself, in Chromium, against `--format json`.)

mod common;

use lecture_kit::web::Answer;
use lecture06_web::{PAGE_DEMOS, answer, demo4_hand_in, setup};

fn strings(flags: &[&str]) -> Vec<String> {
    flags.iter().map(|s| s.to_string()).collect()
}

/// What the command line prints for `flags`: (exit code, standard output, standard error).
fn cli(flags: &[&str]) -> (u8, String, String) {
    let argv = std::iter::once("lecture06").chain(flags.iter().copied());
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = lecture_kit::run::<lecture06::Cli>(argv, &mut out, &mut err, Default::default());
    let text = |b: Vec<u8>| String::from_utf8(b).expect("utf-8");
    (code, text(out), text(err))
}

/// The `<section>` elements of a handout page, as it writes them.
fn sections_of_handout(page: &str) -> &str {
    let start = page.find("<section id=").expect("a section");
    let end = page.rfind("</section>").expect("a section's end") + "</section>\n".len();
    &page[start..end]
}

#[test]
fn the_page_shows_the_sections_the_handout_draws_for_the_same_flags() {
    let cases: [&[&str]; 5] = [
        &["--demo", "1", "--demo", "2", "--demo", "5"],
        &["--hw", "A100", "--batch", "1,16,64", "--demo", "2"],
        &[
            "--hw",
            "MI300X",
            "--target",
            "Llama-3.1-70B",
            "--tp",
            "4",
            "--demo",
            "1",
        ],
        &[
            "--alpha",
            "0.6",
            "--draft-head",
            "--weights",
            "int4",
            "--demo",
            "2",
            "--demo",
            "5",
        ],
        &["--engine", "vllm", "--ctx", "4096,65536", "--demo", "2"],
    ];
    for flags in cases {
        let Answer::Page { html } = answer(&strings(flags)).answer else {
            panic!("{flags:?} refused on the page");
        };
        let mut with_format = flags.to_vec();
        with_format.extend(["--format", "html"]);
        let (code, page, err) = cli(&with_format);
        assert_eq!(code, 0, "{flags:?}: {err}");
        assert_eq!(html, sections_of_handout(&page), "{flags:?}");
    }
}

#[test]
fn a_flag_no_chosen_demo_reads_is_said_so_in_the_section_as_in_the_terminal() {
    let flags = ["--hw", "A100", "--demo", "1", "--demo", "5"];
    let Answer::Page { html } = answer(&strings(&flags)).answer else {
        panic!("refused");
    };
    let (_, text, _) = cli(&flags);
    let note = text
        .lines()
        .find(|l| l.contains("这个演示不读"))
        .expect("the terminal's note");
    assert!(
        html.contains(&format!("<p class=\"note\">{note}</p>")),
        "{note}"
    );
}

#[test]
fn a_refused_value_gets_the_command_line_s_own_line() {
    let cases: [&[&str]; 5] = [
        &["--alpha", "1.5"],
        &["--hw", "H1000"],
        &["--hw", "A100", "--weights", "fp8"],
        &["--no-such-flag"],
        &["--demo", "1", "--alpha", "0.7", "--demo", "5", "--ctx", "0"],
    ];
    for flags in cases {
        let page = answer(&strings(flags));
        let (code, _, err) = cli(flags);
        assert_eq!(code, 2, "{flags:?} is refused in the terminal");
        assert_eq!(
            page.answer,
            Answer::Refused {
                message: err.trim_end().to_string()
            },
            "{flags:?}"
        );
    }
}

#[test]
fn what_writes_files_or_times_the_machine_stays_in_the_terminal() {
    for flags in [
        &["--format", "json"][..],
        &["--out", "x.html"],
        &["--plot", "figs"],
        &["--list"],
    ] {
        let Answer::Refused { message } = answer(&strings(flags)).answer else {
            panic!("{flags:?} accepted");
        };
        assert!(
            message.starts_with(&format!("lecture06: {}", flags[0])),
            "{message}"
        );
        assert!(message.contains("copy as command"), "{message}");
    }
    // The trained toy models are not in the page's WebAssembly; the random one is.
    for flags in [
        &["--model", "trained"][..],
        &["--demo", "3", "--model=trained"],
    ] {
        let Answer::Refused { message } = answer(&strings(flags)).answer else {
            panic!("{flags:?} accepted");
        };
        assert!(
            message.starts_with("lecture06: --model trained"),
            "{message}"
        );
        assert!(message.contains("copy as command"), "{message}");
    }
    let Answer::Page { .. } = answer(&strings(&["--model", "random", "--demo", "3"])).answer else {
        panic!("--model random refused");
    };
    for demo in ["6", "7"] {
        let spaced = strings(&["--demo", "1", "--demo", demo]);
        let joined = strings(&["--demo=1", &format!("--demo={demo}")]);
        for flags in [spaced, joined] {
            let Answer::Refused { message } = answer(&flags).answer else {
                panic!("{flags:?} accepted");
            };
            assert!(message.contains(&format!("--demo {demo}")), "{message}");
        }
    }
}

#[test]
fn the_copied_command_splits_back_into_the_page_s_flags() {
    let flags = strings(&["--hw", "my card.toml", "--batch", "1,8", "--draft-head"]);
    let command = answer(&flags).command;
    let rest = command
        .strip_prefix("cargo run -p lecture06 -- ")
        .expect(&command);
    assert_eq!(shell_words::split(rest).unwrap(), flags);
    assert_eq!(answer(&[]).command, "cargo run -p lecture06");
}

#[test]
fn the_controls_are_every_what_if_flag_of_help_and_their_suggestions_are_accepted() {
    let s = setup();
    let (_, help, _) = cli(&["--help"]);
    let mut in_help: Vec<String> = help
        .lines()
        // clap's option lines ("      --hw <NAME>"), not wrapped help that starts with a flag.
        .filter_map(|l| l.strip_prefix("      --"))
        .map(|l| l.split([' ', '\t']).next().unwrap_or_default().to_string())
        .filter(|n| {
            n.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        })
        .filter(|n| !["help", "version"].contains(&n.as_str()))
        .filter(|n| !lecture_kit::web::PAGE_CHOSEN.contains(&n.as_str()))
        .filter(|n| !lecture06_web::TERMINAL_ONLY.contains(&n.as_str()))
        .collect();
    in_help.sort();
    let mut offered: Vec<String> = s.flags.iter().map(|f| f.name.clone()).collect();
    offered.sort();
    assert_eq!(offered, in_help);
    assert!(offered.len() >= 30, "{}", offered.len());
    let draft_head = s.flags.iter().find(|f| f.name == "draft-head").unwrap();
    assert!(draft_head.switch && draft_head.value_name.is_empty());
    let hw = s.flags.iter().find(|f| f.name == "hw").unwrap();
    assert_eq!(hw.default, "H100");
    for (flag, values) in &s.suggestions {
        assert!(!values.is_empty(), "--{flag}");
        for v in values {
            let flags = strings(&[&format!("--{flag}"), v, "--demo", "1"]);
            if let Answer::Refused { message } = answer(&flags).answer {
                assert!(
                    !message.contains("unknown") && !message.contains("invalid value"),
                    "--{flag} {v}: {message}"
                );
            }
        }
    }
    assert_eq!(s.demos.len(), PAGE_DEMOS.len());
    // Demo 4 prints drafts handed in, as the page's workers hand them in, instead of
    // decoding them again: this test checks the flags each demo accepts (no other test of
    // this binary runs demo 4; `demo4_parts.rs` checks that what is handed in prints).
    for k in 0..s.demo4_drafts {
        let shapes = serde_json::to_string(&common::marked(k)).unwrap();
        demo4_hand_in(k, &shapes).unwrap();
    }
    for (n, reads) in &s.reads {
        let mut flags = vec!["--demo".to_string(), n.to_string()];
        for r in reads.iter().filter(|r| *r == "--hw") {
            flags.extend([r.clone(), "A100".into()]);
        }
        // A demo run alone with only the flags it reads is never refused for them.
        if PAGE_DEMOS.iter().any(|d| d.number == *n && !d.live) {
            let Answer::Page { .. } = answer(&flags).answer else {
                panic!("demo {n} with {flags:?}");
            };
        }
    }
}

/// The cells of the row of the terminal's demo 1 table that starts with `| {first} |`.
fn row_of(text: &str, first: &str) -> Vec<String> {
    let line = text
        .lines()
        .find(|l| l.split('|').nth(1).map(str::trim) == Some(first))
        .unwrap_or_else(|| panic!("no row {first} in\n{text}"));
    line.split('|')
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect()
}

#[test]
fn the_summary_agrees_with_what_demo_1_prints_for_the_same_flags() {
    let cases: [(&[&str], &str); 4] = [
        (&[], "0.8"),
        (&["--hw", "A100", "--alpha", "0.7", "--batch", "16"], "0.7"),
        (&["--gamma", "2", "--alpha", "0.9"], "0.9"),
        (
            &["--hw", "H200", "--weights", "fp8", "--ctx", "8192"],
            "0.8",
        ),
    ];
    for (flags, alpha) in cases {
        let s = lecture06_web::summary(&strings(flags)).expect("accepted");
        let mut demo1 = flags.to_vec();
        demo1.extend(["--demo", "1", "--demo", "2"]);
        let (code, text, err) = cli(&demo1);
        assert_eq!(code, 0, "{err}");
        let step = s.step.as_ref().expect("fits");
        assert!(
            text.contains(&format!("目标模型普通 decode 一步 {}", step.t_base.text)),
            "{flags:?}: {} not in demo 1's header",
            step.t_base.text
        );
        let row = row_of(&text, alpha);
        assert_eq!(row[1], step.gamma.to_string(), "{flags:?}");
        assert_eq!(row[3], step.speedup.text, "{flags:?}");
        assert_eq!(s.alpha.text, alpha);
        assert_eq!(s.fit, "fits");
    }
}

#[test]
fn the_summary_counts_memory_by_hand_and_names_what_does_not_fit() {
    let s = lecture06_web::summary(&[]).unwrap();
    // Llama-3.1-8B: 32 layers × 8 KV heads × 128 dims × K and V × 2 bytes × 1,024 tokens.
    assert_eq!(s.kv.value, (32 * 8 * 128 * 2 * 2 * 1024) as f64);
    assert_eq!((s.capacity.text.as_str(), s.cards), ("80.0", 1));
    let step = s.step.unwrap();
    // 1 sequence per 6.65 ms step is 150 tokens/s; γ = 4 at α = 0.8 gives 1.93× of it.
    assert_eq!(step.tokens_per_s.text, "150");
    assert!((step.tokens_per_s_round.value / step.tokens_per_s.value - 1.93).abs() < 0.005);
    // 70.6 B parameters at 2 bytes: 141 GB, more than one A100's 80 GB.
    let big = strings(&["--hw", "A100", "--target", "Llama-3.1-70B"]);
    let s = lecture06_web::summary(&big).unwrap();
    assert_eq!((s.fit, s.step.is_none()), ("target_weights", true));
    assert!(s.target_weights.value > 140e9 && s.used_fraction.value > 1.7);
    let refused = lecture06_web::summary(&strings(&["--alpha", "1.5"]));
    assert!(refused.unwrap_err().contains("--alpha"));
}

/// A card of one's own: the L40's data file, renamed, with 96 GB and twice the bandwidth.
const MY_CARD: &str = "name = \"My-L40\"\npeak_flops_bf16 = 181.05e12\npeak_flops_fp32 = 90.5e12\n\
    peak_flops_fp8 = 362e12\npeak_ops_int8 = 362e12\nhbm_bandwidth = 1728e9\nmemory_bytes = 96e9\n\n\
    [interconnect]\nkind = \"PCIe Gen4 x16\"\nper_direction = 32e9\n";

/// Llama-3.1-8B's config.json as Hugging Face ships it (the fields the reader reads).
const MY_CONFIG: &str = r#"{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
  "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
  "vocab_size": 128256, "max_position_embeddings": 131072, "tie_word_embeddings": false}"#;

#[test]
fn a_picked_card_or_config_answers_as_the_command_line_answers_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let card = dir.path().join("my-l40.toml");
    let model = dir.path().join("my-8b").join("config.json");
    std::fs::create_dir(model.parent().unwrap()).unwrap();
    std::fs::write(&card, MY_CARD).unwrap();
    std::fs::write(&model, MY_CONFIG).unwrap();
    let (card, model) = (card.to_str().unwrap(), model.to_str().unwrap());
    // The page holds the text under the same name; the terminal reads the file.
    assert_eq!(
        lecture06_web::open_file("hw", card, MY_CARD).unwrap(),
        "My-L40"
    );
    assert_eq!(
        lecture06_web::open_file("target", model, MY_CONFIG).unwrap(),
        "my-8b"
    );
    // The draft: the same config (a draft must share the target's tokenizer family).
    let flags = [
        "--hw", card, "--target", model, "--draft", model, "--demo", "1", "--demo", "2",
    ];
    let html = match answer(&strings(&flags)).answer {
        Answer::Page { html } => html,
        Answer::Refused { message } => panic!("refused on the page: {message}"),
    };
    let mut with_format = flags.to_vec();
    with_format.extend(["--format", "html"]);
    let (code, page, err) = cli(&with_format);
    assert_eq!(code, 0, "{err}");
    assert_eq!(html, sections_of_handout(&page));
    assert!(html.contains("My-L40") && html.contains("my-8b"));
    // 96 GB: the summary counts the picked card's memory.
    let s = lecture06_web::summary(&strings(&flags)).unwrap();
    assert_eq!(s.capacity.value, 96e9);
}

#[test]
fn a_picked_file_is_refused_as_the_command_line_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let broken = MY_CARD.replace("hbm_bandwidth = 1728e9\n", "hbm_bandwidth = -1\n");
    let path = dir.path().join("broken.toml");
    std::fs::write(&path, &broken).unwrap();
    let path = path.to_str().unwrap();
    let page = lecture06_web::open_file("hw", path, &broken).unwrap_err();
    let (code, _, err) = cli(&["--hw", path, "--demo", "1"]);
    assert_eq!(code, 2);
    // The command line's reason, word for word, after the flag and the file's name.
    let reason = err.trim_end().rsplit(&format!("{path}: ")).next().unwrap();
    let reason = reason.trim_end_matches("; see --help");
    assert!(page.ends_with(reason), "page: {page}\nterminal: {err}");
    // Refused files are not kept: the name answers as a missing file does.
    let nowhere = "nowhere/broken.toml";
    assert!(lecture06_web::open_file("hw", nowhere, &broken).is_err());
    let missing = answer(&strings(&["--hw", nowhere, "--demo", "1"])).answer;
    let Answer::Refused { message } = missing else {
        panic!("a refused file was kept");
    };
    assert!(message.contains("cannot read"), "{message}");
    assert!(lecture06_web::open_file("hw", "card.txt", MY_CARD).is_err());
    assert!(lecture06_web::open_file("target", "config.toml", MY_CONFIG).is_err());
}

#[test]
fn a_slider_rests_where_the_flag_changes_nothing_in_the_report() {
    let s = setup();
    assert!(!s.resting.is_empty());
    let html = |flags: &[&str]| match answer(&strings(flags)).answer {
        Answer::Page { html } => html,
        Answer::Refused { message } => panic!("{flags:?}: {message}"),
    };
    let plain = html(&["--demo", "1"]);
    for (name, value) in &s.resting {
        let (flag, at, moved) = (
            format!("--{name}"),
            value.to_string(),
            (value - 0.05).to_string(),
        );
        assert_eq!(html(&[&flag, &at, "--demo", "1"]), plain, "{flag} {at}");
        assert_ne!(
            html(&[&flag, &moved, "--demo", "1"]),
            plain,
            "{flag} {moved}"
        );
    }
}
