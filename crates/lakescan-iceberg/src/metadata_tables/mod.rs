//! Metadata tables, as Trino and iceberg-rust name them: `"t$snapshots"`, `"t$history"`,
//! `"t$refs"`, `"t$manifests"`, `"t$files"` and `"t$partitions"` next to every Iceberg
//! table `t`, so a user can find the snapshot ids that time travel (`OPTIONS ('snapshot_id'
//! …)`) takes, and what each snapshot holds.
//!
//! | table          | rows                                                       | columns |
//! |----------------|------------------------------------------------------------|---------|
//! | `$snapshots`   | every snapshot of the table                                | `committed_at`, `snapshot_id`, `parent_id`, `operation`, `manifest_list`, `summary` (map), `sequence_number` |
//! | `$history`     | the snapshot log: each time a snapshot became current      | `made_current_at`, `snapshot_id`, `parent_id`, `is_current_ancestor` |
//! | `$refs`        | branches and tags                                          | `name`, `type` (`BRANCH` / `TAG`), `snapshot_id`, `max_reference_age_in_ms`, `min_snapshots_to_keep`, `max_snapshot_age_in_ms` |
//! | `$manifests`   | the manifests of the snapshot the table reads              | `content` (0 data, 1 deletes), `path`, `length`, `partition_spec_id`, `added_snapshot_id`, `added/existing/deleted_data_files_count`, `added/existing/deleted_delete_files_count` (Spark's columns), then `sequence_number`, `added/existing/deleted_rows_count` |
//! | `$files`       | the live data and delete files of that snapshot            | `content` (0 data, 1 position deletes, 2 equality deletes), `file_path`, `file_format`, `spec_id`, `partition` (partitioned tables: the struct of `_partition`), `record_count`, `file_size_in_bytes`, `sequence_number`, `first_row_id`, `equality_ids`, `referenced_data_file` |
//! | `$partitions`  | one row per partition of those files (`partitions`)        | `partition` (partitioned tables), `spec_id`, `record_count`, `file_count`, `total_data_file_size_in_bytes`, `position_delete_record_count`, `position_delete_file_count`, `equality_delete_record_count`, `equality_delete_file_count`, `last_updated_at`, `last_updated_snapshot_id` (Spark's columns) |
//!
//! Column order follows Trino's and Spark's tables where they have the column; lakescan's
//! additions come last. `$manifests`, `$files` and `$partitions` follow the table's
//! snapshot: for a table created with `OPTIONS ('snapshot_id' …)`, that snapshot's. They
//! are computed when scanned.
//!
//! A name `t$kind` resolves through [`MetadataTableSchema`], which `lakescan::register` puts
//! around the session's default schema, and through the Iceberg catalogs' schemas.

use std::collections::HashSet;
use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanArray, Int32Array, Int32Builder, Int64Array, ListBuilder, MapBuilder,
    RecordBatch, StringArray, StringBuilder, TimestampMillisecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use async_trait::async_trait;
use datafusion::catalog::{SchemaProvider, Session, TableProvider};
use datafusion::common::{Result, ScalarValue, plan_datafusion_err};
use datafusion::datasource::MemTable;
use datafusion::logical_expr::{Expr, TableType};
use datafusion::physical_plan::ExecutionPlan;
use iceberg::spec::{DataContentType, ManifestStatus, SnapshotRetention, TableMetadata};

use crate::metadata_columns::{FileInfo, MetadataColumns, MetadataSelection};
use crate::plan::Planner;
use crate::schema::StringTypes;
use crate::table::IcebergTable;

mod partitions;

/// Which metadata table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataTableKind {
    /// `$snapshots`
    Snapshots,
    /// `$history`
    History,
    /// `$refs`
    Refs,
    /// `$manifests`
    Manifests,
    /// `$files`
    Files,
    /// `$partitions`
    Partitions,
}

impl MetadataTableKind {
    /// Every kind.
    pub const ALL: [Self; 6] = [
        Self::Snapshots,
        Self::History,
        Self::Refs,
        Self::Manifests,
        Self::Files,
        Self::Partitions,
    ];

    /// The suffix after `$`.
    pub fn suffix(self) -> &'static str {
        match self {
            Self::Snapshots => "snapshots",
            Self::History => "history",
            Self::Refs => "refs",
            Self::Manifests => "manifests",
            Self::Files => "files",
            Self::Partitions => "partitions",
        }
    }

    /// `("t", kind)` of a name `t$kind`; `None` for other names.
    pub fn split(name: &str) -> Option<(&str, Self)> {
        let (table, suffix) = name.rsplit_once('$')?;
        let kind = Self::ALL
            .into_iter()
            .find(|k| k.suffix().eq_ignore_ascii_case(suffix))?;
        (!table.is_empty()).then_some((table, kind))
    }
}

