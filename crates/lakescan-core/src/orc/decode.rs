//! [`Reading`]: the chosen stripes of one split decoded into batches of `R`.
//!
//! Per stripe (`LoadStripe`, then):
//!
//! 1. **row groups** — with filters, the row index of each filtered top-level column gives
//!    min/max per 10 000-row group; groups no filter (nor the residual's AND/OR tree, nor a
//!    `$row_index` filter) may match are skipped ([`crate::format::prune_units`]);
//! 2. **windows** of up to `batch_size` rows of the groups kept: the **filter columns are
//!    decoded first** and their filters evaluated, together with the rows deleted by
//!    position; the other columns are decoded only when a row survives, else skipped
//!    (late materialization at window granularity);
//! 3. the surviving rows, with their file positions (the row-number column), go to the
//!    shared [`Assembler`].
//!
//! A struct column is decoded in the members the scan reads only ([`super::projection`]).
//!
//! Each column has a [`ColumnDecoder`]: lakescan's over the streams' bytes for primitive
//! top-level columns ([`super::primitive`]), `orc-rust`'s for the rest.
//!
//! Not done: seeking inside a stream by the row index's positions (a skipped group or
//! window is still walked by its decoders — it saves decoding into arrays and filtering,
//! not reading the stripe's bytes), and decoding only the selected rows of a window (the
//! other columns of a window with one surviving row are decoded whole, then filtered).

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray, Int64Array, RecordBatch};
use arrow::compute::{and, filter_record_batch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use datafusion::common::{DataFusionError, Result};
use orc_rust::schema::RootDataType;

use super::calendar::DayCalendar;
use super::errors::{decoder_panic, orc_error};
use super::file::OrcFile;
use super::primitive::{ColumnDecoder, DecodeError};
use super::projection::DecodedRoot;
use super::statistics::{OrcStatistics, OrcUnit};
use super::stripes::{load_stripe, row_index};
use crate::binding::SplitBinding;
use crate::deleted_rows::{DeletedMask, DeletedPositions, DeletedRows};
use crate::format::assemble::{Assembler, ROW_NUMBER_COLUMN};
use crate::format::column_predicate::ColumnPredicate;
use crate::format::prune_units;
use crate::reader::SplitContext;
use crate::split::FileSplit;

/// What a split decodes: its columns, filter columns first, and the filters on them.
pub struct Decoding {
    /// Columns decoded, those filters read first.
    pub roots: Vec<DecodedRoot>,
    /// How many of `roots` filters read.
    pub filter_roots: usize,
    /// Each filter with the position in `roots` of the column it reads.
    pub filters: Vec<(usize, ColumnPredicate)>,
    /// Whether batches carry the row-number column.
    pub row_numbers: bool,
}

/// The split's stripes being decoded.
pub struct Reading {
    path: String,
    file: OrcFile,
    context: SplitContext,
    split: Arc<FileSplit>,
    binding: SplitBinding,
    decoding: Decoding,
    /// The file's top-level columns that are decoded, as `orc-rust` projects them.
    projected: RootDataType,
    /// For each of `decoding.roots`, its position in `projected`'s columns.
    positions: Vec<usize>,
    stripes: VecDeque<usize>,
    first_rows: Vec<u64>,
    deleted: Option<DeletedPositions>,
    current: Option<StripeReading>,
    /// Turns decoded batches into batches of `R`.
    pub assembler: Assembler,
}

/// One stripe being decoded.
struct StripeReading {
    index: usize,
    first_row: u64,
    decoders: Vec<ColumnDecoder>,
    /// Stripe-local row ranges left to read (the row groups kept), in order.
    runs: VecDeque<Range<u64>>,
    /// The stripe-local row the decoders are at.
    at: u64,
    /// The correction of its `timestamp` values after 2099, when its writer's time zone
    /// has daylight saving time.
    late_dst: Option<super::late_dst::LateDst>,
    /// The calendar of the file's days.
    calendar: DayCalendar,
}

impl StripeReading {
    /// A decoded column as Arrow means it: wall clocks after 2099 corrected, days in the
    /// proleptic calendar.
    fn corrected(&mut self, array: ArrayRef) -> Result<ArrayRef> {
        let array = match self.late_dst.as_mut() {
            Some(late) => late.correct(&array)?,
            None => array,
        };
        self.calendar.to_proleptic(&array)
    }
}

/// Deleted runs at least this long are skipped rather than decoded and dropped.
const SKIPPED_DELETED_RUN: u64 = 1024;

/// The most row groups of one stripe that are pruned one by one (`row_groups`).
const MAX_ROW_GROUPS: u64 = 1 << 20;

/// A batch of `R` and what the reader advanced over to produce it.
pub struct Decoded {
    /// The batch (`None`: the split is read).
    pub batch: Option<RecordBatch>,
    /// Rows advanced over.
    pub rows_scanned: usize,
    /// Of those, rows deleted by position.
    pub rows_deleted: usize,
}

impl Reading {
    /// Decodes `stripes` of `file` as `decoding` says.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        file: OrcFile,
        context: SplitContext,
        split: Arc<FileSplit>,
        binding: SplitBinding,
        mut decoding: Decoding,
        stripes: Vec<usize>,
        deleted: Option<Arc<DeletedRows>>,
        assembler: Assembler,
    ) -> Result<Self> {
        let path = split.display_path().to_string();
        let projected = super::projection::projected_types(&path, &file, &mut decoding.roots)?;
        // `project` keeps the file's order: a decoded root's position among the kept ones.
        let mut kept: Vec<usize> = decoding.roots.iter().map(|r| r.root).collect();
        kept.sort_unstable();
        let positions = decoding
            .roots
            .iter()
            .map(|r| kept.binary_search(&r.root).unwrap_or(usize::MAX))
            .collect();
        let first_rows = super::stripes::first_rows(file.metadata.stripe_metadatas());
        Ok(Self {
            path,
            file,
            context,
            split,
            binding,
            decoding,
            projected,
            positions,
            stripes: stripes.into(),
            first_rows,
            deleted: deleted.filter(|d| !d.is_empty()).map(DeletedPositions::new),
            current: None,
            assembler,
        })
    }

    /// The next batch of `R`, with the rows advanced over; `batch: None` at the end.
    pub async fn next(&mut self) -> Result<Decoded> {
        let (mut scanned, mut deleted) = (0, 0);
        loop {
            if self.current.is_none() {
                let Some(index) = self.stripes.pop_front() else {
                    return Ok(Decoded {
                        batch: None,
                        rows_scanned: scanned,
                        rows_deleted: deleted,
                    });
                };
                self.current = Some(self.open_stripe(index).await?);
            }
            let Some(current) = self.current.as_mut() else {
                continue;
            };
            let batch_size = self.context.options.batch_size;
            let Some(window) = next_window(current, batch_size, self.deleted.as_ref()) else {
                self.current = None;
                continue;
            };
            let path = self.path.clone();
            let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                decode_window(
                    current,
                    window,
                    &self.decoding,
                    self.deleted.as_ref(),
                    &path,
                )
            }))
            .map_err(|panic| decoder_panic(&path, panic))??;
            scanned += read.rows;
            deleted += read.deleted;
            let metrics = &self.context.metrics;
            metrics
                .rows_deleted_position
                .add(read.by_files + read.skipped_deleted.0);
            metrics
                .rows_deleted_vector
                .add(read.deleted - read.by_files + read.skipped_deleted.1);
            if let Some(batch) = read.batch {
                let batch = self.assembler.assemble(batch)?;
                return Ok(Decoded {
                    batch: Some(batch),
                    rows_scanned: scanned,
                    rows_deleted: deleted,
                });
            }
        }
    }

    /// `LoadStripe`, its row groups pruned, its decoders built.
    async fn open_stripe(&mut self, index: usize) -> Result<StripeReading> {
        let path = self.path.clone();
        let stripe = load_stripe(&path, &mut self.file, index, &self.projected).await?;
        let rows = stripe.number_of_rows() as u64;
        let first_row = self.first_rows.get(index).copied().unwrap_or(0);
        let runs = self.row_groups(&stripe, first_row, rows)?;
        let mut decoders = Vec::with_capacity(self.decoding.roots.len());
        for (root, &position) in self.decoding.roots.iter().zip(&self.positions) {
            let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                ColumnDecoder::try_new(&stripe, position, &root.decode_as)
            }))
            .map_err(|panic| decoder_panic(&path, panic))?;
            let Some(built) = built else {
                return Err(orc_error(
                    &path,
                    format!("stripe {index} lacks column '{}'", root.name),
                ));
            };
            decoders.push(built.map_err(|e| match e {
                DecodeError::NotRead(why) => DataFusionError::NotImplemented(format!(
                    "ORC file '{path}': column '{}' of stripe {index} is not read: {why}",
                    root.name
                )),
                e => orc_error(
                    &path,
                    format!(
                        "column '{}' of stripe {index} does not decode: {e}",
                        root.name
                    ),
                ),
            })?);
        }
        Ok(StripeReading {
            index,
            first_row,
            decoders,
            runs,
            at: 0,
            late_dst: stripe.writer_tz().and_then(super::late_dst::LateDst::of),
            calendar: DayCalendar::of(&self.file.footer),
        })
    }

    /// The stripe-local row ranges of the row groups the filters may match (the whole
    /// stripe without filters or a row index).
    fn row_groups(
        &self,
        stripe: &orc_rust::stripe::Stripe,
        first_row: u64,
        rows: u64,
    ) -> Result<VecDeque<Range<u64>>> {
        // A stride so small that the stripe would have more than `MAX_ROW_GROUPS` groups
        // (no writer's: Java's requires at least 1 000 rows) is ignored, as a file without a
        // row index: pruning is an optimisation, and one unit per group is memory.
        let stride = match self.file.footer.row_index_stride.unwrap_or(0) as u64 {
            0 => rows.max(1),
            s if rows.div_ceil(s) > MAX_ROW_GROUPS => rows.max(1),
            s => s,
        };
        let groups = rows.div_ceil(stride);
        let mut units: Vec<OrcUnit> = (0..groups)
            .map(|g| OrcUnit {
                first_row: first_row + g * stride,
                rows: stride.min(rows - g * stride),
                columns: Default::default(),
            })
            .collect();
        let all: Vec<usize> = (0..units.len()).collect();
        let mut kept = all.clone();
        if !self.context.filters.filters.is_empty() && groups > 1 {
            kept = self.prune_groups(stripe, &mut units, &all)?;
            let skipped: u64 = all
                .iter()
                .filter(|g| kept.binary_search(g).is_err())
                .map(|&g| units[g].rows)
                .sum();
            self.context
                .metrics
                .rows_pruned_page_index
                .add(skipped as usize);
        }
        // Groups whose every row is deleted are never decoded (as Parquet's selection
        // skips them); their rows count as deleted, not scanned.
        if let Some(deleted) = &self.deleted {
            kept.retain(|&g| {
                let range = units[g].first_row..units[g].first_row + units[g].rows;
                if deleted.all().range_cardinality(range.clone()) < units[g].rows {
                    return true;
                }
                let by_files = deleted.counts(range).position_deletes as usize;
                let metrics = &self.context.metrics;
                metrics.rows_deleted_position.add(by_files);
                metrics
                    .rows_deleted_vector
                    .add(units[g].rows as usize - by_files);
                false
            });
        }
        let mut runs: VecDeque<Range<u64>> = VecDeque::new();
        for g in kept {
            let start = units[g].first_row - first_row;
            let end = start + units[g].rows;
            match runs.back_mut() {
                Some(last) if last.end == start => last.end = end,
                _ => runs.push_back(start..end),
            }
        }
        Ok(runs)
    }

    /// Of the row groups `all` (`units`), those the filters may match by the row index of
    /// the filter columns.
    fn prune_groups(
        &self,
        stripe: &orc_rust::stripe::Stripe,
        units: &mut [OrcUnit],
        all: &[usize],
    ) -> Result<Vec<usize>> {
        let root_type = self.file.metadata.root_data_type();
        for (k, root) in self.decoding.roots[..self.decoding.filter_roots]
            .iter()
            .enumerate()
        {
            let Some(entries) = row_index(&self.path, stripe, self.positions[k])? else {
                continue;
            };
            if entries.len() != units.len() {
                continue;
            }
            let Some(id) = root_type
                .children()
                .get(root.root)
                .map(|c| c.data_type().column_index())
            else {
                continue;
            };
            for (unit, entry) in units.iter_mut().zip(entries) {
                if let Some(s) = entry.statistics {
                    unit.columns.insert(id, s);
                }
            }
        }
        let stats = OrcStatistics::new(&self.context.spec, &self.binding, &self.file, units);
        prune_units(&self.context, &self.split, &stats, all)
    }
}

