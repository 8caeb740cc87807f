//! The Parquet split reader (seed §7, §8).
//!
//! | file              | owns                                                          |
//! |-------------------|---------------------------------------------------------------|
//! | [`open`]          | byte-counting reader, errors naming the file                  |
//! | [`row_groups`]    | byte range → row groups (midpoint rule), statistics pruning   |
//! | [`statistics`]    | row-group statistics in table types (`PruningStatistics`)     |
//! | [`page_index`]    | page-index pruning → `RowSelection`                           |
//! | [`row_filter`]    | per-column filters as a parquet `RowFilter`                   |
//!
//! The per-split state machine, with I/O states named `Load*`:
//!
//! ```text
//!  Pending ─▶ LoadFooter ─▶ Bind (file columns, constants) ─▶ test constants ──skip──▶ Done
//!                                     │
//!              row groups in range ◀──┘──▶ prune by statistics (filters, residual)
//!                                     │                              └──none left──▶ Done
//!                                     ▼
//!             LoadPageIndex (with the footer) ─▶ page selection ─▶ Reading ─▶ Done
//! ```

pub mod open;
pub mod page_index;
pub mod row_filter;
pub mod row_groups;
pub mod statistics;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::compute::cast;
use arrow::datatypes::DataType;
use async_trait::async_trait;
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::physical_optimizer::pruning::PruningPredicate;
use futures::StreamExt;
use parquet::arrow::arrow_reader::{
    ArrowPredicate, ArrowReaderMetadata, ArrowReaderOptions, RowFilter, RowSelection,
};
use parquet::arrow::async_reader::{ParquetObjectReader, ParquetRecordBatchStream};
use parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};
use parquet::file::metadata::PageIndexPolicy;
use parquet::schema::types::SchemaDescriptor;

use crate::binding::{FieldSource, SplitBinding};
use crate::filter::Filter;
use crate::scan_spec::ScanSpec;
use crate::source::{Prepared, ReaderBatch, SplitContext, SplitReader, SplitReaderFactory};
use crate::split::FileSplit;
use crate::subfield::Subfield;
use open::{CountingReader, file_error, footer_error};
use row_filter::ColumnPredicate;
use statistics::RowGroupStatistics;

/// Creates [`ParquetSplitReader`]s (columns matched by name).
#[derive(Debug, Default)]
pub struct ParquetSplitReaderFactory;

impl SplitReaderFactory for ParquetSplitReaderFactory {
    fn create(&self, split: FileSplit, context: SplitContext) -> Result<Box<dyn SplitReader>> {
        Ok(Box::new(ParquetSplitReader::new(split, context)))
    }
}

/// Reads one split of a Parquet file into batches of the reader schema `R`.
pub struct ParquetSplitReader {
    split: FileSplit,
    context: SplitContext,
    state: ReaderState,
}

enum ReaderState {
    Pending,
    Reading(Box<Reading>),
    Done,
}

struct Reading {
    stream: ParquetRecordBatchStream<CountingReader>,
    /// Filters evaluated on decoded batches: (batch column index, predicate).
    post_filters: Vec<(usize, ColumnPredicate)>,
    /// Per channel of `R`: the batch column it comes from, or the constant to repeat.
    channels: Vec<ChannelSource>,
    /// Rows seen by the first reader filter; `None` when there are no reader filters.
    rows_scanned: Option<Arc<AtomicU64>>,
    reported_scanned: u64,
}

enum ChannelSource {
    Column { index: usize, table_type: DataType },
    Constant(datafusion::common::ScalarValue),
}

impl ParquetSplitReader {
    /// A reader for `split`; nothing is opened before [`SplitReader::prepare`].
    pub fn new(split: FileSplit, context: SplitContext) -> Self {
        Self {
            split,
            context,
            state: ReaderState::Pending,
        }
    }

    /// A filter that rejects a constant of the split (a partition value, a missing
    /// column's NULL, or a field of one) makes the whole split empty.
    fn constants_pass(&self, binding: &SplitBinding) -> bool {
        let fields = self.context.spec.fields();
        self.context
            .filters
            .filters
            .iter()
            .all(|(subfield, filter)| {
                let Some(i) = fields.iter().position(|f| f.name() == subfield.root()) else {
                    return true;
                };
                match &binding.sources()[i] {
                    FieldSource::Constant(v) => match constant_subfield(v, subfield) {
                        Some(value) => filter.test_constant(&value),
                        None => true,
                    },
                    FieldSource::File { .. } => true,
                }
            })
    }

