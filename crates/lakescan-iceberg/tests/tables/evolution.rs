//! Schema evolution (renames, reorders, promotion, drops, a dropped name re-added), partition
//! evolution (several specs in one table, each pruning its own files; a removed field becoming
//! `void`), and v1 / v3 table metadata, all written by the fixture builder and read from SQL.

use std::sync::Arc;

use arrow::array::{
    ArrayRef, Date32Array, Decimal128Array, Float32Array, Float64Array, Int32Array, Int64Array,
    StringArray,
};
use iceberg::spec::{
    FormatVersion, Literal, NestedField, PrimitiveType, Schema, Struct, Transform, Type,
};

use crate::fixture::Fixture;
use crate::position_deletes::{column, query_with};

fn field(id: i32, name: &str, t: PrimitiveType) -> Arc<NestedField> {
    Arc::new(NestedField::optional(id, name, Type::Primitive(t)))
}

/// Field 4, `amount decimal(precision, 2)`.
fn amount(precision: u32) -> Arc<NestedField> {
    field(
        4,
        "amount",
        PrimitiveType::Decimal {
            precision,
            scale: 2,
        },
    )
}

fn schema(fields: Vec<Arc<NestedField>>) -> Schema {
    Schema::builder().with_fields(fields).build().unwrap()
}

fn strings(v: &[Option<&str>]) -> ArrayRef {
    Arc::new(StringArray::from(v.to_vec()))
}

fn decimals(v: &[i128], precision: u8, scale: i8) -> ArrayRef {
    Arc::new(
        Decimal128Array::from(v.to_vec())
            .with_precision_and_scale(precision, scale)
            .unwrap(),
    )
}

async fn query(location: &str, sql: &str) -> String {
    crate::position_deletes::query(location, sql).await.unwrap()
}

fn lines(out: &str) -> Vec<&str> {
    out.lines().collect()
}

