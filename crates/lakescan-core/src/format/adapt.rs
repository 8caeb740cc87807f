//! [`adapt_array`]: a decoded column in the table's type.
//!
//! What the Parquet reader returns for a column can differ from the table type in three
//! ways, all undone here, recursively:
//!
//! * **pruned members** — only the leaves a query needs were decoded, so a struct comes back
//!   with a subset of its members: the missing members are filled with NULL (or, for a
//!   non-nullable member, a placeholder value nobody reads), keeping the table type (as in
//!   Velox: a ROW keeps its type, unused members are null);
//! * **maps read as lists** — a map whose keys or values alone were decoded comes back as a
//!   list of its key/value struct (`parquet::leaves`): it becomes a map again, the side
//!   that was not read filled as above;
//! * **narrower or other physical types** — safe widenings, another timestamp unit,
//!   dictionary encoding, `Utf8` for `Utf8View`: cast, and a value the table type cannot
//!   hold (a timestamp of year 3000 stored in microseconds, read as the nanoseconds of a
//!   table) is an error, never a NULL: a NULL where the file stores a value would be a
//!   wrong row, and its statistics would disagree with it.
//!
//! Struct members are matched by name, so a file whose struct lacks a member (schema
//! evolution) reads it as NULL, or as its default ([`crate::defaults`]) wherever the struct
//! itself is not NULL.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, GenericListArray, MapArray, OffsetSizeTrait, StructArray,
    new_null_array,
};
use arrow::datatypes::{
    ArrowPrimitiveType, DataType, Decimal32Type, Decimal64Type, Decimal128Type, Field, FieldRef,
    Fields,
};
use datafusion::common::{Result, ScalarValue, exec_err};

use super::member_nulls::members_null_where_structs_are;
use crate::defaults::{MemberDefault, MemberDefaults};

/// `decoded` in the table type `target` (see the module docs).
#[cfg(test)]
pub fn adapt_array(decoded: &ArrayRef, target: &DataType) -> Result<ArrayRef> {
    adapt_with_defaults(decoded, target, None)
}

/// [`adapt_array`], where struct members the file does not store read their `defaults`.
/// Members, read or filled, are NULL wherever their struct is
/// ([`members_null_where_structs_are`]).
pub fn adapt_with_defaults(
    decoded: &ArrayRef,
    target: &DataType,
    defaults: Option<&MemberDefaults>,
) -> Result<ArrayRef> {
    members_null_where_structs_are(&adapt(decoded, target, defaults)?)
}

fn adapt(
    decoded: &ArrayRef,
    target: &DataType,
    defaults: Option<&MemberDefaults>,
) -> Result<ArrayRef> {
    if decoded.data_type() == target {
        return Ok(Arc::clone(decoded));
    }
    match (decoded.data_type(), target) {
        (DataType::Struct(_), DataType::Struct(fields)) => {
            adapt_struct(decoded.as_struct(), fields, defaults)
        }
        (DataType::Decimal32(from, a), DataType::Decimal128(to, b)) if a == b && from <= to => {
            widened::<Decimal32Type>(decoded, *to, *b)
        }
        (DataType::Decimal64(from, a), DataType::Decimal128(to, b)) if a == b && from <= to => {
            widened::<Decimal64Type>(decoded, *to, *b)
        }
        (DataType::List(_), DataType::List(field)) => {
            adapt_list(decoded.as_list::<i32>(), field).map(|a| Arc::new(a) as ArrayRef)
        }
        (DataType::LargeList(_), DataType::LargeList(field)) => {
            adapt_list(decoded.as_list::<i64>(), field).map(|a| Arc::new(a) as ArrayRef)
        }
        // A list of the other offset width (the same width matched above).
        (
            DataType::List(_) | DataType::LargeList(_),
            DataType::List(field) | DataType::LargeList(field),
        ) => {
            let same_kind = match decoded.data_type() {
                DataType::List(_) => DataType::List(Arc::clone(field)),
                _ => DataType::LargeList(Arc::clone(field)),
            };
            exact_cast(&adapt(decoded, &same_kind, None)?, target)
        }
        (DataType::Map(_, _), DataType::Map(entries, ordered)) => {
            let map = decoded.as_map();
            // Keys and values by position, under the table's names (writers name them
            // differently: Parquet's `key_value.key`, ORC's `entries.keys`).
            let stored = map.entries();
            let entries_array: ArrayRef = match entries.data_type() {
                DataType::Struct(names) if names.len() == 2 && stored.num_columns() == 2 => {
                    let fields: Fields = stored
                        .fields()
                        .iter()
                        .zip(names.iter())
                        .map(|(f, t)| Arc::new(f.as_ref().clone().with_name(t.name())))
                        .collect();
                    let columns = stored.columns().to_vec();
                    Arc::new(StructArray::try_new(
                        fields,
                        columns,
                        stored.nulls().cloned(),
                    )?)
                }
                _ => Arc::new(stored.clone()),
            };
            let adapted = adapt(&entries_array, entries.data_type(), None)?;
            let map = MapArray::try_new(
                Arc::clone(entries),
                map.offsets().clone(),
                adapted.as_struct().clone(),
                map.nulls().cloned(),
                *ordered,
            )?;
            Ok(Arc::new(map))
        }
        (DataType::List(_), DataType::Map(entries, ordered)) => {
            map_from_list(decoded.as_list::<i32>(), entries, *ordered)
        }
        _ => exact_cast(decoded, target),
    }
}

