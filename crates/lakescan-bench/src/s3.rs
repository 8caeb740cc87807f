//! `--s3`: scan cases over S3, lakescan against DataFusion's `ListingTable` on the same
//! objects (and DuckDB's `httpfs` when `benchmarks/setup.sh` installed it): time, requests
//! (GET, HEAD, LIST) and bytes, as the server counted them.
//!
//! The server is moto on 127.0.0.1 (`lakescan_testkit::S3Server`, started and stopped here)
//! with an added latency per request (`--s3-latency-ms`, 20 by default: a far region). The
//! data set's files are uploaded once to bucket `bench` under their local absolute paths as
//! keys: `lineitem` (the flat files, one Hive table without partitions), `small` (2 000
//! files in 40 partitions) and the Iceberg table `lineitem_ice_pos` (position deletes). The
//! Iceberg table's metadata names its files by local absolute path; the lakescan session
//! therefore serves `file:///` from the bucket too, so its metadata, manifests, delete files
//! and data files all come from S3 (DataFusion has no Iceberg table: `iceberg_pos` is
//! lakescan's alone).
//!
//! DuckDB (`duckdb-extension-httpfs` 1.5.5 in the Iceberg venv, loaded from its PyPI wheel: nothing
//! is downloaded at run time) reads the Hive tables through `read_parquet('s3://…')` views
//! with an S3 secret for the server; a new DuckDB process per run, its view creation (which
//! lists and reads a footer to bind) and query timed inside it. It has no Iceberg table here
//! (the table's metadata names local paths).
//!
//! `LAKESCAN_BENCH_S3_EXPLAIN=1` prints each run's `CREATE` and query times and its plan with
//! metrics on stderr.
//!
//! Every run is a cold session: what a new session pays for the query, its `CREATE EXTERNAL
//! TABLE`s included (DataFusion reads the footers there to infer the schema and keeps them
//! for the query; lakescan reads them while planning). Time and requests cover both; the
//! requests of the query alone are shown too.
//!
//! Listings: DataFusion's `ListingTable` keeps a table's listing without expiry by default
//! (its `list_files_cache`), so its query does not list again after `CREATE` (nor see files
//! added since). lakescan lists every query by default; `lakescan+listing_cache` is lakescan
//! with `lakescan.listing_cache_ttl_seconds = 600`, which serves the query from the listing
//! `CREATE` made: the like-for-like of DataFusion's default.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use datafusion::prelude::{SessionConfig, SessionContext};
use lakescan_testkit::{ACCESS_KEY_ID, REGION, Requests, S3Server, SECRET_ACCESS_KEY, upload_dir};
use object_store::{ClientOptions, ObjectStore};
use url::Url;

use crate::cases::Case;
use crate::dataset::Dataset;
use crate::engines::{ConsumeOn, run_sql_on};
use crate::peer::Peer;

/// The bucket of the benchmark.
const BUCKET: &str = "bench";

/// The cases run on S3.
pub const S3_CASES: [&str; 5] = [
    "full_scan",
    "tpch_q6",
    "small_partition",
    "small_files",
    "iceberg_pos",
];

/// The engines on S3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum S3Engine {
    /// lakescan's `STORED AS HIVE|ICEBERG` tables.
    Lakescan,
    /// lakescan keeping listings for 600 s (`lakescan.listing_cache_ttl_seconds`), Hive
    /// tables only.
    LakescanListingCache,
    /// DataFusion's `ListingTable` (`STORED AS PARQUET`).
    DataFusion,
    /// DuckDB's `httpfs` (`read_parquet` views).
    DuckDb,
}

impl S3Engine {
    /// The engine's name in the table and the JSON.
    pub fn name(self) -> &'static str {
        match self {
            S3Engine::Lakescan => "lakescan",
            S3Engine::LakescanListingCache => "lakescan+listing_cache",
            S3Engine::DataFusion => "datafusion",
            S3Engine::DuckDb => "duckdb",
        }
    }

    /// Whether this is lakescan (either form).
    fn is_lakescan(self) -> bool {
        matches!(self, S3Engine::Lakescan | S3Engine::LakescanListingCache)
    }
}

/// One case and engine on S3.
#[derive(Debug, Clone)]
pub struct S3Row {
    /// The case.
    pub case: &'static str,
    /// The engine.
    pub engine: S3Engine,
    /// Median time of `CREATE` and query over the runs.
    pub median: Duration,
    /// Requests of `CREATE` and query in the first run (the server's count; every run is
    /// cold, so they agree).
    pub requests: Requests,
    /// Requests of the query alone.
    pub query_requests: Requests,
    /// Rows returned.
    pub rows: usize,
}

