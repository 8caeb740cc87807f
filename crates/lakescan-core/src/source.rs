//! [`FileDataSource`], the driver: reading splits one after another, each prepared on the
//! partition's task or ahead of time on a preload task. The
//! reader of a split is its file format's ([`crate::parquet::ParquetSplitReader`], `crate::orc::OrcSplitReader`); the
//! table format adds its deletes and stages through [`crate::reader::TableAdapter`].
//!
//! ```text
//!  start ──constants rejected──▶ (next split)
//!    │ PendingSplit: reader + adapter stages + the split's DeleteSource (not loaded)
//!    ▼
//!  PendingSplit::prepare (SplitReader::prepare: footer, binding, pruning, then the
//!    │                    deletes of a split left with rows to read; here or on a
//!    │                    preload task while the previous split streams)
//!    ▼ PreparedSplit
//!  install ─▶ the deletes' stages join the adapter's; takeover: the dynamic filters in
//!    │        force now (SplitReader::refresh_filters)
//!    ▼
//!  next ─▶ SplitReader::next ─▶ BatchStages: the adapter's in its order (bucket
//!          (R, rows_scanned)      conversion), then the deletes' (equality deletes)
//!                              ─▶ residual ─▶ project to P
//! ```
//! An all-filtered batch is not the end of a split: only `SplitReader::next` returning
//! `None` is. Per-split filters (`SplitFilters`) are built when a split starts from the
//! static filters plus a snapshot of the dynamic filters, so a dynamic filter that arrived
//! before a split is prepared prunes that split. One that changes later is seen when the
//! split is installed (after its prepare, possibly on a preload task, where Velox's
//! takeover keeps the donor's stale filters for constants) and before every batch: when it
//! rejects the split's constants the split stops (Velox keeps reading it); otherwise the
//! reader applies it to what it has not decoded yet (constants, row groups, decoder
//! filters) when it can, and the batches are filtered when it cannot.
//! Adaptive filter order lives in the shared [`crate::adaptive::AdaptiveState`], keyed by
//! subfield, so a split prepared ahead of time reads with the order learned up to its first
//! batch, nested filters included (Velox's takeover moves only top-level feedback).

use std::fmt::Debug;
use std::sync::Arc;

use arrow::array::{RecordBatch, RecordBatchOptions};
use arrow::compute::filter_record_batch;
use datafusion::common::{Result, internal_err};
use datafusion::execution::cache::cache_manager::FileMetadataCache;
use datafusion::execution::memory_pool::{MemoryPool, UnboundedMemoryPool};
use datafusion::execution::object_store::ObjectStoreRegistry;
use datafusion::physical_expr::utils::conjunction_opt;
use datafusion::physical_expr_common::physical_expr::is_dynamic_physical_expr;
use datafusion::physical_plan::PhysicalExpr;
use datafusion::physical_plan::metrics::Count;
use object_store::ObjectStore;

use crate::binding::SplitConstants;
use crate::filter::eval::keep_mask;
use crate::metrics::LakeScanMetrics;
use crate::reader::{
    BatchStage, Prepared, ReadOptions, Refreshed, SplitContext, SplitReader, TableAdapter,
};
use crate::scan_spec::{OutputSource, ScanSpec};
use crate::split::FileSplit;
use crate::split_filters::{DynamicFilters, SplitFilters, generation_of};

/// A point in a split's lifecycle reported to a [`LifecycleHook`]. Splits are numbered
/// from 0 in the order a partition takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitEvent {
    /// Split `split` finished preparing (`preloaded`: on a preload task, before its takeover).
    Prepared {
        /// The split's number.
        split: usize,
        /// Prepared ahead of time.
        preloaded: bool,
    },
    /// Batch `batch` of split `split` was read, before it is returned.
    Batch {
        /// The split's number.
        split: usize,
        /// The batch's number within the split.
        batch: usize,
    },
}

/// Called at each [`SplitEvent`]: tests update a dynamic filter at a chosen point of the split
/// lifecycle (before or after prepare, mid-split, while a split is preloaded).
#[derive(Clone)]
pub struct LifecycleHook(Arc<dyn Fn(SplitEvent) + Send + Sync>);

