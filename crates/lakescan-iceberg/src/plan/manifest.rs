//! Reading one manifest file as Java's `ManifestReader` does: what the manifest list and
//! the table metadata say about it wins over what its own Avro metadata says, and a
//! manifest without that metadata reads the same.
//!
//! | Avro metadata key    | when missing (Java's source in brackets)                          |
//! |----------------------|-------------------------------------------------------------------|
//! | `partition-spec-id`  | the manifest list's `partition_spec_id` (even when written)       |
//! | `partition-spec`     | the table's spec of that id (`specsById`; even when written)      |
//! | `schema`             | the table's schema of `schema-id`, else the newest one that has every source column of the spec |
//! | `format-version`     | 1 when the entries have no `sequence_number`, else the table's    |
//! | `content`            | the manifest list's `content` (the caller's `FileType`)           |
//!
//! A `schema` that names types the crate cannot parse (v3 `variant`, …) is given
//! placeholders ([`crate::placeholder_types`]), a `partition-spec` transforms it cannot parse
//! the crate's `unknown`. Where the crate would read the partition record by names or types
//! the writer did not use, the spec it is given reads the record by field id with the
//! writer's types ([`super::partition_record`]). The filled-in metadata is written into the
//! file's header ([`super::avro_header`]) and the `iceberg` crate decodes the entries.

use std::sync::Arc;

use iceberg::spec::{
    FormatVersion, Manifest, ManifestContentType, ManifestFile, PartitionSpec, Schema,
    TableMetadata,
};

use super::avro_header::{AvroHeader, MANIFEST_LIST_RECORD};
use super::partition_record::ReadingSpec;
use crate::placeholder_types::PlaceholderTypes;

/// A parsed manifest and the partition spec its entries' partition tuples follow (values
/// in the order of its fields).
#[derive(Debug)]
pub struct ParsedManifest {
    /// The manifest as the crate parsed it (its own metadata may hold a reading spec).
    pub manifest: Manifest,
    /// The table's spec of the manifest's spec id, else the one the manifest wrote.
    pub spec: Arc<PartitionSpec>,
}

/// The manifest `bytes`, listed as `listed` in a snapshot of `metadata`, parsed. The error
/// says what is wrong with the file (the caller names it).
pub fn parse(
    bytes: &[u8],
    listed: &ManifestFile,
    metadata: &TableMetadata,
) -> Result<ParsedManifest, String> {
    let mut header = AvroHeader::parse(bytes)?;
    let spec = spec_of(&header, listed, metadata)?;
    let manifest = parse_entries(bytes, &mut header, listed, metadata)?;
    Ok(ParsedManifest { manifest, spec })
}

/// The spec the manifest's partition tuples follow: the table's of the id the manifest list
/// gives (Java's `specsById`), else the one the manifest wrote, taken as written.
fn spec_of(
    header: &AvroHeader,
    listed: &ManifestFile,
    metadata: &TableMetadata,
) -> Result<Arc<PartitionSpec>, String> {
    let id = spec_id(header, listed, metadata)?;
    if let Some(spec) = metadata.partition_spec_by_id(id) {
        return Ok(Arc::clone(spec));
    }
    let Some(written) = header.metadata.get("partition-spec") else {
        return Err(format!(
            "it has no partition-spec, and the table has no partition spec {id}"
        ));
    };
    let mut fields: serde_json::Value = serde_json::from_slice(written)
        .map_err(|e| format!("its partition-spec is not valid JSON: {e}"))?;
    crate::metadata::unknown_transforms(&mut fields);
    serde_json::from_value(serde_json::json!({ "spec-id": id, "fields": fields }))
        .map(Arc::new)
        .map_err(|e| format!("its partition-spec does not parse: {e}"))
}

/// The spec id of a manifest: the manifest list's, whatever the header says (Java reads
/// every manifest with `specsById` of it); v1 manifests listed inline in metadata have none
/// (-1): their own, else the default.
fn spec_id(
    header: &AvroHeader,
    listed: &ManifestFile,
    metadata: &TableMetadata,
) -> Result<i32, String> {
    let written_id = header.text("partition-spec-id").map(str::trim);
    match (listed.partition_spec_id, written_id) {
        (listed, _) if listed >= 0 => Ok(listed),
        (_, Some(written)) => written
            .parse::<i32>()
            .map_err(|_| format!("its partition-spec-id '{written}' is not a number")),
        (_, None) => Ok(metadata.default_partition_spec_id()),
    }
}

