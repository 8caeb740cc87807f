//! Scan planning (the Iceberg spec's "Scan Planning"): manifest list → manifests →
//! entries → the data files a scan reads, as plain data ([`PlannedFile`]) before anything is
//! executed.
//!
//! ```text
//!  snapshot.manifest-list ─▶ ManifestFile* ─prune by partition summaries─▶ Manifest
//!     ─▶ entries: inherit snapshot id / sequence numbers, drop DELETED
//!     ─▶ data files ─prune by identity partition values and column bounds─▶ PlannedFile*
//!     ─▶ delete files ─▶ DeleteIndex: the equality deletes, position deletes and deletion
//!        vectors of each data file
//! ```
//!
//! Pruning uses the scan's per-column [`Filter`]s, the same ones the Parquet reader applies
//! to row groups: a manifest is skipped when a partition field's summary bounds (identity,
//! or the source values of an order-preserving transform) cannot match its column's filter,
//! a data file when a partition value (identity, or through [`transforms`]: temporal,
//! truncate, bucket) or its column bounds cannot. Bounds of floating-point columns are used only when the file counts
//! no NaN (Iceberg bounds leave NaN out). Hand-written: the `iceberg` crate's manifest and
//! metrics evaluators are private to it. The pruning tests are in the `pruning` submodule.

pub mod avro_header;
pub mod changes;
pub mod manifest;
pub mod partition;
pub mod partition_record;
mod pruning;

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::common::{
    DataFusionError, Result, ScalarValue, Statistics, exec_datafusion_err, internal_err,
};
use datafusion::execution::runtime_env::RuntimeEnv;
use iceberg::spec::{
    DataContentType, DataFile, DataFileFormat, Datum, FormatVersion, ManifestContentType,
    ManifestEntry, ManifestFile, ManifestList, ManifestStatus, PartitionSpec, PrimitiveLiteral,
    SnapshotRef, Struct, TableMetadata, Transform,
};
use lakescan_core::api::{Filter, Subfield};
use object_store::ObjectStoreExt;

use crate::deletes::position::FILE_PATH_ID;
use crate::deletes::{DataFileKey, DeleteFile, DeleteIndexBuilder, DeleteKind, FileDeletes};
use crate::file_statistics::optimizer_statistics;
use crate::metadata::{INLINE_MANIFESTS, LoadedMetadata};
use crate::paths::{FileLocation, PathResolver};
use crate::schema::{ScanSchema, literal_to_scalar};
use crate::transforms;
use datafusion::physical_optimizer::pruning::PruningPredicate;

/// One data file a scan reads, with the facts of it that reading needs.
#[derive(Debug, Clone)]
pub struct PlannedFile {
    /// The path as the manifest wrote it (messages, `_file` later).
    pub written_path: String,
    /// Where it is.
    pub location: FileLocation,
    /// Its format.
    pub format: DataFileFormat,
    /// Rows in the file.
    pub record_count: u64,
    /// Bytes in the file.
    pub file_size: u64,
    /// Row-group start offsets, when the writer recorded them.
    pub split_offsets: Option<Vec<i64>>,
    /// The partition spec it was written with.
    pub spec_id: i32,
    /// Its data sequence number (0 in v1 tables).
    pub data_sequence_number: i64,
    /// The row id of its first row (v3): the manifest entry's, else inherited from the
    /// manifest's `first_row_id` (see `RowIdAssigner`); `None` without row lineage.
    pub first_row_id: Option<i64>,
    /// Values of columns the file does not store, by column index: identity partition
    /// values of its spec (a column the file lacks reads its partition value).
    pub identity_values: Vec<(usize, ScalarValue)>,
    /// Its partition under its spec.
    pub partition: Struct,
    /// The delete files that apply to it (shared with the data files that get the same).
    pub deletes: Arc<FileDeletes>,
    /// What its manifest entry says of its rows (count, null counts, bounds), for the
    /// optimizer.
    pub statistics: Arc<Statistics>,
}

