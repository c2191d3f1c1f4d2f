//! Lecture 6 as a browser page (`cargo xtask web` writes `target/web/lecture06.html`).
//!
//! The page's script hands this module the flags its controls say, as the command line
//! would take them, and shows what comes back: the report `lecture06 --format html`
//! draws, section by section ([`lecture_kit::web::answer`]), or the line the command
//! line prints when it refuses them. Every number is computed here, by the lecture's
//! crates compiled to WebAssembly; the page's script computes none.
//!
//! Four functions cross into JavaScript, each taking and returning JSON text:
//! [`page_setup`] (the controls: flags, choices, demos), [`page_answer`],
//! [`page_summary`] (the setup at a glance, [`decode_lab::glance`]) and [`page_open_file`]
//! (a card or a `config.json` the reader picked, read as the command line reads a path).

use clap::FromArgMatches;
use decode_lab::{Fit, glance};
use lecture_kit::Options;
use lecture_kit::value::{self, Value};
use lecture_kit::web::{self, Answer, Flag};
use lecture06::spec_decode_on_hardware::demo3::toy_model::{self, ToyModel};
use lecture06::spec_decode_on_hardware::{demo1, demo2, demo4, words};
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
    // Opt-in, as in the terminal: its fit takes seconds the first time and its table has
    // 384 rows.
    PageDemo {
        number: 5,
        live: true,
        shown: false,
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

/// Flags the page does not offer, though the command line has them: `--model` chooses
/// the trained toy models, which the WebAssembly build does not carry (they would make the
/// page 8.5 MB heavier; `train_lab::shipped`). Given anyway, `--model trained` is refused
/// with the command to run in a terminal.
pub const TERMINAL_ONLY: [&str; 1] = ["model"];

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
    /// Where a slider rests while its flag is not given, for flags whose default clap does
    /// not state (the efficiencies follow `--calibration` and `--engine`; these are the
    /// lecture's, [`llm_math::Deployment::LECTURE`]).
    pub resting: Vec<(String, f64)>,
    /// The handout's style sheet ([`lecture_kit::render::html::style`]): the page draws
    /// the report as `--format html` does.
    pub style: String,
    /// The lecture's number.
    pub lecture: u32,
    /// Demo 4's drafts, each decoded in a worker of its own ([`demo4_draft`]).
    pub demo4_drafts: usize,
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
    let mut flags = web::flags::<lecture06::Cli>();
    flags.retain(|f| !TERMINAL_ONLY.contains(&f.name.as_str()));
    Setup {
        flags,
        suggestions,
        demos: PAGE_DEMOS.to_vec(),
        reads: web::demo_reads::<lecture06::Cli>(),
        resting: vec![
            (
                "eff-compute".to_string(),
                llm_math::Deployment::LECTURE.compute_efficiency,
            ),
            (
                "eff-bandwidth".to_string(),
                llm_math::Deployment::LECTURE.bandwidth_efficiency,
            ),
        ],
        style: lecture_kit::render::html::style(),
        lecture: 6,
        demo4_drafts: toy_model::DRAFT_NAMES.len(),
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
    let trained = flags.iter().enumerate().any(|(i, f)| {
        f == "--model=trained"
            || (f == "--model" && flags.get(i + 1).is_some_and(|v| v == "trained"))
    });
    let answer = match asked.find(|n| !offered(n)) {
        None if trained => Answer::Refused {
            message: "lecture06: --model trained: the page carries only the random toy model; \
                      the trained ones run in a terminal (copy as command)"
                .to_string(),
        },
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

/// A number and its text as the lecture prints it ([`lecture_kit::value`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shown {
    /// The number, in the unit its field names.
    pub value: f64,
    /// Its text.
    pub text: String,
}

fn shown(value: f64, text: Value) -> Shown {
    Shown {
        value,
        text: text.text(),
    }
}

/// Gigabytes with one decimal, as demo 1's memory line prints them.
fn gb(bytes: f64) -> Shown {
    shown(bytes, value::fixed(bytes / 1e9, 1))
}

/// A decode step and what speculating makes of it ([`decode_lab::Step`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepSummary {
    /// One plain decode step of the batch, seconds.
    pub t_base: Shown,
    /// Plain decoding's tokens per second, the whole batch.
    pub tokens_per_s: Shown,
    /// Whether the round speculates.
    pub speculate: bool,
    /// Its γ (the best one, or the fixed one).
    pub gamma: u32,
    /// `true` when γ was fixed with `--gamma`.
    pub fixed_gamma: bool,
    /// The round's speedup over plain decoding.
    pub speedup: Shown,
    /// Tokens per second with that round.
    pub tokens_per_s_round: Shown,
}

/// The setup at a glance, as demo 1 runs it (its first batch and context) with demo 2's
/// α: what the page's card on top shows. Sizes in bytes over all cards.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// The card's name and how many (`--tp`).
    pub card: String,
    /// Cards.
    pub cards: u64,
    /// The target's name.
    pub target: String,
    /// What drafts, in the lecture's words.
    pub draft: String,
    /// Sequences per step.
    pub batch: u64,
    /// Tokens of context per sequence.
    pub ctx: u64,
    /// The acceptance rate.
    pub alpha: Shown,
    /// The cards' memory.
    pub capacity: Shown,
    /// The target's weights.
    pub target_weights: Shown,
    /// The draft's weights.
    pub draft_weights: Shown,
    /// The batch's target KV cache.
    pub kv: Shown,
    /// What the lecture's rule counts against memory: weights and the target's KV.
    pub used: Shown,
    /// `used / capacity`.
    pub used_fraction: Shown,
    /// "fits", "target_weights", "draft_weights" or "kv": what does not fit.
    pub fit: &'static str,
    /// The target's largest batch at this context.
    pub max_batch: u64,
    /// The step, when it fits.
    pub step: Option<StepSummary>,
}

