//! iceberg-datafusion peer of `lakescan-bench`: iceberg-rust's `iceberg-datafusion` 0.10.1
//! (on DataFusion 53) over Iceberg tables on the local filesystem, timed in this process.
//!
//! Same line protocol as `benchmarks/duckdb_runner.py`: one JSON object per line on stdin,
//! one reply per line on stdout.
//!
//! First line (configuration):
//!     {"threads": 2, "tables": {"name": "/abs/table/metadata/vN.metadata.json", ...}}
//!     Starts a tokio runtime with `threads` workers and a `SessionContext` with
//!     `target_partitions = threads`, and registers each table under its name
//!     (`StaticTable::from_metadata_file` + `IcebergStaticTableProvider`, current snapshot).
//!     -> {"ok": true, "engine_version": "iceberg-datafusion 0.10.1"}
//! Then one command per line:
//!     {"op": "check", "sql": "...", "out": "/path/result.parquet"}
//!         runs the query and writes every batch to `out` (Parquet, `ArrowWriter`)
//!         -> {"ok": true}
//!     {"op": "run", "sql": "..."}
//!         runs the query once, timed from `ctx.sql` until the result stream's last batch;
//!         batches are counted and dropped
//!         -> {"ok": true, "seconds": 0.123, "peak_rss_bytes": 123456789, "rows": 42}
//!     {"op": "quit"} -> {"ok": true}, then exits
//! Errors answer {"ok": false, "error": "..."} and the peer keeps serving.
//!
//! Peak RSS is this process's `VmHWM` after resetting it before each run
//! (`/proc/self/clear_refs`, Linux); where the reset is refused, the lifetime `VmHWM`.
//!
//! Paths inside the table metadata are opened as written: `file:///abs` and `/abs` are
//! absolute, a relative path resolves against this process's working directory.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::Instant;

use datafusion::error::{DataFusionError, Result};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::physical_plan::execute_stream;
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::StreamExt;
use iceberg::TableIdent;
use iceberg::io::FileIO;
use iceberg::table::StaticTable;
use iceberg_datafusion::IcebergStaticTableProvider;
use serde_json::{Value, json};

const ENGINE_VERSION: &str = "iceberg-datafusion 0.10.1";

fn err(msg: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Execution(msg.to_string())
}

fn ice(e: iceberg::Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

fn reply(out: &mut impl Write, value: &Value) {
    // A closed stdout means the harness is gone: nothing left to serve.
    if writeln!(out, "{value}").and_then(|()| out.flush()).is_err() {
        std::process::exit(1);
    }
}

fn failure(e: impl std::fmt::Display) -> Value {
    json!({ "ok": false, "error": e.to_string() })
}

fn str_field<'a>(cmd: &'a Value, key: &str) -> Result<&'a str> {
    cmd[key]
        .as_str()
        .ok_or_else(|| err(format!("missing string field {key:?}")))
}

/// Registers every table of the configuration that can be opened; the error lists the others.
async fn register_tables(ctx: &SessionContext, tables: &BTreeMap<String, String>) -> Result<()> {
    let mut failed = Vec::new();
    for (name, metadata) in tables {
        if let Err(e) = register_table(ctx, name, metadata).await {
            failed.push(format!("table {name} ({metadata}): {e}"));
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(err(failed.join("; ")))
    }
}

async fn register_table(ctx: &SessionContext, name: &str, metadata: &str) -> Result<()> {
    let ident = TableIdent::from_strs(["default", name]).map_err(ice)?;
    let table = StaticTable::from_metadata_file(metadata, ident, FileIO::new_with_fs())
        .await
        .map_err(ice)?
        .into_table();
    let provider = IcebergStaticTableProvider::try_new_from_table(table)
        .await
        .map_err(ice)?;
    ctx.register_table(name, Arc::new(provider))?;
    Ok(())
}

fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn vm_hwm_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kib| kib * 1024)
}

/// Plans and runs `sql`, consuming the result stream batch by batch; returns (seconds, rows).
async fn run_once(ctx: &SessionContext, sql: &str) -> Result<(f64, usize)> {
    let start = Instant::now();
    let plan = ctx.sql(sql).await?.create_physical_plan().await?;
    let mut stream = execute_stream(plan, ctx.task_ctx())?;
    let mut rows = 0;
    while let Some(batch) = stream.next().await {
        rows += batch?.num_rows();
    }
    Ok((start.elapsed().as_secs_f64(), rows))
}

/// Runs `sql` and writes its result to `out` as Parquet.
async fn check(ctx: &SessionContext, sql: &str, out: &str) -> Result<()> {
    let plan = ctx.sql(sql).await?.create_physical_plan().await?;
    let mut stream = execute_stream(plan, ctx.task_ctx())?;
    let file = File::create(out).map_err(|e| err(format!("creating {out}: {e}")))?;
    let mut writer = ArrowWriter::try_new(file, stream.schema(), None)?;
    while let Some(batch) = stream.next().await {
        writer.write(&batch?)?;
    }
    writer.close()?;
    Ok(())
}

async fn handle(ctx: &SessionContext, cmd: &Value) -> Result<Value> {
    match cmd["op"].as_str() {
        Some("check") => {
            check(ctx, str_field(cmd, "sql")?, str_field(cmd, "out")?).await?;
            Ok(json!({ "ok": true }))
        }
        Some("run") => {
            // Without the reset (refused), VmHWM is the lifetime peak.
            reset_peak();
            let (seconds, rows) = run_once(ctx, str_field(cmd, "sql")?).await?;
            let peak = vm_hwm_bytes();
            Ok(json!({ "ok": true, "seconds": seconds, "peak_rss_bytes": peak, "rows": rows }))
        }
        Some(other) => Err(err(format!("unknown op {other:?}"))),
        None => Err(err("missing string field \"op\"")),
    }
}

fn main() {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    let mut lines = stdin.lock().lines();

    let Some(Ok(first)) = lines.next() else {
        return;
    };
    let config: Value = match serde_json::from_str(&first) {
        Ok(v) => v,
        Err(e) => {
            reply(&mut stdout, &failure(format!("configuration line: {e}")));
            std::process::exit(1);
        }
    };
    let threads = config["threads"].as_u64().unwrap_or(2).max(1) as usize;
    let tables: BTreeMap<String, String> = match config.get("tables") {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(t) => match serde_json::from_value(t.clone()) {
            Ok(t) => t,
            Err(e) => {
                reply(&mut stdout, &failure(format!("\"tables\": {e}")));
                std::process::exit(1);
            }
        },
    };

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            reply(&mut stdout, &failure(format!("tokio runtime: {e}")));
            std::process::exit(1);
        }
    };
    let ctx = SessionContext::new_with_config(
        SessionConfig::new().with_target_partitions(threads),
    );

    // A table that cannot be opened makes the configuration reply an error naming it; the
    // peer registers the other tables and keeps serving.
    let hello = match runtime.block_on(register_tables(&ctx, &tables)) {
        Ok(()) => json!({ "ok": true, "engine_version": ENGINE_VERSION }),
        Err(e) => failure(e),
    };
    reply(&mut stdout, &hello);

    for line in lines {
        let Ok(line) = line else { break };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let cmd: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                reply(&mut stdout, &failure(format!("bad command: {e}")));
                continue;
            }
        };
        if cmd["op"].as_str() == Some("quit") {
            reply(&mut stdout, &json!({ "ok": true }));
            return;
        }
        let answer = runtime
            .block_on(handle(&ctx, &cmd))
            .unwrap_or_else(failure);
        reply(&mut stdout, &answer);
    }
}
