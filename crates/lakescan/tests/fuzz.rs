//! Fuzz targets on stable Rust: `proptest` properties over inputs lakescan must never panic
//! on, each run for a bounded number of cases with a fixed seed (the same cases every run, so
//! CI is reproducible; `PROPTEST_RNG_SEED=<n>` explores others, `PROPTEST_CASES=<n>` runs
//! more). A failure is shrunk and printed by proptest; no regression files are written.
//!
//! | target                         | input                                  | property |
//! |--------------------------------|----------------------------------------|----------|
//! | [`filter_extraction`]          | random predicate trees over a small batch | extraction never panics; its filters AND its residual keep exactly the rows DataFusion keeps |
//! | [`parquet_mutations`]          | flips, overwrites, splices, cuts of `testdata/bad/good/good.parquet` read through a Hive table | no panic; an error names the file; a cut file is an error; otherwise the good rows, or (bytes the format cannot check) some rows |
//! | [`deletion_vector_mutations`]  | mutations of the Java golden deletion-vector blobs | `decode_deletion_vector` errs or gives the golden positions (the CRC covers the bitmap) |
//! | [`puffin_mutations`]           | mutations of `good/dv.puffin` as a table's deletion vector | no panic; the good rows, or an error naming the Puffin file |
//! | [`manifest_mutations`]         | mutations of `good/manifest.avro` as a table's manifest | no panic; some of the good rows (an entry can turn DELETED), or an error |
//! | [`hive_partition_names`]       | random partition directory names (`=`, `%`, unicode, …) | listing never panics; an error names a directory; rows come from the `k=…` directories |

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use arrow::array::{
    ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::util::pretty::pretty_format_batches;
use datafusion::common::DFSchema;
use datafusion::prelude::SessionContext;
use lakescan::core::api::{Extraction, keep_mask};
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, RngSeed};

/// The seed of every target unless `PROPTEST_RNG_SEED` is set.
const SEED: u64 = 0x1a4e_5ca9_2024;

/// `cases` cases with the fixed seed and no regression files, unless the environment says
/// otherwise.
fn config(cases: u32) -> ProptestConfig {
    let from_env = ProptestConfig::default();
    ProptestConfig {
        cases: match std::env::var("PROPTEST_CASES") {
            Ok(_) => from_env.cases,
            Err(_) => cases,
        },
        rng_seed: match from_env.rng_seed {
            RngSeed::Random => RngSeed::Fixed(SEED),
            seed => seed,
        },
        failure_persistence: None,
        max_shrink_iters: 256,
        ..from_env
    }
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    })
}

/// Runs `future` on its own task: a panic is an `Err` with its message.
fn guarded<T: Send + 'static>(
    future: impl std::future::Future<Output = T> + Send + 'static,
) -> Result<T, String> {
    let task = runtime().spawn(future);
    runtime()
        .block_on(task)
        .map_err(|e| match e.try_into_panic() {
            Ok(panic) => match panic.downcast::<String>() {
                Ok(s) => format!("panicked: {s}"),
                Err(panic) => match panic.downcast::<&str>() {
                    Ok(s) => format!("panicked: {s}"),
                    Err(_) => "panicked".to_string(),
                },
            },
            Err(e) => format!("task failed: {e}"),
        })
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn good_file(name: &str) -> Vec<u8> {
    std::fs::read(testdata().join("bad/good").join(name)).unwrap()
}

/// Creates table `t` with `ddl` in a new session and runs `sql`: its rows as text lines.
async fn query(ddl: String, sql: &'static str) -> Result<Vec<String>, String> {
    let ctx = SessionContext::new();
    lakescan::register(&ctx).unwrap();
    ctx.sql(&ddl).await.map_err(|e| e.to_string())?;
    let frame = ctx.sql(sql).await.map_err(|e| e.to_string())?;
    let batches = frame.collect().await.map_err(|e| e.to_string())?;
    Ok(lines(&batches))
}

/// The rows of `batches`, each `a|b|c`, sorted.
fn lines(batches: &[RecordBatch]) -> Vec<String> {
    let text = pretty_format_batches(batches).unwrap().to_string();
    let mut rows: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("| "))
        .skip(1)
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            cells.join("|")
        })
        .collect();
    rows.sort();
    rows
}

