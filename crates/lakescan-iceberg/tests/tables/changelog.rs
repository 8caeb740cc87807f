//! `table_changes` over a table with appends, a copy-on-write overwrite and a delete, checked
//! row by row; filters on the change columns skip files before they are opened; snapshots
//! with delete files are NotImplemented.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array};
use arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;
use iceberg::spec::{NestedField, PrimitiveType, Schema, Type};
use lakescan_iceberg::changelog::TableChangesFunction;

use crate::fixture::Fixture;

/// One BIGINT column `v` (field id 1).
fn v_schema() -> Schema {
    Schema::builder()
        .with_fields(vec![Arc::new(NestedField::optional(
            1,
            "v",
            Type::Primitive(PrimitiveType::Long),
        ))])
        .build()
        .unwrap()
}

fn longs(values: &[i64]) -> ArrayRef {
    Arc::new(Int64Array::from(values.to_vec()))
}

/// Snapshots 1001 append [1, 2, 3] (file A); 1002 append [4, 5] (B); 1003 overwrite: A
/// replaced by C = [1, 3] (copy-on-write delete of 2); 1004 delete: B removed; 1005 a
/// position delete of C's first row (merge-on-read); 1006 delete: C removed.
async fn table() -> (Fixture, Vec<String>) {
    let schema = v_schema();
    let mut t = Fixture::new(schema);
    let mut versions = vec![];
    let a = t.data_file(vec![("v", 1, longs(&[1, 2, 3]))]);
    let a_path = a.file_path().to_string();
    versions.push(t.commit(vec![a], vec![]).await);
    let b = t.data_file(vec![("v", 1, longs(&[4, 5]))]);
    let b_path = b.file_path().to_string();
    versions.push(t.commit(vec![b], vec![]).await);
    let c = t.data_file(vec![("v", 1, longs(&[1, 3]))]);
    let c_path = c.file_path().to_string();
    versions.push(t.overwrite(vec![c], &[&a_path]).await);
    versions.push(t.overwrite(vec![], &[&b_path]).await);
    let deletes = t.position_delete_file(vec![(c_path.as_str(), 0)]);
    versions.push(t.commit(vec![], vec![deletes]).await);
    versions.push(t.overwrite(vec![], &[&c_path]).await);
    (t, versions)
}

async fn context(metadata: &str) -> SessionContext {
    let ctx = crate::fixture::with_iceberg(SessionContext::new());
    ctx.register_udtf("table_changes", Arc::new(TableChangesFunction));
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{metadata}'"
    ))
    .await
    .unwrap();
    ctx
}

async fn rows(ctx: &SessionContext, sql: &str) -> datafusion::error::Result<Vec<String>> {
    let batches = ctx.sql(sql).await?.collect().await?;
    Ok(crate::position_deletes::rows(
        &pretty_format_batches(&batches)?.to_string(),
    ))
}

#[tokio::test]
async fn table_changes_lists_inserted_and_deleted_rows_per_snapshot() {
    let (_t, versions) = table().await;
    let ctx = context(&versions[5]).await;
    let sql = "SELECT v, _change_type, _change_version_id, _change_ordinal \
               FROM table_changes('t', 1001, 1004) \
               ORDER BY _change_ordinal, _change_type, v";
    assert_eq!(
        rows(&ctx, sql).await.unwrap(),
        [
            "4|insert|1002|0",
            "5|insert|1002|0",
            "1|delete|1003|1",
            "2|delete|1003|1",
            "3|delete|1003|1",
            "1|insert|1003|1",
            "3|insert|1003|1",
            "4|delete|1004|2",
            "5|delete|1004|2",
        ]
    );
    // The commit time of each snapshot (the fixture's clock: 1 700 000 000 s + seq).
    let sql = "SELECT DISTINCT _change_version_id, CAST(_change_timestamp AS VARCHAR) \
               FROM table_changes('t', 1001, 1004) ORDER BY 1";
    assert_eq!(
        rows(&ctx, sql).await.unwrap(),
        [
            "1002|2023-11-14T22:13:22Z",
            "1003|2023-11-14T22:13:23Z",
            "1004|2023-11-14T22:13:24Z",
        ]
    );
    // Bounds as timestamps: the snapshots current at those times.
    let sql = "SELECT count(*) FROM table_changes('t', \
               TIMESTAMP '2023-11-14 22:13:21.500', '2023-11-14 22:13:24')";
    assert_eq!(rows(&ctx, sql).await.unwrap(), ["9"]);
    // Filters on the row data go into the scans.
    let sql = "SELECT v, _change_type FROM table_changes('t', 1002, 1004) WHERE v >= 3 \
               ORDER BY v, _change_type";
    assert_eq!(
        rows(&ctx, sql).await.unwrap(),
        ["3|delete", "3|insert", "4|delete", "5|delete"]
    );
    // An empty range.
    let sql = "SELECT count(*) FROM table_changes('t', 1003, 1003)";
    assert_eq!(rows(&ctx, sql).await.unwrap(), ["0"]);
}

