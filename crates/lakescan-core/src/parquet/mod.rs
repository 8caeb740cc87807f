//! The Parquet split reader.
//!
//! | file              | owns                                                            |
//! |-------------------|-----------------------------------------------------------------|
//! | this file         | [`ParquetFormat`]: the steps of the shared split lifecycle (below) |
//! | [`open`]          | `LoadFooter`, footer checks, errors naming the file             |
//! | [`footer_cache`]  | footers kept in the session's file metadata cache               |
//! | [`field_ids`]     | file schema renamed to table names by field id (Iceberg)        |
//! | [`leaves`]        | file leaves by logical path; maps read as lists                 |
//! | [`row_groups`]    | byte range → row groups (midpoint rule), statistics pruning     |
//! | [`statistics`]    | row-group statistics in table types (`PruningStatistics`)       |
//! | [`deletes`]       | deleted positions → a row selection, or the shared mask         |
//! | [`bloom`]         | bloom-filter pruning of row groups for point filters            |
//! | [`plan`]          | [`plan::ReadPlan`]: masks, filter placement, row selections     |
//! | [`decoded_types`] | types decoded unlike the file schema: views, narrow decimals    |
//! | [`legacy_times`]  | dates and timestamps Java writers stored otherwise: their fixes |
//! | [`page_index`]    | page-index pruning → `RowSelection`                             |
//! | [`row_index`]     | row-index filters → `RowSelection`                              |
//! | [`row_filter`]    | per-column filters as a parquet `RowFilter`                     |
//! | [`seam`]          | `FormatSeam`: schema, statistics, whole columns by field id     |
//!
//! What every format shares lives outside this room: the byte reads ([`crate::io`]), the
//! assembler, the column predicate and type adaptation ([`crate::format`]), deleted rows and
//! their mask ([`crate::deleted_rows`]).
//!
//! The lifecycle of one split is every format's ([`crate::format::lifecycle`]: one `State`
//! enum, a typed struct per state); Parquet's row groups are its units. The steps between
//! the states are named by what they do, the I/O ones `Load*`:
//!
//! ```text
//!  Pending ─LoadFooter, bind─▶ Bound ─Prune─▶ Pruned ─LoadDeletes─▶ Ready ─▶ Reading { current, rest } ─▶ Done
//!                                │              │
//!                                └─a constant   ├─no row group in range ─▶ Done
//!                                  rejects      └─statistics or bloom filters
//!                                  ─▶ Done        reject all ─▶ Done
//! ```
//!
//! * `LoadFooter` reads the footer (with the page index when the split has filters) and,
//!   for tables matched by field id, renames the file schema to the table's names; `bind`
//!   maps table columns to file columns, constants and generated columns (`SplitBinding`)
//!   and tests the constants (a missing column's NULL) against the filters;
//! * `Prune` keeps the row groups whose midpoint lies in the byte range, then those the
//!   filters and the residual's AND/OR tree may match by statistics, then those the bloom
//!   filters of point-filtered columns may match (`LoadBloomFilters`);
//! * `LoadDeletes` asks the split's [`crate::reader::DeleteSource`] (the table format's) for its deleted
//!   positions and delete stages, only now that rows are left to read: a pruned split never
//!   loads its delete files. They live in the state (`Ready`), not in the split;
//! * `prepare` ends in `Ready`. A dynamic filter that changed since (the split was
//!   preloaded, or the filter arrived after prepare) is applied there: constants tested and
//!   row groups pruned again (`refresh_filters`);
//! * at the first `next`, the [`plan::ReadPlan`] builds the decoder with the filters and
//!   adaptive order in force then: output and filter leaves, filters inside the decoder or
//!   after it, page and row-index selections, deleted positions. While a dynamic filter may
//!   still change, `Reading` decodes one row group at a time and keeps the others in `rest`,
//!   pruned again when the filter moves.

pub mod bloom;
pub mod decoded_types;
pub mod deletes;
pub mod field_ids;
pub mod footer_cache;
pub mod leaves;
pub mod legacy_times;
pub mod open;
pub mod page_index;
pub mod plan;
pub mod row_filter;
pub mod row_groups;
pub mod row_index;
pub mod seam;
pub mod spelling;
pub mod statistics;

use std::sync::Arc;

use arrow::array::RecordBatch;
use async_trait::async_trait;
use datafusion::common::{DataFusionError, Result, exec_datafusion_err};
use futures::{FutureExt, StreamExt};
use parquet::arrow::ParquetRecordBatchStreamBuilder;
use parquet::arrow::arrow_reader::ArrowReaderMetadata;

