//! Day numbers of the two calendars Java writers use: the proleptic Gregorian calendar
//! (Arrow's, DataFusion's, Iceberg's, `java.time`'s) and Java's hybrid calendar
//! (`java.util.GregorianCalendar`: Julian before 1582-10-15, Gregorian from then on), which
//! Hive 1–3.0, Spark 2 and ORC's Java writer (when not told otherwise) count days in.
//!
//! A day number is days since 1970-01-01. The two agree from 1582-10-15 on; before it the
//! same label (`1200-01-01`) is a different day number in each, seven days apart in 1200
//! and two in the year 1. Converting keeps the label, as Java's `DateUtils` and Spark's
//! `RebaseDateTime` do: a Julian `1500-02-29`, which the proleptic calendar lacks, becomes
//! the last day of that month (`1500-02-28`), as `java.time`'s lenient parse does.
//!
//! Hand-written: `chrono` knows only the proleptic calendar, and the arithmetic is a few
//! lines (H. Hinnant's `days_from_civil` / `civil_from_days`, the Julian day number
//! formulas of Richards).

/// 1582-10-15, the first Gregorian day of the hybrid calendar, as a day number (the same in
/// both calendars).
pub const GREGORIAN_CUTOVER_DAY: i64 = -141_427;

/// The proleptic day number of the label the hybrid day number `days` has.
pub fn hybrid_to_proleptic(days: i64) -> i64 {
    if days >= GREGORIAN_CUTOVER_DAY {
        return days;
    }
    let (y, m, d) = julian_from_days(days);
    days_from_civil(y, m, d.min(days_in_month(y, m)))
}

/// The hybrid day number of the label the proleptic day number `days` has.
pub fn proleptic_to_hybrid(days: i64) -> i64 {
    if days >= GREGORIAN_CUTOVER_DAY {
        return days;
    }
    let (y, m, d) = civil_from_days(days);
    julian_days(y, m, d)
}

/// Proleptic Gregorian (year, month, day) of a day number (`civil_from_days`).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let (era, doe) = (z.div_euclid(146_097), z.rem_euclid(146_097));
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The day number of a proleptic Gregorian (year, month, day) (`days_from_civil`).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The day number of (year, month, day) read as a Julian calendar date.
pub fn julian_days(y: i64, m: i64, d: i64) -> i64 {
    let a = (14 - m) / 12;
    let (y, m) = (y + 4800 - a, m + 12 * a - 3);
    d + (153 * m + 2) / 5 + 365 * y + y.div_euclid(4) - 32_083 - 2_440_588
}

/// The Julian calendar (year, month, day) of a day number.
pub fn julian_from_days(days: i64) -> (i64, i64, i64) {
    let c = days + 2_440_588 + 32_082;
    let d = (4 * c + 3).div_euclid(1461);
    let e = c - (1461 * d).div_euclid(4);
    let m = (5 * e + 2).div_euclid(153);
    let day = e - (153 * m + 2).div_euclid(5) + 1;
    let month = m + 3 - 12 * m.div_euclid(10);
    let year = d - 4800 + m.div_euclid(10);
    (year, month, day)
}

/// Days of a month of the proleptic Gregorian calendar.
fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if y.rem_euclid(4) == 0 && (y.rem_euclid(100) != 0 || y.rem_euclid(400) == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spark_and_orc_java_labels() {
        // Spark's before_1582_date_v2_4.snappy.orc stores 1200-01-01 as hybrid day -281 230.
        assert_eq!(hybrid_to_proleptic(-281_230), days_from_civil(1200, 1, 1));
        assert_eq!(days_from_civil(1200, 1, 1), -281_237);
        // A Java ORC file's 1582-10-03 (hybrid day -141 429).
        assert_eq!(hybrid_to_proleptic(-141_429), days_from_civil(1582, 10, 3));
        // 0001-01-01 is hybrid day -719 164, proleptic -719 162.
        assert_eq!(julian_days(1, 1, 1), -719_164);
        assert_eq!(hybrid_to_proleptic(-719_164), -719_162);
        assert_eq!(civil_from_days(-719_162), (1, 1, 1));
        // From the cutover on, the calendars agree.
        for day in [GREGORIAN_CUTOVER_DAY, 0, 20_000] {
            assert_eq!(hybrid_to_proleptic(day), day);
            assert_eq!(proleptic_to_hybrid(day), day);
        }
        // The day before the cutover is Julian 1582-10-04.
        assert_eq!(julian_from_days(GREGORIAN_CUTOVER_DAY - 1), (1582, 10, 4));
    }

    #[test]
    fn a_julian_leap_day_the_proleptic_calendar_lacks_is_the_month_end() {
        let leap = julian_days(1500, 2, 29);
        assert_eq!(hybrid_to_proleptic(leap), days_from_civil(1500, 2, 28));
    }

    #[test]
    fn conversions_keep_labels_both_ways() {
        for days in (-1_000_000..GREGORIAN_CUTOVER_DAY).step_by(997) {
            let (y, m, d) = julian_from_days(days);
            assert_eq!(julian_days(y, m, d), days, "Julian {y}-{m}-{d}");
            let (py, pm, pd) = civil_from_days(days);
            assert_eq!(days_from_civil(py, pm, pd), days);
            // A label both calendars have comes back.
            if d <= days_in_month(y, m) {
                assert_eq!(proleptic_to_hybrid(hybrid_to_proleptic(days)), days);
            }
        }
    }
}
