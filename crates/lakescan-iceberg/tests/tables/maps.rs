//! Maps whose keys are not strings, top-level and inside a struct: Avro data files hold them
//! as arrays of key/value records (`"logicalType": "map"`, as Iceberg's Avro writer does),
//! ORC and Parquet as maps; every format reads them back as the table's maps, by field id.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, Float64Array, Int32Array, Int64Array, MapArray, StringArray, StructArray,
};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::datatypes::{DataType, Field, Fields};
use iceberg::spec::{MapType, NestedField, PrimitiveType, Schema, StructType, Type};
use parquet::arrow::PARQUET_FIELD_ID_META_KEY;

use crate::fixture::Fixture;
use crate::position_deletes::{query, rows};

fn id(n: i32) -> HashMap<String, String> {
    HashMap::from([(PARQUET_FIELD_ID_META_KEY.to_string(), n.to_string())])
}

fn map_type(key: i32, key_type: PrimitiveType, value: i32, value_type: PrimitiveType) -> Type {
    Type::Map(MapType::new(
        Arc::new(NestedField::map_key_element(key, Type::Primitive(key_type))),
        Arc::new(NestedField::map_value_element(
            value,
            Type::Primitive(value_type),
            false,
        )),
    ))
}

/// A map array of `keys`/`values` (entry ids `key`/`value`) split at `offsets`.
fn map(
    (key, keys): (i32, ArrayRef),
    (value, values): (i32, ArrayRef),
    offsets: Vec<i32>,
    nulls: Option<NullBuffer>,
) -> MapArray {
    let entries = Fields::from(vec![
        Field::new("key", keys.data_type().clone(), false).with_metadata(id(key)),
        Field::new("value", values.data_type().clone(), true).with_metadata(id(value)),
    ]);
    MapArray::new(
        Arc::new(Field::new(
            "key_value",
            DataType::Struct(entries.clone()),
            false,
        )),
        OffsetBuffer::new(offsets.into()),
        StructArray::new(entries, vec![keys, values], None),
        nulls,
        false,
    )
}

/// `m map<int, string>` and `s struct<n map<long, double>>`: three rows, one of them with
/// null maps and one with an empty map and a null value.
#[tokio::test]
async fn maps_with_non_string_keys_read_back() {
    let schema = Schema::builder()
        .with_fields(vec![
            Arc::new(NestedField::optional(
                1,
                "id",
                Type::Primitive(PrimitiveType::Long),
            )),
            Arc::new(NestedField::optional(
                2,
                "m",
                map_type(3, PrimitiveType::Int, 4, PrimitiveType::String),
            )),
            Arc::new(NestedField::optional(
                5,
                "s",
                Type::Struct(StructType::new(vec![Arc::new(NestedField::optional(
                    6,
                    "n",
                    map_type(7, PrimitiveType::Long, 8, PrimitiveType::Double),
                ))])),
            )),
        ])
        .build()
        .unwrap();
    let mut t = Fixture::new(schema);
    let m = map(
        (3, Arc::new(Int32Array::from(vec![1, 2, 3]))),
        (
            4,
            Arc::new(StringArray::from(vec![Some("a"), Some("b"), None])),
        ),
        vec![0, 2, 2, 3],
        Some(NullBuffer::from(vec![true, false, true])),
    );
    let n = map(
        (7, Arc::new(Int64Array::from(vec![10, 20, 30]))),
        (
            8,
            Arc::new(Float64Array::from(vec![Some(1.5), Some(2.5), None])),
        ),
        vec![0, 1, 1, 3],
        None,
    );
    let s_fields = Fields::from(vec![
        Field::new("n", n.data_type().clone(), true).with_metadata(id(6)),
    ]);
    let s = StructArray::new(
        s_fields,
        vec![Arc::new(n) as ArrayRef],
        Some(NullBuffer::from(vec![true, false, true])),
    );
    let file = t.data_file(vec![
        (
            "id",
            1,
            Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef,
        ),
        ("m", 2, Arc::new(m) as ArrayRef),
        ("s", 5, Arc::new(s) as ArrayRef),
    ]);
    let metadata = t.commit(vec![file], vec![]).await;
    let out = query(&metadata, "SELECT id, m, s FROM t ORDER BY id")
        .await
        .unwrap();
    assert_eq!(
        rows(&out),
        [
            "1|{1: a, 2: b}|{n: {10: 1.5}}",
            "2||",
            "3|{3: }|{n: {20: 2.5, 30: }}"
        ],
        "{out}"
    );
    // Keys typed as the map's (DataFusion 54 does not coerce a map index to the key type).
    let sql = "SELECT id, m[CAST(2 AS INT)], s['n'][20] FROM t \
               WHERE m[CAST(1 AS INT)] = 'a' OR s['n'][20] > 2 ORDER BY id";
    let out = query(&metadata, sql).await.unwrap();
    assert_eq!(rows(&out), ["1|b|", "3||2.5"], "{out}");
}
