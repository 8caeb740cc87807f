//! Rows of one data file that deletes remove by position (Iceberg position deletes and
//! deletion vectors), and how every format's reader drops them: [`DeletedRows`] as a table
//! format's [`crate::reader::DeleteSource`] gives them, [`DeletedPositions`] (their union
//! built once per split, counts by source), and [`DeletedMask`], the mask over the rows a
//! decoder yields. Positions are file positions (the row index), whatever split or filter
//! reads them. The Parquet reader may instead turn long deleted runs into a row selection
//! (`crate::parquet::deletes`); the ORC reader skips long runs by the same positions.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;

use arrow::array::BooleanBufferBuilder;
use arrow::buffer::BooleanBuffer;
use datafusion::common::{Result, internal_err};
use roaring::RoaringTreemap;

/// Deleted positions of one file, by where they come from (for metrics).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeletedRows {
    /// Positions listed by position-delete files.
    pub by_position_deletes: RoaringTreemap,
    /// Positions set in the file's deletion vector.
    pub by_deletion_vector: RoaringTreemap,
}

impl DeletedRows {
    /// Whether no row is deleted.
    pub fn is_empty(&self) -> bool {
        self.by_position_deletes.is_empty() && self.by_deletion_vector.is_empty()
    }

    /// Every deleted position; usually one source is empty and nothing is built.
    pub fn all(&self) -> Cow<'_, RoaringTreemap> {
        match (
            self.by_position_deletes.is_empty(),
            self.by_deletion_vector.is_empty(),
        ) {
            (_, true) => Cow::Borrowed(&self.by_position_deletes),
            (true, false) => Cow::Borrowed(&self.by_deletion_vector),
            (false, false) => Cow::Owned(&self.by_position_deletes | &self.by_deletion_vector),
        }
    }
}

/// Deleted rows within some range of positions, by source.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeletedCounts {
    /// Deleted by position-delete files.
    pub position_deletes: u64,
    /// Deleted by the deletion vector (and not by a position-delete file).
    pub deletion_vector: u64,
}

/// A split's view of its file's [`DeletedRows`]: the union of both sources, built once
/// (shared, not copied, when one source is empty, as it usually is).
#[derive(Debug, Clone)]
pub struct DeletedPositions {
    rows: Arc<DeletedRows>,
    /// Both sources' positions, when both have some (shared by the clones).
    union: Option<Arc<RoaringTreemap>>,
}

impl DeletedPositions {
    /// The positions of `rows`.
    pub fn new(rows: Arc<DeletedRows>) -> Self {
        let union = match rows.all() {
            Cow::Borrowed(_) => None,
            Cow::Owned(union) => Some(Arc::new(union)),
        };
        Self { rows, union }
    }

    /// Every deleted position.
    pub fn all(&self) -> &RoaringTreemap {
        match &self.union {
            Some(union) => union.as_ref(),
            None if self.rows.by_position_deletes.is_empty() => &self.rows.by_deletion_vector,
            None => &self.rows.by_position_deletes,
        }
    }

    /// The deleted rows among `positions`, by source.
    pub fn counts(&self, positions: Range<u64>) -> DeletedCounts {
        let by_files = self
            .rows
            .by_position_deletes
            .range_cardinality(positions.clone());
        DeletedCounts {
            position_deletes: by_files,
            deletion_vector: self.all().range_cardinality(positions) - by_files,
        }
    }

    /// The deleted positions in `range`, ascending.
    pub fn in_range(&self, range: Range<u64>) -> impl Iterator<Item = u64> + '_ {
        let mut from = self.all().iter();
        from.advance_to(range.start);
        from.take_while(move |p| *p < range.end)
    }
}

/// The deleted rows of one split as a mask over its decoded rows, batch by batch.
#[derive(Debug)]
pub struct DeletedMask {
    positions: DeletedPositions,
    /// File positions of the rows the decoder has yet to yield, in order.
    decoded: VecDeque<Range<u64>>,
}

impl DeletedMask {
    /// The mask of `positions` over a decoder that yields the rows of `decoded` (file
    /// positions, in order).
    pub fn new(positions: DeletedPositions, decoded: VecDeque<Range<u64>>) -> Self {
        Self { positions, decoded }
    }

    /// The deleted positions it masks.
    pub fn positions(&self) -> &DeletedPositions {
        &self.positions
    }

    /// The rows to keep among the decoder's next `rows` rows; `None` when none is deleted.
    pub fn next_batch(&mut self, rows: usize) -> Result<Option<BooleanBuffer>> {
        let deleted = self.positions.all();
        let mut kept: Option<BooleanBufferBuilder> = None;
        let mut at = 0usize;
        while at < rows {
            let Some(range) = self.decoded.front_mut() else {
                return internal_err!(
                    "the decoder yielded more rows than the mask was planned for"
                );
            };
            let n = ((rows - at) as u64).min(range.end - range.start);
            let mut positions = deleted.iter();
            positions.advance_to(range.start);
            for position in positions.take_while(|p| *p < range.start + n) {
                let bits = kept.get_or_insert_with(|| {
                    let mut bits = BooleanBufferBuilder::new(rows);
                    bits.append_n(rows, true);
                    bits
                });
                bits.set_bit(at + (position - range.start) as usize, false);
            }
            range.start += n;
            if range.start == range.end {
                self.decoded.pop_front();
            }
            at += n as usize;
        }
        Ok(kept.map(|mut bits| bits.finish()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(files: &[u64], vector: &[u64]) -> Arc<DeletedRows> {
        Arc::new(DeletedRows {
            by_position_deletes: files.iter().copied().collect(),
            by_deletion_vector: vector.iter().copied().collect(),
        })
    }

    #[test]
    fn positions_count_each_deleted_row_once_by_its_first_source() {
        let positions = DeletedPositions::new(rows(&[5, 6, 150], &[6, 250]));
        assert_eq!(
            positions.counts(0..300),
            DeletedCounts {
                position_deletes: 3,
                deletion_vector: 1
            }
        );
        let middle = positions.counts(100..200);
        assert_eq!(middle.position_deletes + middle.deletion_vector, 1);
        assert_eq!(
            positions.in_range(6..251).collect::<Vec<_>>(),
            [6, 150, 250]
        );
    }

    #[test]
    fn a_mask_follows_the_decoded_ranges_across_batches() {
        let positions = DeletedPositions::new(rows(&[], &[1, 3, 102]));
        // The decoder yields positions 0..4, then 100..104 (rows 4..100 were skipped).
        let mut mask = DeletedMask::new(positions, [0..4, 100..104].into());
        let first = mask.next_batch(6).unwrap().unwrap();
        assert_eq!(
            first.iter().collect::<Vec<_>>(),
            [true, false, true, false, true, true]
        );
        let second = mask.next_batch(2).unwrap().unwrap();
        assert_eq!(second.iter().collect::<Vec<_>>(), [false, true]);
        assert!(mask.next_batch(1).is_err(), "no row is left to decode");
    }
}
