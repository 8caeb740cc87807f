//! A real cluster: `lakescan-scheduler` pushing tasks to two `lakescan-executor` processes on loopback
//! ports, queried from this process; answers compared with one process. Every child is
//! killed when its test ends (pass or fail), and every wait is bounded.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use arrow::array::{ArrayRef, Int64Array, StringArray};
use arrow::util::pretty::pretty_format_batches;
use datafusion::common::{DataFusionError, Result};
use datafusion::prelude::{SessionConfig, SessionContext};
use iceberg::spec::{NestedField, PrimitiveType, Schema, Type};
use lakescan_iceberg_writer::TableWriter;

/// A child process killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `binary` with `args` and waits (at most a minute) for its `… listening on ADDR`
/// line; returns the process and ADDR.
fn start(binary: &str, args: &[&str], env: &[(String, String)]) -> Result<(Running, String)> {
    let mut command = Command::new(binary);
    command
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = Running(command.spawn()?);
    let stdout = child
        .0
        .stdout
        .take()
        .ok_or_else(|| DataFusionError::Execution(format!("{binary}: no stdout")))?;
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        if let Some(Ok(line)) = lines.next() {
            let _ = send.send(line);
        }
        // Keep reading so the child never blocks on a full pipe.
        for _ in lines {}
    });
    let line = receive
        .recv_timeout(Duration::from_secs(60))
        .map_err(|_| DataFusionError::Execution(format!("{binary} did not start in 60 s")))?;
    let Some((_, address)) = line.split_once(" listening on ") else {
        return Err(DataFusionError::Execution(format!(
            "{binary} printed '{line}'"
        )));
    };
    Ok((child, address.trim().to_string()))
}

/// A scheduler and two executors; `env` is given to each (object store credentials).
struct Cluster {
    url: String,
    _scheduler: Running,
    executors: Vec<Running>,
    _work: tempfile::TempDir,
}

impl Cluster {
    /// A cluster whose scheduler pushes tasks (the default).
    fn start(env: &[(String, String)]) -> Result<Self> {
        Self::start_with(env, "push")
    }

    /// A cluster handing out tasks by `scheduling` (`push` or `pull`).
    fn start_with(env: &[(String, String)], scheduling: &str) -> Result<Self> {
        let work = tempfile::tempdir()?;
        let (scheduler, address) = start(
            env!("CARGO_BIN_EXE_lakescan-scheduler"),
            &[
                "--bind",
                "127.0.0.1:0",
                "--executor-timeout-seconds",
                "5",
                "--scheduling",
                scheduling,
            ],
            env,
        )?;
        let mut executors = vec![];
        for i in 0..2 {
            let dir = work.path().join(format!("executor-{i}"));
            let dir = dir.display().to_string();
            let (executor, _) = start(
                env!("CARGO_BIN_EXE_lakescan-executor"),
                &[
                    "--scheduler",
                    &address,
                    "--bind",
                    "127.0.0.1:0",
                    "--slots",
                    "2",
                    "--work-dir",
                    &dir,
                    // Well under the scheduler's 5 s: a live executor is never lost.
                    "--heartbeat-seconds",
                    "1",
                    "--scheduling",
                    scheduling,
                ],
                env,
            )?;
            executors.push(executor);
        }
        Ok(Self {
            url: format!("df://{address}"),
            _scheduler: scheduler,
            executors,
            _work: work,
        })
    }

    async fn client(&self) -> Result<SessionContext> {
        let config = SessionConfig::new().with_target_partitions(4);
        let state = lakescan_ballista::session::state(config)?;
        lakescan_ballista::session::remote(&self.url, state).await
    }
}

fn one_process() -> Result<SessionContext> {
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(4));
    lakescan::register(&ctx)?;
    Ok(ctx)
}

