//! Hive and Iceberg tables on S3: a real S3 server (moto, `lakescan_testkit::S3Server`) on
//! `127.0.0.1`, started and stopped by each test, buckets made per test. The same queries give
//! the same rows as over the local copies of the tables; injected faults are retried or end in
//! a clear error naming the object; credentials never show in errors or plans.
//!
//! Every test runs under a time limit ([`LIMIT`]): nothing here can hang CI.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;
use lakescan_testkit::{ACCESS_KEY_ID, Fault, S3Server, SECRET_ACCESS_KEY, upload_dir};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};

mod requests;
mod rest_catalog;

/// No test here may take longer.
const LIMIT: Duration = Duration::from_secs(90);

async fn bounded<T>(f: impl Future<Output = T>) -> T {
    // The first test on a machine whose python3 lacks moto makes the tests' environment
    // (`lakescan_testkit::python`): that set-up is not the test's time.
    let _ = tokio::task::spawn_blocking(lakescan_testkit::python::interpreter).await;
    tokio::time::timeout(LIMIT, f)
        .await
        .expect("the test exceeded its time limit")
}

fn session() -> SessionContext {
    let ctx = SessionContext::new();
    lakescan::register(&ctx).unwrap();
    ctx
}

/// The `LakeScanExec` line of an `EXPLAIN ANALYZE` output.
fn scan_line(plan: &str) -> &str {
    let line = plan.lines().find(|l| l.contains("LakeScanExec"));
    line.unwrap_or_else(|| panic!("no LakeScanExec in\n{plan}"))
}

/// The values of the one column of a pretty-printed result.
fn first_column(out: &str) -> Vec<&str> {
    out.lines()
        .skip(3)
        .filter_map(|l| l.strip_prefix("| "))
        .map(|l| l.trim_end_matches(" |").trim())
        .collect()
}

async fn rows(ctx: &SessionContext, sql: &str) -> datafusion::error::Result<String> {
    let batches = ctx.sql(sql).await?.collect().await?;
    Ok(pretty_format_batches(&batches)?.to_string())
}

/// A partitioned Hive table of 3 files (2 regions) under `dir/t/`.
async fn write_hive_table(dir: &Path) -> PathBuf {
    let ctx = session();
    let table = dir.join("t");
    for (region, start) in [("eu", 0), ("us", 100), ("us", 200)] {
        ctx.sql(&format!(
            "COPY (SELECT CAST(value AS BIGINT) AS id, value * 1.5 AS amount \
             FROM generate_series({start}, {start} + 49)) \
             TO '{}/region={region}/f{start}.parquet' STORED AS PARQUET",
            table.display()
        ))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    }
    table
}

const HIVE_QUERY: &str = "SELECT region, count(*) AS n, sum(amount) AS total, min(id), max(id) FROM t \
     WHERE id % 2 = 0 GROUP BY region ORDER BY region";

/// A server with bucket `lake` holding the Hive table of [`write_hive_table`] under `t/`;
/// returns the server and the rows of [`HIVE_QUERY`] over the local copy.
async fn hive_on_s3() -> (S3Server, tempfile::TempDir, String) {
    let server = S3Server::start().unwrap();
    server.create_bucket("lake").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let local = write_hive_table(dir.path()).await;
    upload_dir(&server.store("lake").unwrap(), &local, "t")
        .await
        .unwrap();
    let ctx = session();
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '{}' PARTITIONED BY (region)",
        local.display()
    ))
    .await
    .unwrap();
    let expected = rows(&ctx, HIVE_QUERY).await.unwrap();
    (server, dir, expected)
}

/// A session with `t`, the Hive table on `server`, configured by `OPTIONS`.
async fn hive_session(server: &S3Server) -> SessionContext {
    let ctx = session();
    create_t(&ctx, server).await;
    ctx
}

/// [`hive_session`] without statistics: the planner reads no footer, so every read of the
/// files is the scan's (a small file read while planning is served from that read).
async fn scan_only_session(server: &S3Server) -> SessionContext {
    let ctx = session();
    ctx.sql("SET datafusion.execution.collect_statistics = false")
        .await
        .unwrap();
    create_t(&ctx, server).await;
    ctx
}

