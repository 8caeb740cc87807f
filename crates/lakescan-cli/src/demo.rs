//! `lakescan demo`: writes a small Hive-partitioned warehouse with DataFusion,
//! registers it through lakescan and shows how much each query prunes; then the Iceberg
//! part ([`crate::demo_iceberg`]).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use datafusion::prelude::SessionContext;
use lakescan_testkit::{S3Server, upload_dir};

use crate::demo_query::{DemoQuery, run_query};
use crate::error::{CliError, CliResult};
use crate::exec::new_context;

/// Default number of rows in the demo table.
pub const DEFAULT_ROWS: usize = 300_000;

/// Name of the demo table (and of its directory below the demo directory).
const TABLE: &str = "sales";
/// File written next to the table once it is complete; holds the row count.
const MARKER: &str = ".lakescan-demo";
/// Values of the `region` partition column.
const REGIONS: [&str; 5] = ["amer-east", "amer-west", "apac", "emea", "latam"];
/// Values of the `day` partition column.
const DAYS: [&str; 6] = [
    "2024-01-01",
    "2024-01-02",
    "2024-01-03",
    "2024-01-04",
    "2024-01-05",
    "2024-01-06",
];
/// Number of `COPY` statements used to write the table; each one adds a
/// file to every partition.
const MAX_CHUNKS: usize = 8;
/// Width of the progress bar in characters.
const BAR_WIDTH: usize = 30;

/// Options of the `demo` sub command.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// Directory holding the demo warehouse.
    pub dir: PathBuf,
    /// Number of rows to generate when the table does not exist yet.
    pub rows: usize,
    /// Read the Hive table from a local S3 server too.
    pub s3: bool,
}

impl DemoOptions {
    /// The default demo directory: `<system temp dir>/lakescan-demo`.
    pub fn default_dir() -> PathBuf {
        std::env::temp_dir().join("lakescan-demo")
    }
}

/// Writes (or reuses) the demo table, registers it and runs the demo queries.
pub async fn run(options: &DemoOptions) -> CliResult<()> {
    let dir = prepare_dir(&options.dir)?;
    let ctx = new_context()?;
    let rows = ensure_table(&ctx, &dir, options.rows).await?;
    let location = sql_path(&dir.join(TABLE))?;
    let create = format!(
        "CREATE EXTERNAL TABLE {TABLE} STORED AS HIVE LOCATION {} PARTITIONED BY (region, day)",
        sql_string(&format!("{location}/"))
    );
    println!("-- Register the table with lakescan's HIVE table factory");
    println!("{create};\n");
    ctx.sql(&create).await?;
    for query in demo_queries(rows) {
        run_query(&ctx, &query).await?;
    }
    let server = match options.s3 {
        true => Some(S3Server::start().map_err(|e| CliError::Invalid(format!("--s3: {e}")))?),
        false => None,
    };
    if let Some(server) = &server {
        run_on_s3(&dir, rows, server).await?;
    }
    crate::demo_iceberg::run(&dir, None).await?;
    if let Some(server) = &server {
        crate::demo_iceberg::run(&dir, Some(server)).await?;
    }
    Ok(())
}

/// The same table and queries from S3: `server` is moto on 127.0.0.1 (stopped when the demo
/// ends), the table uploaded to bucket `demo`, created with `aws.*` options.
async fn run_on_s3(dir: &Path, rows: usize, server: &S3Server) -> CliResult<()> {
    let bucket = "demo";
    server
        .create_bucket(bucket)
        .map_err(|e| CliError::Invalid(format!("--s3: {e}")))?;
    let store = server
        .store(bucket)
        .map_err(|e| CliError::Invalid(format!("--s3: {e}")))?;
    let files = upload_dir(&store, &dir.join(TABLE), TABLE)
        .await
        .map_err(|e| CliError::Invalid(format!("--s3: cannot upload the table: {e}")))?;
    println!(
        "-- On S3: moto on {} (started by this demo), {files} files uploaded to s3://{bucket}/{TABLE}/",
        server.endpoint()
    );
    let ctx = new_context()?;
    let create = format!(
        "CREATE EXTERNAL TABLE {TABLE} STORED AS HIVE LOCATION 's3://{bucket}/{TABLE}/' \
         PARTITIONED BY (region, day) OPTIONS ({})",
        server.sql_options()
    );
    println!("{create};\n");
    ctx.sql(&create).await?;
    for mut query in demo_queries(rows) {
        query.title = match query.title {
            t if t.starts_with("Full count") => "S3: full count",
            t if t.starts_with("Partition-pruned") => "S3: partition-pruned aggregate",
            t if t.starts_with("Point lookup") => "S3: point lookup",
            _ => "S3: LIMIT",
        };
        run_query(&ctx, &query).await?;
    }
    Ok(())
}

fn prepare_dir(dir: &Path) -> CliResult<PathBuf> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::io(format!("cannot create {}", dir.display()), e))?;
    dir.canonicalize()
        .map_err(|e| CliError::io(format!("cannot resolve {}", dir.display()), e))
}

