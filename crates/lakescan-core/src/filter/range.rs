//! Interval algebra over one typed value domain.
//!
//! A [`ValueSet`] is a sorted union of disjoint [`ValueRange`]s. Union, intersection and
//! complement are exact, so merging filters never changes results. Values are compared with
//! [`compare_values`], which orders floats by IEEE total order — the same order arrow's
//! comparison kernels (and so DataFusion) use: `-0.0 < +0.0`, `NaN` above `+inf`.
//!
//! ```text
//!   a: ----[1====5)-----------[8====∞
//!   b: ==========3]-----[6=========9]--
//!   a ∩ b:  [1==3]            [8==9]
//! ```

use std::cmp::Ordering;
use std::fmt;

use datafusion::common::{Result, ScalarValue, internal_err};
use serde::{Deserialize, Serialize};

/// Compares two non-null values of the same type in the order arrow's kernels use.
/// Returns `None` when the values are not comparable (different types).
pub fn compare_values(a: &ScalarValue, b: &ScalarValue) -> Option<Ordering> {
    a.partial_cmp(b)
}

/// One end of a [`ValueRange`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Bound {
    /// No limit on this side.
    Unbounded,
    /// The value itself belongs to the range.
    Included(#[serde(with = "crate::wire::scalar")] ScalarValue),
    /// The value itself does not belong to the range.
    Excluded(#[serde(with = "crate::wire::scalar")] ScalarValue),
}

impl Bound {
    fn value(&self) -> Option<&ScalarValue> {
        match self {
            Bound::Unbounded => None,
            Bound::Included(v) | Bound::Excluded(v) => Some(v),
        }
    }
}

/// A contiguous range of non-null values: `low .. high` with open or closed ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValueRange {
    /// Lower end.
    pub low: Bound,
    /// Upper end.
    pub high: Bound,
}

impl ValueRange {
    /// Every non-null value.
    pub fn all() -> Self {
        Self {
            low: Bound::Unbounded,
            high: Bound::Unbounded,
        }
    }

    /// Exactly `v`.
    pub fn point(v: ScalarValue) -> Self {
        Self {
            low: Bound::Included(v.clone()),
            high: Bound::Included(v),
        }
    }

    /// The single value if this range is a point.
    pub fn as_point(&self) -> Option<&ScalarValue> {
        match (&self.low, &self.high) {
            (Bound::Included(a), Bound::Included(b)) if a == b => Some(a),
            _ => None,
        }
    }

    /// True when `v` lies in the range.
    pub fn contains(&self, v: &ScalarValue) -> bool {
        !low_after(&self.low, v) && !high_before(&self.high, v)
    }

    /// True when the range shares at least one value with `[min, max]`.
    pub fn overlaps(&self, min: &ScalarValue, max: &ScalarValue) -> bool {
        !high_before(&self.high, min) && !low_after(&self.low, max)
    }

    fn is_empty(&self) -> bool {
        match (self.low.value(), self.high.value()) {
            (Some(l), Some(h)) => match compare_values(l, h) {
                Some(Ordering::Greater) => true,
                Some(Ordering::Equal) => !matches!(
                    (&self.low, &self.high),
                    (Bound::Included(_), Bound::Included(_))
                ),
                _ => false,
            },
            _ => false,
        }
    }
}

/// True when every value of the range is above `v` (`v` is left of the low bound).
/// Incomparable values answer false: unknown never excludes.
fn low_after(low: &Bound, v: &ScalarValue) -> bool {
    match low {
        Bound::Unbounded => false,
        Bound::Included(l) => compare_values(v, l) == Some(Ordering::Less),
        Bound::Excluded(l) => {
            matches!(compare_values(v, l), Some(Ordering::Less | Ordering::Equal))
        }
    }
}

/// True when every value of the range is below `v`.
fn high_before(high: &Bound, v: &ScalarValue) -> bool {
    match high {
        Bound::Unbounded => false,
        Bound::Included(h) => compare_values(v, h) == Some(Ordering::Greater),
        Bound::Excluded(h) => {
            matches!(
                compare_values(v, h),
                Some(Ordering::Greater | Ordering::Equal)
            )
        }
    }
}

