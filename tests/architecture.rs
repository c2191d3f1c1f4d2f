//! The invariants ARCHITECTURE.md states, each checked against the code: which crate may
//! depend on which (read from the map's own table), that no library knows a lecture or
//! words lecture text, that no source file is too long to read, and that code and docs
//! carry no tracker issue numbers.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{files, root};

/// The longest a non-test source file may be: lines before its first `#[cfg(test)]`.
pub const MAX_SOURCE_LINES: usize = 500;

/// Workspace crate → the workspace crates it depends on (normal dependencies), from
/// `cargo metadata`.
pub(crate) fn workspace_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = doc["packages"].as_array().unwrap();
    let members: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null()) // normal dependencies only
                .map(|d| d["name"].as_str().unwrap().to_string())
                .filter(|n| members.contains(n))
                .collect();
            (p["name"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

/// ARCHITECTURE.md's dependency table: crate → the workspace crates it may depend on
/// (`*` for a lecture, which may use them all).
fn allowed_dependencies(map: &str) -> BTreeMap<String, Option<BTreeSet<String>>> {
    let table = map
        .split("<!-- dependencies:begin -->")
        .nth(1)
        .and_then(|t| t.split("<!-- dependencies:end -->").next())
        .expect("ARCHITECTURE.md has its dependency table between the markers");
    table
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let name = cells[1].trim_matches('`').to_string();
            let allowed = match cells[2] {
                "*" => None,
                "—" => Some(BTreeSet::new()),
                list => Some(
                    list.split(',')
                        .map(|d| d.trim().trim_matches('`').to_string())
                        .collect(),
                ),
            };
            (name, allowed)
        })
        .collect()
}

fn check_dependencies(
    actual: &BTreeMap<String, BTreeSet<String>>,
    allowed: &BTreeMap<String, Option<BTreeSet<String>>>,
) -> Result<(), String> {
    for (krate, deps) in actual {
        let Some(rule) = allowed.get(krate) else {
            return Err(format!(
                "{krate} has no row in ARCHITECTURE.md's dependency table"
            ));
        };
        if let Some(rule) = rule
            && let Some(bad) = deps.iter().find(|d| !rule.contains(*d))
        {
            return Err(format!(
                "{krate} depends on {bad}, which ARCHITECTURE.md does not allow"
            ));
        }
    }
    if let Some(gone) = allowed.keys().find(|k| !actual.contains_key(*k)) {
        return Err(format!(
            "ARCHITECTURE.md lists {gone}, which is not a workspace crate"
        ));
    }
    Ok(())
}

fn architecture() -> String {
    fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md exists")
}

#[test]
fn every_crate_depends_only_on_what_the_map_allows() {
    let actual = workspace_dependencies();
    check_dependencies(&actual, &allowed_dependencies(&architecture())).unwrap();
    // Libraries sit below lectures: no crate under crates/ depends on a lecture.
    for (krate, deps) in &actual {
        if !krate.starts_with("lecture") || krate == "lecture_kit" || krate == "lecture_flags" {
            assert!(
                deps.iter().all(|d| !is_lecture(d)),
                "{krate} depends on a lecture: {deps:?}"
            );
        }
    }
}

#[test]
fn the_dependency_check_fails_on_a_forbidden_edge_and_a_missing_row() {
    let allowed = allowed_dependencies(
        "<!-- dependencies:begin -->\n| `a` | — | x | y |\n| `b` | `a` | x | y |\n| `l` | * | x | y |\n<!-- dependencies:end -->",
    );
    let graph = |edges: &[(&str, &[&str])]| -> BTreeMap<String, BTreeSet<String>> {
        edges
            .iter()
            .map(|(k, d)| (k.to_string(), d.iter().map(|s| s.to_string()).collect()))
            .collect()
    };
    let ok = graph(&[("a", &[]), ("b", &["a"]), ("l", &["a", "b"])]);
    assert_eq!(check_dependencies(&ok, &allowed), Ok(()));
    let upward = graph(&[("a", &["b"]), ("b", &["a"]), ("l", &[])]);
    assert!(
        check_dependencies(&upward, &allowed)
            .unwrap_err()
            .contains("a depends on b")
    );
    let unlisted = graph(&[("a", &[]), ("b", &[]), ("l", &[]), ("c", &[])]);
    assert!(
        check_dependencies(&unlisted, &allowed)
            .unwrap_err()
            .contains("c has no row")
    );
}

