//! Apache ORC's example files (`testdata/orc/`, copied from `apache/orc`'s `examples/`),
//! each against its known contents: files of the Java writer and of old writers, files with
//! row indexes and stripe statistics, corrupt files and files of an unstable format.

use std::io::Read;

use crate::{create, metric, rows, session, table_dir, testdata};

fn expected_json(name: &str) -> Vec<serde_json::Value> {
    let mut text = String::new();
    let file = std::fs::File::open(testdata(&format!("orc/expected/{name}.jsn.gz"))).unwrap();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn copy_example(name: &str) -> tempfile::TempDir {
    let bytes = std::fs::read(testdata(&format!("orc/{name}.orc"))).unwrap();
    table_dir(&[("000000_0", bytes)])
}

/// Apache ORC's `TestOrcFile.test1.orc` (zlib, Java writer): every primitive, a struct of a
/// list of structs, a list of structs and a map, as its expected JSON says.
#[tokio::test]
async fn apache_test1_reads_its_known_rows() {
    let dir = copy_example("TestOrcFile.test1");
    let ctx = session();
    create(&ctx, "t", dir.path(), "").await;
    let expected = expected_json("TestOrcFile.test1");
    let batches = ctx
        .sql(
            "SELECT boolean1, byte1, short1, int1, long1, double1, string1, \
             middle['list'][2]['string1'] AS m, cardinality(list) AS n, \
             list[1]['int1'] AS l1, cardinality(map) AS k FROM t",
        )
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let batch = arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap();
    assert_eq!(batch.num_rows(), expected.len());
    for (i, row) in expected.iter().enumerate() {
        let scalar = |c: usize| {
            datafusion::common::ScalarValue::try_from_array(batch.column(c), i)
                .unwrap()
                .to_string()
        };
        assert_eq!(scalar(0), row["boolean1"].to_string(), "row {i}");
        assert_eq!(scalar(1), row["byte1"].to_string(), "row {i}");
        assert_eq!(scalar(2), row["short1"].to_string(), "row {i}");
        assert_eq!(scalar(3), row["int1"].to_string(), "row {i}");
        assert_eq!(scalar(4), row["long1"].to_string(), "row {i}");
        assert_eq!(
            scalar(5).parse::<f64>().unwrap(),
            row["double1"].as_f64().unwrap()
        );
        assert_eq!(scalar(6), row["string1"].as_str().unwrap(), "row {i}");
        let middle = &row["middle"]["list"][1]["string1"];
        assert_eq!(scalar(7), middle.as_str().unwrap(), "row {i}");
        let list = row["list"].as_array().unwrap();
        assert_eq!(scalar(8), list.len().to_string(), "row {i}");
        assert_eq!(scalar(9), list[0]["int1"].to_string(), "row {i}");
        let map = row["map"].as_array().unwrap();
        assert_eq!(scalar(10), map.len().to_string(), "row {i}");
    }
}

/// Files of writers before ORC 0.12 and Hive 0.13: `orc-file-11-format.orc` (Hive 0.11: no
/// metadata section and no length for it in the postscript; an unbounded decimal column)
/// and `orc_split_elim.orc` (a decimal without precision). They read as Java reads them,
/// the decimals as `decimal(38,10)`, with their expected rows (whose decimals the dump
/// printed with 6 digits, cut: ours differ by less than 1e-6) and wall-clock timestamps.
#[tokio::test]
async fn apache_files_of_old_writers_read() {
    for (name, columns) in [
        (
            "orc-file-11-format",
            "string1, CAST(ts AS VARCHAR), decimal1, int1",
        ),
        (
            "orc_split_elim",
            "string1, CAST(ts AS VARCHAR), decimal1, userid",
        ),
    ] {
        let dir = copy_example(name);
        let ctx = session();
        create(
            &ctx,
            "t",
            dir.path(),
            "OPTIONS ('hidden_columns' '$row_index')",
        )
        .await;
        let expected = expected_json(name);
        let types = rows(&ctx, "SELECT arrow_typeof(decimal1) AS t FROM t LIMIT 1")
            .await
            .unwrap();
        assert!(types.contains("Decimal128(38, 10)"), "{name}: {types}");
        let batches = ctx
            .sql(&format!(
                "SELECT {columns}, CAST(decimal1 AS DOUBLE) AS d FROM t ORDER BY \"$row_index\""
            ))
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let batch = arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap();
        assert_eq!(batch.num_rows(), expected.len(), "{name}");
        let last = columns.rsplit(", ").next().unwrap();
        for (i, row) in expected.iter().enumerate() {
            let text = |c: usize| {
                datafusion::common::ScalarValue::try_from_array(batch.column(c), i)
                    .unwrap()
                    .to_string()
            };
            assert_eq!(text(0), row["string1"].as_str().unwrap(), "{name} row {i}");
            // "2000-03-12 15:00:00.0" against "2000-03-12T15:00:00".
            let ts = row["ts"].as_str().unwrap().replace(' ', "T");
            let ts = ts.strip_suffix(".0").unwrap_or(&ts);
            assert!(
                text(1).starts_with(ts),
                "{name} row {i}: {} vs {ts}",
                text(1)
            );
            let d = text(4).parse::<f64>().unwrap();
            let want = row["decimal1"].as_f64().unwrap();
            assert!(
                (d - want).abs() < 1e-6 * want.abs().max(1.0),
                "{name} row {i}: {d} vs {want}"
            );
            assert_eq!(text(3), row[last].to_string(), "{name} row {i}");
        }
    }
}

/// `orc_index_int_string.orc` (Hive's `_col0`, `_col1` names, a row index): the whole file,
/// and a point filter that the row index narrows to one 1 000-row group.
#[tokio::test]
async fn apache_row_index_file_prunes_row_groups() {
    let dir = copy_example("orc_index_int_string");
    let ctx = session();
    create(&ctx, "t", dir.path(), "").await;
    let expected = expected_json("orc_index_int_string");
    let sum: i64 = expected.iter().map(|r| r["_col0"].as_i64().unwrap()).sum();
    let got = rows(&ctx, "SELECT count(*), sum(_col0) FROM t")
        .await
        .unwrap();
    assert!(got.contains(&format!("| {} ", expected.len())), "{got}");
    assert!(got.contains(&sum.to_string()), "{got}");
    let want = expected
        .iter()
        .find(|r| r["_col0"] == 4000)
        .map(|r| r["_col1"].as_str().unwrap().to_string())
        .unwrap();
    let got = rows(&ctx, "SELECT _col1 FROM t WHERE _col0 = 4000")
        .await
        .unwrap();
    assert!(got.contains(&format!("| {want} ")), "{got}");
    let plan = rows(
        &ctx,
        "EXPLAIN ANALYZE SELECT _col1 FROM t WHERE _col0 = 4000",
    )
    .await
    .unwrap();
    let pruned = metric(&plan, "rows_pruned_page_index");
    assert!(pruned >= 4000, "row groups pruned: {pruned}\n{plan}");
}

/// The same file under declared names: Hive's positional `_col0`, `_col1` columns are the
/// table's columns in declared order (as Hive and Trino read them), not missing columns.
#[tokio::test]
async fn positional_columns_read_as_the_declared_ones() {
    let dir = copy_example("orc_index_int_string");
    let ctx = session();
    let sql = format!(
        "CREATE EXTERNAL TABLE t (id INT, label VARCHAR) STORED AS HIVE LOCATION '{}' \
         OPTIONS ('format' 'orc')",
        dir.path().display()
    );
    ctx.sql(&sql).await.unwrap().collect().await.unwrap();
    let got = rows(&ctx, "SELECT label FROM t WHERE id = 4000")
        .await
        .unwrap();
    assert!(got.contains("| 4000 "), "{got}");
    let got = rows(&ctx, "SELECT count(id), count(label) FROM t")
        .await
        .unwrap();
    assert_eq!(got.matches("| 6000 ").count(), 2, "{got}");
}

/// `TestOrcFile.testStripeLevelStats.orc`: 11 000 rows in stripes of one value each; a
/// filter on a value skips the other stripes by their statistics.
#[tokio::test]
async fn apache_stripe_statistics_prune_stripes() {
    let dir = copy_example("TestOrcFile.testStripeLevelStats");
    let ctx = session();
    create(&ctx, "t", dir.path(), "").await;
    let expected = expected_json("TestOrcFile.testStripeLevelStats");
    let threes = expected.iter().filter(|r| r["int1"] == 3).count();
    let got = rows(&ctx, "SELECT count(*) FROM t WHERE int1 = 3")
        .await
        .unwrap();
    assert!(got.contains(&format!("| {threes} ")), "{got}");
    let plan = rows(
        &ctx,
        "EXPLAIN ANALYZE SELECT count(*) FROM t WHERE int1 = 3",
    )
    .await
    .unwrap();
    assert!(metric(&plan, "row_groups_pruned_statistics") >= 1, "{plan}");
}

/// `decimal.orc`: 6 000 decimals (2 000 NULL) with their sum, minimum and maximum.
#[tokio::test]
async fn apache_decimal_file() {
    let dir = copy_example("decimal");
    let ctx = session();
    create(&ctx, "t", dir.path(), "").await;
    let got = rows(
        &ctx,
        "SELECT count(*), count(_col0), CAST(sum(_col0) AS VARCHAR), min(_col0), max(_col0) FROM t",
    )
    .await
    .unwrap();
    for want in ["6000", "4000", "1998301.09900", "-1000.50000", "1999.20000"] {
        assert!(got.contains(want), "{want} in {got}");
    }
}

/// Apache ORC's corrupt examples (dictionary streams missing, negative dictionary lengths):
/// errors naming the file, whatever column a query reads.
#[tokio::test]
async fn apache_corrupt_files_are_errors() {
    for name in [
        "missing_blob_stream_in_string_dict",
        "missing_length_stream_in_string_dict",
        "negative_dict_entry_lengths",
    ] {
        let bytes = std::fs::read(testdata(&format!("orc/{name}.orc"))).unwrap();
        let dir = table_dir(&[("f.orc", bytes)]);
        let ctx = session();
        // Two of them have stripe statistics that do not decode: CREATE, which infers the
        // columns from the tail, fails already; the third fails reading its stripe.
        let sql = format!(
            "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '{}' OPTIONS ('format' 'orc')",
            dir.path().display()
        );
        let created = match ctx.sql(&sql).await {
            Ok(frame) => frame.collect().await.map(|_| ()),
            Err(e) => Err(e),
        };
        let err = match created {
            Ok(()) => rows(&ctx, "SELECT * FROM t")
                .await
                .expect_err(name)
                .to_string(),
            Err(e) => e.to_string(),
        };
        assert!(
            err.contains("cannot read ORC file") && err.contains("f.orc"),
            "{name}: {err}"
        );
    }
}

/// `TestOrcFile.testDate2038.orc` (Java writer, `America/Los_Angeles`): 1 000 rows a year
/// from 2038 to 2249, each `time` a summer wall clock `YYYY-05-05 12:34:56.f` and each
/// `date` `YYYY-12-25`. `chrono-tz` (which `orc-rust` converts with) has no daylight saving
/// time after 2099; without `orc::late_dst` the 150 000 rows from 2100 read at 11:34:56.
#[tokio::test]
async fn apache_timestamps_after_2099_keep_their_wall_clock() {
    let dir = copy_example("TestOrcFile.testDate2038");
    let ctx = session();
    create(&ctx, "t", dir.path(), "").await;
    let out = rows(
        &ctx,
        "SELECT count(*) AS n, count(DISTINCT date_part('year', time)) AS years, \
         min(time) AS first, max(time) AS last, \
         sum(CASE WHEN CAST(time AS VARCHAR) LIKE '%-05-05T12:34:56%' \
                   AND CAST(date AS VARCHAR) LIKE '%-12-25' \
                   AND date_part('year', time) = date_part('year', date) \
              THEN 1 ELSE 0 END) AS wall_clocks_kept \
         FROM t",
    )
    .await
    .unwrap();
    let line = out.lines().nth(3).unwrap_or_default().to_string();
    let cells: Vec<&str> = line.split('|').map(str::trim).collect();
    assert_eq!(cells[1], "212000", "{out}");
    assert_eq!(cells[2], "212", "{out}");
    assert!(cells[3].starts_with("2038-05-05T12:34:56"), "{out}");
    assert!(cells[4].starts_with("2249-05-05T12:34:56"), "{out}");
    assert_eq!(cells[5], "212000", "{out}");
}

/// `decimal64_v2.orc`, of ORC's unstable pre-2.0 format (version 1.9999, decimals as 64-bit
/// RLE v2 values, which `orc-rust` would decode as 0.12 ones): `NotImplemented` naming it.
#[tokio::test]
async fn unstable_format_files_are_not_implemented() {
    let bytes = std::fs::read(testdata("orc/decimal64_v2.orc")).unwrap();
    let dir = table_dir(&[("f.orc", bytes)]);
    let ctx = session();
    let sql = format!(
        "CREATE EXTERNAL TABLE t (a DECIMAL(10, 2)) STORED AS HIVE LOCATION '{}' \
         OPTIONS ('format' 'orc')",
        dir.path().display()
    );
    ctx.sql(&sql).await.unwrap().collect().await.unwrap();
    let err = rows(&ctx, "SELECT * FROM t").await.unwrap_err().to_string();
    assert!(
        err.contains("not implemented") && err.contains("f.orc") && err.contains("1.9999"),
        "{err}"
    );
}

/// `version1999.orc`, which claims ORC version 19.99 (a future one: ORC's Java reader refuses
/// it), `TestOrcFile.testTimestamp.orc`, whose root type is a bare timestamp rather than a
/// struct of columns, and Velox's DWRF file `upper.orc` (ORC's magic, DWRF's postscript):
/// each `NotImplemented`, naming the file and why.
#[tokio::test]
async fn future_versions_and_bare_value_files_are_not_implemented() {
    for (path, why) in [
        ("orc/version1999.orc", "future ORC version 19.99"),
        (
            "orc/TestOrcFile.testTimestamp.orc",
            "holds bare values of type Timestamp",
        ),
        ("velox/dwrf_upper.orc", "looks like a DWRF file"),
    ] {
        let name = path;
        let bytes = std::fs::read(testdata(path)).unwrap();
        let dir = table_dir(&[("000000_0", bytes)]);
        let ctx = session();
        let sql = format!(
            "CREATE EXTERNAL TABLE t (a INT) STORED AS HIVE LOCATION '{}' \
             OPTIONS ('format' 'orc')",
            dir.path().display()
        );
        ctx.sql(&sql).await.unwrap().collect().await.unwrap();
        let err = rows(&ctx, "SELECT * FROM t").await.unwrap_err().to_string();
        assert!(
            err.contains("not implemented") && err.contains("000000_0") && err.contains(why),
            "{name}: {err}"
        );
    }
}
