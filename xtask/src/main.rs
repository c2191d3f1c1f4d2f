//! Repository tasks, run as `cargo xtask TASK` (an alias in `.cargo/config.toml`).
//!
//! `cargo xtask new-lecture NN "title"` writes `lectures/lectureNN/`: a lecture crate that
//! compiles, prints one demo written on `lecture_kit`'s authoring API (a function on an
//! `Out`, typed values), has its snapshot test, a claim test on the demo's figures, the
//! shared command-line check, and a README. It
//! then formats the new crate and runs its tests once with `INSTA_UPDATE=always`, so the
//! snapshot is recorded: read it (`lectures/lectureNN/tests/snapshots/`) and commit it.
//! Nothing outside the new folder changes (the workspace takes `lectures/*` as members).

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

const USAGE: &str =
    "usage: cargo xtask new-lecture NN \"title\"   (NN: the lecture's number, 1–99)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("new-lecture") => new_lecture(&args[1..]),
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

#[allow(clippy::print_stdout)] // a command-line tool's own output
fn println_out(s: &str) {
    println!("{s}");
}

#[allow(clippy::print_stderr)]
fn eprint_err(s: &str) {
    eprintln!("{s}");
}

/// The workspace root: the folder above `xtask/`.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
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
    let title = title.trim();
    if title.is_empty() || title.contains(['"', '\\', '\n']) {
        return Err(format!(
            "the title must be one line without quotes or backslashes, got {title:?}"
        ));
    }
    let name = format!("lecture{n:02}");
    let dir = root().join("lectures").join(&name);
    if dir.exists() {
        return Err(format!("{} already exists", dir.display()));
    }
    // The folder is written whole or not at all: into a temporary folder beside it,
    // renamed when every file is there (a half-made folder would block the next try).
    let tmp = dir.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
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
    if let Err(e) = fs::rename(&tmp, &dir) {
        let _ = fs::remove_dir_all(&tmp);
        return Err(format!("cannot write {}: {e}", dir.display()));
    }
    cargo(&["fmt", "-p", &name], &[])?;
    // Record the snapshot (insta writes it on the first run when told to).
    cargo(
        &["test", "-q", "-p", &name],
        &[("INSTA_UPDATE", "always"), ("CI", "")],
    )?;
    println_out(&format!(
        "wrote lectures/{name}/ — `cargo run -p {name}` prints it; read the snapshot in \
         lectures/{name}/tests/snapshots/ and commit the folder; add a `{name}` row to \
         ARCHITECTURE.md's code map (tests/architecture.rs checks that every crate has one)"
    ));
    Ok(())
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

    /// Lines of the template written to `path`.
    fn lines(path: &str) -> usize {
        TEMPLATES
            .iter()
            .find(|t| t.0 == path)
            .unwrap()
            .1
            .lines()
            .count()
    }

    #[test]
    fn the_wiring_stays_within_40_lines_and_the_starter_demo_within_30() {
        // main and lib (the CLI and the registry) are wiring; the script module is content.
        let wiring = lines("src/main.rs") + lines("src/lib.rs");
        assert!(wiring <= 40, "{wiring} lines");
        let starter = lines("src/first_script.rs");
        assert!(starter <= 30, "the starter demo is {starter} lines");
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
        let tests = fill(TEMPLATES[5].1, 7, "测试");
        assert!(tests.contains("assert_snapshot!"));
        assert!(tests.contains("check_command_line::<Cli>(env!(\"CARGO_BIN_EXE_lecture07\"))"));
        assert!(
            tests.contains(".numbers("),
            "a claim on the figures, not only a snapshot"
        );
    }
}
