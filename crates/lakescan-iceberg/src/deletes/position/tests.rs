//! Decoding against the Java / Go golden files in `testdata/deletion-vectors`.

use std::path::PathBuf;

use object_store::local::LocalFileSystem;

use super::*;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/deletion-vectors")
}

fn golden(path: &str) -> Bytes {
    Bytes::from(std::fs::read(root().join(path)).unwrap())
}

fn positions(t: &RoaringTreemap) -> Vec<u64> {
    t.iter().collect()
}

const CORE: &str = "iceberg-core-dv-golden/deletes";

#[test]
fn java_deletion_vector_blobs_decode() {
    let empty = decode_deletion_vector(&golden(&format!("{CORE}/empty-position-index.bin")));
    assert!(empty.unwrap().is_empty());
    let small = golden(&format!(
        "{CORE}/small-alternating-values-position-index.bin"
    ));
    assert_eq!(
        positions(&decode_deletion_vector(&small).unwrap()),
        [1, 3, 5, 7, 9]
    );
    let large = golden(&format!("{CORE}/small-and-large-values-position-index.bin"));
    assert_eq!(
        positions(&decode_deletion_vector(&large).unwrap()),
        [100, 101, 2147483747, 2147483748]
    );
    let all = golden(&format!("{CORE}/all-container-types-position-index.bin"));
    let all = decode_deletion_vector(&all).unwrap();
    assert_eq!(all.len(), 132_561);
    assert_eq!(all.iter().take(4).collect::<Vec<_>>(), [5, 7, 65537, 65538]);
    assert_eq!(all.max(), Some(4295163902));
    assert!(all.contains(4294967306) && all.contains(4295032842));
}

#[test]
fn corrupt_blobs_are_rejected() {
    // Positions {1, 2}: a valid blob, then its CRC's low bit flipped.
    let hex = "00000024d1d33964010000000000000000000000\
               3a30000001000000000001001000000001000200712fa6e8";
    let valid: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let decoded = decode_deletion_vector(&Bytes::from(valid.clone())).unwrap();
    assert_eq!(positions(&decoded), [1, 2]);
    let mut bad_crc = valid.clone();
    *bad_crc.last_mut().unwrap() ^= 1;
    let err = decode_deletion_vector(&Bytes::from(bad_crc)).unwrap_err();
    assert!(err.contains("CRC"), "{err}");
    let mut bad_magic = valid.clone();
    bad_magic[4] = 0;
    let err = decode_deletion_vector(&Bytes::from(bad_magic)).unwrap_err();
    assert!(err.contains("magic"), "{err}");
    let mut bad_length = valid;
    bad_length[3] = 0x30;
    let err = decode_deletion_vector(&Bytes::from(bad_length)).unwrap_err();
    assert!(err.contains("length"), "{err}");
    // A bare portable bitmap is not a deletion vector.
    let err = decode_deletion_vector(&golden(&format!("{CORE}/64map32bitvals.bin"))).unwrap_err();
    assert!(err.contains("length") || err.contains("magic"), "{err}");
}

#[test]
fn portable_roaring_examples() {
    let read = |name: &str| portable_treemap(&golden(&format!("{CORE}/{name}")));
    assert!(read("64mapempty.bin").unwrap().is_empty());
    assert_eq!(
        positions(&read("64map32bitvals.bin").unwrap()),
        (0..10).collect::<Vec<_>>()
    );
    let spread = read("64mapspreadvals.bin").unwrap();
    assert_eq!(spread.len(), 100);
    assert!(spread.contains((9 << 32) | 9));
    let err = read("64maphighvals.bin").unwrap_err();
    assert!(err.contains("0xefbdbfef"), "{err}");
}

fn dv_file(path: &str, offset: u64, length: u64, record_count: u64) -> DeleteFile {
    // The manifest's size of the Puffin file (the golden files' own).
    let size = std::fs::metadata(root().join(path)).map_or(0, |m| m.len());
    delete_file(
        path,
        DeleteKind::DeletionVector { offset, length },
        record_count,
        size,
    )
}

