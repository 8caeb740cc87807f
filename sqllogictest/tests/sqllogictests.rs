//! Runs every `sqllogictest/test_files/*.slt` file against DataFusion with lakescan registered.
//!
//! ```text
//! cargo test -p lakescan-sqllogictest                     # all files
//! cargo test -p lakescan-sqllogictest -- smoke            # files whose name contains "smoke"
//! # rewrite the expected output in place (all files, or one):
//! cargo test -p lakescan-sqllogictest --test sqllogictests -- --complete
//! LAKESCAN_SLT_COMPLETE=1 cargo test -p lakescan-sqllogictest -- smoke
//! ```
//!
//! (`--complete` needs `--test sqllogictests`: the crate's unit tests use libtest, which
//! rejects unknown flags; the environment variable works either way.)
//!
//! Each file runs in a fresh `SessionContext` (2 target partitions, `lakescan::register`) and a
//! fresh `sqllogictest::Runner`; files run in parallel (as many as there are cores). All
//! records of a file run even after one fails; every failure is reported. The last line is
//! `N passed, M failed`; the process exits with 1 when a file failed.
//!
//! # Variables for test authors
//!
//! Substitution is off until a file says `control substitution on`. Then, in SQL:
//!
//! * `$__TEST_DIR__` — a temporary directory private to this file (one per `Runner`, created
//!   on first use, deleted when the file finishes). Write scratch tables there:
//!   `COPY (SELECT 1 AS a) TO '$__TEST_DIR__/t/part=1/f.parquet' STORED AS PARQUET`.
//! * `$TESTDATA` — the absolute path of the repository's read-only third-party fixtures,
//!   `<workspace>/testdata` (see its README for where each file comes from):
//!   `LOCATION '$TESTDATA/...'`.
//! * `$__NOW__` — nanoseconds since the epoch, and any environment variable (`$HOME`).
//!
//! With substitution on, SQL goes through the `subst` crate: `${NAME}` also works, and a
//! literal `$` or `\` must be escaped with a backslash (`\$`, `\\`) — hidden columns are
//! written `"\$path"`, `"\$row_index"` (or turn substitution off around such records with
//! `control substitution off`). An unknown variable is an error, not an empty string.
//! `system ok` commands get plain text replacement of `$__TEST_DIR__`, `$__NOW__` and
//! `$TESTDATA` instead, then run in `bash -c` (no backslash escaping needed there).

use std::error::Error;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use lakescan_sqllogictest::iceberg_twin::{IcebergTwin, TwinFormat};
use lakescan_sqllogictest::s3::{Root, S3Mirror, upload_once};
use lakescan_sqllogictest::{DbError, LakescanDb, new_session_context, validator};
use lakescan_testkit::S3Server;
use object_store::ObjectStore;
use sqllogictest::{
    Record, Runner, default_normalizer, parse_file, parse_with_name, strict_column_validator,
};
use tokio::runtime::Handle;
use tokio::sync::Semaphore;

/// Environment variable that turns on `--complete`.
const COMPLETE_ENV: &str = "LAKESCAN_SLT_COMPLETE";

/// libtest options that take a value in the next argument (when not written `--opt=value`).
const OPTIONS_WITH_VALUE: &[&str] = &[
    "--test-threads",
    "--skip",
    "--format",
    "--color",
    "--logfile",
    "--shuffle-seed",
    "-Z",
];

/// What to do with the selected files.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Run the records and compare their output.
    Check,
    /// Rewrite each file's expected output with the actual output.
    Complete,
}

/// Parsed command line.
struct Args {
    /// Substrings of file names to run (any of them); empty runs every file.
    filters: Vec<String>,
    /// Substrings of file names to leave out (`--skip`).
    skips: Vec<String>,
    /// `--exact`: a filter must equal the file name (with or without `.slt`).
    exact: bool,
    /// `--list` (print nothing) or `--ignored` (there are no ignored tests: run nothing).
    run_nothing: bool,
    /// Check or complete.
    mode: Mode,
}

