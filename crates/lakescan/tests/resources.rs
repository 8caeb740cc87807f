//! Resources: a query cancelled at any point leaves no task, open file or
//! memory reservation behind; memory-hungry state (equality-delete key sets, preloaded
//! splits) under a `FairSpillPool` limit fails with `ResourcesExhausted`, never aborts; 16
//! concurrent queries over the same tables return what each returns alone.
//!
//! Cancellation points are every poll of the query's stream: the stream is dropped after k
//! polls for every k until the query would have finished, each poll separated by a short
//! sleep so that background work (preloaded splits, footers, delete files) is in flight when
//! it is dropped. After the drop, the process's open files, the runtime's live tasks and the
//! pool's reservation must come back to what they were before the query (bounded wait: the
//! blocking pool's reads finish on their own).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use arrow::array::{ArrayRef, Int64Array, RecordBatch};
use datafusion::execution::memory_pool::{FairSpillPool, MemoryPool};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::StreamExt;
use iceberg::spec::{NestedField, PrimitiveType, Schema, Type};
use lakescan_iceberg_writer::TableWriter;

fn longs(values: impl IntoIterator<Item = i64>) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(values))
}

fn schema() -> Schema {
    let long = || Type::Primitive(PrimitiveType::Long);
    Schema::builder()
        .with_fields(vec![
            Arc::new(NestedField::optional(1, "id", long())),
            Arc::new(NestedField::optional(2, "k", long())),
        ])
        .build()
        .unwrap()
}

/// An Iceberg table of 6 data files (1 000 rows each), an equality delete of `k` in
/// 0..`deleted_keys`, a position-delete file and a deletion vector; its metadata path.
async fn iceberg_table(dir: &Path, deleted_keys: i64) -> String {
    let mut t = TableWriter::new(dir.join("ice"), schema()).unwrap();
    let files: Vec<_> = (0..6)
        .map(|f| {
            let ids = (0..1000).map(|i| f * 1000 + i);
            let keys = (0..1000).map(|i| (f * 1000 + i) % 5000);
            t.data_file(vec![("id", 1, longs(ids)), ("k", 2, longs(keys))])
                .unwrap()
        })
        .collect();
    let paths: Vec<String> = files.iter().map(|f| f.file_path().to_string()).collect();
    t.commit(files, vec![]).await.unwrap();
    let positions = t
        .position_delete_file(vec![(paths[0].as_str(), 1), (paths[0].as_str(), 7)])
        .unwrap();
    let vector = t
        .deletion_vector(&paths[1], &paths[1], &[0, 2, 4, 999])
        .unwrap();
    let equality = t
        .equality_delete_file(vec![2], vec![("k", 2, longs(0..deleted_keys))])
        .unwrap();
    t.commit(vec![], vec![positions, vector, equality])
        .await
        .unwrap()
}

/// A Hive table of 4 partitions of 2 files each.
async fn hive_table(ctx: &SessionContext, dir: &Path) {
    for p in 0..4 {
        for f in 0..2 {
            let sql = format!(
                "COPY (SELECT v AS id, v % 7 AS k FROM unnest(range({lo}, {hi})) AS t(v)) \
                 TO '{}/hive/p={p}/f{f}.parquet' STORED AS PARQUET",
                dir.display(),
                lo = p * 2000 + f * 1000,
                hi = p * 2000 + f * 1000 + 1000,
            );
            ctx.sql(&sql).await.unwrap().collect().await.unwrap();
        }
    }
}

fn context(pool: Arc<dyn MemoryPool>, partitions: usize) -> SessionContext {
    let runtime = RuntimeEnvBuilder::new()
        .with_memory_pool(pool)
        .build_arc()
        .unwrap();
    let config = SessionConfig::new()
        .with_target_partitions(partitions)
        .with_batch_size(256);
    let ctx = SessionContext::new_with_config_rt(config, runtime);
    lakescan::register(&ctx).unwrap();
    ctx
}

async fn create_tables(ctx: &SessionContext, dir: &Path, metadata: &str) {
    hive_table(ctx, dir).await;
    for sql in [
        format!("CREATE EXTERNAL TABLE ice STORED AS ICEBERG LOCATION '{metadata}'"),
        format!(
            "CREATE EXTERNAL TABLE hive STORED AS HIVE LOCATION '{}/hive' PARTITIONED BY (p)",
            dir.display()
        ),
    ] {
        ctx.sql(&sql).await.unwrap();
    }
}

const QUERIES: &[&str] = &[
    "SELECT id FROM ice WHERE id % 3 = 0",
    "SELECT k, count(*) FROM ice GROUP BY k ORDER BY k LIMIT 5",
    "SELECT id, k FROM hive WHERE k = 3 AND id > 100",
    "SELECT p, sum(id) FROM hive GROUP BY p",
    "SELECT i.id FROM ice i JOIN hive h ON i.id = h.id WHERE h.k = 1",
];

