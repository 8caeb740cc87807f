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
