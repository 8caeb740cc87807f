use super::*;
use crate::filter::Filter;
use crate::handle::{Assignments, ColumnHandle, TableHandle};
use crate::reader::BatchTransform;
use crate::subfield::Subfield;
use arrow::array::{AsArray, BooleanArray, Int64Array};
use arrow::datatypes::{DataType, Field, Int64Type, Schema};
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use parquet::arrow::ArrowWriter;

mod deletes;

/// Keeps even values of column 0 and records that it ran.
struct KeepEven(Arc<std::sync::Mutex<Vec<&'static str>>>, &'static str);

impl BatchTransform for KeepEven {
    fn apply(&mut self, batch: RecordBatch) -> Result<RecordBatch> {
        self.0.lock().unwrap().push(self.1);
        let values = batch.column(0).as_primitive::<Int64Type>();
        let mask: BooleanArray = values.iter().map(|v| v.map(|v| v % 2 == 0)).collect();
        Ok(filter_record_batch(&batch, &mask)?)
    }
}

#[derive(Debug)]
struct StagedFactory(Arc<std::sync::Mutex<Vec<&'static str>>>);

impl TableAdapter for StagedFactory {
    fn stages(&self, _split: &FileSplit, context: &SplitContext) -> Result<Vec<BatchStage>> {
        let stage = |name, removed: &Count| BatchStage {
            transform: Box::new(KeepEven(Arc::clone(&self.0), name)),
            removed: removed.clone(),
        };
        let metrics = &context.metrics;
        Ok(vec![
            stage("second", &metrics.rows_removed_bucket_conversion),
            stage("first", &metrics.rows_deleted_equality),
        ])
    }
}

/// Writes `f.parquet` with column `v` = 0..10; returns its size.
fn write_file(dir: &std::path::Path) -> u64 {
    let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, true)]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![Arc::new(Int64Array::from_iter_values(0..10))],
    )
    .unwrap();
    let file = dir.join("f.parquet");
    let mut writer =
        ArrowWriter::try_new(std::fs::File::create(&file).unwrap(), schema, None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    std::fs::metadata(&file).unwrap().len()
}

/// A table with the one BIGINT column `v`.
fn table_v() -> TableHandle {
    let column = ColumnHandle::regular(&Field::new("v", DataType::Int64, true));
    TableHandle::try_new("t", vec![column]).unwrap()
}

fn values(batch: &RecordBatch) -> Vec<i64> {
    batch
        .column(0)
        .as_primitive::<Int64Type>()
        .values()
        .to_vec()
}

#[tokio::test]
async fn unselective_filters_run_after_decoding_with_the_same_result() {
    let dir = tempfile::tempdir().unwrap();
    let size = write_file(dir.path());
    let mut table = table_v();
    let ge5 = Filter::compare(
        &DataType::Int64,
        datafusion::logical_expr::Operator::GtEq,
        &5i64.into(),
    );
    table = table.with_filter(Subfield::column("v"), ge5.unwrap());
    let store: Arc<dyn ObjectStore> =
        Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    for observed_keep in [None, Some(90_000)] {
        let spec = Arc::new(ScanSpec::try_new(&table, &Assignments::new(vec![0]), &[]).unwrap());
        if let Some(kept) = observed_keep {
            // Seen to keep 90 %: runs on the decoded batch, not in the decoder.
            spec.adaptive()
                .record("v", std::time::Duration::from_millis(1), 100_000, kept);
        }
        let metrics = LakeScanMetrics::new(&ExecutionPlanMetricsSet::new(), 0);
        let adapter = Arc::new(crate::reader::PlainAdapter);
        let mut source = FileDataSource::new(
            spec,
            adapter,
            Arc::clone(&store),
            vec![],
            metrics.clone(),
            ReadOptions::default(),
        );
        let split = FileSplit::whole_file(Path::from("f.parquet"), size);
        assert!(source.add_split(split).await.unwrap());
        let mut out = vec![];
        while let Some(batch) = source.next().await.unwrap() {
            out.extend(values(&batch));
        }
        assert_eq!(out, [5, 6, 7, 8, 9], "observed keep {observed_keep:?}");
        assert_eq!(metrics.rows_scanned.value(), 10);
        assert_eq!(metrics.rows_removed_reader_filters.value(), 5);
    }
}

