//! [`LakeScanExec`]: the leaf `ExecutionPlan` of a lakescan scan.
//!
//! | file             | owns                                                            |
//! |------------------|-----------------------------------------------------------------|
//! | this file        | the plan node: properties, statistics, filter and projection pushdown, `execute` |
//! | `scheduling`   | `assign_splits`, the split queue (work stealing, the global `LIMIT`) |
//! | `partition`    | one output partition: its data source and its preloads          |
//!
//! Each output partition reads its own list of splits ([`assign_splits`]: a static list,
//! what a plan serialized to several executors carries); within one process a partition
//! that finished its list steals from the others'. Each drives its own [`FileDataSource`]
//! and prepares the next `lakescan.preload_splits` splits on their own tasks while the
//! current one streams (preload). Filters pushed by parents through DataFusion's physical
//! filter-pushdown API join the per-split filters: static ones are evaluated exactly (the
//! parent `FilterExec` is removed), dynamic ones (joins, TopK) are snapshotted when a
//! split starts and again whenever they change (see [`crate::source`]).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::common::config::ConfigOptions;
use datafusion::common::stats::Precision;
use datafusion::common::{Result, Statistics};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_expr::projection::{ProjectionExpr, update_expr};
use datafusion::physical_expr_common::physical_expr::{is_dynamic_physical_expr, is_volatile};
use datafusion::physical_plan::coop::make_cooperative;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType, SchedulingType};
use datafusion::physical_plan::filter_pushdown::{
    ChildPushdownResult, FilterPushdownPhase, FilterPushdownPropagation, PushedDown,
};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PhysicalExpr, PlanProperties,
};
use futures::stream;

use crate::config::LakeScanOptions;
use crate::handle::{Assignments, TableHandle};
use crate::metrics::LakeScanMetrics;
use crate::reader::{ReadOptions, TableAdapter};
use crate::scan_spec::ScanSpec;
use crate::scan_statistics::ScanStatistics;
use crate::source::{FileDataSource, LifecycleHook};
use crate::split::FileSplit;

mod partition;

pub mod adapters;
mod scheduling;
mod wire;

pub use adapters::{AdapterDecoder, AdapterDecoders};
use partition::{PartitionState, Preloads};
use scheduling::{SplitLists, SplitQueue, lists_of};
pub use scheduling::{SplitScheduling, assign_splits};

/// Counts from planning (listing) shown with the scan's metrics.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct PlanningStats {
    /// Partitions (directories) considered while listing.
    pub partitions_total: usize,
    /// Of those, pruned by partition filters without listing their files.
    pub partitions_pruned: usize,
    /// Data files of bucketed tables skipped because no row of their bucket can match.
    pub files_pruned_bucket: usize,
    /// Counters of other table formats (Iceberg manifests and files), by metric name.
    pub extra: Vec<(Cow<'static, str>, usize)>,
}

