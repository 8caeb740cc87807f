//! Metadata columns (`_file`, `_pos`, `_spec_id`, `_partition`) and v3 row lineage
//! (`_row_id`, `_last_updated_sequence_number`), scenario 11 of `docs/scenarios.md`.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, StringArray};
use iceberg::spec::{
    FormatVersion, Literal, NestedField, PrimitiveType, Schema, Struct, Transform, Type,
};

use crate::fixture::Fixture;
use crate::position_deletes::{column, query_with, rows};

const ROW_ID: i32 = 2147483540;
const LAST_UPDATED: i32 = 2147483539;

fn schema() -> Schema {
    Schema::builder()
        .with_fields(vec![
            Arc::new(NestedField::optional(
                1,
                "v",
                Type::Primitive(PrimitiveType::Long),
            )),
            Arc::new(NestedField::optional(
                2,
                "category",
                Type::Primitive(PrimitiveType::String),
            )),
        ])
        .build()
        .unwrap()
}

fn longs<const N: usize>(values: [i64; N]) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(values))
}

fn long_range(values: impl IntoIterator<Item = i64>) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(values))
}

fn strings(n: usize, value: &str) -> ArrayRef {
    Arc::new(StringArray::from(vec![value; n]))
}

/// Scenario 11: a data file whose positions 100..=104 have NULL `_row_id`, first_row_id
/// 1000; a position delete removes 101 and a reader filter 103. The survivors 100, 102, 104
/// get row ids 1100, 1102, 1104 (positions in the file, not 1100, 1101, 1102 after the
/// deletes), unless the file stores a row id (9000 at 102 in the second table).
/// `_last_updated_sequence_number` is the file's data sequence number (2) where the file
/// has NULL.
#[tokio::test]
async fn lineage_is_filled_from_file_positions() {
    for stored in [false, true] {
        let mut t = Fixture::new(schema()).with_format_version(FormatVersion::V3);
        // Rows 0..1000 take row ids 0..1000: the next file's first_row_id is 1000.
        let a = t.data_file(vec![("v", 1, long_range(0..1000))]);
        t.commit(vec![a], vec![]).await;
        let row_ids: Int64Array = (0..105)
            .map(|p| (stored && p == 102).then_some(9000))
            .collect();
        let updated: Int64Array = (0..105)
            .map(|p| (stored && p == 102).then_some(1))
            .collect();
        let b = t.data_file(vec![
            ("v", 1, long_range(0..105)),
            ("_row_id", ROW_ID, Arc::new(row_ids) as ArrayRef),
            (
                "_last_updated_sequence_number",
                LAST_UPDATED,
                Arc::new(updated) as ArrayRef,
            ),
        ]);
        let b_path = b.file_path().to_string();
        t.commit(vec![b], vec![]).await;
        let deletes = t.position_delete_file(vec![(b_path.as_str(), 101)]);
        let metadata = t.commit(vec![], vec![deletes]).await;
        let options = "OPTIONS ('metadata_columns' 'all')";
        let sql = format!(
            "SELECT _pos, _row_id, _last_updated_sequence_number FROM t \
             WHERE _file = '{b_path}' AND _pos >= 100 AND v <> 103 ORDER BY _pos"
        );
        let out = query_with(&metadata, options, &sql).await.unwrap();
        let expected = match stored {
            false => ["100|1100|2", "102|1102|2", "104|1104|2"],
            true => ["100|1100|2", "102|9000|1", "104|1104|2"],
        };
        assert_eq!(rows(&out), expected, "{out}");
        // Filters on lineage run on the filled values (the file's are NULL placeholders,
        // and its statistics describe those).
        let sql = "SELECT v, _row_id FROM t WHERE _row_id BETWEEN 1100 AND 1102 ORDER BY v";
        let out = query_with(&metadata, options, sql).await.unwrap();
        let expected: &[&str] = match stored {
            false => &["100|1100", "102|1102"],
            true => &["100|1100"],
        };
        assert_eq!(rows(&out), expected, "{out}");
        // File A inherits first_row_id 0: its row ids are its positions.
        let sql = "SELECT count(*), min(_row_id), max(_row_id) FROM t WHERE _row_id < 1000";
        let out = query_with(&metadata, options, sql).await.unwrap();
        assert_eq!(rows(&out), ["1000|0|999"], "{out}");
        let sql = "SELECT _last_updated_sequence_number, count(*) FROM t \
                   GROUP BY 1 ORDER BY 1";
        let out = query_with(&metadata, options, sql).await.unwrap();
        let expected: &[&str] = match stored {
            false => &["1|1000", "2|104"],
            true => &["1|1001", "2|103"],
        };
        assert_eq!(rows(&out), expected, "{out}");
    }
}

