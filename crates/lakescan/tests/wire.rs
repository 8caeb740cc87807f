//! Plans with lakescan tables and scans cross a process boundary as bytes (datafusion-proto
//! with lakescan's codecs) and give the same rows: each partition of a decoded scan reads
//! its own split list, every split exactly once.

use std::sync::Arc;

use arrow::util::pretty::pretty_format_batches;
use datafusion::common::Result;
use datafusion::physical_plan::{ExecutionPlan, collect};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_proto::bytes::{
    logical_plan_from_bytes_with_extension_codec, logical_plan_to_bytes_with_extension_codec,
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};
use lakescan::codec::{LakeLogicalCodec, LakePhysicalCodec};
use lakescan::core::api::LakeScanExec;

fn testdata(rel: &str) -> String {
    format!("{}/../../testdata/{rel}", env!("CARGO_MANIFEST_DIR"))
}

fn session(partitions: usize) -> Result<SessionContext> {
    let ctx =
        SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions));
    lakescan::register(&ctx)?;
    Ok(ctx)
}

fn text(batches: &[arrow::array::RecordBatch]) -> Result<String> {
    Ok(pretty_format_batches(batches)?.to_string())
}

/// Every `LakeScanExec` of `plan`.
fn scans(plan: &Arc<dyn ExecutionPlan>) -> Vec<LakeScanExec> {
    let mut out = vec![];
    if let Some(scan) = plan.downcast_ref::<LakeScanExec>() {
        out.push(scan.clone());
    }
    for child in plan.children() {
        out.extend(scans(child));
    }
    out
}

/// The rows of `sql` in one process and after the physical plan went through bytes; the
/// decoded scans read the same splits, in the same partitions.
async fn physical_round_trip(ctx: &SessionContext, sql: &str) -> Result<()> {
    let plan = ctx.sql(sql).await?.create_physical_plan().await?;
    // Encoded before it runs, as a scheduler does: datafusion-proto sends the dynamic
    // filters of other nodes (a TopK's) with their value, which after a run is that run's.
    let codec = LakePhysicalCodec::default();
    let bytes = physical_plan_to_bytes_with_extension_codec(Arc::clone(&plan), &codec)?;
    let want = text(&collect(Arc::clone(&plan), ctx.task_ctx()).await?)?;
    let decoded = physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &codec)?;
    let (before, after) = (scans(&plan), scans(&decoded));
    assert_eq!(before.len(), after.len(), "{sql}");
    assert!(!after.is_empty(), "{sql}: no lakescan scan");
    for (b, a) in before.iter().zip(&after) {
        let lists = |s: &LakeScanExec| -> Vec<Vec<String>> {
            s.partition_splits()
                .iter()
                .map(|l| l.iter().map(|s| format!("{s:?}")).collect())
                .collect()
        };
        assert_eq!(lists(b), lists(a), "{sql}: split lists");
        assert_eq!(b.schema(), a.schema(), "{sql}: schema");
    }
    let got = text(&collect(decoded, ctx.task_ctx()).await?)?;
    assert_eq!(got, want, "{sql}");
    Ok(())
}

#[tokio::test]
async fn iceberg_scans_with_equality_deletes_round_trip() -> Result<()> {
    let ctx = session(2)?;
    let location =
        testdata("duckdb-iceberg/data/persistent/equality_deletes/warehouse/mydb/mytable");
    let base = testdata("duckdb-iceberg");
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE eq STORED AS ICEBERG LOCATION '{location}' \
         OPTIONS ('relative_path_base' '{base}')"
    ))
    .await?;
    for sql in [
        "SELECT * FROM eq ORDER BY id, name, bir",
        "SELECT bir FROM eq ORDER BY bir",
        "SELECT e.bir, f.id FROM eq AS e JOIN eq AS f ON e.id = f.id ORDER BY e.bir",
        "SELECT count(*) FROM eq WHERE bir >= DATE '2025-01-01'",
    ] {
        physical_round_trip(&ctx, sql).await?;
    }
    Ok(())
}

/// A Hive table partitioned by `ds`, bucketed by `k` into 8 buckets, whose partition `old`
/// was written with 2 (bucket conversion), in `dir`.
async fn bucketed_hive_table(ctx: &SessionContext, dir: &str) -> Result<()> {
    let rows = "SELECT value AS c0, value % 13 AS k, 'n' || CAST(value AS VARCHAR) AS s \
                FROM generate_series(1, 400)";
    for (ds, buckets) in [("old", 2), ("new", 8)] {
        for b in 0..buckets {
            ctx.sql(&format!(
                "COPY (SELECT * FROM ({rows}) WHERE hive_bucket(1, {buckets}, k) = {b}) \
                 TO '{dir}/t/ds={ds}/{b:06}_0.parquet' STORED AS PARQUET \
                 OPTIONS ('format.max_row_group_size' '16')"
            ))
            .await?
            .collect()
            .await?;
        }
    }
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '{dir}/t' PARTITIONED BY (ds) \
         OPTIONS ('bucketed_by' 'k', 'bucket_count' '8', 'bucketing_version' '1', \
                  'hidden_columns' '$bucket,$row_index,$path', 'split_size' '2048')"
    ))
    .await?
    .collect()
    .await?;
    Ok(())
}

