//! The Parquet split reader (seed §7, §8).
//!
//! | file              | owns                                                            |
//! |-------------------|-----------------------------------------------------------------|
//! | this file         | [`ParquetSplitReader`]: the split's lifecycle (below)           |
//! | [`open`]          | `LoadFooter`, byte-counting reader, errors naming the file      |
//! | [`footer_cache`]  | footers kept in the session's file metadata cache               |
//! | [`field_ids`]     | file schema renamed to table names by field id (Iceberg)        |
//! | [`leaves`]        | file leaves by logical path; maps read as lists                 |
//! | [`row_groups`]    | byte range → row groups (midpoint rule), statistics pruning     |
//! | [`statistics`]    | row-group statistics in table types (`PruningStatistics`)       |
//! | [`deletes`]       | deleted positions → a row selection or a mask over decoded rows |
//! | [`bloom`]         | bloom-filter pruning of row groups for point filters            |
//! | [`plan`]          | [`plan::ReadPlan`]: masks, filter placement, row selections     |
//! | [`page_index`]    | page-index pruning → `RowSelection`                             |
//! | [`row_index`]     | row-index filters → `RowSelection`                              |
//! | [`row_filter`]    | per-column filters as a parquet `RowFilter`                     |
//! | [`read_ahead`]    | the next row group fetched while one decodes (object stores)    |
//! | [`assemble`]      | decoded file batches → batches of `R`                           |
//! | [`adapt`]         | a decoded column in the table type (pruned members, widening)   |
//!
//! The lifecycle of one split: one [`State`] enum, a typed struct per state; the steps
//! between them are named by what they do, the I/O ones `Load*`:
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
//! * `LoadDeletes` asks the split's [`DeleteSource`] (the table format's) for its deleted
//!   positions and delete stages, only now that rows are left to read: a pruned split never
//!   loads its delete files. They live in the state ([`Ready`]), not in the split;
//! * `prepare` ends in `Ready`. A dynamic filter that changed since (the split was
//!   preloaded, or the filter arrived after prepare) is applied there: constants tested and
//!   row groups pruned again (`refresh_filters`);
//! * at the first `next`, the [`plan::ReadPlan`] builds the decoder with the filters and
//!   adaptive order in force then: output and filter leaves, filters inside the decoder or
//!   after it, page and row-index selections, deleted positions. While a dynamic filter may
//!   still change, `Reading` decodes one row group at a time and keeps the others in `rest`,
//!   pruned again when the filter moves.

pub mod adapt;
pub mod assemble;
pub mod bloom;
pub mod deletes;
pub mod field_ids;
pub mod footer_cache;
pub mod leaves;
pub mod local_file;
pub mod open;
pub mod page_index;
pub mod plan;
pub mod read_ahead;
pub mod row_filter;
pub mod row_groups;
pub mod row_index;
pub mod statistics;

use std::sync::Arc;

use arrow::array::RecordBatch;
use async_trait::async_trait;
use datafusion::common::{DataFusionError, Result, exec_datafusion_err, internal_err};
use futures::{FutureExt, StreamExt};
use parquet::arrow::ParquetRecordBatchStreamBuilder;
use parquet::arrow::arrow_reader::ArrowReaderMetadata;

use crate::binding::{FieldSource, SplitBinding};
use crate::deleted_rows::DeletedRows;
use crate::reader::{
    BatchStage, DeleteSource, Deletes, Prepared, ReaderBatch, Refreshed, SplitContext, SplitReader,
    SplitReaderFactory,
};
use crate::split::FileSplit;
use crate::split_filters::SplitFilters;
use leaves::FileLeaves;
use open::{CountingReader, file_error};
use plan::Reading;
use statistics::RowGroupStatistics;

/// Plain Parquet splits: no deletes, no stages (columns matched by name).
#[derive(Debug, Default)]
pub struct ParquetSplitReaderFactory;

impl ParquetSplitReaderFactory {
    /// Its kind on the wire.
    pub const KIND: &'static str = "parquet";

    /// The factory an [`crate::wire::EncodedFactory`] of [`Self::KIND`] describes (it has no
    /// state).
    pub fn decode(_state: &[u8]) -> Result<Arc<dyn SplitReaderFactory>> {
        Ok(Arc::new(Self))
    }
}

impl SplitReaderFactory for ParquetSplitReaderFactory {
    fn encoded(&self) -> Result<crate::wire::EncodedFactory> {
        Ok(crate::wire::EncodedFactory {
            kind: Self::KIND.into(),
            state: vec![],
        })
    }
}

