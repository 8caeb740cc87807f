//! [`ReadAhead`]: on an object store, the row groups of a split are fetched in units of up
//! to [`UNIT_BYTES`], the next unit while the current one decodes (the Parquet reader plans
//! the units from its footer: `crate::parquet::plan`).
//!
//! parquet's stream asks for a row group's bytes when it starts decoding it, so on an object
//! store every row group first waits a round trip, the request and the decoding never
//! overlap, and a row group of small column chunks costs a request of its own. When a split
//! reads whole column chunks (no row selection, no filter inside the decoder), the ranges
//! each row group will ask for are known from the footer (each projected leaf's
//! `byte_range`, in leaf order, as parquet's `InMemoryRowGroup::fetch_ranges` takes them).
//! Consecutive row groups are then grouped into units of at most [`UNIT_BYTES`] (at least one
//! row group each), fetched with one coalesced request set (ranges less than 1 MiB apart are
//! one GET):
//!
//! ```text
//!  decoder asks rg 0 ──▶ unit 0 (rg 0, 1) fetched now; unit 1 (rg 2, 3) fetched ahead
//!  decoder asks rg 1 ──▶ answered from unit 0
//!  decoder asks rg 2 ──▶ answered when unit 1 is in; unit 2 fetched ahead
//!  decoder asks anything else ──▶ fetched as asked; the fetch ahead is cancelled and the
//!                                  split reads without read-ahead from then on
//! ```
//!
//! 8 MiB is the range AWS's S3 performance guidelines recommend for ranged GETs (8–16 MB):
//! large enough that a request's latency is small against its transfer, small enough to
//! keep two units (the one decoding and the one ahead) in memory per split being read.
//! Written by hand: parquet's stream has no read-ahead (its `next_row_group` hands whole
//! row groups to the caller, who would then decode outside the stream and its row filter).

use std::collections::VecDeque;
use std::ops::Range;

use bytes::Bytes;
use tokio::task::JoinHandle;

/// A fetch's answer: the bytes of each range.
pub type Fetched = parquet::errors::Result<Vec<Bytes>>;

/// The most bytes of consecutive row groups fetched together (see the module docs).
pub const UNIT_BYTES: u64 = 8 * 1024 * 1024;

/// The read-ahead of one split (see the module docs).
#[derive(Debug)]
pub struct ReadAhead {
    /// The ranges each row group asks for, in reading order.
    plan: Vec<Vec<Range<u64>>>,
    /// Row groups (positions in `plan`) fetched together.
    units: Vec<Range<usize>>,
    /// The first position of `plan` the decoder may ask for next.
    cursor: usize,
    /// The unit fetched last: its number and each of its row groups' bytes, until asked for.
    current: Option<(usize, VecDeque<Option<Vec<Bytes>>>)>,
    /// The unit fetched ahead and the task fetching it.
    ahead: Option<(usize, JoinHandle<Fetched>)>,
    /// The decoder asked for something unplanned: no more read-ahead.
    stopped: bool,
    /// Requests answered without a fetch of their own.
    served: usize,
}

/// Where the bytes of a request come from.
#[derive(Debug)]
pub enum Answer {
    /// Fetched before, with the unit.
    Served(Vec<Bytes>),
    /// With unit `unit`, once `fetch` is done: [`ReadAhead::install`] then answers for the
    /// row group at `position` of the plan.
    Unit {
        /// The unit.
        unit: usize,
        /// The row group asked for (its position in the plan).
        position: usize,
        /// How the unit's bytes arrive.
        fetch: UnitFetch,
    },
    /// Not planned: fetch what was asked.
    Off,
}

/// How a unit's bytes arrive.
#[derive(Debug)]
pub enum UnitFetch {
    /// From the task that fetched it ahead.
    Ahead(JoinHandle<Fetched>),
    /// By fetching these ranges now.
    Now(Vec<Range<u64>>),
}

/// What to do with one request of the decoder.
#[derive(Debug)]
pub struct Step {
    /// Where its bytes come from.
    pub answer: Answer,
    /// A unit to fetch ahead now, and its ranges ([`ReadAhead::fetching`]).
    pub ahead: Option<(usize, Vec<Range<u64>>)>,
}

