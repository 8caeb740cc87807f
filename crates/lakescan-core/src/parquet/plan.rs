//! [`ReadPlan`]: how one split's chosen row groups are decoded.
//!
//! From the bound file and the split's filters it decides, in this order:
//!
//! 1. **filters on file columns** (and struct members) — in adaptive order, each either
//!    inside the decoder (a `RowFilter` predicate: late materialization) or on the decoded
//!    batch, by its estimated or observed keep ratio ([`row_filter::runs_in_decoder`]);
//! 2. **row selections** — page-index pruning of every filtered column, the row-index
//!    filter's positions and the rows deleted by position, intersected (deleted rows in
//!    short runs become a mask of the assembler instead: `deleted_rows`);
//! 3. **leaves** — the output leaves (each `R` channel's required subfields, plus the
//!    columns of filters that run after decoding), the predicate leaves, and whether a map
//!    must be read as a list (`leaves::reannotate_maps`);
//! 4. **reader metadata** — view types decoded directly, the row-number virtual column when
//!    a row index is generated.
//!
//! [`ReadPlan::build`] turns it into the decoder stream and the [`Assembler`].

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow::datatypes::{DataType, Field, FieldRef, Schema};
use datafusion::common::{Result, exec_err, not_impl_err};
use parquet::arrow::arrow_reader::{
    ArrowPredicate, ArrowReaderMetadata, ArrowReaderOptions, RowFilter, RowSelection,
};
use parquet::arrow::async_reader::ParquetRecordBatchStream;
use parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask, RowNumber};
use parquet::file::metadata::ParquetMetaData;

use super::decoded_types::{decoded_type, holds_interval};
use super::deletes::DeletedApplied;
use super::leaves::{FileLeaves, reannotate_maps};
use super::legacy_times::FileTimes;
use super::row_filter::{self, ExprPredicate, InDecoder};
use super::statistics::RowGroupStatistics;
use super::{Chosen, page_index, row_index};
use crate::binding::{FieldSource, SplitBinding};
use crate::deleted_rows::DeletedMask;
use crate::deleted_rows::DeletedRows;
use crate::filter::Filter;
use crate::format::assemble::{Assembler, GeneratedFilter, PostFilter, ROW_NUMBER_COLUMN};
use crate::format::column_predicate::ColumnPredicate;
use crate::io::CountingReader;
use crate::reader::SplitContext;
use crate::required::{PathStep, RequiredSubfields, has_path};
use crate::split::FileSplit;
use crate::subfield::Subfield;

/// A filter on a file column (or a struct member of one).
struct FilteredColumn<'a> {
    subfield: &'a Subfield,
    filter: &'a Filter,
    root: usize,
    table_type: DataType,
    /// A struct member the file lacks (tested on its default after decoding).
    missing_member: bool,
}

/// What to decode from the chosen row groups, and how.
pub struct ReadPlan {
    metadata: ArrowReaderMetadata,
    output_mask: ProjectionMask,
    predicates: Vec<Box<dyn ArrowPredicate>>,
    rows_scanned: Option<Arc<AtomicU64>>,
    selection: Option<RowSelection>,
    assembler: Assembler,
}

/// A split being decoded.
pub struct Reading {
    /// The decoder.
    pub stream: ParquetRecordBatchStream<CountingReader>,
    /// Turns decoded batches into batches of `R`.
    pub assembler: Assembler,
    /// Rows seen by the first reader filter; `None` when there are no reader filters.
    rows_scanned: Option<Arc<AtomicU64>>,
    reported_scanned: u64,
    /// Rows the decoder must advance over: those the footer gives the row groups read, less
    /// those the row selection skips.
    expected_rows: u64,
    /// Rows it advanced over so far.
    advanced: u64,
    /// The row groups it reads (messages).
    row_groups: Vec<usize>,
    /// The decoder returned its last batch (its rows were checked).
    pub ended: bool,
}

impl Reading {
    /// Rows scanned since the last batch (all rows when there are no reader filters).
    pub fn take_rows_scanned(&mut self, batch_rows: usize) -> usize {
        let delta = match &self.rows_scanned {
            None => batch_rows,
            Some(counter) => {
                let total = counter.load(Ordering::Relaxed);
                let delta = total - self.reported_scanned;
                self.reported_scanned = total;
                delta as usize
            }
        };
        self.advanced += delta as u64;
        delta
    }