impl Args {
    /// Parses `args` (without the program name); unknown libtest flags are ignored.
    fn parse(mut args: impl Iterator<Item = String>) -> Self {
        let complete = std::env::var(COMPLETE_ENV).is_ok_and(|v| !v.is_empty() && v != "0");
        let mut parsed = Args {
            filters: Vec::new(),
            skips: Vec::new(),
            exact: false,
            run_nothing: false,
            mode: if complete {
                Mode::Complete
            } else {
                Mode::Check
            },
        };
        while let Some(arg) = args.next() {
            parsed.apply(&arg, &mut args);
        }
        parsed
    }

    /// Applies one argument, taking its value from `rest` when it has one.
    fn apply(&mut self, arg: &str, rest: &mut impl Iterator<Item = String>) {
        match arg {
            "--complete" => self.mode = Mode::Complete,
            "--list" | "--ignored" => self.run_nothing = true,
            "--exact" => self.exact = true,
            "--skip" => self.skips.extend(rest.next()),
            _ if arg.starts_with("--skip=") => self.skips.push(arg["--skip=".len()..].to_string()),
            _ if OPTIONS_WITH_VALUE.contains(&arg) => {
                rest.next();
            }
            _ if arg.starts_with('-') => {}
            _ => self.filters.push(arg.to_string()),
        }
    }

    /// Whether the file called `name` (e.g. `smoke.slt`) is selected.
    fn selects(&self, name: &str) -> bool {
        let stem = name.strip_suffix(".slt").unwrap_or(name);
        let matches = |filter: &String| {
            if self.exact {
                filter == name || filter == stem
            } else {
                name.contains(filter.as_str())
            }
        };
        let wanted = self.filters.is_empty() || self.filters.iter().any(matches);
        wanted && !self.skips.iter().any(|skip| name.contains(skip.as_str()))
    }
}

/// The result of one file: its name and, when it failed, the report.
struct Outcome {
    name: String,
    failure: Option<String>,
}

fn main() -> Result<(), Box<dyn Error>> {
    let args = Args::parse(std::env::args().skip(1));
    if args.run_nothing {
        return Ok(());
    }
    let files = select_files(&args)?;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_files");
    if let Some(gone) = FILES.iter().find(|f| !dir.join(f.name).is_file()) {
        return Err(format!("FILES lists {}, which test_files/ does not hold", gone.name).into());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    // Each file runs as `FILES` says; completion writes each file once.
    let mut runs: Vec<(PathBuf, Variant)> = vec![];
    for file in files {
        let listed = SltFile::of(&file_name(&file))?;
        runs.push((file.clone(), Variant::Default));
        if args.mode == Mode::Check {
            runs.extend(listed.runs.iter().map(|v| (file.clone(), *v)));
        }
    }
    let outcomes = runtime.block_on(run_files(runs, args.mode))?;
    if report(&outcomes) > 0 {
        std::process::exit(1);
    }
    Ok(())
}

/// One `.slt` file: the runs it gets besides the default one, and whether it reads the
/// Iceberg fixtures of `testdata/` (its ORC and Avro runs then read their twins).
struct SltFile {
    name: &'static str,
    runs: &'static [Variant],
    fixtures: Fixtures,
}

/// What a file's tables are made of.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fixtures {
    /// Data the file writes itself (`COPY`), or `testdata/` files other than Iceberg tables.
    Own,
    /// The Iceberg tables of `testdata/`.
    Iceberg,
}

/// The runs of most files: on S3, and over ORC files (a Hive table's `COPY` output as its ORC
/// twin, `lakescan_sqllogictest::orc_twin`).
const S3_ORC: &[Variant] = &[Variant::S3, Variant::Orc];
/// The scan scenarios (`docs/scenarios.md`): with preload off too (preload is not a copy:
/// `docs/architecture.md`, "Invariants"), and on Ballista.
const SCENARIO: &[Variant] = &[
    Variant::PreloadOff,
    Variant::S3,
    Variant::Ballista,
    Variant::Orc,
];
/// Iceberg files: S3, and their tables over ORC and Avro data files.
const ICEBERG: &[Variant] = &[Variant::S3, Variant::Orc, Variant::Avro];
/// Iceberg deletes, lineage and time travel: also on Ballista.
const ICEBERG_BALLISTA: &[Variant] = &[Variant::S3, Variant::Ballista, Variant::Orc, Variant::Avro];

