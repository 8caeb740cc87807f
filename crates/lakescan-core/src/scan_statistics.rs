//! [`ScanStatistics`]: what a scan tells DataFusion's optimizer before it runs — rows, bytes,
//! and per-column min/max/null counts — so a join builds its hash table on the small side
//! in one piece (`CollectLeft`) and `count(*)` of an unfiltered table is answered from the
//! footers without reading a row.
//!
//! Everything here but the footer read is DataFusion's: a file's statistics come from its
//! format's seam ([`crate::format::FormatSeam::file_statistics`]: for Parquet, the footer
//! kept in DataFusion's file metadata cache, where the scan finds it again, read by
//! lakescan's reader, which reports a corrupt footer as an error where parquet 58's push
//! decoder can overflow, and DataFusion's `statistics_from_parquet_metadata`; for ORC, the
//! footer's statistics), cached per file in its file statistics cache (as `ListingTable`
//! does), files merged with `Statistics::try_merge_iter`, and the filters'
//! selectivity from its interval analysis (`analyze`, as `FilterExec` estimates it).
//!
//! ```text
//!  files ──file_statistics──▶ per-file Statistics (data columns) ──merge──▶ the table's
//!     ──ScanStatistics::try_new (filters not applied exactly while planning)──▶ estimate
//!     ──LakeScanExec::partition_statistics (outputs, limit)──▶ the optimizer
//! ```
//!
//! A table keeps the merged statistics of the file sets its recent scans read
//! ([`FileSetStatistics`], in [`file_sets`]), so a repeated query over unchanged files skips
//! the per-file lookups and the merge.

use std::sync::Arc;

use arrow::datatypes::{Schema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::{ColumnStatistics, Result, Statistics, TableReference};
use datafusion::execution::cache::TableScopedPath;
use datafusion::execution::cache::cache_manager::{CachedFileMetadata, FileStatisticsCache};
use datafusion::physical_expr::intervals::utils::check_support;
use datafusion::physical_expr::utils::conjunction_opt;
use datafusion::physical_expr::{AnalysisContext, analyze};
use datafusion::physical_plan::PhysicalExpr;
use futures::{StreamExt, TryStreamExt};
use object_store::{ObjectMeta, ObjectStore};

use crate::format::{FileAccess, PageIndex};
use crate::handle::{Assignments, ColumnRole, TableHandle};
use crate::split::FileFormat;

pub mod file_sets;
pub use file_sets::FileSetStatistics;

/// The share of rows a filter keeps when interval analysis cannot tell (`FilterExec`'s
/// default).
const DEFAULT_SELECTIVITY: f64 = 0.2;

/// The statistics of each file of `files` (Parquet or ORC: `format`) over `file_schema`
/// (the table's data columns, in table types), from the session's caches when they hold
/// this version of the file. `table` scopes the per-file entries (statistics depend on the
/// table's types); Parquet footers are read with their page index when `page_index` (the
/// scan filters), as the scan will want them; ORC files give their footer's statistics
/// (`crate::orc::statistics::file_statistics`).
pub async fn file_statistics(
    state: &dyn Session,
    store: &Arc<dyn ObjectStore>,
    table: &TableReference,
    file_schema: &SchemaRef,
    files: &[ObjectMeta],
    page_index: PageIndex,
    format: FileFormat,
) -> Result<Vec<Arc<Statistics>>> {
    let runtime = state.runtime_env();
    let options = state.config_options();
    let caches = Caches {
        access: FileAccess {
            store: Arc::clone(store),
            metadata_cache: runtime.cache_manager.get_file_metadata_cache(),
            page_index,
        },
        statistics: runtime.cache_manager.get_file_statistic_cache(),
        table: table.clone(),
        file_schema: Arc::clone(file_schema),
        format,
    };
    let caches = &caches;
    futures::stream::iter(files.iter().cloned())
        .map(|meta| caches.statistics_of(meta))
        .buffer_unordered(options.execution.meta_fetch_concurrency.max(1))
        .try_collect()
        .await
}

/// What [`file_statistics`] reads through.
struct Caches {
    access: FileAccess,
    statistics: Option<Arc<dyn FileStatisticsCache>>,
    table: TableReference,
    file_schema: SchemaRef,
    format: FileFormat,
}

impl Caches {
    async fn statistics_of(&self, meta: ObjectMeta) -> Result<Arc<Statistics>> {
        let key = TableScopedPath {
            table: Some(self.table.clone()),
            path: meta.location.clone(),
        };
        if let Some(cached) = self.statistics.as_ref().and_then(|c| c.get(&key))
            && cached.is_valid_for(&meta)
        {
            return Ok(Arc::clone(&cached.statistics));
        }
        let statistics = Arc::new(
            self.format
                .seam()
                .file_statistics(&self.access, &meta, &self.file_schema)
                .await?,
        );
        if let Some(cache) = &self.statistics {
            cache.put(
                &key,
                CachedFileMetadata::new(meta, Arc::clone(&statistics), None),
            );
        }
        Ok(statistics)
    }
}

/// The statistics of all `files` together (each over `file_schema`, [`data_schema`]).
pub fn merge_files(files: &[Arc<Statistics>], file_schema: &Schema) -> Result<Statistics> {
    Statistics::try_merge_iter(files.iter().map(AsRef::as_ref), file_schema)
}

/// The data columns of `table` (its regular columns, in table types): the schema file
/// statistics are computed over.
pub fn data_schema(table: &TableHandle) -> SchemaRef {
    let fields: Vec<_> = table
        .columns()
        .iter()
        .filter(|c| c.role == ColumnRole::Regular)
        .map(|c| c.field())
        .collect();
    Arc::new(Schema::new(fields))
}

/// What a scan will produce, over its table schema: merged file statistics, narrowed by
/// the filters the planner did not apply exactly.
#[derive(Debug, Clone)]
pub struct ScanStatistics {
    table: Statistics,
}

/// Whether a scan's row count is the files' row count: no filter is left for the scan to
/// apply (partition filters applied while listing pruned whole files), no row is dropped by
/// position or bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowCount {
    /// Every row of the files is a row of the scan.
    Exact,
    /// The scan drops some rows.
    Estimated,
}

