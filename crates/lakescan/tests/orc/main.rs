//! ORC data files in Hive tables: files other writers wrote (Apache ORC's examples, with
//! their known contents: `examples.rs`), files written here with every type the reader maps (compared with
//! the same rows in memory), stripe and row-group pruning, byte-range splits, and bad input.

// Test helpers outside `#[test]` functions set up fixtures: a failure there is the test's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array,
    ListArray, RecordBatch, StringArray, StructArray, TimestampMicrosecondArray,
};
use arrow::datatypes::{DataType, Field, Fields, Int32Type, Schema, TimeUnit};
use arrow::util::pretty::pretty_format_batches;
use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};
use lakescan_testkit::orc::{OrcWriteOptions, write_orc};

mod examples;
mod old_writers;

fn testdata(rel: &str) -> String {
    format!("{}/../../testdata/{rel}", env!("CARGO_MANIFEST_DIR"))
}

fn session() -> SessionContext {
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
    lakescan::register(&ctx).expect("registering lakescan on a fresh session cannot fail");
    ctx
}

/// The rows of `sql`, sorted, as text.
async fn rows(ctx: &SessionContext, sql: &str) -> datafusion::common::Result<String> {
    let batches = ctx.sql(sql).await?.collect().await?;
    let text = pretty_format_batches(&batches)?.to_string();
    let mut lines: Vec<&str> = text.lines().collect();
    if lines.len() > 4 {
        let end = lines.len() - 1;
        lines[3..end].sort_unstable();
    }
    Ok(lines.join("\n"))
}

/// A directory holding `files` (name, bytes).
fn table_dir(files: &[(&str, Vec<u8>)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    dir
}

async fn create(ctx: &SessionContext, name: &str, dir: &Path, options: &str) {
    let sql = format!(
        "CREATE EXTERNAL TABLE {name} STORED AS HIVE LOCATION '{}' {options}",
        dir.display()
    );
    ctx.sql(&sql).await.unwrap().collect().await.unwrap();
}

/// The sum of metric `name` in an `EXPLAIN ANALYZE` text.
fn metric(plan: &str, name: &str) -> usize {
    let pattern = format!("{name}=");
    plan.match_indices(&pattern)
        .filter_map(|(at, _)| {
            let rest = &plan[at + pattern.len()..];
            // DataFusion prints large counts as `4.00 K`, `1.20 M`.
            let number: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let value = number.parse::<f64>().ok()?;
            let scale = match rest[number.len()..].trim_start().chars().next() {
                Some('K') => 1e3,
                Some('M') => 1e6,
                Some('B') => 1e9,
                _ => 1.0,
            };
            Some((value * scale).round() as usize)
        })
        .sum()
}

/// Rows with every type the writer and reader map, nulls at every level.
fn typed_batch(n: usize, offset: i64) -> RecordBatch {
    let point = Fields::from(vec![
        Field::new("x", DataType::Int32, true),
        Field::new("label", DataType::Utf8, true),
    ]);
    let ids: Vec<i64> = (0..n as i64).map(|i| i + offset).collect();
    let id: ArrayRef = Arc::new(Int64Array::from(ids.clone()));
    let small: ArrayRef = Arc::new(Int32Array::from_iter(
        ids.iter()
            .map(|i| (i % 7 != 3).then_some((i % 1000) as i32)),
    ));
    let price: ArrayRef = Arc::new(
        Decimal128Array::from_iter(
            ids.iter()
                .map(|i| (i % 11 != 0).then_some(i128::from(i * 137 - 5000))),
        )
        .with_precision_and_scale(12, 2)
        .unwrap(),
    );
    let ratio: ArrayRef = Arc::new(Float64Array::from_iter(
        ids.iter()
            .map(|i| (i % 5 != 1).then_some(*i as f64 / 8.0 - 3.0)),
    ));
    let name: ArrayRef = Arc::new(StringArray::from_iter(
        ids.iter()
            .map(|i| (i % 9 != 4).then(|| format!("name-{:05}", i % 400))),
    ));
    let flag: ArrayRef = Arc::new(BooleanArray::from_iter(
        ids.iter().map(|i| (i % 13 != 2).then_some(i % 3 == 0)),
    ));
    let day: ArrayRef = Arc::new(Date32Array::from_iter(
        ids.iter()
            .map(|i| (i % 17 != 5).then_some(18_000 + (*i % 900) as i32)),
    ));
    let at: ArrayRef = Arc::new(TimestampMicrosecondArray::from_iter(ids.iter().map(|i| {
        (i % 19 != 7).then_some(1_600_000_000_000_000 + i * 1_000_123 - 50_000_000_000)
    })));
    let xs = Int32Array::from_iter(ids.iter().map(|i| (i % 4 != 0).then_some(*i as i32 * 2)));
    let labels = StringArray::from_iter(ids.iter().map(|i| (i % 6 != 0).then(|| format!("p{i}"))));
    let nulls = arrow::buffer::NullBuffer::from_iter(ids.iter().map(|i| i % 10 != 9));
    let pt: ArrayRef = Arc::new(
        StructArray::try_new(point, vec![Arc::new(xs), Arc::new(labels)], Some(nulls)).unwrap(),
    );
    let tags: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(
        ids.iter().map(|i| {
            (i % 8 != 6).then(|| {
                (0..(i % 4))
                    .map(|k| (k % 3 != 2).then_some((i + k) as i32))
                    .collect::<Vec<_>>()
            })
        }),
    ));
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("small", DataType::Int32, true),
        Field::new("price", DataType::Decimal128(12, 2), true),
        Field::new("ratio", DataType::Float64, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("flag", DataType::Boolean, true),
        Field::new("day", DataType::Date32, true),
        Field::new("at", DataType::Timestamp(TimeUnit::Microsecond, None), true),
        Field::new("pt", pt.data_type().clone(), true),
        Field::new("tags", tags.data_type().clone(), true),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![id, small, price, ratio, name, flag, day, at, pt, tags],
    )
    .unwrap()
}

