//! The Hive hash: Apache Hive's bucketing hash over Arrow arrays, bit-exact with Hive,
//! Trino and Velox. Hand-written: no Rust library implements Hive's hashes.
//!
//! # Contents
//! 1. [`HiveHash`]: [`HiveHash::hash_array`] (one column), [`HiveHash::hash_rows`] (several
//!    bucketing columns), [`HiveHash::supports`] (reject a table at creation).
//! 2. [`bucket_number`]: `(hash & i32::MAX) % bucket_count`.
//! 3. [`hive_murmur3_32`]: Hive's `Murmur3.hash32` with its sign-extended tail bytes.
//! 4. The tables below: what each Arrow type hashes to, per `bucketing_version`.
//!
//! Several columns: `h = 0; for each column: h = 31*h + hash(column)`, i32 wrapping. A NULL
//! value (at any nesting level) hashes to 0. `long(x)` below is `(int)(x ^ (x >>> 32))`.
//!
//! # bucketing_version 1 (`ObjectInspectorUtils.hashCode`, `getBucketHashCodeOld`)
//! | Arrow type (Hive type) | hash |
//! |---|---|
//! | Null (void) | 0 |
//! | Boolean | true 1, false 0 |
//! | Int8/16/32 (tinyint/smallint/int), Date32 (date: days) | the value |
//! | Int64 (bigint) | `long(v)` |
//! | Float32 | `Float.floatToIntBits(v)` (NaN canonical `0x7fc00000`) |
//! | Float64 | `long(Double.doubleToLongBits(v))` (NaN canonical) |
//! | Utf8, LargeUtf8, Utf8View | `h = s; h = 31*h + b` per UTF-8 byte as signed i8; `s` = 0 for [`StringHashing::HiveString`], 1 for [`StringHashing::HiveVarchar`] (Hadoop `Text.hashCode`) |
//! | Binary, LargeBinary, BinaryView, FixedSizeBinary | the same loop from 1 (`BytesWritable.hashCode`; Velox starts at 0, Hive does not) |
//! | Timestamp(unit, tz) | `x = (secs << 30) \| nanos; long(x)` (`TimestampWritable.hashCode`), see below |
//! | Decimal32/64/128, Decimal256 with p <= 38 | `BigDecimal.hashCode` of the value with trailing fraction zeros stripped: `31 * unscaled.hashCode() + scale`; `BigInteger.hashCode` = `h = 31*h + word` over the 32-bit magnitude words, most significant first, times the sign; zero is 0 |
//! | Dictionary(_, V) | hash of the value |
//! | List, LargeList, FixedSizeList (array) | `h = 0; h = 31*h + hash(element)` |
//! | Struct | `h = 0; h = 31*h + hash(field)` |
//! | Map | `Σ hash(key) ^ hash(value)` (wrapping) |
//!
//! Timestamps: the value (with or without a time zone) is the UTC instant; `secs`/`nanos` are
//! its floor-divided epoch seconds and nanoseconds. Version 1 re-parses the wall clock with
//! `java.sql.Timestamp.valueOf` in the JVM zone; we hash what a **UTC JVM** gets. That parse uses
//! the Julian/Gregorian hybrid calendar, so a date before 1582-10-15 has its year/month/day read
//! as a Julian date. Years outside 0001..=9999 are an `InvalidArgumentError` in version 1.
//!
//! # bucketing_version 2 (`ObjectInspectorUtils.hashCodeMurmur`, `getBucketHashCode`)
//! `m(bytes)` = [`hive_murmur3_32`]`(bytes, 104729)`; "BE" = big-endian.
//!
//! | Arrow type | hash |
//! |---|---|
//! | Null, Boolean, Int8 | as version 1 (not hashed) |
//! | Int16 / Int32, Date32 / Int64 | `m(2 / 4 / 8 BE bytes)` |
//! | Float32 | `m(BE bytes of (float) Float.floatToIntBits(v))`: the int bit pattern converted **numerically** to a float |
//! | Float64 | `m(BE bytes of (double) Double.doubleToLongBits(v))`, likewise |
//! | strings | `m(UTF-8 bytes)` (string and varchar alike) |
//! | Timestamp(unit, tz) | `m(TimestampWritableV2.getBytes())`: 4 BE bytes = low 31 bits of `secs`, top bit set if a VInt follows; then VLong(reversed 9-digit nanos, or `-reversed - 1` if `secs` is outside `0..=i32::MAX`); then VLong(`secs >> 31`) in that last case. `secs` is the wall clock read as UTC (Hive >= 3.1 `Timestamp` is a `LocalDateTime`), so no zone or calendar quirk |
//! | Decimal | `m(BigInteger.toByteArray())` of the unscaled value with trailing fraction zeros stripped (minimal BE two's complement; zero is `[0]`) |
//! | Dictionary, List, Struct | as version 1, with the elements/fields hashed by version 2 |
//! | Map | `Σ m-hash(key) ^ v1-hash(value)`: **values use version 1** (Hive quirk, also in Trino) |
//!
//! # NotYetImplemented
//! Unsigned integers, Float16, Date64, Time, Duration, Interval, Union, ListView, run-end
//! encoded, negative-scale decimals, Decimal256 with precision > 38: Hive has no such bucketing
//! type. Binary in version 2: Hive hashes `BytesWritable.getBytes()`, the whole backing
//! buffer, whose capacity depends on how the writable was filled, so the hash is not determined
//! by the value. Binary map *values* are fine in version 2 (they use version 1).
//! Maps with duplicate keys hash every entry (Hive's `java.util.Map` would keep one).
//!
//! # Sources
//! Hive `serde/.../objectinspector/ObjectInspectorUtils.java` (`hashCode`, `hashCodeMurmur`),
//! `storage-api/.../hive/common/util/Murmur3.java` (`hash32`),
//! `serde/.../io/TimestampWritableV2.java` (`getBytes`, `convertTimestampToBytes`,
//! `setNanosBytes`, `hashCode`), `DateWritableV2.hashCode`, `storage-api/.../io/
//! HiveDecimalWritable.java` (`hashCode`, `getInternalStorage`), `FastHiveDecimalImpl`
//! (`fastHashCode`, `fastBigIntegerBytesUnscaled`), `LazyBinaryUtils.writeVLongToByteArray`,
//! Hadoop `WritableComparator.hashBytes`; Trino `HiveBucketingV1/V2.java`; Velox
//! `functions/lib/HiveHash.h`.

