//! Statistics only in the deprecated `min`/`max` fields, as parquet-mr before 1.10 (Hive,
//! Spark 2) wrote them: found by signed comparison, so for strings and unsigned integers
//! they can exclude values the row group holds. They prune nothing for those types (as in
//! parquet-java); for signed types they still do.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use arrow::array::{AsArray, Int64Array, RecordBatch, StringArray, UInt32Array};
use arrow::datatypes::{DataType, Field, Int64Type, Schema};
use bytes::Bytes;
use datafusion::prelude::SessionContext;
use lakescan_hive::HiveTableBuilder;
use parquet::arrow::ArrowWriter;
use parquet::data_type::ByteArray;
use parquet::file::metadata::{ParquetMetaDataReader, ParquetMetaDataWriter};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::statistics::Statistics;

/// Row group 0 holds `("a", 1, 10)` and `("é", 3 000 000 000, 20)`, row group 1 `("b", 5,
/// 30)` and `("c", 6, 40)` (columns `s`, `u` UINT32, `i`). Each chunk's statistics are
/// replaced by deprecated ones, ordered as old writers ordered them: bytes and 32 bits signed
/// (`"é"` = C3 A9 below `"a"`, 3 000 000 000 below 1).
fn write_old_file(path: &Path) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("s", DataType::Utf8, false),
        Field::new("u", DataType::UInt32, false),
        Field::new("i", DataType::Int64, false),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(StringArray::from(vec!["a", "é", "b", "c"])),
            Arc::new(UInt32Array::from(vec![1, 3_000_000_000, 5, 6])),
            Arc::new(Int64Array::from(vec![10, 20, 30, 40])),
        ],
    )
    .unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(2))
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .build();
    let mut written = vec![];
    let mut writer = ArrowWriter::try_new(&mut written, schema, Some(props)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();

    let bytes = Bytes::from(written);
    let metadata = ParquetMetaDataReader::new()
        .parse_and_finish(&bytes)
        .unwrap();
    let footer = 8
        + u32::from_le_bytes(bytes[bytes.len() - 8..bytes.len() - 4].try_into().unwrap()) as usize;
    let strings = |min: &str, max: &str| {
        let (min, max) = (ByteArray::from(min), ByteArray::from(max));
        Statistics::byte_array(Some(min), Some(max), None, Some(0), true)
    };
    let old_stats = |group: usize, column: usize| match (group, column) {
        (0, 0) => strings("é", "a"),
        (1, 0) => strings("b", "c"),
        (0, 1) => Statistics::int32(Some(-1_294_967_296), Some(1), None, Some(0), true),
        (1, 1) => Statistics::int32(Some(5), Some(6), None, Some(0), true),
        (0, _) => Statistics::int64(Some(10), Some(20), None, Some(0), true),
        _ => Statistics::int64(Some(30), Some(40), None, Some(0), true),
    };
    let mut builder = metadata.into_builder();
    let groups = builder
        .take_row_groups()
        .into_iter()
        .enumerate()
        .map(|(g, group)| {
            let columns = group
                .columns()
                .iter()
                .enumerate()
                .map(|(c, chunk)| {
                    chunk
                        .clone()
                        .into_builder()
                        .set_statistics(old_stats(g, c))
                        .build()
                        .unwrap()
                })
                .collect();
            group
                .into_builder()
                .set_column_metadata(columns)
                .build()
                .unwrap()
        })
        .collect();
    let metadata = builder.set_row_groups(groups).build();
    let mut file = bytes[..bytes.len() - footer].to_vec();
    ParquetMetaDataWriter::new(&mut file, &metadata)
        .finish()
        .unwrap();
    std::fs::write(path, file).unwrap();
}

async fn count(ctx: &SessionContext, filter: &str) -> i64 {
    let sql = format!("SELECT count(*) FROM t WHERE {filter}");
    let batches = ctx.sql(&sql).await.unwrap().collect().await.unwrap();
    batches[0].column(0).as_primitive::<Int64Type>().value(0)
}

/// The scan's `row_groups_pruned_statistics` for `filter`.
async fn pruned(ctx: &SessionContext, filter: &str) -> String {
    let sql = format!("EXPLAIN ANALYZE SELECT count(*) FROM t WHERE {filter}");
    let batches = ctx.sql(&sql).await.unwrap().collect().await.unwrap();
    let plan = arrow::util::pretty::pretty_format_batches(&batches)
        .unwrap()
        .to_string();
    let at = plan
        .find("row_groups_pruned_statistics=")
        .unwrap_or_else(|| panic!("no statistics metric in {plan}"));
    plan[at..]
        .split([',', ' ', ']'])
        .next()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn deprecated_byte_array_and_unsigned_statistics_prune_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    std::fs::create_dir(&dir).unwrap();
    write_old_file(&dir.join("old.parquet"));
    let ctx = SessionContext::new();
    let table = HiveTableBuilder::new("t", dir.to_str().unwrap())
        .build(&ctx.state())
        .await
        .unwrap();
    ctx.register_table("t", Arc::new(table)).unwrap();

    // The file reads back as written.
    assert_eq!(count(&ctx, "TRUE").await, 4);
    // Each would drop row 0's group by its signed-order bounds.
    assert_eq!(count(&ctx, "s = 'é'").await, 1);
    assert_eq!(count(&ctx, "s > 'b'").await, 2);
    assert_eq!(count(&ctx, "u = 1").await, 1);
    assert_eq!(count(&ctx, "u > 2000000000").await, 1);
    assert_eq!(
        pruned(&ctx, "s = 'é'").await,
        "row_groups_pruned_statistics=0"
    );
    // Signed integers' deprecated statistics are in their order and still prune.
    assert_eq!(count(&ctx, "i = 20").await, 1);
    assert_eq!(count(&ctx, "i > 25").await, 2);
    assert_eq!(
        pruned(&ctx, "i > 25").await,
        "row_groups_pruned_statistics=1"
    );
}
