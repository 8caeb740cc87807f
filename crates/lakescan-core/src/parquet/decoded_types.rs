//! The types the Parquet decoder produces for table columns where they differ from the file
//! schema's own (the reader's schema hint):
//!
//! * strings and binaries as *views* when the table's type is a view type: decoded
//!   directly, since a cast would copy every value once more; unannotated bytes as the
//!   table's strings (validated by the decoder);
//! * decimals stored as `INT32` or `INT64` in that width (`Decimal32`, `Decimal64`) when the
//!   table's type is `Decimal128` of the same scale and at least the same precision. The
//!   decoder would widen every value in a pass of its own; kept narrow, the columns are
//!   filtered as stored ([`crate::filter::Filter::narrowed_to`]) and the assembler widens
//!   only the rows the filters keep. The precision rule makes that widening infallible;
//! * `INT96` timestamps (Hive's, Impala's and Spark's legacy ones) in the table's unit, or
//!   in microseconds for a table in nanoseconds (and in microseconds in structs, lists and
//!   maps), unless the writer's Arrow schema gives their unit ([`int96_unit`], [`int96_in`]).

use std::sync::Arc;

use arrow::datatypes::{DataType, FieldRef, Fields, TimeUnit};
use parquet::basic::Type as PhysicalType;
use parquet::schema::types::Type;

use super::field_ids::{fields_of, is_repeated, wraps_element};

/// The unit `INT96` timestamps are read in when the writer's Arrow schema does not give
/// one: microseconds, as Spark, Iceberg's Java reader and DuckDB read them. The `parquet`
/// crate reads them as nanoseconds by default, and a time outside 1677–2262 (`0001-01-01`,
/// `9999-12-31`, common sentinels) wraps around silently into another date; in
/// microseconds every `INT96` time fits. Digits below a microsecond (Hive and Impala keep
/// nanoseconds) are dropped, as those readers drop them.
pub const INT96_UNIT: TimeUnit = TimeUnit::Microsecond;

/// Whether `stored` is an `INT96` column.
pub fn is_int96(stored: &Type) -> bool {
    stored.is_primitive() && stored.get_physical_type() == PhysicalType::INT96
}

/// The unit to read an `INT96` column in for a table column in `table_unit`: the table's
/// when it is no finer than [`INT96_UNIT`], else [`INT96_UNIT`] (the assembler then casts,
/// failing on a time the table's unit cannot hold).
pub fn int96_unit(table_unit: TimeUnit) -> TimeUnit {
    match table_unit {
        TimeUnit::Nanosecond => INT96_UNIT,
        coarser => coarser,
    }
}

/// `file_type` (the `parquet` crate's type of `stored`) with its `INT96` timestamps, at the
/// top or at any depth in structs, lists and maps, in `unit` (nested ones in
/// [`INT96_UNIT`]); `None` when it has none.
pub fn int96_in(file_type: &DataType, stored: &Type, unit: TimeUnit) -> Option<DataType> {
    match file_type {
        DataType::Timestamp(TimeUnit::Nanosecond, zone) if is_int96(stored) => {
            Some(DataType::Timestamp(unit, zone.clone()))
        }
        DataType::Struct(fields)
            if stored.is_group() && stored.get_fields().len() == fields.len() =>
        {
            let members: Vec<(&Type, &FieldRef)> = stored
                .get_fields()
                .iter()
                .map(AsRef::as_ref)
                .zip(fields.iter())
                .collect();
            int96_in_members(&members).map(DataType::Struct)
        }
        DataType::List(element) => int96_in_element(element, stored).map(DataType::List),
        DataType::LargeList(element) => int96_in_element(element, stored).map(DataType::LargeList),
        DataType::Map(entries, sorted) => {
            let (DataType::Struct(kv), [key_value]) = (entries.data_type(), fields_of(stored))
            else {
                return None;
            };
            let sides: Vec<(&Type, &FieldRef)> = fields_of(key_value)
                .iter()
                .map(AsRef::as_ref)
                .zip(kv.iter())
                .collect();
            if sides.len() != kv.len() {
                return None;
            }
            let kv = int96_in_members(&sides)?;
            let entries = entries
                .as_ref()
                .clone()
                .with_data_type(DataType::Struct(kv));
            Some(DataType::Map(Arc::new(entries), *sorted))
        }
        _ => None,
    }
}