/// `decoded` cast to `target`, failing where a value does not fit (arrow's default cast
/// makes it NULL).
pub fn exact_cast(decoded: &ArrayRef, target: &DataType) -> Result<ArrayRef> {
    let options = arrow::compute::CastOptions {
        safe: false,
        ..Default::default()
    };
    Ok(arrow::compute::cast_with_options(
        decoded, target, &options,
    )?)
}

/// A decimal decoded in its stored integer width (`parquet::decoded_types`) as the table's
/// `Decimal128` of the same scale and at least its precision: each value sign-extended, none
/// can overflow (arrow's cast would also multiply each one by 10^0 in 128 bits and check it).
fn widened<T>(decoded: &ArrayRef, precision: u8, scale: i8) -> Result<ArrayRef>
where
    T: ArrowPrimitiveType,
    T::Native: Into<i128>,
{
    let values = decoded
        .as_primitive::<T>()
        .unary::<_, Decimal128Type>(Into::into);
    Ok(Arc::new(values.with_precision_and_scale(precision, scale)?))
}

fn adapt_struct(
    decoded: &StructArray,
    fields: &Fields,
    defaults: Option<&MemberDefaults>,
) -> Result<ArrayRef> {
    let len = decoded.len();
    let columns = fields
        .iter()
        .map(|field| {
            let default = defaults.and_then(|d| d.get(field.name()));
            match (decoded.column_by_name(field.name()), default) {
                (Some(child), _) => adapt(child, field.data_type(), default.map(|d| &d.members)),
                (None, Some(MemberDefault { value: Some(v), .. })) => {
                    let v = match &v.data_type() == field.data_type() {
                        true => v.clone(),
                        false => v.cast_to(field.data_type())?,
                    };
                    v.to_array_of_size(len)
                }
                (None, _) => placeholder(field, len),
            }
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(StructArray::try_new(
        fields.clone(),
        columns,
        decoded.nulls().cloned(),
    )?))
}

fn adapt_list<O: OffsetSizeTrait>(
    decoded: &GenericListArray<O>,
    field: &FieldRef,
) -> Result<GenericListArray<O>> {
    let values = adapt(decoded.values(), field.data_type(), None)?;
    Ok(GenericListArray::try_new(
        Arc::clone(field),
        decoded.offsets().clone(),
        values,
        decoded.nulls().cloned(),
    )?)
}

/// A map read as a list of its key/value struct, with only the keys or only the values.
fn map_from_list(
    decoded: &GenericListArray<i32>,
    entries: &FieldRef,
    ordered: bool,
) -> Result<ArrayRef> {
    let DataType::Struct(kv) = entries.data_type() else {
        return exec_err!(
            "map entries of type {} are not a struct",
            entries.data_type()
        );
    };
    let Some(key_value) = decoded.values().as_struct_opt() else {
        return exec_err!(
            "a map read as a list has elements of type {}",
            decoded.values().data_type()
        );
    };
    let len = key_value.len();
    let mut columns = Vec::with_capacity(kv.len());
    for (i, field) in kv.iter().enumerate() {
        let names: &[&str] = if i == 0 {
            &["key", "keys"]
        } else {
            &["value", "values"]
        };
        let child = key_value
            .column_by_name(field.name())
            .or_else(|| names.iter().find_map(|n| key_value.column_by_name(n)));
        columns.push(match child {
            Some(child) => adapt(child, field.data_type(), None)?,
            None => placeholder(field, len)?,
        });
    }
    let entries_array = StructArray::try_new(kv.clone(), columns, None)?;
    let map = MapArray::try_new(
        Arc::clone(entries),
        decoded.offsets().clone(),
        entries_array,
        decoded.nulls().cloned(),
        ordered,
    )?;
    Ok(Arc::new(map))
}

/// Values for a member that was not read: NULL, or a default value when the member cannot
/// be NULL (never read: no expression of the scan uses it).
fn placeholder(field: &Field, len: usize) -> Result<ArrayRef> {
    if field.is_nullable() {
        return Ok(new_null_array(field.data_type(), len));
    }
    ScalarValue::new_default(field.data_type())?.to_array_of_size(len)
}

#[cfg(test)]
mod tests;
