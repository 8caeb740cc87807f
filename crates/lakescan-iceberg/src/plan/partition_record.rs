//! A manifest's partition record read as Java's `ManifestReader` reads it: the partition
//! spec's fields matched to the record's fields **by field id** (by position where the
//! record carries no ids), each value read with the type the writer wrote.
//!
//! The `iceberg` crate reads the record with a reader schema made from the spec's field
//! *names* and the types the spec has over the manifest's schema, and Avro resolves the two
//! by name. Writers do not keep the spec's names in the record: Hive-based writers lowercase
//! them (`ID_bucket` → `id_bucket`), Java and PyIceberg write names that are not valid Avro
//! names in Avro's escaped form (`with space` → `with_x20space`, `a/b` → `a_x2Fb`); such a
//! field resolves to nothing and reads as NULL. A record written before its source column
//! was promoted holds the old type (a `fixed[3]` `decimal(5,3)` where the spec now says
//! `decimal(8,3)`, four bytes), which the resolution refuses. And a v1 spec's removed field
//! kept as `void` under its source column's name fails the crate's name check.
//!
//! [`ReadingSpec::rewrite`] detects these and gives the crate a spec it reads right: in the
//! table spec's order, each field an `identity` of a column of its own typed as the writer
//! wrote the value, named as the writer named the record's field (a field the record lacks
//! gets a name no writer field has and reads as NULL, as in Java). The manifest's schema keeps
//! its field ids (column bounds are parsed by id) with its top-level names made private, so
//! no partition name conflicts with a column. Values of a promoted type are brought to the
//! current type afterwards, as every partition tuple is ([`super::partition`]).

use iceberg::spec::{PartitionField, PrimitiveType, Schema, Type};
use serde_json::{Value, json};

use super::avro_header::AvroHeader;

/// One field of the partition record as the manifest's Avro schema writes it.
#[derive(Debug)]
struct WrittenField {
    name: String,
    field_id: Option<i32>,
    /// The value's type in Iceberg terms; `None` when it has none (a nested type).
    written_type: Option<PrimitiveType>,
}

/// How the partition fields of one manifest are read.
#[derive(Debug)]
pub struct ReadingSpec;

impl ReadingSpec {
    /// Rewrites the `partition-spec` and `schema` keys of `header` (already filled with the
    /// table's spec and a schema) so the crate reads the partition record by field id with
    /// the writer's types; `true` when it changed them. `last_column_id` is the table's
    /// highest field id ever assigned: the columns made here take ids above it and above
    /// every id of the schema, so no column bound (parsed by id) is read as one of them. The
    /// error says what cannot be read.
    pub fn rewrite(header: &mut AvroHeader, last_column_id: i32) -> Result<bool, String> {
        let Some(written) = written_fields(header)? else {
            return Ok(false);
        };
        let (Some(spec_json), Some(schema_json)) = (
            header.metadata.get("partition-spec"),
            header.metadata.get("schema"),
        ) else {
            return Ok(false);
        };
        let fields: Vec<PartitionField> = serde_json::from_slice(spec_json)
            .map_err(|e| format!("its partition-spec does not parse: {e}"))?;
        let mut schema_value: Value = serde_json::from_slice(schema_json)
            .map_err(|e| format!("its schema is not valid JSON: {e}"))?;
        let schema: Schema = serde_json::from_value(schema_value.clone())
            .map_err(|e| format!("its schema does not parse: {e}"))?;
        let matched = match_fields(&fields, &written);
        let mut reading = Vec::with_capacity(fields.len());
        let mut plain = spec_builds(&fields, &schema);
        for (field, position) in fields.iter().zip(&matched) {
            let spec_type = spec_type(field, &schema);
            let record_field = position.and_then(|j| written.get(j));
            let field_reading = FieldReading::of(field, record_field, spec_type)?;
            plain &= field_reading.is_plain(field);
            reading.push(field_reading);
        }
        if plain {
            return Ok(false);
        }
        let first_id = highest_id(&schema_value).max(i64::from(last_column_id)) + 1;
        if first_id + reading.len() as i64 > i64::from(i32::MAX) - 1_000 {
            return Err(format!(
                "its field ids reach {first_id}, too close to the ids Iceberg reserves for \
                 metadata columns to read its partition record"
            ));
        }
        private_column_names(&mut schema_value);
        let mut spec = Vec::with_capacity(reading.len());
        let columns = schema_value
            .get_mut("fields")
            .and_then(Value::as_array_mut)
            .ok_or("its schema has no fields")?;
        for (i, (field, read)) in fields.iter().zip(&reading).enumerate() {
            let source_id = first_id + i as i64;
            columns.push(json!({
                "id": source_id,
                "name": format!("_lakescan_partition_{i}"),
                "required": false,
                "type": serde_json::to_value(Type::Primitive(read.read_type.clone()))
                    .map_err(|e| format!("cannot write a partition type as JSON: {e}"))?,
            }));
            let name = match &read.written_name {
                Some(name) => name.clone(),
                None => unused_name(i, &written),
            };
            spec.push(json!({
                "source-id": source_id,
                "field-id": field.field_id,
                "transform": "identity",
                "name": name,
            }));
        }
        let write = |v: &Value, what: &str| {
            serde_json::to_vec(v).map_err(|e| format!("cannot write the {what} as JSON: {e}"))
        };
        header
            .metadata
            .insert("schema".into(), write(&schema_value, "schema")?);
        header
            .metadata
            .insert("partition-spec".into(), write(&Value::Array(spec), "spec")?);
        Ok(true)
    }
}