/// The entries of the manifest `bytes` whose header is `header`.
fn parse_entries(
    bytes: &[u8],
    header: &mut AvroHeader,
    listed: &ManifestFile,
    metadata: &TableMetadata,
) -> Result<Manifest, String> {
    header.check_type_names()?;
    if header.record_name().as_deref() == Some(MANIFEST_LIST_RECORD) {
        return Err(format!(
            "it is a manifest list, not a manifest (its Avro records are \
             {MANIFEST_LIST_RECORD})"
        ));
    }
    let schema_written = header.metadata.contains_key("schema");
    let filled = fill_metadata(header, listed, metadata)?;
    let first = match filled {
        false => match read_by_field_id(header, metadata)? {
            None => Manifest::parse_avro(bytes),
            Some(reading) => Manifest::parse_avro(&reading.rewrite(bytes)?),
        },
        true => parse_filled(bytes, header, metadata)?,
    };
    let Err(first) = first else {
        return first.map_err(|e| e.to_string());
    };
    if !schema_written {
        // The schema was chosen here: column bounds written before a type promotion (a
        // 4-byte `date` bound of a column now `timestamp`) parse with an older schema.
        for schema in newest_first(metadata) {
            let schema = json(serde_json::to_vec(schema.as_ref()), "schema")?;
            header.metadata.insert("schema".into(), schema);
            if let Ok(manifest) = parse_filled(bytes, header, metadata)? {
                return Ok(manifest);
            }
        }
    }
    // A manifest written after `date → timestamp` may still hold EXISTING entries with
    // 4-byte date bounds, which no `timestamp` parses: those columns' bounds are read as
    // binary (they then prune nothing).
    if let Some(schema) = header.metadata.get("schema")
        && let Some(tolerant) = promoted_dates_as_binary(schema, metadata)?
    {
        header.metadata.insert("schema".into(), tolerant);
        if let Ok(manifest) = parse_filled(bytes, header, metadata)? {
            return Ok(manifest);
        }
    }
    Err(first.to_string())
}

/// `header`, filled, with the spec that reads the partition record by field id
/// ([`ReadingSpec`]); `None` when the crate reads it right as it is.
fn read_by_field_id(
    header: &AvroHeader,
    metadata: &TableMetadata,
) -> Result<Option<AvroHeader>, String> {
    let mut reading = header.clone();
    let rewritten = ReadingSpec::rewrite(&mut reading, metadata.last_column_id())?;
    Ok(rewritten.then_some(reading))
}

/// The manifest parsed with the filled-in `header` (read by field id where needed); the
/// outer error is a header that cannot be written, the inner one the crate's.
fn parse_filled(
    bytes: &[u8],
    header: &AvroHeader,
    metadata: &TableMetadata,
) -> Result<iceberg::Result<Manifest>, String> {
    let reading = read_by_field_id(header, metadata)?;
    let written = reading.as_ref().unwrap_or(header).rewrite(bytes)?;
    Ok(Manifest::parse_avro(&written))
}

/// `schema` (a schema JSON) with the type of every top-level timestamp field that some
/// schema of the table had as a `date` replaced by `binary`; `None` when there is none.
fn promoted_dates_as_binary(
    schema: &[u8],
    metadata: &TableMetadata,
) -> Result<Option<Vec<u8>>, String> {
    let mut value: serde_json::Value =
        serde_json::from_slice(schema).map_err(|e| format!("its schema is not valid JSON: {e}"))?;
    let was_date = |id: i64| {
        let Ok(id) = i32::try_from(id) else {
            return false;
        };
        metadata.schemas_iter().any(|s| {
            s.field_by_id(id).is_some_and(|f| {
                f.field_type.as_primitive_type() == Some(&iceberg::spec::PrimitiveType::Date)
            })
        })
    };
    let fields = value
        .get_mut("fields")
        .and_then(serde_json::Value::as_array_mut);
    let mut changed = false;
    for field in fields.into_iter().flatten() {
        let id = field.get("id").and_then(serde_json::Value::as_i64);
        let timestamp = field
            .get("type")
            .and_then(serde_json::Value::as_str)
            .is_some_and(|t| t.starts_with("timestamp"));
        if timestamp && id.is_some_and(was_date) {
            field["type"] = serde_json::Value::String("binary".into());
            changed = true;
        }
    }
    match changed {
        true => json(serde_json::to_vec(&value), "schema").map(Some),
        false => Ok(None),
    }
}

/// The table's schemas, the newest first.
fn newest_first(metadata: &TableMetadata) -> Vec<&std::sync::Arc<Schema>> {
    let mut schemas: Vec<_> = metadata.schemas_iter().collect();
    schemas.sort_by_key(|s| std::cmp::Reverse(s.schema_id()));
    schemas
}

