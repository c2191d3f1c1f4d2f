//! Writing a demo: a plain function that prints to one [`Out`] in the order of the Python
//! script it ports, registered as a [`Demo`].
//!
//! | Python | Rust |
//! |---|---|
//! | `print_header(title)` | [`out.header(title)`](Out::header) |
//! | `print(f"… {fmt_time(t)} …")` | [`out.print(format!("… {} …", time(t)))`](Out::print) |
//! | `print_table(headers, rows)` | [`out.table(headers, rows)`](Out::table), each row a [`row!`](crate::row) of typed [`Value`]s |
//! | `print_observations([...])` | [`out.observations([...])`](Out::observations), each a [`seed`], [`what_if`] or [`always`] sentence |
//! | a figure | [`out.figure(figure)`](Out::figure) |
//!
//! A demo is given its inputs (see [`crate::inputs`]) and runs once. The kit does the rest:
//! the section and table ids (`demo2`, `demo2_table1`), the captions (the line printed just
//! before a table, else the header), the lecture number, the setup and units in the JSON
//! export, and whether the script's sentences print as written (the inputs are the
//! defaults) or marked. A demo may attach its typed figures for the JSON export and its
//! claim tests ([`Out::data`]: a `#[derive(Serialize)]` struct declared in the demo) but
//! need not.
//!
//! ```
//! use lecture_kit::value::{fixed, time};
//! use lecture_kit::{Error, NoInputs, Out, always, row, seed};
//!
//! /// 演示 1: how long n steps of 7 ms take.
//! fn demo1(out: &mut Out, _: &NoInputs) -> Result<(), Error> {
//!     out.header("演示 1：n 步要多久");
//!     let rows = (1..=3).map(|n| row![n, time(7e-3 * n as f64), fixed(n as f64 / 3.0, 2)]);
//!     out.table(["n", "时间", "占 3 步"], rows);
//!     out.observations([seed("时间与步数成正比。"), always("这条对任何配置都成立。")]);
//!     Ok(())
//! }
//!
//! let ran = lecture_kit::run_demo(1, demo1, &NoInputs {}, "【默认】")?;
//! let mut report = lecture_kit::Report::new(0, "example");
//! report.sections.push(ran.section);
//! let mut text = Vec::new();
//! lecture_kit::render::text(&mut text, &report)?;
//! let text = String::from_utf8(text).unwrap();
//! assert!(text.contains("| 3 | 21.00 ms |    1.00 |"), "{text}");
//! # Ok::<(), lecture_kit::Error>(())
//! ```

use std::any::Any;

use crate::error::Error;
use crate::inputs::Inputs;
use crate::out::Out;
#[cfg(doc)]
use crate::report::Block;
use crate::report::Section;
#[cfg(doc)]
use crate::value::Value;
#[cfg(doc)]
use crate::{always, seed, what_if};

/// One demo of a script: its number (`--demo N`) and the function that prints it, given
/// its inputs (see [`crate::inputs`]): `Demo::new(1, demo1::run)`.
pub struct Demo {
    number: u8,
    typed: Box<dyn Erased>,
}

impl Demo {
    /// Demo `number`, printed by `run` from its inputs `I`.
    pub fn new<I: Inputs>(number: u8, run: fn(&mut Out, &I) -> Result<(), Error>) -> Self {
        Demo {
            number,
            typed: Box::new(Typed(run)),
        }
    }

    /// The number `--demo` takes.
    pub fn number(&self) -> u8 {
        self.number
    }

    /// The long flags the demo reads, in declaration order.
    pub fn flags(&self) -> Vec<String> {
        let command = self.typed.augment(clap::Command::new("demo"));
        let flags = command.get_arguments().filter_map(|a| a.get_long());
        flags.map(|l| format!("--{l}")).collect()
    }

    /// `command` with the demo's flags added.
    pub(crate) fn augment(&self, command: clap::Command) -> clap::Command {
        self.typed.augment(command)
    }

    /// The demo's inputs read from the whole command line's `matches`, ready to run.
    pub(crate) fn prepare(&self, matches: &clap::ArgMatches) -> Result<Prepared, Error> {
        self.typed.prepare(self.number, matches)
    }
}

/// A demo with its inputs parsed: whether they can exist, the inputs as data, and the run.
pub(crate) struct Prepared {
    /// [`Inputs::check`] of the inputs.
    pub check: Result<(), String>,
    /// The inputs as data, for the report's setup.
    pub export: serde_json::Value,
    run: RunOnce,
}

/// A demo's run on its inputs, given the marker of the default-only sentences.
type RunOnce = Box<dyn FnOnce(&str) -> Result<Ran, Error>>;

impl Prepared {
    /// Runs the demo, a seed sentence marked by `default_only` when the inputs are not the
    /// defaults.
    pub fn run(self, default_only: &str) -> Result<Ran, Error> {
        (self.run)(default_only)
    }
}

/// The demo functions of every input type, behind one interface.
trait Erased {
    fn augment(&self, command: clap::Command) -> clap::Command;
    fn prepare(&self, number: u8, matches: &clap::ArgMatches) -> Result<Prepared, Error>;
}

struct Typed<I>(fn(&mut Out, &I) -> Result<(), Error>);

impl<I: Inputs> Erased for Typed<I> {
    fn augment(&self, command: clap::Command) -> clap::Command {
        I::augment_args(command)
    }

    fn prepare(&self, number: u8, matches: &clap::ArgMatches) -> Result<Prepared, Error> {
        let inputs = I::from_arg_matches(matches).map_err(|e| Error::Usage(e.to_string()))?;
        let run = self.0;
        Ok(Prepared {
            check: inputs.check(),
            export: serde_json::to_value(&inputs)?,
            run: Box::new(move |mark: &str| run_demo(number, run, &inputs, mark)),
        })
    }
}

/// What one demo printed and attached: its section of the report, and its typed figures
/// ([`Out::data`]) for the lecture's claim tests.
pub struct Ran {
    /// The demo's section (its flags unread are the runner's to fill in).
    pub section: Section,
    typed: Option<Box<dyn Any>>,
}

impl Ran {
    /// The typed figures the demo attached, if they are a `T`.
    pub fn data<T: 'static>(&self) -> Option<&T> {
        self.typed.as_ref().and_then(|d| d.downcast_ref::<T>())
    }
}

/// Runs demo `number` (`run`) on `inputs`, once: its section, observations resolved (as
/// written when `inputs` are the defaults, else the script's sentences behind the marker
/// `default_only`), and its typed figures. What the runner calls for each chosen demo, and
/// what a lecture's tests call to read a demo's figures.
///
/// Errs when the demo fails, prints a table that does not fit its headers or a number that
/// is not finite ([`Block::non_finite`]).
pub fn run_demo<I: Inputs>(
    number: u8,
    run: fn(&mut Out, &I) -> Result<(), Error>,
    inputs: &I,
    default_only: &str,
) -> Result<Ran, Error> {
    // Whether the script's sentences hold is the inputs' to say, before the demo runs.
    let as_written = inputs.is_default();
    let mut out = Out::new(number);
    run(&mut out, inputs)?;
    let typed = out.take_data();
    Ok(Ran {
        section: out.finish(as_written, default_only)?,
        typed,
    })
}