/// A compaction that keeps row lineage: file B rewrites A's surviving rows with their row ids
/// and last-updated sequence numbers stored, A's rows are deleted (a deletion vector), and a
/// new row appended with B has none stored: it gets B's `first_row_id` + position and B's
/// data sequence number.
#[tokio::test]
async fn a_compaction_keeps_row_ids_stored_in_the_rewritten_file() {
    let mut t = Fixture::new(schema()).with_format_version(FormatVersion::V3);
    let a = t.data_file(vec![("v", 1, longs([10, 20, 30]))]);
    let a_path = a.file_path().to_string();
    t.commit(vec![a], vec![]).await;
    let row_ids: Int64Array = [Some(0), Some(2), None].into_iter().collect();
    let updated: Int64Array = [Some(1), Some(1), None].into_iter().collect();
    let b = t.data_file(vec![
        ("v", 1, longs([10, 30, 40])),
        ("_row_id", ROW_ID, Arc::new(row_ids) as ArrayRef),
        (
            "_last_updated_sequence_number",
            LAST_UPDATED,
            Arc::new(updated) as ArrayRef,
        ),
    ]);
    let dv = t.deletion_vector(&a_path, &a_path, &[0, 1, 2]);
    let metadata = t.commit(vec![b], vec![dv]).await;
    let out = query_with(
        &metadata,
        "OPTIONS ('metadata_columns' '_row_id,_last_updated_sequence_number')",
        "SELECT v, _row_id, _last_updated_sequence_number FROM t ORDER BY v",
    )
    .await
    .unwrap();
    // B's first_row_id is 3 (A took 0..3): the new row at position 2 is 3 + 2.
    assert_eq!(rows(&out), ["10|0|1", "30|2|1", "40|5|2"], "{out}");
}

/// Row-id inheritance skips DELETED entries (Java's `ManifestReader`): A (10 rows) and B
/// (5 rows) are added in one manifest (first_row_id 0: A 0..10, B 10..15); a copy-on-write
/// delete of A rewrites the manifest as DELETED A, then EXISTING B without a first_row_id of
/// its own, and the new manifest takes first_row_id 15. B's rows are 15..20 — counting the
/// DELETED A first would give 25..30.
#[tokio::test]
async fn deleted_entries_take_no_row_ids() {
    let mut t = Fixture::new(schema()).with_format_version(FormatVersion::V3);
    let a = t.data_file(vec![("v", 1, long_range(0..10))]);
    let b = t.data_file(vec![("v", 1, long_range(100..105))]);
    let a_path = a.file_path().to_string();
    t.commit(vec![a, b], vec![]).await;
    let metadata = t.overwrite(vec![], &[a_path.as_str()]).await;
    let out = query_with(
        &metadata,
        "OPTIONS ('metadata_columns' '_row_id')",
        "SELECT v, _row_id FROM t ORDER BY v",
    )
    .await
    .unwrap();
    let expected: Vec<String> = (0..5).map(|i| format!("{}|{}", 100 + i, 15 + i)).collect();
    assert_eq!(rows(&out), expected, "{out}");
}

/// `_file`, `_pos`, `_spec_id` and `_partition` of a partitioned table; filters on the
/// per-file columns skip splits before they are opened. (`_pos` under deletes: scenario 11
/// above.)
#[tokio::test]
async fn metadata_columns_of_a_partitioned_table() {
    let mut t = Fixture::partitioned(
        schema(),
        vec![("category", "category", Transform::Identity)],
    );
    let part = |c: &str| Struct::from_iter([Some(Literal::string(c))]);
    let a = t.data_file_in(
        part("a"),
        vec![("v", 1, long_range(0..3)), ("category", 2, strings(3, "a"))],
    );
    let b = t.data_file_in(
        part("b"),
        vec![
            ("v", 1, long_range(10..13)),
            ("category", 2, strings(3, "b")),
        ],
    );
    let (a_path, b_path) = (a.file_path().to_string(), b.file_path().to_string());
    let metadata = t.commit(vec![a, b], vec![]).await;
    let options = "OPTIONS ('metadata_columns' '_file,_pos,_spec_id,_partition')";
    let sql = "SELECT v, _pos, _spec_id, _partition FROM t ORDER BY v";
    let out = query_with(&metadata, options, sql).await.unwrap();
    assert_eq!(
        rows(&out),
        [
            "0|0|0|{category: a}",
            "1|1|0|{category: a}",
            "2|2|0|{category: a}",
            "10|0|0|{category: b}",
            "11|1|0|{category: b}",
            "12|2|0|{category: b}",
        ],
        "{out}"
    );
    let sql = format!("SELECT _file, count(*) FROM t GROUP BY _file ORDER BY _file = '{a_path}'");
    let out = query_with(&metadata, options, &sql).await.unwrap();
    assert_eq!(rows(&out), [format!("{b_path}|3"), format!("{a_path}|3")]);
    // A filter on `_file` skips the other file's split before it is opened; one on `_pos`
    // is a row selection.
    let sql = format!("SELECT v FROM t WHERE _file = '{b_path}' AND _pos >= 1 ORDER BY v");
    assert_eq!(
        column(&query_with(&metadata, options, &sql).await.unwrap()),
        ["11", "12"]
    );
    let plan = query_with(&metadata, options, &format!("EXPLAIN ANALYZE {sql}"))
        .await
        .unwrap();
    // (ORC data files skip `_pos` by row-index group, not by row selection.)
    let metrics = match crate::DATA_FORMAT {
        iceberg::spec::DataFileFormat::Parquet => {
            &["splits_skipped=1", "rows_pruned_row_index=1"][..]
        }
        _ => &["splits_skipped=1"][..],
    };
    for metric in metrics {
        assert!(plan.contains(metric), "{metric} not in\n{plan}");
    }
    // `_partition` is a struct: its members can be filtered.
    let sql = "SELECT count(*) FROM t WHERE _partition['category'] = 'b'";
    assert_eq!(
        column(&query_with(&metadata, options, sql).await.unwrap()),
        ["3"]
    );
    // Without the option the table has its data columns only.
    let out = query_with(&metadata, "", "SELECT * FROM t ORDER BY v LIMIT 1")
        .await
        .unwrap();
    assert!(!out.contains("_pos"), "{out}");
}