async fn rows(ctx: &SessionContext, sql: &str) -> Result<String> {
    let run = async {
        let batches = ctx.sql(sql).await?.collect().await?;
        Ok::<_, DataFusionError>(pretty_format_batches(&batches)?.to_string())
    };
    match tokio::time::timeout(Duration::from_secs(120), run).await {
        Ok(result) => result,
        Err(_) => Err(DataFusionError::Execution(format!(
            "no answer in 120 s: {sql}"
        ))),
    }
}

/// A lineitem-shaped Hive table partitioned by `l_returnflag`, 20 000 rows in 8 files per
/// partition written with small row groups (many splits), under `dir/lineitem`.
async fn lineitem(dir: &Path) -> Result<()> {
    let ctx = one_process()?;
    let table = dir.join("lineitem").display().to_string();
    ctx.sql(&format!(
        "COPY (SELECT \
            CAST(value % 50 + 1 AS DECIMAL(15, 2)) AS l_quantity, \
            CAST((value * 7919) % 100000 AS DECIMAL(15, 2)) / 10 AS l_extendedprice, \
            CAST(value % 11 AS DECIMAL(15, 2)) / 100 AS l_discount, \
            CAST(value % 9 AS DECIMAL(15, 2)) / 100 AS l_tax, \
            CASE value % 3 WHEN 0 THEN 'A' WHEN 1 THEN 'N' ELSE 'R' END AS l_returnflag, \
            CASE value % 2 WHEN 0 THEN 'F' ELSE 'O' END AS l_linestatus, \
            DATE '1992-01-01' + CAST(value % 2500 AS INT) AS l_shipdate \
          FROM generate_series(1, 20000)) \
         TO '{table}' STORED AS PARQUET PARTITIONED BY (l_returnflag) \
         OPTIONS ('format.max_row_group_size' '500')"
    ))
    .await?
    .collect()
    .await?;
    Ok(())
}

const Q1: &str = "SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, \
    sum(l_extendedprice) AS sum_base_price, \
    sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price, \
    sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, \
    avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price, avg(l_discount) AS avg_disc, \
    count(*) AS count_order FROM lineitem WHERE l_shipdate <= DATE '1998-09-02' \
    GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus";

/// A query over the Iceberg table of [`iceberg_table`].
const ICEBERG: &str = "SELECT key, count(*) AS n, min(id), max(id), max(name) FROM ice \
    WHERE id % 3 <> 1 GROUP BY key ORDER BY key";

const Q6: &str = "SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem \
    WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' \
    AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24";

fn longs(values: impl IntoIterator<Item = i64>) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(values))
}

/// An Iceberg table of 4 files of 1 000 rows (`id`, `key = id % 10`, `name`) with a
/// position delete (rows 0..100 of the first file) and an equality delete of key 7, under
/// `dir/ice` (its metadata naming `location` instead when given: a table to upload there);
/// returns its metadata file as recorded.
async fn iceberg_table(dir: &Path, location: Option<&str>) -> Result<String> {
    let long = || Type::Primitive(PrimitiveType::Long);
    let schema = Schema::builder()
        .with_fields(vec![
            Arc::new(NestedField::optional(1, "id", long())),
            Arc::new(NestedField::optional(2, "key", long())),
            Arc::new(NestedField::optional(
                3,
                "name",
                Type::Primitive(PrimitiveType::String),
            )),
        ])
        .build()
        .map_err(|e| DataFusionError::External(e.into()))?;
    let mut table = TableWriter::new(dir.join("ice"), schema)?;
    if let Some(location) = location {
        table = table.with_location(location);
    }
    let mut data = vec![];
    for f in 0..4 {
        let ids = f * 1_000..(f + 1) * 1_000;
        let names: ArrayRef = Arc::new(StringArray::from_iter_values(
            ids.clone().map(|i| format!("n{i}")),
        ));
        data.push(table.data_file(vec![
            ("id", 1, longs(ids.clone())),
            ("key", 2, longs(ids.map(|v| v % 10))),
            ("name", 3, names),
        ])?);
    }
    let first = data[0].file_path().to_string();
    table.commit(data, vec![]).await?;
    let positions: Vec<(&str, i64)> = (0..100).map(|p| (first.as_str(), p)).collect();
    let position = table.position_delete_file(positions)?;
    let equality = table.equality_delete_file(vec![2], vec![("key", 2, longs([7]))])?;
    table.commit(vec![], vec![position, equality]).await
}

