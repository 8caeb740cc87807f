#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::ScalarValue;
use datafusion::common::stats::Precision;
use datafusion::logical_expr::Operator;
use datafusion::physical_expr::expressions::{binary, col, lit};
use datafusion::prelude::SessionContext;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::arrow::ArrowWriter;

use super::*;
use crate::format::PageIndex;
use crate::handle::ColumnHandle;
use crate::split::FileFormat;

/// `a` (regular, 0..1000 or 1000..2000) and `p` (a partition column).
fn table() -> TableHandle {
    let a = ColumnHandle::regular(&Field::new("a", DataType::Int64, true));
    let p = ColumnHandle::with_role(
        &Field::new("p", DataType::Int32, true),
        ColumnRole::PartitionKey,
    );
    TableHandle::try_new("t", vec![a, p]).unwrap()
}

fn write(dir: &std::path::Path, name: &str, values: std::ops::Range<i64>) {
    let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, true)]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![Arc::new(Int64Array::from_iter_values(values))],
    )
    .unwrap();
    let file = std::fs::File::create(dir.join(name)).unwrap();
    let mut writer = ArrowWriter::try_new(file, schema, None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

async fn files_of(store: &Arc<dyn ObjectStore>, names: &[&str]) -> Vec<ObjectMeta> {
    let mut metas = vec![];
    for name in names {
        metas.push(store.head(&Path::from(*name)).await.unwrap());
    }
    metas
}

#[tokio::test]
async fn footers_give_rows_and_bounds_and_filters_narrow_them() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f1.parquet", 0..1000);
    write(dir.path(), "f2.parquet", 1000..2000);
    let store: Arc<dyn ObjectStore> =
        Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let ctx = SessionContext::new();
    let state = ctx.state();
    let table = table();
    let files = files_of(&store, &["f1.parquet", "f2.parquet"]).await;
    let scope = TableReference::bare("t");
    let per_file = file_statistics(
        &state,
        &store,
        &scope,
        &data_schema(&table),
        &files,
        PageIndex::NotWanted,
        FileFormat::Parquet,
    )
    .await
    .unwrap();
    assert_eq!(per_file.len(), 2);

    // Unfiltered: the exact row count, the bounds of both files (estimates only); `p`
    // unknown.
    let all = ScanStatistics::try_new(&table, &per_file, &[], RowCount::Exact).unwrap();
    let outputs = Assignments::new(vec![0, 1]).resolve(&table).unwrap();
    let schema = table.table_schema();
    let stats = all.of_outputs(&outputs, schema, None).unwrap();
    assert_eq!(stats.num_rows, Precision::Exact(2000));
    let a = &stats.column_statistics[0];
    assert_eq!(a.min_value, Precision::Inexact(ScalarValue::Int64(Some(0))));
    assert_eq!(
        a.max_value,
        Precision::Inexact(ScalarValue::Int64(Some(1999)))
    );
    assert_eq!(stats.column_statistics[1].min_value, Precision::Absent);
    // A limit caps the count; rows dropped by the scan make it an estimate.
    let capped = all.of_outputs(&outputs, schema, Some(10)).unwrap();
    assert_eq!(capped.num_rows, Precision::Exact(10));
    let dropped = ScanStatistics::try_new(&table, &per_file, &[], RowCount::Estimated).unwrap();
    let dropped = dropped.of_outputs(&outputs, schema, None).unwrap();
    assert_eq!(dropped.num_rows, Precision::Inexact(2000));

    // `a < 100`: a twentieth of the range, by interval analysis over the bounds.
    let a_below_100 = binary(col("a", schema).unwrap(), Operator::Lt, lit(100i64), schema);
    let filtered =
        ScanStatistics::try_new(&table, &per_file, &[a_below_100.unwrap()], RowCount::Exact)
            .unwrap();
    let only_a = Assignments::new(vec![0]).resolve(&table).unwrap();
    let narrow = Schema::new(vec![schema.field(0).clone()]);
    let stats = filtered.of_outputs(&only_a, &narrow, None).unwrap();
    assert_eq!(stats.num_rows, Precision::Inexact(100));
    assert_eq!(stats.total_byte_size, Precision::Inexact(800));

    // A filter interval analysis cannot read: DataFusion's default share (20 %).
    let modulo = binary(
        col("a", schema).unwrap(),
        Operator::Modulo,
        lit(7i64),
        schema,
    );
    let odd = binary(modulo.unwrap(), Operator::Eq, lit(1i64), schema).unwrap();
    let filtered = ScanStatistics::try_new(&table, &per_file, &[odd], RowCount::Exact).unwrap();
    let stats = filtered.of_outputs(&only_a, &narrow, None).unwrap();
    assert_eq!(stats.num_rows, Precision::Inexact(400));
}

