//! [`ReadAhead`]: on an object store, the next row group's column chunks are fetched while
//! the current one decodes.
//!
//! parquet's stream asks for a row group's bytes when it starts decoding it, so on an object
//! store every row group first waits a round trip, and the request and the decoding never
//! overlap. When a split reads whole column chunks (no row selection, no filter inside the
//! decoder), the ranges each row group will ask for are known from the footer (each projected
//! leaf's `byte_range`, in leaf order, as parquet's `InMemoryRowGroup::fetch_ranges` takes
//! them):
//!
//! ```text
//!  decoder asks rg 0 ──▶ fetched now;  rg 1 fetched ahead (a task of its own)
//!  decoder asks rg 1 ──▶ served by the fetch ahead;  rg 2 fetched ahead
//!  decoder asks anything else ──▶ fetched now; the fetch ahead is cancelled and the split
//!                                  reads without read-ahead from then on
//! ```
//!
//! One row group ahead: one more row group's bytes in memory per split being read. The
//! same requests are sent (the same ranges, coalesced the same way); they are only sent
//! earlier. Written by hand: parquet's stream has no read-ahead (its
//! `next_row_group` hands whole row groups to the caller, who would then decode outside the
//! stream and its row filter).

use std::collections::VecDeque;
use std::ops::Range;

use bytes::Bytes;
use parquet::arrow::ProjectionMask;
use parquet::file::metadata::ParquetMetaData;
use tokio::task::JoinHandle;

/// A fetch's answer: the bytes of each range.
pub type Fetched = parquet::errors::Result<Vec<Bytes>>;

/// The byte ranges the decoder asks for when it reads `row_groups` (in that order) whole,
/// with the leaves of `mask`.
pub fn chunk_ranges(
    metadata: &ParquetMetaData,
    row_groups: &[usize],
    mask: &ProjectionMask,
) -> Vec<Vec<Range<u64>>> {
    row_groups
        .iter()
        .map(|&rg| {
            metadata
                .row_group(rg)
                .columns()
                .iter()
                .enumerate()
                .filter(|(leaf, _)| mask.leaf_included(*leaf))
                .map(|(_, column)| {
                    let (start, length) = column.byte_range();
                    start..start + length
                })
                .collect()
        })
        .collect()
}

/// The read-ahead of one split (see the module docs).
#[derive(Debug)]
pub struct ReadAhead {
    /// The ranges of the row groups not asked for nor fetched yet, in reading order.
    upcoming: VecDeque<Vec<Range<u64>>>,
    /// The row group fetched ahead: its ranges and the task fetching them.
    ahead: Option<(Vec<Range<u64>>, JoinHandle<Fetched>)>,
    /// The decoder asked for something unplanned: no more read-ahead.
    stopped: bool,
    /// Requests answered by a fetch made ahead.
    served: usize,
}

/// What to do with one request of the decoder.
#[derive(Debug)]
pub struct Step {
    /// The fetch made ahead for exactly these ranges: its answer is the request's.
    pub taken: Option<JoinHandle<Fetched>>,
    /// The ranges to fetch ahead now.
    pub next: Option<Vec<Range<u64>>>,
}

impl ReadAhead {
    /// A read-ahead over the planned requests `plan`, one per row group in reading order.
    pub fn new(plan: Vec<Vec<Range<u64>>>) -> Self {
        Self {
            upcoming: plan.into(),
            ahead: None,
            stopped: false,
            served: 0,
        }
    }

    /// The decoder asks for `ranges`.
    pub fn on_request(&mut self, ranges: &[Range<u64>]) -> Step {
        let none = Step {
            taken: None,
            next: None,
        };
        if self.stopped {
            return none;
        }
        let taken = match self.ahead.take() {
            Some((planned, task)) if planned == ranges => {
                self.served += 1;
                Some(task)
            }
            Some((_, task)) => {
                task.abort();
                self.stop();
                return none;
            }
            None => match self.upcoming.iter().position(|r| r == ranges) {
                Some(at) => {
                    self.upcoming.drain(..=at);
                    None
                }
                None => {
                    self.stop();
                    return none;
                }
            },
        };
        Step {
            taken,
            next: self.upcoming.pop_front(),
        }
    }

    /// `task` fetches `ranges` ahead.
    pub fn fetching(&mut self, ranges: Vec<Range<u64>>, task: JoinHandle<Fetched>) {
        if let Some((_, old)) = self.ahead.replace((ranges, task)) {
            old.abort();
        }
    }

    /// How many requests a fetch made ahead answered.
    pub fn served(&self) -> usize {
        self.served
    }

