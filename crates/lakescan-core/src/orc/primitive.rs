//! A stripe's column decoders: [`PrimitiveColumn`] for top-level booleans, integers,
//! dates, floating point numbers, decimals, strings (direct and dictionary) and binaries
//! (over their streams' bytes, with [`super::rle`]) and timestamps ([`super::timestamp`]),
//! `orc-rust`'s decoders for every other column: `char`, nested columns ([`ColumnDecoder`]).
//!
//! A primitive column's streams are taken whole when its stripe is loaded (decompressed
//! once); a window then decodes its present bits, counts the values they hold and decodes
//! that many. Skipping steps over the same bits and values, whole runs at a time where the
//! encoding allows. A column is decoded here only where `orc-rust` would decode it to the
//! same Arrow type (a decimal of the file's precision and scale, …), so both give the same
//! arrays wherever `orc-rust` decodes right: the choice is speed, and for timestamps the
//! values `orc-rust` misreads.

use std::io::Read;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryArray, BooleanArray, BooleanBufferBuilder, Decimal128Array,
    PrimitiveArray, StringArray,
};
use arrow::buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::{ArrowPrimitiveType, DataType};
use orc_rust::array_decoder::ArrayBatchDecoder;
use orc_rust::proto::column_encoding::Kind as EncodingKind;
use orc_rust::proto::stream::Kind;
use orc_rust::schema::DataType as OrcType;
use orc_rust::stripe::Stripe;

use super::rle::{BoolRle, ByteRle, Corrupt, Cursor, Decoded, IntRle, RleVersion, Sign};
use super::timestamp::{TimestampType, TimestampValues};

/// The most lengths decoded at once when string values are skipped.
const SKIP_CHUNK: usize = 1 << 16;

/// A column of a stripe being decoded.
pub enum ColumnDecoder {
    /// A primitive top-level column, decoded by lakescan.
    Primitive(Box<PrimitiveColumn>),
    /// Any other column, decoded by `orc-rust`.
    Orc(Box<dyn ArrayBatchDecoder>),
}

/// Why a column does not decode.
#[derive(Debug)]
pub enum DecodeError {
    /// A stream of lakescan's decoders.
    Stream(Corrupt),
    /// `orc-rust`'s decoder.
    Orc(orc_rust::error::OrcError),
    /// Values lakescan does not read yet.
    NotRead(&'static str),
}

/// Why a column with timestamps of negative nanoseconds that `orc-rust` decodes is not read.
const NESTED_NEGATIVE_NANOS: &str = "it holds timestamps before 1970 with a fraction of a \
     second stored as negative nanoseconds (ORC's C++ writer, as pyarrow drives it) inside a \
     struct, list or map; such values are read only in top-level columns";

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Stream(corrupt) => write!(f, "{corrupt}"),
            Self::Orc(e) => write!(f, "{e}"),
            Self::NotRead(why) => f.write_str(why),
        }
    }
}

impl ColumnDecoder {
    /// The decoder of the top-level column at `position` of `stripe`'s (projected) columns,
    /// decoded as `decode_as`; `None` when the stripe has no such column.
    pub fn try_new(
        stripe: &Stripe,
        position: usize,
        decode_as: &DataType,
    ) -> Option<Result<Self, DecodeError>> {
        let column = stripe.columns().get(position)?;
        Some(
            match PrimitiveColumn::try_new(stripe, position, decode_as) {
                Ok(Some(primitive)) => Ok(Self::Primitive(Box::new(primitive))),
                Ok(None) => match super::timestamp::negative_nanos(stripe, position) {
                    Ok(false) => {
                        orc_rust::array_decoder::array_decoder_factory(column, decode_as, stripe)
                            .map(Self::Orc)
                            .map_err(DecodeError::Orc)
                    }
                    Ok(true) => Err(DecodeError::NotRead(NESTED_NEGATIVE_NANOS)),
                    Err(corrupt) => Err(DecodeError::Stream(corrupt)),
                },
                Err(corrupt) => Err(DecodeError::Stream(corrupt)),
            },
        )
    }

