//! The columns added for type coverage — decimals, REAL, TINYINT/SMALLINT, binary, zoned
//! timestamps, a struct — at their boundaries, and schema evolution: files that leave
//! columns out (read as NULL) or store them in narrower types (read widened).

use arrow::datatypes::{DataType, TimeUnit};

use super::{assert_same, file, file_as};
use crate::layout::Layout;
use crate::table::{Pair, Row, TS0};

/// A row of the evolution tests, its values derived from `k`.
fn ev_row(k: i64) -> Row {
    Row {
        i: Some(k as i32 % 3),
        l: Some(k),
        f: Some([0.5, -0.0, f64::NAN, 2.5][k as usize % 4]),
        s: Some(["a", "ab", "b"][k as usize % 3].to_string()),
        ts: Some(TS0 + k * 1_000_000),
        dc: Some(i128::from(k) * 25),
        dw: Some(i128::from(k) * 12_345),
        t16: Some(k as i16 - 2),
        bn: Some(vec![b'a'; k as usize % 3]),
        tz: Some(TS0 + k * 3_600_000_000),
        st: Some(Pair {
            x: Some(k),
            y: Some("a".to_string()),
        }),
        ..Row::default()
    }
}

/// Files that leave columns out read them as NULL, and files that store columns in
/// narrower types (INT for BIGINT, FLOAT for DOUBLE, DECIMAL(8, 2) for DECIMAL(10, 2),
/// milliseconds for microseconds, dictionary strings, …) read them widened: filters,
/// statistics and the reader compare in the table's type.
#[tokio::test]
async fn regression_missing_and_narrower_columns() {
    let rows = |ks: std::ops::Range<i64>| ks.map(ev_row).collect::<Vec<_>>();
    let narrow = Layout::default()
        .with("l", DataType::Int32)
        .with("f", DataType::Float32)
        .with("dc", DataType::Decimal128(8, 2))
        .with("dw", DataType::Decimal128(12, 4))
        .with("t16", DataType::Int8)
        .with("ts", DataType::Timestamp(TimeUnit::Millisecond, None))
        .with(
            "tz",
            DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
        )
        .with("bn", DataType::LargeBinary)
        .with(
            "s",
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
        );
    let missing = Layout::default().without(&["l", "f", "s", "dc", "t16", "bn", "st"]);
    let files = vec![
        file(Some(1), "part-0.parquet", vec![rows(0..4), rows(4..8)]),
        file_as(
            Some(1),
            "part-1.parquet",
            narrow,
            vec![rows(8..12), rows(12..16)],
        ),
        file_as(Some(2), "part-0.parquet", missing, vec![rows(16..20)]),
        file(Some(2), "part-1.parquet", vec![rows(20..24)]),
    ];
    assert_same(
        files,
        &[
            "l = 9",
            "l > 10",
            "l IS NULL",
            "l IN (3, 13, 17, 21)",
            "f = 0.5",
            "f IS NULL",
            "f < 1",
            "s = 'ab'",
            "s IS NULL",
            "dc = CAST('2.75' AS DECIMAL(10, 2))",
            "dc > 3",
            "dc IS NULL OR dc < 0.5",
            "dw = CAST('14.8140' AS DECIMAL(20, 4))",
            "t16 = 10",
            "t16 IS NULL",
            "ts = TIMESTAMP '2024-01-01 00:00:09'",
            "ts > '2024-01-01 00:00:10.5'",
            "tz = TIMESTAMP '2024-01-01 09:00:00+00:00'",
            "tz >= TIMESTAMP '2024-01-01 14:00:00+01:00'",
            "bn = X'6161'",
            "bn IS NULL",
            "st IS NULL",
            "st['x'] > 20",
            "st['y'] = 'a'",
        ],
    )
    .await;
}

/// Boundary values of the decimal, REAL, TINYINT and SMALLINT columns, binary order
/// (unsigned bytes), zoned timestamps written at another offset, and struct fields.
#[tokio::test]
async fn regression_boundaries_of_new_types() {
    let row = |dc: i128, r: f32, t8: i8, t16: i16, bn: &[u8], x: Option<i64>| Row {
        dc: Some(dc),
        dw: Some(-dc * 100),
        r: Some(r),
        t8: Some(t8),
        t16: Some(t16),
        bn: Some(bn.to_vec()),
        tz: Some(TS0 + i64::from(t8) * 60_000_000),
        st: x.map(|x| Pair {
            x: Some(x),
            y: Some(format!("y{x}")),
        }),
        ..Row::default()
    };
    let files = vec![
        file(
            Some(1),
            "part-0.parquet",
            vec![
                vec![
                    row(9_999_999_999, f32::NAN, i8::MIN, i16::MIN, b"", Some(1)),
                    row(-9_999_999_999, 0.1, i8::MAX, i16::MAX, b"\xff", None),
                ],
                vec![
                    row(0, -0.0, 0, 0, b"\x00", Some(7)),
                    row(1, f32::MAX, -1, 255, b"\x7f\xff", Some(-3)),
                ],
            ],
        ),
        file(
            Some(2),
            "part-0.parquet",
            vec![vec![
                row(-1, f32::NEG_INFINITY, 100, -300, b"\x80", Some(5)),
                row(250, 0.0, -100, 300, b"ab", Some(6)),
            ]],
        ),
    ];
    assert_same(
        files,
        &[
            "dc = CAST('99999999.99' AS DECIMAL(10, 2))",
            "dc < -99999999",
            "dc = 2.5",
            "dw > 0",
            "dw = CAST('-2.5000' AS DECIMAL(20, 4))",
            "r = 'NaN'::real",
            "r = CAST(0.1 AS REAL)",
            "r > 0.1",
            "r = -0.0",
            "r < 0",
            "t8 = -128",
            "t8 > 126",
            "t8 IN (127, 128, -129)",
            "t16 = 32767",
            "t16 < -32767",
            "t16 BETWEEN 200 AND 40000",
            "bn > X'7F'",
            "bn = X''",
            "bn < X'0001'",
            "bn >= X'80'",
            "tz = TIMESTAMP '2024-01-01 02:40:00+01:00'",
            "tz < '2024-01-01T00:00:00Z'",
            "st['x'] > 5",
            "st['y'] = 'y1'",
            "st['x'] IS NULL",
            "st IS NOT NULL AND st['x'] < 0",
        ],
    )
    .await;
}
