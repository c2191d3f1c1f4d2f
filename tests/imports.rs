//! No two files of the repository import each other, however far round (ARCHITECTURE.md,
//! "Import rules"): every Rust, Python and JavaScript file under the root is read, so a
//! file added anywhere is checked without editing this test.
//!
//! A file *imports* another when it uses a name the other defines: `use crate::a::X`, or a
//! path `super::a::f()` in its code, resolved through modules and re-exports to the file
//! that defines the name (a `pub use` that only passes a name on is not where it is
//! defined, so `lib.rs` re-exporting a crate's API ties nothing). A module declared in a
//! file (`mod a;`) is not a use of it. Rust is read with `syn`; Python's `import m` and
//! `from m import x` tie a script to `m.py` beside it; JavaScript's `import … from './m.js'`
//! and `require('./m')` tie it to that file.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use quote::ToTokens;
use syn::visit::Visit;

use super::root;

/// The files each file imports, with the names it takes from each.
pub type Graph = BTreeMap<PathBuf, BTreeMap<PathBuf, BTreeSet<String>>>;

/// Folders never read: build output, installed packages, version control.
const SKIPPED: [&str; 4] = ["target", "node_modules", ".git", ".venv"];

/// Every file under `dir` (skipping [`SKIPPED`]) whose extension is one of `exts`.
fn sources(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        if p.is_dir() {
            if !SKIPPED.iter().any(|s| name == *s) {
                out.extend(sources(&p, exts));
            }
        } else if p.extension().is_some_and(|x| exts.iter().any(|e| x == *e)) {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// One Rust module: its file, where it hangs, and the names in its scope.
#[derive(Default)]
struct Module {
    file: PathBuf,
    parent: Option<usize>,
    root: usize,
    children: BTreeMap<String, usize>,
    /// Items defined here, by name, with the file that defines them.
    defs: BTreeMap<String, PathBuf>,
    /// `use` declarations: the name in scope and the path it stands for.
    imports: BTreeMap<String, Vec<String>>,
    /// The names of `imports` a `pub use` passes on (a use of them only if the code names them).
    passed_on: BTreeSet<String>,
    globs: Vec<Vec<String>>,
    /// The items to read for paths in code (the module's own, not its inline children's).
    items: Vec<syn::Item>,
}

/// What a path names: an item defined in a file, or a module.
#[derive(Clone, Debug, PartialEq)]
enum Target {
    Item(PathBuf),
    Module(usize),
}

/// Every Rust module reachable from the crate roots among `files` (a file that no other
/// declares with `mod`).
struct Modules(Vec<Module>);

impl Modules {
    fn read(files: &[PathBuf]) -> Modules {
        let parsed: BTreeMap<PathBuf, syn::File> = files
            .iter()
            .filter_map(|f| {
                let text = fs::read_to_string(f).ok()?;
                Some((f.clone(), syn::parse_file(&text).ok()?))
            })
            .collect();
        let mut declared = BTreeSet::new();
        for (f, ast) in &parsed {
            collect_declared(f, &ast.items, &mut Vec::new(), &mut declared);
        }
        let mut modules = Modules(Vec::new());
        for (f, ast) in &parsed {
            if !declared.contains(f) {
                let id = modules.0.len();
                modules.0.push(Module {
                    file: f.clone(),
                    root: id,
                    ..Module::default()
                });
                modules.fill(id, true, &ast.items, &parsed, &mut Vec::new());
            }
        }
        modules
    }

    /// Reads `items` into module `id`, and its child modules (`owns_dir`: the module's file
    /// is a crate root; `inline`: the inline modules around `items` inside the file).
    fn fill(
        &mut self,
        id: usize,
        owns_dir: bool,
        items: &[syn::Item],
        parsed: &BTreeMap<PathBuf, syn::File>,
        inline: &mut Vec<String>,
    ) {
        let file = self.0[id].file.clone();
        let root = self.0[id].root;
        for item in items.iter().filter(|i| !is_test_only(i)) {
            if let syn::Item::Macro(m) = item {
                let exported = m.attrs.iter().any(|a| a.path().is_ident("macro_export"));
                if let (Some(name), true) = (&m.ident, exported) {
                    self.0[root].defs.insert(name.to_string(), file.clone());
                }
            }
            if let Some(name) = defined_name(item) {
                self.0[id].defs.insert(name, file.clone());
            }
            match item {
                syn::Item::Use(u) => {
                    let mut flat = Vec::new();
                    flatten_use(&u.tree, &mut Vec::new(), &mut flat);
                    let passed_on = !matches!(u.vis, syn::Visibility::Inherited);
                    let module = &mut self.0[id];
                    for (alias, path) in flat {
                        let Some(alias) = alias else {
                            module.globs.push(path);
                            continue;
                        };
                        if passed_on {
                            module.passed_on.insert(alias.clone());
                        }
                        module.imports.insert(alias, path);
                    }
                }
                syn::Item::Mod(m) => {
                    let child = self.0.len();
                    let name = m.ident.to_string();
                    let (child_file, child_items, nested) = match &m.content {
                        Some((_, items)) => (file.clone(), items.clone(), true),
                        None => {
                            let found = module_file(&file, owns_dir, inline, &name, &m.attrs);
                            let Some(f) = found else {
                                continue;
                            };
                            let Some(ast) = parsed.get(&f) else { continue };
                            (f, ast.items.clone(), false)
                        }
                    };
                    self.0.push(Module {
                        file: child_file,
                        parent: Some(id),
                        root,
                        ..Module::default()
                    });
                    self.0[id].children.insert(name.clone(), child);
                    if nested {
                        inline.push(name);
                        self.fill(child, owns_dir, &child_items, parsed, inline);
                        inline.pop();
                    } else {
                        self.fill(child, false, &child_items, parsed, &mut Vec::new());
                    }
                }
                other => self.0[id].items.push(other.clone()),
            }
        }
    }

    /// What `path` names when written in module `at`, if it is in this crate (`depth`: the
    /// imports followed so far, to stop on a loop of them).
    fn resolve(&self, at: usize, path: &[String], depth: usize) -> Option<Target> {
        let (first, rest) = path.split_first()?;
        if depth > 16 {
            return None;
        }
        let mut here = match first.as_str() {
            "crate" => Target::Module(self.0[at].root),
            "self" => Target::Module(at),
            "super" => Target::Module(self.0[at].parent?),
            "Self" => return None,
            name => self.lookup(at, name, depth)?,
        };
        for seg in rest {
            let Target::Module(m) = here else { break };
            here = match seg.as_str() {
                "super" => Target::Module(self.0[m].parent?),
                "self" => Target::Module(m),
                name => self.lookup(m, name, depth)?,
            };
        }
        Some(here)
    }

    /// `name` in module `m`'s scope: a child module, an item, an import, or a name of a
    /// module `m` imports with `*` (found without going through another glob).
    fn lookup(&self, m: usize, name: &str, depth: usize) -> Option<Target> {
        let module = &self.0[m];
        if let Some(&c) = module.children.get(name) {
            return Some(Target::Module(c));
        }
        if let Some(f) = module.defs.get(name) {
            return Some(Target::Item(f.clone()));
        }
        if let Some(path) = module.imports.get(name) {
            return self.resolve(m, path, depth + 1);
        }
        if depth > 0 {
            return None;
        }
        module.globs.iter().find_map(|g| {
            let Some(Target::Module(from)) = self.resolve(m, g, depth + 1) else {
                return None;
            };
            self.lookup(from, name, depth + 1)
        })
    }

    /// The files of module `id` and of the modules around it, up to its crate root: a
    /// module is part of its parent, and what an enclosing module defines (`super::X`, the
    /// crate's `Error` in `lib.rs`) is in its scope, as Rust's privacy has it.
    fn enclosing_files(&self, id: usize) -> BTreeSet<PathBuf> {
        let mut files = BTreeSet::new();
        let mut at = Some(id);
        while let Some(m) = at {
            files.insert(self.0[m].file.clone());
            at = self.0[m].parent;
        }
        files
    }

    /// The files each module's file takes names from.
    fn edges(&self, graph: &mut Graph) {
        for (id, module) in self.0.iter().enumerate() {
            let mut code = Paths(Vec::new());
            module.items.iter().for_each(|i| code.visit_item(i));
            let named: BTreeSet<&String> = code.0.iter().filter_map(|p| p.first()).collect();
            let used = |alias: &String| !module.passed_on.contains(alias) || named.contains(alias);
            let imports = module.imports.iter().filter(|(alias, _)| used(alias));
            let mut paths: Vec<Vec<String>> = imports.map(|(_, path)| path.clone()).collect();
            paths.extend(code.0.iter().filter(|p| p.len() > 1).cloned());
            let enclosing = self.enclosing_files(id);
            let out = graph.entry(module.file.clone()).or_default();
            for path in &paths {
                if let Some(Target::Item(f)) = self.resolve(id, path, 0)
                    && !enclosing.contains(&f)
                {
                    out.entry(f).or_default().insert(path.join("::"));
                }
            }
            for glob in &module.globs {
                if let Some(Target::Module(g)) = self.resolve(id, glob, 0)
                    && !enclosing.contains(&self.0[g].file)
                {
                    let names = out.entry(self.0[g].file.clone()).or_default();
                    names.insert(format!("{}::*", glob.join("::")));
                }
            }
        }
    }
}

/// Whether `item` is compiled for unit tests only (`#[cfg(test)]`): a unit test may use any
/// file of its crate.
fn is_test_only(item: &syn::Item) -> bool {
    let attrs = match item {
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        _ => return false,
    };
    attrs.iter().any(|a| {
        let tokens = a.meta.to_token_stream().to_string();
        a.path().is_ident("cfg") && tokens.replace(' ', "") == "cfg(test)"
    })
}

/// The name an item defines in its module's namespace (modules and imports aside).
fn defined_name(item: &syn::Item) -> Option<String> {
    let ident = match item {
        syn::Item::Const(i) => &i.ident,
        syn::Item::Enum(i) => &i.ident,
        syn::Item::Fn(i) => &i.sig.ident,
        syn::Item::Macro(i) => i.ident.as_ref()?,
        syn::Item::Static(i) => &i.ident,
        syn::Item::Struct(i) => &i.ident,
        syn::Item::Trait(i) => &i.ident,
        syn::Item::TraitAlias(i) => &i.ident,
        syn::Item::Type(i) => &i.ident,
        syn::Item::Union(i) => &i.ident,
        _ => return None,
    };
    Some(ident.to_string())
}

/// The file `mod name;` in `file` (inside the inline modules `inline`) reads, as rustc
/// finds it: beside `file` when `file` is a crate root or a `mod.rs` (`owns_dir`), else in
/// the folder named after it.
fn module_file(
    file: &Path,
    owns_dir: bool,
    inline: &[String],
    name: &str,
    attrs: &[syn::Attribute],
) -> Option<PathBuf> {
    let dir = file.parent()?;
    let stem = file.file_stem()?.to_str()?;
    let mut base = if owns_dir || stem == "mod" {
        dir.to_path_buf()
    } else {
        dir.join(stem)
    };
    for a in attrs.iter().filter(|a| a.path().is_ident("path")) {
        if let syn::Meta::NameValue(nv) = &a.meta
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            return Some(normalize(&dir.join(s.value())));
        }
    }
    inline.iter().for_each(|m| base.push(m));
    let flat = base.join(format!("{name}.rs"));
    let nested = base.join(name).join("mod.rs");
    [flat, nested].into_iter().find(|p| p.is_file())
}

/// Whether `file` is laid out as a crate root is (`lib.rs`, `main.rs`, `build.rs`, or a file
/// right under `tests/`, `benches/`, `examples/` or `src/bin/`): its modules sit beside it.
fn looks_like_root(file: &Path) -> bool {
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let parent = file.parent().and_then(Path::file_name);
    let target_dir = ["tests", "benches", "examples", "bin"];
    ["lib", "main", "build"].contains(&stem)
        || parent.is_some_and(|p| target_dir.iter().any(|d| p == *d))
}

/// `path` with `..` and `.` folded away.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// Every file some `mod name;` in `items` declares.
fn collect_declared(
    file: &Path,
    items: &[syn::Item],
    inline: &mut Vec<String>,
    out: &mut BTreeSet<PathBuf>,
) {
    for item in items {
        if let syn::Item::Mod(m) = item {
            let name = m.ident.to_string();
            match &m.content {
                Some((_, items)) => {
                    inline.push(name);
                    collect_declared(file, items, inline, out);
                    inline.pop();
                }
                None => {
                    let owns_dir = looks_like_root(file);
                    out.extend(module_file(file, owns_dir, inline, &name, &m.attrs));
                }
            }
        }
    }
}

/// A `use` tree as (name in scope, path) pairs; a glob has no name.
fn flatten_use(
    tree: &syn::UseTree,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Option<String>, Vec<String>)>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten_use(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) if n.ident == "self" => {
            out.push((prefix.last().cloned(), prefix.clone()));
        }
        syn::UseTree::Name(n) => {
            let mut path = prefix.clone();
            path.push(n.ident.to_string());
            out.push((Some(n.ident.to_string()), path));
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            path.push(r.ident.to_string());
            out.push((Some(r.rename.to_string()), path));
        }
        syn::UseTree::Glob(_) => out.push((None, prefix.clone())),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| flatten_use(t, prefix, out)),
    }
}