    /// The next `n` values.
    pub fn next_batch(&mut self, n: usize) -> Result<ArrayRef, DecodeError> {
        match self {
            Self::Primitive(p) => p.next_batch(n).map_err(DecodeError::Stream),
            Self::Orc(d) => d.next_batch(n, None).map_err(DecodeError::Orc),
        }
    }

    /// Steps over the next `n` values.
    pub fn skip(&mut self, n: usize) -> Result<(), DecodeError> {
        match self {
            Self::Primitive(p) => p.skip(n).map_err(DecodeError::Stream),
            Self::Orc(d) => d.skip_values(n, None).map_err(DecodeError::Orc),
        }
    }
}

/// A primitive column's value streams.
#[derive(Debug)]
enum Values {
    /// `boolean`.
    Boolean(BoolRle),
    /// `tinyint`.
    Byte(ByteRle),
    /// `smallint`, `int`, `bigint`, `date`, in the Arrow type given.
    Int(IntRle, DataType),
    /// `float` (4 bytes little-endian each).
    Float(Cursor),
    /// `double` (8 bytes little-endian each).
    Double(Cursor),
    /// `string`, `varchar` (direct) and `binary`: lengths and bytes.
    Bytes {
        lengths: IntRle,
        bytes: Cursor,
        utf8: Utf8,
    },
    /// `string`, `varchar` (dictionary): ids into the stripe's dictionary.
    Dictionary { ids: IntRle, dictionary: Dictionary },
    /// `timestamp`, `timestamp with local time zone`, in the Arrow type given.
    Timestamp(Box<TimestampValues>),
    /// `decimal`: unbounded zigzag varints, each with its scale in the secondary stream,
    /// rescaled to `scale`.
    Decimal {
        digits: Cursor,
        scales: IntRle,
        precision: u8,
        scale: i8,
    },
}

/// Whether byte values are strings (checked to be UTF-8) or binaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Utf8 {
    /// Strings.
    Checked,
    /// Binaries.
    Not,
}

/// A string column's dictionary in one stripe, checked to be UTF-8 once.
#[derive(Debug)]
struct Dictionary {
    strings: StringArray,
}

impl Dictionary {
    /// The `size` strings of `lengths` and `bytes`.
    fn try_new(size: usize, mut lengths: IntRle, mut bytes: Vec<u8>) -> Decoded<Self> {
        // `size` is the file's word: the lengths stream bounds what is allocated.
        let mut all = Vec::new();
        lengths.decode(size, &mut all)?;
        let offsets = offsets(&all, None, size)?;
        let total = offsets.last().copied().unwrap_or(0) as usize;
        if bytes.len() < total {
            return Err(Corrupt("a string dictionary is shorter than its lengths"));
        }
        bytes.truncate(total);
        let strings = StringArray::try_new(offsets, Buffer::from(bytes), None)
            .map_err(|_| Corrupt("a string dictionary holds a value that is not UTF-8"))?;
        Ok(Self { strings })
    }

    /// The strings of `ids` (of the present rows), `nulls` at the others.
    fn take(&self, ids: &[i64], nulls: Option<&NullBuffer>, n: usize) -> Decoded<ArrayRef> {
        let size = self.strings.len() as i64;
        let ids: Vec<u32> = ids
            .iter()
            .map(|&id| match (0..size).contains(&id) {
                true => Ok(id as u32),
                false => Err(Corrupt("a string id is outside its dictionary")),
            })
            .collect::<Decoded<_>>()?;
        let ids = spread::<arrow::datatypes::UInt32Type>(ids, nulls, n);
        let ids = arrow::array::UInt32Array::new(ids, nulls.cloned());
        arrow::compute::take(&self.strings, &ids, None)
            .map_err(|_| Corrupt("a string column exceeds 2 GiB in a window"))
    }
}