async fn create_t(ctx: &SessionContext, server: &S3Server) {
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION 's3://lake/t/' \
         PARTITIONED BY (region) OPTIONS ({})",
        server.sql_options()
    ))
    .await
    .unwrap();
}

#[tokio::test]
async fn hive_table_on_s3_by_options_gives_the_local_rows() {
    bounded(async {
        let (server, _dir, expected) = hive_on_s3().await;
        let ctx = hive_session(&server).await;
        assert_eq!(rows(&ctx, HIVE_QUERY).await.unwrap(), expected);
        // Partition pruning lists only the kept partition's directory.
        let out = rows(&ctx, "SELECT count(*) AS n FROM t WHERE region = 'eu'")
            .await
            .unwrap();
        assert!(out.contains("| 50 |"), "{out}");
    })
    .await
}

/// What S3 bills: a file smaller than the footer read (512 KiB) costs one GET, footer and
/// column chunks together, however it is first read — by `CREATE` (the schema of the first
/// file), by the planner (statistics) or by the scan — and the later steps use that read.
/// The metric shows only for object stores.
#[tokio::test]
async fn a_small_file_costs_one_get() {
    bounded(async {
        let (server, _dir, _) = hive_on_s3().await;
        for statistics in [true, false] {
            let before = server.requests().unwrap();
            let ctx = match statistics {
                true => hive_session(&server).await,
                false => scan_only_session(&server).await,
            };
            let plan = rows(&ctx, &format!("EXPLAIN ANALYZE {HIVE_QUERY}"))
                .await
                .unwrap();
            let paid = server.requests().unwrap().since(&before);
            assert_eq!((paid.get, paid.head), (3, 0), "{plan}");
            let scan = scan_line(&plan);
            assert!(scan.contains("splits_total=3"), "{scan}");
            // CREATE read the first file; the planner the others (with its LIST), or the scan.
            let (planning, scanned) = if statistics { (3, 0) } else { (1, 2) };
            assert!(scan.contains(&format!("requests_get={scanned},")), "{scan}");
            assert!(
                scan.contains(&format!("requests_planning={planning},")),
                "{scan}"
            );
            assert!(scan.contains("requests_retried=0,"), "{scan}");
            // Planning's one listing (the table has no partition filter: one recursive LIST).
            assert!(scan.contains("requests_list=1,"), "{scan}");
            assert!(scan.contains("requests_head=0,"), "{scan}");
        }
        let local = session();
        let dir = tempfile::tempdir().unwrap();
        let table = write_hive_table(dir.path()).await;
        local
            .sql(&format!(
                "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '{}' PARTITIONED BY (region)",
                table.display()
            ))
            .await
            .unwrap();
        let plan = rows(&local, &format!("EXPLAIN ANALYZE {HIVE_QUERY}"))
            .await
            .unwrap();
        assert!(!plan.contains("requests_get"), "{plan}");
    })
    .await
}

/// `CREATE` infers the partition types and the columns from one recursive LIST. A session
/// that keeps listings (`lakescan.listing_cache_ttl_seconds`) serves its queries within the
/// time to live from that listing, as DataFusion's `ListingTable` serves them from its
/// listing cache; by default every query lists, and sees a file added after `CREATE`.
#[tokio::test]
async fn create_lists_once_and_a_session_keeping_listings_reuses_it() {
    bounded(async {
        let (server, _dir, expected) = hive_on_s3().await;
        let store = server.store("lake").unwrap();
        let count = "SELECT count(*) AS n FROM t";
        for ttl in [0, 600] {
            let ctx = session();
            ctx.sql(&format!("SET lakescan.listing_cache_ttl_seconds = {ttl}"))
                .await
                .unwrap();
            let before = server.requests().unwrap();
            create_t(&ctx, &server).await;
            let created = server.requests().unwrap();
            assert_eq!(created.since(&before).list, 1, "ttl {ttl}");
            assert_eq!(rows(&ctx, HIVE_QUERY).await.unwrap(), expected);
            let queried = server.requests().unwrap().since(&created);
            assert_eq!(queried.list, if ttl == 0 { 1 } else { 0 }, "ttl {ttl}");

            // A file added after CREATE.
            let added = ObjectPath::from("t/region=eu/added.parquet");
            store
                .copy(&ObjectPath::from("t/region=eu/f0.parquet"), &added)
                .await
                .unwrap();
            let out = rows(&ctx, count).await.unwrap();
            let seen = if ttl == 0 { "| 200 |" } else { "| 150 |" };
            assert!(out.contains(seen), "ttl {ttl}: {out}");
            store.delete(&added).await.unwrap();
        }
    })
    .await
}