impl ReadAhead {
    /// A read-ahead over the planned requests `plan`, one per row group in reading order.
    pub fn new(plan: Vec<Vec<Range<u64>>>) -> Self {
        let mut units: Vec<Range<usize>> = vec![];
        let mut bytes = 0;
        for (at, ranges) in plan.iter().enumerate() {
            let size: u64 = ranges.iter().map(|r| r.end - r.start).sum();
            match units.last_mut() {
                Some(unit) if bytes + size <= UNIT_BYTES => {
                    unit.end = at + 1;
                    bytes += size;
                }
                _ => {
                    units.push(at..at + 1);
                    bytes = size;
                }
            }
        }
        Self {
            plan,
            units,
            cursor: 0,
            current: None,
            ahead: None,
            stopped: false,
            served: 0,
        }
    }

    /// The decoder asks for `ranges`.
    pub fn on_request(&mut self, ranges: &[Range<u64>]) -> Step {
        let off = Step {
            answer: Answer::Off,
            ahead: None,
        };
        if self.stopped {
            return off;
        }
        let Some(at) = (self.cursor..self.plan.len()).find(|&at| self.plan[at] == ranges) else {
            self.stop();
            return off;
        };
        self.cursor = at + 1;
        let unit = self.units.partition_point(|u| u.end <= at);
        if let Some((loaded, row_groups)) = &mut self.current
            && *loaded == unit
            && let Some(bytes) = row_groups
                .get_mut(at - self.units[unit].start)
                .and_then(Option::take)
        {
            self.served += 1;
            return Step {
                answer: Answer::Served(bytes),
                ahead: None,
            };
        }
        let fetch = match self.ahead.take() {
            Some((fetching, task)) if fetching == unit => {
                self.served += 1;
                UnitFetch::Ahead(task)
            }
            other => {
                if let Some((_, task)) = other {
                    task.abort();
                }
                UnitFetch::Now(self.unit_ranges(unit))
            }
        };
        let next = unit + 1;
        Step {
            answer: Answer::Unit {
                unit,
                position: at,
                fetch,
            },
            ahead: (next < self.units.len()).then(|| (next, self.unit_ranges(next))),
        }
    }

    /// `task` fetches unit `unit` ahead.
    pub fn fetching(&mut self, unit: usize, task: JoinHandle<Fetched>) {
        if let Some((_, old)) = self.ahead.replace((unit, task)) {
            old.abort();
        }
    }

    /// Unit `unit` arrived as `fetched` (the bytes of its ranges, in order): kept, and the
    /// bytes of the row group at `position` returned (`None` when `position` is not in the
    /// unit or the bytes do not match its ranges).
    pub fn install(
        &mut self,
        unit: usize,
        position: usize,
        fetched: Vec<Bytes>,
    ) -> Option<Vec<Bytes>> {
        let rows = self.units.get(unit)?.clone();
        if fetched.len() != self.plan[rows.clone()].iter().map(Vec::len).sum::<usize>() {
            return None;
        }
        let mut parts = fetched.into_iter();
        let mut row_groups: VecDeque<Option<Vec<Bytes>>> = self.plan[rows.clone()]
            .iter()
            .map(|ranges| Some(parts.by_ref().take(ranges.len()).collect()))
            .collect();
        let bytes = row_groups
            .get_mut(position.checked_sub(rows.start)?)
            .and_then(Option::take);
        if !self.stopped {
            self.current = Some((unit, row_groups));
        }
        bytes
    }

    /// The ranges of unit `unit`'s row groups, in order.
    fn unit_ranges(&self, unit: usize) -> Vec<Range<u64>> {
        self.plan[self.units[unit].clone()].concat()
    }

    /// How many requests were answered without a fetch of their own.
    pub fn served(&self) -> usize {
        self.served
    }

