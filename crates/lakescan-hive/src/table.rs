//! [`HiveTable`]: a `TableProvider` over a Hive-style directory of Parquet files.
//!
//! `scan` plans, `execute` reads: filters are turned into physical expressions and
//! extracted into per-column filters + residual; partition filters prune directories while
//! listing; bucketing prunes the files of buckets no row can match; every data file becomes
//! one or more byte-range splits (one per table bucket it serves, for bucket conversion);
//! a `LakeScanExec` reads them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{Result, Statistics, TableReference};
use datafusion::datasource::listing::ListingTableUrl;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_expr::utils::{collect_columns, conjunction_opt};
use datafusion::physical_plan::{ExecutionPlan, PhysicalExpr};
use lakescan_core::api::{
    Assignments, Attempts, ColumnHandle, ColumnRole, Extraction, FileFormat, FileSetStatistics,
    FileSplit, LakeScanOptions, PageIndex, PlannedScan, PlanningStats, RowCount, ScanStatistics,
    SplitValue, StageColumns, TableHandle, data_schema, exact_pushdown, file_statistics,
    merge_files, physical_conjuncts, written_path,
};
use object_store::ObjectMeta;

use crate::bucket::{BucketFilter, Bucketing, partition_buckets, reads_of_file};
use crate::conversion::HiveAdapter;
use crate::hidden::{self, FileFacts, HiddenColumn};
use crate::listing::{
    Lister, ListingMemory, Partition, PartitionFilters, list_table, partition_schema,
};
use crate::options::{HiveOptions, RowIdOptions};

/// A Hive-style partitioned (and possibly bucketed) Parquet table.
#[derive(Debug, Clone)]
pub struct HiveTable {
    name: String,
    location: ListingTableUrl,
    /// The store of `location` (parsed once).
    store_url: ObjectStoreUrl,
    handle: TableHandle,
    partition_columns: Vec<(String, DataType)>,
    /// Table option; the session's `lakescan.split_size` when `None`.
    split_size: Option<u64>,
    bucketing: Option<Arc<Bucketing>>,
    hidden: Vec<HiddenColumn>,
    row_id: RowIdOptions,
    /// What listings keep for the next (listings kept for
    /// `lakescan.listing_cache_ttl_seconds`, unchanged local directories, typed values).
    listing_memory: ListingMemory,
    /// Merged statistics of the file sets recent scans read.
    file_sets: FileSetStatistics,
    /// What the table was created with, for a plan sent to another process.
    pub(crate) definition: Arc<TableDefinition>,
}

/// What [`HiveTable::try_new`] was given: the whole of a table's definition.
#[derive(Debug)]
pub(crate) struct TableDefinition {
    pub(crate) data_columns: Vec<Field>,
    pub(crate) options: HiveOptions,
}

/// What planning one scan produced.
struct Planned {
    splits: Vec<FileSplit>,
    /// The files the splits read, once each (in split order).
    files: Vec<ObjectMeta>,
    stats: PlanningStats,
    /// The scan's readers, with the bucket conversions of its splits.
    adapter: HiveAdapter,
}

impl HiveTable {
    /// A table at `location` with `data_columns` and `partition_columns`, laid out as
    /// `options` say (split size, bucketing, hidden columns, row id constants).
    pub fn try_new(
        name: impl Into<String>,
        location: ListingTableUrl,
        data_columns: Vec<Field>,
        partition_columns: Vec<(String, DataType)>,
        options: &HiveOptions,
    ) -> Result<Self> {
        let name = name.into();
        let data_schema = Schema::new(data_columns.clone());
        let bucketing = match &options.bucketing {
            Some(b) => Some(Arc::new(Bucketing::try_new(b, &data_schema)?)),
            None => None,
        };
        let hidden = options
            .hidden_columns
            .resolve(!partition_columns.is_empty(), bucketing.is_some())?;
        let mut columns: Vec<ColumnHandle> =
            data_columns.iter().map(ColumnHandle::regular).collect();
        for (n, t) in &partition_columns {
            let field = Field::new(n, t.clone(), true);
            columns.push(ColumnHandle::with_role(&field, ColumnRole::PartitionKey));
        }
        let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
        hidden::check_no_collision(&hidden, &names)?;
        columns.extend(hidden.iter().map(|h| h.handle()));
        let handle = TableHandle::try_new(name.clone(), columns)?;
        Ok(Self {
            name,
            store_url: location.object_store(),
            location,
            handle,
            partition_columns,
            split_size: options.split_size.map(|b| b.max(1)),
            bucketing,
            hidden,
            row_id: options.row_id.clone(),
            listing_memory: ListingMemory::new(),
            file_sets: FileSetStatistics::default(),
            definition: Arc::new(TableDefinition {
                data_columns,
                options: options.clone(),
            }),
        })
    }