    /// At the end of the decoder's rows: an error when they are not the footer's count (pages
    /// holding fewer or more rows than their row group says: a corrupt file, whose missing
    /// rows must not go unnoticed).
    pub fn check_row_count(&self, path: &str) -> Result<()> {
        if self.advanced == self.expected_rows {
            return Ok(());
        }
        let groups: Vec<String> = self.row_groups.iter().map(|g| g.to_string()).collect();
        let (noun, verb) = match groups.len() {
            1 => ("row group", "its"),
            _ => ("row groups", "their"),
        };
        exec_err!(
            "cannot read Parquet file '{path}': its footer gives {noun} {} {} rows to read, but \
             {verb} pages hold {} (the file is corrupt)",
            groups.join(", "),
            self.expected_rows,
            self.advanced
        )
    }
}

impl ReadPlan {
    /// Plans the decoding of `chosen` (see the module docs).
    pub fn try_new(
        context: &SplitContext,
        split: &FileSplit,
        chosen: &Chosen,
        deleted: Option<&Arc<DeletedRows>>,
    ) -> Result<Self> {
        let bound = &chosen.bound;
        let (pushed, post) = place_filters(context, chosen)?;
        let expr_filters = dynamic_column_filters(context, chosen);
        // Rows deleted by position may be masked after decoding only when the decoder
        // yields every selected row (no filter inside it): the mask follows positions.
        let decoder_filters = !pushed.is_empty() || !expr_filters.is_empty();
        let (selection, deleted_mask) =
            selection(context, deleted, chosen, (&pushed, &post), decoder_filters)?;
        let mut output_leaves = output_leaves(context, &bound.binding, &bound.leaves);
        for c in &post {
            output_leaves.extend(filter_leaves(&bound.leaves, c));
        }
        refuse_intervals(context, split, chosen)?;
        let metadata = reader_metadata_for(context, chosen, &output_leaves)?;
        let descr = metadata.metadata().file_metadata().schema_descr_ptr();
        let rows_scanned = decoder_filters.then(|| Arc::new(AtomicU64::new(0)));
        let mut decoded_leaves = output_leaves.clone();
        let mut predicates: Vec<Box<dyn ArrowPredicate>> = vec![];
        for (n, c) in pushed.iter().enumerate() {
            let leaves_of = filter_leaves(&bound.leaves, c);
            decoded_leaves.extend(leaves_of.iter().copied());
            let counter = if n == 0 { rows_scanned.clone() } else { None };
            let projection = ProjectionMask::leaves(&descr, leaves_of);
            predicates.push(Box::new(InDecoder {
                projection,
                rows_scanned: counter,
                predicate: predicate(context, c, Some(&bound.times)),
            }));
        }
        for (root, expr, schema) in expr_filters {
            let leaves_of = bound.leaves.select(root, &RequiredSubfields::Whole);
            decoded_leaves.extend(leaves_of.iter().copied());
            let counter = match predicates.is_empty() {
                true => rows_scanned.clone(),
                false => None,
            };
            predicates.push(Box::new(ExprPredicate {
                projection: ProjectionMask::leaves(&descr, leaves_of),
                expr,
                schema,
                rows_scanned: counter,
            }));
        }
        let decoded = decoded_leaves.len() * chosen.row_groups.len();
        context.metrics.leaves_decoded.add(decoded);
        let mut assembler = assembler(context, split, chosen, &metadata, &post, &output_leaves)?;
        if let Some(mask) = deleted_mask {
            assembler.drop_deleted(mask);
        }
        Ok(Self {
            output_mask: ProjectionMask::leaves(&descr, output_leaves),
            metadata,
            predicates,
            rows_scanned,
            selection,
            assembler,
        })
    }

