//! [`DayCalendar`]: the calendar an ORC file counts its `date` and `timestamp` days in, and
//! the decoded values brought to the proleptic Gregorian calendar Arrow uses.
//!
//! ORC's Java writer counts days in Java's hybrid calendar (Julian before 1582-10-15)
//! unless told otherwise, and since ORC 1.6 says so in the footer (`calendar =
//! JULIAN_GREGORIAN`); Spark rebases to that calendar on write, Hive 1–3.0 wrote it. Java's
//! reader, asked for proleptic values (Spark 3, Hive 3.1, Trino's and Iceberg's engines
//! see proleptic dates), converts them keeping the label: a hybrid `0001-01-01` is
//! proleptic `0001-01-01`, two days later than the hybrid day number read as proleptic
//! (`0000-12-30`). Dates and timestamps on or after 1582-10-15 are the same in both.
//!
//! | footer                                   | values are                               |
//! |------------------------------------------|------------------------------------------|
//! | no `calendar`, the Java writer (ORC < 1.6: Hive 1–3.0, Spark 2–3.1) | hybrid: converted, as Hive reads them (ORC Java's own tools print them so) |
//! | no `calendar`, another writer (C++, Presto, Trino, Go, cuDF) | as written (proleptic)     |
//! | `PROLEPTIC_GREGORIAN`                    | as written                               |
//! | `JULIAN_GREGORIAN`, types with `iceberg.id` | as written: Iceberg's ORC writer stores true (proleptic) day numbers under the writer's default label, and Iceberg's reader reads them as they are |
//! | `JULIAN_GREGORIAN`, otherwise            | hybrid: converted, and so are date statistics |
//!
//! Timestamps (with or without a time zone) convert their day the same way and keep their
//! time of day. Day arithmetic is [`crate::calendar`]'s.

use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, Date32Array, PrimitiveArray};
use arrow::datatypes::{
    ArrowTimestampType, DataType, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use datafusion::common::Result;
use orc_rust::proto;

use super::nested::{has_leaf, map_leaves};
use crate::calendar::{GREGORIAN_CUTOVER_DAY, hybrid_to_proleptic};

/// The calendar an ORC file's day numbers are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DayCalendar {
    /// Proleptic Gregorian: values are read as they are.
    Proleptic,
    /// Java's hybrid calendar: values before 1582-10-15 are converted.
    Hybrid,
}

impl DayCalendar {
    /// The calendar of the file whose footer is `footer` (see the module docs).
    pub fn of(footer: &proto::Footer) -> Self {
        // The Java writer is writer 0; files older than the field are the Java writer's.
        let java = footer.writer.is_none_or(|w| w == 0);
        let julian = match footer.calendar {
            Some(calendar) => calendar == proto::CalendarKind::JulianGregorian as i32,
            None => java,
        };
        let iceberg = footer.types.iter().any(|t| {
            t.attributes
                .iter()
                .any(|a| a.key.as_deref() == Some("iceberg.id"))
        });
        match julian && !iceberg {
            true => Self::Hybrid,
            false => Self::Proleptic,
        }
    }

    /// A `date` value (days) of the file in the proleptic calendar.
    pub fn date(self, days: i32) -> i32 {
        match self {
            Self::Proleptic => days,
            // A day i32 cannot hold (millions of years back) is left as written.
            Self::Hybrid => i32::try_from(hybrid_to_proleptic(i64::from(days))).unwrap_or(days),
        }
    }

    /// `array` with its dates and timestamps (at any depth) in the proleptic calendar;
    /// `array` itself when nothing needs converting.
    pub fn to_proleptic(self, array: &ArrayRef) -> Result<ArrayRef> {
        let days = |t: &DataType| matches!(t, DataType::Date32 | DataType::Timestamp(_, _));
        if self == Self::Proleptic || !has_leaf(array.data_type(), &days) {
            return Ok(Arc::clone(array));
        }
        map_leaves(array, &mut |leaf| {
            Ok(match leaf.data_type() {
                DataType::Date32 => {
                    let dates = leaf.as_primitive::<arrow::datatypes::Date32Type>();
                    let cutover = GREGORIAN_CUTOVER_DAY as i32;
                    if !dates.values().iter().any(|d| *d < cutover) {
                        return Ok(Arc::clone(leaf));
                    }
                    let converted: Date32Array = dates.unary(|d| self.date(d));
                    Arc::new(converted)
                }
                DataType::Timestamp(unit, _) => match unit {
                    TimeUnit::Second => timestamps::<TimestampSecondType>(leaf, 1),
                    TimeUnit::Millisecond => timestamps::<TimestampMillisecondType>(leaf, 1_000),
                    TimeUnit::Microsecond => {
                        timestamps::<TimestampMicrosecondType>(leaf, 1_000_000)
                    }
                    TimeUnit::Nanosecond => {
                        timestamps::<TimestampNanosecondType>(leaf, 1_000_000_000)
                    }
                },
                _ => Arc::clone(leaf),
            })
        })
    }
}