fn is_lecture(name: &str) -> bool {
    name.strip_prefix("lecture")
        .is_some_and(|n| n.len() == 2 && n.chars().all(|c| c.is_ascii_digit()))
}

/// How many lines of `src` come before its test module: the first `#[cfg(test)]` that an
/// item `mod` follows (a `#[cfg(test)]` on a statement or a helper does not end the code).
fn test_module_start(src: &str) -> usize {
    let lines: Vec<&str> = src.lines().collect();
    (0..lines.len())
        .find(|&i| {
            lines[i].trim_start().starts_with("#[cfg(test)]")
                && lines[i + 1..]
                    .iter()
                    .map(|l| l.trim_start())
                    .find(|l| !l.is_empty() && !l.starts_with("#[") && !l.starts_with("//"))
                    .is_some_and(|l| {
                        // `mod`, `pub mod`, `pub(crate) mod`, `pub(super) mod`, …
                        let l = l.strip_prefix("pub").map_or(l, |rest| {
                            rest.strip_prefix('(')
                                .and_then(|r| r.split_once(')'))
                                .map_or(rest, |(_, after)| after)
                        });
                        l.trim_start().starts_with("mod ")
                    })
        })
        .unwrap_or(lines.len())
}

/// The code lines of a source file: comment lines dropped, the test module cut off.
fn code_lines(src: &str) -> impl Iterator<Item = (usize, &str)> {
    src.lines()
        .enumerate()
        .take(test_module_start(src))
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| (i + 1, l))
}

/// Every `.rs` file under `crates/*/src`.
fn library_sources() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in fs::read_dir(root().join("crates")).unwrap() {
        out.extend(files(&dir.unwrap().path().join("src"), "rs"));
    }
    out
}

/// A Chinese character (CJK unified ideographs): words, not punctuation — `console` knows
/// which punctuation may not start a line, and that is typography, not wording.
fn is_cjk(c: char) -> bool {
    ('\u{4e00}'..='\u{9fff}').contains(&c)
}

/// The places outside lectures allowed to hold Chinese words: the course's page chrome
/// that every lecture shares (the observation list's heading, the handout's headings).
pub const CHROME: [&str; 3] = [
    "crates/console/src/chrome.rs",
    "crates/lecture_kit/src/chrome.rs",
    "crates/lecture_flags/src/chrome.rs",
];

fn chinese_in(path: &Path, src: &str) -> Option<String> {
    code_lines(src)
        .find(|(_, l)| l.chars().any(is_cjk))
        .map(|(n, l)| format!("{}:{n}: {}", path.display(), l.trim()))
}

#[test]
fn no_library_words_lecture_text_or_names_a_lecture() {
    for file in library_sources() {
        let rel = file
            .strip_prefix(root())
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let src = fs::read_to_string(&file).unwrap();
        if !CHROME.contains(&rel.as_str()) {
            assert_eq!(
                chinese_in(&file, &src),
                None,
                "lecture wording belongs in lectures/"
            );
        }
        for (n, line) in code_lines(&src) {
            let named = line.match_indices("lecture").any(|(i, _)| {
                let rest = &line[i + "lecture".len()..];
                rest.len() >= 2 && rest[..2].chars().all(|c| c.is_ascii_digit())
            });
            assert!(!named, "{rel}:{n} names a lecture: {}", line.trim());
            assert!(
                !line.contains("cargo run -p"),
                "{rel}:{n} builds a lecture command: {}",
                line.trim()
            );
        }
    }
}

#[test]
fn the_wording_check_finds_chinese_in_code_but_not_in_comments() {
    let p = Path::new("x.rs");
    assert_eq!(
        chinese_in(
            p,
            "// 注释\n/// 文档\nlet x = 1;\n#[cfg(test)]\nmod tests {\n    const T: &str = \"测试\";\n}"
        ),
        None
    );
    assert_eq!(
        chinese_in(p, "let x = 1;\nlet s = \"放不下\";"),
        Some("x.rs:2: let s = \"放不下\";".into())
    );
}

/// A file a script writes (tables copied from another project), said so in its first lines:
/// data, not code to read, and regenerated rather than edited.
fn is_generated(src: &str) -> bool {
    src.lines()
        .take(5)
        .any(|l| l.contains("Generated by `tools/") && l.contains("do not edit by hand"))
}

/// Lines before a file's test module ([`test_module_start`]).
fn non_test_lines(src: &str) -> usize {
    test_module_start(src)
}

