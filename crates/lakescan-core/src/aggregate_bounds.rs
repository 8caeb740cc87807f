//! [`AggregateBounds`]: a `min`/`max` aggregate's dynamic filter as a scan reads it — left
//! unapplied while one of its bounds is missing — and [`GuardAggregateFilters`], the
//! physical optimizer rule that wraps such filters in the scans it finds them pushed into.
//!
//! DataFusion 54.1's partial aggregate of `min(x)`, `max(x)` pushes the filter
//! `x < cur_min OR x > cur_max` into the scan: a row that cannot lower the minimum or raise
//! the maximum cannot change the answer. Each partition merges its bound into a shared one
//! with `scalar_min`/`scalar_max`, which treat only the untyped `ScalarValue::Null` as "no
//! bound yet". A partition that has seen only NULLs evaluates its accumulator to a *typed*
//! NULL (`Int64(NULL)`), which compares below every value: the shared minimum becomes that
//! NULL and stays it, and the filter is rebuilt without its `x < cur_min` disjunct — as
//! `x > cur_max` alone, which drops the rows that hold the true minimum. The same happens to
//! `min(a), max(b)` when a partition has seen `a` only NULL. The answer then depends on
//! which partition reported first (`docs/upstream.md` has the report for DataFusion).
//!
//! The aggregate builds its filter as an OR of one `argument < literal` or `argument >
//! literal` per accumulator that has a bound (the argument a column, or the expression a
//! projection below the aggregate had in its place), and the filter's original children are the
//! accumulators' columns, one each: fewer comparisons than children means a bound is
//! missing, and [`AggregateBounds`] then reads the filter as `true` (every row may still
//! change the answer) until the bound is there.
//!
//! ```text
//!  AggregateExec (Partial, min/max) ──pushes──▶ DynamicFilter [x < 4 OR x > 79999] ─┐
//!        │ GuardAggregateFilters: the scan's copy of that filter (same expression id) │
//!        ▼ is wrapped                                                                 ▼
//!  LakeScanExec  pushed = AggregateBounds(DynamicFilter [x > 79999]) ─snapshot─▶ true
//! ```

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, Schema};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Result, internal_err};
use datafusion::logical_expr::{ColumnarValue, Operator};
use datafusion::physical_expr::expressions::{BinaryExpr, DynamicFilterPhysicalExpr, Literal, lit};
use datafusion::physical_expr_common::physical_expr::snapshot_physical_expr;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::aggregates::AggregateExec;
use datafusion::physical_plan::{ExecutionPlan, PhysicalExpr};

use crate::exec::LakeScanExec;

/// An aggregate's `min`/`max` dynamic filter as a scan reads it: its value, or `true` while
/// the value has fewer bounds than the aggregate has accumulators.
#[derive(Debug, Eq)]
pub struct AggregateBounds {
    /// The aggregate's filter (a `DynamicFilterPhysicalExpr`, or its value once snapshotted).
    filter: Arc<dyn PhysicalExpr>,
    /// The accumulators whose bounds the value must hold.
    accumulators: usize,
}

// By hand, as DataFusion's expressions do (rust-lang/rust#78808).
impl PartialEq for AggregateBounds {
    fn eq(&self, other: &Self) -> bool {
        self.filter.eq(&other.filter) && self.accumulators == other.accumulators
    }
}

impl Hash for AggregateBounds {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.filter.hash(state);
        self.accumulators.hash(state);
    }
}

impl AggregateBounds {
    /// `filter` read as the aggregate with `accumulators` bounded accumulators builds it.
    pub fn new(filter: Arc<dyn PhysicalExpr>, accumulators: usize) -> Self {
        Self {
            filter,
            accumulators,
        }
    }

    /// The value in force now: the filter's, or `true` while a bound is missing.
    fn value(&self) -> Result<Arc<dyn PhysicalExpr>> {
        let value = snapshot_physical_expr(Arc::clone(&self.filter))?;
        Ok(self.guarded(value))
    }