/// The same rows in memory and in ORC files (two files, several stripes and row-index
/// groups each): every query gives the same rows.
#[tokio::test]
async fn written_files_read_as_their_rows() {
    let (a, b) = (typed_batch(25_000, 0), typed_batch(7_000, 25_000));
    let schema = a.schema();
    let options = OrcWriteOptions {
        stripe_rows: 9_000,
        row_index_stride: 1_000,
        ..Default::default()
    };
    let dir = table_dir(&[
        (
            "f1.orc",
            write_orc(&schema, std::slice::from_ref(&a), &options).unwrap(),
        ),
        (
            "f2.orc",
            write_orc(&schema, std::slice::from_ref(&b), &options).unwrap(),
        ),
    ]);
    let ctx = session();
    let columns = "id BIGINT, small INT, price DECIMAL(12, 2), ratio DOUBLE, name VARCHAR, \
                   flag BOOLEAN, day DATE, at TIMESTAMP, \
                   pt STRUCT<x: INT, label: VARCHAR>, tags ARRAY<INT>";
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE t ({columns}) STORED AS HIVE LOCATION '{}' \
         OPTIONS ('format' 'orc', 'split_size' '40000')",
        dir.path().display()
    ))
    .await
    .unwrap()
    .collect()
    .await
    .unwrap();
    let memory = MemTable::try_new(schema, vec![vec![a, b]]).unwrap();
    ctx.register_table("m", Arc::new(memory)).unwrap();
    let queries = [
        "SELECT * FROM {t}",
        "SELECT id, name FROM {t} WHERE small = 42",
        "SELECT id FROM {t} WHERE small BETWEEN 100 AND 120 AND flag",
        "SELECT count(*), sum(price), min(price), max(price) FROM {t} WHERE price > 1000",
        "SELECT id, ratio FROM {t} WHERE ratio < -2.5 OR ratio > 3000",
        "SELECT name, count(*) FROM {t} WHERE name >= 'name-00390' GROUP BY name",
        "SELECT id, day FROM {t} WHERE day = DATE '2019-04-01'",
        "SELECT id, at FROM {t} WHERE at < TIMESTAMP '2020-09-12 00:00:00'",
        "SELECT id, pt['label'] FROM {t} WHERE pt['x'] = 4002",
        "SELECT id, tags FROM {t} WHERE id > 31990",
        "SELECT count(*) FROM {t} WHERE pt IS NULL",
        "SELECT count(*), count(small), count(name), count(tags) FROM {t}",
        "SELECT id FROM {t} WHERE id = 24999 OR id = 25000",
    ];
    for q in queries {
        let want = rows(&ctx, &q.replace("{t}", "m AS x")).await.unwrap();
        let got = rows(&ctx, &q.replace("{t}", "t AS x")).await.unwrap();
        assert_eq!(got, want, "{q}");
    }
}