/// Counts of one planning pass, shown with the scan's metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanCounts {
    /// Manifests of the snapshot (data and delete manifests).
    pub manifests_total: usize,
    /// Manifests skipped by their partition summaries.
    pub manifests_pruned: usize,
    /// Live data files in the manifests read.
    pub data_files_total: usize,
    /// Of those, skipped by partition values or column bounds.
    pub data_files_pruned: usize,
    /// Live delete files in the manifests read.
    pub delete_files_total: usize,
    /// HTTP requests planning sent (manifest list and manifests), when they were counted
    /// (`lakescan_core::api::CountingConnector`; stores without the counting connector count none).
    pub requests: Option<lakescan_core::api::Tally>,
}

/// What a planning pass produced.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// The data files to read.
    pub files: Vec<PlannedFile>,
    /// Counts for `EXPLAIN ANALYZE`.
    pub counts: PlanCounts,
}

/// Everything planning reads besides the files.
pub struct Planner<'a> {
    /// The session's object stores (metadata files may name any registered store).
    pub runtime: &'a Arc<RuntimeEnv>,
    /// Resolves the paths the metadata writes.
    pub paths: &'a PathResolver,
    /// The table metadata.
    pub loaded: &'a LoadedMetadata,
    /// The schema the scan reads with.
    pub schema: &'a ScanSchema,
    /// The scan's filters on top-level columns, by column index.
    pub filters: BTreeMap<usize, &'a Filter>,
    /// The residual as a pruning predicate over the table schema, when it has one.
    pub residual_pruning: Option<PruningPredicate>,
}

