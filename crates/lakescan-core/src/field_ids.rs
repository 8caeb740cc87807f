//! Field-id matching: the table's fields by id ([`FieldIds`]) and its name mapping
//! ([`MappedName`]), which a table format gives the scan ([`FieldIdMatching`] on the
//! [`crate::handle::TableHandle`]) when file columns are matched by id instead of by name
//! (Iceberg). The file reader applies it to each file it opens: the Parquet reader renames
//! the file's schema by id ([`crate::parquet::field_ids`]).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// Prefix of the names given to file columns that match no table field.
pub const UNMATCHED_PREFIX: &str = "__lakescan_field_";

/// The fields of one struct level of a table, by field id, and their ids in schema order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldIds {
    by_id: HashMap<i32, FieldIdNode>,
    order: Vec<i32>,
}

/// One table field: its current name and what is below it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldIdNode {
    /// The field's name in the table schema.
    pub name: String,
    /// Its nested fields.
    pub nested: NestedIds,
}

/// The nested fields of a table field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum NestedIds {
    /// A primitive field.
    Primitive,
    /// A struct: its members by id.
    Struct(FieldIds),
    /// A list: what is below its element.
    List(Box<NestedIds>),
    /// A map: what is below its key and its value.
    Map(Box<NestedIds>, Box<NestedIds>),
}

impl FieldIds {
    /// A level from `(id, node)` pairs, in schema order.
    pub fn new(fields: impl IntoIterator<Item = (i32, FieldIdNode)>) -> Self {
        let mut level = Self::default();
        level.extend(fields);
        level
    }

    /// Adds `(id, node)` pairs to this level (an id already there keeps its node).
    pub fn extend(&mut self, fields: impl IntoIterator<Item = (i32, FieldIdNode)>) {
        for (id, node) in fields {
            if let std::collections::hash_map::Entry::Vacant(e) = self.by_id.entry(id) {
                e.insert(node);
                self.order.push(id);
            }
        }
    }

    /// The field with `id` at this level.
    pub fn get(&self, id: i32) -> Option<&FieldIdNode> {
        self.by_id.get(&id)
    }

    /// The id of the field at `position` (from 0) of this level, in schema order.
    pub fn id_at(&self, position: usize) -> Option<i32> {
        self.order.get(position).copied()
    }
}

/// One entry of a name mapping: the names a field had in files written without ids.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MappedName {
    /// The field id these names map to (`None`: the names are known but unmapped).
    pub field_id: Option<i32>,
    /// Names of the field in such files.
    pub names: Vec<String>,
    /// Mappings of its nested fields (`element`, `key`, `value` for lists and maps).
    pub fields: Vec<MappedName>,
}

/// The mapping of `name` at a level of a name mapping.
pub fn mapped<'a>(level: Option<&'a [MappedName]>, name: &str) -> Option<&'a MappedName> {
    level?.iter().find(|m| m.names.iter().any(|n| n == name))
}

/// How a table matches file columns to its columns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldIdMatching {
    /// The table's top-level fields by id.
    pub table: FieldIds,
    /// The table's name mapping, for files written without ids.
    pub name_mapping: Option<Vec<MappedName>>,
}

/// The metadata key of a field's id in Arrow schemas (the `parquet` crate's, which ORC and
/// Avro readers reuse for the ids of their own files).
pub const FIELD_ID_KEY: &str = "PARQUET:field_id";

/// The id of an Arrow field, from its [`FIELD_ID_KEY`] metadata.
pub fn arrow_field_id(field: &arrow::datatypes::Field) -> Option<i32> {
    field.metadata().get(FIELD_ID_KEY)?.parse().ok()
}