/// Rows of nested columns with wide members: `s STRUCT<a INT, big VARCHAR, c STRUCT<x INT,
/// y VARCHAR>>`, `l ARRAY<STRUCT<p INT, q VARCHAR>>`, `m MAP<VARCHAR, STRUCT<u INT, v VARCHAR>>`.
fn nested_batch(n: usize) -> RecordBatch {
    use arrow::array::{Array, MapArray};
    use arrow::buffer::{NullBuffer, OffsetBuffer};
    let ids: Vec<i64> = (0..n as i64).collect();
    let wide = |tag: &str, i: i64| format!("{tag}-{i:06}-{}", "w".repeat(60));
    // `s` is null every 11th row, and so are its members there (as a writer stores them).
    let s_null = |i: i64| i % 11 == 10;
    let int = |f: fn(i64) -> i64| -> ArrayRef {
        Arc::new(Int32Array::from_iter(
            ids.iter()
                .map(|&i| (i % 7 != 3 && !s_null(i)).then_some(f(i) as i32)),
        ))
    };
    let text = |tag: &'static str| -> ArrayRef {
        Arc::new(StringArray::from_iter(
            ids.iter()
                .map(|&i| (i % 5 != 2 && !s_null(i)).then(|| wide(tag, i))),
        ))
    };
    let pair = |a: &str, b: &str| {
        Fields::from(vec![
            Field::new(a, DataType::Int32, true),
            Field::new(b, DataType::Utf8, true),
        ])
    };
    let s_nulls = NullBuffer::from_iter(ids.iter().map(|&i| !s_null(i)));
    let c = StructArray::try_new(
        pair("x", "y"),
        vec![int(|i| i * 3), text("y")],
        Some(s_nulls.clone()),
    )
    .unwrap();
    let s_fields = Fields::from(vec![
        Field::new("a", DataType::Int32, true),
        Field::new("big", DataType::Utf8, true),
        Field::new("c", c.data_type().clone(), true),
    ]);
    let s = StructArray::try_new(
        s_fields,
        vec![int(|i| i), text("big"), Arc::new(c)],
        Some(s_nulls),
    )
    .unwrap();
    // Two elements / entries per row; `l` null every 13th row.
    let items = |a: &str, b: &str, tag: &'static str| {
        let values: Vec<i64> = ids.iter().flat_map(|&i| [i * 2, i * 2 + 1]).collect();
        let ints = Int32Array::from_iter(values.iter().map(|&v| Some(v as i32)));
        let texts = StringArray::from_iter(values.iter().map(|&v| Some(wide(tag, v))));
        StructArray::try_new(pair(a, b), vec![Arc::new(ints), Arc::new(texts)], None).unwrap()
    };
    let offsets = OffsetBuffer::from_lengths(ids.iter().map(|_| 2));
    let l_items = items("p", "q", "q");
    let l = ListArray::try_new(
        Arc::new(Field::new("item", l_items.data_type().clone(), true)),
        offsets.clone(),
        Arc::new(l_items),
        Some(NullBuffer::from_iter(ids.iter().map(|i| i % 13 != 12))),
    )
    .unwrap();
    let m_values = items("u", "v", "v");
    let keys: Vec<String> = ids
        .iter()
        .flat_map(|i| [format!("k{}", i % 3), "z".to_string()])
        .collect();
    let entries = StructArray::try_new(
        Fields::from(vec![
            Field::new("key", DataType::Utf8, false),
            Field::new("value", m_values.data_type().clone(), true),
        ]),
        vec![Arc::new(StringArray::from(keys)), Arc::new(m_values)],
        None,
    )
    .unwrap();
    let m = MapArray::try_new(
        Arc::new(Field::new("key_value", entries.data_type().clone(), false)),
        offsets,
        entries,
        None,
        false,
    )
    .unwrap();
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("s", s.data_type().clone(), true),
        Field::new("l", l.data_type().clone(), true),
        Field::new("m", m.data_type().clone(), true),
    ]);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids)),
        Arc::new(s),
        Arc::new(l),
        Arc::new(m),
    ];
    RecordBatch::try_new(Arc::new(schema), columns).unwrap()
}

