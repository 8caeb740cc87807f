//! ORC column statistics of stripes (the file's metadata section) and of row groups (the
//! 10 000-row groups of a stripe's row index), in table types, for pruning
//! ([`crate::format::UnitStatistics`]).
//!
//! Every ORC column id has statistics, nested ones included, so struct members prune too.
//! Converted: integers, floats (minimum only: NaN is left out of maxima), strings (exact or truncated bounds,
//! both valid bounds), decimals (written as text), dates, booleans (true count). Unknown
//! (never prune): binary, timestamps (their statistics are milliseconds in the writer's
//! zone, or UTC since ORC-135, which old writers' files do not say reliably), unions and
//! collections, and the bounds a file's writer is known to have written wrong
//! ([`WriterFixes`]). A top-level column's null count is rows − values (unknown when the
//! statistics contradict themselves); a member's is unknown.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, UInt64Array};
use arrow::compute::cast;
use arrow::datatypes::DataType;
use datafusion::common::{Result, ScalarValue};
use orc_rust::proto;
use orc_rust::schema::DataType as OrcType;

use super::calendar::DayCalendar;
use super::file::OrcFile;
use crate::binding::{FieldSource, SplitBinding};
use crate::format::{StatsArrays, UnitStatistics};
use crate::parquet::statistics::constant_stats;
use crate::scan_spec::ScanSpec;

/// Which of a file's statistics its writer wrote soundly, by the postscript's writer
/// version and the footer's writer, as ORC's Java reader and Trino's decide:
///
/// * **strings** — writers before HIVE-8732 (writer version 0, `ORIGINAL`: Hive 0.11 and
///   0.12) ordered string bounds by Java's UTF-16 `compareTo`, in which a character outside
///   the Basic Multilingual Plane sorts below U+E000…U+FFFF, unlike its UTF-8 bytes: such
///   bounds are not bounds in the order filters compare in. Not used (Trino drops them);
/// * **decimals** — ORC's Java writer 1.5.0 to 1.5.5 (writer version 6, `ORC_135`) wrote
///   wrong bounds for decimals of precision 18 or less (ORC-517). Not used, as Java's reader
///   does.
///
/// Other writers (C++, Presto, Trino, …) count as having every Java fix, as in Java's
/// `WriterVersion.includes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriterFixes {
    /// String bounds are ordered as their UTF-8 bytes are.
    pub utf8_string_bounds: bool,
    /// Bounds of decimals of precision 18 or less are sound.
    pub decimal64_bounds: bool,
}

impl WriterFixes {
    /// The footer's id of ORC's Java writer (files of writers before ORC 1.5 have none).
    const JAVA_WRITER: u32 = 0;
    /// The writer version of HIVE-8732 (string statistics in UTF-8 order).
    const HIVE_8732: u32 = 1;
    /// The writer version of ORC-135, which ORC 1.5.0 to 1.5.5 wrote.
    const ORC_135: u32 = 6;

    /// The fixes of the writer of a file whose postscript says `writer_version` and whose
    /// footer says `writer`.
    pub fn of(writer_version: Option<u32>, writer: Option<u32>) -> Self {
        let version = writer_version.unwrap_or(0);
        let java = writer.unwrap_or(Self::JAVA_WRITER) == Self::JAVA_WRITER;
        Self {
            utf8_string_bounds: !java || version >= Self::HIVE_8732,
            decimal64_bounds: !(java && version == Self::ORC_135),
        }
    }
}

/// One unit (a stripe or a row group) with its rows and its columns' statistics by ORC
/// column id.
#[derive(Debug, Clone, Default)]
pub struct OrcUnit {
    /// File position of its first row.
    pub first_row: u64,
    /// Its rows.
    pub rows: u64,
    /// Statistics by ORC column id (ids without any are unknown).
    pub columns: HashMap<usize, proto::ColumnStatistics>,
}

