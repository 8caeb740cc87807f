//! Column statistics of row groups and pages, in table types, for pruning.
//!
//! Top-level columns go through parquet's `StatisticsConverter`; it only knows top-level
//! columns, so the statistics of a struct member's leaf are converted here
//! ([`leaf_min_max`]) for the common physical/logical type pairs (others are unknown).
//!
//! [`RowGroupStatistics`] is the Parquet side of `crate::format::UnitStatistics`, through
//! which `prune_units` prunes by each filter and by the residual's AND/OR tree. Constants of
//! the split (partition values, missing columns) answer as `min = max = value`.

use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray, UInt64Array};
use arrow::compute::kernels::cmp::lt;
use arrow::compute::{cast, is_null, nullif, or_kleene};
use arrow::datatypes::{DataType, Schema, TimeUnit};
use datafusion::common::{Result, ScalarValue};
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::basic::{ConvertedType, LogicalType, Type as PhysicalType};
use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};

use super::leaves::FileLeaves;
use super::legacy_times::FileTimes;
use crate::binding::{FieldSource, SplitBinding};
use crate::format::UnitStatistics;
use crate::scan_spec::ScanSpec;

pub use crate::format::StatsArrays;

/// The first value of `table_type` a [`crate::writer_times::TimeFix`] leaves as stored
/// (1582-10-15 for dates, 1900-01-01T00:00:00Z for timestamps); `None` for other types.
fn first_unchanged(table_type: &DataType) -> Option<ScalarValue> {
    let seconds = crate::writer_times::UTC_1900;
    Some(match table_type {
        DataType::Date32 => {
            ScalarValue::Date32(Some(crate::calendar::GREGORIAN_CUTOVER_DAY as i32))
        }
        DataType::Timestamp(unit, zone) => {
            let zone = zone.clone();
            match unit {
                TimeUnit::Second => ScalarValue::TimestampSecond(Some(seconds), zone),
                TimeUnit::Millisecond => {
                    ScalarValue::TimestampMillisecond(Some(seconds * 1_000), zone)
                }
                TimeUnit::Microsecond => {
                    ScalarValue::TimestampMicrosecond(Some(seconds * 1_000_000), zone)
                }
                TimeUnit::Nanosecond => {
                    ScalarValue::TimestampNanosecond(Some(seconds * 1_000_000_000), zone)
                }
            }
        }
        _ => return None,
    })
}

/// Row-group statistics of a file for one split's binding.
pub struct RowGroupStatistics<'a> {
    spec: &'a ScanSpec,
    binding: &'a SplitBinding,
    metadata: &'a ParquetMetaData,
    file_schema: &'a Schema,
    leaves: &'a FileLeaves,
    row_groups: &'a [usize],
    /// Columns whose values are fixed after decoding ([`FileTimes`]).
    times: Option<&'a FileTimes>,
}

impl<'a> RowGroupStatistics<'a> {
    /// Statistics of `row_groups` (indices into the file's row groups).
    pub fn new(
        spec: &'a ScanSpec,
        binding: &'a SplitBinding,
        metadata: &'a ParquetMetaData,
        file_schema: &'a Schema,
        leaves: &'a FileLeaves,
        row_groups: &'a [usize],
    ) -> Self {
        Self {
            spec,
            binding,
            metadata,
            file_schema,
            leaves,
            row_groups,
            times: None,
        }
    }

    /// The same, for a file whose dates and timestamps `times` fixes after decoding: their
    /// statistics describe the values as stored, so only row groups whose every value the
    /// fix leaves alone (dates from 1582-10-15, timestamps from 1900 on) keep them.
    pub fn with_times(mut self, times: &'a FileTimes) -> Self {
        self.times = Some(times);
        self
    }

    /// Statistics of the field at `field_index` of the spec, in its table type.
    pub fn field_stats(&self, field_index: usize) -> Result<Option<StatsArrays>> {
        let field = &self.spec.fields()[field_index];
        let table_type = &field.handle.data_type;
        let row_counts = self.row_counts();
        match &self.binding.sources()[field_index] {
            FieldSource::Constant(v) => Ok(Some(constant_stats(v, row_counts)?)),
            FieldSource::RowIndex => Ok(Some(self.row_index_stats(table_type, row_counts)?)),
            // A filled column's file statistics describe its placeholders, not its values.
            FieldSource::RowId(_) | FieldSource::Filled { .. } => Ok(None),
            FieldSource::File { root, .. } => {
                let name = self.file_schema.field(*root).name();
                let converter = StatisticsConverter::try_new(
                    name,
                    self.file_schema,
                    self.metadata.file_metadata().schema_descr(),
                )?;
                let groups = self.row_groups.iter().map(|&i| self.metadata.row_group(i));
                let mut mins = converter.row_group_mins(groups.clone())?;
                let mut maxes = converter.row_group_maxes(groups.clone())?;
                let null_counts = converter.row_group_null_counts(groups)?;
                if let Some(leaf) = converter.parquet_column_index() {
                    let distrusted: BooleanArray = self
                        .row_groups
                        .iter()
                        .map(|&i| Some(!min_max_trusted(self.metadata.row_group(i).column(leaf))))
                        .collect();
                    if distrusted.true_count() > 0 {
                        mins = nullif(&mins, &distrusted)?;
                        maxes = nullif(&maxes, &distrusted)?;
                    }
                }
                let (Ok(mut mins), Ok(mut maxes)) =
                    (cast(&mins, table_type), cast(&maxes, table_type))
                else {
                    return Ok(None);
                };
                if self.times.and_then(|t| t.fix(*root)).is_some() {
                    let Some(first_unchanged) = first_unchanged(table_type) else {
                        return Ok(None);
                    };
                    let changed = lt(&mins, &first_unchanged.to_scalar()?)?;
                    let changed = or_kleene(&changed, &is_null(&mins)?)?;
                    mins = nullif(&mins, &changed)?;
                    maxes = nullif(&maxes, &changed)?;
                }
                Ok(Some(StatsArrays {
                    mins,
                    maxes,
                    null_counts,
                    row_counts,
                }))
            }
        }
    }

