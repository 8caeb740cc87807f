//! Statistics that old ORC writers wrote wrong are not used to prune, as ORC's Java reader
//! (and Trino's) leave them: string bounds of writers before HIVE-8732 (ordered as Java's
//! UTF-16 strings), decimal bounds of ORC's Java writer 1.5.0–1.5.5 (ORC-517), and the
//! contradictory counts of Hive's minor compaction (HIVE-20604). The files are written here
//! and their tails rewritten as those writers left them.

use std::sync::Arc;

use arrow::array::{ArrayRef, Decimal128Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use lakescan_testkit::orc::orc_proto::{ColumnStatistics, Footer, Metadata, PostScript};
use lakescan_testkit::orc::{OrcWriteOptions, with_tail, write_orc};

use super::{create, metric, rows, session, table_dir};

/// One stripe, no row index: the stripe's and the file's statistics are the only ones.
fn one_stripe(batch: &RecordBatch) -> Vec<u8> {
    let options = OrcWriteOptions {
        row_index_stride: 0,
        ..Default::default()
    };
    write_orc(&batch.schema(), std::slice::from_ref(batch), &options).unwrap()
}

/// `file` as a writer of `writer_version` (the postscript's) and `writer` (the footer's)
/// left it, every column's statistics edited by `edit`.
fn as_written_by(
    file: &[u8],
    writer_version: Option<u32>,
    writer: Option<u32>,
    edit: impl Fn(&mut ColumnStatistics),
) -> Vec<u8> {
    with_tail(
        file,
        |postscript: &mut PostScript, footer: &mut Footer, metadata: &mut Metadata| {
            postscript.writer_version = writer_version;
            footer.writer = writer;
            let stripes = metadata.stripe_stats.iter_mut();
            for stats in footer
                .statistics
                .iter_mut()
                .chain(stripes.flat_map(|s| s.col_stats.iter_mut()))
            {
                edit(stats);
            }
        },
    )
    .unwrap()
}

async fn pruned(ctx: &datafusion::prelude::SessionContext, sql: &str) -> usize {
    let plan = rows(ctx, &format!("EXPLAIN ANALYZE {sql}")).await.unwrap();
    metric(&plan, "row_groups_pruned_statistics")
}

/// Hive 0.11 and 0.12 (writer version 0) wrote a string column's bounds in Java's UTF-16
/// order, where 😀 (a surrogate pair, D83D DE00) sorts below ～ (U+FF5E): its stripe of `a`,
/// `～`, `😀` has the bounds `a`..`～`, and 😀 is above `～` in the UTF-8 order filters
/// compare in. Pruned with them, `s = '😀'` would find no row.
#[tokio::test]
async fn string_bounds_of_writers_before_hive_8732_do_not_prune() {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("s", DataType::Utf8, true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(vec![1, 2, 3])),
        Arc::new(StringArray::from(vec!["a", "\u{FF5E}", "\u{1F600}"])),
    ];
    let batch = RecordBatch::try_new(schema, columns).unwrap();
    let file = one_stripe(&batch);
    let utf16_bounds = |stats: &mut ColumnStatistics| {
        if let Some(s) = &mut stats.string_statistics {
            s.minimum = Some("a".into());
            s.maximum = Some("\u{FF5E}".into());
        }
    };
    let hive_0_12 = as_written_by(&file, None, None, utf16_bounds);
    // The same file of a writer with the fix (HIVE-8732, writer version 1) and its own,
    // UTF-8-ordered, bounds: they prune.
    let hive_0_13 = as_written_by(&file, Some(1), None, |_| {});
    let old = table_dir(&[("000000_0", hive_0_12)]);
    let new = table_dir(&[("000000_0", hive_0_13)]);
    let ctx = session();
    create(&ctx, "old", old.path(), "OPTIONS ('format' 'orc')").await;
    create(&ctx, "new", new.path(), "OPTIONS ('format' 'orc')").await;
    for (sql, want) in [
        ("SELECT id FROM old WHERE s = '\u{1F600}'", 3),
        ("SELECT id FROM old WHERE s > '\u{FF5E}'", 3),
    ] {
        let got = rows(&ctx, sql).await.unwrap();
        assert!(got.contains(&format!("| {want}  |")), "{sql}:\n{got}");
        assert_eq!(pruned(&ctx, sql).await, 0, "{sql}");
    }
    let sql = "SELECT id FROM new WHERE s = '0'";
    assert_eq!(pruned(&ctx, sql).await, 1, "{sql}");
    assert_eq!(
        rows(&ctx, "SELECT id FROM new WHERE s = '\u{1F600}'")
            .await
            .unwrap(),
        rows(&ctx, "SELECT id FROM old WHERE s = '\u{1F600}'")
            .await
            .unwrap()
    );
}