#[tokio::test]
async fn stages_run_in_the_adapters_order_before_the_residual() {
    let dir = tempfile::tempdir().unwrap();
    let size = write_file(dir.path());

    let table = table_v();
    let spec = Arc::new(ScanSpec::try_new(&table, &Assignments::new(vec![0]), &[]).unwrap());
    let ran = Arc::new(std::sync::Mutex::new(vec![]));
    let store = Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let metrics = LakeScanMetrics::new(&ExecutionPlanMetricsSet::new(), 0);
    let adapter = Arc::new(StagedFactory(Arc::clone(&ran)));
    let mut source = FileDataSource::new(
        spec,
        adapter,
        store,
        vec![],
        metrics.clone(),
        ReadOptions::default(),
    );
    assert!(
        source
            .add_split(FileSplit::whole_file(Path::from("f.parquet"), size))
            .await
            .unwrap()
    );
    let out = source.next().await.unwrap().unwrap();
    assert_eq!(values(&out), [0, 2, 4, 6, 8]);
    assert_eq!(*ran.lock().unwrap(), ["second", "first"]);
    assert_eq!(metrics.rows_scanned.value(), 10);
    // Each stage counts what it drops in the metric its adapter chose.
    assert_eq!(metrics.rows_removed_bucket_conversion.value(), 5);
    assert_eq!(metrics.rows_deleted_equality.value(), 0);
    assert!(source.next().await.unwrap().is_none());
}

/// Writes `name` with column `v` = `values` in row groups of `rows_per_group`; its size.
fn write_values(dir: &std::path::Path, name: &str, values: &[i64], rows_per_group: usize) -> u64 {
    let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, true)]));
    let file = dir.join(name);
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(rows_per_group))
        .build();
    let mut writer = ArrowWriter::try_new(
        std::fs::File::create(&file).unwrap(),
        Arc::clone(&schema),
        Some(props),
    )
    .unwrap();
    let batch =
        RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(values.to_vec()))]).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    std::fs::metadata(&file).unwrap().len()
}

/// A split of `name` carrying a row id's constants (version, partition id, guid).
fn row_id_split(name: &str, size: u64, constants: (i64, i64, &str)) -> FileSplit {
    use crate::split::SplitValue::Info;
    use datafusion::common::ScalarValue;
    FileSplit::builder(Path::from(name), size)
        .value("file", Info(ScalarValue::Utf8(Some(name.to_string()))))
        .value("version", Info(ScalarValue::Int64(Some(constants.0))))
        .value("partition", Info(ScalarValue::Int64(Some(constants.1))))
        .value(
            "guid",
            Info(ScalarValue::Utf8(Some(constants.2.to_string()))),
        )
        .build()
        .unwrap()
}

/// A table with `v` and a Hive-style row id `rid` (row number + four split constants).
fn row_id_table() -> TableHandle {
    use crate::handle::ColumnRole;
    use arrow::datatypes::Fields;
    let rid = DataType::Struct(Fields::from(vec![
        Field::new("row_number", DataType::Int64, false),
        Field::new("row_group_id", DataType::Utf8, false),
        Field::new("metadata_version", DataType::Int64, true),
        Field::new("partition_id", DataType::Int64, true),
        Field::new("table_guid", DataType::Utf8, true),
    ]));
    let roles = ["file", "version", "partition", "guid"]
        .map(|k| ColumnRole::Info(k.to_string()))
        .to_vec();
    let mut members = vec![ColumnRole::RowIndex];
    members.extend(roles);
    let columns = vec![
        ColumnHandle::regular(&Field::new("v", DataType::Int64, true)),
        ColumnHandle::with_role(&Field::new("rid", rid, false), ColumnRole::RowId(members)),
    ];
    TableHandle::try_new("t", columns).unwrap()
}

/// Reads `splits` one after another with one data source; the rows as text.
async fn read_all(
    spec: Arc<ScanSpec>,
    store: Arc<dyn ObjectStore>,
    splits: Vec<FileSplit>,
    metrics: &LakeScanMetrics,
) -> Vec<String> {
    let adapter = Arc::new(crate::reader::PlainAdapter);
    let mut source = FileDataSource::new(
        spec,
        adapter,
        store,
        vec![],
        metrics.clone(),
        ReadOptions::default(),
    );
    let mut rows = vec![];
    for split in splits {
        if !source.add_split(split).await.unwrap() {
            continue;
        }
        while let Some(batch) = source.next().await.unwrap() {
            let text = arrow::util::pretty::pretty_format_batches(&[batch]).unwrap();
            rows.extend(
                text.to_string()
                    .lines()
                    .filter(|l| l.starts_with("| ") && !l.contains("rid"))
                    .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")),
            );
        }
    }
    rows
}