    /// The decoder over `chosen`'s row groups.
    pub fn build(self, chosen: Chosen, context: &SplitContext) -> parquet::errors::Result<Reading> {
        let reader = chosen.bound.opened.reader;
        let mut in_row_groups: u64 = 0;
        for &rg in &chosen.row_groups {
            let rows = self.metadata.metadata().row_group(rg).num_rows();
            let Ok(rows) = u64::try_from(rows) else {
                return Err(parquet::errors::ParquetError::General(format!(
                    "row group {rg} has a negative row count ({rows})"
                )));
            };
            in_row_groups += rows;
        }
        let expected_rows = match &self.selection {
            Some(selection) => selection.row_count() as u64,
            None => in_row_groups,
        };
        let row_groups = chosen.row_groups.clone();
        // Whole column chunks are read (no selection, no filter in the decoder): the next
        // row group's can be fetched while one decodes.
        let reader = match self.selection.is_none() && self.predicates.is_empty() {
            true => reader.with_read_ahead(chunk_ranges(
                self.metadata.metadata(),
                &row_groups,
                &self.output_mask,
            )),
            false => reader,
        };
        let mut builder = ParquetRecordBatchStreamBuilder::new_with_metadata(reader, self.metadata)
            .with_row_groups(chosen.row_groups)
            .with_projection(self.output_mask)
            .with_batch_size(context.options.batch_size);
        if let Some(selection) = self.selection {
            builder = builder.with_row_selection(selection);
        }
        if !self.predicates.is_empty() {
            builder = builder.with_row_filter(RowFilter::new(self.predicates));
        }
        let stream = builder.build()?;
        Ok(Reading {
            stream,
            assembler: self.assembler,
            rows_scanned: self.rows_scanned,
            reported_scanned: 0,
            expected_rows,
            advanced: 0,
            row_groups,
            ended: false,
        })
    }
}

/// The file filters in adaptive order, split into those that run inside the decoder and
/// those that run on decoded batches ([`row_filter::runs_in_decoder`]).
fn place_filters<'a>(
    context: &'a SplitContext,
    chosen: &Chosen,
) -> Result<(Vec<FilteredColumn<'a>>, Vec<FilteredColumn<'a>>)> {
    let bound = &chosen.bound;
    let spec = &context.spec;
    let mut filtered = file_filters(context, &bound.binding, &bound.leaves);
    spec.adaptive().order(&mut filtered, |c| {
        (c.subfield.to_string(), c.filter.data_type().clone())
    });
    let estimates = keep_estimates(context, chosen)?;
    let max_keep = context.options.pushdown_max_keep_ratio;
    Ok(filtered.into_iter().partition(|c| {
        // A member the file lacks has no leaf to filter in the decoder.
        if c.missing_member {
            return false;
        }
        let estimate = estimates.get(c.subfield).copied();
        let key = c.subfield.to_string();
        row_filter::runs_in_decoder(spec.adaptive(), &key, estimate, max_keep)
    }))
}

/// A `NotImplemented` error when a column the scan reads holds a Parquet `INTERVAL`
/// ([`holds_interval`]): its months would be lost.
fn refuse_intervals(context: &SplitContext, split: &FileSplit, chosen: &Chosen) -> Result<()> {
    let bound = &chosen.bound;
    let roots = bound
        .opened
        .metadata
        .metadata()
        .file_metadata()
        .schema_descr()
        .root_schema()
        .get_fields();
    for (field, source) in context.spec.fields().iter().zip(bound.binding.sources()) {
        if let FieldSource::File { root, .. } = source
            && roots
                .get(*root)
                .is_some_and(|stored| holds_interval(stored))
        {
            return not_impl_err!(
                "Parquet file '{}': column '{}' holds a Parquet INTERVAL (months, days, \
                 milliseconds), which the parquet crate reads without its months; such \
                 columns are not read yet",
                split.display_path(),
                field.handle.name
            );
        }
    }
    Ok(())
}

/// The reader metadata for decoding `output_leaves`: maps read without their keys or values
/// become lists (`leaves::reannotate_maps`), then [`reader_metadata`].
fn reader_metadata_for(
    context: &SplitContext,
    chosen: &Chosen,
    output_leaves: &BTreeSet<usize>,
) -> Result<ArrowReaderMetadata> {
    let bound = &chosen.bound;
    let footer = &bound.opened.metadata;
    let partial_maps = bound.leaves.partial_maps(output_leaves);
    let reannotated = match partial_maps.is_empty() {
        true => None,
        false => Some(Arc::new(reannotate_maps(footer.metadata(), &partial_maps)?)),
    };
    let row_numbers = bound.binding.needs_row_index();
    reader_metadata(footer, reannotated, context, &bound.binding, row_numbers)
}

