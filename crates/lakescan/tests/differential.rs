//! Differential filter tests: lakescan against DataFusion over a `MemTable`.
//!
//! A seeded generator writes a Hive-style table `t/p=<v>/part-<n>.parquet` (several files
//! per partition, several row groups per file, small data pages, some columns clustered or
//! sorted per file so min/max and page-index pruning trigger) and registers the same rows
//! as a `MemTable`. Random predicates are built from a small AST (comparisons, IN, BETWEEN,
//! IS [NOT] NULL, IS [NOT] DISTINCT FROM, booleans, casts, float specials, column-vs-column,
//! arithmetic, functions, partition column, AND/OR/NOT nesting) and rendered as SQL. Each
//! case runs the same SQL on a lakescan table and on the `MemTable` — ids in order, a
//! count, a projection, per-partition aggregates, a TopK, a count under LIMIT/OFFSET or a
//! join with a few values (the last three push limits and dynamic filters into the scan) —
//! and the results must be equal. A failing case is shrunk (a node replaced by one of its
//! children, NOT removed, then the simplest query and table) and reported with the seed,
//! the minimal SQL, both results and the rows involved. The run also checks that lakescan's
//! pruning (partitions, splits, row groups, pages, reader filters) actually fired.
//!
//! Environment:
//! * `LAKESCAN_DIFF_SEED`  — seed of data and predicates (decimal or `0x…`), default fixed.
//! * `LAKESCAN_DIFF_CASES` — number of generated cases (default [`DEFAULT_CASES`]).
//! * `LAKESCAN_DIFF_ONLY`  — run only case number k (as numbered in a failure report).
//! * `LAKESCAN_DIFF_KEEP`  — keep the generated Parquet files and print where they are.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow::array::{
    ArrayRef, BooleanArray, Date32Array, Float64Array, Int32Array, Int64Array, RecordBatch,
    StringArray, TimestampMicrosecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use arrow::temporal_conversions::{date32_to_datetime, timestamp_us_to_datetime};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::datasource::MemTable;
use datafusion::physical_plan::{ExecutionPlan, collect};
use datafusion::prelude::{SessionConfig, SessionContext};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use rand::rngs::StdRng;
use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, SeedableRng};

/// Seed used when `LAKESCAN_DIFF_SEED` is not set (CI is deterministic).
const DEFAULT_SEED: u64 = 0x1A4E_5CA9_D1FF;
/// Cases run when `LAKESCAN_DIFF_CASES` is not set.
const DEFAULT_CASES: usize = 2000;
/// Cases run concurrently.
const WORKERS: usize = 4;
/// Stop generating new cases after this many failures (each one is shrunk).
const MAX_FAILURES: usize = 4;
/// One query taking longer than this is reported as an error (a hang is a bug too).
const QUERY_TIMEOUT: Duration = Duration::from_secs(120);

/// 2024-01-01 in days since the epoch.
const DAY0: i32 = 19_723;
/// 2024-01-01T00:00:00 in microseconds since the epoch.
const TS0: i64 = DAY0 as i64 * 86_400_000_000;

/// The lakescan tables (same directory, default and tiny splits) and the reference table.
const HIVE: &str = "hive_t";
const HIVE_SPLIT: &str = "hive_split";
const MEM: &str = "mem_t";

// ---------------------------------------------------------------------------------------
// Data
// ---------------------------------------------------------------------------------------

/// One row of the table; `p` is the partition value (NULL = the default partition).
#[derive(Clone, Debug, Default)]
struct Row {
    id: i64,
    i: Option<i32>,
    l: Option<i64>,
    f: Option<f64>,
    s: Option<String>,
    d: Option<i32>,
    ts: Option<i64>,
    b: Option<bool>,
    p: Option<i64>,
}

/// One Parquet file: its partition, name, row groups and writer settings.
#[derive(Clone, Debug)]
struct DataFile {
    partition: Option<i64>,
    name: String,
    row_groups: Vec<Vec<Row>>,
    statistics: EnabledStatistics,
    dictionary: bool,
}

impl DataFile {
    fn dir(&self) -> String {
        match self.partition {
            Some(p) => format!("p={p}"),
            None => "p=__HIVE_DEFAULT_PARTITION__".to_string(),
        }
    }
}

fn full_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("i", DataType::Int32, true),
        Field::new("l", DataType::Int64, true),
        Field::new("f", DataType::Float64, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("d", DataType::Date32, true),
        Field::new("ts", DataType::Timestamp(TimeUnit::Microsecond, None), true),
        Field::new("b", DataType::Boolean, true),
        Field::new("p", DataType::Int64, true),
    ]))
}

/// The rows as a batch of the full schema (with `p`) or of the file schema (without).
fn to_batch(rows: &[Row], with_partition: bool) -> RecordBatch {
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.id))),
        Arc::new(Int32Array::from_iter(rows.iter().map(|r| r.i))),
        Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.l))),
        Arc::new(Float64Array::from_iter(rows.iter().map(|r| r.f))),
        Arc::new(StringArray::from_iter(rows.iter().map(|r| r.s.as_deref()))),
        Arc::new(Date32Array::from_iter(rows.iter().map(|r| r.d))),
        Arc::new(TimestampMicrosecondArray::from_iter(
            rows.iter().map(|r| r.ts),
        )),
        Arc::new(BooleanArray::from_iter(rows.iter().map(|r| r.b))),
    ];
    let full = full_schema();
    let schema = if with_partition {
        columns.push(Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.p))));
        full
    } else {
        Arc::new(full.project(&[0, 1, 2, 3, 4, 5, 6, 7]).unwrap())
    };
    RecordBatch::try_new(schema, columns).unwrap()
}

/// The float values used in the data: specials included so equality and order hit them.
const FLOATS: [f64; 11] = [
    -2.5,
    -1.0,
    -0.0,
    0.0,
    0.5,
    1.0,
    2.5,
    3.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
];
/// The string alphabet: empty string, prefixes, upper case, non-ASCII, a space.
const STRINGS: [&str; 11] = ["", "a", "ab", "abc", "b", "ba", "B", "c", "zz", "é", "a b"];

/// Generates the rows of file number `g` (0, 1, …): each file covers its own value ranges.
fn gen_row(rng: &mut StdRng, g: usize) -> Row {
    let g64 = g as i64;
    let i = (!rng.random_bool(0.12)).then(|| {
        let (lo, hi) = [(-5, 5), (0, 5), (-5, -1), (-2, 2)][g % 4];
        rng.random_range(lo..=hi)
    });
    let l = (!rng.random_bool(0.08)).then(|| g64 * 10 + rng.random_range(-20..=20));
    let f = (!rng.random_bool(0.1)).then(|| {
        if rng.random_bool(0.1) {
            return f64::from(rng.random_range(-40..=40)) / 4.0;
        }
        let set: &[f64] = match g % 4 {
            0 => &FLOATS,
            1 => &[0.0, 0.5, 1.0, 2.5, f64::NAN],
            2 => &[-0.0, 0.0, -1.0, -2.5, f64::NEG_INFINITY],
            _ => &[1.0, 2.5, 3.0, f64::INFINITY, f64::NAN],
        };
        *set.choose(rng).unwrap()
    });
    let s = (!rng.random_bool(0.1)).then(|| {
        let set: &[&str] = match g % 3 {
            0 => &STRINGS,
            1 => &STRINGS[..5],
            _ => &STRINGS[4..],
        };
        set.choose(rng).unwrap().to_string()
    });
    let d = (!rng.random_bool(0.08)).then(|| {
        if rng.random_bool(0.03) {
            -rng.random_range(1..=400)
        } else {
            DAY0 + g as i32 * 4 + rng.random_range(0..=10)
        }
    });
    let ts = (!rng.random_bool(0.08)).then(|| {
        let minutes = g64 * 45 + rng.random_range(0..=90);
        TS0 + minutes * 60_000_000 + *[0, 0, 500_000, 123_456].choose(rng).unwrap()
    });
    let b = (!rng.random_bool(0.1)).then(|| match g % 3 {
        0 => rng.random_bool(0.5),
        1 => true,
        _ => rng.random_bool(0.15),
    });
    Row {
        id: 0,
        i,
        l,
        f,
        s,
        d,
        ts,
        b,
        p: None,
    }
}

/// Sorts a file's rows by one column (NULLs first), so row groups and pages get narrow
/// min/max ranges on it; `mode` 6 keeps them unsorted.
fn sort_rows(rows: &mut [Row], mode: usize) {
    match mode {
        0 => rows.sort_by_key(|r| r.i),
        1 => rows.sort_by(|a, b| match (a.f, b.f) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            (x, y) => x.is_some().cmp(&y.is_some()),
        }),
        2 => rows.sort_by(|a, b| a.s.cmp(&b.s)),
        3 => rows.sort_by_key(|r| (r.d, r.ts)),
        4 => rows.sort_by_key(|r| r.l),
        5 => rows.sort_by_key(|r| r.b),
        _ => {}
    }
}

