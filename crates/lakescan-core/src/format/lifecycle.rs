//! One split lifecycle over every file format: [`FormatSplitReader`] owns the states and
//! their order; a format ([`FileFormatReader`]) says how each step reads its files.
//!
//! ```text
//!  Pending ─open─▶ Bound ─Prune─▶ Pruned ─LoadDeletes─▶ Ready ─▶ Reading { current, rest } ─▶ Done
//!           │        │             │
//!           │        │             └─statistics (then, Parquet: bloom filters) reject all ─▶ Done
//!           │        ├─no unit in the byte range ─▶ Done
//!           │        └─(open) a constant a filter rejects ─▶ Done
//!           └─an empty range without opening the file (Avro: one split per file) ─▶ Done
//! ```
//!
//! | step          | the lifecycle (here)                          | the format                               |
//! |---------------|-----------------------------------------------|------------------------------------------|
//! | open          | `Prepared::SkippedByConstant`                 | [`FileFormatReader::open`] (footer, tail or file; `bind`), [`constants_rejected`](FileFormatReader::constants_rejected) |
//! | Prune         | metrics `row_groups_total`, `row_groups_pruned_statistics`; `EmptyRange` / `NothingToRead` | [`units_in_range`](FileFormatReader::units_in_range) (midpoint rule), [`prune`](FileFormatReader::prune) (statistics), [`prune_loading`](FileFormatReader::prune_loading) (Parquet's bloom filters) |
//! | LoadDeletes   | the split's [`DeleteSource`], its stages kept for the driver | —                          |
//! | refresh       | a dynamic filter that moved before decoding: constants and units again (`row_groups_pruned_dynamic_filter`) | the same [`prune`](FileFormatReader::prune) |
//! | Reading       | all units at once, or one at a time while a dynamic filter may still move ([`FileFormatReader::UNIT_AT_A_TIME`]: the rest pruned again before each) | [`read`](FileFormatReader::read) builds the decoder with the filters in force; [`next`](FileFormatReader::next) yields batches of `R` |
//!
//! A unit is what a format can skip whole: a Parquet row group, an ORC stripe, an Avro
//! file (one unit, no statistics). Deletes load after pruning, so a pruned split never
//! loads its delete files; they live in the state, never in the split.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::common::{Result, internal_err};

use crate::deleted_rows::DeletedRows;
use crate::reader::{
    BatchStage, DeleteSource, Deletes, Prepared, ReaderBatch, Refreshed, SplitContext, SplitReader,
};
use crate::split::FileSplit;
use crate::split_filters::SplitFilters;

/// How one file format reads: the steps of the split lifecycle that depend on the format.
#[async_trait]
pub trait FileFormatReader: Send + Sync + 'static {
    /// A file opened (its footer, tail or whole bytes read) and bound to the scan.
    type Bound: Clone + Send + Sync;
    /// The decoding of some units of a bound file.
    type Reading: Send;

    /// Whether units are decoded one at a time while a dynamic filter may still move, the
    /// units not started yet pruned again before each (worth it where a unit's decoder is
    /// cheap to build).
    const UNIT_AT_A_TIME: bool = false;

    /// Whether the split's byte range reads nothing, known without opening the file.
    fn range_is_empty(&self, _split: &FileSplit) -> bool {
        false
    }

    /// `LoadFooter` / `LoadTail` / `LoadFile`, then `bind`: the file's columns, the split's
    /// constants and generated columns.
    async fn open(&self, split: Arc<FileSplit>, context: SplitContext) -> Result<Self::Bound>;

    /// Whether the filters in force reject a constant of the bound file (a missing
    /// column's NULL, a missing member's default).
    fn constants_rejected(&self, bound: &Self::Bound, context: &SplitContext) -> bool;

    /// The units of the split's byte range, ascending (a unit belongs to the split holding
    /// its midpoint).
    fn units_in_range(&self, bound: &Self::Bound, split: &FileSplit) -> Vec<usize>;

    /// Of `units`, those the filters in force may match by the file's statistics (all of
    /// them for a format without statistics).
    fn prune(
        &self,
        bound: &Self::Bound,
        units: &[usize],
        split: &FileSplit,
        context: &SplitContext,
    ) -> Result<Vec<usize>>;

    /// After [`Self::prune`], pruning that reads more of the file (Parquet's bloom
    /// filters); none by default.
    async fn prune_loading(
        &self,
        _bound: &Self::Bound,
        units: Vec<usize>,
        _split: Arc<FileSplit>,
        _context: SplitContext,
    ) -> Result<Vec<usize>> {
        Ok(units)
    }

    /// The decoder of `units` of `bound`, with the filters and adaptive order in force now
    /// and the rows `deleted` by position.
    fn read(
        &self,
        bound: Self::Bound,
        units: Vec<usize>,
        deleted: Option<Arc<DeletedRows>>,
        split: &Arc<FileSplit>,
        context: &SplitContext,
    ) -> Result<Self::Reading>;

    /// The next batch of `R`; `None` when the units are read. Rows the filters dropped
    /// after the last batch come as an empty batch that counts them.
    async fn next(
        &self,
        reading: &mut Self::Reading,
        split: &FileSplit,
        context: &SplitContext,
    ) -> Result<Option<ReaderBatch>>;
}