// ---------------------------------------------------------------------------------------
// Byte mutations
// ---------------------------------------------------------------------------------------

/// One edit of a file's bytes; positions are taken modulo the length at the time.
#[derive(Debug, Clone)]
enum Mutation {
    /// Flip one bit.
    Flip { at: usize, bit: u8 },
    /// Overwrite bytes.
    Overwrite { at: usize, bytes: Vec<u8> },
    /// Insert bytes.
    Splice { at: usize, bytes: Vec<u8> },
    /// Keep the first `keep` of every 1000 parts of the file.
    Cut { keep: u16 },
}

impl Mutation {
    fn apply(&self, data: &mut Vec<u8>) {
        let len = data.len().max(1);
        match self {
            Mutation::Flip { at, bit } => {
                if let Some(b) = data.get_mut(at % len) {
                    *b ^= 1 << (bit % 8);
                }
            }
            Mutation::Overwrite { at, bytes } => {
                for (i, b) in bytes.iter().enumerate() {
                    if let Some(slot) = data.get_mut((at % len) + i) {
                        *slot = *b;
                    }
                }
            }
            Mutation::Splice { at, bytes } => {
                let at = at % (data.len() + 1);
                data.splice(at..at, bytes.iter().copied());
            }
            Mutation::Cut { keep } => {
                let keep = data.len() * usize::from(*keep % 1000) / 1000;
                data.truncate(keep);
            }
        }
    }

    /// Whether the edit only changes bytes (no length change): a format without checksums
    /// may read such a file with other values.
    fn keeps_length(&self) -> bool {
        matches!(self, Mutation::Flip { .. } | Mutation::Overwrite { .. })
    }
}

/// Mostly small edits, sometimes a cut.
fn mutation() -> impl Strategy<Value = Mutation> {
    let bytes = || prop::collection::vec(any::<u8>(), 1..8);
    prop_oneof![
        4 => (any::<usize>(), any::<u8>()).prop_map(|(at, bit)| Mutation::Flip { at, bit }),
        2 => (any::<usize>(), bytes()).prop_map(|(at, bytes)| Mutation::Overwrite { at, bytes }),
        1 => (any::<usize>(), bytes()).prop_map(|(at, bytes)| Mutation::Splice { at, bytes }),
        1 => any::<u16>().prop_map(|keep| Mutation::Cut { keep }),
    ]
}

fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    prop::collection::vec(mutation(), 1..4)
}

fn mutated(good: &[u8], edits: &[Mutation]) -> Vec<u8> {
    let mut data = good.to_vec();
    for m in edits {
        m.apply(&mut data);
    }
    data
}

// ---------------------------------------------------------------------------------------
// (a) Filter extraction
// ---------------------------------------------------------------------------------------