impl<'a> Planner<'a> {
    /// Keeps the filters on whole top-level columns of `filters` (keyed by subfield).
    pub fn top_level_filters(
        schema: &ScanSchema,
        filters: &'a BTreeMap<Subfield, Filter>,
    ) -> BTreeMap<usize, &'a Filter> {
        filters
            .iter()
            .filter(|(s, _)| s.path().is_empty())
            .filter_map(|(s, f)| {
                let i = schema.fields.iter().position(|c| c.name() == s.root())?;
                Some((i, f))
            })
            .collect()
    }

    /// Plans the files of `snapshot` (`None`: an empty table).
    pub async fn plan(&self, snapshot: Option<&SnapshotRef>) -> Result<Plan> {
        let mut plan = Plan::default();
        let Some(snapshot) = snapshot else {
            return Ok(plan);
        };
        let mut deletes = DeleteIndexBuilder::default();
        let mut files = vec![];
        let manifests = self.manifests(snapshot).await?;
        let kept = self.prune_manifests_by_residual(&manifests);
        for (manifest, kept) in manifests.iter().zip(kept) {
            plan.counts.manifests_total += 1;
            if !holds_live_files(manifest) || !kept || !self.manifest_may_match(manifest)? {
                plan.counts.manifests_pruned += 1;
                continue;
            }
            let listed_in = snapshot.manifest_list();
            let listed_in = (!listed_in.starts_with(INLINE_MANIFESTS)).then_some(listed_in);
            let (entries, spec) = self.entries_listed_in(manifest, listed_in).await?;
            let mut candidates: Vec<(DataFile, PlannedFile)> = vec![];
            for (entry, first_row_id) in entries {
                if entry.status == ManifestStatus::Deleted {
                    continue;
                }
                match (manifest.content, entry.data_file.content_type()) {
                    (ManifestContentType::Data, DataContentType::Data) => {
                        plan.counts.data_files_total += 1;
                        match self.planned_file(&entry, &spec)? {
                            Some(file) => candidates.push((
                                entry.data_file,
                                PlannedFile {
                                    first_row_id,
                                    ..file
                                },
                            )),
                            None => plan.counts.data_files_pruned += 1,
                        }
                    }
                    (ManifestContentType::Deletes, DataContentType::PositionDeletes)
                    | (ManifestContentType::Deletes, DataContentType::EqualityDeletes) => {
                        plan.counts.delete_files_total += 1;
                        deletes.add(self.delete_file(&entry, &spec)?)?;
                    }
                    (content, kind) => {
                        return Err(exec_datafusion_err!(
                            "Iceberg manifest '{}' ({content} manifest) lists file '{}' with \
                             content {kind:?}",
                            manifest.manifest_path,
                            entry.data_file.file_path()
                        ));
                    }
                }
            }
            let kept = self.prune_by_residual(&candidates);
            for ((_, file), keep) in candidates.into_iter().zip(kept) {
                match keep {
                    true => files.push(file),
                    false => plan.counts.data_files_pruned += 1,
                }
            }
        }
        let mut deletes = deletes.build();
        for mut file in files {
            let key = DataFileKey {
                location: &file.location,
                sequence_number: file.data_sequence_number,
                spec_id: file.spec_id,
                partition: &file.partition,
            };
            file.deletes = deletes.deletes(key);
            plan.files.push(file);
        }
        Ok(plan)
    }

    /// The entries of `manifest` (deleted ones included) with the sequence numbers and
    /// first row ids they inherit, and the manifest's partition spec.
    pub async fn entries(
        &self,
        manifest: &ManifestFile,
    ) -> Result<(Vec<(ManifestEntry, Option<i64>)>, Arc<PartitionSpec>)> {
        self.entries_listed_in(manifest, None).await
    }

    /// [`Self::entries`] of a manifest that the manifest list at `listed_in` names (an
    /// error that it does not exist names the list too).
    async fn entries_listed_in(
        &self,
        manifest: &ManifestFile,
        listed_in: Option<&str>,
    ) -> Result<(Vec<(ManifestEntry, Option<i64>)>, Arc<PartitionSpec>)> {
        let bytes = self
            .read(&manifest.manifest_path, "manifest", listed_in)
            .await?;
        let manifest::ParsedManifest {
            manifest: parsed,
            spec,
        } = manifest::parse(&bytes, manifest, self.metadata())
            .map_err(|e| self.corrupt(&manifest.manifest_path, "manifest", e))?;
        let (entries, _) = parsed.into_parts();
        let mut row_ids = RowIdAssigner(manifest.first_row_id.map(|id| id as i64));
        let entries = entries
            .into_iter()
            .map(|entry| {
                let entry = inherit(Arc::unwrap_or_clone(entry), manifest)
                    .map_err(|e| self.corrupt(&manifest.manifest_path, "manifest", e))?;
                let first_row_id = row_ids.assign(&entry);
                Ok((entry, first_row_id))
            })
            .collect::<Result<_>>()?;
        Ok((entries, spec))
    }

    /// A live delete entry as the delete index sees it.
    fn delete_file(&self, entry: &ManifestEntry, spec: &PartitionSpec) -> Result<DeleteFile> {
        let file = &entry.data_file;
        let bad = |what: &str| {
            exec_datafusion_err!(
                "Iceberg table '{}': delete file '{}' {what}",
                self.loaded.file,
                file.file_path()
            )
        };
        let kind = match (file.content_type(), file.file_format()) {
            (DataContentType::PositionDeletes, DataFileFormat::Puffin)
                if file.referenced_data_file().is_none() =>
            {
                return Err(bad(
                    "is a deletion vector without referenced_data_file (the spec requires the \
                     data file it deletes from)",
                ));
            }
            (DataContentType::PositionDeletes, DataFileFormat::Puffin) => {
                let (Some(offset), Some(length)) =
                    (file.content_offset(), file.content_size_in_bytes())
                else {
                    return Err(bad(
                        "is a deletion vector without content_offset / content_size_in_bytes",
                    ));
                };
                let (Ok(offset), Ok(length)) = (u64::try_from(offset), u64::try_from(length))
                else {
                    return Err(bad(
                        "has a negative content_offset or content_size_in_bytes",
                    ));
                };
                DeleteKind::DeletionVector { offset, length }
            }
            (DataContentType::PositionDeletes, _) => DeleteKind::Position,
            _ => match file.equality_ids() {
                Some(ids) if !ids.is_empty() => DeleteKind::Equality { field_ids: ids },
                _ => return Err(bad("is an equality delete file without equality ids")),
            },
        };
        let referenced_written = match &kind {
            DeleteKind::Position => file
                .referenced_data_file()
                .or_else(|| referenced_by_bounds(file)),
            _ => file.referenced_data_file(),
        };
        let referenced_data_file = match &referenced_written {
            Some(p) => Some(self.paths.resolve(p)?),
            None => None,
        };
        Ok(DeleteFile {
            written_path: file.file_path().to_string(),
            location: self.paths.resolve(file.file_path())?,
            kind,
            sequence_number: live_sequence_number(entry)?,
            spec_id: spec.spec_id(),
            unpartitioned: spec.is_unpartitioned(),
            partition: self.current_partition(file.file_path(), file.partition(), spec)?,
            referenced_data_file,
            referenced_written,
            record_count: file.record_count(),
            file_size: file.file_size_in_bytes(),
            // A deletion vector's Puffin file reads as bytes whatever this says.
            format: row_format(file.file_format()).unwrap_or_default(),
        })
    }

    /// The manifests of `snapshot`, from its manifest list (or listed inline, in v1).
    pub async fn manifests(&self, snapshot: &SnapshotRef) -> Result<Vec<ManifestFile>> {
        let list_path = snapshot.manifest_list();
        if list_path.starts_with(INLINE_MANIFESTS) {
            let paths = self.loaded.inline_manifests.get(&snapshot.snapshot_id());
            return Ok(paths
                .into_iter()
                .flatten()
                .map(|path| inline_manifest(path, snapshot.snapshot_id()))
                .collect());
        }
        let bytes = self.read(list_path, "manifest list", None).await?;
        let header = avro_header::AvroHeader::parse(&bytes).ok();
        if let Some(header) = &header {
            check_list_header(header).map_err(|e| self.corrupt(list_path, "manifest list", e))?;
        }
        let table_version = self.metadata().format_version();
        let mut first_error = None;
        for version in list_versions(header.as_ref(), table_version) {
            match ManifestList::parse_with_version(&bytes, version) {
                Ok(list) => return Ok(list.consume_entries().into_iter().collect()),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(self.corrupt(list_path, "manifest list", e)),
            None => Ok(vec![]),
        }
    }

    fn metadata(&self) -> &TableMetadata {
        &self.loaded.metadata
    }

    /// `partition` of the file at `path`, of `spec`, in the table's current partition types
    /// ([`partition::in_current_types`]).
    fn current_partition(
        &self,
        path: &str,
        partition: &Struct,
        spec: &PartitionSpec,
    ) -> Result<Struct> {
        partition::in_current_types(partition, spec, self.metadata().current_schema()).map_err(
            |e| exec_datafusion_err!("Iceberg table '{}': file '{path}': {e}", self.loaded.file),
        )
    }

    /// The planned file of a live data entry, or `None` when filters rule it out.
    pub(crate) fn planned_file(
        &self,
        entry: &ManifestEntry,
        spec: &PartitionSpec,
    ) -> Result<Option<PlannedFile>> {
        let file = &entry.data_file;
        let mut identity_values = vec![];
        for (i, field) in spec.fields().iter().enumerate() {
            if field.transform != Transform::Identity {
                if let Some((column, filter, _)) = self.source_column(field) {
                    let value = file.partition().fields().get(i).and_then(|v| v.as_ref());
                    let literal = value.and_then(|v| v.as_primitive_literal());
                    let source = self.schema.fields[column].data_type();
                    let known = value.is_none() || literal.is_some();
                    if known
                        && field.transform != Transform::Void
                        && !transforms::may_match(
                            &field.transform,
                            source,
                            literal.as_ref(),
                            filter,
                        )
                    {
                        return Ok(None);
                    }
                }
                continue;
            }
            let (Some(column), Some(source)) = (
                self.schema.column_of_id(field.source_id),
                self.schema.iceberg.field_by_id(field.source_id),
            ) else {
                continue;
            };
            let target = self.schema.fields[column].data_type();
            let value = match file.partition().fields().get(i) {
                Some(Some(lit)) => {
                    literal_to_scalar(lit, &source.field_type, target).map_err(|e| {
                        exec_datafusion_err!(
                            "Iceberg data file '{}': partition value of '{}': {e}",
                            file.file_path(),
                            field.name
                        )
                    })?
                }
                _ => ScalarValue::try_from(target)?,
            };
            if let Some(filter) = self.filters.get(&column)
                && !filter.test_constant(&value)
            {
                return Ok(None);
            }
            identity_values.push((column, value));
        }
        if !self.bounds_may_match(file) {
            return Ok(None);
        }
        Ok(Some(PlannedFile {
            written_path: file.file_path().to_string(),
            location: self.paths.resolve(file.file_path())?,
            format: file.file_format(),
            record_count: file.record_count(),
            file_size: file.file_size_in_bytes(),
            split_offsets: file.split_offsets().map(<[i64]>::to_vec),
            spec_id: spec.spec_id(),
            data_sequence_number: live_sequence_number(entry)?,
            first_row_id: None,
            identity_values,
            partition: self.current_partition(file.file_path(), file.partition(), spec)?,
            deletes: Arc::default(),
            statistics: Arc::new(optimizer_statistics(
                self.schema,
                file,
                pruning::null_counts_trusted(self.loaded),
            )),
        }))
    }

    /// The bytes of the `what` at `written`, which the manifest list at `listed_in` names.
    async fn read(
        &self,
        written: &str,
        what: &str,
        listed_in: Option<&str>,
    ) -> Result<bytes::Bytes> {
        let location = self.paths.resolve(written)?;
        let store = self.runtime.object_store(&location.store)?;
        // One GET, its retries (and a resumed body) counted as the scan's retries.
        let got = lakescan_core::api::single_read(async {
            match store.get(&location.path).await {
                Ok(r) => r.bytes().await,
                Err(e) => Err(e),
            }
        })
        .await;
        match got {
            Ok(bytes) => Ok(bytes),
            Err(object_store::Error::NotFound { .. }) => {
                let listed = listed_in
                    .map(|list| format!(" (listed in manifest list '{list}')"))
                    .unwrap_or_default();
                Err(exec_datafusion_err!(
                    "Iceberg table '{}': {what} '{written}'{listed} does not exist",
                    self.loaded.file
                ))
            }
            Err(e) => Err(exec_datafusion_err!(
                "Iceberg table '{}': cannot read {what} '{written}': {e}",
                self.loaded.file
            )),
        }
    }

    fn corrupt(&self, written: &str, what: &str, e: impl std::fmt::Display) -> DataFusionError {
        exec_datafusion_err!(
            "Iceberg table '{}': {what} '{written}' is not a valid Avro {what}: {e}",
            self.loaded.file
        )
    }
}