/// Reads one split of a file of format `F` into batches of the reader schema `R`.
pub struct FormatSplitReader<F: FileFormatReader> {
    format: F,
    split: Arc<FileSplit>,
    context: SplitContext,
    state: State<F>,
    /// The split's deletes, until `LoadDeletes` loads them.
    deletes: Option<Box<dyn DeleteSource>>,
    /// The stages the loaded deletes add, until the driver takes them.
    delete_stages: Vec<BatchStage>,
}

/// Where a split is in its lifecycle (see the module docs).
enum State<F: FileFormatReader> {
    /// Nothing read yet.
    Pending,
    /// Opened and bound: the split's constants pass the filters.
    Bound(F::Bound),
    /// Units chosen by range and statistics.
    Pruned(Chosen<F>),
    /// Deletes loaded: prepared, the decoder not built yet (it is built at the first
    /// `next`, with the filters in force then).
    Ready(Ready<F>),
    /// Decoding `current`; one unit at a time, `rest` holds the units after it.
    Reading {
        current: Box<F::Reading>,
        rest: Option<Ready<F>>,
    },
    /// Read to the end, or nothing to read.
    Done,
}

/// A bound file and the units to read.
struct Chosen<F: FileFormatReader> {
    bound: F::Bound,
    /// Ascending.
    units: Vec<usize>,
}

/// Units to read and the rows of the file its deletes remove.
struct Ready<F: FileFormatReader> {
    chosen: Chosen<F>,
    /// Rows deleted by position (never decoded); `None`: the split has none.
    deleted: Option<Arc<DeletedRows>>,
}

impl<F: FileFormatReader + Default> FormatSplitReader<F> {
    /// A reader of `split`, whose deletes `deletes` gives; nothing is opened before
    /// [`SplitReader::prepare`].
    pub fn new(
        split: Arc<FileSplit>,
        context: SplitContext,
        deletes: Option<Box<dyn DeleteSource>>,
    ) -> Self {
        Self {
            format: F::default(),
            split,
            context,
            state: State::Pending,
            deletes,
            delete_stages: vec![],
        }
    }
}

impl<F: FileFormatReader> FormatSplitReader<F> {
    /// One step of the lifecycle; `Some(outcome)` when preparing is over.
    async fn step(&mut self) -> Result<Option<Prepared>> {
        let state = std::mem::replace(&mut self.state, State::Done);
        let (next, outcome) = match state {
            State::Pending if self.format.range_is_empty(&self.split) => {
                (State::Done, Some(Prepared::EmptyRange))
            }
            State::Pending => {
                let split = Arc::clone(&self.split);
                let bound = self.format.open(split, self.context.clone()).await?;
                match self.format.constants_rejected(&bound, &self.context) {
                    true => (State::Done, Some(Prepared::SkippedByConstant)),
                    false => (State::Bound(bound), None),
                }
            }
            State::Bound(bound) => {
                let (split, context) = (Arc::clone(&self.split), self.context.clone());
                match Self::choose(&self.format, split, context, bound).await? {
                    Ok(chosen) => (State::Pruned(chosen), None),
                    Err(outcome) => (State::Done, Some(outcome)),
                }
            }
            State::Pruned(chosen) => {
                let deleted = self.load_deletes().await?;
                let ready = Ready { chosen, deleted };
                (State::Ready(ready), Some(Prepared::Read))
            }
            State::Ready(_) | State::Reading { .. } | State::Done => {
                return internal_err!("split of '{}' prepared twice", self.split.display_path());
            }
        };
        self.state = next;
        Ok(outcome)
    }