/// `fields` of a file (their ids in [`FIELD_ID_KEY`] metadata) renamed to the table's names
/// by field id, with the rules of [`crate::parquet::field_ids`]: a field's own id, else the
/// id its name maps to in the table's name mapping; a field whose id the table does not have
/// (or that has none) takes a reserved name no table column has. Order and types are kept.
///
/// A file with no id at all and no name mapping is returned as it is: its columns bind by
/// their names, the table's current names, as Java reads ORC and Avro files without ids
/// (`MappingUtil.create(schema)`).
pub fn rename_fields_by_id(
    fields: &arrow::datatypes::Fields,
    matching: &FieldIdMatching,
) -> arrow::datatypes::Fields {
    if !fields.iter().any(|f| has_arrow_ids(f)) && matching.name_mapping.is_none() {
        return fields.clone();
    }
    rename_arrow_level(fields, &matching.table, matching.name_mapping.as_deref())
}

fn has_arrow_ids(field: &arrow::datatypes::Field) -> bool {
    use arrow::datatypes::DataType;
    arrow_field_id(field).is_some()
        || match field.data_type() {
            DataType::Struct(children) => children.iter().any(|c| has_arrow_ids(c)),
            DataType::List(item) | DataType::LargeList(item) | DataType::Map(item, _) => {
                has_arrow_ids(item)
            }
            _ => false,
        }
}

/// Renames one struct level (`mapping`: the name mapping at this level).
fn rename_arrow_level(
    fields: &arrow::datatypes::Fields,
    table: &FieldIds,
    mapping: Option<&[MappedName]>,
) -> arrow::datatypes::Fields {
    fields
        .iter()
        .enumerate()
        .map(|(position, field)| {
            let by_name = mapped(mapping, field.name());
            let below = by_name.map(|m| m.fields.as_slice());
            let id = arrow_field_id(field).or_else(|| by_name.and_then(|m| m.field_id));
            let renamed = match id.and_then(|id| table.get(id)) {
                Some(node) => field
                    .as_ref()
                    .clone()
                    .with_name(node.name.clone())
                    .with_data_type(rename_arrow_type(field.data_type(), &node.nested, below)),
                None => {
                    let name = match id {
                        Some(id) => format!("{UNMATCHED_PREFIX}{id}"),
                        None => format!("{UNMATCHED_PREFIX}at_{position}"),
                    };
                    field.as_ref().clone().with_name(name)
                }
            };
            std::sync::Arc::new(renamed)
        })
        .collect()
}

/// `t` with the struct members below it renamed as `nested` says; list elements, map keys
/// and values keep their names. A structure other than the table's is kept: reading it as
/// the table type reports the mismatch.
fn rename_arrow_type(
    t: &arrow::datatypes::DataType,
    nested: &NestedIds,
    mapping: Option<&[MappedName]>,
) -> arrow::datatypes::DataType {
    use arrow::datatypes::DataType;
    let child = |name: &str| mapped(mapping, name).map(|m| m.fields.as_slice());
    let renamed_child = |f: &arrow::datatypes::FieldRef, nested: &NestedIds, name: &str| {
        let t = rename_arrow_type(f.data_type(), nested, child(name));
        std::sync::Arc::new(f.as_ref().clone().with_data_type(t))
    };
    match (t, nested) {
        (DataType::Struct(children), NestedIds::Struct(members)) => {
            DataType::Struct(rename_arrow_level(children, members, mapping))
        }
        (DataType::List(item), NestedIds::List(element)) => {
            DataType::List(renamed_child(item, element, "element"))
        }
        (DataType::LargeList(item), NestedIds::List(element)) => {
            DataType::LargeList(renamed_child(item, element, "element"))
        }
        (DataType::Map(entries, sorted), NestedIds::Map(key, value)) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return t.clone();
            };
            let [k, v] = kv.iter().collect::<Vec<_>>()[..] else {
                return t.clone();
            };
            let kv: arrow::datatypes::Fields = vec![
                renamed_child(k, key, "key"),
                renamed_child(v, value, "value"),
            ]
            .into();
            let entries = entries
                .as_ref()
                .clone()
                .with_data_type(DataType::Struct(kv));
            DataType::Map(std::sync::Arc::new(entries), *sorted)
        }
        _ => t.clone(),
    }
}
