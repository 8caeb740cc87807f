use super::*;
use arrow::array::{Int32Array, Int64Array, ListArray, StringArray};
use arrow::buffer::{NullBuffer, OffsetBuffer};

fn fields(names: &[(&str, DataType)]) -> Fields {
    Fields::from(
        names
            .iter()
            .map(|(n, t)| Field::new(*n, t.clone(), true))
            .collect::<Vec<_>>(),
    )
}

#[test]
fn a_pruned_struct_gets_its_type_back_with_null_members() {
    let table = fields(&[
        ("a", DataType::Int64),
        ("b", DataType::Int64),
        ("c", DataType::Utf8),
    ]);
    // Decoded: only member a, stored narrower (INT32); row 1 is a NULL struct.
    let decoded = StructArray::try_new(
        fields(&[("a", DataType::Int32)]),
        vec![Arc::new(Int32Array::from(vec![Some(1), None, Some(3)]))],
        Some(NullBuffer::from(vec![true, false, true])),
    )
    .unwrap();
    let decoded: ArrayRef = Arc::new(decoded);
    let out = adapt_array(&decoded, &DataType::Struct(table.clone())).unwrap();
    assert_eq!(out.data_type(), &DataType::Struct(table));
    let s = out.as_struct();
    assert!(s.is_null(1));
    let a = s.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!(a.value(0), 1);
    assert_eq!(s.column(1).null_count(), 3);
    assert_eq!(s.column(2).null_count(), 3);
}

#[test]
fn a_map_read_as_a_list_of_keys_is_a_map_again() {
    // {a:1, b:2}, NULL, {c:3} read as list<struct<key>>
    let kv = fields(&[("key", DataType::Utf8)]);
    let keys = StructArray::try_new(
        kv.clone(),
        vec![Arc::new(StringArray::from(vec!["a", "b", "c"]))],
        None,
    )
    .unwrap();
    let list = ListArray::try_new(
        Arc::new(Field::new("key_value", DataType::Struct(kv), false)),
        OffsetBuffer::new(vec![0, 2, 2, 3].into()),
        Arc::new(keys),
        Some(NullBuffer::from(vec![true, false, true])),
    )
    .unwrap();
    let entries = Arc::new(Field::new(
        "key_value",
        DataType::Struct(Fields::from(vec![
            Field::new("key", DataType::Utf8, false),
            Field::new("value", DataType::Int64, true),
        ])),
        false,
    ));
    let target = DataType::Map(entries, false);
    let decoded: ArrayRef = Arc::new(list);
    let out = adapt_array(&decoded, &target).unwrap();
    assert_eq!(out.data_type(), &target);
    let map = out.as_map();
    assert_eq!(map.value_offsets(), &[0, 2, 2, 3]);
    assert!(map.is_null(1));
    let k = map.keys().as_any().downcast_ref::<StringArray>().unwrap();
    assert_eq!(k.iter().flatten().collect::<Vec<_>>(), ["a", "b", "c"]);
    assert_eq!(map.values().null_count(), 3);
}

#[test]
fn a_list_of_pruned_structs_keeps_its_offsets() {
    let table_elem = fields(&[("x", DataType::Int64), ("y", DataType::Int64)]);
    let decoded_elem = fields(&[("x", DataType::Int64)]);
    let values = StructArray::try_new(
        decoded_elem.clone(),
        vec![Arc::new(Int64Array::from(vec![1, 2, 3]))],
        None,
    )
    .unwrap();
    let list = ListArray::try_new(
        Arc::new(Field::new("element", DataType::Struct(decoded_elem), true)),
        OffsetBuffer::new(vec![0, 1, 3].into()),
        Arc::new(values),
        None,
    )
    .unwrap();
    let target = DataType::List(Arc::new(Field::new(
        "item",
        DataType::Struct(table_elem),
        true,
    )));
    let decoded: ArrayRef = Arc::new(list);
    let out = adapt_array(&decoded, &target).unwrap();
    assert_eq!(out.data_type(), &target);
    let l = out.as_list::<i32>();
    assert_eq!(l.value_offsets(), &[0, 1, 3]);
    assert_eq!(l.values().as_struct().column(1).null_count(), 3);
}

