//! Arrow batches encoded as Iceberg data or delete files in ORC or Avro, the way Iceberg
//! Java's writers store them:
//!
//! | Iceberg            | ORC                                   | Avro                                  |
//! |--------------------|---------------------------------------|---------------------------------------|
//! | field id           | `iceberg.id` type attribute           | `field-id` / `element-id` / `key-id` / `value-id` |
//! | uuid, fixed(L)     | binary, `iceberg.binary-type` (`iceberg.length`) | `fixed` of L bytes         |
//! | time               | long, `iceberg.long-type` `TIME`      | `long`, `time-micros`                 |
//! | timestamptz        | timestamp with local time zone        | `timestamp-micros`, `adjust-to-utc` true |
//! | optional field     | (every ORC column may be null)        | `["null", T]` union                   |
//! | map, non-string keys | map                                 | array of `key`/`value` records, `"logicalType": "map"` |
//!
//! Field ids are read from the `PARQUET:field_id` metadata of the schema's fields at every
//! level, as parquet's Arrow reader gives them, so a Parquet file's batches re-encode with
//! their ids. Arrow types Iceberg has no type for (`Int8`, `UInt16`, `LargeUtf8`, …) are cast
//! to the Iceberg type that holds them first. ORC through `lakescan_testkit::orc` (orc-rust has
//! no writer of type attributes); Avro through `arrow-avro`, whose header loses the ids and is
//! rewritten with the schema the rows were encoded with.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch};
use arrow::datatypes::{DataType, Field, Fields, Schema, TimeUnit};
use datafusion::common::{DataFusionError, Result, exec_datafusion_err};
use parquet::arrow::PARQUET_FIELD_ID_META_KEY;
use serde_json::json;

/// `batches` (of `schema`) as one ORC file: each batch's rows in stripes of the default size,
/// 10 000-row index groups, the ids and Iceberg types as type attributes.
pub fn orc_file(schema: &Schema, batches: &[RecordBatch]) -> Result<Vec<u8>> {
    orc_file_with_stripes(schema, batches, vec![])
}

/// [`orc_file`] with stripes of the given rows in order (a Parquet file's row groups become
/// stripes of the same rows); empty: the default stripe size.
pub fn orc_file_with_stripes(
    schema: &Schema,
    batches: &[RecordBatch],
    stripes: Vec<usize>,
) -> Result<Vec<u8>> {
    let fields: Fields = schema.fields().iter().map(|f| orc_field(f)).collect();
    let mut attributes = BTreeMap::new();
    for field in schema.fields() {
        orc_attributes(&iceberg_field(field), field.name(), &mut attributes);
    }
    let orc_schema = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
    let batches = cast_all(&orc_schema, batches)?;
    let options = lakescan_testkit::orc::OrcWriteOptions {
        stripes,
        attributes,
        ..Default::default()
    };
    lakescan_testkit::orc::write_orc(&orc_schema, &batches, &options).map_err(err)
}

/// `batches` (of `schema`) as one Avro object container file, its header's `avro.schema`
/// carrying the ids.
pub fn avro_file(schema: &Schema, batches: &[RecordBatch]) -> Result<Vec<u8>> {
    let fields: Fields = schema.fields().iter().map(|f| iceberg_field(f)).collect();
    let mut names = 0;
    let members = fields
        .iter()
        .map(|f| avro_member(f, &mut names))
        .collect::<Result<Vec<_>>>()?;
    let record = json!({"type": "record", "name": "table", "fields": members}).to_string();
    let avro_schema = Arc::new(Schema::new_with_metadata(
        fields.iter().map(|f| maps_as_arrays(f)).collect::<Fields>(),
        [("avro.schema".to_string(), record.clone())].into(),
    ));
    let batches = cast_all(&Arc::new(Schema::new(fields)), batches)?
        .iter()
        .map(|batch| {
            let columns = batch
                .columns()
                .iter()
                .zip(avro_schema.fields())
                .map(|(c, f)| map_arrays_as_lists(c, f.data_type()))
                .collect::<Result<Vec<_>>>()?;
            RecordBatch::try_new(Arc::clone(&avro_schema), columns).map_err(err)
        })
        .collect::<Result<Vec<_>>>()?;
    let mut writer = arrow_avro::writer::AvroWriter::new(Vec::new(), avro_schema.as_ref().clone())
        .map_err(err)?;
    for batch in &batches {
        writer.write(batch).map_err(err)?;
    }
    writer.finish().map_err(err)?;
    // arrow-avro encodes with the schema given but advertises one it generates without the
    // ids: the header gets the schema the rows were encoded with.
    let file = writer.into_inner();
    let mut header = lakescan_core::api::AvroHeader::parse(&file).map_err(err)?;
    header
        .metadata
        .insert("avro.schema".to_string(), record.into_bytes());
    header.rewrite(&file).map_err(err)
}

