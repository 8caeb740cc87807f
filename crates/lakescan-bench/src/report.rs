//! Timings per case and engine, the table, the JSON and the target check.

use serde_json::{Value, json};

use crate::engines::{Engine, Shape};

/// The measurements of one engine on one case.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Case name.
    pub case: &'static str,
    /// Engine.
    pub engine: Engine,
    /// Wall time of each timed run, in seconds.
    pub times: Vec<f64>,
    /// Peak RSS of one run of the case in a fresh child process that runs only this engine
    /// (DuckDB: the largest peak of its own process over the timed runs).
    pub peak_rss_bytes: u64,
    /// Largest peak RSS of the benchmark process over the timed runs (process-wide, so it
    /// includes memory other engines allocated and the allocator kept); DuckDB: as above.
    pub peak_rss_in_process_bytes: u64,
    /// Rows returned by the query (0 for the floor, which returns nothing).
    pub rows_returned: usize,
    /// lakescan: `rows_scanned`; floor: rows of the decoded row groups.
    pub rows_decoded: Option<u64>,
    /// Row groups read (lakescan: total - pruned by statistics; DataFusion: matched by its
    /// pruning; floor: its selection).
    pub row_groups_read: Option<usize>,
    /// lakescan: `row_groups_total`.
    pub row_groups_total: Option<usize>,
    /// lakescan: rows the scans emitted (`output_rows`), every projected column decoded.
    pub rows_emitted: Option<u64>,
    /// lakescan: `row_groups_pruned_dynamic_filter`.
    pub row_groups_pruned_dynamic: Option<usize>,
    /// lakescan: `bytes_read`.
    pub bytes_read: Option<usize>,
    /// lakescan: splits read (`splits_total`).
    pub splits_total: Option<usize>,
    /// lakescan: `files_pruned_bucket`.
    pub files_pruned_bucket: Option<usize>,
    /// lakescan: `delete_files_loaded`.
    pub delete_files_loaded: Option<usize>,
}

impl Measurement {
    /// A measurement without runs yet.
    pub fn new(case: &'static str, engine: Engine) -> Self {
        Self {
            case,
            engine,
            times: vec![],
            peak_rss_bytes: 0,
            peak_rss_in_process_bytes: 0,
            rows_returned: 0,
            rows_decoded: None,
            row_groups_read: None,
            row_groups_total: None,
            rows_emitted: None,
            row_groups_pruned_dynamic: None,
            bytes_read: None,
            splits_total: None,
            files_pruned_bucket: None,
            delete_files_loaded: None,
        }
    }

    fn sorted(&self) -> Vec<f64> {
        let mut t = self.times.clone();
        t.sort_by(f64::total_cmp);
        t
    }

    /// Median wall time (mean of the middle two for an even number of runs).
    pub fn median(&self) -> f64 {
        let t = self.sorted();
        match t.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => t[n / 2],
            n => (t[n / 2 - 1] + t[n / 2]) / 2.0,
        }
    }

    /// Fastest run.
    pub fn min(&self) -> f64 {
        self.sorted().first().copied().unwrap_or(f64::NAN)
    }

    /// Slowest run.
    pub fn max(&self) -> f64 {
        self.sorted().last().copied().unwrap_or(f64::NAN)
    }
}

fn lakescan_of<'a>(all: &'a [Measurement], case: &str) -> Option<&'a Measurement> {
    all.iter()
        .find(|m| m.case == case && m.engine == Engine::Lakescan)
}

/// lakescan's median over `m`'s median, for the same case.
pub fn ratio(all: &[Measurement], m: &Measurement) -> Option<f64> {
    let lake = lakescan_of(all, m.case)?;
    let r = lake.median() / m.median();
    r.is_finite().then_some(r)
}

fn mib(bytes: u64) -> String {
    format!("{:.0}", bytes as f64 / (1024.0 * 1024.0))
}

fn secs(s: f64) -> String {
    if s < 0.01 {
        format!("{s:.4}")
    } else {
        format!("{s:.3}")
    }
}

