//! The DuckDB peer: `benchmarks/duckdb_runner.py` in a child process, driven one command
//! per line so its runs interleave with the in-process engines' runs. Times and peak RSS are
//! measured inside the child; results come back as Parquet files written by DuckDB's `COPY`.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};

use crate::data::Dataset;

/// The runner script, embedded so the binary does not depend on the working directory.
const RUNNER: &str = include_str!("../../../benchmarks/duckdb_runner.py");

/// A running DuckDB runner.
pub struct DuckDb {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// `duckdb.__version__` of the child.
    pub version: String,
}

/// One timed DuckDB run.
#[derive(Debug, Clone, Copy)]
pub struct DuckRun {
    /// Wall time measured in the child.
    pub elapsed: Duration,
    /// The child's peak RSS during the run.
    pub peak_rss_bytes: u64,
    /// Rows returned.
    pub rows: usize,
}

fn setup_hint() -> &'static str {
    "the DuckDB peer needs the `duckdb` and `pyarrow` Python packages: run benchmarks/setup.sh"
}

impl DuckDb {
    /// Fails with a hint to run `benchmarks/setup.sh` when `python` cannot import the
    /// runner's packages.
    pub fn probe(python: &str) -> Result<()> {
        let probe = Command::new(python)
            .args(["-c", "import duckdb, pyarrow"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        match probe {
            Ok(s) if s.success() => {}
            Ok(_) => bail!(
                "`{python} -c 'import duckdb, pyarrow'` failed; {}",
                setup_hint()
            ),
            Err(e) => bail!("cannot run {python}: {e}; {}", setup_hint()),
        }
        Ok(())
    }

    /// Starts the runner with `python`, `threads` DuckDB threads and views over `dataset`.
    pub fn start(python: &str, threads: usize, dataset: &Dataset) -> Result<Self> {
        Self::probe(python)?;
        let mut child = Command::new(python)
            .args(["-c", RUNNER])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting {python}"))?;
        let stdin = child.stdin.take().ok_or_else(|| anyhow!("no stdin"))?;
        let stdout = BufReader::new(child.stdout.take().ok_or_else(|| anyhow!("no stdout"))?);
        let mut duck = DuckDb {
            child,
            stdin,
            stdout,
            version: String::new(),
        };
        let quote = |p: &Path| p.display().to_string().replace('\'', "''");
        let setup = vec![
            format!(
                "CREATE VIEW lineitem AS SELECT * FROM read_parquet('{}/*.parquet')",
                quote(&dataset.flat_lineitem())
            ),
            format!(
                "CREATE VIEW orders AS SELECT * FROM read_parquet('{}/*.parquet')",
                quote(&dataset.flat_orders())
            ),
            format!(
                "CREATE VIEW lineitem_hive AS SELECT * FROM \
                 read_parquet('{}/*/*.parquet', hive_partitioning = true)",
                quote(&dataset.hive_lineitem())
            ),
            format!(
                "CREATE VIEW orders_bucketed AS SELECT * FROM read_parquet('{}/*.parquet')",
                quote(&dataset.bucketed_orders())
            ),
            format!(
                "CREATE VIEW lineitem_struct AS SELECT * FROM read_parquet('{}/*.parquet')",
                quote(&dataset.struct_lineitem())
            ),
        ];
        let hello = duck.call(&json!({ "threads": threads, "setup": setup }))?;
        duck.version = hello["duckdb_version"].as_str().unwrap_or("?").to_string();
        Ok(duck)
    }

    fn call(&mut self, msg: &Value) -> Result<Value> {
        writeln!(self.stdin, "{msg}")?;
        self.stdin.flush()?;
        let mut line = String::new();
        if self.stdout.read_line(&mut line)? == 0 {
            bail!("the DuckDB runner exited (see its error above)");
        }
        let reply: Value = serde_json::from_str(&line)
            .with_context(|| format!("reply of the DuckDB runner: {line}"))?;
        if reply["ok"].as_bool() != Some(true) {
            bail!("DuckDB: {}", reply["error"].as_str().unwrap_or(line.trim()));
        }
        Ok(reply)
    }

    /// Runs `sql` and writes its result to `out` (Parquet).
    pub fn check(&mut self, sql: &str, out: &Path) -> Result<()> {
        let out = out.display().to_string();
        self.call(&json!({ "op": "check", "sql": sql, "out": out }))?;
        Ok(())
    }

    /// Runs `sql` once, timed in the child.
    pub fn run(&mut self, sql: &str) -> Result<DuckRun> {
        let reply = self.call(&json!({ "op": "run", "sql": sql }))?;
        let seconds = reply["seconds"]
            .as_f64()
            .ok_or_else(|| anyhow!("no seconds in {reply}"))?;
        Ok(DuckRun {
            elapsed: Duration::from_secs_f64(seconds),
            peak_rss_bytes: reply["peak_rss_bytes"].as_u64().unwrap_or(0),
            rows: reply["rows"].as_u64().unwrap_or(0) as usize,
        })
    }
}

impl Drop for DuckDb {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "{}", json!({ "op": "quit" }));
        let _ = self.stdin.flush();
        let _ = self.child.wait();
    }
}
