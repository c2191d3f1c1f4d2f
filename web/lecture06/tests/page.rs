//! The page's answers against the command line's: the same flags through
//! `lecture_kit::run` (what `cargo run -p lecture06 -- FLAGS` does) must give the same
//! sections as `--format html` draws, or the same refusal it prints on standard error.
//! (`.ci/web-check.cjs` checks the page itself, in Chromium, against `--format json`.)

use lecture_kit::web::Answer;
use lecture06_web::{PAGE_DEMOS, answer, setup};

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
