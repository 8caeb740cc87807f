//! What a partition value of a non-identity transform says about its source column, for
//! pruning manifests and data files with the scan's per-column filters.
//!
//! | transform           | a partition value `p` means the source value is in            |
//! |---------------------|----------------------------------------------------------------|
//! | `year`, `month`     | the dates / timestamps of that year or month (from 1970)       |
//! | `day`, `hour`       | the timestamps of that day or hour (a `day` of a date: that date) |
//! | `truncate[W]` (int, long, decimal) | `[p, p + W - 1]` (unscaled for decimals)       |
//! | `bucket[N]`         | the values whose Iceberg bucket is `p`: a filter of finitely many points matches when one of them hashes to `p` (the `iceberg` crate's hash) |
//! | `void`, `truncate` of strings and binaries | nothing usable: the file is kept   |
//!
//! A NULL partition value means a NULL source value (every transform maps NULL to NULL).
//! Hand-written: the `iceberg` crate projects its own predicates through transforms
//! (`Transform::project`), not DataFusion filters; the hash itself is the crate's.

use arrow::datatypes::{DataType, TimeUnit};
use chrono::NaiveDate;
use datafusion::common::ScalarValue;
use iceberg::spec::{Datum, PrimitiveLiteral, Transform};
use iceberg::transform::create_transform_function;
use lakescan_core::api::{ColumnStats, Filter};

const MICROS_PER_HOUR: i64 = 3_600_000_000;
const MICROS_PER_DAY: i64 = 24 * MICROS_PER_HOUR;

/// False when no source value of the partition value `p` (of `transform`) can pass
/// `filter`; `source` is the Arrow type of the source column.
pub fn may_match(
    transform: &Transform,
    source: &DataType,
    p: Option<&PrimitiveLiteral>,
    filter: &Filter,
) -> bool {
    let Some(p) = p else {
        return filter.test_constant(&ScalarValue::Null);
    };
    if let Transform::Bucket(n) = transform {
        return bucket_may_match(*n, source, p, filter);
    }
    match preimage(transform, source, p, p) {
        Some((min, max)) => filter.may_match(&bounds(min, max)),
        None => true,
    }
}

/// False when no source value of partition values in `[lower, upper]` can pass `filter`
/// (a manifest's partition summary). Only for order-preserving transforms.
pub fn range_may_match(
    transform: &Transform,
    source: &DataType,
    lower: &PrimitiveLiteral,
    upper: &PrimitiveLiteral,
    filter: &Filter,
) -> bool {
    match preimage(transform, source, lower, upper) {
        Some((min, max)) => filter.may_match(&bounds(min, max)),
        None => true,
    }
}

fn bounds(min: ScalarValue, max: ScalarValue) -> ColumnStats {
    ColumnStats {
        min: Some(min),
        max: Some(max),
        null_count: Some(0),
        row_count: None,
        // Only dates, times, integers, decimals and strings have these transforms.
        nan_count: None,
    }
}