/// `batches` with their columns cast to `schema`'s types.
fn cast_all(schema: &Arc<Schema>, batches: &[RecordBatch]) -> Result<Vec<RecordBatch>> {
    batches
        .iter()
        .map(|batch| {
            let columns = batch
                .columns()
                .iter()
                .zip(schema.fields())
                .map(|(column, field)| {
                    Ok(match column.data_type() == field.data_type() {
                        true => Arc::clone(column),
                        false => arrow::compute::cast(column, field.data_type()).map_err(err)?,
                    })
                })
                .collect::<Result<Vec<ArrayRef>>>()?;
            RecordBatch::try_new(Arc::clone(schema), columns).map_err(err)
        })
        .collect()
}

/// `field` with its type, and the types below it, as the Iceberg type that holds them.
fn iceberg_field(field: &Field) -> Field {
    let data_type = match field.data_type() {
        DataType::Int8 | DataType::Int16 | DataType::UInt8 | DataType::UInt16 => DataType::Int32,
        DataType::UInt32 => DataType::Int64,
        DataType::Float16 => DataType::Float32,
        DataType::LargeUtf8 | DataType::Utf8View => DataType::Utf8,
        DataType::LargeBinary | DataType::BinaryView => DataType::Binary,
        DataType::Time32(_) | DataType::Time64(_) => DataType::Time64(TimeUnit::Microsecond),
        DataType::Timestamp(TimeUnit::Second | TimeUnit::Millisecond, zone) => {
            DataType::Timestamp(TimeUnit::Microsecond, zone.clone())
        }
        DataType::Struct(children) => {
            DataType::Struct(children.iter().map(|c| iceberg_field(c)).collect())
        }
        DataType::List(item) | DataType::LargeList(item) => {
            DataType::List(Arc::new(iceberg_field(item)))
        }
        DataType::Map(entries, sorted) => DataType::Map(Arc::new(iceberg_field(entries)), *sorted),
        other => other.clone(),
    };
    field.clone().with_data_type(data_type)
}

/// Whether `field` is a map Avro cannot hold as a map (its keys are not strings).
fn is_array_map(field: &Field) -> bool {
    match field.data_type() {
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) => kv.first().is_some_and(|k| k.data_type() != &DataType::Utf8),
            _ => false,
        },
        _ => false,
    }
}

/// `field` (an [`iceberg_field`]) as arrow-avro encodes it: maps with non-string keys as
/// lists of their key/value structs.
fn maps_as_arrays(field: &Field) -> Field {
    let data_type = match field.data_type() {
        DataType::Map(entries, _) if is_array_map(field) => {
            let item = maps_as_arrays(entries)
                .with_name("element")
                .with_nullable(false);
            DataType::List(Arc::new(item))
        }
        DataType::Map(entries, sorted) => DataType::Map(Arc::new(maps_as_arrays(entries)), *sorted),
        DataType::Struct(children) => {
            DataType::Struct(children.iter().map(|c| maps_as_arrays(c)).collect())
        }
        DataType::List(item) => DataType::List(Arc::new(maps_as_arrays(item))),
        other => other.clone(),
    };
    field.clone().with_data_type(data_type)
}

