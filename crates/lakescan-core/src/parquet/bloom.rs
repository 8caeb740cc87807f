//! Bloom-filter pruning of row groups for point filters (`x = v`, `x IN (…)`).
//!
//! A row group whose column has a Split Block Bloom Filter that contains none of a filter's
//! points holds no matching row. Only filters that are a small set of points on a top-level
//! column, and that reject NULL, qualify. A point is probed in the column's *physical*
//! representation: it is first cast to the file column's Arrow type (and back, to prove the
//! cast lost nothing), then encoded as Parquet stores it. Values without a reliable encoding
//! (NaN, INT96, unsigned types in INT32, decimals in BYTE_ARRAY, …) answer "maybe present".
//! `-0.0` and `+0.0` are equal in SQL but hash differently, so both are probed.
//!
//! The probing mirrors DataFusion's `BloomFilterStatistics::check_scalar`, except that a
//! decimal stored as FIXED_LEN_BYTE_ARRAY is probed with exactly the column's byte width
//! (DataFusion always uses 16 bytes, which never matches narrower columns).

use arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use parquet::basic::Type as PhysicalType;
use parquet::bloom_filter::Sbbf;
use parquet::data_type::{ByteArray, FixedLenByteArray};
use parquet::schema::types::ColumnDescriptor;

use crate::filter::{Filter, NullResult};

/// Filters with more points than this are not probed.
pub const MAX_PROBES: usize = 64;

/// The points of `filter` when it is a small set of values that rejects NULL.
pub fn probe_points(filter: &Filter) -> Option<Vec<ScalarValue>> {
    if filter.null_result() == NullResult::True {
        return None;
    }
    let ranges = filter.values().ranges();
    if ranges.is_empty() || ranges.len() > MAX_PROBES {
        return None;
    }
    ranges.iter().map(|r| r.as_point().cloned()).collect()
}

/// False when the bloom filter proves that no value in `points` (of the filter's type) is
/// in the column chunk described by `column` (whose file Arrow type is `file_type`).
pub fn may_contain(
    sbbf: &Sbbf,
    column: &ColumnDescriptor,
    file_type: &DataType,
    points: &[ScalarValue],
) -> bool {
    points.iter().any(|p| match in_file_type(p, file_type) {
        Some(v) => probe(sbbf, column, &v),
        None => true,
    })
}

/// `value` as a value of the file column's type, when that is exact.
fn in_file_type(value: &ScalarValue, file_type: &DataType) -> Option<ScalarValue> {
    let file_type = match file_type {
        DataType::Dictionary(_, v) => v.as_ref(),
        t => t,
    };
    let cast = value.cast_to(file_type).ok()?;
    let back = cast.cast_to(&value.data_type()).ok()?;
    (back == *value && !cast.is_null()).then_some(cast)
}

