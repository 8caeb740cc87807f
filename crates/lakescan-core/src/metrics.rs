//! [`LakeScanMetrics`]: the one metrics struct of `LakeScanExec`, shown by `EXPLAIN ANALYZE`.

use datafusion::physical_plan::metrics::{
    BaselineMetrics, Count, ExecutionPlanMetricsSet, MetricBuilder, Time,
};

/// Counters of one scan partition. Every counter keeps one meaning:
///
/// | metric                          | meaning                                                  |
/// |---------------------------------|----------------------------------------------------------|
/// | `splits_total`                  | splits taken from the queue                              |
/// | `splits_skipped`                | splits skipped without reading: a filter rejected a constant (partition value, info column such as `$path` or `$bucket`: before the file is opened; a missing column: after its footer) |
/// | `splits_pruned_statistics`      | splits whose every row group was pruned by statistics    |
/// | `row_groups_total`              | row groups whose midpoint lies in a split's range        |
/// | `row_groups_pruned_statistics`  | of those, pruned by min/max/null-count statistics        |
/// | `row_groups_pruned_bloom_filter`| of those, pruned because bloom filters hold none of a point filter's values |
/// | `leaves_decoded`                | Parquet leaf column chunks decoded (per row group read: output and filter leaves) |
/// | `rows_pruned_page_index`        | rows of read row groups skipped by the page index        |
/// | `rows_pruned_row_index`         | rows of read row groups skipped by a row-index filter (`$row_index`) |
/// | `rows_scanned`                  | rows the reader advanced over (decoded for filtering)    |
/// | `rows_removed_reader_filters`   | rows dropped by the per-column filters inside the reader |
/// | `rows_removed_bucket_conversion`| rows of other table buckets dropped by Hive bucket conversion |
/// | `rows_deleted_position`         | rows of read row groups a position-delete file lists (skipped by a row selection, or dropped in the first filter pass when scattered) |
/// | `rows_deleted_vector`           | rows of read row groups the file's deletion vector marks (likewise) |
/// | `rows_deleted_equality`         | rows dropped because an equality-delete file lists their key (Iceberg) |
/// | `delete_files_loaded`           | delete files read (each once per scan, however many splits use it) |
/// | `rows_removed_residual`         | rows dropped by the residual expression                  |
/// | `splits_pruned_dynamic_filter`  | splits not read because a dynamic filter rejects their constants (before the file is opened, or at takeover of a split prepared earlier) or, after prepare, every row group left; `splits_skipped` counts only the static filters' |
/// | `row_groups_pruned_dynamic_filter` | row groups of a split not read yet, pruned by statistics against a dynamic filter that changed after the split was prepared (preloaded, or while it streamed) |
/// | `splits_stopped_dynamic_filter` | splits stopped while they streamed: a dynamic filter that changed meanwhile rejects their constants (Velox reads such a split to its end) |
/// | `rows_removed_dynamic_filter`   | rows dropped by dynamic filters that changed while their split streamed |
/// | `bytes_read`                    | bytes fetched from the object store                      |
/// | `requests_get`                  | GET requests of data files (footers and column chunks; object stores only) |
/// | `requests_deletes`              | GET requests of delete files: each read once per scan, a small one (and a Puffin file's footer with its vectors) in one request (object stores only) |
/// | `requests_planning`             | HTTP requests of the scan's planning: listing and footers (Hive), manifest list and manifests (Iceberg); object stores whose client counts them (`crate::requests`), retries included |
/// | `requests_list`                 | of those, listings (Hive; a scan lists only while it plans) |
/// | `requests_head`                 | of those, `HEAD` requests                                |
/// | `requests_retried`              | retries of the GETs of data files, delete files and Iceberg manifests, body resumptions included (object stores whose client counts them: `crate::requests`); `requests_planning` counts a Hive listing's and its footers' retries |
/// | `time_opening`                  | footer, page index and reader set-up                     |
/// | `time_reading`                  | decoding, filtering and projection (time in the reader's polls, not waiting for I/O; also `elapsed_compute`) |
/// | `time_loading_deletes`          | reading delete files and building their key sets         |
#[derive(Debug, Clone)]
pub struct LakeScanMetrics {
    /// Output rows and compute time.
    pub baseline: BaselineMetrics,
    /// See the table above.
    pub splits_total: Count,
    /// See the table above.
    pub splits_skipped: Count,
    /// See the table above.
    pub splits_pruned_statistics: Count,
    /// See the table above.
    pub row_groups_total: Count,
    /// See the table above.
    pub row_groups_pruned_statistics: Count,
    /// See the table above.
    pub row_groups_pruned_bloom_filter: Count,
    /// See the table above.
    pub leaves_decoded: Count,
    /// See the table above.
    pub rows_pruned_page_index: Count,
    /// See the table above.
    pub rows_pruned_row_index: Count,
    /// See the table above.
    pub rows_scanned: Count,
    /// See the table above.
    pub rows_removed_reader_filters: Count,
    /// See the table above.
    pub rows_removed_bucket_conversion: Count,
    /// See the table above.
    pub rows_deleted_position: Count,
    /// See the table above.
    pub rows_deleted_vector: Count,
    /// See the table above.
    pub rows_deleted_equality: Count,
    /// See the table above.
    pub delete_files_loaded: Count,
    /// See the table above.
    pub rows_removed_residual: Count,
    /// See the table above.
    pub row_groups_pruned_dynamic_filter: Count,
    /// See the table above.
    pub splits_pruned_dynamic_filter: Count,
    /// See the table above.
    pub splits_stopped_dynamic_filter: Count,
    /// See the table above.
    pub rows_removed_dynamic_filter: Count,
    /// See the table above.
    pub bytes_read: Count,
    /// See the table above (registered only for object stores: [`Self::with_requests`]).
    pub requests_get: Count,
    /// See the table above (registered only for object stores: [`Self::with_requests`]).
    pub requests_deletes: Count,
    /// See the table above (registered only for object stores: [`Self::with_requests`]).
    pub requests_retried: Count,
    /// See the table above.
    pub time_opening: Time,
    /// See the table above.
    pub time_reading: Time,
    /// See the table above.
    pub time_loading_deletes: Time,
}