#[tokio::test]
async fn metadata_columns_are_checked() {
    // v2, never partitioned: `all` is `_file`, `_pos`, `_spec_id`, `_partition` (NULL).
    let mut t = Fixture::new(schema());
    let a = t.data_file(vec![("v", 1, long_range(0..2))]);
    let metadata = t.commit(vec![a], vec![]).await;
    let out = query_with(
        &metadata,
        "OPTIONS ('metadata_columns' 'all')",
        "SELECT * FROM t ORDER BY v LIMIT 1",
    )
    .await
    .unwrap();
    let header = out.lines().nth(1).unwrap_or_default().to_string();
    for name in ["_file", "_pos", "_spec_id", "_partition"] {
        assert!(header.contains(name), "{header}");
    }
    for name in ["_row_id", "_last_updated"] {
        assert!(!header.contains(name), "{header}");
    }
    let out = query_with(
        &metadata,
        "OPTIONS ('metadata_columns' '_partition')",
        "SELECT v, _partition IS NULL FROM t ORDER BY v",
    )
    .await
    .unwrap();
    assert_eq!(column(&out), ["0 | true", "1 | true"], "{out}");
    let err = |options: &'static str| {
        let metadata = metadata.clone();
        async move {
            query_with(&metadata, options, "SELECT 1")
                .await
                .unwrap_err()
                .to_string()
        }
    };
    let e = err("OPTIONS ('metadata_columns' '_row_id')").await;
    assert!(e.contains("_row_id") && e.contains("version 3"), "{e}");
    let e = err("OPTIONS ('metadata_columns' '_nope')").await;
    assert!(e.contains("unknown metadata column '_nope'"), "{e}");

    // A data column named like a metadata column.
    let clashing = Schema::builder()
        .with_fields(vec![Arc::new(NestedField::optional(
            1,
            "_file",
            Type::Primitive(PrimitiveType::String),
        ))])
        .build()
        .unwrap();
    let mut t = Fixture::new(clashing);
    let a = t.data_file(vec![("_file", 1, strings(1, "x"))]);
    let metadata = t.commit(vec![a], vec![]).await;
    let e = query_with(&metadata, "OPTIONS ('metadata_columns' 'all')", "SELECT 1")
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("collides with the table column '_file'"), "{e}");
    // Without the option, the data column reads as before.
    let out = query_with(&metadata, "", "SELECT _file FROM t")
        .await
        .unwrap();
    assert_eq!(column(&out), ["x"]);
}

