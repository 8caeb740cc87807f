//! [`IcebergTable`]: a `TableProvider` over one snapshot of an Iceberg table.
//!
//! `scan` plans, `execute` reads: filters become physical expressions, extracted into
//! per-column filters and a residual (the same extraction as Hive tables); the planner
//! ([`crate::plan`]) reads the manifests and prunes manifests and data files with those
//! filters; each data file becomes byte-range splits (at its `split_offsets` when it has
//! them) carrying the values of columns it does not store (identity partition values,
//! `initial-default`s) and its equality-delete sets; a `LakeScanExec` reads them with file
//! columns matched by field id, equality-delete keys as auxiliary channels.

use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{
    Result, ScalarValue, Statistics, exec_datafusion_err, exec_err, internal_err, not_impl_err,
    plan_datafusion_err,
};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_expr::utils::conjunction_opt;
use datafusion::physical_optimizer::pruning::PruningPredicate;
use datafusion::physical_plan::{ExecutionPlan, PhysicalExpr};
use iceberg::spec::SnapshotRef;
use lakescan_core::api::{
    AdapterTable, Assignments, Attempts, ColumnHandle, Extraction, FieldIdMatching, FieldIdNode,
    FileSplit, LakeScanOptions, MappedName, NestedIds, PlannedScan, PlanningStats, RowCount,
    ScanStatistics, SplitValue, StageColumns, TableHandle, exact_pushdown, physical_conjuncts,
};

use crate::deletes::equality::EqualityDeleteSet;
use crate::deletes::{DeleteFile, DeleteKind};
use crate::metadata::LoadedMetadata;
use crate::metadata_columns::{FileInfo, MetadataColumn, MetadataColumns, MetadataSelection};
use crate::paths::PathResolver;
use crate::plan::{PlannedFile, Planner};
use crate::reader::{IcebergAdapter, SplitDeletes};
use crate::schema::{ScanSchema, StringTypes};

/// One snapshot of an Iceberg table, read with lakescan's scan path.
#[derive(Debug, Clone)]
pub struct IcebergTable {
    loaded: LoadedMetadata,
    snapshot: Option<SnapshotRef>,
    schema: ScanSchema,
    handle: TableHandle,
    paths: PathResolver,
    /// Table option; the session's `lakescan.split_size` when `None`.
    split_size: Option<u64>,
    /// The store of the metadata file (scans of an empty table read nothing from it).
    metadata_store: ObjectStoreUrl,
    /// Metadata columns shown after the data columns.
    metadata_columns: MetadataColumns,
}

impl IcebergTable {
    /// A table over `snapshot` of `loaded`, read with `schema`.
    pub fn try_new(
        name: impl Into<String>,
        loaded: LoadedMetadata,
        snapshot: Option<SnapshotRef>,
        schema: ScanSchema,
        paths: PathResolver,
        split_size: Option<u64>,
        metadata_store: ObjectStoreUrl,
    ) -> Result<Self> {
        let metadata_columns = MetadataColumns::default();
        let handle = table_handle(name.into(), &schema, &loaded, &metadata_columns)?;
        Ok(Self {
            loaded,
            snapshot,
            schema,
            handle,
            paths,
            split_size: split_size.map(|b| b.max(1)),
            metadata_store,
            metadata_columns,
        })
    }

    /// The same table showing the metadata columns of `selection` after its data columns
    /// (`view_types`: `_partition`'s strings as view types, like the data columns').
    pub fn with_metadata_columns(
        mut self,
        selection: &MetadataSelection,
        view_types: StringTypes,
    ) -> Result<Self> {
        let data_columns: Vec<String> = self
            .schema
            .fields
            .iter()
            .map(|f| f.name().clone())
            .collect();
        self.metadata_columns =
            MetadataColumns::try_new(selection, &self.loaded.metadata, &data_columns, view_types)?;
        let name = self.handle.table_name().to_string();
        self.handle = table_handle(name, &self.schema, &self.loaded, &self.metadata_columns)?;
        Ok(self)
    }

    /// The table's name.
    pub fn name(&self) -> &str {
        self.handle.table_name()
    }

    /// The table's metadata.
    pub fn loaded(&self) -> &LoadedMetadata {
        &self.loaded
    }