    /// Statistics of struct member `path` (names) of the file column of field
    /// `field_index`, in `data_type` (the member's table type); `None` when unknown.
    pub fn member_stats(
        &self,
        field_index: usize,
        path: &[String],
        data_type: &DataType,
    ) -> Result<Option<StatsArrays>> {
        let FieldSource::File { root, file_type } = &self.binding.sources()[field_index] else {
            return Ok(None);
        };
        if self.times.and_then(|t| t.fix(*root)).is_some() {
            return Ok(None);
        }
        let member = crate::subfield::Subfield::nested("", path.to_vec());
        let leaves = self.leaves.struct_member(*root, path);
        let (Some(file_member_type), [leaf]) = (member.resolve_type(file_type), leaves.as_slice())
        else {
            return Ok(None);
        };
        let (mut mins, mut maxes, mut nulls) = (vec![], vec![], vec![]);
        for &rg in self.row_groups {
            let chunk = self.metadata.row_group(rg).column(*leaf);
            let stats = chunk.statistics();
            let (min, max) = stats
                .filter(|_| min_max_trusted(chunk))
                .and_then(|s| leaf_min_max(s, &file_member_type))
                .unwrap_or((None, None));
            mins.push(min.unwrap_or(ScalarValue::try_from(&file_member_type)?));
            maxes.push(max.unwrap_or(ScalarValue::try_from(&file_member_type)?));
            nulls.push(stats.and_then(|s| s.null_count_opt()));
        }
        let (Ok(mins), Ok(maxes)) = (
            ScalarValue::iter_to_array(mins).and_then(|a| Ok(cast(&a, data_type)?)),
            ScalarValue::iter_to_array(maxes).and_then(|a| Ok(cast(&a, data_type)?)),
        ) else {
            return Ok(None);
        };
        Ok(Some(StatsArrays {
            mins,
            maxes,
            null_counts: UInt64Array::from(nulls),
            row_counts: self.row_counts(),
        }))
    }

    /// A row group's positions are `[start, start + rows)`: exact bounds of the row index.
    fn row_index_stats(&self, t: &DataType, row_counts: UInt64Array) -> Result<StatsArrays> {
        let starts = super::row_index::row_group_starts(self.metadata);
        let bounds = |last: bool| {
            let starts = &starts;
            self.row_groups.iter().map(move |&rg| {
                let rows = self.metadata.row_group(rg).num_rows();
                Some(starts[rg] + if last { (rows - 1).max(0) } else { 0 })
            })
        };
        let mins: ArrayRef = Arc::new(arrow::array::Int64Array::from_iter(bounds(false)));
        let maxes: ArrayRef = Arc::new(arrow::array::Int64Array::from_iter(bounds(true)));
        let zeros = UInt64Array::from_iter_values(self.row_groups.iter().map(|_| 0));
        Ok(StatsArrays {
            mins: cast(&mins, t)?,
            maxes: cast(&maxes, t)?,
            null_counts: zeros,
            row_counts,
        })
    }

    fn row_counts(&self) -> UInt64Array {
        let rows = self
            .row_groups
            .iter()
            .map(|&i| self.metadata.row_group(i).num_rows() as u64);
        UInt64Array::from_iter_values(rows)
    }
}

impl UnitStatistics for RowGroupStatistics<'_> {
    fn field_stats(&self, field: usize) -> Result<Option<StatsArrays>> {
        RowGroupStatistics::field_stats(self, field)
    }

    fn member_stats(
        &self,
        field: usize,
        path: &[String],
        data_type: &DataType,
    ) -> Result<Option<StatsArrays>> {
        RowGroupStatistics::member_stats(self, field, path, data_type)
    }

    fn row_counts(&self) -> UInt64Array {
        RowGroupStatistics::row_counts(self)
    }
}