use arrow::array::{Array, ArrayRef, AsArray, OffsetSizeTrait};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{
    ArrowNativeType, ArrowPrimitiveType, DataType, Date32Type, Decimal32Type, Decimal64Type,
    Decimal128Type, Decimal256Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow::error::ArrowError;
use lakescan_core::api::proleptic_to_hybrid;
use serde::{Deserialize, Serialize};

#[cfg(test)]
mod tests;

/// Hive's `Murmur3.DEFAULT_SEED`, used by bucketing version 2.
pub const HIVE_MURMUR3_SEED: i32 = 104_729;

/// Hive table property `bucketing_version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BucketingVersion {
    /// Legacy `ObjectInspectorUtils.hashCode` (default before Hive 3; Trino/Velox "HIVE").
    V1,
    /// `ObjectInspectorUtils.hashCodeMurmur` (Hive 3 default): Murmur3 with seed 104729.
    V2,
}

/// How Arrow strings hash in version 1: Hive STRING (h starts at 0, Velox's choice) or Hive
/// VARCHAR/CHAR (Hadoop Text.hashCode, h starts at 1). Version 2 hashes both the same.
///
/// The choice applies to every string in the column, nested ones included. Hive CHAR values
/// must already have their trailing spaces stripped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum StringHashing {
    /// Hive `string`: `h = 0; h = 31*h + b`.
    #[default]
    HiveString,
    /// Hive `varchar` / `char`: `h = 1; h = 31*h + b`.
    HiveVarchar,
}

/// Hive bucketing hash configuration for one table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HiveHash {
    /// The table's `bucketing_version`.
    pub version: BucketingVersion,
    /// How strings hash (version 1 only).
    pub strings: StringHashing,
}

impl HiveHash {
    /// A configuration for `version` with `strings` string hashing.
    pub const fn new(version: BucketingVersion, strings: StringHashing) -> Self {
        Self { version, strings }
    }