/// Runs `create` in both sessions, then each of `queries`: the cluster's rows are one
/// process's.
async fn same_rows(
    client: &SessionContext,
    local: &SessionContext,
    create: &[String],
    queries: &[&str],
) -> Result<()> {
    for ctx in [client, local] {
        for sql in create {
            ctx.sql(sql).await?.collect().await?;
        }
    }
    for sql in queries {
        let want = rows(local, sql).await?;
        assert_eq!(rows(client, sql).await?, want, "{sql}");
    }
    Ok(())
}

/// TPC-H Q1 and Q6 over a Hive table and a query over an Iceberg table with position and
/// equality deletes: the cluster's rows are one process's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduler_and_two_executors_answer_as_one_process() -> Result<()> {
    let dir = tempfile::tempdir()?;
    lineitem(dir.path()).await?;
    let metadata = iceberg_table(dir.path(), None).await?;
    let cluster = Cluster::start(&[])?;
    let client = cluster.client().await?;
    let local = one_process()?;
    let create = [
        format!(
            "CREATE EXTERNAL TABLE lineitem STORED AS HIVE LOCATION '{}' \
             PARTITIONED BY (l_returnflag) OPTIONS ('split_size' '16384')",
            dir.path().join("lineitem").display()
        ),
        format!("CREATE EXTERNAL TABLE ice STORED AS ICEBERG LOCATION '{metadata}'"),
    ];
    same_rows(&client, &local, &create, &[Q1, Q6, ICEBERG]).await?;
    // The deletes applied: no key 7, and the first 100 ids are gone.
    let deleted = rows(
        &client,
        "SELECT count(*) FROM ice WHERE key = 7 OR id < 100",
    )
    .await?;
    assert!(deleted.contains("| 0 "), "{deleted}");
    // A store only the client has (registered on its session): the scheduler, which plans,
    // cannot reach it, and says which.
    let memory =
        url::Url::parse("memory://only-here/").map_err(|e| DataFusionError::External(e.into()))?;
    let store = Arc::new(object_store::memory::InMemory::new());
    client.register_object_store(&memory, Arc::clone(&store) as _);
    let copy = format!(
        "COPY (SELECT 1 AS a) TO '{}' STORED AS PARQUET",
        dir.path().join("m/f.parquet").display()
    );
    local.sql(&copy).await?.collect().await?;
    let bytes = std::fs::read(dir.path().join("m/f.parquet"))?;
    object_store::ObjectStoreExt::put(store.as_ref(), &"m/f.parquet".into(), bytes.into()).await?;
    client
        .sql("CREATE EXTERNAL TABLE m STORED AS HIVE LOCATION 'memory://only-here/m/'")
        .await?
        .collect()
        .await?;
    let err = rows(&client, "SELECT a FROM m")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("memory://only-here"), "{err}");
    Ok(())
}

/// Executors that poll for their tasks (`--scheduling pull` on every process) answer as
/// the pushed-to ones do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_of_polling_executors_answers_as_one_process() -> Result<()> {
    let dir = tempfile::tempdir()?;
    lineitem(dir.path()).await?;
    let cluster = Cluster::start_with(&[], "pull")?;
    let client = cluster.client().await?;
    let local = one_process()?;
    let create = [format!(
        "CREATE EXTERNAL TABLE lineitem STORED AS HIVE LOCATION '{}' \
         PARTITIONED BY (l_returnflag) OPTIONS ('split_size' '16384')",
        dir.path().join("lineitem").display()
    )];
    same_rows(&client, &local, &create, &[Q1, Q6]).await
}