    /// The format of the table's data files.
    pub fn format(&self) -> FileFormat {
        self.definition.options.format.unwrap_or_default()
    }

    /// Keeps `objects`, every object under the location listed at `at` (by `CREATE`), for
    /// the queries of a session that keeps listings ([`ListingMemory::keep_whole`]).
    pub(crate) fn keep_listing(&self, at: Instant, objects: Arc<Vec<ObjectMeta>>) {
        self.listing_memory
            .keep_whole(self.location.prefix(), at, objects);
    }

    /// The table's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The table's location.
    pub fn location(&self) -> &ListingTableUrl {
        &self.location
    }

    /// Partition columns and their types, in directory order.
    pub fn partition_columns(&self) -> &[(String, DataType)] {
        &self.partition_columns
    }

    /// The hidden columns the schema shows.
    pub fn hidden_columns(&self) -> &[HiddenColumn] {
        &self.hidden
    }

    /// Whether `conjunct` uses partition columns only (listing applies it exactly).
    fn is_partition_only(&self, conjunct: &Arc<dyn PhysicalExpr>) -> bool {
        let table_schema = self.handle.table_schema();
        let is_partition = |i: usize| {
            let name = table_schema.field(i).name();
            self.partition_columns.iter().any(|(n, _)| n == name)
        };
        let columns = collect_columns(conjunct);
        !columns.is_empty() && columns.iter().all(|col| is_partition(col.index()))
    }

    /// The hidden columns a scan with `projection` and `conjuncts` reads: its splits carry
    /// these columns' values only. Filters pushed into the scan later (dynamic filters)
    /// refer to its outputs, which the projection already names.
    fn used_hidden(
        &self,
        projection: Option<&Vec<usize>>,
        conjuncts: &[Arc<dyn PhysicalExpr>],
    ) -> Vec<HiddenColumn> {
        let table_schema = self.handle.table_schema();
        let in_filters: Vec<usize> = conjuncts
            .iter()
            .flat_map(collect_columns)
            .map(|c| c.index())
            .collect();
        self.hidden
            .iter()
            .copied()
            .filter(|h| {
                table_schema.index_of(h.name()).is_ok_and(|i| {
                    projection.is_none_or(|p| p.contains(&i)) || in_filters.contains(&i)
                })
            })
            .collect()
    }

    /// Conjuncts that only use partition columns, rebound to the partition schema.
    fn partition_filters(&self, conjuncts: &[Arc<dyn PhysicalExpr>]) -> Result<PartitionFilters> {
        let schema = partition_schema(&self.partition_columns);
        let mut filters = vec![];
        for c in conjuncts {
            if self.is_partition_only(c) {
                let rebound = datafusion::physical_expr::utils::reassign_expr_columns(
                    Arc::clone(c),
                    &schema,
                )?;
                filters.push(rebound);
            }
        }
        Ok(PartitionFilters::new(schema, filters))
    }