/// The generated table: partitions -1, 2, 10 and the NULL partition, 2–3 files each, row
/// groups of 10–60 rows, an empty file, writer settings (statistics, dictionary) varied
/// per file.
fn generate(seed: u64) -> Vec<DataFile> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut files = vec![];
    let mut next_id = 0i64;
    let mut g = 0usize;
    for partition in [Some(-1), Some(2), Some(10), None] {
        let n_files = if partition == Some(10) {
            3
        } else {
            rng.random_range(2..=3)
        };
        for n in 0..n_files {
            // The last file of p=10 has no row group at all.
            let empty = partition == Some(10) && n + 1 == n_files;
            let n_rows = if empty || rng.random_bool(0.03) {
                0
            } else {
                rng.random_range(20..=110)
            };
            let mut rows: Vec<Row> = (0..n_rows).map(|_| gen_row(&mut rng, g)).collect();
            sort_rows(&mut rows, rng.random_range(0..7));
            for r in &mut rows {
                r.id = next_id;
                r.p = partition;
                next_id += 1;
            }
            let mut row_groups = vec![];
            let mut rest = rows.as_slice();
            while !rest.is_empty() {
                let k = rng.random_range(10..=60).min(rest.len());
                row_groups.push(rest[..k].to_vec());
                rest = &rest[k..];
            }
            let statistics = match rng.random_range(0..10) {
                0 => EnabledStatistics::None,
                1 => EnabledStatistics::Chunk,
                _ => EnabledStatistics::Page,
            };
            files.push(DataFile {
                partition,
                name: format!("part-{n}.parquet"),
                row_groups,
                statistics,
                dictionary: rng.random_bool(0.5),
            });
            g += 1;
        }
    }
    files
}

fn write_parquet(path: &Path, file: &DataFile) {
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(64))
        .set_data_page_row_count_limit(10)
        .set_write_batch_size(10)
        .set_dictionary_enabled(file.dictionary)
        .set_statistics_enabled(file.statistics)
        .build();
    let out = std::fs::File::create(path).unwrap();
    let schema = to_batch(&[], false).schema();
    let mut writer = ArrowWriter::try_new(out, schema, Some(props)).unwrap();
    for rg in &file.row_groups {
        writer.write(&to_batch(rg, false)).unwrap();
        writer.flush().unwrap();
    }
    writer.close().unwrap();
}

/// The written table: a SessionContext with `hive_t` and `hive_split`, one with the
/// reference `mem_t`, and the rows (for reports).
struct Fixture {
    ctx: SessionContext,
    reference: SessionContext,
    rows: HashMap<i64, (Row, String)>,
    row_count: usize,
    _dir: Option<tempfile::TempDir>,
}

impl Fixture {
    async fn build(files: &[DataFile]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("t");
        std::fs::create_dir_all(&root).unwrap();
        // Hidden files are not data.
        std::fs::write(root.join("_SUCCESS"), b"").unwrap();
        let mut rows = HashMap::new();
        let mut all = vec![];
        for file in files {
            let part = root.join(file.dir());
            std::fs::create_dir_all(&part).unwrap();
            std::fs::write(part.join(format!(".{}.crc", file.name)), b"junk").unwrap();
            write_parquet(&part.join(&file.name), file);
            for (k, rg) in file.row_groups.iter().enumerate() {
                for r in rg {
                    let place = format!("{}/{} row group {k}", file.dir(), file.name);
                    rows.insert(r.id, (r.clone(), place));
                    all.push(r.clone());
                }
            }
        }
        let location = root.to_string_lossy().to_string();
        let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
        lakescan::register(&ctx).unwrap();
        ctx.sql(&format!(
            "CREATE EXTERNAL TABLE {HIVE} STORED AS HIVE LOCATION '{location}' PARTITIONED BY (p)"
        ))
        .await
        .unwrap();
        ctx.sql(&format!(
            "CREATE EXTERNAL TABLE {HIVE_SPLIT} STORED AS HIVE LOCATION '{location}' \
             PARTITIONED BY (p) OPTIONS ('split_size' '4000')"
        ))
        .await
        .unwrap();
        // The lakescan tables must have the written schema (types inferred from the footer
        // and the directory names; strings may come back as a view type), and every row.
        let schema = ctx.table(HIVE).await.unwrap().schema().as_arrow().clone();
        let types = |s: &Schema| -> Vec<(String, DataType)> {
            let string = |t: &DataType| match t {
                DataType::Utf8View | DataType::LargeUtf8 => DataType::Utf8,
                t => t.clone(),
            };
            s.fields()
                .iter()
                .map(|f| (f.name().clone(), string(f.data_type())))
                .collect()
        };
        assert_eq!(types(&schema), types(&full_schema()), "schema of {HIVE}");
        for table in [HIVE, HIVE_SPLIT] {
            let other = ctx.table(table).await.unwrap().schema().as_arrow().clone();
            assert_eq!(other, schema, "schema of {table}");
            let count = run_query(&ctx, &format!("SELECT count(*) FROM {table}"))
                .await
                .unwrap();
            assert_eq!(count.rows, vec![all.len().to_string()], "rows of {table}");
        }

        // The reference: plain DataFusion over the same rows in memory, in its own context,
        // with the lakescan table's types (so both plans coerce alike).
        let written = to_batch(&all, true);
        let columns = written
            .columns()
            .iter()
            .zip(schema.fields())
            .map(|(c, f)| arrow::compute::cast(c, f.data_type()).unwrap())
            .collect();
        let batch = RecordBatch::try_new(Arc::new(schema), columns).unwrap();
        let mem = MemTable::try_new(batch.schema(), vec![vec![batch]]).unwrap();
        let reference =
            SessionContext::new_with_config(SessionConfig::new().with_target_partitions(1));
        reference.register_table(MEM, Arc::new(mem)).unwrap();
        let keep = std::env::var_os("LAKESCAN_DIFF_KEEP").is_some();
        let dir = if keep {
            eprintln!("differential: keeping the table at {location}");
            let _ = dir.keep();
            None
        } else {
            Some(dir)
        };
        Self {
            ctx,
            reference,
            rows,
            row_count: all.len(),
            _dir: dir,
        }
    }
}

/// Distinct values present in the data, per column (literals are drawn mostly from these).
#[derive(Default)]
struct Pools {
    id: Vec<i64>,
    i: Vec<i64>,
    l: Vec<i64>,
    p: Vec<i64>,
    f: Vec<f64>,
    s: Vec<String>,
    d: Vec<i32>,
    ts: Vec<i64>,
}

