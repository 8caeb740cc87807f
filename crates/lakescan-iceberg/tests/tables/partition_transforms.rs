//! Pruning by partition values of non-identity transforms (day, bucket), checked with the
//! planning metrics and the rows.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, TimestampMicrosecondArray};
use iceberg::spec::{Literal, NestedField, PrimitiveType, Schema, Struct, Transform, Type};

use crate::fixture::Fixture;
use crate::position_deletes::{column, query};

const DAY: i64 = 86_400_000_000;

fn schema() -> Schema {
    Schema::builder()
        .with_fields(vec![
            Arc::new(NestedField::optional(
                1,
                "id",
                Type::Primitive(PrimitiveType::Long),
            )),
            Arc::new(NestedField::optional(
                2,
                "ts",
                Type::Primitive(PrimitiveType::Timestamp),
            )),
        ])
        .build()
        .unwrap()
}

fn columns(ids: &[i64], ts: &[i64]) -> Vec<(&'static str, i32, ArrayRef)> {
    vec![
        (
            "id",
            1,
            Arc::new(Int64Array::from(ids.to_vec())) as ArrayRef,
        ),
        (
            "ts",
            2,
            Arc::new(TimestampMicrosecondArray::from(ts.to_vec())) as ArrayRef,
        ),
    ]
}

#[tokio::test]
async fn day_partitions_prune_range_filters() {
    let mut t = Fixture::partitioned(schema(), vec![("ts", "ts_day", Transform::Day)]);
    // 2024-01-01 (day 19723) and 2024-01-02 (day 19724), one file each.
    let d1 = 19723 * DAY;
    let d2 = 19724 * DAY;
    let a = t.data_file_in(
        Struct::from_iter([Some(Literal::date(19723))]),
        columns(&[1, 2], &[d1, d1 + 5]),
    );
    let b = t.data_file_in(
        Struct::from_iter([Some(Literal::date(19724))]),
        columns(&[3], &[d2 + 7]),
    );
    let metadata = t.commit(vec![a, b], vec![]).await;
    let sql = "SELECT id FROM t WHERE ts >= TIMESTAMP '2024-01-02 00:00:00' ORDER BY id";
    assert_eq!(column(&query(&metadata, sql).await.unwrap()), ["3"]);
    let plan = query(&metadata, &format!("EXPLAIN ANALYZE {sql}"))
        .await
        .unwrap();
    assert!(plan.contains("data_files_pruned=1"), "{plan}");
    let all = "SELECT id FROM t ORDER BY id";
    assert_eq!(
        column(&query(&metadata, all).await.unwrap()),
        ["1", "2", "3"]
    );
}

#[tokio::test]
async fn bucket_partitions_prune_point_lookups() {
    let mut t = Fixture::partitioned(schema(), vec![("id", "id_bucket", Transform::Bucket(100))]);
    // bucket[100] of the long 34 is 79 (Iceberg spec, Appendix B).
    let a = t.data_file_in(
        Struct::from_iter([Some(Literal::int(79))]),
        columns(&[34], &[0]),
    );
    let bucket_of_7 = iceberg::transform::create_transform_function(&Transform::Bucket(100))
        .unwrap()
        .transform_literal(&iceberg::spec::Datum::long(7))
        .unwrap()
        .unwrap();
    let bucket_of_7: Literal = bucket_of_7.into();
    let b = t.data_file_in(Struct::from_iter([Some(bucket_of_7)]), columns(&[7], &[0]));
    let metadata = t.commit(vec![a, b], vec![]).await;
    let sql = "SELECT id FROM t WHERE id = 34";
    assert_eq!(column(&query(&metadata, sql).await.unwrap()), ["34"]);
    let plan = query(&metadata, &format!("EXPLAIN ANALYZE {sql}"))
        .await
        .unwrap();
    assert!(plan.contains("data_files_pruned=1"), "{plan}");
    let sql = "SELECT id FROM t WHERE id IN (7, 34) ORDER BY id";
    assert_eq!(column(&query(&metadata, sql).await.unwrap()), ["7", "34"]);
}