/// Returns the number of rows of the demo table in `dir`, writing the table
/// first if it does not exist.
async fn ensure_table(ctx: &SessionContext, dir: &Path, rows: usize) -> CliResult<usize> {
    if let Some(existing) = existing_rows(dir)? {
        eprintln!(
            "Reusing demo table {} ({existing} rows)",
            dir.join(TABLE).display()
        );
        return Ok(existing);
    }
    if rows == 0 {
        return Err(CliError::Invalid(
            "the demo table needs at least one row".into(),
        ));
    }
    write_table(ctx, dir, rows).await?;
    let marker = dir.join(MARKER);
    std::fs::write(&marker, format!("{rows}\n"))
        .map_err(|e| CliError::io(format!("cannot write {}", marker.display()), e))?;
    Ok(rows)
}

/// Row count of a complete demo table in `dir`, `None` if there is none.
fn existing_rows(dir: &Path) -> CliResult<Option<usize>> {
    let marker = dir.join(MARKER);
    match std::fs::read_to_string(&marker) {
        Ok(text) => text.trim().parse().map(Some).map_err(|_| {
            CliError::Invalid(format!("{} does not hold a row count", marker.display()))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            ensure_no_partial_table(&dir.join(TABLE)).map(|()| None)
        }
        Err(e) => Err(CliError::io(format!("cannot read {}", marker.display()), e)),
    }
}

/// Refuses to write into a non-empty table directory that was not
/// completed by a previous `lakescan demo` run (it may be user data, or an
/// interrupted run).
fn ensure_no_partial_table(table_dir: &Path) -> CliResult<()> {
    let non_empty = match std::fs::read_dir(table_dir) {
        Ok(mut entries) => entries.next().is_some(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => {
            return Err(CliError::io(
                format!("cannot list {}", table_dir.display()),
                e,
            ));
        }
    };
    if non_empty {
        return Err(CliError::Invalid(format!(
            "{} exists but is not a complete lakescan demo table; \
             remove it or choose another directory",
            table_dir.display()
        )));
    }
    Ok(())
}

/// Writes `rows` rows with several `COPY ... PARTITIONED BY` statements.
async fn write_table(ctx: &SessionContext, dir: &Path, rows: usize) -> CliResult<()> {
    let location = format!("{}/", sql_path(&dir.join(TABLE))?);
    let plan = WritePlan::new(rows);
    eprintln!(
        "Writing demo table {location} ({rows} rows, {} chunks)",
        plan.chunks
    );
    let mut progress = Progress::new(rows, plan.chunks);
    for (index, (first, last)) in plan.ranges().enumerate() {
        let sql = copy_statement(&location, first, last, plan.row_group_size);
        ctx.sql(&sql).await?.collect().await?;
        progress.update(index + 1, last);
    }
    progress.finish();
    Ok(())
}

/// How the demo rows are split into `COPY` statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct WritePlan {
    rows: usize,
    chunks: usize,
    row_group_size: usize,
}

impl WritePlan {
    fn new(rows: usize) -> Self {
        let chunks = (rows / 2_000).clamp(1, MAX_CHUNKS);
        let partitions = REGIONS.len() * DAYS.len();
        // Aim for about three row groups per file.
        let rows_per_file = rows / chunks / partitions;
        let row_group_size = (rows_per_file / 3).max(16);
        Self {
            rows,
            chunks,
            row_group_size,
        }
    }

    /// Inclusive id ranges `(first, last)` of the chunks; ids start at 1.
    fn ranges(&self) -> impl Iterator<Item = (usize, usize)> + use<> {
        let (rows, chunks) = (self.rows, self.chunks);
        (0..chunks).map(move |i| (i * rows / chunks + 1, (i + 1) * rows / chunks))
    }
}

/// The `COPY` statement writing ids `first..=last`.
fn copy_statement(location: &str, first: usize, last: usize, row_group_size: usize) -> String {
    let region = case_expr("value % 5", &REGIONS);
    let day = case_expr("(value / 7) % 6", &DAYS);
    format!(
        "COPY (\n  SELECT\n    value AS id,\n    \
         CASE WHEN value % 101 = 0 THEN 'acme' \
         ELSE concat('customer-', CAST(value % 2000 AS VARCHAR)) END AS customer,\n    \
         CAST((value * 7919) % 25000 AS DOUBLE) / 100.0 AS amount,\n    \
         CAST(value % 10 + 1 AS INT) AS quantity,\n    \
         to_timestamp(1704067200 + ((value / 7) % 6) * 86400 + (value * 37) % 86400) AS ts,\n    \
         {region} AS region,\n    {day} AS day\n  \
         FROM generate_series({first}, {last})\n) \
         TO {} STORED AS PARQUET PARTITIONED BY (region, day)\n\
         OPTIONS ('format.max_row_group_size' '{row_group_size}')",
        sql_string(location)
    )
}

/// `CASE <expr> WHEN 0 THEN '<values[0]>' ... END`.
fn case_expr(expr: &str, values: &[&str]) -> String {
    let arms: String = values
        .iter()
        .enumerate()
        .map(|(i, v)| format!(" WHEN {i} THEN {}", sql_string(v)))
        .collect();
    format!("CASE {expr}{arms} END")
}

/// A single-quoted SQL string literal.
fn sql_string(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

fn sql_path(path: &Path) -> CliResult<String> {
    path.to_str()
        .map(|p| p.trim_end_matches('/').to_string())
        .ok_or_else(|| CliError::Invalid(format!("{} is not valid UTF-8", path.display())))
}

/// A progress bar on stderr (only drawn when stderr is a terminal).
struct Progress {
    rows: usize,
    chunks: usize,
    draw: bool,
    start: Instant,
}

impl Progress {
    fn new(rows: usize, chunks: usize) -> Self {
        let progress = Self {
            rows,
            chunks,
            draw: std::io::stderr().is_terminal(),
            start: Instant::now(),
        };
        progress.update(0, 0);
        progress
    }

    fn update(&self, chunks_done: usize, rows_done: usize) {
        if self.draw {
            eprint!("\r{}", self.line(chunks_done, rows_done));
            // A failed flush only affects the progress display.
            let _ = std::io::stderr().flush();
        }
    }

    fn line(&self, chunks_done: usize, rows_done: usize) -> String {
        let filled = BAR_WIDTH * rows_done / self.rows.max(1);
        format!(
            "[{}{}] {chunks_done}/{} chunks, {rows_done}/{} rows",
            "#".repeat(filled),
            ".".repeat(BAR_WIDTH - filled),
            self.chunks,
            self.rows
        )
    }

    fn finish(&mut self) {
        if self.draw {
            eprintln!();
        }
        eprintln!(
            "Wrote {} rows in {:.2} seconds\n",
            self.rows,
            self.start.elapsed().as_secs_f64()
        );
    }
}

/// The demo queries; `rows` is the table size (ids are `1..=rows`).
fn demo_queries(rows: usize) -> Vec<DemoQuery> {
    let id = (rows / 2 + 7).min(rows);
    let region = REGIONS[id % REGIONS.len()];
    vec![
        DemoQuery {
            title: "Full count: every partition is listed",
            sql: format!("SELECT count(*) AS row_count FROM {TABLE}"),
        },
        DemoQuery {
            title: "Partition-pruned aggregate: days before 2024-01-03 are never listed",
            sql: format!(
                "SELECT region, count(*) AS orders, round(sum(amount), 2) AS total_amount \
                 FROM {TABLE} WHERE day >= DATE '2024-01-03' \
                 AND (amount > 100 OR customer = 'acme') GROUP BY region ORDER BY region"
            ),
        },
        DemoQuery {
            title: "Point lookup: one region, row groups pruned by id statistics",
            sql: format!(
                "SELECT id, customer, amount, quantity, ts, region, day FROM {TABLE} \
                 WHERE region = {} AND id = {id}",
                sql_string(region)
            ),
        },
        DemoQuery {
            title: "LIMIT: the scan stops early",
            sql: format!(
                "SELECT id, customer, amount, region, day FROM {TABLE} \
                 WHERE day = DATE '2024-01-05' LIMIT 5"
            ),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_plan_covers_all_ids_once() {
        for rows in [1, 1_999, 20_000, 300_001] {
            let plan = WritePlan::new(rows);
            let ranges: Vec<_> = plan.ranges().collect();
            assert_eq!(ranges.len(), plan.chunks);
            assert_eq!(ranges.first().map(|r| r.0), Some(1));
            assert_eq!(ranges.last().map(|r| r.1), Some(rows));
            for pair in ranges.windows(2) {
                assert_eq!(pair[0].1 + 1, pair[1].0);
            }
        }
    }

    #[test]
    fn write_plan_for_default_size() {
        let plan = WritePlan::new(DEFAULT_ROWS);
        assert_eq!(plan.chunks, MAX_CHUNKS);
        assert_eq!(plan.row_group_size, 416);
    }

    #[test]
    fn case_expression_and_quoting() {
        assert_eq!(
            case_expr("x", &["a", "b'c"]),
            "CASE x WHEN 0 THEN 'a' WHEN 1 THEN 'b''c' END"
        );
    }

    #[test]
    fn point_lookup_targets_an_existing_row() {
        for rows in [1, 10, DEFAULT_ROWS] {
            let queries = demo_queries(rows);
            let lookup = &queries[2].sql;
            let id = (rows / 2 + 7).min(rows);
            assert!(lookup.contains(&format!("id = {id}")), "{lookup}");
            assert!(lookup.contains(REGIONS[id % REGIONS.len()]), "{lookup}");
        }
    }

    #[test]
    fn progress_line() {
        let progress = Progress {
            rows: 100,
            chunks: 4,
            draw: false,
            start: Instant::now(),
        };
        let line = progress.line(2, 50);
        assert_eq!(
            line,
            format!(
                "[{}{}] 2/4 chunks, 50/100 rows",
                "#".repeat(15),
                ".".repeat(15)
            )
        );
    }
}