use crate::binding::{FieldSource, SplitBinding};
use crate::deleted_rows::DeletedRows;
use crate::format::{FileFormatReader, FormatSplitReader};
use crate::io::CountingReader;
use crate::reader::{ReaderBatch, SplitContext};
use crate::split::FileSplit;
use leaves::FileLeaves;
use legacy_times::FileTimes;
use open::file_error;
use plan::Reading;
use statistics::RowGroupStatistics;

/// Reads one split of a Parquet file into batches of the reader schema `R`: the shared
/// split lifecycle over [`ParquetFormat`].
pub type ParquetSplitReader = FormatSplitReader<ParquetFormat>;

/// The Parquet format under the split lifecycle: row groups are its units.
#[derive(Debug, Clone, Copy, Default)]
pub struct ParquetFormat;

/// A file whose footer was read.
#[derive(Clone)]
pub struct Opened {
    /// The open file.
    pub reader: CountingReader,
    /// Its metadata (with the page index when the split filters).
    pub metadata: ArrowReaderMetadata,
}

/// An opened file bound to the scan.
#[derive(Clone)]
pub struct Bound {
    /// The open file.
    pub opened: Opened,
    /// Where each field's values come from in this file.
    pub binding: SplitBinding,
    /// The file's leaves by logical path.
    pub leaves: FileLeaves,
    /// The fixes of the columns whose dates and timestamps its writer stored otherwise.
    pub times: FileTimes,
}

/// A bound file and the row groups to read.
pub struct Chosen {
    /// The bound file.
    pub bound: Bound,
    /// Row groups to read, ascending.
    pub row_groups: Vec<usize>,
}

#[async_trait]
impl FileFormatReader for ParquetFormat {
    type Bound = Bound;
    type Reading = Reading;

    /// A row group's decoder is cheap to build: while a dynamic filter may move, each row
    /// group is pruned again right before it is read.
    const UNIT_AT_A_TIME: bool = true;

    /// `LoadFooter` (with the page index when the split filters; renamed to the table's
    /// names by field id), then `bind`.
    async fn open(&self, split: Arc<FileSplit>, context: SplitContext) -> Result<Bound> {
        let opened = open::load_footer(Arc::clone(&split), context.clone()).await?;
        let binding = SplitBinding::try_new(
            &context.spec,
            &split,
            &context.constants,
            opened.metadata.schema(),
        )?;
        let leaves = FileLeaves::new(opened.metadata.metadata().file_metadata().schema_descr());
        let iceberg = context.spec.field_ids().is_some();
        let times = FileTimes::of(opened.metadata.metadata(), iceberg).map_err(|e| {
            DataFusionError::NotImplemented(format!("Parquet file '{}': {e}", split.display_path()))
        })?;
        Ok(Bound {
            opened,
            binding,
            leaves,
            times,
        })
    }

    fn constants_rejected(&self, bound: &Bound, context: &SplitContext) -> bool {
        crate::format::constants_rejected(context, &bound.binding, |root, file_type, subfield| {
            plan::member_missing(&bound.leaves, root, file_type, subfield)
        })
    }

    fn units_in_range(&self, bound: &Bound, split: &FileSplit) -> Vec<usize> {
        row_groups::row_groups_in_range(bound.opened.metadata.metadata(), split)
    }

    fn prune(
        &self,
        bound: &Bound,
        units: &[usize],
        split: &FileSplit,
        context: &SplitContext,
    ) -> Result<Vec<usize>> {
        let metadata = Arc::clone(bound.opened.metadata.metadata());
        let stats = RowGroupStatistics::new(
            &context.spec,
            &bound.binding,
            &metadata,
            bound.opened.metadata.schema(),
            &bound.leaves,
            units,
        )
        .with_times(&bound.times);
        crate::format::prune_units(context, split, &stats, units)
    }

    /// `LoadBloomFilters`.
    async fn prune_loading(
        &self,
        bound: &Bound,
        units: Vec<usize>,
        split: Arc<FileSplit>,
        context: SplitContext,
    ) -> Result<Vec<usize>> {
        let path = split.display_path().to_string();
        load_bloom_filters(path, context, bound, units).await
    }