/// The next window of at most `batch_size` rows to read (stripe-local); `None` when the
/// stripe is read. A window ends before a run of at least [`SKIPPED_DELETED_RUN`] deleted
/// rows, and such a run (or the deleted rest of a group) is a window of its own, which
/// [`decode_window`] skips.
fn next_window(
    current: &mut StripeReading,
    batch_size: usize,
    deleted: Option<&DeletedPositions>,
) -> Option<Range<u64>> {
    loop {
        let run = current.runs.front_mut()?;
        if run.is_empty() {
            current.runs.pop_front();
            continue;
        }
        let start = run.start;
        let mut end = run.end.min(start + batch_size.max(1) as u64);
        if let Some(deleted) = deleted {
            let first = current.first_row;
            let deleted_from = |at: u64, limit: u64| {
                // The deleted run starting at `at` (file position), up to `limit`.
                let mut next = at;
                for p in deleted.in_range(at..limit) {
                    if p != next {
                        break;
                    }
                    next += 1;
                }
                next - at
            };
            let gap = deleted_from(first + start, first + run.end);
            if gap >= SKIPPED_DELETED_RUN.min(run.end - start) && gap > 0 {
                end = start + gap;
            } else if let Some(p) = deleted.in_range(first + start..first + end).next() {
                let long = deleted_from(p, first + run.end);
                if long >= SKIPPED_DELETED_RUN && p > first + start {
                    end = p - first;
                }
            }
        }
        run.start = end;
        return Some(start..end);
    }
}