/// The offsets of values of `lengths` at the present rows of `n` (`nulls`), empty at the
/// others; a negative length or a total past `i32::MAX` is corrupt.
fn offsets(lengths: &[i64], nulls: Option<&NullBuffer>, n: usize) -> Decoded<OffsetBuffer<i32>> {
    let mut offsets = Vec::with_capacity(lengths.len() + 1);
    offsets.push(0i32);
    let mut end = 0i64;
    let mut next = lengths.iter();
    for row in 0..n {
        if nulls.is_none_or(|nulls| nulls.is_valid(row)) {
            let length = *next
                .next()
                .ok_or(Corrupt("a length stream ends before its values do"))?;
            if length < 0 {
                return Err(Corrupt("a value's length is negative"));
            }
            end += length;
            if end > i64::from(i32::MAX) {
                return Err(Corrupt("the values of a window exceed 2 GiB"));
            }
        }
        offsets.push(end as i32);
    }
    // Offsets built ascending from 0, as `OffsetBuffer` requires.
    Ok(OffsetBuffer::new(offsets.into()))
}

/// A primitive top-level column of one stripe: its present bits and its values.
#[derive(Debug)]
pub struct PrimitiveColumn {
    present: Option<BoolRle>,
    values: Values,
    /// Scratch for integer values, kept for its capacity.
    ints: Vec<i64>,
}

