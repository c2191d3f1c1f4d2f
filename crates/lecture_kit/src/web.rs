//! What a browser page of a lecture asks the runner: the report a list of flags asks for,
//! rendered by the same HTML renderer as `--format html` ([`crate::render::html`]), or the
//! one line the command-line runner would print for them ([`crate::cli::run`]); the flags
//! a page can offer, read from the lecture's clap command, and which demo reads which.
//! (The terminal command a page copies is the lecture's wording: its web crate builds it.)
//!
//! Nothing here knows the browser: a lecture's WebAssembly crate (`web/lecture06`) calls
//! [`answer`] and [`flags`] and hands their JSON to the page's script, and native tests
//! call them the same way.

use std::ffi::OsString;

use clap::{ArgAction, FromArgMatches};
use serde::Serialize;

use crate::cli::{CommonArgs, Lecture, Options, command, report_of};
use crate::cli::{error_line, lecture_name, parse_error_line};
use crate::error::Error;
use crate::render;

/// What the runner makes of a page's flags.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Answer {
    /// The report's sections, as `--format html` draws them inside its `<body>`.
    Page {
        /// The `<section>` elements ([`render::html::sections`]).
        html: String,
    },
    /// What the runner refuses, in its words: "lecture06: … ; see --help".
    Refused {
        /// The line the command-line runner prints to standard error.
        message: String,
    },
}

/// The flags every lecture shares that a page does not offer as a what-if: it writes no
/// file and chooses its demos and form itself.
pub const PAGE_CHOSEN: [&str; 6] = ["script", "demo", "format", "out", "plot", "list"];

/// The report `flags` ask for (no program name), measured values masked if `options` say
/// so, or the runner's refusal of them. A flag the page chooses itself
/// ([`PAGE_CHOSEN`], except `--demo` and `--script`) is refused, as is `--help`.
pub fn answer<L: Lecture>(flags: &[String], options: Options) -> Answer {
    match page_sections::<L>(flags, options) {
        Ok(html) => Answer::Page { html },
        Err(message) => Answer::Refused { message },
    }
}

fn page_sections<L: Lecture>(flags: &[String], options: Options) -> Result<String, String> {
    let argv = std::iter::once(OsString::from(lecture_name::<L>()))
        .chain(flags.iter().map(OsString::from));
    let matches = command::<L>()
        .try_get_matches_from(argv)
        .map_err(|e| parse_error_line::<L>(&e))?;
    let refuse = |e: Error| error_line::<L>(&e).unwrap_or_default();
    let common = CommonArgs::from_arg_matches(&matches)
        .map_err(|e| Error::Usage(e.to_string()))
        .map_err(refuse)?;
    let given = [
        ("--format", common.format != Default::default()),
        ("--out", common.out.is_some()),
        ("--plot", common.plot.is_some()),
        ("--list", common.list),
    ];
    if let Some((flag, _)) = given.iter().find(|(_, given)| *given) {
        return Err(refuse(Error::Usage(format!(
            "{flag}: the page shows the report itself and writes no file; \
             use it in a terminal (copy as command)"
        ))));
    }
    let mut report = report_of::<L>(&matches).map_err(refuse)?;
    if options.mask_measured {
        report = report.masked();
    }
    let mut html = Vec::new();
    render::html::sections(&mut html, &report)
        .map_err(Error::from)
        .map_err(refuse)?;
    String::from_utf8(html).map_err(|e| refuse(Error::Output(e.to_string())))
}

/// One flag a page can offer, as the lecture's clap command declares it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flag {
    /// Its long name, without the dashes: `hw`, `batch`.
    pub name: String,
    /// clap's help heading ("What if"), or empty.
    pub heading: String,
    /// Its help as `-h` prints it (the doc comment's first paragraph).
    pub help: String,
    /// The help in full.
    pub long_help: String,
    /// `<NAME>`, `<LIST>`; empty for a switch.
    pub value_name: String,
    /// Its default, as `--help` prints it; empty if none.
    pub default: String,
    /// The values clap accepts, if it lists them (an enum's names).
    pub choices: Vec<String>,
    /// `true` for a switch (`--draft-head`), which takes no value.
    pub switch: bool,
}

/// The flags of the lecture's command a page can offer: every one with a long name but
/// those of [`PAGE_CHOSEN`], `--help` and `--version`, in `--help`'s order.
pub fn flags<L: Lecture>() -> Vec<Flag> {
    let command = command::<L>();
    command
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| {
            let name = a.get_long()?.to_string();
            let shared = PAGE_CHOSEN.contains(&name.as_str());
            let own = matches!(a.get_action(), ArgAction::Help | ArgAction::Version);
            if shared || own {
                return None;
            }
            let text = |s: Option<&clap::builder::StyledStr>| s.map(|s| s.to_string());
            let help = text(a.get_help()).unwrap_or_default();
            let long_help = text(a.get_long_help()).unwrap_or_else(|| help.clone());
            let switch = matches!(a.get_action(), ArgAction::SetTrue);
            Some(Flag {
                heading: a.get_help_heading().unwrap_or_default().to_string(),
                value_name: a
                    .get_value_names()
                    .and_then(|v| v.first())
                    .filter(|_| !switch)
                    .map(|v| v.to_string())
                    .unwrap_or_default(),
                default: a
                    .get_default_values()
                    .iter()
                    .map(|v| v.to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join(","),
                choices: if switch {
                    Vec::new()
                } else {
                    a.get_possible_values()
                        .iter()
                        .filter(|v| !v.is_hide_set())
                        .map(|v| v.get_name().to_string())
                        .collect()
                },
                name,
                help,
                long_help,
                switch,
            })
        })
        .collect()
}

/// Which flags each demo of the lecture's first script (the one it runs by default) reads,
/// as `--help`'s "Which demo reads which flag" lists them: `(1, ["--hw", …])`. A page
/// that runs one demo alone passes it only these, as the runner refuses a flag no chosen
/// demo reads.
pub fn demo_reads<L: Lecture>() -> Vec<(u8, Vec<String>)> {
    L::scripts()
        .first()
        .map(|s| s.demos.iter().map(|d| (d.number(), d.flags())).collect())
        .unwrap_or_default()
}
