//! A member of a NULL struct reads NULL, whatever the file holds in its slot: Parquet gives a
//! required member of an optional struct no nulls of its own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, Int32Array, Int64Array, RecordBatch, StructArray};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, Field, Fields, Int64Type, Schema};
use datafusion::prelude::SessionContext;
use lakescan_hive::HiveTableBuilder;
use parquet::arrow::ArrowWriter;

async fn column(ctx: &SessionContext, sql: &str) -> Vec<Option<i64>> {
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    batches
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_primitive::<Int64Type>()
                .iter()
                .collect::<Vec<_>>()
        })
        .collect()
}

#[tokio::test]
async fn a_required_member_of_a_null_struct_is_null() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    std::fs::create_dir(&dir).unwrap();
    // s struct<a int NOT NULL> (nullable); row 2's struct is NULL, its slot of `a` holds 99.
    let members = Fields::from(vec![Field::new("a", DataType::Int32, false)]);
    let s = StructArray::try_new(
        members.clone(),
        vec![Arc::new(Int32Array::from(vec![5, 99, 7])) as ArrayRef],
        Some(NullBuffer::from(vec![true, false, true])),
    )
    .unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("s", DataType::Struct(members), true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(Int64Array::from(vec![1, 2, 3])), Arc::new(s)],
    )
    .unwrap();
    let file = std::fs::File::create(dir.join("a.parquet")).unwrap();
    let mut writer = ArrowWriter::try_new(file, schema, None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();

    let ctx = SessionContext::new();
    let table = HiveTableBuilder::new("t", dir.to_str().unwrap())
        .build(&ctx.state())
        .await
        .unwrap();
    ctx.register_table("t", Arc::new(table)).unwrap();
    let sql = "SELECT CAST(s['a'] AS BIGINT) FROM t ORDER BY id";
    assert_eq!(column(&ctx, sql).await, [Some(5), None, Some(7)]);
    let sql = "SELECT id FROM t WHERE s['a'] IS NULL";
    assert_eq!(column(&ctx, sql).await, [Some(2)]);
    let sql = "SELECT count(*) FROM t WHERE s['a'] > 6";
    assert_eq!(column(&ctx, sql).await, [Some(1)]);
    // The struct itself: NULL, not a struct holding 99 or another row's value.
    let sql = "SELECT count(*) FROM t WHERE s IS NULL";
    assert_eq!(column(&ctx, sql).await, [Some(1)]);
}
