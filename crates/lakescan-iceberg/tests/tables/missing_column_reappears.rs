//! Scenario 7 of `docs/scenarios.md`, Iceberg variant: a filter-only column missing from the
//! first file and present in the next. Missing, it reads its `initial-default` (not NULL:
//! Iceberg's rule for a missing column), so the filter tests the default; present, it reads
//! the file's values again.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array};
use iceberg::spec::{Literal, NestedField, PrimitiveType, Schema, Type};

use datafusion::prelude::{SessionConfig, SessionContext};

use crate::fixture::Fixture;
use crate::position_deletes::{column, query};

fn longs(values: &[i64]) -> ArrayRef {
    Arc::new(Int64Array::from(values.to_vec()))
}

#[tokio::test]
async fn filter_only_column_missing_then_present() {
    let schema = Schema::builder()
        .with_fields(vec![
            Arc::new(NestedField::optional(
                1,
                "a",
                Type::Primitive(PrimitiveType::Long),
            )),
            Arc::new(
                NestedField::optional(2, "b", Type::Primitive(PrimitiveType::Long))
                    .with_initial_default(Literal::long(5)),
            ),
        ])
        .build()
        .unwrap();
    let mut t = Fixture::new(schema);
    // Written before b existed.
    let old = t.data_file(vec![("a", 1, longs(&[1, 2]))]);
    t.commit(vec![old], vec![]).await;
    let new = t.data_file(vec![("a", 1, longs(&[3, 4])), ("b", 2, longs(&[5, 6]))]);
    let metadata = t.commit(vec![new], vec![]).await;

    let out = query(&metadata, "SELECT a FROM t WHERE b = 5 ORDER BY a")
        .await
        .unwrap();
    assert_eq!(column(&out), ["1", "2", "3"]);
    let out = query(&metadata, "SELECT a FROM t WHERE b = 6 ORDER BY a")
        .await
        .unwrap();
    assert_eq!(column(&out), ["4"]);

    // Both files through one partition, the old one first (a constant installed for one
    // split must not stay for the next). `b = 6` skips the old file on its constant 5
    // before opening it and reads the new one; `b = 5` skips none.
    let ctx = crate::fixture::with_iceberg(SessionContext::new_with_config(
        SessionConfig::new().with_target_partitions(1),
    ));
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{metadata}'"
    ))
    .await
    .unwrap();
    for (filter, rows, skipped) in [("b = 6", "4", 1), ("b = 5", "1, 2, 3", 0)] {
        let sql = format!("SELECT a FROM t WHERE {filter} ORDER BY a");
        let batches = ctx.sql(&sql).await.unwrap().collect().await.unwrap();
        let out = arrow::util::pretty::pretty_format_batches(&batches)
            .unwrap()
            .to_string();
        assert_eq!(column(&out).join(", "), rows, "{filter}: {out}");
        let plan = ctx
            .sql(&format!("EXPLAIN ANALYZE {sql}"))
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let plan = arrow::util::pretty::pretty_format_batches(&plan)
            .unwrap()
            .to_string();
        assert!(plan.contains("splits=2,"), "{plan}");
        assert!(
            plan.contains(&format!("splits_skipped={skipped},")),
            "{filter}: {plan}"
        );
        assert!(plan.contains("splits_total=2,"), "{plan}");
    }
    let out = query(&metadata, "SELECT a, b FROM t ORDER BY a")
        .await
        .unwrap();
    assert!(
        out.contains("| 1 | 5 |") && out.contains("| 4 | 6 |"),
        "{out}"
    );
}
