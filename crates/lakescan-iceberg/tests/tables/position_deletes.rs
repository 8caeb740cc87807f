//! Position deletes and deletion vectors on tables written by the fixture builder.

use std::sync::Arc;

use crate::fixture::Fixture;
use arrow::array::{ArrayRef, Int64Array};
use arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;
use iceberg::spec::{NestedField, PrimitiveType, Schema, Type};

fn longs(values: impl IntoIterator<Item = i64>) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(values))
}

pub fn table() -> Fixture {
    let schema = Schema::builder()
        .with_fields(vec![Arc::new(NestedField::optional(
            1,
            "v",
            Type::Primitive(PrimitiveType::Long),
        ))])
        .build()
        .unwrap();
    Fixture::new(schema)
}

pub async fn query(metadata: &str, sql: &str) -> datafusion::error::Result<String> {
    query_with(metadata, "", sql).await
}

/// Runs `sql` over table `t` at `location` created with `options` (`OPTIONS (…)` or
/// nothing); the pretty-printed result.
pub async fn query_with(
    location: &str,
    options: &str,
    sql: &str,
) -> datafusion::error::Result<String> {
    let ctx = crate::fixture::with_iceberg(SessionContext::new());
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{location}' {options}"
    ))
    .await?;
    let batches = ctx.sql(sql).await?.collect().await?;
    Ok(pretty_format_batches(&batches)?.to_string())
}

/// Rows of a result as `a|b|c` lines (the header left out).
pub fn rows(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.starts_with("| "))
        .skip(1)
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

/// The values of a one-column result, in order.
pub fn column(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| l.strip_prefix("| ")?.strip_suffix(" |"))
        .map(|v| v.trim().to_string())
        .skip(1)
        .collect()
}

/// Scattered deletes (a few rows of small files) are dropped from the decoded batches with
/// the first filter pass: every row is scanned, the deleted ones never come out.
#[tokio::test]
async fn position_deletes_remove_rows() {
    let mut t = table();
    let a = t.data_file(vec![("v", 1, longs(0..10))]);
    let b = t.data_file(vec![("v", 1, longs(100..105))]);
    let (a_path, b_path) = (a.file_path().to_string(), b.file_path().to_string());
    t.commit(vec![a, b], vec![]).await;
    // One delete file for both data files (positions are file positions).
    let deletes = t.position_delete_file(vec![
        (a_path.as_str(), 0),
        (a_path.as_str(), 5),
        (b_path.as_str(), 4),
        ("/elsewhere/other.parquet", 1),
    ]);
    let metadata = t.commit(vec![], vec![deletes]).await;
    let out = query(&metadata, "SELECT v FROM t ORDER BY v")
        .await
        .unwrap();
    let expected: Vec<String> = [1, 2, 3, 4, 6, 7, 8, 9, 100, 101, 102, 103]
        .iter()
        .map(i64::to_string)
        .collect();
    assert_eq!(column(&out), expected);
    let plan = query(&metadata, "EXPLAIN ANALYZE SELECT v FROM t")
        .await
        .unwrap();
    for metric in [
        "rows_deleted_position=3",
        "rows_scanned=15",
        "delete_files_loaded=1",
    ] {
        assert!(plan.contains(metric), "{metric} not in\n{plan}");
    }
}

/// A long run of deleted rows becomes a row selection: those rows are never decoded.
#[tokio::test]
async fn a_long_run_of_deleted_rows_is_never_decoded() {
    let mut t = table();
    let a = t.data_file(vec![("v", 1, longs(0..100_000))]);
    let a_path = a.file_path().to_string();
    t.commit(vec![a], vec![]).await;
    let mut positions: Vec<(&str, i64)> = (10_000..70_000).map(|p| (a_path.as_str(), p)).collect();
    positions.push((a_path.as_str(), 99_999));
    let deletes = t.position_delete_file(positions);
    let metadata = t.commit(vec![], vec![deletes]).await;
    let out = query(
        &metadata,
        "SELECT count(*), min(v), max(v), sum(v) FROM t WHERE v >= 0",
    )
    .await
    .unwrap();
    // Kept: 0..10 000 and 70 000..99 999.
    let sum: i64 = (0..10_000).chain(70_000..99_999).sum();
    let values: Vec<&str> = out
        .lines()
        .nth(3)
        .unwrap_or_default()
        .split('|')
        .map(str::trim)
        .collect();
    assert_eq!(
        values,
        ["", "39999", "0", "99998", &sum.to_string(), ""],
        "{out}"
    );
    let plan = query(&metadata, "EXPLAIN ANALYZE SELECT v FROM t")
        .await
        .unwrap();
    // 60 001 rows deleted, 39 999 scanned (a mask would have scanned all 100 000; Avro,
    // row-oriented, decodes every row and masks).
    let metrics = match crate::DATA_FORMAT {
        iceberg::spec::DataFileFormat::Avro => &["rows_deleted_position=60.00 K"][..],
        _ => &["rows_deleted_position=60.00 K", "rows_scanned=40.00 K"][..],
    };
    for metric in metrics {
        assert!(plan.contains(metric), "{metric} not in\n{plan}");
    }
}

