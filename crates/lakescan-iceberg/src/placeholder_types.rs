//! Iceberg v3 types the `iceberg` crate cannot parse — `variant`, `geometry(…)`,
//! `geography(…)`, `unknown` — replaced by a placeholder before the crate sees a schema, and
//! remembered by field id, so a table that has such a column still opens.
//!
//! ```text
//!  {"id": 4, "name": "v", "type": "variant"}  ─▶  {"id": 4, "name": "v", "type": "binary"}
//!                                                 PlaceholderTypes { 4 → "variant" }
//! ```
//!
//! The placeholder is `binary` because every byte string parses as one: a column bound of a
//! replaced field (in a manifest) stays readable. What a scan does with the columns
//! ([`crate::schema::ScanSchema`]): `unknown` is always NULL (the spec: never stored in data
//! files), as Java reads it; the other three are not read yet, so a query that needs one is a
//! `NotImplemented` naming the column and its type, while the table's other columns and
//! `count(*)` read as usual.

use std::collections::BTreeMap;

use serde_json::Value;

/// The type that stands in for a type the crate cannot parse.
const PLACEHOLDER: &str = "binary";

/// Fields whose types were replaced, by field id, with the type as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlaceholderTypes {
    by_field_id: BTreeMap<i32, String>,
}

/// What [`PlaceholderTypes`] replaced in each schema of a table, by schema id: a field may
/// have a type the crate cannot parse in one schema and not in another (v3 promotes
/// `unknown` to any type).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SchemaPlaceholders {
    by_schema: BTreeMap<i32, PlaceholderTypes>,
}

impl SchemaPlaceholders {
    /// Replaces the types of every schema of a table metadata JSON (`schemas`, and v1's
    /// `schema`) and returns what it replaced, by schema id (a schema without an id is 0).
    pub fn replace_in_metadata(metadata: &mut Value) -> Self {
        let mut out = Self::default();
        let mut replace = |schema: &mut Value| {
            let id = schema
                .get("schema-id")
                .and_then(Value::as_i64)
                .and_then(|id| i32::try_from(id).ok())
                .unwrap_or(0);
            let found = PlaceholderTypes::replace_in_schema(schema);
            if !found.is_empty() {
                out.by_schema.insert(id, found);
            }
        };
        if let Some(schemas) = metadata.get_mut("schemas").and_then(Value::as_array_mut) {
            schemas.iter_mut().for_each(&mut replace);
        }
        if let Some(schema) = metadata.get_mut("schema") {
            replace(schema);
        }
        out
    }

    /// What was replaced in the schema with id `schema_id`.
    pub fn of(&self, schema_id: i32) -> PlaceholderTypes {
        self.by_schema.get(&schema_id).cloned().unwrap_or_default()
    }
}

impl PlaceholderTypes {
    /// Replaces the types of one schema JSON (a manifest's `schema`).
    pub fn replace_in_schema(schema: &mut Value) -> Self {
        let mut found = Self::default();
        found.walk_type(schema, None);
        found
    }

    /// The type written for field `id`, when it was replaced.
    pub fn written_type(&self, id: i32) -> Option<&str> {
        self.by_field_id.get(&id).map(String::as_str)
    }

    /// Whether field `id` has type `unknown` (always NULL).
    pub fn is_unknown(&self, id: i32) -> bool {
        self.written_type(id) == Some("unknown")
    }

    /// Whether nothing was replaced.
    pub fn is_empty(&self) -> bool {
        self.by_field_id.is_empty()
    }