    fn prune_row_groups(
        &self,
        stats: &RowGroupStatistics<'_>,
        row_groups: Vec<usize>,
    ) -> Result<Vec<usize>> {
        let mut keep = vec![true; row_groups.len()];
        for (i, field) in self.context.spec.fields().iter().enumerate() {
            let column = Subfield::column(field.name());
            let Some(filter) = self.context.filters.filters.get(&column) else {
                continue;
            };
            let Some(arrays) = stats.field_stats(i)? else {
                continue;
            };
            for (k, keep) in keep.iter_mut().enumerate() {
                *keep = *keep && filter.may_match(&arrays.column_stats(k));
            }
        }
        let mut kept: Vec<usize> = row_groups
            .iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(rg, _)| *rg)
            .collect();
        if let Some(residual) = &self.context.filters.residual {
            let schema = Arc::clone(self.context.spec.reader_schema());
            if let Ok(predicate) = PruningPredicate::try_new(Arc::clone(residual), schema) {
                let kept_stats = stats.with_row_groups(&kept);
                // Pruning is an optimization: statistics it cannot compare keep the row groups.
                match row_groups::prune_with_predicate(&predicate, &kept_stats, &kept) {
                    Ok(pruned) => kept = pruned,
                    Err(e) => {
                        log::debug!("residual pruning skipped for {}: {e}", self.split.file_path)
                    }
                }
            }
        }
        Ok(kept)
    }
}

#[async_trait]
impl SplitReader for ParquetSplitReader {
    async fn prepare(&mut self) -> Result<Prepared> {
        let (reader, metadata) = load_footer(self.split.clone(), self.context.clone()).await?;
        let file_schema = Arc::clone(metadata.schema());
        let spec = Arc::clone(&self.context.spec);
        let binding = SplitBinding::try_new(&spec, &self.split, &file_schema)?;
        if !self.constants_pass(&binding) {
            self.state = ReaderState::Done;
            return Ok(Prepared::SkippedByConstant);
        }
        let parquet_metadata = Arc::clone(metadata.metadata());
        let in_range = row_groups::row_groups_in_range(&parquet_metadata, &self.split);
        self.context.metrics.row_groups_total.add(in_range.len());
        if in_range.is_empty() {
            self.state = ReaderState::Done;
            return Ok(Prepared::EmptyRange);
        }
        let stats =
            RowGroupStatistics::new(&spec, &binding, &parquet_metadata, &file_schema, &in_range);
        let kept = self.prune_row_groups(&stats, in_range.clone())?;
        self.context
            .metrics
            .row_groups_pruned_statistics
            .add(in_range.len() - kept.len());
        if kept.is_empty() {
            self.state = ReaderState::Done;
            return Ok(Prepared::NothingToRead);
        }
        let first = &kept[..1];
        let estimates = keep_estimates(&self.context, &stats.with_row_groups(first))?;
        let plan = ReadPlan::try_new(&self.context, &binding, &metadata, &kept, &estimates)?;
        if let Some(selection) = &plan.selection {
            self.context
                .metrics
                .rows_pruned_page_index
                .add(selection.skipped_row_count());
        }
        let metadata = decode_in_table_types(metadata, &spec, &binding)?;
        let reading = plan
            .build(reader, metadata, kept, &binding, &self.context)
            .map_err(|e| file_error(&self.split.file_path, e))?;
        self.state = ReaderState::Reading(Box::new(reading));
        Ok(Prepared::Read)
    }

    async fn next(&mut self) -> Result<Option<ReaderBatch>> {
        let ReaderState::Reading(reading) = &mut self.state else {
            return Ok(None);
        };
        match reading.stream.next().await {
            None => {
                // Rows the filters dropped after the last batch still count as scanned.
                let rows_scanned = reading.take_rows_scanned(0);
                let schema = Arc::clone(self.context.spec.reader_schema());
                self.state = ReaderState::Done;
                if rows_scanned == 0 {
                    return Ok(None);
                }
                let batch = RecordBatch::new_empty(schema);
                Ok(Some(ReaderBatch {
                    batch,
                    rows_scanned,
                }))
            }
            Some(Err(e)) => Err(file_error(&self.split.file_path, e)),
            Some(Ok(file_batch)) => {
                let rows_scanned = reading.take_rows_scanned(file_batch.num_rows());
                let file_batch = reading.post_filter(file_batch)?;
                let batch = reading.assemble(&file_batch, &self.context)?;
                Ok(Some(ReaderBatch {
                    batch,
                    rows_scanned,
                }))
            }
        }
    }
}