/// A live entry of a manifest with what it inherits.
struct LiveFile {
    entry: iceberg::spec::ManifestEntry,
    first_row_id: Option<i64>,
    spec: Arc<iceberg::spec::PartitionSpec>,
}

/// One metadata table of an Iceberg table.
#[derive(Debug)]
pub struct IcebergMetadataTable {
    table: IcebergTable,
    kind: MetadataTableKind,
    schema: SchemaRef,
    /// The `partition` column of `$files` and `$partitions` (partitioned tables).
    partition: Option<MetadataColumns>,
}

impl IcebergMetadataTable {
    /// The `kind` table of `table`.
    pub fn try_new(table: IcebergTable, kind: MetadataTableKind) -> Result<Self> {
        // Only `$files` and `$partitions` have a partition column.
        let partition = match kind {
            MetadataTableKind::Files | MetadataTableKind::Partitions => {
                let metadata = &table.loaded().metadata;
                let columns = MetadataColumns::try_new(
                    &MetadataSelection::All,
                    metadata,
                    &[],
                    StringTypes::Plain,
                )?;
                columns.partition_type().map(|_| columns)
            }
            _ => None,
        };
        let partition_type = partition.as_ref().and_then(MetadataColumns::partition_type);
        let schema = Arc::new(schema_of(kind, partition_type));
        Ok(Self {
            table,
            kind,
            schema,
            partition,
        })
    }

    async fn batch(&self, state: &dyn Session) -> Result<RecordBatch> {
        let metadata = &self.table.loaded().metadata;
        let columns = match self.kind {
            MetadataTableKind::Snapshots => snapshots(metadata)?,
            MetadataTableKind::History => history(metadata),
            MetadataTableKind::Refs => refs(&self.table),
            MetadataTableKind::Manifests => self.manifests(state).await?,
            MetadataTableKind::Files => self.files(state).await?,
            MetadataTableKind::Partitions => self.partitions(state).await?,
        };
        Ok(RecordBatch::try_new(Arc::clone(&self.schema), columns)?)
    }

    fn planner<'a>(&'a self, state: &'a dyn Session) -> Planner<'a> {
        self.table.planner(state.runtime_env())
    }

    async fn manifests(&self, state: &dyn Session) -> Result<Vec<ArrayRef>> {
        let manifests = match self.table.snapshot() {
            Some(s) => self.planner(state).manifests(s).await?,
            None => vec![],
        };
        let i32s = |f: &dyn Fn(&iceberg::spec::ManifestFile) -> i32| -> ArrayRef {
            Arc::new(manifests.iter().map(f).collect::<Int32Array>())
        };
        let i64s = |f: &dyn Fn(&iceberg::spec::ManifestFile) -> Option<i64>| -> ArrayRef {
            Arc::new(manifests.iter().map(f).collect::<Int64Array>())
        };
        let rows = |v: Option<u64>| v.and_then(|v| i64::try_from(v).ok());
        // Counts of data files in data manifests, of delete files in delete manifests.
        let files = |deletes: bool, f: &dyn Fn(&iceberg::spec::ManifestFile) -> Option<u32>| {
            let values = manifests.iter().map(|m| {
                let is_deletes = m.content == iceberg::spec::ManifestContentType::Deletes;
                match is_deletes == deletes {
                    true => f(m).and_then(|v| i32::try_from(v).ok()),
                    false => Some(0),
                }
            });
            Arc::new(values.collect::<Int32Array>()) as ArrayRef
        };
        Ok(vec![
            i32s(&|m| match m.content {
                iceberg::spec::ManifestContentType::Data => 0,
                iceberg::spec::ManifestContentType::Deletes => 1,
            }),
            Arc::new(
                manifests
                    .iter()
                    .map(|m| Some(m.manifest_path.clone()))
                    .collect::<StringArray>(),
            ),
            i64s(&|m| Some(m.manifest_length)),
            i32s(&|m| m.partition_spec_id),
            i64s(&|m| Some(m.added_snapshot_id)),
            files(false, &|m| m.added_files_count),
            files(false, &|m| m.existing_files_count),
            files(false, &|m| m.deleted_files_count),
            files(true, &|m| m.added_files_count),
            files(true, &|m| m.existing_files_count),
            files(true, &|m| m.deleted_files_count),
            i64s(&|m| Some(m.sequence_number)),
            i64s(&|m| rows(m.added_rows_count)),
            i64s(&|m| rows(m.existing_rows_count)),
            i64s(&|m| rows(m.deleted_rows_count)),
        ])
    }

