//! The runner every lecture's `main` calls: the shared flags, the script registry, output
//! forms and files, exit codes.
//!
//! A lecture's command line is a clap `Parser` that flattens [`CommonArgs`] (and the
//! course's shared flag groups from `lecture_flags`, such as `ModelArgs` for "on which card,
//! with which models?") and implements [`Lecture`]; its `main` is
//! `lecture_kit::main::<Cli>()`.
//!
//! Exit codes: 0 on success, also when the reader of the output leaves early
//! (`lecture06 | head -3`); 2 for bad flags, with one line that says what was wrong, lists
//! the valid choices and points to `--help`; 1 when the output cannot be written or a
//! library fails. Output is buffered and flushed once, at the end.
//!
//! Measured values (see [`crate::value::measured`]) print as they are, or masked when the
//! environment variable [`MASK_ENV`] (`LECTURE_MASK_MEASURED=1`) is set: read once, by
//! [`main`], and passed down to [`run`] as [`Options`].

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{FromArgMatches, ValueEnum};

mod choose;
mod lecture;
mod messages;

pub use choose::pick_demos;
use choose::{choices, choose};
pub use lecture::{Lecture, Script, command};
pub(crate) use messages::{error_line, lecture_name, parse_error_line, usage_line};

use crate::chrome;
use crate::error::Error;
use crate::files;
use crate::render;
use crate::report::{Block, Cell, Column, Report, Section, Table};

/// The environment variable that masks measured values (any value but empty or `0`): what
/// CI sets to compare two runs byte for byte.
pub const MASK_ENV: &str = "LECTURE_MASK_MEASURED";

/// How the runner prints, besides the flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    /// Print every measured value as [`crate::value::MASKED`], with no number behind it.
    pub mask_measured: bool,
}

impl Options {
    /// The options the process environment asks for ([`MASK_ENV`]).
    pub fn from_env() -> Self {
        let mask = std::env::var_os(MASK_ENV).is_some_and(|v| !v.is_empty() && v != "0");
        Options {
            mask_measured: mask,
        }
    }
}

/// The flags every lecture has.
#[derive(Debug, Clone, PartialEq, Eq, Default, clap::Args)]
pub struct CommonArgs {
    /// Which script of the lecture to run (see --list); default: the lecture's first.
    #[arg(long, value_name = "NAME")]
    pub script: Option<String>,
    /// Print only this demo; repeat for several. Default: the script's usual demos, in order.
    #[arg(long = "demo", value_name = "N", allow_negative_numbers = true)]
    pub demos: Vec<String>,
    /// Output form: the lecture text; only its tables (markdown; csv, one file per table
    /// with --out DIR); everything as data (json); one page with the figures (html).
    #[arg(long, value_enum, ignore_case = true, default_value_t = Format::Text)]
    pub format: Format,
    /// Write the output to PATH instead of standard output (a folder for --format csv).
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Also draw the chosen demos' figures as SVG files into DIR.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// List the scripts, accelerators and models the flags accept, and exit.
    #[arg(long)]
    pub list: bool,
}

/// How the report is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Format {
    /// The lecture as the original script prints it.
    #[default]
    Text,
    /// The tables only, as Markdown, each under a heading.
    Markdown,
    /// The tables only, as tidy CSV: raw numbers, units in the headers.
    Csv,
    /// Everything — setup, text, tables, figures — as one JSON document.
    Json,
    /// One self-contained HTML page — headers, text, tables, observations, the figures
    /// inline — to open in a browser or print to PDF (the lecture's handout).
    Html,
}

/// A lecture binary's `main`: runs the process's command line with the [`Options`] of its
/// environment, printing to standard output and errors to standard error.
///
/// The main thread first joins rayon's global pool as one of its `RAYON_NUM_THREADS`
/// threads ([`join_the_pool`]), so that a library's parallel loops called from the lecture
/// start as work on this thread rather than as a job sent to the pool and waited for.
pub fn main<L: Lecture>() -> ExitCode {
    join_the_pool();
    let (mut out, mut err) = (io::stdout().lock(), io::stderr().lock());
    let options = Options::from_env();
    ExitCode::from(run::<L>(std::env::args_os(), &mut out, &mut err, options))
}