/// `array` as `target` (its type under [`maps_as_arrays`]).
fn map_arrays_as_lists(array: &ArrayRef, target: &DataType) -> Result<ArrayRef> {
    use arrow::array::{Array, AsArray, ListArray, MapArray, StructArray};
    if array.data_type() == target {
        return Ok(Arc::clone(array));
    }
    Ok(match (array.data_type(), target) {
        (DataType::Map(_, _), DataType::List(item)) => {
            let m = array.as_map();
            let entries: ArrayRef = Arc::new(m.entries().clone());
            let values = map_arrays_as_lists(&entries, item.data_type())?;
            Arc::new(
                ListArray::try_new(
                    Arc::clone(item),
                    m.offsets().clone(),
                    values,
                    m.nulls().cloned(),
                )
                .map_err(err)?,
            )
        }
        (DataType::Map(_, _), DataType::Map(entries, sorted)) => {
            let m = array.as_map();
            let kv: ArrayRef = Arc::new(m.entries().clone());
            let kv = map_arrays_as_lists(&kv, entries.data_type())?;
            Arc::new(
                MapArray::try_new(
                    Arc::clone(entries),
                    m.offsets().clone(),
                    kv.as_struct().clone(),
                    m.nulls().cloned(),
                    *sorted,
                )
                .map_err(err)?,
            )
        }
        (DataType::Struct(_), DataType::Struct(fields)) => {
            let s = array.as_struct();
            let columns = s
                .columns()
                .iter()
                .zip(fields.iter())
                .map(|(c, f)| map_arrays_as_lists(c, f.data_type()))
                .collect::<Result<Vec<_>>>()?;
            Arc::new(
                StructArray::try_new(fields.clone(), columns, s.nulls().cloned()).map_err(err)?,
            )
        }
        (DataType::List(_), DataType::List(item)) => {
            let l = array.as_list::<i32>();
            let values = map_arrays_as_lists(l.values(), item.data_type())?;
            Arc::new(
                ListArray::try_new(
                    Arc::clone(item),
                    l.offsets().clone(),
                    values,
                    l.nulls().cloned(),
                )
                .map_err(err)?,
            )
        }
        _ => arrow::compute::cast(array, target).map_err(err)?,
    })
}

/// `field` as the ORC writer stores it: [`iceberg_field`], with fixed-size binaries as
/// binaries and times as longs (their attributes say what they are).
fn orc_field(field: &Field) -> Field {
    let field = iceberg_field(field);
    let data_type = match field.data_type() {
        DataType::FixedSizeBinary(_) => DataType::Binary,
        DataType::Time64(_) => DataType::Int64,
        DataType::Struct(children) => {
            DataType::Struct(children.iter().map(|c| orc_field(c)).collect())
        }
        DataType::List(item) => DataType::List(Arc::new(orc_field(item))),
        DataType::Map(entries, sorted) => DataType::Map(Arc::new(orc_field(entries)), *sorted),
        other => other.clone(),
    };
    field.with_data_type(data_type)
}

/// The ORC type attributes of `field` (at dotted `path`) and the types below it, by the
/// paths `lakescan_testkit::orc` names them (`s.x`, `l._elem`, `m._key`, `m._value`).
fn orc_attributes(field: &Field, path: &str, out: &mut BTreeMap<String, Vec<(String, String)>>) {
    let mut attributes = Vec::new();
    if let Some(id) = field.metadata().get(PARQUET_FIELD_ID_META_KEY) {
        attributes.push(("iceberg.id".to_string(), id.clone()));
    }
    match field.data_type() {
        DataType::FixedSizeBinary(16) if is_uuid(field) => {
            attributes.push(("iceberg.binary-type".to_string(), "UUID".to_string()));
        }
        DataType::FixedSizeBinary(length) => {
            attributes.push(("iceberg.binary-type".to_string(), "FIXED".to_string()));
            attributes.push(("iceberg.length".to_string(), length.to_string()));
        }
        DataType::Time64(_) => {
            attributes.push(("iceberg.long-type".to_string(), "TIME".to_string()));
        }
        DataType::Struct(children) => {
            for c in children {
                orc_attributes(c, &format!("{path}.{}", c.name()), out);
            }
        }
        DataType::List(item) => orc_attributes(item, &format!("{path}._elem"), out),
        DataType::Map(entries, _) => {
            if let DataType::Struct(kv) = entries.data_type()
                && kv.len() == 2
            {
                orc_attributes(&kv[0], &format!("{path}._key"), out);
                orc_attributes(&kv[1], &format!("{path}._value"), out);
            }
        }
        _ => {}
    }
    if !attributes.is_empty() {
        out.insert(path.to_string(), attributes);
    }
}

/// Whether `field` (a 16-byte fixed binary) is a uuid: parquet's Arrow reader marks the
/// UUID logical type with Arrow's canonical extension name.
fn is_uuid(field: &Field) -> bool {
    field
        .metadata()
        .get("ARROW:extension:name")
        .is_some_and(|name| name == "arrow.uuid")
}

