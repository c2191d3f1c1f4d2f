//! Workspace-level tests over every lecture folder under `lectures/`, found on disk: a
//! lecture added with `cargo xtask new-lecture` is checked without editing this crate.
//!
//! Each lecture's own tests (snapshot, claims, command line) live in its folder; these
//! check what every lecture must share: the layout, the thin `main`, the snapshot test,
//! files short enough to read; and over the whole repository, the crate floors
//! (`floors.rs`) and no import cycle between files (`imports.rs`).

mod architecture;
mod floors;
mod imports;
mod porting_table;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The longest file a lecture folder may hold, lines.
const MAX_LINES: usize = 500;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn lectures() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(root().join("lectures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "no lecture found");
    dirs
}

/// Every file under `dir`, recursively, with the given extension.
fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return out;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files(&p, ext));
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn every_lecture_is_a_workspace_crate_with_a_thin_main_and_its_own_snapshot_test() {
    let members = fs::read_to_string(root().join("Cargo.toml")).unwrap();
    assert!(
        members.contains("\"lectures/*\""),
        "lectures are members by glob"
    );
    for dir in lectures() {
        let name = dir.file_name().unwrap().to_str().unwrap();
        let manifest = fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(manifest.contains(&format!("name = \"{name}\"")), "{name}");
        assert!(manifest.contains("[lints]\nworkspace = true"), "{name}");
        assert!(manifest.contains("lecture_kit"), "{name} uses the kit");
        assert!(dir.join("README.md").is_file(), "{name} has a README");
        let main = fs::read_to_string(dir.join("src/main.rs")).unwrap();
        assert!(
            main.contains("lecture_kit::main::<"),
            "{name}: main calls the kit"
        );
        assert!(
            main.lines().count() <= 10,
            "{name}: main stays a thin shell"
        );
        let tests = files(&dir.join("tests"), "rs");
        assert!(
            tests
                .iter()
                .any(|t| fs::read_to_string(t).unwrap().contains("assert_snapshot!")),
            "{name} has a snapshot test"
        );
        assert!(
            !files(&dir.join("tests/snapshots"), "snap").is_empty(),
            "{name}: its snapshots are committed (CI fails on a missing one)"
        );
    }
}

#[test]
fn no_file_in_a_lecture_is_longer_than_500_lines() {
    for dir in lectures() {
        for file in files(&dir, "rs") {
            let n = fs::read_to_string(&file).unwrap().lines().count();
            assert!(n <= MAX_LINES, "{}: {n} lines", file.display());
        }
    }
}

/// The relative links of a Markdown text: the targets of `](…)` that are not a web address
/// or an anchor, without their `#fragment`.
fn relative_links(md: &str) -> Vec<String> {
    md.split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .filter(|t| !t.is_empty() && !t.contains("://") && !t.starts_with('#'))
        .map(|t| t.split('#').next().unwrap_or(t).to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

#[test]
fn every_relative_link_in_the_docs_names_a_committed_file() {
    let tracked = std::process::Command::new("git")
        .args(["ls-files"])
        .current_dir(root())
        .output()
        .expect("git runs");
    let tracked: BTreeSet<String> = String::from_utf8(tracked.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let dirs: BTreeSet<String> = tracked
        .iter()
        .flat_map(|f| {
            let parts: Vec<&str> = f.split('/').collect();
            (1..parts.len()).map(move |i| parts[..i].join("/"))
        })
        .collect();
    let mut docs = vec![root().join("README.md"), root().join("ARCHITECTURE.md")];
    docs.extend(files(&root().join("lectures"), "md"));
    let mut broken = Vec::new();
    for doc in docs {
        let text = fs::read_to_string(&doc).unwrap();
        let base = doc
            .parent()
            .unwrap()
            .strip_prefix(root())
            .unwrap()
            .to_path_buf();
        for link in relative_links(&text) {
            // Resolve against the document's folder, dropping `.` and `..`.
            let mut parts: Vec<String> = base
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            for p in link.trim_end_matches('/').split('/') {
                match p {
                    "." | "" => {}
                    ".." => {
                        parts.pop();
                    }
                    p => parts.push(p.to_string()),
                }
            }
            let path = parts.join("/");
            if !tracked.contains(&path) && !dirs.contains(&path) {
                broken.push(format!("{}: {link}", doc.display()));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to files git does not track: {broken:?}"
    );
    assert_eq!(
        relative_links("[a](docs/x.svg) [b](https://e.org) [c](#top) [d](../y.md#s)"),
        ["docs/x.svg", "../y.md"]
    );
}
