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

#[tokio::test]
async fn orc_and_avro_data_files_are_not_implemented() {
    let mut t = table();
    let orc = DataFileBuilder::default()
        .content(DataContentType::Data)
        .file_path("/nowhere/f.orc".to_string())
        .file_format(DataFileFormat::Orc)
        .record_count(1)
        .file_size_in_bytes(10)
        .partition(Struct::empty())
        .partition_spec_id(0)
        .build()
        .unwrap();
    let metadata = t.commit(vec![orc], vec![]).await;
    let err = error_of(&metadata).await;
    assert!(err.contains("'/nowhere/f.orc' is stored as orc"), "{err}");
    assert!(err.contains("not implemented"), "{err}");
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
