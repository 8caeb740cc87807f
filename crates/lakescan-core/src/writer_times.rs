//! Dates and timestamps as their writers meant them, where a file stores them otherwise
//! than its format's specification reads them. Two habits of Java writers:
//!
//! * **the writer's zone** — Hive (3.1.2 and later) stores a `timestamp`, a wall clock, as
//!   the UTC instant of that wall clock in the writer's zone, and names the zone in the
//!   file's metadata (`writer.time.zone`, [`WriterZone`]); Hive and Trino read the wall
//!   clock back ([`NaiveTimes::WallClock`]);
//! * **Java's hybrid calendar** — Hive 1–2, Spark 2 and Spark 3 in its `LEGACY` rebase mode
//!   count days in `java.util.GregorianCalendar` (Julian before 1582-10-15) and take
//!   offsets from `java.util.TimeZone`, which gives every instant before 1900 the zone's
//!   standard offset of today where `java.time` (and Arrow, DataFusion, chrono) give the
//!   local mean time. Spark's reader rebases such values keeping their label: the same year, month,
//!   day and time of day in the proleptic calendar ([`Hybrid`]), as `RebaseDateTime` does.
//!
//! What a file needs is decided by its format (Parquet: `crate::parquet::legacy_times`);
//! here is the arithmetic, a [`TimeFix`] applied to one decoded column at any depth. Day
//! numbers are [`crate::calendar`]'s.

use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, Date32Array, PrimitiveArray};
use arrow::datatypes::{
    ArrowTimestampType, DataType, Date32Type, TimeUnit, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
};
use chrono::{DateTime, FixedOffset, NaiveDateTime, Offset, TimeZone};
use datafusion::common::{Result, exec_datafusion_err};

use crate::calendar::{GREGORIAN_CUTOVER_DAY, hybrid_to_proleptic};
use crate::orc::nested::{has_leaf, map_leaves};

/// The metadata key under which Hive's writers name their time zone.
pub const WRITER_TIME_ZONE_KEY: &str = "writer.time.zone";

/// 2026-01-01T00:00:00Z in seconds: where a zone's standard offset "today" is taken.
const RAW_OFFSET_AT: i64 = 1_767_225_600;

/// 1900-01-01T00:00:00Z in seconds: `java.util.TimeZone` knows no offset before it.
pub const UTC_1900: i64 = -2_208_988_800;

/// The zone Hive's writers converted their wall clocks from (`writer.time.zone`: a Java
/// `ZoneId`, a region such as `America/Los_Angeles` or an offset such as `+05:30`,
/// `GMT+08:00`, `Z`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriterZone {
    /// A region, with its rules (daylight saving time).
    Region(chrono_tz::Tz),
    /// A fixed offset from UTC.
    Offset(FixedOffset),
}

impl WriterZone {
    /// The zone a Java `ZoneId` text names; `None` when it names none lakescan knows.
    pub fn parse(id: &str) -> Option<Self> {
        let id = id.trim();
        if id == "Z" {
            return Some(Self::Offset(FixedOffset::east_opt(0)?));
        }
        // `GMT+08:00`, `UTC-5`, `UT+01:30`: an offset after a prefix, as Java writes them.
        let offset = ["GMT", "UTC", "UT"]
            .iter()
            .find_map(|p| id.strip_prefix(p))
            .filter(|rest| rest.starts_with(['+', '-']))
            .or_else(|| id.starts_with(['+', '-']).then_some(id));
        match offset {
            Some(offset) => parse_offset(offset).map(Self::Offset),
            None => id.parse().ok().map(Self::Region),
        }
    }

    /// Seconds the zone is ahead of UTC at the UTC time `at` (`java.time`'s rules).
    pub fn offset_at(&self, at: &NaiveDateTime) -> i32 {
        match self {
            Self::Region(tz) => tz.offset_from_utc_datetime(at).fix().local_minus_utc(),
            Self::Offset(offset) => offset.local_minus_utc(),
        }
    }

    /// Seconds the zone is ahead of UTC at `seconds` since the epoch, by `rules`.
    pub fn offset_at_seconds(&self, seconds: i64, rules: ZoneRules) -> Option<i64> {
        if rules == ZoneRules::Legacy && seconds < UTC_1900 {
            return Some(self.raw_offset());
        }
        let at = DateTime::from_timestamp(seconds, 0)?.naive_utc();
        Some(i64::from(self.offset_at(&at)))
    }