    /// `value`, or `true` when it lacks a bound.
    fn guarded(&self, value: Arc<dyn PhysicalExpr>) -> Arc<dyn PhysicalExpr> {
        let mut comparisons = 0;
        match bound_comparisons(&value, &mut comparisons) && comparisons < self.accumulators {
            true => lit(true),
            false => value,
        }
    }
}

impl fmt::Display for AggregateBounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AggregateBounds({})", self.filter)
    }
}

impl PhysicalExpr for AggregateBounds {
    fn data_type(&self, _schema: &Schema) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn nullable(&self, schema: &Schema) -> Result<bool> {
        self.filter.nullable(schema)
    }

    fn evaluate(&self, batch: &RecordBatch) -> Result<ColumnarValue> {
        self.value()?.evaluate(batch)
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![&self.filter]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        let [filter] = <[_; 1]>::try_from(children).map_err(|c| {
            datafusion::common::internal_datafusion_err!(
                "AggregateBounds takes one child, got {}",
                c.len()
            )
        })?;
        Ok(Arc::new(Self::new(filter, self.accumulators)))
    }

    /// The guarded value: `snapshot_physical_expr` calls it after replacing the child by
    /// its value, and snapshotting a value again leaves it as it is.
    fn snapshot(&self) -> Result<Option<Arc<dyn PhysicalExpr>>> {
        Ok(Some(self.value()?))
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.filter.fmt_sql(f)
    }
}

/// Whether `expr` is an OR of `argument < literal` / `argument > literal` comparisons,
/// counting them into `count`.
fn bound_comparisons(expr: &Arc<dyn PhysicalExpr>, count: &mut usize) -> bool {
    let Some(binary) = expr.downcast_ref::<BinaryExpr>() else {
        return false;
    };
    match binary.op() {
        Operator::Or => {
            bound_comparisons(binary.left(), count) && bound_comparisons(binary.right(), count)
        }
        // The aggregate's argument: a column, or the expression a projection put in its
        // place on the way down (`get_field(s, 'x')`, `a + 1`).
        Operator::Lt | Operator::Gt if binary.right().is::<Literal>() => {
            *count += 1;
            true
        }
        _ => false,
    }
}

/// Wraps each aggregate's `min`/`max` dynamic filter that a [`LakeScanExec`] received in
/// `AggregateBounds`. Runs after DataFusion's filter pushdown (`lakescan::register`
/// appends it to the session's physical optimizer rules).
#[derive(Debug, Default)]
pub struct GuardAggregateFilters;

impl GuardAggregateFilters {
    /// The rule's name.
    pub const NAME: &'static str = "lakescan_guard_aggregate_filters";
}

