//! Choosing the row groups of a split: the byte range, then statistics.
//!
//! ```text
//!  file:   | rg0 ....... | rg1 ........... | rg2 ..... |
//!  split:  [start ................ end)
//!  keep rg iff  start <= offset(rg) + compressed_size(rg) / 2 < end
//! ```
//! The midpoint rule (parquet-mr's, so Spark/Hive/Trino agree) gives every row group to
//! exactly one split when the splits tile the file.

use datafusion::common::Result;
use datafusion::physical_optimizer::pruning::PruningPredicate;
use parquet::file::metadata::{ParquetMetaData, RowGroupMetaData};

use super::statistics::RowGroupStatistics;
use crate::split::FileSplit;

/// Indices of the row groups whose midpoint lies in the split's byte range.
pub fn row_groups_in_range(metadata: &ParquetMetaData, split: &FileSplit) -> Vec<usize> {
    let end = split.start().saturating_add(split.length());
    // The split that ends the file also owns row groups past the size it was planned with
    // (a table format's recorded size can be short of the real one): no row group is lost.
    let last = end >= split.file_size();
    let in_range = |rg: &RowGroupMetaData| {
        let mid = midpoint(rg);
        mid >= split.start() && (mid < end || last)
    };
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

/// Keeps the row groups for which `predicate` may be true (`PruningPredicate` semantics).
pub fn prune_with_predicate(
    predicate: &PruningPredicate,
    stats: &RowGroupStatistics<'_>,
    row_groups: &[usize],
) -> Result<Vec<usize>> {
    let keep = predicate.prune(stats)?;
    Ok(row_groups
        .iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(rg, _)| *rg)
        .collect())
}