    async fn plan_splits(
        &self,
        state: &dyn Session,
        filters: &PartitionFilters,
        bucket_filter: &BucketFilter,
        used_hidden: &[HiddenColumn],
    ) -> Result<Planned> {
        let store = state.runtime_env().object_store(&self.store_url)?;
        let keys: Vec<String> = self
            .partition_columns
            .iter()
            .map(|(n, _)| n.clone())
            .collect();
        let session = LakeScanOptions::from_config(state.config_options());
        let ttl = Duration::from_secs(session.listing_cache_ttl_seconds);
        let lister = Lister::new(&store, &self.listing_memory)
            .with_ttl(ttl)
            .shown_under(&self.store_url);
        let root = self.location.prefix();
        let listing = list_table(lister, root, &keys, filters).await?;
        crate::listing::check_not_acid(&self.name, root, listing.files.iter().map(|(m, _)| m))?;
        let split_size = self.split_size.unwrap_or(session.split_size);
        let mut planned = Planned {
            splits: vec![],
            files: vec![],
            stats: PlanningStats {
                partitions_total: listing.partitions_total,
                partitions_pruned: listing.partitions_pruned,
                files_pruned_bucket: 0,
                // Only shown while the session keeps listings.
                extra: (!ttl.is_zero())
                    .then_some((
                        "directories_listing_cached".into(),
                        listing.directories_cached,
                    ))
                    .into_iter()
                    .collect(),
            },
            adapter: HiveAdapter::new(self.bucketing.clone()),
        };
        for (partition, files) in group_by_partition(listing.files) {
            let name = hidden::partition_name(&keys, &partition.values);
            let reads = self.partition_reads(&name, files, bucket_filter, &mut planned)?;
            let partition_values: Vec<(String, SplitValue)> = keys
                .iter()
                .cloned()
                .zip(partition.values.iter().cloned().map(SplitValue::Partition))
                .collect();
            for (meta, read) in reads {
                // An empty file holds no rows: Hive writes them for empty buckets, ORC's
                // Java reader reads one as an empty ORC file and Trino skips them, whatever
                // the format (they still count as their bucket's file above).
                if meta.size == 0 {
                    continue;
                }
                let mut split = FileSplit::builder(meta.location.clone(), meta.size)
                    .format(self.format())
                    .written_path(written_path(&self.store_url, &meta.location))
                    .last_modified(meta.last_modified)
                    .values(partition_values.iter().cloned());
                if !used_hidden.is_empty() {
                    let facts = self.file_facts(&meta, &keys, &name, read.as_ref());
                    let info = hidden::info_columns(&facts, used_hidden);
                    split = split.values(info.into_iter().map(|(k, v)| (k, SplitValue::Info(v))));
                }
                if let Some(conversion) = read.and_then(|r| r.conversion) {
                    split = split.adapter(planned.adapter.conversion_key(conversion)?);
                }
                let split = split.build()?;
                match self.format().seam().splittable() {
                    true => planned.splits.extend(split.ranges(split_size)),
                    // An Avro file is read whole, by one split.
                    false => planned.splits.push(split),
                }
                // A file read for several buckets is in consecutive reads.
                if planned
                    .files
                    .last()
                    .is_none_or(|f| f.location != meta.location)
                {
                    planned.files.push(meta);
                }
            }
        }
        Ok(planned)
    }

    /// The (file, bucket read) pairs of one partition; files of pruned buckets are left
    /// out and counted.
    fn partition_reads(
        &self,
        partition: &str,
        files: Vec<ObjectMeta>,
        bucket_filter: &BucketFilter,
        planned: &mut Planned,
    ) -> Result<Vec<(ObjectMeta, Option<crate::bucket::BucketRead>)>> {
        let Some(bucketing) = &self.bucketing else {
            return Ok(files.into_iter().map(|f| (f, None)).collect());
        };
        let table_count = bucketing.count;
        let buckets =
            partition_buckets(&self.name, partition, files, table_count, &self.store_url)?;
        let mut out = vec![];
        for (bucket, meta) in buckets.files {
            let mut kept = vec![];
            for read in reads_of_file(bucket, buckets.count, table_count) {
                if bucket_filter.allows(&read, buckets.count, table_count)? {
                    kept.push(read);
                }
            }
            if kept.is_empty() {
                planned.stats.files_pruned_bucket += 1;
            }
            out.extend(kept.into_iter().map(|r| (meta.clone(), Some(r))));
        }
        Ok(out)
    }

    fn file_facts<'a>(
        &self,
        meta: &'a ObjectMeta,
        keys: &[String],
        partition: &str,
        read: Option<&crate::bucket::BucketRead>,
    ) -> FileFacts<'a> {
        let url = format!("{}{}", self.store_url.as_str(), meta.location);
        FileFacts {
            url,
            file_name: meta.location.filename().unwrap_or_default(),
            size: meta.size,
            modified_millis: meta.last_modified.timestamp_millis(),
            partition: (!keys.is_empty()).then(|| partition.to_string()),
            bucket: read.map(|r| r.table_bucket),
            row_id: (
                self.row_id.metadata_version,
                self.row_id.partition_id_of(partition),
                self.row_id.table_guid.clone(),
            ),
        }
    }
}

