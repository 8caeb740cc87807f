//! [`LakeScanExec`]: the leaf `ExecutionPlan` of a lakescan scan (seed §12).
//!
//! Output partitions pull splits from one shared queue, each driving its own
//! [`FileDataSource`]. Filters pushed by parents through DataFusion's physical
//! filter-pushdown API join the per-split filters: static ones are evaluated exactly (the
//! parent `FilterExec` is removed), dynamic ones (joins, TopK) are snapshotted each time a
//! split is prepared and used for pruning and row filtering.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::task::Poll;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use datafusion::common::config::ConfigOptions;
use datafusion::common::stats::Precision;
use datafusion::common::{Result, Statistics, internal_err};
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
use crate::scan_spec::ScanSpec;
use crate::source::{FileDataSource, ReadOptions, SplitReaderFactory};
use crate::split::FileSplit;

/// Counts from planning (listing) shown with the scan's metrics.
#[derive(Debug, Clone, Default)]
pub struct PlanningStats {
    /// Partitions (directories) considered while listing.
    pub partitions_total: usize,
    /// Of those, pruned by partition filters without listing their files.
    pub partitions_pruned: usize,
    /// Data files of bucketed tables skipped because no row of their bucket can match.
    pub files_pruned_bucket: usize,
    /// Counters of other table formats (Iceberg manifests and files), by metric name.
    pub extra: Vec<(&'static str, usize)>,
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
    splits: Arc<[FileSplit]>,
    store_url: ObjectStoreUrl,
    factory: Arc<dyn SplitReaderFactory>,
    /// Filters pushed by parents, re-expressed over the table schema.
    pushed_filters: Vec<Arc<dyn PhysicalExpr>>,
    limit: Option<usize>,
    queue: Arc<SplitQueue>,
    metrics: ExecutionPlanMetricsSet,
    planning: PlanningStats,
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
        factory: Arc<dyn SplitReaderFactory>,
        target_partitions: usize,
    ) -> Result<Self> {
        let assignments = assignments.resolve(&table)?;
        let spec = Arc::new(ScanSpec::try_new(&table, &assignments, &[])?);
        let partitions = target_partitions.min(splits.len()).max(1);
        let splits: Arc<[FileSplit]> = splits.into();
        Ok(Self {
            table_name: table.table_name().to_string(),
            table: Arc::new(table),
            assignments,
            properties: Self::properties_of(&spec, partitions),
            spec,
            queue: Arc::new(SplitQueue::new(Arc::clone(&splits), partitions, None)),
            splits,
            store_url,
            factory,
            pushed_filters: vec![],
            limit: None,
            metrics: ExecutionPlanMetricsSet::new(),
            planning: PlanningStats::default(),
        })
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
            Arc::clone(&self.splits),
            self.partitions(),
            limit,
        ));
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

    /// The splits this scan reads.
    pub fn splits(&self) -> &[FileSplit] {
        &self.splits
    }

    fn partitions(&self) -> usize {
        self.properties.partitioning.partition_count()
    }

    fn with_fresh_state(&self) -> Self {
        let mut fresh = self.clone();
        fresh.queue = Arc::new(SplitQueue::new(
            Arc::clone(&self.splits),
            self.partitions(),
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
            return write!(f, "table={}\nsplits={}", self.table_name, self.splits.len());
        }
        write!(
            f,
            "LakeScanExec: table={}, splits={}, projection=[{}]",
            self.table_name,
            self.splits.len(),
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
        let metrics = LakeScanMetrics::new(&self.metrics, partition);
        if partition == 0 {
            let planning = |name: &'static str, v: usize| {
                MetricBuilder::new(&self.metrics)
                    .counter(name, partition)
                    .add(v)
            };
            planning("partitions_total", self.planning.partitions_total);
            planning("partitions_pruned", self.planning.partitions_pruned);
            planning("files_pruned_bucket", self.planning.files_pruned_bucket);
            for (name, v) in &self.planning.extra {
                planning(name, *v);
            }
        }
        let session = context.session_config();
        let options = ReadOptions {
            batch_size: session.batch_size(),
            pushdown_max_keep_ratio: LakeScanOptions::from_config(session.options())
                .pushdown_max_keep_ratio,
        };
        let source = FileDataSource::new(
            Arc::clone(&self.spec),
            Arc::clone(&self.factory),
            store,
            self.pushed_filters.clone(),
            metrics.clone(),
            options,
        )
        .with_memory_pool(Arc::clone(context.memory_pool()));
        let state = PartitionState {
            source,
            queue: self.queue.start_partition()?,
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

    /// Only sizes are known before reading (no footer is read while planning): the bytes of
    /// the splits, scaled by DataFusion's default filter selectivity when the scan filters.
    /// Enough for the optimizer to build a join's hash table on the smaller input.
    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        let mut stats = Statistics::new_unknown(self.spec.plan_schema());
        if partition.is_none() {
            let bytes: u64 = self.splits.iter().map(|s| s.length).sum();
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

    /// Absorbs the projection above the scan (seed §4.3): plain columns, and extractions
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
        let mut pushed = self.pushed_filters.clone();
        let mut answers = vec![];
        for parent in child_pushdown_result.parent_filters {
            let filter = parent.filter;
            if is_volatile(&filter) {
                answers.push(PushedDown::No);
                continue;
            }
            // Over the table schema: an output may be an absorbed expression.
            let Some(unprojected) = update_expr(&filter, self.assignments.exprs(), true)? else {
                answers.push(PushedDown::No);
                continue;
            };
            // Static filters are evaluated exactly; dynamic ones only prune and filter
            // early, and their producer does not rely on our answer (it keeps the `Arc`,
            // shared with the rewritten expression).
            let exact = !is_dynamic_physical_expr(&filter);
            pushed.push(unprojected);
            answers.push(if exact {
                PushedDown::Yes
            } else {
                PushedDown::No
            });
        }
        let changed = pushed.len() != self.pushed_filters.len();
        let result = FilterPushdownPropagation::with_parent_pushdown_result(answers);
        Ok(if changed {
            let updated = self.rebuilt(self.assignments.clone(), pushed)?;
            result.with_updated_node(Arc::new(updated))
        } else {
            result
        })
    }
}

/// The splits of one execution, shared by its partitions.
#[derive(Debug)]
struct SplitQueue {
    splits: Arc<[FileSplit]>,
    partitions: usize,
    limit: Option<usize>,
    state: Mutex<QueueState>,
}

#[derive(Debug, Default)]
struct QueueState {
    next: usize,
    started: usize,
    remaining: Option<usize>,
}

impl SplitQueue {
    fn new(splits: Arc<[FileSplit]>, partitions: usize, limit: Option<usize>) -> Self {
        let state = Mutex::new(QueueState {
            remaining: limit,
            ..Default::default()
        });
        Self {
            splits,
            partitions,
            limit,
            state,
        }
    }

    /// The queue state; a poisoned lock means a partition panicked while holding it.
    fn lock(&self) -> Result<std::sync::MutexGuard<'_, QueueState>> {
        match self.state.lock() {
            Ok(state) => Ok(state),
            Err(_) => internal_err!("split queue lock poisoned by a panicked partition"),
        }
    }

    /// Called once per partition and execution; a new round starts after all partitions
    /// of the previous one started.
    fn start_partition(self: &Arc<Self>) -> Result<Arc<Self>> {
        let mut s = self.lock()?;
        if s.started == self.partitions {
            *s = QueueState {
                remaining: self.limit,
                ..Default::default()
            };
        }
        s.started += 1;
        drop(s);
        Ok(Arc::clone(self))
    }

    fn pop(&self) -> Result<Option<FileSplit>> {
        let mut s = self.lock()?;
        if s.remaining == Some(0) {
            return Ok(None);
        }
        let split = self.splits.get(s.next).cloned();
        s.next += 1;
        Ok(split)
    }

    /// Takes up to `rows` from the remaining limit; returns how many may be emitted.
    fn take(&self, rows: usize) -> Result<usize> {
        let mut s = self.lock()?;
        Ok(match &mut s.remaining {
            None => rows,
            Some(left) => {
                let n = rows.min(*left);
                *left -= n;
                n
            }
        })
    }
}

struct PartitionState {
    source: FileDataSource,
    queue: Arc<SplitQueue>,
    metrics: LakeScanMetrics,
}

impl PartitionState {
    async fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        loop {
            if let Some(batch) = self.source.next().await? {
                if batch.num_rows() == 0 {
                    continue;
                }
                let n = self.queue.take(batch.num_rows())?;
                if n == 0 {
                    return Ok(None);
                }
                let batch = batch.slice(0, n);
                let _ = self
                    .metrics
                    .baseline
                    .record_poll(Poll::Ready(Some(Ok(batch.clone()))));
                return Ok(Some(batch));
            }
            let Some(split) = self.queue.pop()? else {
                self.metrics.baseline.done();
                return Ok(None);
            };
            self.source.add_split(split).await?;
        }
    }
}
