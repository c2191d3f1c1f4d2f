//! Lecture 6 as a browser page (`cargo xtask web` writes `target/web/lecture06.html`).
//!
//! The page's script hands this module the flags its controls say, as the command line
//! would take them, and shows what comes back: the report `lecture06 --format html`
//! draws, section by section ([`lecture_kit::web::answer`]), or the line the command
//! line prints when it refuses them. Every number is computed here, by the lecture's
//! crates compiled to WebAssembly; the page's script computes none.
//!
//! Two functions cross into JavaScript, each taking and returning JSON text:
//! [`page_setup`] (the controls: flags, choices, demos) and [`page_answer`].

use lecture_kit::Options;
use lecture_kit::web::{self, Answer, Flag};
use serde::Serialize;
use wasm_bindgen::prelude::wasm_bindgen;

/// A demo the page offers, and where it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PageDemo {
    /// Its number (`--demo N`).
    pub number: u8,
    /// `true`: redrawn on every change, on the page's thread. `false`: run on demand in a
    /// Web Worker, with a progress bar (the toy transformer's demos take seconds).
    pub live: bool,
    /// `true` if the page shows it before the reader asks.
    pub shown: bool,
    /// `true` if its first run takes seconds and later ones do not (demo 5 fits its
    /// profiles once per process, `planner::validation`): the page paints the other
    /// demos first.
    pub slow_first: bool,
}

/// The demos of the page. Demos 6 and 7 time this machine (`std::time::Instant`, which a
/// browser's WebAssembly does not have, and a browser tab is not the machine the CLI
/// measures), so they stay in the terminal.
pub const PAGE_DEMOS: [PageDemo; 5] = [
    PageDemo {
        number: 1,
        live: true,
        shown: true,
        slow_first: false,
    },
    PageDemo {
        number: 2,
        live: true,
        shown: true,
        slow_first: false,
    },
    PageDemo {
        number: 5,
        live: true,
        shown: true,
        slow_first: true,
    },
    PageDemo {
        number: 3,
        live: false,
        shown: false,
        slow_first: false,
    },
    PageDemo {
        number: 4,
        live: false,
        shown: false,
        slow_first: false,
    },
];

/// Everything the page builds its controls from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setup {
    /// The what-if flags, as clap declares them ([`lecture_kit::web::flags`]).
    pub flags: Vec<Flag>,
    /// Suggested values for flags that take a name: every card, model, engine,
    /// calibration and dtype the flags accept.
    pub suggestions: Vec<(String, Vec<String>)>,
    /// The demos it offers.
    pub demos: Vec<PageDemo>,
    /// Which flags each demo reads ([`lecture_kit::web::demo_reads`]).
    pub reads: Vec<(u8, Vec<String>)>,
    /// The handout's style sheet ([`lecture_kit::render::html::style`]): the page draws
    /// the report as `--format html` does.
    pub style: String,
    /// The lecture's number.
    pub lecture: u32,
}

/// The page's controls ([`Setup`]).
pub fn setup() -> Setup {
    let cards: Vec<String> = hw_specs::catalog::all_accelerators()
        .map(|a| a.name.to_string())
        .collect();
    let models: Vec<String> = llm_math::catalog::all_models()
        .map(|m| m.name.to_string())
        .collect();
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let weights: Vec<String> = llm_math::WeightDtype::ALL
        .iter()
        .map(|w| w.name().to_string())
        .collect();
    let kv: Vec<String> = llm_math::KvDtype::ALL
        .iter()
        .map(|k| k.name().to_string())
        .collect();
    let calibrations: Vec<String> = planner::validation::CALIBRATIONS
        .iter()
        .map(|c| c.name.to_string())
        .collect();
    let suggestions = vec![
        ("hw".to_string(), cards),
        ("target".to_string(), models.clone()),
        ("draft".to_string(), models),
        ("weights".to_string(), weights),
        ("kv".to_string(), kv),
        ("calibration".to_string(), calibrations),
        ("engine".to_string(), names(planner::validation::ENGINES)),
    ];
    Setup {
        flags: web::flags::<lecture06::Cli>(),
        suggestions,
        demos: PAGE_DEMOS.to_vec(),
        reads: web::demo_reads::<lecture06::Cli>(),
        style: lecture_kit::render::html::style(),
        lecture: 6,
    }
}

/// The answer to one set of flags, and the command that asks the same in a terminal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PageAnswer {
    /// The report's sections, or the refusal.
    #[serde(flatten)]
    pub answer: Answer,
    /// `cargo run -p lecture06 -- …`.
    pub command: String,
}

/// What `flags` (the command line's words, no program name) ask of lecture 6. Only the
/// demos of [`PAGE_DEMOS`] may be asked for (`--demo N`); another is refused, as the
/// terminal would refuse a demo it does not have.
pub fn answer(flags: &[String]) -> PageAnswer {
    let command = command_line(flags);
    let offered = |n: &str| PAGE_DEMOS.iter().any(|d| d.number.to_string() == n);
    // `--demo N` and `--demo=N`, as clap takes both.
    let mut asked = flags
        .iter()
        .enumerate()
        .filter_map(|(i, f)| match f.as_str() {
            "--demo" => flags.get(i + 1).map(String::as_str),
            _ => f.strip_prefix("--demo="),
        });
    let answer = match asked.find(|n| !offered(n)) {
        Some(n) => Answer::Refused {
            message: format!(
                "lecture06: --demo {n}: the page runs demos {}; demos 6 and 7 time this \
                 machine, run them in a terminal (copy as command)",
                PAGE_DEMOS.map(|d| d.number.to_string()).join(", ")
            ),
        },
        None => web::answer::<lecture06::Cli>(flags, Options::default()),
    };
    PageAnswer { answer, command }
}

/// The terminal command that asks what `flags` ask, each flag quoted for a POSIX shell
/// where it needs it (`shell-words`).
///
/// ```
/// let flags = ["--hw".to_string(), "my card.toml".to_string()];
/// let line = lecture06_web::command_line(&flags);
/// assert_eq!(line, "cargo run -p lecture06 -- --hw 'my card.toml'");
/// assert_eq!(lecture06_web::command_line(&[]), "cargo run -p lecture06");
/// ```
pub fn command_line(flags: &[String]) -> String {
    let package = "cargo run -p lecture06";
    if flags.is_empty() {
        return package.to_string();
    }
    format!("{package} -- {}", shell_words::join(flags))
}

/// JavaScript's view of [`setup`]: its JSON.
#[wasm_bindgen]
pub fn page_setup() -> String {
    serde_json::to_string(&setup()).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// JavaScript's view of [`answer`]: `flags_json` is a JSON array of strings; the result
/// is [`PageAnswer`]'s JSON (`kind` "page" with `html`, or "refused" with `message`).
#[wasm_bindgen]
pub fn page_answer(flags_json: &str) -> String {
    let answer = match serde_json::from_str::<Vec<String>>(flags_json) {
        Ok(flags) => answer(&flags),
        Err(e) => PageAnswer {
            answer: Answer::Refused {
                message: format!("lecture06: the page sent flags that are not a list: {e}"),
            },
            command: String::new(),
        },
    };
    serde_json::to_string(&answer).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}
