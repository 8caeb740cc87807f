//! Data files pruned by the residual's AND/OR tree over manifest bounds (min/max pruning at
//! the file level): `a = 9 OR b = 55` is no per-column filter, yet only one file can match.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array};
use iceberg::spec::{Datum, NestedField, PrimitiveType, Schema, Type};

use crate::fixture::Fixture;
use crate::position_deletes::{column, query};

fn longs(values: &[i64]) -> ArrayRef {
    Arc::new(Int64Array::from(values.to_vec()))
}

#[tokio::test]
async fn or_across_columns_prunes_files_by_their_bounds() {
    let schema = Schema::builder()
        .with_fields(vec![
            Arc::new(NestedField::optional(
                1,
                "a",
                Type::Primitive(PrimitiveType::Long),
            )),
            Arc::new(NestedField::optional(
                2,
                "b",
                Type::Primitive(PrimitiveType::Long),
            )),
        ])
        .build()
        .unwrap();
    let mut t = Fixture::new(schema);
    let f1 = t.data_file_with_bounds(
        vec![("a", 1, longs(&[1, 2])), ("b", 2, longs(&[10, 20]))],
        vec![
            (1, Datum::long(1), Datum::long(2)),
            (2, Datum::long(10), Datum::long(20)),
        ],
    );
    let f2 = t.data_file_with_bounds(
        vec![("a", 1, longs(&[5, 6])), ("b", 2, longs(&[50, 60]))],
        vec![
            (1, Datum::long(5), Datum::long(6)),
            (2, Datum::long(50), Datum::long(60)),
        ],
    );
    let metadata = t.commit(vec![f1, f2], vec![]).await;
    let sql = "SELECT a FROM t WHERE a = 9 OR b = 50 ORDER BY a";
    assert_eq!(column(&query(&metadata, sql).await.unwrap()), ["5"]);
    let plan = query(&metadata, &format!("EXPLAIN ANALYZE {sql}"))
        .await
        .unwrap();
    assert!(plan.contains("data_files_pruned=1"), "{plan}");
    // Both files may match: nothing pruned, both rows found.
    let sql = "SELECT a FROM t WHERE a = 5 OR b = 10 ORDER BY a";
    assert_eq!(column(&query(&metadata, sql).await.unwrap()), ["1", "5"]);
    let plan = query(&metadata, &format!("EXPLAIN ANALYZE {sql}"))
        .await
        .unwrap();
    assert!(plan.contains("data_files_pruned=0"), "{plan}");
}

/// Manifests pruned by the residual's OR over their partition summaries: one commit (one
/// manifest) per partition of `(a identity, d month)`; `a = 3 OR d >= '2024-03-01'`
/// keeps the manifests of partition a=3 and of March only.
#[tokio::test]
async fn or_across_partition_columns_prunes_manifests_by_their_summaries() {
    use arrow::array::Date32Array;
    use iceberg::spec::{Literal, Struct, Transform};
    let schema = Schema::builder()
        .with_fields(vec![
            Arc::new(NestedField::optional(
                1,
                "a",
                Type::Primitive(PrimitiveType::Long),
            )),
            Arc::new(NestedField::optional(
                2,
                "d",
                Type::Primitive(PrimitiveType::Date),
            )),
        ])
        .build()
        .unwrap();
    let mut t = Fixture::partitioned(
        schema,
        vec![
            ("a", "a", Transform::Identity),
            ("d", "d_month", Transform::Month),
        ],
    );
    // (a, day of 2024, month ordinal): January is month 648, March 650.
    let mut metadata = String::new();
    for (a, day, month) in [
        (1, 19727, 648),
        (2, 19742, 648),
        (3, 19730, 648),
        (4, 19790, 650),
    ] {
        let file = t.data_file_in(
            Struct::from_iter([Some(Literal::long(a)), Some(Literal::int(month))]),
            vec![
                ("a", 1, longs(&[a])),
                ("d", 2, Arc::new(Date32Array::from(vec![day])) as ArrayRef),
            ],
        );
        metadata = t.commit(vec![file], vec![]).await;
    }
    let sql = "SELECT a FROM t WHERE a = 3 OR d >= DATE '2024-03-01' ORDER BY a";
    assert_eq!(column(&query(&metadata, sql).await.unwrap()), ["3", "4"]);
    let plan = query(&metadata, &format!("EXPLAIN ANALYZE {sql}"))
        .await
        .unwrap();
    assert!(plan.contains("manifests_pruned=2,"), "{plan}");
    assert!(plan.contains("manifests_total=4,"), "{plan}");
    // IS NULL: no summary has NULLs, so every manifest is pruned.
    let sql = "SELECT a FROM t WHERE a IS NULL OR d IS NULL";
    assert!(column(&query(&metadata, sql).await.unwrap()).is_empty());
    let plan = query(&metadata, &format!("EXPLAIN ANALYZE {sql}"))
        .await
        .unwrap();
    assert!(plan.contains("manifests_pruned=4,"), "{plan}");
}