/// What the header of a manifest list rules out before the `iceberg` crate parses it: type
/// names `apache-avro` panics on, and a manifest in the list's place.
fn check_list_header(header: &avro_header::AvroHeader) -> Result<(), String> {
    header.check_type_names()?;
    match header.record_name() {
        Some(name) if name == avro_header::MANIFEST_RECORD => Err(format!(
            "it is a manifest, not a manifest list (its Avro records are {name})"
        )),
        _ => Ok(()),
    }
}

/// The format versions to read a manifest list with, first to last. A table upgraded to a
/// newer format keeps the manifest lists its older snapshots were written with: the version
/// the list says it has (read with another one, a value an older version lacks, such as a
/// manifest's content, would be ignored), else the table's, then the older ones.
fn list_versions(
    header: Option<&avro_header::AvroHeader>,
    table: FormatVersion,
) -> Vec<FormatVersion> {
    let written = header
        .and_then(|h| h.text("format-version"))
        .and_then(|v| match v.trim() {
            "1" => Some(FormatVersion::V1),
            "2" => Some(FormatVersion::V2),
            "3" => Some(FormatVersion::V3),
            _ => None,
        });
    match written {
        Some(version) if version <= table => vec![version],
        _ => [table, FormatVersion::V2, FormatVersion::V1]
            .into_iter()
            .filter(|v| *v <= table)
            .collect(),
    }
}