/// Open file descriptors of this process (Linux: the test needs `/proc`).
fn open_files() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .expect("the test counts open files in /proc/self/fd")
        .count()
}

fn live_tasks() -> usize {
    tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks()
}

/// Waits (bounded) until `now()` is at most `baseline`; the last value.
async fn settles(baseline: usize, now: impl Fn() -> usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let value = now();
        if value <= baseline || Instant::now() > deadline {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Sorted rows as text.
fn lines(batches: &[RecordBatch]) -> Vec<String> {
    let text = arrow::util::pretty::pretty_format_batches(batches)
        .unwrap()
        .to_string();
    let mut rows: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("| "))
        .skip(1)
        .map(str::to_string)
        .collect();
    rows.sort();
    rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_queries_leave_no_task_file_or_reservation() {
    let dir = tempfile::tempdir().unwrap();
    let metadata = iceberg_table(dir.path(), 100).await;
    let pool: Arc<dyn MemoryPool> = Arc::new(FairSpillPool::new(256 << 20));
    let ctx = context(Arc::clone(&pool), 2);
    create_tables(&ctx, dir.path(), &metadata).await;
    ctx.sql("SET lakescan.preload_splits = 1").await.unwrap();
    for sql in QUERIES {
        // Warm up the runtime's own tasks and the footer cache's files; then the baseline.
        ctx.sql(sql).await.unwrap().collect().await.unwrap();
        let (files, tasks) = (open_files(), live_tasks());
        let mut polls = 0;
        loop {
            // Cancelled while planning: the plan is built and dropped unexecuted.
            let df = ctx.sql(sql).await.unwrap();
            let mut stream = df.execute_stream().await.unwrap();
            let mut finished = false;
            for _ in 0..polls {
                match futures::poll!(stream.next()) {
                    Poll::Ready(None) => {
                        finished = true;
                        break;
                    }
                    Poll::Ready(Some(batch)) => {
                        batch.unwrap();
                    }
                    Poll::Pending => {}
                }
                tokio::time::sleep(Duration::from_micros(300)).await;
            }
            drop(stream);
            let label = format!("{sql}: dropped after {polls} polls");
            assert_eq!(settles(0, || pool.reserved()).await, 0, "{label}: reserved");
            assert!(
                settles(files, open_files).await <= files,
                "{label}: open files"
            );
            assert!(
                settles(tasks, live_tasks).await <= tasks,
                "{label}: live tasks"
            );
            if finished {
                break;
            }
            // Every query finishes within this many polls: the loop has dropped it at each.
            assert!(polls < 2_000, "{sql}: not finished after {polls} polls");
            polls += 1;
        }
    }
}

/// Key sets bigger than a `FairSpillPool` fail the query with `ResourcesExhausted`, with
/// preload on (the next split's key set is loaded while the current one streams) and off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_sets_past_a_fair_spill_pool_are_resources_exhausted() {
    let dir = tempfile::tempdir().unwrap();
    let metadata = iceberg_table(dir.path(), 50_000).await;
    for preload in [0, 1] {
        let pool: Arc<dyn MemoryPool> = Arc::new(FairSpillPool::new(256 * 1024));
        let ctx = context(Arc::clone(&pool), 2);
        ctx.sql(&format!("SET lakescan.preload_splits = {preload}"))
            .await
            .unwrap();
        ctx.sql(&format!(
            "CREATE EXTERNAL TABLE ice STORED AS ICEBERG LOCATION '{metadata}'"
        ))
        .await
        .unwrap();
        let err = ctx
            .sql("SELECT count(*) FROM ice")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("Resources exhausted") && text.contains("lakescan equality-delete keys"),
            "preload {preload}: {text}"
        );
        assert_eq!(settles(0, || pool.reserved()).await, 0, "preload {preload}");
    }
}

/// 16 queries at once over the same tables (a shared session, its caches and pool) return
/// what each returns alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_concurrent_queries_match_the_same_queries_alone() {
    let dir = tempfile::tempdir().unwrap();
    let metadata = iceberg_table(dir.path(), 100).await;
    let pool: Arc<dyn MemoryPool> = Arc::new(FairSpillPool::new(512 << 20));
    let ctx = context(pool, 2);
    create_tables(&ctx, dir.path(), &metadata).await;
    let mut alone = vec![];
    for sql in QUERIES {
        alone.push(lines(&ctx.sql(sql).await.unwrap().collect().await.unwrap()));
    }
    let alone = Arc::new(alone);
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let ctx = ctx.clone();
            let alone = Arc::clone(&alone);
            tokio::spawn(async move {
                let q = i % QUERIES.len();
                let rows = lines(&ctx.sql(QUERIES[q]).await.unwrap().collect().await.unwrap());
                assert_eq!(rows, alone[q], "query {} run by task {i}", QUERIES[q]);
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
}
