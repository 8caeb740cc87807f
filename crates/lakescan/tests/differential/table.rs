//! The table under test: one [`Row`] type holding every column, the declared schema (and the
//! `CREATE EXTERNAL TABLE` statement declaring it), and rows as Arrow arrays in the table's
//! types. How one file stores the columns (some left out, some narrower) lives in
//! [`crate::layout`]; how rows are generated in [`crate::data`].

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array,
    Int8Array, Int16Array, Int32Array, Int64Array, RecordBatch, StringViewArray, StructArray,
    TimestampMicrosecondArray,
};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};

/// 2024-01-01 in days since the epoch.
pub const DAY0: i32 = 19_723;
/// 2024-01-01T00:00:00 in microseconds since the epoch.
pub const TS0: i64 = DAY0 as i64 * 86_400_000_000;
/// The session time zone of both engines: `TIMESTAMP(6) WITH TIME ZONE` plans as
/// `Timestamp(Microsecond, "+00:00")` (DataFusion takes the zone from the session).
pub const TIME_ZONE: &str = "+00:00";

/// The value of the struct column `st`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pair {
    pub x: Option<i64>,
    pub y: Option<String>,
}

/// One row of the table; `p` is the partition value (NULL = the default partition).
/// Values are held in the table's types (`dc`/`dw` unscaled, `ts`/`tz` in microseconds).
#[derive(Clone, Debug, Default)]
pub struct Row {
    pub id: i64,
    pub i: Option<i32>,
    pub l: Option<i64>,
    pub f: Option<f64>,
    pub s: Option<String>,
    pub d: Option<i32>,
    pub ts: Option<i64>,
    pub b: Option<bool>,
    pub dc: Option<i128>,
    pub dw: Option<i128>,
    pub r: Option<f32>,
    pub t8: Option<i8>,
    pub t16: Option<i16>,
    pub bn: Option<Vec<u8>>,
    pub tz: Option<i64>,
    pub st: Option<Pair>,
    pub p: Option<i64>,
}

/// A value of one column (or struct field) of a row, for literal pools.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    Float(f64),
    Str(String),
    Bin(Vec<u8>),
    /// Unscaled, in the column's scale.
    Dec(i128),
    Day(i32),
    Micros(i64),
}

impl Row {
    /// The value of `column` (a column name or `st['x']` / `st['y']`); `None` is NULL.
    pub fn value(&self, column: &str) -> Option<Value> {
        let int = |v: Option<i64>| v.map(Value::Int);
        match column {
            "id" => Some(Value::Int(self.id)),
            "i" => int(self.i.map(i64::from)),
            "l" => int(self.l),
            "t8" => int(self.t8.map(i64::from)),
            "t16" => int(self.t16.map(i64::from)),
            "p" => int(self.p),
            "st['x']" => int(self.st.as_ref().and_then(|st| st.x)),
            "f" => self.f.map(Value::Float),
            "r" => self.r.map(|v| Value::Float(f64::from(v))),
            "s" => self.s.clone().map(Value::Str),
            "st['y']" => self.st.as_ref().and_then(|st| st.y.clone()).map(Value::Str),
            "d" => self.d.map(Value::Day),
            "ts" => self.ts.map(Value::Micros),
            "tz" => self.tz.map(Value::Micros),
            "dc" => self.dc.map(Value::Dec),
            "dw" => self.dw.map(Value::Dec),
            "bn" => self.bn.clone().map(Value::Bin),
            _ => None,
        }
    }
}

/// The data columns in table order with their declared SQL types (`p` comes after them).
pub const DECLARED: [(&str, &str); 16] = [
    ("id", "BIGINT"),
    ("i", "INT"),
    ("l", "BIGINT"),
    ("f", "DOUBLE"),
    ("s", "VARCHAR"),
    ("d", "DATE"),
    ("ts", "TIMESTAMP(6)"),
    ("b", "BOOLEAN"),
    ("dc", "DECIMAL(10, 2)"),
    ("dw", "DECIMAL(20, 4)"),
    ("r", "REAL"),
    ("t8", "TINYINT"),
    ("t16", "SMALLINT"),
    ("bn", "BYTEA"),
    ("tz", "TIMESTAMP(6) WITH TIME ZONE"),
    ("st", "STRUCT<x BIGINT, y VARCHAR>"),
];

/// `CREATE EXTERNAL TABLE name (…declared columns…, p BIGINT) STORED AS HIVE …`: the schema
/// is declared because inference would read only the first file's footer.
pub fn create_table_sql(name: &str, location: &str, options: &str) -> String {
    let columns: Vec<String> = DECLARED.iter().map(|(c, t)| format!("{c} {t}")).collect();
    format!(
        "CREATE EXTERNAL TABLE {name} ({}, p BIGINT) STORED AS HIVE LOCATION '{location}' \
         PARTITIONED BY (p) {options}",
        columns.join(", ")
    )
}

