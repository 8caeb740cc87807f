//! The Iceberg schema as the scan sees it: Arrow types, field ids for matching file
//! columns ([`FieldIds`]), `initial-default` values, and Iceberg
//! values (partition tuples, column bounds, defaults) as DataFusion scalars.
//!
//! | Iceberg              | Arrow                                                  |
//! |----------------------|--------------------------------------------------------|
//! | boolean, int, long, float, double | Boolean, Int32, Int64, Float32, Float64   |
//! | decimal(p, s)        | Decimal128(p, s)                                       |
//! | date, time           | Date32, Time64(µs)                                     |
//! | timestamp, timestamptz | Timestamp(µs), Timestamp(µs, "+00:00")               |
//! | timestamp_ns, timestamptz_ns | Timestamp(ns), Timestamp(ns, "+00:00")         |
//! | string, binary       | Utf8View, BinaryView at the top level with DataFusion's view types on; else Utf8, Binary |
//! | uuid, fixed(n)       | FixedSizeBinary(16), FixedSizeBinary(n)                |
//! | struct, list, map    | Struct, List("element"), Map("key_value")              |
//!
//! Every column is nullable: `required` is the writer's promise and is not re-checked on read.
//!
//! Types the `iceberg` crate cannot parse ([`crate::placeholder_types`]): `unknown` is
//! Arrow's `Null` (always NULL); `variant`, `geometry` and `geography` show as `Binary` and
//! make their column [`ScanSchema::unreadable`].

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Fields, TimeUnit};
use datafusion::common::{Result, ScalarValue, not_impl_err, plan_datafusion_err, plan_err};
use iceberg::spec::{
    Datum, Literal, NestedField, PrimitiveLiteral, PrimitiveType, Schema as IcebergSchema, Type,
};
use lakescan_core::api::{FieldIdNode, FieldIds, MemberDefault, MemberDefaults, NestedIds};

use crate::placeholder_types::PlaceholderTypes;

/// The zone of Iceberg's `timestamptz` in Arrow.
const UTC: &str = "+00:00";

/// A table schema ready for scanning.
#[derive(Debug, Clone)]
pub struct ScanSchema {
    /// The Iceberg schema.
    pub iceberg: Arc<IcebergSchema>,
    /// Top-level columns as Arrow fields, in schema order.
    pub fields: Vec<Field>,
    /// Top-level field id of each column, aligned with `fields`.
    pub field_ids: Vec<i32>,
    /// Every field by id, for matching file columns.
    pub ids: FieldIds,
    /// `initial-default` of top-level columns, by column index.
    pub defaults: Vec<Option<ScalarValue>>,
    /// `initial-default`s of struct members, by column index.
    pub member_defaults: Vec<Option<Arc<MemberDefaults>>>,
    /// Columns that hold a type lakescan does not read yet, by column index: the member
    /// (its dotted path) and its type as written.
    pub unreadable: Vec<Option<(String, String)>>,
    /// The Arrow types strings and binaries read as.
    pub view_types: StringTypes,
}

impl ScanSchema {
    /// Converts `schema`; `view_types` reads strings and binaries as view types;
    /// `placeholders` are the fields whose written type the crate could not parse.
    pub fn try_new(
        schema: Arc<IcebergSchema>,
        view_types: StringTypes,
        placeholders: &PlaceholderTypes,
    ) -> Result<Self> {
        let mut fields = vec![];
        let mut field_ids = vec![];
        let mut defaults = vec![];
        let mut member_defaults = vec![];
        let mut unreadable = vec![];
        for f in schema.as_struct().fields() {
            let data_type = field_type(f, view_types, placeholders)?;
            unreadable.push(unreadable_member(f, &f.name, placeholders));
            if let Some(path) = default_below_collection(&f.field_type, &f.name, false) {
                return not_impl_err!(
                    "member '{path}' of a list or map has an initial-default; reading those \
                     is not implemented yet"
                );
            }
            let members = match &f.field_type.as_ref() {
                Type::Struct(s) => struct_defaults(s.fields())?,
                _ => MemberDefaults::default(),
            };
            member_defaults.push((!members.is_empty()).then(|| Arc::new(members)));
            let default = initial_default(f, &data_type)?;
            fields.push(Field::new(&f.name, data_type, true));
            field_ids.push(f.id);
            defaults.push(default);
        }
        let ids = level_ids(schema.as_struct().fields());
        Ok(Self {
            iceberg: schema,
            fields,
            field_ids,
            ids,
            defaults,
            member_defaults,
            unreadable,
            view_types,
        })
    }