/// Schema 0 `(id int, name string, price float, amount decimal(5,2))`, then schema 1
/// renames `name` to `label`, promotes `id` to long, `price` to double and `amount` to
/// decimal(9,2), moves `price` last and adds `extra`; schema 2 drops `price` and adds a new
/// column named `price` (a new field id: the old files' prices are not its values).
#[tokio::test]
async fn schema_evolution_reads_every_file_by_field_id() {
    let s0 = schema(vec![
        field(1, "id", PrimitiveType::Int),
        field(2, "name", PrimitiveType::String),
        field(3, "price", PrimitiveType::Float),
        amount(5),
    ]);
    let mut t = Fixture::new(s0);
    let a = t.data_file(vec![
        ("id", 1, Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef),
        ("name", 2, strings(&[Some("a"), Some("b")])),
        ("price", 3, Arc::new(Float32Array::from(vec![1.5, 2.5]))),
        ("amount", 4, decimals(&[125, 350], 5, 2)),
    ]);
    t.commit(vec![a], vec![]).await;
    t.evolve_schema(schema(vec![
        field(1, "id", PrimitiveType::Long),
        field(2, "label", PrimitiveType::String),
        amount(9),
        field(3, "price", PrimitiveType::Double),
        field(5, "extra", PrimitiveType::Int),
    ]));
    let b = t.data_file(vec![
        (
            "id",
            1,
            Arc::new(Int64Array::from(vec![3_000_000_000, 4])) as ArrayRef,
        ),
        ("label", 2, strings(&[Some("c"), Some("d")])),
        ("amount", 4, decimals(&[123_456_789, 1], 9, 2)),
        ("price", 3, Arc::new(Float64Array::from(vec![3.25, 4.25]))),
        ("extra", 5, Arc::new(Int32Array::from(vec![Some(7), None]))),
    ]);
    let v2 = t.commit(vec![b], vec![]).await;

    let all = query(&v2, "SELECT * FROM t ORDER BY id").await;
    assert_eq!(
        lines(&all),
        [
            "+------------+-------+------------+-------+-------+",
            "| id         | label | amount     | price | extra |",
            "+------------+-------+------------+-------+-------+",
            "| 1          | a     | 1.25       | 1.5   |       |",
            "| 2          | b     | 3.50       | 2.5   |       |",
            "| 4          | d     | 0.01       | 4.25  |       |",
            "| 3000000000 | c     | 1234567.89 | 3.25  | 7     |",
            "+------------+-------+------------+-------+-------+",
        ],
        "{all}"
    );
    // Filters on promoted, renamed and added columns, over files of both schemas.
    for (sql, expected) in [
        ("SELECT id FROM t WHERE id > 2147483647", vec!["3000000000"]),
        ("SELECT id FROM t WHERE label = 'a'", vec!["1"]),
        (
            "SELECT id FROM t WHERE price > 2.0 ORDER BY id",
            vec!["2", "4", "3000000000"],
        ),
        (
            "SELECT id FROM t WHERE amount >= 3.5 ORDER BY id",
            vec!["2", "3000000000"],
        ),
        (
            "SELECT id FROM t WHERE extra IS NULL ORDER BY id",
            vec!["1", "2", "4"],
        ),
    ] {
        assert_eq!(column(&query(&v2, sql).await), expected, "{sql}");
    }

    // Time travel reads the snapshot's schema: the old name and types.
    let old = query_with(
        &v2,
        "OPTIONS ('snapshot_id' '1001')",
        "SELECT * FROM t ORDER BY id",
    )
    .await
    .unwrap();
    assert_eq!(
        lines(&old),
        [
            "+----+------+-------+--------+",
            "| id | name | price | amount |",
            "+----+------+-------+--------+",
            "| 1  | a    | 1.5   | 1.25   |",
            "| 2  | b    | 2.5   | 3.50   |",
            "+----+------+-------+--------+",
        ],
        "{old}"
    );
    let renamed = query_with(&v2, "OPTIONS ('snapshot_id' '1001')", "SELECT label FROM t")
        .await
        .unwrap_err()
        .to_string();
    assert!(renamed.contains("label"), "{renamed}");

    // Drop `price` (id 3) and add a new `price` (id 6): old files have a column named
    // `price`, but it is not this column.
    t.evolve_schema(schema(vec![
        field(1, "id", PrimitiveType::Long),
        field(2, "label", PrimitiveType::String),
        amount(9),
        field(5, "extra", PrimitiveType::Int),
        field(6, "price", PrimitiveType::String),
    ]));
    let c = t.data_file(vec![
        ("id", 1, Arc::new(Int64Array::from(vec![5])) as ArrayRef),
        ("label", 2, strings(&[Some("e")])),
        ("amount", 4, decimals(&[0], 9, 2)),
        ("extra", 5, Arc::new(Int32Array::from(vec![None::<i32>]))),
        ("price", 6, strings(&[Some("cheap")])),
    ]);
    let v3 = t.commit(vec![c], vec![]).await;
    let readded = query(&v3, "SELECT id, price FROM t ORDER BY id").await;
    assert_eq!(
        lines(&readded),
        [
            "+------------+-------+",
            "| id         | price |",
            "+------------+-------+",
            "| 1          |       |",
            "| 2          |       |",
            "| 4          |       |",
            "| 5          | cheap |",
            "| 3000000000 |       |",
            "+------------+-------+",
        ],
        "{readded}"
    );
    let sql = "SELECT id FROM t WHERE price IS NOT NULL";
    assert_eq!(column(&query(&v3, sql).await), ["5"]);
}

const JAN_5: i32 = 19727; // 2024-01-05
const FEB_10: i32 = 19763; // 2024-02-10
const JAN_20: i32 = 19742; // 2024-01-20
const MAR_1: i32 = 19783; // 2024-03-01
const MAR_15: i32 = 19797; // 2024-03-15
const MAR_20: i32 = 19802; // 2024-03-20
const MONTH_2024_01: i32 = 648; // months since 1970-01
const MONTH_2024_03: i32 = 650;

fn partition_columns(
    ids: &[i64],
    categories: &[&str],
    days: &[i32],
) -> Vec<(&'static str, i32, ArrayRef)> {
    vec![
        (
            "id",
            1,
            Arc::new(Int64Array::from(ids.to_vec())) as ArrayRef,
        ),
        (
            "category",
            2,
            Arc::new(StringArray::from(categories.to_vec())),
        ),
        ("d", 3, Arc::new(Date32Array::from(days.to_vec()))),
    ]
}

