//! Split preload seen from a whole query: cancellation leaves nothing behind, a failed
//! preparation is the query's error, and the per-partition split lists cover every split
//! once.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use arrow::array::{ArrayRef, Int64Array};
use datafusion::execution::memory_pool::{GreedyMemoryPool, MemoryPool};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::physical_plan::{ExecutionPlan, collect};
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::StreamExt;
use iceberg::spec::{NestedField, PrimitiveType, Schema, Type};
use lakescan_core::api::{LakeScanExec, LifecycleHook, SplitEvent, SplitScheduling};
use lakescan_iceberg_writer::TableWriter;

fn longs(values: impl IntoIterator<Item = i64>) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(values))
}

/// An Iceberg table of `files` data files of 1 000 rows (`c0`, `key = c0 % 10`) and an
/// equality delete of key 7, whose key set the scan holds in a memory reservation.
async fn table(dir: &Path, files: i64) -> String {
    let long = || Type::Primitive(PrimitiveType::Long);
    let schema = Schema::builder()
        .with_fields(vec![
            Arc::new(NestedField::optional(1, "c0", long())),
            Arc::new(NestedField::optional(2, "key", long())),
        ])
        .build()
        .unwrap();
    let mut table = TableWriter::new(dir.join("ice"), schema).unwrap();
    let data = (0..files)
        .map(|f| {
            let rows = f * 1_000..(f + 1) * 1_000;
            table
                .data_file(vec![
                    ("c0", 1, longs(rows.clone())),
                    ("key", 2, longs(rows.map(|v| v % 10))),
                ])
                .unwrap()
        })
        .collect();
    table.commit(data, vec![]).await.unwrap();
    let delete = table
        .equality_delete_file(vec![2], vec![("key", 2, longs([7]))])
        .unwrap();
    table.commit(vec![], vec![delete]).await.unwrap()
}

async fn context(pool: Arc<dyn MemoryPool>, preload: usize) -> SessionContext {
    let runtime = RuntimeEnvBuilder::new()
        .with_memory_pool(pool)
        .build_arc()
        .unwrap();
    let config = SessionConfig::new()
        .with_target_partitions(1)
        .with_batch_size(100);
    let ctx = SessionContext::new_with_config_rt(config, runtime);
    lakescan::register(&ctx).unwrap();
    ctx.sql(&format!("SET lakescan.preload_splits = {preload}"))
        .await
        .unwrap();
    ctx
}