    /// The column index of field id `id`, if it is a top-level column.
    pub fn column_of_id(&self, id: i32) -> Option<usize> {
        self.field_ids.iter().position(|f| *f == id)
    }
}

/// The first member (dotted path) inside a list or map that has an `initial-default`
/// (`in_collection`: `t` is already below one).
fn default_below_collection(t: &Type, path: &str, in_collection: bool) -> Option<String> {
    let (children, below): (Vec<&NestedField>, bool) = match t {
        Type::Primitive(_) => return None,
        Type::Struct(s) => (
            s.fields().iter().map(|f| f.as_ref()).collect(),
            in_collection,
        ),
        Type::List(l) => (vec![l.element_field.as_ref()], true),
        Type::Map(m) => (vec![m.key_field.as_ref(), m.value_field.as_ref()], true),
    };
    children.into_iter().find_map(|f| {
        let here = format!("{path}.{}", f.name);
        match (&f.initial_default, below) {
            (Some(_), true) => Some(here),
            _ => default_below_collection(&f.field_type, &here, below),
        }
    })
}

/// The `initial-default`s of the members of a struct (and of their own members).
fn struct_defaults(fields: &[Arc<NestedField>]) -> Result<MemberDefaults> {
    let mut out = vec![];
    for f in fields {
        let value = match &f.initial_default {
            Some(_) => initial_default(f, &arrow_type(&f.field_type, StringTypes::Plain)?)?,
            None => None,
        };
        let members = match f.field_type.as_ref() {
            Type::Struct(s) => struct_defaults(s.fields())?,
            _ => MemberDefaults::default(),
        };
        if value.is_some() || !members.is_empty() {
            out.push((f.name.clone(), MemberDefault { value, members }));
        }
    }
    Ok(MemberDefaults::new(out))
}

/// The value of field `f` (Arrow type `t`) in a file that lacks it: its `initial-default`.
/// A struct's is `{}` (the spec): a struct, not NULL, whose members read their own
/// `initial-default`s (NULL without one).
fn initial_default(f: &NestedField, t: &DataType) -> Result<Option<ScalarValue>> {
    let Some(lit) = &f.initial_default else {
        return Ok(None);
    };
    let (Type::Struct(s), Literal::Struct(written), DataType::Struct(members)) =
        (f.field_type.as_ref(), lit, t)
    else {
        return literal_to_scalar(lit, &f.field_type, t).map(Some);
    };
    let mut arrays = vec![];
    for (i, (member, arrow)) in s.fields().iter().zip(members.iter()).enumerate() {
        let value = match written.fields().get(i) {
            Some(Some(lit)) if !matches!(lit, Literal::Struct(_)) => {
                literal_to_scalar(lit, &member.field_type, arrow.data_type())?
            }
            _ => match initial_default(member, arrow.data_type())? {
                Some(v) => v,
                None => ScalarValue::try_from(arrow.data_type())?,
            },
        };
        arrays.push(value.to_array_of_size(1)?);
    }
    let array = arrow::array::StructArray::try_new(members.clone(), arrays, None)?;
    Ok(Some(ScalarValue::Struct(Arc::new(array))))
}

fn level_ids(fields: &[Arc<NestedField>]) -> FieldIds {
    FieldIds::new(fields.iter().map(|f| {
        (
            f.id,
            FieldIdNode {
                name: f.name.clone(),
                nested: nested_ids(&f.field_type),
            },
        )
    }))
}

