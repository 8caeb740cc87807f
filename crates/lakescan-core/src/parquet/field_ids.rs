//! Matching a Parquet file's columns to table columns by **field id** (Iceberg's column
//! projection rules), instead of by name; the table's side ([`FieldIdMatching`]) is
//! [`crate::field_ids`].
//!
//! A table whose columns carry ids ([`FieldIds`]: every column and nested member, by id) is
//! read by renaming each file's Parquet schema to the table's names before anything else
//! looks at it ([`rename_by_field_id`]): a node whose id is a table field takes that field's
//! current name, a node whose id the table does not have (a dropped column) or that has no
//! id gets a reserved name no table column can have. Everything after the footer (binding,
//! leaves, statistics, decoding) then matches by name as for Hive, and renames, reorders,
//! drops and adds are all just names:
//!
//! ```text
//!  file:   a#1 INT, b#2 STRING, s#3 ROW(x#4, y#5)      table:  id#1 BIGINT, s#3 ROW(y#5, z#6)
//!  renamed: id      __lakescan_field_2  s ROW(__lakescan_field_4, y)
//!  → id widens INT → BIGINT, s.z is missing (NULL / initial-default), b and s.x are never read
//! ```
//!
//! Files written without ids use the table's name mapping (`schema.name-mapping.default`):
//! a node without an id gets the id its name maps to at that level. A file with neither ids
//! nor a mapping is matched by position, as Java's `ParquetSchemaUtil.addFallbackIds` and
//! `pruneColumnsFallback` do: top-level column k (from 1) takes id k, and a member of a struct
//! the id of the table's member at its position — never by name, so a column dropped and
//! re-added under the same name (a new id) does not read the old column's values.
//! Hand-written: the parquet crate reads by position or name only, and iceberg-rust's
//! projection by id is private to its own reader.

use std::sync::Arc;

use datafusion::common::{Result, internal_err};
use parquet::basic::{ConvertedType, LogicalType, Repetition};
use parquet::file::metadata::ParquetMetaData;
use parquet::schema::types::{Type, TypePtr};

use super::leaves::with_schema;
use crate::field_ids::{
    FieldIdMatching, FieldIds, MappedName, NestedIds, UNMATCHED_PREFIX, mapped,
};

/// Where the ids of file nodes written without one come from.
#[derive(Debug, Clone, Copy)]
enum MissingIds<'a> {
    /// The id the node's name maps to at its level (`None`: the level has no mapping).
    NameMapping(Option<&'a [MappedName]>),
    /// The node's position (Java's fallback ids): `k + 1` at the top level, the id of the
    /// table's member at that position below it.
    Position { top_level: bool },
}

/// `metadata` with its schema renamed to the table's names by field id (see the module
/// docs). `None` when nothing needs renaming.
pub fn rename_by_field_id(
    metadata: &ParquetMetaData,
    matching: &FieldIdMatching,
) -> Result<Option<ParquetMetaData>> {
    let file = metadata.file_metadata();
    let root = file.schema_descr().root_schema();
    let missing = match (has_ids(root), matching.name_mapping.as_deref()) {
        (true, mapping) | (false, mapping @ Some(_)) => MissingIds::NameMapping(mapping),
        (false, None) => MissingIds::Position { top_level: true },
    };
    let fields = rename_level(root.get_fields(), &matching.table, missing)?;
    let renamed = rebuild(root, root.name(), fields)?;
    Ok(Some(with_schema(metadata, renamed)))
}

fn has_ids(t: &Type) -> bool {
    t.get_fields()
        .iter()
        .any(|f| f.get_basic_info().has_id() || (f.is_group() && has_ids(f)))
}

/// Renames the fields of one struct level.
fn rename_level(
    fields: &[TypePtr],
    table: &FieldIds,
    missing: MissingIds<'_>,
) -> Result<Vec<TypePtr>> {
    fields
        .iter()
        .enumerate()
        .map(|(position, field)| {
            let info = field.get_basic_info();
            let (missing_id, below) = match missing {
                MissingIds::NameMapping(mapping) => {
                    let by_name = mapped(mapping, field.name());
                    let below = MissingIds::NameMapping(by_name.map(|m| m.fields.as_slice()));
                    (by_name.and_then(|m| m.field_id), below)
                }
                MissingIds::Position { top_level } => {
                    let id = match top_level {
                        true => i32::try_from(position + 1).ok(),
                        false => table.id_at(position),
                    };
                    (id, MissingIds::Position { top_level: false })
                }
            };
            let id = match info.has_id() {
                true => Some(info.id()),
                false => missing_id,
            };
            match id.and_then(|id| table.get(id)) {
                Some(node) => rename_nested(field, &node.name, &node.nested, below),
                None => {
                    let name = match id {
                        Some(id) => format!("{UNMATCHED_PREFIX}{id}"),
                        None => format!("{UNMATCHED_PREFIX}at_{position}"),
                    };
                    rebuild(field, &name, children(field))
                }
            }
        })
        .collect()
}

