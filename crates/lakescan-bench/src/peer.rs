//! The out-of-process peers, each a child process driven one command per line (JSON) so its
//! runs interleave with the in-process engines' runs. Times and peak RSS are measured inside
//! the child; results come back as Parquet files the child writes.
//!
//! | engine | child |
//! |---|---|
//! | `duckdb` | `benchmarks/duckdb_runner.py` with the `duckdb` package, views over `read_parquet` |
//! | `duckdb-iceberg` | the same runner in the Iceberg venv (`duckdb==1.5.5` with the `duckdb-extension-avro` and `-iceberg` extension files loaded unsigned; `duckdb==1.4.4` with the `duckdb-ext-*` ones as the fallback), views over `iceberg_scan` |
//! | `duckdb` on S3 (`--s3`) | the same runner in the Iceberg venv with the `duckdb-extension-httpfs` (or `duckdb-ext-httpfs`) extension file, views over `read_parquet('s3://…')`, an S3 secret for the local server |
//! | `iceberg-datafusion` | `benchmarks/iceberg-datafusion-peer` (iceberg-rust's `iceberg-datafusion` 0.10.1 on DataFusion 53), built by `benchmarks/setup.sh` |

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};

use crate::dataset::Dataset;
use crate::iceberg_tables::VARIANTS;

/// The DuckDB runner script, embedded so the binary does not depend on the working directory.
const RUNNER: &str = include_str!("../../../benchmarks/duckdb_runner.py");

/// The Python of the Iceberg venv `benchmarks/setup.sh` creates.
pub fn default_iceberg_python() -> PathBuf {
    home().join(".venvs/lakescan-bench-iceberg/bin/python")
}

/// The iceberg-datafusion peer binary `benchmarks/setup.sh` builds.
pub fn default_iceberg_datafusion() -> PathBuf {
    home().join(".cache/lakescan/iceberg-datafusion-peer-target/release/iceberg-datafusion-peer")
}

fn home() -> PathBuf {
    std::env::var_os("HOME").map_or_else(std::env::temp_dir, PathBuf::from)
}

/// A running peer.
pub struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// What the child says it is (`duckdb 1.4.4`, `iceberg-datafusion 0.10.1`).
    pub version: String,
}

/// One timed run of a peer.
#[derive(Debug, Clone, Copy)]
pub struct PeerRun {
    /// Wall time measured in the child.
    pub elapsed: Duration,
    /// The child's peak RSS during the run.
    pub peak_rss_bytes: u64,
    /// Rows returned.
    pub rows: usize,
}

const SETUP_HINT: &str = "run benchmarks/setup.sh";

fn quote(p: &Path) -> String {
    p.display().to_string().replace('\'', "''")
}

impl Peer {
    /// Fails with a hint to run `benchmarks/setup.sh` when `python` cannot import the
    /// runner's packages.
    pub fn probe_duckdb(python: &str) -> Result<()> {
        python_imports(python, "import duckdb, pyarrow")
    }

    /// DuckDB over the flat, Hive, bucketed and nested files.
    pub fn duckdb(python: &str, threads: usize, dataset: &Dataset) -> Result<Self> {
        Self::probe_duckdb(python)?;
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
                "CREATE VIEW small AS SELECT k, x, CAST(p AS INTEGER) AS p FROM \
                 read_parquet('{}/*/*.parquet', hive_partitioning = true)",
                quote(&dataset.small_files())
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
        let mut cmd = Command::new(python);
        cmd.args(["-c", RUNNER]);
        Self::start(cmd, &json!({ "threads": threads, "setup": setup }))
    }

    /// Fails with a hint when the Iceberg venv lacks DuckDB or its extension packages.
    pub fn probe_duckdb_iceberg(python: &Path) -> Result<()> {
        iceberg_extensions(python).map(|_| ())
    }

    /// DuckDB's iceberg extension over the Iceberg copies of `lineitem`.
    pub fn duckdb_iceberg(python: &Path, threads: usize, dataset: &Dataset) -> Result<Self> {
        let (avro, iceberg) = iceberg_extensions(python)?;
        let mut setup = vec![];
        for v in VARIANTS {
            let metadata = dataset.iceberg_metadata(v)?;
            setup.push(format!(
                "CREATE VIEW {} AS SELECT * FROM iceberg_scan('{}')",
                v.table,
                quote(&metadata)
            ));
        }
        let mut cmd = Command::new(python);
        cmd.args(["-c", RUNNER]);
        let config = json!({ "threads": threads, "setup": setup, "extensions": [avro, iceberg] });
        Self::start(cmd, &config)
    }

    /// Fails with a hint when the Iceberg venv lacks DuckDB's httpfs extension package.
    pub fn probe_duckdb_s3(python: &Path) -> Result<()> {
        httpfs_extension(python).map(|_| ())
    }

    /// DuckDB with httpfs, reading S3 through `secret` (a `CREATE SECRET` statement); the
    /// views are made by the harness ([`Self::exec`]), timed.
    pub fn duckdb_s3(python: &Path, threads: usize, secret: &str) -> Result<Self> {
        let httpfs = httpfs_extension(python)?;
        let mut cmd = Command::new(python);
        cmd.args(["-c", RUNNER]);
        let config = json!({ "threads": threads, "setup": [secret], "extensions": [httpfs] });
        Self::start(cmd, &config)
    }