/// Whether the bloom filter may contain `value` (already of the file column's type).
fn probe(sbbf: &Sbbf, column: &ColumnDescriptor, value: &ScalarValue) -> bool {
    use ScalarValue as S;
    match (column.physical_type(), value) {
        (PhysicalType::BOOLEAN, S::Boolean(Some(v))) => sbbf.check(v),
        (PhysicalType::INT32, S::Int8(Some(v))) => sbbf.check(&(*v as i32)),
        (PhysicalType::INT32, S::Int16(Some(v))) => sbbf.check(&(*v as i32)),
        (PhysicalType::INT32, S::Int32(Some(v)) | S::Date32(Some(v))) => sbbf.check(v),
        (PhysicalType::INT32, S::Decimal128(Some(v), _, _)) => match i32::try_from(*v) {
            Ok(v) => sbbf.check(&v),
            Err(_) => false,
        },
        (PhysicalType::INT64, S::Int64(Some(v)) | S::Date64(Some(v))) => sbbf.check(v),
        (
            PhysicalType::INT64,
            S::TimestampSecond(Some(v), _)
            | S::TimestampMillisecond(Some(v), _)
            | S::TimestampMicrosecond(Some(v), _)
            | S::TimestampNanosecond(Some(v), _),
        ) => sbbf.check(v),
        (PhysicalType::INT64, S::Decimal128(Some(v), _, _)) => match i64::try_from(*v) {
            Ok(v) => sbbf.check(&v),
            Err(_) => false,
        },
        (PhysicalType::FLOAT, S::Float32(Some(v))) if !v.is_nan() => {
            sbbf.check(v) || (*v == 0.0 && sbbf.check(&-*v))
        }
        (PhysicalType::DOUBLE, S::Float64(Some(v))) if !v.is_nan() => {
            sbbf.check(v) || (*v == 0.0 && sbbf.check(&-*v))
        }
        (
            PhysicalType::BYTE_ARRAY,
            S::Utf8(Some(v)) | S::LargeUtf8(Some(v)) | S::Utf8View(Some(v)),
        ) => sbbf.check(&ByteArray::from(v.as_bytes().to_vec())),
        (
            PhysicalType::BYTE_ARRAY,
            S::Binary(Some(v)) | S::LargeBinary(Some(v)) | S::BinaryView(Some(v)),
        ) => sbbf.check(&ByteArray::from(v.clone())),
        (PhysicalType::FIXED_LEN_BYTE_ARRAY, S::FixedSizeBinary(_, Some(v))) => {
            sbbf.check(&FixedLenByteArray::from(v.clone()))
        }
        (PhysicalType::FIXED_LEN_BYTE_ARRAY, S::Decimal128(Some(v), _, _)) => {
            match fixed_width_big_endian(*v, column.type_length()) {
                Some(bytes) => sbbf.check(&FixedLenByteArray::from(bytes)),
                None => false,
            }
        }
        _ => true,
    }
}

/// `v` as `width` big-endian two's-complement bytes; `None` when it does not fit (then no
/// value of the column can equal it).
fn fixed_width_big_endian(v: i128, width: i32) -> Option<Vec<u8>> {
    let width = usize::try_from(width).ok()?;
    let full = v.to_be_bytes();
    if width >= full.len() {
        let fill = if v < 0 { 0xff } else { 0 };
        let mut out = vec![fill; width - full.len()];
        out.extend_from_slice(&full);
        return Some(out);
    }
    let (dropped, kept) = full.split_at(full.len() - width);
    let sign = if v < 0 { 0xff } else { 0 };
    let sign_kept = kept.first().is_some_and(|b| (b & 0x80 != 0) == (v < 0));
    (dropped.iter().all(|b| *b == sign) && sign_kept).then(|| kept.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_bytes_fit_the_column_width() {
        assert_eq!(fixed_width_big_endian(1, 3), Some(vec![0, 0, 1]));
        assert_eq!(fixed_width_big_endian(-1, 3), Some(vec![0xff, 0xff, 0xff]));
        assert_eq!(fixed_width_big_endian(128, 1), None);
        assert_eq!(fixed_width_big_endian(-128, 1), Some(vec![0x80]));
        assert_eq!(fixed_width_big_endian(1 << 20, 2), None);
        assert_eq!(fixed_width_big_endian(5, 17).map(|b| b.len()), Some(17));
    }

    #[test]
    fn only_small_null_rejecting_point_sets_are_probed() {
        use datafusion::logical_expr::Operator;
        let t = DataType::Int64;
        let eq = Filter::compare(&t, Operator::Eq, &ScalarValue::Int64(Some(4))).unwrap();
        assert_eq!(probe_points(&eq), Some(vec![ScalarValue::Int64(Some(4))]));
        let gt = Filter::compare(&t, Operator::Gt, &ScalarValue::Int64(Some(4))).unwrap();
        assert_eq!(probe_points(&gt), None);
        let or_null = eq.or(&Filter::is_null(&t)).unwrap();
        assert_eq!(probe_points(&or_null), None);
    }
}
