//! [`FileDataSource`] and the [`SplitReader`] trait: reading splits one after another
//! (seed §7, §8), prepared on the partition's task or ahead of time on a preload task
//! (seed §14).
//!
//! ```text
//!  start ──constants rejected──▶ (next split)
//!    │ PendingSplit
//!    ▼
//!  PendingSplit::prepare (SplitReader::prepare: footer, page index, delete files; here or
//!    │                    on a preload task while the previous split streams)
//!    ▼ PreparedSplit
//!  install ─▶ takeover: the dynamic filters in force now (SplitReader::refresh_filters)
//!    │
//!    ▼
//!  next ─▶ SplitReader::next ─▶ BatchStages in StageSlot order (bucket conversion →
//!          (R, rows_scanned)      lineage fill → post-read filters / equality deletes)
//!                              ─▶ residual ─▶ project to P
//! ```
//! An all-filtered batch is not the end of a split: only `SplitReader::next` returning
//! `None` is. Per-split filters ([`SplitFilters`]) are built when a split starts from the
//! static filters plus a snapshot of the dynamic filters, so a dynamic filter that arrived
//! before a split is prepared prunes that split. One that changes later is seen when the
//! split is installed (after its prepare, possibly on a preload task: seed §14.4, where
//! Velox's takeover keeps the donor's stale filters for constants) and before every batch:
//! when it rejects the split's constants the split stops (seed §12.3: Velox keeps reading
//! it); otherwise the reader applies it to what it has not decoded yet (constants, row
//! groups, decoder filters) when it can, and the batches are filtered when it cannot.
//! Adaptive filter order lives in the shared [`crate::adaptive::AdaptiveState`], keyed by
//! subfield, so a split prepared ahead of time reads with the order learned up to its first
//! batch, nested filters included (seed §13.3 moves only top-level feedback).

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;

use arrow::array::{RecordBatch, RecordBatchOptions};
use arrow::compute::filter_record_batch;
use async_trait::async_trait;
use datafusion::common::{Result, internal_err};
use datafusion::execution::memory_pool::{MemoryPool, UnboundedMemoryPool};
use datafusion::execution::object_store::{ObjectStoreRegistry, ObjectStoreUrl};
use datafusion::physical_expr::utils::conjunction_opt;
use datafusion::physical_expr_common::physical_expr::{
    is_dynamic_physical_expr, snapshot_generation, snapshot_physical_expr,
};
use datafusion::physical_plan::PhysicalExpr;
use datafusion::physical_plan::metrics::Count;
use object_store::ObjectStore;

use crate::binding::SplitConstants;
use crate::extract::Extraction;
use crate::filter::Filter;
use crate::filter::eval::keep_mask;
use crate::metrics::LakeScanMetrics;
use crate::parquet::footer_cache::FooterCache;
use crate::scan_spec::{OutputSource, ScanSpec};
use crate::split::FileSplit;
use crate::subfield::Subfield;

/// A batch in the reader schema `R` and the rows the reader advanced over to produce it.
#[derive(Debug)]
pub struct ReaderBatch {
    /// Columns of `R`.
    pub batch: RecordBatch,
    /// Rows the reader advanced over (before reader filters).
    pub rows_scanned: usize,
    /// Of those, rows it dropped because they are deleted (counted by the delete metrics,
    /// not as removed by reader filters).
    pub rows_deleted: usize,
}

/// Outcome of preparing a split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prepared {
    /// Rows will be read.
    Read,
    /// A filter rejected a constant of the split (partition value, missing column).
    SkippedByConstant,
    /// Statistics pruned every row group.
    NothingToRead,
    /// The byte range holds no row group (e.g. only the footer).
    EmptyRange,
}

/// Reads one split: open, bind, prune, then yield batches of `R`.
#[async_trait]
pub trait SplitReader: Send {
    /// Opens the file and decides what to read.
    async fn prepare(&mut self) -> Result<Prepared>;
    /// The next batch, or `None` at the end of the split.
    async fn next(&mut self) -> Result<Option<ReaderBatch>>;

    /// The filters in force changed since `prepare` (a dynamic filter moved; `filters` and
    /// `generation` are its new value). The default leaves filtering to the caller.
    fn refresh_filters(
        &mut self,
        _filters: Arc<SplitFilters>,
        _generation: u64,
    ) -> Result<Refreshed> {
        Ok(Refreshed::NotApplied)
    }
}

