//! Pruning summaries built from the runtime metrics of `LakeScanExec` nodes.

use std::fmt;
use std::sync::Arc;

use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::metrics::{MetricValue, MetricsSet};

/// Name of lakescan's scan operator.
pub const SCAN_NODE: &str = "LakeScanExec";

/// Metrics of all `LakeScanExec` nodes of one executed plan, summed up.
///
/// A field is `None` when no scan reported the metric.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanSummary {
    /// Number of `LakeScanExec` nodes found in the plan.
    pub scans: usize,
    /// Partitions found by listing.
    pub partitions_total: Option<usize>,
    /// Partitions eliminated by partition filters.
    pub partitions_pruned: Option<usize>,
    /// Splits (file ranges) planned.
    pub splits_total: Option<usize>,
    /// Splits skipped without reading row data.
    pub splits_skipped: Option<usize>,
    /// Row groups in the scanned files.
    pub row_groups_total: Option<usize>,
    /// Row groups pruned using min/max statistics.
    pub row_groups_pruned: Option<usize>,
    /// Rows decoded by the scan.
    pub rows_scanned: Option<usize>,
    /// Rows dropped by filters pushed into the Parquet reader.
    pub rows_removed_by_reader_filters: Option<usize>,
    /// Rows dropped by the residual filter inside the scan.
    pub rows_removed_by_residual: Option<usize>,
    /// Rows produced by the scan nodes.
    pub scan_output_rows: Option<usize>,
    /// Bytes read from storage.
    pub bytes_read: Option<usize>,
    /// GET requests of data files, of delete files, and the retries of all requests
    /// (object stores only).
    pub requests: Option<(usize, usize, usize)>,
    /// Planning's requests: all, listings, `HEAD`s (object stores only).
    pub planning_requests: Option<[usize; 3]>,
    /// Rows removed by Iceberg deletes: position deletes, deletion vectors, equality deletes.
    pub rows_deleted: [Option<usize>; 3],
}

impl ScanSummary {
    /// Collects and sums the metrics of every `LakeScanExec` in `plan`.
    ///
    /// Call after the plan was executed, otherwise the counters are zero.
    pub fn from_plan(plan: &Arc<dyn ExecutionPlan>) -> Self {
        let mut summary = Self::default();
        for metrics in scan_metrics(plan) {
            summary.add(&metrics);
        }
        summary
    }

    fn add(&mut self, metrics: &MetricsSet) {
        self.scans += 1;
        let rg_stats = "row_groups_pruned_statistics";
        add_to(
            &mut self.partitions_total,
            total_metric(metrics, "partitions_total", None),
        );
        add_to(
            &mut self.partitions_pruned,
            count_metric(metrics, "partitions_pruned"),
        );
        add_to(
            &mut self.splits_total,
            total_metric(metrics, "splits_total", None),
        );
        add_to(
            &mut self.splits_skipped,
            count_metric(metrics, "splits_skipped"),
        );
        let rg_total = total_metric(metrics, "row_groups_total", Some(rg_stats));
        add_to(&mut self.row_groups_total, rg_total);
        add_to(&mut self.row_groups_pruned, count_metric(metrics, rg_stats));
        add_to(
            &mut self.rows_scanned,
            count_metric(metrics, "rows_scanned"),
        );
        let reader = count_metric(metrics, "rows_removed_reader_filters");
        add_to(&mut self.rows_removed_by_reader_filters, reader);
        let residual = count_metric(metrics, "rows_removed_residual");
        add_to(&mut self.rows_removed_by_residual, residual);
        add_to(&mut self.scan_output_rows, metrics.output_rows());
        add_to(&mut self.bytes_read, count_metric(metrics, "bytes_read"));
        if let Some(gets) = count_metric(metrics, "requests_get") {
            let retried = count_metric(metrics, "requests_retried").unwrap_or(0);
            let deletes = count_metric(metrics, "requests_deletes").unwrap_or(0);
            let (g, d, r) = self.requests.unwrap_or((0, 0, 0));
            self.requests = Some((g + gets, d + deletes, r + retried));
        }
        if let Some(sent) = count_metric(metrics, "requests_planning") {
            let list = count_metric(metrics, "requests_list").unwrap_or(0);
            let head = count_metric(metrics, "requests_head").unwrap_or(0);
            let [s, l, h] = self.planning_requests.unwrap_or_default();
            self.planning_requests = Some([s + sent, l + list, h + head]);
        }
        let deletes = [
            "rows_deleted_position",
            "rows_deleted_vector",
            "rows_deleted_equality",
        ];
        for (acc, name) in self.rows_deleted.iter_mut().zip(deletes) {
            add_to(acc, count_metric(metrics, name));
        }
    }

