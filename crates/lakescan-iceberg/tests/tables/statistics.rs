//! Optimizer statistics of Iceberg scans from manifests (row counts, null counts, bounds):
//! a join of two Iceberg tables builds its hash table on the side with fewer rows.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array};
use datafusion::physical_plan::displayable;
use datafusion::prelude::SessionContext;
use iceberg::spec::{Datum, NestedField, PrimitiveType, Schema, Type};

use crate::fixture::Fixture;

/// A table of two BIGINT columns `k` and `v`.
fn table() -> Fixture {
    let long = |id, name: &str| {
        Arc::new(NestedField::optional(
            id,
            name,
            Type::Primitive(PrimitiveType::Long),
        ))
    };
    let schema = Schema::builder()
        .with_fields(vec![long(1, "k"), long(2, "v")])
        .build()
        .unwrap();
    Fixture::new(schema)
}

fn longs(values: impl IntoIterator<Item = i64>) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(values))
}

/// `big` (100 000 rows, `k` and `v` = 0..100 000) and `small` (2 000 rows) registered in a
/// session; the tables' directories live as long as the returned fixtures.
async fn two_tables() -> (SessionContext, Fixture, Fixture) {
    let ctx = crate::fixture::with_iceberg(SessionContext::new());
    // Manifest bounds of both columns, as writers record them.
    let file = |t: &mut Fixture, n: i64| {
        let bounds = (1..=2)
            .map(|id| (id, Datum::long(0), Datum::long(n - 1)))
            .collect();
        t.data_file_with_bounds(vec![("k", 1, longs(0..n)), ("v", 2, longs(0..n))], bounds)
    };
    let mut big = table();
    let file_of_big = file(&mut big, 100_000);
    let big_metadata = big.commit(vec![file_of_big], vec![]).await;
    let mut small = table();
    let file = file(&mut small, 2_000);
    let small_metadata = small.commit(vec![file], vec![]).await;
    for (name, metadata) in [("big", big_metadata), ("small", small_metadata)] {
        ctx.sql(&format!(
            "CREATE EXTERNAL TABLE {name} STORED AS ICEBERG LOCATION '{metadata}'"
        ))
        .await
        .unwrap();
    }
    (ctx, big, small)
}

/// The table the first (build) input of the plan's hash join scans.
async fn build_side(ctx: &SessionContext, sql: &str) -> String {
    let plan = ctx
        .sql(sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let shown = displayable(plan.as_ref()).indent(true).to_string();
    let join = shown
        .lines()
        .position(|l| l.contains("HashJoinExec"))
        .unwrap_or_else(|| panic!("no hash join in\n{shown}"));
    let build = shown
        .lines()
        .skip(join + 1)
        .find(|l| l.contains("LakeScanExec"))
        .unwrap_or_else(|| panic!("no scan under the join in\n{shown}"));
    let table = build.split("table=").nth(1).unwrap_or_default();
    table.split(',').next().unwrap_or_default().to_string()
}

#[tokio::test]
async fn a_join_builds_on_the_side_with_fewer_rows() {
    let (ctx, _big, _small) = two_tables().await;
    // Written either way round, the small table is the build side.
    for sql in [
        "SELECT * FROM big JOIN small ON big.k = small.k",
        "SELECT * FROM small JOIN big ON big.k = small.k",
    ] {
        assert_eq!(build_side(&ctx, sql).await, "small", "{sql}");
    }
    // A filter the big table's bounds say keeps 10 of its 100 000 rows makes it the smaller
    // side: its estimate comes from the manifest's bounds of `v` (not a join key, so the
    // filter is not inferred for `small`).
    let sql = "SELECT * FROM small JOIN big ON big.k = small.k WHERE big.v < 10";
    assert_eq!(build_side(&ctx, sql).await, "big");
    // The scan's row count is the manifest's record count.
    let plan = ctx
        .sql("SELECT * FROM big")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let rows = plan.partition_statistics(None).unwrap().num_rows;
    assert_eq!(rows, datafusion::common::stats::Precision::Exact(100_000));
}