/// The data sequence number of a live (ADDED or EXISTING) entry: [`inherit`] gives every
/// live entry one or refuses it.
/// Whether `manifest` may list a live file: one whose manifest-list entry counts no added
/// and no existing files holds only deleted entries (after `expire_snapshots`, often a
/// manifest that was itself deleted), and is not read, as Iceberg's Java planner skips it.
/// Counts the list does not give (optional in format version 1) may hold any.
pub(crate) fn holds_live_files(manifest: &ManifestFile) -> bool {
    manifest.added_files_count != Some(0) || manifest.existing_files_count != Some(0)
}

pub(crate) fn live_sequence_number(entry: &ManifestEntry) -> Result<i64> {
    match entry.sequence_number {
        Some(n) => Ok(n),
        None => internal_err!(
            "live manifest entry for '{}' has no data sequence number after inheritance",
            entry.data_file.file_path()
        ),
    }
}

/// The spec's first-row-id inheritance, as Java's `ManifestReader` assigns it: a live
/// (ADDED or EXISTING) data file without its own `first_row_id` gets the manifest's
/// `first_row_id` plus the record counts of the live files before it in the manifest that had
/// none either. DELETED entries take no id and advance nothing. A manifest without a
/// `first_row_id` (written before the table had row lineage) gives no file an id.
struct RowIdAssigner(Option<i64>);

