//! [`ColumnPredicate`]: one per-column [`Filter`] tested on decoded values, by every
//! format's reader — inside Parquet's decoder (a `RowFilter` predicate,
//! `crate::parquet::row_filter`) or on decoded batches (ORC, Avro, Parquet filters that run
//! after decoding). It adapts the file column to the table type, fills in defaults of
//! struct members the file lacks, and reports each batch's cost to the [`AdaptiveState`],
//! so later splits put the cheapest-per-dropped-row filter first. A decimal decoded in the
//! narrow width the file stores it in is tested as it is ([`Filter::narrowed_to`]), not
//! widened first.

use std::sync::Arc;
use std::time::Instant;

use arrow::array::{Array, ArrayRef, BooleanArray};
use arrow::datatypes::DataType;
use arrow::error::ArrowError;

use crate::defaults::MemberDefaults;
use crate::filter::Filter;
use crate::format::adapt::adapt_with_defaults;
use crate::format::member_nulls::members_null_where_structs_are;
use crate::scan_spec::{AdaptiveState, FieldSpec};
use crate::subfield::Subfield;
use crate::writer_times::TimeFix;

/// One column's filter over decoded values.
pub struct ColumnPredicate {
    /// Table column name (key of the adaptive state).
    pub column: String,
    /// What is filtered: the column or a struct field of it.
    pub subfield: Subfield,
    /// The filter, compared in its own type.
    pub filter: Filter,
    /// Where the cost goes.
    pub adaptive: Arc<AdaptiveState>,
    /// Type the table declares (the file column is cast to it before the filter runs).
    pub table_type: DataType,
    /// Defaults of struct members the file may lack (filled in before a member is tested).
    pub defaults: Option<Arc<MemberDefaults>>,
    /// The fix of the column's dates and timestamps, applied before the filter (a Parquet
    /// filter inside the decoder sees the values as stored).
    pub times: Option<Arc<TimeFix>>,
}

impl ColumnPredicate {
    /// `filter` on `subfield` of the scan's `field`, its cost recorded in `adaptive`.
    pub fn new(
        field: &FieldSpec,
        subfield: &Subfield,
        filter: &Filter,
        adaptive: &Arc<AdaptiveState>,
    ) -> Self {
        Self {
            column: subfield.to_string(),
            subfield: subfield.clone(),
            filter: filter.clone(),
            adaptive: Arc::clone(adaptive),
            table_type: field.handle.data_type.clone(),
            defaults: field.handle.member_defaults.clone(),
            times: None,
        }
    }

    /// The same, testing the values `times` fixes (`None`: as decoded).
    pub fn with_times(mut self, times: Option<Arc<TimeFix>>) -> Self {
        self.times = times;
        self
    }

    /// Tests the values of the filtered column (`root` holds the whole top-level column or
    /// the struct with the filtered leaves) and records the cost. `true` keeps the row.
    pub fn keep(&self, root: &ArrayRef) -> Result<BooleanArray, ArrowError> {
        let started = Instant::now();
        let external =
            |e: datafusion::error::DataFusionError| ArrowError::ExternalError(Box::new(e));
        let fixed;
        let root = match &self.times {
            Some(times) => {
                fixed = times.apply(root).map_err(external)?;
                &fixed
            }
            None => root,
        };
        let column = if !self.subfield.path().is_empty() {
            // A member of a NULL struct is NULL, whatever the file holds in its slot.
            let root = match &self.defaults {
                Some(defaults) => adapt_with_defaults(root, &self.table_type, Some(defaults)),
                None => members_null_where_structs_are(root),
            }
            .map_err(external)?;
            self.subfield.extract(&root).map_err(external)?
        } else if matches!(
            (root.data_type(), &self.table_type),
            (
                DataType::Decimal32(..) | DataType::Decimal64(..),
                DataType::Decimal128(..)
            )
        ) {
            // Decoded as stored and tested as stored (`Filter::evaluate`); widened after.
            Arc::clone(root)
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
