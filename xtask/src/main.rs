//! Repository tasks, run as `cargo xtask TASK` (an alias in `.cargo/config.toml`).
//!
//! `cargo xtask new-lecture NN "title"` writes `lectures/lectureNN/`: a lecture crate that
//! compiles, prints one demo written on `lecture_kit`'s authoring API (a function on an
//! `Out`, typed values), has its snapshot test, a claim test on the demo's figures, the
//! shared command-line check, and a README. It
//! then adds the crate's row to ARCHITECTURE.md's code map, formats the new crate and runs
//! its tests once with `INSTA_UPDATE=always`, so the snapshot is recorded: read it
//! (`lectures/lectureNN/tests/snapshots/`) and commit it. Nothing else changes (the
//! workspace takes `lectures/*` as members; `Cargo.lock` gains the new package).
//!
//! `cargo xtask new-script NN SS NAME "title"` adds script `SS_NAME` (the Python file
//! `SS_NAME.py`) to the existing lecture NN: its module, its place in the lecture's list of
//! scripts (after the others), its snapshot test, recorded once, and its row in the
//! lecture's table of scripts; nothing outside the lecture's folder (see `script.rs`).
//!
//! `cargo xtask web [lectureNN]` writes `target/web/lectureNN.html`, the lecture as a page
//! that runs its crates in WebAssembly (see `web.rs`).
//!
//! `cargo xtask train corpus|prompts|target|draft|distilled|layerskip|medusa|eagle|measure` trains one of
//! train_lab's shipped models and writes its safetensors file (see `train.rs`).

mod measure;
mod script;
mod train;
mod train_eagle;
mod web;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The template files, in the new lecture's layout.
const TEMPLATES: [(&str, &str); 6] = [
    ("Cargo.toml", include_str!("../templates/Cargo.toml.tmpl")),
    ("README.md", include_str!("../templates/README.md.tmpl")),
    ("src/main.rs", include_str!("../templates/main.rs.tmpl")),
    ("src/lib.rs", include_str!("../templates/lib.rs.tmpl")),
    (
        "src/first_script.rs",
        include_str!("../templates/first_script.rs.tmpl"),
    ),
    (
        "tests/output.rs",
        include_str!("../templates/output.rs.tmpl"),
    ),
];

const USAGE: &str = "usage: cargo xtask new-lecture NN \"title\"   (NN: the lecture's number, 1–99)
       cargo xtask new-script NN SS NAME \"title\"   (script SS_NAME.py added to lecture NN)
       cargo xtask web [lectureNN]           (the lecture as one page: target/web/lectureNN.html)
       cargo xtask train corpus|prompts|target|draft|distilled|layerskip|medusa|eagle|measure [--steps N]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("new-lecture") => new_lecture(&args[1..]),
        Some("new-script") => script::run(&args[1..]),
        Some("web") => web::web(&args[1..]).map(|_| ()),
        Some("train") => train::run(&root(), &args[1..]),
        Some("help" | "--help" | "-h") | None => {
            println_out(USAGE);
            return ExitCode::SUCCESS;
        }
        Some(other) => Err(format!("unknown task {other:?}; {USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprint_err(&format!("xtask: {e}"));
            ExitCode::from(2)
        }
    }
}

/// `r` with `steps` optimiser steps and a twentieth of them to warm up, when given.
pub(crate) fn with_steps(
    mut r: train_lab::recipe::Recipe,
    steps: Option<usize>,
) -> train_lab::recipe::Recipe {
    if let Some(s) = steps {
        r.schedule.steps = s;
        r.schedule.warmup = s / 20;
    }
    r
}

/// A training run's progress for its `log`: about 30 lines over `steps` and the last
/// step, each with the seconds since `start`; `unit` follows the loss ("nats", or nothing
/// for a loss that mixes kinds).
pub(crate) fn progress(
    steps: usize,
    start: std::time::Instant,
    unit: &'static str,
) -> impl FnMut(&train_lab::train::StepLog) {
    let every = (steps / 30).max(1);
    move |l| {
        if l.step % every == 0 || l.step + 1 == steps {
            let secs = start.elapsed().as_secs_f64();
            println_out(&format!(
                "step {:>5}  loss {:.3}{unit}  lr {:.2e}  |g| {:.2}  {secs:.0} s",
                l.step, l.loss, l.lr, l.grad_norm
            ));
        }
    }
}