/// What reads of one kind of file add to: the bytes fetched, the GET requests sent, and
/// their retries (a `CountingReader` built with [`crate::io::CountingReader::counted`]
/// counts into them). Clones count into the same metrics; the default counts into nothing.
#[derive(Debug, Clone, Default)]
pub struct ReadCounters {
    /// Bytes fetched.
    pub bytes: Count,
    /// GET requests sent.
    pub requests: Count,
    /// Their retries.
    pub retried: Count,
}

impl LakeScanMetrics {
    /// Registers the metrics of `partition` in `set`.
    pub fn new(set: &ExecutionPlanMetricsSet, partition: usize) -> Self {
        let count = |name: &'static str| MetricBuilder::new(set).counter(name, partition);
        let time = |name: &'static str| MetricBuilder::new(set).subset_time(name, partition);
        Self {
            baseline: BaselineMetrics::new(set, partition),
            splits_total: count("splits_total"),
            splits_skipped: count("splits_skipped"),
            splits_pruned_statistics: count("splits_pruned_statistics"),
            row_groups_total: count("row_groups_total"),
            row_groups_pruned_statistics: count("row_groups_pruned_statistics"),
            row_groups_pruned_bloom_filter: count("row_groups_pruned_bloom_filter"),
            leaves_decoded: count("leaves_decoded"),
            rows_pruned_page_index: count("rows_pruned_page_index"),
            rows_pruned_row_index: count("rows_pruned_row_index"),
            rows_scanned: count("rows_scanned"),
            rows_removed_reader_filters: count("rows_removed_reader_filters"),
            rows_removed_bucket_conversion: count("rows_removed_bucket_conversion"),
            rows_deleted_position: count("rows_deleted_position"),
            rows_deleted_vector: count("rows_deleted_vector"),
            rows_deleted_equality: count("rows_deleted_equality"),
            delete_files_loaded: count("delete_files_loaded"),
            rows_removed_residual: count("rows_removed_residual"),
            row_groups_pruned_dynamic_filter: count("row_groups_pruned_dynamic_filter"),
            splits_pruned_dynamic_filter: count("splits_pruned_dynamic_filter"),
            splits_stopped_dynamic_filter: count("splits_stopped_dynamic_filter"),
            rows_removed_dynamic_filter: count("rows_removed_dynamic_filter"),
            bytes_read: count("bytes_read"),
            requests_get: Count::new(),
            requests_deletes: Count::new(),
            requests_retried: Count::new(),
            time_opening: time("time_opening"),
            time_reading: time("time_reading"),
            time_loading_deletes: time("time_loading_deletes"),
        }
    }
}

impl LakeScanMetrics {
    /// Shows `requests_get` in `set` too: the scan reads from an object store (local files
    /// make no requests, and their plans do not show the metric).
    pub fn with_requests(mut self, set: &ExecutionPlanMetricsSet, partition: usize) -> Self {
        self.requests_get = MetricBuilder::new(set).counter("requests_get", partition);
        self.requests_deletes = MetricBuilder::new(set).counter("requests_deletes", partition);
        self.requests_retried = MetricBuilder::new(set).counter("requests_retried", partition);
        self
    }

    /// The counters reads of delete files add to: `bytes_read`, `requests_deletes`,
    /// `requests_retried`.
    pub fn delete_reads(&self) -> ReadCounters {
        ReadCounters {
            bytes: self.bytes_read.clone(),
            requests: self.requests_deletes.clone(),
            retried: self.requests_retried.clone(),
        }
    }

    /// Runs `future` (the reader producing a batch), adding the time spent in its polls to
    /// `time_reading` and `elapsed_compute`: the decoding it does when its bytes are there,
    /// not the time it waits for them.
    pub async fn timed_read<F: Future>(&self, future: F) -> F::Output {
        let mut future = std::pin::pin!(future);
        let compute = self.baseline.elapsed_compute();
        std::future::poll_fn(|cx| {
            let _reading = self.time_reading.timer();
            let _compute = compute.timer();
            future.as_mut().poll(cx)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    #[tokio::test]
    async fn reading_time_counts_the_polls_and_not_the_waits() {
        let set = ExecutionPlanMetricsSet::new();
        let metrics = LakeScanMetrics::new(&set, 0);
        let work = Duration::from_millis(5);
        let wait = Duration::from_millis(600);
        metrics
            .timed_read(async {
                // Waits (no poll runs meanwhile), then works in a poll.
                tokio::time::sleep(wait).await;
                let start = Instant::now();
                while start.elapsed() < work {
                    std::hint::spin_loop();
                }
            })
            .await;
        let reading = Duration::from_nanos(metrics.time_reading.value() as u64);
        let compute = Duration::from_nanos(metrics.baseline.elapsed_compute().value() as u64);
        for counted in [reading, compute] {
            assert!(counted >= work && counted < wait, "{counted:?}");
        }
    }
}