/// The assembler of the split, with the filters that run on decoded and assembled batches.
fn assembler(
    context: &SplitContext,
    split: &FileSplit,
    chosen: &Chosen,
    metadata: &ArrowReaderMetadata,
    post: &[FilteredColumn<'_>],
    output_leaves: &BTreeSet<usize>,
) -> Result<Assembler> {
    let bound = &chosen.bound;
    let file_schema = metadata.schema();
    let post_filters = post
        .iter()
        .map(|c| PostFilter {
            column: file_schema.field(c.root).name().clone(),
            predicate: predicate(context, c, None),
        })
        .collect();
    let generated = generated_filters(context, &bound.binding);
    let decoded_roots: BTreeSet<usize> = output_leaves
        .iter()
        .map(|&l| bound.leaves.root_of(l))
        .collect();
    let times = decoded_roots
        .iter()
        .filter_map(|&root| {
            let fix = bound.times.fix(root)?;
            Some((file_schema.field(root).name().clone(), Arc::clone(fix)))
        })
        .collect();
    let assembler = Assembler::try_new(
        context,
        split,
        &bound.binding,
        file_schema,
        &decoded_roots,
        (post_filters, generated),
    )?;
    Ok(assembler.with_times(times))
}

/// Filters on file columns and their struct members; constants were tested already and
/// generated columns are filtered after assembly.
fn file_filters<'a>(
    context: &'a SplitContext,
    binding: &SplitBinding,
    leaves: &FileLeaves,
) -> Vec<FilteredColumn<'a>> {
    let spec = &context.spec;
    let mut out = vec![];
    for (subfield, filter) in &context.filters.filters {
        let Some((i, field)) = spec.field(subfield.root()) else {
            continue;
        };
        if let FieldSource::File { root, file_type } = &binding.sources()[i] {
            let root = *root;
            // A member the file lacks is NULL in every row: `bind` tested NULL against the
            // filter already (the split would have been skipped if it failed). One with a
            // default is filtered on the struct with its defaults filled in.
            let has_default = field
                .handle
                .member_defaults
                .as_deref()
                .is_some_and(|d| d.at(subfield.path()).is_some());
            let missing_member = member_missing(leaves, root, file_type, subfield);
            if missing_member && !has_default {
                continue;
            }
            out.push(FilteredColumn {
                subfield,
                filter,
                root,
                table_type: field.handle.data_type.clone(),
                missing_member,
            });
        }
    }
    out
}

/// Whether struct member `subfield` of file root `root` has no leaf in the file.
/// The file's Arrow type (`file_type`) decides: a member the type has is never "missing",
/// even if the leaf walk found no leaf for it (then the filter reads the whole column).
pub fn member_missing(
    leaves: &FileLeaves,
    root: usize,
    file_type: &DataType,
    subfield: &Subfield,
) -> bool {
    let path: Vec<PathStep> = subfield
        .path()
        .iter()
        .cloned()
        .map(PathStep::Field)
        .collect();
    !path.is_empty()
        && leaves.struct_member(root, subfield.path()).is_empty()
        && !has_path(file_type, &path)
}