/// The setup `flags` describe at a glance, or why not (the first line of clap's or the
/// check's refusal; the page shows [`answer`]'s line and greys the card).
pub fn summary(flags: &[String]) -> Result<Summary, String> {
    let argv = std::iter::once("lecture06".to_string()).chain(flags.iter().cloned());
    let refused = |e: String| format!("lecture06: {e}");
    let matches = lecture_kit::command::<lecture06::Cli>()
        .try_get_matches_from(argv)
        .map_err(|e| refused(e.to_string().lines().next().unwrap_or_default().into()))?;
    let i = demo2::Inputs::from_arg_matches(&matches).map_err(|e| refused(e.to_string()))?;
    lecture_kit::Inputs::check(&i).map_err(refused)?;
    let (batch, ctx) = i.grid.point_or(demo1::POINT);
    let setup = i.setup();
    let s = decode_lab::Scenario {
        batch,
        ctx,
        ..setup.scenario
    };
    let g = glance(&s, setup.pricing(), i.gamma.gamma).map_err(|e| refused(e.to_string()))?;
    let m = &g.memory;
    let fit = match g.fit {
        Fit::Fits => "fits",
        Fit::TargetWeights => "target_weights",
        Fit::DraftWeights => "draft_weights",
        Fit::Kv => "kv",
    };
    let step = g.step.map(|st| StepSummary {
        t_base: shown(st.t_base, value::time(st.t_base)),
        tokens_per_s: shown(st.tokens_per_s, value::thousands(st.tokens_per_s)),
        speculate: st.round.speculate,
        gamma: st.round.gamma,
        fixed_gamma: i.gamma.gamma.is_some(),
        speedup: shown(st.round.speedup, value::speedup(st.round.speedup)),
        tokens_per_s_round: shown(
            st.tokens_per_s_round,
            value::thousands(st.tokens_per_s_round),
        ),
    });
    Ok(Summary {
        card: m.hw.to_string(),
        cards: m.cards,
        target: m.target.to_string(),
        draft: words::draft_label(&m.draft),
        batch,
        ctx,
        alpha: shown(s.alpha, value::py(s.alpha)),
        capacity: gb(m.capacity),
        target_weights: gb(m.target_weights),
        draft_weights: gb(m.draft_weights),
        kv: gb(g.kv),
        used: gb(g.used()),
        used_fraction: shown(g.used() / m.capacity, value::percent(g.used() / m.capacity)),
        fit,
        max_batch: m.max_batch,
        step,
    })
}

/// JavaScript's view of [`summary`]: `flags_json` is a JSON array of strings; the result
/// is `{"kind":"summary", …}` ([`Summary`]) or `{"kind":"refused","message":…}`.
#[wasm_bindgen]
pub fn page_summary(flags_json: &str) -> String {
    #[derive(Serialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Reply {
        Summary(Box<Summary>),
        Refused { message: String },
    }
    let reply = match serde_json::from_str::<Vec<String>>(flags_json) {
        Ok(flags) => match summary(&flags) {
            Ok(s) => Reply::Summary(Box::new(s)),
            Err(message) => Reply::Refused { message },
        },
        Err(e) => Reply::Refused {
            message: format!("lecture06: the page sent flags that are not a list: {e}"),
        },
    };
    serde_json::to_string(&reply).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// Takes `text`, a file the reader picked for `--hw` (a card, `.toml`) or `--target` /
