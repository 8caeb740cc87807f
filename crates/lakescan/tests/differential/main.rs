//! Differential filter tests: lakescan against DataFusion over a `MemTable`.
//!
//! A seeded generator writes a Hive-style table `t/p=<v>/part-<n>.parquet` (several files
//! per partition, several row groups per file, small data pages, some columns clustered or
//! sorted per file so min/max and page-index pruning trigger; some files leave columns out
//! or store them in narrower types) and registers the same rows as a `MemTable`. Random
//! predicates are built from a small AST (comparisons, IN, BETWEEN, IS [NOT] NULL, IS [NOT]
//! DISTINCT FROM, booleans, casts, float specials, struct fields, column-vs-column,
//! arithmetic, functions, partition column, AND/OR/NOT nesting) and rendered as SQL. Each
//! case runs the same query on a lakescan table (`CREATE EXTERNAL TABLE … STORED AS HIVE`
//! with a declared schema) and on the `MemTable` — ids in order, a count, a projection,
//! per-partition aggregates, a TopK, a count under LIMIT/OFFSET or a join — and the results
//! must be equal. A failing case is shrunk and reported with the run's random seed, the
//! minimal SQL, both results and the rows involved. The run also checks that lakescan's
//! pruning (partitions, splits, row groups, pages, reader filters) fired.
//!
//! | module          | owns                                                               |
//! |-----------------|--------------------------------------------------------------------|
//! | `main.rs`       | the generated test, the run's seed, environment and tally          |
//! | [`table`]       | the [`table::Row`] type, the declared schema and its DDL           |
//! | [`layout`]      | per-file schemas: missing columns, narrower stored types           |
//! | [`data`]        | generated rows and files (value ranges, sorting, writer settings)  |
//! | [`fixture`]     | writing the table, the lakescan tables and the reference `MemTable`|
//! | [`predicates`]  | the [`predicates::Pred`] AST, the case generator, columns, leaves  |
//! | [`literals`]    | value pools from the data and the SQL text of literals per type    |
//! | [`leaves`]      | leaves through casts and residual-only leaves                      |
//! | [`queries`]     | the queries run around a predicate                                 |
//! | [`run`]         | running a query on both engines, comparing, pruning metrics        |
//! | [`shrink`]      | shrinking a failing case and the failure report                    |
//! | [`regressions`] | hand-written cases, one per bug found                              |
//!
//! Columns: `id`, `i INT`, `l BIGINT`, `f DOUBLE`, `s VARCHAR`, `d DATE`, `ts TIMESTAMP(6)`,
//! `b BOOLEAN`, `dc DECIMAL(10, 2)`, `dw DECIMAL(20, 4)`, `r REAL`, `t8 TINYINT`,
//! `t16 SMALLINT`, `bn BYTEA`, `tz TIMESTAMP(6) WITH TIME ZONE`, `st STRUCT<x BIGINT,
//! y VARCHAR>` and the partition column `p BIGINT`.
//!
//! Environment:
//! * `LAKESCAN_DIFF_SEED`  — replay a run: the random seed of data and predicates (decimal or
//!   `0x…`). Without it every run draws a fresh seed and prints it first
//!   (`differential seed: 0x…; replay with LAKESCAN_DIFF_SEED=0x…`; shown by cargo when
//!   the test fails, or with `--nocapture`); every failure report names it too.
//! * `LAKESCAN_DIFF_CASES` — number of generated cases (default [`DEFAULT_CASES`]).
//! * `LAKESCAN_DIFF_ONLY`  — run only case number k (as numbered in a failure report).
//! * `LAKESCAN_DIFF_KEEP`  — keep the generated Parquet files and print where they are.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod data;
mod fixture;
mod layout;
mod leaves;
mod literals;
mod predicates;
mod queries;
mod regressions;
mod run;
mod shrink;
mod table;

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::fixture::{Fixture, HIVE, HIVE_SPLIT, MEM};
use crate::literals::Pools;
use crate::predicates::Gen;
use crate::run::{METRICS, Outcome, check};
use crate::shrink::{Failure, describe, shrink};

/// Cases run when `LAKESCAN_DIFF_CASES` is not set.
const DEFAULT_CASES: usize = 2000;
/// Cases run concurrently.
const WORKERS: usize = 4;
/// Stop generating new cases after this many failures (each one is shrunk).
const MAX_FAILURES: usize = 4;

fn env_number(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    let parsed = match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => v.parse(),
    };
    Some(parsed.unwrap_or_else(|e| panic!("{name}={v} is not a number: {e}")))
}