    /// The live entries (data and delete files) of the snapshot the table reads, in
    /// manifest order.
    async fn live_files(&self, state: &dyn Session) -> Result<Vec<LiveFile>> {
        let mut live = vec![];
        let Some(snapshot) = self.table.snapshot() else {
            return Ok(live);
        };
        let planner = self.planner(state);
        for manifest in planner.manifests(snapshot).await? {
            if !crate::plan::holds_live_files(&manifest) {
                continue;
            }
            let (entries, spec) = planner.entries(&manifest).await?;
            for (entry, first_row_id) in entries {
                if entry.status != ManifestStatus::Deleted {
                    live.push(LiveFile {
                        entry,
                        first_row_id,
                        spec: Arc::clone(&spec),
                    });
                }
            }
        }
        Ok(live)
    }

    /// The `_partition` value of `live` (`None` for an unpartitioned table).
    fn partition_of(&self, live: &LiveFile) -> Result<Option<ScalarValue>> {
        let Some(columns) = &self.partition else {
            return Ok(None);
        };
        let file = &live.entry.data_file;
        columns
            .partition_value(&FileInfo {
                written_path: file.file_path(),
                spec: &live.spec,
                partition: file.partition(),
                first_row_id: live.first_row_id,
                data_sequence_number: crate::plan::live_sequence_number(&live.entry)?,
            })
            .map(Some)
    }

    async fn files(&self, state: &dyn Session) -> Result<Vec<ArrayRef>> {
        let mut content = Int32Builder::new();
        let mut path = StringBuilder::new();
        let mut format = StringBuilder::new();
        let mut spec_id = Int32Builder::new();
        let mut partitions: Vec<ScalarValue> = vec![];
        let mut record_count = vec![];
        let mut size = vec![];
        let mut sequence = vec![];
        let mut first_row_ids = vec![];
        let mut equality_ids = ListBuilder::new(Int32Builder::new());
        let mut referenced = StringBuilder::new();
        for live in self.live_files(state).await? {
            let (entry, spec) = (&live.entry, &live.spec);
            let first_row_id = live.first_row_id;
            let file = &entry.data_file;
            content.append_value(match file.content_type() {
                DataContentType::Data => 0,
                DataContentType::PositionDeletes => 1,
                DataContentType::EqualityDeletes => 2,
            });
            path.append_value(file.file_path());
            format.append_value(file.file_format().to_string().to_uppercase());
            spec_id.append_value(spec.spec_id());
            if let Some(value) = self.partition_of(&live)? {
                partitions.push(value);
            }
            record_count.push(i64::try_from(file.record_count()).ok());
            size.push(i64::try_from(file.file_size_in_bytes()).ok());
            sequence.push(entry.sequence_number);
            first_row_ids.push(first_row_id);
            match file.equality_ids() {
                Some(ids) if file.content_type() == DataContentType::EqualityDeletes => {
                    equality_ids.values().append_slice(&ids);
                    equality_ids.append(true);
                }
                _ => equality_ids.append(false),
            }
            referenced.append_option(file.referenced_data_file());
        }
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(content.finish()),
            Arc::new(path.finish()),
            Arc::new(format.finish()),
            Arc::new(spec_id.finish()),
        ];
        if let Some(t) = self
            .partition
            .as_ref()
            .and_then(MetadataColumns::partition_type)
        {
            columns.push(match partitions.is_empty() {
                true => arrow::array::new_empty_array(&t),
                false => ScalarValue::iter_to_array(partitions)?,
            });
        }
        columns.extend([
            Arc::new(Int64Array::from(record_count)) as ArrayRef,
            Arc::new(Int64Array::from(size)),
            Arc::new(Int64Array::from(sequence)),
            Arc::new(Int64Array::from(first_row_ids)),
            Arc::new(equality_ids.finish()),
            Arc::new(referenced.finish()),
        ]);
        Ok(columns)
    }
}

fn utc_millis() -> DataType {
    DataType::Timestamp(TimeUnit::Millisecond, Some("+00:00".into()))
}