    fn stop(&mut self) {
        self.stopped = true;
        self.current = None;
        if let Some((_, task)) = self.ahead.take() {
            task.abort();
        }
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

    /// `n` bytes of each range.
    fn bytes_of(ranges: &[Range<u64>]) -> Vec<Bytes> {
        ranges
            .iter()
            .map(|r| Bytes::from(vec![r.start as u8; (r.end - r.start) as usize]))
            .collect()
    }

    const MIB: u64 = 1024 * 1024;

    /// Row groups of `mib` MiB each, one chunk per row group, back to back.
    fn plan(mib: &[u64]) -> Vec<Vec<Range<u64>>> {
        let mut start = 0;
        mib.iter()
            .map(|m| {
                let range = start..start + m * MIB;
                start = range.end;
                vec![range]
            })
            .collect()
    }

    #[test]
    fn row_groups_are_grouped_up_to_the_unit_size() {
        let ahead = ReadAhead::new(plan(&[3, 3, 3, 9, 1, 1]));
        assert_eq!(ahead.units, vec![0..2, 2..3, 3..4, 4..6]);
        assert!(ReadAhead::new(vec![]).units.is_empty());
    }

    #[tokio::test]
    async fn a_unit_answers_its_row_groups_and_the_next_is_fetched_ahead() {
        let plan = plan(&[3, 3, 3, 3]);
        let mut ahead = ReadAhead::new(plan.clone());
        // Row group 0: unit 0 (row groups 0 and 1) now, unit 1 ahead.
        let step = ahead.on_request(&plan[0]);
        let Answer::Unit {
            unit: 0,
            position: 0,
            fetch: UnitFetch::Now(ranges),
        } = step.answer
        else {
            panic!("{step:?}")
        };
        assert_eq!(ranges, [plan[0].clone(), plan[1].clone()].concat());
        let (next, next_ranges) = step.ahead.unwrap();
        assert_eq!(
            (next, next_ranges),
            (1, [plan[2].clone(), plan[3].clone()].concat())
        );
        ahead.fetching(1, done());
        let got = ahead.install(0, 0, bytes_of(&ranges)).unwrap();
        assert_eq!(got[0].len() as u64, 3 * MIB);
        // Row group 1: from unit 0, nothing fetched.
        let step = ahead.on_request(&plan[1]);
        assert!(matches!(step.answer, Answer::Served(ref b) if b[0][0] == plan[1][0].start as u8));
        assert!(step.ahead.is_none());
        // Row group 2: unit 1, fetched ahead; no unit after it.
        let step = ahead.on_request(&plan[2]);
        assert!(matches!(
            step.answer,
            Answer::Unit {
                unit: 1,
                position: 2,
                fetch: UnitFetch::Ahead(_)
            }
        ));
        assert!(step.ahead.is_none());
        assert_eq!(ahead.served(), 2);
    }

    #[tokio::test]
    async fn a_request_off_the_plan_stops_the_read_ahead() {
        let plan = plan(&[9, 9, 9]);
        let mut ahead = ReadAhead::new(plan.clone());
        let step = ahead.on_request(&plan[0]);
        let (unit, _) = step.ahead.unwrap();
        ahead.fetching(unit, done());
        // The decoder asks for pages instead of the planned chunk.
        let pages = [
            plan[1][0].start..plan[1][0].start + 10,
            plan[1][0].end - 10..plan[1][0].end,
        ];
        assert!(matches!(ahead.on_request(&pages).answer, Answer::Off));
        assert!(matches!(ahead.on_request(&plan[2]).answer, Answer::Off));
        assert_eq!(ahead.served(), 0);
    }

    #[tokio::test]
    async fn skipped_row_groups_are_passed_over() {
        let plan = plan(&[9, 9, 9]);
        let mut ahead = ReadAhead::new(plan.clone());
        // The decoder starts at the second row group (the first was pruned after planning).
        let step = ahead.on_request(&plan[1]);
        assert!(matches!(
            step.answer,
            Answer::Unit {
                unit: 1,
                position: 1,
                ..
            }
        ));
        assert_eq!(step.ahead.map(|a| a.0), Some(2));
        // Bytes that do not match the unit's ranges answer nothing.
        assert!(ahead.install(1, 1, vec![]).is_none());
    }

    /// parquet's own stream asks for exactly the planned ranges: one coalesced request
    /// answers every row group of a unit, with the same rows.
    #[tokio::test]
    async fn parquets_stream_is_answered_by_units() {
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

        use parquet::arrow::ProjectionMask;

        use crate::io::CountingReader;
        use crate::parquet::plan::chunk_ranges;

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
        let bytes = Bytes::from(file);
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
        // The four row groups are one unit: one GET (their chunks are less than 1 MiB
        // apart), the last three answered from it.
        assert_eq!(requests.value(), 1);
        assert_eq!(reader.served_ahead(), 3);
    }
}
