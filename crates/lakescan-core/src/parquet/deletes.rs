//! How the Parquet reader drops the [`DeletedRows`] of a split (Iceberg position deletes and
//! deletion vectors). Positions are file positions (the row index), whatever
//! split or filter reads them. They are applied in one of two ways, chosen per split by
//! [`DeletedRows::apply`]:
//!
//! * **a row selection** of the Parquet reader, when the deleted rows form long runs: the
//!   reader skips them (whole pages when the runs are long enough) and never decodes them:
//!
//!   ```text
//!    row groups read:  rg0 = [0, 100)   rg2 = [200, 300)      deleted {5, 6, 250}
//!    selection:        select 5, skip 2, select 93 | select 50, skip 1, select 49
//!   ```
//!
//! * **a [`DeletedMask`]** merged into the first filter pass over the decoded batches, when
//!   the runs are short (10 % of rows deleted at scattered positions gives a selector every
//!   few rows). Such a selection skips no page; parquet would decode the deleted rows anyway
//!   and drop them with a mask of its own (its `RowSelectionPolicy::Auto`), after
//!   bookkeeping per selector and column that costs more than the scan's filters. The mask
//!   is applied to the decoded batch together with the scan's own filters, so deleted rows
//!   never reach a filter, a generated column or the output. This needs the decoded rows'
//!   positions, which are known only when no filter runs inside the decoder: with decoder
//!   filters the selection is used whatever the runs.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;

use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use parquet::file::metadata::ParquetMetaData;
use roaring::RoaringTreemap;

use super::row_index::row_group_starts;
use crate::deleted_rows::{DeletedCounts, DeletedMask, DeletedPositions, DeletedRows};

/// Deleted runs closer together than this many rows (on average) are applied as a mask: a
/// page of a typical column holds more rows than that, so a selection would skip no page.
const SELECTION_MIN_AVERAGE_GAP: u64 = 4096;

/// How a split drops its deleted rows (see the module docs).
#[derive(Debug)]
pub enum DeletedApplied {
    /// A selection over the row groups read, intersected with the reader's others.
    Selection(RowSelection),
    /// A mask over the decoded rows, built batch by batch.
    Mask(DeletedMask),
}

impl DeletedRows {
    /// How the deleted rows of `row_groups` (ascending) are dropped, and how many of them
    /// each source deletes: `decoder_filters` tells whether filters run inside the decoder,
    /// `other` is the reader's other selection over those row groups (page index, row
    /// index), if any.
    pub fn apply(
        self: &Arc<Self>,
        metadata: &ParquetMetaData,
        row_groups: &[usize],
        decoder_filters: bool,
        other: Option<&RowSelection>,
    ) -> (DeletedApplied, DeletedCounts) {
        let positions = DeletedPositions::new(Arc::clone(self));
        let ranges = row_group_ranges(metadata, row_groups);
        let mut counts = DeletedCounts::default();
        for range in &ranges {
            let of_range = positions.counts(range.clone());
            counts.position_deletes += of_range.position_deletes;
            counts.deletion_vector += of_range.deletion_vector;
        }
        if decoder_filters || !short_runs(positions.all(), &ranges) {
            return (
                DeletedApplied::Selection(selection(positions.all(), &ranges)),
                counts,
            );
        }
        let decoded = match other {
            None => ranges.into(),
            Some(other) => selected_ranges(&ranges, other),
        };
        let mask = DeletedMask::new(positions, decoded);
        (DeletedApplied::Mask(mask), counts)
    }
}

/// File positions of each of `row_groups`, in order.
fn row_group_ranges(metadata: &ParquetMetaData, row_groups: &[usize]) -> Vec<Range<u64>> {
    let starts = row_group_starts(metadata);
    row_groups
        .iter()
        .filter_map(|&rg| {
            let (start, group) = (*starts.get(rg)?, metadata.row_groups().get(rg)?);
            let end = start.saturating_add(group.num_rows());
            Some(start.max(0) as u64..end.max(0) as u64)
        })
        .collect()
}

/// Whether the runs of `deleted` within `ranges` are on average closer together than
/// [`SELECTION_MIN_AVERAGE_GAP`] rows.
fn short_runs(deleted: &RoaringTreemap, ranges: &[Range<u64>]) -> bool {
    let rows: u64 = ranges.iter().map(|r| r.end - r.start).sum();
    let budget = rows / SELECTION_MIN_AVERAGE_GAP;
    let mut runs = 0u64;
    for range in ranges {
        let mut positions = deleted.iter();
        positions.advance_to(range.start);
        let mut last = None;
        for position in positions.take_while(|p| *p < range.end) {
            if last.is_none_or(|l: u64| l + 1 != position) {
                runs += 1;
                if runs > budget {
                    return true;
                }
            }
            last = Some(position);
        }
    }
    false
}

/// `ranges` without the positions in `deleted`, as a selection over them concatenated.
fn selection(deleted: &RoaringTreemap, ranges: &[Range<u64>]) -> RowSelection {
    let mut selectors = vec![];
    for range in ranges {
        let mut at = range.start;
        let mut positions = deleted.iter();
        positions.advance_to(range.start);
        for position in positions.take_while(|p| *p < range.end) {
            push(
                &mut selectors,
                RowSelector::select((position - at) as usize),
            );
            push(&mut selectors, RowSelector::skip(1));
            at = position + 1;
        }
        push(
            &mut selectors,
            RowSelector::select((range.end - at) as usize),
        );
    }
    RowSelection::from(selectors)
}

