//! Testing a [`Filter`] against values: an Arrow array, a constant, or statistics.
//!
//! Array evaluation reuses DataFusion's vectorized expressions: the filter is turned once
//! into `v >= lo AND v < hi OR v IN (...) OR v IS NULL` over a single column, so its
//! semantics are exactly DataFusion's (IEEE total order for floats, byte order for strings).
//! Constant and statistics tests use the interval algebra directly.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch};
use arrow::compute::{cast, prep_null_mask_filter};
use arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::{Result, ScalarValue, internal_err};
use datafusion::logical_expr::Operator;
use datafusion::physical_expr::expressions::{BinaryExpr, Column, InListExpr, IsNullExpr, Literal};
use datafusion::physical_plan::PhysicalExpr;

use super::{Bound, Filter, NullResult, ValueRange};

/// The rows `predicate` keeps in `batch`: its boolean result, NULL counting as false.
pub fn keep_mask(predicate: &Arc<dyn PhysicalExpr>, batch: &RecordBatch) -> Result<BooleanArray> {
    let result = predicate.evaluate(batch)?.into_array(batch.num_rows())?;
    let Some(mask) = result.as_any().downcast_ref::<BooleanArray>() else {
        return internal_err!("predicate {predicate} did not evaluate to booleans");
    };
    Ok(if mask.null_count() > 0 {
        prep_null_mask_filter(mask)
    } else {
        mask.clone()
    })
}

/// Min/max/null-count statistics of one column over some rows (a file, a row group or a
/// page). `None` means unknown. Values must be of the filter's type.
#[derive(Debug, Clone, Default)]
pub struct ColumnStats {
    /// Smallest non-null value, if known.
    pub min: Option<ScalarValue>,
    /// Largest non-null value, if known.
    pub max: Option<ScalarValue>,
    /// Number of nulls, if known.
    pub null_count: Option<u64>,
    /// Number of rows, if known.
    pub row_count: Option<u64>,
    /// Number of NaN values of a float column, if known (Iceberg's `nan_value_counts`):
    /// unknown means the values may hold NaN of either sign beyond `min` and `max`.
    pub nan_count: Option<u64>,
}

/// At most this many points are tested as separate `=` comparisons; more become a hashed IN.
const MAX_POINT_COMPARISONS: usize = 4;

impl Filter {
    /// Tests every value of `array` (of the filter's type or a type that casts to it safely;
    /// a narrow decimal of the filter's scale is not cast, [`Filter::narrowed_to`]).
    /// The result has no nulls: `true` keeps the row.
    pub fn evaluate(&self, array: &ArrayRef) -> Result<BooleanArray> {
        // A decimal in the narrow width a file stores it in is compared as it is.
        if let Some(narrow) = self.narrowed_for(array.data_type()) {
            return narrow.evaluate(array);
        }
        let array = if array.data_type() == &self.data_type {
            Arc::clone(array)
        } else {
            cast(array, &self.data_type)?
        };
        let schema = Schema::new(vec![Field::new("v", self.data_type.clone(), true)]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![array])?;
        keep_mask(self.expr()?, &batch)
    }

    /// Tests one constant (a partition value, a missing column's NULL, an info column).
    pub fn test_constant(&self, value: &ScalarValue) -> bool {
        if value.is_null() {
            return self.null == NullResult::True;
        }
        match value.cast_to(&self.data_type) {
            Ok(v) => self.values.contains(&v),
            // Not comparable here: keep the rows, the exact test runs on the values.
            Err(_) => true,
        }
    }

