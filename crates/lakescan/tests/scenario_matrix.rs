//! The scan scenarios of `docs/scenarios.md` (named `15.N` below: scenario N there) under
//! every split-lifecycle configuration: preload on and off × a dynamic filter arriving before
//! prepare, after prepare (with preload: after the next split was preloaded, so its takeover
//! must apply it) and mid-split (after the first batch read). One tester, many
//! configurations: each scenario is a table, a query whose plan is one `LakeScanExec`, and a
//! dynamic filter over the scan's output, pushed into the scan as a
//! `DynamicFilterPhysicalExpr` and updated by a [`LifecycleHook`] at the chosen moment, so
//! the timing is deterministic.
//!
//! For every configuration the rows that pass the filter (what a join above the scan keeps)
//! must equal the scenario's oracle: `SELECT * FROM (query) WHERE filter` run by DataFusion
//! over a `MemTable` of the rows the scenario's semantics keep, never by lakescan. The scan
//! must have emitted fewer rows than without the filter and its dynamic-filter metrics must
//! have moved: the filter acted inside the scan. The scan without the filter shows the
//! scenario's own mechanism in exact metrics (rows deleted, bucket rows removed, leaves not
//! decoded). Batches hold 2 rows, so every scenario's first split has a batch after the first
//! one, and every scenario has two splits or more, so preload takes one over.
//!
//! Two cases where Velox can lose a dynamic filter join them (named `16 …`): a dynamic filter
//! on a struct member across two files (Velox's takeover moves only top-level filters), and
//! one on a changelog scan's change constants (tested only at prepare in Velox). Scenario 13
//! (zero output columns) has no column a dynamic filter could read, and is left out.
//!
//! Besides the rows, each configuration bounds how many emitted rows fail the filter: none
//! when it arrived before the first batch, at most the first batch otherwise. A filter lost
//! for a preloaded split (as Velox's takeover can lose it) breaks that bound.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use arrow::array::{ArrayRef, Int64Array, RecordBatch};
use arrow::compute::filter_record_batch;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::common::DFSchema;
use datafusion::physical_expr::expressions::{DynamicFilterPhysicalExpr, lit};
use datafusion::physical_expr::utils::collect_columns;
use datafusion::physical_plan::{ExecutionPlan, PhysicalExpr, collect};
use datafusion::prelude::{SessionConfig, SessionContext};
use iceberg::spec::{NestedField, PrimitiveType, Schema, Type};
use lakescan_core::api::{LakeScanExec, LifecycleHook, SplitEvent};
use lakescan_iceberg_writer::TableWriter;