/// What one window gave.
struct WindowRead {
    batch: Option<RecordBatch>,
    rows: usize,
    deleted: usize,
    by_files: usize,
    /// Rows of a window skipped because all are deleted: (by position-delete files, by
    /// the deletion vector).
    skipped_deleted: (usize, usize),
}

/// Decodes one window: gaps skipped, filter columns decoded and tested with the deleted
/// rows, the other columns decoded (or skipped when no row survives).
fn decode_window(
    current: &mut StripeReading,
    window: Range<u64>,
    decoding: &Decoding,
    deleted: Option<&DeletedPositions>,
    path: &str,
) -> Result<WindowRead> {
    let stripe = current.index;
    let decode_error =
        |e: DecodeError| orc_error(path, format!("stripe {stripe} does not decode: {e}"));
    if window.start > current.at {
        let gap = (window.start - current.at) as usize;
        for decoder in &mut current.decoders {
            decoder.skip(gap).map_err(decode_error)?;
        }
        current.at = window.start;
    }
    let n = (window.end - window.start) as usize;
    current.at = window.end;
    let first = current.first_row + window.start;
    // A window whose every row is deleted is skipped, not decoded: its rows are deleted,
    // not scanned.
    if let Some(deleted) = deleted {
        let positions = first..first + n as u64;
        if deleted.all().range_cardinality(positions.clone()) == n as u64 {
            for decoder in &mut current.decoders {
                decoder.skip(n).map_err(decode_error)?;
            }
            let by_files = deleted.counts(positions).position_deletes as usize;
            return Ok(WindowRead {
                batch: None,
                rows: 0,
                deleted: 0,
                by_files: 0,
                skipped_deleted: (by_files, n - by_files),
            });
        }
    }
    // Rows deleted by position: never tested, never output.
    let (mut keep, mut dropped, mut by_files) = (None, 0, 0);
    if let Some(deleted) = deleted {
        let positions = first..first + n as u64;
        let mut mask = DeletedMask::new(deleted.clone(), [positions.clone()].into());
        if let Some(bits) = mask.next_batch(n)? {
            let mask = BooleanArray::new(bits, None);
            dropped = n - mask.true_count();
            by_files = deleted.counts(positions).position_deletes as usize;
            keep = Some(mask);
        }
    }
    let mut arrays: Vec<Option<ArrayRef>> = vec![None; decoding.roots.len()];
    for (k, slot) in arrays[..decoding.filter_roots].iter_mut().enumerate() {
        let array = current.decoders[k].next_batch(n).map_err(decode_error)?;
        check_len(path, stripe, &array, n)?;
        *slot = Some(current.corrected(array)?);
    }
    for (k, predicate) in &decoding.filters {
        if keep.as_ref().is_some_and(|k| k.true_count() == 0) {
            break;
        }
        let Some(array) = &arrays[*k] else {
            continue;
        };
        let mask = predicate.keep(array)?;
        keep = Some(match keep {
            Some(k) => and(&k, &mask)?,
            None => mask,
        });
    }
    let survivors = keep.as_ref().map_or(n, |k| k.true_count());
    let rest = decoding.filter_roots..decoding.roots.len();
    if survivors == 0 {
        for k in rest {
            current.decoders[k].skip(n).map_err(decode_error)?;
        }
        return Ok(WindowRead {
            batch: None,
            rows: n,
            deleted: dropped,
            by_files,
            skipped_deleted: (0, 0),
        });
    }
    for k in rest {
        let array = current.decoders[k].next_batch(n).map_err(decode_error)?;
        check_len(path, stripe, &array, n)?;
        arrays[k] = Some(current.corrected(array)?);
    }
    let mut fields = Vec::with_capacity(arrays.len() + 1);
    let mut columns = Vec::with_capacity(arrays.len() + 1);
    for (root, array) in decoding.roots.iter().zip(arrays) {
        let Some(array) = array else {
            continue;
        };
        fields.push(Field::new(&root.name, array.data_type().clone(), true));
        columns.push(array);
    }
    if decoding.row_numbers {
        fields.push(Field::new(ROW_NUMBER_COLUMN, DataType::Int64, false));
        let positions = (first as i64)..(first + n as u64) as i64;
        columns.push(Arc::new(Int64Array::from_iter_values(positions)));
    }
    let schema: SchemaRef = Arc::new(Schema::new(fields));
    let options = arrow::array::RecordBatchOptions::new().with_row_count(Some(n));
    let mut batch = RecordBatch::try_new_with_options(schema, columns, &options)?;
    if let Some(keep) = keep
        && survivors < n
    {
        batch = filter_record_batch(&batch, &keep)?;
    }
    Ok(WindowRead {
        batch: Some(batch),
        rows: n,
        deleted: dropped,
        by_files,
        skipped_deleted: (0, 0),
    })
}