    /// Renders the summary as an indented block; `rows_returned` is the
    /// number of rows the whole query returned.
    pub fn render(&self, rows_returned: usize) -> String {
        SummaryDisplay {
            summary: self,
            rows_returned,
        }
        .to_string()
    }
}

struct SummaryDisplay<'a> {
    summary: &'a ScanSummary,
    rows_returned: usize,
}

impl fmt::Display for SummaryDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.summary;
        if s.scans == 0 {
            return writeln!(
                f,
                "Pruning summary: no {SCAN_NODE} in the plan (answered without a table scan, \
                 e.g. from statistics); {} row(s) returned",
                self.rows_returned
            );
        }
        writeln!(f, "Pruning summary ({} x {SCAN_NODE}):", s.scans)?;
        writeln!(
            f,
            "  partitions pruned : {}",
            ratio(s.partitions_pruned, s.partitions_total)
        )?;
        writeln!(
            f,
            "  splits skipped    : {}",
            ratio(s.splits_skipped, s.splits_total)
        )?;
        writeln!(
            f,
            "  row groups pruned : {}",
            ratio(s.row_groups_pruned, s.row_groups_total)
        )?;
        writeln!(f, "  rows scanned      : {}", opt(s.rows_scanned))?;
        writeln!(
            f,
            "  rows filtered     : {} in reader, {} by residual filter",
            opt(s.rows_removed_by_reader_filters),
            opt(s.rows_removed_by_residual)
        )?;
        writeln!(
            f,
            "  rows returned     : {} (scan output: {})",
            self.rows_returned,
            opt(s.scan_output_rows)
        )?;
        let [position, vector, equality] = s.rows_deleted.map(|d| d.unwrap_or(0));
        if position + vector + equality > 0 {
            writeln!(
                f,
                "  rows deleted      : {position} by position deletes, {vector} by deletion \
                 vectors (never decoded), {equality} by equality deletes"
            )?;
        }
        if let Some((gets, deletes, retried)) = s.requests {
            writeln!(
                f,
                "  GET requests      : {gets} of data files, {deletes} of delete files \
                 ({retried} retried)"
            )?;
        }
        if let Some([sent, list, head]) = s.planning_requests {
            writeln!(
                f,
                "  planning requests : {sent} ({list} LIST, {head} HEAD, the rest GET)"
            )?;
        }
        writeln!(
            f,
            "  bytes read        : {}",
            s.bytes_read.map_or_else(na, human_bytes)
        )
    }
}

/// Metrics of all `LakeScanExec` nodes in `plan`, depth first.
pub fn scan_metrics(plan: &Arc<dyn ExecutionPlan>) -> Vec<MetricsSet> {
    let mut found = Vec::new();
    visit(plan, &mut found);
    found
}

fn visit(plan: &Arc<dyn ExecutionPlan>, found: &mut Vec<MetricsSet>) {
    if plan.name() == SCAN_NODE {
        found.push(plan.metrics().unwrap_or_default());
    }
    for child in plan.children() {
        visit(child, found);
    }
}

fn add_to(acc: &mut Option<usize>, value: Option<usize>) {
    if let Some(v) = value {
        *acc = Some(acc.unwrap_or(0) + v);
    }
}