/// `--draft` (a Hugging Face `config.json`, `.json`), under `name`, and validates it as
/// the command line validates the file at that path ([`lecture_flags::parse_hw`],
/// [`lecture_flags::parse_model`]); kept for later answers on this thread when valid.
/// Returns what the model or card is called, or the refusal (nothing kept).
pub fn open_file(flag: &str, name: &str, text: &str) -> Result<String, String> {
    let refuse = |why: String| Err(format!("lecture06: --{flag} {name}: {why}"));
    let extension = match flag {
        "hw" => ".toml",
        "target" | "draft" => ".json",
        _ => return refuse("only --hw, --target and --draft take a file".into()),
    };
    if !name.ends_with(extension) {
        return refuse(format!("a file for --{flag} ends with {extension}"));
    }
    if text.len() as u64 > llm_math::hf_config::MAX_CONFIG_BYTES {
        return refuse(format!(
            "more than {} bytes",
            llm_math::hf_config::MAX_CONFIG_BYTES
        ));
    }
    lecture_flags::open_file(name, text.to_string());
    let named = match flag {
        "hw" => lecture_flags::parse_hw(name).map(|a| a.name.to_string()),
        _ => lecture_flags::parse_model(name).map(|m| m.name.to_string()),
    };
    named.or_else(|e| {
        lecture_flags::close_file(name);
        refuse(e)
    })
}

/// JavaScript's view of [`open_file`]: `{"kind":"opened","name":…}` or
/// `{"kind":"refused","message":…}`.
#[wasm_bindgen]
pub fn page_open_file(flag: &str, name: &str, text: &str) -> String {
    #[derive(Serialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Reply {
        Opened { name: String },
        Refused { message: String },
    }
    let reply = match open_file(flag, name, text) {
        Ok(name) => Reply::Opened { name },
        Err(message) => Reply::Refused { message },
    };
    serde_json::to_string(&reply).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// Demo 4's figures for its draft `k` alone, on the random model ([`demo4::measure_draft`]):
/// the page decodes its drafts in workers side by side, then hands each draft's figures
/// to the worker that answers `--demo 4` ([`demo4_hand_in`]), which prints them as the
/// command line does without running them again.
///
/// Errors: a `k` past demo 4's drafts, or the toy model's refusal.
pub fn demo4_draft(k: usize) -> Result<Vec<demo4::MeasuredShape>, String> {
    let run = toy_model::shared(ToyModel::Random).map_err(|e| e.to_string())?;
    demo4::measure_draft(run, k).map_err(|e| e.to_string())
}

/// Hands in draft `k`'s figures ([`demo4_draft`]'s, as JSON) for this process's next
/// `--demo 4` ([`demo4::hand_in`]).
///
/// Errors: JSON that is not a list of demo 4's shapes, or of another length.
pub fn demo4_hand_in(k: usize, shapes_json: &str) -> Result<(), String> {
    let shapes: Vec<demo4::MeasuredShape> =
        serde_json::from_str(shapes_json).map_err(|e| format!("demo 4's draft {k}: {e}"))?;
    let run = toy_model::shared(ToyModel::Random).map_err(|e| e.to_string())?;
    if k >= run.ranks.len()
        || shapes.len() != lecture06::spec_decode_on_hardware::demo3::SHAPES.len()
    {
        return Err(format!(
            "demo 4 has {} drafts of {} shapes each, not {} shapes for a draft {k}",
            run.ranks.len(),
            lecture06::spec_decode_on_hardware::demo3::SHAPES.len(),
            shapes.len()
        ));
    }
    demo4::hand_in(ToyModel::Random, k, shapes);
    Ok(())
}

/// JavaScript's view of [`demo4_draft`]: `{"kind":"draft","shapes":[…]}` or
/// `{"kind":"refused","message":…}`.
#[wasm_bindgen]
pub fn page_demo4_draft(k: usize) -> String {
    #[derive(Serialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Reply {
        Draft { shapes: Vec<demo4::MeasuredShape> },
        Refused { message: String },
    }
    let reply = match demo4_draft(k) {
        Ok(shapes) => Reply::Draft { shapes },
        Err(message) => Reply::Refused { message },
    };
    serde_json::to_string(&reply).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// JavaScript's view of [`demo4_hand_in`]: `""`, or the refusal.
#[wasm_bindgen]
pub fn page_demo4_hand_in(k: usize, shapes_json: &str) -> String {
    demo4_hand_in(k, shapes_json).err().unwrap_or_default()
}