/// `min = max = value` for every container; a NULL constant is all nulls.
pub fn constant_stats(value: &ScalarValue, row_counts: UInt64Array) -> Result<StatsArrays> {
    let n = row_counts.len();
    let values = value.to_array_of_size(n)?;
    let null_counts = if value.is_null() {
        row_counts.clone()
    } else {
        UInt64Array::from_iter_values(std::iter::repeat_n(0, n))
    };
    Ok(StatsArrays {
        mins: Arc::clone(&values),
        maxes: values,
        null_counts,
        row_counts,
    })
}

/// Whether the min and max of `chunk`'s statistics are in the order of its values.
/// Writers before parquet-format 2.4 (parquet-mr before 1.10: Hive, Spark 2) kept only the
/// deprecated `min`/`max`, found by signed comparison: wrong for byte arrays (strings,
/// binary, decimals as bytes; a string starting with `é` sorted before `a`), INT96 and
/// unsigned integers. parquet-java ignores those unless min equals max; so does this, so
/// they never prune.
pub fn min_max_trusted(chunk: &ColumnChunkMetaData) -> bool {
    let Some(stats) = chunk.statistics() else {
        return true;
    };
    if !stats.is_min_max_deprecated() {
        return true;
    }
    let column = chunk.column_descr();
    let signed = match column.physical_type() {
        PhysicalType::BYTE_ARRAY | PhysicalType::FIXED_LEN_BYTE_ARRAY | PhysicalType::INT96 => {
            false
        }
        PhysicalType::INT32 | PhysicalType::INT64 => {
            let unsigned_logical = matches!(
                column.logical_type_ref(),
                Some(LogicalType::Integer {
                    is_signed: false,
                    ..
                })
            );
            let unsigned_converted = matches!(
                column.converted_type(),
                ConvertedType::UINT_8
                    | ConvertedType::UINT_16
                    | ConvertedType::UINT_32
                    | ConvertedType::UINT_64
            );
            !(unsigned_logical || unsigned_converted)
        }
        PhysicalType::BOOLEAN | PhysicalType::FLOAT | PhysicalType::DOUBLE => true,
    };
    signed || (stats.min_bytes_opt().is_some() && stats.min_bytes_opt() == stats.max_bytes_opt())
}

/// Min and max of one leaf's column-chunk statistics as values of `t` (the leaf's Arrow
/// type in the file); `None` for pairs not handled (unknown statistics never prune).
pub fn leaf_min_max(
    stats: &parquet::file::statistics::Statistics,
    t: &DataType,
) -> Option<(Option<ScalarValue>, Option<ScalarValue>)> {
    use parquet::file::statistics::Statistics as S;
    let pair = |min: Option<ScalarValue>, max: Option<ScalarValue>| Some((min, max));
    match (stats, t) {
        (S::Boolean(v), DataType::Boolean) => pair(
            v.min_opt().map(|x| ScalarValue::Boolean(Some(*x))),
            v.max_opt().map(|x| ScalarValue::Boolean(Some(*x))),
        ),
        (S::Int32(v), DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Date32) => {
            let of = |x: &i32| ScalarValue::Int32(Some(*x)).cast_to(t).ok();
            pair(v.min_opt().and_then(of), v.max_opt().and_then(of))
        }
        (S::Int64(v), DataType::Int64 | DataType::Timestamp(..)) => {
            let of = |x: &i64| ScalarValue::Int64(Some(*x)).cast_to(t).ok();
            pair(v.min_opt().and_then(of), v.max_opt().and_then(of))
        }
        (S::Float(v), DataType::Float32) => pair(
            v.min_opt().map(|x| ScalarValue::Float32(Some(*x))),
            v.max_opt().map(|x| ScalarValue::Float32(Some(*x))),
        ),
        (S::Double(v), DataType::Float64) => pair(
            v.min_opt().map(|x| ScalarValue::Float64(Some(*x))),
            v.max_opt().map(|x| ScalarValue::Float64(Some(*x))),
        ),
        (S::ByteArray(v), DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) => {
            let of = |x: &parquet::data_type::ByteArray| {
                let text = std::str::from_utf8(x.data()).ok()?;
                ScalarValue::Utf8(Some(text.to_string())).cast_to(t).ok()
            };
            pair(v.min_opt().and_then(of), v.max_opt().and_then(of))
        }
        (S::Int32(v), DataType::Decimal128(p, s)) => {
            let of = |x: &i32| Some(ScalarValue::Decimal128(Some(*x as i128), *p, *s));
            pair(v.min_opt().and_then(of), v.max_opt().and_then(of))
        }
        (S::Int64(v), DataType::Decimal128(p, s)) => {
            let of = |x: &i64| Some(ScalarValue::Decimal128(Some(*x as i128), *p, *s));
            pair(v.min_opt().and_then(of), v.max_opt().and_then(of))
        }
        _ => None,
    }
}