/// Subfield pruning on ORC: a query reading some members of a struct (at the top, inside a struct,
/// inside list elements and map values) decodes and fetches only those members' columns,
/// and gives the rows the same query gives over the rows in memory.
#[tokio::test]
async fn nested_members_are_projected() {
    let batch = nested_batch(6_000);
    let schema = batch.schema();
    let options = OrcWriteOptions {
        stripe_rows: 2_500,
        ..Default::default()
    };
    let orc = write_orc(&schema, std::slice::from_ref(&batch), &options).unwrap();
    let dir = table_dir(&[("f.orc", orc)]);
    let ctx = session();
    create(&ctx, "t", dir.path(), "OPTIONS ('format' 'orc')").await;
    let memory = MemTable::try_new(schema, vec![vec![batch]]).unwrap();
    ctx.register_table("mem", Arc::new(memory)).unwrap();
    let queries = [
        "SELECT id, x.s['a'] FROM {t} WHERE id % 97 = 0",
        "SELECT id, x.s['c']['x'], x.s['a'] FROM {t} WHERE x.s['c']['y'] LIKE '%-000123-%'",
        "SELECT id, x.s['c'] FROM {t} WHERE x.s['a'] BETWEEN 10 AND 40",
        "SELECT count(*), sum(x.s['c']['x']) FROM {t} WHERE x.s IS NULL OR x.s['a'] > 5000",
        "SELECT id, x.l[2]['p'] FROM {t} WHERE id < 30",
        "SELECT id, x.m['z']['u'], x.m['k1']['u'] FROM {t} WHERE id < 30",
        "SELECT id, x.s, x.l, x.m FROM {t} WHERE id % 1000 = 7",
    ];
    for q in queries {
        let want = rows(&ctx, &q.replace("{t}", "mem AS x")).await.unwrap();
        let got = rows(&ctx, &q.replace("{t}", "t AS x")).await.unwrap();
        assert_eq!(got, want, "{q}");
    }
    // The wide members are neither fetched nor decoded when no query part reads them. One
    // partition: DataFusion moves the member extractions into the scan only without a
    // round-robin between them.
    let single = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(1));
    lakescan::register(&single).unwrap();
    create(&single, "t", dir.path(), "OPTIONS ('format' 'orc')").await;
    let bytes = |sql: &'static str| {
        let ctx = single.clone();
        async move {
            let plan = rows(&ctx, &format!("EXPLAIN ANALYZE {sql}")).await.unwrap();
            metric(&plan, "bytes_read")
        }
    };
    let narrow = bytes("SELECT s['a'], s['c']['x'], l[1]['p'], m['z']['u'] FROM t").await;
    let whole = bytes("SELECT s, l, m FROM t").await;
    assert!(
        narrow * 5 < whole,
        "{narrow} bytes for the members, {whole} for the columns"
    );
}

