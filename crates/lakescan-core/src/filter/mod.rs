//! Typed per-column value filters.
//!
//! * [`Filter`] — what one column's values must satisfy: a [`ValueSet`] for non-null values
//!   plus the three-valued [`NullResult`] a NULL produces. Built from comparisons, `IN`,
//!   `IS [NOT] NULL` and boolean columns; combined exactly with [`Filter::and`],
//!   [`Filter::or`] and [`Filter::not`] (Kleene logic per row, so De Morgan holds).
//! * [`range`] — the interval algebra behind [`ValueSet`].
//! * [`eval`] — testing a filter against an Arrow array (vectorized), a constant, and
//!   min/max/null-count statistics.
//! * [`narrow`] — a decimal filter rewritten over the narrow integers a file stores.
//!
//! Extraction of filters from DataFusion expressions lives in [`crate::extract`].

pub mod eval;
pub mod narrow;
pub mod range;

use std::fmt;
use std::sync::{Arc, OnceLock};

use arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::Operator;
use datafusion::physical_plan::PhysicalExpr;
use serde::{Deserialize, Serialize};

pub use range::{Bound, ValueRange, ValueSet};

/// What a predicate yields for a NULL input, in SQL's three-valued logic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NullResult {
    /// The row passes (e.g. `x IS NULL`).
    True,
    /// The row fails and `NOT` of it passes (e.g. `x IS NOT NULL`).
    False,
    /// The row fails and `NOT` of it fails too (e.g. `x > 5`).
    Unknown,
}

impl NullResult {
    fn and(self, other: Self) -> Self {
        use NullResult::*;
        match (self, other) {
            (False, _) | (_, False) => False,
            (True, True) => True,
            _ => Unknown,
        }
    }

    fn or(self, other: Self) -> Self {
        use NullResult::*;
        match (self, other) {
            (True, _) | (_, True) => True,
            (False, False) => False,
            _ => Unknown,
        }
    }

    fn not(self) -> Self {
        use NullResult::*;
        match self {
            True => False,
            False => True,
            Unknown => Unknown,
        }
    }
}

/// A filter on the values of one column.
///
/// Invariant: every literal in `values` has type `data_type`. A row passes when its value is
/// non-null and in `values`, or null and `null == NullResult::True`. The column is compared
/// in `data_type`, which may be wider than the column's own type (a safe widening cast).
#[derive(Clone, Serialize, Deserialize)]
#[serde(into = "FilterParts", from = "FilterParts")]
pub struct Filter {
    data_type: DataType,
    values: ValueSet,
    null: NullResult,
    /// Lazily built DataFusion expression over a single column at index 0.
    expr: Arc<OnceLock<Arc<dyn PhysicalExpr>>>,
    /// Lazily built: this filter over the first narrow decimal type it tested
    /// ([`narrow`]), if it narrows to it.
    narrowed: Arc<OnceLock<(DataType, Option<Filter>)>>,
}

/// What a [`Filter`] is, without its cached expression: its form on the wire.
#[derive(Serialize, Deserialize)]
struct FilterParts {
    #[serde(with = "crate::wire::data_type")]
    data_type: DataType,
    values: ValueSet,
    null: NullResult,
}

impl From<Filter> for FilterParts {
    fn from(f: Filter) -> Self {
        Self {
            data_type: f.data_type,
            values: f.values,
            null: f.null,
        }
    }
}

impl From<FilterParts> for Filter {
    fn from(p: FilterParts) -> Self {
        Self::new(p.data_type, p.values, p.null)
    }
}

impl Filter {
    fn new(data_type: DataType, values: ValueSet, null: NullResult) -> Self {
        let values = if data_type == DataType::Boolean {
            boolean_points(&values)
        } else {
            values
        };
        Self {
            data_type,
            values,
            null,
            expr: Arc::default(),
            narrowed: Arc::default(),
        }
    }

    /// `x <op> literal`. Returns `None` for operators that are not comparisons, for a NULL
    /// literal (the result would be NULL for every row) or a literal of another type.
    pub fn compare(data_type: &DataType, op: Operator, literal: &ScalarValue) -> Option<Self> {
        if literal.is_null() || &literal.data_type() != data_type {
            return None;
        }
        let v = literal.clone();
        let range = |low, high| ValueSet::range(ValueRange { low, high });
        let values = match op {
            Operator::Eq => ValueSet::range(ValueRange::point(v)),
            Operator::NotEq => ValueSet::range(ValueRange::point(v)).complement(),
            Operator::Lt => range(Bound::Unbounded, Bound::Excluded(v)),
            Operator::LtEq => range(Bound::Unbounded, Bound::Included(v)),
            Operator::Gt => range(Bound::Excluded(v), Bound::Unbounded),
            Operator::GtEq => range(Bound::Included(v), Bound::Unbounded),
            Operator::IsNotDistinctFrom => {
                return Some(Self::new(
                    data_type.clone(),
                    ValueSet::range(ValueRange::point(v)),
                    NullResult::False,
                ));
            }
            Operator::IsDistinctFrom => {
                let set = ValueSet::range(ValueRange::point(v)).complement();
                return Some(Self::new(data_type.clone(), set, NullResult::True));
            }
            _ => return None,
        };
        Some(Self::new(data_type.clone(), values, NullResult::Unknown))
    }

