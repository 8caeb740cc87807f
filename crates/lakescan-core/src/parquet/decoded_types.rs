//! The types the Parquet decoder produces for table columns where they differ from the file
//! schema's own (the reader's schema hint):
//!
//! * strings and binaries as *views* when the table's type is a view type: decoded
//!   directly, since a cast would copy every value once more;
//! * decimals stored as `INT32` or `INT64` in that width (`Decimal32`, `Decimal64`) when the
//!   table's type is `Decimal128` of the same scale and at least the same precision. The
//!   decoder would widen every value in a pass of its own; kept narrow, the columns are
//!   filtered as stored ([`crate::filter::Filter::narrowed_to`]) and the assembler widens
//!   only the rows the filters keep. The precision rule makes that widening infallible.

use arrow::datatypes::DataType;
use parquet::basic::Type as PhysicalType;
use parquet::schema::types::Type;

/// The type to decode a top-level column as, when it is not the file schema's `file_type`:
/// `stored` is the column in the Parquet schema, `table_type` the table's type of it.
pub fn decoded_type(
    file_type: &DataType,
    stored: &Type,
    table_type: &DataType,
) -> Option<DataType> {
    match (file_type, table_type) {
        (DataType::Utf8 | DataType::LargeUtf8, DataType::Utf8View)
        | (DataType::Binary | DataType::LargeBinary, DataType::BinaryView) => {
            Some(table_type.clone())
        }
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
            decoded_type(&d(15, 2), &int64, &d(15, 2)),
            Some(DataType::Decimal64(15, 2))
        );
        // A table widened to more digits (an Iceberg promotion) still takes them.
        assert_eq!(
            decoded_type(&d(15, 2), &int64, &d(38, 2)),
            Some(DataType::Decimal64(15, 2))
        );
        assert_eq!(
            decoded_type(&d(9, 2), &int32, &d(9, 2)),
            Some(DataType::Decimal32(9, 2))
        );
        // Another scale, fewer digits, bytes, or another table type: the decoder's own.
        assert_eq!(decoded_type(&d(15, 2), &int64, &d(15, 3)), None);
        assert_eq!(decoded_type(&d(15, 2), &int64, &d(12, 2)), None);
        assert_eq!(decoded_type(&d(15, 2), &fixed, &d(15, 2)), None);
        assert_eq!(decoded_type(&d(15, 2), &int64, &DataType::Float64), None);
    }

    #[test]
    fn strings_decode_as_the_tables_views() {
        let text = stored("message m { required binary s (STRING); }");
        assert_eq!(
            decoded_type(&DataType::Utf8, &text, &DataType::Utf8View),
            Some(DataType::Utf8View)
        );
        assert_eq!(decoded_type(&DataType::Utf8, &text, &DataType::Utf8), None);
    }
}