/// The Markdown table: one row per case and engine.
pub fn table(all: &[Measurement]) -> String {
    let mut out = String::from(
        "| case | engine | median s | min–max s | peak RSS MiB | lakescan / engine | rows decoded | row groups read |\n\
         |---|---|--:|--:|--:|--:|--:|--:|\n",
    );
    for m in all {
        let ratio = match m.engine {
            Engine::Lakescan => "—".to_string(),
            _ => ratio(all, m).map_or("n/a".to_string(), |r| format!("{r:.2}")),
        };
        let decoded = m.rows_decoded.map_or(String::new(), |r| r.to_string());
        let groups = match (m.row_groups_read, m.row_groups_total) {
            (Some(r), Some(t)) => format!("{r} of {t}"),
            (Some(r), None) => r.to_string(),
            _ => String::new(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {}–{} | {} | {} | {} | {} |\n",
            m.case,
            m.engine.name(),
            secs(m.median()),
            secs(m.min()),
            secs(m.max()),
            mib(m.peak_rss_bytes),
            ratio,
            decoded,
            groups
        ));
    }
    out
}

/// The JSON list written by `--json`.
pub fn json(all: &[Measurement], scale: f64, shape: Shape) -> Value {
    let rows: Vec<Value> = all
        .iter()
        .map(|m| {
            json!({
                "case": m.case,
                "engine": m.engine.name(),
                "scale": scale,
                "threads": shape.threads,
                "batch_size": shape.batch_size,
                "runs": m.times.len(),
                "median_s": m.median(),
                "min_s": m.min(),
                "max_s": m.max(),
                "times_s": m.times,
                "peak_rss_bytes": m.peak_rss_bytes,
                "peak_rss_in_process_bytes": m.peak_rss_in_process_bytes,
                "rows_returned": m.rows_returned,
                "rows_decoded": m.rows_decoded,
                "rows_emitted": m.rows_emitted,
                "row_groups_pruned_dynamic_filter": m.row_groups_pruned_dynamic,
                "row_groups_read": m.row_groups_read,
                "row_groups_total": m.row_groups_total,
                "bytes_read": m.bytes_read,
                "splits_total": m.splits_total,
                "files_pruned_bucket": m.files_pruned_bucket,
                "delete_files_loaded": m.delete_files_loaded,
                "ratio_lakescan_over_engine": ratio(all, m),
            })
        })
        .collect();
    Value::Array(rows)
}

fn find<'a>(all: &'a [Measurement], case: &str, engine: Engine) -> Option<&'a Measurement> {
    all.iter().find(|m| m.case == case && m.engine == engine)
}