    /// The zone's standard offset today, which `java.util.TimeZone` gives every time
    /// before 1900 (its tables start then; US/Pacific `-08:00`, Asia/Kuala_Lumpur `+08:00`
    /// where `java.time` gives their local mean times).
    fn raw_offset(&self) -> i64 {
        match self {
            Self::Region(tz) => {
                use chrono_tz::OffsetComponents;
                let today = DateTime::from_timestamp(RAW_OFFSET_AT, 0)
                    .map(|d| d.naive_utc())
                    .unwrap_or_default();
                tz.offset_from_utc_datetime(&today)
                    .base_utc_offset()
                    .num_seconds()
            }
            Self::Offset(offset) => i64::from(offset.local_minus_utc()),
        }
    }

    /// Seconds the zone is ahead of UTC at the wall clock `local` (seconds since the epoch
    /// of a wall clock); the earlier offset where the clock is ambiguous.
    fn offset_at_local(&self, local: i64) -> Option<i64> {
        let at = DateTime::from_timestamp(local, 0)?.naive_utc();
        let offset = match self {
            Self::Region(tz) => tz
                .offset_from_local_datetime(&at)
                .earliest()
                .map(|o| o.fix().local_minus_utc())
                // A wall clock skipped by a gap: the offset of the instant it names in UTC.
                .unwrap_or_else(|| self.offset_at(&at)),
            Self::Offset(offset) => offset.local_minus_utc(),
        };
        Some(i64::from(offset))
    }

    /// The wall clock in this zone of the UTC instants `array` (a timestamp of any unit),
    /// as a timestamp without zone.
    pub fn wall_clock(&self, array: &ArrayRef) -> Result<ArrayRef> {
        let fix = NaiveTimes::WallClock(*self, ZoneRules::Modern);
        let DataType::Timestamp(unit, _) = array.data_type() else {
            return Ok(Arc::clone(array));
        };
        let naive = DataType::Timestamp(*unit, None);
        timestamps(array, &naive, |v, per_second| fix.apply(v, per_second))
    }
}

/// An offset as Java writes one: `+hh:mm`, `+hh:mm:ss` or `+hh` (or `-`).
fn parse_offset(text: &str) -> Option<FixedOffset> {
    let (sign, rest) = match text.split_at_checked(1)? {
        ("+", rest) => (1, rest),
        ("-", rest) => (-1, rest),
        _ => return None,
    };
    let parts: Vec<&str> = rest.split(':').collect();
    if parts.len() > 3 {
        return None;
    }
    let mut seconds = 0;
    for (part, unit) in parts.iter().zip([3600, 60, 1]) {
        seconds += part.parse::<i32>().ok()? * unit;
    }
    FixedOffset::east_opt(sign * seconds)
}

/// The writer zone of a file whose metadata holds `value` under [`WRITER_TIME_ZONE_KEY`]
/// (`None`: no key); an error text when it names a zone lakescan does not know (its
/// timestamps would read wrong).
pub fn writer_zone(value: Option<&[u8]>) -> std::result::Result<Option<WriterZone>, String> {
    let Some(value) = value else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(value);
    WriterZone::parse(&text).map(Some).ok_or_else(|| {
        format!("its {WRITER_TIME_ZONE_KEY} '{text}' is not a time zone lakescan knows")
    })
}

/// Which offsets a writer took from a zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneRules {
    /// `java.time`'s: local mean time before a zone's first standard offset.
    Modern,
    /// `java.util.TimeZone`'s: before 1900, the zone's standard offset of today.
    Legacy,
}

/// Timestamps written as hybrid-calendar wall clocks of `zone` (UTC when `None`), with
/// `java.util.TimeZone`'s offsets: read with the same label in the proleptic calendar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hybrid {
    /// The zone the writer took its wall clocks in (`None`: UTC).
    pub zone: Option<WriterZone>,
}

impl Hybrid {
    /// The proleptic instant (units of `1 / per_second` s) of the hybrid one `value`;
    /// `None` when it does not fit.
    fn rebase(self, value: i64, per_second: i64) -> Option<i64> {
        let (seconds, fraction) = (value.div_euclid(per_second), value.rem_euclid(per_second));
        // From 1900 on, both calendars and both offset rules agree.
        if seconds >= UTC_1900 {
            return Some(value);
        }
        let local = match self.zone {
            Some(zone) => {
                seconds.checked_add(zone.offset_at_seconds(seconds, ZoneRules::Legacy)?)?
            }
            None => seconds,
        };
        let (day, time) = (local.div_euclid(86_400), local.rem_euclid(86_400));
        let local = hybrid_to_proleptic(day)
            .checked_mul(86_400)?
            .checked_add(time)?;
        let instant = match self.zone {
            Some(zone) => local.checked_sub(zone.offset_at_local(local)?)?,
            None => local,
        };
        instant.checked_mul(per_second)?.checked_add(fraction)
    }
}