/// What a reader did with filters that changed after `prepare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refreshed {
    /// Every row the reader yields from now on passes them (it had decoded nothing yet).
    Applied,
    /// Rows already being decoded do not: the caller filters the batches.
    NotApplied,
    /// They reject the split's constants or every row group left: nothing more to read.
    NothingToRead,
}

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

/// Everything a split reader needs besides the split.
#[derive(Debug, Clone)]
pub struct SplitContext {
    /// Where the file lives.
    pub store: Arc<dyn ObjectStore>,
    /// The scan's requirements.
    pub spec: Arc<ScanSpec>,
    /// The filters in force for this split.
    pub filters: Arc<SplitFilters>,
    /// The split's partition values and info columns, typed.
    pub constants: Arc<SplitConstants>,
    /// Metrics of the partition.
    pub metrics: LakeScanMetrics,
    /// How to read.
    pub options: ReadOptions,
    /// Where readers reserve the memory they hold across batches (equality-delete keys).
    pub memory_pool: Arc<dyn MemoryPool>,
    /// The filters pushed into the scan (over the table schema), when some are dynamic:
    /// readers re-snapshot them between row groups.
    pub dynamic: Option<DynamicFilters>,
    /// Where footers are kept between splits and queries (the session's metadata cache);
    /// `None`: every split reads its footer.
    pub footer_cache: Option<FooterCache>,
    /// The session's object stores, for files of another store than the scan's (a split's
    /// own store, delete files elsewhere); `None`: the scan's store only.
    pub object_stores: Option<Arc<dyn ObjectStoreRegistry>>,
}

impl SplitContext {
    /// The object store at `url` from the session's registry.
    pub fn object_store(&self, url: &ObjectStoreUrl) -> Result<Arc<dyn ObjectStore>> {
        match &self.object_stores {
            Some(registry) => registry.get_store(url.as_ref()),
            None => internal_err!(
                "a split needs object store {} but its scan was given no store registry",
                url.as_str()
            ),
        }
    }
}

/// The filters pushed into a scan, some of them dynamic, and the generation of the
/// snapshot a split's [`SplitFilters`] were built from.
#[derive(Debug, Clone)]
pub struct DynamicFilters {
    /// Every filter pushed into the scan.
    pub pushed: Arc<[Arc<dyn PhysicalExpr>]>,
    /// Their combined generation when the split's filters were built.
    pub generation: u64,
}

impl DynamicFilters {
    /// The filters' combined generation now.
    pub fn current_generation(&self) -> u64 {
        generation_of(&self.pushed)
    }

    /// Whether a filter may still change: some dynamic filter is not marked complete (a
    /// hash join's is complete once its build side is read; a TopK's never is).
    pub fn may_change(&self) -> Result<bool> {
        use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
        use datafusion::physical_expr::expressions::DynamicFilterPhysicalExpr;
        let mut open = false;
        for filter in self.pushed.iter() {
            filter.apply(|e| {
                if let Some(d) = e.downcast_ref::<DynamicFilterPhysicalExpr>()
                    && !d.inner().is_complete
                {
                    open = true;
                    return Ok(TreeNodeRecursion::Stop);
                }
                Ok(TreeNodeRecursion::Continue)
            })?;
        }
        Ok(open)
    }
}

/// The combined generation of `filters` (0 when none is dynamic).
fn generation_of(filters: &[Arc<dyn PhysicalExpr>]) -> u64 {
    filters
        .iter()
        .fold(0u64, |g, f| g.wrapping_add(snapshot_generation(f)))
}

/// Settings of one execution that shape reading (not results).
#[derive(Debug, Clone, Copy)]
pub struct ReadOptions {
    /// Target rows per batch.
    pub batch_size: usize,
    /// See `LakeScanOptions::pushdown_max_keep_ratio`.
    pub pushdown_max_keep_ratio: f64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        let defaults = crate::config::LakeScanOptions::default();
        Self {
            batch_size: 8192,
            pushdown_max_keep_ratio: defaults.pushdown_max_keep_ratio,
        }
    }
}

/// Creates the reader for a split; table formats plug in here.
pub trait SplitReaderFactory: Debug + Send + Sync {
    /// A reader for `split`.
    fn create(&self, split: FileSplit, context: SplitContext) -> Result<Box<dyn SplitReader>>;

    /// Per-batch stages this format inserts between the reader and the residual for
    /// `split` (bucket conversion, lineage fill, equality deletes). None by default.
    fn stages(&self, _split: &FileSplit, _spec: &ScanSpec) -> Result<Vec<BatchStage>> {
        Ok(vec![])
    }
}