#[tokio::test]
async fn hive_table_on_a_store_the_application_registered() {
    bounded(async {
        let (server, _dir, expected) = hive_on_s3().await;
        let ctx = session();
        let url = url::Url::parse("s3://lake").unwrap();
        ctx.register_object_store(&url, server.store("lake").unwrap());
        ctx.sql(
            "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION 's3a://lake/t/' \
             PARTITIONED BY (region)",
        )
        .await
        .unwrap();
        assert_eq!(rows(&ctx, HIVE_QUERY).await.unwrap(), expected);
    })
    .await
}

/// The DuckDB-written Iceberg table with equality deletes and its time travel, on S3.
#[tokio::test]
async fn iceberg_table_on_s3_with_deletes_and_time_travel_gives_the_local_rows() {
    bounded(async {
        let server = S3Server::start().unwrap();
        server.create_bucket("warehouse").unwrap();
        let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
        let root = testdata.join("duckdb-iceberg");
        let table = "data/persistent/equality_deletes";
        upload_dir(
            &server.store("warehouse").unwrap(),
            &root.join(table),
            &format!("duck/{table}"),
        )
        .await
        .unwrap();
        let location = format!("{table}/warehouse/mydb/mytable");
        let query = "SELECT * FROM t ORDER BY 1";
        let mut results = Vec::new();
        for (base, extra) in [
            (root.display().to_string(), String::new()),
            (
                "s3://warehouse/duck".to_string(),
                format!(", {}", server.sql_options()),
            ),
        ] {
            let ctx = session();
            let mut out = Vec::new();
            for snapshot in ["", ", 'snapshot_id' '853766660775201079'"] {
                ctx.sql("DROP TABLE IF EXISTS t").await.unwrap();
                ctx.sql(&format!(
                    "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{base}/{location}' \
                     OPTIONS ('relative_path_base' '{base}'{snapshot}{extra})"
                ))
                .await
                .unwrap();
                out.push(rows(&ctx, query).await.unwrap());
                out.push(
                    rows(&ctx, "SELECT count(*) FROM \"t$snapshots\"")
                        .await
                        .unwrap(),
                );
            }
            results.push(out);
        }
        assert_ne!(results[0][0], results[0][2], "time travel shows other rows");
        assert_eq!(results[0], results[1]);
    })
    .await
}

/// The schema of the Iceberg tables here: `id BIGINT NOT NULL` (field id 1).
fn id_schema() -> iceberg::spec::Schema {
    use iceberg::spec::{NestedField, PrimitiveType, Schema, Type};
    Schema::builder()
        .with_fields(vec![Arc::new(NestedField::required(
            1,
            "id",
            Type::Primitive(PrimitiveType::Long),
        ))])
        .build()
        .unwrap()
}

/// An Iceberg table of 6 rows at `location`, written under `dir` with rows `id` 2 and 5
/// deleted by a position delete; the metadata file's path as recorded (under `location`).
async fn write_iceberg_table(dir: &Path, location: &str) -> String {
    use arrow::array::{ArrayRef, Int64Array};

    let mut table = lakescan_iceberg_writer::TableWriter::new(dir, id_schema())
        .unwrap()
        .with_location(location);
    let ids: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3, 4, 5, 6]));
    let file = table.data_file(vec![("id", 1, ids)]).unwrap();
    let path = file.file_path().to_string();
    assert!(path.starts_with(location), "{path}");
    table.commit(vec![file], vec![]).await.unwrap();
    let deletes = table
        .position_delete_file(vec![(path.as_str(), 1), (path.as_str(), 4)])
        .unwrap();
    table.commit(vec![], vec![deletes]).await.unwrap()
}