/// `_partition` after a partition field was replaced by another of the same name
/// (`bucket(16, v) AS v_bucket`, then `bucket(32, v) AS v_bucket`): the newer field keeps
/// the name, the older one is `v_bucket_1000`, as Java names them; each file's value is in
/// its own spec's member.
#[tokio::test]
async fn partition_members_with_one_name_are_told_apart() {
    let mut t = Fixture::partitioned(schema(), vec![("v", "v_bucket", Transform::Bucket(16))]);
    let bucket = |b: i32| Struct::from_iter([Some(Literal::int(b))]);
    let a = t.data_file_in(bucket(3), vec![("v", 1, longs([1]))]);
    t.commit(vec![a], vec![]).await;
    t.evolve_partitioning(vec![("v", "v_bucket", Transform::Bucket(32))]);
    let b = t.data_file_in(bucket(7), vec![("v", 1, longs([2]))]);
    let metadata = t.commit(vec![b], vec![]).await;
    let options = "OPTIONS ('metadata_columns' '_partition,_spec_id')";
    let sql = "SELECT v, _spec_id, _partition FROM t ORDER BY v";
    let out = query_with(&metadata, options, sql).await.unwrap();
    assert_eq!(
        rows(&out),
        [
            "1|0|{v_bucket_1000: 3, v_bucket: }",
            "2|1|{v_bucket_1000: , v_bucket: 7}",
        ],
        "{out}"
    );
    let sql = "SELECT v FROM t WHERE _partition['v_bucket'] = 7";
    assert_eq!(
        column(&query_with(&metadata, options, sql).await.unwrap()),
        ["2"]
    );
}

/// Scenario 5 (map extraction) with Iceberg lineage beside the extraction: `map_keys(m)` is
/// read as the keys array alone (the values never decoded) while `_row_id` — output, or only
/// filtered — is filled after decoding at the tail of the reader's columns. The scenario's
/// maps {a:1, b:2} and {c:3} give [a, b] and [c], two rows, with row ids 0 and 1.
#[tokio::test]
async fn map_keys_beside_a_lineage_column() {
    use arrow::array::{MapArray, StringArray};
    use arrow::buffer::OffsetBuffer;
    use arrow::datatypes::{DataType, Field, Fields};
    use iceberg::spec::MapType;
    use parquet::arrow::PARQUET_FIELD_ID_META_KEY;

    let id = |n: i32| {
        std::collections::HashMap::from([(PARQUET_FIELD_ID_META_KEY.to_string(), n.to_string())])
    };
    let schema = Schema::builder()
        .with_fields(vec![
            Arc::new(NestedField::optional(
                1,
                "v",
                Type::Primitive(PrimitiveType::Long),
            )),
            Arc::new(NestedField::optional(
                2,
                "m",
                Type::Map(MapType::new(
                    Arc::new(NestedField::map_key_element(
                        3,
                        Type::Primitive(PrimitiveType::String),
                    )),
                    Arc::new(NestedField::map_value_element(
                        4,
                        Type::Primitive(PrimitiveType::Long),
                        false,
                    )),
                )),
            )),
        ])
        .build()
        .unwrap();
    let mut t = Fixture::new(schema).with_format_version(FormatVersion::V3);
    let entries = Fields::from(vec![
        Field::new("key", DataType::Utf8, false).with_metadata(id(3)),
        Field::new("value", DataType::Int64, true).with_metadata(id(4)),
    ]);
    let keys: ArrayRef = Arc::new(StringArray::from(vec!["a", "b", "c"]));
    let values: ArrayRef = longs([1, 2, 3]);
    let entries_array = arrow::array::StructArray::new(entries.clone(), vec![keys, values], None);
    let map = MapArray::new(
        Arc::new(Field::new("key_value", DataType::Struct(entries), false)),
        OffsetBuffer::new(vec![0, 2, 3].into()),
        entries_array,
        None,
        false,
    );
    let a = t.data_file(vec![
        ("v", 1, longs([10, 20])),
        ("m", 2, Arc::new(map) as ArrayRef),
    ]);
    let metadata = t.commit(vec![a], vec![]).await;
    let options = "OPTIONS ('metadata_columns' '_row_id')";
    let sql = "SELECT map_keys(m) AS k, _row_id FROM t ORDER BY _row_id";
    let out = query_with(&metadata, options, sql).await.unwrap();
    assert_eq!(rows(&out), ["[a, b]|0", "[c]|1"], "{out}");
    let sql = "SELECT map_keys(m) AS k FROM t WHERE _row_id = 1";
    let out = query_with(&metadata, options, sql).await.unwrap();
    assert_eq!(rows(&out), ["[c]"], "{out}");
    // One partition (no round-robin between the projection and the scan, which DataFusion
    // does not push an expression through): the extraction moves into the scan.
    let config = datafusion::prelude::SessionConfig::new().with_target_partitions(1);
    let ctx =
        crate::fixture::with_iceberg(datafusion::prelude::SessionContext::new_with_config(config));
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{metadata}' {options}"
    ))
    .await
    .unwrap();
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
    assert!(
        plan.contains("projection=[map_keys(m@"),
        "the extraction is in the scan: {plan}"
    );
    // The keys only: one leaf of m, none for its values or v (Avro is row-oriented: its
    // records are decoded whole).
    if crate::DATA_FORMAT != iceberg::spec::DataFileFormat::Avro {
        assert!(plan.contains("leaves_decoded=1,"), "{plan}");
    }
}
