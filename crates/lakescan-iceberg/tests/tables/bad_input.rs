//! Bad input: each a clear error naming the file and the problem, never rows.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array};
use datafusion::execution::memory_pool::GreedyMemoryPool;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use iceberg::spec::{DataContentType, DataFileBuilder, DataFileFormat, Struct};

use crate::fixture::Fixture;
use crate::position_deletes::{query, table};

fn longs(values: impl IntoIterator<Item = i64>) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(values))
}

async fn error_of(metadata: &str) -> String {
    query(metadata, "SELECT v FROM t")
        .await
        .unwrap_err()
        .to_string()
}

/// A table with one committed data file; returns it and the file's path.
async fn one_file() -> (Fixture, String, String) {
    let mut t = table();
    let a = t.data_file(vec![("v", 1, longs(0..3))]);
    let path = a.file_path().to_string();
    let metadata = t.commit(vec![a], vec![]).await;
    (t, path, metadata)
}

#[tokio::test]
async fn missing_data_and_delete_files() {
    let (_t, path, metadata) = one_file().await;
    std::fs::remove_file(&path).unwrap();
    let err = error_of(&metadata).await;
    // Named as the manifest wrote it (an absolute path), not as an object store key.
    assert!(err.contains(&format!("'{path}'")), "{err}");

    let (mut t, path, _) = one_file().await;
    let deletes = t.position_delete_file(vec![(path.as_str(), 1)]);
    let deletes_path = deletes.file_path().to_string();
    let metadata = t.commit(vec![], vec![deletes]).await;
    std::fs::remove_file(&deletes_path).unwrap();
    let err = error_of(&metadata).await;
    assert!(err.contains(&deletes_path), "{err}");
}

#[tokio::test]
async fn missing_and_corrupt_manifests() {
    let (t, _, metadata) = one_file().await;
    let manifest = t.path().join("metadata/m-1-data-0.avro");
    std::fs::write(&manifest, b"not avro at all").unwrap();
    let err = error_of(&metadata).await;
    assert!(
        err.contains("m-1-data-0.avro") && err.contains("not a valid Avro manifest"),
        "{err}"
    );
    std::fs::remove_file(&manifest).unwrap();
    let err = error_of(&metadata).await;
    assert!(
        err.contains("m-1-data-0.avro") && err.contains("does not exist"),
        "{err}"
    );
}

#[tokio::test]
async fn an_equality_key_no_schema_has() {
    let (mut t, _, _) = one_file().await;
    let delete = t.equality_delete_file(vec![99], vec![("x", 99, longs([1]))]);
    let metadata = t.commit(vec![], vec![delete]).await;
    let err = error_of(&metadata).await;
    assert!(err.contains("field id 99, which no schema"), "{err}");
}

/// Missing ORC data files and ORC or Avro delete files are errors naming them (read in
/// their own format, never as Parquet, never ignored).
#[tokio::test]
async fn missing_orc_and_avro_files() {
    let mut t = table();
    let described = |content, path: &str, format| {
        DataFileBuilder::default()
            .content(content)
            .file_path(path.to_string())
            .file_format(format)
            .record_count(1)
            .file_size_in_bytes(10)
            .partition(Struct::empty())
            .partition_spec_id(0)
            .build()
            .unwrap()
    };
    let orc = described(DataContentType::Data, "/nowhere/f.orc", DataFileFormat::Orc);
    let metadata = t.commit(vec![orc], vec![]).await;
    let err = error_of(&metadata).await;
    assert!(
        err.contains("cannot read ORC file '/nowhere/f.orc'"),
        "{err}"
    );
    for format in [DataFileFormat::Orc, DataFileFormat::Avro] {
        let mut t = table();
        let deletes = described(DataContentType::PositionDeletes, "/nowhere/d", format);
        let data = t.data_file(vec![("v", 1, longs([1]))]);
        let metadata = t.commit(vec![data], vec![deletes]).await;
        let err = error_of(&metadata).await;
        let named = match format {
            DataFileFormat::Orc => "cannot read ORC file '/nowhere/d'",
            _ => "cannot read Avro file '/nowhere/d'",
        };
        assert!(err.contains(named), "{err}");
    }
}

