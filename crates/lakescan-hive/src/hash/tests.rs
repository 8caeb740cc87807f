use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal32Array, Decimal64Array,
    Decimal128Array, Decimal256Array, DictionaryArray, FixedSizeBinaryArray, Float32Array,
    Float64Array, Int8Array, Int16Array, Int32Array, Int32Builder, Int64Array, LargeStringArray,
    ListArray, MapBuilder, StringArray, StringBuilder, StringViewArray, StructArray,
    TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray,
    TimestampSecondArray, UInt32Array,
};
use arrow::datatypes::{DataType, Field, Int8Type, Int32Type, TimeUnit, i256};
use arrow::error::ArrowError;

use lakescan_core::api::{GREGORIAN_CUTOVER_DAY, civil_from_days, days_from_civil, julian_days};

use super::*;

/// Every row of the repository's `testdata/hashing/hive_bucket_vectors.csv` (see its README).
const CSV: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/hashing/hive_bucket_vectors.csv"
));
const BUCKET_COUNTS: [u32; 8] = [1, 2, 4, 8, 16, 32, 500, 997];

const V1: HiveHash = HiveHash::new(BucketingVersion::V1, StringHashing::HiveString);
const V2: HiveHash = HiveHash::new(BucketingVersion::V2, StringHashing::HiveString);
const V1_VARCHAR: HiveHash = HiveHash::new(BucketingVersion::V1, StringHashing::HiveVarchar);

/// Minimal CSV reader: `"` quoting with `""` escapes, no newlines inside fields.
fn parse_csv_line(line: &str) -> Vec<String> {
    let (mut fields, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    fields.push(cur);
    fields
}

/// Splits a Python list literal `[a, 'b, c']` at top-level commas.
fn split_list(repr: &str) -> Vec<String> {
    let inner = repr
        .trim()
        .strip_prefix('[')
        .unwrap()
        .strip_suffix(']')
        .unwrap();
    let (mut items, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for c in inner.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                cur.push(c);
            }
            ',' if !quoted => items.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    items.push(cur.trim().to_string());
    items
}

fn unquote(repr: &str) -> &str {
    repr.strip_prefix('\'').unwrap().strip_suffix('\'').unwrap()
}

/// `YYYY-MM-DD HH:MM:SS[.ffffff]` as microseconds since the epoch, read as UTC.
fn wall_clock_micros(s: &str) -> i64 {
    let (date, time) = s.split_once(' ').unwrap();
    let ymd: Vec<i64> = date.split('-').map(|x| x.parse().unwrap()).collect();
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let hms: Vec<i64> = hms.split(':').map(|x| x.parse().unwrap()).collect();
    assert!(frac.len() <= 6, "sub-microsecond literal {s}");
    let micros = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<6}").parse().unwrap()
    };
    let secs = days_from_civil(ymd[0], ymd[1], ymd[2]) * 86_400 + hms[0] * 3600 + hms[1] * 60;
    (secs + hms[2]) * 1_000_000 + micros
}

/// A timestamp `value_repr` as a UTC instant in microseconds.
fn timestamp_micros(repr: &str) -> i64 {
    if let Some(rest) = repr.strip_prefix("Timestamp(seconds=") {
        let (secs, nanos) = rest
            .strip_suffix(')')
            .unwrap()
            .split_once(",nanos=")
            .unwrap();
        let (secs, nanos): (i64, i64) = (secs.parse().unwrap(), nanos.parse().unwrap());
        assert_eq!(nanos % 1000, 0);
        return secs * 1_000_000 + nanos / 1000;
    }
    let (literal, zone) = repr.rsplit_once(' ').unwrap();
    let wall = wall_clock_micros(unquote(literal));
    let offset_hours = match zone {
        "UTC" => 0,
        // The only US/Pacific row is 2017-02-24, in standard time (PST, UTC-08:00).
        "US/Pacific" => {
            assert!(
                literal.starts_with("'2017-02"),
                "no offset known for {repr}"
            );
            -8
        }
        other => panic!("unknown zone {other}"),
    };
    wall - offset_hours * 3_600_000_000
}

