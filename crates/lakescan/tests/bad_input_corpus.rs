//! The bad-input corpus, `testdata/bad/` (see its README): every row of `cases.tsv` is put
//! where its kind belongs — the only file of a Hive table, a Hive table directory, or the
//! manifest / manifest list / metadata file / deletion vector / delete file of a freshly
//! written Iceberg table — and queried. Each query must fail (never return rows), must not
//! panic, and its error must name the file (or the directory a `hive` case names) and match
//! the case's `expected` regular expression. Every failing case is listed in one assertion.
//!
//! The good files of `testdata/bad/good/`, placed the same way, must read
//! ([`good_files_read`]): the errors come from the corruption, not from the placement.
//!
//! `LAKESCAN_BAD_SHOW=1` prints every case's error; `LAKESCAN_BAD_ONLY=<substring>` runs
//! the cases whose path contains it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, Date32Array, Int32Array, RecordBatch, StringArray};
use datafusion::prelude::SessionContext;
use futures::StreamExt;
use iceberg::spec::{
    DataContentType, DataFile, DataFileBuilder, DataFileFormat, NestedField, PrimitiveType, Schema,
    Struct, Type,
};
use lakescan_iceberg_writer::TableWriter;
use regex::Regex;

/// Cases run at once.
const CONCURRENT: usize = 4;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn corpus() -> PathBuf {
    testdata().join("bad")
}

/// One row of `cases.tsv`.
#[derive(Debug, Clone)]
struct Case {
    path: String,
    kind: String,
    expected: String,
    setup: BTreeMap<String, String>,
    names: String,
}

impl Case {
    fn setting(&self, key: &str) -> Option<&str> {
        self.setup.get(key).map(String::as_str)
    }

    fn queries(&self) -> Vec<&'static str> {
        match self.setting("queries") {
            Some("select") => vec!["SELECT * FROM t"],
            _ => vec!["SELECT * FROM t", "SELECT count(*) FROM t"],
        }
    }
}

fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(corpus().join("cases.tsv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    assert_eq!(header[..5], ["path", "kind", "expected", "setup", "names"]);
    lines
        .map(|line| {
            let cells: Vec<&str> = line.split('\t').collect();
            let setup = cells[3]
                .split(';')
                .filter(|s| !s.is_empty())
                .map(|s| {
                    let (k, v) = s.split_once('=').unwrap();
                    (k.to_string(), v.to_string())
                })
                .collect();
            Case {
                path: cells[0].to_string(),
                kind: cells[1].to_string(),
                expected: cells[2].to_string(),
                setup,
                names: cells[4].to_string(),
            }
        })
        .collect()
}

/// What running a case's queries gave: per query, its error or the rows it returned.
struct Outcome {
    /// The name the errors must contain.
    name: String,
    results: Vec<(String, Result<usize, String>)>,
}

/// Runs `case`: places its file in `dir` and runs its queries.
async fn run(case: Case, dir: PathBuf) -> Outcome {
    let file = corpus().join(&case.path);
    let placed = place(&case, &file, &dir).await;
    let name = match case.names.as_str() {
        "" => placed.name.clone(),
        names => names.to_string(),
    };
    let ctx = SessionContext::new();
    lakescan::register(&ctx).unwrap();
    let mut results = vec![];
    let created = ctx.sql(&placed.create).await;
    for query in case.queries() {
        let result = match &created {
            Err(e) => Err(format!("CREATE failed: {e}")),
            Ok(_) => collect(&ctx, query).await,
        };
        results.push((query.to_string(), result));
    }
    Outcome { name, results }
}

async fn collect(ctx: &SessionContext, sql: &str) -> Result<usize, String> {
    let frame = ctx.sql(sql).await.map_err(|e| e.to_string())?;
    let batches = frame.collect().await.map_err(|e| e.to_string())?;
    Ok(batches.iter().map(RecordBatch::num_rows).sum())
}

/// A case's file in place: the `CREATE EXTERNAL TABLE` of its table, and the name the
/// error must contain.
struct Placed {
    create: String,
    name: String,
}

async fn place(case: &Case, file: &Path, dir: &Path) -> Placed {
    match case.kind.as_str() {
        "parquet" => place_parquet(case, file, dir),
        "hive" => place_hive(case, file, dir),
        _ => place_iceberg(case, file, dir).await,
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

/// The only file of a Hive table.
fn place_parquet(case: &Case, file: &Path, dir: &Path) -> Placed {
    let table = dir.join("t");
    std::fs::create_dir_all(&table).unwrap();
    let name = file_name(file);
    std::fs::copy(file, table.join(&name)).unwrap();
    Placed {
        create: hive_ddl(case, &table),
        name,
    }
}

/// A Hive table directory.
fn place_hive(case: &Case, layout: &Path, dir: &Path) -> Placed {
    let table = dir.join("t");
    copy_tree(layout, &table);
    Placed {
        create: hive_ddl(case, &table),
        name: file_name(layout),
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        match entry.file_type().unwrap().is_dir() {
            true => copy_tree(&entry.path(), &target),
            false => {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }
}

fn hive_ddl(case: &Case, table: &Path) -> String {
    let columns = case.setting("columns").unwrap_or("id BIGINT, name VARCHAR");
    let mut ddl = format!(
        "CREATE EXTERNAL TABLE t ({columns}) STORED AS HIVE LOCATION '{}'",
        table.display()
    );
    if let Some(keys) = case.setting("partitioned_by") {
        ddl += &format!(" PARTITIONED BY ({keys})");
    }
    if let Some(options) = case.setting("options") {
        let pairs: Vec<String> = options
            .split(',')
            .map(|kv| {
                let (k, v) = kv.trim().split_once(' ').unwrap();
                format!("'{k}' '{v}'")
            })
            .collect();
        ddl += &format!(" OPTIONS ({})", pairs.join(", "));
    }
    ddl
}

/// The schema of the Iceberg tables: the DuckDB `equality_deletes` table's, so the
/// manifests, lists and metadata derived from it fit.
fn iceberg_schema() -> Schema {
    let field = |id, name, t| Arc::new(NestedField::optional(id, name, Type::Primitive(t)));
    Schema::builder()
        .with_fields(vec![
            field(1, "id", PrimitiveType::Int),
            field(2, "name", PrimitiveType::String),
            field(3, "bir", PrimitiveType::Date),
        ])
        .build()
        .unwrap()
}

/// Ten rows: ids 0..10.
fn iceberg_columns() -> Vec<(&'static str, i32, ArrayRef)> {
    let names: Vec<String> = (0..10).map(|i| format!("n{i}")).collect();
    vec![
        ("id", 1, Arc::new(Int32Array::from_iter_values(0..10))),
        ("name", 2, Arc::new(StringArray::from(names))),
        (
            "bir",
            3,
            Arc::new(Date32Array::from_iter_values(19_000..19_010)),
        ),
    ]
}

/// A fresh Iceberg table in `dir` with the case's file in place.
async fn place_iceberg(case: &Case, file: &Path, dir: &Path) -> Placed {
    let root = dir.join("table");
    let mut writer = TableWriter::new(&root, iceberg_schema()).unwrap();
    let data = writer.data_file(iceberg_columns()).unwrap();
    let data_path = data.file_path().to_string();
    let mut metadata = writer.commit(vec![data], vec![]).await.unwrap();
    let name = file_name(file);
    let placed = match case.kind.as_str() {
        "manifest" => root.join("metadata/m-1-data-0.avro"),
        "manifest_list" => root.join("metadata/snap-1001.avro"),
        "metadata" => {
            metadata = root.join("metadata").join(&name).display().to_string();
            PathBuf::from(&metadata)
        }
        "puffin" | "position_deletes" | "equality_deletes" => {
            let placed = root.join("data").join(&name);
            let delete = delete_file(case, &placed, &data_path, file);
            metadata = writer.commit(vec![], vec![delete]).await.unwrap();
            placed
        }
        kind => panic!("unknown kind {kind}"),
    };
    std::fs::copy(file, &placed).unwrap();
    let base = testdata().join("duckdb-iceberg");
    Placed {
        create: format!(
            "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{metadata}' \
             OPTIONS ('relative_path_base' '{}')",
            base.display()
        ),
        name: file_name(&placed),
    }
}

/// The manifest entry of a delete file at `placed` (a copy of `file`) for the data file at
/// `data_path`.
fn delete_file(case: &Case, placed: &Path, data_path: &str, file: &Path) -> DataFile {
    let size = std::fs::metadata(file).unwrap().len();
    let mut builder = DataFileBuilder::default();
    builder
        .file_path(placed.display().to_string())
        .file_size_in_bytes(size)
        .partition(Struct::empty())
        .partition_spec_id(0);
    match case.kind.as_str() {
        "puffin" => {
            let dv = case.setting("dv").unwrap();
            let v: Vec<i64> = dv.split(',').map(|x| x.parse().unwrap()).collect();
            builder
                .content(DataContentType::PositionDeletes)
                .file_format(DataFileFormat::Puffin)
                .referenced_data_file(Some(data_path.to_string()))
                .content_offset(Some(v[0]))
                .content_size_in_bytes(Some(v[1]))
                .record_count(v[2] as u64);
        }
        "position_deletes" => {
            let referenced = match case.setting("deletes") {
                Some("unreferenced") => None,
                _ => Some(data_path.to_string()),
            };
            builder
                .content(DataContentType::PositionDeletes)
                .file_format(DataFileFormat::Parquet)
                .referenced_data_file(referenced)
                .record_count(2);
        }
        _ => {
            builder
                .content(DataContentType::EqualityDeletes)
                .file_format(DataFileFormat::Parquet)
                .equality_ids(Some(vec![1]))
                .record_count(1);
        }
    }
    builder.build().unwrap()
}

/// Runs `cases`, each on its own task (a panic is that case's failure); the outcomes by
/// case path.
async fn run_all(cases: Vec<Case>) -> Vec<(Case, Result<Outcome, String>)> {
    futures::stream::iter(cases)
        .map(|case| async move {
            let dir = tempfile::tempdir().unwrap();
            let task = tokio::spawn(run(case.clone(), dir.path().to_path_buf()));
            let outcome = task.await.map_err(|e| match e.try_into_panic() {
                Ok(panic) => panic_message(panic),
                Err(e) => format!("task failed: {e}"),
            });
            drop(dir);
            (case, outcome)
        })
        .buffer_unordered(CONCURRENT)
        .collect()
        .await
}

fn panic_message(panic: Box<dyn std::any::Any + Send>) -> String {
    let text = match panic.downcast::<String>() {
        Ok(s) => *s,
        Err(panic) => match panic.downcast::<&str>() {
            Ok(s) => s.to_string(),
            Err(_) => "(no message)".to_string(),
        },
    };
    format!("PANICKED: {text}")
}

/// What is wrong with a case's outcome, if anything.
fn check(case: &Case, outcome: &Result<Outcome, String>) -> Vec<String> {
    let outcome = match outcome {
        Ok(o) => o,
        Err(panic) => return vec![panic.clone()],
    };
    let expected = Regex::new(&case.expected).unwrap();
    let mut problems = vec![];
    for (query, result) in &outcome.results {
        match result {
            Ok(rows) => problems.push(format!("{query}: succeeded with {rows} rows")),
            Err(e) if !e.contains(&outcome.name) => problems.push(format!(
                "{query}: error does not name '{}': {e}",
                outcome.name
            )),
            Err(e) if !expected.is_match(e) => problems.push(format!(
                "{query}: error does not match /{}/: {e}",
                case.expected
            )),
            Err(_) => {}
        }
    }
    problems
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_file_is_a_clear_error() {
    let only = std::env::var("LAKESCAN_BAD_ONLY").ok();
    let all = cases();
    assert!(all.len() >= 60, "the corpus has {} cases", all.len());
    let selected: Vec<Case> = all
        .into_iter()
        .filter(|c| only.as_ref().is_none_or(|o| c.path.contains(o.as_str())))
        .collect();
    let show = std::env::var("LAKESCAN_BAD_SHOW").is_ok();
    let mut failures = vec![];
    let mut outcomes = run_all(selected).await;
    outcomes.sort_by(|a, b| a.0.path.cmp(&b.0.path));
    for (case, outcome) in &outcomes {
        if show {
            show_outcome(case, outcome);
        }
        for problem in check(case, outcome) {
            failures.push(format!("{} ({}): {problem}", case.path, case.kind));
        }
    }
    assert!(
        failures.is_empty(),
        "{} problems in {} cases:\n{}",
        failures.len(),
        outcomes.len(),
        failures.join("\n")
    );
}

fn show_outcome(case: &Case, outcome: &Result<Outcome, String>) {
    match outcome {
        Err(panic) => println!("{}\t{panic}", case.path),
        Ok(o) => {
            for (query, result) in &o.results {
                println!("{}\t{query}\t{result:?}", case.path);
            }
        }
    }
}

/// Each kind's good file, placed as the cases are, reads: the rows a query returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn good_files_read() {
    let good = |path: &str, kind: &str, setup: &[(&str, &str)]| Case {
        path: format!("good/{path}"),
        kind: kind.to_string(),
        expected: String::new(),
        setup: setup
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        names: String::new(),
    };
    let cases = vec![
        (good("good.parquet", "parquet", &[]), 3),
        (good("manifest.avro", "manifest", &[]), 4),
        (good("manifest_list.avro", "manifest_list", &[]), 4),
        (good("table.metadata.json", "metadata", &[]), 4),
        (good("dv.puffin", "puffin", &[("dv", "4,50,5")]), 5),
        (
            good(
                "position_deletes.parquet",
                "position_deletes",
                &[("deletes", "referenced")],
            ),
            8,
        ),
        // The same positions out of order (2, 0): the spec sorts them, but readers index
        // them in bitmaps, and the same rows are deleted.
        (
            good(
                "position_deletes_unsorted.parquet",
                "position_deletes",
                &[("deletes", "referenced")],
            ),
            8,
        ),
        (good("equality_deletes.parquet", "equality_deletes", &[]), 9),
    ];
    let expected: BTreeMap<String, usize> =
        cases.iter().map(|(c, n)| (c.path.clone(), *n)).collect();
    let outcomes = run_all(cases.into_iter().map(|(c, _)| c).collect()).await;
    let mut failures = vec![];
    for (case, outcome) in outcomes {
        let rows = expected[&case.path];
        match outcome {
            Err(panic) => failures.push(format!("{}: {panic}", case.path)),
            Ok(o) => {
                let counts: Vec<_> = o.results.iter().map(|(_, r)| r.clone()).collect();
                // `SELECT *` returns the rows; `count(*)` one row.
                if counts != [Ok(rows), Ok(1)] {
                    failures.push(format!("{}: {counts:?}, expected {rows} rows", case.path));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