/// The dynamic filters' residual conjuncts that read one top-level, non-nested file column,
/// rewritten over that column alone: `(file root, conjunct, its one-field schema)`.
fn dynamic_column_filters(
    context: &SplitContext,
    chosen: &Chosen,
) -> Vec<(
    usize,
    Arc<dyn datafusion::physical_plan::PhysicalExpr>,
    arrow::datatypes::SchemaRef,
)> {
    use datafusion::common::tree_node::{Transformed, TreeNode};
    use datafusion::physical_expr::expressions::Column;
    use datafusion::physical_expr::utils::collect_columns;
    let spec = &context.spec;
    let reader = spec.reader_schema();
    let mut out = vec![];
    for conjunct in &context.filters.dynamic_residual {
        let columns = collect_columns(conjunct);
        let [column] = columns.iter().collect::<Vec<_>>()[..] else {
            continue;
        };
        let Some((i, _)) = spec
            .fields()
            .iter()
            .enumerate()
            .find(|(_, f)| f.channel == Some(column.index()))
        else {
            continue;
        };
        let FieldSource::File { root, file_type } = &chosen.bound.binding.sources()[i] else {
            continue;
        };
        // A column fixed after decoding is filtered after assembly, where it is fixed.
        if chosen.bound.times.fix(*root).is_some() {
            continue;
        }
        let field = reader.field(column.index());
        if file_type.is_nested() || field.data_type().is_nested() {
            continue;
        }
        let rewritten = Arc::clone(conjunct).transform_up(|e| {
            Ok(match e.downcast_ref::<Column>() {
                Some(c) if c.index() == column.index() => {
                    Transformed::yes(Arc::new(Column::new(c.name(), 0)) as _)
                }
                _ => Transformed::no(e),
            })
        });
        let Ok(rewritten) = rewritten else {
            continue;
        };
        let schema = Arc::new(Schema::new(vec![field.as_ref().clone()]));
        out.push((*root, rewritten.data, schema));
    }
    out
}

/// Filters on generated columns (row index, row id members), run on the batches of `R`.
pub(crate) fn generated_filters(
    context: &SplitContext,
    binding: &SplitBinding,
) -> Vec<GeneratedFilter> {
    let spec = &context.spec;
    let mut out = vec![];
    for (subfield, filter) in &context.filters.filters {
        let Some((i, field)) = spec.field(subfield.root()) else {
            continue;
        };
        let generated = matches!(
            binding.sources()[i],
            FieldSource::RowIndex | FieldSource::RowId(_) | FieldSource::Filled { .. }
        );
        if let (true, Some(channel)) = (generated, field.channel) {
            out.push(GeneratedFilter {
                channel,
                subfield: subfield.clone(),
                filter: filter.clone(),
            });
        }
    }
    out
}

/// Page-index selections of the file filters, the row-index filter and the rows deleted by
/// position, intersected; each kind's skipped rows are counted in its own metric. Deleted
/// rows in short runs come back as a mask instead (`super::deletes`, `DeletedRows::apply`).
fn selection(
    context: &SplitContext,
    deleted: Option<&Arc<DeletedRows>>,
    chosen: &Chosen,
    (pushed, post): (&[FilteredColumn<'_>], &[FilteredColumn<'_>]),
    decoder_filters: bool,
) -> Result<(Option<RowSelection>, Option<DeletedMask>)> {
    let metadata = &chosen.bound.opened.metadata;
    let row_groups = &chosen.row_groups;
    let mut pages: Option<RowSelection> = None;
    for column in pushed.iter().chain(post) {
        // A fixed column's page bounds describe the values as stored.
        let fixed = chosen.bound.times.fix(column.root).is_some();
        if column.subfield.path().is_empty() && !fixed {
            let name = metadata.schema().field(column.root).name();
            let s = page_index::page_selection(
                metadata.metadata(),
                metadata.schema(),
                name,
                column.filter,
                row_groups,
            )?;
            pages = intersect(pages, s);
        }
    }
    let mut rows: Option<RowSelection> = None;
    for (subfield, filter) in &context.filters.filters {
        let Some((i, _)) = context.spec.field(subfield.root()) else {
            continue;
        };
        let is_index = matches!(chosen.bound.binding.sources()[i], FieldSource::RowIndex);
        if is_index && subfield.path().is_empty() {
            let s = row_index::row_index_selection(metadata.metadata(), row_groups, filter);
            rows = intersect(rows, s);
        }
    }
    let metrics = &context.metrics;
    let skipped = |s: &Option<RowSelection>| s.as_ref().map_or(0, |s| s.skipped_row_count());
    metrics.rows_pruned_page_index.add(skipped(&pages));
    metrics.rows_pruned_row_index.add(skipped(&rows));
    let selection = intersect(pages, rows).filter(|s| s.skipped_row_count() > 0);
    let Some(deleted) = deleted.filter(|d| !d.is_empty()) else {
        return Ok((selection, None));
    };
    let (applied, counts) = deleted.apply(
        metadata.metadata(),
        row_groups,
        decoder_filters,
        selection.as_ref(),
    );
    metrics
        .rows_deleted_position
        .add(counts.position_deletes as usize);
    metrics
        .rows_deleted_vector
        .add(counts.deletion_vector as usize);
    Ok(match applied {
        DeletedApplied::Mask(mask) => (selection, Some(mask)),
        DeletedApplied::Selection(s) => {
            let selection = intersect(selection, Some(s));
            (selection.filter(|s| s.skipped_row_count() > 0), None)
        }
    })
}