/// Orders two lower bounds: which one starts first.
fn cmp_low(a: &Bound, b: &Bound) -> Ordering {
    match (a, b) {
        (Bound::Unbounded, Bound::Unbounded) => Ordering::Equal,
        (Bound::Unbounded, _) => Ordering::Less,
        (_, Bound::Unbounded) => Ordering::Greater,
        _ => cmp_bound_values(a, b, Ordering::Less),
    }
}

/// Orders two upper bounds: which one ends first.
fn cmp_high(a: &Bound, b: &Bound) -> Ordering {
    match (a, b) {
        (Bound::Unbounded, Bound::Unbounded) => Ordering::Equal,
        (Bound::Unbounded, _) => Ordering::Greater,
        (_, Bound::Unbounded) => Ordering::Less,
        _ => cmp_bound_values(a, b, Ordering::Greater),
    }
}

/// Compares two finite bounds; on equal values an included bound sorts `included_first`.
/// Only called on bounds of one value set, whose values compare ([`ValueSet::from_ranges`]
/// checks it): the `Equal` of an incomparable pair is never taken.
fn cmp_bound_values(a: &Bound, b: &Bound, included_first: Ordering) -> Ordering {
    let (Some(va), Some(vb)) = (a.value(), b.value()) else {
        return Ordering::Equal;
    };
    match compare_values(va, vb).unwrap_or(Ordering::Equal) {
        Ordering::Equal => match (a, b) {
            (Bound::Included(_), Bound::Excluded(_)) => included_first,
            (Bound::Excluded(_), Bound::Included(_)) => included_first.reverse(),
            _ => Ordering::Equal,
        },
        other => other,
    }
}

/// True when a range ending at `high` touches or overlaps one starting at `low`.
fn touches(high: &Bound, low: &Bound) -> bool {
    match (high.value(), low.value()) {
        (None, _) | (_, None) => true,
        (Some(h), Some(l)) => match compare_values(h, l) {
            Some(Ordering::Greater) => true,
            Some(Ordering::Equal) => {
                matches!(high, Bound::Included(_)) || matches!(low, Bound::Included(_))
            }
            _ => false,
        },
    }
}

/// A sorted union of disjoint, non-empty [`ValueRange`]s.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ValueSet {
    ranges: Vec<ValueRange>,
}

impl ValueSet {
    /// No value at all.
    pub fn empty() -> Self {
        Self { ranges: vec![] }
    }

    /// Every non-null value.
    pub fn all() -> Self {
        Self {
            ranges: vec![ValueRange::all()],
        }
    }

    /// The one range `range` (its two bounds are values of one type, or unbounded).
    pub fn range(range: ValueRange) -> Self {
        Self::from_comparable(vec![range])
    }

    /// Builds a normalized set from arbitrary ranges. Their values must be comparable with
    /// each other (one type): an internal error otherwise (a filter is typed by its column,
    /// so mixed values are a bug, never something to order arbitrarily).
    pub fn from_ranges(ranges: impl IntoIterator<Item = ValueRange>) -> Result<Self> {
        let ranges: Vec<ValueRange> = ranges.into_iter().collect();
        let mixed = {
            let mut values = ranges.iter().flat_map(|r| [r.low.value(), r.high.value()]);
            let first = values.by_ref().flatten().next();
            first.and_then(|a| {
                let b = values.flatten().find(|v| compare_values(a, v).is_none())?;
                Some(format!("{a:?} and {b:?}"))
            })
        };
        if let Some(pair) = mixed {
            return internal_err!("a value set mixes values that do not compare: {pair}");
        }
        Ok(Self::from_comparable(ranges))
    }

    /// [`Self::from_ranges`] of ranges whose values are known to compare with each other:
    /// every comparison below is `Some`, so the `Equal` of a `None` is never taken.
    pub(super) fn from_comparable(ranges: Vec<ValueRange>) -> Self {
        let mut ranges: Vec<ValueRange> = ranges.into_iter().filter(|r| !r.is_empty()).collect();
        ranges.sort_by(|a, b| cmp_low(&a.low, &b.low));
        let mut merged: Vec<ValueRange> = Vec::with_capacity(ranges.len());
        for r in ranges {
            match merged.last_mut() {
                Some(last) if touches(&last.high, &r.low) => {
                    if cmp_high(&r.high, &last.high) == Ordering::Greater {
                        last.high = r.high;
                    }
                }
                _ => merged.push(r),
            }
        }
        Self { ranges: merged }
    }