/// The batch predicates are evaluated over: edge values, NULLs, NaN, ±0, ±∞.
fn filter_batch() -> RecordBatch {
    let a: ArrayRef = Arc::new(Int64Array::from(vec![
        Some(-3),
        Some(0),
        Some(1),
        Some(2),
        None,
        Some(i64::MAX),
        Some(i64::MIN),
        Some(7),
        Some(1),
        None,
    ]));
    let i: ArrayRef = Arc::new(Int32Array::from(vec![
        Some(0),
        Some(1),
        None,
        Some(-1),
        Some(i32::MAX),
        Some(2),
        Some(i32::MIN),
        None,
        Some(5),
        Some(1),
    ]));
    let b: ArrayRef = Arc::new(Float64Array::from(vec![
        Some(-1.5),
        Some(0.0),
        Some(-0.0),
        Some(f64::NAN),
        Some(f64::INFINITY),
        None,
        Some(2.5),
        Some(1.0),
        Some(f64::NEG_INFINITY),
        Some(1.5),
    ]));
    let s: ArrayRef = Arc::new(StringArray::from(vec![
        Some(""),
        Some("a"),
        Some("ab"),
        Some("b"),
        None,
        Some("é"),
        Some("a%"),
        Some("B"),
        Some("ab"),
        None,
    ]));
    let f: ArrayRef = Arc::new(BooleanArray::from(vec![
        Some(true),
        Some(false),
        None,
        Some(true),
        Some(false),
        None,
        Some(true),
        Some(true),
        Some(false),
        Some(false),
    ]));
    let schema = Schema::new(vec![
        Field::new("a", DataType::Int64, true),
        Field::new("i", DataType::Int32, true),
        Field::new("b", DataType::Float64, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("f", DataType::Boolean, true),
    ]);
    RecordBatch::try_new(Arc::new(schema), vec![a, i, b, s, f]).unwrap()
}

/// A column and the SQL literals compared with it.
fn column_and_literals() -> impl Strategy<Value = (&'static str, Vec<&'static str>)> {
    prop_oneof![
        Just((
            "a",
            vec![
                "-3",
                "0",
                "1",
                "2",
                "7",
                "9223372036854775807",
                "-9223372036854775808",
                "1.5",
                "NULL"
            ]
        )),
        Just((
            "i",
            vec!["0", "1", "-1", "2147483647", "3000000000", "NULL"]
        )),
        Just((
            "b",
            vec![
                "-1.5",
                "0.0",
                "-0.0",
                "1",
                "2.5",
                "CAST('NaN' AS DOUBLE)",
                "CAST('inf' AS DOUBLE)",
                "NULL"
            ]
        )),
        Just(("s", vec!["''", "'a'", "'ab'", "'b'", "'é'", "'B'", "NULL"])),
        Just(("CAST(i AS BIGINT)", vec!["0", "1", "5", "3000000000"])),
        Just(("CAST(i AS DOUBLE)", vec!["0.5", "1", "2"])),
    ]
}

/// One leaf predicate as SQL.
fn leaf() -> impl Strategy<Value = String> {
    let ops = prop::sample::select(vec!["=", "<>", "<", "<=", ">", ">="]);
    let not = || prop::sample::select(vec!["", "NOT "]);
    let compare = (
        column_and_literals(),
        ops.clone(),
        any::<prop::sample::Index>(),
        any::<bool>(),
    )
        .prop_map(|((c, lits), op, i, flipped)| {
            let lit = i.get(&lits);
            match flipped {
                false => format!("{c} {op} {lit}"),
                true => format!("{lit} {op} {c}"),
            }
        });
    let in_list = (
        column_and_literals(),
        not(),
        prop::collection::vec(any::<prop::sample::Index>(), 1..4),
    )
        .prop_map(|((c, lits), not, picks)| {
            let items: Vec<&str> = picks.iter().map(|i| *i.get(&lits)).collect();
            format!("{c} {not}IN ({})", items.join(", "))
        });
    let between = (
        column_and_literals(),
        not(),
        any::<prop::sample::Index>(),
        any::<prop::sample::Index>(),
    )
        .prop_map(|((c, lits), not, lo, hi)| {
            format!("{c} {not}BETWEEN {} AND {}", lo.get(&lits), hi.get(&lits))
        });
    let nulls = (prop::sample::select(vec!["a", "i", "b", "s", "f"]), not())
        .prop_map(|(c, not)| format!("{c} IS {not}NULL"));
    let fixed = prop::sample::select(vec![
        "f",
        "NOT f",
        "f = true",
        "f <> false",
        "f IS TRUE",
        "a + 1 > 2",
        "a = i",
        "b > a",
        "length(s) > 1",
        "s LIKE 'a%'",
        "s = 'a' OR a = 1",
        "abs(a) < 3",
        "CAST(s AS VARCHAR) = 'ab'",
    ])
    .prop_map(str::to_string);
    prop_oneof![4 => compare, 2 => in_list, 1 => between, 1 => nulls, 2 => fixed]
}

/// A predicate tree of AND, OR and NOT over leaves.
fn predicate() -> impl Strategy<Value = String> {
    leaf().prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(l, r)| format!("({l}) AND ({r})")),
            (inner.clone(), inner.clone()).prop_map(|(l, r)| format!("({l}) OR ({r})")),
            inner.prop_map(|p| format!("NOT ({p})")),
        ]
    })
}