/// The paths written in code (expressions, types, patterns, and macro arguments that
/// parse as expressions).
struct Paths(Vec<Vec<String>>);

impl<'ast> Visit<'ast> for Paths {
    fn visit_path(&mut self, p: &'ast syn::Path) {
        self.0
            .push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        use syn::parse::Parser;
        let exprs = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        if let Ok(args) = exprs.parse2(m.tokens.clone()) {
            args.iter().for_each(|e| self.visit_expr(e));
        }
        syn::visit::visit_macro(self, m);
    }
}

/// `import m`, `from m import x` in a Python file: the modules it names.
fn python_imports(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines().map(str::trim_start) {
        let rest = line
            .strip_prefix("from ")
            .or_else(|| line.strip_prefix("import "));
        if let Some(rest) = rest {
            let list = if line.starts_with("from ") {
                rest.split_whitespace().next().unwrap_or("")
            } else {
                rest
            };
            for m in list.split(',') {
                let m = m.split_whitespace().next().unwrap_or("");
                out.push(m.split('.').next().unwrap_or("").to_string());
            }
        }
    }
    out
}

/// `from './m.js'`, `require('./m')` in a JavaScript file: the relative paths it names.
fn js_imports(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for quote in ['\'', '"'] {
        for marker in [format!("from {quote}./"), format!("require({quote}./")] {
            for (i, _) in text.match_indices(&marker) {
                let rest = &text[i + marker.len() - 2..];
                if let Some(end) = rest[1..].find(quote) {
                    out.push(rest[..end + 1].to_string());
                }
            }
        }
    }
    out
}

