//! Equality deletes on tables written by the fixture builder, with the seed's numbers.

use std::sync::Arc;

use crate::fixture::Fixture;
use arrow::array::{ArrayRef, Int64Array, StringArray};
use arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;
use iceberg::spec::{NestedField, PrimitiveType, Schema, Type};

fn longs(values: &[i64]) -> ArrayRef {
    Arc::new(Int64Array::from(values.to_vec()))
}

fn context() -> SessionContext {
    crate::fixture::with_iceberg(SessionContext::new())
}

async fn rows(ctx: &SessionContext, sql: &str) -> String {
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    pretty_format_batches(&batches).unwrap().to_string()
}

/// Table [c0 BIGINT, key BIGINT], field ids [10, 20].
fn seed_table() -> Fixture {
    let schema = Schema::builder()
        .with_fields(vec![
            Arc::new(NestedField::optional(
                10,
                "c0",
                Type::Primitive(PrimitiveType::Long),
            )),
            Arc::new(NestedField::optional(
                20,
                "key",
                Type::Primitive(PrimitiveType::Long),
            )),
        ])
        .build()
        .unwrap();
    Fixture::new(schema)
}

/// Seed §15.10: P = [c0], the delete compares the unprojected `key` (id 20) with {7}; the
/// data (100, 7), (200, 8), (300, 7) leaves c0 = [200], and the reader still scanned 3 rows.
#[tokio::test]
async fn seed_15_10_equality_delete_needs_the_unprojected_key() {
    let mut table = seed_table();
    let data = table.data_file(vec![
        ("c0", 10, longs(&[100, 200, 300])),
        ("key", 20, longs(&[7, 8, 7])),
    ]);
    table.commit(vec![data], vec![]).await;
    let delete = table.equality_delete_file(vec![20], vec![("key", 20, longs(&[7]))]);
    let metadata = table.commit(vec![], vec![delete]).await;

    let ctx = context();
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{metadata}'"
    ))
    .await
    .unwrap();
    let out = rows(&ctx, "SELECT c0 FROM t").await;
    assert_eq!(
        out.lines().filter(|l| l.contains("| 200 |")).count(),
        1,
        "{out}"
    );
    assert_eq!(out.lines().count(), 5, "one row and no key column:\n{out}");
    let plan = rows(&ctx, "EXPLAIN ANALYZE SELECT c0 FROM t").await;
    for metric in [
        "rows_scanned=3",
        "rows_deleted_equality=2",
        "delete_files_loaded=1",
    ] {
        assert!(plan.contains(metric), "{metric} not in\n{plan}");
    }
    // The key reaches the output only when asked for, and a filter on it still sees deletes.
    let out = rows(&ctx, "SELECT c0, key FROM t WHERE key >= 7").await;
    assert!(out.contains("| 200 | 8   |"), "{out}");
    assert!(!out.contains("| 7 "), "{out}");
}

/// The delete's sequence number must be greater than the data's: data added in the same
/// commit as the delete, or after it, keeps its rows.
#[tokio::test]
async fn equality_deletes_apply_only_to_older_data() {
    let mut table = seed_table();
    let old = table.data_file(vec![
        ("c0", 10, longs(&[1, 2])),
        ("key", 20, longs(&[7, 8])),
    ]);
    table.commit(vec![old], vec![]).await;
    let same = table.data_file(vec![("c0", 10, longs(&[3])), ("key", 20, longs(&[7]))]);
    let delete = table.equality_delete_file(vec![20], vec![("key", 20, longs(&[7]))]);
    table.commit(vec![same], vec![delete]).await;
    let newer = table.data_file(vec![("c0", 10, longs(&[4])), ("key", 20, longs(&[7]))]);
    let metadata = table.commit(vec![newer], vec![]).await;

    let ctx = context();
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{metadata}'"
    ))
    .await
    .unwrap();
    let out = rows(&ctx, "SELECT c0 FROM t ORDER BY c0").await;
    let values: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("| ")?.strip_suffix(" |"))
        .map(str::trim)
        .collect();
    assert_eq!(values, ["c0", "2", "3", "4"], "{out}");
}

/// NULL keys are deleted by a NULL in the delete file; several key columns compare as one.
#[tokio::test]
async fn null_safe_multi_column_keys() {
    let schema = Schema::builder()
        .with_fields(vec![
            Arc::new(NestedField::optional(
                1,
                "id",
                Type::Primitive(PrimitiveType::Long),
            )),
            Arc::new(NestedField::optional(
                2,
                "name",
                Type::Primitive(PrimitiveType::String),
            )),
        ])
        .build()
        .unwrap();
    let mut table = Fixture::new(schema);
    let names: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), None, Some("c"), None]));
    let data = table.data_file(vec![("id", 1, longs(&[1, 2, 3, 4])), ("name", 2, names)]);
    table.commit(vec![data], vec![]).await;
    let deleted: ArrayRef = Arc::new(StringArray::from(vec![None, Some("c")]));
    let delete = table.equality_delete_file(
        vec![1, 2],
        vec![("id", 1, longs(&[2, 1])), ("name", 2, deleted)],
    );
    let metadata = table.commit(vec![], vec![delete]).await;

    let ctx = context();
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{metadata}'"
    ))
    .await
    .unwrap();
    let out = rows(&ctx, "SELECT id FROM t ORDER BY id").await;
    // (2, NULL) is deleted; (1, 'a') is not ((1, 'c') is the key), nor (4, NULL).
    let ids: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("| ")?.strip_suffix(" |"))
        .map(str::trim)
        .collect();
    assert_eq!(ids, ["id", "1", "3", "4"], "{out}");
}

/// The spec: equality deletes on a column the table has since dropped still apply. `key`
/// (id 20) is dropped after the data is written; a delete of key = 2 then removes its row,
/// and `key` never reaches the output.
#[tokio::test]
async fn equality_deletes_on_a_dropped_column_still_apply() {
    let mut t = seed_table();
    let a = t.data_file(vec![
        ("c0", 10, longs(&[1, 2, 3])),
        ("key", 20, longs(&[1, 2, 3])),
    ]);
    t.commit(vec![a], vec![]).await;
    t.evolve_schema(
        Schema::builder()
            .with_fields(vec![Arc::new(NestedField::optional(
                10,
                "c0",
                Type::Primitive(PrimitiveType::Long),
            ))])
            .build()
            .unwrap(),
    );
    let deletes = t.equality_delete_file(vec![20], vec![("key", 20, longs(&[2]))]);
    let metadata = t.commit(vec![], vec![deletes]).await;
    let ctx = context();
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{metadata}'"
    ))
    .await
    .unwrap();
    let out = rows(&ctx, "SELECT * FROM t ORDER BY c0").await;
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        ["+----+", "| c0 |", "+----+", "| 1  |", "| 3  |", "+----+"],
        "{out}"
    );
    let out = rows(&ctx, "SELECT count(*) FROM t").await;
    assert!(out.contains("| 2        |"), "{out}");
}