/// The smallest source value of partition value `lower` and the largest of `upper`, for
/// the order-preserving transforms (`None` for the others). Below the epoch the range
/// starts one unit earlier (`older_writers_lower`).
pub fn preimage(
    transform: &Transform,
    source: &DataType,
    lower: &PrimitiveLiteral,
    upper: &PrimitiveLiteral,
) -> Option<(ScalarValue, ScalarValue)> {
    use PrimitiveLiteral::{Int, Int128, Long};
    let widened;
    let lower = match (lower, older_writers_lower(transform, source, lower)) {
        (Int(_), Some(lo)) => {
            widened = Int(lo);
            &widened
        }
        _ => lower,
    };
    match (transform, lower, upper) {
        (Transform::Year, Int(lo), Int(hi)) => {
            let start = days_from_civil(1970 + i64::from(*lo), 1)?;
            let end = days_from_civil(1970 + i64::from(*hi) + 1, 1)?;
            days_range(source, start, end)
        }
        (Transform::Month, Int(lo), Int(hi)) => {
            let (lo, hi) = (i64::from(*lo), i64::from(*hi) + 1);
            let start = days_from_civil(1970 + lo.div_euclid(12), lo.rem_euclid(12) + 1)?;
            let end = days_from_civil(1970 + hi.div_euclid(12), hi.rem_euclid(12) + 1)?;
            days_range(source, start, end)
        }
        (Transform::Day, Int(lo), Int(hi)) => {
            days_range(source, i64::from(*lo), i64::from(*hi) + 1)
        }
        (Transform::Hour, Int(lo), Int(hi)) => {
            let start = i64::from(*lo).checked_mul(MICROS_PER_HOUR)?;
            let end = (i64::from(*hi) + 1).checked_mul(MICROS_PER_HOUR)?;
            micros_range(source, start, end)
        }
        (Transform::Truncate(w), lo, hi) => {
            let w = i128::from(*w);
            let (lo, hi) = match (lo, hi) {
                (Int(lo), Int(hi)) => (i128::from(*lo), i128::from(*hi)),
                (Long(lo), Long(hi)) => (i128::from(*lo), i128::from(*hi)),
                (Int128(lo), Int128(hi)) => (*lo, *hi),
                _ => return None,
            };
            let hi = hi.checked_add(w - 1)?;
            Some((number(source, lo)?, number(source, hi)?))
        }
        _ => None,
    }
}

/// The partition value a file of temporal partition value `lower` may hold rows of, when
/// an older writer wrote it: iceberg-rust ≤ 0.10 and Java ≤ 0.10 truncated pre-epoch values
/// toward zero, filing the last moments of a pre-epoch unit under the next one
/// (`day(1969-12-31 10:00) = 0`). Java's `ProjectionUtil.fixInclusiveTimeProjection` widens
/// inclusive projections below the epoch by one unit for year, month, day and hour of
/// timestamps and year and month of dates (`day` of a date never had the bug); so does this,
/// so no such file is pruned. `None` when `lower` needs no widening.
fn older_writers_lower(
    transform: &Transform,
    source: &DataType,
    lower: &PrimitiveLiteral,
) -> Option<i32> {
    let PrimitiveLiteral::Int(lo) = lower else {
        return None;
    };
    let temporal = match transform {
        Transform::Year | Transform::Month => true,
        Transform::Day | Transform::Hour => matches!(source, DataType::Timestamp(..)),
        _ => false,
    };
    (temporal && *lo <= 0).then(|| lo.saturating_sub(1))
}

/// Days since 1970-01-01 of the first day of `month` (1-12) of `year`.
fn days_from_civil(year: i64, month: i64) -> Option<i64> {
    let date = NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, u32::try_from(month).ok()?, 1)?;
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1)?;
    Some(date.signed_duration_since(epoch).num_days())
}

/// Source values of the days `[start, end)`.
fn days_range(source: &DataType, start: i64, end: i64) -> Option<(ScalarValue, ScalarValue)> {
    match source {
        DataType::Date32 => Some((
            ScalarValue::Date32(Some(i32::try_from(start).ok()?)),
            ScalarValue::Date32(Some(i32::try_from(end - 1).ok()?)),
        )),
        _ => micros_range(
            source,
            start.checked_mul(MICROS_PER_DAY)?,
            end.checked_mul(MICROS_PER_DAY)?,
        ),
    }
}

/// Source values of the microseconds `[start, end)`.
fn micros_range(source: &DataType, start: i64, end: i64) -> Option<(ScalarValue, ScalarValue)> {
    match source {
        DataType::Timestamp(TimeUnit::Microsecond, tz) => Some((
            ScalarValue::TimestampMicrosecond(Some(start), tz.clone()),
            ScalarValue::TimestampMicrosecond(Some(end - 1), tz.clone()),
        )),
        DataType::Timestamp(TimeUnit::Nanosecond, tz) => Some((
            ScalarValue::TimestampNanosecond(Some(start.checked_mul(1000)?), tz.clone()),
            ScalarValue::TimestampNanosecond(Some(end.checked_mul(1000)? - 1), tz.clone()),
        )),
        _ => None,
    }
}