    /// Per-row combined hash of several bucketing columns: h = 0; for each column:
    /// h = 31*h + hash(col\[row\]) (i32 wrapping). NULL contributes 0.
    ///
    /// Errors: `InvalidArgumentError` for no columns or columns of different lengths;
    /// otherwise as [`HiveHash::hash_array`].
    pub fn hash_rows(&self, columns: &[ArrayRef]) -> Result<Vec<i32>, ArrowError> {
        let (first, rest) = columns.split_first().ok_or_else(|| {
            ArrowError::InvalidArgumentError("hash_rows needs at least one column".into())
        })?;
        let mut acc = self.hash_array(first.as_ref())?;
        for column in rest {
            if column.len() != acc.len() {
                return Err(ArrowError::InvalidArgumentError(format!(
                    "bucketing columns have different lengths: {} and {}",
                    acc.len(),
                    column.len()
                )));
            }
            combine(&mut acc, &self.hash_array(column.as_ref())?);
        }
        Ok(acc)
    }

    /// Hash of one column's values (one i32 per row).
    ///
    /// Errors: `NotYetImplemented` when [`HiveHash::supports`] is false for the type;
    /// `InvalidArgumentError` for a version 1 timestamp outside years 1..=9999.
    pub fn hash_array(&self, array: &dyn Array) -> Result<Vec<i32>, ArrowError> {
        check(self.version, array.data_type())?;
        let mut hasher = Hasher {
            strings: self.strings,
            buf: Vec::with_capacity(24),
        };
        hasher.hash(self.version, array)
    }

    /// Whether `data_type` can be hashed by this configuration (so callers can reject a table
    /// at creation).
    pub fn supports(&self, data_type: &DataType) -> bool {
        check(self.version, data_type).is_ok()
    }
}

/// (hash & i32::MAX) % bucket_count
///
/// Hive rejects `bucket_count == 0`; this returns 0 for it instead of dividing by zero.
pub fn bucket_number(hash: i32, bucket_count: u32) -> u32 {
    // `hash & i32::MAX` is non-negative, so the cast is lossless.
    ((hash & i32::MAX) as u32)
        .checked_rem(bucket_count)
        .unwrap_or(0)
}