/// Makes the calling thread one of the threads of rayon's global pool (rayon's
/// `use_current_thread`), the pool keeping its size (`RAYON_NUM_THREADS`, else the
/// number of CPUs). A parallel loop called from a thread outside the pool is sent to the
/// pool as a job and waited for: on a 2-core virtual machine about 12 µs each time even
/// for no work, against 0.1 µs from a thread of the pool. transformer_lab's forward pass
/// already moves itself onto the pool; a library that does not (host_lab's INT4 draft
/// starts 26 loops a pass) gains from this. Results do not change: the libraries' pieces
/// do not depend on which thread runs them. Does nothing if the global pool already exists
/// (a second call, or a library used it first).
///
/// The main thread runs the pool's jobs only while it waits inside a rayon call; so with
/// `RAYON_NUM_THREADS=1` a job spawned (`rayon::spawn`) and then waited for by other
/// means would never run. Nothing in the workspace spawns.
pub fn join_the_pool() {
    // An error means the pool was built already; its threads then serve as before.
    let _ = rayon::ThreadPoolBuilder::new()
        .use_current_thread()
        .build_global();
}

/// Runs the command line `args` (program name first): parses the flags, runs the chosen
/// demos of the chosen script, each once on its inputs, or `--list`, and writes the report
/// as the flags ask ([`write()`]). Prints to `out`, errors to `err` as one line; returns the
/// exit code (0, 1 or 2).
pub fn run<L: Lecture>(
    args: impl IntoIterator<Item = impl Into<OsString> + Clone>,
    out: &mut dyn Write,
    err: &mut dyn Write,
    options: Options,
) -> u8 {
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    run_reporting::<L>(&args, out, err, options, &mut |matches| {
        report_of::<L>(matches)
    })
}

/// [`run`] with the report made by `report` from the parsed flags (what [`report_of`]
/// makes); [`crate::testing::run_renderings`] hands in one report for several renderings.
pub(crate) fn run_reporting<L: Lecture>(
    args: &[OsString],
    out: &mut dyn Write,
    err: &mut dyn Write,
    options: Options,
    report: &mut dyn FnMut(&clap::ArgMatches) -> Result<Report, Error>,
) -> u8 {
    files::forget_inputs();
    let matches = match command::<L>().try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) if !e.use_stderr() => {
            // --help, --version
            let _ = write!(out, "{}", e.render());
            return 0;
        }
        Err(e) => {
            let _ = writeln!(err, "{}", messages::parse_error_line::<L>(&e));
            return 2;
        }
    };
    let written = CommonArgs::from_arg_matches(&matches)
        .map_err(|e| Error::Usage(e.to_string()))
        .and_then(|common| Ok((report(&matches)?, common)))
        .and_then(|(report, common)| write(&common, report, out, options));
    match written {
        Ok(()) => 0,
        Err(e) => {
            if let Some(line) = error_line::<L>(&e) {
                let _ = writeln!(err, "{line}");
            }
            e.exit_code()
        }
    }
}

/// The report the flags `args` (no program name) ask for, measured values as measured:
/// `--list`, or the chosen demos of the chosen script, with the lecture's number and the
/// script's name. Refuses what [`run`] refuses.
pub fn report<L: Lecture>(args: &[&str]) -> Result<Report, Error> {
    let argv = std::iter::once("lecture").chain(args.iter().copied());
    files::forget_inputs();
    let matches = command::<L>()
        .try_get_matches_from(argv)
        .map_err(|e| Error::Usage(usage_line::<L>(&e)))?;
    report_of::<L>(&matches)
}

/// The report `matches` ask for: the demos [`choose`] picks, each run once on its inputs,
/// the flags typed that it does not read noted after it.
pub(crate) fn report_of<L: Lecture>(matches: &clap::ArgMatches) -> Result<Report, Error> {
    let Some(choice) = choose::<L>(matches)? else {
        return list_report::<L>();
    };
    let mut report = Report::new(L::NUMBER, choice.script);
    report.units = L::UNITS
        .iter()
        .map(|&(k, v)| (k.into(), v.into()))
        .collect();
    let mut setup = serde_json::Map::new();
    for (prepared, unread) in choice.demos {
        if let serde_json::Value::Object(inputs) = &prepared.export {
            setup.extend(inputs.clone());
        }
        let mut section = prepared.run(L::DEFAULT_ONLY)?.section;
        section.unread_flags = unread;
        report.sections.push(section);
    }
    report.setup = serde_json::Value::Object(setup);
    Ok(report)
}

