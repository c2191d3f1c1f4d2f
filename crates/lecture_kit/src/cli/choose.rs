//! What the flags choose: the script and its demos, each with its inputs; and the flags the
//! user typed that no chosen demo reads (refused before any demo runs).

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, Command, FromArgMatches};

use super::{CommonArgs, Lecture, Script};
use crate::chrome;
use crate::demo::Prepared;
use crate::error::Error;

/// The script and its chosen demos, in lecture order, each with its inputs read from the
/// command line and the flags typed that it does not read.
pub(super) struct Choice {
    /// The script's name.
    pub script: &'static str,
    /// Each chosen demo, ready to run, and the flags typed that it does not read.
    pub demos: Vec<(Prepared, Vec<String>)>,
}

/// What `matches` choose; `None` for `--list`. Usage errors: an unknown script or demo, a
/// flag typed that no chosen demo reads (it would be silently ignored), with `--list`
/// (which runs no demo) any flag but the output's, and inputs that cannot exist
/// ([`crate::Inputs::check`] of each chosen demo). All before any demo runs.
pub(super) fn choose<L: Lecture>(matches: &ArgMatches) -> Result<Option<Choice>, Error> {
    let common = CommonArgs::from_arg_matches(matches).map_err(|e| Error::Usage(e.to_string()))?;
    let typed = typed_flags::<L>(matches);
    if common.list {
        let output = ["--list", "--format", "--out", "--plot"];
        if let Some(flag) = typed.iter().find(|f| !output.contains(&f.as_str())) {
            return Err(Error::Usage(chrome::unread_by_list(flag)));
        }
        return Ok(None);
    }
    let scripts = L::scripts();
    let script = pick_script(&scripts, common.script.as_deref())?;
    let chosen = pick_demos(script, &common.demos)?;
    let shared = flags_of(CommonArgs::augment_args(Command::new("common")));
    let own: Vec<&String> = typed.iter().filter(|f| !shared.contains(f)).collect();
    let demos: Vec<_> = script
        .demos
        .iter()
        .filter(|d| chosen.contains(&d.number()))
        .collect();
    let unread: Vec<Vec<String>> = demos
        .iter()
        .map(|d| {
            let reads = d.flags();
            let unread = own.iter().filter(|f| !reads.contains(f));
            unread.map(|f| f.to_string()).collect()
        })
        .collect();
    if let Some(flag) = own.iter().find(|f| unread.iter().all(|u| u.contains(f))) {
        return Err(Error::Usage(chrome::unread_by_all(flag)));
    }
    let mut prepared = Vec::new();
    for (demo, unread) in demos.iter().zip(unread) {
        let p = demo.prepare(matches)?;
        p.check.clone().map_err(Error::Usage)?;
        prepared.push((p, unread));
    }
    Ok(Some(Choice {
        script: script.name,
        demos: prepared,
    }))
}

/// The long flags of `command`'s arguments, as `--name`.
fn flags_of(command: Command) -> Vec<String> {
    command
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect()
}

/// The long flags given on the command line (not those left at their defaults), as
/// `--name`, in the order they were typed.
pub(super) fn typed_flags<L: Lecture>(matches: &ArgMatches) -> Vec<String> {
    let command = super::command::<L>();
    let mut typed: Vec<(usize, String)> = command
        .get_arguments()
        .filter(|a| matches.value_source(a.get_id().as_str()) == Some(ValueSource::CommandLine))
        .filter_map(|a| {
            let at = matches.index_of(a.get_id().as_str()).unwrap_or(usize::MAX);
            a.get_long().map(|l| (at, format!("--{l}")))
        })
        .collect();
    typed.sort();
    typed.into_iter().map(|(_, flag)| flag).collect()
}

fn pick_script<'a>(scripts: &'a [Script], name: Option<&str>) -> Result<&'a Script, Error> {
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
pub fn pick_demos(script: &Script, asked: &[String]) -> Result<Vec<u8>, Error> {
    if asked.is_empty() && script.default_demos.is_empty() {
        return Ok(script.numbers());
    }
    if asked.is_empty() {
        return Ok(script.default_demos.to_vec());
    }
    let all = script.numbers();
    let mut demos = Vec::new();
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