/// Hive's Murmur3.hash32(data, seed) with the sign-extended tail quirk.
///
/// The 4-byte blocks are read little-endian as in standard murmur3_x86_32, but the 1 to 3 tail
/// bytes are sign-extended Java bytes (`k1 ^= data[i] << 8`, no `& 0xff`), so inputs whose length
/// is not a multiple of 4 and whose tail has a byte >= 0x80 differ from standard murmur3.
pub fn hive_murmur3_32(data: &[u8], seed: i32) -> i32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mix_k = |k: u32| k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    let mut h = seed as u32;
    let mut blocks = data.chunks_exact(4);
    for b in &mut blocks {
        // `chunks_exact(4)` yields slices of exactly 4 bytes, so these indexes are in bounds.
        h ^= mix_k(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = blocks.remainder();
    let signed = |i: usize| tail.get(i).map_or(0, |&b| i32::from(b as i8) as u32);
    let mut k1 = 0u32;
    if tail.len() >= 3 {
        k1 ^= signed(2) << 16;
    }
    if tail.len() >= 2 {
        k1 ^= signed(1) << 8;
    }
    if !tail.is_empty() {
        k1 ^= signed(0);
        h ^= mix_k(k1);
    }
    // Java's `int length`: the wrap for inputs over 2 GiB is what Java would do too.
    h ^= data.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h as i32
}

fn murmur(bytes: &[u8]) -> i32 {
    hive_murmur3_32(bytes, HIVE_MURMUR3_SEED)
}

/// `v1` for version 1, the murmur of `v2_bytes` for version 2.
fn pick(version: BucketingVersion, v1: i32, v2_bytes: &[u8]) -> i32 {
    match version {
        BucketingVersion::V1 => v1,
        BucketingVersion::V2 => murmur(v2_bytes),
    }
}

/// `acc[i] = 31 * acc[i] + h[i]`.
fn combine(acc: &mut [i32], h: &[i32]) {
    for (a, b) in acc.iter_mut().zip(h) {
        *a = a.wrapping_mul(31).wrapping_add(*b);
    }
}

fn not_yet(data_type: &DataType, why: &str) -> ArrowError {
    ArrowError::NotYetImplemented(format!("Hive bucketing hash of {data_type}: {why}"))
}

/// Validates `data_type` (recursively) for `version`.
fn check(version: BucketingVersion, data_type: &DataType) -> Result<(), ArrowError> {
    use DataType as D;
    match data_type {
        D::Null | D::Boolean | D::Int8 | D::Int16 | D::Int32 | D::Int64 => Ok(()),
        D::Float32 | D::Float64 | D::Utf8 | D::LargeUtf8 | D::Utf8View => Ok(()),
        D::Date32 | D::Timestamp(_, _) => Ok(()),
        D::Decimal32(_, s) | D::Decimal64(_, s) | D::Decimal128(_, s) | D::Decimal256(_, s)
            if *s < 0 =>
        {
            Err(not_yet(data_type, "Hive decimals have no negative scale"))
        }
        D::Decimal256(p, _) if *p > 38 => Err(not_yet(data_type, "Hive decimals have p <= 38")),
        D::Decimal32(..) | D::Decimal64(..) | D::Decimal128(..) | D::Decimal256(..) => Ok(()),
        D::Binary | D::LargeBinary | D::BinaryView | D::FixedSizeBinary(_) => match version {
            BucketingVersion::V1 => Ok(()),
            BucketingVersion::V2 => Err(not_yet(
                data_type,
                "bucketing_version 2 hashes BytesWritable.getBytes(), the whole backing buffer, \
                 whose length is not determined by the value",
            )),
        },
        D::Dictionary(_, value) => check(version, value),
        D::List(f) | D::LargeList(f) | D::FixedSizeList(f, _) => check(version, f.data_type()),
        D::Struct(fields) => fields
            .iter()
            .try_for_each(|f| check(version, f.data_type())),
        D::Map(entries, _) => {
            let (key, value) = map_types(entries.data_type())?;
            check(version, key)?;
            // Hive hashes map values with version 1 in both versions.
            check(BucketingVersion::V1, value)
        }
        D::UInt8 | D::UInt16 | D::UInt32 | D::UInt64 => {
            Err(not_yet(data_type, "Hive has no unsigned integer type"))
        }
        _ => Err(not_yet(data_type, "Hive cannot bucket on this type")),
    }
}

fn map_types(entries: &DataType) -> Result<(&DataType, &DataType), ArrowError> {
    if let DataType::Struct(fields) = entries
        && let (Some(k), Some(v), 2) = (fields.first(), fields.get(1), fields.len())
    {
        return Ok((k.data_type(), v.data_type()));
    }
    Err(ArrowError::InvalidArgumentError(format!(
        "map entries must be a struct of key and value, got {entries}"
    )))
}

fn downcast<'a, T: ?Sized>(a: Option<&'a T>, dt: &DataType) -> Result<&'a T, ArrowError> {
    a.ok_or_else(|| ArrowError::InvalidArgumentError(format!("array does not match type {dt}")))
}

fn is_valid(nulls: Option<&NullBuffer>, i: usize) -> bool {
    nulls.is_none_or(|n| n.is_valid(i))
}

/// Java `(int)(x ^ (x >>> 32))`.
fn long_hash(x: i64) -> i32 {
    (x ^ ((x as u64) >> 32) as i64) as i32
}

/// Java `Float.floatToIntBits` (canonical NaN).
fn float_bits(v: f32) -> i32 {
    if v.is_nan() {
        0x7fc0_0000
    } else {
        v.to_bits() as i32
    }
}

/// Java `Double.doubleToLongBits` (canonical NaN).
fn double_bits(v: f64) -> i64 {
    if v.is_nan() {
        0x7ff8_0000_0000_0000
    } else {
        v.to_bits() as i64
    }
}

/// Java `h = start; for b: h = 31*h + (byte) b`.
fn java_bytes_hash(start: i32, bytes: &[u8]) -> i32 {
    bytes.iter().fold(start, |h, &b| {
        h.wrapping_mul(31).wrapping_add(i32::from(b as i8))
    })
}