    /// False only when no row described by `stats` can pass (three-valued: unknown keeps).
    pub fn may_match(&self, stats: &ColumnStats) -> bool {
        let all_null = matches!((stats.null_count, stats.row_count), (Some(n), Some(r)) if n == r);
        let may_have_nulls = stats.null_count != Some(0);
        if may_have_nulls && self.null == NullResult::True {
            return true;
        }
        if all_null || self.values.is_empty() {
            return false;
        }
        match (&stats.min, &stats.max) {
            (Some(min), Some(max)) if !min.is_null() && !max.is_null() => {
                // Statistics are in the column's type; a filter through a widening cast
                // compares in a wider one.
                // Values stored as integers (compared as floats) hold no NaN.
                let nan_free = stats.nan_count == Some(0) || !min.data_type().is_floating();
                let (Ok(min), Ok(max)) =
                    (min.cast_to(&self.data_type), max.cast_to(&self.data_type))
                else {
                    return true;
                };
                match widen_float_bounds(&min, &max, nan_free) {
                    Some((min, max)) => self.values.overlaps(&min, &max),
                    None => true,
                }
            }
            _ => true,
        }
    }

    /// The share of rows expected to pass when values spread evenly over `[min, max]`
    /// (the classic optimizer estimate); `None` for types without a numeric distance.
    pub fn estimated_keep_ratio(&self, stats: &ColumnStats) -> Option<f64> {
        let (min, max) = (as_f64(stats.min.as_ref()?)?, as_f64(stats.max.as_ref()?)?);
        let width = max - min;
        if !(width.is_finite() && width >= 0.0) {
            return None;
        }
        let integral = !matches!(
            self.data_type,
            DataType::Float16 | DataType::Float32 | DataType::Float64
        );
        let mut kept = 0.0;
        for range in self.values.ranges() {
            // Integral domains: an open end excludes exactly one value.
            let step = if integral { 1.0 } else { 0.0 };
            let low = bound_f64(&range.low, step).unwrap_or(min).max(min);
            let high = bound_f64(&range.high, -step).unwrap_or(max).min(max);
            if high < low {
                continue;
            }
            kept += if width == 0.0 {
                1.0
            } else if integral {
                (high - low + 1.0) / (width + 1.0)
            } else {
                (high - low) / width
            };
        }
        Some(kept.clamp(0.0, 1.0))
    }

    /// The filter as a DataFusion expression over column 0 (`v`) of the filter's type,
    /// built on first use.
    pub fn expr(&self) -> Result<&Arc<dyn PhysicalExpr>> {
        if let Some(expr) = self.expr.get() {
            return Ok(expr);
        }
        // Two threads may both build it; `set` keeps the first, and both are equal.
        let _ = self.expr.set(build_expr(self)?);
        match self.expr.get() {
            Some(expr) => Ok(expr),
            None => internal_err!("filter {self}: expression not stored"),
        }
    }
}

/// A bound as a number; an excluded bound moves by `open_step` (one value inward).
fn bound_f64(bound: &super::Bound, open_step: f64) -> Option<f64> {
    match bound {
        super::Bound::Unbounded => None,
        super::Bound::Included(v) => as_f64(v),
        super::Bound::Excluded(v) => as_f64(v).map(|x| x + open_step),
    }
}

/// A numeric view of a value for distance estimates (dates in days, timestamps in their unit).
fn as_f64(v: &ScalarValue) -> Option<f64> {
    use ScalarValue::*;
    match v {
        Int8(Some(x)) => Some(*x as f64),
        Int16(Some(x)) => Some(*x as f64),
        Int32(Some(x)) | Date32(Some(x)) => Some(*x as f64),
        Int64(Some(x)) | Date64(Some(x)) => Some(*x as f64),
        UInt8(Some(x)) => Some(*x as f64),
        UInt16(Some(x)) => Some(*x as f64),
        UInt32(Some(x)) => Some(*x as f64),
        UInt64(Some(x)) => Some(*x as f64),
        Float32(Some(x)) => Some(*x as f64),
        Float64(Some(x)) => Some(*x),
        Decimal128(Some(x), _, scale) => Some(*x as f64 / 10f64.powi(*scale as i32)),
        TimestampSecond(Some(x), _)
        | TimestampMillisecond(Some(x), _)
        | TimestampMicrosecond(Some(x), _)
        | TimestampNanosecond(Some(x), _) => Some(*x as f64),
        _ => None,
    }
}

