//! lakescan's decoders against `orc-rust`'s over files `orc-rust` writes (integer RLE v2 in
//! all four sub-encodings, bytes, booleans, floating point, with and without nulls), in
//! random windows and skips.

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BinaryArray, BooleanArray, Float32Array, Float64Array, Int8Array, Int16Array,
    Int32Array, Int64Array, RecordBatch, StringArray,
};
use arrow::datatypes::{Field, Schema, TimeUnit};
use bytes::Bytes;
use orc_rust::stripe::Stripe;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;

/// Values drawn so that the writer picks each RLE v2 sub-encoding: constant runs (short
/// repeat), arithmetic sequences (fixed delta), rising values (delta), small random values
/// (direct), small values with rare huge ones (patched base), and wide values.
fn longs(rng: &mut StdRng, n: usize) -> Vec<i64> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let run = rng.random_range(1..700);
        let start: i64 = rng.random_range(-1_000_000..1_000_000);
        match rng.random_range(0..7) {
            0 => out.extend(std::iter::repeat_n(start, run)),
            1 => out.extend((0..run as i64).map(|i| start + 7 * i)),
            2 => out.extend((0..run as i64).map(|i| start - i * i)),
            3 => out.extend((0..run).map(|_| rng.random_range(-100..100))),
            4 => out.extend((0..run).map(|_| match rng.random_range(0..40) {
                0 => rng.random_range(1 << 40..1 << 50),
                _ => rng.random_range(0..1000),
            })),
            5 => out.extend((0..run).map(|_| rng.random_range(-(1 << 62)..1 << 62))),
            // `orc-rust`'s writer overflows on runs with the type's extremes.
            _ => out.extend([1 << 62, -(1 << 62), 0, -1, 1]),
        }
    }
    out.truncate(n);
    out
}

fn nulls(rng: &mut StdRng, n: usize, every: u32) -> Vec<bool> {
    (0..n).map(|_| rng.random_range(0..every) != 0).collect()
}

fn with_nulls<T: Clone>(values: &[T], valid: Option<&[bool]>) -> Vec<Option<T>> {
    match valid {
        Some(valid) => values
            .iter()
            .zip(valid)
            .map(|(v, ok)| ok.then(|| v.clone()))
            .collect(),
        None => values.iter().map(|v| Some(v.clone())).collect(),
    }
}

fn batch(rng: &mut StdRng, n: usize) -> RecordBatch {
    let l = longs(rng, n);
    let some = nulls(rng, n, 5);
    let few = nulls(rng, n, 200);
    let none = vec![false; n];
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("long", Arc::new(Int64Array::from(l.clone()))),
        (
            "long_nulls",
            Arc::new(Int64Array::from(with_nulls(&l, Some(&some)))),
        ),
        (
            "int",
            Arc::new(Int32Array::from_iter(
                l.iter().map(|v| Some((*v % 100_000) as i32)),
            )),
        ),
        (
            "short_nulls",
            Arc::new(Int16Array::from(with_nulls(
                &l.iter().map(|v| (*v % 10_000) as i16).collect::<Vec<_>>(),
                Some(&few),
            ))),
        ),
        (
            "byte",
            Arc::new(Int8Array::from_iter(l.iter().map(|v| Some((*v % 3) as i8)))),
        ),
        (
            "bool_nulls",
            Arc::new(BooleanArray::from(with_nulls(
                &l.iter().map(|v| v % 3 == 0).collect::<Vec<_>>(),
                Some(&some),
            ))),
        ),
        (
            "float",
            Arc::new(Float32Array::from_iter(
                l.iter().map(|v| Some(*v as f32 / 3.0)),
            )),
        ),
        (
            "double_nulls",
            Arc::new(Float64Array::from(with_nulls(
                &l.iter().map(|v| *v as f64 / 7.0).collect::<Vec<_>>(),
                Some(&some),
            ))),
        ),
        (
            "few_strings",
            Arc::new(StringArray::from_iter(l.iter().map(|v| {
                Some(["a", "bé", "", "ccc"][(v.unsigned_abs() % 4) as usize])
            }))),
        ),
        (
            "strings_nulls",
            Arc::new(StringArray::from(with_nulls(
                &l.iter().map(|v| format!("{v}✓")).collect::<Vec<_>>(),
                Some(&some),
            ))),
        ),
        (
            "binary_nulls",
            Arc::new(BinaryArray::from_iter(l.iter().zip(&few).map(|(v, ok)| {
                ok.then(|| v.to_le_bytes()[..(v.unsigned_abs() % 9) as usize].to_vec())
            }))),
        ),
        (
            "all_null",
            Arc::new(Int64Array::from(with_nulls(&l, Some(&none)))),
        ),
    ];
    let fields: Vec<Field> = columns
        .iter()
        .map(|(name, a)| Field::new(*name, a.data_type().clone(), true))
        .collect();
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
}