impl LifecycleHook {
    /// A hook running `f`.
    pub fn new(f: impl Fn(SplitEvent) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    fn call(&self, event: SplitEvent) {
        (self.0)(event)
    }
}

impl Debug for LifecycleHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LifecycleHook")
    }
}

/// Drives split readers one split at a time and turns their batches into plan output.
#[derive(Debug)]
pub struct FileDataSource {
    spec: Arc<ScanSpec>,
    adapter: Arc<dyn TableAdapter>,
    store: Arc<dyn ObjectStore>,
    /// Filters pushed into the scan by its parents, over the table schema.
    pushed_filters: Arc<[Arc<dyn PhysicalExpr>]>,
    /// The static filters alone (no dynamic value): tells which splits a dynamic filter
    /// pruned. `None` while no filter is dynamic.
    static_filters: Option<Arc<SplitFilters>>,
    /// The filters the last split started with and the dynamic filters' generation they
    /// were built at: the next split shares them while no dynamic filter moved (one
    /// extraction and one pruning predicate per set of filters, not per split).
    started_filters: Option<(u64, Arc<SplitFilters>)>,
    metrics: LakeScanMetrics,
    options: ReadOptions,
    memory_pool: Arc<dyn MemoryPool>,
    metadata_cache: Option<Arc<dyn FileMetadataCache>>,
    object_stores: Option<Arc<dyn ObjectStoreRegistry>>,
    hook: Option<LifecycleHook>,
    /// Splits started so far (the next split's number).
    started: usize,
    current: Option<CurrentSplit>,
}

struct CurrentSplit {
    number: usize,
    batches: usize,
    /// Rows the reader advanced over and rows it returned: the reader filters removed the
    /// difference, counted when the split ends.
    reader_rows: ReaderRows,
    reader: Box<dyn SplitReader>,
    stages: Vec<BatchStage>,
    residual: Option<Arc<dyn PhysicalExpr>>,
    /// The split's constants, tested again when a dynamic filter changes.
    constants: Arc<SplitConstants>,
    /// The filters pushed into the scan and the generation the split's filters were built
    /// with.
    pushed: DynamicFilters,
    /// The dynamic filters' value over `R`, when it changed after the reader started
    /// decoding (the reader cannot apply it to rows it is decoding).
    dynamic: Option<Arc<dyn PhysicalExpr>>,
}

/// What a split's reader scanned and returned. A reader that filters while decoding reports
/// the rows it scanned when it scans them, ahead of the batches that hold their survivors
/// (a batch may carry the scan of several), so a per-batch difference would count rows
/// that are returned later as removed. The difference is taken once, when the split ends
/// (it is dropped: at its end, or stopped by a dynamic filter or a `LIMIT`, when the rows
/// its decoder scanned but did not return count as removed).
#[derive(Debug)]
struct ReaderRows {
    scanned: usize,
    returned: usize,
    removed: Count,
}

impl ReaderRows {
    fn new(removed: Count) -> Self {
        Self {
            scanned: 0,
            returned: 0,
            removed,
        }
    }

    /// Adds a batch of `returned` rows that came with `scanned` scanned rows.
    fn add(&mut self, scanned: usize, returned: usize) {
        self.scanned += scanned;
        self.returned += returned;
    }
}

impl Drop for ReaderRows {
    fn drop(&mut self) {
        self.removed.add(self.scanned.saturating_sub(self.returned));
    }
}

impl Debug for CurrentSplit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CurrentSplit").finish_non_exhaustive()
    }
}

/// A split whose constants passed the filters, with its reader not prepared yet. Owns all
/// it needs, so it can be prepared on another task ([`PendingSplit::prepare`]).
pub struct PendingSplit {
    number: usize,
    reader: Box<dyn SplitReader>,
    stages: Vec<BatchStage>,
    filters: Arc<SplitFilters>,
    constants: Arc<SplitConstants>,
    pushed: DynamicFilters,
    metrics: LakeScanMetrics,
    hook: Option<LifecycleHook>,
}

impl Debug for PendingSplit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingSplit")
            .field("number", &self.number)
            .finish_non_exhaustive()
    }
}

/// Where a split is prepared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrepareOn {
    /// On the partition's task, when the split is needed.
    PartitionTask,
    /// On a preload task of its own, while an earlier split streams.
    PreloadTask,
}