/// Every `.slt` file and how it runs. A file not listed is an error: a new file says here
/// where it runs.
const FILES: &[SltFile] = &[
    own("bad_input.slt", &[Variant::S3]), // Parquet footers: no ORC twin
    own("bad_input_hive_options.slt", S3_ORC),
    own("bloom_filters.slt", &[Variant::S3]), // Parquet's bloom filters
    own("bucket_conversion.slt", SCENARIO),
    own(
        "dynamic_filters.slt",
        &[Variant::PreloadOff, Variant::S3, Variant::Orc],
    ),
    own("filter_only_column.slt", SCENARIO),
    own(
        "hive_buckets.slt",
        &[Variant::S3, Variant::Ballista, Variant::Orc],
    ),
    own("hive_avro.slt", &[Variant::S3, Variant::Ballista]), // testdata/hive_avro: Avro files
    own("hive_empty_files.slt", S3_ORC),
    own("hive_file_columns.slt", S3_ORC),
    own("hive_file_types.slt", &[Variant::S3]), // Parquet's NULL type and timestamp units
    own("hive_hidden_columns.slt", S3_ORC),
    own("hive_row_id.slt", SCENARIO),
    own("hive_writers.slt", &[Variant::S3]), // testdata/hive_writers: files Hive wrote
    iceberg("iceberg_duckdb_deletes.slt", ICEBERG_BALLISTA),
    iceberg("iceberg_duckdb_lineitem.slt", ICEBERG),
    iceberg("iceberg_duckdb_partitions.slt", ICEBERG_BALLISTA),
    iceberg("iceberg_duckdb_schema.slt", ICEBERG_BALLISTA),
    iceberg("iceberg_pyiceberg.slt", ICEBERG),
    iceberg("iceberg_writers.slt", ICEBERG_BALLISTA),
    own("impala_files.slt", &[Variant::S3]), // testdata/impala: files from Impala's tests
    own("late_materialization.slt", S3_ORC),
    own("limit.slt", S3_ORC),
    own("listing_cache.slt", &[]), // times the listing cache against local file changes
    own("map_extraction.slt", SCENARIO),
    own("minmax_pruning_and_or_trees.slt", S3_ORC),
    own("missing_column_reappears.slt", SCENARIO),
    own("narrow_decimals.slt", &[Variant::S3]), // Parquet's integer decimals
    own("nested_columns.slt", S3_ORC),
    own("nested_struct_filters.slt", S3_ORC),
    own("null_semantics.slt", S3_ORC),
    own("orc_calendars.slt", S3_ORC),
    own("orc_cpp_writer.slt", &[Variant::S3]), // testdata/orc_cpp: ORC files already
    own("output_alias.slt", SCENARIO),
    own("parquet_testing.slt", &[Variant::S3]), // testdata/parquet-testing: Apache corpus
    own("parquet_writers.slt", &[Variant::S3]), // testdata/parquet_writers: Parquet files
    own("partition_and_generated_columns_only.slt", SCENARIO),
    own("partition_pruning.slt", S3_ORC),
    own("residual_on_unprojected_column.slt", SCENARIO),
    own("smoke.slt", &[]),                   // checks the runner itself
    own("spark_legacy.slt", &[Variant::S3]), // testdata/spark_legacy: files Spark wrote
    own("split_ranges.slt", S3_ORC),
    own("statistics.slt", S3_ORC),
    own("subfield_pruning.slt", SCENARIO),
    own("trino_files.slt", &[Variant::S3]), // testdata/trino-*: files from Trino's tests
    own("widening.slt", S3_ORC),
    own("zero_output_columns.slt", SCENARIO),
];

const fn own(name: &'static str, runs: &'static [Variant]) -> SltFile {
    SltFile {
        name,
        runs,
        fixtures: Fixtures::Own,
    }
}