impl PlanningStats {
    /// Adds counters of another table format, by metric name.
    pub fn add_extra(&mut self, counts: impl IntoIterator<Item = (&'static str, usize)>) {
        self.extra
            .extend(counts.into_iter().map(|(name, n)| (Cow::Borrowed(name), n)));
    }
}

/// What a table format's provider planned for one scan. [`PlannedScan::into_exec`] is the
/// one way the lakescan providers (Hive, Iceberg, Iceberg changelog) build their plan node:
/// a provider plans splits, their store, the adapter with its per-split data, stage
/// columns and statistics, and nothing else.
#[derive(Debug)]
pub struct PlannedScan {
    /// The scan contract: the table's columns with the scan's filters and stage columns.
    pub table: TableHandle,
    /// What each output column is, over the table schema.
    pub assignments: Assignments,
    /// The splits to read.
    pub splits: Vec<FileSplit>,
    /// The object store of the splits (a split elsewhere names its own).
    pub store: ObjectStoreUrl,
    /// The table format's deletes and stages, with its per-split data.
    pub adapter: Arc<dyn TableAdapter>,
    /// Counts from planning, shown with the scan's metrics.
    pub planning: PlanningStats,
    /// What the scan will produce, for the optimizer; `None`: unknown.
    pub statistics: Option<ScanStatistics>,
}

impl PlannedScan {
    /// The plan node reading these splits over the session's target partitions, at most
    /// `limit` rows.
    pub fn into_exec(
        self,
        state: &dyn Session,
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let exec = LakeScanExec::try_new(
            self.table,
            self.assignments,
            self.splits,
            self.store,
            self.adapter,
            state.config().target_partitions(),
        )?
        .with_limit(limit)
        .with_planning_stats(self.planning)
        .with_statistics(self.statistics);
        Ok(Arc::new(exec))
    }
}

/// Reads a table's splits with lakescan's selective reader.
#[derive(Debug, Clone)]
pub struct LakeScanExec {
    table_name: String,
    /// The scan contract (columns, pushed filters, residual), over the table schema.
    table: Arc<TableHandle>,
    /// What each output column is, over the table schema.
    assignments: Assignments,
    spec: Arc<ScanSpec>,
    /// Each partition's splits (see [`assign_splits`]).
    lists: SplitLists,
    /// Whether a partition whose list is done takes splits from the others' (one process).
    scheduling: SplitScheduling,
    store_url: ObjectStoreUrl,
    adapter: Arc<dyn TableAdapter>,
    /// Filters pushed by parents, re-expressed over the table schema.
    pushed_filters: Vec<Arc<dyn PhysicalExpr>>,
    limit: Option<usize>,
    queue: Arc<SplitQueue>,
    hook: Option<LifecycleHook>,
    metrics: ExecutionPlanMetricsSet,
    planning: PlanningStats,
    /// What the planner knows of the rows to come (from the footers), for the optimizer.
    statistics: Option<Arc<ScanStatistics>>,
    properties: Arc<PlanProperties>,
}

impl LakeScanExec {
    /// A scan of `table` with outputs `assignments`, reading `splits` over
    /// `target_partitions` partitions (at most one per split).
    pub fn try_new(
        table: TableHandle,
        assignments: Assignments,
        splits: Vec<FileSplit>,
        store_url: ObjectStoreUrl,
        adapter: Arc<dyn TableAdapter>,
        target_partitions: usize,
    ) -> Result<Self> {
        let assignments = assignments.resolve(&table)?;
        let spec = Arc::new(ScanSpec::try_new(&table, &assignments, &[])?);
        let partitions = target_partitions.min(splits.len()).max(1);
        let splits = splits.into_iter().map(Arc::new).collect();
        let lists = lists_of(assign_splits(splits, partitions));
        Ok(Self {
            table_name: table.table_name().to_string(),
            table: Arc::new(table),
            assignments,
            properties: Self::properties_of(&spec, partitions),
            spec,
            queue: Arc::new(SplitQueue::new(
                Arc::clone(&lists),
                SplitScheduling::WorkStealing,
                None,
            )),
            lists,
            scheduling: SplitScheduling::WorkStealing,
            store_url,
            adapter,
            pushed_filters: vec![],
            limit: None,
            hook: None,
            metrics: ExecutionPlanMetricsSet::new(),
            planning: PlanningStats::default(),
            statistics: None,
        })
    }

    /// Each output partition's splits: a static list that a plan serialized to several
    /// executors carries (each executor runs some partitions and reads only their lists).
    pub fn partition_splits(&self) -> &[Arc<[Arc<FileSplit>]>] {
        &self.lists
    }

    /// The same scan over the given per-partition lists, one output partition each, without
    /// stealing: the form of a plan rebuilt where each process runs some of the partitions.
    pub fn with_partition_splits(mut self, lists: Vec<Vec<Arc<FileSplit>>>) -> Self {
        let lists = if lists.is_empty() {
            vec![vec![]]
        } else {
            lists
        };
        self.properties = Self::properties_of(&self.spec, lists.len());
        self.lists = lists_of(lists);
        self.scheduling = SplitScheduling::StaticLists;
        // The planner's statistics were of the splits it planned, not of these.
        self.statistics = None;
        self.with_fresh_state()
    }

    /// How partitions take their splits: [`SplitScheduling::WorkStealing`] by default,
    /// only sound when every partition runs in this process.
    pub fn with_scheduling(mut self, scheduling: SplitScheduling) -> Self {
        self.scheduling = scheduling;
        self.with_fresh_state()
    }

