//! A small ORC writer for test fixtures: Arrow batches → one ORC file, in process.
//!
//! `orc-rust` 0.8's own writer writes flat integers, floats, strings and booleans only, with
//! no statistics, row index or type attributes, so the fixtures the ORC reader's tests need
//! (decimals, dates, timestamps, nested types, stripe and row-group statistics, Iceberg field
//! ids) are written here from `orc-rust`'s protobuf types. What it writes follows the ORC
//! v1 specification (file version 0.12):
//!
//! * every column `DIRECT` encoded with run-length encoding v1, always as literal runs
//!   (integers as zigzag varints, bytes and booleans through byte RLE); a `PRESENT` stream
//!   for every column;
//! * strings and binaries as `DATA` + `LENGTH`; decimals as zigzag varints + a `SECONDARY`
//!   scale per value; timestamps as seconds since 2015-01-01 + encoded nanoseconds, writer
//!   time zone UTC;
//! * a struct's members only where the struct is present, a list's elements and a map's
//!   keys and values only for present lists and maps;
//! * statistics per file, stripe and row group (a `ROW_INDEX` stream per column and group of
//!   [`OrcWriteOptions::row_index_stride`] rows); row-index positions are the streams' byte
//!   offsets at the group's start (integer runs restart there; boolean bit streams do
//!   not, their positions are approximate — `orc-rust` does not seek by them);
//! * no compression.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Field, Float32Type, Float64Type, Int8Type, Int16Type,
    Int32Type, Int64Type, Schema, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow::record_batch::RecordBatch;
use orc_rust::proto;
use prost013::Message;

use statistics::{Kind, Stats};

mod statistics;
mod tail;

pub use orc_rust::proto as orc_proto;
pub use tail::{metadata_section, with_tail};

/// Seconds from the UNIX epoch to ORC's timestamp base, 2015-01-01 00:00:00 UTC.
const ORC_EPOCH: i64 = 1_420_070_400;

/// How the file is laid out.
#[derive(Debug, Clone)]
pub struct OrcWriteOptions {
    /// Rows per stripe.
    pub stripe_rows: usize,
    /// Rows of each stripe in order, when given (the last takes the rest): a Parquet file's
    /// row groups become stripes of the same rows.
    pub stripes: Vec<usize>,
    /// Rows per row-index group (0: no row index).
    pub row_index_stride: usize,
    /// Attributes per top-level column name, written on that column's type (for example
    /// `iceberg.id`); nested types take them by dotted path (`s.x`, `l._elem`, `m._key`).
    pub attributes: BTreeMap<String, Vec<(String, String)>>,
}

impl Default for OrcWriteOptions {
    fn default() -> Self {
        Self {
            stripe_rows: 64 * 1024,
            stripes: vec![],
            row_index_stride: 10_000,
            attributes: BTreeMap::new(),
        }
    }
}

/// An error writing a fixture (an Arrow type the writer does not know).
#[derive(Debug)]
pub struct WriteError(pub String);

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WriteError {}

type Result<T> = std::result::Result<T, WriteError>;

