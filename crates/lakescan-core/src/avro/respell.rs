//! The header's `avro.schema` respelled where `arrow-avro` 58 would read a file otherwise
//! than Java does; the data blocks are kept byte for byte
//! ([`super::header::AvroHeader::rewrite`]), and a file needing neither rule is returned as
//! it is.
//!
//! * **Full names.** The Avro specification allows both spellings of a named type (record,
//!   enum, fixed): a `name` with a separate `namespace`, or a full name with dots in `name`
//!   (the namespace then ignored). `arrow-avro` registers a dotted `name` under the
//!   enclosing namespace and resolves a reference by splitting it at its last dot, so a
//!   file whose schema refers back to such a type (`["null", "com.example.Suit"]`), as
//!   fastavro and other non-Java writers write them, does not open ("Failed to resolve
//!   com.example.Suit"). Every dotted `name` becomes its last part, with the rest as
//!   `namespace`, as Java writes them.
//! * **Strings marked `uuid`.** `arrow-avro` parses a `string` with `"logicalType": "uuid"`
//!   into 16 bytes (a `FixedSizeBinary(16)` column); Java, Hive and Trino read the string as
//!   written. The mark is dropped: the column reads as the strings.
//!   (Iceberg's `uuid` is a `fixed(16)`, which keeps its mark.)
//! * **Decimal attributes written as strings.** Old Hive writers wrote a decimal's
//!   `"precision": "5", "scale": "2"` as JSON strings; `arrow-avro` ignores such attributes
//!   and reads the column as `DECIMAL(10, 0)` — every value a hundred times too large. They
//!   become numbers, as Hive's reader parses them. A decimal whose precision is missing or
//!   not a number has an invalid logical type, which Java's Avro ignores: the mark is
//!   dropped and the column reads as its bytes.

use bytes::Bytes;
use serde_json::{Map, Value};

use super::header::AvroHeader;

/// `file` with its `avro.schema` respelled (see the module docs); the error says what is
/// malformed in its header.
pub fn respelled(file: Bytes) -> Result<Bytes, String> {
    let Ok(mut header) = AvroHeader::parse(&file) else {
        // The reader names what is wrong with the header.
        return Ok(file);
    };
    let Some(schema) = header.metadata.get("avro.schema") else {
        return Ok(file);
    };
    let Ok(mut schema) = serde_json::from_slice::<Value>(schema) else {
        return Ok(file);
    };
    let split = split_full_names(&mut schema);
    let unmarked = unmark_string_uuids(&mut schema);
    let decimals = numeric_decimal_attributes(&mut schema);
    if !split && !unmarked && !decimals {
        return Ok(file);
    }
    let json = serde_json::to_vec(&schema).map_err(|e| e.to_string())?;
    header.metadata.insert("avro.schema".into(), json);
    header.rewrite(&file).map(Bytes::from)
}

/// Applies `edit` to every object of `schema` (each object before what it holds); whether
/// any edit changed one.
fn edit_objects(schema: &mut Value, edit: &impl Fn(&mut Map<String, Value>) -> bool) -> bool {
    match schema {
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, item| edit_objects(item, edit) | changed),
        Value::Object(object) => {
            let changed = edit(object);
            object.values_mut().fold(changed, |changed, value| {
                edit_objects(value, edit) | changed
            })
        }
        _ => false,
    }
}

/// Splits every dotted `name` of a record, enum or fixed in `schema` into `name` and
/// `namespace`; whether any was.
fn split_full_names(schema: &mut Value) -> bool {
    edit_objects(schema, &|object| {
        let named = matches!(
            object.get("type").and_then(Value::as_str),
            Some("record" | "enum" | "fixed" | "error")
        );
        let dotted = object
            .get("name")
            .and_then(Value::as_str)
            .and_then(|full| full.rsplit_once('.'))
            .map(|(namespace, name)| (namespace.to_string(), name.to_string()));
        match dotted.filter(|_| named) {
            Some((namespace, name)) => {
                object.insert("name".into(), Value::String(name));
                object.insert("namespace".into(), Value::String(namespace));
                true
            }
            None => false,
        }
    })
}

