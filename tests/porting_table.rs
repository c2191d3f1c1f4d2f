//! The README's porting table (Python → Rust) against the code: every Rust name a row lists
//! must exist where the row says, so that a porter who copies a name from the table finds it.
//!
//! What a row's Rust cell may name, inside backticks, and what is checked:
//! - a path into a workspace crate (`decode_lab::best_round`, `py_port::format::{format_f64,
//!   repr_f64}`): each module on the way is a `pub mod`, and the last name is a public item
//!   of that module or one of its `pub use` re-exports, followed to where it is defined (in
//!   this crate or another workspace crate); a type on the way (`TransformerLM::new`) must
//!   have the member as a `fn`, a variant or an associated `const`;
//! - a method of the value a call returns (`forward_cost(…).time()`), and `out.name` (a
//!   method of `lecture_kit::Out`): a `fn` of that name in the crate;
//! - `Type::member` and bare names (`Scenario::new`, `KvCache`, `full_logits`; see [`names`]
//!   for which single words count): defined in one of the crates the cell names;
//! - "the same methods": every `.method` of the Python cell is a `pub fn` of the crate.
//!
//! Standard-library names (`std::…`, `Result`, `println!`) are not checked.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::{files, root};

/// Names from the standard library or the prelude a cell may mention.
const STD_NAMES: [&str; 8] = [
    "Result", "Option", "Vec", "String", "Err", "Ok", "Some", "None",
];

/// The rows of the README's porting table, `(python, rust)`.
fn porting_rows(readme: &str) -> Vec<(String, String)> {
    let table = readme.split("\n| Python | Rust |\n").nth(1);
    let table = table.expect("README.md has a `| Python | Rust |` table");
    let rows = table.lines().skip(1).take_while(|l| l.starts_with('|')); // after the |---|
    rows.map(|l| {
        let cells: Vec<String> = l
            .replace("\\|", "¦")
            .split('|')
            .map(|c| c.trim().into())
            .collect();
        (cells[1].clone(), cells[2].clone())
    })
    .collect()
}

