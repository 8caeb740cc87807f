//! Data files pruned by the residual's AND/OR tree over manifest bounds (seed 003 at the file
//! level): `a = 9 OR b = 55` is no per-column filter, yet only one file can match.

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
