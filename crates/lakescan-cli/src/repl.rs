//! The interactive (or piped) statement loop used when no `-c`/`-f` is given.

use std::io::{BufRead, IsTerminal, Write};

use tokio::runtime::Runtime;

use crate::error::{CliError, CliResult};
use crate::exec::Runner;
use crate::split::{is_complete, split_statements};

const PROMPT: &str = "lakescan> ";
const CONTINUATION_PROMPT: &str = "       -> ";

/// Reads statements from stdin until EOF, `\q` or `quit`.
///
/// Input is accumulated until it ends with a complete `;`-terminated
/// statement.  Errors are reported on stderr and the loop continues.
/// Returns `true` if any statement failed.
pub fn run(runtime: &Runtime, runner: &Runner) -> CliResult<bool> {
    let stdin = std::io::stdin();
    let interactive = stdin.is_terminal();
    let mut input = stdin.lock();
    let mut buffer = String::new();
    let mut failed = false;
    loop {
        if interactive {
            prompt(if buffer.is_empty() {
                PROMPT
            } else {
                CONTINUATION_PROMPT
            })?;
        }
        let Some(line) = read_line(&mut input)? else {
            break;
        };
        if buffer.trim().is_empty() && is_quit_command(&line) {
            return Ok(failed);
        }
        buffer.push_str(&line);
        buffer.push('\n');
        if is_complete(&buffer) {
            failed |= run_buffer(runtime, runner, &buffer);
            buffer.clear();
        }
    }
    // EOF: run whatever is left, even without a final `;`.
    failed |= run_buffer(runtime, runner, &buffer);
    Ok(failed)
}

fn prompt(text: &str) -> CliResult<()> {
    let mut out = std::io::stdout().lock();
    write!(out, "{text}")?;
    out.flush()?;
    Ok(())
}

/// Reads one line without its line terminator; `None` at EOF.
fn read_line(input: &mut impl BufRead) -> CliResult<Option<String>> {
    let mut line = String::new();
    let read = input
        .read_line(&mut line)
        .map_err(|e| CliError::io("cannot read stdin", e))?;
    if read == 0 {
        return Ok(None);
    }
    let trimmed_len = line.trim_end_matches(['\n', '\r']).len();
    line.truncate(trimmed_len);
    Ok(Some(line))
}

fn is_quit_command(line: &str) -> bool {
    let command = line.trim().trim_end_matches(';').trim();
    matches!(command, "\\q" | "quit" | "exit")
}

/// Runs all statements in `buffer`, reporting errors; returns `true` on error.
fn run_buffer(runtime: &Runtime, runner: &Runner, buffer: &str) -> bool {
    let mut failed = false;
    for statement in split_statements(buffer) {
        if let Err(e) = runtime.block_on(runner.run_statement(&statement)) {
            eprintln!("Error: {e}");
            failed = true;
        }
    }
    failed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_quit_commands() {
        for line in ["\\q", "quit", "  quit;  ", "exit", "\\q;"] {
            assert!(is_quit_command(line), "{line}");
        }
        for line in ["select 1;", "quitter", ""] {
            assert!(!is_quit_command(line), "{line}");
        }
    }

    #[test]
    fn reads_lines_without_terminators() {
        let mut input = std::io::Cursor::new("a\r\nb\nc");
        let mut lines = Vec::new();
        while let Some(line) = read_line(&mut input).unwrap_or(None) {
            lines.push(line);
        }
        assert_eq!(lines, vec!["a", "b", "c"]);
    }
}