/// Reads one split of a Parquet file into batches of the reader schema `R`.
pub struct ParquetSplitReader {
    split: Arc<FileSplit>,
    context: SplitContext,
    state: State,
    /// The split's deletes, until `LoadDeletes` loads them.
    deletes: Option<Box<dyn DeleteSource>>,
    /// The stages the loaded deletes add, until the driver takes them.
    delete_stages: Vec<BatchStage>,
}

/// Where a split is in its lifecycle (see the module docs).
enum State {
    /// Nothing read yet.
    Pending,
    /// `LoadFooter` and `bind` done: the split's constants pass the filters.
    Bound(Bound),
    /// `Prune` done: row groups chosen by range, statistics and bloom filters.
    Pruned(Chosen),
    /// `LoadDeletes` done: prepared, the decoder not built yet (it is built at the first
    /// `next`, with the filters and adaptive order in force then).
    Ready(Ready),
    /// Decoding `current`; with dynamic filters that may still change, row groups are
    /// decoded one at a time and `rest` holds those after it, pruned again whenever a
    /// dynamic filter changes.
    Reading {
        /// The decoder of the row groups being read.
        current: Box<Reading>,
        /// Row groups not started yet.
        rest: Option<Ready>,
    },
    /// Read to the end, or nothing to read.
    Done,
}

/// Row groups to read and the rows of the file its deletes remove.
pub struct Ready {
    /// The bound file and its row groups.
    pub chosen: Chosen,
    /// Rows deleted by position (never decoded); `None`: the split has none.
    pub deleted: Option<Arc<DeletedRows>>,
}

impl Ready {
    /// The decoder of these row groups.
    fn read(self, context: &SplitContext, split: &FileSplit) -> Result<Reading> {
        let Ready { chosen, deleted } = self;
        plan::ReadPlan::try_new(context, split, &chosen, deleted.as_ref())?
            .build(chosen, context)
            .map_err(|e| file_error(split.display_path(), e))
    }
}

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
}

/// A bound file and the row groups to read.
pub struct Chosen {
    /// The bound file.
    pub bound: Bound,
    /// Row groups to read, ascending.
    pub row_groups: Vec<usize>,
}

impl ParquetSplitReader {
    /// A reader for `split` whose deletes `deletes` gives; nothing is opened before
    /// [`SplitReader::prepare`].
    pub fn new(
        split: Arc<FileSplit>,
        context: SplitContext,
        deletes: Option<Box<dyn DeleteSource>>,
    ) -> Self {
        Self {
            split,
            context,
            state: State::Pending,
            deletes,
            delete_stages: vec![],
        }
    }

    /// The state reading the first row group of `rest` (dynamic filters only), after
    /// pruning them again when a dynamic filter changed since the split's filters were
    /// built; `Done` when none is left.
    fn next_row_group(&mut self, mut rest: Ready) -> Result<State> {
        let changed = match self.context.dynamic.as_mut() {
            Some(dynamic) => dynamic.changed(&self.context.spec)?,
            None => None,
        };
        if let Some(filters) = changed {
            self.context.filters = filters;
            match self.refresh_chosen(rest.chosen)? {
                Some(chosen) => rest.chosen = chosen,
                None => return Ok(State::Done),
            }
        }
        let row_groups = &mut rest.chosen.row_groups;
        if row_groups.is_empty() {
            return Ok(State::Done);
        }
        let first = Ready {
            chosen: Chosen {
                bound: rest.chosen.bound.clone(),
                row_groups: vec![row_groups.remove(0)],
            },
            deleted: rest.deleted.clone(),
        };
        let current = Box::new(first.read(&self.context, &self.split)?);
        let rest = (!rest.chosen.row_groups.is_empty()).then_some(rest);
        Ok(State::Reading { current, rest })
    }

    /// True when a filter rejects a constant of the bound file: a missing column's NULL,
    /// or a missing struct member's default.
    fn constants_rejected(&self, binding: &SplitBinding, leaves: &FileLeaves) -> bool {
        crate::format::constants_rejected(&self.context, binding, |root, file_type, subfield| {
            plan::member_missing(leaves, root, file_type, subfield)
        })
    }

    /// `bind`: file columns, constants and generated columns of this split; `None` when a
    /// filter rejects a constant (a missing column's NULL, or a field of one).
    fn bind(&self, opened: Opened) -> Result<Option<Bound>> {
        let spec = &self.context.spec;
        let binding = SplitBinding::try_new(
            spec,
            &self.split,
            &self.context.constants,
            opened.metadata.schema(),
        )?;
        let leaves = FileLeaves::new(opened.metadata.metadata().file_metadata().schema_descr());
        if self.constants_rejected(&binding, &leaves) {
            return Ok(None);
        }
        Ok(Some(Bound {
            opened,
            binding,
            leaves,
        }))
    }