fn nested_ids(t: &Type) -> NestedIds {
    match t {
        Type::Primitive(_) => NestedIds::Primitive,
        Type::Struct(s) => NestedIds::Struct(level_ids(s.fields())),
        Type::List(l) => NestedIds::List(Box::new(nested_ids(&l.element_field.field_type))),
        Type::Map(m) => NestedIds::Map(
            Box::new(nested_ids(&m.key_field.field_type)),
            Box::new(nested_ids(&m.value_field.field_type)),
        ),
    }
}

/// The first member of field `f` (itself included; `path` is its dotted path) whose type
/// lakescan does not read, with that type as written. `unknown` members are read (NULL).
fn unreadable_member(
    f: &NestedField,
    path: &str,
    placeholders: &PlaceholderTypes,
) -> Option<(String, String)> {
    if let Some(written) = placeholders.written_type(f.id)
        && !placeholders.is_unknown(f.id)
    {
        return Some((path.to_string(), written.to_string()));
    }
    let children: Vec<&NestedField> = match f.field_type.as_ref() {
        Type::Primitive(_) => vec![],
        Type::Struct(s) => s.fields().iter().map(|c| c.as_ref()).collect(),
        Type::List(l) => vec![l.element_field.as_ref()],
        Type::Map(m) => vec![m.key_field.as_ref(), m.value_field.as_ref()],
    };
    children
        .into_iter()
        .find_map(|c| unreadable_member(c, &format!("{path}.{}", c.name), placeholders))
}

/// The Arrow type of field `f`: `Null` for `unknown`, else its type's.
fn field_type(
    f: &NestedField,
    view_types: StringTypes,
    placeholders: &PlaceholderTypes,
) -> Result<DataType> {
    match placeholders.is_unknown(f.id) {
        true => Ok(DataType::Null),
        false => convert(&f.field_type, view_types, placeholders),
    }
}

/// Which Arrow types a scan reads strings and binaries as: DataFusion's
/// `datafusion.execution.parquet.schema_force_view_types` (on by default) chooses views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum StringTypes {
    /// `Utf8` and `Binary`.
    Plain,
    /// `Utf8View` and `BinaryView` (top-level columns only).
    Views,
}

impl StringTypes {
    /// The types a session with `schema_force_view_types` set as `force_views` reads.
    pub fn of_session(force_views: bool) -> Self {
        match force_views {
            true => StringTypes::Views,
            false => StringTypes::Plain,
        }
    }
}

/// The Arrow type of an Iceberg type; `view_types` applies to a top-level string or binary
/// only (as DataFusion's `schema_force_view_types`: members of nested types keep `Utf8`).
pub fn arrow_type(t: &Type, view_types: StringTypes) -> Result<DataType> {
    convert(t, view_types, &PlaceholderTypes::default())
}

fn convert(t: &Type, view_types: StringTypes, placeholders: &PlaceholderTypes) -> Result<DataType> {
    let member = |f: &NestedField| field_type(f, StringTypes::Plain, placeholders);
    Ok(match t {
        Type::Primitive(p) => primitive_type(p, view_types)?,
        Type::Struct(s) => DataType::Struct(
            s.fields()
                .iter()
                .map(|f| Ok(Field::new(&f.name, member(f)?, true)))
                .collect::<Result<Fields>>()?,
        ),
        Type::List(l) => DataType::List(Arc::new(Field::new(
            "element",
            member(&l.element_field)?,
            true,
        ))),
        Type::Map(m) => {
            let key = Field::new("key", member(&m.key_field)?, false);
            let value = Field::new("value", member(&m.value_field)?, true);
            let entries = Field::new(
                "key_value",
                DataType::Struct(Fields::from(vec![key, value])),
                false,
            );
            DataType::Map(Arc::new(entries), false)
        }
    })
}