/// Casts a decimal literal to decimal(p, s) like Hive: HALF_UP to scale s, NULL if it needs
/// more than p digits.
fn cast_decimal(literal: &str, precision: u8, scale: i8) -> Option<i128> {
    let (negative, body) = match literal.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, literal),
    };
    let (int_part, frac_part) = body.split_once('.').unwrap_or((body, ""));
    let s = usize::try_from(scale).unwrap();
    let kept: String = frac_part
        .chars()
        .chain(std::iter::repeat('0'))
        .take(s)
        .collect();
    let round_up = frac_part.chars().nth(s).is_some_and(|c| c >= '5');
    let mut unscaled: i128 = 0;
    for c in int_part.chars().chain(kept.chars()) {
        unscaled = unscaled
            .checked_mul(10)?
            .checked_add(i128::from(c.to_digit(10)?))?;
    }
    unscaled = unscaled.checked_add(i128::from(round_up))?;
    if unscaled >= 10i128.pow(u32::from(precision)) {
        return None;
    }
    Some(if negative { -unscaled } else { unscaled })
}

fn opt(repr: &str) -> Option<&str> {
    (repr != "None").then_some(repr)
}

/// A one-row Arrow column for a Hive type name and a Python `value_repr`.
fn column(hive_type: &str, repr: &str) -> ArrayRef {
    let v = opt(repr);
    match hive_type {
        "boolean" => Arc::new(BooleanArray::from(vec![v.map(|x| x == "True")])),
        "tinyint" => Arc::new(Int8Array::from(vec![v.map(|x| x.parse().unwrap())])),
        "smallint" => Arc::new(Int16Array::from(vec![v.map(|x| x.parse().unwrap())])),
        "int" => Arc::new(Int32Array::from(vec![v.map(|x| x.parse().unwrap())])),
        "bigint" => Arc::new(Int64Array::from(vec![v.map(|x| x.parse().unwrap())])),
        "date" => Arc::new(Date32Array::from(vec![v.map(|x| x.parse().unwrap())])),
        "float" => Arc::new(Float32Array::from(vec![
            v.map(|x| x.parse::<f64>().unwrap() as f32),
        ])),
        "double" => Arc::new(Float64Array::from(vec![v.map(|x| x.parse().unwrap())])),
        "string" | "varchar" => Arc::new(StringArray::from(vec![v.map(unquote)])),
        "timestamp" => {
            let utc = v.is_some_and(|x| x.ends_with(" UTC") || x.ends_with("US/Pacific"));
            let a = TimestampMicrosecondArray::from(vec![v.map(timestamp_micros)]);
            Arc::new(if utc { a.with_timezone("UTC") } else { a })
        }
        t if t.starts_with("decimal(") => {
            let (p, s) = t["decimal(".len()..t.len() - 1].split_once(',').unwrap();
            let (p, s): (u8, i8) = (p.parse().unwrap(), s.parse().unwrap());
            let value = v.and_then(|x| cast_decimal(unquote(x), p, s));
            Arc::new(
                Decimal128Array::from(vec![value])
                    .with_precision_and_scale(p, s)
                    .unwrap(),
            )
        }
        other => panic!("unknown hive type {other}"),
    }
}

#[test]
fn every_csv_vector_matches() {
    let mut lines = CSV.lines();
    let header = parse_csv_line(lines.next().unwrap());
    assert_eq!(header[4], "hash_code");
    let (mut rows, mut failures) = (0, Vec::new());
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let f = parse_csv_line(line);
        assert_eq!(f.len(), 13, "{line}");
        let (hive_type, repr) = (f[1].as_str(), f[2].as_str());
        let version = match f[3].as_str() {
            "1" => BucketingVersion::V1,
            "2" => BucketingVersion::V2,
            other => panic!("bucketing_version {other}"),
        };
        let strings = if hive_type.contains("varchar") {
            StringHashing::HiveVarchar
        } else {
            StringHashing::HiveString
        };
        let hasher = HiveHash::new(version, strings);
        let types: Vec<&str> = hive_type.split('+').collect();
        let columns: Vec<ArrayRef> = if types.len() == 1 {
            vec![column(hive_type, repr)]
        } else {
            let values = split_list(repr);
            assert_eq!(values.len(), types.len(), "{line}");
            types
                .iter()
                .zip(&values)
                .map(|(t, v)| column(t, v))
                .collect()
        };
        let hash = hasher.hash_rows(&columns).unwrap()[0];
        if columns.len() == 1 {
            assert_eq!(hasher.hash_array(columns[0].as_ref()).unwrap(), vec![hash]);
        }
        let expected: i32 = f[4].parse().unwrap();
        if hash != expected {
            failures.push(format!("{line}: got {hash}"));
        }
        for (n, want) in BUCKET_COUNTS.iter().zip(&f[5..]) {
            if bucket_number(expected, *n).to_string() != *want {
                failures.push(format!("{line}: bucket_n{n} of {expected} != {want}"));
            }
        }
        rows += 1;
    }
    assert_eq!(rows, 182);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn trino_multi_column_bucket_sets() {
    let mut int_values = Vec::new();
    let mut tiny_values = Vec::new();
    for i in [1, 10] {
        for t in [5, 6] {
            int_values.push(i);
            tiny_values.push(t);
        }
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from(int_values)),
        Arc::new(Int8Array::from(tiny_values)),
    ];
    for (hasher, want) in [(V1, vec![3, 4, 5]), (V2, vec![0, 1, 5, 6])] {
        let mut buckets: Vec<u32> = hasher
            .hash_rows(&columns)
            .unwrap()
            .iter()
            .map(|h| bucket_number(*h, 8))
            .collect();
        buckets.sort_unstable();
        buckets.dedup();
        assert_eq!(buckets, want, "{:?}", hasher.version);
    }
}