/// One scan scenario: its tables, its query, the dynamic filter, and an oracle that is
/// not lakescan.
struct Scenario {
    name: &'static str,
    /// Statements run first; `$DIR` is the scenario's directory. Every scenario has at
    /// least two splits, so preload takes a split over.
    setup: &'static [&'static str],
    /// Iceberg tables written before `setup` (their metadata path replaces `$META`).
    iceberg: Option<fn(&Path) -> String>,
    /// A query planned as one `LakeScanExec`.
    query: &'static str,
    /// The dynamic filter, over the scan's output columns.
    filter: &'static str,
    /// The oracle: statements that create, in a DataFusion session without lakescan, a
    /// `MemTable` `t` of the rows the scenario's semantics keep (deletes applied, hidden
    /// columns as plain columns).
    oracle: &'static [&'static str],
    /// The query over the oracle's table, when it is not `query`.
    oracle_query: Option<&'static str>,
    /// Metrics of the scan without the dynamic filter that show the scenario's mechanism
    /// acted, with their exact values.
    mechanism: &'static [(&'static str, usize)],
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "15.1 output name differs from the column name",
        setup: &[
            "COPY (SELECT v AS c0, v * 10 AS c1, 'x' || v AS c2 FROM unnest(range(1, 5)) AS t(v)) \
             TO '$DIR/t/f1.parquet' STORED AS PARQUET",
            "COPY (SELECT v AS c0, v * 10 AS c1, 'x' || v AS c2 FROM unnest(range(5, 9)) AS t(v)) \
             TO '$DIR/t/f2.parquet' STORED AS PARQUET",
            "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '$DIR/t'",
        ],
        iceberg: None,
        query: "SELECT c0 AS alias FROM t",
        filter: "alias > 4",
        oracle: &[
            "CREATE TABLE t AS SELECT v AS c0, v * 10 AS c1, 'x' || v AS c2 \
             FROM unnest(range(1, 9)) AS t(v)",
        ],
        oracle_query: None,
        mechanism: &[("splits_total", 2), ("rows_scanned", 8)],
    },
    Scenario {
        // The scenario's reader output (4,8), (8,1), (9,3) with `c0 + c1 > 10`: [4, 9].
        name: "15.2 output c0, residual on the unprojected c1",
        setup: &[
            "COPY (SELECT * FROM (VALUES (4, 8), (8, 1), (9, 3)) AS v(c0, c1)) \
             TO '$DIR/t/f1.parquet' STORED AS PARQUET",
            "COPY (SELECT * FROM (VALUES (1, 10), (2, 2), (12, 0), (6, 6)) AS v(c0, c1)) \
             TO '$DIR/t/f2.parquet' STORED AS PARQUET",
            "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '$DIR/t'",
        ],
        iceberg: None,
        query: "SELECT c0 FROM t WHERE c0 + c1 > 10",
        filter: "c0 < 5",
        oracle: &[
            "CREATE TABLE t AS SELECT * FROM (VALUES (4, 8), (8, 1), (9, 3), (1, 10), (2, 2), \
             (12, 0), (6, 6)) AS v(c0, c1)",
        ],
        oracle_query: None,
        mechanism: &[("rows_scanned", 7), ("rows_removed_residual", 2)],
    },
    Scenario {
        // The scenario's file: c0 = [1, 2, 3], c1 = [9, 12, 20], `c1 > 10` in the reader.
        name: "15.3 a column only filtered in the reader",
        setup: &[
            "COPY (SELECT * FROM (VALUES (1, 9), (2, 12), (3, 20)) AS v(c0, c1)) \
             TO '$DIR/t/f1.parquet' STORED AS PARQUET",
            "COPY (SELECT * FROM (VALUES (4, 10), (5, 11), (6, 30), (7, 5)) AS v(c0, c1)) \
             TO '$DIR/t/f2.parquet' STORED AS PARQUET",
            "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '$DIR/t'",
        ],
        iceberg: None,
        query: "SELECT c0 FROM t WHERE c1 > 10",
        filter: "c0 % 2 = 0",
        oracle: &[
            "CREATE TABLE t AS SELECT * FROM (VALUES (1, 9), (2, 12), (3, 20), (4, 10), (5, 11), \
             (6, 30), (7, 5)) AS v(c0, c1)",
        ],
        oracle_query: None,
        mechanism: &[("rows_scanned", 7), ("rows_removed_reader_filters", 3)],
    },
    Scenario {
        name: "15.4 ROW / ARRAY / MAP subfield pruning",
        setup: &[
            "COPY (SELECT * FROM (VALUES (1, named_struct('a', 10, 'b', 1, 'c', 'z'), [named_struct('x', 1, 'y', 2)], MAP {'k': 1}), (2, named_struct('a', 20, 'b', 2, 'c', 'z'), [named_struct('x', 2, 'y', 3)], MAP {'k': 2}), (3, named_struct('a', 30, 'b', 0, 'c', 'z'), [named_struct('x', 3, 'y', 4)], MAP {'k': 3}), (4, named_struct('a', 40, 'b', 1, 'c', 'z'), [named_struct('x', 4, 'y', 5)], MAP {'k': 4})) AS v(id, r, a, m)) \
             TO '$DIR/t/f1.parquet' STORED AS PARQUET",
            "COPY (SELECT * FROM (VALUES (5, named_struct('a', 50, 'b', 2, 'c', 'z'), [named_struct('x', 5, 'y', 6)], MAP {'k': 5}), (6, named_struct('a', 60, 'b', 0, 'c', 'z'), [named_struct('x', 6, 'y', 7)], MAP {'k': 6}), (7, named_struct('a', 70, 'b', 1, 'c', 'z'), [named_struct('x', 7, 'y', 8)], MAP {'k': 7}), (8, named_struct('a', 80, 'b', 2, 'c', 'z'), [named_struct('x', 8, 'y', 9)], MAP {'k': 8})) AS v(id, r, a, m)) \
             TO '$DIR/t/f2.parquet' STORED AS PARQUET",
            "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '$DIR/t'",
        ],
        iceberg: None,
        query: "SELECT id, r['a'] AS ra FROM t WHERE r['b'] > 0",
        filter: "ra < 60",
        oracle: &[
            "CREATE TABLE t AS SELECT v AS id, named_struct('a', v * 10, 'b', \
             CAST(v % 3 AS BIGINT), 'c', 'z') AS r FROM unnest(range(1, 9)) AS t(v)",
        ],
        oracle_query: None,
        // Rows with r.b = 0 (ids 3 and 6) leave in the reader; r.a, r.b and id are decoded
        // in each file, r.c, a and m are not.
        mechanism: &[("rows_removed_reader_filters", 2), ("leaves_decoded", 6)],
    },
    Scenario {
        // The scenario's maps {a:1, b:2} and {c:3}: keys [a, b] and [c], two rows.
        name: "15.5 extraction turns a MAP into an ARRAY",
        setup: &[
            "COPY (SELECT * FROM (VALUES (1, MAP {'a': 1, 'b': 2}), (2, MAP {'c': 3}), (3, MAP {'d': 4})) AS v(id, m)) \
             TO '$DIR/t/f1.parquet' STORED AS PARQUET",
            "COPY (SELECT * FROM (VALUES (4, MAP {'e': 5, 'f': 6}), (5, MAP {'g': 7}), (6, MAP {'h': 8, 'i': 9})) AS v(id, m)) \
             TO '$DIR/t/f2.parquet' STORED AS PARQUET",
            "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '$DIR/t'",
        ],
        iceberg: None,
        query: "SELECT id, map_keys(m) AS k FROM t",
        filter: "id % 2 = 0",
        oracle: &[
            "CREATE TABLE t AS SELECT * FROM (VALUES (1, ['a', 'b']), (2, ['c']), (3, ['d']), \
             (4, ['e', 'f']), (5, ['g']), (6, ['h', 'i'])) AS v(id, keys)",
        ],
        oracle_query: Some("SELECT id, keys AS k FROM t"),
        // id and the map's keys in each file; the values are never decoded.
        mechanism: &[("rows_scanned", 6), ("leaves_decoded", 4)],
    },
    Scenario {
        name: "15.6 only a partition column and the row index",
        setup: &[
            "COPY (SELECT v AS c0 FROM unnest(range(1, 7)) AS t(v)) \
             TO '$DIR/t/p=east/f.parquet' STORED AS PARQUET",
            "COPY (SELECT v AS c0 FROM unnest(range(1, 5)) AS t(v)) \
             TO '$DIR/t/p=west/f.parquet' STORED AS PARQUET",
            "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '$DIR/t' PARTITIONED BY (p) \
             OPTIONS ('hidden_columns' '$row_index')",
        ],
        iceberg: None,
        query: "SELECT p, \"$row_index\" AS ri FROM t",
        filter: "p = 'east' AND ri % 2 = 0",
        oracle: &[
            "CREATE TABLE t AS SELECT 'east' AS p, CAST(v AS BIGINT) AS \"$row_index\" \
             FROM unnest(range(0, 6)) AS t(v) UNION ALL SELECT 'west', CAST(v AS BIGINT) \
             FROM unnest(range(0, 4)) AS t(v)",
        ],
        oracle_query: None,
        // No data column is decoded: the rows come from the files' row counts.
        mechanism: &[("rows_scanned", 10), ("leaves_decoded", 0)],
    },
    Scenario {
        name: "15.7 a column missing in one file, present in the next",
        setup: &[
            "COPY (SELECT v AS c0 FROM unnest(range(1, 5)) AS t(v)) \
             TO '$DIR/t/f1.parquet' STORED AS PARQUET",
            "COPY (SELECT v AS c0, v * 10 AS c1 FROM unnest(range(5, 9)) AS t(v)) \
             TO '$DIR/t/f2.parquet' STORED AS PARQUET",
            "CREATE EXTERNAL TABLE t (c0 BIGINT, c1 BIGINT) STORED AS HIVE LOCATION '$DIR/t'",
        ],
        iceberg: None,
        query: "SELECT c0, c1 FROM t",
        filter: "c1 > 60",
        oracle: &[
            "CREATE TABLE t AS SELECT v AS c0, CASE WHEN v >= 5 THEN v * 10 END AS c1 \
             FROM unnest(range(1, 9)) AS t(v)",
        ],
        oracle_query: None,
        mechanism: &[("splits_total", 2), ("rows_scanned", 8)],
    },
    Scenario {
        // Hive v1 hashes of k: 1, 5, 9, 13 (rows 10, 20, 30, 40) and 5 (row 50): all belong
        // to partition bucket 1 of 4, which table buckets 1 and 5 of 8 read, each keeping
        // its half. Row 50 fails k.a > 0 first.
        name: "15.8 bucket conversion with the hidden bucket key and a nested filter",
        setup: &[
            "CREATE TABLE src AS SELECT * FROM (VALUES \
             (10, named_struct('a', 1, 'b', 4294967266)), (20, named_struct('a', 1, 'b', 4294967270)), \
             (30, named_struct('a', 1, 'b', 4294967274)), (40, named_struct('a', 1, 'b', 4294967278)), \
             (50, named_struct('a', 0, 'b', 5))) AS v(c0, k)",
            "COPY (SELECT * FROM src) TO '$DIR/t/ds=old/000001_0.parquet' STORED AS PARQUET",
            "COPY (SELECT * FROM src WHERE false) TO '$DIR/t/ds=old/000000_0.parquet' STORED AS PARQUET",
            "COPY (SELECT * FROM src WHERE false) TO '$DIR/t/ds=old/000002_0.parquet' STORED AS PARQUET",
            "COPY (SELECT * FROM src WHERE false) TO '$DIR/t/ds=old/000003_0.parquet' STORED AS PARQUET",
            "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '$DIR/t' PARTITIONED BY (ds) \
             OPTIONS ('bucketed_by' 'k', 'bucket_count' '8', 'bucketing_version' '1')",
        ],
        iceberg: None,
        query: "SELECT c0 FROM t WHERE k['a'] > 0",
        filter: "c0 <> 30",
        oracle: &["CREATE TABLE t AS SELECT * FROM (VALUES \
             (10, named_struct('a', 1, 'b', 4294967266)), (20, named_struct('a', 1, 'b', 4294967270)), \
             (30, named_struct('a', 1, 'b', 4294967274)), (40, named_struct('a', 1, 'b', 4294967278)), \
             (50, named_struct('a', 0, 'b', 5))) AS v(c0, k)"],
        oracle_query: None,
        // The file is read twice (table buckets 1 and 5); each read drops the other's two
        // rows, and row 50 leaves in the reader both times.
        mechanism: &[
            ("rows_removed_bucket_conversion", 4),
            ("rows_removed_reader_filters", 2),
        ],
    },
    Scenario {
        // Two splits whose row-id constants differ: the file name (row_group_id), the
        // partition id and the row numbers restart; the takeover of the second must not keep
        // the first's.
        name: "15.9 Hive row id constants change between splits",
        setup: &[
            "COPY (SELECT v AS c0 FROM unnest(range(1, 5)) AS t(v)) \
             TO '$DIR/t/ds=1/a.parquet' STORED AS PARQUET",
            "COPY (SELECT v AS c0 FROM unnest(range(5, 9)) AS t(v)) \
             TO '$DIR/t/ds=2/b.parquet' STORED AS PARQUET",
            "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '$DIR/t' PARTITIONED BY (ds) \
             OPTIONS ('hidden_columns' '$row_id', 'row_id.metadata_version' '2', \
             'row_id.table_guid' 'B', 'row_id.partition_id.ds=1' '10', \
             'row_id.partition_id.ds=2' '20')",
        ],
        iceberg: None,
        query: "SELECT c0, \"$row_id\" AS rid FROM t",
        filter: "c0 % 3 <> 0",
        oracle: &[
            "CREATE TABLE t AS SELECT v AS c0, named_struct('row_number', CAST(v - 1 AS BIGINT), \
             'row_group_id', 'a.parquet', 'metadata_version', CAST(2 AS BIGINT), \
             'partition_id', CAST(10 AS BIGINT), 'table_guid', 'B') AS \"$row_id\" \
             FROM unnest(range(1, 5)) AS t(v) UNION ALL \
             SELECT v, named_struct('row_number', CAST(v - 5 AS BIGINT), 'row_group_id', 'b.parquet', \
             'metadata_version', CAST(2 AS BIGINT), 'partition_id', CAST(20 AS BIGINT), \
             'table_guid', 'B') FROM unnest(range(5, 9)) AS t(v)",
        ],
        oracle_query: None,
        mechanism: &[("splits_total", 2), ("rows_scanned", 8)],
    },
    Scenario {
        // The scenario's (100, 7), (200, 8), (300, 7) with a delete of key 7: [200]; again with
        // c0 + 300.
        name: "15.10 an equality delete needs the unprojected key",
        setup: &["CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '$META'"],
        iceberg: Some(equality_delete_table),
        query: "SELECT c0 FROM t",
        filter: "c0 < 400",
        oracle: &[
            "CREATE TABLE t AS SELECT c0 FROM (VALUES (100, 7), (200, 8), (300, 7), (400, 7), \
             (500, 8), (600, 7)) AS v(c0, key) WHERE key <> 7",
        ],
        oracle_query: None,
        mechanism: &[("rows_scanned", 6), ("rows_deleted_equality", 4)],
    },
    Scenario {
        name: "15.11 position deletes with lineage",
        setup: &[
            "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '$META' \
             OPTIONS ('metadata_columns' '_row_id,_pos')",
        ],
        iceberg: Some(position_delete_table),
        query: "SELECT c0, _row_id AS rid, _pos AS pos FROM t",
        filter: "c0 % 2 = 0",
        // Files of c0 0..8 and 8..16 with first row ids 0 and 8: _row_id = c0, _pos =
        // c0 % 8; positions 3 of the first and 6 of the second are deleted.
        oracle: &[
            "CREATE TABLE t AS SELECT CAST(v AS BIGINT) AS c0, CAST(v AS BIGINT) AS _row_id, \
             CAST(v % 8 AS BIGINT) AS _pos FROM unnest(range(0, 16)) AS t(v) \
             WHERE v NOT IN (3, 14)",
        ],
        oracle_query: None,
        // One position-delete file, read once for both data files; its rows are not counted
        // as removed by reader filters.
        mechanism: &[
            ("rows_deleted_position", 2),
            ("delete_files_loaded", 1),
            ("rows_removed_reader_filters", 0),
        ],
    },
    Scenario {
        name: "15.12 a dynamic filter on a real column (c0 > 10)",
        setup: SEED_15_12,
        iceberg: None,
        query: "SELECT c0, p FROM t",
        filter: "c0 > 10",
        oracle: SEED_15_12_ORACLE,
        oracle_query: None,
        mechanism: &[("splits_total", 2), ("rows_scanned", 40)],
    },
    Scenario {
        name: "15.12 a dynamic filter on the partition constant (p = 2)",
        setup: SEED_15_12,
        iceberg: None,
        query: "SELECT c0, p FROM t",
        filter: "p = 2",
        oracle: SEED_15_12_ORACLE,
        oracle_query: None,
        mechanism: &[("splits_total", 2), ("rows_scanned", 40)],
    },
    Scenario {
        name: "16 a nested field's dynamic filter across splits and takeover",
        setup: &[
            "COPY (SELECT v AS id, named_struct('a', v * 10, 'b', -v) AS r FROM unnest(range(1, 9)) AS t(v)) \
             TO '$DIR/t/f1.parquet' STORED AS PARQUET",
            "COPY (SELECT v AS id, named_struct('a', v * 10, 'b', -v) AS r FROM unnest(range(9, 17)) AS t(v)) \
             TO '$DIR/t/f2.parquet' STORED AS PARQUET",
            "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '$DIR/t'",
        ],
        iceberg: None,
        query: "SELECT id, r['a'] AS ra FROM t",
        filter: "ra % 20 = 0 AND ra > 30",
        oracle: &[
            "CREATE TABLE t AS SELECT v AS id, named_struct('a', v * 10, 'b', -v) AS r \
             FROM unnest(range(1, 17)) AS t(v)",
        ],
        oracle_query: None,
        mechanism: &[("splits_total", 2), ("rows_scanned", 16)],
    },
    Scenario {
        name: "16 a changelog scan's change constants (_change_type, _change_ordinal)",
        setup: &["CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '$META'"],
        iceberg: Some(changelog_table),
        query: "SELECT c0, _change_type AS ct, _change_ordinal AS ord \
                FROM table_changes('t', 1001, 1003)",
        filter: "ct = 'insert' AND ord = 1",
        // B inserted at ordinal 0; A deleted and C inserted at ordinal 1.
        oracle: &[
            "CREATE TABLE t AS SELECT v AS c0, 'insert' AS ct, 0 AS ord \
             FROM unnest(range(7, 13)) AS t(v) \
             UNION ALL SELECT v, 'delete', 1 FROM unnest(range(1, 7)) AS t(v) \
             UNION ALL SELECT v, 'insert', 1 FROM unnest([1, 3, 5, 21, 23, 25]) AS t(v)",
        ],
        oracle_query: Some("SELECT c0, ct, ord FROM t"),
        mechanism: &[("splits_total", 3), ("rows_scanned", 18)],
    },
];