    /// `Prune`: the units of the byte range that statistics (and the format's loading
    /// steps) may match.
    /// (Owned split and context: the future stays `Send`.)
    async fn choose(
        format: &F,
        split: Arc<FileSplit>,
        context: SplitContext,
        bound: F::Bound,
    ) -> Result<std::result::Result<Chosen<F>, Prepared>> {
        let metrics = &context.metrics;
        let in_range = format.units_in_range(&bound, &split);
        metrics.row_groups_total.add(in_range.len());
        if in_range.is_empty() {
            return Ok(Err(Prepared::EmptyRange));
        }
        let kept = format.prune(&bound, &in_range, &split, &context)?;
        metrics
            .row_groups_pruned_statistics
            .add(in_range.len() - kept.len());
        if kept.is_empty() {
            return Ok(Err(Prepared::NothingToRead));
        }
        let units = format
            .prune_loading(&bound, kept, Arc::clone(&split), context.clone())
            .await?;
        if units.is_empty() {
            return Ok(Err(Prepared::NothingToRead));
        }
        Ok(Ok(Chosen { bound, units }))
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

    /// New filters for units not started yet: the constants tested and the units pruned
    /// again; `None` when nothing is left to read.
    fn refresh_chosen(&self, mut chosen: Chosen<F>) -> Result<Option<Chosen<F>>> {
        if self.format.constants_rejected(&chosen.bound, &self.context) {
            return Ok(None);
        }
        let kept = self
            .format
            .prune(&chosen.bound, &chosen.units, &self.split, &self.context)?;
        self.context
            .metrics
            .row_groups_pruned_dynamic_filter
            .add(chosen.units.len() - kept.len());
        if kept.is_empty() {
            return Ok(None);
        }
        chosen.units = kept;
        Ok(Some(chosen))
    }

    /// The decoder of a prepared split, built with the filters in force now: one unit at a
    /// time while a dynamic filter may still change (for formats that read so).
    fn start_reading(&mut self, ready: Ready<F>) -> Result<State<F>> {
        let may_change = match &self.context.dynamic {
            Some(dynamic) => dynamic.may_change()?,
            None => false,
        };
        if F::UNIT_AT_A_TIME && ready.chosen.units.len() > 1 && may_change {
            return self.next_unit(ready);
        }
        let current = Box::new(self.read(ready)?);
        Ok(State::Reading {
            current,
            rest: None,
        })
    }

    /// The state reading the first unit of `rest`, after pruning them again when a
    /// dynamic filter changed since the split's filters were built; `Done` when none is
    /// left.
    fn next_unit(&mut self, mut rest: Ready<F>) -> Result<State<F>> {
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
        if rest.chosen.units.is_empty() {
            return Ok(State::Done);
        }
        let first = Ready {
            chosen: Chosen {
                bound: rest.chosen.bound.clone(),
                units: vec![rest.chosen.units.remove(0)],
            },
            deleted: rest.deleted.clone(),
        };
        let current = Box::new(self.read(first)?);
        let rest = (!rest.chosen.units.is_empty()).then_some(rest);
        Ok(State::Reading { current, rest })
    }

    fn read(&self, ready: Ready<F>) -> Result<F::Reading> {
        let Ready { chosen, deleted } = ready;
        self.format.read(
            chosen.bound,
            chosen.units,
            deleted,
            &self.split,
            &self.context,
        )
    }
}

#[async_trait]
impl<F: FileFormatReader> SplitReader for FormatSplitReader<F> {
    async fn prepare(&mut self) -> Result<Prepared> {
        loop {
            if let Some(outcome) = self.step().await? {
                return Ok(outcome);
            }
        }
    }

    /// Before the first batch (a takeover, or a filter that arrived after prepare) the new
    /// filters apply to everything: constants, units, decoder. Once decoding, the units not
    /// started yet are pruned again when they come (`next_unit`), and the caller filters
    /// the batches.
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
            let current = match &mut self.state {
                State::Reading { current, .. } => current,
                State::Done => return Ok(None),
                _ => {
                    return internal_err!(
                        "split of '{}' was read before it was prepared",
                        self.split.display_path()
                    );
                }
            };
            if let Some(batch) = self
                .format
                .next(current, &self.split, &self.context)
                .await?
            {
                return Ok(Some(batch));
            }
            self.state = match std::mem::replace(&mut self.state, State::Done) {
                State::Reading {
                    rest: Some(rest), ..
                } => self.next_unit(rest)?,
                _ => State::Done,
            };
        }
    }
}