/// The text between backticks.
fn code_spans(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// A name a cell refers to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Name {
    /// `a::b::c` (a `{…}` group expanded into one path per item).
    Path(Vec<String>),
    /// `.method` after a call of a path, after `out`, or opening a span (`.time()`): a method
    /// or a public field.
    Method(String),
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The paths and methods a code span names: `a::b::{c, d::e}` gives `a::b::c` and
/// `a::b::d::e`; `krate::f(x).m()`, `out.m` and a span `.m` give the method `m`. A single identifier is a
/// name only if it is CamelCase, or the whole span and in snake_case with an underscore
/// (`KvCache`, `full_logits`; not `n`, `nan` or `extend`, which prose uses too).
fn names(span: &str) -> Vec<Name> {
    let chars: Vec<char> = span.chars().collect();
    let (mut out, mut path_ends) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < chars.len() {
        let after_dot = i > 0 && chars[i - 1] == '.' && (i < 2 || chars[i - 2] != '.');
        if !is_ident(chars[i]) || (i > 0 && is_ident(chars[i - 1])) {
            i += 1;
            continue;
        }
        let (paths, end) = path_at(&chars, i);
        if after_dot {
            let before: String = chars[..i - 1].iter().collect();
            let out_dot = before
                .strip_suffix("out")
                .is_some_and(|b| !b.ends_with(is_ident));
            // `krate::f(…).m`: the call's `(` follows a path of the cell.
            let mut depth = 0;
            let open = (0..i - 1).rev().find(|&j| {
                depth += i32::from(chars[j] == ')') - i32::from(chars[j] == '(');
                depth == 0
            });
            let called =
                i >= 2 && chars[i - 2] == ')' && open.is_some_and(|o| path_ends.contains(&o));
            let alone = i == 1 && (end == chars.len() || chars[end] == '('); // not `.ci/run`
            if out_dot || called || alone {
                out.push(Name::Method(paths[0][0].clone()));
            }
        } else if end < chars.len() && chars[end] == '!' {
            // a macro: only a path is checked (`lecture_kit::row!`, not `println!`)
            if paths[0].len() > 1 {
                out.extend(paths.into_iter().map(Name::Path));
            }
        } else {
            let whole = i == 0 && end == chars.len();
            for p in paths {
                let camel = p[0].starts_with(char::is_uppercase);
                let snake = p[0].trim_start_matches('_').contains('_') && !p[0].starts_with('_');
                if p.len() > 1 || camel || whole && snake {
                    path_ends.push(end);
                    out.push(Name::Path(p));
                }
            }
        }
        i = end;
    }
    out
}

/// The path(s) starting at `chars[i]`, and the index after them.
fn path_at(chars: &[char], mut i: usize) -> (Vec<Vec<String>>, usize) {
    let mut prefix = Vec::new();
    loop {
        let start = i;
        while i < chars.len() && is_ident(chars[i]) {
            i += 1;
        }
        prefix.push(chars[start..i].iter().collect::<String>());
        if !(i + 2 < chars.len() && chars[i] == ':' && chars[i + 1] == ':') {
            return (vec![prefix], i);
        }
        i += 2;
        if chars[i] == '{' {
            let close = (i..chars.len())
                .find(|&j| chars[j] == '}')
                .unwrap_or(chars.len() - 1);
            let mut group = Vec::new();
            use_tree(
                &prefix,
                &chars[i..=close].iter().collect::<String>(),
                &mut group,
            );
            return (group.into_iter().map(|(p, _)| p).collect(), close + 1);
        }
    }
}

/// A workspace library crate: its name and source folder.
struct Crates(Vec<(String, PathBuf)>);

impl Crates {
    fn find() -> Self {
        let dirs = fs::read_dir(root().join("crates"))
            .unwrap()
            .map(|d| d.unwrap().path());
        Crates(
            dirs.filter(|d| d.join("src/lib.rs").is_file())
                .map(|d| {
                    (
                        d.file_name().unwrap().to_str().unwrap().to_string(),
                        d.join("src"),
                    )
                })
                .collect(),
        )
    }

    fn src(&self, krate: &str) -> Option<&Path> {
        self.0
            .iter()
            .find(|(n, _)| n == krate)
            .map(|(_, p)| p.as_path())
    }

    /// Every source file of `krate`, each cut at its first `#[cfg(test)]`.
    fn sources(&self, krate: &str) -> Vec<String> {
        let Some(src) = self.src(krate) else {
            return Vec::new();
        };
        files(src, "rs")
            .iter()
            .map(|f| code(&fs::read_to_string(f).unwrap()))
            .collect()
    }

    /// `krate::segs…` resolves (see the module docs). `internal`: seen from inside the crate
    /// (a `pub use` re-exporting it), where private modules are on the way too.
    fn resolves(&self, krate: &str, segs: &[String], internal: bool, depth: usize) -> bool {
        let Some(src) = self.src(krate) else {
            return false;
        };
        if segs.is_empty() || depth > 8 {
            return segs.is_empty();
        }
        let mut module = src.join("lib.rs");
        for (k, seg) in segs.iter().enumerate() {
            let text = code(&fs::read_to_string(&module).unwrap_or_default());
            let visible = |name: &str| {
                defines(&text, name, true) || self.reexports(krate, &module, &text, name, depth)
            };
            if k + 1 == segs.len() {
                let exported_macro =
                    k == 0 && self.sources(krate).iter().any(|t| exports_macro(t, seg));
                return visible(seg) || exported_macro;
            }
            if let Some(sub) =
                submodule(&module, seg).filter(|_| declares_mod(&text, seg, internal))
            {
                module = sub;
            } else {
                // A type on the way: the next segment is its member, and the last.
                return visible(seg)
                    && k + 2 == segs.len()
                    && self.has_member(krate, seg, &segs[k + 1]);
            }
        }
        false
    }

    /// `name` is named by a `pub use` of `module` (whose text is `text`), and what it
    /// re-exports resolves.
    fn reexports(&self, krate: &str, module: &Path, text: &str, name: &str, depth: usize) -> bool {
        let src = self.src(krate).unwrap();
        pub_uses(text)
            .iter()
            .filter(|(_, shown)| shown == name || shown == "*")
            .any(|(path, shown)| {
                let mut full = path.clone();
                if shown == "*" {
                    *full.last_mut().unwrap() = name.to_string();
                }
                match full[0].as_str() {
                    "crate" => self.resolves(krate, &full[1..], true, depth + 1),
                    "self" => {
                        let mut rest = module_path(src, module);
                        rest.extend(full[1..].iter().cloned());
                        self.resolves(krate, &rest, true, depth + 1)
                    }
                    head if self.src(head).is_some() => {
                        self.resolves(head, &full[1..], false, depth + 1)
                    }
                    head => submodule(module, head).is_some_and(|sub| {
                        let mut rest = module_path(src, &sub);
                        rest.extend(full[1..].iter().cloned());
                        self.resolves(krate, &rest, true, depth + 1)
                    }),
                }
            })
    }

    /// Type `ty` of `krate` has `member`: a `fn`, an enum variant or an associated `const`.
    fn has_member(&self, krate: &str, ty: &str, member: &str) -> bool {
        self.sources(krate).iter().any(|text| {
            let variant = text.find(&format!("enum {ty} ")).is_some_and(|at| {
                let body = &text[at..];
                let body = &body[..body.find("\n}").unwrap_or(body.len())];
                body.lines().any(|l| {
                    l.trim()
                        .strip_prefix(member)
                        .is_some_and(|r| r.is_empty() || r.starts_with([',', '(', ' ', '{']))
                })
            });
            variant || defines(text, member, false)
        })
    }

    /// `name` is defined anywhere in one of `crates` (any visibility: a method or a field's type).
    fn defined_in_any(&self, crates: &BTreeSet<String>, name: &str) -> bool {
        crates
            .iter()
            .any(|k| self.sources(k).iter().any(|t| defines(t, name, false)))
    }
}

/// Source text before the first `#[cfg(test)]`.
fn code(text: &str) -> String {
    text.split("#[cfg(test)]").next().unwrap().to_string()
}

/// The file of module `name` declared in `module`: `name.rs` or `name/mod.rs` beside a
/// `lib.rs`/`mod.rs`, else in the folder named after the file.
fn submodule(module: &Path, name: &str) -> Option<PathBuf> {
    let stem = module.file_stem()?.to_str()?;
    let dir = if stem == "lib" || stem == "mod" {
        module.parent()?.to_path_buf()
    } else {
        module.with_extension("")
    };
    [
        dir.join(format!("{name}.rs")),
        dir.join(name).join("mod.rs"),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

/// The module path of `file` under `src` (`src/random/mod.rs` → `["random"]`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_str().unwrap().to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// `text` declares module `name`: `pub mod name;`, or any `mod name;` when `internal`.
fn declares_mod(text: &str, name: &str, internal: bool) -> bool {
    text.lines().map(str::trim).any(|l| {
        l == format!("pub mod {name};")
            || internal
                && l.strip_suffix(&format!("mod {name};"))
                    .is_some_and(|v| v.is_empty() || v.starts_with("pub"))
    })
}

/// `text` holds `#[macro_export] macro_rules! name`.
fn exports_macro(text: &str, name: &str) -> bool {
    text.contains(&format!("#[macro_export]\nmacro_rules! {name} "))
}

/// Every `pub use` of a module's text: (the path it re-exports, the name it is shown as).
fn pub_uses(text: &str) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("\npub use ") {
        let stmt = &text[at + "\npub use ".len()..];
        let stmt: String = stmt[..stmt.find(';').unwrap_or(stmt.len())]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        use_tree(&[], &stmt, &mut out);
    }
    out
}

/// The paths of a `use` tree (`a::{b, c::d as e}`), each with the name it is shown as.
fn use_tree(prefix: &[String], tree: &str, out: &mut Vec<(Vec<String>, String)>) {
    let tree = tree.trim();
    let mut path = prefix.to_vec();
    if let Some(open) = tree.find('{') {
        path.extend(
            tree[..open]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string),
        );
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices().chain([(inner.len(), ',')]) {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    if !inner[start..i].trim().is_empty() {
                        use_tree(&path, &inner[start..i], out);
                    }
                    start = i + 1;
                }
                _ => {}
            }
        }
        return;
    }
    let (p, shown) = match tree.split_once(" as ") {
        Some((p, shown)) => (p, shown.trim().to_string()),
        None => (tree, tree.rsplit("::").next().unwrap_or(tree).to_string()),
    };
    path.extend(p.split("::").map(|s| s.trim().to_string()));
    out.push((path, shown));
}

