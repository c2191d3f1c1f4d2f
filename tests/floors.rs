//! The core and its annexes (SPEC §1b, ARCHITECTURE.md "Core and annexes"): the core
//! crates hold the seed's ideas and the speculative algorithm, and depend on nothing but
//! each other; what is measured about the world (the planner, this machine's roofline)
//! lives in annexes above them. Read from `cargo metadata`, so the map cannot drift.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use super::architecture::workspace_dependencies;
use super::{files, root};

/// The core crates, as ARCHITECTURE.md lists them.
pub const CORE: [&str; 8] = [
    "hw_specs",
    "llm_math",
    "decode_lab",
    "transformer_lab",
    "quant_lab",
    "console",
    "py_port",
    "lecture_kit",
];

/// Every workspace crate a core crate reaches through its dependencies that is not core,
/// as `core → … → annex` paths: empty when the core stands on itself.
fn core_reaching_out(deps: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut found = Vec::new();
    for core in CORE {
        let mut stack = vec![vec![core.to_string()]];
        let mut seen = BTreeSet::new();
        while let Some(path) = stack.pop() {
            let last = path.last().expect("a path has a crate");
            for d in deps.get(last).into_iter().flatten() {
                let mut next = path.clone();
                next.push(d.clone());
                if !CORE.contains(&d.as_str()) {
                    found.push(next.join(" → "));
                } else if seen.insert(d.clone()) {
                    stack.push(next);
                }
            }
        }
    }
    found
}

#[test]
fn no_core_crate_depends_on_an_annex() {
    let deps = workspace_dependencies();
    for core in CORE {
        assert!(deps.contains_key(core), "{core} is a workspace crate");
    }
    let out = core_reaching_out(&deps);
    assert!(out.is_empty(), "the core depends on an annex: {out:?}");
    let map = fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let listed = map
        .lines()
        .find(|l| l.starts_with("**The core**"))
        .expect("ARCHITECTURE.md names the core crates");
    for core in CORE {
        assert!(listed.contains(&format!("`{core}`")), "{core}: {listed}");
    }
}

/// The check above, on the workspace's graph with one planted edge: `llm_math` using the
/// planner, and `lecture_kit` using `lecture_flags` (an annex reached through a core
/// crate is found too).
#[test]
fn the_core_check_fails_on_a_planted_dependency() {
    let mut deps = workspace_dependencies();
    assert!(core_reaching_out(&deps).is_empty());
    deps.get_mut("llm_math").unwrap().insert("planner".into());
    assert_eq!(
        core_reaching_out(&deps),
        ["llm_math → planner", "decode_lab → llm_math → planner"]
    );
    let mut deps = workspace_dependencies();
    deps.get_mut("console").unwrap().insert("host_lab".into());
    let out = core_reaching_out(&deps);
    assert!(
        out.contains(&"lecture_kit → console → host_lab".to_string()),
        "{out:?}"
    );
}

/// Words of speculative decoding, as they would appear in an identifier.
const SPECULATION: [&str; 8] = [
    "draft", "verif", "specul", "accept", "gamma", "alpha", "propos", "round_",
];

/// The identifiers of `src`'s code: comments and string literals left out.
fn identifiers(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in src.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut in_string = false;
        let mut word = String::new();
        for c in code.chars() {
            if c == '"' {
                in_string = !in_string;
            }
            if !in_string && (c.is_alphanumeric() || c == '_') {
                word.push(c);
            } else if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
        }
        if !word.is_empty() {
            out.push(word);
        }
    }
    out
}

/// The identifiers of `src` that name speculation.
fn speculative_names(src: &str) -> Vec<String> {
    let lower = identifiers(src).into_iter().map(|w| w.to_lowercase());
    lower
        .filter(|w| SPECULATION.iter().any(|s| w.contains(s)))
        .collect()
}

/// `llm_math` is lecture 1's roofline of one pass: no identifier in its code (tests
/// included) names a draft, a verification, an acceptance, γ, α or a round.
#[test]
fn llm_math_names_nothing_of_speculation() {
    let sources = files(&root().join("crates/llm_math/src"), "rs");
    assert!(sources.len() > 5, "found llm_math's sources");
    for file in sources {
        let src = fs::read_to_string(&file).unwrap();
        let names = speculative_names(&src);
        assert!(names.is_empty(), "{}: {names:?}", file.display());
    }
    // And it would see one: a draft's step in a function name, not in a comment or text.
    let planted = "// a draft\nfn draft_step_time() { let s = \"verify\"; }";
    assert_eq!(speculative_names(planted), ["draft_step_time"]);
}
