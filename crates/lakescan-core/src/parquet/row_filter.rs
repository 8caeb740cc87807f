//! Per-column filters as a parquet `RowFilter` (selective reading).
//!
//! Each filter on a file column becomes one [`InDecoder`] over its [`ColumnPredicate`]; the reader decodes
//! that column, evaluates the filter, and decodes the next filter's column only for the
//! surviving rows. Output columns are decoded last, only for rows every filter kept (late
//! materialization). Predicates run in the [`AdaptiveState`] order and report their cost
//! back to it, so later splits put the cheapest-per-dropped-row filter first.
//!
//! Late materialization only pays when a filter keeps few rows: a filter observed to keep
//! more than `lakescan.pushdown_max_keep_ratio` of its input is evaluated after decoding instead
//! (its column is decoded with the output columns and [`ColumnPredicate::keep`] runs on the
//! batch), which costs no selection bookkeeping in the decoder. The [`AdaptiveState`] is
//! the one the predicates report their costs to.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow::array::{BooleanArray, RecordBatch};
use arrow::error::ArrowError;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ArrowPredicate;

use crate::format::column_predicate::ColumnPredicate;
use crate::scan_spec::AdaptiveState;

/// Rows a filter must have seen before its keep ratio decides where it runs.
const MIN_OBSERVED_ROWS: u64 = 8192;

/// Whether the filter named `key` runs inside the decoder (`RowFilter`): by its observed
/// keep ratio once it has seen enough rows, before that by `estimate` (from min/max
/// statistics), and inside the decoder when neither is known. A ratio above
/// `max_keep_ratio` sends the filter to the decoded batch.
pub fn runs_in_decoder(
    adaptive: &AdaptiveState,
    key: &str,
    estimate: Option<f64>,
    max_keep_ratio: f64,
) -> bool {
    let ratio = match adaptive.cost(key) {
        Some(c) if c.rows_in >= MIN_OBSERVED_ROWS => Some(c.rows_out as f64 / c.rows_in as f64),
        _ => estimate,
    };
    ratio.is_none_or(|r| r <= max_keep_ratio)
}

/// A [`ColumnPredicate`] inside the parquet decoder: the leaves it decodes first, and the
/// counter of the rows it sees when it is the first predicate (rows scanned).
pub struct InDecoder {
    /// Mask selecting the file column (or the leaves of the filtered struct field).
    pub projection: ProjectionMask,
    /// Rows the first predicate sees = rows scanned; `None` for later predicates.
    pub rows_scanned: Option<Arc<AtomicU64>>,
    /// The filter.
    pub predicate: ColumnPredicate,
}

impl ArrowPredicate for InDecoder {
    fn projection(&self) -> &ProjectionMask {
        &self.projection
    }

    fn evaluate(&mut self, batch: RecordBatch) -> Result<BooleanArray, ArrowError> {
        if let Some(counter) = &self.rows_scanned {
            counter.fetch_add(batch.num_rows() as u64, Ordering::Relaxed);
        }
        let Some(column) = batch.columns().first() else {
            return Err(ArrowError::ComputeError(format!(
                "the reader filter on {} got no column to test",
                self.predicate.subfield
            )));
        };
        self.predicate.keep(column)
    }
}

/// A dynamic filter's residual conjunct on one file column (a join's hash-table lookup),
/// evaluated inside the decoder: the column is decoded first and the other columns only
/// for the rows it keeps. The conjunct still runs as part of the residual afterwards, so
/// this only filters early.
pub struct ExprPredicate {
    /// Mask selecting the file column.
    pub projection: ProjectionMask,
    /// The conjunct over `schema` (its one column at index 0).
    pub expr: Arc<dyn datafusion::physical_plan::PhysicalExpr>,
    /// One field: the column in its type in `R`.
    pub schema: arrow::datatypes::SchemaRef,
    /// Rows the first predicate sees = rows scanned; `None` for later predicates.
    pub rows_scanned: Option<Arc<AtomicU64>>,
}

impl ArrowPredicate for ExprPredicate {
    fn projection(&self) -> &ProjectionMask {
        &self.projection
    }

    fn evaluate(&mut self, batch: RecordBatch) -> Result<BooleanArray, ArrowError> {
        if let Some(counter) = &self.rows_scanned {
            counter.fetch_add(batch.num_rows() as u64, Ordering::Relaxed);
        }
        let external =
            |e: datafusion::error::DataFusionError| ArrowError::ExternalError(Box::new(e));
        let Some(column) = batch.columns().first() else {
            return Err(ArrowError::ComputeError(format!(
                "the reader filter {} got no column to test",
                self.expr
            )));
        };
        let target = self.schema.field(0).data_type();
        let column = match column.data_type() == target {
            true => Arc::clone(column),
            false => crate::format::adapt::exact_cast(column, target).map_err(external)?,
        };
        let input = RecordBatch::try_new(Arc::clone(&self.schema), vec![column])?;
        crate::filter::eval::keep_mask(&self.expr, &input).map_err(external)
    }
}
