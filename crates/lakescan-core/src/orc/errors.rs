//! [`orc_error`] and [`decoder_panic`]: the errors of an ORC file, naming it.

use datafusion::common::{DataFusionError, exec_datafusion_err};

/// An error reading the ORC file at `path`.
pub fn orc_error(path: &str, message: impl std::fmt::Display) -> DataFusionError {
    exec_datafusion_err!("cannot read ORC file '{path}': {message}")
}

/// The error of a panic of `orc-rust` while reading the file at `path`.
pub fn decoder_panic(path: &str, panic: Box<dyn std::any::Any + Send>) -> DataFusionError {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_string());
    orc_error(
        path,
        format!("the ORC decoder panicked: {message} (the file is corrupt)"),
    )
}
