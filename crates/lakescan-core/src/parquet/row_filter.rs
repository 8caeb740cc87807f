//! Per-column filters as a parquet `RowFilter` (selective reading).
//!
//! Each [`Filter`] on a file column becomes one [`ColumnPredicate`]; the reader decodes
//! that column, evaluates the filter, and decodes the next filter's column only for the
//! surviving rows. Output columns are decoded last, only for rows every filter kept (late
//! materialization). Predicates run in the [`AdaptiveState`] order and report their cost
//! back to it, so later splits put the cheapest-per-dropped-row filter first.
//!
//! Late materialization only pays when a filter keeps few rows: a filter observed to keep
//! more than `lakescan.pushdown_max_keep_ratio` of its input is evaluated after decoding instead
//! (its column is decoded with the output columns and [`ColumnPredicate::keep`] runs on the
//! batch), which costs no selection bookkeeping in the decoder.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch};
use arrow::datatypes::DataType;
use arrow::error::ArrowError;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ArrowPredicate;

use crate::defaults::MemberDefaults;
use crate::filter::Filter;
use crate::parquet::adapt::adapt_with_defaults;
use crate::scan_spec::AdaptiveState;
use crate::subfield::Subfield;

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
    /// Defaults of struct members the file may lack (filled in before a member is tested).
    pub defaults: Option<Arc<MemberDefaults>>,
}

impl ArrowPredicate for ColumnPredicate {
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
                self.subfield
            )));
        };
        self.keep(column)
    }
}

impl ColumnPredicate {
    /// Tests the values of the filtered column (`root` holds the whole top-level column or
    /// the struct with the filtered leaves) and records the cost. `true` keeps the row.
    pub fn keep(&self, root: &ArrayRef) -> Result<BooleanArray, ArrowError> {
        let started = Instant::now();
        let external =
            |e: datafusion::error::DataFusionError| ArrowError::ExternalError(Box::new(e));
        let column = if !self.subfield.path().is_empty() {
            let filled;
            let root = match &self.defaults {
                Some(defaults) => {
                    filled = adapt_with_defaults(root, &self.table_type, Some(defaults))
                        .map_err(external)?;
                    &filled
                }
                None => root,
            };
            self.subfield.extract(root).map_err(external)?
        } else {
            // A struct that gained members, a map read as a list of its keys: adapted, not
            // cast (a cast needs the same members and cannot make a map of a list).
            adapt_with_defaults(root, &self.table_type, self.defaults.as_deref())
                .map_err(external)?
        };
        let mask = self
            .filter
            .evaluate(&column)
            .map_err(|e| ArrowError::ExternalError(Box::new(e)))?;
        let (rows_in, rows_out) = (column.len() as u64, mask.true_count() as u64);
        self.adaptive
            .record(&self.column, started.elapsed(), rows_in, rows_out);
        Ok(mask)
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
            false => arrow::compute::cast(column, target)?,
        };
        let input = RecordBatch::try_new(Arc::clone(&self.schema), vec![column])?;
        crate::filter::eval::keep_mask(&self.expr, &input).map_err(external)
    }
}