/// The ORC file holding the rows of `batches` (all of `schema`).
pub fn write_orc(
    schema: &Schema,
    batches: &[RecordBatch],
    options: &OrcWriteOptions,
) -> Result<Vec<u8>> {
    let mut types = vec![];
    let root = ColumnType::from_fields(schema.fields(), "", options, &mut types)?;
    let batch = match batches.is_empty() {
        true => RecordBatch::new_empty(Arc::new(schema.clone())),
        false => arrow::compute::concat_batches(&Arc::new(schema.clone()), batches)
            .map_err(|e| WriteError(e.to_string()))?,
    };
    let rows = batch.num_rows();
    let columns: Vec<ArrayRef> = batch.columns().to_vec();
    let mut file = b"ORC".to_vec();
    let mut stripes = vec![];
    let mut stripe_stats = vec![];
    let mut file_stats = vec![Stats::default(); types.len()];
    let stripe_rows = options.stripe_rows.max(1);
    let mut start = 0;
    let mut sizes = options.stripes.iter();
    while start < rows {
        let size = sizes
            .next()
            .copied()
            .filter(|s| *s > 0)
            .unwrap_or(stripe_rows);
        let end = (start + size).min(rows);
        let (info, stats) =
            write_stripe(&mut file, &root, &columns, start..end, options, types.len())?;
        for (f, s) in file_stats.iter_mut().zip(&stats) {
            f.merge(s);
        }
        stripe_stats.push(proto::StripeStatistics {
            col_stats: stats.iter().map(Stats::to_proto).collect(),
        });
        stripes.push(info);
        start = end;
    }
    // The root's statistics count rows.
    file_stats[0].values = rows as u64;
    let content_length = file.len() as u64;
    let metadata = proto::Metadata { stripe_stats }.encode_to_vec();
    file.extend_from_slice(&metadata);
    let footer = proto::Footer {
        header_length: Some(3),
        content_length: Some(content_length),
        stripes,
        types,
        number_of_rows: Some(rows as u64),
        statistics: file_stats.iter().map(Stats::to_proto).collect(),
        row_index_stride: (options.row_index_stride > 0).then_some(options.row_index_stride as u32),
        writer: Some(1),
        ..Default::default()
    }
    .encode_to_vec();
    file.extend_from_slice(&footer);
    let postscript = proto::PostScript {
        footer_length: Some(footer.len() as u64),
        compression: Some(proto::CompressionKind::None as i32),
        version: vec![0, 12],
        metadata_length: Some(metadata.len() as u64),
        writer_version: Some(9),
        magic: Some("ORC".into()),
        ..Default::default()
    }
    .encode_to_vec();
    file.extend_from_slice(&postscript);
    file.push(postscript.len() as u8);
    Ok(file)
}

/// One column of the type tree, with its ORC column id.
#[derive(Debug)]
struct ColumnType {
    id: usize,
    data_type: DataType,
    children: Vec<ColumnType>,
}