#[allow(clippy::print_stdout)] // a command-line tool's own output
pub(crate) fn println_out(s: &str) {
    println!("{s}");
}

#[allow(clippy::print_stderr)]
fn eprint_err(s: &str) {
    eprintln!("{s}");
}

/// The workspace root: the folder above `xtask/`. `cargo run` (the `cargo xtask` alias)
/// says where xtask's manifest is at run time; the path compiled in is the fallback. Cargo
/// may reuse a binary built from a copy of the workspace sharing the target folder (CI's
/// generator step does), and then the compiled-in path names the copy.
pub(crate) fn root() -> PathBuf {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest.parent().map(Path::to_path_buf).unwrap_or(manifest)
}

/// Parses "7" or "07" into the lecture number.
fn parse_number(text: &str) -> Result<u32, String> {
    match text.parse::<u32>() {
        Ok(n) if (1..=99).contains(&n) => Ok(n),
        _ => Err(format!(
            "the lecture number must be 1–99, got {text:?}; {USAGE}"
        )),
    }
}

/// The most characters a title may have (it goes into a Cargo.toml description, a page
/// title and a README heading).
const MAX_TITLE: usize = 80;

/// The title, trimmed, if it can go into every file the generator writes: one line of at
/// most [`MAX_TITLE`] characters, no control character (a carriage return, DEL, …), no
/// invisible formatting character ([`invisible`]: rustc refuses the text-direction ones
/// even in a comment), no quote or backslash (it sits inside TOML and Rust strings), no
/// bracket or backtick (a doc comment would read them as a link or code) and no `|` (it
/// sits in a Markdown table row).
fn check_title(title: &str) -> Result<&str, String> {
    let title = title.trim();
    let bad = title
        .chars()
        .find(|&c| c.is_control() || invisible(c) || "\"\\[]|`".contains(c));
    if title.is_empty() || title.chars().count() > MAX_TITLE || bad.is_some() {
        return Err(format!(
            "the title must be 1–{MAX_TITLE} characters on one line, without control or \
             invisible characters, quotes, backslashes, brackets, backticks or |, got {title:?}"
        ));
    }
    Ok(title)
}

/// Unicode's default-ignorable characters (zero-width and text-direction marks, variation
/// selectors, tags, the soft hyphen, …), line and paragraph separators, the byte-order
/// mark: characters a reader cannot see, which change how the files read or compile.
fn invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}'
        | '\u{17B5}' | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}'
        | '\u{2028}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{3164}'
        | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}' | '\u{FFF0}'..='\u{FFF8}'
        | '\u{1BCA0}'..='\u{1BCA3}' | '\u{1D173}'..='\u{1D17A}' | '\u{E0000}'..='\u{E0FFF}')
}

/// ARCHITECTURE.md with a row for lecture `n` added to its code map, after the last
/// lecture's row; `None` when the map has no lecture row to follow.
fn with_map_row(map: &str, n: u32, title: &str) -> Option<String> {
    let name = format!("lecture{n:02}");
    let row = format!(
        "| `{name}` | * | lecture {n} ({title}) as its scripts print it: the only place its \
         sentences live | `Cli`, one module per script |"
    );
    let end = map.find("<!-- dependencies:end -->")?;
    let last = map[..end]
        .lines()
        .rfind(|l| l.starts_with("| `lecture") && !l.starts_with("| `lecture-"))?;
    let at = map.find(last)? + last.len();
    Some(format!("{}\n{row}{}", &map[..at], &map[at..]))
}

/// Writes `text` to `path` whole: a temporary file beside it, renamed over it.
fn write_whole(path: &Path, text: &str) -> Result<(), String> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    let written = fs::write(&tmp, text).and_then(|()| fs::rename(&tmp, path));
    written.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        format!("cannot write {}: {e}", path.display())
    })
}