    fn walk_type(&mut self, t: &mut Value, id: Option<i64>) {
        match t {
            Value::String(name) if is_unparsed(name) => {
                if let Some(id) = id.and_then(|id| i32::try_from(id).ok()) {
                    self.by_field_id.insert(id, name.clone());
                }
                *t = Value::String(PLACEHOLDER.into());
            }
            Value::Object(object) => {
                let kind = object
                    .get("type")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                match kind.as_deref() {
                    Some("struct") => {
                        let fields = object.get_mut("fields").and_then(Value::as_array_mut);
                        for field in fields.into_iter().flatten() {
                            let id = field.get("id").and_then(Value::as_i64);
                            if let Some(t) = field.get_mut("type") {
                                self.walk_type(t, id);
                            }
                        }
                    }
                    Some("list") => self.walk_child(object, "element", "element-id"),
                    Some("map") => {
                        self.walk_child(object, "key", "key-id");
                        self.walk_child(object, "value", "value-id");
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn walk_child(&mut self, object: &mut serde_json::Map<String, Value>, key: &str, id: &str) {
        let id = object.get(id).and_then(Value::as_i64);
        if let Some(t) = object.get_mut(key) {
            self.walk_type(t, id);
        }
    }
}

/// Whether the crate cannot parse type name `name`.
fn is_unparsed(name: &str) -> bool {
    matches!(name, "variant" | "unknown")
        || name.starts_with("geometry")
        || name.starts_with("geography")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_v3_types_at_every_depth() {
        let mut metadata = serde_json::json!({
            "schemas": [{"type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "id", "required": false, "type": "long"},
                {"id": 2, "name": "v", "required": false, "type": "variant"},
                {"id": 3, "name": "s", "required": false, "type": {"type": "struct", "fields": [
                    {"id": 4, "name": "g", "required": false, "type": "geometry(srid:4326)"}]}},
                {"id": 5, "name": "l", "required": false, "type": {"type": "list",
                    "element-id": 6, "element": "geography(OGC:CRS84, spherical)",
                    "element-required": false}},
                {"id": 7, "name": "m", "required": false, "type": {"type": "map",
                    "key-id": 8, "key": "string", "value-id": 9, "value": "unknown",
                    "value-required": false}}
            ]}]
        });
        let found = SchemaPlaceholders::replace_in_metadata(&mut metadata).of(0);
        assert_eq!(found.written_type(2), Some("variant"));
        assert_eq!(found.written_type(4), Some("geometry(srid:4326)"));
        assert_eq!(
            found.written_type(6),
            Some("geography(OGC:CRS84, spherical)")
        );
        assert!(found.is_unknown(9));
        assert_eq!(found.written_type(1), None);
        assert_eq!(found.written_type(8), None);
        let text = metadata.to_string();
        for gone in ["variant", "geometry", "geography", "unknown"] {
            assert!(!text.contains(gone), "{gone} left in {text}");
        }
        let schema: iceberg::spec::Schema =
            serde_json::from_value(metadata["schemas"][0].clone()).unwrap();
        assert!(schema.field_by_id(2).is_some());
    }

    /// v3 promotes `unknown` to any type: a field `unknown` in an old schema and `string`
    /// in the current one is a placeholder of the old schema only.
    #[test]
    fn placeholders_are_per_schema() {
        let field =
            |t: &str| serde_json::json!({"id": 3, "name": "u", "required": false, "type": t});
        let mut metadata = serde_json::json!({"schemas": [
            {"type": "struct", "schema-id": 0, "fields": [field("unknown")]},
            {"type": "struct", "schema-id": 1, "fields": [field("string")]}
        ]});
        let found = SchemaPlaceholders::replace_in_metadata(&mut metadata);
        assert!(found.of(0).is_unknown(3));
        assert!(!found.of(1).is_unknown(3));
        assert!(found.of(1).is_empty());
    }

    #[test]
    fn known_types_are_untouched() {
        let mut schema = serde_json::json!({"type": "struct", "fields": [
            {"id": 1, "name": "ts", "required": true, "type": "timestamp_ns"}]});
        let before = schema.clone();
        assert!(PlaceholderTypes::replace_in_schema(&mut schema).is_empty());
        assert_eq!(schema, before);
    }
}