/// `LoadFooter`: opens the file and reads its metadata (and page index when filtering).
/// Takes owned inputs so the future stays `Send` while the reader state is not `Sync`.
async fn load_footer(
    split: FileSplit,
    context: SplitContext,
) -> Result<(CountingReader, ArrowReaderMetadata)> {
    let path = split.read_path().clone();
    let object_reader =
        ParquetObjectReader::new(Arc::clone(&context.store), path).with_file_size(split.file_size);
    let bytes_read = context.metrics.bytes_read.clone();
    let mut reader = CountingReader::new(object_reader, split.file_size, bytes_read);
    let filtered = !context.filters.filters.is_empty();
    let policy = if filtered {
        PageIndexPolicy::Optional
    } else {
        PageIndexPolicy::Skip
    };
    let options = ArrowReaderOptions::new().with_page_index_policy(policy);
    let metadata = ArrowReaderMetadata::load_async(&mut reader, options)
        .await
        .map_err(|e| footer_error(&split.file_path, e))?;
    Ok((reader, metadata))
}

/// What to read from the kept row groups: output columns, filters, page selection.
struct ReadPlan {
    /// Sorted file root columns returned in output batches.
    output_roots: Vec<usize>,
    /// Filters that run inside the decoder, in adaptive order.
    predicates: Vec<Box<dyn ArrowPredicate>>,
    /// Filters that run on decoded batches: (batch column index, predicate).
    post_filters: Vec<(usize, ColumnPredicate)>,
    rows_scanned: Option<Arc<AtomicU64>>,
    selection: Option<RowSelection>,
}

impl ReadPlan {
    fn try_new(
        context: &SplitContext,
        binding: &SplitBinding,
        metadata: &ArrowReaderMetadata,
        row_groups: &[usize],
        estimates: &HashMap<Subfield, f64>,
    ) -> Result<Self> {
        let spec = &context.spec;
        let descr = metadata.metadata().file_metadata().schema_descr_ptr();
        let file_schema = metadata.schema();
        let mut output_roots: Vec<usize> = vec![];
        for (field, source) in spec.fields().iter().zip(binding.sources()) {
            if let (FieldSource::File { root, .. }, Some(_)) = (source, field.channel) {
                output_roots.push(*root);
            }
        }
        output_roots.sort_unstable();
        output_roots.dedup();
        // Filters on file columns (and their struct fields); constants were tested already.
        let mut filtered: Vec<FilteredColumn> = vec![];
        for (subfield, filter) in &context.filters.filters {
            let Some(i) = spec
                .fields()
                .iter()
                .position(|f| f.name() == subfield.root())
            else {
                continue;
            };
            if let FieldSource::File { root, .. } = binding.sources()[i] {
                let table_type = spec.fields()[i].handle.data_type.clone();
                filtered.push(FilteredColumn {
                    subfield,
                    filter,
                    root,
                    table_type,
                });
            }
        }
        spec.adaptive().order(&mut filtered, |c| {
            (c.subfield.to_string(), c.filter.data_type().clone())
        });
        let (pushed, post): (Vec<_>, Vec<_>) = filtered.into_iter().partition(|c| {
            let estimate = estimates.get(c.subfield).copied();
            let max_keep = context.options.pushdown_max_keep_ratio;
            row_filter::runs_in_decoder(
                spec.adaptive(),
                &c.subfield.to_string(),
                estimate,
                max_keep,
            )
        });
        output_roots.extend(post.iter().map(|c| c.root));
        output_roots.sort_unstable();
        output_roots.dedup();
        let rows_scanned = (!pushed.is_empty()).then(|| Arc::new(AtomicU64::new(0)));
        let mut selection: Option<RowSelection> = None;
        for column in pushed.iter().chain(&post) {
            let pages = page_selection_of(metadata, row_groups, column)?;
            selection = match (selection, pages) {
                (Some(s), Some(p)) => Some(s.intersection(&p)),
                (s, p) => s.or(p),
            };
        }
        let predicate = |column: &FilteredColumn, rows_scanned: Option<Arc<AtomicU64>>| {
            let root_name = file_schema.field(column.root).name();
            ColumnPredicate {
                column: column.subfield.to_string(),
                projection: subfield_mask(&descr, column.root, root_name, column.subfield),
                subfield: column.subfield.clone(),
                filter: column.filter.clone(),
                adaptive: Arc::clone(spec.adaptive()),
                rows_scanned,
                table_type: column.table_type.clone(),
            }
        };
        let predicates: Vec<Box<dyn ArrowPredicate>> = pushed
            .iter()
            .enumerate()
            .map(|(n, c)| {
                let counter = if n == 0 { rows_scanned.clone() } else { None };
                Box::new(predicate(c, counter)) as Box<dyn ArrowPredicate>
            })
            .collect();
        let post_filters = post
            .iter()
            .map(|c| {
                let index = output_roots.binary_search(&c.root).unwrap_or_default();
                (index, predicate(c, None))
            })
            .collect();
        let selection = selection.filter(|s| s.skipped_row_count() > 0);
        Ok(Self {
            output_roots,
            predicates,
            post_filters,
            rows_scanned,
            selection,
        })
    }

