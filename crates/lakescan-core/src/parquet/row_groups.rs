//! Choosing the row groups of a split by its byte range (statistics: `crate::format::prune_units`).
//!
//! ```text
//!  file:   | rg0 ....... | rg1 ........... | rg2 ..... |
//!  split:  [start ................ end)
//!  keep rg iff  start <= offset(rg) + compressed_size(rg) / 2 < end
//! ```
//! The midpoint rule (parquet-mr's, so Spark/Hive/Trino agree) gives every row group to
//! exactly one split when the splits tile the file.

use parquet::file::metadata::{ParquetMetaData, RowGroupMetaData};

use crate::format::midpoint_in_range;
use crate::split::FileSplit;

/// Indices of the row groups whose midpoint lies in the split's byte range.
pub fn row_groups_in_range(metadata: &ParquetMetaData, split: &FileSplit) -> Vec<usize> {
    let in_range = |rg: &RowGroupMetaData| midpoint_in_range(midpoint(rg), split);
    metadata
        .row_groups()
        .iter()
        .enumerate()
        .filter(|(_, rg)| in_range(rg))
        .map(|(i, _)| i)
        .collect()
}

fn midpoint(rg: &RowGroupMetaData) -> u64 {
    let start = rg
        .columns()
        .first()
        .map(|c| match c.dictionary_page_offset() {
            Some(dict) => dict.min(c.data_page_offset()),
            None => c.data_page_offset(),
        })
        .or(rg.file_offset())
        .unwrap_or(0);
    start.max(0) as u64 + rg.compressed_size().max(0) as u64 / 2
}