fn number(source: &DataType, v: i128) -> Option<ScalarValue> {
    Some(match source {
        DataType::Int32 => ScalarValue::Int32(Some(i32::try_from(v).ok()?)),
        DataType::Int64 => ScalarValue::Int64(Some(i64::try_from(v).ok()?)),
        DataType::Decimal128(p, s) => ScalarValue::Decimal128(Some(v), *p, *s),
        _ => return None,
    })
}

/// Whether a point of `filter` hashes to bucket `p` (true when the filter is not a finite
/// set of points or a point's type has no Iceberg bucket hash here).
fn bucket_may_match(n: u32, source: &DataType, p: &PrimitiveLiteral, filter: &Filter) -> bool {
    let PrimitiveLiteral::Int(p) = p else {
        return true;
    };
    let points: Option<Vec<&ScalarValue>> = filter
        .values()
        .ranges()
        .iter()
        .map(|r| r.as_point())
        .collect();
    let Some(points) = points else {
        return true;
    };
    let Ok(hash) = create_transform_function(&Transform::Bucket(n)) else {
        return true;
    };
    for point in points {
        // A point the column's type cannot hold matches no row of it.
        let Ok(value) = point.cast_to(source) else {
            continue;
        };
        let Some(datum) = datum_of(&value) else {
            return true;
        };
        match hash.transform_literal(&datum) {
            Ok(Some(bucket)) if bucket.literal() == &PrimitiveLiteral::Int(*p) => return true,
            Ok(Some(_)) => {}
            _ => return true,
        }
    }
    false
}