/// 0001-01-01T00:00:00 and 10000-01-01T00:00:00 (proleptic Gregorian) in epoch seconds.
const V1_TIMESTAMP_SECONDS: std::ops::Range<i64> = -62_135_596_800..253_402_300_800;

/// Version 1 timestamp hash, as `TimestampWritable.hashCode` of
/// `java.sql.Timestamp.valueOf(wall clock)` in a UTC JVM (hybrid calendar).
fn timestamp_v1(secs: i64, nanos: i32) -> Result<i32, ArrowError> {
    if !V1_TIMESTAMP_SECONDS.contains(&secs) {
        return Err(ArrowError::InvalidArgumentError(format!(
            "timestamp {secs}s is outside Hive's range 0001-01-01..=9999-12-31"
        )));
    }
    let (days, second_of_day) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let days = proleptic_to_hybrid(days);
    Ok(long_hash(
        ((days * 86_400 + second_of_day) << 30) | i64::from(nanos),
    ))
}

/// Hadoop/Hive zero-compressed VLong (`LazyBinaryUtils.writeVLongToByteArray`).
fn push_vlong(buf: &mut Vec<u8>, value: i64) {
    if (-112..=127).contains(&value) {
        buf.push(value as u8);
        return;
    }
    let (base, v) = if value < 0 {
        (-120, !value)
    } else {
        (-112, value)
    };
    // Significant bytes of `v` (1..=8; `v > 0` here), written big-endian after the length byte.
    let n = 8 - v.leading_zeros() as usize / 8;
    buf.push((base - n as i32) as u8);
    buf.extend_from_slice(v.to_be_bytes().get(8 - n..).unwrap_or_default());
}

/// `TimestampWritableV2.convertTimestampToBytes(secs, nanos)`, appended to `buf`.
fn push_timestamp_v2(buf: &mut Vec<u8>, secs: i64, nanos: i32) {
    let has_second_vint = secs < 0 || secs > i64::from(i32::MAX);
    // setNanosBytes: the nine nanosecond digits reversed (0.001s -> 100).
    let step = |(r, n): (i64, i64), _| (r * 10 + n % 10, n / 10);
    let reversed = (0..9).fold((0, i64::from(nanos)), step).0;
    let flag = if reversed != 0 || has_second_vint {
        i32::MIN
    } else {
        0
    };
    buf.extend_from_slice(&((secs as i32 & i32::MAX) | flag).to_be_bytes());
    if has_second_vint {
        push_vlong(buf, -reversed - 1);
        push_vlong(buf, secs >> 31);
    } else if reversed != 0 {
        push_vlong(buf, reversed);
    }
}

/// Strips trailing fraction zeros like `HiveDecimal` (the scale never goes below 0).
fn normalize_decimal(mut unscaled: i128, scale: i8) -> (i128, i32) {
    if unscaled == 0 {
        return (0, 0);
    }
    let mut scale = i32::from(scale);
    while scale > 0 && unscaled % 10 == 0 {
        unscaled /= 10;
        scale -= 1;
    }
    (unscaled, scale)
}

/// Java `new BigDecimal(BigInteger.valueOf(unscaled), scale).hashCode()`.
fn big_decimal_hash(unscaled: i128, scale: i32) -> i32 {
    let mag = unscaled.unsigned_abs();
    let h = [96, 64, 32, 0].iter().fold(0i32, |h, &shift| {
        h.wrapping_mul(31)
            .wrapping_add((mag >> shift) as u32 as i32)
    });
    let h = if unscaled < 0 { h.wrapping_neg() } else { h };
    h.wrapping_mul(31).wrapping_add(scale)
}

/// Murmur of `BigInteger.toByteArray()`: minimal big-endian two's complement (zero is `[0]`).
fn decimal_v2(unscaled: i128) -> i32 {
    let bytes = unscaled.to_be_bytes();
    let mut start = 0;
    while let (Some(&b), Some(&next)) = (bytes.get(start), bytes.get(start + 1)) {
        let redundant = (b == 0 && next < 0x80) || (b == 0xff && next >= 0x80);
        if !redundant {
            break;
        }
        start += 1;
    }
    murmur(bytes.get(start..).unwrap_or(&bytes))
}

