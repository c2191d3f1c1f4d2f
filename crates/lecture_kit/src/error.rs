//! One error type for every lecture: the runner's own cases (bad flags, an output file
//! that could not be written, a closed pipe) and one boxed case for whatever a course
//! library reports.
//!
//! Any error type converts with `?` (`decode_lab::Error`, `llm_math::Error`, …): the kit
//! knows none of the course's libraries, so there is no variant per library. An
//! [`std::io::Error`] becomes [`Error::Io`], so that a reader who leaves early
//! (`lecture06 | head -3`) is recognised whatever wrote the bytes.

use std::error::Error as StdError;
use std::fmt;
use std::io;

/// Why a lecture could not finish.
///
/// Not itself a [`std::error::Error`] (that would clash with converting from every error
/// type, as `anyhow::Error` does); it converts into `Box<dyn std::error::Error + Send + Sync>`.
#[derive(Debug)]
pub enum Error {
    /// Writing the output failed (a closed pipe, a full disk, an unwritable `--out`).
    Io(io::Error),
    /// A file of the output (a figure, a CSV table) could not be written; says which.
    Output(String),
    /// The flags ask for something impossible (exit code 2); says what and what is valid.
    Usage(String),
    /// A library (or the lecture itself) rejected its inputs; its own message.
    Library(Box<dyn StdError + Send + Sync + 'static>),
}

impl Error {
    /// Whether the reader of the output went away (`lecture06 | head -3`): not a failure.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Io(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }

    /// The process exit code this error means: 2 for bad flags, 1 for anything else
    /// (0 for a closed pipe, which is no error).
    pub fn exit_code(&self) -> u8 {
        match self {
            _ if self.is_broken_pipe() => 0,
            Error::Usage(_) => 2,
            _ => 1,
        }
    }

    /// The library's error, if this is one of type `E` (`e.library::<decode_lab::Error>()`).
    pub fn library<E: StdError + 'static>(&self) -> Option<&E> {
        match self {
            Error::Library(e) => e.downcast_ref::<E>(),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "cannot write the output: {e}"),
            Error::Output(msg) | Error::Usage(msg) => f.write_str(msg),
            Error::Library(e) => e.fmt(f),
        }
    }
}

impl<E: StdError + Send + Sync + 'static> From<E> for Error {
    fn from(e: E) -> Self {
        let boxed: Box<dyn StdError + Send + Sync> = Box::new(e);
        match boxed.downcast::<io::Error>() {
            Ok(io) => Error::Io(*io),
            Err(other) => Error::Library(other),
        }
    }
}

/// [`Error`] as a standard error, for code that collects `Box<dyn Error>`.
#[derive(Debug)]
struct Boxed(Error);

impl fmt::Display for Boxed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl StdError for Boxed {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match &self.0 {
            Error::Io(e) => Some(e),
            Error::Library(e) => Some(e.as_ref()),
            Error::Output(_) | Error::Usage(_) => None,
        }
    }
}

impl From<Error> for Box<dyn StdError + Send + Sync + 'static> {
    fn from(e: Error) -> Self {
        Box::new(Boxed(e))
    }
}

/// Folds clap's multi-line message into one line: a bracketed line (the possible values)
/// continues the one before it, any other (a tip) is a clause of its own.
pub(crate) fn one_line(rendered: &str) -> String {
    let lines = rendered.lines().map(str::trim).filter(|l| {
        !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
    });
    let mut out = String::new();
    for l in lines.map(|l| l.strip_prefix("error: ").unwrap_or(l)) {
        if !out.is_empty() {
            out.push_str(if l.starts_with('[') { " " } else { "; " });
        }
        out.push_str(l);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_messages_fold_into_one_line() {
        let msg = "error: invalid value 'xml' for '--format <FORMAT>'\n  [possible values: text, markdown, csv, json]\n\nFor more information, try '--help'.\n";
        assert_eq!(
            one_line(msg),
            "invalid value 'xml' for '--format <FORMAT>' [possible values: text, markdown, csv, json]"
        );
    }

    #[derive(Debug)]
    struct LibError;

    impl fmt::Display for LibError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("α must be in [0, 1]")
        }
    }

    impl StdError for LibError {}

    fn fails() -> Result<(), LibError> {
        Err(LibError)
    }

    fn lecture() -> Result<(), Error> {
        fails()?;
        Ok(())
    }

    #[test]
    fn a_library_error_passes_through_with_its_own_message_and_exit_code_1() {
        let e = lecture().unwrap_err();
        assert_eq!(e.to_string(), "α must be in [0, 1]");
        assert_eq!(e.exit_code(), 1);
        assert!(e.library::<LibError>().is_some());
        assert!(e.library::<io::Error>().is_none());
    }

    #[test]
    fn io_errors_stay_io_errors_and_a_closed_pipe_is_success() {
        let pipe = Error::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(matches!(pipe, Error::Io(_)));
        assert_eq!(pipe.exit_code(), 0);
        let full = Error::from(io::Error::other("disk full"));
        assert_eq!(full.exit_code(), 1);
        assert_eq!(Error::Usage("x".into()).exit_code(), 2);
        let boxed: Box<dyn StdError + Send + Sync> = Error::from(LibError).into();
        assert_eq!(boxed.to_string(), "α must be in [0, 1]");
        assert!(boxed.source().is_some());
    }
}