/// Drops `"logicalType": "uuid"` from every `string` type of `schema`; whether any had it.
fn unmark_string_uuids(schema: &mut Value) -> bool {
    edit_objects(schema, &|object| {
        let uuid_string = object.get("type").and_then(Value::as_str) == Some("string")
            && object.get("logicalType").and_then(Value::as_str) == Some("uuid");
        if uuid_string {
            object.remove("logicalType");
        }
        uuid_string
    })
}

/// Makes the `precision` and `scale` of every decimal of `schema` numbers where they are
/// strings of digits, and drops the `decimal` mark where the precision is not a number;
/// whether anything changed.
fn numeric_decimal_attributes(schema: &mut Value) -> bool {
    edit_objects(schema, &|object| {
        if object.get("logicalType").and_then(Value::as_str) != Some("decimal") {
            return false;
        }
        let mut changed = false;
        for key in ["precision", "scale"] {
            let digits = object
                .get(key)
                .and_then(Value::as_str)
                .and_then(|text| text.trim().parse::<u64>().ok());
            if let Some(n) = digits {
                object.insert(key.into(), Value::from(n));
                changed = true;
            }
        }
        if object.get("precision").and_then(Value::as_u64).is_none() {
            object.remove("logicalType");
            changed = true;
        }
        changed
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_names_are_split_and_references_kept() {
        let mut schema = serde_json::json!({
            "type": "record", "name": "com.example.Reading", "fields": [
                {"name": "suit", "type": {"type": "enum", "name": "com.example.Suit", "symbols": ["A"]}},
                {"name": "again", "type": ["null", "com.example.Suit"]},
                {"name": "plain", "type": {"type": "fixed", "name": "Mac", "size": 4}}
            ]
        });
        assert!(split_full_names(&mut schema));
        assert_eq!(schema["name"], "Reading");
        assert_eq!(schema["namespace"], "com.example");
        let suit = &schema["fields"][0]["type"];
        assert_eq!(
            (&suit["name"], &suit["namespace"]),
            (&"Suit".into(), &"com.example".into())
        );
        // A field's own name is not a type name, and references keep their full name.
        assert_eq!(schema["fields"][0]["name"], "suit");
        assert_eq!(schema["fields"][1]["type"][1], "com.example.Suit");
        assert!(schema["fields"][2]["type"].get("namespace").is_none());
    }

    #[test]
    fn string_uuids_lose_their_mark_and_fixed_ones_keep_it() {
        let mut schema = serde_json::json!({
            "type": "record", "name": "r", "fields": [
                {"name": "a", "type": ["null", {"type": "string", "logicalType": "uuid"}]},
                {"name": "b", "type": {"type": "fixed", "name": "u", "size": 16, "logicalType": "uuid"}}
            ]
        });
        assert!(unmark_string_uuids(&mut schema));
        assert_eq!(
            schema["fields"][0]["type"][1],
            serde_json::json!({"type": "string"})
        );
        assert_eq!(schema["fields"][1]["type"]["logicalType"], "uuid");
        assert!(!unmark_string_uuids(&mut schema));
    }

    #[test]
    fn decimal_attributes_written_as_strings_become_numbers() {
        // Hive's old writers (its test file dec_old.avro): precision and scale as strings.
        let mut schema = serde_json::json!({
            "type": "record", "name": "r", "fields": [
                {"name": "old", "type": ["null", {"type": "bytes", "logicalType": "decimal",
                                                  "precision": "5", "scale": "2"}]},
                {"name": "new", "type": {"type": "bytes", "logicalType": "decimal",
                                         "precision": 4, "scale": 1}},
                {"name": "bad", "type": {"type": "bytes", "logicalType": "decimal",
                                         "precision": "five"}}
            ]
        });
        assert!(numeric_decimal_attributes(&mut schema));
        assert_eq!(
            schema["fields"][0]["type"][1],
            serde_json::json!({"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2})
        );
        assert_eq!(schema["fields"][1]["type"]["precision"], 4);
        // No precision: an invalid logical type, ignored as Java's Avro ignores it.
        assert!(schema["fields"][2]["type"].get("logicalType").is_none());
        assert!(!numeric_decimal_attributes(&mut schema));
    }

    #[test]
    fn schemas_without_dotted_names_are_unchanged() {
        let mut schema = serde_json::json!({
            "type": "record", "name": "r", "namespace": "a.b",
            "fields": [{"name": "x.y", "type": "long"}]
        });
        let before = schema.clone();
        assert!(!split_full_names(&mut schema));
        assert_eq!(schema, before);
    }
}