/// Float bounds widened to stay sound in the total order DataFusion compares floats in
/// (`-NaN < -inf < … < -0.0 < +0.0 < … < +inf < NaN`): statistics leave NaN out, and a
/// negative NaN (what `0.0 / 0.0` gives on x86) sorts below every number, a positive one
/// above, so unless the values are known to hold no NaN (`nan_free`) the bounds become the
/// two NaNs. Parquet writers record a minimum of zero as `-0.0` and a maximum as `+0.0` only
/// when they follow the format's advice: zeros widen to both signs. `None`: bounds that
/// say nothing (half floats, whose statistics are not trusted).
fn widen_float_bounds(
    min: &ScalarValue,
    max: &ScalarValue,
    nan_free: bool,
) -> Option<(ScalarValue, ScalarValue)> {
    let widened = match (min, max) {
        (ScalarValue::Float64(Some(lo)), ScalarValue::Float64(Some(hi))) => {
            let (lo, hi) = widened(*lo, *hi, f64::NAN, nan_free);
            (
                ScalarValue::Float64(Some(lo)),
                ScalarValue::Float64(Some(hi)),
            )
        }
        (ScalarValue::Float32(Some(lo)), ScalarValue::Float32(Some(hi))) => {
            let (lo, hi) = widened(*lo, *hi, f32::NAN, nan_free);
            (
                ScalarValue::Float32(Some(lo)),
                ScalarValue::Float32(Some(hi)),
            )
        }
        (ScalarValue::Float16(_), _) => return None,
        _ => (min.clone(), max.clone()),
    };
    Some(widened)
}

/// [`widen_float_bounds`] of one float type: `nan` its positive NaN, `T::default()` its
/// `+0.0`.
fn widened<T>(lo: T, hi: T, nan: T, nan_free: bool) -> (T, T)
where
    T: Copy + Default + PartialEq + std::ops::Neg<Output = T>,
{
    let zero = T::default();
    match nan_free {
        true => (
            if lo == zero { -zero } else { lo },
            if hi == zero { zero } else { hi },
        ),
        false => (-nan, nan),
    }
}

fn build_expr(filter: &Filter) -> Result<Arc<dyn PhysicalExpr>> {
    let column: Arc<dyn PhysicalExpr> = Arc::new(Column::new("v", 0));
    let mut points = vec![];
    let mut terms: Vec<Arc<dyn PhysicalExpr>> = vec![];
    if filter.values.is_all() {
        terms.push(Arc::new(
            datafusion::physical_expr::expressions::IsNotNullExpr::new(Arc::clone(&column)),
        ));
    } else {
        for range in filter.values.ranges() {
            match range.as_point() {
                Some(p) => points.push(p.clone()),
                None => terms.push(range_expr(&column, range)),
            }
        }
    }
    if points.len() > MAX_POINT_COMPARISONS {
        let list = points
            .drain(..)
            .map(|p| Arc::new(Literal::new(p)) as _)
            .collect();
        let schema = Schema::new(vec![Field::new("v", filter.data_type.clone(), true)]);
        // Every point has the filter's type (the `Filter` invariant): a failure is our bug.
        match InListExpr::try_new(Arc::clone(&column), list, false, &schema) {
            Ok(e) => terms.push(Arc::new(e)),
            Err(e) => return internal_err!("filter {filter}: cannot build its IN list: {e}"),
        }
    }
    for p in points {
        terms.push(compare(&column, Operator::Eq, p));
    }
    if filter.null == NullResult::True {
        terms.push(Arc::new(IsNullExpr::new(Arc::clone(&column))));
    }
    Ok(terms
        .into_iter()
        .reduce(|a, b| Arc::new(BinaryExpr::new(a, Operator::Or, b)))
        .unwrap_or_else(|| always(false)))
}