const fn iceberg(name: &'static str, runs: &'static [Variant]) -> SltFile {
    SltFile {
        name,
        runs,
        fixtures: Fixtures::Iceberg,
    }
}

impl SltFile {
    /// The entry of the file called `name`.
    fn of(name: &str) -> Result<&'static SltFile, String> {
        FILES.iter().find(|f| f.name == name).ok_or_else(|| {
            format!("{name} is not in FILES (sqllogictest/tests/sqllogictests.rs): add it there")
        })
    }
}

/// Whether `name` reads the Iceberg fixtures of `testdata/`, whose twins it then reads.
fn reads_iceberg_fixtures(name: &str) -> bool {
    SltFile::of(name).is_ok_and(|f| f.fixtures == Fixtures::Iceberg)
}

/// The ORC and Avro twins of the Iceberg fixtures, each built by the first file that reads
/// it and removed when the run ends.
#[derive(Default)]
struct Twins {
    orc: OnceLock<Result<IcebergTwin, String>>,
    avro: OnceLock<Result<IcebergTwin, String>>,
}

impl Twins {
    /// The `$TESTDATA` of `file` run as `variant`: the repository's `testdata/`, or the twin
    /// of its Iceberg fixtures in the variant's format.
    fn testdata(&self, file: &Path, variant: Variant) -> Result<String, String> {
        let (cell, format) = match variant {
            Variant::Orc => (&self.orc, TwinFormat::Orc),
            Variant::Avro => (&self.avro, TwinFormat::Avro),
            _ => return Ok(testdata_dir()),
        };
        if !reads_iceberg_fixtures(&file_name(file)) {
            return Ok(testdata_dir());
        }
        let twin = cell.get_or_init(|| {
            IcebergTwin::build(Path::new(&testdata_dir()), format).map_err(|e| e.to_string())
        });
        match twin {
            Ok(twin) => Ok(twin.path().to_string_lossy().into_owned()),
            Err(e) => Err(format!("{}: {e}", file.display())),
        }
    }
}

/// The `.slt` files under `test_files/` selected by `args`, sorted by name.
fn select_files(args: &Args) -> Result<Vec<PathBuf>, Box<dyn Error>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_files");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        let is_slt = path.extension().is_some_and(|ext| ext == "slt");
        if is_slt && args.selects(&file_name(&path)) {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// The file name of `path` as text.
fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The value of `$TESTDATA`: the repository's `testdata/` (third-party fixtures, read-only).
fn testdata_dir() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let path = path.canonicalize().unwrap_or(path);
    path.to_string_lossy().into_owned()
}

/// Runs `files`, as many at once as there are cores, printing one line per file as it ends.
///
/// Each file is driven by `Handle::block_on` on a blocking thread: the runner's futures are
/// not `Send` (`update_test_file`), while DataFusion's own tasks still run on the workers.
async fn run_files(
    files: Vec<(PathBuf, Variant)>,
    mode: Mode,
) -> Result<Vec<Outcome>, Box<dyn Error>> {
    let twins = Arc::new(Twins::default());
    let s3 = match files.iter().any(|(_, v)| *v == Variant::S3) {
        true => Some(Arc::new(S3Run::start().await?)),
        false => None,
    };
    let parallelism = std::thread::available_parallelism().map_or(2, |n| n.get());
    let semaphore = Arc::new(Semaphore::new(parallelism));
    let handle = Handle::current();
    let mut tasks = Vec::with_capacity(files.len());
    for (file, variant) in files {
        let permit = Arc::clone(&semaphore).acquire_owned().await?;
        let handle = handle.clone();
        let s3 = s3.clone().filter(|_| variant == Variant::S3);
        let twins = Arc::clone(&twins);
        tasks.push(tokio::task::spawn_blocking(move || {
            let outcome = handle.block_on(run_file(&file, variant, s3, &twins, mode));
            drop(permit);
            print_status(&outcome);
            outcome
        }));
    }
    let mut outcomes = Vec::with_capacity(tasks.len());
    for task in tasks {
        outcomes.push(task.await?);
    }
    Ok(outcomes)
}