/// How one spec field is read.
#[derive(Debug)]
struct FieldReading {
    /// The record field's name, `None` when the record has no field for it.
    written_name: Option<String>,
    /// The type the value is read as.
    read_type: PrimitiveType,
    /// Whether the spec's own type reads the written value.
    spec_type_reads: bool,
}

impl FieldReading {
    fn of(
        field: &PartitionField,
        written: Option<&WrittenField>,
        spec_type: Option<PrimitiveType>,
    ) -> Result<Self, String> {
        let written_type = written.and_then(|w| w.written_type.clone());
        let spec_type_reads = match (&spec_type, &written_type) {
            (Some(s), Some(w)) => reads_as(w, s),
            (_, None) => written.is_none(),
            (None, Some(_)) => false,
        };
        let read_type = match (spec_type_reads, spec_type, written_type) {
            (true, Some(s), _) => s,
            (_, _, Some(w)) => w,
            // A field the record lacks reads as NULL whatever its type.
            (_, None, None) if written.is_none() => PrimitiveType::Int,
            (_, _, None) => {
                return Err(format!(
                    "its partition field '{}' (id {}) is not of a primitive type",
                    field.name, field.field_id
                ));
            }
        };
        Ok(Self {
            written_name: written.map(|w| w.name.clone()),
            read_type,
            spec_type_reads,
        })
    }

    /// Whether the crate reads the field right without a rewrite.
    fn is_plain(&self, field: &PartitionField) -> bool {
        self.spec_type_reads && self.written_name.as_deref() == Some(field.name.as_str())
    }
}

/// The fields of the `partition` record of the entries' `data_file`; `None` when the
/// schema has no such record (the crate's own error then says what is wrong).
fn written_fields(header: &AvroHeader) -> Result<Option<Vec<WrittenField>>, String> {
    let Some(avro) = header.metadata.get("avro.schema") else {
        return Ok(None);
    };
    let avro: Value = serde_json::from_slice(avro)
        .map_err(|e| format!("its avro.schema is not valid JSON: {e}"))?;
    let mut named = std::collections::HashMap::new();
    named_types(&avro, &mut named);
    let record = field_type(&avro, "data_file", &named)
        .and_then(|data_file| field_type(data_file, "partition", &named));
    let Some(fields) = record
        .and_then(|r| r.get("fields"))
        .and_then(Value::as_array)
    else {
        return Ok(None);
    };
    let mut written = Vec::with_capacity(fields.len());
    for field in fields {
        let Some(name) = field.get("name").and_then(Value::as_str) else {
            return Err("a field of its partition record has no name".into());
        };
        let field_id = field
            .get("field-id")
            .and_then(Value::as_i64)
            .and_then(|id| i32::try_from(id).ok());
        let written_type = field.get("type").and_then(|t| iceberg_type(t, &named));
        written.push(WrittenField {
            name: name.to_string(),
            field_id,
            written_type,
        });
    }
    Ok(Some(written))
}