fn intersect(a: Option<RowSelection>, b: Option<RowSelection>) -> Option<RowSelection> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.intersection(&b)),
        (a, b) => a.or(b),
    }
}

/// Leaves holding what the channels of `R` read from the file.
fn output_leaves(
    context: &SplitContext,
    binding: &SplitBinding,
    leaves: &FileLeaves,
) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    for (field, source) in context.spec.fields().iter().zip(binding.sources()) {
        if let (
            FieldSource::Filled {
                file: Some((root, _)),
                ..
            },
            Some(_),
        ) = (source, field.channel)
        {
            out.extend(leaves.select(*root, &RequiredSubfields::Whole));
            continue;
        }
        let (FieldSource::File { root, file_type }, Some(_)) = (source, field.channel) else {
            continue;
        };
        let RequiredSubfields::Paths(paths) = &field.required else {
            out.extend(leaves.select(*root, &field.required));
            continue;
        };
        let before = out.len();
        for path in paths {
            let found = leaves.select(*root, &RequiredSubfields::Paths([path.clone()].into()));
            // No leaf for a path the file's type has: the file's layout is one the path
            // walk does not know; read the whole column rather than return NULLs.
            if found.is_empty() && has_path(file_type, path) {
                out.extend(leaves.select(*root, &RequiredSubfields::Whole));
            }
            out.extend(found);
        }
        // Only members this file lacks are read, and they have defaults: one leaf tells in
        // which rows the struct is present (there the members read their defaults).
        if out.len() == before && field.handle.member_defaults.is_some() {
            out.extend(
                leaves
                    .select(*root, &RequiredSubfields::Whole)
                    .into_iter()
                    .take(1),
            );
        }
    }
    out
}

/// Leaves a filter reads: the whole column, or the struct member's leaves.
fn filter_leaves(leaves: &FileLeaves, c: &FilteredColumn<'_>) -> Vec<usize> {
    let whole = || leaves.select(c.root, &RequiredSubfields::Whole);
    if c.subfield.path().is_empty() {
        return whole();
    }
    match leaves.struct_member(c.root, c.subfield.path()) {
        found if found.is_empty() => whole(),
        found => found,
    }
}

/// The predicate of `c` on decoded values (fixed by `times` when it runs in the decoder:
/// the assembler fixes the decoded batches before later filters see them).
fn predicate(
    context: &SplitContext,
    c: &FilteredColumn<'_>,
    times: Option<&FileTimes>,
) -> ColumnPredicate {
    let fix = times.and_then(|t| t.fix(c.root)).cloned();
    unfixed_predicate(context, c).with_times(fix)
}

fn unfixed_predicate(context: &SplitContext, c: &FilteredColumn<'_>) -> ColumnPredicate {
    let spec = &context.spec;
    match spec.field(c.subfield.root()) {
        Some((_, field)) => ColumnPredicate::new(field, c.subfield, c.filter, spec.adaptive()),
        // Filters are keyed by the spec's own fields; a filter on another column tests the
        // file column in its table type, without defaults.
        None => ColumnPredicate {
            column: c.subfield.to_string(),
            subfield: c.subfield.clone(),
            filter: c.filter.clone(),
            adaptive: Arc::clone(spec.adaptive()),
            table_type: c.table_type.clone(),
            defaults: None,
            times: None,
        },
    }
}