/// The key set of equality deletes is reserved in the memory pool: a limit fails the query
/// with ResourcesExhausted instead of growing past it.
#[tokio::test]
async fn equality_keys_respect_the_memory_limit() {
    let mut t = table();
    let a = t.data_file(vec![("v", 1, longs(0..10))]);
    t.commit(vec![a], vec![]).await;
    let delete = t.equality_delete_file(vec![1], vec![("v", 1, longs(0..20_000))]);
    let metadata = t.commit(vec![], vec![delete]).await;
    let runtime = RuntimeEnvBuilder::new()
        .with_memory_pool(Arc::new(GreedyMemoryPool::new(64 * 1024)))
        .build_arc()
        .unwrap();
    let ctx = crate::fixture::with_iceberg(SessionContext::new_with_config_rt(
        SessionConfig::new(),
        runtime,
    ));
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{metadata}'"
    ))
    .await
    .unwrap();
    let err = ctx
        .sql("SELECT v FROM t")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("Resources exhausted"), "{text}");
    assert!(text.contains("lakescan equality-delete keys"), "{text}");
}

/// A deletion vector must name its data file (`referenced_data_file`): one without is an
/// error naming it, not a delete applied to every file it might fit.
#[tokio::test]
async fn a_deletion_vector_without_its_data_file_is_an_error() {
    let (mut t, path, _) = one_file().await;
    let dv = t.deletion_vector(&path, &path, &[1]);
    let mut bare = DataFileBuilder::default();
    bare.content(DataContentType::PositionDeletes)
        .file_path(dv.file_path().to_string())
        .file_format(DataFileFormat::Puffin)
        .record_count(dv.record_count())
        .file_size_in_bytes(dv.file_size_in_bytes())
        .partition(Struct::empty())
        .partition_spec_id(0)
        .content_offset(dv.content_offset())
        .content_size_in_bytes(dv.content_size_in_bytes());
    let metadata = t.commit(vec![], vec![bare.build().unwrap()]).await;
    let err = error_of(&metadata).await;
    assert!(
        err.contains(&format!("delete file '{}'", dv.file_path()))
            && err.contains("is a deletion vector without referenced_data_file"),
        "{err}"
    );
}

/// A snapshot holds at most one deletion vector per data file: two are an error naming
/// both, never the rows of one of them.
#[tokio::test]
async fn two_deletion_vectors_for_one_data_file_are_an_error() {
    let (mut t, path, _) = one_file().await;
    let first = t.deletion_vector(&path, &path, &[0]);
    let second = t.deletion_vector(&path, &path, &[2]);
    let (a, b) = (
        first.file_path().to_string(),
        second.file_path().to_string(),
    );
    let metadata = t.commit(vec![], vec![first, second]).await;
    let err = error_of(&metadata).await;
    assert!(
        err.contains(&format!(
            "two deletion vectors for one data file ('{a}' and '{b}', both of '{path}')"
        )),
        "{err}"
    );
}

