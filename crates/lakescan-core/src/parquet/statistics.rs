//! Column statistics of row groups and pages, in table types, for pruning.
//!
//! [`RowGroupStatistics`] implements DataFusion's `PruningStatistics` so the residual's
//! AND/OR tree is pruned by `PruningPredicate` (seed 003: unknown leaves keep the unit).
//! Constants of the split (partition values, missing columns) answer as `min = max =
//! value`. Float maxima are reported unknown: Parquet leaves NaN out of statistics, and NaN
//! is the largest float in the order DataFusion compares with.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray, UInt64Array};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Schema};
use datafusion::common::pruning::PruningStatistics;
use datafusion::common::{Column, Result, ScalarValue};
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::file::metadata::ParquetMetaData;

use crate::binding::{FieldSource, SplitBinding};
use crate::filter::eval::ColumnStats;
use crate::scan_spec::ScanSpec;

/// Min/max/null-count arrays of one column over some containers, in the table type.
#[derive(Debug, Clone)]
pub struct StatsArrays {
    /// Minimum per container (null = unknown).
    pub mins: ArrayRef,
    /// Maximum per container (null = unknown).
    pub maxes: ArrayRef,
    /// Null count per container (null = unknown).
    pub null_counts: UInt64Array,
    /// Rows per container.
    pub row_counts: UInt64Array,
}

impl StatsArrays {
    /// The statistics of container `i` as scalars.
    pub fn column_stats(&self, i: usize) -> ColumnStats {
        let scalar = |a: &ArrayRef| {
            ScalarValue::try_from_array(a, i)
                .ok()
                .filter(|v| !v.is_null())
        };
        let count = |a: &UInt64Array| a.is_valid(i).then(|| a.value(i));
        ColumnStats {
            min: scalar(&self.mins),
            max: scalar(&self.maxes),
            null_count: count(&self.null_counts),
            row_count: count(&self.row_counts),
        }
    }
}

/// Row-group statistics of a file for one split's binding.
pub struct RowGroupStatistics<'a> {
    spec: &'a ScanSpec,
    binding: &'a SplitBinding,
    metadata: &'a ParquetMetaData,
    file_schema: &'a Schema,
    row_groups: &'a [usize],
    /// `PruningPredicate` asks for min, max and null counts separately: convert once.
    by_column: RefCell<HashMap<String, Option<StatsArrays>>>,
}

impl<'a> RowGroupStatistics<'a> {
    /// Statistics of `row_groups` (indices into the file's row groups).
    pub fn new(
        spec: &'a ScanSpec,
        binding: &'a SplitBinding,
        metadata: &'a ParquetMetaData,
        file_schema: &'a Schema,
        row_groups: &'a [usize],
    ) -> Self {
        Self {
            spec,
            binding,
            metadata,
            file_schema,
            row_groups,
            by_column: RefCell::default(),
        }
    }

    /// The same file and binding over other row groups.
    pub fn with_row_groups<'b>(&'b self, row_groups: &'b [usize]) -> RowGroupStatistics<'b> {
        RowGroupStatistics::new(
            self.spec,
            self.binding,
            self.metadata,
            self.file_schema,
            row_groups,
        )
    }

    /// Statistics of the field at `field_index` of the spec, in its table type.
    pub fn field_stats(&self, field_index: usize) -> Result<Option<StatsArrays>> {
        let field = &self.spec.fields()[field_index];
        let table_type = &field.handle.data_type;
        let row_counts = self.row_counts();
        match &self.binding.sources()[field_index] {
            FieldSource::Constant(v) => Ok(Some(constant_stats(v, row_counts)?)),
            FieldSource::File { root, .. } => {
                let name = self.file_schema.field(*root).name();
                let converter = StatisticsConverter::try_new(
                    name,
                    self.file_schema,
                    self.metadata.file_metadata().schema_descr(),
                )?;
                let groups = self.row_groups.iter().map(|&i| self.metadata.row_group(i));
                let mins = converter.row_group_mins(groups.clone())?;
                let maxes = converter.row_group_maxes(groups.clone())?;
                let null_counts = converter.row_group_null_counts(groups)?;
                let (Ok(mins), Ok(maxes)) = (cast(&mins, table_type), cast(&maxes, table_type))
                else {
                    return Ok(None);
                };
                Ok(Some(StatsArrays {
                    mins,
                    maxes,
                    null_counts,
                    row_counts,
                }))
            }
        }
    }

    fn row_counts(&self) -> UInt64Array {
        let rows = self
            .row_groups
            .iter()
            .map(|&i| self.metadata.row_group(i).num_rows() as u64);
        UInt64Array::from_iter_values(rows)
    }

    fn stats_of(&self, column: &Column) -> Option<StatsArrays> {
        if let Some(cached) = self.by_column.borrow().get(column.name()) {
            return cached.clone();
        }
        let i = self
            .spec
            .fields()
            .iter()
            .position(|f| f.name() == column.name());
        let stats = i.and_then(|i| self.field_stats(i).ok().flatten());
        self.by_column
            .borrow_mut()
            .insert(column.name().to_string(), stats.clone());
        stats
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

fn is_float(t: &DataType) -> bool {
    matches!(t, DataType::Float16 | DataType::Float32 | DataType::Float64)
}

impl PruningStatistics for RowGroupStatistics<'_> {
    fn min_values(&self, column: &Column) -> Option<ArrayRef> {
        let stats = self.stats_of(column)?;
        if is_float(stats.mins.data_type()) {
            // -0.0 sorts below +0.0; a recorded +0.0 minimum may hide a -0.0.
            return None;
        }
        Some(stats.mins)
    }

    fn max_values(&self, column: &Column) -> Option<ArrayRef> {
        let stats = self.stats_of(column)?;
        (!is_float(stats.maxes.data_type())).then_some(stats.maxes)
    }

    fn num_containers(&self) -> usize {
        self.row_groups.len()
    }

    fn null_counts(&self, column: &Column) -> Option<ArrayRef> {
        Some(Arc::new(self.stats_of(column)?.null_counts))
    }

    fn row_counts(&self) -> Option<ArrayRef> {
        Some(Arc::new(self.row_counts()))
    }

    fn contained(&self, _column: &Column, _values: &HashSet<ScalarValue>) -> Option<BooleanArray> {
        None
    }
}