/// Fills a template: `{{N}}` (7), `{{NN}}` (07), `{{TITLE}}`.
fn fill(template: &str, n: u32, title: &str) -> String {
    template
        .replace("{{NN}}", &format!("{n:02}"))
        .replace("{{N}}", &n.to_string())
        .replace("{{TITLE}}", title)
}

fn new_lecture(args: &[String]) -> Result<(), String> {
    let [number, title] = args else {
        return Err(USAGE.to_string());
    };
    let n = parse_number(number)?;
    let title = check_title(title)?;
    let name = format!("lecture{n:02}");
    let dir = root().join("lectures").join(&name);
    if dir.exists() {
        return Err(format!("{} already exists", dir.display()));
    }
    // The folder is written whole or not at all: into a temporary folder under target/
    // (outside `lectures/*`, so cargo never takes a half-made crate for a member), renamed
    // into place when every file is there.
    let scratch = root().join("target").join("xtask");
    fs::create_dir_all(&scratch)
        .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    let tmp = scratch.join(format!("{name}.tmp-{}", std::process::id()));
    for (path, template) in TEMPLATES {
        let file = tmp.join(path);
        let written = file
            .parent()
            .map_or(Ok(()), fs::create_dir_all)
            .and_then(|()| fs::write(&file, fill(template, n, title)));
        if let Err(e) = written {
            let _ = fs::remove_dir_all(&tmp);
            return Err(format!("cannot write {}: {e}", dir.join(path).display()));
        }
    }
    let map_path = root().join("ARCHITECTURE.md");
    let map = fs::read_to_string(&map_path)
        .ok()
        .and_then(|m| with_map_row(&m, n, title));
    let Some(map) = map else {
        let _ = fs::remove_dir_all(&tmp);
        return Err("ARCHITECTURE.md has no code map with a lecture row to add to".into());
    };
    if let Err(e) = fs::rename(&tmp, &dir) {
        let _ = fs::remove_dir_all(&tmp);
        return Err(format!("cannot write {}: {e}", dir.display()));
    }
    // A crate that keeps the workspace from loading would break every cargo command:
    // checked before anything else is changed, and taken out again if so.
    if let Err(e) = workspace_loads() {
        let _ = fs::remove_dir_all(&dir);
        return Err(format!(
            "the new crate would break the workspace, so it was not kept: {e}"
        ));
    }
    let old_map = fs::read_to_string(&map_path).unwrap_or_default();
    write_whole(&map_path, &map)?;
    // Formatted and tested (the snapshot recorded: insta writes it on the first run when
    // told to) before it counts as made; if either fails, the crate and its map row go.
    let checked = cargo(&["fmt", "-p", &name], &[]).and_then(|()| {
        cargo(
            &["test", "-q", "-p", &name],
            &[("INSTA_UPDATE", "always"), ("CI", "")],
        )
    });
    if let Err(e) = checked {
        let _ = fs::remove_dir_all(&dir);
        let _ = write_whole(&map_path, &old_map);
        return Err(format!(
            "{e}; lectures/{name}/ and its map row were taken out again"
        ));
    }
    println_out(&format!(
        "wrote lectures/{name}/ and its row in ARCHITECTURE.md's code map — `cargo run -p \
         {name}` prints it; read the snapshot in lectures/{name}/tests/snapshots/ and commit"
    ));
    Ok(())
}

/// Whether cargo can still read the workspace (`cargo metadata`); its error when not.
fn workspace_loads() -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    Err(stderr
        .lines()
        .next()
        .unwrap_or("cargo metadata failed")
        .to_string())
}