fn written(batch: &RecordBatch) -> Bytes {
    written_in_stripes_of(batch, 64 * 1024)
}

/// `batch` as an ORC file `orc-rust` writes, in stripes of about `stripe_bytes`.
fn written_in_stripes_of(batch: &RecordBatch, stripe_bytes: usize) -> Bytes {
    let mut out = Vec::new();
    let mut writer = orc_rust::ArrowWriterBuilder::new(&mut out, batch.schema())
        .with_stripe_byte_size(stripe_bytes)
        .try_build()
        .unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
    Bytes::from(out)
}

#[test]
fn primitive_columns_decode_as_orc_rust_decodes_them() {
    let mut rng = StdRng::seed_from_u64(23);
    let batch = batch(&mut rng, 40_000);
    let mut file = written(&batch);
    let metadata = orc_rust::reader::metadata::read_metadata(&mut file).unwrap();
    assert!(metadata.stripe_metadatas().len() > 1, "several stripes");
    let steps = [1, 2, 7, 100, 511, 512, 513, 1000, 3000, 8192];
    let mut primitive = 0;
    for info in metadata.stripe_metadatas() {
        let stripe = Stripe::new(&mut file, &metadata, metadata.root_data_type(), info).unwrap();
        let rows = stripe.number_of_rows();
        for (position, field) in batch.schema().fields().iter().enumerate() {
            let as_type = field.data_type();
            let mut ours = ColumnDecoder::try_new(&stripe, position, as_type)
                .unwrap()
                .unwrap();
            assert!(matches!(ours, ColumnDecoder::Primitive(_)), "{field}");
            primitive += 1;
            let column = &stripe.columns()[position];
            let mut theirs =
                orc_rust::array_decoder::array_decoder_factory(column, as_type, &stripe).unwrap();
            let mut at = 0;
            while at < rows {
                let n = steps[rng.random_range(0..steps.len())].min(rows - at);
                if rng.random_range(0..3) == 0 {
                    ours.skip(n).unwrap();
                    theirs.skip_values(n, None).unwrap();
                } else {
                    let a = ours.next_batch(n).unwrap();
                    let b = theirs.next_batch(n, None).unwrap();
                    assert_eq!(a.len(), n);
                    assert_eq!(a.to_data(), b.to_data(), "{field} rows {at}..{}", at + n);
                }
                at += n;
            }
            assert!(ours.next_batch(1).is_err(), "{field}: the stripe is read");
        }
    }
    assert!(primitive > 9);
}

#[test]
fn truncated_streams_are_errors() {
    let mut rng = StdRng::seed_from_u64(5);
    let batch = batch(&mut rng, 3000);
    let mut file = written(&batch);
    let metadata = orc_rust::reader::metadata::read_metadata(&mut file).unwrap();
    let info = &metadata.stripe_metadatas()[0];
    let stripe = Stripe::new(&mut file, &metadata, metadata.root_data_type(), info).unwrap();
    let rows = stripe.number_of_rows();
    for (position, field) in batch.schema().fields().iter().enumerate() {
        let mut ours = ColumnDecoder::try_new(&stripe, position, field.data_type())
            .unwrap()
            .unwrap();
        let err = ours.next_batch(rows + 600).unwrap_err();
        assert!(err.to_string().contains("ends"), "{field}: {err}");
    }
}

/// The Arrow type `orc-rust` decodes a primitive ORC type as (`None`: not primitive, a
/// decimal without precision, which lakescan reads through a re-encoded footer, or a
/// `char`, which `orc-rust` decodes).
fn primitive_arrow_type(orc: &OrcType) -> Option<DataType> {
    Some(match orc {
        OrcType::Boolean { .. } => DataType::Boolean,
        OrcType::Byte { .. } => DataType::Int8,
        OrcType::Short { .. } => DataType::Int16,
        OrcType::Int { .. } => DataType::Int32,
        OrcType::Long { .. } => DataType::Int64,
        OrcType::Float { .. } => DataType::Float32,
        OrcType::Double { .. } => DataType::Float64,
        OrcType::Date { .. } => DataType::Date32,
        OrcType::String { .. } | OrcType::Varchar { .. } => DataType::Utf8,
        OrcType::Binary { .. } => DataType::Binary,
        OrcType::Decimal {
            precision, scale, ..
        } if *precision > 0 => DataType::Decimal128(*precision as u8, *scale as i8),
        OrcType::Timestamp { .. } => DataType::Timestamp(TimeUnit::Nanosecond, None),
        OrcType::TimestampWithLocalTimezone { .. } => {
            DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))
        }
        _ => return None,
    })
}