impl PendingSplit {
    /// Prepares the reader (footer, binding, pruning, then the deletes of a split left with
    /// rows to read) on the task `on` says.
    pub async fn prepare(mut self, on: PrepareOn) -> Result<PreparedSplit> {
        let outcome = {
            let _timer = self.metrics.time_opening.timer();
            self.reader.prepare().await?
        };
        if let Some(hook) = &self.hook {
            hook.call(SplitEvent::Prepared {
                split: self.number,
                preloaded: on == PrepareOn::PreloadTask,
            });
        }
        Ok(PreparedSplit {
            pending: self,
            outcome,
        })
    }
}

/// A prepared split waiting for [`FileDataSource::install`].
#[derive(Debug)]
pub struct PreparedSplit {
    pending: PendingSplit,
    outcome: Prepared,
}

impl FileDataSource {
    /// A data source reading with `adapter`.
    pub fn new(
        spec: Arc<ScanSpec>,
        adapter: Arc<dyn TableAdapter>,
        store: Arc<dyn ObjectStore>,
        pushed_filters: Vec<Arc<dyn PhysicalExpr>>,
        metrics: LakeScanMetrics,
        options: ReadOptions,
    ) -> Self {
        Self {
            spec,
            adapter,
            store,
            pushed_filters: pushed_filters.into(),
            static_filters: None,
            started_filters: None,
            metrics,
            options,
            memory_pool: Arc::new(UnboundedMemoryPool::default()),
            metadata_cache: None,
            object_stores: None,
            hook: None,
            started: 0,
            current: None,
        }
    }

    /// Reserves readers' memory in `pool` (the task's pool) instead of an unbounded one.
    pub fn with_memory_pool(mut self, pool: Arc<dyn MemoryPool>) -> Self {
        self.memory_pool = pool;
        self
    }

    /// Keeps footers in `cache` (the session's file metadata cache) and reads them from it.
    pub fn with_metadata_cache(mut self, cache: Option<Arc<dyn FileMetadataCache>>) -> Self {
        self.metadata_cache = cache;
        self
    }

    /// Resolves the stores of splits in another object store than the scan's (and of
    /// files their readers need there) in `registry`, the session's.
    pub fn with_object_stores(mut self, registry: Arc<dyn ObjectStoreRegistry>) -> Self {
        self.object_stores = Some(registry);
        self
    }

    /// Calls `hook` at each point of the split lifecycle.
    pub fn with_lifecycle_hook(mut self, hook: Option<LifecycleHook>) -> Self {
        self.hook = hook;
        self
    }

    /// The combined generation of the dynamic filters pushed into the scan (0: none).
    fn dynamic_generation(&self) -> u64 {
        generation_of(&self.pushed_filters)
    }

    /// True when the static filters alone reject `constants`; false when only a dynamic
    /// filter does (counted as `splits_pruned_dynamic_filter`).
    fn rejected_statically(&mut self, constants: &SplitConstants) -> Result<bool> {
        let static_filters = match &self.static_filters {
            Some(f) => Arc::clone(f),
            None => {
                let pushed: Vec<_> = self
                    .pushed_filters
                    .iter()
                    .filter(|f| !is_dynamic_physical_expr(f))
                    .cloned()
                    .collect();
                let f = Arc::new(SplitFilters::try_new(&self.spec, &pushed)?);
                self.static_filters = Some(Arc::clone(&f));
                f
            }
        };
        Ok(static_filters.always_false() || !constants.pass(&self.spec, &static_filters)?)
    }

    /// Counts a split a filter rejected before any row was read: by a dynamic filter or not.
    fn count_rejected(&mut self, constants: &SplitConstants) -> Result<()> {
        if self.dynamic_generation() != 0 && !self.rejected_statically(constants)? {
            self.metrics.splits_pruned_dynamic_filter.add(1);
        } else {
            self.metrics.splits_skipped.add(1);
        }
        Ok(())
    }