/// Per-call state: string mode and the reusable version 2 encoding buffer.
struct Hasher {
    strings: StringHashing,
    buf: Vec<u8>,
}

impl Hasher {
    /// One hash per row of `array`; the type was validated by [`check`].
    fn hash(&mut self, v: BucketingVersion, array: &dyn Array) -> Result<Vec<i32>, ArrowError> {
        use BucketingVersion::V1;
        use DataType as D;
        let dt = array.data_type();
        let s0 = match self.strings {
            StringHashing::HiveString => 0,
            StringHashing::HiveVarchar => 1,
        };
        Ok(match (dt, v) {
            (D::Null, _) => vec![0; array.len()],
            (D::Boolean, _) => {
                let a = downcast(array.as_boolean_opt(), dt)?;
                a.iter().map(|b| b.map_or(0, i32::from)).collect()
            }
            (D::Int8, _) => prim::<Int8Type>(array, i32::from)?,
            (D::Int16, _) => prim::<Int16Type>(array, |x| pick(v, x.into(), &x.to_be_bytes()))?,
            (D::Int32, _) => prim::<Int32Type>(array, |x| pick(v, x, &x.to_be_bytes()))?,
            (D::Date32, _) => prim::<Date32Type>(array, |x| pick(v, x, &x.to_be_bytes()))?,
            (D::Int64, _) => prim::<Int64Type>(array, |x| pick(v, long_hash(x), &x.to_be_bytes()))?,
            (D::Float32, _) => prim::<Float32Type>(array, |x| {
                let bits = float_bits(x);
                pick(v, bits, &(bits as f32).to_bits().to_be_bytes())
            })?,
            (D::Float64, _) => prim::<Float64Type>(array, |x| {
                let bits = double_bits(x);
                pick(v, long_hash(bits), &(bits as f64).to_bits().to_be_bytes())
            })?,
            (D::Utf8, _) => bytes_hashes(v, s0, downcast(array.as_string_opt::<i32>(), dt)?.iter()),
            (D::LargeUtf8, _) => {
                bytes_hashes(v, s0, downcast(array.as_string_opt::<i64>(), dt)?.iter())
            }
            (D::Utf8View, _) => {
                bytes_hashes(v, s0, downcast(array.as_string_view_opt(), dt)?.iter())
            }
            (D::Binary, V1) => {
                bytes_hashes(v, 1, downcast(array.as_binary_opt::<i32>(), dt)?.iter())
            }
            (D::LargeBinary, V1) => {
                bytes_hashes(v, 1, downcast(array.as_binary_opt::<i64>(), dt)?.iter())
            }
            (D::BinaryView, V1) => {
                bytes_hashes(v, 1, downcast(array.as_binary_view_opt(), dt)?.iter())
            }
            (D::FixedSizeBinary(_), V1) => {
                bytes_hashes(v, 1, downcast(array.as_fixed_size_binary_opt(), dt)?.iter())
            }
            (D::Timestamp(unit, _), _) => self.timestamps(v, array, *unit)?,
            (D::Decimal32(_, s), _) => decimals::<Decimal32Type>(v, array, *s, |x| Some(x.into()))?,
            (D::Decimal64(_, s), _) => decimals::<Decimal64Type>(v, array, *s, |x| Some(x.into()))?,
            (D::Decimal128(_, s), _) => decimals::<Decimal128Type>(v, array, *s, Some)?,
            (D::Decimal256(_, s), _) => decimals::<Decimal256Type>(v, array, *s, |x| x.to_i128())?,
            (D::Dictionary(_, _), _) => {
                let d = downcast(array.as_any_dictionary_opt(), dt)?;
                let values = self.hash(v, d.values().as_ref())?;
                if values.is_empty() {
                    // Every key is NULL (`normalized_keys` would panic on empty values).
                    vec![0; array.len()]
                } else {
                    // A NULL slot's key may point anywhere (its hash is 0); any other key
                    // must name a value.
                    let nulls = array.nulls();
                    let mut out = Vec::with_capacity(array.len());
                    for (row, k) in d.normalized_keys().into_iter().enumerate() {
                        if nulls.is_some_and(|n| n.is_null(row)) {
                            out.push(0);
                            continue;
                        }
                        match values.get(k) {
                            Some(hash) => out.push(*hash),
                            None => {
                                return Err(ArrowError::InvalidArgumentError(format!(
                                    "dictionary key {k} at row {row} is beyond its {} values",
                                    values.len()
                                )));
                            }
                        }
                    }
                    out
                }
            }
            (D::List(_), _) => self.list::<i32>(v, array)?,
            (D::LargeList(_), _) => self.list::<i64>(v, array)?,
            (D::FixedSizeList(_, _), _) => {
                let l = downcast(array.as_fixed_size_list_opt(), dt)?;
                // FixedSizeListArray keeps its values sliced to its own rows.
                let size = l.value_length().max(0) as usize;
                let offsets: Vec<usize> = (0..=l.len()).map(|i| i * size).collect();
                self.ranges(v, v, array, l.values(), l.values(), &offsets, false)?
            }
            (D::Struct(_), _) => {
                let s = downcast(array.as_struct_opt(), dt)?;
                let mut out = vec![0i32; s.len()];
                // StructArray keeps its children sliced to its own rows.
                for column in s.columns() {
                    combine(&mut out, &self.hash(v, column.as_ref())?);
                }
                zero_nulls(&mut out, array.nulls());
                out
            }
            (D::Map(_, _), _) => {
                let m = downcast(array.as_map_opt(), dt)?;
                let offsets: Vec<usize> = m.value_offsets().iter().map(|o| o.as_usize()).collect();
                self.ranges(v, V1, array, m.keys(), m.values(), &offsets, true)?
            }
            _ => return Err(not_yet(dt, "Hive cannot bucket on this type")),
        })
    }

