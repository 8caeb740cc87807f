//! [`SplitFilters`]: the filters in force for one split (the scan's static filters and
//! residual merged with the current value of its dynamic filters), and [`DynamicFilters`]:
//! the pushed filters a split re-reads when a join or TopK moves them.
//!
//! A dynamic filter's value is identified by the combined generation of the pushed filters;
//! [`DynamicFilters::changed`] is the one check the driver and the readers make before they
//! rebuild a split's filters.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use arrow::datatypes::SchemaRef;
use datafusion::physical_optimizer::pruning::PruningPredicate;

use datafusion::common::Result;
use datafusion::physical_expr::utils::conjunction_opt;
use datafusion::physical_expr_common::physical_expr::{
    is_dynamic_physical_expr, snapshot_generation, snapshot_physical_expr,
};
use datafusion::physical_plan::PhysicalExpr;

use crate::extract::Extraction;
use crate::filter::Filter;
use crate::scan_spec::ScanSpec;
use crate::subfield::Subfield;

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
    fn current_generation(&self) -> u64 {
        generation_of(&self.pushed)
    }

    /// The filters in force now when a dynamic filter changed since the last call (or since
    /// these were built), over `spec`'s reader schema; `None` when none did.
    pub fn changed(&mut self, spec: &ScanSpec) -> Result<Option<Arc<SplitFilters>>> {
        let generation = self.current_generation();
        if generation == self.generation {
            return Ok(None);
        }
        self.generation = generation;
        Ok(Some(Arc::new(SplitFilters::try_new(spec, &self.pushed)?)))
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
pub fn generation_of(filters: &[Arc<dyn PhysicalExpr>]) -> u64 {
    filters
        .iter()
        .fold(0u64, |g, f| g.wrapping_add(snapshot_generation(f)))
}

/// The filters in force for one split: static filters and residual of the scan, merged with
/// the current value of the dynamic filters (an aggregate's `min`/`max` filter only once it
/// has every bound: [`crate::aggregate_bounds::AggregateBounds`]).
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
    /// `residual` as a pruning predicate over `R`, built the first time a reader prunes
    /// with these filters (`None` inside: the residual has no prunable part).
    residual_pruning: OnceLock<Option<Arc<PruningPredicate>>>,
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
            residual_pruning: OnceLock::new(),
        })
    }

    /// The residual as a pruning predicate over `schema` (the reader schema `R`): built
    /// once per set of filters, however many splits and row groups it prunes.
    pub fn residual_pruning(&self, schema: &SchemaRef) -> Option<&Arc<PruningPredicate>> {
        self.residual_pruning
            .get_or_init(|| {
                let residual = Arc::clone(self.residual.as_ref()?);
                PruningPredicate::try_new(residual, Arc::clone(schema))
                    .ok()
                    .map(Arc::new)
            })
            .as_ref()
    }

    /// True when some filter rejects every row.
    pub fn always_false(&self) -> bool {
        self.filters.values().any(Filter::is_always_false)
    }
}