    /// The schema the table reads with.
    pub fn scan_schema(&self) -> &ScanSchema {
        &self.schema
    }

    /// How the table's paths resolve.
    pub fn paths(&self) -> &PathResolver {
        &self.paths
    }

    /// The metadata columns this table shows.
    pub fn metadata_columns(&self) -> &[MetadataColumn] {
        self.metadata_columns.columns()
    }

    /// The table option `split_size`, if given.
    pub fn split_size_option(&self) -> Option<u64> {
        self.split_size
    }

    /// The store of the metadata file.
    pub fn metadata_store(&self) -> &ObjectStoreUrl {
        &self.metadata_store
    }
}

/// The table handle: the data columns matched by field id, then the metadata columns.
fn table_handle(
    name: String,
    schema: &ScanSchema,
    loaded: &LoadedMetadata,
    metadata_columns: &MetadataColumns,
) -> Result<TableHandle> {
    {
        let mut columns: Vec<ColumnHandle> = schema
            .fields
            .iter()
            .zip(&schema.field_ids)
            .zip(&schema.member_defaults)
            .map(|((f, id), member_defaults)| {
                let mut c = ColumnHandle::regular(f);
                c.field_id = Some(*id);
                c.member_defaults = member_defaults.clone();
                c
            })
            .collect();
        columns.extend(metadata_columns.handles());
        let mut handle = TableHandle::try_new(name, columns)?;
        let mut ids = schema.ids.clone();
        ids.extend(metadata_columns.stored_ids());
        handle.field_ids = Some(Arc::new(FieldIdMatching {
            table: ids,
            name_mapping: name_mapping(loaded)?,
        }));
        Ok(handle)
    }
}

impl IcebergTable {
    /// The snapshot this table reads (`None`: the table has none yet).
    pub fn snapshot(&self) -> Option<&SnapshotRef> {
        self.snapshot.as_ref()
    }

    /// The metadata file this table was loaded from.
    pub fn metadata_file(&self) -> &str {
        &self.loaded.file
    }

    /// The splits of the planned files, and the columns their equality deletes compare.
    pub(crate) fn splits(&self, files: Vec<PlannedFile>, split_size: u64) -> Result<Splits> {
        let mut splits = Splits::default();
        for file in files {
            self.add_splits(&mut splits, file, split_size, vec![])?;
        }
        Ok(splits)
    }

    /// Adds the splits of `file` to `splits`, with the info values `info` besides the
    /// table's own (a changelog's change columns).
    pub(crate) fn add_splits(
        &self,
        splits: &mut Splits,
        file: PlannedFile,
        split_size: u64,
        info: Vec<(String, ScalarValue)>,
    ) -> Result<()> {
        let Some(format) = crate::plan::row_format(file.format) else {
            return exec_err!(
                "Iceberg data file '{}' is a Puffin file: Puffin files hold statistics and \
                 deletion vectors, not rows",
                file.written_path
            );
        };
        // The scan's store is its first file's; a file elsewhere names its own (delete
        // files elsewhere are found by their readers).
        let scan_store = splits
            .store
            .get_or_insert_with(|| file.location.store.clone());
        let mut split = FileSplit::builder(file.location.path.clone(), file.file_size)
            .format(format)
            .written_path(file.written_path.as_str())
            .values(
                self.missing_values()
                    .into_iter()
                    .map(|(c, v)| (c, SplitValue::Missing(v))),
            )
            .values(file.identity_values.iter().map(|(i, v)| {
                let column = self.schema.fields[*i].name().clone();
                (column, SplitValue::Known(v.clone()))
            }));
        if *scan_store != file.location.store {
            split = split.store(file.location.store.clone());
        }
        if !self.metadata_columns.columns().is_empty() {
            let values = self.metadata_info(&file)?;
            split = split.values(values.into_iter().map(|(k, v)| (k, SplitValue::Info(v))));
        }
        split = split.values(info.into_iter().map(|(k, v)| (k, SplitValue::Info(v))));
        splits.statistics.push(Arc::clone(&file.statistics));
        let equality = self.equality_sets(&file, &mut splits.dropped_keys)?;
        for set in &equality {
            for (name, _) in &set.columns {
                if !splits.key_columns.contains(name) {
                    splits.key_columns.push(name.clone());
                }
            }
        }
        if !equality.is_empty() || !file.deletes.position.is_empty() {
            let key = splits.deletes.push(Arc::new(SplitDeletes {
                equality,
                position_deletes: file.deletes.position.clone(),
                data_location: file.location.clone(),
                data_written: file.written_path.clone(),
            }))?;
            split = split.adapter(key);
        }
        let split = split.build()?;
        // A file of a format that cannot be read in ranges (Avro) is one split.
        let ranges = match format.seam().splittable() {
            true => split_ranges(&file, split_size),
            false => vec![(0, file.file_size)],
        };
        for (start, length) in ranges {
            splits.splits.push(split.with_range(start, length)?);
        }
        Ok(())
    }

