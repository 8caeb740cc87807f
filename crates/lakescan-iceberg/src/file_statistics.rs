//! Data-file column statistics from manifests as DataFusion [`PruningStatistics`], so the
//! residual's AND/OR tree prunes data files with the same engine (`PruningPredicate`) that
//! prunes row groups in the reader (seed 003): one container per data file.
//!
//! Bounds of floating-point columns are left out (Iceberg bounds exclude NaN, DataFusion
//! orders NaN last), and so are null counts when a name mapping may change what a file
//! without field ids reads (see [`crate::plan`]).

use std::collections::HashSet;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, UInt64Array};
use arrow::datatypes::{DataType, UInt64Type};
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
        pick: impl Fn(&DataFile) -> &std::collections::HashMap<i32, Datum>,
    ) -> Option<ArrayRef> {
        let (id, data_type) = self.column(column)?;
        if matches!(
            data_type,
            DataType::Float16 | DataType::Float32 | DataType::Float64
        ) {
            return None;
        }
        let values: Vec<ScalarValue> = self
            .files
            .iter()
            .map(|f| {
                pick(f)
                    .get(&id)
                    .and_then(|d| datum_to_scalar(d).ok())
                    .and_then(|v| v.cast_to(data_type).ok())
                    .map_or_else(|| ScalarValue::try_from(data_type), Ok)
            })
            .collect::<datafusion::common::Result<_>>()
            .ok()?;
        ScalarValue::iter_to_array(values).ok()
    }
}

/// The statistics of one data file for the optimizer, from its manifest entry: its exact row
/// count, its size, and per column of `schema` its null count and bounds where
/// [`FileStatistics`] has them (the same rules as for pruning).
pub fn optimizer_statistics(
    schema: &ScanSchema,
    file: &DataFile,
    null_counts_trusted: bool,
) -> Statistics {
    let stats = FileStatistics {
        schema,
        files: vec![file],
        null_counts_trusted,
    };
    let first = |array: Option<ArrayRef>| {
        let value = ScalarValue::try_from_array(&array?, 0).ok()?;
        (!value.is_null()).then_some(value)
    };
    let column_statistics = schema
        .fields
        .iter()
        .map(|field| {
            let column = Column::new_unqualified(field.name());
            let null_count = stats.null_counts(&column).and_then(|a| {
                let counts = a.as_primitive::<UInt64Type>();
                counts.is_valid(0).then(|| counts.value(0) as usize)
            });
            ColumnStatistics {
                null_count: null_count.map_or(Precision::Absent, Precision::Exact),
                min_value: first(stats.min_values(&column))
                    .map_or(Precision::Absent, Precision::Exact),
                max_value: first(stats.max_values(&column))
                    .map_or(Precision::Absent, Precision::Exact),
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