impl ColumnType {
    /// The root struct of `fields`, its types appended to `types` in pre-order.
    fn from_fields(
        fields: &arrow::datatypes::Fields,
        path: &str,
        options: &OrcWriteOptions,
        types: &mut Vec<proto::Type>,
    ) -> Result<Self> {
        let id = types.len();
        types.push(proto::Type {
            kind: Some(proto::r#type::Kind::Struct as i32),
            field_names: fields.iter().map(|f| f.name().clone()).collect(),
            attributes: attributes(options, path),
            ..Default::default()
        });
        let mut children = vec![];
        for f in fields {
            let child_path = match path {
                "" => f.name().clone(),
                p => format!("{p}.{}", f.name()),
            };
            let child = Self::of(f, &child_path, options, types)?;
            types[id].subtypes.push(child.id as u32);
            children.push(child);
        }
        Ok(Self {
            id,
            data_type: DataType::Struct(fields.clone()),
            children,
        })
    }

    fn of(
        field: &Field,
        path: &str,
        options: &OrcWriteOptions,
        types: &mut Vec<proto::Type>,
    ) -> Result<Self> {
        use proto::r#type::Kind;
        let t = field.data_type();
        if let DataType::Struct(fields) = t {
            return Self::from_fields(fields, path, options, types);
        }
        let id = types.len();
        let mut ty = proto::Type {
            attributes: attributes(options, path),
            ..Default::default()
        };
        let kind = match t {
            DataType::Boolean => Kind::Boolean,
            DataType::Int8 => Kind::Byte,
            DataType::Int16 => Kind::Short,
            DataType::Int32 => Kind::Int,
            DataType::Int64 => Kind::Long,
            DataType::Float32 => Kind::Float,
            DataType::Float64 => Kind::Double,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Kind::String,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView => Kind::Binary,
            DataType::Date32 => Kind::Date,
            DataType::Decimal128(p, s) => {
                ty.precision = Some(u32::from(*p));
                ty.scale = Some(*s as u32);
                Kind::Decimal
            }
            DataType::Timestamp(_, None) => Kind::Timestamp,
            DataType::Timestamp(_, Some(_)) => Kind::TimestampInstant,
            DataType::List(_) | DataType::LargeList(_) => Kind::List,
            DataType::Map(..) => Kind::Map,
            other => return Err(WriteError(format!("ORC fixtures cannot hold {other}"))),
        };
        ty.kind = Some(kind as i32);
        types.push(ty);
        let children = match t {
            DataType::List(item) | DataType::LargeList(item) => {
                vec![Self::of(item, &format!("{path}._elem"), options, types)?]
            }
            DataType::Map(entries, _) => {
                let DataType::Struct(kv) = entries.data_type() else {
                    return Err(WriteError("map entries are not a struct".into()));
                };
                vec![
                    Self::of(&kv[0], &format!("{path}._key"), options, types)?,
                    Self::of(&kv[1], &format!("{path}._value"), options, types)?,
                ]
            }
            _ => vec![],
        };
        types[id].subtypes = children.iter().map(|c| c.id as u32).collect();
        Ok(Self {
            id,
            data_type: t.clone(),
            children,
        })
    }
}

fn attributes(options: &OrcWriteOptions, path: &str) -> Vec<proto::StringPair> {
    options
        .attributes
        .get(path)
        .into_iter()
        .flatten()
        .map(|(k, v)| proto::StringPair {
            key: Some(k.clone()),
            value: Some(v.clone()),
        })
        .collect()
}

/// The streams of one column in one stripe.
#[derive(Default)]
struct Streams {
    /// Booleans form one bit stream per stripe (encoded when the stripe ends).
    present_bits: Vec<bool>,
    data_bits: Vec<bool>,
    present: Vec<u8>,
    data: Vec<u8>,
    length: Vec<u8>,
    secondary: Vec<u8>,
    /// Row index entries (one per group).
    index: Vec<proto::RowIndexEntry>,
}

/// Writes the stripe of top-level `rows`; returns its information and column statistics.
fn write_stripe(
    file: &mut Vec<u8>,
    root: &ColumnType,
    columns: &[ArrayRef],
    rows: std::ops::Range<usize>,
    options: &OrcWriteOptions,
    n_types: usize,
) -> Result<(proto::StripeInformation, Vec<Stats>)> {
    let mut streams: Vec<Streams> = (0..n_types).map(|_| Streams::default()).collect();
    let mut stats = vec![Stats::default(); n_types];
    let stride = match options.row_index_stride {
        0 => rows.len().max(1),
        s => s,
    };
    let mut group_start = rows.start;
    while group_start < rows.end {
        let group_end = (group_start + stride).min(rows.end);
        let mut group_stats = vec![Stats::default(); n_types];
        let positions: Vec<Vec<u64>> = streams.iter().map(positions_of).collect();
        let indices: Vec<usize> = (group_start..group_end).collect();
        group_stats[0].values = indices.len() as u64;
        for (child, array) in root.children.iter().zip(columns) {
            encode(child, array, &indices, &mut streams, &mut group_stats)?;
        }
        for (id, s) in streams.iter_mut().enumerate() {
            s.index.push(proto::RowIndexEntry {
                positions: positions[id].clone(),
                statistics: Some(group_stats[id].to_proto()),
            });
        }
        for (total, g) in stats.iter_mut().zip(&group_stats) {
            total.merge(g);
        }
        group_start = group_end;
    }
    for s in &mut streams {
        write_booleans(&mut s.present, &s.present_bits);
        if !s.data_bits.is_empty() {
            write_booleans(&mut s.data, &s.data_bits);
        }
    }
    let offset = file.len() as u64;
    let mut stream_list = vec![];
    let mut index_length = 0;
    if options.row_index_stride > 0 {
        for (id, s) in streams.iter().enumerate() {
            let bytes = proto::RowIndex {
                entry: s.index.clone(),
            }
            .encode_to_vec();
            index_length += bytes.len() as u64;
            stream_list.push(stream(proto::stream::Kind::RowIndex, id, bytes.len()));
            file.extend_from_slice(&bytes);
        }
    }
    let mut data_length = 0;
    for (id, s) in streams.iter().enumerate() {
        use proto::stream::Kind;
        let parts: [(Kind, &Vec<u8>); 4] = [
            (Kind::Present, &s.present),
            (Kind::Data, &s.data),
            (Kind::Length, &s.length),
            (Kind::Secondary, &s.secondary),
        ];
        for (kind, bytes) in parts {
            if bytes.is_empty() {
                continue;
            }
            data_length += bytes.len() as u64;
            stream_list.push(stream(kind, id, bytes.len()));
            file.extend_from_slice(bytes);
        }
    }
    let footer = proto::StripeFooter {
        streams: stream_list,
        columns: (0..n_types)
            .map(|_| proto::ColumnEncoding {
                kind: Some(proto::column_encoding::Kind::Direct as i32),
                ..Default::default()
            })
            .collect(),
        writer_timezone: Some("UTC".into()),
        ..Default::default()
    }
    .encode_to_vec();
    file.extend_from_slice(&footer);
    stats[0].values = rows.len() as u64;
    let info = proto::StripeInformation {
        offset: Some(offset),
        index_length: Some(index_length),
        data_length: Some(data_length),
        footer_length: Some(footer.len() as u64),
        number_of_rows: Some(rows.len() as u64),
        ..Default::default()
    };
    Ok((info, stats))
}

fn stream(kind: proto::stream::Kind, column: usize, length: usize) -> proto::Stream {
    proto::Stream {
        kind: Some(kind as i32),
        column: Some(column as u32),
        length: Some(length as u64),
    }
}

/// Row-index positions of a column's streams at a group's start: each stream's byte offset
/// and 0 values into its run (booleans: and 0 bits), in stream order.
fn positions_of(s: &Streams) -> Vec<u64> {
    let bits = s.present_bits.len() as u64;
    let mut out = vec![bits / 8 + bits / 1024, 0, bits % 8];
    out.push(s.data.len().max(s.data_bits.len() / 8) as u64);
    out.push(0);
    if !s.length.is_empty() || !s.secondary.is_empty() {
        out.push(s.length.len().max(s.secondary.len()) as u64);
        out.push(0);
    }
    out
}

/// Encodes the values at `rows` of `array` (rows where the parent is present) into the
/// streams of `column` and its children.
fn encode(
    column: &ColumnType,
    array: &ArrayRef,
    rows: &[usize],
    streams: &mut [Streams],
    stats: &mut [Stats],
) -> Result<()> {
    let id = column.id;
    streams[id]
        .present_bits
        .extend(rows.iter().map(|&i| array.is_valid(i)));
    let valid: Vec<usize> = rows
        .iter()
        .copied()
        .filter(|&i| array.is_valid(i))
        .collect();
    let s = &mut stats[id];
    s.values += valid.len() as u64;
    s.has_null |= valid.len() < rows.len();
    let out = &mut streams[id];
    match &column.data_type {
        DataType::Boolean => {
            let a = array.as_boolean();
            let values: Vec<bool> = valid.iter().map(|&i| a.value(i)).collect();
            s.true_count += values.iter().filter(|v| **v).count() as u64;
            s.kind = Kind::Boolean;
            out.data_bits.extend(values);
        }
        DataType::Int8 => {
            let a = array.as_primitive::<Int8Type>();
            let values: Vec<u8> = valid.iter().map(|&i| a.value(i) as u8).collect();
            for &i in &valid {
                s.int(i64::from(a.value(i)));
            }
            write_bytes(&mut out.data, &values);
        }
        DataType::Int16 => ints(
            out,
            s,
            valid
                .iter()
                .map(|&i| i64::from(array.as_primitive::<Int16Type>().value(i))),
        ),
        DataType::Int32 => ints(
            out,
            s,
            valid
                .iter()
                .map(|&i| i64::from(array.as_primitive::<Int32Type>().value(i))),
        ),
        DataType::Int64 => ints(
            out,
            s,
            valid
                .iter()
                .map(|&i| array.as_primitive::<Int64Type>().value(i)),
        ),
        DataType::Date32 => {
            let a = array.as_primitive::<Date32Type>();
            let values: Vec<i64> = valid.iter().map(|&i| i64::from(a.value(i))).collect();
            for &v in &values {
                s.date(v as i32);
            }
            write_ints(&mut out.data, &values, true);
        }
        DataType::Float32 => {
            let a = array.as_primitive::<Float32Type>();
            for &i in &valid {
                out.data.extend_from_slice(&a.value(i).to_le_bytes());
                s.double(f64::from(a.value(i)));
            }
        }
        DataType::Float64 => {
            let a = array.as_primitive::<Float64Type>();
            for &i in &valid {
                out.data.extend_from_slice(&a.value(i).to_le_bytes());
                s.double(a.value(i));
            }
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            let mut lengths = vec![];
            for &i in &valid {
                let v = string_at(array, i);
                out.data.extend_from_slice(v.as_bytes());
                lengths.push(v.len() as i64);
                s.string(v);
            }
            write_ints(&mut out.length, &lengths, false);
        }
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            let mut lengths = vec![];
            for &i in &valid {
                let v = binary_at(array, i);
                out.data.extend_from_slice(v);
                lengths.push(v.len() as i64);
                s.binary_sum += v.len() as i64;
            }
            s.kind = Kind::Binary;
            write_ints(&mut out.length, &lengths, false);
        }
        DataType::Decimal128(_, scale) => {
            let a = array.as_primitive::<Decimal128Type>();
            let mut scales = vec![];
            for &i in &valid {
                let v = a.value(i);
                write_varint(&mut out.data, zigzag128(v));
                scales.push(i64::from(*scale));
                s.decimal(v, *scale);
            }
            write_ints(&mut out.secondary, &scales, true);
        }
        DataType::Timestamp(unit, _) => {
            let (mut seconds, mut nanos) = (vec![], vec![]);
            for &i in &valid {
                let (per_second, v) = match unit {
                    TimeUnit::Second => (1, array.as_primitive::<TimestampSecondType>().value(i)),
                    TimeUnit::Millisecond => (
                        1_000,
                        array.as_primitive::<TimestampMillisecondType>().value(i),
                    ),
                    TimeUnit::Microsecond => (
                        1_000_000,
                        array.as_primitive::<TimestampMicrosecondType>().value(i),
                    ),
                    TimeUnit::Nanosecond => (
                        1_000_000_000,
                        array.as_primitive::<TimestampNanosecondType>().value(i),
                    ),
                };
                let (secs, fraction) = (v.div_euclid(per_second), v.rem_euclid(per_second));
                let ns = fraction * (1_000_000_000 / per_second);
                s.timestamp(secs * 1000 + ns / 1_000_000);
                // ORC-763: readers take one second off negative seconds with nanoseconds
                // past a millisecond.
                let written = if secs < 0 && ns > 999_999 {
                    secs + 1
                } else {
                    secs
                };
                seconds.push(written - ORC_EPOCH);
                nanos.push(encode_nanos(ns));
            }
            write_ints(&mut out.data, &seconds, true);
            write_ints(&mut out.secondary, &nanos, false);
        }
        DataType::Struct(_) => {
            let a = array.as_struct();
            for (child, child_array) in column.children.iter().zip(a.columns()) {
                encode(child, child_array, &valid, streams, stats)?;
            }
        }
        DataType::List(_) | DataType::LargeList(_) => {
            let (lengths, elements, values) = match array.data_type() {
                DataType::List(_) => {
                    let a = array.as_list::<i32>();
                    let offsets = a.value_offsets();
                    list_parts(
                        &valid,
                        |i| (offsets[i] as usize, offsets[i + 1] as usize),
                        a.values(),
                    )
                }
                _ => {
                    let a = array.as_list::<i64>();
                    let offsets = a.value_offsets();
                    list_parts(
                        &valid,
                        |i| (offsets[i] as usize, offsets[i + 1] as usize),
                        a.values(),
                    )
                }
            };
            write_ints(&mut streams[id].length, &lengths, false);
            encode(&column.children[0], &values, &elements, streams, stats)?;
        }
        DataType::Map(..) => {
            let a = array.as_map();
            let offsets = a.value_offsets();
            let (lengths, elements, _) = list_parts(
                &valid,
                |i| (offsets[i] as usize, offsets[i + 1] as usize),
                a.keys(),
            );
            write_ints(&mut streams[id].length, &lengths, false);
            encode(&column.children[0], a.keys(), &elements, streams, stats)?;
            encode(&column.children[1], a.values(), &elements, streams, stats)?;
        }
        other => return Err(WriteError(format!("ORC fixtures cannot hold {other}"))),
    }
    Ok(())
}