/// Scenario 12 (dynamic filters): P = [c0 BIGINT, p INTEGER], partitions p = 1 and p = 2.
const SEED_15_12: &[&str] = &[
    "COPY (SELECT CAST(v AS BIGINT) AS c0 FROM unnest(range(0, 20)) AS t(v)) \
     TO '$DIR/t/p=1/f.parquet' STORED AS PARQUET",
    "COPY (SELECT CAST(v AS BIGINT) AS c0 FROM unnest(range(0, 20)) AS t(v)) \
     TO '$DIR/t/p=2/f.parquet' STORED AS PARQUET",
    "CREATE EXTERNAL TABLE t (c0 BIGINT, p INT) STORED AS HIVE LOCATION '$DIR/t' \
     PARTITIONED BY (p)",
];

const SEED_15_12_ORACLE: &[&str] = &[
    "CREATE TABLE t AS SELECT CAST(v AS BIGINT) AS c0, CAST(p AS INT) AS p \
     FROM unnest(range(0, 20)) AS t(v) CROSS JOIN (VALUES (1), (2)) AS q(p)",
];

fn longs(values: impl IntoIterator<Item = i64>) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(values))
}

fn c0_key_schema() -> Schema {
    let long = || Type::Primitive(PrimitiveType::Long);
    Schema::builder()
        .with_fields(vec![
            Arc::new(NestedField::optional(10, "c0", long())),
            Arc::new(NestedField::optional(20, "key", long())),
        ])
        .build()
        .unwrap()
}

fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::task::block_in_place(|| tokio::runtime::Handle::current().block_on(f))
}

/// Scenario 10's data (c0 = 100, 200, 300 with keys 7, 8, 7), repeated with c0 + 300, and an
/// equality delete of key 7.
fn equality_delete_table(dir: &Path) -> String {
    let mut table = TableWriter::new(dir.join("ice"), c0_key_schema()).unwrap();
    let data = (0..2)
        .map(|i| {
            table
                .data_file(vec![
                    ("c0", 10, longs([100, 200, 300].map(|v| v + 300 * i))),
                    ("key", 20, longs([7, 8, 7])),
                ])
                .unwrap()
        })
        .collect();
    block_on(table.commit(data, vec![])).unwrap();
    let delete = table
        .equality_delete_file(vec![20], vec![("key", 20, longs([7]))])
        .unwrap();
    block_on(table.commit(vec![], vec![delete])).unwrap()
}

/// Snapshots 1001 append A (c0 = 1..=6), 1002 append B (c0 = 7..=12), 1003 overwrite A by
/// C (c0 = 1, 3, 5, 21, 23, 25): `table_changes('t', 1001, 1003)` reads B (insert, ordinal
/// 0), A (delete, ordinal 1) and C (insert, ordinal 1), three splits whose change columns
/// are constants.
fn changelog_table(dir: &Path) -> String {
    let mut table = TableWriter::new(dir.join("ice"), c0_key_schema()).unwrap();
    let file = |table: &mut TableWriter, c0: Vec<i64>| {
        let keys = longs(c0.iter().map(|v| v % 3));
        table
            .data_file(vec![("c0", 10, longs(c0)), ("key", 20, keys)])
            .unwrap()
    };
    let a = file(&mut table, (1..=6).collect());
    let a_path = a.file_path().to_string();
    block_on(table.commit(vec![a], vec![])).unwrap();
    let b = file(&mut table, (7..=12).collect());
    block_on(table.commit(vec![b], vec![])).unwrap();
    let c = file(&mut table, vec![1, 3, 5, 21, 23, 25]);
    block_on(table.overwrite(vec![c], &[&a_path])).unwrap()
}