    /// `choose`: the row groups of the byte range that statistics may match.
    fn choose(&self, bound: Bound) -> Result<std::result::Result<Chosen, Prepared>> {
        let metadata = Arc::clone(bound.opened.metadata.metadata());
        let in_range = row_groups::row_groups_in_range(&metadata, &self.split);
        self.context.metrics.row_groups_total.add(in_range.len());
        if in_range.is_empty() {
            return Ok(Err(Prepared::EmptyRange));
        }
        let stats = RowGroupStatistics::new(
            &self.context.spec,
            &bound.binding,
            &metadata,
            bound.opened.metadata.schema(),
            &bound.leaves,
            &in_range,
        );
        let kept = self.prune_row_groups(&stats, in_range.clone())?;
        let pruned = in_range.len() - kept.len();
        self.context
            .metrics
            .row_groups_pruned_statistics
            .add(pruned);
        if kept.is_empty() {
            return Ok(Err(Prepared::NothingToRead));
        }
        Ok(Ok(Chosen {
            bound,
            row_groups: kept,
        }))
    }

    fn prune_row_groups(
        &self,
        stats: &RowGroupStatistics<'_>,
        row_groups: Vec<usize>,
    ) -> Result<Vec<usize>> {
        crate::format::prune_units(&self.context, &self.split, stats, &row_groups)
    }

    /// The decoder of a prepared split, built with the filters and adaptive order in force
    /// now. While a dynamic filter may still change, one row group at a time (the rest are
    /// pruned again when it does).
    fn start_reading(&mut self, ready: Ready) -> Result<State> {
        let may_change = match &self.context.dynamic {
            Some(dynamic) => dynamic.may_change()?,
            None => false,
        };
        if ready.chosen.row_groups.len() > 1 && may_change {
            return self.next_row_group(ready);
        }
        let current = Box::new(ready.read(&self.context, &self.split)?);
        Ok(State::Reading {
            current,
            rest: None,
        })
    }

    /// New filters for a prepared split whose decoder is not built yet: its constants are
    /// tested again and its row groups pruned again; `None` when nothing is left to read.
    fn refresh_chosen(&mut self, mut chosen: Chosen) -> Result<Option<Chosen>> {
        if self.constants_rejected(&chosen.bound.binding, &chosen.bound.leaves) {
            return Ok(None);
        }
        let metadata = Arc::clone(chosen.bound.opened.metadata.metadata());
        let stats = RowGroupStatistics::new(
            &self.context.spec,
            &chosen.bound.binding,
            &metadata,
            chosen.bound.opened.metadata.schema(),
            &chosen.bound.leaves,
            &chosen.row_groups,
        );
        let kept = self.prune_row_groups(&stats, chosen.row_groups.clone())?;
        self.context
            .metrics
            .row_groups_pruned_dynamic_filter
            .add(chosen.row_groups.len() - kept.len());
        if kept.is_empty() {
            return Ok(None);
        }
        chosen.row_groups = kept;
        Ok(Some(chosen))
    }

    /// One step of the lifecycle; `Some(outcome)` when preparing is over.
    async fn step(&mut self) -> Result<Option<Prepared>> {
        let state = std::mem::replace(&mut self.state, State::Done);
        let (next, outcome) = match state {
            State::Pending => {
                let opened = open::load_footer(self.split.clone(), self.context.clone()).await?;
                match self.bind(opened)? {
                    Some(bound) => (State::Bound(bound), None),
                    None => (State::Done, Some(Prepared::SkippedByConstant)),
                }
            }
            State::Bound(bound) => match self.choose(bound)? {
                Ok(chosen) => {
                    let path = self.split.display_path().to_string();
                    let chosen = load_bloom_filters(path, self.context.clone(), chosen).await?;
                    if chosen.row_groups.is_empty() {
                        (State::Done, Some(Prepared::NothingToRead))
                    } else {
                        (State::Pruned(chosen), None)
                    }
                }
                Err(outcome) => (State::Done, Some(outcome)),
            },
            State::Pruned(chosen) => {
                let deleted = self.load_deletes().await?;
                (
                    State::Ready(Ready { chosen, deleted }),
                    Some(Prepared::Read),
                )
            }
            State::Ready(_) | State::Reading { .. } | State::Done => {
                return internal_err!("split of '{}' prepared twice", self.split.display_path());
            }
        };
        self.state = next;
        Ok(outcome)
    }

    /// `LoadDeletes`: the split's deleted positions; its delete stages wait for the driver.
    async fn load_deletes(&mut self) -> Result<Option<Arc<DeletedRows>>> {
        let Some(source) = self.deletes.take() else {
            return Ok(None);
        };
        let Deletes { positions, stages } = source.load(&self.context).await?;
        self.delete_stages = stages;
        Ok(positions)
    }
}