fn struct_fields() -> Fields {
    Fields::from(vec![
        Field::new("x", DataType::Int64, true),
        Field::new("y", DataType::Utf8View, true),
    ])
}

/// The Arrow type DataFusion gives a declared column (VARCHAR is a view type).
pub fn table_type(column: &str) -> DataType {
    match column {
        "id" | "l" | "p" => DataType::Int64,
        "i" => DataType::Int32,
        "f" => DataType::Float64,
        "s" => DataType::Utf8View,
        "d" => DataType::Date32,
        "ts" => DataType::Timestamp(TimeUnit::Microsecond, None),
        "b" => DataType::Boolean,
        "dc" => DataType::Decimal128(10, 2),
        "dw" => DataType::Decimal128(20, 4),
        "r" => DataType::Float32,
        "t8" => DataType::Int8,
        "t16" => DataType::Int16,
        "bn" => DataType::Binary,
        "tz" => DataType::Timestamp(TimeUnit::Microsecond, Some(TIME_ZONE.into())),
        "st" => DataType::Struct(struct_fields()),
        _ => panic!("no column {column}"),
    }
}

/// The table's schema: the data columns, then `p`.
pub fn table_schema() -> SchemaRef {
    let names = DECLARED.iter().map(|(c, _)| *c).chain(["p"]);
    let fields: Vec<Field> = names.map(|c| Field::new(c, table_type(c), true)).collect();
    Arc::new(Schema::new(fields))
}

/// Column `column` of `rows`, in the table's type.
pub fn column_array(rows: &[Row], column: &str) -> ArrayRef {
    match column {
        "id" => Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.id))),
        "i" => Arc::new(Int32Array::from_iter(rows.iter().map(|r| r.i))),
        "l" => Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.l))),
        "p" => Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.p))),
        "f" => Arc::new(Float64Array::from_iter(rows.iter().map(|r| r.f))),
        "s" => Arc::new(StringViewArray::from_iter(
            rows.iter().map(|r| r.s.as_deref()),
        )),
        "d" => Arc::new(Date32Array::from_iter(rows.iter().map(|r| r.d))),
        "ts" => Arc::new(TimestampMicrosecondArray::from_iter(
            rows.iter().map(|r| r.ts),
        )),
        "b" => Arc::new(BooleanArray::from_iter(rows.iter().map(|r| r.b))),
        "dc" => decimals(rows.iter().map(|r| r.dc), 10, 2),
        "dw" => decimals(rows.iter().map(|r| r.dw), 20, 4),
        "r" => Arc::new(Float32Array::from_iter(rows.iter().map(|r| r.r))),
        "t8" => Arc::new(Int8Array::from_iter(rows.iter().map(|r| r.t8))),
        "t16" => Arc::new(Int16Array::from_iter(rows.iter().map(|r| r.t16))),
        "bn" => Arc::new(BinaryArray::from_iter(rows.iter().map(|r| r.bn.as_deref()))),
        "tz" => Arc::new(
            TimestampMicrosecondArray::from_iter(rows.iter().map(|r| r.tz))
                .with_timezone(TIME_ZONE),
        ),
        "st" => struct_array(rows),
        _ => panic!("no column {column}"),
    }
}

fn decimals(values: impl Iterator<Item = Option<i128>>, precision: u8, scale: i8) -> ArrayRef {
    let array = Decimal128Array::from_iter(values)
        .with_precision_and_scale(precision, scale)
        .unwrap();
    array.validate_decimal_precision(precision).unwrap();
    Arc::new(array)
}

/// `st`: a NULL struct has NULL fields too (what a Parquet round trip gives).
fn struct_array(rows: &[Row]) -> ArrayRef {
    let field = |r: &Row| r.st.clone().unwrap_or_default();
    let x = Int64Array::from_iter(rows.iter().map(|r| field(r).x));
    let y = StringViewArray::from_iter(rows.iter().map(|r| field(r).y));
    let valid = NullBuffer::from_iter(rows.iter().map(|r| r.st.is_some()));
    Arc::new(StructArray::new(
        struct_fields(),
        vec![Arc::new(x), Arc::new(y)],
        Some(valid),
    ))
}

/// The rows as a batch of the table's schema (the reference `MemTable`'s data).
pub fn to_batch(rows: &[Row]) -> RecordBatch {
    let schema = table_schema();
    let columns = schema
        .fields()
        .iter()
        .map(|f| column_array(rows, f.name()))
        .collect();
    RecordBatch::try_new(schema, columns).unwrap()
}