    /// The info columns of `file`'s splits behind its metadata columns.
    fn metadata_info(&self, file: &PlannedFile) -> Result<Vec<(String, ScalarValue)>> {
        let metadata = &self.loaded.metadata;
        let Some(spec) = metadata.partition_spec_by_id(file.spec_id) else {
            return Err(exec_datafusion_err!(
                "Iceberg data file '{}' names partition spec {}, which table '{}' does not have",
                file.written_path,
                file.spec_id,
                self.loaded.file
            ));
        };
        self.metadata_columns.info_columns(&FileInfo {
            written_path: &file.written_path,
            spec,
            partition: &file.partition,
            first_row_id: file.first_row_id,
            data_sequence_number: file.data_sequence_number,
        })
    }

    /// The equality deletes of `file` grouped by key (their equality field ids); key columns
    /// the scan's schema dropped are added to `dropped`.
    fn equality_sets(
        &self,
        file: &PlannedFile,
        dropped: &mut Vec<DroppedKey>,
    ) -> Result<Vec<Arc<EqualityDeleteSet>>> {
        let mut sets: Vec<(Vec<i32>, Vec<Arc<DeleteFile>>)> = vec![];
        for delete in &file.deletes.equality {
            let DeleteKind::Equality { field_ids } = &delete.kind else {
                continue;
            };
            match sets.iter_mut().find(|(ids, _)| ids == field_ids) {
                Some((_, files)) => files.push(Arc::clone(delete)),
                None => sets.push((field_ids.clone(), vec![Arc::clone(delete)])),
            }
        }
        sets.into_iter()
            .map(|(ids, files)| {
                let columns = ids
                    .iter()
                    .map(|id| {
                        self.key_column(*id, &files[0], dropped)
                            .map(|name| (name, *id))
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(Arc::new(EqualityDeleteSet { columns, files }))
            })
            .collect()
    }

    /// The top-level column an equality id names: a column of the scan's schema, or a
    /// column an older schema had (the spec: deletes on a dropped column still apply), read
    /// by field id under a name no table column can have ([`DroppedKey`]).
    fn key_column(
        &self,
        id: i32,
        delete: &DeleteFile,
        dropped: &mut Vec<DroppedKey>,
    ) -> Result<String> {
        if let Some(i) = self.schema.column_of_id(id) {
            return Ok(self.schema.fields[i].name().clone());
        }
        if let Some(key) = dropped.iter().find(|k| k.field_id == id) {
            return Ok(key.name.clone());
        }
        let mut schemas: Vec<_> = self.loaded.metadata.schemas_iter().collect();
        schemas.sort_by_key(|s| std::cmp::Reverse(s.schema_id()));
        let top_level = schemas
            .iter()
            .find_map(|s| s.as_struct().fields().iter().find(|f| f.id == id).cloned());
        if let Some(field) = top_level {
            let key = DroppedKey {
                name: format!("{DROPPED_KEY_PREFIX}{id}"),
                field_id: id,
                data_type: crate::schema::arrow_type(&field.field_type, StringTypes::Plain)?,
            };
            dropped.push(key);
            return Ok(format!("{DROPPED_KEY_PREFIX}{id}"));
        }
        let known = schemas.iter().any(|s| s.field_by_id(id).is_some());
        match known {
            true => not_impl_err!(
                "Iceberg equality-delete file '{}' compares field id {id}, which is a member of \
                 a struct, not a top-level column; not supported yet",
                delete.written_path
            ),
            false => Err(exec_datafusion_err!(
                "Iceberg equality-delete file '{}' compares field id {id}, which no schema of \
                 table '{}' has",
                delete.written_path,
                self.loaded.file
            )),
        }
    }

    /// Values of the columns a file may not store: their `initial-default`s. (Identity
    /// partition columns are `known_values` of the split: every row has the partition value,
    /// stored or not, so they are never decoded and their filters run before the file is
    /// opened.)
    fn missing_values(&self) -> Vec<(String, datafusion::common::ScalarValue)> {
        self.schema
            .defaults
            .iter()
            .zip(&self.schema.fields)
            .filter_map(|(default, field)| Some((field.name().clone(), default.clone()?)))
            .collect()
    }
}

/// What a scan of planned files reads.
pub(crate) struct FileScan<'a> {
    /// The table handle of the scanned table (its columns).
    pub handle: &'a TableHandle,
    /// The scan's filters, extracted.
    pub extraction: Extraction,
    /// The splits.
    pub splits: Splits,
    /// Planning counters.
    pub counts: crate::plan::PlanCounts,
    /// The scan's filters over the table schema, when its statistics are the files' less
    /// what they remove (`None`: no statistics, as for a changelog).
    pub conjuncts: Option<Vec<Arc<dyn PhysicalExpr>>>,
}

impl IcebergTable {
    /// The split size of scans in `state`.
    pub(crate) fn split_size(&self, state: &dyn Session) -> u64 {
        let session = LakeScanOptions::from_config(state.config_options());
        self.split_size.unwrap_or(session.split_size)
    }