/// The scan of `plan` (its only lakescan scan, under whatever is above it).
fn only_scan(plan: &Arc<dyn ExecutionPlan>) -> LakeScanExec {
    let found = scans(plan);
    assert_eq!(found.len(), 1, "one lakescan scan");
    found.into_iter().next().unwrap_or_else(|| unreachable!())
}

/// A metric of an executed scan, summed over its partitions.
fn metric(scan: &Arc<dyn ExecutionPlan>, name: &str) -> usize {
    scan.metrics()
        .and_then(|m| m.sum_by_name(name))
        .map_or(0, |v| v.as_usize())
}

/// What Ballista's tasks do: each decodes its own copy of the scan and runs one partition of
/// it. Every split is read by exactly one task, and together they give the one-process rows.
#[tokio::test]
async fn each_task_reads_its_own_splits_once() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let ctx = session(3)?;
    bucketed_hive_table(&ctx, &dir.path().display().to_string()).await?;
    let sql = "SELECT c0, k, ds, \"$bucket\" AS b, \"$row_index\" AS r FROM t \
               WHERE k IN (1, 2, 3) AND c0 % 7 <> 0";
    let plan = ctx.sql(sql).await?.create_physical_plan().await?;
    let scan = only_scan(&plan);
    let planned = scan.split_count();
    assert!(
        scan.partition_splits().len() == 3 && planned > 3,
        "{planned} splits"
    );
    let mut want: Vec<String> = text(&ctx.sql(sql).await?.collect().await?)?
        .lines()
        .map(str::to_string)
        .collect();
    let codec = LakePhysicalCodec::default();
    let bytes = physical_plan_to_bytes_with_extension_codec(Arc::new(scan.clone()), &codec)?;
    // What each task receives grows with the splits of the whole stage
    // (docs/architecture.md, "Scale-out on paper"): each file once, then a number and a
    // range per split; with the expressions and the table, ~35 bytes a split here.
    assert!(
        bytes.len() <= 60 * planned,
        "{} bytes for {planned} splits",
        bytes.len()
    );
    let (mut read, mut rows) = (0, vec![]);
    for partition in 0..3 {
        let task = physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &codec)?;
        let stream = task.execute(partition, ctx.task_ctx())?;
        let batches: Vec<_> = futures::TryStreamExt::try_collect(stream).await?;
        rows.extend(batches);
        read += metric(&task, "splits_total");
    }
    assert_eq!(read, planned, "every split read once over the tasks");
    // The scan filters exactly (no FilterExec above it in this plan): its rows are the
    // query's, in another order.
    let schema = rows[0].schema();
    let all = arrow::compute::concat_batches(&schema, &rows)?;
    let sorted = ctx
        .read_batch(all)?
        .sort_by(vec![datafusion::prelude::col("c0")])?
        .collect()
        .await?;
    let mut got: Vec<String> = text(&sorted)?.lines().map(str::to_string).collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
    Ok(())
}

#[tokio::test]
async fn hive_plans_with_bucket_conversion_round_trip() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let ctx = session(2)?;
    bucketed_hive_table(&ctx, &dir.path().display().to_string()).await?;
    for sql in [
        "SELECT c0, \"$bucket\" FROM t WHERE k = 5 ORDER BY c0",
        "SELECT ds, count(*), sum(c0) FROM t WHERE s LIKE 'n1%' GROUP BY ds ORDER BY ds",
        "SELECT c0, \"$row_index\" FROM t WHERE ds = 'old' AND c0 > 390 ORDER BY c0",
        "SELECT hive_hash(1, k) AS h, count(*) FROM t GROUP BY h ORDER BY h",
        "SELECT c0 FROM t ORDER BY c0 DESC LIMIT 3",
    ] {
        physical_round_trip(&ctx, sql).await?;
        logical_round_trip(&ctx, sql).await?;
    }
    Ok(())
}