impl PrimitiveColumn {
    /// The decoder of the top-level column at `position` of `stripe`'s columns as
    /// `decode_as`, when it is a primitive column decoded here (`None`: `orc-rust` decodes
    /// it, or the stripe has no such column).
    pub fn try_new(
        stripe: &Stripe,
        position: usize,
        decode_as: &DataType,
    ) -> Decoded<Option<Self>> {
        // `orc-rust` does not export its column type's name: it is only ever inferred.
        let Some(column) = stripe.columns().get(position) else {
            return Ok(None);
        };
        // The decompressed bytes of the column's stream `kind` (empty when the stripe has
        // none: a column of nulls only has no data stream).
        let stream = |kind| -> Decoded<Vec<u8>> {
            let mut bytes = Vec::new();
            if let Some(mut stream) = stripe.stream_map().get_opt(column, kind) {
                // `orc-rust` panics on a compressed chunk longer than its stream.
                let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    stream.read_to_end(&mut bytes)
                }));
                if !matches!(read, Ok(Ok(_))) {
                    return Err(Corrupt("a stream does not decompress"));
                }
            }
            Ok(bytes)
        };
        let kind = column.encoding().kind();
        let version = RleVersion::of(kind);
        let dictionary = matches!(kind, EncodingKind::Dictionary | EncodingKind::DictionaryV2);
        let values = match (column.data_type(), decode_as) {
            (OrcType::String { .. } | OrcType::Varchar { .. }, DataType::Utf8) if dictionary => {
                // A stripe's dictionary holds at most one string per row: a larger size is
                // corrupt, and would let a short run of lengths fill memory.
                let size = column.dictionary_size();
                if size > stripe.number_of_rows() {
                    return Err(Corrupt("a string dictionary is larger than its stripe"));
                }
                let dictionary = Dictionary::try_new(
                    size,
                    IntRle::new(stream(Kind::Length)?, version, Sign::Unsigned),
                    stream(Kind::DictionaryData)?,
                )?;
                Values::Dictionary {
                    ids: IntRle::new(stream(Kind::Data)?, version, Sign::Unsigned),
                    dictionary,
                }
            }
            (OrcType::String { .. } | OrcType::Varchar { .. }, DataType::Utf8) => Values::Bytes {
                lengths: IntRle::new(stream(Kind::Length)?, version, Sign::Unsigned),
                bytes: Cursor::new(stream(Kind::Data)?),
                utf8: Utf8::Checked,
            },
            (OrcType::Binary { .. }, DataType::Binary) if !dictionary => Values::Bytes {
                lengths: IntRle::new(stream(Kind::Length)?, version, Sign::Unsigned),
                bytes: Cursor::new(stream(Kind::Data)?),
                utf8: Utf8::Not,
            },
            _ if dictionary => return Ok(None),
            (OrcType::Boolean { .. }, DataType::Boolean) => {
                Values::Boolean(BoolRle::new(stream(Kind::Data)?))
            }
            (OrcType::Byte { .. }, DataType::Int8) => {
                Values::Byte(ByteRle::new(stream(Kind::Data)?))
            }
            (OrcType::Short { .. }, DataType::Int16)
            | (OrcType::Int { .. }, DataType::Int32)
            | (OrcType::Long { .. }, DataType::Int64)
            | (OrcType::Date { .. }, DataType::Date32) => Values::Int(
                IntRle::new(stream(Kind::Data)?, version, Sign::Signed),
                decode_as.clone(),
            ),
            (OrcType::Float { .. }, DataType::Float32) => {
                Values::Float(Cursor::new(stream(Kind::Data)?))
            }
            (OrcType::Double { .. }, DataType::Float64) => {
                Values::Double(Cursor::new(stream(Kind::Data)?))
            }
            (
                OrcType::Decimal {
                    precision, scale, ..
                },
                DataType::Decimal128(p, s),
            ) if *precision == u32::from(*p) && i64::from(*scale) == i64::from(*s) => {
                Values::Decimal {
                    digits: Cursor::new(stream(Kind::Data)?),
                    scales: IntRle::new(stream(Kind::Secondary)?, version, Sign::Signed),
                    precision: *p,
                    scale: *s,
                }
            }
            (orc, _) => match TimestampType::of(orc, decode_as) {
                Some(decoded) => Values::Timestamp(Box::new(TimestampValues::new(
                    (stream(Kind::Data)?, stream(Kind::Secondary)?),
                    version,
                    decoded,
                    stripe.writer_tz(),
                ))),
                None => return Ok(None),
            },
        };
        let present = match stripe.stream_map().get_opt(column, Kind::Present) {
            Some(_) => Some(BoolRle::new(stream(Kind::Present)?)),
            None => None,
        };
        Ok(Some(Self {
            present,
            values,
            ints: Vec::new(),
        }))
    }

    /// The next `n` values.
    pub fn next_batch(&mut self, n: usize) -> Decoded<ArrayRef> {
        let nulls = match &mut self.present {
            Some(present) => {
                let mut bits = BooleanBufferBuilder::new(n);
                present.decode(n, &mut bits)?;
                Some(NullBuffer::new(bits.finish()))
            }
            None => None,
        };
        let nulls = nulls.filter(|n| n.null_count() > 0);
        let held = n - nulls.as_ref().map_or(0, |n| n.null_count());
        let nulls = nulls.as_ref();
        Ok(match &mut self.values {
            Values::Boolean(bools) => {
                let mut bits = BooleanBufferBuilder::new(held);
                bools.decode(held, &mut bits)?;
                let values = spread_bits(bits.finish(), nulls, n);
                Arc::new(BooleanArray::new(values, nulls.cloned()))
            }
            Values::Byte(bytes) => {
                let mut values = Vec::with_capacity(held);
                for _ in 0..held {
                    values.push(bytes.next_byte()? as i8);
                }
                primitive::<arrow::datatypes::Int8Type>(values, nulls, n)
            }
            Values::Int(ints, as_type) => {
                self.ints.clear();
                ints.decode(held, &mut self.ints)?;
                let values = &self.ints;
                match as_type {
                    DataType::Int16 => {
                        primitive::<arrow::datatypes::Int16Type>(narrow(values)?, nulls, n)
                    }
                    DataType::Int32 => {
                        primitive::<arrow::datatypes::Int32Type>(narrow(values)?, nulls, n)
                    }
                    DataType::Date32 => {
                        primitive::<arrow::datatypes::Date32Type>(narrow(values)?, nulls, n)
                    }
                    // The scratch goes into the array (no copy); the next window allocates.
                    _ => primitive::<arrow::datatypes::Int64Type>(
                        std::mem::take(&mut self.ints),
                        nulls,
                        n,
                    ),
                }
            }
            Values::Float(cursor) => {
                let bytes = cursor.take_values(held, 4)?;
                let values = bytes
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                primitive::<arrow::datatypes::Float32Type>(values, nulls, n)
            }
            Values::Double(cursor) => {
                let bytes = cursor.take_values(held, 8)?;
                let values = bytes
                    .chunks_exact(8)
                    .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
                    .collect();
                primitive::<arrow::datatypes::Float64Type>(values, nulls, n)
            }
            Values::Bytes {
                lengths,
                bytes,
                utf8,
            } => {
                self.ints.clear();
                lengths.decode(held, &mut self.ints)?;
                let offsets = offsets(&self.ints, nulls, n)?;
                let total = offsets.last().copied().unwrap_or(0) as usize;
                let data = Buffer::from(bytes.take(total)?);
                match utf8 {
                    Utf8::Checked => Arc::new(
                        StringArray::try_new(offsets, data, nulls.cloned())
                            .map_err(|_| Corrupt("a string is not UTF-8"))?,
                    ),
                    Utf8::Not => Arc::new(
                        BinaryArray::try_new(offsets, data, nulls.cloned())
                            .map_err(|_| Corrupt("a binary column does not decode"))?,
                    ),
                }
            }
            Values::Dictionary { ids, dictionary } => {
                self.ints.clear();
                ids.decode(held, &mut self.ints)?;
                dictionary.take(&self.ints, nulls, n)?
            }
            Values::Timestamp(values) => {
                values.decode(held, &mut self.ints)?;
                // The scratch goes into the array (no copy); the next window allocates.
                let at_rows =
                    spread::<arrow::datatypes::Int64Type>(std::mem::take(&mut self.ints), nulls, n);
                timestamps(at_rows, nulls, values.decoded())
            }
            Values::Decimal {
                digits,
                scales,
                precision,
                scale,
            } => {
                self.ints.clear();
                scales.decode(held, &mut self.ints)?;
                let mut values = Vec::with_capacity(held);
                for &from in &self.ints {
                    let v = super::rle::unzigzag_128(digits.varint_128()?);
                    values.push(rescale(v, from, *scale)?);
                }
                let array = spread::<arrow::datatypes::Decimal128Type>(values, nulls, n);
                let array = Decimal128Array::new(array, nulls.cloned())
                    .with_precision_and_scale(*precision, *scale)
                    .map_err(|_| Corrupt("a decimal column's precision is out of range"))?;
                Arc::new(array)
            }
        })
    }

    /// Steps over the next `n` values.
    pub fn skip(&mut self, n: usize) -> Decoded<()> {
        let held = match &mut self.present {
            Some(present) => present.skip(n)?,
            None => n,
        };
        match &mut self.values {
            Values::Boolean(bools) => {
                bools.skip(held)?;
            }
            Values::Byte(bytes) => bytes.skip(held)?,
            Values::Int(ints, _) => ints.skip(held)?,
            Values::Float(cursor) => {
                cursor.take_values(held, 4)?;
            }
            Values::Double(cursor) => {
                cursor.take_values(held, 8)?;
            }
            Values::Bytes { lengths, bytes, .. } => {
                // A skip builds no array: its bytes may pass 2 GiB, and its lengths are
                // summed a bounded chunk at a time.
                let (mut left, mut total) = (held, 0usize);
                while left > 0 {
                    let chunk = left.min(SKIP_CHUNK);
                    self.ints.clear();
                    lengths.decode(chunk, &mut self.ints)?;
                    for &length in &self.ints {
                        let length = usize::try_from(length)
                            .map_err(|_| Corrupt("a value's length is negative"))?;
                        total = total
                            .checked_add(length)
                            .ok_or(Corrupt("a length stream overflows"))?;
                    }
                    left -= chunk;
                }
                bytes.take(total)?;
            }
            Values::Dictionary { ids, .. } => ids.skip(held)?,
            Values::Timestamp(values) => values.skip(held)?,
            Values::Decimal { digits, scales, .. } => {
                digits.skip_varints(held)?;
                scales.skip(held)?;
            }
        }
        Ok(())
    }
}

