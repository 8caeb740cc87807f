//! The Rust builder API builds the same table as `CREATE EXTERNAL TABLE … STORED AS HIVE`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use arrow::array::{AsArray, RecordBatch};
use arrow::datatypes::{DataType, Int64Type};
use datafusion::prelude::SessionContext;
use lakescan_hive::HiveTableBuilder;

async fn write_table(ctx: &SessionContext, dir: &str) {
    let sql = format!(
        "COPY (SELECT i AS id, CAST(i % 3 AS BIGINT) AS k, CAST(DATE '2024-01-01' + CAST(i % 2 AS INT) AS VARCHAR) AS day \
         FROM generate_series(1, 30) t(i)) TO '{dir}' STORED AS PARQUET PARTITIONED BY (k, day)"
    );
    ctx.sql(&sql).await.unwrap().collect().await.unwrap();
}

fn single_i64(batches: &[RecordBatch]) -> i64 {
    batches[0].column(0).as_primitive::<Int64Type>().value(0)
}

#[tokio::test]
async fn builder_infers_types_and_prunes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let dir = dir.to_str().unwrap();
    let ctx = SessionContext::new();
    write_table(&ctx, dir).await;

    let table = HiveTableBuilder::new("t", dir)
        .partition_column("k", None)
        .partition_column("day", Some(DataType::Date32))
        .split_size(1024)
        .build(&ctx.state())
        .await
        .unwrap();
    let types: Vec<(String, DataType)> = table.partition_columns().to_vec();
    assert_eq!(
        types,
        vec![
            ("k".into(), DataType::Int64),
            ("day".into(), DataType::Date32)
        ]
    );
    ctx.register_table("t", Arc::new(table)).unwrap();

    let sql = "SELECT sum(id) FROM t WHERE k = 1 AND day = DATE '2024-01-02'";
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    // i % 3 = 1 and i % 2 = 1: 1, 7, 13, 19, 25
    assert_eq!(single_i64(&batches), 65);
}

#[tokio::test]
async fn builder_reports_missing_location() {
    let ctx = SessionContext::new();
    let err = HiveTableBuilder::new("t", "/definitely/not/here")
        .build(&ctx.state())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("does not exist"), "{err}");
}

/// Writes `dir/000000_0.parquet` … `dir/00000{n-1}_0.parquet`: ids 0..40 in `n` Hive buckets
/// (version 2) of `id`, with the hash computed by the SQL function the builder's readers use.
async fn write_buckets(dir: &str, n: u32) {
    let ctx = SessionContext::new();
    ctx.register_udf(lakescan_hive::udf::HiveHashUdf::bucket());
    for b in 0..n {
        let sql = format!(
            "COPY (SELECT value AS id, value * 2 AS v FROM generate_series(0, 39) \
             WHERE hive_bucket(2, {n}, value) = {b}) TO '{dir}/{b:06}_0.parquet' STORED AS PARQUET"
        );
        ctx.sql(&sql).await.unwrap().collect().await.unwrap();
    }
}

#[tokio::test]
async fn builder_buckets_and_hidden_columns() {
    use lakescan_hive::hash::BucketingVersion;
    use lakescan_hive::hidden::{HiddenColumn, HiddenSelection};
    use lakescan_hive::options::RowIdOptions;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("b");
    let dir = dir.to_str().unwrap();
    write_buckets(dir, 4).await;
    let ctx = SessionContext::new();
    let table = HiveTableBuilder::new("b", dir)
        .bucketed_by(vec!["id".to_string()], 4)
        .bucketing_version(BucketingVersion::V2)
        .hidden_columns(HiddenSelection::Only(vec![
            HiddenColumn::Bucket,
            HiddenColumn::RowId,
        ]))
        .row_id(RowIdOptions {
            metadata_version: Some(3),
            ..Default::default()
        })
        .build(&ctx.state())
        .await
        .unwrap();
    assert_eq!(
        table.hidden_columns(),
        [HiddenColumn::Bucket, HiddenColumn::RowId]
    );
    ctx.register_table("b", Arc::new(table)).unwrap();
    ctx.register_udf(lakescan_hive::udf::HiveHashUdf::bucket());
    let sql = "SELECT count(*) FROM b WHERE \"$bucket\" <> hive_bucket(2, 4, id)";
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    assert_eq!(single_i64(&batches), 0);
    let sql = "SELECT \"$row_id\"['metadata_version'] FROM b WHERE id = 7";
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    assert_eq!(single_i64(&batches), 3);
    // A point lookup reads one of the four files.
    let plan = ctx
        .sql("EXPLAIN ANALYZE SELECT v FROM b WHERE id = 7")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let text = arrow::util::pretty::pretty_format_batches(&plan)
        .unwrap()
        .to_string();
    assert!(text.contains("files_pruned_bucket=3"), "{text}");
}