fn primitive_type(p: &PrimitiveType, view_types: StringTypes) -> Result<DataType> {
    Ok(match p {
        PrimitiveType::Boolean => DataType::Boolean,
        PrimitiveType::Int => DataType::Int32,
        PrimitiveType::Long => DataType::Int64,
        PrimitiveType::Float => DataType::Float32,
        PrimitiveType::Double => DataType::Float64,
        PrimitiveType::Decimal { precision, scale } => {
            let (Ok(p), Ok(s)) = (u8::try_from(*precision), i8::try_from(*scale)) else {
                return plan_err!("decimal({precision}, {scale}) is out of range");
            };
            DataType::Decimal128(p, s)
        }
        PrimitiveType::Date => DataType::Date32,
        PrimitiveType::Time => DataType::Time64(TimeUnit::Microsecond),
        PrimitiveType::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
        PrimitiveType::Timestamptz => DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into())),
        PrimitiveType::TimestampNs => DataType::Timestamp(TimeUnit::Nanosecond, None),
        PrimitiveType::TimestamptzNs => DataType::Timestamp(TimeUnit::Nanosecond, Some(UTC.into())),
        PrimitiveType::String if view_types == StringTypes::Views => DataType::Utf8View,
        PrimitiveType::String => DataType::Utf8,
        PrimitiveType::Uuid => DataType::FixedSizeBinary(16),
        PrimitiveType::Fixed(n) => match i32::try_from(*n) {
            Ok(n) => DataType::FixedSizeBinary(n),
            Err(_) => return plan_err!("fixed({n}) is too wide"),
        },
        PrimitiveType::Binary if view_types == StringTypes::Views => DataType::BinaryView,
        PrimitiveType::Binary => DataType::Binary,
    })
}

/// An Iceberg value of type `t` (a partition value or a default) as a scalar of `target`.
pub fn literal_to_scalar(lit: &Literal, t: &Type, target: &DataType) -> Result<ScalarValue> {
    let (Literal::Primitive(p), Type::Primitive(pt)) = (lit, t) else {
        return not_impl_err!("nested Iceberg value of type {t} as a constant");
    };
    let value = primitive_to_scalar(p, pt)?;
    cast(value, target)
}

/// A column bound or other typed value as a scalar in its own Iceberg type.
pub fn datum_to_scalar(datum: &Datum) -> Result<ScalarValue> {
    primitive_to_scalar(datum.literal(), datum.data_type())
}

fn cast(value: ScalarValue, target: &DataType) -> Result<ScalarValue> {
    if &value.data_type() == target {
        return Ok(value);
    }
    value
        .cast_to(target)
        .map_err(|e| plan_datafusion_err!("Iceberg value {value} cannot be read as {target}: {e}"))
}