/// `LoadBloomFilters`: drops the row groups whose bloom filters prove that no value of
/// a point filter (`x = v`, `x IN (…)` on a top-level column) is present.
async fn load_bloom_filters(
    file_path: String,
    context: SplitContext,
    mut chosen: Chosen,
) -> Result<Chosen> {
    let spec = &context.spec;
    let bound = &chosen.bound;
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
        let leaf = bound
            .leaves
            .select(*root, &crate::required::RequiredSubfields::Whole);
        if let (Some(points), [leaf]) = (bloom::probe_points(filter), leaf.as_slice()) {
            probes.push((*leaf, file_type.clone(), points));
        }
    }
    if probes.is_empty() {
        return Ok(chosen);
    }
    let metadata = bound.opened.metadata.clone();
    let descr = metadata.metadata().file_metadata().schema_descr_ptr();
    let mut builder =
        ParquetRecordBatchStreamBuilder::new_with_metadata(bound.opened.reader.clone(), metadata);
    let mut kept = vec![];
    for &rg in &chosen.row_groups {
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
    let pruned = chosen.row_groups.len() - kept.len();
    context.metrics.row_groups_pruned_bloom_filter.add(pruned);
    chosen.row_groups = kept;
    Ok(chosen)
}

#[async_trait]
impl SplitReader for ParquetSplitReader {
    async fn prepare(&mut self) -> Result<Prepared> {
        loop {
            if let Some(outcome) = self.step().await? {
                return Ok(outcome);
            }
        }
    }

    /// Before the first batch (a takeover, or a filter that arrived after prepare) the new
    /// filters apply to everything: constants, row groups, decoder. Once decoding, the row
    /// groups not started yet are pruned again when they come (`next_row_group`), and the
    /// caller filters the batches.
    fn refresh_filters(
        &mut self,
        filters: Arc<SplitFilters>,
        generation: u64,
    ) -> Result<Refreshed> {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Ready(Ready { chosen, deleted }) => {
                self.context.filters = filters;
                if let Some(dynamic) = self.context.dynamic.as_mut() {
                    dynamic.generation = generation;
                }
                Ok(match self.refresh_chosen(chosen)? {
                    Some(chosen) => {
                        self.state = State::Ready(Ready { chosen, deleted });
                        Refreshed::Applied
                    }
                    None => Refreshed::NothingToRead,
                })
            }
            State::Done => Ok(Refreshed::Applied),
            other => {
                self.state = other;
                Ok(Refreshed::NotApplied)
            }
        }
    }

    fn take_delete_stages(&mut self) -> Vec<BatchStage> {
        std::mem::take(&mut self.delete_stages)
    }

    async fn next(&mut self) -> Result<Option<ReaderBatch>> {
        loop {
            if matches!(self.state, State::Ready(_))
                && let State::Ready(ready) = std::mem::replace(&mut self.state, State::Done)
            {
                self.state = self.start_reading(ready)?;
            }
            let reading = match &mut self.state {
                State::Reading { current, .. } => current,
                State::Done => return Ok(None),
                _ => {
                    return internal_err!(
                        "split of '{}' was read before it was prepared",
                        self.split.display_path()
                    );
                }
            };
            // The parquet crate panics on some corrupt pages (a dictionary's bit width past its
            // type, definition levels past their buffer): the file's error, not the process's.
            let polled = std::panic::AssertUnwindSafe(reading.stream.next())
                .catch_unwind()
                .await
                .map_err(|panic| decoder_panic(self.split.display_path(), panic))?;
            match polled {
                None => {
                    // Rows the filters dropped after the last batch still count as scanned.
                    let rows_scanned = reading.take_rows_scanned(0);
                    reading.check_row_count(self.split.display_path())?;
                    self.state = match std::mem::replace(&mut self.state, State::Done) {
                        State::Reading {
                            rest: Some(rest), ..
                        } => self.next_row_group(rest)?,
                        _ => State::Done,
                    };
                    if rows_scanned == 0 {
                        continue;
                    }
                    let schema = Arc::clone(self.context.spec.reader_schema());
                    return Ok(Some(ReaderBatch {
                        batch: RecordBatch::new_empty(schema),
                        rows_scanned,
                        rows_deleted: 0,
                    }));
                }
                Some(Err(e)) => return Err(file_error(self.split.display_path(), e)),
                Some(Ok(file_batch)) => {
                    let rows_scanned = reading.take_rows_scanned(file_batch.num_rows());
                    let batch = reading.assembler.assemble(file_batch)?;
                    return Ok(Some(ReaderBatch {
                        batch,
                        rows_scanned,
                        rows_deleted: reading.assembler.take_rows_deleted(),
                    }));
                }
            }
        }
    }
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
