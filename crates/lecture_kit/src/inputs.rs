//! What a demo reads from the command line: its inputs, a typed group of flags.
//!
//! A demo's inputs are a struct that derives clap's `Args` (and `Serialize`, for the JSON
//! export's setup): its flags, each declared once in the group that holds it, with its doc,
//! range and default, the way ripgrep turns its flags into one typed value. Groups the
//! course shares (a card, a model, the roofline's assumptions) live in `lecture_flags` and
//! are flattened into the demos that read them; a demo is given its struct, parsed from the
//! command line, and can read nothing else. From the struct alone the kit knows
//!
//! - which flags the demo reads (the struct's), so it says which flags typed a demo does not
//!   read, and refuses one that no chosen demo reads, before any demo runs;
//! - whether the demo runs on the original script's setup: its inputs equal the ones no flag
//!   sets ([`defaults`]). Then the script's sentences print as written; otherwise they are
//!   marked as holding for the default setup only and the demo's computed sentences print
//!   (see [`crate::Out::observations`]). This is decided from the inputs, before the demo
//!   runs, which it does once.
//!
//! ```
//! use lecture_kit::Inputs;
//!
//! #[derive(Debug, Clone, PartialEq, clap::Args, serde::Serialize)]
//! struct Steps {
//!     /// Steps to time.
//!     #[arg(long, default_value_t = 3)]
//!     steps: u64,
//! }
//! impl Inputs for Steps {}
//!
//! assert_eq!(lecture_kit::inputs::defaults::<Steps>().steps, 3);
//! assert_eq!(lecture_kit::inputs::parse::<Steps>(&["--steps", "5"])?.steps, 5);
//! assert_eq!(lecture_kit::inputs::flags::<Steps>(), ["--steps"]);
//! # Ok::<(), lecture_kit::Error>(())
//! ```

use std::fmt::Debug;

use clap::{Args, Command, FromArgMatches};
use serde::Serialize;

use crate::error::Error;

/// A demo's inputs (see the [module docs](self)): a clap `Args` group whose values are what
/// the demo is computed for.
pub trait Inputs:
    Args + FromArgMatches + Clone + PartialEq + Debug + Serialize + Send + Sync + 'static
{
    /// Whether these inputs can exist; a usage error (one line saying what is wrong) when
    /// they cannot. Checked for every chosen demo before any runs, so a combination of flags
    /// is refused only where a demo reads it. `Ok` unless the inputs say otherwise.
    fn check(&self) -> Result<(), String> {
        Ok(())
    }

    /// Whether these inputs describe the setup no flag sets, so that the script's sentences
    /// print as written. By default, whether they equal [`defaults`]; inputs that can spell
    /// the default setup another way (a calibration profile that changes nothing, a list
    /// whose other values the demo does not use) compare what they describe instead.
    fn is_default(&self) -> bool {
        *self == defaults::<Self>()
    }
}

/// The inputs of a demo that reads no flag (the script's constants, a measurement).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::Args, Serialize)]
pub struct NoInputs {}

impl Inputs for NoInputs {}

/// The command that parses `I` alone (no program name, no other flag).
fn command<I: Inputs>() -> Command {
    I::augment_args(Command::new("inputs").no_binary_name(true))
}

/// The inputs `args` set (flags only, no program name); a usage error in clap's words when
/// they do not parse. For tests and for a lecture's own tools; the runner parses the whole
/// command line once and hands each demo its inputs.
pub fn parse<I: Inputs>(args: &[&str]) -> Result<I, Error> {
    let matches = command::<I>()
        .try_get_matches_from(args)
        .map_err(|e| Error::Usage(crate::error::one_line(&e.render().to_string())))?;
    I::from_arg_matches(&matches).map_err(|e| Error::Usage(e.to_string()))
}

/// The inputs no flag sets: the original script's setup.
///
/// Panics if `I`'s defaults do not parse (a default value its own parser refuses), which
/// is a bug in `I`, caught by any test that runs the demo.
pub fn defaults<I: Inputs>() -> I {
    parse::<I>(&[])
        .unwrap_or_else(|e| panic!("the defaults of {} do not parse: {e}", type_name::<I>()))
}

/// The long flags of `I` (`--hw`, `--target`, …), in declaration order.
pub fn flags<I: Inputs>() -> Vec<String> {
    command::<I>()
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect()
}

fn type_name<I>() -> &'static str {
    std::any::type_name::<I>()
}