fn primitive_to_scalar(p: &PrimitiveLiteral, t: &PrimitiveType) -> Result<ScalarValue> {
    use PrimitiveLiteral as L;
    use PrimitiveType as T;
    let utc = || Some(Arc::<str>::from(UTC));
    Ok(match (t, p) {
        (T::Boolean, L::Boolean(v)) => ScalarValue::Boolean(Some(*v)),
        (T::Int, L::Int(v)) => ScalarValue::Int32(Some(*v)),
        (T::Long, L::Long(v)) => ScalarValue::Int64(Some(*v)),
        (T::Long, L::Int(v)) => ScalarValue::Int64(Some(i64::from(*v))),
        (T::Float, L::Float(v)) => ScalarValue::Float32(Some(v.0)),
        (T::Double, L::Double(v)) => ScalarValue::Float64(Some(v.0)),
        (T::Double, L::Float(v)) => ScalarValue::Float64(Some(f64::from(v.0))),
        (T::Decimal { precision, scale }, L::Int128(v)) => {
            let (Ok(p), Ok(s)) = (u8::try_from(*precision), i8::try_from(*scale)) else {
                return plan_err!("decimal({precision}, {scale}) is out of range");
            };
            ScalarValue::Decimal128(Some(*v), p, s)
        }
        (T::Date, L::Int(v)) => ScalarValue::Date32(Some(*v)),
        (T::Time, L::Long(v)) => ScalarValue::Time64Microsecond(Some(*v)),
        (T::Timestamp, L::Long(v)) => ScalarValue::TimestampMicrosecond(Some(*v), None),
        (T::Timestamptz, L::Long(v)) => ScalarValue::TimestampMicrosecond(Some(*v), utc()),
        (T::TimestampNs, L::Long(v)) => ScalarValue::TimestampNanosecond(Some(*v), None),
        (T::TimestamptzNs, L::Long(v)) => ScalarValue::TimestampNanosecond(Some(*v), utc()),
        (T::String, L::String(v)) => ScalarValue::Utf8(Some(v.clone())),
        (T::Uuid, L::UInt128(v)) => {
            ScalarValue::FixedSizeBinary(16, Some(v.to_be_bytes().to_vec()))
        }
        (T::Fixed(n), L::Binary(v)) => match i32::try_from(*n) {
            Ok(n) => ScalarValue::FixedSizeBinary(n, Some(v.clone())),
            Err(_) => return plan_err!("fixed({n}) is too wide"),
        },
        (T::Binary, L::Binary(v)) => ScalarValue::Binary(Some(v.clone())),
        (t, p) => return plan_err!("Iceberg value {p:?} does not have type {t}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use iceberg::spec::{ListType, MapType, NestedField, StructType};

    fn schema() -> Arc<IcebergSchema> {
        let s = StructType::new(vec![Arc::new(NestedField::optional(
            3,
            "x",
            Type::Primitive(PrimitiveType::Int),
        ))]);
        Arc::new(
            IcebergSchema::builder()
                .with_fields(vec![
                    Arc::new(
                        NestedField::optional(1, "id", Type::Primitive(PrimitiveType::Long))
                            .with_initial_default(Literal::long(7)),
                    ),
                    Arc::new(NestedField::optional(2, "s", Type::Struct(s))),
                    Arc::new(NestedField::optional(
                        4,
                        "l",
                        Type::List(ListType::new(Arc::new(NestedField::list_element(
                            5,
                            Type::Primitive(PrimitiveType::String),
                            false,
                        )))),
                    )),
                    Arc::new(NestedField::optional(
                        6,
                        "m",
                        Type::Map(MapType::new(
                            Arc::new(NestedField::map_key_element(
                                7,
                                Type::Primitive(PrimitiveType::String),
                            )),
                            Arc::new(NestedField::map_value_element(
                                8,
                                Type::Primitive(PrimitiveType::Timestamptz),
                                false,
                            )),
                        )),
                    )),
                ])
                .build()
                .unwrap(),
        )
    }

    #[test]
    fn types_ids_and_defaults() {
        let s = ScanSchema::try_new(schema(), StringTypes::Plain, &PlaceholderTypes::default())
            .unwrap();
        let types: Vec<String> = s.fields.iter().map(|f| f.data_type().to_string()).collect();
        assert_eq!(types[0], "Int64");
        assert!(types[1].starts_with("Struct"), "{}", types[1]);
        assert!(types[2].starts_with("List"), "{}", types[2]);
        assert!(types[3].starts_with("Map"), "{}", types[3]);
        assert_eq!(s.field_ids, [1, 2, 4, 6]);
        assert_eq!(s.defaults[0], Some(ScalarValue::Int64(Some(7))));
        assert_eq!(s.defaults[1], None);
        let node = s.ids.get(2).unwrap();
        assert_eq!(node.name, "s");
        let NestedIds::Struct(members) = &node.nested else {
            panic!("s is a struct")
        };
        assert_eq!(members.get(3).unwrap().name, "x");
        assert_eq!(s.column_of_id(6), Some(3));
    }

    #[test]
    fn values_as_scalars() {
        let ts = Datum::timestamptz_micros(1_000_000);
        assert_eq!(
            datum_to_scalar(&ts).unwrap(),
            ScalarValue::TimestampMicrosecond(Some(1_000_000), Some(UTC.into()))
        );
        let long = Type::Primitive(PrimitiveType::Long);
        let v = literal_to_scalar(&Literal::long(5), &long, &DataType::Int64).unwrap();
        assert_eq!(v, ScalarValue::Int64(Some(5)));
        let s = Type::Primitive(PrimitiveType::String);
        let v = literal_to_scalar(&Literal::string("a"), &s, &DataType::Utf8View).unwrap();
        assert_eq!(v, ScalarValue::Utf8View(Some("a".into())));
    }
}
