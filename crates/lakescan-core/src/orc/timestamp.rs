//! ORC `timestamp` and `timestamp with local time zone` values of top-level columns, and
//! the check that keeps `orc-rust` from decoding the nested ones it would read wrong.
//!
//! A value is two streams: DATA, signed seconds since 2015-01-01 00:00:00 (in the writer's
//! time zone for `timestamp`, in UTC for the instant type), and SECONDARY, the nanoseconds
//! of the second shifted left by 3 with a count of dropped trailing zeros in the low 3 bits.
//! ORC's Java writer stores nanoseconds in `0..10⁹`; its C++ writer (and so
//! `pyarrow.orc.write_table`) truncates toward zero and stores those of a time before 1970
//! negative. The C++ reader decodes SECONDARY into signed integers and shifts right keeping
//! the sign; `orc-rust` 0.8 decodes it unsigned, so such a value fails to decode or, where
//! no multiplication overflows, reads decades off. These values are decoded as the C++
//! reader does:
//!
//! ```text
//!  seconds  = DATA + base                  (base: 2015-01-01 in the writer's zone, or UTC)
//!  nanos    = (SECONDARY as i64) >> 3, × 10^(zeros+1) when the low 3 bits hold zeros ≠ 0
//!  seconds -= 1 when seconds < 0 and nanos > 999 999   (ORC-763: Java's writer stored the
//!                                                       seconds of such a time one high)
//!  instant  = seconds × 10⁹ + nanos
//! ```
//!
//! A `timestamp` is then read as the wall clock of its instant in the writer's time zone
//! (Hive's meaning, as `orc-rust` reads it; before 1900 at the zone's standard offset of
//! today, as ORC's Java writer took it from `java.util.TimeZone`), in the table's unit: a fraction finer than the
//! unit is dropped toward the past, as Iceberg's Java reader drops it.
//!
//! Hand-written because `orc-rust` keeps its stream decoders private: its timestamp
//! decoder cannot be fixed from outside. Nested timestamps are still `orc-rust`'s;
//! [`negative_nanos`] finds the values it would misread, so that their stripe is refused.

use arrow::datatypes::{DataType, TimeUnit};
use chrono::TimeZone;
use chrono_tz::Tz;
use orc_rust::proto::stream::Kind;
use orc_rust::schema::DataType as OrcType;
use orc_rust::stripe::Stripe;

use super::rle::{Corrupt, Decoded, IntRle, RleVersion, Sign};
use crate::writer_times::{WriterZone, ZoneRules};

/// 2015-01-01T00:00:00Z in seconds since the epoch: ORC's timestamp origin in UTC.
const ORC_EPOCH: i64 = 1_420_070_400;

const NANOS_PER_SECOND: i128 = 1_000_000_000;

/// A timestamp column's streams in one stripe.
#[derive(Debug)]
pub struct TimestampValues {
    seconds: IntRle,
    nanos: IntRle,
    /// The origin of the seconds, in seconds since the epoch.
    base: i64,
    /// The zone whose wall clock is read (`None`: the instant, or a writer in UTC).
    wall_clock: Option<Tz>,
    /// The type decoded.
    decoded: TimestampType,
    /// Scratch for the nanosecond stream, kept for its capacity.
    scratch: Vec<i64>,
}

impl TimestampValues {
    /// The values of a timestamp column whose streams are `seconds` and `nanos`, decoded as
    /// `decoded`, of a stripe written in `writer_zone` (`None`: UTC).
    pub fn new(
        streams: (Vec<u8>, Vec<u8>),
        version: RleVersion,
        decoded: TimestampType,
        writer_zone: Option<Tz>,
    ) -> Self {
        // An instant's stored seconds count from UTC's origin; a zone always at UTC's offset
        // changes nothing.
        let writer_zone = writer_zone.filter(|tz| !decoded.instant && !always_utc(*tz));
        // The instant of the origin's wall clock in the writer's zone, as `orc-rust` takes it.
        let base = writer_zone
            .and_then(|tz| tz.with_ymd_and_hms(2015, 1, 1, 0, 0, 0).earliest())
            .map_or(ORC_EPOCH, |origin| origin.timestamp());
        Self {
            seconds: IntRle::new(streams.0, version, Sign::Signed),
            nanos: IntRle::new(streams.1, version, Sign::Unsigned),
            base,
            wall_clock: writer_zone,
            decoded,
            scratch: Vec::new(),
        }
    }