/// How a file runs: as written, with `lakescan.preload_splits` off, with its lakescan
/// tables read from S3, on Ballista, or over ORC or Avro files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    Default,
    PreloadOff,
    S3,
    /// On a Ballista scheduler with two executors in this process (`lakescan-ballista`):
    /// the same rows. `EXPLAIN` records are left out (a distributed plan has stages);
    /// `skipif ballista` marks records that differ there.
    Ballista,
    /// Over ORC files (`lakescan_sqllogictest::orc_twin`, `iceberg_twin`): the same rows.
    /// `EXPLAIN` records are left out (metrics of bytes and pages differ); `skipif orc` marks
    /// records that differ there.
    Orc,
    /// The Iceberg files over Avro data and delete files (`lakescan_sqllogictest::iceberg_twin`):
    /// the same rows. `EXPLAIN` records are left out; `skipif avro` marks records that differ.
    Avro,
}

/// The S3 server of a run (moto on loopback) and its bucket `slt`, with `testdata/` uploaded
/// once under `testdata/`.
struct S3Run {
    /// Stopped when the run ends.
    _server: S3Server,
    store: Arc<dyn ObjectStore>,
    next: AtomicUsize,
}

impl S3Run {
    async fn start() -> Result<Self, Box<dyn Error>> {
        let server = S3Server::start().map_err(|e| format!("S3 runs: {e}"))?;
        server
            .create_bucket(S3_BUCKET)
            .map_err(|e| format!("S3 runs: {e}"))?;
        let store = server
            .store(S3_BUCKET)
            .map_err(|e| format!("S3 runs: {e}"))?;
        upload_once(&store, Path::new(&testdata_dir()), "testdata").await?;
        Ok(Self {
            _server: server,
            store,
            next: AtomicUsize::new(0),
        })
    }

    /// The mirror of one file's run: its own local directory and prefix, and the fixtures.
    fn mirror(&self, local: &Path) -> S3Mirror {
        // Same-length prefixes: no URL is the beginning of another.
        let prefix = format!("run-{:04}", self.next.fetch_add(1, Ordering::Relaxed));
        let roots = vec![
            Root {
                local: local.to_path_buf(),
                url: format!("s3://{S3_BUCKET}/{prefix}"),
                prefix,
                changes: true,
            },
            Root {
                local: PathBuf::from(testdata_dir()),
                url: format!("s3://{S3_BUCKET}/testdata"),
                prefix: "testdata".into(),
                changes: false,
            },
        ];
        S3Mirror::new(Arc::clone(&self.store), roots)
    }
}

/// The bucket of the S3 runs.
const S3_BUCKET: &str = "slt";

/// The variable that stands for `$__TEST_DIR__` in S3 runs (a directory the mirror knows).
const S3_LOCAL_DIR_VAR: &str = "LAKESCAN_S3_LOCAL_DIR";

/// Runs (or completes) one file in its own session and runner.
async fn run_file(
    file: &Path,
    variant: Variant,
    s3: Option<Arc<S3Run>>,
    twins: &Twins,
    mode: Mode,
) -> Outcome {
    let result = match (check_substitution(file), mode, s3) {
        (Err(e), _, _) => Err(e),
        (Ok(()), Mode::Check, Some(s3)) => check_file_on_s3(file, &s3).await,
        (Ok(()), Mode::Check, None) => check_file(file, variant, twins).await,
        (Ok(()), Mode::Complete, _) => complete_file(file).await,
    };
    let suffix = match variant {
        Variant::Default => "",
        Variant::PreloadOff => " (preload off)",
        Variant::S3 => " (on S3)",
        Variant::Ballista => " (on Ballista)",
        Variant::Orc => " (ORC)",
        Variant::Avro => " (Avro)",
    };
    Outcome {
        name: format!("{}{suffix}", file_name(file)),
        failure: result.err(),
    }
}

/// A file that names `$__TEST_DIR__` or `$TESTDATA` without turning substitution on would
/// write into (or read from) a directory literally named so, in the source tree, and an S3
/// run would not be one: refused.
fn check_substitution(file: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let names_a_variable = text.contains("$__TEST_DIR__") || text.contains("$TESTDATA");
    match names_a_variable && !text.contains("control substitution on") {
        true => Err(format!(
            "{}: names $__TEST_DIR__ or $TESTDATA without `control substitution on`",
            file.display()
        )),
        false => Ok(()),
    }
}