/// Spec 0 partitions by `category`; spec 1 by `month(d)` only. Each file is pruned by the
/// spec it was written with, and an equality delete of a spec-1 partition applies to that
/// partition only.
#[tokio::test]
async fn partition_evolution_prunes_each_file_by_its_own_spec() {
    let s = schema(vec![
        field(1, "id", PrimitiveType::Long),
        field(2, "category", PrimitiveType::String),
        field(3, "d", PrimitiveType::Date),
    ]);
    let mut t = Fixture::partitioned(s, vec![("category", "category", Transform::Identity)]);
    let a = t.data_file_in(
        Struct::from_iter([Some(Literal::string("a"))]),
        partition_columns(&[1, 2], &["a", "a"], &[JAN_5, FEB_10]),
    );
    let b = t.data_file_in(
        Struct::from_iter([Some(Literal::string("b"))]),
        partition_columns(&[3], &["b"], &[MAR_1]),
    );
    t.commit(vec![a, b], vec![]).await;
    t.evolve_partitioning(vec![("d", "d_month", Transform::Month)]);
    let jan = t.data_file_in(
        Struct::from_iter([Some(Literal::int(MONTH_2024_01))]),
        partition_columns(&[4], &["a"], &[JAN_20]),
    );
    let mar = t.data_file_in(
        Struct::from_iter([Some(Literal::int(MONTH_2024_03))]),
        partition_columns(&[5, 6], &["b", "a"], &[MAR_15, MAR_20]),
    );
    t.commit(vec![jan, mar], vec![]).await;
    // Deletes category 'a' in March 2024 (spec 1) only: not ids 1, 2 (spec 0) nor 4 (January).
    let delete = t.equality_delete_file_in(
        Struct::from_iter([Some(Literal::int(MONTH_2024_03))]),
        vec![2],
        vec![("category", 2, strings(&[Some("a")]))],
    );
    let metadata = t.commit(vec![], vec![delete]).await;

    for (sql, expected, pruned) in [
        (
            "SELECT id FROM t ORDER BY id",
            vec!["1", "2", "3", "4", "5"],
            0,
        ),
        (
            "SELECT id FROM t WHERE category = 'a' ORDER BY id",
            vec!["1", "2", "4"],
            1,
        ),
        (
            "SELECT id FROM t WHERE d >= DATE '2024-03-01' ORDER BY id",
            vec!["3", "5"],
            1,
        ),
        (
            "SELECT id FROM t WHERE d < DATE '2024-02-01' AND category = 'a' ORDER BY id",
            vec!["1", "4"],
            2,
        ),
    ] {
        assert_eq!(column(&query(&metadata, sql).await), expected, "{sql}");
        let plan = query(&metadata, &format!("EXPLAIN ANALYZE {sql}")).await;
        assert!(
            plan.contains(&format!("data_files_pruned={pruned},")),
            "{sql}: {plan}"
        );
    }
}

/// A v1 table whose partition field was removed: v1 keeps it as `void`, whose (null)
/// partition values neither prune files nor supply the column.
#[tokio::test]
async fn v1_table_with_a_void_partition_field() {
    let s = schema(vec![
        field(1, "id", PrimitiveType::Long),
        field(2, "category", PrimitiveType::String),
        field(3, "d", PrimitiveType::Date),
    ]);
    let mut t = Fixture::partitioned(s, vec![("category", "category", Transform::Identity)])
        .with_format_version(FormatVersion::V1);
    let a = t.data_file_in(
        Struct::from_iter([Some(Literal::string("x"))]),
        partition_columns(&[1, 2], &["x", "x"], &[JAN_5, FEB_10]),
    );
    let first = t.commit(vec![a], vec![]).await;
    t.evolve_partitioning(vec![("category", "category_1000", Transform::Void)]);
    let b = t.data_file_in(
        Struct::from_iter([None]),
        partition_columns(&[3, 4], &["x", "y"], &[MAR_1, MAR_15]),
    );
    let metadata = t.commit(vec![b], vec![]).await;
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&metadata).unwrap()).unwrap();
    assert_eq!(json["format-version"], 1);

    let sql = "SELECT id FROM t WHERE category = 'x' ORDER BY id";
    assert_eq!(column(&query(&metadata, sql).await), ["1", "2", "3"]);
    let sql = "SELECT category FROM t ORDER BY id";
    assert_eq!(column(&query(&metadata, sql).await), ["x", "x", "x", "y"]);
    let sql = "SELECT count(*) FROM t WHERE category = 'y'";
    assert_eq!(column(&query(&metadata, sql).await), ["1"]);
    // The first snapshot of a v1 table (no sequence numbers) by time travel.
    let sql = "SELECT id FROM t ORDER BY id";
    let old = query(&first, sql).await;
    assert_eq!(column(&old), ["1", "2"]);

    // `_partition` and `$files`: the void field keeps its id (1000), its newest name and the
    // type of its identity definition; files written after the drop have NULL there.
    let void = &json["partition-specs"][1]["fields"][0];
    assert_eq!(
        (&void["field-id"], &void["transform"]),
        (&1000.into(), &"void".into())
    );
    let out = query_with(
        &metadata,
        "OPTIONS ('metadata_columns' '_partition')",
        "SELECT id, _partition FROM t ORDER BY id",
    )
    .await
    .unwrap();
    assert_eq!(
        column(&out),
        [
            "1  | {category_1000: x}",
            "2  | {category_1000: x}",
            "3  | {category_1000: }",
            "4  | {category_1000: }"
        ],
        "{out}"
    );
    let ctx = crate::fixture::with_iceberg(datafusion::prelude::SessionContext::new());
    let table = lakescan_iceberg::IcebergTableBuilder::new("t", &metadata)
        .build(&ctx.state())
        .await
        .unwrap();
    let files = lakescan_iceberg::metadata_tables::IcebergMetadataTable::try_new(
        table,
        lakescan_iceberg::metadata_tables::MetadataTableKind::Files,
    )
    .unwrap();
    ctx.register_table("files", Arc::new(files)).unwrap();
    let batches = ctx
        .sql("SELECT spec_id, partition FROM files ORDER BY spec_id")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let out = arrow::util::pretty::pretty_format_batches(&batches)
        .unwrap()
        .to_string();
    assert_eq!(
        column(&out),
        [
            "0       | {category_1000: x}",
            "1       | {category_1000: }"
        ],
        "{out}"
    );
}