/// Statistics of some units of an ORC file for one split's binding.
pub struct OrcStatistics<'a> {
    spec: &'a ScanSpec,
    binding: &'a SplitBinding,
    /// The file's top-level columns (ORC types by position).
    roots: &'a [orc_rust::schema::NamedColumn],
    units: &'a [OrcUnit],
    /// The calendar of the file's dates.
    calendar: DayCalendar,
    /// The statistics the file's writer wrote soundly.
    fixes: WriterFixes,
}

impl<'a> OrcStatistics<'a> {
    /// Statistics of `units` of `file`.
    pub fn new(
        spec: &'a ScanSpec,
        binding: &'a SplitBinding,
        file: &'a OrcFile,
        units: &'a [OrcUnit],
    ) -> Self {
        Self {
            spec,
            binding,
            roots: file.metadata.root_data_type().children(),
            units,
            calendar: DayCalendar::of(&file.footer),
            fixes: file.writer_fixes,
        }
    }

    fn row_counts(&self) -> UInt64Array {
        UInt64Array::from_iter_values(self.units.iter().map(|u| u.rows))
    }

    /// Min/max arrays of ORC column `id` (type `orc`, read as `arrow`) over the units, cast
    /// to `table_type`; `None` when they do not cast.
    fn min_max(
        &self,
        id: usize,
        orc: &OrcType,
        arrow: &DataType,
        table_type: &DataType,
    ) -> Result<Option<(ArrayRef, ArrayRef)>> {
        let unknown = ScalarValue::try_from(arrow)?;
        let (mut mins, mut maxes) = (vec![], vec![]);
        for unit in self.units {
            let (min, max) = unit
                .columns
                .get(&id)
                .map(|s| bounds(s, orc, arrow, self.calendar, self.fixes))
                .unwrap_or((None, None));
            mins.push(min.unwrap_or_else(|| unknown.clone()));
            maxes.push(max.unwrap_or_else(|| unknown.clone()));
        }
        let (Ok(mins), Ok(maxes)) = (
            ScalarValue::iter_to_array(mins).and_then(|a| Ok(cast(&a, table_type)?)),
            ScalarValue::iter_to_array(maxes).and_then(|a| Ok(cast(&a, table_type)?)),
        ) else {
            return Ok(None);
        };
        Ok(Some((mins, maxes)))
    }
}

impl UnitStatistics for OrcStatistics<'_> {
    fn field_stats(&self, field: usize) -> Result<Option<StatsArrays>> {
        let table_type = &self.spec.fields()[field].handle.data_type;
        let row_counts = self.row_counts();
        match &self.binding.sources()[field] {
            FieldSource::Constant(v) => Ok(Some(constant_stats(v, row_counts)?)),
            FieldSource::RowIndex => {
                let first = self.units.iter().map(|u| u.first_row as i64);
                let last = self
                    .units
                    .iter()
                    .map(|u| (u.first_row + u.rows.max(1) - 1) as i64);
                let (mins, maxes): (ArrayRef, ArrayRef) = (
                    Arc::new(Int64Array::from_iter_values(first)),
                    Arc::new(Int64Array::from_iter_values(last)),
                );
                Ok(Some(StatsArrays {
                    mins: cast(&mins, table_type)?,
                    maxes: cast(&maxes, table_type)?,
                    null_counts: UInt64Array::from_iter_values(self.units.iter().map(|_| 0)),
                    row_counts,
                }))
            }
            FieldSource::RowId(_) | FieldSource::Filled { .. } => Ok(None),
            FieldSource::File { root, file_type } => {
                let Some(orc) = self.roots.get(*root).map(|c| c.data_type()) else {
                    return Ok(None);
                };
                let id = orc.column_index();
                let Some((mins, maxes)) = self.min_max(id, orc, file_type, table_type)? else {
                    return Ok(None);
                };
                let nulls = self
                    .units
                    .iter()
                    .map(|u| null_count(u.columns.get(&id)?, u.rows));
                Ok(Some(StatsArrays {
                    mins,
                    maxes,
                    null_counts: UInt64Array::from_iter(nulls),
                    row_counts,
                }))
            }
        }
    }

    fn member_stats(
        &self,
        field: usize,
        path: &[String],
        data_type: &DataType,
    ) -> Result<Option<StatsArrays>> {
        let FieldSource::File { root, file_type } = &self.binding.sources()[field] else {
            return Ok(None);
        };
        let Some(mut orc) = self.roots.get(*root).map(|c| c.data_type()) else {
            return Ok(None);
        };
        let mut arrow = file_type.clone();
        for name in path {
            let (OrcType::Struct { children, .. }, DataType::Struct(fields)) = (orc, &arrow) else {
                return Ok(None);
            };
            // By position: the Arrow names are the table's (renamed by field id), the ORC
            // ones the file's.
            let Some((k, field)) = fields.find(name) else {
                return Ok(None);
            };
            let Some(child) = children.get(k) else {
                return Ok(None);
            };
            orc = child.data_type();
            arrow = field.data_type().clone();
        }
        let Some((mins, maxes)) = self.min_max(orc.column_index(), orc, &arrow, data_type)? else {
            return Ok(None);
        };
        Ok(Some(StatsArrays {
            mins,
            maxes,
            null_counts: UInt64Array::new_null(self.units.len()),
            row_counts: self.row_counts(),
        }))
    }

    fn row_counts(&self) -> UInt64Array {
        OrcStatistics::row_counts(self)
    }
}

