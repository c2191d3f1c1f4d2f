//! The one error type of the crate: a bad argument to a random-number method, or a format spec
//! that Python rejects or that this crate does not implement.

use std::fmt;

/// What went wrong, with a message that follows NumPy's or CPython's wording where they have one.
///
/// Every public function that can be given bad input returns `Result<_, Error>`; none panics.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// An argument that NumPy rejects with `ValueError` (`p` outside (0, 1], `high <= low`,
    /// `scale < 0`, a choice from an empty population, …), or a NaN argument, which this crate
    /// always rejects (NumPy lets some through and returns NaN).
    InvalidArgument {
        /// The NumPy method, e.g. `"Generator.normal"`.
        method: &'static str,
        /// What is wrong with the argument.
        message: String,
    },
    /// A format spec that Python rejects, or a part of the format-spec mini-language that
    /// `py_port::format` does not implement (then the message says so).
    FormatSpec {
        /// The spec as given, e.g. `".2q"`.
        spec: String,
        /// What is wrong with it.
        message: String,
    },
}

impl Error {
    pub(crate) fn invalid(method: &'static str, message: impl Into<String>) -> Self {
        Error::InvalidArgument {
            method,
            message: message.into(),
        }
    }

    pub(crate) fn spec(spec: &str, message: impl Into<String>) -> Self {
        Error::FormatSpec {
            spec: spec.to_owned(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidArgument { method, message } => write!(f, "{method}: {message}"),
            Error::FormatSpec { spec, message } => write!(f, "format spec {spec:?}: {message}"),
        }
    }
}

impl std::error::Error for Error {}
