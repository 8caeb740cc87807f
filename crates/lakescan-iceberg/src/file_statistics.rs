//! Data-file column statistics from manifests as DataFusion [`PruningStatistics`], so the
//! residual's AND/OR tree prunes data files with the same engine (`PruningPredicate`) that
//! prunes row groups in the reader (seed 003): one container per data file.
//!
//! Bounds of floating-point columns are left out (Iceberg bounds exclude NaN, DataFusion
//! orders NaN last), and so are null counts when a name mapping may change what a file
//! without field ids reads (see [`crate::plan`]).

use std::collections::HashSet;

use arrow::array::{ArrayRef, BooleanArray, UInt64Array};
use arrow::datatypes::DataType;
use datafusion::common::pruning::PruningStatistics;
use datafusion::common::{Column, ScalarValue};
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