/// A v3 table of two files (c0 = 0..8 and 8..16) with a position delete in each.
fn position_delete_table(dir: &Path) -> String {
    let mut table = TableWriter::new(dir.join("ice"), c0_key_schema())
        .unwrap()
        .with_format_version(iceberg::spec::FormatVersion::V3)
        .unwrap();
    let data: Vec<_> = (0..2)
        .map(|i| {
            table
                .data_file(vec![
                    ("c0", 10, longs((0..8).map(|v| v + 8 * i))),
                    ("key", 20, longs((0..8).map(|_| 1))),
                ])
                .unwrap()
        })
        .collect();
    let paths: Vec<String> = data.iter().map(|f| f.file_path().to_string()).collect();
    block_on(table.commit(data, vec![])).unwrap();
    let delete = table
        .position_delete_file(vec![(paths[0].as_str(), 3), (paths[1].as_str(), 6)])
        .unwrap();
    block_on(table.commit(vec![], vec![delete])).unwrap()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timing {
    BeforePrepare,
    AfterPrepare,
    MidSplit,
}

async fn context(dir: &Path, scenario: &Scenario, preload: usize) -> SessionContext {
    let config = SessionConfig::new()
        .with_target_partitions(1)
        .with_batch_size(2);
    let ctx = SessionContext::new_with_config(config);
    lakescan::register(&ctx).unwrap();
    ctx.sql(&format!("SET lakescan.preload_splits = {preload}"))
        .await
        .unwrap();
    let meta = scenario.iceberg.map(|f| f(dir)).unwrap_or_default();
    for statement in scenario.setup {
        let sql = statement
            .replace("$DIR", dir.to_str().unwrap())
            .replace("$META", &meta);
        ctx.sql(&sql).await.unwrap().collect().await.unwrap();
    }
    ctx
}

/// Rows as sorted text lines.
fn lines(batches: &[RecordBatch]) -> Vec<String> {
    let options = FormatOptions::default();
    let mut out = vec![];
    for batch in batches {
        let formatters: Vec<_> = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap())
            .collect();
        for row in 0..batch.num_rows() {
            let cells: Vec<String> = formatters
                .iter()
                .map(|f| f.value(row).to_string())
                .collect();
            out.push(cells.join("|"));
        }
    }
    out.sort();
    out
}

