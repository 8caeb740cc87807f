//! The columns an Avro split decodes: the wanted ones only, the right values at their
//! places, also when a named type is defined in a column left out.

use arrow::array::{Array, AsArray};
use arrow::datatypes::Int64Type;

use super::*;

/// `v` zigzag-encoded as an Avro `long`.
fn long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    loop {
        let b = (z & 0x7f) as u8;
        z >>= 7;
        if z == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// An object container file of `schema` with one block of `count` rows encoded as `data`.
fn container(schema: &str, count: i64, data: &[u8]) -> Bytes {
    let sync = [7u8; 16];
    let mut out = b"Obj\x01".to_vec();
    long(&mut out, 1);
    long(&mut out, "avro.schema".len() as i64);
    out.extend_from_slice(b"avro.schema");
    long(&mut out, schema.len() as i64);
    out.extend_from_slice(schema.as_bytes());
    long(&mut out, 0);
    out.extend_from_slice(&sync);
    long(&mut out, count);
    long(&mut out, data.len() as i64);
    out.extend_from_slice(data);
    out.extend_from_slice(&sync);
    Bytes::from(out)
}

/// Columns `a` (fixed `f2`), `b` (long), `c` (`f2` again, by name); two rows.
fn file() -> Bytes {
    let schema = r#"{"type":"record","name":"r","fields":[
        {"name":"a","type":{"type":"fixed","name":"f2","size":2}},
        {"name":"b","type":"long"},
        {"name":"c","type":"f2"}]}"#;
    let mut data = vec![1, 2];
    long(&mut data, 5);
    data.extend_from_slice(&[3, 4, 5, 6]);
    long(&mut data, -1);
    data.extend_from_slice(&[7, 8]);
    container(schema, 2, &data)
}

fn decoded(wanted: &[usize]) -> (Vec<usize>, RecordBatch) {
    let wanted = wanted.iter().copied().collect();
    let (mut reader, roots) = open_projected("f.avro", &file(), 16, &wanted).unwrap();
    (roots, reader.next().unwrap().unwrap())
}

#[test]
fn only_the_wanted_columns_are_decoded() {
    let (roots, batch) = decoded(&[1]);
    assert_eq!(roots, [1]);
    assert_eq!(batch.num_columns(), 1);
    let b = batch.column(0).as_primitive::<Int64Type>();
    assert_eq!(b.values(), &[5, -1]);
}

#[test]
fn a_column_of_a_named_type_defined_in_a_column_left_out() {
    let (roots, batch) = decoded(&[2]);
    let c = roots.iter().position(|&r| r == 2).unwrap();
    let c = batch.column(c).as_fixed_size_binary();
    assert_eq!((c.value(0), c.value(1)), (&[3u8, 4][..], &[7u8, 8][..]));
}

#[test]
fn without_wanted_columns_one_is_decoded_for_the_row_count() {
    let (roots, batch) = decoded(&[]);
    assert_eq!(roots, [0]);
    assert_eq!(batch.num_rows(), 2);
    assert_eq!(batch.column(0).len(), 2);
}