impl HiveTable {
    /// The statistics of a scan of `planned`'s files filtered by `conjuncts`, from their
    /// footers, when the session collects statistics
    /// (`datafusion.execution.collect_statistics`, as for `ListingTable`). A footer that
    /// cannot be read leaves the statistics unknown: the scan reports the file's error.
    async fn statistics(
        &self,
        state: &dyn Session,
        planned: &Planned,
        conjuncts: &[Arc<dyn PhysicalExpr>],
    ) -> Result<Option<ScanStatistics>> {
        // From the files' footers (Parquet's, or ORC's file statistics).
        if !state.config_options().execution.collect_statistics {
            return Ok(None);
        }
        let store = state.runtime_env().object_store(&self.store_url)?;
        // Scoped by table: a file's statistics are in this table's column types.
        let scope = TableReference::partial("lakescan", self.name.as_str());
        let schema = data_schema(&self.handle);
        let page_index = match conjuncts.is_empty() {
            true => PageIndex::NotWanted,
            false => PageIndex::Wanted,
        };
        let merged = self.file_sets.merged(&planned.files, async || {
            let per_file = file_statistics(
                state,
                &store,
                &scope,
                &schema,
                &planned.files,
                page_index,
                self.format(),
            );
            merge_files(&per_file.await?, &schema)
        });
        let merged = match merged.await {
            Ok(merged) => Statistics::clone(&merged),
            Err(e) => {
                log::debug!("table {}: no statistics: {e}", self.name);
                return Ok(None);
            }
        };
        let filters: Vec<_> = conjuncts
            .iter()
            .filter(|c| !self.is_partition_only(c))
            .cloned()
            .collect();
        // Bucket conversion drops rows of other buckets.
        let rows = if planned.adapter.converts() {
            RowCount::Estimated
        } else {
            RowCount::Exact
        };
        Ok(Some(ScanStatistics::from_merged(
            &self.handle,
            merged,
            &filters,
            rows,
        )))
    }
}

/// The listed files, grouped by partition (the listing is sorted by path, so a partition's
/// files are consecutive).
fn group_by_partition(
    files: Vec<(ObjectMeta, Arc<Partition>)>,
) -> Vec<(Arc<Partition>, Vec<ObjectMeta>)> {
    let mut groups: Vec<(Arc<Partition>, Vec<ObjectMeta>)> = vec![];
    for (meta, partition) in files {
        match groups.last_mut() {
            Some((p, metas)) if Arc::ptr_eq(p, &partition) => metas.push(meta),
            _ => groups.push((partition, vec![meta])),
        }
    }
    groups
}

#[async_trait]
impl TableProvider for HiveTable {
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
        let conjuncts = physical_conjuncts(state, self.handle.table_schema(), filters)?;
        let partition_filters = self.partition_filters(&conjuncts)?;
        let extraction = Extraction::from_conjuncts(&conjuncts, self.handle.table_schema());
        let bucket_filter = match &self.bucketing {
            Some(b) => BucketFilter::try_new(b, &extraction.filters)?,
            None => BucketFilter::default(),
        };
        let used_hidden = self.used_hidden(projection, &conjuncts);
        // The requests of listing and footers (stores that count them: `core::requests`).
        let attempts = Attempts::default();
        let (mut planned, statistics) = attempts
            .count(async {
                let planned = self
                    .plan_splits(state, &partition_filters, &bucket_filter, &used_hidden)
                    .await?;
                let statistics = self.statistics(state, &planned, &conjuncts).await?;
                Ok::<_, datafusion::error::DataFusionError>((planned, statistics))
            })
            .await?;
        // Object stores only (local listings and reads make no requests).
        if self.store_url.as_str() != "file:///" {
            planned.stats.add_extra(attempts.tally().planning_metrics());
        }
        let mut handle = self.handle.clone();
        handle = handle.with_filters(extraction.filters, conjunction_opt(extraction.residual));
        if let (true, Some(b)) = (planned.adapter.converts(), &self.bucketing) {
            handle.stage_columns = StageColumns::in_every_file(b.column_names());
        }
        let all: Vec<usize> = (0..self.handle.columns().len()).collect();
        let assignments = Assignments::new(projection.cloned().unwrap_or(all));
        PlannedScan {
            table: handle,
            assignments,
            splits: planned.splits,
            store: self.store_url.clone(),
            adapter: Arc::new(planned.adapter),
            planning: planned.stats,
            statistics,
        }
        .into_exec(state, limit)
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(exact_pushdown(filters))
    }
}