/// A server with bucket `lake` holding the table of [`write_iceberg_table`] at
/// `s3://lake/wh/db/orders` (written under the returned directory); its metadata path.
async fn orders_on_s3() -> (S3Server, tempfile::TempDir, String) {
    let server = S3Server::start().unwrap();
    server.create_bucket("lake").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("orders");
    let metadata = write_iceberg_table(&local, "s3://lake/wh/db/orders").await;
    upload_dir(&server.store("lake").unwrap(), &local, "wh/db/orders")
        .await
        .unwrap();
    (server, dir, metadata)
}

/// The SQLite catalog with an `s3://` warehouse: the catalog reads and writes its metadata
/// files on S3 through the session's client (configured by `aws.*` URI parameters), and its
/// tables read manifests, deletes and data through the same client.
#[tokio::test]
async fn sqlite_catalog_with_an_s3_warehouse() {
    use std::collections::HashMap;

    use iceberg::spec::{NestedField, PrimitiveType, Schema, Type};
    use iceberg::{NamespaceIdent, TableCreation, TableIdent};
    use lakescan::iceberg::catalog::{connect, register_catalog};

    bounded(async {
        let (server, dir, metadata) = orders_on_s3().await;
        let db = dir.path().join("catalog.db");
        let uri = format!(
            "sqlite://{}?warehouse=s3://lake/wh&{}",
            db.display(),
            server.uri_params()
        );

        let ctx = session();
        let catalog = connect("ice", &uri, &ctx.runtime_env()).await.unwrap();
        let ns = NamespaceIdent::new("db".into());
        catalog.create_namespace(&ns, HashMap::new()).await.unwrap();
        catalog
            .register_table(&TableIdent::new(ns.clone(), "orders".into()), metadata)
            .await
            .unwrap();
        // A table the catalog creates: its first metadata file is written to the warehouse.
        let schema = Schema::builder()
            .with_fields(vec![Arc::new(NestedField::optional(
                1,
                "x",
                Type::Primitive(PrimitiveType::Int),
            ))])
            .build()
            .unwrap();
        let creation = TableCreation::builder()
            .name("fresh".into())
            .schema(schema)
            .build();
        let fresh = catalog.create_table(&ns, creation).await.unwrap();
        let written = fresh.metadata_location().unwrap().to_string();
        assert!(
            written.starts_with("s3://lake/wh/db/fresh/metadata/"),
            "{written}"
        );
        let key = ObjectPath::from(written.trim_start_matches("s3://lake/"));
        let store = server.store("lake").unwrap();
        assert!(store.head(&key).await.is_ok(), "{written} is on S3");

        // Another session reaches the same catalog file and the same warehouse.
        let ctx = session();
        register_catalog(&ctx, "ice", &uri).await.unwrap();
        let out = rows(&ctx, "SELECT id FROM ice.db.orders ORDER BY id")
            .await
            .unwrap();
        let ids = first_column(&out);
        assert_eq!(ids, ["1", "3", "4", "6"]);
        let out = rows(&ctx, "SELECT count(*) AS n FROM ice.db.fresh")
            .await
            .unwrap();
        assert!(out.contains("| 0 |"), "{out}");

        // Secrets in the URI never show in its errors.
        let bad = format!("sqlite://relative.db?{}", server.uri_params());
        let err = connect("x", &bad, &ctx.runtime_env())
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("aws.secret_access_key=***"), "{err}");
        assert!(!err.contains(SECRET_ACCESS_KEY), "{err}");
        let err = connect(
            "x",
            &format!("sqlite://{}?aws.nope=1", db.display()),
            &ctx.runtime_env(),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(err.contains("aws.nope"), "{err}");
    })
    .await
}