/// The nulls among the `rows` rows a top-level column's statistics `s` cover: none when
/// they say so, else rows − values; unknown when they contradict themselves, saying there
/// is no null but counting fewer values than rows (Hive's minor compaction of ACID tables
/// wrote statistics of zero values without nulls, HIVE-20604; Trino drops them).
fn null_count(s: &proto::ColumnStatistics, rows: u64) -> Option<u64> {
    match (s.has_null, s.number_of_values) {
        (Some(false), Some(values)) if values != rows => None,
        (Some(false), _) => Some(0),
        (_, values) => rows.checked_sub(values?),
    }
}

/// Min and max of one column's statistics as values of `arrow` (the column's Arrow type in
/// the file), dates in the proleptic calendar; `None` when unknown, or when the file's
/// writer wrote them wrong (`fixes`).
fn bounds(
    s: &proto::ColumnStatistics,
    orc: &OrcType,
    arrow: &DataType,
    calendar: DayCalendar,
    fixes: WriterFixes,
) -> (Option<ScalarValue>, Option<ScalarValue>) {
    if s.number_of_values() == 0 {
        return (None, None);
    }
    let of = |v: ScalarValue| v.cast_to(arrow).ok();
    match orc {
        OrcType::Byte { .. }
        | OrcType::Short { .. }
        | OrcType::Int { .. }
        | OrcType::Long { .. } => {
            let Some(i) = &s.int_statistics else {
                return (None, None);
            };
            (
                i.minimum.and_then(|v| of(ScalarValue::Int64(Some(v)))),
                i.maximum.and_then(|v| of(ScalarValue::Int64(Some(v)))),
            )
        }
        OrcType::Float { .. } | OrcType::Double { .. } => {
            let Some(d) = &s.double_statistics else {
                return (None, None);
            };
            let (min, max) = (d.minimum, d.maximum);
            if min.is_some_and(f64::is_nan) || max.is_some_and(f64::is_nan) {
                return (None, None);
            }
            // NaN is the largest float in the order filters compare with, and writers
            // leave it out of the maximum: only the minimum bounds.
            (min.and_then(|v| of(ScalarValue::Float64(Some(v)))), None)
        }
        OrcType::String { .. } | OrcType::Varchar { .. } | OrcType::Char { .. } => {
            let Some(t) = s
                .string_statistics
                .as_ref()
                .filter(|_| fixes.utf8_string_bounds)
            else {
                return (None, None);
            };
            let text = |v: &Option<String>| v.clone().and_then(|v| of(ScalarValue::Utf8(Some(v))));
            // Truncated bounds (ORC-203) are still bounds: lower ≤ every value ≤ upper.
            let min = text(&t.minimum).or_else(|| text(&t.lower_bound));
            let max = text(&t.maximum).or_else(|| text(&t.upper_bound));
            // A CHAR's values are blank-padded; bounds written unpadded are not exact.
            match orc {
                OrcType::Char { .. } => (None, None),
                _ => (min, max),
            }
        }
        OrcType::Decimal { precision, .. } => {
            let sound = fixes.decimal64_bounds || *precision > 18;
            let Some(d) = s.decimal_statistics.as_ref().filter(|_| sound) else {
                return (None, None);
            };
            let text = |v: &Option<String>| {
                v.clone()
                    .and_then(|v| of(ScalarValue::Utf8(Some(v.trim().to_string()))))
            };
            (text(&d.minimum), text(&d.maximum))
        }
        OrcType::Date { .. } => {
            let Some(d) = &s.date_statistics else {
                return (None, None);
            };
            // The conversion keeps the order of days: bounds stay bounds.
            let date =
                |v: Option<i32>| v.and_then(|v| of(ScalarValue::Date32(Some(calendar.date(v)))));
            (date(d.minimum), date(d.maximum))
        }
        OrcType::Boolean { .. } => {
            let Some(true_count) = s.bucket_statistics.as_ref().and_then(|b| b.count.first())
            else {
                return (None, None);
            };
            let values = s.number_of_values();
            (
                Some(ScalarValue::Boolean(Some(*true_count >= values))),
                Some(ScalarValue::Boolean(Some(*true_count > 0))),
            )
        }
        _ => (None, None),
    }
}