/// `values` narrowed to the column's type; a value out of its range is corrupt.
fn narrow<T: TryFrom<i64>>(values: &[i64]) -> Decoded<Vec<T>> {
    values
        .iter()
        .map(|&v| T::try_from(v).map_err(|_| Corrupt("a value is out of its column type's range")))
        .collect()
}

/// The values of the `n - nulls` present rows placed at their rows (the null rows zero).
fn spread<T: ArrowPrimitiveType>(
    values: Vec<T::Native>,
    nulls: Option<&NullBuffer>,
    n: usize,
) -> ScalarBuffer<T::Native> {
    let Some(nulls) = nulls else {
        return values.into();
    };
    let mut out = vec![T::Native::default(); n];
    for (row, value) in nulls.valid_indices().zip(values) {
        out[row] = value;
    }
    out.into()
}

/// `values` of the present rows as an array of `n` rows.
fn primitive<T: ArrowPrimitiveType>(
    values: Vec<T::Native>,
    nulls: Option<&NullBuffer>,
    n: usize,
) -> ArrayRef {
    Arc::new(PrimitiveArray::<T>::new(
        spread::<T>(values, nulls, n),
        nulls.cloned(),
    ))
}

/// Timestamps of type `decoded` with `values` at their rows.
fn timestamps(
    values: ScalarBuffer<i64>,
    nulls: Option<&NullBuffer>,
    decoded: TimestampType,
) -> ArrayRef {
    use arrow::array::{
        TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray,
        TimestampSecondArray,
    };
    use arrow::datatypes::TimeUnit;
    let (nulls, zone) = (nulls.cloned(), decoded.zone());
    match decoded.unit {
        TimeUnit::Second => {
            Arc::new(TimestampSecondArray::new(values, nulls).with_timezone_opt(zone))
        }
        TimeUnit::Millisecond => {
            Arc::new(TimestampMillisecondArray::new(values, nulls).with_timezone_opt(zone))
        }
        TimeUnit::Microsecond => {
            Arc::new(TimestampMicrosecondArray::new(values, nulls).with_timezone_opt(zone))
        }
        TimeUnit::Nanosecond => {
            Arc::new(TimestampNanosecondArray::new(values, nulls).with_timezone_opt(zone))
        }
    }
}