/// The delete file at `path` of the local store, of `kind`.
fn delete_file(path: &str, kind: DeleteKind, record_count: u64, file_size: u64) -> DeleteFile {
    DeleteFile {
        written_path: path.to_string(),
        location: FileLocation {
            store: datafusion::execution::object_store::ObjectStoreUrl::local_filesystem(),
            path: object_store::path::Path::from(path),
        },
        kind,
        sequence_number: 1,
        spec_id: 0,
        unpartitioned: true,
        partition: iceberg::spec::Struct::empty(),
        referenced_data_file: None,
        referenced_written: None,
        record_count,
        file_size,
        format: Default::default(),
    }
}

async fn read(file: DeleteFile, data_written: &str) -> Result<RoaringTreemap> {
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(root()).unwrap());
    let paths = PathResolver::new(Some("/")).unwrap();
    let DeleteKind::DeletionVector { offset, length } = file.kind else {
        return internal_err!("not a deletion vector");
    };
    let target = paths.resolve(data_written)?;
    let cache = PositionDeleteCache::default();
    read_deletion_vector(
        &store,
        &paths,
        &cache,
        &file,
        (offset, length),
        &target,
        data_written,
        &ReadCounters::default(),
    )
    .await
}

#[tokio::test]
async fn puffin_files_are_checked_against_their_footer() {
    let multi = "iceberg-go-dv/table/dv/testdata/deletes/multi-blob-dv.puffin";
    let file_001 = "s3://warehouse/db/table/data/file-001.parquet";
    let file_002 = "s3://warehouse/db/table/data/file-002.parquet";
    let first = read(dv_file(multi, 4, 46, 3), file_001).await.unwrap();
    assert_eq!(positions(&first), [0, 100, 200]);
    let second = read(dv_file(multi, 50, 44, 2), file_002).await.unwrap();
    assert_eq!(positions(&second), [50, 150]);
    // The blob of file-001 read for file-002: the footer says whose it is.
    let err = read(dv_file(multi, 4, 46, 3), file_002)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("belongs to data file") && err.contains("file-001"),
        "{err}"
    );
    // Wrong length, wrong offset, wrong cardinality.
    let err = read(dv_file(multi, 4, 40, 3), file_001)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("length"), "{err}");
    let err = read(dv_file(multi, 8, 46, 3), file_001)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("no blob at offset 8"), "{err}");
    let err = read(dv_file(multi, 4, 46, 4), file_001)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("3 positions") && err.contains("says 4"),
        "{err}"
    );
    // A bare blob (no Puffin container) is rejected.
    let bare = "iceberg-core-dv-golden/deletes/small-alternating-values-position-index.bin";
    let err = read(dv_file(bare, 0, 50, 5), file_001)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a Puffin file"), "{err}");
}

#[test]
fn sorted_positions_build_the_bitmap_of_dense_sparse_and_far_blocks() {
    // Dense blocks (bitsets), sparse ones (pushed one by one), a block boundary, repeats,
    // and positions past 2^32 (a second treemap key).
    let mut expected: Vec<u64> = (0..200_000).filter(|p| p % 10 == 7).collect();
    expected.extend([
        BLOCK_ROWS * 5 - 1,
        BLOCK_ROWS * 5,
        BLOCK_ROWS * 9 + 3,
        (1 << 32) - 1,
        1 << 32,
        (1 << 32) + 70_000,
    ]);
    expected.extend((0..5_000).map(|p| (3 << 32) + p * 13));
    let mut built = SortedPositions::default();
    for p in &expected {
        built.push(*p);
        built.push(*p);
    }
    let bitmap = built.finish();
    assert_eq!(positions(&bitmap), expected);
    assert_eq!(bitmap, expected.iter().copied().collect::<RoaringTreemap>());
}