#[tokio::test]
async fn row_id_constants_change_between_splits() {
    // Split A: file a.parquet, (version 1, partition 10, guid A), 3 rows; split B: file
    // b.parquet, (2, 20, B), 2 rows. The same spec reads A then B: B's rows carry B's
    // constants and row numbers from B's own positions (not continuing after A's).
    let dir = tempfile::tempdir().unwrap();
    let a = write_values(dir.path(), "a.parquet", &[1, 2, 3], 10);
    let b = write_values(dir.path(), "b.parquet", &[4, 5], 10);
    let store: Arc<dyn ObjectStore> =
        Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let table = row_id_table();
    let spec = Arc::new(ScanSpec::try_new(&table, &Assignments::new(vec![1]), &[]).unwrap());
    let metrics = LakeScanMetrics::new(&ExecutionPlanMetricsSet::new(), 0);
    let splits = vec![
        row_id_split("a.parquet", a, (1, 10, "A")),
        row_id_split("b.parquet", b, (2, 20, "B")),
    ];
    let rows = read_all(spec, store, splits, &metrics).await;
    let expected = [
        "| {row_number: 0, row_group_id: a.parquet, metadata_version: 1, partition_id: 10, table_guid: A} |",
        "| {row_number: 1, row_group_id: a.parquet, metadata_version: 1, partition_id: 10, table_guid: A} |",
        "| {row_number: 2, row_group_id: a.parquet, metadata_version: 1, partition_id: 10, table_guid: A} |",
        "| {row_number: 0, row_group_id: b.parquet, metadata_version: 2, partition_id: 20, table_guid: B} |",
        "| {row_number: 1, row_group_id: b.parquet, metadata_version: 2, partition_id: 20, table_guid: B} |",
    ];
    assert_eq!(rows, expected);
    // Only the row id: no data column decoded.
    assert_eq!(metrics.leaves_decoded.value(), 0);
}

/// The row-id scenario with preload: B is prepared on another task while A streams (the
/// donor has B's constants) and taken over after A's first batch. B's rows carry all three
/// of B's constants — version 2, partition 20, guid B — its own file name and row numbers
/// from 0, none of A's.
#[tokio::test]
async fn row_id_constants_change_at_takeover() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_values(dir.path(), "a.parquet", &[1, 2, 3], 10);
    let b = write_values(dir.path(), "b.parquet", &[4, 5], 10);
    let store: Arc<dyn ObjectStore> =
        Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let spec =
        Arc::new(ScanSpec::try_new(&row_id_table(), &Assignments::new(vec![1]), &[]).unwrap());
    let metrics = LakeScanMetrics::new(&ExecutionPlanMetricsSet::new(), 0);
    let options = ReadOptions {
        batch_size: 2,
        ..ReadOptions::default()
    };
    let adapter = Arc::new(crate::reader::PlainAdapter);
    let mut source = FileDataSource::new(spec, adapter, store, vec![], metrics.clone(), options);
    let text = |batch: &RecordBatch| -> Vec<String> {
        let text = arrow::util::pretty::pretty_format_batches(std::slice::from_ref(batch)).unwrap();
        text.to_string()
            .lines()
            .filter(|l| l.starts_with("| ") && !l.contains("rid"))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect()
    };
    let mut rows = vec![];
    assert!(
        source
            .add_split(row_id_split("a.parquet", a, (1, 10, "A")))
            .await
            .unwrap()
    );
    let first = source.next().await.unwrap().unwrap();
    rows.extend(text(&first));
    // B is preloaded now, while A still has a batch to go.
    let pending = source
        .start(Arc::new(row_id_split("b.parquet", b, (2, 20, "B"))))
        .unwrap()
        .unwrap();
    let donor = tokio::spawn(pending.prepare(PrepareOn::PreloadTask))
        .await
        .unwrap()
        .unwrap();
    while let Some(batch) = source.next().await.unwrap() {
        rows.extend(text(&batch));
    }
    assert!(source.install(donor).unwrap(), "B is taken over");
    while let Some(batch) = source.next().await.unwrap() {
        rows.extend(text(&batch));
    }
    let expected = [
        "| {row_number: 0, row_group_id: a.parquet, metadata_version: 1, partition_id: 10, table_guid: A} |",
        "| {row_number: 1, row_group_id: a.parquet, metadata_version: 1, partition_id: 10, table_guid: A} |",
        "| {row_number: 2, row_group_id: a.parquet, metadata_version: 1, partition_id: 10, table_guid: A} |",
        "| {row_number: 0, row_group_id: b.parquet, metadata_version: 2, partition_id: 20, table_guid: B} |",
        "| {row_number: 1, row_group_id: b.parquet, metadata_version: 2, partition_id: 20, table_guid: B} |",
    ];
    assert_eq!(rows, expected);
    assert_eq!(metrics.splits_total.value(), 2);
}

