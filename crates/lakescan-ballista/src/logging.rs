//! [`log_to_stderr`]: the binaries' log, on standard error, at the level `RUST_LOG` names.
//!
//! Written here because the workspace has no logging backend (the library crates only emit
//! through `log`), and the binaries need no more than a level and a line per record.

use log::{LevelFilter, Log, Metadata, Record};

/// Writes every record at or above `RUST_LOG`'s level (`error`, `warn`, `info`, `debug`,
/// `trace`, `off`; `warn` when unset or unknown) to standard error, as
/// `LEVEL target: message`. Does nothing if the process already has a logger.
pub fn log_to_stderr() {
    let level = std::env::var("RUST_LOG")
        .ok()
        .and_then(|v| v.trim().parse::<LevelFilter>().ok())
        .unwrap_or(LevelFilter::Warn);
    if log::set_logger(&Stderr).is_ok() {
        log::set_max_level(level);
    }
}

struct Stderr;

impl Log for Stderr {
    fn enabled(&self, metadata: &Metadata) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &Record) {
        if self.enabled(record.metadata()) {
            eprintln!("{} {}: {}", record.level(), record.target(), record.args());
        }
    }

    fn flush(&self) {}
}