    fn build(
        self,
        reader: CountingReader,
        metadata: ArrowReaderMetadata,
        row_groups: Vec<usize>,
        binding: &SplitBinding,
        context: &SplitContext,
    ) -> parquet::errors::Result<Reading> {
        let descr = metadata.metadata().file_metadata().schema_descr_ptr();
        let mask = ProjectionMask::roots(&descr, self.output_roots.iter().copied());
        let mut builder = ParquetRecordBatchStreamBuilder::new_with_metadata(reader, metadata)
            .with_row_groups(row_groups)
            .with_projection(mask)
            .with_batch_size(context.options.batch_size);
        if let Some(selection) = self.selection {
            builder = builder.with_row_selection(selection);
        }
        if !self.predicates.is_empty() {
            builder = builder.with_row_filter(RowFilter::new(self.predicates));
        }
        let channels = channel_sources(context, binding, &self.output_roots);
        Ok(Reading {
            stream: builder.build()?,
            post_filters: self.post_filters,
            channels,
            rows_scanned: self.rows_scanned,
            reported_scanned: 0,
        })
    }
}

/// Asks the decoder for the table's string/binary *view* types directly (instead of
/// decoding `Utf8` and casting): the cast would copy every value once more.
fn decode_in_table_types(
    metadata: ArrowReaderMetadata,
    spec: &ScanSpec,
    binding: &SplitBinding,
) -> Result<ArrowReaderMetadata> {
    let file_schema = metadata.schema();
    let mut fields: Vec<arrow::datatypes::FieldRef> =
        file_schema.fields().iter().cloned().collect();
    let mut changed = false;
    for (field, source) in spec.fields().iter().zip(binding.sources()) {
        let FieldSource::File { root, file_type } = source else {
            continue;
        };
        let table_type = &field.handle.data_type;
        let decodes_as_view = matches!(
            (file_type, table_type),
            (DataType::Utf8 | DataType::LargeUtf8, DataType::Utf8View)
                | (
                    DataType::Binary | DataType::LargeBinary,
                    DataType::BinaryView
                )
        );
        if decodes_as_view {
            let f = fields[*root]
                .as_ref()
                .clone()
                .with_data_type(table_type.clone());
            fields[*root] = Arc::new(f);
            changed = true;
        }
    }
    if !changed {
        return Ok(metadata);
    }
    let schema = Arc::new(arrow::datatypes::Schema::new_with_metadata(
        fields,
        file_schema.metadata().clone(),
    ));
    let options = ArrowReaderOptions::new().with_schema(schema);
    Ok(ArrowReaderMetadata::try_new(
        Arc::clone(metadata.metadata()),
        options,
    )?)
}

/// Keep-ratio estimates of the filters on top-level columns from one row group's min/max.
fn keep_estimates(
    context: &SplitContext,
    stats: &RowGroupStatistics<'_>,
) -> Result<HashMap<Subfield, f64>> {
    let mut estimates = HashMap::new();
    for (i, field) in context.spec.fields().iter().enumerate() {
        let column = Subfield::column(field.name());
        let Some(filter) = context.filters.filters.get(&column) else {
            continue;
        };
        let Some(arrays) = stats.field_stats(i)? else {
            continue;
        };
        let Some(mut column_stats) = (!arrays.mins.is_empty()).then(|| arrays.column_stats(0))
        else {
            continue;
        };
        column_stats.min = column_stats
            .min
            .and_then(|v| v.cast_to(filter.data_type()).ok());
        column_stats.max = column_stats
            .max
            .and_then(|v| v.cast_to(filter.data_type()).ok());
        if let Some(ratio) = filter.estimated_keep_ratio(&column_stats) {
            estimates.insert(column, ratio);
        }
    }
    Ok(estimates)
}

