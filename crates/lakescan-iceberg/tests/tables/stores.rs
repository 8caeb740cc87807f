//! Data and delete files of one table in several object stores of the same scheme (two
//! buckets): every file is read from its own store.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array};
use arrow::util::pretty::pretty_format_batches;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::prelude::SessionContext;
use iceberg::spec::{DataFile, DataFileBuilder, Struct};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};

use crate::position_deletes::{column, table};

fn longs(values: impl IntoIterator<Item = i64>) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(values))
}

/// `file` moved into `store` (at `url`) under `name`: the same entry, another path.
async fn moved(file: &DataFile, store: &InMemory, url: &str, name: &str) -> DataFile {
    let bytes = std::fs::read(file.file_path()).unwrap();
    store.put(&Path::from(name), bytes.into()).await.unwrap();
    let mut b = DataFileBuilder::default();
    b.content(file.content_type())
        .file_path(format!("{url}/{name}"))
        .file_format(file.file_format())
        .record_count(file.record_count())
        .file_size_in_bytes(file.file_size_in_bytes())
        .partition(Struct::empty())
        .partition_spec_id(0)
        .referenced_data_file(file.referenced_data_file());
    b.build().unwrap()
}

#[tokio::test]
async fn files_in_several_buckets_are_each_read_from_their_own() {
    let (bucket_a, bucket_b) = (InMemory::new(), InMemory::new());
    let mut t = table();
    let local = t.data_file(vec![("v", 1, longs(0..3))]);
    let far = t.data_file(vec![("v", 1, longs(10..13))]);
    let far = moved(&far, &bucket_a, "memory://bucket-a", "data/f.parquet").await;
    // A position delete of the local file (rows 0 and 2) stored in a third bucket.
    let deletes = t.position_delete_file(vec![(local.file_path(), 0), (local.file_path(), 2)]);
    let deletes = moved(
        &deletes,
        &bucket_b,
        "memory://bucket-b",
        "deletes/d.parquet",
    )
    .await;
    t.commit(vec![local, far], vec![]).await;
    let metadata = t.commit(vec![], vec![deletes]).await;

    let ctx = crate::fixture::with_iceberg(SessionContext::new());
    for (url, store) in [
        ("memory://bucket-a", bucket_a),
        ("memory://bucket-b", bucket_b),
    ] {
        let url = ObjectStoreUrl::parse(url).unwrap();
        let store: Arc<dyn ObjectStore> = Arc::new(store);
        ctx.register_object_store(url.as_ref(), store);
    }
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{metadata}'"
    ))
    .await
    .unwrap();
    let batches = ctx
        .sql("SELECT v FROM t ORDER BY v")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let out = pretty_format_batches(&batches).unwrap().to_string();
    assert_eq!(column(&out), ["1", "10", "11", "12"], "{out}");
}