/// Where a [`BatchStage`] runs; stages run in this order, after the reader's own filters and
/// before the residual (DESIGN.md, "Reading one split").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum StageSlot {
    /// Hive bucket conversion: keep rows of the split's table bucket.
    BucketConversion,
    /// Iceberg lineage: fill `_row_id` / `_last_updated_sequence_number`.
    LineageFill,
    /// Filters on filled values.
    PostReadFilter,
    /// Iceberg equality deletes: drop rows whose key a delete file lists.
    EqualityDeletes,
}

/// A transformation of reader batches (schema `R` in and out; it may drop rows).
pub trait BatchTransform: Send {
    /// Applies the stage to one batch.
    fn apply(&mut self, batch: RecordBatch) -> Result<RecordBatch>;
}

/// A [`BatchTransform`] in its slot.
pub struct BatchStage {
    /// When it runs.
    pub slot: StageSlot,
    /// What it does.
    pub transform: Box<dyn BatchTransform>,
}

impl Debug for BatchStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchStage")
            .field("slot", &self.slot)
            .finish_non_exhaustive()
    }
}

/// The filters in force for one split: static filters and residual of the scan, merged with
/// the current value of the dynamic filters.
#[derive(Debug, Clone, Default)]
pub struct SplitFilters {
    /// Filters by subfield (table column or struct field).
    pub filters: BTreeMap<Subfield, Filter>,
    /// Residual over `R`.
    pub residual: Option<Arc<dyn PhysicalExpr>>,
    /// The dynamic filters' value when these filters were built, over `R`.
    pub dynamic: Vec<Arc<dyn PhysicalExpr>>,
    /// The conjuncts of `residual` that come from dynamic filters (joins' hash-table
    /// lookups, …): also evaluated inside the decoder when they read one column.
    pub dynamic_residual: Vec<Arc<dyn PhysicalExpr>>,
}

impl SplitFilters {
    /// Static filters of `spec` plus the current value of the filters pushed into the scan
    /// (`pushed`, over the table schema; dynamic ones are snapshotted now).
    pub fn try_new(spec: &ScanSpec, pushed: &[Arc<dyn PhysicalExpr>]) -> Result<Self> {
        let mut filters: BTreeMap<Subfield, Filter> = spec
            .fields()
            .iter()
            .flat_map(|f| f.subfield_filters())
            .collect();
        let mut residual: Vec<Arc<dyn PhysicalExpr>> =
            spec.residual().cloned().into_iter().collect();
        let mut snapshots = Vec::with_capacity(pushed.len());
        let mut dynamic = vec![];
        for filter in pushed {
            let snapshot = spec.to_reader(&snapshot_physical_expr(Arc::clone(filter))?)?;
            if is_dynamic_physical_expr(filter) {
                dynamic.push(Arc::clone(&snapshot));
            }
            snapshots.push(snapshot);
        }
        let extracted = Extraction::from_conjuncts(&snapshots, spec.reader_schema());
        for (name, filter) in extracted.filters {
            let merged = match filters.get(&name) {
                Some(existing) => existing.and(&filter),
                None => Some(filter),
            };
            // A dynamic filter compared in another type than the query's filter on the same
            // column cannot be merged; it only ever drops rows the join/TopK drops anyway,
            // so it is left out and the query's filter stays.
            if let Some(m) = merged {
                filters.insert(name, m);
            }
        }
        residual.extend(extracted.residual);
        let dynamic_residual = Extraction::from_conjuncts(&dynamic, spec.reader_schema()).residual;
        Ok(Self {
            filters,
            residual: conjunction_opt(residual),
            dynamic,
            dynamic_residual,
        })
    }

    /// True when some filter rejects every row.
    pub fn always_false(&self) -> bool {
        self.filters.values().any(Filter::is_always_false)
    }
}