/// A runner over a fresh session, with `$TESTDATA` set and our validators; its lakescan
/// tables are read through `mirror` when there is one.
async fn new_runner(
    file: &Path,
    variant: Variant,
    mirror: Option<Arc<S3Mirror>>,
    testdata: String,
) -> Result<Runner<LakescanDb, impl sqllogictest::MakeConnection<Conn = LakescanDb>>, String> {
    let (ctx, cluster) = match variant {
        Variant::Ballista => new_ballista_contexts().await.map(|(l, c)| (l, Some(c))),
        _ => new_session_context().map(|l| (l, None)),
    }
    .map_err(|e| format!("{}: cannot create session: {e}", file.display()))?;
    if let Some(mirror) = &mirror {
        let url = url::Url::parse(&format!("s3://{S3_BUCKET}")).map_err(|e| e.to_string())?;
        ctx.register_object_store(&url, mirror.store());
    }
    if variant == Variant::Orc {
        // Tables that declare their columns take the session's format; the others find
        // their first file's.
        ctx.state_ref()
            .write()
            .config_mut()
            .options_mut()
            .set("lakescan.hive_default_format", "orc")
            .map_err(|e| format!("{}: cannot set the ORC default: {e}", file.display()))?;
    }
    if variant == Variant::PreloadOff {
        ctx.state_ref()
            .write()
            .config_mut()
            .options_mut()
            .set("lakescan.preload_splits", "0")
            .map_err(|e| format!("{}: cannot turn preload off: {e}", file.display()))?;
    }
    let mut runner = Runner::new(move || {
        let mut db = LakescanDb::new(ctx.clone());
        if let Some(mirror) = &mirror {
            db = db.with_mirror(Arc::clone(mirror));
        }
        if let Some(cluster) = &cluster {
            db = db.with_cluster(cluster.clone());
        }
        if variant == Variant::Orc {
            db = db.with_orc_twin();
        }
        async move { Ok::<_, DbError>(db) }
    });
    runner.set_var("TESTDATA".to_string(), testdata);
    if variant == Variant::Ballista {
        runner.add_label("ballista");
    }
    if variant == Variant::Orc {
        runner.add_label("orc");
    }
    if variant == Variant::Avro {
        runner.add_label("avro");
    }
    runner.with_validator(validator);
    // The `I`/`R`/`T` letters of `query` records are checked against the result's types.
    runner.with_column_validator(strict_column_validator);
    runner.with_normalizer(default_normalizer);
    Ok(runner)
}

/// Runs every record of `file` (up to a `halt`), collecting all failures.
async fn check_file(file: &Path, variant: Variant, twins: &Twins) -> Result<(), String> {
    let mut records =
        parse_file::<sqllogictest::DefaultColumnType>(file).map_err(|e| e.to_string())?;
    if variant == Variant::Ballista {
        records.retain(|r| !shows_one_process(r));
    }
    if matches!(variant, Variant::Orc | Variant::Avro) {
        records.retain(|r| !is_explain(r));
    }
    let testdata = twins.testdata(file, variant)?;
    let runner = new_runner(file, variant, None, testdata).await?;
    run_records(runner, records).await
}

/// Whether `record` is an `EXPLAIN` (its metrics count Parquet pages and bytes).
fn is_explain(record: &Record<sqllogictest::DefaultColumnType>) -> bool {
    match record {
        Record::Query { sql, .. } | Record::Statement { sql, .. } => {
            sql.trim_start().to_ascii_lowercase().starts_with("explain")
        }
        _ => false,
    }
}