    /// `x IN (values)`; `None` if a value is NULL, of another type, or of a type whose
    /// values do not compare (the predicate then stays a residual).
    pub fn in_list(data_type: &DataType, list: &[ScalarValue]) -> Option<Self> {
        if list
            .iter()
            .any(|v| v.is_null() || &v.data_type() != data_type)
        {
            return None;
        }
        let set = match ValueSet::from_ranges(list.iter().cloned().map(ValueRange::point)) {
            Ok(set) => set,
            Err(e) => {
                // Kept residual (the rows stay right); the error is a bug to see in the log.
                log::debug!("IN list kept residual: {e}");
                return None;
            }
        };
        Some(Self::new(data_type.clone(), set, NullResult::Unknown))
    }

    /// `x IS NULL`.
    pub fn is_null(data_type: &DataType) -> Self {
        Self::new(data_type.clone(), ValueSet::empty(), NullResult::True)
    }

    /// `x IS NOT NULL`.
    pub fn is_not_null(data_type: &DataType) -> Self {
        Self::new(data_type.clone(), ValueSet::all(), NullResult::False)
    }

    /// A boolean column used as a predicate: `x` (same as `x = true`).
    pub fn is_true() -> Self {
        let set = ValueSet::range(ValueRange::point(ScalarValue::Boolean(Some(true))));
        Self::new(DataType::Boolean, set, NullResult::Unknown)
    }

    /// Rows passing both filters; `None` when the filters compare in different types (the
    /// two stay separate, or residual).
    pub fn and(&self, other: &Self) -> Option<Self> {
        self.combine(other, ValueSet::intersect, NullResult::and)
    }

    /// Rows passing either filter; `None` when the filters compare in different types (the
    /// predicate stays residual).
    pub fn or(&self, other: &Self) -> Option<Self> {
        self.combine(other, ValueSet::union, NullResult::or)
    }

    fn combine(
        &self,
        other: &Self,
        values: fn(&ValueSet, &ValueSet) -> datafusion::common::Result<ValueSet>,
        null: fn(NullResult, NullResult) -> NullResult,
    ) -> Option<Self> {
        if self.data_type != other.data_type {
            return None;
        }
        let values = match values(&self.values, &other.values) {
            Ok(values) => values,
            Err(e) => {
                // Kept residual (the rows stay right); the error is a bug to see in the log.
                log::debug!("filters not combined: {e}");
                return None;
            }
        };
        Some(Self::new(
            self.data_type.clone(),
            values,
            null(self.null, other.null),
        ))
    }

    /// `NOT filter`, exact under three-valued logic.
    pub fn not(&self) -> Self {
        Self::new(
            self.data_type.clone(),
            self.values.complement(),
            self.null.not(),
        )
    }

    /// The type the column is compared in.
    pub fn data_type(&self) -> &DataType {
        &self.data_type
    }

    /// Non-null values that pass.
    pub fn values(&self) -> &ValueSet {
        &self.values
    }

    /// What a NULL yields.
    pub fn null_result(&self) -> NullResult {
        self.null
    }

    /// True when no row can pass.
    pub fn is_always_false(&self) -> bool {
        self.values.is_empty() && self.null != NullResult::True
    }
}

/// Booleans have two values: keep the set as points so it reads `false`, not `(-∞, true)`.
fn boolean_points(values: &ValueSet) -> ValueSet {
    let points = [false, true]
        .map(|b| ScalarValue::Boolean(Some(b)))
        .into_iter()
        .filter(|v| values.contains(v))
        .map(ValueRange::point);
    // Booleans compare.
    ValueSet::from_comparable(points.collect())
}

impl fmt::Debug for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ranges = self.values.ranges();
        let mut parts: Vec<String> = if self.values.is_all() {
            vec!["NOT NULL".to_string()]
        } else if ranges.iter().all(|r| r.as_point().is_some()) && ranges.len() > 1 {
            let points: Vec<String> = ranges.iter().map(|r| r.to_string()).collect();
            vec![format!("IN ({})", points.join(", "))]
        } else {
            ranges.iter().map(|r| r.to_string()).collect()
        };
        if self.null == NullResult::True {
            parts.push("NULL".to_string());
        }
        if parts.is_empty() {
            return write!(f, "NONE");
        }
        write!(f, "{}", parts.join(" OR "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(v: i64) -> ScalarValue {
        ScalarValue::Int64(Some(v))
    }

    #[test]
    fn de_morgan_holds_under_three_valued_logic() {
        let t = DataType::Int64;
        let gt = Filter::compare(&t, Operator::Gt, &i(5)).unwrap();
        let null = Filter::is_null(&t);
        // NOT (x > 5 OR x IS NULL) == NOT x > 5 AND x IS NOT NULL
        let left = gt.or(&null).unwrap().not();
        let right = gt.not().and(&null.not()).unwrap();
        assert_eq!(left.values(), right.values());
        assert_eq!(left.null_result(), right.null_result());
        assert_eq!(left.null_result(), NullResult::False);
        // NOT (x > 5) keeps NULL unknown: the row is dropped either way.
        assert_eq!(gt.not().null_result(), NullResult::Unknown);
    }

    #[test]
    fn null_literal_and_type_mismatch_are_not_filters() {
        let t = DataType::Int64;
        assert!(Filter::compare(&t, Operator::Eq, &ScalarValue::Int64(None)).is_none());
        assert!(Filter::compare(&t, Operator::Eq, &ScalarValue::Int32(Some(1))).is_none());
        assert!(Filter::compare(&t, Operator::Plus, &i(1)).is_none());
    }

    #[test]
    fn contradiction_is_always_false() {
        let t = DataType::Int64;
        let a = Filter::compare(&t, Operator::Lt, &i(3)).unwrap();
        let b = Filter::compare(&t, Operator::Gt, &i(7)).unwrap();
        assert!(a.and(&b).unwrap().is_always_false());
        assert_eq!(a.or(&b).unwrap().to_string(), "(-∞, 3) OR (7, +∞)");
    }
}