/// Writes `report` as the flags `common` ask (`--format`, `--out`, `--plot`), measured
/// values masked if `options` say so. Refuses `--plot` without a figure and `--format csv`
/// to standard output with other than one table. Every output is rendered whole before a
/// byte is written.
pub fn write(
    common: &CommonArgs,
    mut report: Report,
    out: &mut dyn Write,
    options: Options,
) -> Result<(), Error> {
    if options.mask_measured {
        report = report.masked();
    }
    // `--out -` is standard output, as for most tools.
    let out_path = common.out.as_deref().filter(|p| p.as_os_str() != "-");
    let n_figures = report.figures().count();
    // What the flags chose, for the messages: `--list`'s tables or the chosen demos.
    let (have, draw) = if common.list {
        ("--list prints", "--list draws")
    } else {
        ("the chosen demos have", "the chosen demos draw")
    };
    if common.plot.is_some() && n_figures == 0 {
        let hint = if common.list {
            "drop --plot"
        } else {
            "choose another --demo, or drop --plot"
        };
        return Err(Error::Usage(format!("--plot: {draw} no figure ({hint})")));
    }
    let n_tables = report.tables().count();
    // Every output is rendered whole before a byte is written: a file is then written
    // whole or not at all (`files`), and a closed pipe is an io error in every format.
    let mut figures = match &common.plot {
        Some(dir) => {
            let files = report
                .figures()
                .map(|f| {
                    Ok((
                        format!("{}.svg", f.id),
                        render::svg::to_string(f)?.into_bytes(),
                    ))
                })
                .collect::<Result<Vec<_>, String>>()
                .map_err(Error::Output)?;
            Some((dir, files))
        }
        None => None,
    };
    // Where the files go is checked before a byte is written: the figures' folder can be
    // made, and a single file's path is not a folder (nor the figures' folder).
    if let (false, Some(path)) = (common.format == Format::Csv, out_path) {
        let absolute = |p: &std::path::Path| std::path::absolute(p).ok();
        let plot = figures.as_ref().and_then(|(dir, _)| absolute(dir));
        if plot.is_some() && plot == absolute(path) {
            return Err(Error::Usage(format!(
                "--out and --plot both name {}: the figures go into a folder of their own",
                path.display()
            )));
        }
        if path.is_dir() {
            let format = common.format.to_possible_value();
            return Err(Error::Usage(format!(
                "--out {} is a folder; --format {} writes one file: give a file name \
                 (--format csv writes a folder of tables)",
                path.display(),
                format.map_or(String::new(), |v| v.get_name().to_string())
            )));
        }
    }
    refuse_overlaps(common.format, out_path, &report, figures.as_ref())?;
    if let Some((dir, _)) = &figures {
        files::make_folder(dir).map_err(Error::Output)?;
    }
    match (common.format, out_path) {
        (Format::Csv, Some(dir)) => {
            let mut tables = report
                .tables()
                .map(|t| {
                    let mut bytes = Vec::new();
                    render::csv::write(&mut bytes, t)?;
                    Ok((format!("{}.csv", t.id), bytes))
                })
                .collect::<Result<Vec<_>, Error>>()?;
            // Tables and figures into one folder: one write, one list of what it holds
            // (two writes would each find the other's files stale).
            if let Some((plot, _)) = &figures
                && files::same_folder(dir, plot).map_err(Error::Output)?
            {
                tables.extend(figures.take().map(|(_, svgs)| svgs).unwrap_or_default());
            }
            files::write_folder(dir, &tables).map_err(Error::Output)?;
        }
        (Format::Csv, None) if n_tables != 1 => {
            return Err(Error::Usage(format!(
                "--format csv prints one table to standard output, but {have} \
                 {n_tables} tables: add --out DIR for one file per table{}",
                if common.list {
                    ""
                } else {
                    ", or pick one table's demo with --demo"
                }
            )));
        }
        (format, Some(path)) => {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                files::make_folder(parent).map_err(Error::Output)?;
            }
            files::write_file(path, &rendered(&report, format)?).map_err(Error::Output)?;
        }
        (format, None) => {
            // The figures first: a reader that stops early (`| head`) closes the pipe,
            // and the files must not depend on how much of the text it wanted.
            let text = rendered(&report, format)?;
            if let Some((dir, svgs)) = figures.take() {
                files::write_folder(dir, &svgs).map_err(Error::Output)?;
            }
            out.write_all(&text)?;
            out.flush()?;
        }
    }
    if let Some((dir, svgs)) = figures {
        files::write_folder(dir, &svgs).map_err(Error::Output)?;
    }
    Ok(())
}