impl RowIdAssigner {
    fn assign(&mut self, entry: &ManifestEntry) -> Option<i64> {
        let file = &entry.data_file;
        let next = self.0?;
        if file.content_type() != DataContentType::Data {
            return None;
        }
        if let Some(id) = file.first_row_id() {
            return Some(id);
        }
        if entry.status == ManifestStatus::Deleted {
            return None;
        }
        self.0 = Some(next.saturating_add(file.record_count() as i64));
        Some(next)
    }
}

/// A v1 manifest listed inline by its snapshot: sequence number 0, its own spec (the
/// manifest embeds it), no partition summaries.
fn inline_manifest(path: &str, snapshot_id: i64) -> ManifestFile {
    ManifestFile {
        manifest_path: path.to_string(),
        manifest_length: 0,
        partition_spec_id: -1,
        content: ManifestContentType::Data,
        sequence_number: 0,
        min_sequence_number: 0,
        added_snapshot_id: snapshot_id,
        added_files_count: None,
        existing_files_count: None,
        deleted_files_count: None,
        added_rows_count: None,
        existing_rows_count: None,
        deleted_rows_count: None,
        partitions: None,
        key_metadata: None,
        first_row_id: None,
    }
}

/// Fills what a manifest entry inherits from its manifest (the spec's inheritance rules;
/// the crate's own `inherit_data` is private): the snapshot id, and the sequence numbers of
/// entries added by the manifest's snapshot (or of v1 manifests, sequence number 0). An
/// EXISTING entry of a v2+ manifest must carry its data sequence number (the delete rules
/// depend on it): without one it is an error, not 0.
fn inherit(mut entry: ManifestEntry, manifest: &ManifestFile) -> Result<ManifestEntry, String> {
    if entry.snapshot_id.is_none() {
        entry.snapshot_id = Some(manifest.added_snapshot_id);
    }
    let inherits = entry.status == ManifestStatus::Added || manifest.sequence_number == 0;
    if entry.sequence_number.is_none() && inherits {
        entry.sequence_number = Some(manifest.sequence_number);
    }
    if entry.file_sequence_number.is_none() && inherits {
        entry.file_sequence_number = Some(manifest.sequence_number);
    }
    if entry.status == ManifestStatus::Existing && entry.sequence_number.is_none() {
        return Err(format!(
            "its EXISTING entry for '{}' has no sequence number (only ADDED entries inherit \
             one from the manifest list)",
            entry.data_file.file_path()
        ));
    }
    Ok(entry)
}

/// How a file of Iceberg's `format` stores rows; `None` for Puffin (statistics and deletion
/// vectors, no rows).
pub(crate) fn row_format(format: DataFileFormat) -> Option<lakescan_core::api::FileFormat> {
    use lakescan_core::api::FileFormat;
    match format {
        DataFileFormat::Parquet => Some(FileFormat::Parquet),
        DataFileFormat::Orc => Some(FileFormat::Orc),
        DataFileFormat::Avro => Some(FileFormat::Avro),
        DataFileFormat::Puffin => None,
    }
}

#[cfg(test)]
mod tests;

/// The one data file a position-delete file deletes from when its manifest entry names none
/// but its `file_path` lower and upper bounds are equal: every row names that file. Java's
/// readers take such a file as scoped to that data file; v2 writers (Spark's among them)
/// leave `referenced_data_file` out and record exact bounds for `file_path`.
fn referenced_by_bounds(file: &DataFile) -> Option<String> {
    let path = |bounds: &std::collections::HashMap<i32, Datum>| match bounds
        .get(&FILE_PATH_ID)
        .map(Datum::literal)
    {
        Some(PrimitiveLiteral::String(path)) => Some(path.clone()),
        _ => None,
    };
    let lower = path(file.lower_bounds())?;
    (path(file.upper_bounds())? == lower).then_some(lower)
}