#[test]
fn positions_out_of_order_are_kept_too() {
    // Java's, Trino's and PyIceberg's readers index positions in bitmaps: order does not
    // matter to them, nor here.
    let mut built = SortedPositions::default();
    for p in [
        BLOCK_ROWS + 4,
        BLOCK_ROWS + 3,
        2,
        BLOCK_ROWS + 9,
        2,
        1 << 33,
        5,
    ] {
        built.push(p);
    }
    let expected = [
        2,
        5,
        BLOCK_ROWS + 3,
        BLOCK_ROWS + 4,
        BLOCK_ROWS + 9,
        1 << 33,
    ];
    assert_eq!(positions(&built.finish()), expected);
    assert!(SortedPositions::default().finish().is_empty());
}

/// A position-delete Parquet file of `rows` (`file_path`, `pos`), in an in-memory store.
async fn position_delete_file(store: &Arc<dyn ObjectStore>, rows: &[(&str, i64)]) -> DeleteFile {
    let rows: Vec<(Option<&str>, i64)> = rows.iter().map(|(p, q)| (Some(*p), *q)).collect();
    position_delete_file_of(store, &rows).await
}

/// The same with paths that may be NULL.
async fn position_delete_file_of(
    store: &Arc<dyn ObjectStore>,
    rows: &[(Option<&str>, i64)],
) -> DeleteFile {
    use arrow::array::{Int64Array, RecordBatch, StringArray};
    use arrow::datatypes::{Field, Schema};
    let with_id = |field: Field, id: i32| {
        field.with_metadata([("PARQUET:field_id".to_string(), id.to_string())].into())
    };
    let schema = Arc::new(Schema::new(vec![
        with_id(Field::new("file_path", DataType::Utf8, true), FILE_PATH_ID),
        with_id(Field::new("pos", DataType::Int64, false), POS_ID),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter(rows.iter().map(|(p, _)| *p))),
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|(_, q)| *q))),
    ];
    let batch = RecordBatch::try_new(Arc::clone(&schema), columns).unwrap();
    let mut bytes = Vec::new();
    let mut writer = parquet::arrow::ArrowWriter::try_new(&mut bytes, schema, None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    let size = bytes.len() as u64;
    let path = "deletes/pos.parquet";
    object_store::ObjectStoreExt::put(store.as_ref(), &path.into(), bytes.into())
        .await
        .unwrap();
    delete_file(path, DeleteKind::Position, rows.len() as u64, size)
}

#[tokio::test]
async fn position_delete_rows_out_of_order_delete_the_same_rows() {
    // Sorted by neither file_path nor pos, with a repeat: as Java's, Trino's and PyIceberg's
    // readers read such a file, every listed row is deleted.
    let store: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
    let rows = [
        ("/t/a.parquet", 5),
        ("/t/a.parquet", 2),
        ("/t/b.parquet", 0),
        ("file:///t/a.parquet", 9),
        ("/t/b.parquet", 7),
        ("/t/a.parquet", 2),
    ];
    let file = position_delete_file(&store, &rows).await;
    let paths = PathResolver::new(Some("/")).unwrap();
    let by_file = read_position_deletes(&store, &paths, &file, &ReadCounters::default())
        .await
        .unwrap();
    let a = paths.resolve("/t/a.parquet").unwrap();
    let b = paths.resolve("/t/b.parquet").unwrap();
    assert_eq!(by_file.len(), 2);
    assert_eq!(positions(&by_file[&a]), [2, 5, 9]);
    assert_eq!(positions(&by_file[&b]), [0, 7]);
}

#[tokio::test]
async fn rows_without_a_path_delete_nothing() {
    // Impala's hand-made delete files of its `iceberg_v2_null_delete_record` table: the spec
    // requires a path, and Java's, PyIceberg's and Impala's readers skip a row without one.
    let store: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
    let rows = [
        (None, 0),
        (Some("/t/a.parquet"), 1),
        (None, 2),
        (Some("/t/a.parquet"), 3),
        (None, 7),
    ];
    let file = position_delete_file_of(&store, &rows).await;
    let paths = PathResolver::new(Some("/")).unwrap();
    let by_file = read_position_deletes(&store, &paths, &file, &ReadCounters::default())
        .await
        .unwrap();
    let a = paths.resolve("/t/a.parquet").unwrap();
    assert_eq!(by_file.len(), 1);
    assert_eq!(positions(&by_file[&a]), [1, 3]);
}