/// A v1 table takes no delete files.
#[tokio::test]
async fn v1_table_rejects_delete_files() {
    let s = schema(vec![field(1, "id", PrimitiveType::Long)]);
    let mut t = Fixture::new(s).with_format_version(FormatVersion::V1);
    let a = t.data_file(vec![(
        "id",
        1,
        Arc::new(Int64Array::from(vec![1])) as ArrayRef,
    )]);
    let delete = t.position_delete_file(vec![(a.file_path(), 0)]);
    let e = t.try_commit(vec![a], vec![delete]).await.unwrap_err();
    assert!(e.to_string().contains("v1"), "{e}");
}

/// A v3 table (row lineage: the metadata's `next-row-id`, snapshots' `first-row-id`) with a
/// deletion vector and an equality delete.
#[tokio::test]
async fn v3_table_with_deletion_vectors_and_equality_deletes() {
    let s = schema(vec![
        field(1, "id", PrimitiveType::Long),
        field(2, "category", PrimitiveType::String),
    ]);
    let mut t = Fixture::new(s).with_format_version(FormatVersion::V3);
    let cols = |ids: Vec<i64>, cats: Vec<&str>| {
        vec![
            ("id", 1, Arc::new(Int64Array::from(ids)) as ArrayRef),
            ("category", 2, Arc::new(StringArray::from(cats)) as ArrayRef),
        ]
    };
    let a = t.data_file(cols(vec![1, 2, 3, 4], vec!["p", "q", "p", "q"]));
    let a_path = a.file_path().to_string();
    t.commit(vec![a], vec![]).await;
    let b = t.data_file(cols(vec![5, 6], vec!["p", "q"]));
    t.commit(vec![b], vec![]).await;
    let dv = t.deletion_vector(&a_path, &a_path, &[0, 3]);
    let eq = t.equality_delete_file(vec![2], vec![("category", 2, strings(&[Some("q")]))]);
    let metadata = t.commit(vec![], vec![dv, eq]).await;
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&metadata).unwrap()).unwrap();
    assert_eq!(json["format-version"], 3);
    assert_eq!(json["next-row-id"], 6);
    assert_eq!(json["snapshots"][1]["first-row-id"], 4);

    let sql = "SELECT id FROM t ORDER BY id";
    assert_eq!(column(&query(&metadata, sql).await), ["3", "5"]);
    let plan = query(&metadata, &format!("EXPLAIN ANALYZE {sql}")).await;
    assert!(plan.contains("rows_deleted_vector=2"), "{plan}");
    assert!(plan.contains("rows_deleted_equality=2"), "{plan}");
}