impl ScanStatistics {
    /// The statistics of a scan of `table` reading files with statistics `files` (over
    /// [`data_schema`]), filtered by `filters` (over the table schema, those the planner did
    /// not apply exactly).
    pub fn try_new(
        table: &TableHandle,
        files: &[Arc<Statistics>],
        filters: &[Arc<dyn PhysicalExpr>],
        rows: RowCount,
    ) -> Result<Self> {
        let merged = merge_files(files, &data_schema(table))?;
        Ok(Self::from_merged(table, merged, filters, rows))
    }

    /// The same from the files' statistics merged ([`merge_files`]).
    pub fn from_merged(
        table: &TableHandle,
        merged: Statistics,
        filters: &[Arc<dyn PhysicalExpr>],
        rows: RowCount,
    ) -> Self {
        // Column bounds and null counts are only estimates to the optimizer: a file column
        // stored in a narrower type than the table's (widened by the scan) has bounds in
        // the file's type, so `min`/`max`/`count(c)` are never answered from them. The row
        // count can be exact.
        let mut data_columns = merged
            .column_statistics
            .into_iter()
            .map(|c| countable(c.to_inexact()));
        let column_statistics = table
            .columns()
            .iter()
            .map(|c| match c.role {
                ColumnRole::Regular => data_columns
                    .next()
                    .unwrap_or_else(ColumnStatistics::new_unknown),
                _ => ColumnStatistics::new_unknown(),
            })
            .collect();
        let unfiltered = Statistics {
            num_rows: merged.num_rows,
            total_byte_size: merged.total_byte_size,
            column_statistics,
        };
        let unfiltered = match rows {
            RowCount::Exact if filters.is_empty() => unfiltered,
            _ => unfiltered.to_inexact(),
        };
        let table = match conjunction_opt(filters.to_vec()) {
            Some(predicate) => filtered(table.table_schema(), unfiltered, &predicate),
            None => unfiltered,
        };
        Self { table }
    }