    fn list<O: OffsetSizeTrait>(
        &mut self,
        v: BucketingVersion,
        array: &dyn Array,
    ) -> Result<Vec<i32>, ArrowError> {
        let l = downcast(array.as_list_opt::<O>(), array.data_type())?;
        let offsets: Vec<usize> = l.value_offsets().iter().map(|o| o.as_usize()).collect();
        self.ranges(v, v, array, l.values(), l.values(), &offsets, false)
    }

    /// Lists (`is_map == false`: `h = 31*h + hash(elem)` over `keys`) and maps (`Σ key ^ value`)
    /// whose row `i` spans `offsets[i]..offsets[i + 1]` of the children.
    #[allow(clippy::too_many_arguments)]
    fn ranges(
        &mut self,
        key_version: BucketingVersion,
        value_version: BucketingVersion,
        parent: &dyn Array,
        keys: &ArrayRef,
        values: &ArrayRef,
        offsets: &[usize],
        is_map: bool,
    ) -> Result<Vec<i32>, ArrowError> {
        let (Some(&start), Some(&end)) = (offsets.first(), offsets.last()) else {
            return Ok(Vec::new());
        };
        // Arrow validates offsets as non-decreasing and within the child arrays, so the slices
        // below are in bounds.
        let len = end.saturating_sub(start);
        let key_hashes = self.hash(key_version, keys.slice(start, len).as_ref())?;
        let value_hashes = if is_map {
            self.hash(value_version, values.slice(start, len).as_ref())?
        } else {
            Vec::new()
        };
        let nulls = parent.nulls();
        let mut out = Vec::with_capacity(offsets.len().saturating_sub(1));
        for (i, w) in offsets.windows(2).enumerate() {
            // `windows(2)` yields two elements; offsets never go below `start`.
            let (lo, hi) = (w[0].saturating_sub(start), w[1].saturating_sub(start));
            let h = match (is_valid(nulls, i), is_map) {
                (false, _) => 0,
                (true, false) => key_hashes
                    .get(lo..hi)
                    .unwrap_or_default()
                    .iter()
                    .fold(0i32, |h, &e| h.wrapping_mul(31).wrapping_add(e)),
                (true, true) => {
                    let k = key_hashes.get(lo..hi).unwrap_or_default();
                    let vals = value_hashes.get(lo..hi).unwrap_or_default();
                    k.iter()
                        .zip(vals)
                        .fold(0i32, |h, (k, v)| h.wrapping_add(k ^ v))
                }
            };
            out.push(h);
        }
        Ok(out)
    }