/// The Iceberg value of a scalar, for the types bucketing hashes.
fn datum_of(value: &ScalarValue) -> Option<Datum> {
    Some(match value {
        ScalarValue::Int32(Some(v)) => Datum::int(*v),
        ScalarValue::Int64(Some(v)) => Datum::long(*v),
        ScalarValue::Date32(Some(v)) => Datum::date(*v),
        ScalarValue::Utf8(Some(v))
        | ScalarValue::Utf8View(Some(v))
        | ScalarValue::LargeUtf8(Some(v)) => Datum::string(v),
        ScalarValue::Binary(Some(v))
        | ScalarValue::BinaryView(Some(v))
        | ScalarValue::LargeBinary(Some(v)) => Datum::binary(v.clone()),
        ScalarValue::TimestampMicrosecond(Some(v), None) => Datum::timestamp_micros(*v),
        ScalarValue::TimestampMicrosecond(Some(v), Some(_)) => Datum::timestamptz_micros(*v),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::logical_expr::Operator;

    fn ts(micros: i64) -> ScalarValue {
        ScalarValue::TimestampMicrosecond(Some(micros), None)
    }

    #[test]
    fn temporal_partition_values_bound_their_source() {
        let t = DataType::Timestamp(TimeUnit::Microsecond, None);
        // day 19723 = 2024-01-01.
        let jan1 = 19723 * MICROS_PER_DAY;
        let ge_jan2 = Filter::compare(&t, Operator::GtEq, &ts(jan1 + MICROS_PER_DAY)).unwrap();
        let day = |d| PrimitiveLiteral::Int(d);
        assert!(!may_match(&Transform::Day, &t, Some(&day(19723)), &ge_jan2));
        assert!(may_match(&Transform::Day, &t, Some(&day(19724)), &ge_jan2));
        // month 648 = 2024-01: has days at and after Jan 2.
        assert!(may_match(&Transform::Month, &t, Some(&day(648)), &ge_jan2));
        assert!(!may_match(&Transform::Month, &t, Some(&day(647)), &ge_jan2));
        // year 53 = 2023.
        assert!(!may_match(&Transform::Year, &t, Some(&day(53)), &ge_jan2));
        // hour 473352 = 2024-01-01T00.
        assert!(!may_match(
            &Transform::Hour,
            &t,
            Some(&day(473_352)),
            &ge_jan2
        ));
        // A date column partitioned by month.
        let d = DataType::Date32;
        let eq = Filter::compare(&d, Operator::Eq, &ScalarValue::Date32(Some(19754))).unwrap();
        // 2024-02-01 is in month 649 (2024-02), not 648 (2024-01).
        assert!(may_match(&Transform::Month, &d, Some(&day(649)), &eq));
        assert!(!may_match(&Transform::Month, &d, Some(&day(648)), &eq));
        // A summary over months [600, 647] (2020-01 .. 2023-12) cannot hold 2024.
        assert!(!range_may_match(
            &Transform::Month,
            &t,
            &day(600),
            &day(647),
            &ge_jan2
        ));
        // NULL partition values: only filters that accept NULL.
        assert!(!may_match(&Transform::Day, &t, None, &ge_jan2));
        assert!(may_match(&Transform::Day, &t, None, &Filter::is_null(&t)));
    }

    /// Older writers filed the last moments of a pre-epoch unit under the next one
    /// (`day(1969-12-31 23:59:59) = 0`): partition values at or below 0 keep the unit
    /// before them (Java's `fixInclusiveTimeProjection`); `day` of a date never had the bug.
    #[test]
    fn pre_epoch_partitions_keep_the_unit_before_them() {
        let t = DataType::Timestamp(TimeUnit::Microsecond, None);
        let before_epoch = Filter::compare(&t, Operator::Lt, &ts(0)).unwrap();
        let p = |v| PrimitiveLiteral::Int(v);
        for transform in [
            Transform::Day,
            Transform::Hour,
            Transform::Month,
            Transform::Year,
        ] {
            assert!(may_match(&transform, &t, Some(&p(0)), &before_epoch));
            assert!(!may_match(&transform, &t, Some(&p(1)), &before_epoch));
            assert!(range_may_match(&transform, &t, &p(0), &p(3), &before_epoch));
        }
        // day -1 = 1969-12-31 may hold 1969-12-30 rows; day -2 holds none of the 31st.
        let dec31 = Filter::compare(&t, Operator::GtEq, &ts(-MICROS_PER_DAY)).unwrap();
        let dec30 = Filter::compare(&t, Operator::Lt, &ts(-MICROS_PER_DAY)).unwrap();
        assert!(may_match(&Transform::Day, &t, Some(&p(-1)), &dec30));
        assert!(!may_match(&Transform::Day, &t, Some(&p(-3)), &dec31));
        let d = DataType::Date32;
        let before = Filter::compare(&d, Operator::Lt, &ScalarValue::Date32(Some(0))).unwrap();
        assert!(!may_match(&Transform::Day, &d, Some(&p(0)), &before));
        assert!(may_match(&Transform::Month, &d, Some(&p(0)), &before));
        assert!(may_match(&Transform::Year, &d, Some(&p(0)), &before));
    }

    #[test]
    fn truncate_and_bucket() {
        let i = DataType::Int64;
        let eq = |v: i64| Filter::compare(&i, Operator::Eq, &ScalarValue::Int64(Some(v))).unwrap();
        let p = PrimitiveLiteral::Long(10);
        assert!(may_match(&Transform::Truncate(10), &i, Some(&p), &eq(19)));
        assert!(!may_match(&Transform::Truncate(10), &i, Some(&p), &eq(20)));
        // Iceberg's bucket[100] of the long 34 is 79 (spec Appendix B vectors).
        let bucket = |b| PrimitiveLiteral::Int(b);
        assert!(may_match(
            &Transform::Bucket(100),
            &i,
            Some(&bucket(79)),
            &eq(34)
        ));
        assert!(!may_match(
            &Transform::Bucket(100),
            &i,
            Some(&bucket(78)),
            &eq(34)
        ));
        let range = Filter::compare(&i, Operator::Gt, &ScalarValue::Int64(Some(34))).unwrap();
        assert!(may_match(
            &Transform::Bucket(100),
            &i,
            Some(&bucket(78)),
            &range
        ));
        // Strings: bucket[100] of "iceberg" is 89.
        let s = DataType::Utf8View;
        let name = Filter::compare(
            &s,
            Operator::Eq,
            &ScalarValue::Utf8View(Some("iceberg".into())),
        );
        let name = name.unwrap();
        assert!(may_match(
            &Transform::Bucket(100),
            &s,
            Some(&bucket(89)),
            &name
        ));
        assert!(!may_match(
            &Transform::Bucket(100),
            &s,
            Some(&bucket(88)),
            &name
        ));
    }
}