fn range_expr(column: &Arc<dyn PhysicalExpr>, range: &ValueRange) -> Arc<dyn PhysicalExpr> {
    let low = match &range.low {
        Bound::Unbounded => None,
        Bound::Included(v) => Some(compare(column, Operator::GtEq, v.clone())),
        Bound::Excluded(v) => Some(compare(column, Operator::Gt, v.clone())),
    };
    let high = match &range.high {
        Bound::Unbounded => None,
        Bound::Included(v) => Some(compare(column, Operator::LtEq, v.clone())),
        Bound::Excluded(v) => Some(compare(column, Operator::Lt, v.clone())),
    };
    match (low, high) {
        (Some(l), Some(h)) => Arc::new(BinaryExpr::new(l, Operator::And, h)),
        (Some(e), None) | (None, Some(e)) => e,
        (None, None) => Arc::new(datafusion::physical_expr::expressions::IsNotNullExpr::new(
            Arc::clone(column),
        )),
    }
}

fn compare(column: &Arc<dyn PhysicalExpr>, op: Operator, v: ScalarValue) -> Arc<dyn PhysicalExpr> {
    Arc::new(BinaryExpr::new(
        Arc::clone(column),
        op,
        Arc::new(Literal::new(v)),
    ))
}

fn always(value: bool) -> Arc<dyn PhysicalExpr> {
    Arc::new(Literal::new(ScalarValue::Boolean(Some(value))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Float64Array, Int32Array, StringArray};

    fn f(v: f64) -> ScalarValue {
        ScalarValue::Float64(Some(v))
    }

    #[test]
    fn evaluates_with_widening_cast_and_nulls() {
        let filter = Filter::compare(&DataType::Int64, Operator::Gt, &ScalarValue::Int64(Some(2)))
            .unwrap()
            .or(&Filter::is_null(&DataType::Int64))
            .unwrap();
        let array: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), Some(3), None]));
        let mask = filter.evaluate(&array).unwrap();
        assert_eq!(mask, BooleanArray::from(vec![false, true, true]));
    }

    #[test]
    fn floats_follow_total_order() {
        let gt = Filter::compare(&DataType::Float64, Operator::Gt, &f(0.0)).unwrap();
        let array: ArrayRef = Arc::new(Float64Array::from(vec![-0.0, 0.0, f64::NAN, 1.0]));
        let mask = gt.evaluate(&array).unwrap();
        assert_eq!(mask, BooleanArray::from(vec![false, false, true, true]));
        // Statistics never include NaN: a file whose max is 3 may still hold NaN.
        let gt10 = Filter::compare(&DataType::Float64, Operator::Gt, &f(10.0)).unwrap();
        let stats = ColumnStats {
            min: Some(f(1.0)),
            max: Some(f(3.0)),
            ..Default::default()
        };
        assert!(gt10.may_match(&stats));
        // A negative NaN (x86's `0.0 / 0.0`) is below every number: a file whose min is 1
        // may hold a value below -5.
        let le_minus5 = Filter::compare(&DataType::Float64, Operator::LtEq, &f(-5.0)).unwrap();
        let negative_nan: ArrayRef = Arc::new(Float64Array::from(vec![-f64::NAN]));
        assert!(le_minus5.evaluate(&negative_nan).unwrap().value(0));
        assert!(le_minus5.may_match(&stats));
        // Known to hold no NaN (Iceberg's NaN counts): the bounds prune on both sides.
        let nan_free = ColumnStats {
            nan_count: Some(0),
            ..stats.clone()
        };
        assert!(!gt10.may_match(&nan_free));
        assert!(!le_minus5.may_match(&nan_free));
        let lt0 = Filter::compare(&DataType::Float64, Operator::Lt, &f(0.0)).unwrap();
        let zero_min = ColumnStats {
            min: Some(f(0.0)),
            max: Some(f(3.0)),
            nan_count: Some(0),
            ..Default::default()
        };
        assert!(
            lt0.may_match(&zero_min),
            "-0.0 may hide behind a +0.0 minimum"
        );
        let ge0 = Filter::compare(&DataType::Float64, Operator::GtEq, &f(0.0)).unwrap();
        let zero_max = ColumnStats {
            min: Some(f(-3.0)),
            max: Some(f(-0.0)),
            nan_count: Some(0),
            ..Default::default()
        };
        assert!(
            ge0.may_match(&zero_max),
            "+0.0 may hide behind a -0.0 maximum"
        );
    }

    #[test]
    fn statistics_in_a_narrower_type_are_widened() {
        // CAST(i AS DOUBLE) > 0.0 over an INT column whose row group holds 1..=9.
        let gt0 = Filter::compare(&DataType::Float64, Operator::Gt, &f(0.0)).unwrap();
        let stats = ColumnStats {
            min: Some(ScalarValue::Int32(Some(1))),
            max: Some(ScalarValue::Int32(Some(9))),
            ..Default::default()
        };
        assert!(gt0.may_match(&stats));
        let lt0 = Filter::compare(&DataType::Float64, Operator::Lt, &f(0.0)).unwrap();
        assert!(!lt0.may_match(&stats));
    }

    #[test]
    fn keep_ratio_estimates() {
        let d = |v: i32| ScalarValue::Date32(Some(v));
        let stats = ColumnStats {
            min: Some(d(0)),
            max: Some(d(2555)),
            ..Default::default()
        };
        let year = Filter::compare(&DataType::Date32, Operator::GtEq, &d(365))
            .unwrap()
            .and(&Filter::compare(&DataType::Date32, Operator::Lt, &d(730)).unwrap())
            .unwrap();
        let ratio = year.estimated_keep_ratio(&stats).unwrap();
        assert!((ratio - 365.0 / 2556.0).abs() < 1e-9, "{ratio}");
        let text = Filter::compare(
            &DataType::Utf8,
            Operator::Eq,
            &ScalarValue::Utf8(Some("a".into())),
        );
        let text_stats = ColumnStats {
            min: Some(ScalarValue::Utf8(Some("a".into()))),
            max: Some(ScalarValue::Utf8(Some("z".into()))),
            ..Default::default()
        };
        assert_eq!(text.unwrap().estimated_keep_ratio(&text_stats), None);
    }

    #[test]
    fn many_points_use_in_list() {
        let list: Vec<ScalarValue> = (0..10)
            .map(|i| ScalarValue::Utf8(Some(format!("k{i}"))))
            .collect();
        let filter = Filter::in_list(&DataType::Utf8, &list).unwrap();
        let array: ArrayRef = Arc::new(StringArray::from(vec![Some("k3"), Some("x"), None]));
        assert_eq!(
            filter.evaluate(&array).unwrap(),
            BooleanArray::from(vec![true, false, false])
        );
    }

    #[test]
    fn statistics_and_constants() {
        let t = DataType::Int64;
        let eq5 = Filter::compare(&t, Operator::Eq, &ScalarValue::Int64(Some(5))).unwrap();
        let stats = |min, max, nulls| ColumnStats {
            min: Some(ScalarValue::Int64(Some(min))),
            max: Some(ScalarValue::Int64(Some(max))),
            null_count: Some(nulls),
            row_count: Some(10),
            nan_count: None,
        };
        assert!(eq5.may_match(&stats(1, 9, 0)));
        assert!(!eq5.may_match(&stats(6, 9, 0)));
        assert!(!eq5.may_match(&stats(1, 9, 10)), "all null");
        assert!(Filter::is_null(&t).may_match(&stats(1, 9, 1)));
        assert!(!Filter::is_null(&t).may_match(&stats(1, 9, 0)));
        assert!(eq5.test_constant(&ScalarValue::Int32(Some(5))));
        assert!(!eq5.test_constant(&ScalarValue::Int64(None)));
        assert!(Filter::is_null(&t).test_constant(&ScalarValue::Int64(None)));
    }
}