/// The import graph of every Rust, Python and JavaScript file under `dir`.
pub fn graph(dir: &Path) -> Graph {
    let mut graph = Graph::new();
    let rust = sources(dir, &["rs"]);
    Modules::read(&rust).edges(&mut graph);
    for f in sources(dir, &["py"]) {
        let text = fs::read_to_string(&f).unwrap_or_default();
        let out = graph.entry(f.clone()).or_default();
        for m in python_imports(&text) {
            let target = f.with_file_name(format!("{m}.py"));
            if target.is_file() && target != f {
                out.entry(target).or_default().insert(m);
            }
        }
    }
    for f in sources(dir, &["js", "cjs", "mjs"]) {
        let text = fs::read_to_string(&f).unwrap_or_default();
        let out = graph.entry(f.clone()).or_default();
        for rel in js_imports(&text) {
            let base = normalize(&f.parent().unwrap_or(dir).join(&rel));
            let candidates = [base.clone(), base.with_extension("js")];
            if let Some(t) = candidates.into_iter().find(|p| p.is_file() && *p != f) {
                out.entry(t).or_default().insert(rel);
            }
        }
    }
    graph
}

/// The cycles of `graph`: its strongly connected sets of two files or more (Tarjan's
/// algorithm), each sorted.
pub fn cycles(graph: &Graph) -> Vec<Vec<PathBuf>> {
    struct State<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g PathBuf, usize>,
        low: BTreeMap<&'g PathBuf, usize>,
        stack: Vec<&'g PathBuf>,
        on_stack: BTreeSet<&'g PathBuf>,
        found: Vec<Vec<PathBuf>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g PathBuf) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flat_map(|e| e.keys()) {
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut set = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                set.push(w.clone());
                if w == v {
                    break;
                }
            }
            if set.len() > 1 {
                set.sort();
                s.found.push(set);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.found
}