fn int_struct(values: [Option<i32>; 3]) -> StructArray {
    let fields = ["a", "b", "c"].into_iter().zip(values).map(|(name, v)| {
        let field = Arc::new(Field::new(name, DataType::Int32, true));
        (field, Arc::new(Int32Array::from(vec![v])) as ArrayRef)
    });
    StructArray::from(fields.collect::<Vec<_>>())
}

#[test]
fn spark_struct_hash() {
    let s = int_struct([Some(1), Some(2), Some(3)]);
    assert_eq!(V1.hash_array(&s).unwrap(), vec![1026]);
    let m = |x: i32| murmur(&x.to_be_bytes());
    let want = (m(1).wrapping_mul(31).wrapping_add(m(2)))
        .wrapping_mul(31)
        .wrapping_add(m(3));
    assert_eq!(V2.hash_array(&s).unwrap(), vec![want]);
    // A NULL field contributes 0.
    assert_eq!(
        V1.hash_array(&int_struct([Some(1), None, Some(3)]))
            .unwrap(),
        vec![964]
    );
}

#[test]
fn spark_timestamp_year_one_uses_hybrid_calendar() {
    let micros = days_from_civil(1, 1, 1) * 86_400_000_000;
    let a = TimestampMicrosecondArray::from(vec![micros]).with_timezone("UTC");
    assert_eq!(V1.hash_array(&a).unwrap(), vec![1_645_926_784]);
}

#[test]
fn calendar_constants() {
    assert_eq!(days_from_civil(1582, 10, 15), GREGORIAN_CUTOVER_DAY);
    assert_eq!(julian_days(1582, 10, 5), GREGORIAN_CUTOVER_DAY);
    assert_eq!(julian_days(1, 1, 1), days_from_civil(1, 1, 1) - 2);
    assert_eq!(
        civil_from_days(days_from_civil(1582, 10, 14)),
        (1582, 10, 14)
    );
    assert_eq!(
        V1_TIMESTAMP_SECONDS.start,
        days_from_civil(1, 1, 1) * 86_400
    );
    assert_eq!(
        V1_TIMESTAMP_SECONDS.end,
        days_from_civil(10000, 1, 1) * 86_400
    );
    let too_late = TimestampSecondArray::from(vec![V1_TIMESTAMP_SECONDS.end]);
    assert!(matches!(
        V1.hash_array(&too_late),
        Err(ArrowError::InvalidArgumentError(_))
    ));
    assert!(V2.hash_array(&too_late).is_ok());
}