/// The optimizer's statistics of a Hive ORC table come from the files' footers: `count(*)`
/// is answered without a scan (exact row counts), while `max` still reads (ORC's bounds
/// are inexact) and gives the true value; the null counts are the files' (the scan reports
/// them as estimates, as for Parquet).
#[tokio::test]
async fn orc_footers_give_the_optimizer_statistics() {
    let (a, b) = (typed_batch(3_000, 0), typed_batch(2_000, 3_000));
    let schema = a.schema();
    let options = OrcWriteOptions::default();
    let dir = table_dir(&[
        (
            "f1.orc",
            write_orc(&schema, std::slice::from_ref(&a), &options).unwrap(),
        ),
        (
            "f2.orc",
            write_orc(&schema, std::slice::from_ref(&b), &options).unwrap(),
        ),
    ]);
    let ctx = session();
    create(&ctx, "t", dir.path(), "OPTIONS ('format' 'orc')").await;
    let memory = MemTable::try_new(schema, vec![vec![a, b]]).unwrap();
    ctx.register_table("m", Arc::new(memory)).unwrap();
    let q = "SELECT count(*) FROM {t}";
    let plan = rows(&ctx, &format!("EXPLAIN {}", q.replace("{t}", "t")))
        .await
        .unwrap();
    assert!(
        !plan.contains("LakeScanExec"),
        "answered from statistics: {plan}"
    );
    let want = rows(&ctx, &q.replace("{t}", "m")).await.unwrap();
    assert_eq!(rows(&ctx, &q.replace("{t}", "t")).await.unwrap(), want);
    // The null counts: `small` is NULL in every 7th row, `name` in every 9th.
    let stats = ctx
        .table("t")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap()
        .partition_statistics(None)
        .unwrap();
    let nulls = |k: usize| stats.column_statistics[k].null_count.get_value().copied();
    let expected = |every: i64, at: i64| (0..5_000).filter(|i| i % every == at).count();
    assert_eq!(stats.num_rows.get_value(), Some(&5_000));
    assert_eq!(nulls(1), Some(expected(7, 3)), "{stats:?}");
    assert_eq!(nulls(4), Some(expected(9, 4)), "{stats:?}");
    // The planner's statistics read each file's tail, which the scan then finds in the
    // session's cache: it reads fewer bytes than a scan planned without statistics.
    let scan_bytes = |collect: bool| {
        let dir = dir.path().to_path_buf();
        async move {
            let mut config = SessionConfig::new().with_target_partitions(2);
            config.options_mut().execution.collect_statistics = collect;
            let ctx = SessionContext::new_with_config(config);
            lakescan::register(&ctx).unwrap();
            create(&ctx, "t", &dir, "OPTIONS ('format' 'orc')").await;
            let plan = rows(&ctx, "EXPLAIN ANALYZE SELECT sum(id) FROM t")
                .await
                .unwrap();
            metric(&plan, "bytes_read")
        }
    };
    let (cached, read) = (scan_bytes(true).await, scan_bytes(false).await);
    assert!(
        cached < read,
        "{cached} bytes with the tails kept, {read} without"
    );
    let q = "SELECT max(id) AS a, min(small) AS b FROM {t}";
    let plan = rows(&ctx, &format!("EXPLAIN {}", q.replace("{t}", "t")))
        .await
        .unwrap();
    assert!(
        plan.contains("LakeScanExec"),
        "bounds are not answers: {plan}"
    );
    let want = rows(&ctx, &q.replace("{t}", "m")).await.unwrap();
    assert_eq!(rows(&ctx, &q.replace("{t}", "t")).await.unwrap(), want);
}