/// How a file's timestamps without zone (Parquet `INT96`) were written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NaiveTimes {
    /// As UTC instants of wall clocks in a writer zone, by those rules (Hive's
    /// `writer.time.zone`): read as the wall clock.
    WallClock(WriterZone, ZoneRules),
    /// In Java's hybrid calendar.
    Hybrid(Hybrid),
}

impl NaiveTimes {
    fn apply(self, value: i64, per_second: i64) -> Option<i64> {
        match self {
            Self::WallClock(zone, rules) => {
                let offset = zone.offset_at_seconds(value.div_euclid(per_second), rules)?;
                value.checked_add(offset.checked_mul(per_second)?)
            }
            Self::Hybrid(hybrid) => hybrid.rebase(value, per_second),
        }
    }
}

/// The corrections of one decoded column's dates and timestamps, at any depth (struct
/// members, list elements, map keys and values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TimeFix {
    /// Its dates count days of Java's hybrid calendar.
    pub hybrid_dates: bool,
    /// Its timestamps with a zone (instants) were written in the hybrid calendar.
    pub zoned: Option<Hybrid>,
    /// How its timestamps without zone were written.
    pub naive: Option<NaiveTimes>,
}

impl TimeFix {
    /// Whether the fix changes nothing.
    pub fn is_none(&self) -> bool {
        !self.hybrid_dates && self.zoned.is_none() && self.naive.is_none()
    }

    /// `array` with its dates and timestamps as their writer meant them; `array` itself
    /// when none needs it. A value the fix moves out of its type's range is an error.
    pub fn apply(&self, array: &ArrayRef) -> Result<ArrayRef> {
        let fixed = |t: &DataType| match t {
            DataType::Date32 => self.hybrid_dates,
            DataType::Timestamp(_, Some(_)) => self.zoned.is_some(),
            DataType::Timestamp(_, None) => self.naive.is_some(),
            _ => false,
        };
        if self.is_none() || !has_leaf(array.data_type(), &fixed) {
            return Ok(Arc::clone(array));
        }
        map_leaves(array, &mut |leaf| match leaf.data_type() {
            DataType::Date32 if self.hybrid_dates => Ok(hybrid_dates(leaf)),
            DataType::Timestamp(_, Some(_)) => match self.zoned {
                Some(hybrid) => timestamps(leaf, leaf.data_type(), |v, s| hybrid.rebase(v, s)),
                None => Ok(Arc::clone(leaf)),
            },
            DataType::Timestamp(_, None) => match self.naive {
                Some(naive) => timestamps(leaf, leaf.data_type(), |v, s| naive.apply(v, s)),
                None => Ok(Arc::clone(leaf)),
            },
            _ => Ok(Arc::clone(leaf)),
        })
    }
}

/// Dates of the hybrid calendar in the proleptic one (the same label).
fn hybrid_dates(array: &ArrayRef) -> ArrayRef {
    let dates = array.as_primitive::<Date32Type>();
    let cutover = GREGORIAN_CUTOVER_DAY as i32;
    if !dates.values().iter().any(|d| *d < cutover) {
        return Arc::clone(array);
    }
    // A day i32 cannot hold (millions of years back) is left as written.
    let converted: Date32Array =
        dates.unary(|d| i32::try_from(hybrid_to_proleptic(i64::from(d))).unwrap_or(d));
    Arc::new(converted)
}

/// A timestamp array of any unit with `fix(value, units per second)` applied to each value,
/// typed `out` (the same unit).
fn timestamps(
    array: &ArrayRef,
    out: &DataType,
    fix: impl Fn(i64, i64) -> Option<i64>,
) -> Result<ArrayRef> {
    match array.data_type() {
        DataType::Timestamp(TimeUnit::Second, _) => each::<TimestampSecondType>(array, out, 1, fix),
        DataType::Timestamp(TimeUnit::Millisecond, _) => {
            each::<TimestampMillisecondType>(array, out, 1_000, fix)
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            each::<TimestampMicrosecondType>(array, out, 1_000_000, fix)
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            each::<TimestampNanosecondType>(array, out, 1_000_000_000, fix)
        }
        _ => Ok(Arc::clone(array)),
    }
}

fn each<T: ArrowTimestampType>(
    array: &ArrayRef,
    out: &DataType,
    per_second: i64,
    fix: impl Fn(i64, i64) -> Option<i64>,
) -> Result<ArrayRef> {
    let values = array.as_primitive::<T>();
    let converted: PrimitiveArray<T> = values.try_unary(|v| {
        fix(v, per_second).ok_or_else(|| {
            exec_datafusion_err!("timestamp {v} (1/{per_second} s) is out of range once corrected")
        })
    })?;
    Ok(Arc::new(converted.with_data_type(out.clone())))
}

#[cfg(test)]
mod tests;