#[test]
fn nulls_hash_to_zero() {
    let arrays: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(vec![None, Some(7)])),
        Arc::new(StringArray::from(vec![None, Some("x")])),
        Arc::new(Float64Array::from(vec![None, Some(1.5)])),
        Arc::new(TimestampSecondArray::from(vec![None, Some(5)])),
        Arc::new(Decimal128Array::from(vec![None, Some(15)])),
        Arc::new(arrow::array::NullArray::new(2)),
    ];
    for hasher in [V1, V2, V1_VARCHAR] {
        for a in &arrays {
            assert_eq!(
                hasher.hash_array(a.as_ref()).unwrap()[0],
                0,
                "{}",
                a.data_type()
            );
        }
        // NULL contributes 0 to the combination: [NULL, 'x'] hashes as 31*0 + hash('x').
        let rows = hasher
            .hash_rows(&[arrays[0].clone(), arrays[1].clone()])
            .unwrap();
        assert_eq!(rows[0], 0);
        assert_eq!(
            rows[1],
            hasher.hash_array(&StringArray::from(vec!["x"])).unwrap()[0].wrapping_add(
                31i32.wrapping_mul(hasher.hash_array(&Int64Array::from(vec![7])).unwrap()[0])
            )
        );
    }
}

#[test]
fn dictionary_hashes_like_its_values() {
    let dict: DictionaryArray<Int8Type> = vec![Some("b"), None, Some("a"), Some("b"), Some("")]
        .into_iter()
        .collect();
    let plain = StringArray::from(vec![Some("b"), None, Some("a"), Some("b"), Some("")]);
    let ints = DictionaryArray::<Int32Type>::new(
        Int32Array::from(vec![Some(1), Some(0), None]),
        Arc::new(Int64Array::from(vec![Some(-1), None])),
    );
    let ints_plain = Int64Array::from(vec![None, Some(-1), None]);
    for hasher in [V1, V2, V1_VARCHAR] {
        assert_eq!(
            hasher.hash_array(&dict).unwrap(),
            hasher.hash_array(&plain).unwrap()
        );
        assert_eq!(
            hasher.hash_array(&ints).unwrap(),
            hasher.hash_array(&ints_plain).unwrap()
        );
        assert_eq!(
            hasher.hash_array(&dict.slice(2, 3)).unwrap(),
            hasher.hash_array(&plain.slice(2, 3)).unwrap()
        );
    }
    assert_eq!(V1_VARCHAR.hash_array(&dict).unwrap()[4], 1);
    // All-NULL dictionary with no values at all.
    let empty = DictionaryArray::<Int8Type>::new(
        Int8Array::from(vec![None, None]),
        Arc::new(StringArray::from(Vec::<&str>::new())),
    );
    assert_eq!(V2.hash_array(&empty).unwrap(), vec![0, 0]);
    // A NULL slot's key may point past the values: it hashes as NULL (0), no lookup.
    let keys = Int8Array::new(vec![0, 99].into(), Some(vec![true, false].into()));
    let stray =
        DictionaryArray::<Int8Type>::try_new(keys, Arc::new(StringArray::from(vec!["a"]))).unwrap();
    let plain = StringArray::from(vec![Some("a"), None]);
    assert_eq!(
        V2.hash_array(&stray).unwrap(),
        V2.hash_array(&plain).unwrap()
    );
}

type MapRow<'a> = Option<Vec<(i32, Option<&'a str>)>>;

fn int_string_map(rows: &[MapRow]) -> ArrayRef {
    let mut b = MapBuilder::new(None, Int32Builder::new(), StringBuilder::new());
    for row in rows {
        match row {
            Some(entries) => {
                for (k, v) in entries {
                    b.keys().append_value(*k);
                    b.values().append_option(*v);
                }
                b.append(true).unwrap();
            }
            None => b.append(false).unwrap(),
        }
    }
    Arc::new(b.finish())
}

fn int_list(rows: Vec<Option<Vec<Option<i32>>>>) -> ArrayRef {
    Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(rows))
}

