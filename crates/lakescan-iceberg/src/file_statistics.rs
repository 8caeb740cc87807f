//! Data-file column statistics from manifests as DataFusion [`PruningStatistics`], so the
//! residual's AND/OR tree prunes data files with the same engine (`PruningPredicate`) that
//! prunes row groups in the reader: one container per data file.
//!
//! Bounds of floating-point columns are left out (Iceberg bounds exclude NaN, DataFusion
//! orders NaN last), and so are null counts when a name mapping may change what a file
//! without field ids reads (see [`crate::plan`]).

use std::collections::{HashMap, HashSet};

use arrow::array::{ArrayRef, BooleanArray, UInt64Array};
use arrow::datatypes::DataType;
use datafusion::common::pruning::PruningStatistics;
use datafusion::common::stats::Precision;
use datafusion::common::{Column, ColumnStatistics, ScalarValue, Statistics};
use iceberg::spec::{DataFile, Datum};

use crate::schema::{ScanSchema, datum_to_scalar};

/// The manifest statistics of some data files.
pub struct FileStatistics<'a> {
    /// The schema the scan reads with.
    pub schema: &'a ScanSchema,
    /// The files, one container each.
    pub files: Vec<&'a DataFile>,
    /// Whether null counts describe what a scan reads.
    pub null_counts_trusted: bool,
}

impl FileStatistics<'_> {
    /// The field id and Arrow type of a top-level column.
    fn column(&self, column: &Column) -> Option<(i32, &DataType)> {
        let i = self
            .schema
            .fields
            .iter()
            .position(|f| f.name() == column.name())?;
        Some((self.schema.field_ids[i], self.schema.fields[i].data_type()))
    }

    fn bounds(
        &self,
        column: &Column,
        pick: impl Fn(&DataFile) -> &HashMap<i32, Datum>,
    ) -> Option<ArrayRef> {
        let (id, data_type) = self.column(column)?;
        if is_float(data_type) {
            return None;
        }
        let values: Vec<ScalarValue> = self
            .files
            .iter()
            .map(|f| match bound(f, id, data_type, &pick) {
                Some(v) => Ok(v),
                None => ScalarValue::try_from(data_type),
            })
            .collect::<datafusion::common::Result<_>>()
            .ok()?;
        ScalarValue::iter_to_array(values).ok()
    }
}

/// Floating-point bounds are left out: Iceberg's exclude NaN, DataFusion orders NaN last.
fn is_float(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Float16 | DataType::Float32 | DataType::Float64
    )
}

/// The bound `pick` gives of field `id` of `file`, in the column's type `data_type`; `None`
/// when the file has none or it does not convert.
fn bound(
    file: &DataFile,
    id: i32,
    data_type: &DataType,
    pick: impl Fn(&DataFile) -> &HashMap<i32, Datum>,
) -> Option<ScalarValue> {
    let value = datum_to_scalar(pick(file).get(&id)?).ok()?;
    value.cast_to(data_type).ok().filter(|v| !v.is_null())
}

/// The statistics of one data file for the optimizer, from its manifest entry: its exact row
/// count, its size, and per column of `schema` its null count and bounds by the same rules
/// as [`FileStatistics`] (for pruning).
pub fn optimizer_statistics(
    schema: &ScanSchema,
    file: &DataFile,
    null_counts_trusted: bool,
) -> Statistics {
    let exact = |v: Option<ScalarValue>| v.map_or(Precision::Absent, Precision::Exact);
    let column_statistics = schema
        .fields
        .iter()
        .zip(&schema.field_ids)
        .map(|(field, &id)| {
            let data_type = field.data_type();
            let bounds = |pick: fn(&DataFile) -> &HashMap<i32, Datum>| match is_float(data_type) {
                true => None,
                false => bound(file, id, data_type, pick),
            };
            let null_count = match null_counts_trusted {
                true => file.null_value_counts().get(&id).copied(),
                false => None,
            };
            ColumnStatistics {
                null_count: null_count
                    .and_then(|n| usize::try_from(n).ok())
                    .map_or(Precision::Absent, Precision::Exact),
                min_value: exact(bounds(DataFile::lower_bounds)),
                max_value: exact(bounds(DataFile::upper_bounds)),
                ..ColumnStatistics::new_unknown()
            }
        })
        .collect();
    let bytes = usize::try_from(file.file_size_in_bytes()).ok();
    Statistics {
        num_rows: usize::try_from(file.record_count())
            .ok()
            .map_or(Precision::Absent, Precision::Exact),
        total_byte_size: bytes.map_or(Precision::Absent, Precision::Inexact),
        column_statistics,
    }
}

impl PruningStatistics for FileStatistics<'_> {
    fn min_values(&self, column: &Column) -> Option<ArrayRef> {
        self.bounds(column, DataFile::lower_bounds)
    }

    fn max_values(&self, column: &Column) -> Option<ArrayRef> {
        self.bounds(column, DataFile::upper_bounds)
    }

    fn num_containers(&self) -> usize {
        self.files.len()
    }

    fn null_counts(&self, column: &Column) -> Option<ArrayRef> {
        if !self.null_counts_trusted {
            return None;
        }
        let (id, _) = self.column(column)?;
        let counts: UInt64Array = self
            .files
            .iter()
            .map(|f| f.null_value_counts().get(&id).copied())
            .collect();
        Some(std::sync::Arc::new(counts))
    }

    fn row_counts(&self) -> Option<ArrayRef> {
        let counts: UInt64Array = self.files.iter().map(|f| Some(f.record_count())).collect();
        Some(std::sync::Arc::new(counts))
    }

    fn contained(&self, _column: &Column, _values: &HashSet<ScalarValue>) -> Option<BooleanArray> {
        None
    }
}