    /// The `LakeScanExec` of `scan`.
    pub(crate) fn exec(
        &self,
        state: &dyn Session,
        scan: FileScan<'_>,
        projection: Option<&Vec<usize>>,
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let FileScan {
            handle,
            extraction,
            splits,
            counts,
            conjuncts,
        } = scan;
        let Splits {
            store,
            splits,
            deletes,
            statistics,
            key_columns,
            dropped_keys,
        } = splits;
        // Rows the scan returns: the files' rows when no delete applies and no filter is left.
        let statistics = match conjuncts {
            Some(conjuncts) if state.config_options().execution.collect_statistics => {
                let rows = match deletes.is_empty() {
                    true => RowCount::Exact,
                    false => RowCount::Estimated,
                };
                ScanStatistics::try_new(handle, &statistics, &conjuncts, rows)
                    .inspect_err(|e| log::debug!("{}: no statistics: {e}", self.loaded.file))
                    .ok()
            }
            _ => None,
        };
        let store = store.unwrap_or_else(|| self.metadata_store.clone());
        let all: Vec<usize> = (0..handle.columns().len()).collect();
        let mut handle = with_dropped_keys(handle, &dropped_keys)?;
        handle = handle.with_filters(extraction.filters, conjunction_opt(extraction.residual));
        handle.stage_columns = StageColumns::missing_allowed(key_columns);
        let assignments = Assignments::new(projection.cloned().unwrap_or(all));
        let mut extra = vec![
            ("manifests_total", counts.manifests_total),
            ("manifests_pruned", counts.manifests_pruned),
            ("data_files_total", counts.data_files_total),
            ("data_files_pruned", counts.data_files_pruned),
            ("delete_files_total", counts.delete_files_total),
        ];
        // Object stores only (local reads make no requests; their plans do not show it).
        if let Some(requests) = counts.requests
            && self.metadata_store.as_str() != "file:///"
        {
            extra.extend(requests.planning_metrics());
        }
        let mut stats = PlanningStats::default();
        stats.add_extra(extra);
        PlannedScan {
            table: handle,
            assignments,
            splits,
            store,
            adapter: Arc::new(IcebergAdapter::new(self.paths.clone(), deletes)),
            planning: stats,
            statistics,
        }
        .into_exec(state, limit)
    }