    /// The same, no longer exact: filters were pushed into the scan after planning.
    pub fn to_inexact(&self) -> Self {
        Self {
            table: self.table.clone().to_inexact(),
        }
    }

    /// The statistics of the scan's outputs `assignments` (plain columns keep theirs,
    /// absorbed expressions are unknown), at most `limit` rows.
    pub fn of_outputs(
        &self,
        assignments: &Assignments,
        output_schema: &Schema,
        limit: Option<usize>,
    ) -> Result<Statistics> {
        use datafusion::physical_expr::expressions::Column;
        let column_statistics: Vec<ColumnStatistics> = assignments
            .exprs()
            .iter()
            .map(|p| match p.expr.downcast_ref::<Column>() {
                Some(c) => self
                    .table
                    .column_statistics
                    .get(c.index())
                    .cloned()
                    .unwrap_or_else(ColumnStatistics::new_unknown),
                None => ColumnStatistics::new_unknown(),
            })
            .collect();
        let mut stats = Statistics {
            num_rows: self.table.num_rows,
            total_byte_size: Precision::Absent,
            column_statistics,
        };
        stats.total_byte_size = byte_size(&stats, output_schema);
        stats.with_fetch(limit, 0, 1)
    }
}

/// The bytes of `stats`' columns: rows times width when every column has a fixed width,
/// else the sum of the columns' sizes when all are known.
fn byte_size(stats: &Statistics, schema: &Schema) -> Precision<usize> {
    let widths: Option<usize> = schema
        .fields()
        .iter()
        .map(|f| f.data_type().primitive_width())
        .sum();
    match widths {
        Some(width) => stats.num_rows.multiply(&Precision::Exact(width)),
        None => stats
            .column_statistics
            .iter()
            .fold(Precision::Exact(0), |total, c| total.add(&c.byte_size)),
    }
}

/// `column` without the bounds DataFusion's interval analysis cannot count: an integer,
/// date or timestamp column whose values span its type's whole range (writers store
/// `i64::MIN` and `i64::MAX` as sentinels) has `2^64` distinct values, which overflows
/// `Interval::cardinality` (a panic in debug builds) here and in a `FilterExec` above the
/// scan. Its bounds prune nothing a filter could use, so the estimate loses little.
fn countable(mut column: ColumnStatistics) -> ColumnStatistics {
    if let (Some(min), Some(max)) = (column.min_value.get_value(), column.max_value.get_value())
        && max.distance(min).is_some_and(|d| d as u64 == u64::MAX)
    {
        column.min_value = Precision::Absent;
        column.max_value = Precision::Absent;
    }
    column
}

/// `input` narrowed by `predicate` as `FilterExec` estimates it: the selectivity from
/// interval analysis over the columns' min/max when it applies, else the default share.
fn filtered(
    schema: &SchemaRef,
    input: Statistics,
    predicate: &Arc<dyn PhysicalExpr>,
) -> Statistics {
    // An analysis that fails leaves the default: an estimate never fails a query.
    let analysed = check_support(predicate, schema)
        .then(|| {
            let context =
                AnalysisContext::try_from_statistics(schema, &input.column_statistics).ok()?;
            analyze(predicate, context, schema).ok()
        })
        .flatten();
    let selectivity = match analysed {
        Some(analysis) => analysis.selectivity.unwrap_or(1.0),
        None => DEFAULT_SELECTIVITY,
    };
    let input = input.to_inexact();
    Statistics {
        num_rows: input.num_rows.with_estimated_selectivity(selectivity),
        total_byte_size: input
            .total_byte_size
            .with_estimated_selectivity(selectivity),
        column_statistics: input
            .column_statistics
            .into_iter()
            .map(|mut c| {
                c.null_count = c.null_count.with_estimated_selectivity(selectivity);
                c.byte_size = c.byte_size.with_estimated_selectivity(selectivity);
                c.distinct_count = c.distinct_count.to_inexact();
                c
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests;