    /// Starts `split` with the filters in force now: `None` (counted) when they reject its
    /// constants (partition values, `$path`, …) before any I/O, else its reader, not
    /// prepared yet.
    pub fn start(&mut self, split: Arc<FileSplit>) -> Result<Option<PendingSplit>> {
        self.metrics.splits_total.add(1);
        let number = self.started;
        self.started += 1;
        // The generation before the snapshot: a change in between is seen at install.
        let pushed = DynamicFilters {
            pushed: Arc::clone(&self.pushed_filters),
            generation: self.dynamic_generation(),
        };
        let filters = match &self.started_filters {
            Some((generation, filters)) if *generation == pushed.generation => Arc::clone(filters),
            _ => {
                let filters = Arc::new(SplitFilters::try_new(&self.spec, &self.pushed_filters)?);
                self.started_filters = Some((pushed.generation, Arc::clone(&filters)));
                filters
            }
        };
        let constants = Arc::new(SplitConstants::try_new(&self.spec, &split)?);
        if filters.always_false() || !constants.pass(&self.spec, &filters)? {
            self.count_rejected(&constants)?;
            return Ok(None);
        }
        let store = match split.store() {
            None => Arc::clone(&self.store),
            Some(url) => match &self.object_stores {
                Some(registry) => registry.get_store(url.as_ref())?,
                None => {
                    return internal_err!(
                        "split of '{}' is in object store {}, but the scan was given no store \
                         registry",
                        split.display_path(),
                        url.as_str()
                    );
                }
            },
        };
        let context = SplitContext {
            store,
            spec: Arc::clone(&self.spec),
            filters: Arc::clone(&filters),
            constants: Arc::clone(&constants),
            metrics: self.metrics.clone(),
            options: self.options,
            memory_pool: Arc::clone(&self.memory_pool),
            dynamic: (pushed.generation != 0).then(|| pushed.clone()),
            metadata_cache: self.metadata_cache.clone(),
            object_stores: self.object_stores.clone(),
        };
        let stages = self.adapter.stages(&split, &context)?;
        let deletes = self.adapter.deletes(&split)?;
        let reader = split.format().seam().split_reader(split, context, deletes);
        Ok(Some(PendingSplit {
            number,
            reader,
            stages,
            filters,
            constants,
            pushed,
            metrics: self.metrics.clone(),
            hook: self.hook.clone(),
        }))
    }

    /// Makes a prepared split the current one (its takeover when it was preloaded): the
    /// dynamic filters in force now apply before its first row. False (counted) when it
    /// has nothing to read.
    pub fn install(&mut self, prepared: PreparedSplit) -> Result<bool> {
        let PreparedSplit {
            mut pending,
            outcome,
        } = prepared;
        match outcome {
            Prepared::Read => {
                let stages = with_delete_stages(pending.stages, &mut pending.reader);
                self.current = Some(CurrentSplit {
                    number: pending.number,
                    batches: 0,
                    reader_rows: ReaderRows::new(self.metrics.rows_removed_reader_filters.clone()),
                    reader: pending.reader,
                    stages,
                    residual: pending.filters.residual.clone(),
                    constants: pending.constants,
                    pushed: pending.pushed,
                    dynamic: None,
                });
                self.refresh_dynamic_filters()
            }
            Prepared::SkippedByConstant => {
                self.count_rejected(&pending.constants)?;
                Ok(false)
            }
            Prepared::NothingToRead => {
                self.metrics.splits_pruned_statistics.add(1);
                Ok(false)
            }
            Prepared::EmptyRange => Ok(false),
        }
    }

    /// Prepares `split` here and makes it the current one; returns false (and counts why)
    /// when it has nothing to read (the tests' way in; a partition's stream goes through
    /// `start`, `prepare` and `install` so that preparing can run ahead).
    #[cfg(test)]
    pub async fn add_split(&mut self, split: FileSplit) -> Result<bool> {
        match self.start(Arc::new(split))? {
            Some(pending) => {
                let prepared = pending.prepare(PrepareOn::PartitionTask).await?;
                self.install(prepared)
            }
            None => Ok(false),
        }
    }