/// What DataFusion keeps and what extraction keeps, as row masks: the filters on every row,
/// then the residual on the rows they keep, as the reader applies them. `None` when
/// DataFusion refuses the predicate (a type error, an overflow), or when the residual fails
/// on rows DataFusion's evaluation order never computed it for (`abs(i64::MIN)` where a
/// sibling conjunct removes the row).
fn both_masks(
    ctx: &SessionContext,
    batch: &RecordBatch,
    sql: &str,
) -> Option<(Vec<bool>, Vec<bool>)> {
    let schema = batch.schema();
    let df_schema = DFSchema::try_from(Arc::clone(&schema)).unwrap();
    let expr = ctx.parse_sql_expr(sql, &df_schema).ok()?;
    let physical = ctx.create_physical_expr(expr, &df_schema).ok()?;
    let expected = keep_mask(&physical, batch).ok()?;
    let extraction = Extraction::from_conjuncts(&[Arc::clone(&physical)], &schema);
    let mut kept = vec![true; batch.num_rows()];
    for (subfield, filter) in &extraction.filters {
        let column = batch.column(schema.index_of(subfield.root()).unwrap());
        let mask = filter.evaluate(column).unwrap_or_else(|e| {
            panic!("filter {filter} on {subfield:?} of `{sql}` does not evaluate: {e}")
        });
        for (k, m) in kept.iter_mut().zip(mask.iter()) {
            *k &= m == Some(true);
        }
    }
    for residual in &extraction.residual {
        let rows: Vec<usize> = (0..kept.len()).filter(|r| kept[*r]).collect();
        let indices = arrow::array::UInt32Array::from_iter_values(rows.iter().map(|r| *r as u32));
        let remaining = arrow::compute::take_record_batch(batch, &indices).unwrap();
        let mask = keep_mask(residual, &remaining).ok()?;
        for (row, m) in rows.iter().zip(mask.iter()) {
            kept[*row] = m == Some(true);
        }
    }
    let expected: Vec<bool> = expected.iter().map(|v| v == Some(true)).collect();
    Some((expected, kept))
}

proptest! {
    #![proptest_config(config(256))]

    /// Extraction never panics, and the extracted filters AND the residual keep exactly the
    /// rows DataFusion's evaluation of the predicate keeps.
    #[test]
    fn filter_extraction(sql in predicate()) {
        static CTX: OnceLock<SessionContext> = OnceLock::new();
        let ctx = CTX.get_or_init(SessionContext::new);
        let batch = filter_batch();
        if let Some((expected, kept)) = both_masks(ctx, &batch, &sql) {
            prop_assert_eq!(kept, expected, "predicate: {}", sql);
        }
    }
}

// ---------------------------------------------------------------------------------------
// (b) Parquet footer and pages, through a Hive table
// ---------------------------------------------------------------------------------------

/// The rows of `good.parquet`: (1, a), (2, b), (3, a).
const GOOD_ROWS: [&str; 3] = ["1|a", "2|b", "3|a"];