/// `text` defines an item `name` (`fn`, `struct`, `enum`, `trait`, `type`, `const`,
/// `static`, `mod`, an exported `macro_rules!`), `pub` when `public`.
fn defines(text: &str, name: &str, public: bool) -> bool {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    lines.iter().enumerate().any(|(i, line)| {
        if let Some(rest) = line.strip_prefix("macro_rules! ") {
            return rest.starts_with(&format!("{name} "))
                && (!public || i > 0 && lines[i - 1] == "#[macro_export]");
        }
        let (visible, rest) = match line.strip_prefix("pub ") {
            Some(rest) => (true, rest),
            None => (false, line.strip_prefix("pub(crate) ").unwrap_or(line)),
        };
        let rest = rest
            .strip_prefix("const fn ")
            .map(|r| format!("fn {r}"))
            .unwrap_or(rest.to_string());
        [
            "fn ", "struct ", "enum ", "trait ", "type ", "const ", "static ", "mod ",
        ]
        .iter()
        .any(|kw| {
            rest.strip_prefix(kw)
                .and_then(|r| r.strip_prefix(name))
                .is_some_and(|r| !r.starts_with(is_ident))
        }) && (visible || !public)
    })
}

/// What is wrong with one row: the names that do not resolve.
fn check_row(crates: &Crates, python: &str, rust: &str) -> Vec<String> {
    let spans: Vec<Name> = code_spans(rust).into_iter().flat_map(names).collect();
    let named: BTreeSet<String> = spans
        .iter()
        .filter_map(|n| match n {
            Name::Path(p) if crates.src(&p[0]).is_some() => Some(p[0].clone()),
            _ => None,
        })
        .chain(
            spans
                .iter()
                .any(|n| matches!(n, Name::Method(_)))
                .then(|| "lecture_kit".to_string()),
        )
        .collect();
    let mut missing = Vec::new();
    for name in &spans {
        let ok = match name {
            Name::Method(m) => {
                let field = format!("pub {m}:");
                crates.defined_in_any(&named, m)
                    || named
                        .iter()
                        .any(|k| crates.sources(k).iter().any(|t| t.contains(&field)))
            }
            Name::Path(p) if p[0] == "std" || STD_NAMES.contains(&p[0].as_str()) => true,
            Name::Path(p) if crates.src(&p[0]).is_some() => {
                crates.resolves(&p[0], &p[1..], false, 0)
            }
            Name::Path(p) if p.len() == 2 => {
                named.iter().any(|k| crates.has_member(k, &p[0], &p[1]))
                    && crates.defined_in_any(&named, &p[0])
            }
            Name::Path(p) => p.len() == 1 && crates.defined_in_any(&named, &p[0]),
        };
        if !ok {
            missing.push(format!("{name:?}"));
        }
    }
    if rust.contains("the same methods") {
        for span in code_spans(python) {
            let method = span.trim_start_matches('.');
            let method = &method[..method.find(|c: char| !is_ident(c)).unwrap_or(method.len())];
            if span.starts_with('.') && !crates.defined_in_any(&named, method) {
                missing.push(format!("the same method `{method}`"));
            }
        }
    }
    missing
}