fn schema_of(kind: MetadataTableKind, partition: Option<DataType>) -> Schema {
    let f = Field::new;
    let fields = match kind {
        MetadataTableKind::Snapshots => vec![
            f("committed_at", utc_millis(), false),
            f("snapshot_id", DataType::Int64, false),
            f("parent_id", DataType::Int64, true),
            f("operation", DataType::Utf8, false),
            f("manifest_list", DataType::Utf8, false),
            f("summary", summary_type(), false),
            f("sequence_number", DataType::Int64, false),
        ],
        MetadataTableKind::History => vec![
            f("made_current_at", utc_millis(), false),
            f("snapshot_id", DataType::Int64, false),
            f("parent_id", DataType::Int64, true),
            f("is_current_ancestor", DataType::Boolean, false),
        ],
        MetadataTableKind::Refs => vec![
            f("name", DataType::Utf8, false),
            f("type", DataType::Utf8, false),
            f("snapshot_id", DataType::Int64, false),
            f("max_reference_age_in_ms", DataType::Int64, true),
            f("min_snapshots_to_keep", DataType::Int32, true),
            f("max_snapshot_age_in_ms", DataType::Int64, true),
        ],
        MetadataTableKind::Manifests => vec![
            f("content", DataType::Int32, false),
            f("path", DataType::Utf8, false),
            f("length", DataType::Int64, false),
            f("partition_spec_id", DataType::Int32, false),
            f("added_snapshot_id", DataType::Int64, false),
            f("added_data_files_count", DataType::Int32, true),
            f("existing_data_files_count", DataType::Int32, true),
            f("deleted_data_files_count", DataType::Int32, true),
            f("added_delete_files_count", DataType::Int32, true),
            f("existing_delete_files_count", DataType::Int32, true),
            f("deleted_delete_files_count", DataType::Int32, true),
            f("sequence_number", DataType::Int64, false),
            f("added_rows_count", DataType::Int64, true),
            f("existing_rows_count", DataType::Int64, true),
            f("deleted_rows_count", DataType::Int64, true),
        ],
        MetadataTableKind::Files => {
            let mut fields = vec![
                f("content", DataType::Int32, false),
                f("file_path", DataType::Utf8, false),
                f("file_format", DataType::Utf8, false),
                f("spec_id", DataType::Int32, false),
            ];
            if let Some(t) = partition {
                fields.push(f("partition", t, false));
            }
            fields.extend([
                f("record_count", DataType::Int64, true),
                f("file_size_in_bytes", DataType::Int64, true),
                f("sequence_number", DataType::Int64, true),
                f("first_row_id", DataType::Int64, true),
                f(
                    "equality_ids",
                    DataType::List(Arc::new(Field::new_list_field(DataType::Int32, true))),
                    true,
                ),
                f("referenced_data_file", DataType::Utf8, true),
            ]);
            fields
        }
        MetadataTableKind::Partitions => {
            let mut fields = vec![];
            if let Some(t) = partition {
                fields.push(f("partition", t, false));
            }
            fields.extend(partitions::fields());
            fields
        }
    };
    Schema::new(fields)
}

fn summary_type() -> DataType {
    let mut builder = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
    arrow::array::Array::data_type(&builder.finish()).clone()
}

fn snapshots(metadata: &TableMetadata) -> Result<Vec<ArrayRef>> {
    let mut snapshots: Vec<_> = metadata.snapshots().collect();
    snapshots.sort_by_key(|s| (s.timestamp_ms(), s.sequence_number()));
    let mut summary = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
    for s in &snapshots {
        let mut pairs: Vec<(&String, &String)> = s.summary().additional_properties.iter().collect();
        pairs.sort();
        for (k, v) in pairs {
            summary.keys().append_value(k);
            summary.values().append_value(v);
        }
        summary.append(true)?;
    }
    Ok(vec![
        Arc::new(
            snapshots
                .iter()
                .map(|s| Some(s.timestamp_ms()))
                .collect::<TimestampMillisecondArray>()
                .with_timezone("+00:00"),
        ),
        Arc::new(Int64Array::from_iter_values(
            snapshots.iter().map(|s| s.snapshot_id()),
        )),
        Arc::new(Int64Array::from_iter(
            snapshots.iter().map(|s| s.parent_snapshot_id()),
        )),
        Arc::new(StringArray::from_iter_values(
            snapshots.iter().map(|s| s.summary().operation.as_str()),
        )),
        Arc::new(StringArray::from_iter_values(
            snapshots.iter().map(|s| s.manifest_list()),
        )),
        Arc::new(summary.finish()),
        Arc::new(Int64Array::from_iter_values(
            snapshots.iter().map(|s| s.sequence_number()),
        )),
    ])
}