/// The `members` (stored, decoded) with their `INT96` timestamps in [`INT96_UNIT`]; `None`
/// when they have none.
fn int96_in_members(members: &[(&Type, &FieldRef)]) -> Option<Fields> {
    let mut changed = false;
    let fields: Fields = members
        .iter()
        .map(|(s, f)| match int96_in(f.data_type(), s, INT96_UNIT) {
            Some(t) => {
                changed = true;
                Arc::new(f.as_ref().clone().with_data_type(t))
            }
            None => Arc::clone(f),
        })
        .collect();
    changed.then_some(fields)
}

/// A list's `element` field with its `INT96` timestamps in [`INT96_UNIT`], `stored` the
/// list: a `LIST` group (its element found by Parquet's backward-compatibility rules) or a
/// bare repeated field, which is its own element.
fn int96_in_element(element: &FieldRef, stored: &Type) -> Option<FieldRef> {
    let stored_element: &Type = match fields_of(stored) {
        _ if is_repeated(stored) => stored,
        [inner] if is_repeated(inner) => match wraps_element(stored, inner) {
            true => &inner.get_fields()[0],
            false => inner,
        },
        _ => return None,
    };
    let t = int96_in(element.data_type(), stored_element, INT96_UNIT)?;
    Some(Arc::new(element.as_ref().clone().with_data_type(t)))
}

/// Whether `stored` holds a Parquet `INTERVAL` (months, days, milliseconds) at any depth:
/// the `parquet` crate reads it as Arrow's day-time interval and drops its months
/// (`1 month 2 days` read as `2 days`), so it is not read.
pub fn holds_interval(stored: &Type) -> bool {
    match stored.is_primitive() {
        true => stored.get_basic_info().converted_type() == parquet::basic::ConvertedType::INTERVAL,
        false => stored.get_fields().iter().any(|f| holds_interval(f)),
    }
}