/// `field` named `name`, with the members below it renamed as `nested` says.
fn rename_nested(
    field: &TypePtr,
    name: &str,
    nested: &NestedIds,
    missing: MissingIds<'_>,
) -> Result<TypePtr> {
    if field.is_primitive() {
        return rebuild(field, name, vec![]);
    }
    let children = field.get_fields();
    let annotation = annotation(field);
    let child_mapping = |child: &str| match missing {
        MissingIds::NameMapping(mapping) => {
            MissingIds::NameMapping(mapped(mapping, child).map(|m| m.fields.as_slice()))
        }
        position @ MissingIds::Position { .. } => position,
    };
    let fields = match (nested, annotation, children) {
        (NestedIds::List(element), Annotation::List, [repeated]) if repeated.is_group() => {
            let repeated = if wraps_element(field, repeated) {
                let inner = &repeated.get_fields()[0];
                let element =
                    rename_nested(inner, inner.name(), element, child_mapping("element"))?;
                rebuild(repeated, repeated.name(), vec![element])?
            } else {
                rename_nested(repeated, repeated.name(), element, child_mapping("element"))?
            };
            vec![repeated]
        }
        (NestedIds::Map(key, value), Annotation::Map, [key_value])
            if key_value.is_group() && key_value.get_fields().len() == 2 =>
        {
            let [k, v] = key_value.get_fields() else {
                return internal_err!("map '{}' lost its key and value", field.name());
            };
            let k = rename_nested(k, k.name(), key, child_mapping("key"))?;
            let v = rename_nested(v, v.name(), value, child_mapping("value"))?;
            vec![rebuild(key_value, key_value.name(), vec![k, v])?]
        }
        (NestedIds::Struct(members), Annotation::Plain, _) => {
            rename_level(children, members, missing)?
        }
        // The file's structure differs from the table's: keep it; reading it as the table
        // type reports the mismatch with the file's name.
        _ => children.to_vec(),
    };
    rebuild(field, name, fields)
}

/// The fields of a group, owned; none for a primitive.
pub(crate) fn children(t: &Type) -> Vec<TypePtr> {
    fields_of(t).to_vec()
}

/// The fields of a group; none for a primitive (`get_fields` panics on one).
pub(crate) fn fields_of(t: &Type) -> &[TypePtr] {
    match t.is_group() {
        true => t.get_fields(),
        false => &[],
    }
}

/// Whether `t` is a repeated field.
pub(crate) fn is_repeated(t: &Type) -> bool {
    let info = t.get_basic_info();
    info.has_repetition() && info.repetition() == Repetition::REPEATED
}

/// A copy of `t` named `name` (with `fields` when it is a group).
pub(crate) fn rebuild(t: &Type, name: &str, fields: Vec<TypePtr>) -> Result<TypePtr> {
    let info = t.get_basic_info();
    let built = match t {
        Type::PrimitiveType {
            physical_type,
            type_length,
            scale,
            precision,
            ..
        } => {
            let mut b = Type::primitive_type_builder(name, *physical_type)
                .with_converted_type(info.converted_type())
                .with_logical_type(info.logical_type_ref().cloned())
                .with_length(*type_length)
                .with_precision(*precision)
                .with_scale(*scale);
            if info.has_repetition() {
                b = b.with_repetition(info.repetition());
            }
            if info.has_id() {
                b = b.with_id(Some(info.id()));
            }
            b.build()
        }
        Type::GroupType { .. } => {
            let mut b = Type::group_type_builder(name)
                .with_fields(fields)
                .with_converted_type(info.converted_type())
                .with_logical_type(info.logical_type_ref().cloned());
            if info.has_repetition() {
                b = b.with_repetition(info.repetition());
            }
            if info.has_id() {
                b = b.with_id(Some(info.id()));
            }
            b.build()
        }
    };
    match built {
        Ok(t) => Ok(Arc::new(t)),
        Err(e) => internal_err!("renaming Parquet field '{}' to '{name}': {e}", t.name()),
    }
}

/// Whether the `repeated` child of the `LIST` group `list` wraps the list's element (the
/// standard three-level list) rather than being the element itself (the older two-level
/// shapes), by the backward-compatibility rules of Parquet's LogicalTypes.md: a repeated
/// group of one field not named `array` or `<list>_tuple` wraps it.
pub(crate) fn wraps_element(list: &Type, repeated: &Type) -> bool {
    repeated.is_group()
        && repeated.get_fields().len() == 1
        && repeated.name() != "array"
        && repeated.name() != format!("{}_tuple", list.name())
}

/// How a group is annotated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Annotation {
    List,
    Map,
    Plain,
}

pub(crate) fn annotation(t: &Type) -> Annotation {
    let info = t.get_basic_info();
    match (info.logical_type_ref(), info.converted_type()) {
        (Some(LogicalType::List), _) | (_, ConvertedType::LIST) => Annotation::List,
        (Some(LogicalType::Map), _) | (_, ConvertedType::MAP | ConvertedType::MAP_KEY_VALUE) => {
            Annotation::Map
        }
        _ => Annotation::Plain,
    }
}

#[cfg(test)]
mod tests;