fn history(metadata: &TableMetadata) -> Vec<ArrayRef> {
    let log = metadata.history();
    let mut ancestors = HashSet::new();
    let mut at = metadata.current_snapshot();
    while let Some(s) = at {
        if !ancestors.insert(s.snapshot_id()) {
            break;
        }
        at = s
            .parent_snapshot_id()
            .and_then(|p| metadata.snapshot_by_id(p));
    }
    let parent = |id: i64| {
        metadata
            .snapshot_by_id(id)
            .and_then(|s| s.parent_snapshot_id())
    };
    vec![
        Arc::new(
            log.iter()
                .map(|l| Some(l.timestamp_ms))
                .collect::<TimestampMillisecondArray>()
                .with_timezone("+00:00"),
        ),
        Arc::new(Int64Array::from_iter_values(
            log.iter().map(|l| l.snapshot_id),
        )),
        Arc::new(Int64Array::from_iter(
            log.iter().map(|l| parent(l.snapshot_id)),
        )),
        Arc::new(BooleanArray::from_iter(
            log.iter().map(|l| Some(ancestors.contains(&l.snapshot_id))),
        )),
    ]
}

fn refs(table: &IcebergTable) -> Vec<ArrayRef> {
    let mut refs: Vec<_> = table.loaded().refs.iter().collect();
    refs.sort_by(|a, b| a.0.cmp(b.0));
    let mut kind = vec![];
    let (mut ref_age, mut min_keep, mut snap_age) = (vec![], vec![], vec![]);
    for (_, r) in &refs {
        match &r.retention {
            SnapshotRetention::Branch {
                min_snapshots_to_keep,
                max_snapshot_age_ms,
                max_ref_age_ms,
            } => {
                kind.push("BRANCH");
                ref_age.push(*max_ref_age_ms);
                min_keep.push(*min_snapshots_to_keep);
                snap_age.push(*max_snapshot_age_ms);
            }
            SnapshotRetention::Tag { max_ref_age_ms } => {
                kind.push("TAG");
                ref_age.push(*max_ref_age_ms);
                min_keep.push(None);
                snap_age.push(None);
            }
        }
    }
    vec![
        Arc::new(StringArray::from_iter_values(
            refs.iter().map(|(n, _)| n.as_str()),
        )),
        Arc::new(StringArray::from(kind)),
        Arc::new(Int64Array::from_iter_values(
            refs.iter().map(|(_, r)| r.snapshot_id),
        )),
        Arc::new(Int64Array::from(ref_age)),
        Arc::new(Int32Array::from(min_keep)),
        Arc::new(Int64Array::from(snap_age)),
    ]
}

#[async_trait]
impl TableProvider for IcebergMetadataTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::View
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let batch = self.batch(state).await?;
        let table = MemTable::try_new(Arc::clone(&self.schema), vec![vec![batch]])?;
        table.scan(state, projection, filters, limit).await
    }
}

/// A schema provider that also resolves `t$kind` to the metadata tables of its Iceberg
/// tables (see the module docs); everything else is `inner`'s.
#[derive(Debug)]
pub struct MetadataTableSchema {
    inner: Arc<dyn SchemaProvider>,
}

impl MetadataTableSchema {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn SchemaProvider>) -> Self {
        Self { inner }
    }
}

/// The metadata table `name` (`t$kind`) of `base`'s table, when `base` is an Iceberg table.
pub fn metadata_table_of(
    name: &str,
    base: Option<Arc<dyn TableProvider>>,
) -> Result<Option<Arc<dyn TableProvider>>> {
    let Some((_, kind)) = MetadataTableKind::split(name) else {
        return Ok(None);
    };
    let Some(base) = base else {
        return Ok(None);
    };
    let Some(table) = base.downcast_ref::<IcebergTable>() else {
        return Err(plan_datafusion_err!(
            "'{name}': only Iceberg tables have metadata tables"
        ));
    };
    Ok(Some(Arc::new(IcebergMetadataTable::try_new(
        table.clone(),
        kind,
    )?)))
}

#[async_trait]
impl SchemaProvider for MetadataTableSchema {
    fn table_names(&self) -> Vec<String> {
        self.inner.table_names()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if let Some(table) = self.inner.table(name).await? {
            return Ok(Some(table));
        }
        let Some((base, _)) = MetadataTableKind::split(name) else {
            return Ok(None);
        };
        metadata_table_of(name, self.inner.table(base).await?)
    }

    fn register_table(
        &self,
        name: String,
        table: Arc<dyn TableProvider>,
    ) -> Result<Option<Arc<dyn TableProvider>>> {
        self.inner.register_table(name, table)
    }

    fn deregister_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        self.inner.deregister_table(name)
    }

    fn table_exist(&self, name: &str) -> bool {
        self.inner.table_exist(name)
    }
}
