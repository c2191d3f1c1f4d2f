//! What a lecture is to the runner: its scripts ([`Script`]), its number and words
//! ([`Lecture`]), and the command line built from them ([`command`]).

use super::CommonArgs;
use crate::demo::Demo;
use crate::report::Block;

/// One script of a lecture: its name, its demos (each a plain function of its inputs) and
/// the demos printed when no `--demo` is given:
///
/// ```ignore
/// pub fn script() -> Script {
///     let demos = vec![Demo::new(1, demo1::run), Demo::new(2, demo2::run), Demo::new(3, demo3::run)];
///     Script::new("05_spec_decode_on_hardware", "投机解码在硬件上", demos).printing(&[1, 2])
/// }
/// ```
///
/// `--demo` takes the numbers of `demos`; the runner parses each chosen demo's inputs from
/// the command line, runs it once and fills in the report's lecture number and script name.
pub struct Script {
    /// The name `--script` takes, e.g. `"05_spec_decode_on_hardware"`.
    pub name: &'static str,
    /// One line: what the script asks.
    pub title: &'static str,
    /// Every demo `--demo` accepts, in lecture order.
    pub demos: Vec<Demo>,
    /// The demos printed when no `--demo` is given; empty: all of them.
    pub default_demos: &'static [u8],
}

impl Script {
    /// Script `name` asking `title`, with its `demos` in lecture order, every one of them
    /// printed when no `--demo` is given (see [`Script::printing`] for fewer).
    pub fn new(name: &'static str, title: &'static str, demos: Vec<Demo>) -> Self {
        Script {
            name,
            title,
            demos,
            default_demos: &[],
        }
    }

    /// The script printing only `demos` when no `--demo` is given (the others opt-in).
    pub fn printing(self, demos: &'static [u8]) -> Self {
        Script {
            default_demos: demos,
            ..self
        }
    }

    /// The numbers `--demo` takes.
    pub fn numbers(&self) -> Vec<u8> {
        self.demos.iter().map(Demo::number).collect()
    }
}

/// A lecture: its number, its scripts, and its command line's words (a clap `Parser`
/// struct with no field of its own: `name`, `version`, its doc as `--help`'s text). The kit
/// builds the command line: the flags every lecture has ([`CommonArgs`]) and every flag a
/// demo of a script reads (each demo's [`crate::Inputs`]), each once.
pub trait Lecture: clap::CommandFactory + 'static {
    /// The lecture's number, e.g. 6.
    const NUMBER: u32;
    /// The marker before a sentence of the original script that holds for the default setup
    /// only, in the lecture's words (`"【此条针对默认配置：一块 H100、Llama-3.1-8B】"`).
    const DEFAULT_ONLY: &'static str;
    /// The units of the raw numbers in the JSON export's sections, by field-name pattern
    /// (`("*_s", "seconds")`); copied into [`crate::Report::units`].
    const UNITS: &'static [(&'static str, &'static str)] = &[];
    /// The lecture's scripts; the first is the default.
    fn scripts() -> Vec<Script>;
    /// What `--list` prints after the scripts: the registries the lecture's flags accept
    /// (`lecture_flags::catalog()` for `--hw`, `--target`, `--draft`). None by default.
    fn catalog() -> Vec<Block> {
        Vec::new()
    }
}

/// The whole command line of lecture `L`: its words, [`CommonArgs`], and every flag a demo
/// of one of its scripts reads, each once (a flag several demos read is one group of
/// `lecture_flags` or of the lecture, flattened into each of their inputs). `--help` ends
/// with which demo reads which flag; it is wrapped to the terminal (100 columns when the
/// output is not one).
pub fn command<L: Lecture>() -> clap::Command {
    use clap::Args;
    let lecture = L::command();
    // The lecture's own words stay its summary: the flags added below bring none.
    let about = lecture.get_about().cloned();
    let long_about = lecture.get_long_about().cloned();
    let mut command = CommonArgs::augment_args(lecture);
    if let Some(about) = about {
        command = command.about(about);
    }
    if let Some(long_about) = long_about {
        command = command.long_about(long_about);
    }
    let mut reads = Vec::new();
    for script in L::scripts() {
        for demo in &script.demos {
            let own = demo.augment(clap::Command::new("demo"));
            for arg in own.get_arguments() {
                if command.get_arguments().all(|a| a.get_id() != arg.get_id()) {
                    command = command.arg(arg.clone());
                }
            }
            let flags = demo.flags();
            let flags = if flags.is_empty() {
                "no flag".to_string()
            } else {
                flags.join(", ")
            };
            reads.push(format!(
                "  {} --demo {}: {flags}",
                script.name,
                demo.number()
            ));
        }
    }
    let before = command.get_after_help().map(|h| format!("{h}\n\n"));
    let after = format!(
        "{}{}\n{}",
        before.unwrap_or_default(),
        "Which demo reads which flag:",
        reads.join("\n")
    );
    command.after_help(after)
}