/// Metrics that count what a filter removed: splits, row groups or rows.
const REMOVALS: &[&str] = &[
    "splits_skipped",
    "splits_pruned_statistics",
    "row_groups_pruned_statistics",
    "rows_pruned_page_index",
    "rows_removed_reader_filters",
    "rows_removed_residual",
    "splits_pruned_dynamic_filter",
    "splits_stopped_dynamic_filter",
    "row_groups_pruned_dynamic_filter",
    "rows_removed_dynamic_filter",
];

/// The scenario's expected rows: its filter over its query, run by DataFusion over the
/// oracle's `MemTable` (no lakescan in that session).
async fn oracle(scenario: &Scenario) -> Vec<RecordBatch> {
    let ctx = SessionContext::new();
    for statement in scenario.oracle {
        ctx.sql(statement).await.unwrap().collect().await.unwrap();
    }
    let query = scenario.oracle_query.unwrap_or(scenario.query);
    ctx.sql(&format!(
        "SELECT * FROM ({query}) WHERE {}",
        scenario.filter
    ))
    .await
    .unwrap()
    .collect()
    .await
    .unwrap()
}

/// The counters of `scan`, summed over its partitions, by name.
fn metrics(scan: &LakeScanExec) -> std::collections::BTreeMap<String, usize> {
    let mut out = std::collections::BTreeMap::new();
    for metric in scan.metrics().unwrap_or_default().iter() {
        if let datafusion::physical_plan::metrics::MetricValue::Count { name, count } =
            metric.value()
        {
            *out.entry(name.to_string()).or_default() += count.value();
        }
    }
    out
}