#[tokio::test]
async fn position_deletes_of_the_same_sequence_number_apply() {
    let mut t = table();
    let a = t.data_file(vec![("v", 1, longs(0..3))]);
    let a_path = a.file_path().to_string();
    let deletes = t.position_delete_file(vec![(a_path.as_str(), 1)]);
    let metadata = t.commit(vec![a], vec![deletes]).await;
    let out = query(&metadata, "SELECT v FROM t ORDER BY v")
        .await
        .unwrap();
    assert_eq!(column(&out), ["0", "2"]);
}

#[tokio::test]
async fn deletion_vectors_remove_rows_and_are_checked() {
    let mut t = table();
    let a = t.data_file(vec![("v", 1, longs(0..10))]);
    let a_path = a.file_path().to_string();
    t.commit(vec![a], vec![]).await;
    let dv = t.deletion_vector(&a_path, &a_path, &[1, 3, 5, 7, 9]);
    let metadata = t.commit(vec![], vec![dv]).await;
    let out = query(&metadata, "SELECT v FROM t ORDER BY v")
        .await
        .unwrap();
    assert_eq!(column(&out), ["0", "2", "4", "6", "8"]);
    let plan = query(&metadata, "EXPLAIN ANALYZE SELECT v FROM t WHERE v >= 4")
        .await
        .unwrap();
    assert!(plan.contains("rows_deleted_vector=5"), "{plan}");

    // A blob whose footer names another data file is an error, not rows.
    let mut t = table();
    let a = t.data_file(vec![("v", 1, longs(0..10))]);
    let a_path = a.file_path().to_string();
    t.commit(vec![a], vec![]).await;
    let dv = t.deletion_vector(&a_path, "/somewhere/else.parquet", &[1]);
    let metadata = t.commit(vec![], vec![dv]).await;
    let err = query(&metadata, "SELECT v FROM t")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("belongs to data file '/somewhere/else.parquet'"),
        "{err}"
    );
}

#[tokio::test]
async fn a_position_delete_file_with_the_wrong_schema_is_an_error() {
    let mut t = table();
    let a = t.data_file(vec![("v", 1, longs(0..3))]);
    t.commit(vec![a], vec![]).await;
    // An equality-shaped file registered as position deletes: no file_path / pos columns.
    let mut bad = t.equality_delete_file(vec![1], vec![("v", 1, longs([1]))]);
    let wrong = iceberg::spec::DataFileBuilder::default()
        .content(iceberg::spec::DataContentType::PositionDeletes)
        .file_path(bad.file_path().to_string())
        .file_format(bad.file_format())
        .record_count(1)
        .file_size_in_bytes(bad.file_size_in_bytes())
        .partition(iceberg::spec::Struct::empty())
        .partition_spec_id(0)
        .build()
        .unwrap();
    bad = wrong;
    let metadata = t.commit(vec![], vec![bad]).await;
    let err = query(&metadata, "SELECT v FROM t")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a position-delete file"), "{err}");
}

/// Deletes are loaded after pruning: a split whose row groups its footer's
/// statistics prune reads none of its delete files; the other split loads its own.
#[tokio::test]
async fn a_split_pruned_by_statistics_loads_no_delete_file() {
    let mut t = table();
    // No manifest bounds: planning keeps both files, the reader prunes by the footer.
    let a = t.data_file(vec![("v", 1, longs(0..10))]);
    let b = t.data_file(vec![("v", 1, longs(100..110))]);
    let (a_path, b_path) = (a.file_path().to_string(), b.file_path().to_string());
    t.commit(vec![a, b], vec![]).await;
    let of_a = t.position_delete_file(vec![(a_path.as_str(), 3)]);
    let of_b = t.position_delete_file(vec![(b_path.as_str(), 5)]);
    let metadata = t.commit(vec![], vec![of_a, of_b]).await;
    let sql = "SELECT v FROM t WHERE v >= 100 ORDER BY v";
    let out = query(&metadata, sql).await.unwrap();
    let expected: Vec<String> = (100..110)
        .filter(|v| *v != 105)
        .map(|v: i64| v.to_string())
        .collect();
    assert_eq!(column(&out), expected);
    let plan = query(&metadata, &format!("EXPLAIN ANALYZE {sql}"))
        .await
        .unwrap();
    // Avro files have no statistics: both splits are read, both delete files loaded (and
    // the row of `a` they delete counted, though the filter drops `a`'s rows anyway).
    let metrics = match crate::DATA_FORMAT {
        iceberg::spec::DataFileFormat::Avro => {
            &["delete_files_loaded=2", "rows_deleted_position=2"][..]
        }
        _ => &[
            "splits_pruned_statistics=1",
            "delete_files_loaded=1",
            "rows_deleted_position=1",
        ][..],
    };
    for metric in metrics {
        assert!(plan.contains(metric), "{metric} not in\n{plan}");
    }
}