/// One run's measures: time of `CREATE` and query, requests before, after `CREATE` and
/// after the query, rows.
struct Measured {
    elapsed: Duration,
    before: Requests,
    created: Requests,
    after: Requests,
    rows: usize,
}

/// Uploads the tables, then runs `cases` `runs` times per engine with `latency_ms` added to
/// every request; DuckDB too when `duckdb_python` (a Python with DuckDB's httpfs extension package) is
/// given.
pub async fn run(
    dataset: &Dataset,
    cases: &[Case],
    runs: usize,
    threads: usize,
    latency_ms: u64,
    duckdb_python: Option<&Path>,
) -> Result<Vec<S3Row>> {
    let server = S3Server::start().map_err(|e| anyhow::anyhow!("--s3: {e}"))?;
    server
        .create_bucket(BUCKET)
        .map_err(|e| anyhow::anyhow!("--s3: {e}"))?;
    let store = bench_store(&server)?;
    let ice_pos = dataset.iceberg_table(pos_variant()?);
    for dir in [dataset.flat_lineitem(), dataset.small_files(), ice_pos] {
        upload_dir(&store, &dir, &key_of(&dir))
            .await
            .map_err(|e| anyhow::anyhow!("uploading {}: {e}", dir.display()))?;
    }
    server
        .set_latency(latency_ms)
        .map_err(|e| anyhow::anyhow!("--s3: {e}"))?;
    let mut rows = vec![];
    for case in cases.iter().filter(|c| S3_CASES.contains(&c.name)) {
        for engine in [
            S3Engine::Lakescan,
            S3Engine::LakescanListingCache,
            S3Engine::DataFusion,
            S3Engine::DuckDb,
        ] {
            if case.iceberg && engine != S3Engine::Lakescan {
                continue;
            }
            let duckdb = match (engine, duckdb_python) {
                (S3Engine::DuckDb, None) => continue,
                (S3Engine::DuckDb, Some(python)) => Some(python),
                _ => None,
            };
            let mut times = vec![];
            let mut first: Option<(Requests, Requests, usize)> = None;
            for _ in 0..runs.max(1) {
                let m = match duckdb {
                    Some(python) => duckdb_run(&server, python, dataset, threads, case)?,
                    None => rust_run(&server, engine, dataset, &store, threads, case).await?,
                };
                times.push(m.elapsed);
                first.get_or_insert((m.after.since(&m.before), m.after.since(&m.created), m.rows));
            }
            times.sort();
            let (requests, query_requests, rows_returned) = first.unwrap_or_default();
            rows.push(S3Row {
                case: case.name,
                engine,
                median: times[times.len() / 2],
                requests,
                query_requests,
                rows: rows_returned,
            });
        }
    }
    check_rows(&rows)?;
    Ok(rows)
}

fn counted(server: &S3Server) -> Result<Requests> {
    server.requests().map_err(|e| anyhow::anyhow!("{e}"))
}

/// One cold run of lakescan or DataFusion.
async fn rust_run(
    server: &S3Server,
    engine: S3Engine,
    dataset: &Dataset,
    store: &Arc<dyn ObjectStore>,
    threads: usize,
    case: &Case,
) -> Result<Measured> {
    let before = counted(server)?;
    let started = Instant::now();
    let ctx = session(engine, dataset, store, threads, case.name).await?;
    let created = counted(server)?;
    let created_at = started.elapsed();
    let run = run_sql_on(&ctx, &case.sql, ConsumeOn::Partitions)
        .await
        .with_context(|| format!("{} on S3 with {}", case.name, engine.name()))?;
    let elapsed = started.elapsed();
    if std::env::var_os("LAKESCAN_BENCH_S3_EXPLAIN").is_some() {
        let shown = datafusion::physical_plan::display::DisplayableExecutionPlan::with_metrics(
            run.plan.as_ref(),
        )
        .indent(true)
        .to_string();
        eprintln!(
            "{} {}: create {created_at:?}, query {:?}\n{shown}",
            case.name,
            engine.name(),
            run.elapsed
        );
    }
    Ok(Measured {
        elapsed,
        before,
        created,
        after: counted(server)?,
        rows: run.rows,
    })
}