/// Whether `record` shows a plan or types of one process: `EXPLAIN` (a distributed plan has
/// stages) and `DESCRIBE` (Ballista sessions read strings as `Utf8`, not `Utf8View`:
/// Ballista turns `schema_force_view_types` off).
fn shows_one_process(record: &Record<sqllogictest::DefaultColumnType>) -> bool {
    let sql = match record {
        Record::Query { sql, .. } | Record::Statement { sql, .. } => sql,
        _ => return false,
    };
    let sql = sql.trim_start().to_ascii_lowercase();
    sql.starts_with("explain") || sql.starts_with("describe")
}

/// The sessions of a Ballista run: a local one (lakescan's Ballista state with the test
/// sessions' target partitions) and a client of an in-process scheduler with two executors,
/// sharing its catalog (see `LakescanDb::with_cluster`).
async fn new_ballista_contexts() -> datafusion::error::Result<(
    datafusion::prelude::SessionContext,
    datafusion::prelude::SessionContext,
)> {
    let config = datafusion::prelude::SessionConfig::new()
        .with_target_partitions(lakescan_sqllogictest::db::TARGET_PARTITIONS);
    let state = lakescan_ballista::session::state(config)?;
    let local = datafusion::prelude::SessionContext::new_with_state(state.clone());
    let cluster = lakescan_ballista::cluster::standalone(state, 2).await?;
    Ok((local, cluster))
}

/// Runs `file` with its lakescan tables on S3: `$__TEST_DIR__` becomes a local directory the
/// mirror uploads (see `lakescan_sqllogictest::s3`).
async fn check_file_on_s3(file: &Path, s3: &S3Run) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let text = text.replace("__TEST_DIR__", S3_LOCAL_DIR_VAR);
    let records = parse_with_name::<sqllogictest::DefaultColumnType>(&text, file_name(file))
        .map_err(|e| e.to_string())?;
    let local = tempfile::tempdir().map_err(|e| e.to_string())?;
    let local_path = local.path().canonicalize().map_err(|e| e.to_string())?;
    let mirror = Arc::new(s3.mirror(&local_path));
    let mut runner = new_runner(file, Variant::S3, Some(mirror), testdata_dir()).await?;
    // `skipif s3` / `onlyif s3` mark records that differ on an object store.
    runner.add_label("s3");
    runner.set_var(
        S3_LOCAL_DIR_VAR.to_string(),
        local_path.to_string_lossy().into_owned(),
    );
    run_records(runner, records).await
}

/// Runs `records` (up to a `halt`), collecting all failures.
async fn run_records<M: sqllogictest::MakeConnection<Conn = LakescanDb>>(
    mut runner: Runner<LakescanDb, M>,
    records: Vec<Record<sqllogictest::DefaultColumnType>>,
) -> Result<(), String> {
    let colorize = std::io::stdout().is_terminal();
    let mut failures = Vec::new();
    for record in records {
        if matches!(record, Record::Halt { .. }) {
            break;
        }
        if let Err(error) = runner.run_async(record).await {
            failures.push(error.display(colorize).to_string());
        }
    }
    runner.shutdown_async().await;
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

/// Rewrites the expected output of `file` with what the records produce now.
async fn complete_file(file: &Path) -> Result<(), String> {
    let mut runner = new_runner(file, Variant::Default, None, testdata_dir()).await?;
    let result = runner
        .update_test_file(
            file,
            " ",
            validator,
            default_normalizer,
            strict_column_validator,
        )
        .await
        .map_err(|e| e.to_string());
    runner.shutdown_async().await;
    result
}

/// Prints `test <file> ... ok` or `... FAILED`.
fn print_status(outcome: &Outcome) {
    let status = if outcome.failure.is_some() {
        "FAILED"
    } else {
        "ok"
    };
    println!("test {} ... {status}", outcome.name);
}

/// Prints the failure reports and the `N passed, M failed` summary; returns M.
fn report(outcomes: &[Outcome]) -> usize {
    let failed: Vec<&Outcome> = outcomes.iter().filter(|o| o.failure.is_some()).collect();
    for outcome in &failed {
        let failure = outcome.failure.as_deref().unwrap_or_default();
        println!("\n---- {} ----\n{failure}", outcome.name);
    }
    println!(
        "\n{} passed, {} failed",
        outcomes.len() - failed.len(),
        failed.len()
    );
    failed.len()
}