#[tokio::test]
async fn a_row_id_filter_on_generated_values_decodes_no_data_column() {
    // Rows 0..104 in row groups of 100 and 4; the scenario's readable rows are 100..103.
    let dir = tempfile::tempdir().unwrap();
    let values: Vec<i64> = (0..104).collect();
    let size = write_values(dir.path(), "f.parquet", &values, 100);
    let store: Arc<dyn ObjectStore> =
        Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let mut table = row_id_table();
    let ge100 = Filter::compare(
        &DataType::Int64,
        datafusion::logical_expr::Operator::GtEq,
        &100i64.into(),
    )
    .unwrap();
    let rid_number = Subfield::nested("rid", vec!["row_number".to_string()]);
    table = table.with_filter(rid_number, ge100);
    let spec = Arc::new(ScanSpec::try_new(&table, &Assignments::new(vec![1]), &[]).unwrap());
    let metrics = LakeScanMetrics::new(&ExecutionPlanMetricsSet::new(), 0);
    let split = row_id_split("f.parquet", size, (1, 10, "east"));
    let rows = read_all(spec, store, vec![split], &metrics).await;
    let numbers: Vec<&str> = rows
        .iter()
        .map(|r| r.split(',').next().unwrap_or_default())
        .collect();
    assert_eq!(
        numbers,
        [
            "| {row_number: 100",
            "| {row_number: 101",
            "| {row_number: 102",
            "| {row_number: 103"
        ]
    );
    assert_eq!(metrics.leaves_decoded.value(), 0);
}

/// A Parquet data source over `spec` reading `store`, and its metrics.
fn parquet_source(
    spec: Arc<ScanSpec>,
    store: Arc<dyn ObjectStore>,
    pushed: Vec<Arc<dyn PhysicalExpr>>,
) -> (FileDataSource, LakeScanMetrics) {
    let metrics = LakeScanMetrics::new(&ExecutionPlanMetricsSet::new(), 0);
    let source = FileDataSource::new(
        spec,
        Arc::new(crate::reader::PlainAdapter),
        store,
        pushed,
        metrics.clone(),
        ReadOptions::default(),
    );
    (source, metrics)
}

/// Reads every split of `splits` with a fresh source over `table` and returns the rows of
/// output column 0.
async fn read_values(
    table: &TableHandle,
    store: Arc<dyn ObjectStore>,
    splits: Vec<FileSplit>,
) -> Vec<i64> {
    let spec = Arc::new(ScanSpec::try_new(table, &Assignments::new(vec![0]), &[]).unwrap());
    let (mut source, _) = parquet_source(spec, store, vec![]);
    let mut out = vec![];
    for split in splits {
        if source.add_split(split).await.unwrap() {
            while let Some(batch) = source.next().await.unwrap() {
                out.extend(values(&batch));
            }
        }
    }
    out
}