/// A file of several stripes read in byte ranges: every stripe once (the midpoint rule),
/// whatever the split size.
#[tokio::test]
async fn byte_range_splits_read_every_stripe_once() {
    let batch = typed_batch(30_000, 0);
    let options = OrcWriteOptions {
        stripe_rows: 4_000,
        row_index_stride: 1_000,
        ..Default::default()
    };
    let dir = table_dir(&[(
        "f.orc",
        write_orc(&batch.schema(), &[batch], &options).unwrap(),
    )]);
    for split_size in ["1000", "50000", "123457", "100000000"] {
        let ctx = session();
        create(
            &ctx,
            "t",
            dir.path(),
            &format!("OPTIONS ('split_size' '{split_size}')"),
        )
        .await;
        let got = rows(&ctx, "SELECT count(*), sum(id), count(DISTINCT id) FROM t")
            .await
            .unwrap();
        assert!(
            got.contains("| 30000    | 449985000 | 30000 "),
            "{split_size}: {got}"
        );
    }
}

/// Hidden columns: `$row_index` is the file position, whatever split and filter read it.
#[tokio::test]
async fn row_index_is_the_file_position() {
    let batch = typed_batch(12_000, 0);
    let options = OrcWriteOptions {
        stripe_rows: 5_000,
        row_index_stride: 1_000,
        ..Default::default()
    };
    let dir = table_dir(&[(
        "f.orc",
        write_orc(&batch.schema(), &[batch], &options).unwrap(),
    )]);
    let ctx = session();
    create(
        &ctx,
        "t",
        dir.path(),
        "OPTIONS ('hidden_columns' 'all', 'split_size' '30000')",
    )
    .await;
    let got = rows(&ctx, "SELECT count(*) FROM t WHERE \"$row_index\" <> id")
        .await
        .unwrap();
    assert!(got.contains("| 0 "), "{got}");
    let got = rows(
        &ctx,
        "SELECT id, \"$row_index\" FROM t WHERE \"$row_index\" IN (5, 7777, 11999) AND small IS NOT NULL",
    )
    .await
    .unwrap();
    for id in ["5", "7777", "11999"] {
        assert!(got.contains(&format!("| {id} ")), "{got}");
    }
}

/// Bad files: an error naming the file and what is wrong, never a panic or rows.
#[tokio::test]
async fn bad_files_are_errors_naming_them() {
    let batch = typed_batch(3_000, 0);
    let good = write_orc(&batch.schema(), &[batch], &OrcWriteOptions::default()).unwrap();
    let declared = "(id BIGINT, small INT) STORED AS HIVE";
    let mut cases: Vec<(&str, Vec<u8>, &str)> = vec![];
    // Truncated: the postscript and footer gone.
    cases.push((
        "truncated",
        good[..good.len() / 2].to_vec(),
        "cannot read ORC file",
    ));
    // The postscript length byte past the file.
    let mut bad_ps = good.clone();
    *bad_ps.last_mut().unwrap() = 255;
    cases.push(("postscript", bad_ps, "postscript"));
    // An unknown codec: the postscript's compression field (tag 2) set to 9.
    let mut codec = good.clone();
    let ps_len = *codec.last().unwrap() as usize;
    let ps_start = codec.len() - 1 - ps_len;
    let at = (ps_start..codec.len() - 1)
        .find(|&i| codec[i] == 0x10 && codec[i + 1] == 0)
        .expect("the writer writes compression NONE as 0x10 0x00");
    codec[at + 1] = 9;
    cases.push(("codec", codec, "unknown compression kind 9"));
    // A corrupt stripe footer (Apache ORC's example: fewer encodings than columns).
    let bad_footer = std::fs::read(testdata("orc/stripe_footer_bad_column_encodings.orc")).unwrap();
    cases.push(("stripe_footer", bad_footer, "cannot read ORC file"));
    // A Parquet file in an ORC table.
    cases.push(("parquet", parquet_bytes(), "it is a PARQUET file"));
    for (name, bytes, want) in cases {
        let dir = table_dir(&[("f.orc", bytes)]);
        let ctx = session();
        // Apache's example holds decimals d1, d2, …: read by name, not by position.
        let declared = match name {
            "stripe_footer" => "(d1 DECIMAL(9, 0), d2 DECIMAL(10, 0)) STORED AS HIVE",
            _ => declared,
        };
        let sql = format!(
            "CREATE EXTERNAL TABLE t {declared} LOCATION '{}' OPTIONS ('format' 'orc')",
            dir.path().display()
        );
        ctx.sql(&sql).await.unwrap().collect().await.unwrap();
        let err = rows(&ctx, "SELECT * FROM t")
            .await
            .expect_err(name)
            .to_string();
        assert!(err.contains(want), "{name}: {err}");
        assert!(err.contains("f.orc"), "{name}: {err}");
    }
}