/// Fills the keys of `header` the crate needs; `true` when it changed any.
fn fill_metadata(
    header: &mut AvroHeader,
    listed: &ManifestFile,
    metadata: &TableMetadata,
) -> Result<bool, String> {
    let mut changed = false;
    let spec_id = spec_id(header, listed, metadata)?;
    let written_id = header
        .text("partition-spec-id")
        .and_then(|id| id.trim().parse::<i32>().ok());
    let table_spec = metadata.partition_spec_by_id(spec_id);
    // The table's spec of that id, as Java reads it (the written one, when it is there, is
    // the same spec: a spec id never changes meaning) — but a written spec wins over a table
    // spec with transforms the crate does not know: the writer's says what its values are.
    let unknown = |spec: &PartitionSpec| {
        spec.fields()
            .iter()
            .any(|f| f.transform == iceberg::spec::Transform::Unknown)
    };
    let written_spec = header.metadata.contains_key("partition-spec");
    match table_spec {
        Some(spec) if written_spec && unknown(spec) => {}
        Some(spec) => {
            let written = header
                .metadata
                .get("partition-spec")
                .and_then(|w| serde_json::from_slice::<Vec<iceberg::spec::PartitionField>>(w).ok());
            if written.as_deref() != Some(spec.fields()) {
                header.metadata.insert(
                    "partition-spec".into(),
                    json(serde_json::to_vec(spec.fields()), "partition spec")?,
                );
                changed = true;
            }
        }
        None if !header.metadata.contains_key("partition-spec") => {
            return Err(format!(
                "it has no partition-spec, and the table has no partition spec {spec_id}"
            ));
        }
        None => {}
    }
    if written_id != Some(spec_id) {
        header
            .metadata
            .insert("partition-spec-id".into(), spec_id.to_string().into_bytes());
        changed = true;
    }
    changed |= fill_schema(header, table_spec.map(|s| s.as_ref()), metadata)?;
    changed |= unknown_transforms(header)?;
    if !header.metadata.contains_key("format-version") {
        let version = match has_sequence_numbers(header)? {
            false => FormatVersion::V1,
            true => match metadata.format_version() {
                FormatVersion::V1 => FormatVersion::V2,
                v => v,
            },
        };
        header.metadata.insert(
            "format-version".into(),
            (version as u8).to_string().into_bytes(),
        );
        changed = true;
    }
    if !header.metadata.contains_key("content") {
        let content = match listed.content {
            ManifestContentType::Data => "data",
            ManifestContentType::Deletes => "deletes",
        };
        header
            .metadata
            .insert("content".into(), content.as_bytes().to_vec());
        changed = true;
    }
    Ok(changed)
}

/// Puts a schema the crate can parse under `schema`; `true` when it changed the key.
fn fill_schema(
    header: &mut AvroHeader,
    spec: Option<&PartitionSpec>,
    metadata: &TableMetadata,
) -> Result<bool, String> {
    if let Some(written) = header.metadata.get("schema") {
        let mut value: serde_json::Value = serde_json::from_slice(written)
            .map_err(|e| format!("its schema is not valid JSON: {e}"))?;
        if PlaceholderTypes::replace_in_schema(&mut value).is_empty() {
            return Ok(false);
        }
        header
            .metadata
            .insert("schema".into(), json(serde_json::to_vec(&value), "schema")?);
        return Ok(true);
    }
    let by_id = match header.text("schema-id") {
        Some(id) => {
            let Ok(id) = id.trim().parse::<i32>() else {
                return Err(format!("its schema-id '{id}' is not a number"));
            };
            metadata.schema_by_id(id)
        }
        None => None,
    };
    let covers = |s: &Schema| {
        spec.is_none_or(|spec| {
            spec.fields()
                .iter()
                .all(|f| s.field_by_id(f.source_id).is_some())
        })
    };
    let schema = by_id
        .filter(|s| covers(s))
        .or_else(|| Some(metadata.current_schema()).filter(|s| covers(s)))
        .or_else(|| newest_first(metadata).into_iter().find(|s| covers(s)));
    let Some(schema) = schema else {
        return Err(
            "it has no schema, and no schema of the table has every source column of its \
             partition spec"
                .into(),
        );
    };
    header.metadata.insert(
        "schema".into(),
        json(serde_json::to_vec(schema.as_ref()), "schema")?,
    );
    Ok(true)
}

/// Gives the written `partition-spec` the crate's `unknown` transform where it names one the
/// crate cannot parse ([`crate::metadata`] does the same to the table's specs); `true` when
/// it changed the key.
fn unknown_transforms(header: &mut AvroHeader) -> Result<bool, String> {
    let Some(written) = header.metadata.get("partition-spec") else {
        return Ok(false);
    };
    let mut fields: serde_json::Value = serde_json::from_slice(written)
        .map_err(|e| format!("its partition-spec is not valid JSON: {e}"))?;
    let before = fields.clone();
    crate::metadata::unknown_transforms(&mut fields);
    if fields == before {
        return Ok(false);
    }
    header.metadata.insert(
        "partition-spec".into(),
        json(serde_json::to_vec(&fields), "partition spec")?,
    );
    Ok(true)
}

/// Whether the entries of the file (its Avro schema) carry sequence numbers (v2 and later).
fn has_sequence_numbers(header: &AvroHeader) -> Result<bool, String> {
    let Some(schema) = header.metadata.get("avro.schema") else {
        return Err("it has no avro.schema".into());
    };
    let schema: serde_json::Value = serde_json::from_slice(schema)
        .map_err(|e| format!("its avro.schema is not valid JSON: {e}"))?;
    let fields = schema.get("fields").and_then(serde_json::Value::as_array);
    Ok(fields
        .into_iter()
        .flatten()
        .any(|f| f.get("name").and_then(serde_json::Value::as_str) == Some("sequence_number")))
}

fn json(written: serde_json::Result<Vec<u8>>, what: &str) -> Result<Vec<u8>, String> {
    written.map_err(|e| format!("cannot write the table's {what} as JSON: {e}"))
}