/// A timestamp array of `per_second` units per second with each value's day converted.
fn timestamps<T: ArrowTimestampType>(array: &ArrayRef, per_second: i64) -> ArrayRef {
    let values = array.as_primitive::<T>();
    let per_day = per_second * 86_400;
    // Nanoseconds since the epoch reach back to 1677 only: nothing to convert.
    let Some(first) = GREGORIAN_CUTOVER_DAY.checked_mul(per_day) else {
        return Arc::clone(array);
    };
    if !values.values().iter().any(|v| *v < first) {
        return Arc::clone(array);
    }
    let converted: PrimitiveArray<T> = values.unary(|v| {
        let (day, within) = (v.div_euclid(per_day), v.rem_euclid(per_day));
        hybrid_to_proleptic(day)
            .checked_mul(per_day)
            .and_then(|d| d.checked_add(within))
            .unwrap_or(v)
    });
    Arc::new(converted.with_data_type(array.data_type().clone()))
}

#[cfg(test)]
mod tests {
    use arrow::array::TimestampMicrosecondArray;

    use super::*;
    use crate::calendar::{days_from_civil, julian_days};

    fn footer(calendar: Option<proto::CalendarKind>, iceberg: bool) -> proto::Footer {
        footer_of(calendar, iceberg, Some(1))
    }

    fn footer_of(
        calendar: Option<proto::CalendarKind>,
        iceberg: bool,
        writer: Option<u32>,
    ) -> proto::Footer {
        let attributes = match iceberg {
            true => vec![proto::StringPair {
                key: Some("iceberg.id".into()),
                value: Some("1".into()),
            }],
            false => vec![],
        };
        proto::Footer {
            calendar: calendar.map(|c| c as i32),
            writer,
            types: vec![proto::Type {
                attributes,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn the_footer_says_which_calendar() {
        use proto::CalendarKind as C;
        assert_eq!(
            DayCalendar::of(&footer(None, false)),
            DayCalendar::Proleptic
        );
        assert_eq!(
            DayCalendar::of(&footer(Some(C::ProlepticGregorian), false)),
            DayCalendar::Proleptic
        );
        assert_eq!(
            DayCalendar::of(&footer(Some(C::JulianGregorian), false)),
            DayCalendar::Hybrid
        );
        // Without a calendar: the Java writer's (writer 0, or none named) are hybrid, as
        // Hive's legacy files read; others' proleptic.
        assert_eq!(
            DayCalendar::of(&footer_of(None, false, Some(0))),
            DayCalendar::Hybrid
        );
        assert_eq!(
            DayCalendar::of(&footer_of(None, false, None)),
            DayCalendar::Hybrid
        );
        assert_eq!(
            DayCalendar::of(&footer_of(None, true, Some(0))),
            DayCalendar::Proleptic
        );
        // Iceberg's writer: proleptic values under the default label.
        assert_eq!(
            DayCalendar::of(&footer(Some(C::JulianGregorian), true)),
            DayCalendar::Proleptic
        );
    }

    #[test]
    fn hybrid_dates_and_timestamps_keep_their_labels() {
        let hybrid = |y, m, d| julian_days(y, m, d) as i32;
        let dates: ArrayRef = Arc::new(Date32Array::from(vec![
            Some(hybrid(1, 1, 1)),
            None,
            Some(hybrid(1582, 10, 4)),
            Some(days_from_civil(2024, 2, 29) as i32),
        ]));
        let converted = DayCalendar::Hybrid.to_proleptic(&dates).unwrap();
        let expected = Date32Array::from(vec![
            Some(days_from_civil(1, 1, 1) as i32),
            None,
            Some(days_from_civil(1582, 10, 4) as i32),
            Some(days_from_civil(2024, 2, 29) as i32),
        ]);
        assert_eq!(converted.as_primitive(), &expected);
        assert!(Arc::ptr_eq(
            &DayCalendar::Proleptic.to_proleptic(&dates).unwrap(),
            &dates
        ));
        // 1001-01-01 01:02:03.123456 written in the hybrid calendar.
        let micros = |days: i64| (days * 86_400 + 3_723) * 1_000_000 + 123_456;
        let ts: ArrayRef = Arc::new(
            TimestampMicrosecondArray::from(vec![micros(julian_days(1001, 1, 1))])
                .with_timezone("UTC"),
        );
        let converted = DayCalendar::Hybrid.to_proleptic(&ts).unwrap();
        assert_eq!(converted.data_type(), ts.data_type());
        assert_eq!(
            converted
                .as_primitive::<TimestampMicrosecondType>()
                .value(0),
            micros(days_from_civil(1001, 1, 1))
        );
    }
}
