//! The engines and how one query runs in each of the in-process ones.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use datafusion::execution::config::SessionConfig;
use datafusion::physical_plan::metrics::{MetricValue, MetricsSet};
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties, execute_stream};
use datafusion::prelude::SessionContext;
use futures::StreamExt;
use lakescan_ballista::server::Scheduling;

use crate::cases::Case;
use crate::dataset::Dataset;
use crate::results::ResultCollector;

/// An engine of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// lakescan's `LakeScanExec` (`STORED AS HIVE`, `STORED AS ICEBERG`).
    Lakescan,
    /// lakescan with `lakescan.preload_splits = 0` (the opening and scan cases).
    LakescanNoPreload,
    /// lakescan with `datafusion.optimizer.enable_dynamic_filter_pushdown = false` (the
    /// cases whose plan produces dynamic filters: `join_orders`, `topk`).
    LakescanNoDynamicFilters,
    /// lakescan with `lakescan.listing_cache_ttl_seconds = 3600` (the small-file cases:
    /// listings kept between queries, as DataFusion's `ListingTable` keeps them by default).
    LakescanListingCache,
    /// lakescan on Ballista: an in-process scheduler with two executors
    /// (`lakescan-ballista`), on the cases of [`BALLISTA_CASES`].
    LakescanBallista,
    /// DataFusion's `ListingTable` Parquet scan, `pushdown_filters = false` (the default).
    DataFusion,
    /// DataFusion's `ListingTable` Parquet scan on the same in-process Ballista cluster as
    /// [`Engine::LakescanBallista`]: what Ballista costs with DataFusion's own scan.
    DataFusionBallista,
    /// DataFusion's `ListingTable` Parquet scan, `pushdown_filters = true`.
    DataFusionPushdown,
    /// The `parquet` crate decoding the same columns and row groups (see `floor`).
    ParquetFloor,
    /// DuckDB (Python package) in its own process.
    DuckDb,
    /// DuckDB 1.5.5 (1.4.4 as the fallback) with its iceberg extension, in its own process (Iceberg cases).
    DuckDbIceberg,
    /// iceberg-rust's `iceberg-datafusion` 0.10.1, in its own process (Iceberg cases).
    IcebergDataFusion,
    /// `datafusion-orc` 0.9 (DataFusion 54's ORC `FileFormat`, on `orc-rust` 0.8) over
    /// `lineitem_orc` (the ORC cases).
    DataFusionOrc,
}

impl Engine {
    /// Every engine, in the order each run visits them.
    pub const ALL: [Engine; 13] = [
        Engine::Lakescan,
        Engine::LakescanNoPreload,
        Engine::LakescanNoDynamicFilters,
        Engine::LakescanListingCache,
        Engine::LakescanBallista,
        Engine::DataFusion,
        Engine::DataFusionBallista,
        Engine::DataFusionPushdown,
        Engine::ParquetFloor,
        Engine::DuckDb,
        Engine::DuckDbIceberg,
        Engine::IcebergDataFusion,
        Engine::DataFusionOrc,
    ];

