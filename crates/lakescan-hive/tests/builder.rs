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