/// Q1 on the cluster with one of its two executors killed `after` the query was sent (`None`:
/// killed before it is sent, before any task of it): Ballista runs the dead executor's tasks
/// again on the other one, or the query fails with a clear error; its rows are never other
/// than one process's. Returns whether the query finished.
async fn q1_with_an_executor_killed(after: Option<Duration>) -> Result<bool> {
    let dir = tempfile::tempdir()?;
    lineitem(dir.path()).await?;
    let mut cluster = Cluster::start(&[])?;
    let client = cluster.client().await?;
    let local = one_process()?;
    let create = format!(
        "CREATE EXTERNAL TABLE lineitem STORED AS HIVE LOCATION '{}' \
         PARTITIONED BY (l_returnflag) OPTIONS ('split_size' '4096')",
        dir.path().join("lineitem").display()
    );
    for ctx in [&client, &local] {
        ctx.sql(&create).await?.collect().await?;
    }
    let want = rows(&local, Q1).await?;
    if after.is_none() {
        cluster.executors.truncate(1);
    }
    let running = {
        let client = client.clone();
        tokio::spawn(async move { rows(&client, Q1).await })
    };
    if let Some(after) = after {
        tokio::time::sleep(after).await;
        cluster.executors.truncate(1);
    }
    let finished = match running
        .await
        .map_err(|e| DataFusionError::External(e.into()))?
    {
        Ok(got) => {
            assert_eq!(got, want);
            true
        }
        Err(e) => {
            // Ballista's fetch from the dead executor failed, or lakescan's re-run guard
            // failed the job (Ballista would have re-run work whose output was already
            // read, and read both attempts' output: duplicate rows without the guard).
            let e = e.to_string();
            eprintln!("the query failed: {e}");
            assert!(
                e.contains("would run a second time") || e.contains("FetchFailed"),
                "{e}"
            );
            false
        }
    };
    // The cluster still answers, with the executor left.
    assert_eq!(rows(&client, Q1).await?, want);
    Ok(finished)
}

/// An executor killed before the query: the scheduler, which has not yet missed its
/// heartbeats, may push it tasks; their launch fails, Ballista drops the executor and the
/// other runs them all (no task had run, so none runs twice): the query finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_executor_killed_before_the_query_is_survived() -> Result<()> {
    assert!(
        q1_with_an_executor_killed(None).await?,
        "the query finished"
    );
    Ok(())
}

/// An executor killed while the query runs (mid-stage, or later: the first stage may have
/// finished by then): its rows are one process's, or the query fails with a clear error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_executor_killed_mid_query_never_gives_other_rows() -> Result<()> {
    q1_with_an_executor_killed(Some(Duration::from_millis(100))).await?;
    q1_with_an_executor_killed(Some(Duration::from_millis(300))).await?;
    Ok(())
}