/// The field id of `field`, from its `PARQUET:field_id` metadata.
fn id_of(field: &Field) -> Option<i64> {
    field
        .metadata()
        .get(PARQUET_FIELD_ID_META_KEY)?
        .trim()
        .parse()
        .ok()
}

/// `avro` as `field` takes it: a `["null", T]` union when `field` is optional.
fn optional(field: &Field, avro: serde_json::Value) -> serde_json::Value {
    match field.is_nullable() {
        true => json!(["null", avro]),
        false => avro,
    }
}

/// One record field of an Avro schema for `field`, with its Iceberg `field-id`.
fn avro_member(field: &Field, names: &mut usize) -> Result<serde_json::Value> {
    let mut member = json!({
        "name": field.name(),
        "type": optional(field, avro_type(field, names)?),
    });
    if field.is_nullable() {
        member["default"] = serde_json::Value::Null;
    }
    if let Some(id) = id_of(field) {
        member["field-id"] = id.into();
    }
    Ok(member)
}

/// The Avro type of `field`'s values (an [`iceberg_field`]), as Iceberg's Avro writer
/// writes it.
fn avro_type(field: &Field, names: &mut usize) -> Result<serde_json::Value> {
    let timestamp = |logical: &str, zone: bool| json!({"type": "long", "logicalType": logical, "adjust-to-utc": zone});
    Ok(match field.data_type() {
        DataType::Boolean => json!("boolean"),
        DataType::Int32 => json!("int"),
        DataType::Int64 => json!("long"),
        DataType::Float32 => json!("float"),
        DataType::Float64 => json!("double"),
        DataType::Utf8 => json!("string"),
        DataType::Binary => json!("bytes"),
        DataType::Date32 => json!({"type": "int", "logicalType": "date"}),
        DataType::Time64(_) => json!({"type": "long", "logicalType": "time-micros"}),
        DataType::Timestamp(TimeUnit::Nanosecond, zone) => {
            timestamp("timestamp-nanos", zone.is_some())
        }
        DataType::Timestamp(_, zone) => timestamp("timestamp-micros", zone.is_some()),
        DataType::FixedSizeBinary(size) => {
            *names += 1;
            json!({"type": "fixed", "name": format!("fixed{names}"), "size": size})
        }
        DataType::Decimal128(p, s) => {
            json!({"type": "bytes", "logicalType": "decimal", "precision": p, "scale": s})
        }
        DataType::Struct(children) => {
            *names += 1;
            let fields = children
                .iter()
                .map(|c| avro_member(c, names))
                .collect::<Result<Vec<_>>>()?;
            json!({"type": "record", "name": format!("r{names}"), "fields": fields})
        }
        DataType::List(item) => {
            let mut t = json!({"type": "array", "items": optional(item, avro_type(item, names)?)});
            if let Some(id) = id_of(item) {
                t["element-id"] = id.into();
            }
            t
        }
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(err("a map whose entries are not a struct"));
            };
            if kv.len() != 2 {
                return Err(err("a map whose entries are not key/value pairs"));
            }
            if is_array_map(field) {
                // Iceberg's Avro maps with non-string keys: an array of key/value records.
                *names += 1;
                let mut key = json!({"name": "key", "type": avro_type(&kv[0], names)?});
                if let Some(id) = id_of(&kv[0]) {
                    key["field-id"] = id.into();
                }
                let mut value = json!({
                    "name": "value",
                    "type": optional(&kv[1], avro_type(&kv[1], names)?),
                });
                if let Some(id) = id_of(&kv[1]) {
                    value["field-id"] = id.into();
                }
                let record = json!({
                    "type": "record",
                    "name": format!("kv{names}"),
                    "fields": [key, value],
                });
                return Ok(json!({"type": "array", "logicalType": "map", "items": record}));
            }
            let values = optional(&kv[1], avro_type(&kv[1], names)?);
            let mut t = json!({"type": "map", "values": values});
            if let (Some(k), Some(v)) = (id_of(&kv[0]), id_of(&kv[1])) {
                t["key-id"] = k.into();
                t["value-id"] = v.into();
            }
            t
        }
        other => {
            return Err(err(format!(
                "column '{}': Avro data files of this writer cannot hold {other}",
                field.name()
            )));
        }
    })
}

fn err(e: impl std::fmt::Display) -> DataFusionError {
    exec_datafusion_err!("writing an Iceberg data file: {e}")
}