/// Drives split readers one split at a time and turns their batches into plan output.
#[derive(Debug)]
pub struct FileDataSource {
    spec: Arc<ScanSpec>,
    factory: Arc<dyn SplitReaderFactory>,
    store: Arc<dyn ObjectStore>,
    /// Filters pushed into the scan by its parents, over the table schema.
    pushed_filters: Arc<[Arc<dyn PhysicalExpr>]>,
    /// The static filters alone (no dynamic value): tells which splits a dynamic filter
    /// pruned. `None` while no filter is dynamic.
    static_filters: Option<Arc<SplitFilters>>,
    metrics: LakeScanMetrics,
    options: ReadOptions,
    memory_pool: Arc<dyn MemoryPool>,
    footer_cache: Option<FooterCache>,
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
    /// The dynamic filters' generation the split's filters were built with.
    generation: u64,
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
    generation: u64,
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

impl PendingSplit {
    /// Prepares the reader (footer, page index, delete files): on the partition's task, or
    /// on a preload task while an earlier split streams (`preloaded`).
    pub async fn prepare(mut self, preloaded: bool) -> Result<PreparedSplit> {
        let outcome = {
            let _timer = self.metrics.time_opening.timer();
            self.reader.prepare().await?
        };
        if let Some(hook) = &self.hook {
            hook.call(SplitEvent::Prepared {
                split: self.number,
                preloaded,
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
    /// A data source reading with `factory`.
    pub fn new(
        spec: Arc<ScanSpec>,
        factory: Arc<dyn SplitReaderFactory>,
        store: Arc<dyn ObjectStore>,
        pushed_filters: Vec<Arc<dyn PhysicalExpr>>,
        metrics: LakeScanMetrics,
        options: ReadOptions,
    ) -> Self {
        Self {
            spec,
            factory,
            store,
            pushed_filters: pushed_filters.into(),
            static_filters: None,
            metrics,
            options,
            memory_pool: Arc::new(UnboundedMemoryPool::default()),
            footer_cache: None,
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
    pub fn with_footer_cache(mut self, cache: Option<FooterCache>) -> Self {
        self.footer_cache = cache;
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
    pub fn start(&mut self, split: FileSplit) -> Result<Option<PendingSplit>> {
        self.metrics.splits_total.add(1);
        let number = self.started;
        self.started += 1;
        // The generation before the snapshot: a change in between is seen at install.
        let generation = self.dynamic_generation();
        let filters = Arc::new(SplitFilters::try_new(&self.spec, &self.pushed_filters)?);
        let constants = Arc::new(SplitConstants::try_new(&self.spec, &split)?);
        if filters.always_false() || !constants.pass(&self.spec, &filters)? {
            self.count_rejected(&constants)?;
            return Ok(None);
        }
        let store = match &split.store {
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
            dynamic: (generation != 0).then(|| DynamicFilters {
                pushed: Arc::clone(&self.pushed_filters),
                generation,
            }),
            footer_cache: self.footer_cache.clone(),
            object_stores: self.object_stores.clone(),
        };
        let mut stages = self.factory.stages(&split, &self.spec)?;
        stages.sort_by_key(|s| s.slot);
        let reader = self.factory.create(split, context)?;
        Ok(Some(PendingSplit {
            number,
            reader,
            stages,
            filters,
            constants,
            generation,
            metrics: self.metrics.clone(),
            hook: self.hook.clone(),
        }))
    }

    /// Makes a prepared split the current one (its takeover when it was preloaded): the
    /// dynamic filters in force now apply before its first row. False (counted) when it
    /// has nothing to read.
    pub fn install(&mut self, prepared: PreparedSplit) -> Result<bool> {
        let PreparedSplit { pending, outcome } = prepared;
        match outcome {
            Prepared::Read => {
                self.current = Some(CurrentSplit {
                    number: pending.number,
                    batches: 0,
                    reader_rows: ReaderRows::new(self.metrics.rows_removed_reader_filters.clone()),
                    reader: pending.reader,
                    stages: pending.stages,
                    residual: pending.filters.residual.clone(),
                    constants: pending.constants,
                    generation: pending.generation,
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
    /// when it has nothing to read.
    pub async fn add_split(&mut self, split: FileSplit) -> Result<bool> {
        match self.start(split)? {
            Some(pending) => {
                let prepared = pending.prepare(false).await?;
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
        let generation = self.dynamic_generation();
        let Some(current) = self.current.as_mut() else {
            return Ok(false);
        };
        if generation == current.generation {
            return Ok(true);
        }
        current.generation = generation;
        let filters = Arc::new(SplitFilters::try_new(&self.spec, &self.pushed_filters)?);
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
            let removed = before.saturating_sub(batch.num_rows());
            match stage.slot {
                StageSlot::BucketConversion => {
                    self.metrics.rows_removed_bucket_conversion.add(removed);
                }
                StageSlot::EqualityDeletes => self.metrics.rows_deleted_equality.add(removed),
                StageSlot::LineageFill | StageSlot::PostReadFilter => {}
            }
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