    /// A planner of this table's files without filters (callers add theirs).
    pub(crate) fn planner<'a>(
        &'a self,
        runtime: &'a Arc<datafusion::execution::runtime_env::RuntimeEnv>,
    ) -> Planner<'a> {
        Planner {
            runtime,
            paths: &self.paths,
            loaded: &self.loaded,
            schema: &self.schema,
            filters: Default::default(),
            residual_pruning: None,
        }
    }

    /// An error when a scan of `projection` (all columns when `None`) with `filters` needs a
    /// column of a type lakescan does not read yet ([`ScanSchema::unreadable`]).
    pub(crate) fn check_readable(
        &self,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
    ) -> Result<()> {
        let all: Vec<usize> = (0..self.schema.fields.len()).collect();
        let projected = projection.unwrap_or(&all).iter().copied();
        let filtered = filters
            .iter()
            .flat_map(|f| f.column_refs())
            .filter_map(|c| self.schema.fields.iter().position(|f| f.name() == &c.name));
        for column in projected.chain(filtered) {
            if let Some(Some((member, written))) = self.schema.unreadable.get(column) {
                return not_impl_err!(
                    "column '{member}' of Iceberg table '{}' has type {written}; lakescan does \
                     not read {written} values yet (select the other columns)",
                    self.loaded.file
                );
            }
        }
        Ok(())
    }

    /// The table handle (its columns, field-id matching).
    pub(crate) fn handle(&self) -> &TableHandle {
        &self.handle
    }
}

/// What turning planned files into splits produced.
#[derive(Debug, Default)]
pub(crate) struct Splits {
    /// The scan's object store: its first file's (`None`: no file yet).
    pub store: Option<ObjectStoreUrl>,
    pub splits: Vec<FileSplit>,
    /// The delete files of the splits that have some, by their adapter key.
    pub deletes: AdapterTable<Arc<SplitDeletes>>,
    /// Each file's statistics from its manifest entry (for the optimizer).
    pub statistics: Vec<Arc<Statistics>>,
    /// Columns equality deletes compare: read by every split, never output.
    pub key_columns: Vec<String>,
    /// Of those, the ones the scan's schema dropped.
    pub dropped_keys: Vec<DroppedKey>,
}

/// Prefix of the names under which dropped equality-key columns are read.
const DROPPED_KEY_PREFIX: &str = "__lakescan_dropped_key_";

/// An equality-delete key column the scan's schema no longer has: read from data files by
/// its field id as an auxiliary column (never output), typed as the newest schema that had
/// it typed it.
#[derive(Debug, Clone)]
pub(crate) struct DroppedKey {
    /// The name it is read under.
    pub name: String,
    /// Its field id.
    pub field_id: i32,
    /// Its type.
    pub data_type: arrow::datatypes::DataType,
}

/// `handle` with the columns of `dropped` appended (after every column a projection can
/// name, so none is ever output), matched by their field ids.
fn with_dropped_keys(handle: &TableHandle, dropped: &[DroppedKey]) -> Result<TableHandle> {
    if dropped.is_empty() {
        return Ok(handle.clone());
    }
    let mut columns = handle.columns().to_vec();
    let mut ids = match &handle.field_ids {
        Some(matching) => FieldIdMatching::clone(matching),
        None => return internal_err!("an Iceberg table handle without field ids"),
    };
    for key in dropped {
        let field = arrow::datatypes::Field::new(&key.name, key.data_type.clone(), true);
        let mut column = ColumnHandle::regular(&field);
        column.field_id = Some(key.field_id);
        columns.push(column);
        let node = FieldIdNode {
            name: key.name.clone(),
            nested: NestedIds::Primitive,
        };
        ids.table.extend([(key.field_id, node)]);
    }
    let mut out = TableHandle::try_new(handle.table_name(), columns)?;
    out.field_ids = Some(Arc::new(ids));
    Ok(out)
}

/// The table's name mapping (`schema.name-mapping.default`), for files without field ids.
fn name_mapping(loaded: &LoadedMetadata) -> Result<Option<Vec<MappedName>>> {
    let Some(json) = loaded
        .metadata
        .properties()
        .get(iceberg::spec::DEFAULT_SCHEMA_NAME_MAPPING)
    else {
        return Ok(None);
    };
    let mapping: iceberg::spec::NameMapping = serde_json::from_str(json).map_err(|e| {
        plan_datafusion_err!(
            "Iceberg table '{}': property {} is not a valid name mapping: {e}",
            loaded.file,
            iceberg::spec::DEFAULT_SCHEMA_NAME_MAPPING
        )
    })?;
    fn convert(fields: &[iceberg::spec::MappedField]) -> Vec<MappedName> {
        fields
            .iter()
            .map(|f| MappedName {
                field_id: f.field_id(),
                names: f.names().to_vec(),
                fields: convert(
                    &f.fields()
                        .iter()
                        .map(|c| c.as_ref().clone())
                        .collect::<Vec<_>>(),
                ),
            })
            .collect()
    }
    Ok(Some(convert(mapping.fields())))
}