#[test]
fn no_source_file_is_longer_than_500_lines() {
    let mut sources = library_sources();
    for dir in fs::read_dir(root().join("lectures")).unwrap() {
        sources.extend(files(&dir.unwrap().path().join("src"), "rs"));
    }
    assert!(sources.len() > 30, "found the sources");
    for file in sources {
        let src = fs::read_to_string(&file).unwrap();
        if is_generated(&src) {
            continue;
        }
        let n = non_test_lines(&src);
        assert!(
            n <= MAX_SOURCE_LINES,
            "{}: {n} lines before its tests",
            file.display()
        );
    }
    assert_eq!(non_test_lines("a\nb\n#[cfg(test)]\nmod tests {}\n"), 2);
    assert!(is_generated(
        "//! Tables.\n//! Generated by `tools/x.py`; do not edit by hand.\n"
    ));
    assert!(!is_generated("//! Hand-written.\n"));
}

/// A tracker issue number: "issue 13", "issue #6", "Issue 15" (this project's tracker has
/// fewer than a hundred; cited threads of other projects, "vLLM issue #20780", "SpecForge
/// issue 339", have more).
fn tracker_number(line: &str) -> bool {
    let lower = line.to_lowercase();
    lower.match_indices("issue").any(|(i, _)| {
        let rest = lower[i + 5..].trim_start_matches('s').trim_start();
        let rest = rest.strip_prefix('#').unwrap_or(rest);
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        !digits.is_empty() && digits.len() <= 2
    })
}

#[test]
fn code_and_docs_carry_no_tracker_issue_numbers() {
    let mut paths = Vec::new();
    for dir in ["crates", "lectures", "docs", "xtask", "tools", "tests"] {
        for ext in ["rs", "md", "toml", "tmpl", "py", "sh"] {
            paths.extend(files(&root().join(dir), ext));
        }
    }
    for top in ["README.md", "ARCHITECTURE.md", "Cargo.toml", ".ci/run"] {
        paths.push(root().join(top));
    }
    for path in paths {
        if path.components().any(|c| c.as_os_str() == "target") {
            continue;
        }
        if path.ends_with("tests/architecture.rs") {
            continue; // the checker's own examples
        }
        let text = fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            assert!(
                !tracker_number(line),
                "{}:{}: {line}",
                path.display(),
                n + 1
            );
        }
    }
    assert!(tracker_number("the flags of issue 13") && tracker_number("Issue #6's check"));
    assert!(!tracker_number("vLLM issue #20780") && !tracker_number("SpecForge issue 339"));
}

/// The functions ARCHITECTURE.md lists on the path from `main` to the formula that prints
/// c, as `` `path/file.rs` `` … `` `fn name` `` rows.
#[test]
fn the_call_path_to_c_is_short_and_every_step_exists() {
    let map = architecture();
    let path = map
        .split("<!-- path-to-c:begin -->")
        .nth(1)
        .and_then(|t| t.split("<!-- path-to-c:end -->").next())
        .expect("ARCHITECTURE.md lists the path to c between the markers");
    let steps: Vec<(String, String)> = path
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| {
            let ticks: Vec<&str> = l.split('`').collect();
            (ticks[1].to_string(), ticks[3].to_string())
        })
        .collect();
    assert!(steps.len() >= 2, "{steps:?}");
    // At most 6 calls: adding a level fails.
    assert!(
        steps.len() - 1 <= 6,
        "{} calls from main to c",
        steps.len() - 1
    );
    let demo_rs = fs::read_to_string(root().join("crates/lecture_kit/src/demo.rs")).unwrap();
    for (i, (file, func)) in steps.iter().enumerate() {
        let src = fs::read_to_string(root().join(file)).unwrap_or_else(|_| panic!("{file}"));
        let body = fn_body(&src, func).unwrap_or_else(|| panic!("{file} has no fn {func}"));
        // Each step's body calls the next one, but for the two hops through the demo's
        // boxed run: the runner calls `Prepared::run`, whose box (made in `demo.rs`) calls
        // `run_demo`; `run_demo` calls the `run` it was given, the lecture's `demo1::run`
        // (named in the script's list of demos).
        if let Some((next_file, next)) = steps.get(i + 1) {
            let boxed = next == "run_demo"
                && body.contains(".run(L::DEFAULT_ONLY)")
                && demo_rs.contains("run_demo(number, run, &inputs, mark)");
            let given = next_file.ends_with("demo1.rs")
                && body.contains("run(&mut out, inputs)")
                && fs::read_to_string(root().join(SCRIPT_MOD))
                    .is_ok_and(|m| m.contains("Demo::new(1, demo1::run)"));
            let calls = body.contains(&format!("{next}(")) || body.contains(&format!("{next}::<"));
            assert!(
                calls || boxed || given,
                "{file}: fn {func} does not call {next}"
            );
        }
    }
}