impl PhysicalOptimizerRule for GuardAggregateFilters {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // The aggregates' filters by expression id (shared by every copy a pushdown made),
        // with their accumulators.
        let mut filters: HashMap<u64, usize> = HashMap::new();
        plan.apply(|node| {
            if let Some(aggregate) = node.downcast_ref::<AggregateExec>()
                && let Some(filter) = aggregate.dynamic_filter_expr()
            {
                let accumulators = filter.original_children().len();
                filters.insert(filter.inner().expression_id, accumulators);
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        if filters.is_empty() {
            return Ok(plan);
        }
        plan.transform_up(|node| {
            let Some(scan) = node.downcast_ref::<LakeScanExec>() else {
                return Ok(Transformed::no(node));
            };
            Ok(match scan.with_guarded_filters(|f| guard(f, &filters))? {
                Some(guarded) => Transformed::yes(Arc::new(guarded) as Arc<dyn ExecutionPlan>),
                None => Transformed::no(node),
            })
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        Self::NAME
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// `filter` in [`AggregateBounds`] when it is one of the aggregates' `filters`.
fn guard(
    filter: &Arc<dyn PhysicalExpr>,
    filters: &HashMap<u64, usize>,
) -> Result<Option<Arc<dyn PhysicalExpr>>> {
    if filter.is::<AggregateBounds>() {
        return Ok(None);
    }
    let Some(dynamic) = filter.downcast_ref::<DynamicFilterPhysicalExpr>() else {
        return Ok(None);
    };
    let Some(&accumulators) = filters.get(&dynamic.inner().expression_id) else {
        return Ok(None);
    };
    if accumulators == 0 {
        return internal_err!("an aggregate's dynamic filter without accumulators");
    }
    Ok(Some(Arc::new(AggregateBounds::new(
        Arc::clone(filter),
        accumulators,
    ))))
}

#[cfg(test)]
mod tests {
    use datafusion::common::ScalarValue;
    use datafusion::physical_expr::expressions::{Column, is_null};

    use super::*;

    fn x() -> Arc<dyn PhysicalExpr> {
        Arc::new(Column::new("x", 0))
    }

    fn compare(op: Operator, v: i64) -> Arc<dyn PhysicalExpr> {
        Arc::new(BinaryExpr::new(x(), op, lit(ScalarValue::Int64(Some(v)))))
    }

    fn or(a: Arc<dyn PhysicalExpr>, b: Arc<dyn PhysicalExpr>) -> Arc<dyn PhysicalExpr> {
        Arc::new(BinaryExpr::new(a, Operator::Or, b))
    }

    /// The snapshot of an aggregate's filter over `accumulators` at `value`, as a scan
    /// takes it.
    fn read(accumulators: usize, value: Arc<dyn PhysicalExpr>) -> String {
        let filter = Arc::new(DynamicFilterPhysicalExpr::new(
            vec![x(); accumulators],
            lit(true),
        ));
        filter.update(value).unwrap();
        let guarded: Arc<dyn PhysicalExpr> = Arc::new(AggregateBounds::new(filter, accumulators));
        snapshot_physical_expr(guarded).unwrap().to_string()
    }

    #[test]
    fn a_missing_minimum_leaves_the_filter_unapplied() {
        // min(x) saw only NULLs somewhere: DataFusion drops `x < min`, keeps `x > max`.
        assert_eq!(read(2, compare(Operator::Gt, 79_999)), "true");
        assert_eq!(
            read(
                2,
                or(compare(Operator::Lt, 4), compare(Operator::Gt, 79_999))
            ),
            "x@0 < 4 OR x@0 > 79999"
        );
        // One accumulator, its one bound.
        assert_eq!(read(1, compare(Operator::Lt, 4)), "x@0 < 4");
        // `min(a + 1), max(a + 1)`: the argument an expression, its minimum missing.
        let plus_one: Arc<dyn PhysicalExpr> = Arc::new(BinaryExpr::new(
            x(),
            Operator::Plus,
            lit(ScalarValue::Int64(Some(1))),
        ));
        let above = Arc::new(BinaryExpr::new(
            plus_one,
            Operator::Gt,
            lit(ScalarValue::Int64(Some(9))),
        )) as Arc<dyn PhysicalExpr>;
        assert_eq!(read(2, above), "true");
        // Before any bound: `true`.
        assert_eq!(read(2, lit(true)), "true");
    }

    #[test]
    fn values_of_another_shape_are_taken_as_they_are() {
        let nulls = or(is_null(x()).unwrap(), compare(Operator::Lt, 10));
        assert_eq!(read(2, Arc::clone(&nulls)), nulls.to_string());
    }

    #[test]
    fn evaluation_follows_the_guarded_value() {
        let filter = Arc::new(DynamicFilterPhysicalExpr::new(vec![x(), x()], lit(true)));
        filter.update(compare(Operator::Gt, 5)).unwrap();
        let guarded = AggregateBounds::new(filter, 2);
        let schema = Arc::new(Schema::new(vec![arrow::datatypes::Field::new(
            "x",
            DataType::Int64,
            true,
        )]));
        let batch = RecordBatch::try_new(
            schema,
            vec![Arc::new(arrow::array::Int64Array::from(vec![1, 9]))],
        )
        .unwrap();
        // `x > 5` alone would drop the 1; unapplied, both rows stay.
        let kept = guarded.evaluate(&batch).unwrap().into_array(2).unwrap();
        assert_eq!(
            kept.as_ref(),
            &arrow::array::BooleanArray::from(vec![true, true]) as &dyn arrow::array::Array
        );
    }
}