#[test]
fn defaulted_members_are_null_under_a_null_struct_down_to_their_own_members() {
    use crate::defaults::{MemberDefault, MemberDefaults};
    // Table: s struct<a int, c int default 7, t struct<x int default 5> default {}>; the
    // file stores only a; row 1 is a NULL struct.
    let inner = fields(&[("x", DataType::Int32)]);
    let table = fields(&[
        ("a", DataType::Int32),
        ("c", DataType::Int32),
        ("t", DataType::Struct(inner.clone())),
    ]);
    let decoded: ArrayRef = Arc::new(
        StructArray::try_new(
            fields(&[("a", DataType::Int32)]),
            vec![Arc::new(Int32Array::from(vec![Some(1), None, None]))],
            Some(NullBuffer::from(vec![true, false, true])),
        )
        .unwrap(),
    );
    let empty_t = ScalarValue::Struct(Arc::new(
        StructArray::try_new(inner, vec![Arc::new(Int32Array::from(vec![Some(5)]))], None).unwrap(),
    ));
    let defaults = MemberDefaults::new([
        (
            "c".to_string(),
            MemberDefault {
                value: Some(ScalarValue::Int32(Some(7))),
                members: MemberDefaults::default(),
            },
        ),
        (
            "t".to_string(),
            MemberDefault {
                value: Some(empty_t),
                members: MemberDefaults::default(),
            },
        ),
    ]);
    let out = adapt_with_defaults(&decoded, &DataType::Struct(table), Some(&defaults)).unwrap();
    let s = out.as_struct();
    let c = s.column(1).as_any().downcast_ref::<Int32Array>().unwrap();
    assert_eq!(c.iter().collect::<Vec<_>>(), [Some(7), None, Some(7)]);
    let t = s.column(2).as_struct();
    assert_eq!(
        (t.is_valid(0), t.is_valid(1), t.is_valid(2)),
        (true, false, true)
    );
    let x = t.column(0).as_any().downcast_ref::<Int32Array>().unwrap();
    assert_eq!(x.iter().collect::<Vec<_>>(), [Some(5), None, Some(5)]);
    // Without a NULL struct, the default fills every row.
    let whole: ArrayRef = Arc::new(
        StructArray::try_new(
            fields(&[("a", DataType::Int32)]),
            vec![Arc::new(Int32Array::from(vec![Some(1), Some(2)]))],
            None,
        )
        .unwrap(),
    );
    let table = fields(&[("a", DataType::Int32), ("c", DataType::Int32)]);
    let out = adapt_with_defaults(&whole, &DataType::Struct(table), Some(&defaults)).unwrap();
    assert_eq!(out.as_struct().column(1).null_count(), 0);
}

#[test]
fn narrow_decimals_widen_to_the_tables_decimal128_as_arrow_casts_them() {
    use arrow::array::{Decimal32Array, Decimal64Array};
    let d64: ArrayRef = Arc::new(
        Decimal64Array::from(vec![
            Some(999_999_999_999_999_999),
            Some(-999_999_999_999_999_999),
            None,
            Some(-1),
            Some(0),
        ])
        .with_precision_and_scale(18, 2)
        .unwrap(),
    );
    let d32: ArrayRef = Arc::new(
        Decimal32Array::from(vec![Some(-999_999_999), None, Some(5)])
            .with_precision_and_scale(9, 3)
            .unwrap(),
    );
    for (decoded, target) in [
        (d64, DataType::Decimal128(20, 2)),
        (d32, DataType::Decimal128(9, 3)),
    ] {
        let out = adapt_array(&decoded, &target).unwrap();
        assert_eq!(out.data_type(), &target);
        assert_eq!(&out, &arrow::compute::cast(&decoded, &target).unwrap());
    }
    // Another scale, or a narrower precision, goes through the checked cast.
    let d64: ArrayRef = Arc::new(
        Decimal64Array::from(vec![Some(12_345)])
            .with_precision_and_scale(10, 2)
            .unwrap(),
    );
    let out = adapt_array(&d64, &DataType::Decimal128(12, 3)).unwrap();
    assert_eq!(out.as_primitive::<Decimal128Type>().value(0), 123_450);
    // 123.45 does not fit 4 digits: an error, not the NULL arrow's default cast makes.
    let narrower = DataType::Decimal128(4, 2);
    assert!(adapt_array(&d64, &narrower).is_err());
}
