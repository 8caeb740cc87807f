//! ORC `timestamp` values after 2099 in a writer time zone with daylight saving time.
//!
//! An ORC `timestamp` (Hive's, without time zone) is stored as the instant of its wall
//! clock in the writer's time zone; `orc-rust` turns the instant back into that wall clock
//! with `chrono-tz`, whose tables hold each zone's transitions until 2099 and keep standard
//! time after. Java extends a zone's last rules forever, so a summer wall clock of 2100 or
//! later read back one hour early here (Apache ORC's `TestOrcFile.testDate2038.orc`:
//! `2100-05-05 12:34:56` read as `11:34:56`). Such values are corrected: the instant is
//! recovered with the standard offset `chrono-tz` used, and its offset taken from the same
//! moment of the latest year before 2100 whose calendar is the same (same weekday on
//! January 1st, same leap year), where the zone's current rules are in the tables.
//!
//! Hand-written because neither `orc-rust` nor `chrono-tz` extends a zone's rules; the
//! correction touches only values at or after 2100-01-01 of zones whose offset changes.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, PrimitiveArray};
use arrow::datatypes::{
    ArrowTimestampType, DataType, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use chrono::{Datelike, NaiveDate, NaiveDateTime, Offset, TimeZone};
use chrono_tz::Tz;
use datafusion::common::Result;

use super::nested::{has_leaf, map_leaves};

/// 2100-01-01T00:00:00 as seconds since the epoch: the first wall clock `chrono-tz` may
/// misread.
const FIRST_LATE_SECOND: i64 = 4_102_444_800;

/// The correction for one writer time zone; `None` for a zone without daylight saving time
/// in its last years (nothing to correct).
#[derive(Debug)]
pub struct LateDst {
    tz: Tz,
    /// The offset `chrono-tz` gives every instant after its tables (seconds).
    late_offset: i64,
    /// The true offset of an instant, by its UTC year and second of the year.
    offsets: HashMap<(i32, i64), i64>,
    /// Whether `chrono-tz`'s tables hold a year's transitions, by year.
    covered: HashMap<i32, bool>,
}

impl LateDst {
    /// The correction for `tz`, when it needs one.
    pub fn of(tz: Tz) -> Option<Self> {
        let offset = |y: i32, m: u32| {
            let at = NaiveDate::from_ymd_opt(y, m, 1)?.and_hms_opt(12, 0, 0)?;
            Some(i64::from(
                tz.offset_from_utc_datetime(&at).fix().local_minus_utc(),
            ))
        };
        // Daylight saving time in the last years of the tables, north or south.
        let dst = offset(2099, 1)? != offset(2099, 7)?;
        dst.then(|| Self {
            tz,
            late_offset: offset(2150, 1).unwrap_or(0),
            offsets: HashMap::new(),
            covered: HashMap::new(),
        })
    }

    /// Whether `chrono-tz` knows the transitions of `year` (its offset changes within it):
    /// then `orc-rust` read the year's values right.
    fn covered(&mut self, year: i32) -> bool {
        let tz = self.tz;
        *self.covered.entry(year).or_insert_with(|| {
            let offset = |m: u32| {
                NaiveDate::from_ymd_opt(year, m, 1)
                    .and_then(|d| d.and_hms_opt(12, 0, 0))
                    .map(|at| tz.offset_from_utc_datetime(&at).fix().local_minus_utc())
            };
            offset(1) != offset(7)
        })
    }

    /// `array` with its timestamps without time zone (at any depth) corrected; `array`
    /// itself when its type holds none (no nested array is rebuilt).
    pub fn correct(&mut self, array: &ArrayRef) -> Result<ArrayRef> {
        let wall_clocks = |t: &DataType| matches!(t, DataType::Timestamp(_, None));
        if !has_leaf(array.data_type(), &wall_clocks) {
            return Ok(Arc::clone(array));
        }
        map_leaves(array, &mut |leaf| {
            Ok(match leaf.data_type() {
                DataType::Timestamp(unit, None) => match unit {
                    TimeUnit::Second => self.correct_values::<TimestampSecondType>(leaf, 1),
                    TimeUnit::Millisecond => {
                        self.correct_values::<TimestampMillisecondType>(leaf, 1_000)
                    }
                    TimeUnit::Microsecond => {
                        self.correct_values::<TimestampMicrosecondType>(leaf, 1_000_000)
                    }
                    TimeUnit::Nanosecond => {
                        self.correct_values::<TimestampNanosecondType>(leaf, 1_000_000_000)
                    }
                },
                _ => Arc::clone(leaf),
            })
        })
    }

    /// The values of a timestamp array of `per_second` units per second, corrected.
    fn correct_values<T: ArrowTimestampType>(
        &mut self,
        array: &ArrayRef,
        per_second: i64,
    ) -> ArrayRef {
        let values = array.as_primitive::<T>();
        let first_late = FIRST_LATE_SECOND.saturating_mul(per_second);
        if !values.iter().flatten().any(|v| v >= first_late) {
            return Arc::clone(array);
        }
        let mut corrected = Vec::with_capacity(values.len());
        for v in values.iter() {
            corrected.push(v.map(|v| {
                if v < first_late {
                    return v;
                }
                let seconds = v.div_euclid(per_second);
                let instant = seconds - self.late_offset;
                let shift = match self.offset_at(instant) {
                    Some(offset) => offset - self.late_offset,
                    None => 0,
                };
                v + shift * per_second
            }));
        }
        let corrected: PrimitiveArray<T> = corrected.into_iter().collect();
        Arc::new(corrected.with_timezone_opt(values.timezone()))
    }

    /// The offset of the zone's current rules at `instant` (seconds since the epoch, UTC):
    /// the offset at the same moment of a year before 2100 with the same calendar; `None`
    /// when `chrono-tz` knows the instant's year itself.
    fn offset_at(&mut self, instant: i64) -> Option<i64> {
        let at = chrono::DateTime::from_timestamp(instant, 0)?.naive_utc();
        let year = at.year();
        if self.covered(year) {
            return None;
        }
        let start = NaiveDate::from_ymd_opt(year, 1, 1)?.and_hms_opt(0, 0, 0)?;
        let second_of_year = (at - start).num_seconds();
        if let Some(offset) = self.offsets.get(&(year, second_of_year)) {
            return Some(*offset);
        }
        let offset = match same_calendar_before_2100(year) {
            Some(twin) => NaiveDate::from_ymd_opt(twin, 1, 1)
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map(|start| start + chrono::Duration::seconds(second_of_year))
                .map(|moment: NaiveDateTime| {
                    i64::from(
                        self.tz
                            .offset_from_utc_datetime(&moment)
                            .fix()
                            .local_minus_utc(),
                    )
                })
                .unwrap_or(self.late_offset),
            None => self.late_offset,
        };
        if self.offsets.len() < 4096 {
            self.offsets.insert((year, second_of_year), offset);
        }
        Some(offset)
    }
}

/// The latest year before 2100 whose January 1st falls on the same weekday as `year`'s and
/// that is a leap year exactly when `year` is.
fn same_calendar_before_2100(year: i32) -> Option<i32> {
    let leap = |y: i32| NaiveDate::from_ymd_opt(y, 2, 29).is_some();
    let weekday = |y: i32| NaiveDate::from_ymd_opt(y, 1, 1).map(|d| d.weekday());
    let target = (weekday(year)?, leap(year));
    (2040..2100)
        .rev()
        .find(|&y| weekday(y) == Some(target.0) && leap(y) == target.1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::TimestampMicrosecondArray;

    /// Seconds since the epoch of a wall clock, as a naive timestamp.
    fn wall(y: i32, m: u32, d: u32, h: u32) -> i64 {
        NaiveDate::from_ymd_opt(y, m, d)
            .and_then(|d| d.and_hms_opt(h, 34, 56))
            .map(|t| t.and_utc().timestamp())
            .unwrap_or_default()
    }

    /// A summer wall clock of 2100 and later, read one hour early by `chrono-tz`, is put
    /// back; winter ones, earlier ones and zones without daylight saving time are kept.
    #[test]
    fn summer_wall_clocks_after_2099_are_corrected() {
        let tz: Tz = "America/Los_Angeles".parse().unwrap();
        let mut late = LateDst::of(tz).unwrap();
        let micros = |s: i64| s * 1_000_000;
        let read = TimestampMicrosecondArray::from(vec![
            Some(micros(wall(2100, 5, 5, 11))),
            Some(micros(wall(2249, 5, 5, 11))),
            Some(micros(wall(2100, 12, 25, 12))),
            Some(micros(wall(2038, 5, 5, 12))),
            None,
        ]);
        let array: ArrayRef = Arc::new(read);
        let fixed = late.correct(&array).unwrap();
        let fixed = fixed.as_primitive::<TimestampMicrosecondType>();
        assert_eq!(fixed.value(0), micros(wall(2100, 5, 5, 12)));
        assert_eq!(fixed.value(1), micros(wall(2249, 5, 5, 12)));
        assert_eq!(fixed.value(2), micros(wall(2100, 12, 25, 12)));
        assert_eq!(fixed.value(3), micros(wall(2038, 5, 5, 12)));
        assert!(fixed.is_null(4));
        assert!(LateDst::of("UTC".parse().unwrap()).is_none());
        assert!(LateDst::of("Asia/Tokyo".parse().unwrap()).is_none());
    }
}