/// One cold run of DuckDB: a new process, its view over the case's table and the query, both
/// timed inside it (the process's start and the extension's load make no request and are
/// not counted).
fn duckdb_run(
    server: &S3Server,
    python: &Path,
    dataset: &Dataset,
    threads: usize,
    case: &Case,
) -> Result<Measured> {
    let endpoint = server.endpoint();
    let secret = format!(
        "CREATE SECRET bench (TYPE s3, KEY_ID '{ACCESS_KEY_ID}', SECRET '{SECRET_ACCESS_KEY}', \
         REGION '{REGION}', ENDPOINT '{}', URL_STYLE 'path', USE_SSL false)",
        endpoint.trim_start_matches("http://")
    );
    let view = match S3Table::of(case.name) {
        S3Table::Lineitem => format!(
            "CREATE VIEW lineitem AS SELECT * FROM read_parquet('{}*.parquet')",
            s3_url(&dataset.flat_lineitem())
        ),
        S3Table::Small => format!(
            "CREATE VIEW small AS SELECT k, x, CAST(p AS INTEGER) AS p FROM \
             read_parquet('{}*/*.parquet', hive_partitioning = true)",
            s3_url(&dataset.small_files())
        ),
        S3Table::IcebergPos => bail!("{}: DuckDB has no Iceberg table on S3 here", case.name),
    };
    let mut peer = Peer::duckdb_s3(python, threads, &secret)?;
    let before = counted(server)?;
    let create = peer
        .exec(&view)
        .with_context(|| format!("{} on S3 with duckdb: {view}", case.name))?;
    let created = counted(server)?;
    let run = peer
        .run(&case.sql)
        .with_context(|| format!("{} on S3 with duckdb", case.name))?;
    Ok(Measured {
        elapsed: create + run.elapsed,
        before,
        created,
        after: counted(server)?,
        rows: run.rows,
    })
}

/// Every engine returns as many rows for every case.
fn check_rows(rows: &[S3Row]) -> Result<()> {
    for r in rows.iter().filter(|r| r.engine == S3Engine::DataFusion) {
        for lake in rows
            .iter()
            .filter(|l| l.case == r.case && l.engine != S3Engine::DataFusion)
        {
            if lake.rows != r.rows {
                bail!(
                    "{} on S3: {} returned {} rows, DataFusion {}",
                    r.case,
                    lake.engine.name(),
                    lake.rows,
                    r.rows
                );
            }
        }
    }
    Ok(())
}

fn pos_variant() -> Result<crate::iceberg_tables::Variant> {
    crate::iceberg_tables::VARIANTS
        .into_iter()
        .find(|v| v.table == "lineitem_ice_pos")
        .context("no lineitem_ice_pos variant")
}

/// The key of a local directory: its absolute path without the leading `/`.
fn key_of(dir: &Path) -> String {
    dir.to_string_lossy().trim_start_matches('/').to_string()
}

/// `s3://bench/<key>/`.
fn s3_url(dir: &Path) -> String {
    format!("s3://{BUCKET}/{}/", key_of(dir))
}

/// The benchmark's client: the test client with a timeout for large ranges.
fn bench_store(server: &S3Server) -> Result<Arc<dyn ObjectStore>> {
    let options = ClientOptions::new()
        .with_allow_http(true)
        .with_timeout(Duration::from_secs(120));
    let store = server
        .builder(BUCKET)
        .with_client_options(options)
        .build()?;
    Ok(Arc::new(store))
}

/// The table a case reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum S3Table {
    /// The flat `lineitem` files.
    Lineitem,
    /// The 2 000 small files in 40 partitions.
    Small,
    /// The Iceberg table with position deletes (lakescan only).
    IcebergPos,
}

impl S3Table {
    fn of(case: &str) -> Self {
        match case {
            "small_files" | "small_partition" => S3Table::Small,
            "iceberg_pos" => S3Table::IcebergPos,
            _ => S3Table::Lineitem,
        }
    }
}

/// A cold session of `engine` with the S3 table `case` reads.
async fn session(
    engine: S3Engine,
    dataset: &Dataset,
    store: &Arc<dyn ObjectStore>,
    threads: usize,
    case: &str,
) -> Result<SessionContext> {
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(threads));
    ctx.register_object_store(&Url::parse(&format!("s3://{BUCKET}"))?, Arc::clone(store));
    let format = match engine {
        S3Engine::Lakescan | S3Engine::LakescanListingCache => {
            lakescan::register(&ctx)?;
            if engine == S3Engine::LakescanListingCache {
                ctx.sql("SET lakescan.listing_cache_ttl_seconds = 600")
                    .await?;
            }
            "HIVE"
        }
        S3Engine::DataFusion => "PARQUET",
        S3Engine::DuckDb => bail!("DuckDB runs in its own process"),
    };
    let create = match (S3Table::of(case), engine) {
        (S3Table::Lineitem, _) => format!(
            "CREATE EXTERNAL TABLE lineitem STORED AS {format} LOCATION '{}'",
            s3_url(&dataset.flat_lineitem())
        ),
        (S3Table::Small, _) => format!(
            "CREATE EXTERNAL TABLE small (k BIGINT, x DOUBLE, p INT) STORED AS {format} \
             LOCATION '{}' PARTITIONED BY (p)",
            s3_url(&dataset.small_files())
        ),
        (S3Table::IcebergPos, S3Engine::Lakescan) => {
            // The Iceberg metadata names local absolute paths: serve them from the bucket
            // (the keys are those paths).
            ctx.register_object_store(&Url::parse("file:///")?, Arc::clone(store));
            format!(
                "CREATE EXTERNAL TABLE lineitem_ice_pos STORED AS ICEBERG LOCATION '{}/'",
                dataset.iceberg_table(pos_variant()?).display()
            )
        }
        (S3Table::IcebergPos, _) => {
            bail!("{case}: only lakescan's default session runs the Iceberg table")
        }
    };
    ctx.sql(&create).await?.collect().await?;
    Ok(ctx)
}