    /// The type decoded.
    pub fn decoded(&self) -> TimestampType {
        self.decoded
    }

    /// The next `n` values, appended to `out` (cleared first).
    pub fn decode(&mut self, n: usize, out: &mut Vec<i64>) -> Decoded<()> {
        out.clear();
        self.seconds.decode(n, out)?;
        self.scratch.clear();
        self.nanos.decode(n, &mut self.scratch)?;
        for (value, &nanos) in out.iter_mut().zip(&self.scratch) {
            *value = self.value(*value, nanos)?;
        }
        Ok(())
    }

    /// Steps over the next `n` values.
    pub fn skip(&mut self, n: usize) -> Decoded<()> {
        self.seconds.skip(n)?;
        self.nanos.skip(n)
    }

    /// The value of one `seconds`, `nanos` pair, in the unit decoded.
    fn value(&self, seconds: i64, nanos: i64) -> Decoded<i64> {
        let nanos = i128::from(parse_nanos(nanos)?);
        let mut seconds = i128::from(seconds) + i128::from(self.base);
        if seconds < 0 && nanos > 999_999 {
            seconds -= 1;
        }
        let mut instant = seconds * NANOS_PER_SECOND + nanos;
        if let Some(tz) = self.wall_clock {
            let second = i64::try_from(instant.div_euclid(NANOS_PER_SECOND)).map_err(|_| RANGE)?;
            // ORC's Java writer took its offsets from `java.util.TimeZone`: before 1900, the
            // zone's standard offset of today, not the local mean time `chrono-tz` gives.
            let offset = WriterZone::Region(tz)
                .offset_at_seconds(second, ZoneRules::Legacy)
                .ok_or(RANGE)?;
            instant += i128::from(offset) * NANOS_PER_SECOND;
        }
        i64::try_from(instant.div_euclid(self.decoded.nanos_per_value())).map_err(|_| RANGE)
    }
}

/// Whether `tz` is always at UTC's offset (the names Java and C++ writers write for UTC).
fn always_utc(tz: Tz) -> bool {
    matches!(
        tz,
        Tz::UTC
            | Tz::GMT
            | Tz::Etc__UTC
            | Tz::Etc__GMT
            | Tz::Etc__UCT
            | Tz::Etc__Universal
            | Tz::Etc__Zulu
            | Tz::UCT
            | Tz::Universal
            | Tz::Zulu
    )
}

const RANGE: Corrupt = Corrupt(
    "a timestamp is outside the range of its Arrow unit (nanoseconds reach the years 1677 to 2262)",
);

/// The nanoseconds of a SECONDARY value: its bits as a signed integer (the C++ writer's
/// negative nanoseconds), shifted right keeping the sign, times the dropped zeros.
fn parse_nanos(stored: i64) -> Decoded<i64> {
    let zeros = (stored & 0x7) as u32;
    let nanos = stored >> 3;
    match zeros {
        0 => Ok(nanos),
        _ => nanos
            .checked_mul(10i64.pow(zeros + 1))
            .ok_or(Corrupt("a timestamp's nanoseconds overflow")),
    }
}

/// The Arrow type a timestamp column is decoded to here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimestampType {
    /// A `timestamp with local time zone`, decoded as an instant in UTC; otherwise a
    /// `timestamp`, decoded as a wall clock without zone.
    pub instant: bool,
    /// The unit decoded.
    pub unit: TimeUnit,
}

impl TimestampType {
    /// The type ORC type `orc` decodes to when it is read as `decode_as`: a `timestamp` as a
    /// timestamp without zone, a `timestamp with local time zone` as one in UTC (the types
    /// `orc-rust` decodes them to); `None` for any other pair.
    pub fn of(orc: &OrcType, decode_as: &DataType) -> Option<Self> {
        match (orc, decode_as) {
            (OrcType::Timestamp { .. }, DataType::Timestamp(unit, None)) => Some(Self {
                instant: false,
                unit: *unit,
            }),
            (OrcType::TimestampWithLocalTimezone { .. }, DataType::Timestamp(unit, Some(zone)))
                if zone.as_ref() == "UTC" =>
            {
                Some(Self {
                    instant: true,
                    unit: *unit,
                })
            }
            _ => None,
        }
    }

