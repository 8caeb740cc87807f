#![allow(clippy::unwrap_used)]

use arrow::array::TimestampMicrosecondArray;
use chrono::NaiveDate;

use super::*;
use crate::calendar::{days_from_civil, julian_days};

#[test]
fn java_zone_ids_parse() {
    let offset = |s: i32| Some(WriterZone::Offset(FixedOffset::east_opt(s).unwrap()));
    assert_eq!(WriterZone::parse("Z"), offset(0));
    assert_eq!(WriterZone::parse("+05:30"), offset(5 * 3600 + 1800));
    assert_eq!(WriterZone::parse("GMT+08:00"), offset(8 * 3600));
    assert_eq!(WriterZone::parse("UTC-03:00"), offset(-3 * 3600));
    assert_eq!(WriterZone::parse("-08:00:30"), offset(-(8 * 3600 + 30)));
    assert_eq!(
        WriterZone::parse("America/Los_Angeles"),
        Some(WriterZone::Region(chrono_tz::America::Los_Angeles))
    );
    assert_eq!(
        WriterZone::parse("UTC"),
        Some(WriterZone::Region(chrono_tz::UTC))
    );
    for bad in ["", "Mars/Olympus", "+5:xx", "GMT+", "+01:00:00:00"] {
        assert_eq!(WriterZone::parse(bad), None, "{bad}");
    }
    assert!(writer_zone(Some(b"Mars/Olympus")).is_err());
    assert_eq!(writer_zone(None), Ok(None));
}

fn micros(date: (i64, i64, i64), days: fn(i64, i64, i64) -> i64, time: i64) -> i64 {
    (days(date.0, date.1, date.2) * 86_400 + time) * 1_000_000
}

/// Spark 3.5 in its LEGACY mode, session zone America/Los_Angeles, wrote
/// `1001-01-01 01:02:03.123456` as the hybrid wall clock with `java.util`'s offset (-08:00);
/// Spark reads it back as that label in the proleptic calendar with `java.time`'s offset,
/// the local mean time (-07:52:58): `1001-01-01 08:55:01.123456Z`. Written in UTC, the
/// label alone moves (`1001-01-01 01:02:03.123456Z`).
#[test]
fn hybrid_timestamps_keep_their_label_in_the_writer_zone() {
    let time = 3_723;
    let la = Hybrid {
        zone: WriterZone::parse("America/Los_Angeles"),
    };
    let written = micros((1001, 1, 1), julian_days, time + 8 * 3600) + 123_456;
    let read = micros(
        (1001, 1, 1),
        days_from_civil,
        time + 7 * 3600 + 52 * 60 + 58,
    ) + 123_456;
    assert_eq!(la.rebase(written, 1_000_000), Some(read));
    let utc = Hybrid { zone: None };
    let written = micros((1001, 1, 1), julian_days, time) + 123_456;
    let read = micros((1001, 1, 1), days_from_civil, time) + 123_456;
    assert_eq!(utc.rebase(written, 1_000_000), Some(read));
    // From 1900 on nothing moves.
    let modern = micros((1950, 6, 1), days_from_civil, time);
    assert_eq!(la.rebase(modern, 1_000_000), Some(modern));
}

/// Hive 3.1.3 in US/Pacific wrote the wall clocks 1880-01-01 00:00 (local mean time,
/// -07:52:58) and 1990-01-01 00:00 (-08:00) as UTC instants; they read back as written.
#[test]
fn instants_of_a_writer_zone_read_as_its_wall_clock() {
    let zone = WriterZone::parse("US/Pacific").unwrap();
    let fix = TimeFix {
        naive: Some(NaiveTimes::WallClock(zone, ZoneRules::Modern)),
        ..TimeFix::default()
    };
    let at = |y, m, d, seconds| micros((y, m, d), days_from_civil, seconds);
    let stored: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![
        Some(at(1880, 1, 1, 7 * 3600 + 52 * 60 + 58)),
        None,
        Some(at(1990, 1, 1, 8 * 3600)),
    ]));
    let read = fix.apply(&stored).unwrap();
    let read = read.as_primitive::<TimestampMicrosecondType>();
    assert_eq!(
        read.iter().collect::<Vec<_>>(),
        [Some(at(1880, 1, 1, 0)), None, Some(at(1990, 1, 1, 0))]
    );
    // java.util's rules give times before 1900 the zone's standard offset of today
    // (-08:00 there; Asia/Kuala_Lumpur +08:00, where its local mean time was +06:55:25:
    // Hive 4's legacy conversion of 1900-01-01 00:00 there, as Impala's tests read it).
    let legacy = NaiveTimes::WallClock(zone, ZoneRules::Legacy);
    assert_eq!(
        legacy.apply(at(1880, 1, 1, 8 * 3600), 1_000_000),
        Some(at(1880, 1, 1, 0))
    );
    let kuala_lumpur = WriterZone::parse("Asia/Kuala_Lumpur").unwrap();
    let legacy = NaiveTimes::WallClock(kuala_lumpur, ZoneRules::Legacy);
    assert_eq!(
        legacy.apply(at(1899, 12, 31, 16 * 3600), 1_000_000),
        Some(at(1900, 1, 1, 0))
    );
}

#[test]
fn hybrid_dates_nested_in_structs_keep_their_labels() {
    let hybrid = |y, m, d| julian_days(y, m, d) as i32;
    let dates: ArrayRef = Arc::new(Date32Array::from(vec![
        Some(hybrid(1012, 2, 21)),
        None,
        Some(days_from_civil(2012, 2, 21) as i32),
    ]));
    let fields = arrow::datatypes::Fields::from(vec![arrow::datatypes::Field::new(
        "d",
        DataType::Date32,
        true,
    )]);
    let nested: ArrayRef = Arc::new(arrow::array::StructArray::new(fields, vec![dates], None));
    let fix = TimeFix {
        hybrid_dates: true,
        ..TimeFix::default()
    };
    let read = fix.apply(&nested).unwrap();
    let read = read
        .as_struct()
        .column(0)
        .as_primitive::<Date32Type>()
        .clone();
    let label = |d: Option<i32>| {
        d.map(|d| {
            NaiveDate::from_num_days_from_ce_opt(d + 719_163)
                .unwrap()
                .to_string()
        })
    };
    assert_eq!(
        read.iter().map(label).collect::<Vec<_>>(),
        [
            Some("1012-02-21".to_string()),
            None,
            Some("2012-02-21".to_string())
        ]
    );
    // Nothing to fix: the same array.
    assert!(TimeFix::default().is_none());
    assert!(Arc::ptr_eq(
        &TimeFix::default().apply(&nested).unwrap(),
        &nested
    ));
}