#[tokio::test]
async fn change_column_filters_skip_files_before_opening_them() {
    let (_t, versions) = table().await;
    let ctx = context(&versions[5]).await;
    let sql = "SELECT v FROM table_changes('t', 1001, 1004) \
               WHERE _change_type = 'insert' AND _change_ordinal = 1 ORDER BY v";
    assert_eq!(rows(&ctx, sql).await.unwrap(), ["1", "3"]);
    let plan = rows(&ctx, &format!("EXPLAIN ANALYZE {sql}"))
        .await
        .unwrap()
        .join("\n");
    // 4 files change in the range (B added; A removed, C added; B removed): 3 are skipped.
    assert!(plan.contains("splits_total=4"), "{plan}");
    assert!(plan.contains("splits_skipped=3"), "{plan}");
}

#[tokio::test]
async fn table_changes_errors() {
    let (_t, versions) = table().await;
    let ctx = context(&versions[5]).await;
    let err = |sql: &'static str| {
        let ctx = ctx.clone();
        async move { rows(&ctx, sql).await.unwrap_err().to_string() }
    };
    let e = err("SELECT * FROM table_changes('t', 1004, 1002)").await;
    assert!(
        e.contains("1004 is not an ancestor of snapshot 1002"),
        "{e}"
    );
    let e = err("SELECT * FROM table_changes('t', 1001, 99)").await;
    assert!(e.contains("99"), "{e}");
    let e = err("SELECT * FROM table_changes('nope', 1001, 1002)").await;
    assert!(e.contains("'nope' not found"), "{e}");
    let e = err("SELECT * FROM table_changes('t', 1001)").await;
    assert!(e.contains("3 arguments"), "{e}");
    // Snapshot 1005 adds a position-delete file: not rows of whole files.
    let e = err("SELECT * FROM table_changes('t', 1004, 1005)").await;
    assert!(
        e.contains("snapshot 1005") && e.contains("not implemented"),
        "{e}"
    );
    // Snapshot 1006 removes C, whose first row a delete file had deleted: its rows are not
    // the file's rows.
    let e = err("SELECT * FROM table_changes('t', 1005, 1006)").await;
    assert!(
        e.contains("snapshot 1006 removes data file") && e.contains("delete files had applied"),
        "{e}"
    );
}

/// A `replace` snapshot (compaction) changes no row and takes no ordinal: the snapshot after
/// it is ordinal 1, as in Iceberg's changelog scan and Trino.
#[tokio::test]
async fn replace_snapshots_are_left_out_before_numbering() {
    let schema = v_schema();
    let mut t = Fixture::new(schema);
    let a = t.data_file(vec![("v", 1, longs(&[1]))]);
    let a_path = a.file_path().to_string();
    t.commit(vec![a], vec![]).await; // 1001
    let b = t.data_file(vec![("v", 1, longs(&[2]))]);
    t.commit(vec![b], vec![]).await; // 1002
    let compacted = t.data_file(vec![("v", 1, longs(&[1]))]);
    t.replace(vec![compacted], &[&a_path]).await; // 1003
    let c = t.data_file(vec![("v", 1, longs(&[3]))]);
    let metadata = t.commit(vec![c], vec![]).await; // 1004
    let ctx = context(&metadata).await;
    let sql = "SELECT v, _change_type, _change_version_id, _change_ordinal \
               FROM table_changes('t', 1001, 1004) ORDER BY _change_ordinal";
    assert_eq!(
        rows(&ctx, sql).await.unwrap(),
        ["2|insert|1002|0", "3|insert|1004|1"]
    );
}

/// The rows of a v3 table's changes carry their row lineage (`_row_id` = the inserting
/// file's first_row_id + position).
#[tokio::test]
async fn table_changes_fill_row_lineage() {
    let schema = v_schema();
    let mut t = Fixture::new(schema).with_format_version(iceberg::spec::FormatVersion::V3);
    let a = t.data_file(vec![("v", 1, longs(&[10, 20]))]);
    t.commit(vec![a], vec![]).await; // 1001: row ids 0, 1
    let b = t.data_file(vec![("v", 1, longs(&[30, 40]))]);
    let metadata = t.commit(vec![b], vec![]).await; // 1002: row ids 2, 3
    let ctx = crate::fixture::with_iceberg(SessionContext::new());
    ctx.register_udtf("table_changes", Arc::new(TableChangesFunction));
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{metadata}' \
         OPTIONS ('metadata_columns' 'all')"
    ))
    .await
    .unwrap();
    let sql = "SELECT v, _row_id, _last_updated_sequence_number, _change_type \
               FROM table_changes('t', 1001, 1002) ORDER BY v";
    assert_eq!(
        rows(&ctx, sql).await.unwrap(),
        ["30|2|2|insert", "40|3|2|insert"]
    );
}