    /// Nanoseconds per value of the unit.
    fn nanos_per_value(&self) -> i128 {
        match self.unit {
            TimeUnit::Second => NANOS_PER_SECOND,
            TimeUnit::Millisecond => 1_000_000,
            TimeUnit::Microsecond => 1_000,
            TimeUnit::Nanosecond => 1,
        }
    }

    /// The zone of the Arrow type.
    pub fn zone(&self) -> Option<&'static str> {
        self.instant.then_some("UTC")
    }
}

/// Whether a timestamp in the top-level column at `position` of `stripe`'s columns (at any
/// depth) holds a negative nanosecond value: for a column `orc-rust` decodes, which would
/// misread it.
pub fn negative_nanos(stripe: &Stripe, position: usize) -> Decoded<bool> {
    let mut stack: Vec<_> = stripe
        .columns()
        .get(position)
        .into_iter()
        .cloned()
        .collect();
    while let Some(child) = stack.pop() {
        if matches!(
            child.data_type(),
            OrcType::Timestamp { .. } | OrcType::TimestampWithLocalTimezone { .. }
        ) && let Some(mut stream) = stripe.stream_map().get_opt(&child, Kind::Secondary)
        {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut stream, &mut bytes)
                .map_err(|_| Corrupt("a stream does not decompress"))?;
            let mut nanos = IntRle::new(
                bytes,
                RleVersion::of(child.encoding().kind()),
                Sign::Unsigned,
            );
            let mut values = Vec::new();
            loop {
                values.clear();
                // The stream holds a value per present row: decoded until it ends.
                let ended = nanos.decode(1 << 16, &mut values).is_err();
                if values.iter().any(|&v| v < 0) {
                    return Ok(true);
                }
                if ended {
                    break;
                }
            }
        }
        stack.extend(child.children());
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `values` as an RLE v1 stream of literal runs (zigzag encoded when `signed`).
    fn rle_v1(values: &[i64], signed: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for chunk in values.chunks(128) {
            out.push((-(chunk.len() as i32)) as i8 as u8);
            for &v in chunk {
                let mut u = match signed {
                    true => ((v << 1) ^ (v >> 63)) as u64,
                    false => v as u64,
                };
                while u >= 0x80 {
                    out.push((u as u8) | 0x80);
                    u >>= 7;
                }
                out.push(u as u8);
            }
        }
        out
    }

    /// Nanoseconds as ORC's C++ writer stores them (`formatNanos`; negative ones included).
    fn format_nanos(nanos: i64) -> i64 {
        if nanos == 0 || nanos % 100 != 0 {
            return nanos << 3;
        }
        let (mut nanos, mut zeros) = (nanos / 100, 1);
        while nanos % 10 == 0 && zeros < 7 {
            nanos /= 10;
            zeros += 1;
        }
        (nanos << 3) | zeros
    }

    /// Decodes `(unix seconds, nanos)` pairs stored as a writer in `zone` stores them.
    fn decode(
        pairs: &[(i64, i64)],
        unit: TimeUnit,
        zone: Option<Tz>,
        base: i64,
    ) -> Decoded<Vec<i64>> {
        let seconds: Vec<i64> = pairs.iter().map(|(s, _)| s - base).collect();
        let nanos: Vec<i64> = pairs.iter().map(|(_, n)| format_nanos(*n)).collect();
        let decoded = TimestampType {
            instant: false,
            unit,
        };
        let streams = (rle_v1(&seconds, true), rle_v1(&nanos, false));
        let mut values = TimestampValues::new(streams, RleVersion::V1, decoded, zone);
        let mut out = Vec::new();
        values.decode(pairs.len(), &mut out)?;
        Ok(out)
    }

    #[test]
    fn negative_nanoseconds_of_the_cpp_writer_keep_their_sign() {
        // 1969-12-31 23:59:58.723 as pyarrow hands it to ORC's C++ writer: -1 s, -0.277 s.
        assert_eq!(format_nanos(-277_000_000), (-277 << 3) | 5);
        assert_eq!(parse_nanos(format_nanos(-277_000_000)), Ok(-277_000_000));
        let pairs = [
            (-1, -277_000_000),
            (-2_208_988_800, 500_000),
            (0, -500_000_000),
            (-1, 0),
            (946_684_800, 1_000),
        ];
        let got = decode(&pairs, TimeUnit::Nanosecond, None, ORC_EPOCH).unwrap();
        assert_eq!(
            got,
            [
                -1_277_000_000,
                -2_208_988_800_000_000_000 + 500_000,
                -500_000_000,
                -1_000_000_000,
                946_684_800_000_001_000,
            ]
        );
    }

    #[test]
    fn the_java_writers_seconds_before_1970_are_one_high() {
        // Java stores 1969-12-31 23:59:58.723 as second -1 (one above its floor, -2) with
        // 723 ms: the reader takes the second back (ORC-763).
        let got = decode(&[(-1, 723_000_000)], TimeUnit::Nanosecond, None, ORC_EPOCH).unwrap();
        assert_eq!(got, [-1_277_000_000]);
        // Not when the fraction is below a millisecond, as Java's reader.
        let got = decode(&[(-1, 999_999)], TimeUnit::Nanosecond, None, ORC_EPOCH).unwrap();
        assert_eq!(got, [-1_000_000_000 + 999_999]);
    }

    #[test]
    fn finer_fractions_are_dropped_toward_the_past() {
        let got = decode(
            &[(-1, -277_000_500)],
            TimeUnit::Microsecond,
            None,
            ORC_EPOCH,
        )
        .unwrap();
        assert_eq!(got, [-1_277_001]);
        let got = decode(&[(1, 999_999_999)], TimeUnit::Millisecond, None, ORC_EPOCH).unwrap();
        assert_eq!(got, [1_999]);
    }

    #[test]
    fn a_writer_zone_gives_its_wall_clock() {
        let la: Tz = "America/Los_Angeles".parse().unwrap();
        // 2015-01-01 00:00 in Los Angeles is 08:00 UTC: the stored seconds count from there.
        let base = ORC_EPOCH + 8 * 3600;
        // 2015-06-01 12:00:00.5 in Los Angeles (PDT, UTC-7) is 19:00:00.5 UTC.
        let instant = 1_433_185_200;
        let got = decode(
            &[(instant, 500_000_000)],
            TimeUnit::Nanosecond,
            Some(la),
            base,
        )
        .unwrap();
        assert_eq!(got, [(instant - 7 * 3600) * 1_000_000_000 + 500_000_000]);
        // Before 1900 the writer took Los Angeles' offset of 1900 (-08:00), not its local
        // mean time (-07:52:58): Hive's 1880-01-01 08:00 UTC reads 00:00.
        let old = -2_840_140_800 + 8 * 3600;
        let got = decode(&[(old, 0)], TimeUnit::Second, Some(la), base).unwrap();
        assert_eq!(got, [old - 8 * 3600]);
        // UTC by another name changes nothing.
        let gmt: Tz = "GMT".parse().unwrap();
        let got = decode(&[(instant, 0)], TimeUnit::Second, Some(gmt), ORC_EPOCH).unwrap();
        assert_eq!(got, [instant]);
    }

    #[test]
    fn values_past_the_unit_are_errors_and_skips_keep_pairs_aligned() {
        // Year 3000 in nanoseconds.
        let err = decode(
            &[(32_503_680_000, 0)],
            TimeUnit::Nanosecond,
            None,
            ORC_EPOCH,
        );
        assert_eq!(err, Err(RANGE));
        let decoded = TimestampType {
            instant: false,
            unit: TimeUnit::Second,
        };
        let seconds = rle_v1(&[10 - ORC_EPOCH, 20 - ORC_EPOCH, 30 - ORC_EPOCH], true);
        let nanos = rle_v1(&[0, format_nanos(-500_000_000), 0], false);
        let mut values = TimestampValues::new((seconds, nanos), RleVersion::V1, decoded, None);
        values.skip(1).unwrap();
        let mut out = Vec::new();
        values.decode(2, &mut out).unwrap();
        assert_eq!(out, [19, 30]);
        assert!(values.decode(1, &mut out).is_err(), "the streams are read");
    }
}