/// Page-index selection for a filter on a top-level column (none for struct fields).
fn page_selection_of(
    metadata: &ArrowReaderMetadata,
    row_groups: &[usize],
    column: &FilteredColumn<'_>,
) -> Result<Option<RowSelection>> {
    if !column.subfield.path().is_empty() {
        return Ok(None);
    }
    let file_schema = metadata.schema();
    let file_name = file_schema.field(column.root).name();
    page_index::page_selection(
        metadata.metadata(),
        file_schema,
        file_name,
        column.filter,
        row_groups,
    )
}

/// A filter on a file column or one of its struct fields.
struct FilteredColumn<'a> {
    subfield: &'a Subfield,
    filter: &'a Filter,
    root: usize,
    table_type: DataType,
}

/// The leaves under `subfield` (all of the column when it is the column itself).
fn subfield_mask(
    descr: &SchemaDescriptor,
    root: usize,
    root_name: &str,
    subfield: &Subfield,
) -> ProjectionMask {
    if subfield.path().is_empty() {
        return ProjectionMask::roots(descr, [root]);
    }
    let leaves: Vec<usize> = (0..descr.num_columns())
        .filter(|&i| {
            let parts = descr.column(i).path().parts().to_vec();
            parts.first().map(String::as_str) == Some(root_name)
                && parts.len() > subfield.path().len()
                && parts[1..=subfield.path().len()] == *subfield.path()
        })
        .collect();
    if leaves.is_empty() {
        ProjectionMask::roots(descr, [root])
    } else {
        ProjectionMask::leaves(descr, leaves)
    }
}

/// The value of `subfield` inside a constant of its column.
fn constant_subfield(value: &ScalarValue, subfield: &Subfield) -> Option<ScalarValue> {
    if subfield.path().is_empty() {
        return Some(value.clone());
    }
    let array = value.to_array_of_size(1).ok()?;
    let nested = subfield.extract(&array).ok()?;
    ScalarValue::try_from_array(&nested, 0).ok()
}

/// For each channel of `R`, where its values come from in the file batches.
fn channel_sources(
    context: &SplitContext,
    binding: &SplitBinding,
    output_roots: &[usize],
) -> Vec<ChannelSource> {
    let mut channels: Vec<(usize, ChannelSource)> = vec![];
    for (field, source) in context.spec.fields().iter().zip(binding.sources()) {
        let Some(channel) = field.channel else {
            continue;
        };
        let table_type = field.handle.data_type.clone();
        let source = match source {
            FieldSource::File { root, .. } => {
                let index = output_roots
                    .iter()
                    .position(|r| r == root)
                    .unwrap_or_default();
                ChannelSource::Column { index, table_type }
            }
            FieldSource::Constant(v) => ChannelSource::Constant(v.clone()),
        };
        channels.push((channel, source));
    }
    channels.sort_by_key(|(c, _)| *c);
    channels.into_iter().map(|(_, s)| s).collect()
}

impl Reading {
    /// Runs the filters that were left out of the decoder, dropping rows as it goes.
    fn post_filter(&self, mut batch: RecordBatch) -> Result<RecordBatch> {
        for (index, predicate) in &self.post_filters {
            if batch.num_rows() == 0 {
                break;
            }
            let mask = predicate.keep(batch.column(*index))?;
            if mask.true_count() < batch.num_rows() {
                batch = arrow::compute::filter_record_batch(&batch, &mask)?;
            }
        }
        Ok(batch)
    }

    /// Builds a batch of `R` from a file batch: casts file columns, repeats constants.
    fn assemble(&self, file_batch: &RecordBatch, context: &SplitContext) -> Result<RecordBatch> {
        let rows = file_batch.num_rows();
        let columns = self
            .channels
            .iter()
            .map(|source| -> Result<ArrayRef> {
                match source {
                    ChannelSource::Column { index, table_type } => {
                        let column = file_batch.column(*index);
                        if column.data_type() == table_type {
                            Ok(Arc::clone(column))
                        } else {
                            Ok(cast(column, table_type)?)
                        }
                    }
                    ChannelSource::Constant(v) => v.to_array_of_size(rows),
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        let schema = Arc::clone(context.spec.reader_schema());
        RecordBatch::try_new_with_options(schema, columns, &options).map_err(DataFusionError::from)
    }

    /// Rows scanned since the last batch (all rows when there are no reader filters).
    fn take_rows_scanned(&mut self, batch_rows: usize) -> usize {
        match &self.rows_scanned {
            None => batch_rows,
            Some(counter) => {
                let total = counter.load(Ordering::Relaxed);
                let delta = total - self.reported_scanned;
                self.reported_scanned = total;
                delta as usize
            }
        }
    }
}
