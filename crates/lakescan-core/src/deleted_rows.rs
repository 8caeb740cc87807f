//! [`DeletedRows`]: rows of one data file that deletes remove by position (Iceberg position
//! deletes and deletion vectors, seed §10.3). They become a row selection of the Parquet
//! reader, so deleted rows are never decoded:
//!
//! ```text
//!  row groups read:  rg0 = [0, 100)   rg2 = [200, 300)      deleted {5, 6, 250}
//!  selection:        select 5, skip 2, select 93 | select 50, skip 1, select 49
//! ```
//!
//! Positions are file positions (the row index), whatever split or filter reads them.

use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use parquet::file::metadata::ParquetMetaData;
use roaring::RoaringTreemap;

use crate::parquet::row_index::row_group_starts;

/// Deleted positions of one file, by where they come from (for metrics).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeletedRows {
    /// Positions listed by position-delete files.
    pub by_position_deletes: RoaringTreemap,
    /// Positions set in the file's deletion vector.
    pub by_deletion_vector: RoaringTreemap,
}

/// Deleted rows within the row groups a split reads, by source.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeletedCounts {
    /// Deleted by position-delete files.
    pub position_deletes: u64,
    /// Deleted by the deletion vector (and not by a position-delete file).
    pub deletion_vector: u64,
}

impl DeletedRows {
    /// Whether no row is deleted.
    pub fn is_empty(&self) -> bool {
        self.by_position_deletes.is_empty() && self.by_deletion_vector.is_empty()
    }

    /// The selection of `row_groups` (ascending) without the deleted rows, and how many
    /// rows of them each source deletes.
    pub fn selection(
        &self,
        metadata: &ParquetMetaData,
        row_groups: &[usize],
    ) -> (RowSelection, DeletedCounts) {
        // Usually one source is empty: no union to build per split then.
        let union;
        let all = match (
            self.by_position_deletes.is_empty(),
            self.by_deletion_vector.is_empty(),
        ) {
            (_, true) => &self.by_position_deletes,
            (true, false) => &self.by_deletion_vector,
            (false, false) => {
                union = &self.by_position_deletes | &self.by_deletion_vector;
                &union
            }
        };
        let starts = row_group_starts(metadata);
        let mut selectors = vec![];
        let mut counts = DeletedCounts::default();
        for &rg in row_groups {
            let (Some(&start), Some(group)) = (starts.get(rg), metadata.row_groups().get(rg))
            else {
                continue;
            };
            let (start, end) = (
                start.max(0) as u64,
                (start + group.num_rows()).max(0) as u64,
            );
            counts.position_deletes += self.by_position_deletes.range_cardinality(start..end);
            let mut at = start;
            let mut positions = all.iter();
            positions.advance_to(start);
            for position in positions.take_while(|p| *p < end) {
                push(
                    &mut selectors,
                    RowSelector::select((position - at) as usize),
                );
                push(&mut selectors, RowSelector::skip(1));
                at = position + 1;
            }
            push(&mut selectors, RowSelector::select((end - at) as usize));
            let deleted_here = all.range_cardinality(start..end);
            counts.deletion_vector +=
                deleted_here - self.by_position_deletes.range_cardinality(start..end);
        }
        (RowSelection::from(selectors), counts)
    }
}

fn push(selectors: &mut Vec<RowSelector>, selector: RowSelector) {
    if selector.row_count == 0 {
        return;
    }
    match selectors.last_mut() {
        Some(last) if last.skip == selector.skip => last.row_count += selector.row_count,
        _ => selectors.push(selector),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow::array::{Int64Array, RecordBatch};
    use arrow::datatypes::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;
    use parquet::file::reader::FileReader;

    /// Metadata of a file with row groups of 100 rows: [0, 100), [100, 200), [200, 300).
    fn metadata() -> ParquetMetaData {
        let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, false)]));
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![Arc::new(Int64Array::from_iter_values(0..300))],
        )
        .unwrap();
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(100))
            .build();
        let mut out = vec![];
        let mut writer = ArrowWriter::try_new(&mut out, schema, Some(props)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let reader =
            parquet::file::serialized_reader::SerializedFileReader::new(bytes::Bytes::from(out))
                .unwrap();
        reader.metadata().clone()
    }

    #[test]
    fn deleted_positions_skip_rows_of_the_row_groups_read() {
        let md = metadata();
        let deleted = DeletedRows {
            by_position_deletes: [5u64, 6, 150].into_iter().collect(),
            by_deletion_vector: [6u64, 250].into_iter().collect(),
        };
        let (selection, counts) = deleted.selection(&md, &[0, 2]);
        let selectors: Vec<(bool, usize)> = Vec::<RowSelector>::from(selection)
            .iter()
            .map(|s| (s.skip, s.row_count))
            .collect();
        // Row group 1 is not read: the selection covers rows 0..100 and 200..300 only.
        assert_eq!(
            selectors,
            [(false, 5), (true, 2), (false, 143), (true, 1), (false, 49)]
        );
        // 150 is in a row group not read; 6 counts once, for the position deletes.
        assert_eq!(
            counts,
            DeletedCounts {
                position_deletes: 2,
                deletion_vector: 1
            }
        );
    }
}