/// Value of a counter-like metric.  For [`MetricValue::PruningMetrics`] the
/// number of pruned items is returned.
fn count_metric(metrics: &MetricsSet, name: &str) -> Option<usize> {
    metrics.sum_by_name(name).map(|value| match value {
        MetricValue::PruningMetrics {
            pruning_metrics, ..
        } => pruning_metrics.pruned(),
        other => other.as_usize(),
    })
}

/// Value of the total counter `name`, or, if absent, the total (pruned +
/// matched) of the pruning metric `fallback`.
fn total_metric(metrics: &MetricsSet, name: &str, fallback: Option<&str>) -> Option<usize> {
    count_metric(metrics, name).or_else(|| match metrics.sum_by_name(fallback?)? {
        MetricValue::PruningMetrics {
            pruning_metrics, ..
        } => Some(pruning_metrics.pruned() + pruning_metrics.matched()),
        _ => None,
    })
}

fn na() -> String {
    "n/a".to_string()
}

fn opt(value: Option<usize>) -> String {
    value.map_or_else(na, |v| v.to_string())
}

fn ratio(part: Option<usize>, total: Option<usize>) -> String {
    match (part, total) {
        (Some(part), Some(total)) => format!("{part} of {total}"),
        (Some(part), None) => format!("{part} of n/a"),
        (None, Some(total)) => format!("n/a of {total}"),
        (None, None) => na(),
    }
}

fn human_bytes(bytes: usize) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use datafusion::physical_plan::metrics::{Count, Metric};

    use super::*;

    fn count(name: &'static str, value: usize) -> Arc<Metric> {
        let count = Count::new();
        count.add(value);
        Arc::new(Metric::new(
            MetricValue::Count {
                name: name.into(),
                count,
            },
            Some(0),
        ))
    }

    #[test]
    fn sums_counters_of_one_scan() {
        let mut set = MetricsSet::new();
        set.push(count("partitions_total", 30));
        set.push(count("partitions_pruned", 10));
        set.push(count("row_groups_total", 8));
        set.push(count("row_groups_pruned_statistics", 3));
        set.push(count("rows_scanned", 100));
        set.push(count("rows_scanned", 50));
        let mut summary = ScanSummary::default();
        summary.add(&set);
        assert_eq!(summary.scans, 1);
        assert_eq!(summary.partitions_total, Some(30));
        assert_eq!(summary.partitions_pruned, Some(10));
        assert_eq!(summary.row_groups_total, Some(8));
        assert_eq!(summary.row_groups_pruned, Some(3));
        assert_eq!(summary.rows_scanned, Some(150));
        assert_eq!(summary.bytes_read, None);
        let text = summary.render(7);
        assert!(text.contains("partitions pruned : 10 of 30"), "{text}");
        assert!(text.contains("row groups pruned : 3 of 8"), "{text}");
        assert!(text.contains("rows returned     : 7"), "{text}");
        assert!(text.contains("bytes read        : n/a"), "{text}");
    }

    #[test]
    fn row_group_total_falls_back_to_pruning_metric() {
        let pruning = datafusion::physical_plan::metrics::PruningMetrics::new();
        pruning.add_pruned(2);
        pruning.add_matched(5);
        let value = MetricValue::PruningMetrics {
            name: "row_groups_pruned_statistics".into(),
            pruning_metrics: pruning,
        };
        let mut set = MetricsSet::new();
        set.push(Arc::new(Metric::new(value, None)));
        let mut summary = ScanSummary::default();
        summary.add(&set);
        assert_eq!(summary.row_groups_pruned, Some(2));
        assert_eq!(summary.row_groups_total, Some(7));
    }

    #[test]
    fn no_scan_is_reported() {
        let text = ScanSummary::default().render(1);
        assert!(text.contains("no LakeScanExec"), "{text}");
    }

    #[test]
    fn formats_bytes() {
        assert_eq!(human_bytes(12), "12 B");
        assert_eq!(human_bytes(2048), "2.0 KiB");
        assert_eq!(human_bytes(3 * 1024 * 1024 + 512 * 1024), "3.5 MiB");
    }
}
