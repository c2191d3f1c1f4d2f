//! The runner's messages: clap's errors and the library's, each as the one line the
//! runner prints (and the browser page shows, `crate::web`).

use super::{Lecture, command};
use crate::error::{Error, one_line};

/// The line the runner prints for a command line clap refuses:
/// "lecture06: invalid value … ; see --help".
pub(crate) fn parse_error_line<L: Lecture>(e: &clap::Error) -> String {
    format!(
        "{}: {}",
        lecture_name::<L>(),
        shortened(&usage_line::<L>(e))
    )
}

/// The line the runner prints for `e`, or `None` when it prints none (a reader that left
/// early): "lecture06: …", with "; see --help" after a usage error.
pub(crate) fn error_line<L: Lecture>(e: &Error) -> Option<String> {
    let code = e.exit_code();
    let help = if code == 2 { "; see --help" } else { "" };
    (code != 0).then(|| {
        format!(
            "{}: {}{help}",
            lecture_name::<L>(),
            shortened(&e.to_string())
        )
    })
}

/// "lecture06".
pub(crate) fn lecture_name<L: Lecture>() -> String {
    format!("lecture{:02}", L::NUMBER)
}

/// clap's error as one line: no "error:" prefix, no usage, no tip to try --help (added
/// back as "see --help"); an unknown flag also lists the valid ones.
pub(crate) fn usage_line<L: Lecture>(e: &clap::Error) -> String {
    let mut line = one_line(&e.render().to_string());
    // `--format ''` and `--format` alone: clap says none was supplied for both.
    if let Some(rest) = line.strip_prefix("a value is required for '")
        && let Some((flag, tail)) = rest.split_once("' but none was supplied")
    {
        line = format!("{flag} needs a value, and got none or an empty one{tail}");
    }
    if e.kind() == clap::error::ErrorKind::UnknownArgument {
        let flags: Vec<String> = command::<L>()
            .get_arguments()
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect();
        line.push_str(&format!("; valid flags: {}", flags.join(", ")));
    }
    line.push_str("; see --help");
    line
}

/// The most characters of a quoted value an error line shows.
const SHOWN: usize = 40;

/// `line` with every quoted value (`"…"` or `'…'`, opened after a space, a bracket or at
/// the start) longer than [`SHOWN`] characters cut to its first [`SHOWN`] and `…`: a
/// hostile or mistaken 300-character value is named, not echoed whole (twice, in clap's
/// words and the parser's); and every control character outside those cut values
/// escaped (`\n`), so that an error stays one line.
pub(crate) fn shortened(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let opens = matches!(c, '"' | '\'') && (i == 0 || matches!(chars[i - 1], ' ' | '(' | '['));
        let close = chars[i + 1..]
            .iter()
            .position(|&d| d == c)
            .map(|k| i + 1 + k);
        match close {
            Some(end) if opens && end - i - 1 > SHOWN + 8 => {
                out.push(c);
                let kept = &chars[i + 1..i + 1 + SHOWN];
                out.extend(kept.iter().flat_map(|c| c.escape_debug()));
                out.push('…');
                out.push(c);
                i = end + 1;
            }
            // A control character (a newline in a path) would break the one line.
            _ if c.is_control() => {
                out.extend(c.escape_debug());
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_quoted_values_are_cut_and_prose_is_left_alone() {
        let long = "x".repeat(300);
        let line = format!(
            "invalid value '{long}' for '--batch <LIST>': expected batch sizes, got \"{long}\""
        );
        let cut = shortened(&line);
        let forty = "x".repeat(SHOWN);
        assert_eq!(
            cut,
            format!(
                "invalid value '{forty}…' for '--batch <LIST>': expected batch sizes, got \"{forty}…\""
            )
        );
        let prose = "the card's memory holds 'a' and the draft's KV cache";
        assert_eq!(shortened(prose), prose);
        assert_eq!(
            shortened("cannot write x\ny: a folder"),
            "cannot write x\\ny: a folder"
        );
        assert_eq!(
            shortened("unknown model \"Llama-4\""),
            "unknown model \"Llama-4\""
        );
    }
}