/// One line per performance target of the benchmark: met, missed or not measured.
pub fn targets(all: &[Measurement], scale: f64) -> String {
    let mut lines = vec![];
    let mut time_target = |label: &str, case: &str, peer: Engine, limit: f64| {
        let line = match find(all, case, peer).and_then(|m| ratio(all, m)) {
            Some(r) => format!(
                "{} {label}: lakescan / {} = {r:.2} (target <= {limit:.2})",
                if r <= limit { "MET   " } else { "MISSED" },
                peer.name()
            ),
            None => format!("n/a    {label}: not measured"),
        };
        lines.push(line);
    };
    time_target(
        "full scan vs DataFusion",
        "full_scan",
        Engine::DataFusion,
        1.0,
    );
    time_target(
        "selective scan vs DataFusion (pushdown on)",
        "selective",
        Engine::DataFusionPushdown,
        0.8,
    );
    time_target(
        "selective scan vs DataFusion (pushdown off)",
        "selective",
        Engine::DataFusion,
        0.5,
    );
    time_target(
        "full scan vs raw parquet decode",
        "full_scan",
        Engine::ParquetFloor,
        1.10,
    );
    time_target(
        "stretch: selective scan vs DuckDB",
        "selective",
        Engine::DuckDb,
        1.0,
    );
    time_target("stretch: Q6 vs DuckDB", "tpch_q6", Engine::DuckDb, 1.0);
    time_target(
        "one struct member vs DataFusion",
        "struct_field",
        Engine::DataFusion,
        1.0,
    );
    // lakescan's ORC reader against DataFusion's (datafusion-orc, the floor it is held to).
    time_target(
        "ORC full scan vs datafusion-orc",
        "orc_full_scan",
        Engine::DataFusionOrc,
        1.1,
    );
    time_target(
        "ORC selective scan vs datafusion-orc",
        "orc_selective",
        Engine::DataFusionOrc,
        0.7,
    );
    for case in ["iceberg_scan", "iceberg_pos", "iceberg_dv", "iceberg_eq"] {
        time_target(
            &format!("Iceberg {case} vs DuckDB"),
            case,
            Engine::DuckDbIceberg,
            1.0,
        );
    }
    time_target(
        "Iceberg equality deletes vs iceberg-datafusion",
        "iceberg_eq",
        Engine::IcebergDataFusion,
        0.1,
    );
    for peer in [Engine::DataFusion, Engine::DataFusionPushdown] {
        let lake = find(all, "or_prune", Engine::Lakescan).and_then(|m| m.row_groups_read);
        let df = find(all, "or_prune", peer).and_then(|m| m.row_groups_read);
        lines.push(match (lake, df) {
            (Some(l), Some(d)) => format!(
                "{} OR predicate row groups read: lakescan {l}, {} {d} (target: lakescan <= peer)",
                if l <= d { "MET   " } else { "MISSED" },
                peer.name()
            ),
            _ => "n/a    OR predicate row groups read: not measured".to_string(),
        });
    }
    lines.push(match find(all, "bucket_lookup", Engine::Lakescan) {
        Some(m) => match (m.splits_total, m.files_pruned_bucket) {
            (Some(read), Some(pruned)) => {
                let files = read + pruned;
                let buckets = crate::data::ORDER_BUCKETS as usize;
                format!(
                    "{} bucket lookup: lakescan read {read} of {files} files (target: 1/{buckets})",
                    if read * buckets <= files {
                        "MET   "
                    } else {
                        "MISSED"
                    },
                )
            }
            _ => "n/a    bucket lookup: no lakescan counters".to_string(),
        },
        None => "n/a    bucket lookup: not measured".to_string(),
    });
    let deletes = |case| find(all, case, Engine::Lakescan).and_then(|m| m.delete_files_loaded);
    lines.push(
        match (deletes("iceberg_pos_half"), deletes("iceberg_pos")) {
            (Some(half), Some(all)) => format!(
                "{} pruned splits load no delete file: lakescan read {half} of {all} delete files \
             with half the row groups pruned (target: fewer)",
                if half < all { "MET   " } else { "MISSED" },
            ),
            _ => "n/a    pruned splits load no delete file: not measured".to_string(),
        },
    );
    let bytes = |case| find(all, case, Engine::Lakescan).and_then(|m| m.bytes_read);
    lines.push(match (bytes("struct_field"), bytes("struct_whole")) {
        (Some(field), Some(whole)) if whole > 0 => {
            let r = field as f64 / whole as f64;
            format!(
                "{} one struct member: lakescan bytes read / whole struct = {r:.3} (target <= 0.10)",
                if r <= 0.10 { "MET   " } else { "MISSED" },
            )
        }
        _ => "n/a    one struct member: bytes not measured".to_string(),
    });
    // Iceberg: the delete variants against lakescan's own scan without deletes, and
    // against the Iceberg peers.
    let lake = |case| find(all, case, Engine::Lakescan).map(Measurement::median);
    for (label, case, limit) in [
        ("position deletes", "iceberg_pos", 1.15),
        ("deletion vectors", "iceberg_dv", 1.15),
        ("equality deletes", "iceberg_eq", 1.3),
    ] {
        lines.push(match (lake(case), lake("iceberg_scan")) {
            (Some(t), Some(base)) if base > 0.0 => {
                let r = t / base;
                format!(
                    "{} Iceberg {label}: lakescan / lakescan without deletes = {r:.2} \
                     (target <= {limit:.2})",
                    if r <= limit { "MET   " } else { "MISSED" },
                )
            }
            _ => format!("n/a    Iceberg {label}: not measured"),
        });
    }
    lines.extend(dynamic_filter_and_preload_targets(all));
    lines.extend(ballista_targets(all, scale));
    let limit = 512u64 << 20;
    lines.push(match find(all, "full_scan", Engine::Lakescan) {
        Some(m) => format!(
            "{} full scan peak RSS: {} MiB (target <= 512 MiB; a process running only lakescan)",
            if m.peak_rss_bytes <= limit {
                "MET   "
            } else {
                "MISSED"
            },
            mib(m.peak_rss_bytes)
        ),
        None => "n/a    full scan peak RSS: not measured".to_string(),
    });
    lines.join("\n") + "\n"
}

