//! lakescan on an in-process Ballista cluster: the same rows as one process.

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::common::Result;
use datafusion::prelude::{SessionConfig, SessionContext};

async fn rows(ctx: &SessionContext, sql: &str) -> Result<String> {
    let batches = ctx.sql(sql).await?.collect().await?;
    Ok(pretty_format_batches(&batches)?.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hive_table_same_rows_as_one_process() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().display();
    let state = lakescan_ballista::session::state(SessionConfig::new().with_target_partitions(2))?;
    let ctx = lakescan_ballista::cluster::standalone(state, 2).await?;
    ctx.sql(&format!(
        "COPY (SELECT * FROM (VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c'), (4, 40, 'd')) AS v(c0, c1, c2)) \
         TO '{path}/t/f.parquet' STORED AS PARQUET"
    ))
    .await?
    .collect()
    .await?;
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '{path}/t'"
    ))
    .await?
    .collect()
    .await?;
    let one = SessionContext::new_with_state(lakescan_ballista::session::state(
        SessionConfig::new().with_target_partitions(2),
    )?);
    one.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '{path}/t'"
    ))
    .await?
    .collect()
    .await?;
    for sql in [
        "SELECT c0 AS alias FROM t ORDER BY alias",
        "SELECT c0 AS alias FROM t ORDER BY alias",
        "SELECT alias FROM (SELECT c0 AS alias FROM t) WHERE alias > 2 ORDER BY alias",
        "SELECT c1 AS k, count(*) AS n FROM t WHERE c0 <> 2 GROUP BY c1 ORDER BY k",
    ] {
        let want = rows(&one, sql).await.map_err(|e| {
            datafusion::common::DataFusionError::Plan(format!("one process: {sql}: {e}"))
        })?;
        let got = rows(&ctx, sql)
            .await
            .map_err(|e| datafusion::common::DataFusionError::Plan(format!("{sql}: {e}")))?;
        assert_eq!(got, want, "{sql}");
    }
    // The executors wrote their shuffle files in the cluster's directory, which goes with
    // the client session.
    let shuffles = lakescan_ballista::cluster::ShuffleDirectory::of(&ctx)
        .expect("a standalone cluster has a shuffle directory");
    let files = walk(&shuffles);
    assert!(
        files
            .iter()
            .any(|f| f.extension().is_some_and(|e| e == "arrow")),
        "{files:?}"
    );
    drop(ctx);
    assert!(!shuffles.exists(), "{} is left behind", shuffles.display());
    Ok(())
}

/// The files under `dir`, recursively.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![];
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// `EXPLAIN ANALYZE` on Ballista sums each scan metric over the stage's tasks: every split
/// counted once (`splits_total` = the plan's splits), planning counts once (partition 0).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_add_up_over_the_tasks() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().display();
    let state = lakescan_ballista::session::state(SessionConfig::new().with_target_partitions(2))?;
    let ctx = lakescan_ballista::cluster::standalone(state, 2).await?;
    ctx.sql(&format!(
        "COPY (SELECT * FROM (VALUES (1, 10), (2, 20), (3, 30), (4, 40), (5, 50)) AS v(a, p)) \
         TO '{path}/t' STORED AS PARQUET PARTITIONED BY (p)"
    ))
    .await?
    .collect()
    .await?;
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '{path}/t' PARTITIONED BY (p)"
    ))
    .await?
    .collect()
    .await?;
    let shown = rows(&ctx, "EXPLAIN ANALYZE SELECT sum(a) FROM t WHERE p <> 30").await?;
    let scan = shown
        .lines()
        .find(|l| l.contains("LakeScanExec"))
        .unwrap_or_default();
    assert!(scan.contains("splits=4"), "{shown}");
    for metric in [
        "splits_total=4,",
        "partitions_total=5,",
        "partitions_pruned=1,",
    ] {
        assert!(scan.contains(metric), "{metric} in {scan}");
    }
    Ok(())
}
