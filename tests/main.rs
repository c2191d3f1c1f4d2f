//! Workspace-level tests over every lecture folder under `lectures/`, found on disk: a
//! lecture added with `cargo xtask new-lecture` is checked without editing this crate.
//!
//! Each lecture's own tests (snapshot, claims, command line) live in its folder; these
//! check what every lecture must share: the layout, the thin `main`, the snapshot test,
//! files short enough to read, and no import cycles between a script's modules.

mod architecture;
mod floors;
mod porting_table;

use std::collections::{BTreeMap, BTreeSet};
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

/// The sibling modules a module file refers to (`super::NAME`), in a script folder.
fn sibling_refs(src: &str, siblings: &BTreeSet<String>) -> BTreeSet<String> {
    let mut refs = BTreeSet::new();
    for (i, _) in src.match_indices("super::") {
        let rest = &src[i + "super::".len()..];
        let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            group[..end]
                .split(',')
                .map(|s| s.trim().split("::").next().unwrap_or("").trim())
                .collect()
        } else {
            vec![
                rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or(""),
            ]
        };
        for n in names {
            assert!(
                siblings.contains(n) || n == "self" || n.is_empty(),
                "`super::{n}` reaches into the parent module; import from a sibling module"
            );
            if siblings.contains(n) {
                refs.insert(n.to_string());
            }
        }
    }
    refs
}

#[test]
fn no_two_modules_of_a_script_import_each_other() {
    for dir in lectures() {
        for folder in fs::read_dir(dir.join("src")).unwrap() {
            let folder = folder.unwrap().path();
            if !folder.is_dir() {
                continue;
            }
            let modules: BTreeMap<String, String> = files(&folder, "rs")
                .into_iter()
                .filter(|f| f.parent() == Some(folder.as_path()))
                .filter(|f| f.file_stem().unwrap() != "mod")
                .map(|f| {
                    let stem = f.file_stem().unwrap().to_str().unwrap().to_string();
                    let code: Vec<String> = fs::read_to_string(&f)
                        .unwrap()
                        .lines()
                        .filter(|l| !l.trim_start().starts_with("//"))
                        .map(String::from)
                        .collect();
                    (stem, code.join("\n"))
                })
                .collect();
            let names: BTreeSet<String> = modules.keys().cloned().collect();
            let graph: BTreeMap<&String, BTreeSet<String>> = modules
                .iter()
                .map(|(m, src)| (m, sibling_refs(src, &names)))
                .collect();
            if let Some(cycle) = find_cycle(&graph) {
                panic!("import cycle: {}", cycle.join(" → "));
            }
        }
    }
}

/// A cycle in a module graph (module → the sibling modules it imports), if there is one,
/// as the path that closes it (`a → b → a`).
fn find_cycle(graph: &BTreeMap<&String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        graph: &BTreeMap<&String, BTreeSet<String>>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|p| p == m) {
            let mut cycle = path[start..].to_vec();
            cycle.push(m.to_string());
            return Some(cycle);
        }
        path.push(m.to_string());
        let next = graph.get(&m.to_string()).into_iter().flatten();
        for n in next {
            if let Some(c) = visit(n, graph, path) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    graph.keys().find_map(|m| visit(m, graph, &mut Vec::new()))
}

#[test]
fn the_cycle_check_finds_a_cycle_and_passes_a_tree() {
    let names: BTreeSet<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    assert_eq!(
        sibling_refs("use super::{b::X, b};", &names),
        BTreeSet::from(["b".to_string()])
    );
    let r = std::panic::catch_unwind(|| sibling_refs("use super::Round;", &names));
    assert!(r.is_err(), "a parent item is refused");
    let (a, b, c) = ("a".to_string(), "b".to_string(), "c".to_string());
    let set = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    // a imports b and c, b imports c: no cycle.
    let tree = BTreeMap::from([(&a, set(&["b", "c"])), (&b, set(&["c"])), (&c, set(&[]))]);
    assert_eq!(find_cycle(&tree), None);
    // ... and c importing a closes a → b → c → a.
    let cyclic = BTreeMap::from([(&a, set(&["b"])), (&b, set(&["c"])), (&c, set(&["a"]))]);
    assert_eq!(
        find_cycle(&cyclic),
        Some(vec![a.clone(), b.clone(), c.clone(), a.clone()])
    );
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