#[test]
fn nested_types_by_hand() {
    let m = |x: i32| murmur(&x.to_be_bytes());
    let list = int_list(vec![
        Some(vec![Some(1), Some(2)]),
        Some(vec![]),
        None,
        Some(vec![None]),
    ]);
    assert_eq!(V1.hash_array(list.as_ref()).unwrap(), vec![33, 0, 0, 0]);
    assert_eq!(
        V2.hash_array(list.as_ref()).unwrap()[0],
        m(1).wrapping_mul(31).wrapping_add(m(2))
    );

    let map = int_string_map(&[
        Some(vec![(1, Some("a")), (2, Some("b"))]),
        None,
        Some(vec![(3, None)]),
    ]);
    assert_eq!(
        V1.hash_array(map.as_ref()).unwrap(),
        vec![(1 ^ 97) + (2 ^ 98), 0, 3]
    );
    // Version 2: keys with murmur, values with version 1 (Hive quirk).
    let v2 = V2.hash_array(map.as_ref()).unwrap();
    assert_eq!(v2, vec![(m(1) ^ 97).wrapping_add(m(2) ^ 98), 0, m(3)]);
    // Values keep the configured string hashing: varchar 'a' is 31 + 97.
    assert_eq!(
        V1_VARCHAR.hash_array(map.as_ref()).unwrap()[0],
        (1 ^ 128) + (2 ^ 129)
    );

    let binary = BinaryArray::from(vec![
        Some(b"ab".as_ref()),
        Some(b"".as_ref()),
        Some(&[0x80u8][..]),
    ]);
    assert_eq!(
        V1.hash_array(&binary).unwrap(),
        vec![31 * (31 + 97) + 98, 1, 31 - 128]
    );
    let fixed = FixedSizeBinaryArray::try_from_iter(vec![b"ab".to_vec()].into_iter()).unwrap();
    assert_eq!(V1.hash_array(&fixed).unwrap(), vec![31 * (31 + 97) + 98]);
}