    /// Name in the table and the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Lakescan => "lakescan",
            Engine::LakescanNoPreload => "lakescan-no-preload",
            Engine::LakescanNoDynamicFilters => "lakescan-no-dynamic-filters",
            Engine::LakescanListingCache => "lakescan-listing-cache",
            Engine::LakescanBallista => "lakescan-ballista",
            Engine::DataFusion => "datafusion",
            Engine::DataFusionBallista => "datafusion-ballista",
            Engine::DataFusionPushdown => "datafusion-pushdown",
            Engine::ParquetFloor => "parquet-floor",
            Engine::DuckDb => "duckdb",
            Engine::DuckDbIceberg => "duckdb-iceberg",
            Engine::IcebergDataFusion => "iceberg-datafusion",
            Engine::DataFusionOrc => "datafusion-orc",
        }
    }

    /// Parses a name of [`Engine::name`].
    pub fn parse(name: &str) -> Result<Engine> {
        match Engine::ALL.into_iter().find(|e| e.name() == name) {
            Some(e) => Ok(e),
            None => {
                let names: Vec<_> = Engine::ALL.iter().map(|e| e.name()).collect();
                bail!("unknown engine '{name}' (one of {})", names.join(", "))
            }
        }
    }

    /// Whether this engine runs `case`: the Iceberg cases run in lakescan and the Iceberg
    /// peers, the others in lakescan and the Parquet engines; the lakescan variants run the
    /// cases their setting is about.
    pub fn runs(self, case: &Case) -> bool {
        match self {
            Engine::Lakescan => true,
            Engine::LakescanNoPreload => PRELOAD_CASES.contains(&case.name),
            Engine::LakescanNoDynamicFilters => DYNAMIC_FILTER_CASES.contains(&case.name),
            Engine::LakescanListingCache => LISTING_CASES.contains(&case.name),
            Engine::LakescanBallista => BALLISTA_CASES.contains(&case.name),
            Engine::DataFusionBallista => BALLISTA_CASES.contains(&case.name) && !case.iceberg,
            Engine::DuckDbIceberg | Engine::IcebergDataFusion => case.iceberg,
            Engine::DataFusionOrc => case.orc,
            _ => !case.iceberg && !case.orc,
        }
    }

    /// The lakescan setting of a lakescan engine; `None` for the peers.
    pub fn lakescan_variant(self) -> Option<LakescanVariant> {
        match self {
            Engine::Lakescan => Some(LakescanVariant::Default),
            Engine::LakescanNoPreload => Some(LakescanVariant::NoPreload),
            Engine::LakescanNoDynamicFilters => Some(LakescanVariant::NoDynamicFilters),
            Engine::LakescanListingCache => Some(LakescanVariant::ListingCache),
            _ => None,
        }
    }

    /// Whether this engine is a child process of its own (a [`crate::peer::Peer`]).
    pub fn is_peer(self) -> bool {
        matches!(
            self,
            Engine::DuckDb | Engine::DuckDbIceberg | Engine::IcebergDataFusion
        )
    }
}

/// The cases `lakescan-no-preload` runs: where opening splits ahead of time can matter.
const PRELOAD_CASES: [&str; 4] = ["full_scan", "join_orders", "small_files", "small_partition"];

/// The cases `lakescan-no-dynamic-filters` runs: plans with a hash join or a TopK.
const DYNAMIC_FILTER_CASES: [&str; 2] = ["join_orders", "topk"];

/// The cases `lakescan-ballista` runs: the scan-bound ones, an aggregation, a join and an
/// Iceberg table with position deletes.
pub const BALLISTA_CASES: [&str; 5] = [
    "full_scan",
    "tpch_q1",
    "tpch_q6",
    "join_orders",
    "iceberg_pos",
];

/// The cases `lakescan-listing-cache` runs: where listing is a large part of a query.
const LISTING_CASES: [&str; 2] = ["small_files", "small_partition"];

/// A lakescan setting that differs from the defaults, for the lakescan variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LakescanVariant {
    /// The defaults.
    Default,
    /// `lakescan.preload_splits = 0`.
    NoPreload,
    /// `datafusion.optimizer.enable_dynamic_filter_pushdown = false`.
    NoDynamicFilters,
    /// `lakescan.listing_cache_ttl_seconds = 3600`.
    ListingCache,
}

/// What every lakescan and DataFusion session of a run shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Target partitions.
    pub threads: usize,
    /// Rows per batch (DataFusion's default is 8 192).
    pub batch_size: usize,
}

/// The session configuration shared by lakescan and DataFusion: `shape`, and (DataFusion
/// only) `pushdown_filters`.
fn config(shape: Shape, pushdown_filters: bool) -> SessionConfig {
    let mut config = SessionConfig::new()
        .with_target_partitions(shape.threads)
        .with_batch_size(shape.batch_size);
    config.options_mut().execution.parquet.pushdown_filters = pushdown_filters;
    config
}

fn dir_url(path: &std::path::Path) -> String {
    let mut s = path.display().to_string().replace('\'', "''");
    if !s.ends_with('/') {
        s.push('/');
    }
    s
}

/// A session with the tables as lakescan (`STORED AS HIVE`) tables.
pub async fn lakescan_session(
    dataset: &Dataset,
    shape: Shape,
    variant: LakescanVariant,
) -> Result<SessionContext> {
    let mut config = config(shape, false);
    if variant == LakescanVariant::NoDynamicFilters {
        // Through `set`: it turns off the TopK, join and aggregate flags with it.
        config.options_mut().set(
            "datafusion.optimizer.enable_dynamic_filter_pushdown",
            "false",
        )?;
    }
    let ctx = SessionContext::new_with_config(config);
    lakescan::register(&ctx)?;
    if variant == LakescanVariant::NoPreload {
        ctx.sql("SET lakescan.preload_splits = 0").await?;
    }
    if variant == LakescanVariant::ListingCache {
        ctx.sql("SET lakescan.listing_cache_ttl_seconds = 3600")
            .await?;
    }
    create_lakescan_tables(&ctx, dataset).await?;
    Ok(ctx)
}