/// The run's seed: `LAKESCAN_DIFF_SEED`, or a fresh one.
fn run_seed() -> u64 {
    let seed = env_number("LAKESCAN_DIFF_SEED").unwrap_or_else(rand::random);
    eprintln!("differential seed: {seed:#x}; replay with LAKESCAN_DIFF_SEED={seed:#x}");
    seed
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

/// What the workers share.
struct Run {
    seed: u64,
    fx: Fixture,
    pools: Pools,
    next: AtomicUsize,
    end: usize,
    stop: AtomicBool,
    tally: Mutex<Tally>,
}

/// Generates and checks case `k`, recording the outcome.
async fn run_case(run: &Run, k: usize) {
    let mut g = Gen::new(case_rng(run.seed, k), &run.pools);
    let max_depth = g.rng.random_range(1..=4);
    let mut pred = g.pred(0, max_depth, None);
    pred.drop_nulls_of_merged_lists();
    let query = g.query();
    let table = if g.chance(0.12) { HIVE_SPLIT } else { HIVE };
    match check(&run.fx, table, &query, &pred).await {
        Outcome::Same(out, reference) => {
            let mut t = run.tally.lock().unwrap();
            t.passed += 1;
            *t.time.entry(table).or_default() += out.elapsed;
            *t.time.entry(MEM).or_default() += reference.elapsed;
            t.nonempty += usize::from(!out.rows.is_empty() && out.rows[0] != "0");
            for (name, v) in out.metrics {
                *t.metrics.entry(name).or_default() += v;
            }
        }
        Outcome::BothFailed(e) => {
            let mut t = run.tally.lock().unwrap();
            t.both_failed += 1;
            if t.both_failed_examples.len() < 5 {
                t.both_failed_examples
                    .push(format!("{}\n      {e}", pred.sql()));
            }
        }
        Outcome::Differ { lake, mem } => {
            let label = format!(
                "case #{k} (LAKESCAN_DIFF_SEED={:#x}), predicate of {} nodes",
                run.seed,
                pred.size()
            );
            let failure = shrink(&run.fx, label, table, query, pred, lake, mem).await;
            let mut t = run.tally.lock().unwrap();
            t.failures.push(failure);
            if t.failures.len() >= MAX_FAILURES {
                run.stop.store(true, Ordering::Relaxed);
            }
        }
    }
}

async fn worker(run: Arc<Run>) {
    loop {
        let k = run.next.fetch_add(1, Ordering::Relaxed);
        if k >= run.end || run.stop.load(Ordering::Relaxed) {
            return;
        }
        run_case(&run, k).await;
    }
}

/// The failures, deduplicated by their minimal SQL, as one report.
fn failure_report(run: &Run, t: &Tally, files: usize) -> String {
    let seed = run.seed;
    let mut report = format!(
        "lakescan results differ from DataFusion over a MemTable (seed {seed:#x}, {} rows in \
         {files} files; rerun with LAKESCAN_DIFF_SEED={seed:#x}, add LAKESCAN_DIFF_KEEP=1 to \
         keep the generated table):\n",
        run.fx.row_count,
    );
    let mut seen = BTreeSet::new();
    for (n, f) in t.failures.iter().enumerate() {
        let minimal = f.query.sql(f.table, &f.pred.sql());
        if seen.insert(minimal) {
            let _ = writeln!(report, "--- failure {}:\n{}", n + 1, describe(&run.fx, f));
        }
    }
    report
}

/// The generator itself: valid SQL, selective but not empty, pruning really exercised.
fn assert_generator_healthy(t: &Tally, cases: usize, seed: u64) {
    assert!(
        t.both_failed * 10 <= cases,
        "seed {seed:#x}: {} of {cases} generated predicates were rejected by both engines: \
         the generator is broken. Examples:\n    {}",
        t.both_failed,
        t.both_failed_examples.join("\n    ")
    );
    assert!(
        t.nonempty * 4 >= t.passed,
        "seed {seed:#x}: too few cases returned rows ({} of {})",
        t.nonempty,
        t.passed
    );
    for name in METRICS {
        assert!(
            t.metrics.get(name).copied().unwrap_or(0) > 0,
            "seed {seed:#x}: no case exercised lakescan's {name}: the data no longer triggers it"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_filters_match_datafusion() {
    let started = Instant::now();
    let seed = run_seed();
    let cases = env_number("LAKESCAN_DIFF_CASES").map_or(DEFAULT_CASES, |n| n as usize);
    let files = data::generate(seed);
    let fx = Fixture::build(&files).await;
    let pools = Pools::new(fx.rows.values().map(|placed| &placed.row));
    let setup = started.elapsed();

    // LAKESCAN_DIFF_ONLY=k runs only case #k (as numbered in a failure report).
    let only = env_number("LAKESCAN_DIFF_ONLY").map(|k| k as usize);
    let (first, end) = only.map_or((0, cases), |k| (k, k + 1));
    let run = Arc::new(Run {
        seed,
        fx,
        pools,
        next: AtomicUsize::new(first),
        end,
        stop: AtomicBool::new(false),
        tally: Mutex::new(Tally::default()),
    });
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| tokio::spawn(worker(Arc::clone(&run))))
        .collect();
    for w in workers {
        w.await.unwrap();
    }
    let elapsed = started.elapsed();
    let t = std::mem::take(&mut *run.tally.lock().unwrap());
    let mut metrics: Vec<_> = t.metrics.iter().map(|(k, v)| format!("{k}={v}")).collect();
    metrics.sort();
    let mut times: Vec<_> = t.time.iter().map(|(k, v)| format!("{k} {v:.1?}")).collect();
    times.sort();
    let (missing, narrower): (Vec<usize>, Vec<usize>) =
        files.iter().map(|f| f.layout.counts()).unzip();
    eprintln!(
        "differential: seed {seed:#x}, {} rows in {} files ({} columns left out, {} stored \
         in another type), {} cases: {} equal ({} non-empty), \
         {} rejected by both engines, {} failing; setup {setup:.1?}, total {elapsed:.1?} (query \
         time: {}); lakescan pruning over the equal cases: {}",
        run.fx.row_count,
        files.len(),
        missing.iter().sum::<usize>(),
        narrower.iter().sum::<usize>(),
        end - first,
        t.passed,
        t.nonempty,
        t.both_failed,
        t.failures.len(),
        times.join(", "),
        metrics.join(", "),
    );

    if !t.failures.is_empty() {
        panic!("{}", failure_report(&run, &t, files.len()));
    }
    for example in &t.both_failed_examples {
        eprintln!("differential: rejected by both engines: {example}");
    }
    if end - first >= 200 {
        assert_generator_healthy(&t, end - first, seed);
    }
}
