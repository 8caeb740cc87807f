//! Page-index pruning: per-column filters against each page's min/max/null count.
//!
//! ```text
//!  column a pages:  [0..100 keep][100..250 skip][250..400 keep]
//!  column b pages:  [0..200 keep          ][200..400 skip     ]
//!  selection:       [0..100 select][100..250 skip][250..400 skip]
//! ```
//! Each filtered column yields a `RowSelection` over the kept row groups (concatenated, as
//! the parquet reader expects); selections of several columns are intersected.

use arrow::array::Array;
use arrow::compute::cast;
use datafusion::common::Result;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use parquet::file::metadata::ParquetMetaData;

use super::statistics::StatsArrays;
use crate::filter::Filter;

/// Selection of the rows of `row_groups` whose pages may match `filter` on column `name`
/// (a file column). `None` when the file has no usable page index for it.
pub fn page_selection(
    metadata: &ParquetMetaData,
    file_schema: &arrow::datatypes::Schema,
    name: &str,
    filter: &Filter,
    row_groups: &[usize],
) -> Result<Option<RowSelection>> {
    let (Some(column_index), Some(offset_index)) =
        (metadata.column_index(), metadata.offset_index())
    else {
        return Ok(None);
    };
    let converter =
        StatisticsConverter::try_new(name, file_schema, metadata.file_metadata().schema_descr())?;
    let Some(row_counts) =
        converter.data_page_row_counts(offset_index, metadata.row_groups(), row_groups)?
    else {
        return Ok(None);
    };
    let mins = converter.data_page_mins(column_index, offset_index, row_groups)?;
    let maxes = converter.data_page_maxes(column_index, offset_index, row_groups)?;
    let null_counts = converter.data_page_null_counts(column_index, offset_index, row_groups)?;
    let (Ok(mins), Ok(maxes)) = (
        cast(&mins, filter.data_type()),
        cast(&maxes, filter.data_type()),
    ) else {
        return Ok(None);
    };
    if row_counts.null_count() > 0 || row_counts.len() != mins.len() {
        return Ok(None);
    }
    let stats = StatsArrays {
        mins,
        maxes,
        null_counts,
        row_counts,
    };
    let selectors = (0..stats.row_counts.len()).map(|i| {
        let rows = stats.row_counts.value(i) as usize;
        if filter.may_match(&stats.column_stats(i)) {
            RowSelector::select(rows)
        } else {
            RowSelector::skip(rows)
        }
    });
    Ok(Some(RowSelection::from(selectors.collect::<Vec<_>>())))
}