#[tokio::test]
async fn a_file_rewritten_since_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.parquet", 0..1000);
    let store: Arc<dyn ObjectStore> =
        Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let ctx = SessionContext::new();
    let state = ctx.state();
    let table = table();
    let scope = TableReference::bare("t");
    let schema = data_schema(&table);
    let first = files_of(&store, &["f.parquet"]).await;
    let before = file_statistics(
        &state,
        &store,
        &scope,
        &schema,
        &first,
        PageIndex::NotWanted,
        FileFormat::Parquet,
    )
    .await
    .unwrap();
    assert_eq!(before[0].num_rows, Precision::Exact(1000));
    write(dir.path(), "f.parquet", 0..10);
    let second = files_of(&store, &["f.parquet"]).await;
    let after = file_statistics(
        &state,
        &store,
        &scope,
        &schema,
        &second,
        PageIndex::NotWanted,
        FileFormat::Parquet,
    )
    .await
    .unwrap();
    assert_eq!(after[0].num_rows, Precision::Exact(10));
}

#[test]
fn a_column_spanning_the_whole_integer_range_is_estimated_without_its_bounds() {
    // Writers keep i64::MIN and i64::MAX as sentinels: 2^64 values overflow the interval
    // analysis' count (a panic in debug builds), here and in a FilterExec above the scan.
    let table = table();
    let bound = |v: i64| Precision::Exact(ScalarValue::Int64(Some(v)));
    let merged = Statistics {
        num_rows: Precision::Exact(4),
        total_byte_size: Precision::Absent,
        column_statistics: vec![ColumnStatistics {
            min_value: bound(i64::MIN),
            max_value: bound(i64::MAX),
            ..ColumnStatistics::new_unknown()
        }],
    };
    let schema = table.table_schema();
    let positive = binary(col("a", schema).unwrap(), Operator::Gt, lit(0i64), schema).unwrap();
    let filtered = ScanStatistics::from_merged(&table, merged, &[positive], RowCount::Exact);
    let outputs = Assignments::new(vec![0, 1]).resolve(&table).unwrap();
    let stats = filtered.of_outputs(&outputs, schema, None).unwrap();
    assert_eq!(stats.column_statistics[0].min_value, Precision::Absent);
    // Without bounds the analysis cannot narrow the four rows.
    assert_eq!(stats.num_rows, Precision::Inexact(4));

    // Timestamps count as integers (Impala's int64_timestamps_nano.parquet).
    let nanos = |v: i64| Precision::Exact(ScalarValue::TimestampNanosecond(Some(v), None));
    let column = ColumnStatistics {
        min_value: nanos(i64::MIN),
        max_value: nanos(i64::MAX),
        ..ColumnStatistics::new_unknown()
    };
    assert_eq!(countable(column).max_value, Precision::Absent);
    let column = ColumnStatistics {
        min_value: nanos(0),
        max_value: nanos(5),
        ..ColumnStatistics::new_unknown()
    };
    assert_eq!(countable(column).max_value, nanos(5));
}