/// Runs cargo in the workspace root with `env` set (an empty value removes the variable).
fn cargo(args: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(args).current_dir(root());
    for (k, v) in env {
        if v.is_empty() {
            cmd.env_remove(k);
        } else {
            cmd.env(k, v);
        }
    }
    let status = cmd.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` failed ({status})", args.join(" ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_one_or_two_digits() {
        assert_eq!(parse_number("7"), Ok(7));
        assert_eq!(parse_number("07"), Ok(7));
        assert!(parse_number("0").is_err());
        assert!(parse_number("100").unwrap_err().contains("1–99"));
        assert!(parse_number("x").is_err());
    }

    #[test]
    fn templates_are_filled_everywhere() {
        for (path, t) in TEMPLATES {
            let filled = fill(t, 7, "测试");
            assert!(!filled.contains("{{"), "{path}: {filled}");
        }
        assert!(fill(TEMPLATES[0].1, 7, "测试").contains("name = \"lecture07\""));
        assert!(fill(TEMPLATES[3].1, 7, "测试").contains("const NUMBER: u32 = 7;"));
    }

    #[test]
    fn a_title_that_cannot_go_into_every_file_is_refused() {
        assert_eq!(
            check_title("  投机解码的服务系统 "),
            Ok("投机解码的服务系统")
        );
        for bad in [
            "",
            "   ",
            "a\rb",
            "a\u{1}b",
            "a\u{7f}b",
            "a\nb",
            "\"q\"",
            "back\\slash",
            "right\u{202e}to left",
            "zero\u{200b}width",
            "line\u{2028}separator",
            "\u{feff}bom",
            "soft\u{ad}hyphen",
            "tag\u{e0041}",
            "a [link]",
            "a | pipe",
            "`code`",
        ] {
            assert!(check_title(bad).is_err(), "{bad:?}");
        }
        assert!(check_title(&"长".repeat(MAX_TITLE)).is_ok());
        assert!(check_title(&"长".repeat(MAX_TITLE + 1)).is_err());
    }

    #[test]
    fn the_code_map_gains_the_new_lectures_row_after_the_last_one() {
        let map = "x\n<!-- dependencies:begin -->\n| `lecture06` | * | a | b |\n\
                   | `lecture90` | * | c | d |\n| `lecture-tests` | — | e | f |\n\
                   <!-- dependencies:end -->\n";
        let new = with_map_row(map, 7, "标题").unwrap();
        let rows: Vec<&str> = new.lines().filter(|l| l.starts_with("| `")).collect();
        assert_eq!(rows.len(), 4);
        assert!(
            rows[2].starts_with("| `lecture07` | * | lecture 7 (标题)"),
            "{new}"
        );
        assert!(rows[3].starts_with("| `lecture-tests`"));
        assert!(with_map_row("no map", 7, "t").is_none());
        // The real map has the rows to follow.
        let real = fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
        assert!(
            with_map_row(&real, 7, "t")
                .unwrap()
                .contains("| `lecture07` |")
        );
    }

    #[test]
    fn the_starter_reads_like_a_script_one_binding_per_let_and_short_lines() {
        for (path, t) in TEMPLATES.iter().filter(|t| t.0.ends_with(".rs")) {
            let filled = fill(t, 7, "测试");
            for line in filled.lines() {
                let packed = line.trim_start().starts_with("let (") && line.contains(") = (");
                assert!(!packed, "{path}: {line}");
                assert!(
                    line.chars().count() <= 100 || line.contains('"'),
                    "{path}: {line}"
                );
            }
        }
    }

    #[test]
    fn the_starter_is_written_on_the_authoring_api_and_tests_a_claim() {
        let script = fill(TEMPLATES[4].1, 7, "测试");
        for call in [
            "out.header(",
            "out.table(",
            "out.observations(",
            "out.figure(",
            "row![",
        ] {
            assert!(script.contains(call), "{call}");
        }
        assert!(!script.contains("Cell::") && !script.contains("Serialize"));
        // The demo's claims beside it, where a port replaces them with its own.
        assert!(
            script.contains("#[cfg(test)]") && script.contains(".numbers("),
            "a claim on the figures, not only a snapshot"
        );
        // The lecture's tests: what every lecture's say, nothing of the starter demo.
        let tests = fill(TEMPLATES[5].1, 7, "测试");
        assert!(tests.contains("assert_snapshot!"));
        assert!(tests.contains("check_command_line::<Cli>(env!(\"CARGO_BIN_EXE_lecture07\"))"));
        assert!(!tests.contains("demo1") && !tests.contains(".numbers("));
    }
}