/// A session with `lineitem_orc` as a `datafusion-orc` listing table (DataFusion's ORC
/// reader: `orc-rust`'s, with projection but no filter pushdown or pruning).
pub async fn datafusion_orc_session(dataset: &Dataset, shape: Shape) -> Result<SessionContext> {
    use datafusion_orc::{OrcReadOptions, SessionContextOrcExt};
    let ctx = SessionContext::new_with_config(config(shape, false));
    let dir = dir_url(&dataset.orc_lineitem());
    ctx.register_orc("lineitem_orc", &dir, OrcReadOptions::default())
        .await?;
    Ok(ctx)
}

/// The benchmark's tables in `ctx` as lakescan (`STORED AS HIVE`, `STORED AS ICEBERG`) tables.
async fn create_lakescan_tables(ctx: &SessionContext, dataset: &Dataset) -> Result<()> {
    if dataset.orc_lineitem().join("_READY").is_file() {
        let sql = format!(
            "CREATE EXTERNAL TABLE lineitem_orc STORED AS HIVE LOCATION '{}' \
             OPTIONS ('format' 'orc')",
            dir_url(&dataset.orc_lineitem())
        );
        ctx.sql(&sql).await?.collect().await?;
    }
    for table in tables(dataset) {
        let sql = format!(
            "CREATE EXTERNAL TABLE {}{} STORED AS HIVE LOCATION '{}'{}{}",
            table.name,
            table.columns,
            dir_url(&table.dir),
            table.partitioned_by(),
            table.lakescan_options
        );
        ctx.sql(&sql).await?.collect().await?;
    }
    for v in crate::iceberg_tables::VARIANTS {
        let sql = format!(
            "CREATE EXTERNAL TABLE {} STORED AS ICEBERG LOCATION '{}'",
            v.table,
            dir_url(&dataset.iceberg_table(v))
        );
        ctx.sql(&sql).await?.collect().await?;
    }
    Ok(())
}

/// Whose tables a session has: lakescan's, or DataFusion's `ListingTable`s.
#[derive(Debug, Clone, Copy)]
pub enum Peers {
    Lakescan,
    DataFusion,
}

/// A client session of a fresh in-process Ballista cluster (a scheduler and two executors
/// sharing this process's runtime, handing out tasks by `scheduling`) with the tables of
/// [`lakescan_session`] or of [`datafusion_session`].
pub async fn ballista_session(
    dataset: &Dataset,
    shape: Shape,
    scheduling: Scheduling,
    tables: Peers,
) -> Result<SessionContext> {
    let state = lakescan_ballista::session::state(config(shape, false))?;
    let ctx = lakescan_ballista::cluster::standalone_with(state, 2, scheduling).await?;
    match tables {
        Peers::Lakescan => create_lakescan_tables(&ctx, dataset).await?,
        Peers::DataFusion => create_listing_tables(&ctx, dataset).await?,
    }
    Ok(ctx)
}

/// A session with the tables as DataFusion `ListingTable`s.
pub async fn datafusion_session(
    dataset: &Dataset,
    shape: Shape,
    pushdown_filters: bool,
) -> Result<SessionContext> {
    let ctx = SessionContext::new_with_config(config(shape, pushdown_filters));
    create_listing_tables(&ctx, dataset).await?;
    Ok(ctx)
}

/// The benchmark's Parquet tables in `ctx` as DataFusion `ListingTable`s.
async fn create_listing_tables(ctx: &SessionContext, dataset: &Dataset) -> Result<()> {
    for table in tables(dataset) {
        let sql = format!(
            "CREATE EXTERNAL TABLE {}{} STORED AS PARQUET LOCATION '{}'{}",
            table.name,
            table.columns,
            dir_url(&table.dir),
            table.partitioned_by()
        );
        ctx.sql(&sql).await?.collect().await?;
    }
    Ok(())
}

/// One table of the benchmark, the same files for every engine.
struct Table {
    name: &'static str,
    dir: std::path::PathBuf,
    /// The partition column, for a partitioned table.
    partitioned: Option<&'static str>,
    /// The declared columns (`(k BIGINT, …)`, partition column included) or empty: inferred.
    columns: &'static str,
    /// Extra `OPTIONS (…)` of the lakescan table (its bucketing).
    lakescan_options: String,
}

