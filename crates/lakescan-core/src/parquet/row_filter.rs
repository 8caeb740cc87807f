//! Per-column filters as a parquet `RowFilter` (selective reading, seed §8.1).
//!
//! Each [`Filter`] on a file column becomes one [`ColumnPredicate`]; the reader decodes
//! that column, evaluates the filter, and decodes the next filter's column only for the
//! surviving rows. Output columns are decoded last, only for rows every filter kept (late
//! materialization). Predicates run in the [`AdaptiveState`] order and report their cost
//! back to it, so later splits put the cheapest-per-dropped-row filter first.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use arrow::array::{BooleanArray, RecordBatch};
use arrow::datatypes::DataType;
use arrow::error::ArrowError;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ArrowPredicate;

use crate::filter::Filter;
use crate::scan_spec::AdaptiveState;
use crate::subfield::Subfield;

/// One column's filter inside the parquet reader.
pub struct ColumnPredicate {
    /// Table column name (key of the adaptive state).
    pub column: String,
    /// Mask selecting the file column (or the leaves of the filtered struct field).
    pub projection: ProjectionMask,
    /// What is filtered: the column or a struct field of it.
    pub subfield: Subfield,
    /// The filter, compared in its own type.
    pub filter: Filter,
    /// Where the cost goes.
    pub adaptive: Arc<AdaptiveState>,
    /// Rows the first predicate sees = rows scanned; `None` for later predicates.
    pub rows_scanned: Option<Arc<AtomicU64>>,
    /// Type the table declares (the file column is cast to it before the filter runs).
    pub table_type: DataType,
}

impl ArrowPredicate for ColumnPredicate {
    fn projection(&self) -> &ProjectionMask {
        &self.projection
    }

    fn evaluate(&mut self, batch: RecordBatch) -> Result<BooleanArray, ArrowError> {
        let started = Instant::now();
        let rows_in = batch.num_rows() as u64;
        if let Some(counter) = &self.rows_scanned {
            counter.fetch_add(rows_in, Ordering::Relaxed);
        }
        let root = batch.column(0);
        let column = if !self.subfield.path().is_empty() {
            self.subfield
                .extract(root)
                .map_err(|e| ArrowError::ExternalError(Box::new(e)))?
        } else if root.data_type() == &self.table_type {
            Arc::clone(root)
        } else {
            arrow::compute::cast(root, &self.table_type)?
        };
        let mask = self
            .filter
            .evaluate(&column)
            .map_err(|e| ArrowError::ExternalError(Box::new(e)))?;
        let rows_out = mask.true_count() as u64;
        self.adaptive
            .record(&self.column, started.elapsed(), rows_in, rows_out);
        Ok(mask)
    }
}