#[tokio::test]
async fn a_wrong_recorded_file_size_loses_no_row() {
    let dir = tempfile::tempdir().unwrap();
    let size = write_file(dir.path());
    let store: Arc<dyn ObjectStore> =
        Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let table = table_v();
    // Larger than the file (a manifest's stale size): the footer is read at the real size.
    let larger = FileSplit::whole_file(Path::from("f.parquet"), size + 500);
    let rows = read_values(&table, Arc::clone(&store), vec![larger]).await;
    assert_eq!(rows, (0..10).collect::<Vec<_>>());
    // Smaller: the split that ends the recorded size owns the row groups past it.
    let smaller = FileSplit::whole_file(Path::from("f.parquet"), 8);
    let rows = read_values(&table, Arc::clone(&store), smaller.ranges(4)).await;
    assert_eq!(rows, (0..10).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_column_the_file_lacks_reads_the_splits_missing_value() {
    let dir = tempfile::tempdir().unwrap();
    let size = write_file(dir.path());
    let store: Arc<dyn ObjectStore> =
        Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let column = ColumnHandle::regular(&Field::new("w", DataType::Int64, true));
    let table = TableHandle::try_new("t", vec![column]).unwrap();
    let with_value = FileSplit::builder(Path::from("f.parquet"), size)
        .value(
            "w",
            crate::split::SplitValue::Missing(datafusion::common::ScalarValue::Int32(Some(7))),
        )
        .build()
        .unwrap();
    let without = FileSplit::whole_file(Path::from("f.parquet"), size);
    let spec = Arc::new(ScanSpec::try_new(&table, &Assignments::new(vec![0]), &[]).unwrap());
    let metrics = LakeScanMetrics::new(&ExecutionPlanMetricsSet::new(), 0);
    let mut source = FileDataSource::new(
        spec,
        Arc::new(crate::reader::PlainAdapter),
        store,
        vec![],
        metrics,
        ReadOptions::default(),
    );
    // The value (widened to the column type) for every row; then NULL in the next split.
    assert!(source.add_split(with_value).await.unwrap());
    let batch = source.next().await.unwrap().unwrap();
    assert_eq!(values(&batch), [7; 10]);
    assert!(source.add_split(without).await.unwrap());
    let batch = source.next().await.unwrap().unwrap();
    assert_eq!(batch.column(0).null_count(), 10);
}

/// Writes `c.parquet`: `c0` = i % 20 for i in 0..20 000 (batches of 8 192 rows hold values
/// on both sides of 10).
fn write_c0(dir: &std::path::Path) -> u64 {
    let schema = Arc::new(Schema::new(vec![Field::new("c0", DataType::Int64, true)]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![Arc::new(Int64Array::from_iter_values(
            (0..20_000).map(|i| i % 20),
        ))],
    )
    .unwrap();
    let file = dir.join("c.parquet");
    let mut writer =
        ArrowWriter::try_new(std::fs::File::create(&file).unwrap(), schema, None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    std::fs::metadata(&file).unwrap().len()
}

/// The dynamic-filter scenario: `c0 BIGINT` (regular) and `p INTEGER` (partition, p = 1 for
/// this split), a dynamic filter pushed into the scan. Returns the source and the filter.
fn dynamic_filter_source(
    dir: &std::path::Path,
) -> (
    FileDataSource,
    Arc<datafusion::physical_expr::expressions::DynamicFilterPhysicalExpr>,
    LakeScanMetrics,
) {
    dynamic_filter_source_with(dir, Arc::new(crate::reader::PlainAdapter))
}

fn dynamic_filter_source_with(
    dir: &std::path::Path,
    adapter: Arc<dyn TableAdapter>,
) -> (
    FileDataSource,
    Arc<datafusion::physical_expr::expressions::DynamicFilterPhysicalExpr>,
    LakeScanMetrics,
) {
    use datafusion::physical_expr::expressions::{DynamicFilterPhysicalExpr, col, lit};
    let c0 = ColumnHandle::regular(&Field::new("c0", DataType::Int64, true));
    let p = ColumnHandle::with_role(
        &Field::new("p", DataType::Int32, true),
        crate::handle::ColumnRole::PartitionKey,
    );
    let table = TableHandle::try_new("t", vec![c0, p]).unwrap();
    let schema = table.table_schema();
    let children = vec![col("c0", schema).unwrap(), col("p", schema).unwrap()];
    let dynamic = Arc::new(DynamicFilterPhysicalExpr::new(children, lit(true)));
    let pushed: Vec<Arc<dyn PhysicalExpr>> = vec![Arc::clone(&dynamic) as _];
    let spec = Arc::new(ScanSpec::try_new(&table, &Assignments::new(vec![0, 1]), &pushed).unwrap());
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir).unwrap());
    let metrics = LakeScanMetrics::new(&ExecutionPlanMetricsSet::new(), 0);
    let source = FileDataSource::new(
        spec,
        adapter,
        store,
        pushed,
        metrics.clone(),
        ReadOptions::default(),
    );
    (source, dynamic, metrics)
}

fn partition_1_split(size: u64) -> FileSplit {
    FileSplit::builder(Path::from("c.parquet"), size)
        .value("p", crate::split::SplitValue::Partition(Some("1".into())))
        .build()
        .unwrap()
}

/// `c0 > 10` and, when `p` is given, `AND p = p`, over the table schema.
fn c0_above_10(schema: &Schema, p: Option<i32>) -> Arc<dyn PhysicalExpr> {
    use datafusion::logical_expr::Operator;
    use datafusion::physical_expr::expressions::{binary, col, lit};
    let c0 = binary(col("c0", schema).unwrap(), Operator::Gt, lit(10i64), schema).unwrap();
    match p {
        None => c0,
        Some(p) => {
            let p = binary(col("p", schema).unwrap(), Operator::Eq, lit(p), schema).unwrap();
            binary(c0, Operator::And, p, schema).unwrap()
        }
    }
}

/// The dynamic-filter scenario, the filter arriving before the split is prepared: `c0 > 10`
/// filters rows in the reader; `p = 2` skips the p = 1 split before its file is opened.
#[tokio::test]
async fn a_dynamic_filter_before_prepare() {
    let dir = tempfile::tempdir().unwrap();
    let size = write_c0(dir.path());
    let schema = Schema::new(vec![
        Field::new("c0", DataType::Int64, true),
        Field::new("p", DataType::Int32, true),
    ]);
    let (mut source, dynamic, metrics) = dynamic_filter_source(dir.path());
    dynamic.update(c0_above_10(&schema, None)).unwrap();
    assert!(source.add_split(partition_1_split(size)).await.unwrap());
    let mut rows = 0;
    while let Some(batch) = source.next().await.unwrap() {
        assert!(values(&batch).iter().all(|v| *v > 10));
        rows += batch.num_rows();
    }
    assert_eq!(rows, 9_000, "9 of every 20 values are above 10");
    dynamic.update(c0_above_10(&schema, Some(2))).unwrap();
    assert!(!source.add_split(partition_1_split(size)).await.unwrap());
    assert_eq!(metrics.splits_pruned_dynamic_filter.value(), 1);
}

/// The dynamic-filter scenario, the filter arriving after prepare, while the split streams:
/// `c0 > 10` filters the later batches; `p = 2` then stops the p = 1 split (Velox's fast path
/// for constants does not re-check it and reads the split to its end).
#[tokio::test]
async fn a_dynamic_filter_mid_split() {
    let dir = tempfile::tempdir().unwrap();
    let size = write_c0(dir.path());
    let schema = Schema::new(vec![
        Field::new("c0", DataType::Int64, true),
        Field::new("p", DataType::Int32, true),
    ]);
    let (mut source, dynamic, metrics) = dynamic_filter_source(dir.path());
    assert!(source.add_split(partition_1_split(size)).await.unwrap());
    let first = source.next().await.unwrap().unwrap();
    assert_eq!(first.num_rows(), 8_192, "no filter yet");
    dynamic.update(c0_above_10(&schema, None)).unwrap();
    let second = source.next().await.unwrap().unwrap();
    assert!(values(&second).iter().all(|v| *v > 10));
    // Rows 8 192..16 384: 9 of every 20 values are above 10 (8 192 = 409 × 20 + 12, and
    // the 12 leftover values 12..=19, 0..=3 hold 8 above 10).
    assert_eq!(second.num_rows(), 409 * 9 + 8);
    assert_eq!(
        metrics.rows_removed_dynamic_filter.value(),
        8_192 - second.num_rows()
    );
    dynamic.update(c0_above_10(&schema, Some(2))).unwrap();
    assert!(source.next().await.unwrap().is_none(), "the split stops");
    assert_eq!(metrics.splits_stopped_dynamic_filter.value(), 1);
    // The same value again does not stop a later split that passes it.
    dynamic.update(c0_above_10(&schema, Some(1))).unwrap();
    assert!(source.add_split(partition_1_split(size)).await.unwrap());
    let mut rows = 0;
    while let Some(batch) = source.next().await.unwrap() {
        rows += batch.num_rows();
    }
    assert_eq!(rows, 9_000);
}

/// A file smaller than the footer hint is fetched once: the footer read keeps the file's
/// tail, and the column chunks are served from it (the small-files case of Hive tables).
#[tokio::test]
async fn a_small_file_is_read_with_one_request() {
    let dir = tempfile::tempdir().unwrap();
    let size = write_file(dir.path());
    let store: Arc<dyn ObjectStore> =
        Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let spec = Arc::new(ScanSpec::try_new(&table_v(), &Assignments::new(vec![0]), &[]).unwrap());
    let (mut source, metrics) = parquet_source(spec, store, vec![]);
    assert!(
        source
            .add_split(FileSplit::whole_file(Path::from("f.parquet"), size))
            .await
            .unwrap()
    );
    let mut out = vec![];
    while let Some(batch) = source.next().await.unwrap() {
        out.extend(values(&batch));
    }
    assert_eq!(out, (0..10).collect::<Vec<_>>());
    assert_eq!(
        metrics.bytes_read.value() as u64,
        size,
        "the whole file, once"
    );
}

/// A dynamic filter that fails to evaluate (here a division by zero) is an error of the
/// scan, before prepare (inside the decoder) and mid-split (on the batches), never rows
/// silently dropped or kept.
#[tokio::test]
async fn a_dynamic_filter_that_fails_to_evaluate_is_an_error() {
    use datafusion::logical_expr::Operator;
    use datafusion::physical_expr::expressions::{binary, col, lit};
    let dir = tempfile::tempdir().unwrap();
    let size = write_c0(dir.path());
    let schema = Schema::new(vec![
        Field::new("c0", DataType::Int64, true),
        Field::new("p", DataType::Int32, true),
    ]);
    let failing = || {
        let div = binary(
            col("c0", &schema).unwrap(),
            Operator::Divide,
            lit(0i64),
            &schema,
        );
        binary(div.unwrap(), Operator::Gt, lit(1i64), &schema).unwrap()
    };
    // Before prepare: the conjunct reads one column, so it runs inside the decoder.
    let (mut source, dynamic, _) = dynamic_filter_source(dir.path());
    dynamic.update(failing()).unwrap();
    assert!(source.add_split(partition_1_split(size)).await.unwrap());
    let err = source.next().await.unwrap_err().to_string();
    assert!(err.contains("Divide by zero"), "{err}");
    // Mid-split: on the batches after the change.
    let (mut source, dynamic, _) = dynamic_filter_source(dir.path());
    assert!(source.add_split(partition_1_split(size)).await.unwrap());
    assert!(source.next().await.unwrap().is_some());
    dynamic.update(failing()).unwrap();
    let err = source.next().await.unwrap_err().to_string();
    assert!(err.contains("Divide by zero"), "{err}");
}

/// Writes `c.parquet`: `c0` = 0..20 000 in order, in 20 row groups of 1 000 rows.
fn write_c0_sorted(dir: &std::path::Path) -> u64 {
    let schema = Arc::new(Schema::new(vec![Field::new("c0", DataType::Int64, true)]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![Arc::new(Int64Array::from_iter_values(0..20_000))],
    )
    .unwrap();
    let file = dir.join("c.parquet");
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(1_000))
        .build();
    let mut writer =
        ArrowWriter::try_new(std::fs::File::create(&file).unwrap(), schema, Some(props)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    std::fs::metadata(&file).unwrap().len()
}

/// `c0 > v` over the table schema of the dynamic-filter scenario.
fn c0_above(v: i64) -> Arc<dyn PhysicalExpr> {
    use datafusion::logical_expr::Operator;
    use datafusion::physical_expr::expressions::{binary, col, lit};
    let schema = Schema::new(vec![
        Field::new("c0", DataType::Int64, true),
        Field::new("p", DataType::Int32, true),
    ]);
    binary(col("c0", &schema).unwrap(), Operator::Gt, lit(v), &schema).unwrap()
}

/// Preload and takeover (Velox's `moveAdaptationFrom` skips constants): a split is prepared
/// at T0 on a preload task, the dynamic filter arrives at T1, the split is taken over at T2.
/// Velox's takeover keeps the donor's T0 filter for constants and nested fields; lakescan
/// applies the T1 filter at takeover: `p = 2` skips the p = 1 split unread, and `c0 > 15 000`
/// prunes 15 of its 20 row groups and filters in the reader, not on the batches.
#[tokio::test]
async fn a_filter_arriving_while_a_split_is_preloaded_applies_at_takeover() {
    let dir = tempfile::tempdir().unwrap();
    let size = write_c0_sorted(dir.path());
    let schema = Schema::new(vec![
        Field::new("c0", DataType::Int64, true),
        Field::new("p", DataType::Int32, true),
    ]);
    // The partition constant.
    let (mut source, dynamic, metrics) = dynamic_filter_source(dir.path());
    let pending = source
        .start(Arc::new(partition_1_split(size)))
        .unwrap()
        .unwrap();
    let donor = tokio::spawn(pending.prepare(PrepareOn::PreloadTask))
        .await
        .unwrap()
        .unwrap();
    dynamic.update(c0_above_10(&schema, Some(2))).unwrap();
    assert!(!source.install(donor).unwrap(), "taken over, then skipped");
    assert_eq!(metrics.splits_pruned_dynamic_filter.value(), 1);
    assert_eq!(metrics.rows_scanned.value(), 0);
    assert!(source.next().await.unwrap().is_none());

    // The real column.
    let (mut source, dynamic, metrics) = dynamic_filter_source(dir.path());
    let pending = source
        .start(Arc::new(partition_1_split(size)))
        .unwrap()
        .unwrap();
    let donor = tokio::spawn(pending.prepare(PrepareOn::PreloadTask))
        .await
        .unwrap()
        .unwrap();
    dynamic.update(c0_above(15_000)).unwrap();
    assert!(source.install(donor).unwrap());
    let mut rows = 0;
    while let Some(batch) = source.next().await.unwrap() {
        assert!(values(&batch).iter().all(|v| *v > 15_000));
        rows += batch.num_rows();
    }
    assert_eq!(rows, 4_999);
    assert_eq!(metrics.row_groups_pruned_dynamic_filter.value(), 15);
    assert_eq!(
        metrics.rows_scanned.value(),
        5_000,
        "only the 5 row groups left"
    );
    assert_eq!(
        metrics.rows_removed_dynamic_filter.value(),
        0,
        "applied by the reader, not on the batches"
    );
}

/// Velox's fast path for a non-null constant: a dynamic filter that arrives after the
/// split was prepared and rejects its partition value. Velox reads the split anyway (the
/// constant is tested only at prepare); lakescan reads none of its rows.
#[tokio::test]
async fn a_filter_after_prepare_that_rejects_a_constant_reads_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let size = write_c0(dir.path());
    let schema = Schema::new(vec![
        Field::new("c0", DataType::Int64, true),
        Field::new("p", DataType::Int32, true),
    ]);
    let (mut source, dynamic, metrics) = dynamic_filter_source(dir.path());
    assert!(source.add_split(partition_1_split(size)).await.unwrap());
    let opened = metrics.bytes_read.value();
    dynamic.update(c0_above_10(&schema, Some(2))).unwrap();
    assert!(source.next().await.unwrap().is_none());
    assert_eq!(metrics.splits_pruned_dynamic_filter.value(), 1);
    assert_eq!(metrics.splits_stopped_dynamic_filter.value(), 0);
    assert_eq!(metrics.rows_scanned.value(), 0);
    assert_eq!(
        metrics.bytes_read.value(),
        opened,
        "no column chunk fetched"
    );
}

/// A dynamic filter that already rejects a split's partition value when the split starts
/// skips it before any I/O, counted apart from the static filters' skips.
#[tokio::test]
async fn a_split_rejected_by_a_dynamic_filter_at_start_is_counted_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let size = write_c0(dir.path());
    let schema = Schema::new(vec![
        Field::new("c0", DataType::Int64, true),
        Field::new("p", DataType::Int32, true),
    ]);
    let (mut source, dynamic, metrics) = dynamic_filter_source(dir.path());
    dynamic.update(c0_above_10(&schema, Some(2))).unwrap();
    assert!(
        source
            .start(Arc::new(partition_1_split(size)))
            .unwrap()
            .is_none()
    );
    assert_eq!(metrics.splits_pruned_dynamic_filter.value(), 1);
    assert_eq!(metrics.splits_skipped.value(), 0);
    assert_eq!(metrics.bytes_read.value(), 0);
}

/// The hook sees each split prepared (and where) and each batch, in order.
#[tokio::test]
async fn the_lifecycle_hook_sees_prepare_and_batches() {
    let dir = tempfile::tempdir().unwrap();
    let size = write_c0(dir.path());
    let (source, _, _) = dynamic_filter_source(dir.path());
    let events = Arc::new(std::sync::Mutex::new(vec![]));
    let seen = Arc::clone(&events);
    let hook = LifecycleHook::new(move |e| seen.lock().unwrap().push(e));
    let mut source = source.with_lifecycle_hook(Some(hook));
    assert!(source.add_split(partition_1_split(size)).await.unwrap());
    while source.next().await.unwrap().is_some() {}
    let pending = source
        .start(Arc::new(partition_1_split(size)))
        .unwrap()
        .unwrap();
    let donor = pending.prepare(PrepareOn::PreloadTask).await.unwrap();
    assert!(source.install(donor).unwrap());
    assert!(source.next().await.unwrap().is_some());
    let events = events.lock().unwrap().clone();
    assert_eq!(
        events,
        [
            SplitEvent::Prepared {
                split: 0,
                preloaded: false
            },
            SplitEvent::Batch { split: 0, batch: 0 },
            SplitEvent::Batch { split: 0, batch: 1 },
            SplitEvent::Batch { split: 0, batch: 2 },
            SplitEvent::Prepared {
                split: 1,
                preloaded: true
            },
            SplitEvent::Batch { split: 1, batch: 0 },
        ]
    );
}