/// Files written without field ids, in a table without a name mapping, are matched by
/// position as Java's fallback ids: top-level column k is field id k, whatever its name.
/// `name` (id 2) was dropped and re-added (id 3): the file's second column is not its
/// values, and `label` (id 2 renamed in the middle schema) never was either.
#[tokio::test]
async fn files_without_field_ids_are_matched_by_position() {
    let mut t = Fixture::new(schema(vec![
        field(1, "id", PrimitiveType::Long),
        field(2, "name", PrimitiveType::String),
    ]));
    let path = t.path().join("data").join("no_ids.parquet");
    let batch = arrow::array::RecordBatch::try_from_iter([
        (
            "legacy_key",
            Arc::new(Int64Array::from(vec![10, 20])) as ArrayRef,
        ),
        ("name", strings(&[Some("a"), Some("b")])),
    ])
    .unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&path).unwrap(),
        batch.schema(),
        None,
    )
    .unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    let file = t.existing_data_file(&path, Struct::empty());
    let metadata = t.commit(vec![file], vec![]).await;
    let out = query(&metadata, "SELECT id, name FROM t ORDER BY id").await;
    assert_eq!(column(&out), ["10 | a", "20 | b"], "{out}");
    t.evolve_schema(schema(vec![
        field(1, "id", PrimitiveType::Long),
        field(3, "name", PrimitiveType::String),
    ]));
    let metadata = t.commit(vec![], vec![]).await;
    let out = query(&metadata, "SELECT id, name FROM t ORDER BY id").await;
    assert_eq!(column(&out), ["10 |", "20 |"], "{out}");
}

/// A v3 struct column added with `initial-default: {}` (the only struct default the spec
/// allows): files written before it read a struct, not NULL, whose members read their own
/// `initial-default` (NULL without one).
#[tokio::test]
async fn struct_columns_with_an_empty_initial_default() {
    let id = field(1, "id", PrimitiveType::Long);
    let mut t = Fixture::new(schema(vec![id.clone()])).with_format_version(FormatVersion::V3);
    let a = t.data_file(vec![(
        "id",
        1,
        Arc::new(Int64Array::from(vec![1])) as ArrayRef,
    )]);
    t.commit(vec![a], vec![]).await;
    let members = iceberg::spec::StructType::new(vec![
        Arc::new(
            NestedField::optional(3, "a", Type::Primitive(PrimitiveType::Int))
                .with_initial_default(Literal::int(5)),
        ),
        field(4, "b", PrimitiveType::String),
    ]);
    let s = NestedField::optional(2, "s", Type::Struct(members))
        .with_initial_default(Literal::Struct(Struct::from_iter([None, None])));
    t.evolve_schema(schema(vec![id, Arc::new(s)]));
    let metadata = t.commit(vec![], vec![]).await;
    // As Java writes it.
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&metadata).unwrap()).unwrap();
    json["schemas"][1]["fields"][1]["initial-default"] = serde_json::json!({});
    std::fs::write(&metadata, json.to_string()).unwrap();
    let out = query(&metadata, "SELECT id, s, s['a'], s IS NULL FROM t").await;
    assert!(out.contains("| 1  | {a: 5, b: } | 5"), "{out}");
    assert!(out.contains("| false"), "{out}");
}

/// A v3 struct member added with an `initial-default` reads that default in files written
/// before it, but only where the struct itself is there: a NULL struct's member is NULL,
/// as it is in Java (DataFusion's `get_field` reads a member without its struct's nulls, so
/// the filled member must carry them).
#[tokio::test]
async fn a_defaulted_struct_member_is_null_where_its_struct_is() {
    use arrow::array::StructArray;
    use arrow::buffer::NullBuffer;
    use arrow::datatypes::{Field, Fields};
    use parquet::arrow::PARQUET_FIELD_ID_META_KEY;

    let id = field(1, "id", PrimitiveType::Long);
    let a = field(3, "a", PrimitiveType::Int);
    let before = NestedField::optional(
        2,
        "s",
        Type::Struct(iceberg::spec::StructType::new(vec![a.clone()])),
    );
    let mut t = Fixture::new(schema(vec![id.clone(), Arc::new(before)]))
        .with_format_version(FormatVersion::V3);
    let member = Field::new("a", arrow::datatypes::DataType::Int32, true)
        .with_metadata([(PARQUET_FIELD_ID_META_KEY.to_string(), "3".to_string())].into());
    let s = StructArray::new(
        Fields::from(vec![member]),
        vec![Arc::new(Int32Array::from(vec![Some(1), None, None])) as ArrayRef],
        Some(NullBuffer::from(vec![true, false, true])),
    );
    let file = t.data_file(vec![
        (
            "id",
            1,
            Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef,
        ),
        ("s", 2, Arc::new(s) as ArrayRef),
    ]);
    t.commit(vec![file], vec![]).await;
    let members = iceberg::spec::StructType::new(vec![
        a,
        Arc::new(
            NestedField::optional(4, "c", Type::Primitive(PrimitiveType::Int))
                .with_initial_default(Literal::int(7)),
        ),
    ]);
    t.evolve_schema(schema(vec![
        id,
        Arc::new(NestedField::optional(2, "s", Type::Struct(members))),
    ]));
    let metadata = t.commit(vec![], vec![]).await;
    let out = query(&metadata, "SELECT id, s, s['c'] FROM t ORDER BY id").await;
    assert_eq!(
        lines(&out)[3..6],
        [
            "| 1  | {a: 1, c: 7} | 7      |",
            "| 2  |              |        |",
            "| 3  | {a: , c: 7}  | 7      |",
        ],
        "{out}"
    );
    let sql = "SELECT id FROM t WHERE s['c'] = 7 ORDER BY id";
    assert_eq!(column(&query(&metadata, sql).await), ["1", "3"]);
    let sql = "SELECT id FROM t WHERE s['c'] IS NULL";
    assert_eq!(column(&query(&metadata, sql).await), ["2"]);
}