/// Refuses a run whose files overlap: an output that is a file the run reads (a card, a
/// `config.json`: [`files::note_input`]), or two outputs that are one file (`--plot d
/// --out d/knee.svg`). Checked before a byte is written.
fn refuse_overlaps(
    format: Format,
    out_path: Option<&std::path::Path>,
    report: &Report,
    figures: Option<&(&PathBuf, Vec<files::NamedFile>)>,
) -> Result<(), Error> {
    let mut outputs: Vec<(&str, PathBuf)> = Vec::new();
    match (format, out_path) {
        (Format::Csv, Some(dir)) => {
            let tables = report.tables().map(|t| dir.join(format!("{}.csv", t.id)));
            outputs.extend(tables.map(|p| ("--out", p)));
        }
        (_, Some(path)) => outputs.push(("--out", path.to_path_buf())),
        (_, None) => {}
    }
    if let Some((dir, svgs)) = figures {
        outputs.extend(svgs.iter().map(|(name, _)| ("--plot", dir.join(name))));
    }
    let inputs = files::inputs();
    for (i, (flag, path)) in outputs.iter().enumerate() {
        if let Some(input) = inputs.iter().find(|input| files::same_file(path, input)) {
            return Err(Error::Usage(format!(
                "{flag} would write {} over {}, which this run reads: write the output \
                 elsewhere",
                path.display(),
                input.display()
            )));
        }
        let earlier = outputs[..i].iter().find(|(_, p)| files::same_file(path, p));
        if let Some((other, _)) = earlier {
            return Err(Error::Usage(format!(
                "{other} and {flag} both write {}: give them different places",
                path.display()
            )));
        }
    }
    Ok(())
}

/// `report` rendered in `format`, as bytes.
fn rendered(report: &Report, format: Format) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    match format {
        Format::Text => render::text(&mut out, report)?,
        Format::Markdown => render::markdown(&mut out, report)?,
        Format::Json => render::json(&mut out, report)?,
        Format::Html => render::html::write(&mut out, report)?,
        Format::Csv => {
            let table = report.tables().next().expect("exactly one table, checked");
            render::csv::write(&mut out, table)?;
        }
    }
    Ok(out)
}

/// `--list`: the lecture's scripts and what [`Lecture::catalog`] adds (the registries its
/// flags accept), as a report (so it prints in every `--format`).
pub fn list_report<L: Lecture>() -> Result<Report, Error> {
    let mut script_table = Table::new(
        "scripts",
        chrome::scripts_caption(L::NUMBER),
        chrome::SCRIPTS_HEADERS.map(Column::text).to_vec(),
    );
    for s in L::scripts() {
        script_table = script_table.row(vec![
            Cell::text(s.name),
            Cell::text(s.title),
            Cell::text(choices(&s.numbers())),
        ]);
    }
    let mut blocks = vec![
        Block::Text(chrome::scripts_line(L::NUMBER)),
        Block::Table(script_table),
    ];
    blocks.extend(L::catalog());
    let mut report = Report::new(L::NUMBER, "list");
    report.sections.push(Section::new("list", blocks, &())?);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_read_as_a_sentence() {
        assert_eq!(choices(&[1, 2, 3, 4]), "1, 2, 3 or 4");
        assert_eq!(choices(&[1, 2]), "1 or 2");
        assert_eq!(choices(&[1]), "1");
    }
}
