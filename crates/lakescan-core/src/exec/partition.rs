//! One output partition of a scan: it pops its splits from the [`SplitQueue`], drives its
//! [`FileDataSource`] through them, and prepares the next `lakescan.preload_splits` splits on
//! their own tasks ([`Preloads`]) while the current one streams. The takeover of a
//! preloaded split is [`FileDataSource::install`]: the dynamic filters in force then apply.

use std::collections::VecDeque;
use std::sync::Arc;
use std::task::Poll;

use arrow::array::RecordBatch;
use datafusion::common::runtime::SpawnedTask;
use datafusion::common::{Result, internal_err};

use super::scheduling::SplitQueue;
use crate::metrics::LakeScanMetrics;
use crate::source::{FileDataSource, PrepareOn, PreparedSplit};

/// Splits prepared ahead of time on their own tasks while the current one streams, at most
/// `limit`. Dropping it aborts them: a cancelled query leaves no task behind,
/// and the readers they own (open files, memory reservations) go with them.
pub(super) struct Preloads {
    limit: usize,
    tasks: VecDeque<SpawnedTask<Result<PreparedSplit>>>,
}

impl Preloads {
    pub(super) fn new(limit: usize) -> Self {
        // Preload tasks need a Tokio runtime; without one, splits are prepared in turn.
        let limit = if tokio::runtime::Handle::try_current().is_ok() {
            limit
        } else {
            0
        };
        Self {
            limit,
            tasks: VecDeque::new(),
        }
    }

    /// The oldest preloaded split, once prepared. A preparation that failed is the scan's
    /// error, never an empty split.
    async fn take(&mut self) -> Result<Option<PreparedSplit>> {
        let Some(task) = self.tasks.pop_front() else {
            return Ok(None);
        };
        match task.join().await {
            Ok(prepared) => prepared.map(Some),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => internal_err!("a split preload task was cancelled: {e}"),
        }
    }
}

pub(super) struct PartitionState {
    pub(super) partition: usize,
    pub(super) source: FileDataSource,
    pub(super) queue: Arc<SplitQueue>,
    pub(super) preloads: Preloads,
    pub(super) metrics: LakeScanMetrics,
}

impl PartitionState {
    pub(super) async fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        loop {
            if let Some(batch) = self.source.next().await? {
                if batch.num_rows() == 0 {
                    continue;
                }
                let n = self.queue.take(batch.num_rows())?;
                if n == 0 {
                    return Ok(None);
                }
                let batch = batch.slice(0, n);
                let _ = self
                    .metrics
                    .baseline
                    .record_poll(Poll::Ready(Some(Ok(batch.clone()))));
                return Ok(Some(batch));
            }
            let prepared = match self.preloads.take().await? {
                Some(prepared) => Some(prepared),
                None => self.prepare_here().await?,
            };
            let Some(prepared) = prepared else {
                self.metrics.baseline.done();
                return Ok(None);
            };
            // Takeover: the dynamic filters in force now apply to the prepared split.
            self.source.install(prepared)?;
            self.preload()?;
        }
    }

    /// Prepares the next split that passes the filters on this task; `None`: no split left.
    async fn prepare_here(&mut self) -> Result<Option<PreparedSplit>> {
        while let Some(split) = self.queue.pop(self.partition)? {
            if let Some(pending) = self.source.start(split)? {
                return pending.prepare(PrepareOn::PartitionTask).await.map(Some);
            }
        }
        Ok(None)
    }

    /// Starts preparing the following splits of this partition's own list on their own
    /// tasks, up to the limit (splits of other lists are taken only when this partition has
    /// nothing to read: [`Self::prepare_here`]).
    fn preload(&mut self) -> Result<()> {
        while self.preloads.tasks.len() < self.preloads.limit {
            let Some(split) = self.queue.pop_own(self.partition)? else {
                break;
            };
            if let Some(pending) = self.source.start(split)? {
                let task = SpawnedTask::spawn(pending.prepare(PrepareOn::PreloadTask));
                self.preloads.tasks.push_back(task);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_runtime_splits_are_prepared_in_turn() {
        assert_eq!(Preloads::new(3).limit, 0);
    }

    #[tokio::test]
    async fn a_runtime_preloads_up_to_the_limit_and_nothing_when_empty() {
        let mut preloads = Preloads::new(2);
        assert_eq!(preloads.limit, 2);
        assert!(preloads.take().await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_failed_preparation_is_the_scans_error() {
        let mut preloads = Preloads::new(1);
        preloads.tasks.push_back(SpawnedTask::spawn(async {
            datafusion::common::exec_err!("footer of 'f' is corrupt")
        }));
        let err = preloads.take().await.unwrap_err().to_string();
        assert!(err.contains("footer of 'f' is corrupt"), "{err}");
    }
}