/// Every named Avro type (`record`, `fixed`, `enum`) in `schema`, by name and full name.
fn named_types<'a>(schema: &'a Value, out: &mut std::collections::HashMap<String, &'a Value>) {
    match schema {
        Value::Object(o) => {
            let kind = o.get("type").and_then(Value::as_str);
            if matches!(kind, Some("record" | "fixed" | "enum"))
                && let Some(name) = o.get("name").and_then(Value::as_str)
            {
                out.insert(name.to_string(), schema);
                if let Some(ns) = o.get("namespace").and_then(Value::as_str) {
                    out.insert(format!("{ns}.{name}"), schema);
                }
            }
            o.values().for_each(|v| named_types(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| named_types(v, out)),
        _ => {}
    }
}

/// The (non-null) type of the field `name` of `record`, named types resolved.
fn field_type<'a>(
    record: &'a Value,
    name: &str,
    named: &std::collections::HashMap<String, &'a Value>,
) -> Option<&'a Value> {
    let field = record
        .get("fields")?
        .as_array()?
        .iter()
        .find(|f| f.get("name").and_then(Value::as_str) == Some(name))?;
    Some(resolved(field.get("type")?, named))
}

/// `avro` with a `["null", T]` union reduced to `T` and a type name to its definition.
fn resolved<'a>(
    avro: &'a Value,
    named: &std::collections::HashMap<String, &'a Value>,
) -> &'a Value {
    match avro {
        Value::Array(branches) => match branches
            .iter()
            .filter(|b| b.as_str() != Some("null"))
            .collect::<Vec<_>>()
            .as_slice()
        {
            [only] => resolved(only, named),
            _ => avro,
        },
        Value::String(name) => named.get(name.as_str()).copied().unwrap_or(avro),
        _ => avro,
    }
}

/// The Iceberg type an Avro value type writes (Iceberg's Avro mapping); `None` for nested
/// and unknown types.
fn iceberg_type(
    avro: &Value,
    named: &std::collections::HashMap<String, &Value>,
) -> Option<PrimitiveType> {
    let avro = resolved(avro, named);
    let (base, logical) = match avro {
        Value::String(s) => (s.as_str(), None),
        Value::Object(o) => (
            o.get("type").and_then(Value::as_str)?,
            o.get("logicalType").and_then(Value::as_str),
        ),
        _ => return None,
    };
    let utc = avro.get("adjust-to-utc").and_then(Value::as_bool) == Some(true);
    let decimal = || {
        let precision = u32::try_from(avro.get("precision")?.as_u64()?).ok()?;
        let scale = u32::try_from(avro.get("scale").and_then(Value::as_u64).unwrap_or(0)).ok()?;
        Some(PrimitiveType::Decimal { precision, scale })
    };
    Some(match (base, logical) {
        ("boolean", _) => PrimitiveType::Boolean,
        ("int", Some("date")) => PrimitiveType::Date,
        ("int", _) => PrimitiveType::Int,
        ("long", Some("time-micros")) => PrimitiveType::Time,
        ("long", Some("timestamp-micros")) if utc => PrimitiveType::Timestamptz,
        ("long", Some("timestamp-micros" | "local-timestamp-micros")) => PrimitiveType::Timestamp,
        ("long", Some("timestamp-nanos")) if utc => PrimitiveType::TimestamptzNs,
        ("long", Some("timestamp-nanos" | "local-timestamp-nanos")) => PrimitiveType::TimestampNs,
        ("long", _) => PrimitiveType::Long,
        ("float", _) => PrimitiveType::Float,
        ("double", _) => PrimitiveType::Double,
        ("string", Some("uuid")) => PrimitiveType::Uuid,
        ("string", _) => PrimitiveType::String,
        ("bytes", Some("decimal")) | ("fixed", Some("decimal")) => decimal()?,
        ("bytes", _) => PrimitiveType::Binary,
        ("fixed", Some("uuid")) => PrimitiveType::Uuid,
        ("fixed", _) => PrimitiveType::Fixed(avro.get("size")?.as_u64()?),
        _ => return None,
    })
}