/// Arms `fault`, runs [`HIVE_QUERY`] on a fresh session, and returns its rows or error.
async fn hive_query_with(server: &S3Server, fault: &Fault) -> datafusion::error::Result<String> {
    let ctx = hive_session(server).await;
    server.arm(fault).unwrap();
    let out = rows(&ctx, HIVE_QUERY).await;
    server.disarm().unwrap();
    out
}

#[tokio::test]
async fn transient_faults_are_retried_and_the_rows_are_identical() {
    bounded(async {
        let (server, _dir, expected) = hive_on_s3().await;
        let faults = [
            Fault::status(503).times(2).on("GET"),
            Fault::status(500).times(2).on("GET").ranged(),
            Fault::status(429).times(2).on("GET"),
            Fault::status(503).times(2).on("HEAD"),
            Fault::status(503)
                .times(2)
                .on("GET")
                .path_contains("region="),
            Fault::truncate().times(2).on("GET").ranged(),
            Fault::delay(3.0).times(1).on("GET").ranged(),
        ];
        for fault in faults {
            let out = hive_query_with(&server, &fault).await;
            assert_eq!(out.as_ref().ok(), Some(&expected), "{fault:?}: {out:?}");
        }
        let stats = server.stats().unwrap();
        assert!(!stats.contains("\"injected\": 0"), "{stats}");
    })
    .await
}

/// Retries show in the scan's metrics: two 503s on the first ranged GET, one more request
/// each.
#[tokio::test]
async fn retries_appear_in_the_scans_metrics() {
    bounded(async {
        let (server, _dir, _) = hive_on_s3().await;
        let ctx = scan_only_session(&server).await;
        let sql = format!("EXPLAIN ANALYZE {HIVE_QUERY}");
        // Planned first: footers read while planning do not take the faults.
        let plan = ctx
            .sql(&sql)
            .await
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap();
        server
            .arm(&Fault::status(503).times(2).on("GET").ranged())
            .unwrap();
        let batches = datafusion::physical_plan::collect(plan, ctx.task_ctx())
            .await
            .unwrap();
        server.disarm().unwrap();
        let out = pretty_format_batches(&batches).unwrap().to_string();
        let scan = scan_line(&out);
        assert!(scan.contains("requests_retried=2,"), "{scan}");
        // The first file came whole with CREATE's schema read.
        assert!(scan.contains("requests_get=2,"), "{scan}");
    })
    .await
}

#[tokio::test]
async fn a_listing_fault_is_retried() {
    bounded(async {
        let (server, _dir, expected) = hive_on_s3().await;
        // The table's creation lists; so does every query.
        server
            .arm(&Fault::status(503).times(2).on("GET").path_contains("/lake"))
            .unwrap();
        let ctx = hive_session(&server).await;
        assert_eq!(rows(&ctx, HIVE_QUERY).await.unwrap(), expected);
    })
    .await
}

#[tokio::test]
async fn a_permanent_fault_is_an_error_naming_the_object_and_status() {
    bounded(async {
        let (server, _dir, _) = hive_on_s3().await;
        let fault = Fault::status(500)
            .times(1000)
            .on("GET")
            .path_contains("f100");
        let err = hive_query_with(&server, &fault)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("f100.parquet"), "{err}");
        assert!(err.contains("500"), "{err}");
        assert!(err.contains("after 3 retries"), "the retry budget: {err}");
        // A fetch that failed is not called a corrupt file.
        assert!(!err.contains("truncated"), "{err}");
        assert!(!err.contains(SECRET_ACCESS_KEY), "{err}");
    })
    .await
}

#[tokio::test]
async fn forbidden_missing_bucket_and_missing_location_are_clear_errors() {
    bounded(async {
        let (server, _dir, _) = hive_on_s3().await;
        let err = hive_query_with(&server, &Fault::status(403).times(1000).on("GET").ranged())
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("403") || err.contains("Forbidden"), "{err}");
        assert!(err.contains(".parquet"), "{err}");

        let ctx = session();
        for (location, named) in [
            ("s3://no-such-bucket/t/", "no-such-bucket"),
            ("s3://lake/no/such/table/", "no/such/table"),
        ] {
            let err = ctx
                .sql(&format!(
                    "CREATE EXTERNAL TABLE x STORED AS HIVE LOCATION '{location}' OPTIONS ({})",
                    server.sql_options()
                ))
                .await
                .unwrap_err()
                .to_string();
            assert!(err.contains(named), "{location}: {err}");
        }
    })
    .await
}