    /// Fails with a hint when the iceberg-datafusion peer binary is missing.
    pub fn probe_iceberg_datafusion(binary: &Path) -> Result<()> {
        if !binary.is_file() {
            bail!(
                "the iceberg-datafusion peer {} is missing; {SETUP_HINT} (it builds \
                 benchmarks/iceberg-datafusion-peer) or pass --iceberg-datafusion",
                binary.display()
            );
        }
        Ok(())
    }

    /// iceberg-rust's DataFusion integration over the Iceberg copies of `lineitem`.
    pub fn iceberg_datafusion(binary: &Path, threads: usize, dataset: &Dataset) -> Result<Self> {
        Self::probe_iceberg_datafusion(binary)?;
        let mut tables = serde_json::Map::new();
        for v in VARIANTS {
            let metadata = dataset.iceberg_metadata(v)?;
            tables.insert(v.table.to_string(), metadata.display().to_string().into());
        }
        Self::start(
            Command::new(binary),
            &json!({ "threads": threads, "tables": tables }),
        )
    }

    fn start(mut cmd: Command, config: &Value) -> Result<Self> {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting {cmd:?}"))?;
        let stdin = child.stdin.take().ok_or_else(|| anyhow!("no stdin"))?;
        let stdout = BufReader::new(child.stdout.take().ok_or_else(|| anyhow!("no stdout"))?);
        let mut peer = Peer {
            child,
            stdin,
            stdout,
            version: String::new(),
        };
        let hello = peer.call(config)?;
        peer.version = match (
            hello["duckdb_version"].as_str(),
            hello["engine_version"].as_str(),
        ) {
            (Some(duck), _) => format!("duckdb {duck}"),
            (None, Some(engine)) => engine.to_string(),
            (None, None) => "?".to_string(),
        };
        Ok(peer)
    }

    fn call(&mut self, msg: &Value) -> Result<Value> {
        writeln!(self.stdin, "{msg}")?;
        self.stdin.flush()?;
        let mut line = String::new();
        if self.stdout.read_line(&mut line)? == 0 {
            bail!("the peer exited (see its error above)");
        }
        let reply: Value =
            serde_json::from_str(&line).with_context(|| format!("reply of the peer: {line}"))?;
        if reply["ok"].as_bool() != Some(true) {
            bail!("{}", reply["error"].as_str().unwrap_or(line.trim()));
        }
        Ok(reply)
    }

    /// Runs `sql` and writes its result to `out` (Parquet).
    pub fn check(&mut self, sql: &str, out: &Path) -> Result<()> {
        let out = out.display().to_string();
        self.call(&json!({ "op": "check", "sql": sql, "out": out }))?;
        Ok(())
    }

    /// Runs the statement `sql` (no result), timed in the child.
    pub fn exec(&mut self, sql: &str) -> Result<Duration> {
        let reply = self.call(&json!({ "op": "exec", "sql": sql }))?;
        let seconds = reply["seconds"]
            .as_f64()
            .ok_or_else(|| anyhow!("no seconds in {reply}"))?;
        Ok(Duration::from_secs_f64(seconds))
    }

    /// Runs `sql` once, timed in the child.
    pub fn run(&mut self, sql: &str) -> Result<PeerRun> {
        let reply = self.call(&json!({ "op": "run", "sql": sql }))?;
        let seconds = reply["seconds"]
            .as_f64()
            .ok_or_else(|| anyhow!("no seconds in {reply}"))?;
        Ok(PeerRun {
            elapsed: Duration::from_secs_f64(seconds),
            peak_rss_bytes: reply["peak_rss_bytes"].as_u64().unwrap_or(0),
            rows: reply["rows"].as_u64().unwrap_or(0) as usize,
        })
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "{}", json!({ "op": "quit" }));
        let _ = self.stdin.flush();
        let _ = self.child.wait();
    }
}

fn python_imports(python: &str, imports: &str) -> Result<()> {
    let probe = Command::new(python)
        .args(["-c", imports])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match probe {
        Ok(s) if s.success() => Ok(()),
        Ok(_) => bail!("`{python} -c '{imports}'` failed; {SETUP_HINT}"),
        Err(e) => bail!("cannot run {python}: {e}; {SETUP_HINT}"),
    }
}

/// What `duckdb_runner.py <flag>` prints: the extension files of the venv's DuckDB
/// extension packages, as JSON (`what` names them in the error when they are missing).
fn extension_files(python: &Path, flag: &str, what: &str) -> Result<Value> {
    let out = Command::new(python)
        .args(["-c", RUNNER, flag])
        .output()
        .with_context(|| format!("cannot run {}; {SETUP_HINT}", python.display()))?;
    if !out.status.success() {
        bail!(
            "{} cannot find DuckDB's {what} extension files ({}); {SETUP_HINT} (or pass \
             --iceberg-python)",
            python.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// The avro and iceberg extension files of the venv's DuckDB extension packages.
fn iceberg_extensions(python: &Path) -> Result<(String, String)> {
    let found = extension_files(python, "--iceberg-extensions", "iceberg")?;
    match (found["avro"].as_str(), found["iceberg"].as_str()) {
        (Some(a), Some(i)) => Ok((a.to_string(), i.to_string())),
        _ => bail!("unexpected answer of --iceberg-extensions: {found}"),
    }
}

/// The httpfs extension file of the venv's DuckDB extension packages.
fn httpfs_extension(python: &Path) -> Result<String> {
    let found = extension_files(python, "--httpfs-extension", "httpfs")?;
    match found["httpfs"].as_str() {
        Some(path) => Ok(path.to_string()),
        None => bail!("unexpected answer of --httpfs-extension: {found}"),
    }
}