impl Table {
    fn partitioned_by(&self) -> String {
        match self.partitioned {
            Some(column) => format!(" PARTITIONED BY ({column})"),
            None => String::new(),
        }
    }
}

fn tables(dataset: &Dataset) -> Vec<Table> {
    let plain = |name, dir, partitioned| Table {
        name,
        dir,
        partitioned,
        columns: "",
        lakescan_options: String::new(),
    };
    vec![
        plain("lineitem", dataset.flat_lineitem(), None),
        plain("orders", dataset.flat_orders(), None),
        plain("lineitem_hive", dataset.hive_lineitem(), Some("l_shipyear")),
        Table {
            name: "small",
            dir: dataset.small_files(),
            partitioned: Some("p"),
            // Declared: DataFusion 54's ListingTable panics inferring this table's partition
            // column ("Index out of bound").
            columns: " (k BIGINT, x DOUBLE, p INT)",
            lakescan_options: String::new(),
        },
        Table {
            name: "orders_bucketed",
            dir: dataset.bucketed_orders(),
            partitioned: None,
            columns: "",
            lakescan_options: format!(
                " OPTIONS ('bucketed_by' 'o_custkey', 'bucket_count' '{}', 'bucketing_version' '2')",
                crate::data::ORDER_BUCKETS
            ),
        },
        plain("lineitem_struct", dataset.struct_lineitem(), None),
    ]
}

/// One executed query.
pub struct SqlRun {
    /// Planning and execution, until the last batch was consumed.
    pub elapsed: Duration,
    /// Rows returned.
    pub rows: usize,
    /// The executed plan (its metrics are filled in).
    pub plan: Arc<dyn ExecutionPlan>,
}

/// How a timed query's result is consumed (planning is always on the calling task).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ConsumeOn {
    /// One task per output partition of the plan on the session's runtime, each consuming
    /// its partition's stream where it is produced, as a distributed executor (Ballista)
    /// runs a stage's partitions and as the floor's threads decode: no merge of the
    /// partitions, so the figure is the plan's own work.
    Partitions,
    /// The partitions merged into one stream, planned and consumed by one task on the
    /// session's runtime, as a server (Flight SQL) runs a query. On 2 workers the consumer
    /// can wait behind a decoding partition while the other worker idles.
    Runtime,
    /// The partitions merged into one stream, consumed by the thread that drives the
    /// benchmark (`block_on` on the main thread, as `datafusion-cli` does): every batch of a
    /// multi-partition plan crosses to a third thread, ~3 context switches per batch on 2
    /// cores.
    Caller,
}

/// Plans and runs `sql` on `on`, consuming the result stream batch by batch (batches are
/// dropped).
pub async fn run_sql_on(ctx: &SessionContext, sql: &str, on: ConsumeOn) -> Result<SqlRun> {
    match on {
        ConsumeOn::Partitions => run_partitions(ctx, sql).await,
        ConsumeOn::Caller => run_sql(ctx, sql, None).await,
        ConsumeOn::Runtime => {
            let ctx = ctx.clone();
            let sql = sql.to_owned();
            tokio::spawn(async move { run_sql(&ctx, &sql, None).await }).await?
        }
    }
}

/// Plans `sql` and consumes each output partition on its own runtime task.
async fn run_partitions(ctx: &SessionContext, sql: &str) -> Result<SqlRun> {
    let start = Instant::now();
    let plan = ctx.sql(sql).await?.create_physical_plan().await?;
    let mut tasks = tokio::task::JoinSet::new();
    for partition in 0..plan.output_partitioning().partition_count() {
        let mut stream = plan.execute(partition, ctx.task_ctx())?;
        tasks.spawn(async move {
            let mut rows = 0;
            while let Some(batch) = stream.next().await {
                rows += batch?.num_rows();
            }
            anyhow::Ok(rows)
        });
    }
    let mut rows = 0;
    while let Some(done) = tasks.join_next().await {
        rows += done??;
    }
    Ok(SqlRun {
        elapsed: start.elapsed(),
        rows,
        plan,
    })
}