/// Stripe statistics only prune: a file whose statistics do not decode is read whole, as
/// Java reads it (its statistics are read only when a filter asks), with every row.
#[tokio::test]
async fn undecodable_stripe_statistics_are_left_unread() {
    let batch = typed_batch(5_000, 0);
    let options = OrcWriteOptions {
        stripe_rows: 2_000,
        ..Default::default()
    };
    let mut bytes = write_orc(&batch.schema(), &[batch], &options).unwrap();
    let metadata = lakescan_testkit::orc::metadata_section(&bytes).unwrap();
    assert!(metadata.len() > 4);
    for b in &mut bytes[metadata] {
        *b = 0xff;
    }
    let dir = table_dir(&[("f.orc", bytes)]);
    let ctx = session();
    create(&ctx, "t", dir.path(), "").await;
    let got = rows(&ctx, "SELECT count(*), sum(id) FROM t WHERE small < 500")
        .await
        .unwrap();
    // `small` is `id % 1000`, NULL where `id % 7 == 3` (`typed_batch`).
    let kept: Vec<i64> = (0..5_000)
        .filter(|i| i % 7 != 3 && i % 1000 < 500)
        .collect();
    let sum: i64 = kept.iter().sum();
    assert!(
        got.contains(&format!("| {} ", kept.len())) && got.contains(&format!("| {sum} ")),
        "{got}"
    );
}

/// An ORC file in a Parquet table: the error says which format it is.
#[tokio::test]
async fn orc_file_in_a_parquet_table_is_named() {
    let batch = typed_batch(100, 0);
    let orc = write_orc(&batch.schema(), &[batch], &OrcWriteOptions::default()).unwrap();
    let dir = table_dir(&[("a.parquet", parquet_bytes()), ("b.orc", orc)]);
    let ctx = session();
    create(&ctx, "t", dir.path(), "").await;
    let err = rows(&ctx, "SELECT * FROM t").await.unwrap_err().to_string();
    assert!(
        err.contains("b.orc") && err.contains("it is an ORC file"),
        "{err}"
    );
}

/// Hive ACID tables are not read: `NotImplemented` naming the table.
#[tokio::test]
async fn acid_tables_are_not_implemented() {
    let batch = typed_batch(10, 0);
    let orc = write_orc(&batch.schema(), &[batch], &OrcWriteOptions::default()).unwrap();
    let dir = table_dir(&[("delta_0000001_0000001/bucket_00000", orc)]);
    let ctx = session();
    let sql = format!(
        "CREATE EXTERNAL TABLE acid_t STORED AS HIVE LOCATION '{}'",
        dir.path().display()
    );
    let err = ctx.sql(&sql).await.unwrap_err().to_string();
    assert!(err.contains("acid_t") && err.contains("Hive ACID"), "{err}");
    let sql = format!(
        "CREATE EXTERNAL TABLE acid_u (id BIGINT) STORED AS HIVE LOCATION '{}' \
         OPTIONS ('transactional' 'true')",
        dir.path().display()
    );
    let err = ctx.sql(&sql).await.unwrap_err().to_string();
    assert!(
        err.contains("not implemented")
            || err.contains("NotImplemented")
            || err.contains("does not read Hive ACID"),
        "{err}"
    );
}

fn parquet_bytes() -> Vec<u8> {
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)])),
        vec![Arc::new(Int64Array::from(vec![1, 2, 3]))],
    )
    .unwrap();
    let mut out = vec![];
    let mut writer = parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    out
}
