//! Differential test of Iceberg reads: random tables (several commits of data files, random
//! position deletes, deletion vectors and equality deletes, each with its sequence number)
//! and random predicates; lakescan's result must equal DataFusion's over a `MemTable` of the
//! rows the Iceberg rules keep (computed here independently of the reader). Half the tables
//! start with an older schema (`k` an INT, `s` named `label`) and evolve to the current one
//! (`k` promoted to BIGINT, `label` renamed `s`) at a random commit: files and equality
//! deletes written before it use the old types and names.
//! A fresh seed per run (printed); `LAKESCAN_ICEBERG_DIFF_SEED` replays one,
//! `LAKESCAN_ICEBERG_DIFF_TABLES` sets how many tables (default 12).

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow::array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema as ArrowSchema};
use arrow::util::pretty::pretty_format_batches;
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use iceberg::spec::{NestedField, PrimitiveType, Schema, Type};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::fixture::Fixture;

/// One row: (id, k, s). `k` is the equality-delete key, sometimes NULL.
type Row = (i64, Option<i64>, Option<String>);

/// A data file as the oracle sees it: its rows, path and data sequence number.
struct DataFileRows {
    path: String,
    seq: i64,
    rows: Vec<Row>,
    deleted: BTreeSet<usize>,
}

/// The current schema, or (`old`) the one before the evolution: `k` an INT, `s` named
/// `label`.
fn schema(old: bool) -> Schema {
    let (k, s) = match old {
        true => (PrimitiveType::Int, "label"),
        false => (PrimitiveType::Long, "s"),
    };
    Schema::builder()
        .with_fields(vec![
            Arc::new(NestedField::optional(
                1,
                "id",
                Type::Primitive(PrimitiveType::Long),
            )),
            Arc::new(NestedField::optional(2, "k", Type::Primitive(k))),
            Arc::new(NestedField::optional(
                3,
                s,
                Type::Primitive(PrimitiveType::String),
            )),
        ])
        .build()
        .unwrap()
}

/// The key column `k` as the schema (`old` or current) stores it.
fn keys(values: impl IntoIterator<Item = Option<i64>>, old: bool) -> ArrayRef {
    match old {
        true => Arc::new(Int32Array::from_iter(
            values
                .into_iter()
                .map(|k| k.map(|k| i32::try_from(k).unwrap())),
        )),
        false => Arc::new(Int64Array::from_iter(values)),
    }
}

fn columns(rows: &[Row], old: bool) -> Vec<(&'static str, i32, ArrayRef)> {
    vec![
        (
            "id",
            1,
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))) as ArrayRef,
        ),
        ("k", 2, keys(rows.iter().map(|r| r.1), old)),
        (
            if old { "label" } else { "s" },
            3,
            Arc::new(StringArray::from_iter(rows.iter().map(|r| r.2.clone()))) as ArrayRef,
        ),
    ]
}

/// Builds a random table; returns its metadata path and the rows that survive.
async fn random_table(rng: &mut StdRng, next_id: &mut i64) -> (Fixture, String, Vec<Row>) {
    let mut files: Vec<DataFileRows> = vec![];
    let mut with_vector: std::collections::HashSet<String> = Default::default();
    let mut equality_keys: Vec<(i64, Option<i64>)> = vec![]; // (delete seq, key)
    let commits = rng.random_range(1..5);
    let evolve_at = rng.random_bool(0.5).then(|| rng.random_range(1..=commits));
    let mut old = evolve_at.is_some();
    let mut t = Fixture::new(schema(old));
    let mut metadata = String::new();
    for seq in 1..=commits {
        if evolve_at == Some(seq) {
            t.evolve_schema(schema(false));
            old = false;
        }
        let mut data = vec![];
        for _ in 0..rng.random_range(0..3) {
            let n = rng.random_range(1..40);
            let rows: Vec<Row> = (0..n)
                .map(|_| {
                    *next_id += 1;
                    let k = (rng.random_range(0..8) > 0).then(|| rng.random_range(0..6));
                    let s = (rng.random_range(0..6) > 0)
                        .then(|| ["a", "b", "c", "d"][rng.random_range(0..4)].to_string());
                    (*next_id, k, s)
                })
                .collect();
            let file = t.data_file(columns(&rows, old));
            files.push(DataFileRows {
                path: file.file_path().to_string(),
                seq,
                rows,
                deleted: BTreeSet::new(),
            });
            data.push(file);
        }
        let mut deletes = vec![];
        // Position deletes (apply to files with seq <= this one).
        if !files.is_empty() && rng.random_bool(0.5) {
            let mut entries = vec![];
            for f in files.iter_mut().filter(|f| f.seq <= seq) {
                for pos in 0..f.rows.len() {
                    if rng.random_bool(0.15) {
                        entries.push((f.path.clone(), pos as i64));
                        f.deleted.insert(pos);
                    }
                }
            }
            entries.sort();
            let borrowed: Vec<(&str, i64)> =
                entries.iter().map(|(p, i)| (p.as_str(), *i)).collect();
            if !borrowed.is_empty() {
                deletes.push(t.position_delete_file(borrowed));
            }
        }
        // A deletion vector of one file (seq <= this one), at most one per file: a snapshot
        // holds at most one per data file (a later one would have to replace it).
        if !files.is_empty() && rng.random_bool(0.4) {
            let i = rng.random_range(0..files.len());
            if files[i].seq <= seq && with_vector.insert(files[i].path.clone()) {
                let f = &mut files[i];
                let positions: Vec<u64> = (0..f.rows.len() as u64)
                    .filter(|_| rng.random_bool(0.2))
                    .collect();
                if !positions.is_empty() {
                    f.deleted.extend(positions.iter().map(|p| *p as usize));
                    let path = f.path.clone();
                    deletes.push(t.deletion_vector(&path, &path, &positions));
                }
            }
        }
        // Equality deletes on k (apply to files with seq < this one), NULL keys included.
        if rng.random_bool(0.5) {
            let mut keys: Vec<Option<i64>> = (0..rng.random_range(1..3))
                .map(|_| (rng.random_range(0..5) > 0).then(|| rng.random_range(0..6)))
                .collect();
            keys.dedup();
            equality_keys.extend(keys.iter().map(|k| (seq, *k)));
            let array = self::keys(keys, old);
            deletes.push(t.equality_delete_file(vec![2], vec![("k", 2, array)]));
        }
        metadata = t.commit(data, deletes).await;
    }
    let mut survivors = vec![];
    for f in &files {
        for (pos, row) in f.rows.iter().enumerate() {
            let by_position = f.deleted.contains(&pos);
            let by_equality = equality_keys.iter().any(|(s, k)| *s > f.seq && *k == row.1);
            if !by_position && !by_equality {
                survivors.push(row.clone());
            }
        }
    }
    (t, metadata, survivors)
}