#[test]
fn sliced_arrays_hash_like_fresh_ones() {
    let cases: Vec<(ArrayRef, ArrayRef)> = vec![
        (
            Arc::new(Int64Array::from(vec![
                Some(1),
                Some(-5),
                None,
                Some(300_000_000_000),
            ])),
            Arc::new(Int64Array::from(vec![
                Some(-5),
                None,
                Some(300_000_000_000),
            ])),
        ),
        (
            Arc::new(StringArray::from(vec![
                Some("zz"),
                Some("a"),
                None,
                Some("强大"),
            ])),
            Arc::new(StringArray::from(vec![Some("a"), None, Some("强大")])),
        ),
        (
            Arc::new(LargeStringArray::from(vec![
                Some("zz"),
                Some("a"),
                None,
                Some("b"),
            ])),
            Arc::new(StringViewArray::from(vec![Some("a"), None, Some("b")])),
        ),
        (
            int_list(vec![
                Some(vec![Some(9)]),
                Some(vec![Some(1), None]),
                None,
                Some(vec![Some(4)]),
            ]),
            int_list(vec![Some(vec![Some(1), None]), None, Some(vec![Some(4)])]),
        ),
        (
            int_string_map(&[
                Some(vec![(9, Some("q"))]),
                Some(vec![(1, Some("a"))]),
                None,
                Some(vec![(2, None)]),
            ]),
            int_string_map(&[Some(vec![(1, Some("a"))]), None, Some(vec![(2, None)])]),
        ),
        (
            Arc::new(
                Decimal128Array::from(vec![Some(1), Some(150), None, Some(-7)])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
            Arc::new(
                Decimal128Array::from(vec![Some(150), None, Some(-7)])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
        ),
        (
            Arc::new(TimestampNanosecondArray::from(vec![
                Some(1),
                Some(-1_500_000_000),
                None,
                Some(7),
            ])),
            Arc::new(TimestampNanosecondArray::from(vec![
                Some(-1_500_000_000),
                None,
                Some(7),
            ])),
        ),
    ];
    for (full, fresh) in cases {
        let sliced = full.slice(1, 3);
        for hasher in [V1, V2, V1_VARCHAR] {
            assert_eq!(
                hasher.hash_array(sliced.as_ref()).unwrap(),
                hasher.hash_array(fresh.as_ref()).unwrap(),
                "{} {:?}",
                full.data_type(),
                hasher.version
            );
        }
    }
    let full = StructArray::from(vec![(
        Arc::new(Field::new("a", DataType::Int32, true)),
        Arc::new(Int32Array::from(vec![Some(3), Some(4), None])) as ArrayRef,
    )]);
    assert_eq!(V1.hash_array(&full.slice(1, 2)).unwrap(), vec![4, 0]);
}

#[test]
fn timestamp_units_and_zones_agree() {
    // 1969-12-31 23:59:58.5 UTC and 2017-02-24 10:56:29.111 UTC.
    for secs_ms in [(-2i64, 500i64), (1_487_933_789, 111)] {
        let ms = secs_ms.0 * 1000 + secs_ms.1;
        let arrays: Vec<ArrayRef> = vec![
            Arc::new(TimestampMillisecondArray::from(vec![ms])),
            Arc::new(TimestampMicrosecondArray::from(vec![ms * 1000]).with_timezone("+05:00")),
            Arc::new(TimestampNanosecondArray::from(vec![ms * 1_000_000]).with_timezone("UTC")),
        ];
        for hasher in [V1, V2] {
            let want = hasher.hash_array(arrays[0].as_ref()).unwrap();
            for a in &arrays {
                assert_eq!(
                    hasher.hash_array(a.as_ref()).unwrap(),
                    want,
                    "{}",
                    a.data_type()
                );
            }
        }
    }
    let seconds = TimestampSecondArray::from(vec![100_000]);
    let micros = TimestampMicrosecondArray::from(vec![100_000_000_000]);
    assert_eq!(
        V2.hash_array(&seconds).unwrap(),
        V2.hash_array(&micros).unwrap()
    );
    // 1969-12-31 23:59:58.5: seconds -2, nanos 500000000 (floor division).
    let x = (-2i64 << 30) | 500_000_000;
    let a = TimestampMillisecondArray::from(vec![-1500]);
    assert_eq!(V1.hash_array(&a).unwrap(), vec![long_hash(x)]);
}

#[test]
fn timestamp_v2_serialization() {
    let bytes = |secs, nanos| {
        let mut buf = Vec::new();
        push_timestamp_v2(&mut buf, secs, nanos);
        buf
    };
    assert_eq!(bytes(0, 0), vec![0, 0, 0, 0]);
    assert_eq!(bytes(100_000, 0), vec![0x00, 0x01, 0x86, 0xa0]);
    // nanos 900000 -> "000900000" reversed = 9000 -> VLong 8e 23 28.
    assert_eq!(
        bytes(100_000, 900_000),
        vec![0x80, 0x01, 0x86, 0xa0, 0x8e, 0x23, 0x28]
    );
    // 0.1s -> reversed 1.
    assert_eq!(bytes(1, 100_000_000), vec![0x80, 0, 0, 1, 1]);
    // Negative seconds: second VInt present, first VInt = -reversed - 1.
    assert_eq!(bytes(-1, 0), vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    assert_eq!(
        bytes(i64::from(i32::MAX) + 1, 0),
        vec![0x80, 0, 0, 0, 0xff, 0x01]
    );
    let a = TimestampSecondArray::from(vec![100_000]);
    assert_eq!(
        V2.hash_array(&a).unwrap(),
        vec![murmur(&[0x00, 0x01, 0x86, 0xa0])]
    );
    let mut buf = Vec::new();
    push_vlong(&mut buf, -113);
    push_vlong(&mut buf, 128);
    push_vlong(&mut buf, i64::MIN);
    assert_eq!(
        buf,
        [vec![0x87, 0x70, 0x8f, 0x80, 0x80, 0x7f], vec![0xff; 7]].concat()
    );
}

#[test]
fn decimal_rules() {
    let d128 = |v: i128, s: i8| {
        Decimal128Array::from(vec![v])
            .with_precision_and_scale(38, s)
            .unwrap()
    };
    for hasher in [V1, V2] {
        let h = |a: &dyn Array| hasher.hash_array(a).unwrap();
        // Trailing zeros are stripped: 1.50 (scale 2) == 1.5 (scale 1); 0.00 == 0.
        assert_eq!(h(&d128(150, 2)), h(&d128(15, 1)));
        assert_eq!(h(&d128(0, 5)), h(&d128(0, 0)));
        // 100 at scale 0 keeps its zeros (the scale never goes negative).
        assert_ne!(h(&d128(100, 0)), h(&d128(1, 0)));
        let d32 = Decimal32Array::from(vec![-1234])
            .with_precision_and_scale(9, 2)
            .unwrap();
        let d64 = Decimal64Array::from(vec![-1234])
            .with_precision_and_scale(18, 2)
            .unwrap();
        let d256 = Decimal256Array::from(vec![i256::from_i128(-1234)])
            .with_precision_and_scale(38, 2)
            .unwrap();
        for a in [&d32 as &dyn Array, &d64, &d256] {
            assert_eq!(h(a), h(&d128(-1234, 2)), "{}", a.data_type());
        }
    }
    assert_eq!(V1.hash_array(&d128(15, 1)).unwrap(), vec![31 * 15 + 1]);
    assert_eq!(V1.hash_array(&d128(0, 3)).unwrap(), vec![0]);
    // BigInteger.hashCode over two words: 2^32 + 5 -> 31 * 1 + 5.
    assert_eq!(
        V1.hash_array(&d128((1 << 32) + 5, 0)).unwrap(),
        vec![31 * 36]
    );
    assert_eq!(
        V1.hash_array(&d128(-((1 << 32) + 5), 0)).unwrap(),
        vec![-31 * 36]
    );
    // Version 2 hashes BigInteger.toByteArray(): minimal big-endian two's complement.
    for (unscaled, bytes) in [
        (15, vec![0x0f]),
        (0, vec![0]),
        (-1, vec![0xff]),
        (128, vec![0, 0x80]),
        (-129, vec![0xff, 0x7f]),
    ] {
        assert_eq!(
            V2.hash_array(&d128(unscaled, 0)).unwrap(),
            vec![murmur(&bytes)]
        );
    }
    assert_eq!(V2.hash_array(&d128(150, 2)).unwrap(), vec![murmur(&[0x0f])]);
}

#[test]
fn murmur_matches_hive_and_standard_vectors() {
    // README: smallint -32768 -> bytes 80 00 -> 1342976838 (sign-extended tail).
    assert_eq!(
        hive_murmur3_32(&[0x80, 0x00], HIVE_MURMUR3_SEED),
        1_342_976_838
    );
    // Without high tail bytes Hive's hash is standard murmur3_x86_32.
    assert_eq!(hive_murmur3_32(b"", 0), 0);
    assert_eq!(hive_murmur3_32(b"hello", 0), 0x248b_fa47);
    assert_eq!(
        hive_murmur3_32(b"The quick brown fox jumps over the lazy dog", 0),
        0x2e4f_f723
    );
}

#[test]
fn unsupported_types_are_rejected() {
    let u = UInt32Array::from(vec![1]);
    match V1.hash_array(&u) {
        Err(ArrowError::NotYetImplemented(msg)) => assert!(msg.contains("UInt32"), "{msg}"),
        other => panic!("{other:?}"),
    }
    let binary = BinaryArray::from(vec![b"a".as_ref()]);
    assert!(matches!(
        V2.hash_array(&binary),
        Err(ArrowError::NotYetImplemented(_))
    ));
    let string_binary_map = |key: DataType, value: DataType| {
        let entries = DataType::Struct(
            vec![
                Field::new("key", key, false),
                Field::new("value", value, true),
            ]
            .into(),
        );
        DataType::Map(Arc::new(Field::new("entries", entries, false)), false)
    };
    let list = |t: DataType| DataType::List(Arc::new(Field::new("item", t, true)));
    let cases = [
        (DataType::Binary, true, false),
        (DataType::Float16, false, false),
        (DataType::Date64, false, false),
        (DataType::Decimal128(10, -2), false, false),
        (DataType::Decimal256(39, 0), false, false),
        (DataType::Decimal256(38, 0), true, true),
        (
            DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
            true,
            true,
        ),
        (list(DataType::UInt8), false, false),
        (list(DataType::Utf8View), true, true),
        (
            string_binary_map(DataType::Int32, DataType::Binary),
            true,
            true,
        ),
        (
            string_binary_map(DataType::Binary, DataType::Int32),
            true,
            false,
        ),
        (
            DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::LargeUtf8)),
            true,
            true,
        ),
    ];
    for (dt, v1, v2) in cases {
        assert_eq!((V1.supports(&dt), V2.supports(&dt)), (v1, v2), "{dt}");
    }
}

#[test]
fn hash_rows_argument_errors_and_bucket_edges() {
    assert!(matches!(
        V1.hash_rows(&[]),
        Err(ArrowError::InvalidArgumentError(_))
    ));
    let a: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
    let b: ArrayRef = Arc::new(Int32Array::from(vec![1]));
    assert!(matches!(
        V1.hash_rows(&[a, b]),
        Err(ArrowError::InvalidArgumentError(_))
    ));
    assert_eq!(bucket_number(i32::MIN, 7), 0);
    assert_eq!(bucket_number(-1, 1000), (i32::MAX as u32) % 1000);
    assert_eq!(bucket_number(12, 0), 0);
}