/// Boolean `values` of the present rows placed at their rows.
fn spread_bits(values: BooleanBuffer, nulls: Option<&NullBuffer>, n: usize) -> BooleanBuffer {
    let Some(nulls) = nulls else {
        return values;
    };
    let mut out = BooleanBufferBuilder::new(n);
    out.append_n(n, false);
    for (row, value) in nulls.valid_indices().zip(values.iter()) {
        out.set_bit(row, value);
    }
    out.finish()
}

/// A decimal's digits `v` of scale `from` at the column's `scale`: truncated when `from` is
/// larger (as `orc-rust` does), multiplied when smaller.
fn rescale(v: i128, from: i64, scale: i8) -> Decoded<i128> {
    // The scale stream is signed, its values read as unsigned (as ORC's C++ reader does).
    let from = i64::from(from as u32);
    let to = i64::from(scale as u8);
    let out_of_range = Corrupt("a decimal's scale is out of range");
    match from.cmp(&to) {
        std::cmp::Ordering::Equal => Ok(v),
        std::cmp::Ordering::Greater => {
            let factor = u32::try_from(from - to)
                .ok()
                .and_then(|k| 10i128.checked_pow(k));
            Ok(factor.map_or(0, |f| v / f))
        }
        std::cmp::Ordering::Less => {
            let factor = 10i128.checked_pow((to - from) as u32).ok_or(out_of_range)?;
            v.checked_mul(factor).ok_or(out_of_range)
        }
    }
}

#[cfg(test)]
mod tests;