/// Whether Avro reads a value written as `written` when asked for `read` (its promotions
/// `int → long`, `float → double`; an annotation the writer left out), with the same value.
fn reads_as(written: &PrimitiveType, read: &PrimitiveType) -> bool {
    use PrimitiveType as P;
    written == read
        || matches!(
            (written, read),
            (P::Int, P::Long | P::Date)
                | (P::Float, P::Double)
                | (
                    P::Long,
                    P::Time | P::Timestamp | P::Timestamptz | P::TimestampNs | P::TimestamptzNs
                )
                | (P::Binary, P::Decimal { .. })
        )
}

/// The record field each spec field reads: the one with its field id; else, among the
/// fields without an id, the one of its name (as written, Avro-escaped or lowercased), else
/// the one at its position (Java's fallback for records written without ids).
fn match_fields(fields: &[PartitionField], written: &[WrittenField]) -> Vec<Option<usize>> {
    let without_id = |j: &usize| written[*j].field_id.is_none();
    fields
        .iter()
        .enumerate()
        .map(|(i, field)| {
            if let Some(j) = written
                .iter()
                .position(|w| w.field_id == Some(field.field_id))
            {
                return Some(j);
            }
            let names = [
                field.name.clone(),
                avro_name(&field.name),
                field.name.to_lowercase(),
                avro_name(&field.name).to_lowercase(),
            ];
            (0..written.len())
                .filter(without_id)
                .find(|j| names.contains(&written[*j].name))
                .or_else(|| Some(i).filter(|i| *i < written.len()).filter(without_id))
        })
        .collect()
}

/// `name` as Iceberg's writers name an Avro field (`AvroSchemaUtil.makeCompatibleName`): a
/// first character that is not a letter or `_` becomes `_` followed by it when a digit, else
/// `_x` and its code in hex; later characters other than letters, digits and `_` become `_x`
/// and their code in hex (`with space` → `with_x20space`).
fn avro_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (k, c) in name.chars().enumerate() {
        let valid = c.is_ascii_alphabetic() || c == '_' || (k > 0 && c.is_ascii_digit());
        match (valid, k, c.is_ascii_digit()) {
            (true, _, _) => out.push(c),
            (false, 0, true) => {
                out.push('_');
                out.push(c);
            }
            _ => out.push_str(&format!("_x{:X}", u32::from(c))),
        }
    }
    out
}

/// The type the spec's field has over `schema`; `None` when its source column is not there.
fn spec_type(field: &PartitionField, schema: &Schema) -> Option<PrimitiveType> {
    let source = schema.field_by_id(field.source_id)?;
    match field.transform.result_type(&source.field_type).ok()? {
        Type::Primitive(p) => Some(p),
        _ => None,
    }
}

/// Whether the crate's own checks accept the spec over `schema` (a v1 `void` field named
/// like a column does not pass them).
fn spec_builds(fields: &[PartitionField], schema: &Schema) -> bool {
    let unbound = fields.iter().map(|f| f.clone().into_unbound());
    iceberg::spec::PartitionSpec::builder(schema.clone())
        .add_unbound_fields(unbound)
        .and_then(|b| b.build())
        .is_ok()
}