#[tokio::test]
async fn an_object_deleted_or_rewritten_after_planning_is_an_error_naming_it() {
    bounded(async {
        let (server, _dir, _) = hive_on_s3().await;
        let store = server.store("lake").unwrap();
        let victim = ObjectPath::from("t/region=us/f100.parquet");
        let original = store.get(&victim).await.unwrap().bytes().await.unwrap();

        // Deleted between listing (planning) and reading. (A planner that collects
        // statistics reads these small files whole and the scan uses that read: the version
        // listed, consistently.)
        let ctx = scan_only_session(&server).await;
        let plan = ctx
            .sql(HIVE_QUERY)
            .await
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap();
        store.delete(&victim).await.unwrap();
        let err = datafusion::physical_plan::collect(plan, ctx.task_ctx())
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("f100.parquet"), "{err}");

        // Rewritten with another size.
        store.put(&victim, original.clone().into()).await.unwrap();
        let plan = ctx
            .sql(HIVE_QUERY)
            .await
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap();
        let mut longer = original.to_vec();
        longer.splice(0..0, b"PAR1junk".iter().copied());
        store.put(&victim, longer.into()).await.unwrap();
        let err = datafusion::physical_plan::collect(plan, ctx.task_ctx())
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("f100.parquet"), "{err}");
        assert!(err.contains("changed after the table was listed"), "{err}");
    })
    .await
}

#[tokio::test]
async fn credentials_never_show_in_errors_or_plans() {
    bounded(async {
        let (server, _dir, _) = hive_on_s3().await;
        let ctx = hive_session(&server).await;
        let mut shown = Vec::new();
        for sql in [
            "EXPLAIN SELECT * FROM t WHERE id = 1",
            "EXPLAIN ANALYZE SELECT * FROM t WHERE id = 1",
        ] {
            shown.push(rows(&ctx, sql).await.unwrap());
        }
        let create = format!(
            "CREATE EXTERNAL TABLE u STORED AS HIVE LOCATION 's3://lake/t/' \
             PARTITIONED BY (region) OPTIONS ({})",
            server.sql_options()
        );
        shown.push(
            rows(&ctx, &format!("EXPLAIN {create}"))
                .await
                .unwrap_or_else(|e| e.to_string()),
        );
        // A failing scan and a failing creation.
        server.arm(&Fault::status(500).times(1000)).unwrap();
        shown.push(rows(&ctx, HIVE_QUERY).await.unwrap_err().to_string());
        shown.push(ctx.sql(&create).await.unwrap_err().to_string());
        server.disarm().unwrap();
        let bad = create.replace("'aws.region'", "'aws.regio'");
        shown.push(ctx.sql(&bad).await.unwrap_err().to_string());
        for text in &shown {
            assert!(!text.contains(SECRET_ACCESS_KEY), "{text}");
            assert!(!text.contains(ACCESS_KEY_ID), "{text}");
        }
        assert!(
            shown[5].contains("unknown option 'aws.regio'"),
            "{}",
            shown[5]
        );
    })
    .await
}

#[tokio::test]
async fn memory_locations_work_with_a_registered_store() {
    bounded(async {
        let dir = tempfile::tempdir().unwrap();
        let local = write_hive_table(dir.path()).await;
        let store: std::sync::Arc<dyn ObjectStore> =
            std::sync::Arc::new(object_store::memory::InMemory::new());
        upload_dir(&store, &local, "t").await.unwrap();
        let ctx = session();
        ctx.register_object_store(&url::Url::parse("memory://mem").unwrap(), store);
        ctx.sql("CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION 'memory://mem/t/' PARTITIONED BY (region)")
            .await
            .unwrap();
        let out = rows(&ctx, HIVE_QUERY).await.unwrap();
        assert!(out.contains("| eu     | 25 |"), "{out}");
    })
    .await
}