/// Where lecture 6's script registers its demos.
const SCRIPT_MOD: &str = "lectures/lecture06/src/spec_decode_on_hardware/mod.rs";

/// The text of `fn name` in `src`, from its signature to the closing brace at the
/// indentation of the line it starts on.
fn fn_body<'a>(src: &'a str, name: &str) -> Option<&'a str> {
    let start = src
        .match_indices(&format!("fn {name}"))
        .map(|(i, _)| i)
        .find(|&i| src[i + 3 + name.len()..].starts_with(['(', '<']))?;
    let line_start = src[..start].rfind('\n').map_or(0, |i| i + 1);
    let indent = &src
        [line_start..line_start + src[line_start..].len() - src[line_start..].trim_start().len()];
    let close = format!("\n{indent}}}");
    let end = src[start..].find(&close)? + start + close.len();
    Some(&src[start..end])
}

#[test]
fn a_function_body_ends_at_its_own_closing_brace() {
    let src =
        "fn a() {\n    b();\n}\n\npub fn c<T>() {\n    if x {\n    }\n    d();\n}\nfn ab() {}\n";
    assert_eq!(fn_body(src, "a"), Some("fn a() {\n    b();\n}"));
    assert!(fn_body(src, "c").unwrap().ends_with("d();\n}"));
    assert!(!fn_body(src, "a").unwrap().contains("d()"));
    assert_eq!(fn_body(src, "e"), None);
}

/// The files ARCHITECTURE.md allows `unsafe` code in: transformer_lab's `cpu` (the AVX2
/// dispatch after its runtime check, the prefetch hint) and host_lab's INT4 kernel.
pub const UNSAFE_FILES: [&str; 4] = [
    "crates/transformer_lab/src/cpu.rs",
    "crates/transformer_lab/src/gemm/avx512.rs",
    "crates/host_lab/src/int4.rs",
    "crates/host_lab/src/int4/avx2.rs",
];

/// The lines of `src` (tests included, comment lines not) that open an `unsafe` block or
/// declare an `unsafe fn` / `impl`.
fn unsafe_lines(src: &str) -> Vec<usize> {
    src.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .filter(|(_, l)| {
            [
                "unsafe {",
                "unsafe{",
                "unsafe fn",
                "unsafe impl",
                "unsafe trait",
                "unsafe extern",
            ]
            .iter()
            .any(|u| l.contains(u))
        })
        .map(|(n, _)| n)
        .collect()
}

#[test]
fn unsafe_code_lives_only_where_the_map_says() {
    let mut sources = library_sources();
    // Not the top-level tests/: this file names the patterns it looks for.
    for dir in ["lectures", "xtask", "tools"] {
        sources.extend(files(&root().join(dir), "rs"));
    }
    for dir in fs::read_dir(root().join("crates")).unwrap() {
        let dir = dir.unwrap().path();
        for sub in ["benches", "examples", "tests"] {
            sources.extend(files(&dir.join(sub), "rs"));
        }
    }
    let mut found = Vec::new();
    for path in sources {
        let rel = path
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let src = fs::read_to_string(&path).unwrap();
        let lines = unsafe_lines(&src);
        if !lines.is_empty() && !UNSAFE_FILES.contains(&rel.as_str()) {
            found.push(format!("{rel}: lines {lines:?}"));
        }
    }
    assert!(
        found.is_empty(),
        "unsafe outside {UNSAFE_FILES:?}: {found:?}"
    );
    // A `#[cfg(test)]` on a statement does not end the code; one on `mod tests` does.
    let src = "fn f() {\n    #[cfg(test)]\n    g();\n}\n#[cfg(test)]\nmod tests {}\n";
    assert_eq!(test_module_start(src), 4);
    let src = "fn f() {}\n#[cfg(test)]\n// helpers\npub(crate) mod tests {}\n";
    assert_eq!(test_module_start(src), 1);
    // The check sees a block and a function, and not a comment that names one.
    assert_eq!(
        unsafe_lines("// unsafe { x }\nlet y = unsafe { f() };\n    unsafe fn g() {}\n"),
        [2, 3]
    );
    let arch = architecture();
    assert!(
        arch.contains("`unsafe` only in `cpu`")
            && arch.contains("`unsafe` only in its AVX2 INT4 kernel")
    );
}