/// ORC's Java writer 1.5.0 to 1.5.5 (writer version 6, no writer id or id 0) wrote wrong
/// bounds for decimals of precision 18 or less (ORC-517); Java's reader does not use them.
/// The C++ writer also writes version 6, and its bounds are sound.
#[tokio::test]
async fn decimal64_bounds_of_orc_1_5_java_writers_do_not_prune() {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("d", DataType::Decimal128(10, 2), true),
    ]));
    let decimals = Decimal128Array::from(vec![Some(150), Some(-275), None])
        .with_precision_and_scale(10, 2)
        .unwrap();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(vec![1, 2, 3])),
        Arc::new(decimals),
    ];
    let batch = RecordBatch::try_new(schema, columns).unwrap();
    let file = one_stripe(&batch);
    // Bounds as the broken writer could leave them: not covering -2.75.
    let broken = |stats: &mut ColumnStatistics| {
        if let Some(d) = &mut stats.decimal_statistics {
            d.minimum = Some("0".into());
            d.maximum = Some("1.5".into());
        }
    };
    let java = table_dir(&[("f.orc", as_written_by(&file, Some(6), None, broken))]);
    let java_id = table_dir(&[("f.orc", as_written_by(&file, Some(6), Some(0), broken))]);
    let cpp = table_dir(&[("f.orc", as_written_by(&file, Some(6), Some(1), |_| {}))]);
    let ctx = session();
    create(&ctx, "java", java.path(), "OPTIONS ('format' 'orc')").await;
    create(&ctx, "java_id", java_id.path(), "OPTIONS ('format' 'orc')").await;
    create(&ctx, "cpp", cpp.path(), "OPTIONS ('format' 'orc')").await;
    for table in ["java", "java_id"] {
        let sql = format!("SELECT id FROM {table} WHERE d < 0");
        let got = rows(&ctx, &sql).await.unwrap();
        assert!(got.contains("| 2  |"), "{sql}:\n{got}");
        assert_eq!(pruned(&ctx, &sql).await, 0, "{sql}");
    }
    let sql = "SELECT id FROM cpp WHERE d > 100";
    assert_eq!(pruned(&ctx, sql).await, 1, "{sql}");
}

/// Hive's minor compaction of ACID tables wrote statistics of zero values and no nulls
/// whatever the rows held (HIVE-20604). Taken at their word they say a column of three rows
/// has neither values nor nulls: `x IS NULL` would prune the stripe, and `count(x)` would
/// be answered from the footer's null count (3) as 0. Such statistics are unknown.
#[tokio::test]
async fn statistics_of_no_values_and_no_nulls_are_unknown() {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("x", DataType::Int64, true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(vec![1, 2, 3])),
        Arc::new(Int64Array::from(vec![None, Some(5), None])),
    ];
    let batch = RecordBatch::try_new(schema, columns).unwrap();
    let compacted = as_written_by(&one_stripe(&batch), Some(6), None, |stats| {
        if stats.int_statistics.is_some() {
            *stats = ColumnStatistics {
                number_of_values: Some(0),
                has_null: Some(false),
                ..Default::default()
            };
        }
    });
    let dir = table_dir(&[("000000_0", compacted)]);
    let ctx = session();
    create(&ctx, "t", dir.path(), "OPTIONS ('format' 'orc')").await;
    let got = rows(&ctx, "SELECT id FROM t WHERE x IS NULL")
        .await
        .unwrap();
    assert!(got.contains("| 1  |") && got.contains("| 3  |"), "{got}");
    let got = rows(&ctx, "SELECT count(x) AS n, count(*) AS m FROM t")
        .await
        .unwrap();
    assert!(got.contains("| 1 | 3 |"), "{got}");
    let got = rows(&ctx, "SELECT id FROM t WHERE x = 5").await.unwrap();
    assert!(got.contains("| 2  |"), "{got}");
}