/// A cycle in words: each file of it, and what it takes from the others.
fn describe(graph: &Graph, cycle: &[PathBuf], base: &Path) -> String {
    let name = |p: &Path| p.strip_prefix(base).unwrap_or(p).display().to_string();
    let mut out = String::new();
    for a in cycle {
        for (b, names) in graph.get(a).into_iter().flatten() {
            if cycle.contains(b) {
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                out += &format!("\n  {} → {}: {}", name(a), name(b), names.join(", "));
            }
        }
    }
    out
}

#[test]
fn no_file_of_the_repository_imports_itself_round_a_cycle() {
    let root = root();
    let graph = graph(&root);
    let rust = graph
        .keys()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"));
    assert!(rust.count() > 200, "the whole repository is read");
    let ties: usize = graph.values().map(BTreeMap::len).sum();
    assert!(ties > 300, "imports are resolved to files: {ties}");
    let found = cycles(&graph);
    let words: Vec<String> = found.iter().map(|c| describe(&graph, c, &root)).collect();
    assert!(
        found.is_empty(),
        "{} import cycles:{}",
        found.len(),
        words.join("\n")
    );
}

#[test]
fn a_planted_cycle_is_found_and_a_re_export_ties_nothing() {
    let dir = std::env::temp_dir().join(format!("imports-{}", std::process::id()));
    let src = dir.join("planted/src");
    fs::create_dir_all(src.join("value")).unwrap();
    fs::create_dir_all(dir.join("py")).unwrap();
    let write = |p: &str, text: &str| fs::write(dir.join(p), text).unwrap();
    // lib.rs re-exports both; report takes Datum through the re-export, value takes fill.
    write(
        "planted/src/lib.rs",
        "mod report;\nmod value;\npub use value::Datum;\npub use report::fill;\n",
    );
    write(
        "planted/src/report.rs",
        "use crate::Datum;\npub fn fill() {}\n",
    );
    write(
        "planted/src/value/mod.rs",
        "pub enum Datum {}\nfn f() { crate::report::fill() }\n",
    );
    write("py/a.py", "from b import x\n");
    write("py/b.py", "def x():\n    import a\n");
    let graph = graph(&dir);
    let found = cycles(&graph);
    fs::remove_dir_all(&dir).unwrap();
    let names: Vec<Vec<String>> = found
        .iter()
        .map(|c| {
            let files = c
                .iter()
                .map(|p| p.strip_prefix(&dir).unwrap().display().to_string());
            files.collect()
        })
        .collect();
    assert_eq!(
        names,
        [
            ["planted/src/report.rs", "planted/src/value/mod.rs"],
            ["py/a.py", "py/b.py"]
        ],
        "lib.rs passes names on and is in no cycle"
    );
}

#[test]
fn a_chain_and_a_tree_are_no_cycle() {
    let p = |s: &str| PathBuf::from(s);
    let tie = |to: &str| BTreeMap::from([(p(to), BTreeSet::from(["x".to_string()]))]);
    let mut g = Graph::new();
    g.insert(p("a"), tie("b"));
    g.insert(p("b"), tie("c"));
    g.insert(p("d"), tie("c"));
    assert!(cycles(&g).is_empty());
    g.insert(p("c"), tie("a"));
    assert_eq!(cycles(&g), [vec![p("a"), p("b"), p("c")]]);
}
