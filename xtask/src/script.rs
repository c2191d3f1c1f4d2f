//! `cargo xtask new-script NN SS NAME "title"`: adds script `SS_NAME` to lecture NN — its
//! module `src/NAME.rs` (one demo written on the authoring API), its entry in the
//! lecture's `scripts()` (after the others, so the default script stays the first), a row
//! in the lib.rs table of scripts when it has one, and `tests/NAME.rs` with its snapshot,
//! recorded once (`INSTA_UPDATE=always`). Nothing outside the lecture's folder changes;
//! if formatting or the tests fail, every file is put back as it was.

use std::fs;
use std::path::Path;

use crate::{cargo, check_title, parse_number, println_out, root, write_whole};

const SCRIPT: &str = include_str!("../templates/script.rs.tmpl");
const SCRIPT_TEST: &str = include_str!("../templates/script_test.rs.tmpl");

/// Rust's keywords, which a module cannot be named.
const KEYWORDS: [&str; 51] = [
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

/// The script's module name: the Python file's stem without its number
/// (`spec_decode_on_hardware` for `05_spec_decode_on_hardware.py`), in lowercase ASCII
/// snake case, not a keyword, at most 40 characters.
pub fn check_name(name: &str) -> Result<&str, String> {
    let mut chars = name.chars();
    let starts = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    let rest = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !starts || !rest || name.len() > 40 || KEYWORDS.contains(&name) {
        return Err(format!(
            "{name:?}: a script's name is its Python file's stem without the number \
             (spec_decode_on_hardware), lowercase letters, digits and _, starting with a \
             letter, at most 40 characters, not a Rust keyword"
        ));
    }
    Ok(name)
}

/// `lib` (a lecture's `src/lib.rs`) with module `name` declared after the last `pub mod`,
/// `name::script()` appended to the `vec![…]` that `fn scripts()` returns, and, where the
/// crate's doc has a table of scripts (`//! | [`module`] | …`), a row after its last.
///
/// Errors: no `pub mod` line, no `fn scripts()` returning a `vec![…]`, or a module of
/// that name already declared.
pub fn with_script(lib: &str, name: &str, ss: &str, title: &str) -> Result<String, String> {
    let declared = format!("pub mod {name};");
    if lib.lines().any(|l| l.trim() == declared) {
        return Err(format!("the lecture already has a module {name}"));
    }
    let last_mod = lib
        .lines()
        .rfind(|l| l.starts_with("pub mod "))
        .ok_or("src/lib.rs declares no `pub mod` to add the script's beside")?;
    let at = lib.find(last_mod).unwrap_or(0) + last_mod.len();
    let mut out = format!("{}\n{declared}{}", &lib[..at], &lib[at..]);
    let scripts = out
        .find("fn scripts()")
        .ok_or("src/lib.rs has no `fn scripts()` to list the script in")?;
    let open = out[scripts..]
        .find("vec![")
        .map(|i| scripts + i + "vec![".len())
        .ok_or("`fn scripts()` returns no `vec![…]` to list the script in")?;
    let close = matching_bracket(&out, open).ok_or("`vec![` in `fn scripts()` is not closed")?;
    let inside = out[open..close].trim_end();
    let comma = if inside.trim().is_empty() || inside.ends_with(',') {
        ""
    } else {
        ","
    };
    let end = open + inside.len();
    out = format!(
        "{}{comma} {name}::script()]{}",
        &out[..end],
        &out[close + 1..]
    );
    if let Some(row) = out.lines().rfind(|l| l.starts_with("//! | [`")) {
        let at = out.find(row).unwrap_or(0) + row.len();
        let new_row = format!("//! | [`{name}`] | `{ss}_{name}.py` | {title} |");
        out = format!("{}\n{new_row}{}", &out[..at], &out[at..]);
    }
    Ok(out)
}

/// The index of the `]` closing the bracket opened just before `from`.
fn matching_bracket(text: &str, from: usize) -> Option<usize> {
    let mut depth = 1usize;
    for (i, c) in text[from..].char_indices() {
        match c {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return (c == ']').then_some(from + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Fills the script templates: `{{N}}`, `{{NN}}`, `{{SS}}`, `{{NAME}}`, `{{TITLE}}`.
fn fill(template: &str, n: u32, ss: &str, name: &str, title: &str) -> String {
    crate::fill(template, n, title)
        .replace("{{SS}}", ss)
        .replace("{{NAME}}", name)
}

/// Runs `cargo xtask new-script NN SS NAME "title"`.
pub fn run(args: &[String]) -> Result<(), String> {
    let [number, script, name, title] = args else {
        return Err(crate::USAGE.to_string());
    };
    let n = parse_number(number)?;
    let ss = format!("{:02}", parse_number(script)?);
    let name = check_name(name)?;
    let title = check_title(title)?;
    let lecture = format!("lecture{n:02}");
    let dir = root().join("lectures").join(&lecture);
    if !dir.is_dir() {
        return Err(format!(
            "{} does not exist: cargo xtask new-lecture {n:02} \"title\" makes it",
            dir.display()
        ));
    }
    let lib_path = dir.join("src/lib.rs");
    let lib = fs::read_to_string(&lib_path)
        .map_err(|e| format!("cannot read {}: {e}", lib_path.display()))?;
    let new_lib = with_script(&lib, name, &ss, title)?;
    let module = dir.join("src").join(format!("{name}.rs"));
    let test = dir.join("tests").join(format!("{name}.rs"));
    let snapshots = dir.join("tests/snapshots");
    for path in [&module, &test] {
        if path.exists() {
            return Err(format!("{} already exists", path.display()));
        }
    }
    let snapshots_before = listing(&snapshots);
    let undo = || {
        let _ = fs::remove_file(&module);
        let _ = fs::remove_file(&test);
        let _ = write_whole(&lib_path, &lib);
        for made in listing(&snapshots) {
            if !snapshots_before.contains(&made) {
                let _ = fs::remove_file(snapshots.join(made));
            }
        }
    };
    let written = write_new(&module, &fill(SCRIPT, n, &ss, name, title))
        .and_then(|()| write_new(&test, &fill(SCRIPT_TEST, n, &ss, name, title)))
        .and_then(|()| write_whole(&lib_path, &new_lib));
    let checked = written.and_then(|()| {
        cargo(&["fmt", "-p", &lecture], &[]).and_then(|()| {
            cargo(
                &["test", "-q", "-p", &lecture, "--test", name],
                &[("INSTA_UPDATE", "always"), ("CI", "")],
            )
        })
    });
    if let Err(e) = checked {
        undo();
        return Err(format!(
            "{e}; the lecture's files were put back as they were"
        ));
    }
    println_out(&format!(
        "added script {ss}_{name} to lectures/{lecture}/ (src/{name}.rs, its entry in \
         src/lib.rs, tests/{name}.rs) — `cargo run -p {lecture} -- --script {ss}_{name}` \
         prints it; read its snapshot in lectures/{lecture}/tests/snapshots/ and commit"
    ));
    Ok(())
}

/// Writes `text` to `path`, a file that does not exist yet, creating its folder.
fn write_new(path: &Path, text: &str) -> Result<(), String> {
    let made = path.parent().map_or(Ok(()), fs::create_dir_all);
    made.map_err(|e| format!("cannot create the folder of {}: {e}", path.display()))?;
    write_whole(path, text)
}

/// The file names in `dir` (none if it cannot be read).
fn listing(dir: &Path) -> Vec<String> {
    let entries = fs::read_dir(dir).into_iter().flatten().flatten();
    entries
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LECTURE06: &str = include_str!("../../lectures/lecture06/src/lib.rs");
    const TEMPLATE: &str = include_str!("../templates/lib.rs.tmpl");

    #[test]
    fn a_script_is_declared_listed_after_the_others_and_in_the_table() {
        let lib = with_script(LECTURE06, "draft_models", "04", "草稿模型").unwrap();
        assert!(lib.contains("pub mod spec_decode_on_hardware;\npub mod draft_models;\n"));
        assert!(lib.contains("vec![spec_decode_on_hardware::script(), draft_models::script()]"));
        assert!(lib.contains("//! | [`draft_models`] | `04_draft_models.py` | 草稿模型 |\n"));
        // Everything else is as it was.
        let removed = lib
            .replace("\npub mod draft_models;", "")
            .replace(", draft_models::script()", "")
            .replace(
                "\n//! | [`draft_models`] | `04_draft_models.py` | 草稿模型 |",
                "",
            );
        assert_eq!(removed, LECTURE06);
    }

    #[test]
    fn a_new_lectures_lib_takes_a_second_script() {
        let lib = with_script(TEMPLATE, "second", "02", "第二个").unwrap();
        assert!(lib.contains("pub mod first_script;\npub mod second;"));
        assert!(lib.contains("first_script::demos())"));
        assert!(lib.contains(", second::script()]"));
        // No table of scripts in the template's doc: no row.
        assert!(!lib.contains("`02_second.py`"));
        // Twice is refused.
        assert!(with_script(&lib, "second", "02", "第二个").is_err());
    }

    #[test]
    fn a_lib_without_the_places_to_add_to_is_refused() {
        assert!(with_script("fn main() {}", "x", "01", "t").is_err());
        let no_vec = "pub mod a;\nfn scripts() -> Vec<Script> { Vec::new() }";
        assert!(with_script(no_vec, "x", "01", "t").is_err());
        let open = "pub mod a;\nfn scripts() -> Vec<Script> { vec![a::script(), ";
        assert!(with_script(open, "x", "01", "t").is_err());
    }

    #[test]
    fn names_are_module_names() {
        for good in ["spec_decode_on_hardware", "a", "kv_cache2"] {
            assert_eq!(check_name(good), Ok(good));
        }
        for bad in [
            "",
            "2fast",
            "Draft",
            "draft-models",
            "type",
            "草稿",
            &"a".repeat(41),
        ] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }
}