/// An identity-partitioned column is the partition value in every row, stored in the file or
/// not: it is never decoded, and its filters skip files before they are opened.
#[tokio::test]
async fn identity_partition_columns_are_split_constants() {
    let mut t = Fixture::partitioned(schema(), vec![("id", "id", Transform::Identity)]);
    let a = t.data_file_in(
        Struct::from_iter([Some(Literal::long(1))]),
        columns(&[1, 1], &[0, 1]),
    );
    let b = t.data_file_in(
        Struct::from_iter([Some(Literal::long(2))]),
        columns(&[2], &[2]),
    );
    let metadata = t.commit(vec![a, b], vec![]).await;
    let sql = "SELECT id FROM t ORDER BY id";
    assert_eq!(
        column(&query(&metadata, sql).await.unwrap()),
        ["1", "1", "2"]
    );
    let plan = query(&metadata, &format!("EXPLAIN ANALYZE {sql}"))
        .await
        .unwrap();
    assert!(plan.contains("leaves_decoded=0"), "{plan}");
    let sql = "SELECT ts FROM t WHERE id = 2";
    assert_eq!(
        column(&query(&metadata, sql).await.unwrap()),
        ["1970-01-01T00:00:00.000002"]
    );
}

/// Writers up to iceberg-rust 0.10 and Java 0.10 filed the last moments of a pre-epoch day
/// under the next day: `day(1969-12-31 23:59:59)` = 0. A file of partition day 0 holding
/// such a row is not pruned by a filter below the epoch (Java's
/// `fixInclusiveTimeProjection`); day 1 is.
#[tokio::test]
async fn pre_epoch_rows_filed_under_the_next_day_are_found() {
    let mut t = Fixture::partitioned(schema(), vec![("ts", "ts_day", Transform::Day)]);
    let older_writer = t.data_file_in(
        Struct::from_iter([Some(Literal::date(0))]),
        columns(&[1, 2], &[-1_000_000, 5]),
    );
    let next = t.data_file_in(
        Struct::from_iter([Some(Literal::date(1))]),
        columns(&[3], &[DAY + 5]),
    );
    let metadata = t.commit(vec![older_writer, next], vec![]).await;
    let sql = "SELECT id FROM t WHERE ts < TIMESTAMP '1970-01-01 00:00:00'";
    assert_eq!(column(&query(&metadata, sql).await.unwrap()), ["1"]);
    let plan = query(&metadata, &format!("EXPLAIN ANALYZE {sql}"))
        .await
        .unwrap();
    assert!(plan.contains("data_files_pruned=1"), "{plan}");
}

/// A partition field of a transform the reader does not know (a newer spec's, an engine's
/// own) opens the table and prunes nothing: its projection is `true`, as Java's
/// `UnknownTransform`, and the filter is applied to the rows.
#[tokio::test]
async fn unknown_transforms_prune_nothing() {
    let mut t = Fixture::partitioned(schema(), vec![("id", "id_part", Transform::Identity)]);
    let a = t.data_file_in(
        Struct::from_iter([Some(Literal::long(1))]),
        columns(&[1, 2], &[0, 1]),
    );
    let b = t.data_file_in(
        Struct::from_iter([Some(Literal::long(3))]),
        columns(&[3], &[2]),
    );
    let metadata = t.commit(vec![a, b], vec![]).await;
    let text = std::fs::read_to_string(&metadata).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["partition-specs"][0]["fields"][0]["transform"] = "zorder[4]".into();
    std::fs::write(&metadata, json.to_string()).unwrap();
    let sql = "SELECT id FROM t WHERE id >= 2 ORDER BY id";
    assert_eq!(column(&query(&metadata, sql).await.unwrap()), ["2", "3"]);
    let plan = query(&metadata, &format!("EXPLAIN ANALYZE {sql}"))
        .await
        .unwrap();
    assert!(plan.contains("data_files_pruned=0"), "{plan}");
}