fn list_parts(
    valid: &[usize],
    bounds: impl Fn(usize) -> (usize, usize),
    values: &ArrayRef,
) -> (Vec<i64>, Vec<usize>, ArrayRef) {
    let (mut lengths, mut elements) = (vec![], vec![]);
    for &i in valid {
        let (start, end) = bounds(i);
        lengths.push((end - start) as i64);
        elements.extend(start..end);
    }
    (lengths, elements, Arc::clone(values))
}

fn ints(out: &mut Streams, s: &mut Stats, values: impl Iterator<Item = i64>) {
    let values: Vec<i64> = values.collect();
    for &v in &values {
        s.int(v);
    }
    write_ints(&mut out.data, &values, true);
}

fn string_at(array: &ArrayRef, i: usize) -> &str {
    match array.data_type() {
        DataType::LargeUtf8 => array.as_string::<i64>().value(i),
        DataType::Utf8View => array.as_string_view().value(i),
        _ => array.as_string::<i32>().value(i),
    }
}

fn binary_at(array: &ArrayRef, i: usize) -> &[u8] {
    match array.data_type() {
        DataType::LargeBinary => array.as_binary::<i64>().value(i),
        DataType::BinaryView => array.as_binary_view().value(i),
        _ => array.as_binary::<i32>().value(i),
    }
}