/// The file positions `selection` (over `ranges` concatenated) selects, in order.
fn selected_ranges(ranges: &[Range<u64>], selection: &RowSelection) -> VecDeque<Range<u64>> {
    let mut out = VecDeque::new();
    let mut ranges = ranges.iter().cloned();
    let mut current = ranges.next();
    for selector in selection.iter() {
        let mut left = selector.row_count as u64;
        while left > 0 {
            let Some(range) = current.as_mut() else {
                return out;
            };
            let n = left.min(range.end - range.start);
            if !selector.skip {
                match out.back_mut() {
                    Some(last) if last.end == range.start => last.end += n,
                    _ => out.push_back(range.start..range.start + n),
                }
            }
            range.start += n;
            left -= n;
            if range.start == range.end {
                current = ranges.next();
            }
        }
    }
    out
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

    use arrow::buffer::BooleanBuffer;

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

    fn selectors(selection: &RowSelection) -> Vec<(bool, usize)> {
        selection.iter().map(|s| (s.skip, s.row_count)).collect()
    }

    #[test]
    fn deleted_positions_skip_rows_of_the_row_groups_read() {
        let md = metadata();
        let deleted = Arc::new(DeletedRows {
            by_position_deletes: [5u64, 6, 150].into_iter().collect(),
            by_deletion_vector: [6u64, 250].into_iter().collect(),
        });
        // With filters in the decoder, the deletes are always a selection.
        let (DeletedApplied::Selection(selection), counts) =
            deleted.apply(&md, &[0, 2], true, None)
        else {
            panic!("decoder filters need a selection");
        };
        // Row group 1 is not read: the selection covers rows 0..100 and 200..300 only.
        assert_eq!(
            selectors(&selection),
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

    #[test]
    fn long_runs_are_a_selection_short_runs_a_mask() {
        let md = metadata();
        // 300 rows read allow no run at all (300 / 4096 = 0 runs): one run is a mask.
        let one_run = Arc::new(DeletedRows {
            by_deletion_vector: (10u64..20).collect(),
            ..DeletedRows::default()
        });
        assert!(matches!(
            one_run.apply(&md, &[0, 1, 2], false, None).0,
            DeletedApplied::Mask(_)
        ));
        // No deleted row in the row groups read: a selection (of every row).
        let none = Arc::new(DeletedRows {
            by_deletion_vector: [1000u64].into_iter().collect(),
            ..DeletedRows::default()
        });
        assert!(matches!(
            none.apply(&md, &[0, 1, 2], false, None).0,
            DeletedApplied::Selection(_)
        ));
    }

    #[test]
    fn the_mask_follows_the_decoded_rows_across_row_groups() {
        let md = metadata();
        let deleted = Arc::new(DeletedRows {
            by_position_deletes: [1u64, 99, 150].into_iter().collect(),
            by_deletion_vector: [200u64, 203].into_iter().collect(),
        });
        // Row groups 0 and 2 are read: decoded rows 0..100 then 200..300.
        let (DeletedApplied::Mask(mut mask), _) = deleted.apply(&md, &[0, 2], false, None) else {
            panic!("scattered deletes without decoder filters are a mask");
        };
        let unset = |bits: BooleanBuffer| -> Vec<usize> {
            (0..bits.len()).filter(|&i| !bits.value(i)).collect()
        };
        // Batch 1: positions 0..98; 2: 98..102 and 200..202 (crosses row groups); 3: the rest.
        assert_eq!(unset(mask.next_batch(98).unwrap().unwrap()), [1]);
        assert_eq!(unset(mask.next_batch(4).unwrap().unwrap()), [1, 2]);
        assert_eq!(unset(mask.next_batch(98).unwrap().unwrap()), [1]);
        assert!(mask.next_batch(0).unwrap().is_none());
        // More rows than the row groups hold is an error, not a wrong mask.
        assert!(mask.next_batch(1).is_err());
    }

    #[test]
    fn the_mask_follows_another_selection() {
        let md = metadata();
        let deleted = Arc::new(DeletedRows {
            by_deletion_vector: [5u64, 120, 121, 260].into_iter().collect(),
            ..DeletedRows::default()
        });
        // The page index keeps rows 0..10 of rg0, none of rg1, 250..300 of rg2.
        let other = RowSelection::from(vec![
            RowSelector::select(10),
            RowSelector::skip(190),
            RowSelector::skip(50),
            RowSelector::select(50),
        ]);
        let (DeletedApplied::Mask(mut mask), _) =
            deleted.apply(&md, &[0, 1, 2], false, Some(&other))
        else {
            panic!("scattered deletes without decoder filters are a mask");
        };
        let bits = mask.next_batch(60).unwrap().unwrap();
        let unset: Vec<usize> = (0..60).filter(|&i| !bits.value(i)).collect();
        // Decoded row 5 is position 5; decoded row 20 is position 260.
        assert_eq!(unset, [5, 20]);
        assert!(mask.next_batch(1).is_err());
    }
}
