//! Equality deletes on tables written by the fixture builder, with the numbers of scenario 10
//! of `docs/scenarios.md`.

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
fn unprojected_key_table() -> Fixture {
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

/// Scenario 10: P = [c0], the delete compares the unprojected `key` (id 20) with {7}; the
/// data (100, 7), (200, 8), (300, 7) leaves c0 = [200], and the reader still scanned 3 rows.
#[tokio::test]
async fn equality_delete_needs_the_unprojected_key() {
    let mut table = unprojected_key_table();
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
    // Exactly one row, c0 = 200, of the plan's schema [c0]: the key never reaches it.
    let plan = ctx
        .sql("SELECT c0 FROM t")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let batches = datafusion::physical_plan::collect(Arc::clone(&plan), ctx.task_ctx())
        .await
        .unwrap();
    let schema = Arc::new(arrow::datatypes::Schema::new(vec![
        arrow::datatypes::Field::new("c0", arrow::datatypes::DataType::Int64, true),
    ]));
    let expected = arrow::array::RecordBatch::try_new(schema, vec![longs(&[200])]).unwrap();
    let batch = arrow::compute::concat_batches(&plan.schema(), &batches).unwrap();
    assert_eq!(batch, expected);
    let metrics = scan_counters(plan.as_ref());
    for (name, value) in [
        ("rows_scanned", 3),
        ("rows_deleted_equality", 2),
        ("delete_files_loaded", 1),
        ("rows_removed_reader_filters", 0),
        ("rows_removed_residual", 0),
        ("splits_total", 1),
    ] {
        assert_eq!(metrics.get(name), Some(&value), "{name}: {metrics:?}");
    }
    // The key reaches the output only when asked for, and a filter on it still sees deletes.
    let batches = ctx
        .sql("SELECT c0, key FROM t WHERE key >= 7")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let batch = arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap();
    let expected =
        arrow::array::RecordBatch::try_from_iter([("c0", longs(&[200])), ("key", longs(&[8]))])
            .unwrap();
    assert_eq!(batch.columns(), expected.columns());
}

/// The counters of the first `LakeScanExec` in `plan`, summed over its partitions.
fn scan_counters(
    plan: &dyn datafusion::physical_plan::ExecutionPlan,
) -> std::collections::BTreeMap<String, usize> {
    if plan.name() != "LakeScanExec" {
        let child = plan
            .children()
            .into_iter()
            .next()
            .expect("a plan above the scan");
        return scan_counters(child.as_ref());
    }
    let mut out = std::collections::BTreeMap::new();
    for metric in plan.metrics().unwrap_or_default().iter() {
        if let datafusion::physical_plan::metrics::MetricValue::Count { name, count } =
            metric.value()
        {
            *out.entry(name.to_string()).or_default() += count.value();
        }
    }
    out
}

/// The delete's sequence number must be greater than the data's: data added in the same
/// commit as the delete, or after it, keeps its rows.
#[tokio::test]
async fn equality_deletes_apply_only_to_older_data() {
    let mut table = unprojected_key_table();
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
    let mut t = unprojected_key_table();
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
