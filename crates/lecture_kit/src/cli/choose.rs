//! What the flags choose: the script, its demos and the setup, and the flags the user typed
//! that no chosen demo reads (refused before any demo runs).

use std::ffi::OsString;

use super::{Lecture, Script};
use crate::chrome;
use crate::error::Error;
use crate::inputs::Inputs;

/// The script, the demos (in lecture order) and the setup the flags choose; `None` for
/// `--list`.
pub(super) type Choice<L> = Option<(
    &'static Script<<L as Lecture>::Setup>,
    Vec<u8>,
    <L as Lecture>::Setup,
)>;

/// What the flags choose ([`Choice`]): usage errors for an unknown script or demo, or a
/// setup that cannot exist. Given the flags the user `typed` (the runner has them; empty
/// for a report made without a command line), also refuses one that no chosen demo reads
/// (it would be silently ignored), and with `--list` (which runs no demo) any flag but the
/// output's — before the setup is made, so that a flag no demo reads is named as such, not
/// for what it would have combined with.
pub(super) fn choose<L: Lecture>(cli: &L, typed: &[String]) -> Result<Choice<L>, Error> {
    let common = cli.common();
    if common.list {
        let output = ["--list", "--format", "--out", "--plot"];
        if let Some(flag) = typed.iter().find(|f| !output.contains(&f.as_str())) {
            return Err(Error::Usage(chrome::unread_by_list(flag)));
        }
        return Ok(None);
    }
    let script = pick_script(L::SCRIPTS, common.script.as_deref())?;
    let chosen = pick_demos(script, &common.demos)?;
    let unread: Vec<Vec<&str>> = script
        .registry
        .iter()
        .filter(|d| chosen.contains(&d.number))
        .map(|d| typed_unread::<L::Setup>(d.reads, typed))
        .collect();
    if let Some(flag) = unread
        .first()
        .and_then(|first| first.iter().find(|f| unread.iter().all(|u| u.contains(f))))
    {
        return Err(Error::Usage(chrome::unread_by_all(flag)));
    }
    Ok(Some((script, chosen, cli.setup()?)))
}

/// The long flags given on the command line `args` (not those left at their defaults),
/// as `--name`; empty when the command line does not parse.
pub(super) fn typed_flags<L: Lecture>(args: &[OsString]) -> Vec<String> {
    let command = L::command();
    let Ok(matches) = command.clone().try_get_matches_from(args) else {
        return Vec::new();
    };
    command
        .get_arguments()
        .filter(|a| {
            matches.value_source(a.get_id().as_str())
                == Some(clap::parser::ValueSource::CommandLine)
        })
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect()
}

/// The flags the user `typed` that set an input a demo reading `reads` does not read:
/// flags that cannot move its figures, whatever their value (one typed at its default
/// value changes nothing either).
pub(super) fn typed_unread<S: Inputs>(reads: &[S::Input], typed: &[String]) -> Vec<&'static str> {
    S::INPUTS
        .iter()
        .filter(|i| !reads.contains(i))
        .flat_map(|&i| S::flags(i).iter().copied())
        .filter(|f| typed.iter().any(|t| t == f))
        .collect()
}

fn pick_script<'a, S: Inputs>(
    scripts: &'a [Script<S>],
    name: Option<&str>,
) -> Result<&'a Script<S>, Error> {
    let names = || {
        scripts
            .iter()
            .map(|s| s.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    match name {
        None => scripts
            .first()
            .ok_or_else(|| Error::Usage("this lecture has no script yet".into())),
        Some(n) => scripts
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(n))
            .ok_or_else(|| {
                Error::Usage(format!("unknown script {n:?}; choose one of: {}", names()))
            }),
    }
}

/// The demos `--demo` asks for, in lecture order without repeats; the script's default
/// when none is given. Says the valid choices when one is not a demo of the script.
pub fn pick_demos<S: Inputs>(script: &Script<S>, asked: &[String]) -> Result<Vec<u8>, Error> {
    if asked.is_empty() {
        return Ok(script.default_demos.to_vec());
    }
    let (all, mut demos) = (script.demos(), Vec::new());
    for text in asked {
        let demo = text.trim().parse::<u8>().ok().filter(|d| all.contains(d));
        let Some(demo) = demo else {
            return Err(Error::Usage(format!(
                "--demo takes {} (got {text:?})",
                choices(&all)
            )));
        };
        demos.push(demo);
    }
    demos.sort_unstable();
    demos.dedup();
    Ok(demos)
}

/// "1, 2, 3 or 4".
pub(super) fn choices(demos: &[u8]) -> String {
    let names: Vec<String> = demos.iter().map(u8::to_string).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}
