//! Named types written with their full name in `name` (`"name": "com.example.Suit"`), as
//! fastavro and other non-Java writers write them, made readable by `arrow-avro` 58.
//!
//! The Avro specification allows both spellings of a named type (record, enum, fixed): a
//! `name` with a separate `namespace`, or a full name with dots in `name` (the namespace
//! then ignored). `arrow-avro` 58 registers a dotted `name` under the enclosing namespace
//! and resolves a reference by splitting it at its last dot, so a file whose schema refers
//! back to such a type (`["null", "com.example.Suit"]`) does not open ("Failed to resolve
//! com.example.Suit"). Java writes `name` and `namespace` apart; this rewrites other
//! writers' headers the same way before `arrow-avro` parses them: every dotted `name` of a
//! named type becomes its last part, with the rest as `namespace`. The data blocks are kept
//! byte for byte ([`super::header::AvroHeader::rewrite`]); a file whose schema has no
//! dotted name is returned as it is.

use bytes::Bytes;
use serde_json::Value;

use super::header::AvroHeader;

/// `file` with every named type of its `avro.schema` spelled as `name` and `namespace`; the
/// error says what is malformed in its header.
pub fn with_namespaces(file: Bytes) -> Result<Bytes, String> {
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
    if !split_full_names(&mut schema) {
        return Ok(file);
    }
    let json = serde_json::to_vec(&schema).map_err(|e| e.to_string())?;
    header.metadata.insert("avro.schema".into(), json);
    header.rewrite(&file).map(Bytes::from)
}

/// Splits every dotted `name` of a record, enum or fixed in `schema` into `name` and
/// `namespace`; whether any was.
fn split_full_names(schema: &mut Value) -> bool {
    match schema {
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, item| split_full_names(item) | changed),
        Value::Object(object) => {
            let named = matches!(
                object.get("type").and_then(Value::as_str),
                Some("record" | "enum" | "fixed" | "error")
            );
            let dotted = object
                .get("name")
                .and_then(Value::as_str)
                .and_then(|full| full.rsplit_once('.'))
                .map(|(namespace, name)| (namespace.to_string(), name.to_string()));
            let mut changed = false;
            if named && let Some((namespace, name)) = dotted {
                object.insert("name".into(), Value::String(name));
                object.insert("namespace".into(), Value::String(namespace));
                changed = true;
            }
            object
                .values_mut()
                .fold(changed, |changed, value| split_full_names(value) | changed)
        }
        _ => false,
    }
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
