//! Why the `iceberg` crate refused a metadata file whose shape it does not know: it tries the
//! v3, v2 and v1 layouts in turn (an untagged enum) and says only "data did not match any
//! variant of untagged enum TableMetadataEnum". [`diagnose`] names the first field that is
//! missing, of the wrong JSON type, or (schemas, partition specs, sort orders, snapshot
//! summaries) does not parse on its own.

use iceberg::spec::{PartitionSpec, Schema, SortOrder, Summary};
use serde_json::Value;

/// Parses a JSON value as one part of the metadata, keeping only the error.
type Parse = fn(Value) -> serde_json::Result<()>;

fn schema(v: Value) -> serde_json::Result<()> {
    serde_json::from_value::<Schema>(v).map(drop)
}

fn partition_spec(v: Value) -> serde_json::Result<()> {
    serde_json::from_value::<PartitionSpec>(v).map(drop)
}

fn sort_order(v: Value) -> serde_json::Result<()> {
    serde_json::from_value::<SortOrder>(v).map(drop)
}

/// What a required field must be.
#[derive(Clone, Copy)]
enum Kind {
    Integer,
    Text,
    Array,
}

/// Top-level fields every v2 and v3 metadata file has (v1 needs only some of them).
const V2_FIELDS: &[(&str, Kind)] = &[
    ("table-uuid", Kind::Text),
    ("location", Kind::Text),
    ("last-sequence-number", Kind::Integer),
    ("last-updated-ms", Kind::Integer),
    ("last-column-id", Kind::Integer),
    ("schemas", Kind::Array),
    ("current-schema-id", Kind::Integer),
    ("partition-specs", Kind::Array),
    ("default-spec-id", Kind::Integer),
    ("last-partition-id", Kind::Integer),
    ("sort-orders", Kind::Array),
    ("default-sort-order-id", Kind::Integer),
];

const V1_FIELDS: &[(&str, Kind)] = &[
    ("location", Kind::Text),
    ("last-updated-ms", Kind::Integer),
    ("last-column-id", Kind::Integer),
];

/// The first problem of `metadata` (a JSON object of format `version`) that keeps it from
/// parsing, in words; `None` when none of these checks finds one.
pub fn diagnose(metadata: &Value, version: u64) -> Option<String> {
    let fields = match version {
        1 => V1_FIELDS,
        _ => V2_FIELDS,
    };
    fields
        .iter()
        .find_map(|(name, kind)| field_problem(metadata, name, *kind))
        .or_else(|| each(metadata, "schemas", "schema", schema))
        .or_else(|| one(metadata, "schema", "schema", schema))
        .or_else(|| {
            each(
                metadata,
                "partition-specs",
                "partition spec",
                partition_spec,
            )
        })
        .or_else(|| each(metadata, "sort-orders", "sort order", sort_order))
        .or_else(|| snapshots(metadata, version))
}

fn field_problem(metadata: &Value, name: &str, kind: Kind) -> Option<String> {
    let Some(value) = metadata.get(name) else {
        return Some(format!("it has no {name}"));
    };
    let (fits, expected) = match kind {
        Kind::Integer => (value.is_i64() || value.is_u64(), "an integer"),
        Kind::Text => (value.is_string(), "a string"),
        Kind::Array => (value.is_array(), "an array"),
    };
    (!fits).then(|| format!("its {name} is {value}, not {expected}"))
}

/// The first element of the array `field` that `parse` (of a `what`) refuses.
fn each(metadata: &Value, field: &str, what: &str, parse: Parse) -> Option<String> {
    let items = metadata.get(field)?.as_array()?;
    items.iter().enumerate().find_map(|(i, item)| {
        parse(item.clone())
            .err()
            .map(|e| format!("{what} {i} of {field} does not parse: {e}"))
    })
}

/// The problem of the single `field` that `parse` (of a `what`) refuses.
fn one(metadata: &Value, field: &str, what: &str, parse: Parse) -> Option<String> {
    let item = metadata.get(field)?;
    parse(item.clone())
        .err()
        .map(|e| format!("its {what} does not parse: {e}"))
}

/// The first snapshot without a field its format version requires, or whose summary does
/// not parse.
fn snapshots(metadata: &Value, version: u64) -> Option<String> {
    let snapshots = metadata.get("snapshots")?.as_array()?;
    let mut required = vec!["snapshot-id", "timestamp-ms"];
    if version >= 2 {
        required.extend(["manifest-list", "summary"]);
    }
    if version >= 3 {
        required.push("sequence-number");
    }
    snapshots.iter().enumerate().find_map(|(i, snapshot)| {
        let missing = required.iter().find(|f| snapshot.get(**f).is_none());
        if let Some(field) = missing {
            return Some(format!("snapshot {i} of snapshots has no {field}"));
        }
        let summary = snapshot.get("summary")?;
        serde_json::from_value::<Summary>(summary.clone())
            .map(drop)
            .err()
            .map(|e| format!("the summary of snapshot {i} does not parse: {e}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2() -> Value {
        serde_json::json!({
            "format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
            "location": "/t", "last-sequence-number": 1, "last-updated-ms": 1,
            "last-column-id": 1, "current-schema-id": 0, "default-spec-id": 0,
            "last-partition-id": 999, "default-sort-order-id": 0,
            "schemas": [{"type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "id", "required": false, "type": "int"}]}],
            "partition-specs": [{"spec-id": 0, "fields": []}],
            "sort-orders": [{"order-id": 0, "fields": []}],
            "snapshots": [{"snapshot-id": 1, "timestamp-ms": 1, "manifest-list": "/l.avro",
                           "summary": {"operation": "append"}}]
        })
    }

    /// `value` without its member `key`.
    fn without(mut value: Value, key: &str) -> Value {
        if let Some(object) = value.as_object_mut() {
            object.remove(key);
        }
        value
    }

    #[test]
    fn names_the_field_that_keeps_metadata_from_parsing() {
        assert_eq!(diagnose(&v2(), 2), None);
        let mut cases = vec![(without(v2(), "schemas"), "it has no schemas")];
        let mut m = v2();
        m["current-schema-id"] = "0".into();
        cases.push((m, "its current-schema-id is \"0\", not an integer"));
        let mut m = v2();
        m["schemas"][0]["fields"][0]["type"] = "varchar".into();
        cases.push((m, "schema 0 of schemas does not parse"));
        let mut m = v2();
        m["snapshots"][0] = without(m["snapshots"][0].clone(), "manifest-list");
        cases.push((m, "snapshot 0 of snapshots has no manifest-list"));
        let mut m = v2();
        m["snapshots"][0]["summary"]["operation"] = "merge".into();
        cases.push((m, "the summary of snapshot 0 does not parse"));
        for (metadata, expected) in cases {
            let found = diagnose(&metadata, 2).unwrap_or_default();
            assert!(found.starts_with(expected), "{found}");
        }
    }
}