/// Byte ranges of the splits of `file`: runs of row groups (at its `split_offsets`) of about
/// `target` bytes, or equal cuts when the offsets are missing or do not fit the file.
fn split_ranges(file: &PlannedFile, target: u64) -> Vec<(u64, u64)> {
    let size = file.file_size;
    let offsets: Option<Vec<u64>> = file.split_offsets.as_ref().and_then(|o| {
        let o: Vec<u64> = o
            .iter()
            .map(|v| u64::try_from(*v).ok())
            .collect::<Option<_>>()?;
        let valid = !o.is_empty() && o.windows(2).all(|w| w[0] < w[1]) && o[o.len() - 1] < size;
        valid.then_some(o)
    });
    let target = target.max(1);
    let Some(offsets) = offsets else {
        return match size <= target {
            true => vec![(0, size)],
            false => (0..size)
                .step_by(usize::try_from(target).unwrap_or(usize::MAX))
                .map(|start| (start, target.min(size - start)))
                .collect(),
        };
    };
    // Row group k spans [offsets[k], offsets[k + 1]) (the last one up to the footer): the
    // midpoint rule assigns it to the range that starts at its offset.
    let mut ranges = vec![];
    let mut start = 0;
    for &offset in &offsets[1..] {
        if offset - start >= target {
            ranges.push((start, offset - start));
            start = offset;
        }
    }
    ranges.push((start, size - start));
    ranges
}

#[async_trait]
impl TableProvider for IcebergTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(self.handle.table_schema())
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.check_readable(projection, filters)?;
        let conjuncts = physical_conjuncts(state, self.handle.table_schema(), filters)?;
        let extraction = Extraction::from_conjuncts(&conjuncts, self.handle.table_schema());
        let runtime = state.runtime_env();
        let planner = Planner {
            filters: Planner::top_level_filters(&self.schema, &extraction.filters),
            residual_pruning: conjunction_opt(extraction.residual.clone()).and_then(|r| {
                PruningPredicate::try_new(r, Arc::clone(self.handle.table_schema())).ok()
            }),
            ..self.planner(runtime)
        };
        let attempts = Attempts::default();
        let mut plan = attempts.count(planner.plan(self.snapshot.as_ref())).await?;
        plan.counts.requests = Some(attempts.tally());
        let splits = self.splits(plan.files, self.split_size(state))?;
        let scan = FileScan {
            handle: &self.handle,
            extraction,
            splits,
            counts: plan.counts,
            conjuncts: Some(conjuncts),
        };
        self.exec(state, scan, projection, limit)
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(exact_pushdown(filters))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(offsets: Option<Vec<i64>>, size: u64) -> PlannedFile {
        PlannedFile {
            written_path: "f".into(),
            location: crate::paths::PathResolver::new(Some("/"))
                .unwrap()
                .resolve("/f")
                .unwrap(),
            format: iceberg::spec::DataFileFormat::Parquet,
            record_count: 1,
            file_size: size,
            split_offsets: offsets,
            spec_id: 0,
            data_sequence_number: 0,
            first_row_id: None,
            identity_values: vec![],
            partition: iceberg::spec::Struct::empty(),
            deletes: Arc::default(),
            statistics: Arc::new(Statistics::new_unknown(&arrow::datatypes::Schema::empty())),
        }
    }

    #[test]
    fn splits_follow_row_group_offsets() {
        let f = file(Some(vec![4, 100, 200, 300]), 400);
        assert_eq!(split_ranges(&f, 150), [(0, 200), (200, 200)]);
        assert_eq!(split_ranges(&f, 1000), [(0, 400)]);
        assert_eq!(
            split_ranges(&f, 1),
            [(0, 100), (100, 100), (200, 100), (300, 100)]
        );
        // Offsets that do not fit the file are ignored.
        let bad = file(Some(vec![4, 500]), 400);
        assert_eq!(split_ranges(&bad, 1000), [(0, 400)]);
        assert_eq!(split_ranges(&file(None, 10), 4), [(0, 4), (4, 4), (8, 2)]);
    }
}