/// Every top-level primitive column of Apache ORC's example files in `testdata/orc/` (Java,
/// C++ and Hive writers; zlib, snappy, LZ4, zstd and no compression; RLE v1 and v2;
/// timestamps in UTC and in a zone with daylight saving time) decodes as `orc-rust` decodes
/// it, in random windows and skips.
#[test]
fn apache_files_decode_as_orc_rust_decodes_them() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/orc");
    let mut rng = StdRng::seed_from_u64(11);
    let steps = [1, 5, 100, 513, 1024, 5000];
    let (mut files, mut columns, mut values, mut timestamps) = (Vec::new(), 0, 0, 0);
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "orc"))
        .collect();
    names.sort();
    for path in names {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        // Files lakescan refuses: ORC's unstable 2.0 draft stores decimals otherwise, a
        // future version might store anything, a bare timestamp is no table (`orc-rust`
        // panics reading its type).
        let refused = [
            "decimal64_v2.orc",
            "version1999.orc",
            "TestOrcFile.testTimestamp.orc",
        ];
        if refused.contains(&name.as_str()) {
            continue;
        }
        let mut file = Bytes::from(std::fs::read(&path).unwrap());
        // Files `orc-rust` refuses (old writers' tails, corrupt examples) are other tests'.
        let Ok(metadata) = orc_rust::reader::metadata::read_metadata(&mut file) else {
            continue;
        };
        let root = metadata.root_data_type();
        for info in metadata.stripe_metadatas() {
            let Ok(stripe) = Stripe::new(&mut file, &metadata, root, info) else {
                continue;
            };
            let rows = stripe.number_of_rows();
            for (position, column) in stripe.columns().iter().enumerate() {
                let Some(as_type) = primitive_arrow_type(column.data_type()) else {
                    continue;
                };
                let Ok(mut theirs) =
                    orc_rust::array_decoder::array_decoder_factory(column, &as_type, &stripe)
                else {
                    continue;
                };
                let Some(Ok(mut ours)) = ColumnDecoder::try_new(&stripe, position, &as_type) else {
                    panic!("{name}: column {position} has no decoder");
                };
                assert!(matches!(ours, ColumnDecoder::Primitive(_)), "{name}");
                let mut at = 0;
                while at < rows {
                    let n = steps[rng.random_range(0..steps.len())].min(rows - at);
                    if rng.random_range(0..4) == 0 {
                        let at_what = format!("{name} column {position} rows {at}..{}", at + n);
                        ours.skip(n).unwrap_or_else(|e| panic!("{at_what}: {e}"));
                        theirs.skip_values(n, None).unwrap();
                    } else {
                        let at_what = format!("{name} column {position} rows {at}..{}", at + n);
                        let a = ours
                            .next_batch(n)
                            .unwrap_or_else(|e| panic!("{at_what}: {e}"));
                        let b = theirs.next_batch(n, None).unwrap();
                        assert_eq!(a.to_data(), b.to_data(), "{name} column {position} at {at}");
                        values += n;
                    }
                    at += n;
                }
                columns += 1;
                timestamps += usize::from(matches!(as_type, DataType::Timestamp(..)));
            }
        }
        files.push(name);
    }
    for name in [
        "TestOrcFile.test1.orc",
        "TestOrcFile.testSnappy.orc",
        "TestVectorOrcFile.testLz4.orc",
        "TestVectorOrcFile.testZstd.0.12.orc",
        "demo-12-zlib.orc",
        "nulls-at-end-snappy.orc",
        "over1k_bloom.orc",
        "decimal.orc",
        "TestOrcFile.testDate2038.orc",
    ] {
        assert!(files.iter().any(|f| f == name), "{name} read: {files:?}");
    }
    assert!(
        columns > 40 && values > 1_000_000 && timestamps > 1,
        "{columns} columns ({timestamps} of timestamps), {values} values"
    );
}

/// A skip of more string values than `SKIP_CHUNK` lands where decoding them would.
#[test]
fn long_string_skips_land_where_decoding_would() {
    let n = 3 * SKIP_CHUNK + 17;
    let values: Vec<Option<String>> = (0..n)
        .map(|i| (i % 5 != 0).then(|| format!("{i:0width$}", width = i % 13)))
        .collect();
    let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
    let batch =
        RecordBatch::try_new(schema, vec![Arc::new(StringArray::from(values.clone()))]).unwrap();
    let mut file = written_in_stripes_of(&batch, 64 * 1024 * 1024);
    let metadata = orc_rust::reader::metadata::read_metadata(&mut file).unwrap();
    let info = &metadata.stripe_metadatas()[0];
    let stripe = Stripe::new(&mut file, &metadata, metadata.root_data_type(), info).unwrap();
    assert_eq!(stripe.number_of_rows(), n, "one stripe");
    let mut ours = ColumnDecoder::try_new(&stripe, 0, &DataType::Utf8)
        .unwrap()
        .unwrap();
    let skipped = 2 * SKIP_CHUNK + 5;
    ours.skip(skipped).unwrap();
    let rest = ours.next_batch(n - skipped).unwrap();
    let expected = StringArray::from(values[skipped..].to_vec());
    assert_eq!(rest.to_data(), expected.to_data());
}