    /// When a dynamic filter changed since the current split's filters were built: stops
    /// the split if the new filters reject its constants, else has the reader apply them to
    /// what it has not decoded yet, or filters the later batches when it cannot. False: the
    /// split is over.
    fn refresh_dynamic_filters(&mut self) -> Result<bool> {
        let Some(current) = self.current.as_mut() else {
            return Ok(false);
        };
        let Some(filters) = current.pushed.changed(&self.spec)? else {
            return Ok(true);
        };
        let generation = current.pushed.generation;
        let rejected = filters.always_false() || !current.constants.pass(&self.spec, &filters)?;
        let refreshed = if rejected {
            Refreshed::NothingToRead
        } else {
            current
                .reader
                .refresh_filters(Arc::clone(&filters), generation)?
        };
        match refreshed {
            Refreshed::Applied => {
                current.residual = filters.residual.clone();
                current.dynamic = None;
                Ok(true)
            }
            Refreshed::NotApplied => {
                current.dynamic = conjunction_opt(filters.dynamic.clone());
                Ok(true)
            }
            Refreshed::NothingToRead => {
                if current.batches == 0 {
                    self.metrics.splits_pruned_dynamic_filter.add(1);
                } else {
                    self.metrics.splits_stopped_dynamic_filter.add(1);
                }
                self.current = None;
                Ok(false)
            }
        }
    }

    /// The next batch of the plan schema `P` from the current split; `None` at its end.
    /// A batch may have zero rows when every row was filtered.
    pub async fn next(&mut self) -> Result<Option<RecordBatch>> {
        if !self.refresh_dynamic_filters()? {
            return Ok(None);
        }
        let Some(current) = self.current.as_mut() else {
            return Ok(None);
        };
        let read = self.metrics.timed_read(current.reader.next()).await?;
        let Some(read) = read else {
            self.current = None;
            return Ok(None);
        };
        if let Some(hook) = &self.hook {
            hook.call(SplitEvent::Batch {
                split: current.number,
                batch: current.batches,
            });
        }
        current.batches += 1;
        let _timer = self.metrics.time_reading.timer();
        let _compute = self.metrics.baseline.elapsed_compute().timer();
        self.metrics.rows_scanned.add(read.rows_scanned);
        let mut batch = read.batch;
        current.reader_rows.add(
            read.rows_scanned.saturating_sub(read.rows_deleted),
            batch.num_rows(),
        );
        for stage in &mut current.stages {
            let before = batch.num_rows();
            batch = stage.transform.apply(batch)?;
            stage.removed.add(before.saturating_sub(batch.num_rows()));
        }
        let reader_rows = batch.num_rows();
        let batch = match &current.residual {
            Some(residual) => apply_residual(residual, batch)?,
            None => batch,
        };
        self.metrics
            .rows_removed_residual
            .add(reader_rows - batch.num_rows());
        let batch = match &current.dynamic {
            Some(dynamic) => {
                let before = batch.num_rows();
                let batch = apply_residual(dynamic, batch)?;
                self.metrics
                    .rows_removed_dynamic_filter
                    .add(before - batch.num_rows());
                batch
            }
            None => batch,
        };
        project_to_plan(&batch, &self.spec).map(Some)
    }
}

/// The adapter's stages of a prepared split, then those its deletes add.
fn with_delete_stages(
    mut stages: Vec<BatchStage>,
    reader: &mut Box<dyn SplitReader>,
) -> Vec<BatchStage> {
    stages.extend(reader.take_delete_stages());
    stages
}

fn apply_residual(residual: &Arc<dyn PhysicalExpr>, batch: RecordBatch) -> Result<RecordBatch> {
    let mask = keep_mask(residual, &batch)?;
    Ok(filter_record_batch(&batch, &mask)?)
}

/// The output `P` of a batch of `R`: channels taken as they are, absorbed expressions
/// evaluated. Aux columns never leak, also with zero output columns.
fn project_to_plan(batch: &RecordBatch, spec: &ScanSpec) -> Result<RecordBatch> {
    let rows = batch.num_rows();
    let columns = spec
        .outputs()
        .iter()
        .map(|output| match output {
            OutputSource::Channel(c) => Ok(Arc::clone(batch.column(*c))),
            OutputSource::Expr(e) => e.evaluate(batch)?.into_array(rows),
        })
        .collect::<Result<Vec<_>>>()?;
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    Ok(RecordBatch::try_new_with_options(
        Arc::clone(spec.plan_schema()),
        columns,
        &options,
    )?)
}

#[cfg(test)]
mod tests;