fn rows(batches: &[RecordBatch]) -> usize {
    batches.iter().map(RecordBatch::num_rows).sum()
}

/// The scan of `query`, its output rows and the filter over its output schema.
async fn plan(ctx: &SessionContext, scenario: &Scenario) -> (LakeScanExec, Arc<dyn PhysicalExpr>) {
    let plan = ctx
        .sql(scenario.query)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let Some(scan) = plan.downcast_ref::<LakeScanExec>() else {
        panic!(
            "{}: the plan is not one LakeScanExec:\n{}",
            scenario.name,
            datafusion::physical_plan::displayable(plan.as_ref()).indent(true)
        );
    };
    let schema = DFSchema::try_from(scan.schema()).unwrap();
    let expr = ctx.parse_sql_expr(scenario.filter, &schema).unwrap();
    let filter = ctx.create_physical_expr(expr, &schema).unwrap();
    (scan.clone(), filter)
}

async fn run(scenario: &Scenario, preload: usize, timing: Timing) {
    let label = format!("{} [preload {preload}, {timing:?}]", scenario.name);
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path(), scenario, preload).await;
    let expected = oracle(scenario).await;
    let (scan, filter) = plan(&ctx, scenario).await;
    let unfiltered_scan = Arc::new(scan.clone());
    let unfiltered = collect(Arc::clone(&unfiltered_scan) as _, ctx.task_ctx())
        .await
        .unwrap();
    let plain = metrics(unfiltered_scan.as_ref());
    for (name, value) in scenario.mechanism {
        assert_eq!(
            plain.get(*name).copied(),
            Some(*value),
            "{label}: metric {name} of the scan without the dynamic filter: {plain:?}"
        );
    }

    let children: Vec<Arc<dyn PhysicalExpr>> = collect_columns(&filter)
        .into_iter()
        .map(|c| Arc::new(c) as Arc<dyn PhysicalExpr>)
        .collect();
    let dynamic = Arc::new(DynamicFilterPhysicalExpr::new(children, lit(true)));
    let (scan, _) = scan
        .with_pushed_filters(vec![Arc::clone(&dynamic) as _])
        .unwrap();
    let scan = scan.expect("the dynamic filter is pushed into the scan");
    let splits = scan.split_count();
    let fired = Arc::new(AtomicBool::new(false));
    let scan = match timing {
        Timing::BeforePrepare => {
            dynamic.update(Arc::clone(&filter)).unwrap();
            fired.store(true, Ordering::SeqCst);
            scan
        }
        Timing::AfterPrepare | Timing::MidSplit => {
            let (dynamic, filter, fired) = (
                Arc::clone(&dynamic),
                Arc::clone(&filter),
                Arc::clone(&fired),
            );
            // With preload, "after prepare" is after the second split was prepared on its
            // preload task: the filter arrives between its prepare and its takeover. The
            // first split's first batch waits for that preparation, so the first split is
            // still streaming when the filter arrives (without the wait it may be done first
            // and the filter has nothing left to act on).
            let preloaded = preload > 0 && splits > 1;
            let arrived = Arc::new((Mutex::new(false), Condvar::new()));
            scan.with_lifecycle_hook(LifecycleHook::new(move |event| {
                let (flag, signal) = &*arrived;
                if preloaded
                    && timing == Timing::AfterPrepare
                    && event == (SplitEvent::Batch { split: 0, batch: 0 })
                {
                    let guard = flag.lock().unwrap();
                    let (guard, wait) = signal
                        .wait_timeout_while(guard, Duration::from_secs(60), |done| !*done)
                        .unwrap();
                    assert!(
                        *guard && !wait.timed_out(),
                        "the next split was never preloaded"
                    );
                    return;
                }
                let now = match (timing, event) {
                    (
                        Timing::AfterPrepare,
                        SplitEvent::Prepared {
                            preloaded: p,
                            split,
                        },
                    ) => {
                        if preloaded {
                            p
                        } else {
                            split == 0
                        }
                    }
                    (Timing::MidSplit, SplitEvent::Batch { batch, .. }) => batch == 0,
                    _ => false,
                };
                if now && !fired.swap(true, Ordering::SeqCst) {
                    dynamic.update(Arc::clone(&filter)).unwrap();
                    *flag.lock().unwrap() = true;
                    signal.notify_all();
                }
            }))
        }
    };
    let scan = Arc::new(scan);
    let out = collect(Arc::clone(&scan) as _, ctx.task_ctx())
        .await
        .unwrap();
    assert!(
        fired.load(Ordering::SeqCst),
        "{label}: the hook never fired"
    );
    // What a join above the scan keeps: the rows that pass the filter.
    let kept: Vec<RecordBatch> = out
        .iter()
        .map(|b| {
            let mask = filter
                .evaluate(b)
                .unwrap()
                .into_array(b.num_rows())
                .unwrap();
            let mask = arrow::array::as_boolean_array(&mask);
            filter_record_batch(b, mask).unwrap()
        })
        .collect();
    assert_eq!(lines(&kept), lines(&expected), "{label}: rows");
    if std::env::var("MATRIX_DEBUG").is_ok() {
        eprintln!(
            "{label}: batches {:?}\n{}",
            out.iter().map(|b| b.num_rows()).collect::<Vec<_>>(),
            datafusion::physical_plan::displayable(scan.as_ref()).indent(true)
        );
        eprintln!("{:?}", scan.metrics());
    }
    assert!(
        rows(&out) < rows(&unfiltered),
        "{label}: the scan emitted {} of {} rows, the filter did not act inside it",
        rows(&out),
        rows(&unfiltered)
    );
    // The mechanism: the scan's own metrics say it removed more than without the filter
    // (the scans share their metrics: this run's are the total less the first run's).
    let total = metrics(scan.as_ref());
    let removed = |m: &std::collections::BTreeMap<String, usize>| -> usize {
        REMOVALS.iter().filter_map(|name| m.get(*name)).sum()
    };
    let this_run: std::collections::BTreeMap<String, usize> = total
        .iter()
        .map(|(k, v)| (k.clone(), v - plain.get(k).copied().unwrap_or(0)))
        .collect();
    assert!(
        removed(&this_run) > removed(&plain),
        "{label}: the scan's metrics show no removal by the filter: {this_run:?}"
    );
    // Only rows read before the filter arrived may fail it: none when it arrived before
    // the first batch, at most the first batch (2 rows) otherwise. A filter lost for a
    // split (as Velox's takeover can lose it) leaves that split's failing rows in the output.
    let early = match timing {
        Timing::BeforePrepare => 0,
        Timing::AfterPrepare if preload == 0 || splits == 1 => 0,
        Timing::AfterPrepare | Timing::MidSplit => 2,
    };
    assert!(
        rows(&out) - rows(&kept) <= early,
        "{label}: {} emitted rows fail the filter (at most {early} were read before it arrived)",
        rows(&out) - rows(&kept)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_scenarios_under_every_preload_and_filter_timing() {
    for scenario in SCENARIOS {
        for preload in [0, 1] {
            for timing in [
                Timing::BeforePrepare,
                Timing::AfterPrepare,
                Timing::MidSplit,
            ] {
                run(scenario, preload, timing).await;
            }
        }
    }
}
