//! `min`/`max` over a table whose partitions hold files of NULLs only: DataFusion's partial
//! aggregates push a dynamic filter `x < min OR x > max` into the scan, and lose its
//! minimum when a partition that saw only NULLs reports first (`lakescan_core::api::GuardAggregateFilters`).
//! lakescan must not let that filter drop the rows that hold the true minimum, however the
//! partitions interleave: the query runs many times.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use arrow::array::{AsArray, RecordBatch};
use arrow::datatypes::Int64Type;
use datafusion::prelude::{SessionConfig, SessionContext};

/// Rows of the table: 8 Hive partitions `p = v % 8`; `x = v` where `p >= 4`, NULL where
/// `p < 4` (four files where x is NULL only); `y = v`.
const ROWS: i64 = 80_000;

async fn context(dir: &str) -> SessionContext {
    // Small batches: each partition updates the shared bounds many times.
    let config = SessionConfig::new()
        .with_batch_size(1024)
        .with_target_partitions(4);
    let ctx = SessionContext::new_with_config(config);
    lakescan::register(&ctx).unwrap();
    ctx.sql(&format!(
        "COPY (SELECT CAST(v % 8 AS INT) AS p, \
                      CASE WHEN v % 8 < 4 THEN NULL ELSE v END AS x, v AS y \
               FROM generate_series(0, {}) AS s(v)) \
         TO '{dir}/t' STORED AS PARQUET PARTITIONED BY (p)",
        ROWS - 1
    ))
    .await
    .unwrap()
    .collect()
    .await
    .unwrap();
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '{dir}/t/' PARTITIONED BY (p)"
    ))
    .await
    .unwrap();
    ctx
}

fn min_max(batches: &[RecordBatch]) -> (i64, i64) {
    let batch = &batches[0];
    let value = |i: usize| batch.column(i).as_primitive::<Int64Type>().value(0);
    (value(0), value(1))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn null_only_partitions_never_lose_the_minimum() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path().to_str().unwrap()).await;
    // The smallest x is 4 (the first v with v % 8 = 4), the largest 79 999.
    let expected = (4, ROWS - 1);
    for run in 0..60 {
        let batches = ctx
            .sql("SELECT min(x), max(x) FROM t")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        assert_eq!(min_max(&batches), expected, "run {run}");
    }
    // The same with a filter that leaves the NULL partitions in (79 999 is in p = 7).
    for run in 0..20 {
        let batches = ctx
            .sql("SELECT min(x), max(x) FROM t WHERE p <> 7")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        assert_eq!(min_max(&batches), (4, ROWS - 2), "run {run}");
    }
}

/// `min(x), max(y)`: a partition that saw only NULL x has no minimum of x while y has a
/// maximum, and a filter `y > max(y)` alone would drop the rows that hold min(x).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_bound_of_another_column_never_filters_alone() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path().to_str().unwrap()).await;
    for run in 0..60 {
        let batches = ctx
            .sql("SELECT min(x), max(y) FROM t")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        assert_eq!(min_max(&batches), (4, ROWS - 1), "run {run}");
    }
}

/// `min(x + 1), max(x + 1)`: the filter reaches the scan over the expression, not a column.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_bound_over_an_expression_is_guarded_too() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path().to_str().unwrap()).await;
    for run in 0..60 {
        let batches = ctx
            .sql("SELECT min(x + 1), max(x + 1) FROM t")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        assert_eq!(min_max(&batches), (5, ROWS), "run {run}");
    }
}