/// The Ballista targets: lakescan's scan against DataFusion's on the same cluster, the
/// fixed cost of a query on the cluster (`tpch_q6` there minus in one process, at SF1), and
/// the scan cases, where that cost amortizes, at SF10 against one process. Not `full_scan`,
/// which moves every row through shuffle files whatever the scan, nor `join_orders`: in one
/// process the join's dynamic filter prunes lineitem in the scan, while Ballista 54.1 turns
/// dynamic filters off and hash-partitions every lineitem row through shuffle files.
fn ballista_targets(all: &[Measurement], scale: f64) -> Vec<String> {
    let verdict = |met: bool| if met { "MET   " } else { "MISSED" };
    let median = |case: &str, engine| find(all, case, engine).map(Measurement::median);
    let (cluster, one) = (Engine::LakescanBallista, Engine::Lakescan);
    let mut lines = vec![];
    for case in crate::engines::BALLISTA_CASES {
        lines.push(match (median(case, cluster), median(case, Engine::DataFusionBallista)) {
            (Some(t), Some(p)) if p > 0.0 => format!(
                "{} {case} on Ballista vs DataFusion's scan on the same cluster: \
                 lakescan-ballista / datafusion-ballista = {:.2} (target <= 1.00)",
                verdict(t <= p),
                t / p
            ),
            _ if case.starts_with("iceberg") => format!(
                "n/a    {case} on Ballista vs DataFusion's scan: DataFusion reads no Iceberg table"
            ),
            _ => format!("n/a    {case} on Ballista vs DataFusion's scan: not measured"),
        });
    }
    lines.push(match (median("tpch_q6", cluster), median("tpch_q6", one)) {
        (Some(t), Some(o)) => {
            let what = format!(
                "fixed cost of a query on Ballista: tpch_q6 lakescan-ballista - lakescan = \
                 {:.3} s at SF{scale} (target <= 0.100 s at SF1)",
                t - o
            );
            match scale <= 1.0 {
                true => format!("{} {what}", verdict(t - o <= 0.10)),
                // Larger data: the difference is no longer only the fixed cost.
                false => format!("n/a    {what}"),
            }
        }
        _ => "n/a    fixed cost of a query on Ballista: not measured".to_string(),
    });
    for case in ["tpch_q1", "tpch_q6", "join_orders", "iceberg_pos"] {
        lines.push(match (median(case, cluster), median(case, one)) {
            (Some(t), Some(o)) if o > 0.0 => {
                let r = t / o;
                let what = format!(
                    "{case} on Ballista (2 executors, this machine) vs one process: \
                     lakescan-ballista / lakescan = {r:.2} at SF{scale}"
                );
                match (case, scale >= 10.0) {
                    // What Ballista prevents, not a target: see the doc comment.
                    ("join_orders", _) => format!(
                        "n/a    {what} (no target: Ballista 54.1 turns dynamic filters off and \
                         hash-partitions lineitem through shuffle files, for DataFusion's scan too)"
                    ),
                    (_, true) => format!("{} {what} (target <= 1.50 at SF10)", verdict(r <= 1.5)),
                    (_, false) => format!("n/a    {what} (target <= 1.50 at SF10)"),
                }
            }
            _ => format!("n/a    {case} on Ballista vs one process: not measured"),
        });
    }
    lines
}