async fn scan(ctx: &SessionContext, sql: &str) -> LakeScanExec {
    let plan = ctx
        .sql(sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    plan.downcast_ref::<LakeScanExec>()
        .expect("the plan is one scan")
        .clone()
}

/// The tests of this file run one at a time: one counts the open files of the process.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[cfg(target_os = "linux")]
fn open_files() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[cfg(not(target_os = "linux"))]
fn open_files() -> usize {
    0
}

/// A query cancelled after its first batch while two preload tasks prepare the next splits
/// (each held in its preparation for a while): once the stream and plan are dropped, no task
/// is left on the runtime, no file open, and no memory reserved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_cancelled_mid_split_with_preload_running_leaves_nothing_behind() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let metadata = table(dir.path(), 6).await;
    let pool: Arc<dyn MemoryPool> = Arc::new(GreedyMemoryPool::new(1 << 30));
    let ctx = context(Arc::clone(&pool), 2).await;
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{metadata}'"
    ))
    .await
    .unwrap();
    let runtime = tokio::runtime::Handle::current();
    let (tasks_before, files_before) = (runtime.metrics().num_alive_tasks(), open_files());

    let preloading = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&preloading);
    let hook = LifecycleHook::new(move |event| {
        if let SplitEvent::Prepared {
            preloaded: true, ..
        } = event
        {
            seen.fetch_add(1, Ordering::SeqCst);
            // A slow preparation: still running when the query is cancelled.
            std::thread::sleep(Duration::from_millis(300));
        }
    });
    let plan = Arc::new(
        scan(&ctx, "SELECT c0 FROM t")
            .await
            .with_lifecycle_hook(hook),
    );
    let mut stream = plan.execute(0, ctx.task_ctx()).unwrap();
    let first = stream.next().await.unwrap().unwrap();
    assert!(first.num_rows() > 0);
    assert!(pool.reserved() > 0, "the delete keys are reserved");
    // Wait until a preload task is inside its preparation. A thread sleep, not a Tokio
    // timer: the sleeping preparations hold both workers, which drive the timers.
    for _ in 0..5_000 {
        if preloading.load(Ordering::SeqCst) > 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(
        preloading.load(Ordering::SeqCst) > 0,
        "a split was preloaded"
    );
    assert!(runtime.metrics().num_alive_tasks() > tasks_before);
    drop(stream);
    drop(plan);

    let mut left = usize::MAX;
    for _ in 0..500 {
        left = runtime.metrics().num_alive_tasks();
        if left == tasks_before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(left, tasks_before, "preload tasks left running");
    assert_eq!(pool.reserved(), 0, "memory still reserved");
    assert!(open_files() <= files_before, "files left open");
}

/// Preload on and off, one partition or several, with and without stealing: the same rows,
/// each split read once, and a preparation that fails (a data file removed) is the query's
/// error naming the file, not a split silently left out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preload_and_split_lists_read_every_split_once_and_report_failures() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let metadata = table(dir.path(), 7).await;
    let expected: i64 = (0..7_000).filter(|v| v % 10 != 7).sum();
    for preload in [0, 1, 3] {
        for partitions in [1, 3] {
            let pool: Arc<dyn MemoryPool> = Arc::new(GreedyMemoryPool::new(1 << 30));
            let ctx = context(pool, preload).await;
            ctx.sql(&format!(
                "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{metadata}'"
            ))
            .await
            .unwrap();
            let scan = scan(&ctx, "SELECT c0 FROM t").await;
            let lists: Vec<Vec<_>> = scan.partition_splits().iter().map(|l| l.to_vec()).collect();
            let all: Vec<_> = lists.concat();
            // Re-cut into `partitions` static lists, as a plan spread over executors.
            let cut = lakescan_core::api::assign_splits(all, partitions);
            for scheduling in [SplitScheduling::StaticLists, SplitScheduling::WorkStealing] {
                let plan = scan
                    .clone()
                    .with_partition_splits(cut.clone())
                    .with_scheduling(scheduling);
                assert_eq!(plan.partition_splits().len(), partitions);
                let mut sum = 0;
                // Each partition run on its own, one after the other.
                for p in 0..partitions {
                    let batches = collect_partition(&plan, p, &ctx).await;
                    for b in &batches {
                        let c0 = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
                        sum += c0.iter().flatten().sum::<i64>();
                    }
                }
                let label = format!("preload {preload}, {partitions} lists, {scheduling:?}");
                assert_eq!(sum, expected, "{label}");
                assert_eq!(
                    metric(&plan, "splits_total"),
                    7,
                    "{label}: every split once"
                );
            }
            // All partitions together, stealing.
            let plan = Arc::new(
                scan.with_partition_splits(cut)
                    .with_scheduling(SplitScheduling::WorkStealing),
            );
            let batches = collect(plan, ctx.task_ctx()).await.unwrap();
            let sum: i64 = batches
                .iter()
                .map(|b| {
                    let c0 = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
                    c0.iter().flatten().sum::<i64>()
                })
                .sum();
            assert_eq!(sum, expected, "preload {preload}, {partitions} partitions");
        }
    }
    // A data file removed: its preparation fails on a preload task; the query fails.
    let victim = dir.path().join("ice/data/f003.parquet");
    std::fs::remove_file(&victim).unwrap();
    let pool: Arc<dyn MemoryPool> = Arc::new(GreedyMemoryPool::new(1 << 30));
    let ctx = context(pool, 2).await;
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{metadata}'"
    ))
    .await
    .unwrap();
    let err = ctx
        .sql("SELECT c0 FROM t")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap_err()
        .to_string();
    let name = victim.file_name().unwrap().to_string_lossy().to_string();
    assert!(err.contains(&name), "{err}");
}

async fn collect_partition(
    plan: &LakeScanExec,
    partition: usize,
    ctx: &SessionContext,
) -> Vec<arrow::array::RecordBatch> {
    let stream = plan.execute(partition, ctx.task_ctx()).unwrap();
    datafusion::physical_plan::common::collect(stream)
        .await
        .unwrap()
}

fn metric(plan: &LakeScanExec, name: &str) -> usize {
    plan.metrics()
        .unwrap()
        .sum_by_name(name)
        .map(|v| v.as_usize())
        .unwrap_or(0)
}