/// The type to decode a top-level column as, when it is not the file schema's `file_type`:
/// `stored` is the column in the Parquet schema, `table_type` the table's type of it;
/// `hinted` when the file embeds its writer's Arrow schema.
pub fn decoded_type(
    file_type: &DataType,
    stored: &Type,
    table_type: &DataType,
    hinted: bool,
) -> Option<DataType> {
    // A writer's hint gives the unit it held the values in: they fit it.
    if !hinted {
        let unit = match table_type {
            DataType::Timestamp(unit, _) => int96_unit(*unit),
            _ => INT96_UNIT,
        };
        if let Some(t) = int96_in(file_type, stored, unit) {
            return Some(t);
        }
    }
    match (file_type, table_type) {
        (DataType::Utf8 | DataType::LargeUtf8, DataType::Utf8View)
        | (DataType::Binary | DataType::LargeBinary, DataType::BinaryView) => {
            Some(table_type.clone())
        }
        // Unannotated bytes (Impala's strings) a table reads as strings: decoded as strings,
        // the decoder validating each one.
        (
            DataType::Binary | DataType::LargeBinary,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View,
        ) => Some(table_type.clone()),
        (DataType::Decimal128(p, s), DataType::Decimal128(table_p, table_s))
            if s == table_s && p <= table_p && stored.is_primitive() =>
        {
            match stored.get_physical_type() {
                PhysicalType::INT32 if *p <= 9 => Some(DataType::Decimal32(*p, *s)),
                PhysicalType::INT64 if *p <= 18 => Some(DataType::Decimal64(*p, *s)),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use parquet::schema::parser::parse_message_type;
    use parquet::schema::types::SchemaDescriptor;

    use super::*;

    fn stored(message: &str) -> Arc<Type> {
        let schema = parse_message_type(message).unwrap();
        Arc::clone(&schema.get_fields()[0])
    }

    #[test]
    fn integer_decimals_decode_narrow_when_the_table_can_hold_them() {
        let int64 = stored("message m { required int64 d (DECIMAL(15, 2)); }");
        let int32 = stored("message m { optional int32 d (DECIMAL(9, 2)); }");
        let fixed = stored("message m { required fixed_len_byte_array(7) d (DECIMAL(15, 2)); }");
        let d = |p, s| DataType::Decimal128(p, s);
        assert_eq!(
            decoded_type(&d(15, 2), &int64, &d(15, 2), false),
            Some(DataType::Decimal64(15, 2))
        );
        // A table widened to more digits (an Iceberg promotion) still takes them.
        assert_eq!(
            decoded_type(&d(15, 2), &int64, &d(38, 2), false),
            Some(DataType::Decimal64(15, 2))
        );
        assert_eq!(
            decoded_type(&d(9, 2), &int32, &d(9, 2), false),
            Some(DataType::Decimal32(9, 2))
        );
        // Another scale, fewer digits, bytes, or another table type: the decoder's own.
        assert_eq!(decoded_type(&d(15, 2), &int64, &d(15, 3), false), None);
        assert_eq!(decoded_type(&d(15, 2), &int64, &d(12, 2), false), None);
        assert_eq!(decoded_type(&d(15, 2), &fixed, &d(15, 2), false), None);
        assert_eq!(
            decoded_type(&d(15, 2), &int64, &DataType::Float64, false),
            None
        );
    }

    #[test]
    fn strings_decode_as_the_tables_views() {
        let text = stored("message m { required binary s (STRING); }");
        assert_eq!(
            decoded_type(&DataType::Utf8, &text, &DataType::Utf8View, false),
            Some(DataType::Utf8View)
        );
        assert_eq!(
            decoded_type(&DataType::Utf8, &text, &DataType::Utf8, false),
            None
        );
        // Impala's strings: bytes without the STRING annotation.
        let bytes = stored("message m { required binary s; }");
        assert_eq!(
            decoded_type(&DataType::Binary, &bytes, &DataType::Utf8View, false),
            Some(DataType::Utf8View)
        );
    }

    #[test]
    fn int96_timestamps_decode_where_every_one_fits() {
        let int96 = stored("message m { optional int96 ts; }");
        let ns = DataType::Timestamp(TimeUnit::Nanosecond, None);
        let t = |u| DataType::Timestamp(u, None);
        // A nanosecond table: microseconds, cast after (an error, not a wrap, past 2262).
        assert_eq!(
            decoded_type(&ns, &int96, &t(TimeUnit::Nanosecond), false),
            Some(t(TimeUnit::Microsecond))
        );
        assert_eq!(
            decoded_type(&ns, &int96, &t(TimeUnit::Millisecond), false),
            Some(t(TimeUnit::Millisecond))
        );
        // The writer held them in nanoseconds (its Arrow schema says so): they fit.
        assert_eq!(
            decoded_type(&ns, &int96, &t(TimeUnit::Nanosecond), true),
            None
        );
        let int64 = stored("message m { optional int64 ts (TIMESTAMP(NANOS, false)); }");
        assert_eq!(
            decoded_type(&ns, &int64, &t(TimeUnit::Nanosecond), false),
            None
        );
    }

    #[test]
    fn int96_timestamps_in_lists_of_every_shape_decode_in_microseconds() {
        let shapes = [
            "message m { optional group l (LIST) { repeated group list { optional int96 element; } } }",
            "message m { optional group l (LIST) { repeated int96 array; } }",
            "message m { optional group l (LIST) { repeated group array { optional int96 at; } } }",
            "message m { repeated int96 l; }",
        ];
        for shape in shapes {
            let schema = SchemaDescriptor::new(parse_message_type(shape).unwrap().into());
            let arrow = parquet::arrow::parquet_to_arrow_schema(&schema, None).unwrap();
            let file_type = arrow.field(0).data_type();
            let stored = Arc::clone(&schema.root_schema().get_fields()[0]);
            let got = decoded_type(file_type, &stored, file_type, false)
                .unwrap_or_else(|| panic!("{shape}: not decoded in microseconds"));
            let text = format!("{got}");
            assert!(
                text.contains("Timestamp(µs)") && !text.contains("ns"),
                "{shape}: {text}"
            );
        }
    }
}