/// The targets for dynamic filters (join, TopK), preload and many small files.
fn dynamic_filter_and_preload_targets(all: &[Measurement]) -> Vec<String> {
    let mut lines = vec![];
    let verdict = |met: bool| if met { "MET   " } else { "MISSED" };
    let median = |case: &str, engine| find(all, case, engine).map(Measurement::median);
    let mut time_target = |label: &str, case: &str, engine: Engine, peer: Engine, limit: f64| {
        lines.push(match (median(case, engine), median(case, peer)) {
            (Some(t), Some(p)) if p > 0.0 => {
                let r = t / p;
                format!(
                    "{} {label}: {} / {} = {r:.2} (target <= {limit:.2})",
                    verdict(r <= limit),
                    engine.name(),
                    peer.name()
                )
            }
            _ => format!("n/a    {label}: not measured"),
        });
    };
    let (lake, no_preload) = (Engine::Lakescan, Engine::LakescanNoPreload);
    time_target(
        "join with dynamic filters vs DataFusion",
        "join_orders",
        lake,
        Engine::DataFusion,
        1.0,
    );
    time_target(
        "full scan, preload on, vs raw parquet decode",
        "full_scan",
        lake,
        Engine::ParquetFloor,
        1.10,
    );
    time_target(
        "full scan, preload off, vs raw parquet decode (1.30 before preload)",
        "full_scan",
        no_preload,
        Engine::ParquetFloor,
        1.30,
    );
    for case in ["small_files", "small_partition"] {
        time_target(
            &format!("{case} vs DataFusion"),
            case,
            lake,
            Engine::DataFusion,
            1.0,
        );
        time_target(
            &format!("{case} vs DataFusion, both keeping listings"),
            case,
            Engine::LakescanListingCache,
            Engine::DataFusion,
            1.0,
        );
    }
    let emitted = |engine| find(all, "join_orders", engine).and_then(|m| m.rows_emitted);
    lines.push(
        match (emitted(lake), emitted(Engine::LakescanNoDynamicFilters)) {
            (Some(with), Some(without)) => {
                let r = without as f64 / with.max(1) as f64;
                format!(
                    "{} join rows decoded in full: without dynamic filters {without}, with {with} \
                 ({r:.0} x fewer; target >= 20 x)",
                    verdict(r >= 20.0)
                )
            }
            _ => "n/a    join rows decoded in full: not measured".to_string(),
        },
    );
    lines.push(match find(all, "topk", lake) {
        Some(Measurement {
            row_groups_pruned_dynamic: Some(pruned),
            row_groups_total: Some(total),
            ..
        }) => format!(
            "{} TopK prunes row groups once its heap fills: {pruned} of {total} pruned by the \
             dynamic filter (target > 0)",
            verdict(*pruned > 0)
        ),
        _ => "n/a    TopK row groups pruned: not measured".to_string(),
    });
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(case: &'static str, engine: Engine, times: &[f64]) -> Measurement {
        let mut m = Measurement::new(case, engine);
        m.times = times.to_vec();
        m
    }

    #[test]
    fn median_ratio_and_targets() {
        let all = vec![
            m("full_scan", Engine::Lakescan, &[1.0, 3.0, 2.0]),
            m("full_scan", Engine::DataFusion, &[4.0, 4.0, 5.0, 3.0]),
        ];
        assert_eq!(all[0].median(), 2.0);
        assert_eq!(all[1].median(), 4.0);
        assert_eq!(ratio(&all, &all[1]), Some(0.5));
        let t = targets(&all, 1.0);
        assert!(t.contains("MET    full scan vs DataFusion"), "{t}");
        assert!(t.contains("n/a    full scan vs raw parquet decode"), "{t}");
        let table = table(&all);
        assert!(
            table.contains("| full_scan | datafusion | 4.000 | 3.000–5.000 |"),
            "{table}"
        );
        let shape = Shape {
            threads: 2,
            batch_size: 8192,
        };
        let j = json(&all, 1.0, shape);
        assert_eq!(j[1]["median_s"], 4.0);
        assert_eq!(j[1]["batch_size"], 8192);
        assert_eq!(j[1]["engine"], "datafusion");
    }
}