    fn timestamps(
        &mut self,
        v: BucketingVersion,
        array: &dyn Array,
        unit: TimeUnit,
    ) -> Result<Vec<i32>, ArrowError> {
        let (values, per_second) = match unit {
            TimeUnit::Second => (ts_values::<TimestampSecondType>(array)?, 1),
            TimeUnit::Millisecond => (ts_values::<TimestampMillisecondType>(array)?, 1_000),
            TimeUnit::Microsecond => (ts_values::<TimestampMicrosecondType>(array)?, 1_000_000),
            TimeUnit::Nanosecond => (ts_values::<TimestampNanosecondType>(array)?, 1_000_000_000),
        };
        let nulls = array.nulls();
        let mut out = Vec::with_capacity(values.len());
        for (i, &raw) in values.iter().enumerate() {
            if !is_valid(nulls, i) {
                out.push(0);
                continue;
            }
            let secs = raw.div_euclid(per_second);
            // < 10^9, so it fits an i32.
            let nanos = (raw.rem_euclid(per_second) * (1_000_000_000 / per_second)) as i32;
            out.push(match v {
                BucketingVersion::V1 => timestamp_v1(secs, nanos)?,
                BucketingVersion::V2 => {
                    self.buf.clear();
                    push_timestamp_v2(&mut self.buf, secs, nanos);
                    murmur(&self.buf)
                }
            });
        }
        Ok(out)
    }
}

fn ts_values<T: ArrowPrimitiveType<Native = i64>>(array: &dyn Array) -> Result<&[i64], ArrowError> {
    Ok(downcast(array.as_primitive_opt::<T>(), array.data_type())?.values())
}

fn zero_nulls(out: &mut [i32], nulls: Option<&NullBuffer>) {
    if let Some(nulls) = nulls {
        for (i, o) in out.iter_mut().enumerate() {
            if nulls.is_null(i) {
                *o = 0;
            }
        }
    }
}

/// Maps the valid values of a primitive array with `f`; NULL is 0.
fn prim<T: ArrowPrimitiveType>(
    array: &dyn Array,
    f: impl Fn(T::Native) -> i32,
) -> Result<Vec<i32>, ArrowError> {
    let a = downcast(array.as_primitive_opt::<T>(), array.data_type())?;
    let mut out: Vec<i32> = a.values().iter().map(|&x| f(x)).collect();
    zero_nulls(&mut out, a.nulls());
    Ok(out)
}

/// Strings and binaries: `h = start; h = 31*h + b` (version 1) or murmur (version 2).
fn bytes_hashes<B: AsRef<[u8]>>(
    v: BucketingVersion,
    start: i32,
    values: impl Iterator<Item = Option<B>>,
) -> Vec<i32> {
    let hash = |b: B| match v {
        BucketingVersion::V1 => java_bytes_hash(start, b.as_ref()),
        BucketingVersion::V2 => murmur(b.as_ref()),
    };
    values.map(|b| b.map_or(0, hash)).collect()
}

fn decimals<T: ArrowPrimitiveType>(
    v: BucketingVersion,
    array: &dyn Array,
    scale: i8,
    to_i128: impl Fn(T::Native) -> Option<i128>,
) -> Result<Vec<i32>, ArrowError> {
    let a = downcast(array.as_primitive_opt::<T>(), array.data_type())?;
    let mut out = Vec::with_capacity(a.len());
    for x in a.iter() {
        out.push(match x {
            None => 0,
            Some(x) => {
                let unscaled = to_i128(x).ok_or_else(|| {
                    ArrowError::InvalidArgumentError("decimal value exceeds 38 digits".into())
                })?;
                let (unscaled, scale) = normalize_decimal(unscaled, scale);
                match v {
                    BucketingVersion::V1 => big_decimal_hash(unscaled, scale),
                    BucketingVersion::V2 => decimal_v2(unscaled),
                }
            }
        });
    }
    Ok(out)
}