#[test]
fn every_rust_name_in_the_readmes_porting_table_exists() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let crates = Crates::find();
    let rows = porting_rows(&readme);
    assert!(rows.len() >= 10, "only {} rows", rows.len());
    let wrong: Vec<String> = rows
        .iter()
        .flat_map(|(py, rs)| {
            check_row(&crates, py, rs)
                .into_iter()
                .map(move |m| format!("{py}: {m}"))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "README's porting table names what the code lacks:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_check_refuses_names_that_are_not_there() {
    let crates = Crates::find();
    let bad = |rust: &str| check_row(&crates, "", rust);
    assert!(bad("`decode_lab::{best_round, expected_tokens}`, `out.header`").is_empty());
    assert!(bad("`lecture_kit::row!`, `transformer_lab::TransformerLM::new`").is_empty());
    for wrong in [
        "`decode_lab::no_such_round`",
        "`llm_math::{LLAMA31_8B, LLAMA31_9B}`",
        "`py_port::format::nope`",
        "`py_port::no_module::format_f64`",
        "`decode_lab::pass::verify_time`", // a private module
        "`decode_lab::Scenario::no_such_fn`",
        "`out.no_such_method`",
        "`decode_lab::best_round(…)`, `Scenario::nope`",
        "`quant_lab::Scheme`, `NoSuchType`",
        "`llm_math::forward_cost(…)` → `.time()`, `.no_such_field`",
    ] {
        assert!(!bad(wrong).is_empty(), "{wrong} should be refused");
    }
    let same = "`py_port::random::default_rng` and the same methods";
    assert!(bad(same).is_empty());
    assert_eq!(check_row(&crates, "`.random`, `.no_such`", same).len(), 1);
}