/// The S3 table and its targets, as text.
pub fn render(rows: &[S3Row], latency_ms: u64, runs: usize) -> String {
    let mut out = format!(
        "\nS3 (moto on 127.0.0.1, +{latency_ms} ms per request; a cold session per run, median \
         of {runs}; time and requests of CREATE + query, as the server counted them; the \
         query's own requests apart)\n\n\
         | case | engine | median s | x DataFusion | GET | HEAD | LIST | requests | x DataFusion | query requests | MiB |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n"
    );
    let peer = |r: &S3Row| {
        rows.iter()
            .find(|p| p.case == r.case && p.engine == S3Engine::DataFusion)
    };
    for r in rows {
        let (time_ratio, request_ratio) = match peer(r) {
            Some(p) if r.engine != S3Engine::DataFusion => (
                format!("{:.2}", r.median.as_secs_f64() / p.median.as_secs_f64()),
                format!(
                    "{:.2}",
                    r.requests.total() as f64 / p.requests.total().max(1) as f64
                ),
            ),
            _ => ("".into(), "".into()),
        };
        out.push_str(&format!(
            "| {} | {} | {:.3} | {time_ratio} | {} | {} | {} | {} | {request_ratio} | {} | {:.1} |\n",
            r.case,
            r.engine.name(),
            r.median.as_secs_f64(),
            r.requests.get,
            r.requests.head,
            r.requests.list,
            r.requests.total(),
            r.query_requests.total(),
            r.requests.get_bytes as f64 / (1024.0 * 1024.0),
        ));
    }
    let duck = |r: &S3Row| {
        rows.iter()
            .find(|d| d.case == r.case && d.engine == S3Engine::DuckDb)
    };
    out.push_str("\nTargets on S3:\n");
    for r in rows.iter().filter(|r| r.engine.is_lakescan()) {
        let Some(p) = peer(r) else { continue };
        let time = r.median.as_secs_f64() / p.median.as_secs_f64();
        let limit = if r.case == "small_files" { 0.5 } else { 1.0 };
        let met = |ok: bool| if ok { "MET" } else { "MISSED" };
        out.push_str(&format!(
            "- {} {} ({}): requests {} vs DataFusion {} (target ≤)\n- {} {} ({}): time {time:.2} x DataFusion (target ≤ {limit:.1})\n",
            met(r.requests.total() <= p.requests.total()),
            r.case,
            r.engine.name(),
            r.requests.total(),
            p.requests.total(),
            met(time <= limit),
            r.case,
            r.engine.name(),
        ));
        if let Some(d) = duck(r) {
            out.push_str(&format!(
                "- (no target) {} ({}): time {:.2} x DuckDB, requests {} vs DuckDB {}\n",
                r.case,
                r.engine.name(),
                r.median.as_secs_f64() / d.median.as_secs_f64(),
                r.requests.total(),
                d.requests.total(),
            ));
        }
    }
    out
}

/// The rows as JSON values.
pub fn to_json(rows: &[S3Row]) -> serde_json::Value {
    serde_json::Value::Array(
        rows.iter()
            .map(|r| {
                serde_json::json!({
                    "case": r.case,
                    "engine": r.engine.name(),
                    "store": "s3",
                    "median_s": r.median.as_secs_f64(),
                    "requests_get": r.requests.get,
                    "requests_head": r.requests.head,
                    "requests_list": r.requests.list,
                    "requests": r.requests.total(),
                    "query_requests": r.query_requests.total(),
                    "bytes": r.requests.get_bytes,
                    "rows": r.rows,
                })
            })
            .collect(),
    )
}