/// The statistics of a whole ORC file (its footer's) over `file_schema` (a table's data
/// columns, in table types), for the optimizer: exact row and null counts, and minima and
/// maxima as inexact (ORC's may be truncated bounds, and they are never answers). Columns
/// bind by name, or by position in files whose columns are named `_col0`, `_col1`, … as
/// Hive's writer names them; a column not found is unknown.
pub fn file_statistics(
    file: &super::file::OrcFile,
    file_schema: &arrow::datatypes::Schema,
    file_size: u64,
) -> datafusion::common::Statistics {
    use datafusion::common::stats::Precision;
    use datafusion::common::{ColumnStatistics, Statistics};
    let roots = file.metadata.root_data_type().children();
    let positional = !roots.is_empty()
        && roots
            .iter()
            .enumerate()
            .all(|(k, c)| c.name() == format!("_col{k}"));
    let rows = file.footer.number_of_rows;
    let calendar = DayCalendar::of(&file.footer);
    let columns = file_schema
        .fields()
        .iter()
        .enumerate()
        .map(|(k, field)| {
            let root = match positional {
                true => (k < roots.len()).then_some(k),
                false => roots
                    .iter()
                    .position(|c| c.name() == field.name())
                    .or_else(|| {
                        roots
                            .iter()
                            .position(|c| c.name().eq_ignore_ascii_case(field.name()))
                    }),
            };
            let (Some(root), Some(rows)) = (root, rows) else {
                return ColumnStatistics::new_unknown();
            };
            let (Some(column), Some(arrow)) = (roots.get(root), file.schema.fields().get(root))
            else {
                return ColumnStatistics::new_unknown();
            };
            let orc = column.data_type();
            let Some(s) = file.footer.statistics.get(orc.column_index()) else {
                return ColumnStatistics::new_unknown();
            };
            let null_count = match null_count(s, rows) {
                Some(nulls) => Precision::Exact(nulls as usize),
                None => Precision::Absent,
            };
            let (min, max) = bounds(s, orc, arrow.data_type(), calendar, file.writer_fixes);
            let in_table_type =
                |v: Option<ScalarValue>| match v.and_then(|v| v.cast_to(field.data_type()).ok()) {
                    Some(v) if !v.is_null() => Precision::Inexact(v),
                    _ => Precision::Absent,
                };
            ColumnStatistics {
                null_count,
                max_value: in_table_type(max),
                min_value: in_table_type(min),
                ..ColumnStatistics::new_unknown()
            }
        })
        .collect();
    Statistics {
        num_rows: rows.map_or(Precision::Absent, |r| Precision::Exact(r as usize)),
        total_byte_size: Precision::Inexact(file_size as usize),
        column_statistics: columns,
    }
}