    /// The ranges, sorted and disjoint.
    pub fn ranges(&self) -> &[ValueRange] {
        &self.ranges
    }

    /// True when no value belongs to the set.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// True when every non-null value belongs to the set.
    pub fn is_all(&self) -> bool {
        matches!(self.ranges.as_slice(), [r] if r.low == Bound::Unbounded && r.high == Bound::Unbounded)
    }

    /// True when `v` belongs to the set. `O(log n)`.
    pub fn contains(&self, v: &ScalarValue) -> bool {
        self.overlaps(v, v)
    }

    /// True when some value of the set lies in `[min, max]`. `O(log n)`: the ranges are
    /// sorted, so the first range not entirely below `min` is the only candidate.
    pub fn overlaps(&self, min: &ScalarValue, max: &ScalarValue) -> bool {
        let first = self.ranges.partition_point(|r| high_before(&r.high, min));
        self.ranges.get(first).is_some_and(|r| r.overlaps(min, max))
    }

    /// Values in either set (an internal error when their values do not compare).
    pub fn union(&self, other: &Self) -> Result<Self> {
        Self::from_ranges(self.ranges.iter().chain(&other.ranges).cloned())
    }

    /// Values in both sets: a merge of the two sorted lists, `O(n + m)` (an internal error
    /// when their values do not compare).
    pub fn intersect(&self, other: &Self) -> Result<Self> {
        if let (Some(a), Some(b)) = (self.first_value(), other.first_value())
            && compare_values(a, b).is_none()
        {
            return internal_err!(
                "intersecting value sets of values that do not compare: {a:?} and {b:?}"
            );
        }
        let (a, b) = (&self.ranges, &other.ranges);
        let (mut i, mut j) = (0, 0);
        let mut out = vec![];
        while i < a.len() && j < b.len() {
            let low = if cmp_low(&a[i].low, &b[j].low) == Ordering::Greater {
                &a[i].low
            } else {
                &b[j].low
            };
            let a_ends_first = cmp_high(&a[i].high, &b[j].high) != Ordering::Greater;
            let high = if a_ends_first { &a[i].high } else { &b[j].high };
            out.push(ValueRange {
                low: low.clone(),
                high: high.clone(),
            });
            if a_ends_first {
                i += 1;
            } else {
                j += 1;
            }
        }
        Ok(Self::from_comparable(out))
    }

    /// A value of the set, when it has a finite bound.
    fn first_value(&self) -> Option<&ScalarValue> {
        self.ranges
            .iter()
            .find_map(|r| r.low.value().or_else(|| r.high.value()))
    }

    /// Non-null values not in the set.
    pub fn complement(&self) -> Self {
        let mut out = vec![];
        let mut low = Bound::Unbounded;
        let mut open_end = true;
        for r in &self.ranges {
            let high = match &r.low {
                Bound::Unbounded => None,
                Bound::Included(v) => Some(Bound::Excluded(v.clone())),
                Bound::Excluded(v) => Some(Bound::Included(v.clone())),
            };
            if let Some(high) = high {
                out.push(ValueRange {
                    low: low.clone(),
                    high,
                });
            }
            match &r.high {
                Bound::Unbounded => {
                    open_end = false;
                    break;
                }
                Bound::Included(v) => low = Bound::Excluded(v.clone()),
                Bound::Excluded(v) => low = Bound::Included(v.clone()),
            }
        }
        if open_end {
            out.push(ValueRange {
                low,
                high: Bound::Unbounded,
            });
        }
        // The bounds are this set's own: they compare.
        Self::from_comparable(out)
    }
}