/// ORC's nanosecond encoding: trailing decimal zeros (two or more) dropped, their count − 1
/// in the low three bits.
fn encode_nanos(nanos: i64) -> i64 {
    if nanos == 0 {
        return 0;
    }
    if nanos % 100 != 0 {
        return nanos << 3;
    }
    let (mut n, mut zeros) = (nanos / 100, 1);
    while n % 10 == 0 && zeros < 7 {
        n /= 10;
        zeros += 1;
    }
    (n << 3) | zeros
}

fn write_varint(out: &mut Vec<u8>, mut v: u128) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn zigzag(v: i64) -> u128 {
    ((v << 1) ^ (v >> 63)) as u64 as u128
}

fn zigzag128(v: i128) -> u128 {
    ((v << 1) ^ (v >> 127)) as u128
}

/// Integer RLE v1 as literal runs of up to 128 values.
fn write_ints(out: &mut Vec<u8>, values: &[i64], signed: bool) {
    for chunk in values.chunks(128) {
        out.push((-(chunk.len() as i16)) as u8);
        for &v in chunk {
            write_varint(out, if signed { zigzag(v) } else { v as u64 as u128 });
        }
    }
}

/// Byte RLE as literal runs of up to 128 bytes.
fn write_bytes(out: &mut Vec<u8>, values: &[u8]) {
    for chunk in values.chunks(128) {
        out.push((-(chunk.len() as i16)) as u8);
        out.extend_from_slice(chunk);
    }
}