impl Pools {
    fn new<'a>(rows: impl Iterator<Item = &'a Row>) -> Self {
        let mut pools = Self::default();
        for r in rows {
            pools.id.push(r.id);
            pools.i.extend(r.i.map(i64::from));
            pools.l.extend(r.l);
            pools.p.extend(r.p);
            pools.f.extend(r.f);
            pools.s.extend(r.s.clone());
            pools.d.extend(r.d);
            pools.ts.extend(r.ts);
        }
        for v in [
            &mut pools.id,
            &mut pools.i,
            &mut pools.l,
            &mut pools.p,
            &mut pools.ts,
        ] {
            v.sort_unstable();
            v.dedup();
        }
        pools.d.sort_unstable();
        pools.d.dedup();
        pools.s.sort();
        pools.s.dedup();
        pools.f.sort_by(f64::total_cmp);
        pools.f.dedup_by(|a, b| a.to_bits() == b.to_bits());
        pools
    }

    fn ints(&self, column: &str) -> &[i64] {
        match column {
            "id" => &self.id,
            "i" => &self.i,
            "l" => &self.l,
            _ => &self.p,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Predicates
// ---------------------------------------------------------------------------------------

/// A predicate: leaves are SQL text (IN lists keep their items apart), nodes are the
/// boolean connectives (what shrinking works on).
#[derive(Clone, Debug, PartialEq)]
enum Pred {
    Leaf(String),
    /// `head (item, item, …)` where head is `col [NOT] IN`.
    In {
        head: String,
        items: Vec<String>,
    },
    Not(Box<Pred>),
    And(Box<Pred>, Box<Pred>),
    Or(Box<Pred>, Box<Pred>),
}

impl Pred {
    fn sql(&self) -> String {
        match self {
            Pred::Leaf(s) => s.clone(),
            Pred::In { head, items } => format!("{head} ({})", items.join(", ")),
            Pred::Not(a) => format!("NOT ({})", a.sql()),
            Pred::And(a, b) => format!("({}) AND ({})", a.sql(), b.sql()),
            Pred::Or(a, b) => format!("({}) OR ({})", a.sql(), b.sql()),
        }
    }

    fn size(&self) -> usize {
        match self {
            Pred::Leaf(_) | Pred::In { .. } => 1,
            Pred::Not(a) => 1 + a.size(),
            Pred::And(a, b) | Pred::Or(a, b) => 1 + a.size() + b.size(),
        }
    }

    /// Calls `f` with the head and items of every IN list.
    fn for_each_list(&mut self, f: &mut dyn FnMut(&str, &mut Vec<String>)) {
        match self {
            Pred::Leaf(_) => {}
            Pred::In { head, items } => f(head, items),
            Pred::Not(a) => a.for_each_list(f),
            Pred::And(a, b) | Pred::Or(a, b) => {
                a.for_each_list(f);
                b.for_each_list(f);
            }
        }
    }

    /// Removes the NULLs from the IN lists of a column that has several of them.
    ///
    /// DataFusion 54.1's simplifier merges two IN lists on one column (`a IN (…) AND a NOT
    /// IN (…)` into a set difference, `a NOT IN (…) OR a NOT IN (…)` into an intersection)
    /// as if NULL were a value, though a NULL makes `NOT IN` unknown: `i NOT IN (5, NULL) AND
    /// i IN (2, 0)` returns the rows with i = 2 or 0 when nothing should match. Whether the
    /// lists end up side by side depends on how the plan was reshaped (a MemTable keeps the
    /// filter, a lakescan scan takes its conjuncts apart), so the engines would differ on
    /// DataFusion's bug, not on lakescan's.
    fn drop_nulls_of_merged_lists(&mut self) {
        let column = |head: &str| head.split(' ').next().unwrap_or_default().to_string();
        let mut lists: HashMap<String, usize> = HashMap::new();
        self.for_each_list(&mut |head, _| *lists.entry(column(head)).or_default() += 1);
        self.for_each_list(&mut |head, items| {
            if lists[&column(head)] > 1 {
                items.retain(|v| v != "NULL");
            }
        });
    }

    /// Predicates one step smaller: a node replaced by one of its children (dropping an
    /// AND/OR branch, removing a NOT) or an IN list item dropped, at any depth. Largest
    /// cuts first.
    fn shrinks(&self) -> Vec<Pred> {
        match self {
            Pred::Leaf(_) => vec![],
            Pred::In { head, items } if items.len() > 1 => (0..items.len())
                .map(|k| {
                    let mut items = items.clone();
                    items.remove(k);
                    Pred::In {
                        head: head.clone(),
                        items,
                    }
                })
                .collect(),
            Pred::In { .. } => vec![],
            Pred::Not(a) => {
                let mut out = vec![(**a).clone()];
                out.extend(a.shrinks().into_iter().map(|x| Pred::Not(Box::new(x))));
                out
            }
            Pred::And(a, b) | Pred::Or(a, b) => {
                let rebuild = |x: Pred, y: Pred| match self {
                    Pred::And(..) => Pred::And(Box::new(x), Box::new(y)),
                    _ => Pred::Or(Box::new(x), Box::new(y)),
                };
                let mut out = vec![(**a).clone(), (**b).clone()];
                out.extend(a.shrinks().into_iter().map(|x| rebuild(x, (**b).clone())));
                out.extend(b.shrinks().into_iter().map(|y| rebuild((**a).clone(), y)));
                out
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Int,
    Float,
    Str,
    Date,
    Ts,
    Bool,
}

/// Columns and how often a leaf picks each.
const COLUMNS: [(&str, Kind, u32); 9] = [
    ("id", Kind::Int, 1),
    ("i", Kind::Int, 4),
    ("l", Kind::Int, 2),
    ("f", Kind::Float, 4),
    ("s", Kind::Str, 3),
    ("d", Kind::Date, 1),
    ("ts", Kind::Ts, 1),
    ("b", Kind::Bool, 2),
    ("p", Kind::Int, 3),
];

const OPS: [&str; 6] = ["=", "<>", "<", "<=", ">", ">="];

fn float_sql(rng: &mut StdRng, v: f64) -> String {
    let pick = |rng: &mut StdRng, options: &[&str]| options.choose(rng).unwrap().to_string();
    if v.is_nan() {
        pick(rng, &["'NaN'::double", "CAST('NaN' AS DOUBLE)"])
    } else if v == f64::INFINITY {
        pick(
            rng,
            &[
                "'inf'::double",
                "'Infinity'::double",
                "CAST('inf' AS DOUBLE)",
            ],
        )
    } else if v == f64::NEG_INFINITY {
        pick(rng, &["'-inf'::double", "'-Infinity'::double"])
    } else if v == 0.0 && v.is_sign_negative() {
        pick(rng, &["-0.0", "'-0.0'::double", "CAST(-0.0 AS DOUBLE)"])
    } else {
        format!("{v:?}")
    }
}

fn date_text(days: i32) -> String {
    date32_to_datetime(days).unwrap().date().to_string()
}

fn ts_text(micros: i64) -> String {
    timestamp_us_to_datetime(micros).unwrap().to_string()
}

/// Generates predicates and queries for one case.
struct Gen<'a> {
    rng: StdRng,
    pools: &'a Pools,
    /// Columns the predicate's leaves filter on (indices into [`COLUMNS`]).
    used: Vec<usize>,
}

impl Gen<'_> {
    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    fn pick<T: Clone>(&mut self, options: &[T]) -> T {
        options.choose(&mut self.rng).unwrap().clone()
    }

    fn op(&mut self) -> &'static str {
        self.pick(&OPS)
    }

    fn column(&mut self) -> usize {
        let total: u32 = COLUMNS.iter().map(|c| c.2).sum();
        let mut x = self.rng.random_range(0..total);
        for (k, c) in COLUMNS.iter().enumerate() {
            if x < c.2 {
                return k;
            }
            x -= c.2;
        }
        0
    }

    /// A predicate tree of depth at most `max_depth - depth`; `focus` restricts leaves to
    /// one column (so same-column AND/OR/NOT trees, which become one filter, are common).
    fn pred(&mut self, depth: usize, max_depth: usize, focus: Option<usize>) -> Pred {
        let leaf_chance = [0.15, 0.35, 0.5, 0.7, 1.0][depth.min(4)];
        if depth >= max_depth || self.chance(leaf_chance) {
            return self.leaf(focus);
        }
        let focus = match focus {
            Some(c) => Some(c),
            None if self.chance(0.35) => Some(self.column()),
            None => None,
        };
        match self.rng.random_range(0..100) {
            0..40 => Pred::And(
                Box::new(self.pred(depth + 1, max_depth, focus)),
                Box::new(self.pred(depth + 1, max_depth, focus)),
            ),
            40..80 => Pred::Or(
                Box::new(self.pred(depth + 1, max_depth, focus)),
                Box::new(self.pred(depth + 1, max_depth, focus)),
            ),
            _ => Pred::Not(Box::new(self.pred(depth + 1, max_depth, focus))),
        }
    }

    fn leaf(&mut self, focus: Option<usize>) -> Pred {
        match focus {
            Some(c) => self.column_leaf(c),
            None if self.chance(0.25) => Pred::Leaf(self.mixed_leaf()),
            None => {
                let c = self.column();
                self.column_leaf(c)
            }
        }
    }

    /// A literal of column `c`'s type: mostly a value present in the data.
    fn lit(&mut self, c: usize) -> String {
        let (name, kind, _) = COLUMNS[c];
        let from_data = self.chance(0.8);
        match kind {
            Kind::Int => {
                if self.chance(0.08) {
                    // A fractional literal: the column is cast to DOUBLE.
                    let v = self.int_value(name, from_data);
                    return format!("{}.5", v);
                }
                let v = self.int_value(name, from_data);
                if v < 0 && v >= i64::from(i32::MIN) && self.chance(0.1) {
                    format!("CAST({v} AS INT)")
                } else {
                    v.to_string()
                }
            }
            Kind::Float => {
                let v = if from_data && !self.pools.f.is_empty() {
                    let pool = &self.pools.f;
                    *pool.choose(&mut self.rng).unwrap()
                } else {
                    self.pick(&[
                        0.25,
                        1e300,
                        -1e300,
                        100.0,
                        -0.0,
                        0.0,
                        f64::NAN,
                        f64::INFINITY,
                        f64::NEG_INFINITY,
                        2.0,
                    ])
                };
                if v.fract() == 0.0
                    && v.is_finite()
                    && v.abs() < 1e6
                    && !(v == 0.0 && v.is_sign_negative())
                    && self.chance(0.15)
                {
                    return format!("{}", v as i64);
                }
                float_sql(&mut self.rng, v)
            }
            Kind::Str => {
                let v = if from_data && !self.pools.s.is_empty() {
                    let pool = &self.pools.s;
                    pool.choose(&mut self.rng).unwrap().clone()
                } else {
                    self.pick(&["zzz", "A", "aa", "abd", " ", "ab%", "bb"])
                        .to_string()
                };
                let quoted = format!("'{}'", v.replace('\'', "''"));
                match self.rng.random_range(0..20) {
                    0 => format!("arrow_cast({quoted}, 'Utf8View')"),
                    1 => format!("arrow_cast({quoted}, 'LargeUtf8')"),
                    2 => format!("CAST({quoted} AS VARCHAR)"),
                    _ => quoted,
                }
            }
            Kind::Date => {
                let v = if from_data && !self.pools.d.is_empty() {
                    let pool = &self.pools.d;
                    *pool.choose(&mut self.rng).unwrap()
                } else {
                    self.pick(&[DAY0 - 1, DAY0 + 500, 0, -1, DAY0 + 30])
                };
                let text = date_text(v);
                match self.rng.random_range(0..3) {
                    0 => format!("DATE '{text}'"),
                    1 => format!("'{text}'"),
                    _ => format!("CAST('{text}' AS DATE)"),
                }
            }
            Kind::Ts => {
                let v = if from_data && !self.pools.ts.is_empty() {
                    let pool = &self.pools.ts;
                    *pool.choose(&mut self.rng).unwrap()
                } else {
                    self.pick(&[
                        TS0 - 1,
                        TS0 + 1,
                        TS0 + 10 * 86_400_000_000,
                        0,
                        TS0 + 3_600_000_000,
                    ])
                };
                let text = ts_text(v);
                match self.rng.random_range(0..3) {
                    0 => format!("TIMESTAMP '{text}'"),
                    1 => format!("'{text}'"),
                    _ => format!("CAST('{text}' AS TIMESTAMP)"),
                }
            }
            Kind::Bool => self.pick(&["true", "false"]).to_string(),
        }
    }

    fn int_value(&mut self, column: &str, from_data: bool) -> i64 {
        let pool = self.pools.ints(column);
        if from_data && !pool.is_empty() {
            return *pool.choose(&mut self.rng).unwrap();
        }
        let (lo, hi) = (
            pool.first().copied().unwrap_or(0),
            pool.last().copied().unwrap_or(0),
        );
        self.pick(&[
            lo - 1,
            hi + 1,
            0,
            -1000,
            1000,
            3_000_000_000,
            -3_000_000_000,
            7,
        ])
    }

    /// 1–7 literals of column `c` (more than 4 become a hashed IN in lakescan), sometimes
    /// with a NULL among them.
    fn lit_items(&mut self, c: usize) -> Vec<String> {
        let n = self.rng.random_range(1..=7);
        let mut items: Vec<String> = (0..n).map(|_| self.lit(c)).collect();
        if self.chance(0.15) {
            let at = self.rng.random_range(0..=items.len());
            items.insert(at, "NULL".to_string());
        }
        items
    }

    /// A list without NULL (see [`Pred::drop_nulls_of_merged_lists`]).
    fn lit_list(&mut self, c: usize) -> String {
        let mut items = self.lit_items(c);
        items.retain(|v| v != "NULL");
        items.join(", ")
    }

    /// A leaf on one column: what lakescan can turn into a per-column filter, and a few
    /// things around it (NULL literals, casts).
    fn column_leaf(&mut self, c: usize) -> Pred {
        let (name, kind, _) = COLUMNS[c];
        if kind != Kind::Bool && self.chance(0.18) {
            self.used.push(c);
            let items = self.lit_items(c);
            let not = if self.chance(0.3) { "NOT " } else { "" };
            return Pred::In {
                head: format!("{name} {not}IN"),
                items,
            };
        }
        Pred::Leaf(self.column_leaf_text(c))
    }

    fn column_leaf_text(&mut self, c: usize) -> String {
        self.used.push(c);
        let (name, kind, _) = COLUMNS[c];
        if kind == Kind::Bool && self.chance(0.6) {
            return self
                .pick(&[
                    "b",
                    "NOT b",
                    "b = true",
                    "b = false",
                    "b <> true",
                    "b IS TRUE",
                    "b IS NOT TRUE",
                    "b IS FALSE",
                    "b IS NOT FALSE",
                    "b IS UNKNOWN",
                    "b IS NOT UNKNOWN",
                    "b IN (true)",
                    "b IS DISTINCT FROM false",
                    "true = b",
                    "b AND b",
                    "b OR NOT b",
                ])
                .to_string();
        }
        let not = |g: &mut Self| if g.chance(0.3) { "NOT " } else { "" };
        match self.rng.random_range(0..100) {
            0..45 => {
                let op = self.op();
                let v = self.lit(c);
                if self.chance(0.2) {
                    format!("{v} {op} {name}")
                } else {
                    format!("{name} {op} {v}")
                }
            }
            45..58 => {
                let (a, b) = (self.lit(c), self.lit(c));
                let not = not(self);
                format!("{name} {not}BETWEEN {a} AND {b}")
            }
            58..70 => {
                let not = not(self);
                format!("{name} IS {not}NULL")
            }
            70..82 => {
                let v = if self.chance(0.15) {
                    "NULL".to_string()
                } else {
                    self.lit(c)
                };
                let not = not(self);
                format!("{name} IS {not}DISTINCT FROM {v}")
            }
            82..94 => self.cast_leaf(c),
            _ => {
                let op = self.op();
                self.pick(&[format!("{name} {op} NULL"), format!("NULL {op} {name}")])
            }
        }
    }

    /// A comparison through a cast of column `c` (widening casts become filters in the
    /// wider type; the others stay residual).
    fn cast_leaf(&mut self, c: usize) -> String {
        self.used.push(c);
        let (name, _, _) = COLUMNS[c];
        let op = self.op();
        let int_lit = |g: &mut Self, col: &str| {
            let from_data = g.chance(0.8);
            g.int_value(col, from_data).to_string()
        };
        let half = |g: &mut Self, col: &str| {
            let from_data = g.chance(0.8);
            let v = g.int_value(col, from_data);
            if g.chance(0.5) {
                format!("{v}.5")
            } else {
                format!("{v}.0")
            }
        };
        match name {
            "i" => match self.rng.random_range(0..7) {
                0 => format!("CAST(i AS BIGINT) {op} {}", int_lit(self, "i")),
                1 => format!("CAST(i AS DOUBLE) {op} {}", half(self, "i")),
                2 => format!("CAST(i AS SMALLINT) {op} {}", int_lit(self, "i")),
                3 => format!("CAST(i AS VARCHAR) {op} '{}'", int_lit(self, "i")),
                4 => format!("TRY_CAST(i AS TINYINT) {op} {}", int_lit(self, "i")),
                5 => {
                    let list = self.lit_list(c);
                    format!("CAST(i AS BIGINT) IN ({list})")
                }
                _ => format!(
                    "CAST(i AS DOUBLE) IN ({}, {})",
                    half(self, "i"),
                    half(self, "i")
                ),
            },
            "l" | "id" => match self.rng.random_range(0..3) {
                0 => format!("CAST({name} AS DOUBLE) {op} {}", half(self, name)),
                1 => format!("CAST({name} AS INT) {op} {}", int_lit(self, name)),
                _ => format!(
                    "CAST({name} AS DECIMAL(20, 0)) {op} {}",
                    int_lit(self, name)
                ),
            },
            "p" => match self.rng.random_range(0..4) {
                0 => format!("CAST(p AS INT) {op} {}", int_lit(self, "p")),
                1 => format!("CAST(p AS VARCHAR) {op} '{}'", int_lit(self, "p")),
                2 => format!("CAST(p AS DOUBLE) {op} {}", half(self, "p")),
                _ => format!(
                    "CAST(p AS VARCHAR) LIKE '{}%'",
                    self.rng.random_range(-1..=9)
                ),
            },
            "f" => {
                let v = self.lit(c);
                match self.rng.random_range(0..4) {
                    0 => format!("CAST(f AS REAL) {op} {v}"),
                    1 => format!(
                        "TRY_CAST(f AS BIGINT) {op} {}",
                        self.rng.random_range(-3..=3)
                    ),
                    2 => format!(
                        "CAST(f AS VARCHAR) {op} '{}'",
                        self.pick(&["NaN", "0", "-0", "1", "inf"])
                    ),
                    _ => format!("CAST(f AS DOUBLE) {op} {v}"),
                }
            }
            "s" => {
                let v = self.lit(c);
                match self.rng.random_range(0..3) {
                    0 => format!("CAST(s AS VARCHAR) {op} {v}"),
                    1 => format!("arrow_cast(s, 'Utf8View') {op} {v}"),
                    _ => format!("arrow_cast(s, 'LargeUtf8') {op} {v}"),
                }
            }
            "d" => match self.rng.random_range(0..2) {
                0 => {
                    let c_ts = COLUMNS.iter().position(|x| x.0 == "ts").unwrap();
                    format!("CAST(d AS TIMESTAMP) {op} {}", self.lit(c_ts))
                }
                _ => format!(
                    "CAST(d AS VARCHAR) {op} '{}'",
                    date_text(DAY0 + self.rng.random_range(0..60))
                ),
            },
            "ts" => {
                let c_d = COLUMNS.iter().position(|x| x.0 == "d").unwrap();
                match self.rng.random_range(0..2) {
                    0 => format!("CAST(ts AS DATE) {op} {}", self.lit(c_d)),
                    _ => format!(
                        "arrow_cast(ts, 'Timestamp(Nanosecond, None)') {op} {}",
                        self.lit(c)
                    ),
                }
            }
            _ => format!("CAST(b AS INT) {op} {}", self.rng.random_range(0..=1)),
        }
    }

    /// Leaves lakescan must keep as residual expressions: column-vs-column comparisons,
    /// arithmetic, functions, CASE, constants, a volatile function.
    fn mixed_leaf(&mut self) -> String {
        let op = self.op();
        let small = self.rng.random_range(-6..=6);
        let c_f = COLUMNS.iter().position(|x| x.0 == "f").unwrap();
        let c_d = COLUMNS.iter().position(|x| x.0 == "d").unwrap();
        let c_ts = COLUMNS.iter().position(|x| x.0 == "ts").unwrap();
        match self.rng.random_range(0..36) {
            0 => format!("i {op} l"),
            1 => format!("i {op} p"),
            2 => format!("l {op} id"),
            3 => format!("CAST(i AS DOUBLE) {op} f"),
            4 => format!("f {op} l"),
            5 => format!("d {op} CAST(ts AS DATE)"),
            6 => format!("CAST(d AS TIMESTAMP) {op} ts"),
            7 => format!("p {op} l % 7"),
            8 => format!("i + 1 {op} {small}"),
            9 => format!("i * 2 {op} {small}"),
            10 => format!("l - i {op} {}", self.rng.random_range(-10..=150)),
            11 => format!("-i {op} {small}"),
            12 => format!("abs(i) {op} {}", self.rng.random_range(0..=5)),
            13 => format!("i % 3 {op} {}", self.rng.random_range(-2..=2)),
            14 => format!("f * 2 {op} {}", self.lit(c_f)),
            15 => format!("f + 1.0 {op} {}", self.lit(c_f)),
            16 => format!("p + i {op} {}", self.rng.random_range(-6..=15)),
            17 => format!("id % 7 {op} {}", self.rng.random_range(0..7)),
            18 => format!("length(s) {op} {}", self.rng.random_range(0..=3)),
            19 => format!(
                "upper(s) {op} '{}'",
                self.pick(&["AB", "B", "", "É", "A B"])
            ),
            20 => format!(
                "s {}LIKE '{}'",
                self.pick(&["", "NOT "]),
                self.pick(&["a%", "%b", "_", "", "%", "a_"])
            ),
            21 => format!("starts_with(s, '{}')", self.pick(&["a", "b", "", "é"])),
            22 => format!("s || 'x' {op} '{}'", self.pick(&["ax", "x", "bx", "abcx"])),
            23 => format!("coalesce(i, 0) {op} {small}"),
            24 => format!("nullif(i, 0) IS {}NULL", self.pick(&["", "NOT "])),
            25 => format!("{}isnan(f)", self.pick(&["", "NOT "])),
            26 => format!("CASE WHEN b THEN i ELSE l END {op} {small}"),
            27 => format!(
                "CASE WHEN i > 0 THEN 'pos' ELSE s END {op} '{}'",
                self.pick(&["pos", "a", "b"])
            ),
            28 => format!("extract(day FROM d) {op} {}", self.rng.random_range(1..=20)),
            29 => format!("date_trunc('hour', ts) {op} {}", self.lit(c_ts)),
            30 => format!("d + INTERVAL '1 day' {op} {}", self.lit(c_d)),
            31 => self
                .pick(&["TRUE", "FALSE", "NULL", "NOT NULL", "1 = 1", "NULL IS NULL"])
                .to_string(),
            32 => "random() >= 0.0".to_string(),
            33 => format!("l % nullif(i, 0) {op} 0"),
            34 => format!("(i IS NULL) {op} b"),
            _ => format!("greatest(i, p) {op} {small}"),
        }
    }

    /// A column for a query's dynamic filter (TopK sort key, join key): often one the
    /// predicate filters on, so the scan has to merge both.
    fn dynamic_filter_column(&mut self, allowed: &[&'static str]) -> &'static str {
        let used: Vec<&'static str> = self
            .used
            .iter()
            .map(|&c| COLUMNS[c].0)
            .filter(|c| allowed.contains(c))
            .collect();
        if !used.is_empty() && self.chance(0.6) {
            return self.pick(&used);
        }
        self.pick(allowed)
    }

    fn query(&mut self) -> Query {
        let topk_columns: &[&'static str] = &["id", "i", "l", "f", "s", "d", "ts", "p"];
        match self.rng.random_range(0..100) {
            0..45 => Query::Ids,
            45..53 => Query::Count,
            53..58 => Query::CountByP,
            58..72 => {
                let mut cols = vec!["i", "l", "f", "s", "d", "ts", "b", "p"];
                cols.shuffle(&mut self.rng);
                let n = self.rng.random_range(1..=cols.len());
                cols.truncate(n);
                Query::Project(cols)
            }
            72..87 => Query::TopK {
                column: self.dynamic_filter_column(topk_columns),
                desc: self.chance(0.5),
                nulls_first: self.chance(0.5),
                limit: self.rng.random_range(1..=20),
            },
            87..94 => Query::LimitCount {
                limit: self.rng.random_range(0..=40),
                offset: if self.chance(0.4) {
                    self.rng.random_range(1..=30)
                } else {
                    0
                },
            },
            _ => {
                let column = self.dynamic_filter_column(&["l", "p", "d", "id", "i"]);
                let n = self.rng.random_range(1..=4);
                let mut values: Vec<String> = (0..n)
                    .map(|_| {
                        let from_data = self.chance(0.9);
                        if column != "d" {
                            return self.int_value(column, from_data).to_string();
                        }
                        let pool = &self.pools.d;
                        let d = match pool.choose(&mut self.rng) {
                            Some(d) if from_data => *d,
                            _ => DAY0 - 7,
                        };
                        format!("DATE '{}'", date_text(d))
                    })
                    .collect();
                values.sort();
                values.dedup();
                if self.chance(0.1) {
                    values.push("NULL".to_string());
                }
                Query::Join { column, values }
            }
        }
    }
}

/// What to select for a predicate.
#[derive(Clone, Debug, PartialEq)]
enum Query {
    Ids,
    Count,
    CountByP,
    Project(Vec<&'static str>),
    /// Exercises TopK's dynamic filter pushed into the scan. Only the sort column is
    /// returned, so ties do not make the result ambiguous.
    TopK {
        column: &'static str,
        desc: bool,
        nulls_first: bool,
        limit: usize,
    },
    /// Exercises the limit pushed into the scan: how many rows come out is deterministic.
    LimitCount {
        limit: usize,
        offset: usize,
    },
    /// Exercises the hash join's dynamic filter pushed into the scan (the table is the
    /// probe side of a join with a few distinct values).
    Join {
        column: &'static str,
        values: Vec<String>,
    },
}

impl Query {
    fn sql(&self, table: &str, pred: &str) -> String {
        match self {
            Query::Ids => format!("SELECT id FROM {table} WHERE {pred} ORDER BY id"),
            Query::Count => format!("SELECT count(*) FROM {table} WHERE {pred}"),
            // No min/max of `f`: DataFusion's grouped min/max over floats containing NaN
            // depends on the order rows arrive in, so it differs between any two plans.
            Query::CountByP => format!(
                "SELECT p, count(*), sum(l), min(i), max(ts), max(s), count(f) FROM {table} \
                 WHERE {pred} GROUP BY p ORDER BY p NULLS FIRST"
            ),
            Query::Project(cols) => {
                format!(
                    "SELECT id, {} FROM {table} WHERE {pred} ORDER BY id",
                    cols.join(", ")
                )
            }
            Query::TopK {
                column,
                desc,
                nulls_first,
                limit,
            } => format!(
                "SELECT {column} FROM {table} WHERE {pred} ORDER BY {column} {} NULLS {} LIMIT {limit}",
                if *desc { "DESC" } else { "ASC" },
                if *nulls_first { "FIRST" } else { "LAST" },
            ),
            Query::LimitCount { limit, offset } => format!(
                "SELECT count(*) FROM (SELECT id FROM {table} WHERE {pred} LIMIT {limit} \
                 OFFSET {offset})"
            ),
            Query::Join { column, values } => {
                let rows: Vec<String> = values.iter().map(|v| format!("({v})")).collect();
                format!(
                    "SELECT {table}.id FROM {table} JOIN (VALUES {}) AS v(x) \
                     ON {table}.{column} = v.x WHERE {pred} ORDER BY {table}.id",
                    rows.join(", ")
                )
            }
        }
    }

    /// Whether the first output column is `id` (so differing rows can be shown).
    fn starts_with_id(&self) -> bool {
        matches!(self, Query::Ids | Query::Project(_) | Query::Join { .. })
    }
}

// ---------------------------------------------------------------------------------------
// Running and comparing
// ---------------------------------------------------------------------------------------

/// A query's rows (columns formatted and joined by `|`) and, for lakescan tables, the
/// scan's pruning metrics.
#[derive(Debug, Clone, Default)]
struct Output {
    rows: Vec<String>,
    metrics: HashMap<&'static str, usize>,
    elapsed: Duration,
}

const METRICS: [&str; 6] = [
    "partitions_pruned",
    "splits_skipped",
    "splits_pruned_statistics",
    "row_groups_pruned_statistics",
    "rows_pruned_page_index",
    "rows_removed_reader_filters",
];

fn format_rows(batches: &[RecordBatch]) -> Vec<String> {
    let options = FormatOptions::default().with_null("NULL");
    let mut out = vec![];
    for batch in batches {
        let formatters: Vec<ArrayFormatter> = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap())
            .collect();
        for row in 0..batch.num_rows() {
            let values: Vec<String> = formatters
                .iter()
                .map(|f| f.value(row).to_string())
                .collect();
            out.push(values.join("|"));
        }
    }
    out
}

fn add_metrics(plan: &Arc<dyn ExecutionPlan>, into: &mut HashMap<&'static str, usize>) {
    if plan.name() == "LakeScanExec"
        && let Some(metrics) = plan.metrics()
    {
        for name in METRICS {
            let v = metrics.sum_by_name(name).map(|v| v.as_usize()).unwrap_or(0);
            *into.entry(name).or_default() += v;
        }
    }
    for child in plan.children() {
        add_metrics(child, into);
    }
}

async fn run_query_inner(ctx: &SessionContext, sql: &str) -> datafusion::error::Result<Output> {
    let started = Instant::now();
    let df = ctx.sql(sql).await?;
    let plan = df.create_physical_plan().await?;
    let batches = collect(Arc::clone(&plan), ctx.task_ctx()).await?;
    let mut metrics = HashMap::new();
    add_metrics(&plan, &mut metrics);
    Ok(Output {
        rows: format_rows(&batches),
        metrics,
        elapsed: started.elapsed(),
    })
}

/// Runs `sql` on its own task: an error, a panic or a timeout becomes `Err(message)`.
async fn run_query(ctx: &SessionContext, sql: &str) -> Result<Output, String> {
    let ctx = ctx.clone();
    let text = sql.to_string();
    let task = tokio::spawn(async move {
        tokio::time::timeout(QUERY_TIMEOUT, run_query_inner(&ctx, &text)).await
    });
    match task.await {
        Ok(Ok(Ok(out))) => Ok(out),
        Ok(Ok(Err(e))) => Err(format!("error: {e}")),
        Ok(Err(_)) => Err(format!("timeout after {QUERY_TIMEOUT:?}")),
        Err(e) => Err(format!("panic: {e}")),
    }
}

/// The two results of one predicate, or that both engines rejected it.
enum Outcome {
    /// Both results (equal rows).
    Same(Output, Output),
    BothFailed(String),
    Differ {
        lake: Result<Output, String>,
        mem: Result<Output, String>,
    },
}

async fn check(fx: &Fixture, table: &str, query: &Query, pred: &Pred) -> Outcome {
    let where_ = pred.sql();
    let lake = run_query(&fx.ctx, &query.sql(table, &where_)).await;
    let mem = run_query(&fx.reference, &query.sql(MEM, &where_)).await;
    match (lake, mem) {
        (Err(_), Err(m)) => Outcome::BothFailed(m),
        (Ok(a), Ok(b)) if a.rows == b.rows => Outcome::Same(a, b),
        (lake, mem) => Outcome::Differ { lake, mem },
    }
}

/// A failing case, shrunk.
struct Failure {
    case: String,
    original: String,
    table: &'static str,
    query: Query,
    pred: Pred,
    lake: Result<Output, String>,
    mem: Result<Output, String>,
}

/// Greedily shrinks a failing case: smaller predicates first, then the plain id query and
/// the default-split table, as long as lakescan still differs.
async fn shrink(
    fx: &Fixture,
    case: String,
    table: &'static str,
    query: Query,
    pred: Pred,
    lake: Result<Output, String>,
    mem: Result<Output, String>,
) -> Failure {
    let original = query.sql(table, &pred.sql());
    let mut f = Failure {
        case,
        original,
        table,
        query,
        pred,
        lake,
        mem,
    };
    'outer: loop {
        let mut candidates: Vec<(&'static str, Query, Pred)> = f
            .pred
            .shrinks()
            .into_iter()
            .map(|p| (f.table, f.query.clone(), p))
            .collect();
        if f.query != Query::Ids {
            candidates.push((f.table, Query::Ids, f.pred.clone()));
        }
        if f.table != HIVE {
            candidates.push((HIVE, f.query.clone(), f.pred.clone()));
        }
        for (table, query, pred) in candidates {
            if let Outcome::Differ { lake, mem } = check(fx, table, &query, &pred).await {
                f = Failure {
                    table,
                    query,
                    pred,
                    lake,
                    mem,
                    ..f
                };
                continue 'outer;
            }
        }
        return f;
    }
}

fn show(result: &Result<Output, String>) -> String {
    const SHOWN: usize = 40;
    match result {
        Err(e) => e.clone(),
        Ok(out) => {
            let mut s = format!("{} rows: [", out.rows.len());
            s.push_str(
                &out.rows
                    .iter()
                    .take(SHOWN)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
            );
            if out.rows.len() > SHOWN {
                let _ = write!(s, ", … {} more", out.rows.len() - SHOWN);
            }
            s.push(']');
            s
        }
    }
}

fn show_row(r: &Row, place: &str) -> String {
    let opt = |v: Option<String>| v.unwrap_or_else(|| "NULL".to_string());
    format!(
        "id={} i={} l={} f={} s={} d={} ts={} b={} p={}  ({place})",
        r.id,
        opt(r.i.map(|v| v.to_string())),
        opt(r.l.map(|v| v.to_string())),
        opt(r.f.map(|v| format!("{v:?}"))),
        opt(r.s.as_ref().map(|v| format!("{v:?}"))),
        opt(r.d.map(date_text)),
        opt(r.ts.map(ts_text)),
        opt(r.b.map(|v| v.to_string())),
        opt(r.p.map(|v| v.to_string())),
    )
}

fn describe(fx: &Fixture, f: &Failure) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "  {}", f.case);
    let _ = writeln!(s, "  minimal SQL:  {}", f.query.sql(f.table, &f.pred.sql()));
    let _ = writeln!(s, "  reference:    {}", f.query.sql(MEM, &f.pred.sql()));
    let _ = writeln!(s, "  lakescan   -> {}", show(&f.lake));
    let _ = writeln!(s, "  datafusion -> {}", show(&f.mem));
    if let (Ok(lake), Ok(mem), true) = (&f.lake, &f.mem, f.query.starts_with_id()) {
        let ids = |o: &Output| -> BTreeSet<i64> {
            o.rows
                .iter()
                .filter_map(|r| r.split('|').next()?.parse().ok())
                .collect()
        };
        let (a, b) = (ids(lake), ids(mem));
        for (label, only) in [
            ("only lakescan", a.difference(&b)),
            ("only datafusion", b.difference(&a)),
        ] {
            let only: Vec<&i64> = only.collect();
            if only.is_empty() {
                continue;
            }
            let _ = writeln!(s, "  rows {label} ({}):", only.len());
            for id in only.iter().take(8) {
                if let Some((row, place)) = fx.rows.get(id) {
                    let _ = writeln!(s, "    {}", show_row(row, place));
                }
            }
        }
    }
    let _ = writeln!(s, "  original SQL: {}", f.original);
    s
}

fn env_number(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    let parsed = match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => v.parse(),
    };
    Some(parsed.unwrap_or_else(|e| panic!("{name}={v} is not a number: {e}")))
}

fn case_rng(seed: u64, case: usize) -> StdRng {
    let mixed = (seed ^ 0xD1FF_E2E7_7E57)
        .wrapping_add((case as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    StdRng::seed_from_u64(mixed)
}

#[derive(Default)]
struct Tally {
    passed: usize,
    both_failed: usize,
    both_failed_examples: Vec<String>,
    nonempty: usize,
    metrics: HashMap<&'static str, usize>,
    time: HashMap<&'static str, Duration>,
    failures: Vec<Failure>,
}

// ---------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_filters_match_datafusion() {
    let started = Instant::now();
    let seed = env_number("LAKESCAN_DIFF_SEED").unwrap_or(DEFAULT_SEED);
    let cases = env_number("LAKESCAN_DIFF_CASES").map_or(DEFAULT_CASES, |n| n as usize);
    let files = generate(seed);
    let fx = Arc::new(Fixture::build(&files).await);
    let pools = Arc::new(Pools::new(fx.rows.values().map(|(r, _)| r)));
    let setup = started.elapsed();

    // LAKESCAN_DIFF_ONLY=k runs only case #k (as numbered in a failure report).
    let only = env_number("LAKESCAN_DIFF_ONLY").map(|k| k as usize);
    let (first, end) = only.map_or((0, cases), |k| (k, k + 1));
    let next = Arc::new(AtomicUsize::new(first));
    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Mutex::new(Tally::default()));
    let mut workers = vec![];
    for _ in 0..WORKERS {
        let (fx, pools, next, stop, tally) = (
            Arc::clone(&fx),
            Arc::clone(&pools),
            Arc::clone(&next),
            Arc::clone(&stop),
            Arc::clone(&tally),
        );
        workers.push(tokio::spawn(async move {
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= end || stop.load(Ordering::Relaxed) {
                    return;
                }
                let mut g = Gen {
                    rng: case_rng(seed, k),
                    pools: &pools,
                    used: vec![],
                };
                let max_depth = g.rng.random_range(1..=4);
                let mut pred = g.pred(0, max_depth, None);
                pred.drop_nulls_of_merged_lists();
                let query = g.query();
                let table = if g.chance(0.12) { HIVE_SPLIT } else { HIVE };
                match check(&fx, table, &query, &pred).await {
                    Outcome::Same(out, reference) => {
                        let mut t = tally.lock().unwrap();
                        t.passed += 1;
                        *t.time.entry(table).or_default() += out.elapsed;
                        *t.time.entry(MEM).or_default() += reference.elapsed;
                        t.nonempty += usize::from(!out.rows.is_empty() && out.rows[0] != "0");
                        for (name, v) in out.metrics {
                            *t.metrics.entry(name).or_default() += v;
                        }
                    }
                    Outcome::BothFailed(e) => {
                        let mut t = tally.lock().unwrap();
                        t.both_failed += 1;
                        if t.both_failed_examples.len() < 5 {
                            t.both_failed_examples
                                .push(format!("{}\n      {e}", pred.sql()));
                        }
                    }
                    Outcome::Differ { lake, mem } => {
                        let label = format!(
                            "case #{k} (LAKESCAN_DIFF_SEED={seed:#x}), predicate of {} nodes",
                            pred.size()
                        );
                        let failure = shrink(&fx, label, table, query, pred, lake, mem).await;
                        let mut t = tally.lock().unwrap();
                        t.failures.push(failure);
                        if t.failures.len() >= MAX_FAILURES {
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                }
            }
        }));
    }
    for w in workers {
        w.await.unwrap();
    }
    let elapsed = started.elapsed();
    let t = std::mem::take(&mut *tally.lock().unwrap());
    let mut metrics: Vec<_> = t.metrics.iter().map(|(k, v)| format!("{k}={v}")).collect();
    metrics.sort();
    let mut times: Vec<_> = t.time.iter().map(|(k, v)| format!("{k} {v:.1?}")).collect();
    times.sort();
    eprintln!(
        "differential: seed {seed:#x}, {} rows in {} files, {} cases: {} equal ({} non-empty), \
         {} rejected by both engines, {} failing; setup {setup:.1?}, total {elapsed:.1?} (query \
         time: {}); lakescan pruning over the equal cases: {}",
        fx.row_count,
        files.len(),
        end - first,
        t.passed,
        t.nonempty,
        t.both_failed,
        t.failures.len(),
        times.join(", "),
        metrics.join(", "),
    );

    if !t.failures.is_empty() {
        let mut report = format!(
            "lakescan results differ from DataFusion over a MemTable (seed {seed:#x}, {} rows in \
             {} files; rerun with LAKESCAN_DIFF_SEED={seed:#x}, add LAKESCAN_DIFF_KEEP=1 to keep \
             the generated table):\n",
            fx.row_count,
            files.len(),
        );
        let mut seen = BTreeSet::new();
        for (n, f) in t.failures.iter().enumerate() {
            let minimal = f.query.sql(f.table, &f.pred.sql());
            if seen.insert(minimal) {
                let _ = writeln!(report, "--- failure {}:\n{}", n + 1, describe(&fx, f));
            }
        }
        panic!("{report}");
    }
    for example in &t.both_failed_examples {
        eprintln!("differential: rejected by both engines: {example}");
    }
    // The generator itself: valid SQL, selective but not empty, pruning really exercised.
    if end - first < 200 {
        return;
    }
    assert!(
        t.both_failed * 10 <= end - first,
        "{} of {} generated predicates were rejected by both engines: the generator is \
         broken. Examples:\n    {}",
        t.both_failed,
        end - first,
        t.both_failed_examples.join("\n    ")
    );
    assert!(
        t.nonempty * 4 >= t.passed,
        "too few cases returned rows ({} of {})",
        t.nonempty,
        t.passed
    );
    for name in METRICS {
        assert!(
            t.metrics.get(name).copied().unwrap_or(0) > 0,
            "no case exercised lakescan's {name}: the data no longer triggers it"
        );
    }
}

/// A handmade file: row groups of rows in partition `p`.
fn file(p: Option<i64>, name: &str, row_groups: Vec<Vec<Row>>) -> DataFile {
    DataFile {
        partition: p,
        name: name.to_string(),
        row_groups,
        statistics: EnabledStatistics::Page,
        dictionary: false,
    }
}

/// Numbers the rows (`id`) and sets their partition.
fn numbered(mut files: Vec<DataFile>) -> Vec<DataFile> {
    let mut id = 0;
    for f in &mut files {
        for rg in &mut f.row_groups {
            for r in rg.iter_mut() {
                r.id = id;
                r.p = f.partition;
                id += 1;
            }
        }
    }
    files
}

/// Runs each predicate with the id query on both lakescan tables and fails with every
/// mismatch.
async fn assert_same(files: Vec<DataFile>, predicates: &[&str]) {
    let cases: Vec<(Query, &str)> = predicates.iter().map(|p| (Query::Ids, *p)).collect();
    assert_same_queries(files, &cases).await;
}

/// Runs each (query, predicate) on both lakescan tables and fails with every mismatch.
async fn assert_same_queries(files: Vec<DataFile>, cases: &[(Query, &str)]) {
    let fx = Fixture::build(&numbered(files)).await;
    let mut report = String::new();
    for (query, pred) in cases {
        let pred = Pred::Leaf(pred.to_string());
        for table in [HIVE, HIVE_SPLIT] {
            match check(&fx, table, query, &pred).await {
                Outcome::Same(out, _) => assert!(
                    !out.rows.is_empty() || pred.sql().contains("NULL"),
                    "{}: no rows, the fixture does not test it",
                    pred.sql()
                ),
                Outcome::BothFailed(e) => panic!("{}: both engines failed: {e}", pred.sql()),
                Outcome::Differ { lake, mem } => {
                    let original = query.sql(table, &pred.sql());
                    let f = Failure {
                        case: "fixed case".to_string(),
                        original,
                        table,
                        query: query.clone(),
                        pred: pred.clone(),
                        lake,
                        mem,
                    };
                    let _ = writeln!(report, "{}", describe(&fx, &f));
                }
            }
        }
    }
    assert!(
        report.is_empty(),
        "lakescan differs from DataFusion:\n{report}"
    );
}

fn f_row(f: Option<f64>) -> Row {
    Row {
        f,
        ..Row::default()
    }
}

#[tokio::test]
async fn regression_not_gt_zero_with_nan_and_negative_zero() {
    let nan = f64::NAN;
    let files = vec![
        // Statistics of this file say [0.0, 1.0]: NaN is left out of them.
        file(
            Some(1),
            "part-0.parquet",
            vec![
                vec![f_row(Some(nan)), f_row(Some(1.0)), f_row(Some(0.0))],
                vec![f_row(Some(-0.0)), f_row(None), f_row(Some(2.0))],
            ],
        ),
        // Only zeros: min/max may be recorded as -0.0/+0.0 or +0.0/+0.0.
        file(
            Some(1),
            "part-1.parquet",
            vec![
                vec![f_row(Some(-0.0)), f_row(Some(0.0))],
                vec![f_row(Some(-0.0))],
            ],
        ),
        file(
            Some(1),
            "part-2.parquet",
            vec![vec![f_row(Some(nan)), f_row(Some(f64::INFINITY))]],
        ),
        file(
            Some(2),
            "part-0.parquet",
            vec![vec![
                f_row(Some(f64::NEG_INFINITY)),
                f_row(Some(-1.0)),
                f_row(Some(nan)),
            ]],
        ),
    ];
    assert_same(
        files,
        &[
            "NOT (f > 0.0)",
            "f <= 0.0",
            "NOT (f <= 0.0)",
            "f < 0.0",
            "f = 0.0",
            "f = -0.0",
            "f > -0.0",
            "NOT (f >= -0.0)",
            "f = 'NaN'::double",
            "NOT (f < 'NaN'::double)",
            "f > 'inf'::double",
            "f IN (0.0, 'NaN'::double)",
            "NOT (f IN (0.0, -1.0))",
            "NOT (f BETWEEN -0.0 AND 1.0)",
            "NOT (f <> f)",
        ],
    )
    .await;
}

fn il_row(i: Option<i32>, l: Option<i64>) -> Row {
    Row {
        i,
        l,
        ..Row::default()
    }
}

#[tokio::test]
async fn regression_not_in_with_nulls() {
    let files = vec![
        file(
            Some(1),
            "part-0.parquet",
            vec![
                vec![
                    il_row(Some(1), None),
                    il_row(Some(2), None),
                    il_row(Some(3), None),
                ],
                // An all-NULL row group.
                vec![il_row(None, None), il_row(None, Some(1))],
                vec![il_row(Some(0), Some(2)), il_row(None, Some(3))],
            ],
        ),
        file(
            Some(2),
            "part-0.parquet",
            vec![vec![il_row(Some(1), Some(1)), il_row(Some(2), Some(2))]],
        ),
        file(
            None,
            "part-0.parquet",
            vec![vec![il_row(Some(5), Some(5)), il_row(None, Some(6))]],
        ),
    ];
    assert_same(
        files,
        &[
            "NOT (i IN (1, 2))",
            "i NOT IN (1, 2)",
            "NOT (i NOT IN (1, 2))",
            "i NOT IN (1, NULL)",
            "NOT (i IN (1, NULL))",
            "i IN (1, NULL)",
            "NOT (i NOT IN (3))",
            "NOT (i IN (1, 2)) OR i IS NULL",
            "NOT (i IN (1, 2) AND i IS NOT NULL)",
            "i IS DISTINCT FROM 1",
            "NOT (i IS NOT DISTINCT FROM 1)",
            "NOT (p IN (1))",
            "p NOT IN (2, NULL)",
        ],
    )
    .await;
}

#[tokio::test]
async fn regression_or_across_columns() {
    let files = vec![
        file(
            Some(1),
            "part-0.parquet",
            vec![
                vec![
                    il_row(Some(1), Some(5)),
                    il_row(Some(3), Some(2)),
                    il_row(Some(1), Some(2)),
                ],
                vec![
                    il_row(Some(4), Some(4)),
                    il_row(None, Some(2)),
                    il_row(Some(1), None),
                ],
            ],
        ),
        file(
            Some(2),
            "part-0.parquet",
            vec![vec![il_row(Some(7), Some(9)), il_row(Some(8), Some(2))]],
        ),
        file(
            Some(2),
            "part-1.parquet",
            vec![vec![il_row(Some(9), Some(9)), il_row(None, None)]],
        ),
    ];
    assert_same(
        files,
        &[
            "i = 1 OR l = 2",
            "NOT (i = 1 OR l = 2)",
            "(i = 1 OR l = 2) AND p = 1",
            "i = 1 OR p = 2",
            "NOT (i = 1 AND l = 2)",
            "(i = 1 OR l = 2) AND (i = 3 OR l = 5)",
            "i = 1 OR i = 3 OR l = 9",
            "i > 2 OR l < 3",
        ],
    )
    .await;
}

fn is_row(i: Option<i32>, s: Option<&str>) -> Row {
    Row {
        i,
        s: s.map(str::to_string),
        ..Row::default()
    }
}

/// Found by the generated test (fixed in "Filter statistics: compare in the filter's type"):
/// row-group statistics were compared in the column's own type while a filter through a
/// widening cast held literals of the wider type; comparing two types answered "no
/// overlap", so matching row groups were pruned and these predicates returned no rows.
#[tokio::test]
async fn regression_widening_cast_against_row_group_statistics() {
    let files = vec![file(
        Some(1),
        "part-0.parquet",
        vec![vec![
            is_row(Some(1), Some("a")),
            is_row(Some(2), Some("b")),
            is_row(None, None),
        ]],
    )];
    assert_same(
        files,
        &[
            "CAST(i AS DOUBLE) > 0.0",
            "i < 2.5",
            "CAST(i AS BIGINT) < 3000000000",
            "arrow_cast(s, 'Utf8View') = 'a'",
            "CAST(s AS VARCHAR) = 'a'",
            "s = arrow_cast('a', 'LargeUtf8')",
        ],
    )
    .await;
}

fn i_row(i: Option<i32>) -> Row {
    Row {
        i,
        ..Row::default()
    }
}

/// Files whose first split fills a TopK heap with values the query keeps, and whose later
/// splits hold values the query's filter excludes but the dynamic filter would let through.
fn dynamic_filter_files() -> Vec<DataFile> {
    let rows = |v: &[i32]| v.iter().map(|&x| i_row(Some(x))).collect::<Vec<_>>();
    vec![
        file(
            Some(1),
            "part-0.parquet",
            vec![rows(&[3, 4]), rows(&[5, 6])],
        ),
        file(Some(1), "part-1.parquet", vec![rows(&[-3, -2, 1, 2])]),
        file(
            Some(1),
            "part-2.parquet",
            vec![rows(&[-5, 0, 2, 7]), vec![i_row(None)]],
        ),
        file(Some(2), "part-0.parquet", vec![rows(&[-4, 1, 8])]),
    ]
}

fn topk_i(desc: bool, nulls_first: bool) -> Query {
    Query::TopK {
        column: "i",
        desc,
        nulls_first,
        limit: 2,
    }
}

fn join_i(values: &[i64]) -> Query {
    Query::Join {
        column: "i",
        values: values.iter().map(i64::to_string).collect(),
    }
}

/// TopK and hash joins push dynamic filters (`i < k-th value`, the build side's key range)
/// into the scan while it runs; lakescan merges them with the query's own filters.
#[tokio::test]
async fn regression_dynamic_filters_merge_with_query_filters() {
    let cases = [
        (topk_i(false, true), "CAST(i AS BIGINT) > 0"),
        (topk_i(false, false), "i > 0"),
        (topk_i(true, true), "i IN (1, 2, 7)"),
        (topk_i(false, false), "i IS NULL OR i > 1"),
        (
            Query::Join {
                column: "p",
                values: vec!["1".into(), "2".into()],
            },
            "i > 0",
        ),
    ];
    assert_same_queries(dynamic_filter_files(), &cases).await;
}

/// Regression: a dynamic filter on `i` in another type than the query's filter on `i` —
/// TopK's is INT while `i > 0.5` compares in DOUBLE; a join with BIGINT keys filters
/// `CAST(i AS BIGINT)` while `i = 7` is INT — once replaced the query's filter: e.g. `SELECT hive_t.id FROM hive_t JOIN (VALUES (1),
/// (2), (7)) AS v(x) ON hive_t.i = v.x WHERE i = 7` also returns the rows with i = 1 and 2.
#[tokio::test]
async fn regression_dynamic_filter_of_another_type_keeps_query_filter() {
    let cases = [
        (topk_i(false, false), "CAST(i AS DOUBLE) > 0.5"),
        (topk_i(false, false), "i > 0.5"),
        (topk_i(true, false), "i < 2.5"),
        (join_i(&[1, 2, 7]), "i = 7"),
        (join_i(&[1, 2]), "CAST(i AS DOUBLE) > 1.5"),
    ];
    assert_same_queries(dynamic_filter_files(), &cases).await;
}

fn s_row(s: Option<&str>) -> Row {
    Row {
        s: s.map(str::to_string),
        ..Row::default()
    }
}

/// Regression: `LIKE 'a%'` / `starts_with` on a Utf8View column made DataFusion's pruning
/// predicate fail ("Utf8View <= Utf8"); pruning errors now keep the row groups.
#[tokio::test]
async fn regression_prefix_pruning_on_view_strings() {
    let files = vec![
        file(
            Some(1),
            "part-0.parquet",
            vec![
                vec![s_row(Some("ab")), s_row(Some("b"))],
                vec![s_row(None), s_row(Some("é"))],
            ],
        ),
        file(
            Some(2),
            "part-0.parquet",
            vec![vec![s_row(Some("a")), s_row(Some("abc"))]],
        ),
    ];
    assert_same(
        files,
        &[
            "s LIKE 'a%'",
            "starts_with(s, 'a')",
            "s LIKE 'a_'",
            "s LIKE 'a%' OR i IS NULL",
        ],
    )
    .await;
}

/// String predicates that DataFusion's pruning does not rewrite into min/max bounds.
#[tokio::test]
async fn regression_string_predicates() {
    let files = vec![
        file(
            Some(1),
            "part-0.parquet",
            vec![
                vec![s_row(Some("ab")), s_row(Some("b"))],
                vec![s_row(None), s_row(Some("é"))],
            ],
        ),
        file(
            Some(2),
            "part-0.parquet",
            vec![vec![s_row(Some("a")), s_row(Some("abc"))]],
        ),
    ];
    assert_same(
        files,
        &[
            "CAST(p AS VARCHAR) LIKE '1%'",
            "s NOT LIKE 'a%'",
            "s LIKE '%b'",
            "s LIKE 'ab'",
            "s ILIKE 'A%'",
            "s = 'ab'",
            "s > 'a'",
            "upper(s) = 'AB'",
            "s LIKE '_'",
            "NOT starts_with(s, 'a')",
            "arrow_cast(s, 'Utf8') = 'a'",
            "s IN ('a', 'é', 'zz')",
        ],
    )
    .await;
}
