//! The error type of the command line tool.

use std::fmt;

use arrow::error::ArrowError;
use datafusion::error::DataFusionError;

/// Result alias used throughout the CLI.
pub type CliResult<T> = Result<T, CliError>;

/// Everything that can go wrong while running the CLI.
#[derive(Debug)]
pub enum CliError {
    /// Planning or execution failed inside DataFusion (or lakescan).
    DataFusion(DataFusionError),
    /// Formatting results failed.
    Arrow(ArrowError),
    /// Reading a file, writing to stdout, creating a directory...
    Io {
        /// What the CLI was doing when the error happened.
        context: String,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// Invalid input that is not a SQL error (bad demo directory, ...).
    Invalid(String),
}

impl CliError {
    /// Wraps an I/O error with a description of what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            context: context.into(),
            source,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DataFusion(e) => write!(f, "{e}"),
            Self::Arrow(e) => write!(f, "{e}"),
            Self::Io { context, source } => write!(f, "{context}: {source}"),
            Self::Invalid(msg) => write!(f, "{msg}"),
        }
    }
}

impl std::error::Error for CliError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::DataFusion(e) => Some(e),
            Self::Arrow(e) => Some(e),
            Self::Io { source, .. } => Some(source),
            Self::Invalid(_) => None,
        }
    }
}

impl From<DataFusionError> for CliError {
    fn from(e: DataFusionError) -> Self {
        Self::DataFusion(e)
    }
}

impl From<ArrowError> for CliError {
    fn from(e: ArrowError) -> Self {
        Self::Arrow(e)
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        Self::io("I/O error", e)
    }
}
