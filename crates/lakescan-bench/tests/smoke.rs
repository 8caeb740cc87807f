//! `lakescan-bench --smoke --runs 1`: every case on every in-process engine (lakescan,
//! DataFusion with and without filter pushdown, the raw parquet floor) and the cross-engine
//! result check, on SF 0.01 data generated in-process, and the Iceberg cases in lakescan.
//! Needs nothing installed; the peers (DuckDB, DuckDB's iceberg extension,
//! iceberg-datafusion) belong to the full benchmark (`benchmarks/setup.sh`).

use std::process::Command;

/// Runs `lakescan-bench --smoke --runs 1 <extra> --json …`; its JSON rows and its stdout.
/// (A test helper: a failure here fails the test.)
#[allow(clippy::expect_used)]
fn run_smoke(name: &str, extra: &[&str]) -> (Vec<serde_json::Value>, String) {
    let json =
        std::env::temp_dir().join(format!("lakescan-bench-{name}-{}.json", std::process::id()));
    let output = Command::new(env!("CARGO_BIN_EXE_lakescan-bench"))
        .args(["--smoke", "--runs", "1"])
        .args(extra)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("run lakescan-bench");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "lakescan-bench --smoke {extra:?} failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    let text = std::fs::read_to_string(&json).expect("json written");
    let _ = std::fs::remove_file(&json);
    let serde_json::Value::Array(rows) = serde_json::from_str(&text).expect("valid json") else {
        panic!("the JSON is not a list: {text}");
    };
    (rows, stdout)
}

#[test]
fn smoke_run_checks_every_engine_on_every_case() {
    let (rows, stdout) = run_smoke("smoke", &[]);
    let cases = [
        "full_scan",
        "selective",
        "or_prune",
        "point_lookup",
        "count_partition",
        "tpch_q1",
        "tpch_q6",
        "join_orders",
        "topk",
        "small_files",
        "small_partition",
        "bucket_lookup",
        "struct_field",
        "struct_whole",
    ];
    let engines = [
        "lakescan",
        "datafusion",
        "datafusion-pushdown",
        "parquet-floor",
    ];
    for case in cases {
        for engine in engines {
            let row = rows
                .iter()
                .find(|r| r["case"] == case && r["engine"] == engine)
                .unwrap_or_else(|| panic!("no row for {case} / {engine}:\n{stdout}"));
            for key in ["median_s", "min_s", "max_s", "peak_rss_bytes"] {
                assert!(
                    row[key].is_number(),
                    "{case}/{engine}: {key} missing: {row}"
                );
            }
            if engine == "lakescan" && case != "count_partition" {
                assert!(row["rows_decoded"].is_number(), "{row}");
                assert!(row["row_groups_read"].is_number(), "{row}");
            }
        }
    }
    // The lakescan variants run the cases their setting is about; the join's dynamic
    // filter leaves the scans far fewer rows to decode in full. (Whether the TopK's prunes
    // a row group depends on the data: random prices in 8 row groups of SF 0.01 rarely
    // leave one whose maximum is under the heap's bound; at SF 1 it prunes 20 of 56.)
    let row = |case: &str, engine: &str| {
        rows.iter()
            .find(|r| r["case"] == case && r["engine"] == engine)
            .unwrap_or_else(|| panic!("no row for {case} / {engine}:\n{stdout}"))
    };
    for case in ["full_scan", "join_orders", "small_files", "small_partition"] {
        assert!(row(case, "lakescan-no-preload")["median_s"].is_number());
    }
    let emitted = |engine| row("join_orders", engine)["rows_emitted"].as_u64().unwrap();
    let (with, without) = (emitted("lakescan"), emitted("lakescan-no-dynamic-filters"));
    assert!(
        with * 20 <= without,
        "join rows emitted: {with} with, {without} without"
    );
    let pruned = |engine| {
        row("topk", engine)["row_groups_pruned_dynamic_filter"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(pruned("lakescan-no-dynamic-filters"), 0);
    assert!(stdout.contains("join rows decoded in full"), "{stdout}");
    // The Iceberg cases run in lakescan only here (their peers need benchmarks/setup.sh).
    // Every 10th row deleted is too scattered for a row selection to skip a page: the
    // deleted rows are decoded and dropped in the first filter pass, so every variant
    // decodes as many rows as the scan without deletes.
    let decoded = |case: &str| {
        let row = rows
            .iter()
            .find(|r| r["case"] == case && r["engine"] == "lakescan")
            .unwrap_or_else(|| panic!("no row for {case}:\n{stdout}"));
        row["rows_decoded"].as_u64().expect("rows_decoded")
    };
    let all = decoded("iceberg_scan");
    assert!(all > 0);
    for case in ["iceberg_pos", "iceberg_dv"] {
        assert_eq!(decoded(case), all, "{case}");
    }
    assert_eq!(decoded("iceberg_eq"), all);
    assert!(
        !rows
            .iter()
            .any(|r| ["duckdb", "duckdb-iceberg", "iceberg-datafusion"]
                .contains(&r["engine"].as_str().unwrap_or_default())),
        "the smoke run must not need the peers"
    );
    assert!(stdout.contains("| case | engine |"), "{stdout}");
}

/// `lakescan-bench --smoke --s3 --runs 1`: the S3 cases on a local moto server (started and
/// stopped by the benchmark), with the requests each engine made as the server counted them.
/// Requests are counted, never timed, here: lakescan makes no more GETs than DataFusion in
/// any case, and at most one more LIST (it lists at every query, DataFusion 54 keeps a
/// session's listings); `small_files` costs it one GET per file, DataFusion two.
#[test]
fn s3_smoke_run_counts_requests() {
    let (rows, stdout) = run_smoke("s3-smoke", &["--s3"]);
    let row = |case: &str, engine: &str| {
        rows.iter()
            .find(|r| r["case"] == case && r["engine"] == engine)
            .unwrap_or_else(|| panic!("no row for {case} / {engine}:\n{stdout}"))
    };
    let count = |r: &serde_json::Value, key: &str| r[key].as_u64().expect(key);
    for case in ["full_scan", "tpch_q6", "small_files", "small_partition"] {
        let (lake, df) = (row(case, "lakescan"), row(case, "datafusion"));
        assert_eq!(lake["rows"], df["rows"], "{case}");
        assert!(
            count(lake, "requests_get") <= count(df, "requests_get"),
            "{case}: GETs\n{stdout}"
        );
        assert!(
            count(lake, "requests_list") <= count(df, "requests_list") + 1,
            "{case}: LISTs\n{stdout}"
        );
        // Keeping listings as DataFusion does, lakescan makes no more GETs, LISTs or
        // requests in all (a declared table's CREATE makes one HEAD: is the location an
        // object?).
        let keeping = row(case, "lakescan+listing_cache");
        assert_eq!(keeping["rows"], df["rows"], "{case}");
        for kind in ["requests_get", "requests_list", "requests"] {
            assert!(
                count(keeping, kind) <= count(df, kind),
                "{case}: {kind} keeping listings\n{stdout}"
            );
        }
    }
    let files = 2000;
    assert_eq!(
        count(row("small_files", "lakescan"), "requests_get"),
        files,
        "{stdout}"
    );
    assert_eq!(
        count(row("small_files", "datafusion"), "requests_get"),
        2 * files,
        "{stdout}"
    );
    assert!(
        count(row("iceberg_pos", "lakescan"), "rows") == 1,
        "{stdout}"
    );
}