/// Partition summaries whose bounds do not decode say nothing: the manifest is kept, not
/// taken for one whose values are all NULL.
#[tokio::test]
async fn undecodable_partition_summaries_keep_the_manifest() {
    use arrow::array::TimestampMicrosecondArray;
    use iceberg::spec::{
        FormatVersion, Literal, ManifestList, ManifestListWriter, NestedField, PrimitiveType,
        Schema, Transform, Type,
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
                "ts",
                Type::Primitive(PrimitiveType::Timestamp),
            )),
        ])
        .build()
        .unwrap();
    let mut t = Fixture::partitioned(schema, vec![("ts", "ts_day", Transform::Day)]);
    let day = 19723_i64 * 86_400_000_000;
    let ts = |v: Vec<Option<i64>>| Arc::new(TimestampMicrosecondArray::from(v)) as ArrayRef;
    let a = t.data_file_in(
        Struct::from_iter([Some(Literal::date(19723))]),
        vec![("v", 1, longs([1])), ("ts", 2, ts(vec![Some(day)]))],
    );
    let b = t.data_file_in(
        Struct::from_iter([None]),
        vec![("v", 1, longs([2])), ("ts", 2, ts(vec![None]))],
    );
    let metadata = t.commit(vec![a, b], vec![]).await;
    // Rewrite the manifest list with bounds of two bytes (a day is four).
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&metadata).unwrap()).unwrap();
    let list = json["snapshots"][0]["manifest-list"].as_str().unwrap();
    let bytes = std::fs::read(list).unwrap();
    let mut manifests: Vec<_> = ManifestList::parse_with_version(&bytes, FormatVersion::V2)
        .unwrap()
        .consume_entries()
        .into_iter()
        .collect();
    let summary = &mut manifests[0].partitions.as_mut().unwrap()[0];
    assert!(summary.contains_null);
    summary.lower_bound = Some(iceberg::spec::ByteBuf::from(vec![1, 2]));
    summary.upper_bound = Some(iceberg::spec::ByteBuf::from(vec![1, 2]));
    let io = iceberg::io::FileIO::new_with_fs();
    let out = io.new_output(list).unwrap().writer().await.unwrap();
    let mut writer = ManifestListWriter::v2(out, 1001, None, 1);
    writer.add_manifests(manifests.into_iter()).unwrap();
    writer.close().await.unwrap();
    let sql = "SELECT v FROM t WHERE ts >= TIMESTAMP '2024-01-01 00:00:00'";
    let out = query(&metadata, sql).await.unwrap();
    assert_eq!(crate::position_deletes::column(&out), ["1"], "{out}");
}

/// A table of one Avro data file holding `v` as written by `values`.
async fn one_avro_file(values: ArrayRef) -> (tempfile::TempDir, String, String) {
    use iceberg::spec::{NestedField, PrimitiveType, Schema, Type};
    let dir = tempfile::tempdir().unwrap();
    let schema = Schema::builder()
        .with_fields(vec![Arc::new(NestedField::optional(
            1,
            "v",
            Type::Primitive(PrimitiveType::Long),
        ))])
        .build()
        .unwrap();
    let mut t = lakescan_iceberg_writer::TableWriter::partitioned(dir.path(), schema, vec![])
        .unwrap()
        .with_data_format(DataFileFormat::Avro);
    let a = t.data_file(vec![("v", 1, values)]).unwrap();
    let path = a.file_path().to_string();
    let metadata = t.commit(vec![a], vec![]).await.unwrap();
    (dir, path, metadata)
}

/// Avro data files: a corrupt block, a column stored in a type that does not read as the
/// table's, a file that is not Avro — each an error naming the file, no rows.
#[tokio::test]
async fn bad_avro_data_files() {
    // The last block's sync marker overwritten (the file keeps its size).
    let (_dir, path, metadata) = one_avro_file(longs(0..100)).await;
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - 16..].copy_from_slice(&[0u8; 16]);
    std::fs::write(&path, &bytes).unwrap();
    let err = error_of(&metadata).await;
    assert!(
        err.contains(&format!("cannot read Avro file '{path}'")) && err.contains("sync marker"),
        "{err}"
    );
    // Strings where the table has BIGINT.
    let strings: ArrayRef = Arc::new(arrow::array::StringArray::from(vec!["a", "b"]));
    let (_dir, path, metadata) = one_avro_file(strings).await;
    let err = error_of(&metadata).await;
    assert!(err.contains(&path) && err.contains("'v'"), "{err}");
    // Not an Avro file at all (same size).
    let (_dir, path, metadata) = one_avro_file(longs(0..10)).await;
    let size = std::fs::metadata(&path).unwrap().len() as usize;
    std::fs::write(&path, vec![b'x'; size]).unwrap();
    let err = error_of(&metadata).await;
    assert!(
        err.contains(&format!("cannot read Avro file '{path}'"))
            && err.contains("not an Avro object container file"),
        "{err}"
    );
}