/// Plans and runs `sql`, consuming the result stream batch by batch (batches are dropped
/// unless `collector` records them).
pub async fn run_sql(
    ctx: &SessionContext,
    sql: &str,
    mut collector: Option<&mut ResultCollector>,
) -> Result<SqlRun> {
    let start = Instant::now();
    let plan = ctx.sql(sql).await?.create_physical_plan().await?;
    let mut stream = execute_stream(Arc::clone(&plan), ctx.task_ctx())?;
    let mut rows = 0;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        rows += batch.num_rows();
        if let Some(c) = collector.as_deref_mut() {
            c.add(&batch)?;
        }
    }
    Ok(SqlRun {
        elapsed: start.elapsed(),
        rows,
        plan,
    })
}

/// lakescan's counters, summed over the `LakeScanExec` nodes of a plan.
#[derive(Debug, Clone, Copy, Default)]
pub struct LakeMetrics {
    /// `LakeScanExec` nodes.
    pub scans: usize,
    /// `rows_scanned`: rows the reader advanced over.
    pub rows_scanned: usize,
    /// `output_rows`: rows the scans emitted, every projected column decoded (a filter
    /// inside the decoder decodes only its own column for the rows it drops).
    pub rows_emitted: usize,
    /// `row_groups_pruned_dynamic_filter`.
    pub row_groups_pruned_dynamic: usize,
    /// `row_groups_total`.
    pub row_groups_total: usize,
    /// `row_groups_pruned_statistics`.
    pub row_groups_pruned: usize,
    /// `bytes_read`.
    pub bytes_read: usize,
    /// `splits_total`.
    pub splits_total: usize,
    /// `files_pruned_bucket`.
    pub files_pruned_bucket: usize,
    /// `delete_files_loaded`.
    pub delete_files_loaded: usize,
}

impl LakeMetrics {
    /// Row groups read: total minus pruned by statistics.
    pub fn row_groups_read(&self) -> usize {
        self.row_groups_total.saturating_sub(self.row_groups_pruned)
    }
}

fn nodes(plan: &Arc<dyn ExecutionPlan>, name: &str, out: &mut Vec<MetricsSet>) {
    if plan.name() == name {
        out.push(plan.metrics().unwrap_or_default());
    }
    for child in plan.children() {
        nodes(child, name, out);
    }
}

fn value(set: &MetricsSet, name: &str) -> Option<MetricValue> {
    set.sum_by_name(name)
}

fn count(set: &MetricsSet, name: &str) -> usize {
    match value(set, name) {
        Some(MetricValue::PruningMetrics {
            pruning_metrics, ..
        }) => pruning_metrics.pruned(),
        Some(v) => v.as_usize(),
        None => 0,
    }
}

/// lakescan's counters in an executed plan.
pub fn lakescan_metrics(plan: &Arc<dyn ExecutionPlan>) -> LakeMetrics {
    let mut sets = vec![];
    nodes(plan, "LakeScanExec", &mut sets);
    let mut m = LakeMetrics {
        scans: sets.len(),
        ..Default::default()
    };
    for set in &sets {
        m.rows_scanned += count(set, "rows_scanned");
        m.rows_emitted += set.output_rows().unwrap_or(0);
        m.row_groups_pruned_dynamic += count(set, "row_groups_pruned_dynamic_filter");
        m.row_groups_total += count(set, "row_groups_total");
        m.row_groups_pruned += count(set, "row_groups_pruned_statistics");
        m.bytes_read += count(set, "bytes_read");
        m.splits_total += count(set, "splits_total");
        m.files_pruned_bucket += count(set, "files_pruned_bucket");
        m.delete_files_loaded += count(set, "delete_files_loaded");
    }
    m
}

/// Row groups DataFusion's Parquet scans read: those matched by statistics and bloom
/// filters (`row_groups_pruned_bloom_filter`, which counts every row group left after
/// statistics), minus those dropped for a LIMIT. `None` without a `DataSourceExec` (e.g. an
/// aggregate answered from statistics).
pub fn datafusion_row_groups_read(plan: &Arc<dyn ExecutionPlan>) -> Option<usize> {
    let mut sets = vec![];
    nodes(plan, "DataSourceExec", &mut sets);
    if sets.is_empty() {
        return None;
    }
    let mut read = 0;
    for set in &sets {
        let matched = |name: &str| match value(set, name) {
            Some(MetricValue::PruningMetrics {
                pruning_metrics, ..
            }) => Some(pruning_metrics.matched()),
            _ => None,
        };
        let kept = matched("row_groups_pruned_bloom_filter")
            .or_else(|| matched("row_groups_pruned_statistics"))
            .unwrap_or(0);
        read += kept.saturating_sub(count(set, "limit_pruned_row_groups"));
    }
    Some(read)
}
