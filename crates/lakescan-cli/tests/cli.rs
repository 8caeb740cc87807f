//! End-to-end tests running the `lakescan` binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn lakescan(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lakescan"))
        .args(args)
        .output()
        .expect("run lakescan")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn command_with_csv_output() {
    let output = lakescan(&["-q", "-c", "SELECT 1 + 1 AS x", "--format", "csv"]);
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "x\n2\n");
}

#[test]
fn timing_line_without_quiet() {
    let output = lakescan(&["-c", "SELECT 1 AS a UNION ALL SELECT 2", "--format", "csv"]);
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("2 row(s) fetched. Elapsed "), "{text}");
}

#[test]
fn commands_and_files_share_one_session_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.sql");
    std::fs::write(
        &script,
        "-- a comment; with a semicolon\n\
         INSERT INTO t VALUES (2, 'b;c');\n\
         SELECT a, b FROM t ORDER BY a;",
    )
    .unwrap();
    let output = lakescan(&[
        "-q",
        "--format",
        "csv",
        "-c",
        "CREATE TABLE t (a INT, b VARCHAR); INSERT INTO t VALUES (1, 'x')",
        "-f",
        script.to_str().unwrap(),
        "-c",
        "SELECT count(*) AS n FROM t",
    ]);
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "count\n1\ncount\n1\na,b\n1,x\n2,b;c\nn\n2\n"
    );
}

#[test]
fn errors_exit_with_code_one() {
    let output = lakescan(&["-q", "-c", "SELECT * FROM no_such_table"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).starts_with("Error: "),
        "{}",
        stderr(&output)
    );
}

#[test]
fn iceberg_catalogs_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let uri = format!("ice=sqlite://{}", dir.path().join("c.db").display());
    // An empty SQLite catalog (created on first use) registers; its namespaces are listed.
    let output = lakescan(&["-q", "--iceberg-catalog", &uri, "-c", "SELECT 1 AS one"]);
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert!(dir.path().join("c.db").exists());
    let output = lakescan(&["-q", "--iceberg-catalog", "nameless", "-c", "SELECT 1"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("NAME=URI"), "{}", stderr(&output));
}

#[test]
fn reads_statements_from_stdin() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lakescan"))
        .args(["-q", "--format", "csv"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"SELECT 'a;b'\n  AS s;\nSELECT 3 AS y;\n\\q\nSELECT 4;\n")
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "s\na;b\ny\n3\n");
}

#[test]
fn demo_prints_queries_and_pruning_summaries() {
    let dir = tempfile::tempdir().unwrap();
    let demo_dir = dir.path().join("warehouse");
    let demo_dir = demo_dir.to_str().unwrap();
    let output = lakescan(&["demo", demo_dir, "--rows", "20000"]);
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains("CREATE EXTERNAL TABLE sales STORED AS HIVE"),
        "{text}"
    );
    assert!(
        text.contains("SELECT count(*) AS row_count FROM sales;"),
        "{text}"
    );
    assert!(text.contains("| 20000     |"), "{text}");
    assert!(text.contains("WHERE day >= DATE '2024-01-03'"), "{text}");
    assert!(text.contains("LIMIT 5;"), "{text}");
    assert!(
        text.contains("Pruning summary (1 x LakeScanExec)"),
        "{text}"
    );
    assert!(text.contains("partitions pruned : 10 of 35"), "{text}");
    assert!(text.contains("row groups pruned"), "{text}");
    // The Iceberg part: 1000 orders less 10 position-deleted, 5 in a deletion vector and
    // the 246 other orders of the equality-deleted customer.
    assert!(text.contains("FROM ice.db.orders"), "{text}");
    assert!(text.contains("| 739    |"), "{text}");
    assert!(
        text.contains("rows deleted      : 10 by position deletes, 5 by deletion vectors"),
        "{text}"
    );
    assert!(!text.contains("| globex"), "{text}");

    // A second run reuses the table instead of writing it again.
    let again = lakescan(&["demo", demo_dir, "--rows", "20000"]);
    assert!(again.status.success(), "stderr: {}", stderr(&again));
    assert!(
        stderr(&again).contains("Reusing demo table"),
        "{}",
        stderr(&again)
    );
}