/// The highest field id anywhere in a schema's JSON.
fn highest_id(schema: &Value) -> i64 {
    match schema {
        Value::Object(o) => {
            let own = ["id", "element-id", "key-id", "value-id"]
                .iter()
                .filter_map(|k| o.get(*k).and_then(Value::as_i64))
                .max()
                .unwrap_or(0);
            o.values().map(highest_id).fold(own, i64::max)
        }
        Value::Array(a) => a.iter().map(highest_id).max().unwrap_or(0),
        _ => 0,
    }
}

/// Renames the schema's top-level columns `_lakescan_column_<id>` (bounds are read by id).
fn private_column_names(schema: &mut Value) {
    let columns = schema.get_mut("fields").and_then(Value::as_array_mut);
    for column in columns.into_iter().flatten() {
        let id = column.get("id").and_then(Value::as_i64).unwrap_or(0);
        column["name"] = Value::String(format!("_lakescan_column_{id}"));
    }
}

/// A name for the spec field `i` that no field of the record has.
fn unused_name(i: usize, written: &[WrittenField]) -> String {
    let mut name = format!("_lakescan_absent_{i}");
    while written.iter().any(|w| w.name == name) {
        name.push('_');
    }
    name
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::path::PathBuf;

    use iceberg::spec::Transform;
    use serde_json::json;

    use super::*;

    fn testdata(table: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/writers/pyiceberg/warehouse/db")
            .join(table)
            .join("metadata")
    }

    /// The headers of `table`'s manifests (not manifest lists).
    fn manifest_headers(table: &str) -> Vec<AvroHeader> {
        let mut paths: Vec<_> = std::fs::read_dir(testdata(table))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy();
                name.ends_with(".avro") && !name.starts_with("snap-")
            })
            .collect();
        paths.sort();
        paths
            .iter()
            .map(|p| AvroHeader::parse(&std::fs::read(p).unwrap()).unwrap())
            .collect()
    }

    fn spec_names(header: &AvroHeader) -> Vec<String> {
        let spec: Vec<PartitionField> =
            serde_json::from_slice(&header.metadata["partition-spec"]).unwrap();
        spec.into_iter().map(|f| f.name).collect()
    }

    #[test]
    fn avro_types_map_to_iceberg_types() {
        let named = HashMap::new();
        let of = |v: Value| iceberg_type(&v, &named);
        assert_eq!(of(json!("int")), Some(PrimitiveType::Int));
        assert_eq!(
            of(json!(["null", {"type": "int", "logicalType": "date"}])),
            Some(PrimitiveType::Date)
        );
        assert_eq!(
            of(json!({"type": "fixed", "size": 3, "name": "decimal_5_3",
                      "logicalType": "decimal", "precision": 5, "scale": 3})),
            Some(PrimitiveType::Decimal {
                precision: 5,
                scale: 3
            })
        );
        assert_eq!(
            of(json!({"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": true})),
            Some(PrimitiveType::Timestamptz)
        );
        assert_eq!(
            of(json!({"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": false})),
            Some(PrimitiveType::Timestamp)
        );
        assert_eq!(
            of(json!({"type": "fixed", "size": 16, "name": "uuid_fixed", "logicalType": "uuid"})),
            Some(PrimitiveType::Uuid)
        );
        assert_eq!(
            of(json!({"type": "fixed", "size": 7, "name": "f"})),
            Some(PrimitiveType::Fixed(7))
        );
        assert_eq!(of(json!({"type": "array", "items": "int"})), None);
        // A named type used a second time is a reference to its definition.
        let fixed = json!({"type": "fixed", "size": 4, "name": "decimal_8_3",
                           "logicalType": "decimal", "precision": 8, "scale": 3});
        let named = HashMap::from([("decimal_8_3".to_string(), &fixed)]);
        assert_eq!(
            iceberg_type(&json!(["null", "decimal_8_3"]), &named),
            Some(PrimitiveType::Decimal {
                precision: 8,
                scale: 3
            })
        );
    }

    #[test]
    fn promotions_read_only_where_avro_resolves_them() {
        let d = |precision| PrimitiveType::Decimal {
            precision,
            scale: 3,
        };
        assert!(reads_as(&PrimitiveType::Int, &PrimitiveType::Long));
        assert!(reads_as(&PrimitiveType::Float, &PrimitiveType::Double));
        assert!(!reads_as(&PrimitiveType::Long, &PrimitiveType::Int));
        // A fixed[3] decimal(5,3) is not a fixed[4] decimal(8,3).
        assert!(!reads_as(&d(5), &d(8)));
    }

    fn partition_field(field_id: i32, name: &str) -> PartitionField {
        PartitionField {
            source_id: 1,
            field_id,
            name: name.into(),
            transform: Transform::Identity,
        }
    }

    fn written(name: &str, field_id: Option<i32>) -> WrittenField {
        WrittenField {
            name: name.into(),
            field_id,
            written_type: Some(PrimitiveType::Int),
        }
    }

    #[test]
    fn fields_match_by_id_then_by_position() {
        let spec = [partition_field(1000, "A"), partition_field(1001, "B")];
        // By id, whatever the order and names.
        let by_id = [written("b", Some(1001)), written("a", Some(1000))];
        assert_eq!(match_fields(&spec, &by_id), vec![Some(1), Some(0)]);
        // Without ids, by name first, then by position.
        let no_ids = [written("x", None), written("y", None)];
        assert_eq!(match_fields(&spec, &no_ids), vec![Some(0), Some(1)]);
        let swapped = [written("b", None), written("a", None)];
        assert_eq!(match_fields(&spec, &swapped), vec![Some(1), Some(0)]);
        // A field the record lacks matches nothing; a record field of another id is not
        // taken by position.
        let other = [written("a", Some(1000)), written("z", Some(1005))];
        assert_eq!(match_fields(&spec, &other), vec![Some(0), None]);
    }

    #[test]
    fn avro_names_are_escaped_as_java_writes_them() {
        assert_eq!(avro_name("with space"), "with_x20space");
        assert_eq!(avro_name("a/b"), "a_x2Fb");
        assert_eq!(avro_name("1st"), "_1st");
        assert_eq!(avro_name("ok_1"), "ok_1");
    }

    #[test]
    fn lowercased_names_are_read_under_the_written_names() {
        for mut header in manifest_headers("partition_names_hive") {
            assert!(ReadingSpec::rewrite(&mut header, 4).unwrap());
            assert_eq!(
                spec_names(&header),
                ["id_bucket", "with_x20space", "a_x2fb"]
            );
            let schema: Schema = serde_json::from_slice(&header.metadata["schema"]).unwrap();
            let names: Vec<_> = schema
                .as_struct()
                .fields()
                .iter()
                .map(|f| f.name.clone())
                .collect();
            assert_eq!(
                names,
                [
                    "_lakescan_column_1",
                    "_lakescan_column_2",
                    "_lakescan_column_3",
                    "_lakescan_column_4",
                    "_lakescan_partition_0",
                    "_lakescan_partition_1",
                    "_lakescan_partition_2",
                ]
            );
        }
    }

    #[test]
    fn made_columns_take_ids_no_column_ever_had() {
        // A dropped column's id is not in the manifest's schema, but its bounds may be.
        let mut header = manifest_headers("partition_names_hive").remove(0);
        assert!(ReadingSpec::rewrite(&mut header, 100).unwrap());
        let schema: Schema = serde_json::from_slice(&header.metadata["schema"]).unwrap();
        let made: Vec<i32> = schema
            .as_struct()
            .fields()
            .iter()
            .filter(|f| f.name.starts_with("_lakescan_partition_"))
            .map(|f| f.id)
            .collect();
        assert_eq!(made, [101, 102, 103]);
    }

    #[test]
    fn manifests_the_crate_reads_right_are_left_alone() {
        let mut rewritten = 0;
        let headers = manifest_headers("promoted_v2");
        for mut header in headers.clone() {
            rewritten += usize::from(ReadingSpec::rewrite(&mut header, 4).unwrap());
        }
        // The names are the spec's, the types its own: nothing to rewrite.
        assert_eq!((headers.len(), rewritten), (2, 0));
    }
}