    fn stop(&mut self) {
        self.stopped = true;
        self.upcoming.clear();
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        // A split that ends early (a LIMIT, an error) does not fetch on.
        if let Some((_, task)) = self.ahead.take() {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done() -> JoinHandle<Fetched> {
        tokio::spawn(async { Ok(vec![]) })
    }

    #[tokio::test]
    async fn each_planned_request_fetches_the_next_ahead() {
        let plan = vec![vec![0..4, 8..12], vec![20..24], vec![30..34]];
        let mut ahead = ReadAhead::new(plan.clone());
        let step = ahead.on_request(&plan[0]);
        assert!(step.taken.is_none());
        assert_eq!(step.next.as_ref(), Some(&plan[1]));
        ahead.fetching(plan[1].clone(), done());
        let step = ahead.on_request(&plan[1]);
        assert!(step.taken.is_some());
        assert_eq!(step.next.as_ref(), Some(&plan[2]));
        ahead.fetching(plan[2].clone(), done());
        let step = ahead.on_request(&plan[2]);
        assert!(step.taken.is_some() && step.next.is_none());
        assert_eq!(ahead.served(), 2);
    }

    #[tokio::test]
    async fn a_request_off_the_plan_stops_the_read_ahead() {
        let plan = vec![vec![0..4], vec![20..24], vec![30..34]];
        let mut ahead = ReadAhead::new(plan.clone());
        let step = ahead.on_request(&plan[0]);
        ahead.fetching(step.next.unwrap(), done());
        // The decoder asks for pages instead of the planned chunk.
        let step = ahead.on_request(&[21..22, 23..24]);
        assert!(step.taken.is_none() && step.next.is_none());
        let step = ahead.on_request(&plan[2]);
        assert!(step.taken.is_none() && step.next.is_none());
        assert_eq!(ahead.served(), 0);

        // A first request off the plan: nothing fetched ahead at all.
        let mut ahead = ReadAhead::new(plan.clone());
        assert!(ahead.on_request(&[1..2, 3..4]).next.is_none());
        assert!(ahead.on_request(&plan[1]).next.is_none());
    }

    /// parquet's own stream asks for exactly the planned ranges: every row group after the
    /// first is answered by the fetch made ahead, with the same requests and rows.
    #[tokio::test]
    async fn parquets_stream_is_served_ahead() {
        use std::sync::Arc;

        use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
        use datafusion::physical_plan::metrics::Count;
        use futures::TryStreamExt;
        use object_store::memory::InMemory;
        use object_store::path::Path;
        use object_store::{ObjectStore, ObjectStoreExt};
        use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
        use parquet::arrow::{ArrowWriter, ParquetRecordBatchStreamBuilder};
        use parquet::file::properties::WriterProperties;

        use crate::parquet::open::CountingReader;

        let a: ArrayRef = Arc::new(Int64Array::from_iter_values(0..1000));
        let b: ArrayRef = Arc::new(StringArray::from_iter_values(
            (0..1000).map(|i| format!("v{i}")),
        ));
        let c: ArrayRef = Arc::new(Int64Array::from_iter_values((0..1000).map(|i| i * 2)));
        let batch = RecordBatch::try_from_iter([("a", a), ("b", b), ("c", c)]).unwrap();
        let mut file = vec![];
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(250))
            .build();
        let mut writer = ArrowWriter::try_new(&mut file, batch.schema(), Some(props)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let size = file.len() as u64;
        let bytes = bytes::Bytes::from(file);
        let metadata = ArrowReaderMetadata::load(&bytes, ArrowReaderOptions::new()).unwrap();
        assert_eq!(metadata.metadata().num_row_groups(), 4);

        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let path = Path::from("t/f.parquet");
        store.put(&path, bytes.into()).await.unwrap();
        let descr = metadata.metadata().file_metadata().schema_descr_ptr();
        let mask = ProjectionMask::leaves(&descr, [0, 2]);
        let row_groups = vec![0, 1, 2, 3];
        let plan = chunk_ranges(metadata.metadata(), &row_groups, &mask);
        let requests = Count::new();
        let reader = CountingReader::open(&store, &path, size, Count::new())
            .counting_requests(requests.clone(), Count::new())
            .with_read_ahead(plan);
        let stream = ParquetRecordBatchStreamBuilder::new_with_metadata(reader.clone(), metadata)
            .with_row_groups(row_groups)
            .with_projection(mask)
            .build()
            .unwrap();
        let batches: Vec<RecordBatch> = stream.try_collect().await.unwrap();
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(rows, 1000);
        let last = batches.last().unwrap();
        let c = last
            .column(1)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        assert_eq!(c.value(c.len() - 1), 1998);
        // One request per row group (the two chunks of each are adjacent: one GET), three of
        // them sent ahead.
        assert_eq!(requests.value(), 4);
        assert_eq!(reader.served_ahead(), 3);
    }

    #[tokio::test]
    async fn skipped_row_groups_are_passed_over() {
        let plan = vec![vec![0..4], vec![20..24], vec![30..34]];
        let mut ahead = ReadAhead::new(plan.clone());
        // The decoder starts at the second row group (the first was pruned after planning).
        let step = ahead.on_request(&plan[1]);
        assert!(step.taken.is_none());
        assert_eq!(step.next.as_ref(), Some(&plan[2]));
    }
}