/// `demo --s3`: the same table and answers from a local S3 server, with its requests.
#[test]
fn demo_on_s3_gives_the_local_answers() {
    let dir = tempfile::tempdir().unwrap();
    let demo_dir = dir.path().join("warehouse");
    let output = lakescan(&["demo", demo_dir.to_str().unwrap(), "--rows", "5000", "--s3"]);
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("LOCATION 's3://demo/sales/'"), "{text}");
    let (local, s3) = text.split_once("-- On S3").expect("an S3 part");
    // The answers are the same (LIMIT without ORDER BY may pick other rows: up to it).
    let answers = |part: &str| -> Vec<String> {
        let before_limit = part.split("LIMIT 5;").next().unwrap();
        before_limit
            .lines()
            .filter(|l| l.starts_with('|') && !l.contains("---"))
            .map(str::to_string)
            .collect()
    };
    let s3 = s3.split("-- Iceberg").next().unwrap();
    assert_eq!(
        answers(local.split("-- Iceberg").next().unwrap()),
        answers(s3)
    );
    assert!(s3.contains("GET requests      :"), "{s3}");
    assert!(!local.contains("GET requests"), "{local}");
    // The Iceberg table and its catalog's warehouse on S3: the local answers, no secret shown.
    let (local_iceberg, s3_iceberg) = text
        .split_once("-- Iceberg:")
        .and_then(|(_, rest)| rest.split_once("-- Iceberg on S3"))
        .expect("a local and an S3 Iceberg part");
    assert!(
        s3_iceberg.contains("aws.secret_access_key=***"),
        "{s3_iceberg}"
    );
    let table_rows = |part: &str| -> Vec<String> {
        part.lines()
            .filter(|l| l.starts_with('|') && !l.contains("---"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(table_rows(local_iceberg), table_rows(s3_iceberg));
    assert!(
        table_rows(s3_iceberg).iter().any(|l| l.contains("| 739 ")),
        "{s3_iceberg}"
    );
}

/// As in `datafusion-cli`: `SHOW TABLES`, `SHOW ALL` with every `lakescan.*` setting (and
/// its description when verbose), `DESCRIBE t`.
#[test]
fn show_tables_settings_and_describe() {
    let output = lakescan(&[
        "-q",
        "--format",
        "csv",
        "-c",
        "CREATE TABLE t (a INT, b VARCHAR)",
        "-c",
        "SHOW TABLES",
        "-c",
        "SHOW ALL",
        "-c",
        "SHOW ALL VERBOSE",
        "-c",
        "DESCRIBE t",
    ]);
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("datafusion,public,t,BASE TABLE"), "{text}");
    for setting in [
        "lakescan.iceberg_metadata_columns,",
        "lakescan.listing_cache_ttl_seconds,0",
        "lakescan.preload_splits,1",
        "lakescan.pushdown_max_keep_ratio,0.1",
        "lakescan.split_size,67108864",
    ] {
        assert!(text.contains(setting), "{setting} not in {text}");
    }
    assert!(
        text.contains("lakescan.preload_splits,1,\"Splits each scan partition prepares ahead"),
        "{text}"
    );
    assert!(text.contains("a,Int32,YES"), "{text}");
    assert!(text.contains("b,Utf8"), "{text}");
}

/// `lakescan --ballista df://HOST:PORT` runs its statements on a cluster: here a scheduler
/// and two executors of `lakescan_ballista::server` on free loopback ports of this process.
#[test]
fn queries_run_on_a_ballista_cluster() {
    use lakescan_ballista::server::{ExecutorSettings, Scheduling};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (scheduler, executors) = runtime.block_on(async {
        let bind = "127.0.0.1:0".parse().unwrap();
        // Executors that poll for tasks (the cluster tests of lakescan-ballista push them).
        let pull = Scheduling::Pull;
        let timeout = std::time::Duration::from_secs(30);
        let scheduler = lakescan_ballista::server::start_scheduler(bind, timeout, pull)
            .await
            .unwrap();
        let url = format!("http://{}", scheduler.address);
        let mut executors = vec![];
        for i in 0..2 {
            let work = dir.path().join(format!("executor-{i}"));
            let settings = ExecutorSettings {
                scheduling: pull,
                ..ExecutorSettings::new(2, work)
            };
            executors.push(
                lakescan_ballista::server::start_executor(&url, bind, settings)
                    .await
                    .unwrap(),
            );
        }
        (scheduler, executors)
    });
    let table = dir.path().join("t");
    let sql = format!(
        "COPY (SELECT v, v % 3 AS p FROM (SELECT unnest(range(1, 101)) AS v)) \
         TO '{t}' STORED AS PARQUET PARTITIONED BY (p); \
         CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '{t}' PARTITIONED BY (p); \
         SELECT p, count(*) AS n, sum(v) AS s FROM t GROUP BY p ORDER BY p;",
        t = table.display()
    );
    let url = format!("df://{}", scheduler.address);
    let output = lakescan(&["-q", "--ballista", &url, "--format", "csv", "-c", &sql]);
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert!(
        stdout(&output).ends_with("p,n,s\n0,33,1683\n1,34,1717\n2,33,1650\n"),
        "{}",
        stdout(&output)
    );
    for executor in executors {
        executor.working.abort();
        executor.serving.abort();
    }
    scheduler.serving.abort();
}