/// Boolean RLE: bits, most significant first, through byte RLE.
fn write_booleans(out: &mut Vec<u8>, values: &[bool]) {
    let bytes: Vec<u8> = values
        .chunks(8)
        .map(|bits| {
            bits.iter()
                .enumerate()
                .fold(0u8, |b, (k, &bit)| b | (u8::from(bit) << (7 - k)))
        })
        .collect();
    write_bytes(out, &bytes);
}

#[cfg(test)]
mod tests {
    use super::statistics::decimal_text;
    use super::*;
    use arrow::array::{Int32Array, StringArray};

    #[test]
    fn decimal_text_places_the_point() {
        assert_eq!(decimal_text(-12345, 3), "-12.345");
        assert_eq!(decimal_text(5, 2), "0.05");
        assert_eq!(decimal_text(7, 0), "7");
    }

    #[test]
    fn nanos_drop_trailing_zeros() {
        assert_eq!(encode_nanos(0), 0);
        assert_eq!(encode_nanos(123), 123 << 3);
        assert_eq!(encode_nanos(1_000), (1 << 3) | 2);
        assert_eq!(encode_nanos(500_000_000), (5 << 3) | 7);
    }

    #[test]
    fn orc_rust_reads_what_is_written() {
        let schema = Schema::new(vec![
            Field::new("i", DataType::Int32, true),
            Field::new("s", DataType::Utf8, true),
        ]);
        let batch = RecordBatch::try_new(
            Arc::new(schema.clone()),
            vec![
                Arc::new(Int32Array::from(vec![Some(1), None, Some(-300)])),
                Arc::new(StringArray::from(vec![Some("a"), Some("bc"), None])),
            ],
        )
        .unwrap();
        let options = OrcWriteOptions {
            stripe_rows: 2,
            row_index_stride: 1,
            ..Default::default()
        };
        let bytes = write_orc(&schema, &[batch], &options).unwrap();
        let reader = orc_rust::ArrowReaderBuilder::try_new(bytes::Bytes::from(bytes))
            .unwrap()
            .build();
        let batches: Vec<RecordBatch> = reader.collect::<std::result::Result<_, _>>().unwrap();
        let i: Vec<Option<i32>> = batches
            .iter()
            .flat_map(|b| {
                b.column(0)
                    .as_primitive::<Int32Type>()
                    .iter()
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(i, vec![Some(1), None, Some(-300)]);
        let s: Vec<Option<String>> = batches
            .iter()
            .flat_map(|b| {
                let s = b.column(1).as_string::<i32>();
                s.iter().map(|v| v.map(str::to_string)).collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(s, vec![Some("a".into()), Some("bc".into()), None]);
    }
}