    /// Calls `hook` at each point of every split's lifecycle (tests: a dynamic filter
    /// updated at a chosen moment).
    pub fn with_lifecycle_hook(mut self, hook: LifecycleHook) -> Self {
        self.hook = Some(hook);
        self
    }

    fn properties_of(spec: &ScanSpec, partitions: usize) -> Arc<PlanProperties> {
        Arc::new(
            PlanProperties::new(
                EquivalenceProperties::new(Arc::clone(spec.plan_schema())),
                Partitioning::UnknownPartitioning(partitions),
                EmissionType::Incremental,
                Boundedness::Bounded,
            )
            .with_scheduling_type(SchedulingType::Cooperative),
        )
    }

    /// The same scan with other outputs or pushed filters: a new spec (keeping what the
    /// scan learned) and new plan properties.
    fn rebuilt(
        &self,
        assignments: Assignments,
        pushed_filters: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Self> {
        let spec = ScanSpec::try_new(&self.table, &assignments, &pushed_filters)?;
        let spec = Arc::new(spec.with_adaptive_of(&self.spec));
        let mut rebuilt = self.clone();
        rebuilt.properties = Self::properties_of(&spec, self.partitions());
        rebuilt.spec = spec;
        rebuilt.assignments = assignments;
        rebuilt.pushed_filters = pushed_filters;
        Ok(rebuilt)
    }

    /// Stops after `limit` rows in total (over all partitions).
    pub fn with_limit(mut self, limit: Option<usize>) -> Self {
        self.limit = limit;
        self.queue = Arc::new(SplitQueue::new(
            Arc::clone(&self.lists),
            self.scheduling,
            limit,
        ));
        self
    }

    /// What the planner knows of the rows to come, reported to the optimizer.
    pub fn with_statistics(mut self, statistics: Option<ScanStatistics>) -> Self {
        self.statistics = statistics.map(Arc::new);
        self
    }

    /// Records listing counts to show with the metrics.
    pub fn with_planning_stats(mut self, planning: PlanningStats) -> Self {
        self.planning = planning;
        self
    }

    /// The scan's requirements.
    pub fn spec(&self) -> &Arc<ScanSpec> {
        &self.spec
    }

    /// The splits this scan reads, in partition order.
    pub fn splits(&self) -> impl Iterator<Item = &FileSplit> {
        self.lists
            .iter()
            .flat_map(|list| list.iter().map(|s| s.as_ref()))
    }

    /// How many splits this scan reads.
    pub fn split_count(&self) -> usize {
        self.lists.iter().map(|list| list.len()).sum()
    }

    fn partitions(&self) -> usize {
        self.properties.partitioning.partition_count()
    }

    fn with_fresh_state(&self) -> Self {
        let mut fresh = self.clone();
        fresh.queue = Arc::new(SplitQueue::new(
            Arc::clone(&self.lists),
            self.scheduling,
            self.limit,
        ));
        fresh.metrics = ExecutionPlanMetricsSet::new();
        fresh
    }
}

impl DisplayAs for LakeScanExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A plain column by its name; an absorbed expression (or a renamed column) as
        // `expr as name`, the expression over the table schema.
        let columns: Vec<String> = self
            .assignments
            .exprs()
            .iter()
            .map(|p| {
                match p
                    .expr
                    .downcast_ref::<datafusion::physical_expr::expressions::Column>()
                {
                    Some(c) if c.name() == p.alias => p.alias.clone(),
                    _ => format!("{} as {}", p.expr, p.alias),
                }
            })
            .collect();
        if let DisplayFormatType::TreeRender = t {
            return write!(
                f,
                "table={}\nsplits={}",
                self.table_name,
                self.split_count()
            );
        }
        write!(
            f,
            "LakeScanExec: table={}, splits={}, projection=[{}]",
            self.table_name,
            self.split_count(),
            columns.join(", ")
        )?;
        let filters: Vec<String> = self
            .spec
            .fields()
            .iter()
            .flat_map(|fs| fs.subfield_filters())
            .map(|(subfield, flt)| format!("{subfield}: {flt}"))
            .collect();
        if !filters.is_empty() {
            write!(f, ", filters=[{}]", filters.join(", "))?;
        }
        if let Some(residual) = self.spec.residual() {
            write!(f, ", residual={residual}")?;
        }
        for pushed in &self.pushed_filters {
            write!(f, ", pushed={pushed}")?;
        }
        if let Some(limit) = self.limit {
            write!(f, ", limit={limit}")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for LakeScanExec {
    fn name(&self) -> &str {
        "LakeScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn with_new_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn reset_state(self: Arc<Self>) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(self.with_fresh_state()))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let store = context.runtime_env().object_store(&self.store_url)?;
        let mut metrics = LakeScanMetrics::new(&self.metrics, partition);
        if self.store_url.as_str() != "file:///" {
            metrics = metrics.with_requests(&self.metrics, partition);
        }
        if partition == 0 {
            let planning = |name: Cow<'static, str>, v: usize| {
                MetricBuilder::new(&self.metrics)
                    .counter(name, partition)
                    .add(v)
            };
            planning("partitions_total".into(), self.planning.partitions_total);
            planning("partitions_pruned".into(), self.planning.partitions_pruned);
            planning(
                "files_pruned_bucket".into(),
                self.planning.files_pruned_bucket,
            );
            for (name, v) in &self.planning.extra {
                planning(name.clone(), *v);
            }
        }
        let session = context.session_config();
        let settings = LakeScanOptions::from_config(session.options());
        let options = ReadOptions {
            batch_size: session.batch_size(),
            pushdown_max_keep_ratio: settings.pushdown_max_keep_ratio,
        };
        let source = FileDataSource::new(
            Arc::clone(&self.spec),
            Arc::clone(&self.adapter),
            store,
            self.pushed_filters.clone(),
            metrics.clone(),
            options,
        )
        .with_memory_pool(Arc::clone(context.memory_pool()))
        .with_metadata_cache(Some(
            context
                .runtime_env()
                .cache_manager
                .get_file_metadata_cache(),
        ))
        .with_object_stores(Arc::clone(&context.runtime_env().object_store_registry))
        .with_lifecycle_hook(self.hook.clone());
        let state = PartitionState {
            partition,
            source,
            queue: self.queue.start_partition()?,
            // A scan under a limit reads as few splits as it can: none ahead of time.
            preloads: Preloads::new(if self.limit.is_some() {
                0
            } else {
                settings.preload_splits
            }),
            metrics,
        };
        let stream = stream::try_unfold(state, |mut state| async move {
            let batch = state.next_batch().await?;
            Ok(batch.map(|b| (b, state)))
        });
        let schema: SchemaRef = Arc::clone(self.spec.plan_schema());
        Ok(make_cooperative(Box::pin(RecordBatchStreamAdapter::new(
            schema, stream,
        ))))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    /// The planner's statistics of the outputs ([`ScanStatistics`], from the footers) when
    /// it collected them; else only sizes: the bytes of the splits, scaled by DataFusion's
    /// default filter selectivity when the scan filters. Per partition: unknown.
    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        let mut stats = Statistics::new_unknown(self.spec.plan_schema());
        if let (None, Some(known)) = (partition, &self.statistics) {
            let outputs =
                known.of_outputs(&self.assignments, self.spec.plan_schema(), self.limit)?;
            return Ok(Arc::new(outputs));
        }
        if partition.is_none() {
            let bytes: u64 = self.splits().map(|s| s.length()).sum();
            let filtered = self.spec.residual().is_some()
                || self
                    .spec
                    .fields()
                    .iter()
                    .any(|f| !f.subfield_filters().is_empty());
            let bytes = if filtered { bytes / 5 } else { bytes };
            stats.total_byte_size = Precision::Inexact(bytes as usize);
        }
        Ok(Arc::new(stats))
    }

    fn with_fetch(&self, limit: Option<usize>) -> Option<Arc<dyn ExecutionPlan>> {
        Some(Arc::new(self.clone().with_limit(limit)))
    }

    fn fetch(&self) -> Option<usize> {
        self.limit
    }

    /// Absorbs the projection above the scan: plain columns, and extractions
    /// such as `get_field(s, 'a')`, `map_keys(m)` or `cardinality(a)` become outputs of the
    /// scan, so it decodes only the leaves they read.
    fn try_swapping_with_projection(
        &self,
        projection: &ProjectionExec,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let mut exprs = Vec::with_capacity(projection.expr().len());
        for p in projection.expr() {
            if is_volatile(&p.expr) {
                return Ok(None);
            }
            let Some(expr) = update_expr(&p.expr, self.assignments.exprs(), true)? else {
                return Ok(None);
            };
            exprs.push(ProjectionExpr::new(expr, p.alias.clone()));
        }
        let assignments = Assignments::from_exprs(exprs);
        let scan = self.rebuilt(assignments, self.pushed_filters.clone())?;
        // The scan replaces the projection: its output must be the projection's.
        let same_types = scan
            .schema()
            .fields()
            .iter()
            .zip(projection.schema().fields())
            .all(|(a, b)| a.name() == b.name() && a.data_type() == b.data_type());
        if scan.schema().fields().len() != projection.schema().fields().len() || !same_types {
            return Ok(None);
        }
        Ok(Some(Arc::new(scan)))
    }

    fn handle_child_pushdown_result(
        &self,
        _phase: FilterPushdownPhase,
        child_pushdown_result: ChildPushdownResult,
        _config: &ConfigOptions,
    ) -> Result<FilterPushdownPropagation<Arc<dyn ExecutionPlan>>> {
        let filters = child_pushdown_result
            .parent_filters
            .into_iter()
            .map(|parent| parent.filter)
            .collect();
        let (updated, answers) = self.with_pushed_filters(filters)?;
        let result = FilterPushdownPropagation::with_parent_pushdown_result(answers);
        Ok(match updated {
            Some(updated) => result.with_updated_node(Arc::new(updated)),
            None => result,
        })
    }
}

impl LakeScanExec {
    /// The scan with each pushed filter that `replace` gives a replacement for replaced by
    /// it (a filter's columns stay the same); `None` when it replaces none.
    pub fn with_guarded_filters(
        &self,
        mut replace: impl FnMut(&Arc<dyn PhysicalExpr>) -> Result<Option<Arc<dyn PhysicalExpr>>>,
    ) -> Result<Option<Self>> {
        let mut replaced = false;
        let mut pushed = Vec::with_capacity(self.pushed_filters.len());
        for filter in &self.pushed_filters {
            match replace(filter)? {
                Some(new) => {
                    replaced = true;
                    pushed.push(new);
                }
                None => pushed.push(Arc::clone(filter)),
            }
        }
        match replaced {
            true => self.rebuilt(self.assignments.clone(), pushed).map(Some),
            false => Ok(None),
        }
    }