    /// The [`plan::ReadPlan`] of the row groups, with the filters and adaptive order in
    /// force now.
    fn read(
        &self,
        bound: Bound,
        units: Vec<usize>,
        deleted: Option<Arc<DeletedRows>>,
        split: &Arc<FileSplit>,
        context: &SplitContext,
    ) -> Result<Reading> {
        let chosen = Chosen {
            bound,
            row_groups: units,
        };
        plan::ReadPlan::try_new(context, split, &chosen, deleted.as_ref())?
            .build(chosen, context)
            .map_err(|e| file_error(split.display_path(), e))
    }

    async fn next(
        &self,
        reading: &mut Reading,
        split: &FileSplit,
        context: &SplitContext,
    ) -> Result<Option<ReaderBatch>> {
        if reading.ended {
            return Ok(None);
        }
        // The parquet crate panics on some corrupt pages (a dictionary's bit width past its
        // type, definition levels past their buffer): the file's error, not the process's.
        let polled = std::panic::AssertUnwindSafe(reading.stream.next())
            .catch_unwind()
            .await
            .map_err(|panic| decoder_panic(split.display_path(), panic))?;
        match polled {
            None => {
                reading.ended = true;
                // Rows the filters dropped after the last batch still count as scanned.
                let rows_scanned = reading.take_rows_scanned(0);
                reading.check_row_count(split.display_path())?;
                if rows_scanned == 0 {
                    return Ok(None);
                }
                let schema = Arc::clone(context.spec.reader_schema());
                Ok(Some(ReaderBatch {
                    batch: RecordBatch::new_empty(schema),
                    rows_scanned,
                    rows_deleted: 0,
                }))
            }
            Some(Err(e)) => Err(file_error(split.display_path(), e)),
            Some(Ok(file_batch)) => {
                let rows_scanned = reading.take_rows_scanned(file_batch.num_rows());
                let batch = reading.assembler.assemble(file_batch)?;
                Ok(Some(ReaderBatch {
                    batch,
                    rows_scanned,
                    rows_deleted: reading.assembler.take_rows_deleted(),
                }))
            }
        }
    }
}

/// `LoadBloomFilters`: drops the row groups whose bloom filters prove that no value of
/// a point filter (`x = v`, `x IN (…)` on a top-level column) is present.
async fn load_bloom_filters(
    file_path: String,
    context: SplitContext,
    bound: &Bound,
    row_groups: Vec<usize>,
) -> Result<Vec<usize>> {
    let spec = &context.spec;
    let mut probes = vec![];
    for (subfield, filter) in &context.filters.filters {
        let Some((i, _)) = spec.field(subfield.root()) else {
            continue;
        };
        let (FieldSource::File { root, file_type }, true) =
            (&bound.binding.sources()[i], subfield.path().is_empty())
        else {
            continue;
        };
        // A column whose values are fixed after decoding: its bloom filter holds others.
        if bound.times.fix(*root).is_some() {
            continue;
        }
        let leaf = bound
            .leaves
            .select(*root, &crate::required::RequiredSubfields::Whole);
        if let (Some(points), [leaf]) = (bloom::probe_points(filter), leaf.as_slice()) {
            probes.push((*leaf, file_type.clone(), points));
        }
    }
    if probes.is_empty() {
        return Ok(row_groups);
    }
    let metadata = bound.opened.metadata.clone();
    let descr = metadata.metadata().file_metadata().schema_descr_ptr();
    let mut builder =
        ParquetRecordBatchStreamBuilder::new_with_metadata(bound.opened.reader.clone(), metadata);
    let mut kept = vec![];
    for &rg in &row_groups {
        let mut keep = true;
        for (leaf, file_type, points) in &probes {
            let sbbf = builder
                .get_row_group_column_bloom_filter(rg, *leaf)
                .await
                .map_err(|e| file_error(&file_path, e))?;
            if let Some(sbbf) = sbbf {
                keep &= bloom::may_contain(&sbbf, &descr.column(*leaf), file_type, points);
            }
            if !keep {
                break;
            }
        }
        if keep {
            kept.push(rg);
        }
    }
    let pruned = row_groups.len() - kept.len();
    context.metrics.row_groups_pruned_bloom_filter.add(pruned);
    Ok(kept)
}

/// The error of a panic of the Parquet decoder while reading the file at `path`.
fn decoder_panic(path: &str, panic: Box<dyn std::any::Any + Send>) -> DataFusionError {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_string());
    exec_datafusion_err!(
        "cannot read Parquet file '{path}': the Parquet decoder panicked: {message} (the file \
         is corrupt: its pages do not decode)"
    )
}