proptest! {
    #![proptest_config(config(96))]

    /// A mutated Parquet file read through a Hive table: never a panic; an error names the
    /// file; a cut file (its footer gone) is an error; a file of the same length may read
    /// with other values (Parquet pages carry no checksum lakescan verifies), a longer one
    /// as well, but never with more rows than the file has.
    #[test]
    fn parquet_mutations(edits in mutations()) {
        let data = mutated(&good_file("good.parquet"), &edits);
        let dir = tempfile::tempdir().unwrap();
        let table = dir.path().join("t");
        std::fs::create_dir_all(&table).unwrap();
        std::fs::write(table.join("mutated.parquet"), &data).unwrap();
        let ddl = format!(
            "CREATE EXTERNAL TABLE t (id BIGINT, name VARCHAR) STORED AS HIVE LOCATION '{}'",
            table.display()
        );
        for sql in ["SELECT * FROM t", "SELECT count(*) FROM t"] {
            let outcome = guarded(query(ddl.clone(), sql));
            let result = outcome.map_err(|panic| format!("{sql}: {panic}"));
            prop_assert!(result.is_ok(), "{:?}", result);
            match result.unwrap() {
                Err(e) => prop_assert!(e.contains("mutated.parquet"), "{sql}: {e}"),
                Ok(rows) if sql.contains("count") => prop_assert_eq!(rows.len(), 1),
                Ok(rows) if rows == GOOD_ROWS => {}
                Ok(rows) => {
                    let cut = edits.iter().any(|m| matches!(m, Mutation::Cut { .. }));
                    prop_assert!(!cut, "a cut file read as {:?}", rows);
                    let same_length = edits.iter().all(Mutation::keeps_length);
                    prop_assert!(same_length || rows.len() <= 3, "{:?}", rows);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// (c) Deletion vectors and Puffin files
// ---------------------------------------------------------------------------------------

/// The Java golden `deletion-vector-v1` blobs and their positions.
fn golden_blobs() -> Vec<(Vec<u8>, Vec<u64>)> {
    let dir = testdata().join("deletion-vectors/iceberg-core-dv-golden/deletes");
    [
        "empty-position-index.bin",
        "small-alternating-values-position-index.bin",
        "small-and-large-values-position-index.bin",
        "all-container-types-position-index.bin",
    ]
    .iter()
    .map(|name| {
        let blob = std::fs::read(dir.join(name)).unwrap();
        let decoded = decode(&blob).unwrap();
        (blob, decoded)
    })
    .collect()
}

fn decode(blob: &[u8]) -> Result<Vec<u64>, String> {
    let bytes = bytes::Bytes::copy_from_slice(blob);
    lakescan::iceberg::deletes::position::decode_deletion_vector(&bytes).map(|t| t.iter().collect())
}

proptest! {
    #![proptest_config(config(512))]

    /// A mutated golden blob decodes to an error or to its positions (the CRC-32 covers
    /// the bitmap), never panics.
    #[test]
    fn deletion_vector_mutations(which in 0usize..4, edits in mutations()) {
        static GOLDEN: OnceLock<Vec<(Vec<u8>, Vec<u64>)>> = OnceLock::new();
        let (blob, positions) = &GOLDEN.get_or_init(golden_blobs)[which];
        let data = mutated(blob, &edits);
        if let Ok(decoded) = decode(&data) {
            prop_assert_eq!(&decoded, positions);
        }
    }
}

/// An Iceberg table in the test target's scratch directory: schema `id int, name string,
/// bir date`, one data file of ten rows; what a target swaps files into. It lives in a
/// static for the whole run, which never drops a `TempDir`: a fixed directory under
/// `CARGO_TARGET_TMPDIR`, rewritten by each run, leaves nothing in the system's `/tmp`.
struct IcebergTable {
    root: PathBuf,
    metadata: String,
}

impl IcebergTable {
    async fn write(with_deletion_vector: bool) -> Self {
        use arrow::array::Date32Array;
        use iceberg::spec::{DataContentType, DataFileBuilder, DataFileFormat, NestedField};
        use iceberg::spec::{PrimitiveType, Schema as IcebergSchema, Struct, Type};
        let name = match with_deletion_vector {
            true => "fuzz-iceberg-dv",
            false => "fuzz-iceberg",
        };
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
        let _ = std::fs::remove_dir_all(&dir);
        let root = dir.join("table");
        let field = |id, name, t| Arc::new(NestedField::optional(id, name, Type::Primitive(t)));
        let schema = IcebergSchema::builder()
            .with_fields(vec![
                field(1, "id", PrimitiveType::Int),
                field(2, "name", PrimitiveType::String),
                field(3, "bir", PrimitiveType::Date),
            ])
            .build()
            .unwrap();
        let mut writer = lakescan_iceberg_writer::TableWriter::new(&root, schema).unwrap();
        let names: Vec<String> = (0..10).map(|i| format!("n{i}")).collect();
        let data = writer
            .data_file(vec![
                (
                    "id",
                    1,
                    Arc::new(Int32Array::from_iter_values(0..10)) as ArrayRef,
                ),
                ("name", 2, Arc::new(StringArray::from(names))),
                (
                    "bir",
                    3,
                    Arc::new(Date32Array::from_iter_values(19_000..19_010)),
                ),
            ])
            .unwrap();
        let data_path = data.file_path().to_string();
        let mut metadata = writer.commit(vec![data], vec![]).await.unwrap();
        if with_deletion_vector {
            let good = good_file("dv.puffin");
            let puffin = root.join("data/dv.puffin");
            std::fs::write(&puffin, &good).unwrap();
            let mut dv = DataFileBuilder::default();
            dv.content(DataContentType::PositionDeletes)
                .file_path(puffin.display().to_string())
                .file_format(DataFileFormat::Puffin)
                .file_size_in_bytes(good.len() as u64)
                .record_count(5)
                .partition(Struct::empty())
                .partition_spec_id(0)
                .referenced_data_file(Some(data_path.clone()))
                .content_offset(Some(4))
                .content_size_in_bytes(Some(50));
            metadata = writer
                .commit(vec![], vec![dv.build().unwrap()])
                .await
                .unwrap();
        }
        Self { root, metadata }
    }

    fn ddl(&self) -> String {
        let base = testdata().join("duckdb-iceberg");
        format!(
            "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{}' \
             OPTIONS ('relative_path_base' '{}')",
            self.metadata,
            base.display()
        )
    }
}

/// A table written once per target (each target runs its cases one after another).
fn table_once(cell: &'static OnceLock<IcebergTable>, with_dv: bool) -> &'static IcebergTable {
    cell.get_or_init(|| runtime().block_on(IcebergTable::write(with_dv)))
}

proptest! {
    #![proptest_config(config(48))]

    /// A mutated deletion-vector Puffin file: the good rows (ids 0, 2, 4, 6, 8 of ten), or
    /// an error naming the Puffin file; never a panic.
    #[test]
    fn puffin_mutations(edits in mutations()) {
        static TABLE: OnceLock<IcebergTable> = OnceLock::new();
        let table = table_once(&TABLE, true);
        let data = mutated(&good_file("dv.puffin"), &edits);
        std::fs::write(table.root.join("data/dv.puffin"), &data).unwrap();
        let result = guarded(query(table.ddl(), "SELECT id FROM t"));
        prop_assert!(result.is_ok(), "{:?}", result);
        match result.unwrap() {
            Ok(rows) => prop_assert_eq!(rows, ["0", "2", "4", "6", "8"]),
            Err(e) => prop_assert!(e.contains("dv.puffin"), "{e}"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// (d) Manifests
// ---------------------------------------------------------------------------------------

/// The rows of the DuckDB `equality_deletes` table's first data file, which
/// `good/manifest.avro` lists.
fn manifest_good_rows() -> Vec<String> {
    let table = table_once(&MANIFEST_TABLE, false);
    std::fs::write(
        table.root.join("metadata/m-1-data-0.avro"),
        good_file("manifest.avro"),
    )
    .unwrap();
    runtime()
        .block_on(query(table.ddl(), "SELECT * FROM t"))
        .unwrap()
}

static MANIFEST_TABLE: OnceLock<IcebergTable> = OnceLock::new();

proptest! {
    #![proptest_config(config(64))]

    /// A mutated manifest in a table's place: never a panic; some of the good rows (Avro
    /// has no checksum: an entry can turn DELETED, a path or a count can change), or an
    /// error.
    #[test]
    fn manifest_mutations(edits in mutations()) {
        static GOOD: OnceLock<Vec<String>> = OnceLock::new();
        let good = GOOD.get_or_init(manifest_good_rows);
        let table = table_once(&MANIFEST_TABLE, false);
        let data = mutated(&good_file("manifest.avro"), &edits);
        std::fs::write(table.root.join("metadata/m-1-data-0.avro"), &data).unwrap();
        let result = guarded(query(table.ddl(), "SELECT * FROM t"));
        prop_assert!(result.is_ok(), "{:?}", result);
        if let Ok(rows) = result.unwrap() {
            prop_assert!(rows.iter().all(|r| good.contains(r)), "{:?} not among {:?}", rows, good);
        }
        let count = guarded(query(table.ddl(), "SELECT count(*) FROM t"));
        prop_assert!(count.is_ok(), "{:?}", count);
    }
}

// ---------------------------------------------------------------------------------------
// (e) Hive partition directory names
// ---------------------------------------------------------------------------------------

/// A directory name: mostly `k=<value>` with `=`, `%`, hex digits and unicode in the value,
/// sometimes another key or no `=`.
fn directory_name() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "k",
        "K",
        "=",
        "%",
        "%2F",
        "%3D",
        "%ZZ",
        "%FF",
        "%C3%A9",
        "%",
        "1",
        "0",
        "-",
        "a",
        " ",
        "é",
        "ключ",
        "😀",
        "_",
        ".",
        "__HIVE_DEFAULT_PARTITION__",
        "x=y",
        "\\",
        "#1",
        "~",
    ]);
    let value = prop::collection::vec(pieces, 0..5).prop_map(|p| p.concat());
    prop_oneof![
        6 => value.clone().prop_map(|v| format!("k={v}")),
        1 => value.clone().prop_map(|v| format!("=k{v}")),
        1 => value,
    ]
    .prop_filter("a file system name", |n| {
        !n.is_empty() && n != "." && n != ".." && !n.contains('/') && n.len() < 200
    })
}

/// Hive's unescaping (`%XX` → byte, anything else kept), as UTF-8; `None` when the bytes
/// are not UTF-8.
fn unescaped(value: &str) -> Option<String> {
    let bytes = value.as_bytes();
    let mut out = vec![];
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

proptest! {
    #![proptest_config(config(64))]

    /// Random partition directories, each holding `good.parquet`: listing never panics; an
    /// error names one of the directories; rows come only from `k=…` directories, three
    /// each, with the unescaped value.
    #[test]
    fn hive_partition_names(
        names in prop::collection::btree_set(directory_name(), 1..4),
        typed in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let table = dir.path().join("t");
        for name in &names {
            let partition = table.join(name);
            std::fs::create_dir_all(&partition).unwrap();
            std::fs::write(partition.join("f.parquet"), good_file("good.parquet")).unwrap();
        }
        let key_type = if typed { "INT" } else { "VARCHAR" };
        let ddl = format!(
            "CREATE EXTERNAL TABLE t (id BIGINT, name VARCHAR, k {key_type}) STORED AS HIVE \
             LOCATION '{}' PARTITIONED BY (k)",
            table.display()
        );
        let result = guarded(query(ddl, "SELECT k FROM t"));
        prop_assert!(result.is_ok(), "{:?}", result);
        match result.unwrap() {
            Err(e) => {
                let named = names.iter().any(|n| e.contains(n.as_str()) || e.contains(&encoded(n)));
                prop_assert!(named, "{e} names none of {:?}", names);
            }
            Ok(rows) => {
                let visible: Vec<&String> = names
                    .iter()
                    .filter(|n| !n.starts_with('_') && !n.starts_with('.'))
                    .collect();
                prop_assert_eq!(rows.len(), 3 * visible.len(), "{:?} from {:?}", rows, names);
                if !typed {
                    // Cells are shown trimmed: compare trimmed values, sorted.
                    let mut expected: Vec<String> = visible
                        .iter()
                        .flat_map(|n| {
                            let v = unescaped(&n["k=".len()..]).unwrap();
                            let v = match v.as_str() {
                                "__HIVE_DEFAULT_PARTITION__" => String::new(),
                                v => v.trim().to_string(),
                            };
                            [v.clone(), v.clone(), v]
                        })
                        .collect();
                    expected.sort();
                    prop_assert_eq!(rows, expected);
                }
            }
        }
    }
}

/// How an object-store path shows a directory name (`%` and other characters escaped).
fn encoded(name: &str) -> String {
    object_store::path::PathPart::from(name)
        .as_ref()
        .to_string()
}