/// The same over S3 (moto on loopback): the client's tables name `s3://` locations with
/// `aws.*` options; the scheduler and executors, which no `CREATE` ran in, make their
/// clients from their own `AWS_*` environment (plans carry no credentials).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cluster_reads_tables_on_s3() -> Result<()> {
    let failed = |e: lakescan_testkit::Error| DataFusionError::External(e.to_string().into());
    let s3 = lakescan_testkit::S3Server::start().map_err(failed)?;
    s3.create_bucket("lake").map_err(failed)?;
    let dir = tempfile::tempdir()?;
    lineitem(dir.path()).await?;
    let store = s3.store("lake").map_err(failed)?;
    lakescan_testkit::upload_dir(&store, &dir.path().join("lineitem"), "lineitem")
        .await
        .map_err(failed)?;
    let metadata = iceberg_table(dir.path(), Some("s3://lake/ice")).await?;
    lakescan_testkit::upload_dir(&store, &dir.path().join("ice"), "ice")
        .await
        .map_err(failed)?;
    let env: Vec<(String, String)> = s3
        .options()
        .into_iter()
        .filter_map(|(key, value)| {
            let name = match key {
                "aws.access_key_id" => "AWS_ACCESS_KEY_ID",
                "aws.secret_access_key" => "AWS_SECRET_ACCESS_KEY",
                "aws.region" => "AWS_REGION",
                "aws.endpoint" => "AWS_ENDPOINT",
                "aws.allow_http" => "AWS_ALLOW_HTTP",
                _ => return None,
            };
            Some((name.to_string(), value))
        })
        .collect();
    let cluster = Cluster::start(&env)?;
    let client = cluster.client().await?;
    let local = one_process()?;
    let create = [
        format!(
            "CREATE EXTERNAL TABLE lineitem STORED AS HIVE LOCATION 's3://lake/lineitem' \
             PARTITIONED BY (l_returnflag) OPTIONS ('split_size' '16384', {})",
            s3.sql_options()
        ),
        format!(
            "CREATE EXTERNAL TABLE ice STORED AS ICEBERG LOCATION '{metadata}' OPTIONS ({})",
            s3.sql_options()
        ),
    ];
    same_rows(&client, &local, &create, &[Q1, Q6, ICEBERG]).await?;
    Ok(())
}

/// A table of 100 000 splits (`split_size` 1 over files of a few kilobytes: most splits
/// hold no row group) plans, ships and runs on the cluster with one process's rows. The
/// stage plan every task receives costs at most 60 bytes a split (each file's facts once;
/// about 4 here, a file number and a range): written split by split, each with its path
/// twice, it was about 140 bytes a split, 15 MB, and a poll answer of two such plans did not
/// fit an executor's message limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_of_100_000_splits_runs_on_the_cluster() -> Result<()> {
    use datafusion_proto::bytes::physical_plan_to_bytes_with_extension_codec;
    use lakescan::codec::LakePhysicalCodec;

    let dir = tempfile::tempdir()?;
    let table = dir.path().join("many");
    let local = one_process()?;
    let (mut bytes, mut files) = (0u64, 0);
    while bytes < 100_000 {
        let file = table.join(format!("part-{files:05}.parquet"));
        local
            .sql(&format!(
                "COPY (SELECT value AS v FROM generate_series({}, {})) TO '{}' \
                 STORED AS PARQUET OPTIONS ('format.compression' 'uncompressed')",
                files * 1000,
                files * 1000 + 999,
                file.display()
            ))
            .await?
            .collect()
            .await?;
        bytes += std::fs::metadata(&file)?.len();
        files += 1;
    }
    let create = format!(
        "CREATE EXTERNAL TABLE many STORED AS HIVE LOCATION '{}/' OPTIONS ('split_size' '1')",
        table.display()
    );
    local.sql(&create).await?.collect().await?;
    let plan = local
        .sql("SELECT v FROM many")
        .await?
        .create_physical_plan()
        .await?;
    let splits = plan
        .downcast_ref::<lakescan::core::api::LakeScanExec>()
        .map(|scan| scan.split_count());
    assert_eq!(splits, Some(bytes as usize), "one split a byte");
    let encoded = physical_plan_to_bytes_with_extension_codec(plan, &LakePhysicalCodec::default())?;
    let per_split = encoded.len() as f64 / bytes as f64;
    assert!(
        per_split <= 60.0,
        "{per_split:.1} bytes a split ({} for {bytes} splits of {files} files)",
        encoded.len()
    );
    let cluster = Cluster::start(&[])?;
    let client = cluster.client().await?;
    client.sql(&create).await?.collect().await?;
    let sql = "SELECT count(*) AS n, sum(v) AS total, count(DISTINCT v) AS distinct_v FROM many";
    let want = rows(&local, sql).await?;
    let rows_in_files = i64::from(files) * 1000;
    assert!(want.contains(&format!("| {rows_in_files} ")), "{want}");
    assert_eq!(rows(&client, sql).await?, want);
    Ok(())
}