/// A dynamic filter (here a TopK's) stays behind: its producer does not cross, and its value
/// is not a filter of another execution.
#[tokio::test]
async fn dynamic_filters_do_not_cross() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let ctx = session(2)?;
    bucketed_hive_table(&ctx, &dir.path().display().to_string()).await?;
    let plan = ctx
        .sql("SELECT c0 FROM t ORDER BY c0 DESC LIMIT 3")
        .await?
        .create_physical_plan()
        .await?;
    let one_line = |s: LakeScanExec| {
        datafusion::physical_plan::displayable(&s)
            .one_line()
            .to_string()
    };
    assert!(one_line(only_scan(&plan)).contains("pushed=DynamicFilter"));
    let codec = LakePhysicalCodec::default();
    let bytes = physical_plan_to_bytes_with_extension_codec(plan, &codec)?;
    let decoded = physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &codec)?;
    let shown = one_line(only_scan(&decoded));
    assert!(!shown.contains("pushed="), "{shown}");
    Ok(())
}

/// The rows of `sql` in one process and after its logical plan went through bytes (as a
/// client sends it to a scheduler), planned again from the decoded tables.
async fn logical_round_trip(ctx: &SessionContext, sql: &str) -> Result<()> {
    let frame = ctx.sql(sql).await?;
    let plan = frame.logical_plan().clone();
    let want = text(&frame.collect().await?)?;
    let codec = LakeLogicalCodec::default();
    let bytes = logical_plan_to_bytes_with_extension_codec(&plan, &codec)?;
    let decoded = logical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &codec)?;
    let got = text(&ctx.execute_logical_plan(decoded).await?.collect().await?)?;
    assert_eq!(got, want, "{sql}");
    Ok(())
}

#[tokio::test]
async fn iceberg_tables_time_travel_and_changes_round_trip() -> Result<()> {
    let ctx = session(2)?;
    let base = testdata("duckdb-iceberg");
    let location =
        testdata("duckdb-iceberg/data/persistent/equality_deletes/warehouse/mydb/mytable");
    for (name, extra) in [
        ("eq", String::new()),
        ("eq_s1", ", 'snapshot_id' '853766660775201079'".to_string()),
    ] {
        ctx.sql(&format!(
            "CREATE EXTERNAL TABLE {name} STORED AS ICEBERG LOCATION '{location}' \
             OPTIONS ('relative_path_base' '{base}'{extra})"
        ))
        .await?;
    }
    for sql in [
        "SELECT * FROM eq ORDER BY id, name, bir",
        "SELECT * FROM eq_s1 ORDER BY id",
        "SELECT name, count(*) FROM eq WHERE id > 1 GROUP BY name ORDER BY name",
    ] {
        logical_round_trip(&ctx, sql).await?;
        physical_round_trip(&ctx, sql).await?;
    }
    let li = testdata("duckdb-iceberg/data/persistent/iceberg/lineitem_iceberg");
    let li_base = testdata("duckdb-iceberg/data/persistent/iceberg");
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE li STORED AS ICEBERG LOCATION '{li}' \
         OPTIONS ('relative_path_base' '{li_base}')"
    ))
    .await?;
    for sql in [
        "SELECT _change_type, _change_version_id, _change_ordinal, count(*) \
         FROM table_changes('li', 7817332053627255703, 2354745328521181395) \
         GROUP BY 1, 2, 3 ORDER BY 1",
        "SELECT count(*), max(l_extendedprice) \
         FROM table_changes('li', 7817332053627255703, 2354745328521181395) \
         WHERE _change_type = 'delete' AND l_extendedprice < 10000",
    ] {
        logical_round_trip(&ctx, sql).await?;
        physical_round_trip(&ctx, sql).await?;
    }
    Ok(())
}

/// A scan frame's wire version, changed in place.
fn with_wire_version(bytes: &[u8], version: u16) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    let at = bytes
        .windows(4)
        .position(|w| w == lakescan::core::api::wire::MAGIC)
        .unwrap_or_else(|| panic!("no lakescan frame in the plan"));
    bytes[at + 4..at + 6].copy_from_slice(&version.to_le_bytes());
    bytes
}

#[tokio::test]
async fn a_plan_of_another_wire_version_or_a_vanished_file_is_a_clear_error() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let ctx = session(2)?;
    bucketed_hive_table(&ctx, &dir.path().display().to_string()).await?;
    let plan = ctx
        .sql("SELECT c0 FROM t WHERE ds = 'new'")
        .await?
        .create_physical_plan()
        .await?;
    let codec = LakePhysicalCodec::default();
    let bytes = physical_plan_to_bytes_with_extension_codec(plan, &codec)?;
    let other = with_wire_version(&bytes, lakescan::core::api::wire::WIRE_VERSION + 1);
    let err = physical_plan_from_bytes_with_extension_codec(&other, &ctx.task_ctx(), &codec)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(err.contains("same lakescan version"), "{err}");
    // The file of a split vanishes between planning and the task.
    let decoded = physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &codec)?;
    let gone = dir.path().join("t/ds=new/000003_0.parquet");
    std::fs::remove_file(&gone)?;
    let err = collect(decoded, ctx.task_ctx())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("000003_0.parquet"), "{err}");
    Ok(())
}