fn predicate(rng: &mut StdRng) -> String {
    let atom = |rng: &mut StdRng| -> String {
        match rng.random_range(0..7) {
            0 => format!("k = {}", rng.random_range(0..6)),
            1 => format!("k > {}", rng.random_range(0..6)),
            2 => "k IS NULL".to_string(),
            3 => format!("s = '{}'", ["a", "b", "c", "z"][rng.random_range(0..4)]),
            4 => "s IS NOT NULL".to_string(),
            5 => format!("id % {} = 0", rng.random_range(2..5)),
            _ => format!(
                "k IN ({}, {})",
                rng.random_range(0..6),
                rng.random_range(0..6)
            ),
        }
    };
    match rng.random_range(0..4) {
        0 => "true".to_string(),
        1 => atom(rng),
        2 => format!("{} AND {}", atom(rng), atom(rng)),
        _ => format!("({} OR NOT {})", atom(rng), atom(rng)),
    }
}

async fn result(ctx: &SessionContext, sql: &str) -> String {
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    pretty_format_batches(&batches).unwrap().to_string()
}

#[tokio::test]
async fn iceberg_reads_match_datafusion_over_the_surviving_rows() {
    let seed: u64 = std::env::var("LAKESCAN_ICEBERG_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    let tables: usize = std::env::var("LAKESCAN_ICEBERG_DIFF_TABLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12);
    println!("iceberg differential seed: {seed}; replay with LAKESCAN_ICEBERG_DIFF_SEED={seed}");
    let mut rng = StdRng::seed_from_u64(seed);
    let mut next_id = 0;
    for table in 0..tables {
        let (_fixture, metadata, survivors) = random_table(&mut rng, &mut next_id).await;
        let ctx = crate::fixture::with_iceberg(SessionContext::new());
        ctx.sql(&format!(
            "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{metadata}'"
        ))
        .await
        .unwrap();
        let arrow_schema = Arc::new(ArrowSchema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("k", DataType::Int64, true),
            Field::new("s", DataType::Utf8, true),
        ]));
        let batch = RecordBatch::try_new(
            Arc::clone(&arrow_schema),
            columns(&survivors, false)
                .into_iter()
                .map(|c| c.2)
                .collect(),
        )
        .unwrap();
        let memory = MemTable::try_new(arrow_schema, vec![vec![batch]]).unwrap();
        ctx.register_table("expected", Arc::new(memory)).unwrap();
        for _ in 0..8 {
            let p = predicate(&mut rng);
            let got = result(
                &ctx,
                &format!("SELECT id, k, s FROM t WHERE {p} ORDER BY id"),
            )
            .await;
            let want = result(
                &ctx,
                &format!("SELECT id, k, s FROM expected WHERE {p} ORDER BY id"),
            )
            .await;
            assert_eq!(
                got, want,
                "seed {seed}, table {table}, predicate {p}: lakescan (left) differs from the \
                 surviving rows (right); metadata {metadata}"
            );
            let got = result(&ctx, &format!("SELECT count(*) FROM t WHERE {p}")).await;
            let want = result(&ctx, &format!("SELECT count(*) FROM expected WHERE {p}")).await;
            assert_eq!(got, want, "seed {seed}, table {table}, count(*) WHERE {p}");
        }
    }
}