/// A decoder that yields fewer rows than its stripe's footer gives is a corrupt file.
fn check_len(path: &str, stripe: usize, array: &ArrayRef, n: usize) -> Result<()> {
    match array.len() == n {
        true => Ok(()),
        false => Err(orc_error(
            path,
            format!(
                "stripe {stripe} holds fewer rows than its footer gives ({} of {n} in a \
                 window; the file is corrupt)",
                array.len()
            ),
        )),
    }
}

/// The type a file column is decoded in: its file type, with timestamps in the table's unit
/// (ORC stores nanoseconds; Iceberg tables read microseconds, Hive tables nanoseconds), and
/// Iceberg's fixed-size binaries and times as the binaries and longs `orc-rust` decodes
/// (the assembler casts them to the table type).
pub fn decode_type(file_type: &DataType, table_type: &DataType) -> DataType {
    match (file_type, table_type) {
        (DataType::Timestamp(_, zone), DataType::Timestamp(unit, _)) => {
            DataType::Timestamp(*unit, zone.clone())
        }
        (DataType::Timestamp(_, zone), _) => {
            DataType::Timestamp(TimeUnit::Nanosecond, zone.clone())
        }
        _ => as_decoded(file_type),
    }
}

/// `t` with the Iceberg types `orc-rust` does not decode as their ORC storage.
fn as_decoded(t: &DataType) -> DataType {
    let field = |f: &arrow::datatypes::FieldRef| {
        Arc::new(f.as_ref().clone().with_data_type(as_decoded(f.data_type())))
    };
    match t {
        DataType::FixedSizeBinary(_) => DataType::Binary,
        DataType::Time64(_) => DataType::Int64,
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(field).collect()),
        DataType::List(item) => DataType::List(field(item)),
        DataType::Map(entries, sorted) => DataType::Map(field(entries), *sorted),
        other => other.clone(),
    }
}