impl fmt::Display for ValueRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(v) = self.as_point() {
            return write!(f, "{v}");
        }
        match &self.low {
            Bound::Unbounded => write!(f, "(-∞")?,
            Bound::Included(v) => write!(f, "[{v}")?,
            Bound::Excluded(v) => write!(f, "({v}")?,
        }
        match &self.high {
            Bound::Unbounded => write!(f, ", +∞)"),
            Bound::Included(v) => write!(f, ", {v}]"),
            Bound::Excluded(v) => write!(f, ", {v})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(v: i64) -> ScalarValue {
        ScalarValue::Int64(Some(v))
    }
    fn r(low: Bound, high: Bound) -> ValueRange {
        ValueRange { low, high }
    }

    /// Values that do not compare never make a set (they would sort as equal): an
    /// internal error, and `Filter::in_list` / `Filter::and` leave the predicate residual.
    #[test]
    fn values_that_do_not_compare_are_refused() {
        let f = |v: f64| ScalarValue::Float64(Some(v));
        let mixed = [ValueRange::point(i(1)), ValueRange::point(f(1.0))];
        let err = ValueSet::from_ranges(mixed).unwrap_err().to_string();
        assert!(err.contains("mixes values that do not compare"), "{err}");
        let ints = ValueSet::range(ValueRange::point(i(1)));
        let floats = ValueSet::range(ValueRange::point(f(1.0)));
        assert!(ints.intersect(&floats).is_err());
        assert!(ints.union(&floats).is_err());
        let decimal = |v, s| ScalarValue::Decimal128(Some(v), 10, s);
        let t = arrow::datatypes::DataType::Decimal128(10, 2);
        assert!(crate::filter::Filter::in_list(&t, &[decimal(1, 2), decimal(2, 3)]).is_none());
    }

    #[test]
    fn union_merges_touching_ranges() {
        let a = ValueSet::from_ranges([r(Bound::Included(i(1)), Bound::Excluded(i(5)))]).unwrap();
        let b = ValueSet::from_ranges([r(Bound::Included(i(5)), Bound::Included(i(7)))]).unwrap();
        let u = a.union(&b).unwrap();
        assert_eq!(
            u.ranges(),
            &[r(Bound::Included(i(1)), Bound::Included(i(7)))]
        );
    }

    #[test]
    fn intersect_and_complement_are_exact() {
        let a = ValueSet::from_ranges([r(Bound::Included(i(1)), Bound::Excluded(i(5)))]).unwrap();
        let c = a.complement();
        assert_eq!(
            c.ranges(),
            &[
                r(Bound::Unbounded, Bound::Excluded(i(1))),
                r(Bound::Included(i(5)), Bound::Unbounded)
            ]
        );
        assert!(a.intersect(&c).unwrap().is_empty());
        assert!(a.union(&c).unwrap().is_all());
        assert_eq!(c.complement(), a);
    }

    #[test]
    fn point_exclusion_and_overlap() {
        let not_three = ValueSet::from_ranges([ValueRange::point(i(3))])
            .unwrap()
            .complement();
        assert!(!not_three.contains(&i(3)));
        assert!(not_three.contains(&i(2)));
        assert!(!not_three.overlaps(&i(3), &i(3)));
        assert!(not_three.overlaps(&i(3), &i(4)));
    }

    #[test]
    fn many_points_intersect_and_search() {
        let evens = ValueSet::from_ranges((0..1000).map(|v| ValueRange::point(i(v * 2)))).unwrap();
        let window =
            ValueSet::from_ranges([r(Bound::Included(i(10)), Bound::Excluded(i(20)))]).unwrap();
        let both = evens.intersect(&window).unwrap();
        let points: Vec<String> = both.ranges().iter().map(|r| r.to_string()).collect();
        assert_eq!(points, ["10", "12", "14", "16", "18"]);
        assert!(evens.contains(&i(1998)) && !evens.contains(&i(1999)));
        assert!(evens.overlaps(&i(3), &i(4)) && !evens.overlaps(&i(2001), &i(3000)));
        assert_eq!(window.intersect(&evens).unwrap(), both);
    }

    #[test]
    fn floats_use_total_order() {
        let f = |v: f64| ScalarValue::Float64(Some(v));
        let above_zero =
            ValueSet::from_ranges([r(Bound::Excluded(f(0.0)), Bound::Unbounded)]).unwrap();
        assert!(above_zero.contains(&f(f64::NAN)));
        assert!(!above_zero.contains(&f(-0.0)));
        assert!(!above_zero.contains(&f(0.0)));
    }
}