/// The reader metadata: the footer's, or over `reannotated` (maps read as lists) when
/// given; with the columns whose decoded type is not the file schema's
/// ([`decoded_type`]: string views, narrow decimals) and the row-number virtual column when
/// `row_numbers`.
fn reader_metadata(
    footer: &ArrowReaderMetadata,
    reannotated: Option<Arc<ParquetMetaData>>,
    context: &SplitContext,
    binding: &SplitBinding,
    row_numbers: bool,
) -> Result<ArrowReaderMetadata> {
    let plain = match &reannotated {
        Some(m) => ArrowReaderMetadata::try_new(Arc::clone(m), ArrowReaderOptions::new())?,
        None => footer.clone(),
    };
    let file_schema = plain.schema();
    let stored = plain
        .metadata()
        .file_metadata()
        .schema_descr()
        .root_schema();
    let mut fields: Vec<FieldRef> = file_schema.fields().iter().cloned().collect();
    let mut changed = false;
    let hinted = super::leaves::has_arrow_hint(plain.metadata());
    for (field, source) in context.spec.fields().iter().zip(binding.sources()) {
        let FieldSource::File { root, .. } = source else {
            continue;
        };
        // The Arrow schema's roots are the Parquet schema's, in order.
        let (Some(decoded), Some(stored)) = (fields.get(*root), stored.get_fields().get(*root))
        else {
            continue;
        };
        let table_type = &field.handle.data_type;
        if let Some(data_type) = decoded_type(decoded.data_type(), stored, table_type, hinted) {
            fields[*root] = Arc::new(decoded.as_ref().clone().with_data_type(data_type));
            changed = true;
        }
    }
    if !changed && !row_numbers {
        return Ok(plain);
    }
    let mut options = ArrowReaderOptions::new();
    if changed {
        let hint = Schema::new_with_metadata(fields, file_schema.metadata().clone());
        options = options.with_schema(Arc::new(hint));
    }
    if row_numbers {
        let column =
            Field::new(ROW_NUMBER_COLUMN, DataType::Int64, false).with_extension_type(RowNumber);
        options = options.with_virtual_columns(vec![Arc::new(column)])?;
    }
    Ok(ArrowReaderMetadata::try_new(
        Arc::clone(plain.metadata()),
        options,
    )?)
}

/// Keep-ratio estimates of the filters on top-level columns from the first chosen row
/// group's min/max.
fn keep_estimates<'a>(
    context: &'a SplitContext,
    chosen: &Chosen,
) -> Result<HashMap<&'a Subfield, f64>> {
    let bound = &chosen.bound;
    let first = &chosen.row_groups[..1];
    let stats = RowGroupStatistics::new(
        &context.spec,
        &bound.binding,
        bound.opened.metadata.metadata(),
        bound.opened.metadata.schema(),
        &bound.leaves,
        first,
    );
    let mut estimates = HashMap::new();
    for (subfield, filter) in &context.filters.filters {
        let Some((i, _)) = context.spec.field(subfield.root()) else {
            continue;
        };
        if !subfield.path().is_empty() {
            continue;
        }
        let Some(arrays) = stats.field_stats(i)? else {
            continue;
        };
        if arrays.mins.is_empty() {
            continue;
        }
        let mut column_stats = arrays.column_stats(0);
        column_stats.min = column_stats
            .min
            .and_then(|v| v.cast_to(filter.data_type()).ok());
        column_stats.max = column_stats
            .max
            .and_then(|v| v.cast_to(filter.data_type()).ok());
        if let Some(ratio) = filter.estimated_keep_ratio(&column_stats) {
            estimates.insert(subfield, ratio);
        }
    }
    Ok(estimates)
}

/// The byte ranges the decoder asks for when it reads `row_groups` (in that order) whole,
/// with the leaves of `mask`.
pub fn chunk_ranges(
    metadata: &ParquetMetaData,
    row_groups: &[usize],
    mask: &ProjectionMask,
) -> Vec<Vec<Range<u64>>> {
    row_groups
        .iter()
        .map(|&rg| {
            metadata
                .row_group(rg)
                .columns()
                .iter()
                .enumerate()
                .filter(|(leaf, _)| mask.leaf_included(*leaf))
                .map(|(_, column)| {
                    let (start, length) = column.byte_range();
                    start..start + length
                })
                .collect()
        })
        .collect()
}
