//! One error type for every lecture: a variant per library a lecture calls, plus the
//! runner's own (bad flags, output that could not be written).

use std::fmt;
use std::io;

/// Why a lecture could not finish.
#[derive(Debug)]
pub enum Error {
    /// Writing the output failed (a closed pipe, a full disk, an unwritable `--out`).
    Io(io::Error),
    /// A file of the output (a figure, a CSV table) could not be written; says which.
    Output(String),
    /// The flags ask for something impossible (exit code 2); says what and what is valid.
    Usage(String),
    /// An accelerator name the registry does not know.
    Hw(hw_specs::UnknownAccelerator),
    /// The roofline model rejected its inputs.
    Math(llm_math::Error),
    /// The speculative-decoding model rejected its inputs.
    Decode(decode_lab::Error),
    /// The toy model rejected its inputs.
    Model(transformer_lab::Error),
    /// Quantization rejected its inputs.
    Quant(quant_lab::Error),
    /// A lecture's figures could not be represented as JSON.
    Json(serde_json::Error),
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
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "cannot write the output: {e}"),
            Error::Output(msg) | Error::Usage(msg) => f.write_str(msg),
            Error::Hw(e) => e.fmt(f),
            Error::Math(e) => e.fmt(f),
            Error::Decode(e) => e.fmt(f),
            Error::Model(e) => e.fmt(f),
            Error::Quant(e) => e.fmt(f),
            Error::Json(e) => write!(f, "cannot export the figures as JSON: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            Error::Hw(e) => Some(e),
            Error::Math(e) => Some(e),
            Error::Decode(e) => Some(e),
            Error::Model(e) => Some(e),
            Error::Quant(e) => Some(e),
            Error::Json(e) => Some(e),
            Error::Output(_) | Error::Usage(_) => None,
        }
    }
}

macro_rules! from {
    ($($t:ty => $v:ident),* $(,)?) => {$(
        impl From<$t> for Error {
            fn from(e: $t) -> Self {
                Error::$v(e)
            }
        }
    )*};
}

from! {
    io::Error => Io,
    hw_specs::UnknownAccelerator => Hw,
    llm_math::Error => Math,
    decode_lab::Error => Decode,
    transformer_lab::Error => Model,
    quant_lab::Error => Quant,
    serde_json::Error => Json,
}