    /// The scan with `filters` (over its output schema) pushed into it, as a parent's filter
    /// pushdown does, and the answer for each; `None` when none could be pushed. Static
    /// filters are evaluated exactly; dynamic ones (`DynamicFilterPhysicalExpr`) are read
    /// again whenever they change, to prune and filter early.
    pub fn with_pushed_filters(
        &self,
        filters: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<(Option<Self>, Vec<PushedDown>)> {
        let mut pushed = self.pushed_filters.clone();
        let mut answers = vec![];
        for filter in filters {
            if is_volatile(&filter) {
                answers.push(PushedDown::No);
                continue;
            }
            // Over the table schema: an output may be an absorbed expression.
            let Some(unprojected) = update_expr(&filter, self.assignments.exprs(), true)? else {
                answers.push(PushedDown::No);
                continue;
            };
            // Dynamic filters only prune and filter early, and their producer does not rely
            // on our answer (it keeps the `Arc`, shared with the rewritten expression).
            let exact = !is_dynamic_physical_expr(&filter);
            pushed.push(unprojected);
            answers.push(if exact {
                PushedDown::Yes
            } else {
                PushedDown::No
            });
        }
        if pushed.len() == self.pushed_filters.len() {
            return Ok((None, answers));
        }
        let mut updated = self.rebuilt(self.assignments.clone(), pushed)?;
        // The planner's row count no longer holds once the scan filters more.
        updated.statistics = self.statistics.as_ref().map(|s| Arc::new(s.to_inexact()));
        Ok((Some(updated), answers))
    }
}