/// Iceberg v3 promotes `date` to `timestamp`: files written before read midnight of their
/// date, filters and manifest bounds (written as dates) included.
#[tokio::test]
async fn v3_date_promoted_to_timestamp() {
    let mut t = Fixture::new(schema(vec![
        field(1, "id", PrimitiveType::Long),
        field(2, "d", PrimitiveType::Date),
    ]))
    .with_format_version(FormatVersion::V3);
    let a = t.data_file_with_bounds(
        vec![
            ("id", 1, Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
            (
                "d",
                2,
                Arc::new(Date32Array::from(vec![19723, 19724])) as ArrayRef,
            ),
        ],
        vec![(
            2,
            iceberg::spec::Datum::date(19723),
            iceberg::spec::Datum::date(19724),
        )],
    );
    t.commit(vec![a], vec![]).await;
    t.evolve_schema(schema(vec![
        field(1, "id", PrimitiveType::Long),
        field(2, "d", PrimitiveType::Timestamp),
    ]));
    let metadata = t.commit(vec![], vec![]).await;
    let out = query(&metadata, "SELECT id, d FROM t ORDER BY id").await;
    assert_eq!(
        column(&out),
        ["1  | 2024-01-01T00:00:00", "2  | 2024-01-02T00:00:00"],
        "{out}"
    );
    let sql = "SELECT id FROM t WHERE d >= TIMESTAMP '2024-01-01 12:00:00'";
    assert_eq!(column(&query(&metadata, sql).await), ["2"]);
    let sql = "SELECT count(*) FROM t WHERE d > TIMESTAMP '2024-01-03 00:00:00'";
    assert_eq!(column(&query(&metadata, sql).await), ["0"]);
    // A manifest without its `schema` key: its 4-byte date bounds do not parse with the
    // current schema (timestamp); the older schema is tried.
    let manifest = std::fs::read_dir(t.path().join("metadata"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("m-1-data")
        })
        .unwrap();
    let bytes = std::fs::read(&manifest).unwrap();
    let mut header = lakescan_iceberg::plan::avro_header::AvroHeader::parse(&bytes).unwrap();
    assert!(header.metadata.remove("schema").is_some());
    header.metadata.remove("schema-id");
    std::fs::write(&manifest, header.rewrite(&bytes).unwrap()).unwrap();
    let sql = "SELECT id FROM t WHERE d >= TIMESTAMP '2024-01-01 12:00:00'";
    assert_eq!(column(&query(&metadata, sql).await), ["2"]);
    // A manifest written after the promotion (its `schema` says timestamp) that keeps the
    // file's 4-byte date bounds, as Java's merge-append copies EXISTING entries: read, its
    // bounds of `d` unused.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&metadata).unwrap()).unwrap();
    let current = json["schemas"][1].to_string();
    assert!(current.contains("timestamp"), "{current}");
    header
        .metadata
        .insert("schema".into(), current.into_bytes());
    header.metadata.insert("schema-id".into(), b"1".to_vec());
    std::fs::write(&manifest, header.rewrite(&bytes).unwrap()).unwrap();
    let sql = "SELECT id FROM t WHERE d >= TIMESTAMP '2024-01-01 12:00:00'";
    assert_eq!(column(&query(&metadata, sql).await), ["2"]);
}
