//! The schema of an Avro file as lakescan reads it, and its decoded columns in that schema.
//!
//! `arrow-avro` decodes a file into the Arrow types of its writer schema, and drops what
//! the header says beyond them. Taken from the header's `avro.schema` and metadata here:
//!
//! * **field ids** — Iceberg's `field-id`, `element-id`, `key-id`, `value-id`, as
//!   [`FIELD_ID_KEY`] metadata (the table's side matches columns by them);
//! * **timestamps without zone** — Iceberg's `timestamp` (`adjust-to-utc: false`), which
//!   `arrow-avro` decodes as UTC instants;
//! * **maps with non-string keys** — Iceberg writes them as arrays of key/value records
//!   marked `"logicalType": "map"`; they read as maps;
//! * **the writer's time zone** — Hive's Avro writer (Hive 3.1.2 and later) stores a
//!   `timestamp`, a wall clock, as the `timestamp-millis` instant of that wall clock in the
//!   writer's zone, and names the zone in the file's metadata (`writer.time.zone`); Hive and
//!   Trino read the wall clock back. So does lakescan: such a file's `timestamp-millis` are
//!   timestamps without zone, the wall clock in the writer's zone ([`WriterZone`]). Files
//!   without the key (Spark's, fastavro's, Iceberg's) keep their instants.
//!
//! [`retype`] turns decoded columns into the annotated types.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, ListArray, MapArray, StructArray};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Fields, TimeUnit};
use datafusion::common::{Result, exec_datafusion_err, internal_err};
use serde_json::Value;

use crate::field_ids::FIELD_ID_KEY;

pub use crate::writer_times::{WRITER_TIME_ZONE_KEY, WriterZone, writer_zone};

/// `fields` (decoded from the record schema `record`) with their Avro ids as
/// [`FIELD_ID_KEY`] metadata, Iceberg's `timestamp` (`adjust-to-utc: false`) without zone,
/// and, in a file with a writer zone, `timestamp-millis` as the wall clock there.
pub fn annotate_record(fields: &Fields, record: &Value, zone: Option<WriterZone>) -> Fields {
    let members = record.get("fields").and_then(|f| f.as_array());
    fields
        .iter()
        .enumerate()
        .map(|(k, field)| {
            let member = members.and_then(|m| {
                m.iter()
                    .find(|m| m.get("name").and_then(|n| n.as_str()) == Some(field.name()))
                    .or_else(|| m.get(k))
            });
            let id = member.and_then(|m| m.get("field-id")).and_then(json_id);
            let schema = member.and_then(|m| m.get("type"));
            Arc::new(annotate(field, id, schema, zone))
        })
        .collect()
}

pub fn json_id(v: &Value) -> Option<i64> {
    v.as_i64().or_else(|| v.as_str()?.parse().ok())
}

/// `field` with `id`, its type annotated from `schema` (its Avro type).
fn annotate(
    field: &Field,
    id: Option<i64>,
    schema: Option<&Value>,
    zone: Option<WriterZone>,
) -> Field {
    let schema = schema.map(non_null);
    let data_type = match (field.data_type(), schema) {
        (DataType::Struct(children), Some(s)) => {
            DataType::Struct(annotate_record(children, s, zone))
        }
        (DataType::List(item), Some(s)) if is_array_map(s) => match item.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => {
                let kv = annotate_record(kv, s.get("items").map_or(s, non_null), zone);
                let key = kv[0].as_ref().clone().with_nullable(false);
                let entries = Field::new(
                    "key_value",
                    DataType::Struct(vec![key, kv[1].as_ref().clone()].into()),
                    false,
                );
                DataType::Map(Arc::new(entries), false)
            }
            _ => field.data_type().clone(),
        },
        (DataType::List(item), Some(s)) => {
            let item_id = s.get("element-id").and_then(json_id);
            DataType::List(Arc::new(annotate(item, item_id, s.get("items"), zone)))
        }
        (DataType::Map(entries, sorted), Some(s)) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => {
                let key = annotate(&kv[0], s.get("key-id").and_then(json_id), None, zone);
                let value = annotate(
                    &kv[1],
                    s.get("value-id").and_then(json_id),
                    s.get("values"),
                    zone,
                );
                let entries = entries
                    .as_ref()
                    .clone()
                    .with_data_type(DataType::Struct(vec![key, value].into()));
                DataType::Map(Arc::new(entries), *sorted)
            }
            _ => field.data_type().clone(),
        },
        (DataType::Timestamp(unit, Some(_)), Some(s))
            if s.get("adjust-to-utc").and_then(|v| v.as_bool()) == Some(false) =>
        {
            DataType::Timestamp(*unit, None)
        }
        // Iceberg writes no `timestamp-millis` and no writer zone: only Hive's do.
        (DataType::Timestamp(TimeUnit::Millisecond, Some(_)), _) if zone.is_some() => {
            DataType::Timestamp(TimeUnit::Millisecond, None)
        }
        (other, _) => other.clone(),
    };
    let mut metadata = field.metadata().clone();
    if let Some(id) = id {
        metadata.insert(FIELD_ID_KEY.to_string(), id.to_string());
    }
    field
        .clone()
        .with_data_type(data_type)
        .with_metadata(metadata)
}

/// Whether `schema` is an array Iceberg wrote for a map with non-string keys (an array of
/// key/value records marked `"logicalType": "map"`).
fn is_array_map(schema: &Value) -> bool {
    schema.get("type").and_then(|t| t.as_str()) == Some("array")
        && schema.get("logicalType").and_then(|t| t.as_str()) == Some("map")
}

/// The non-null branch of a `["null", T]` union.
fn non_null(schema: &Value) -> &Value {
    match schema.as_array() {
        Some(branches) => branches
            .iter()
            .find(|b| b.as_str() != Some("null"))
            .unwrap_or(schema),
        None => schema,
    }
}

/// `array` as `target`: the same values under the renamed names of `target` (struct
/// members, list items, map entries), timestamps in `target`'s zone, and, in a file with
/// a writer `zone`, the UTC instants of `timestamp-millis` as their wall clock there.
pub fn retype(array: &ArrayRef, target: &DataType, zone: Option<WriterZone>) -> Result<ArrayRef> {
    if array.data_type() == target {
        return Ok(Arc::clone(array));
    }
    Ok(match (array.data_type(), target) {
        (DataType::Struct(_), DataType::Struct(fields)) => {
            let s = array.as_struct();
            if s.num_columns() != fields.len() {
                return internal_err!("a decoded Avro struct lost members");
            }
            let columns = s
                .columns()
                .iter()
                .zip(fields.iter())
                .map(|(c, f)| retype(c, f.data_type(), zone))
                .collect::<Result<Vec<_>>>()?;
            Arc::new(StructArray::try_new(
                fields.clone(),
                columns,
                s.nulls().cloned(),
            )?)
        }
        (DataType::List(_), DataType::List(item)) => {
            let l = array.as_list::<i32>();
            let values = retype(l.values(), item.data_type(), zone)?;
            Arc::new(ListArray::try_new(
                Arc::clone(item),
                l.offsets().clone(),
                values,
                l.nulls().cloned(),
            )?)
        }
        (DataType::List(_), DataType::Map(entries, sorted)) => {
            // A map with non-string keys, decoded as its array of key/value records.
            let l = array.as_list::<i32>();
            let kv = retype(l.values(), entries.data_type(), zone)?;
            if kv.null_count() > 0 || kv.as_struct().column(0).null_count() > 0 {
                return Err(exec_datafusion_err!(
                    "a map written as an array of key/value records holds a null entry or key"
                ));
            }
            Arc::new(MapArray::try_new(
                Arc::clone(entries),
                l.offsets().clone(),
                kv.as_struct().clone(),
                l.nulls().cloned(),
                *sorted,
            )?)
        }
        (DataType::Map(_, _), DataType::Map(entries, sorted)) => {
            let m = array.as_map();
            let kv: ArrayRef = Arc::new(m.entries().clone());
            let kv = retype(&kv, entries.data_type(), zone)?;
            Arc::new(MapArray::try_new(
                Arc::clone(entries),
                m.offsets().clone(),
                kv.as_struct().clone(),
                m.nulls().cloned(),
                *sorted,
            )?)
        }
        (
            DataType::Timestamp(TimeUnit::Millisecond, Some(_)),
            DataType::Timestamp(TimeUnit::Millisecond, None),
        ) if let Some(zone) = zone => zone.wall_clock(array)?,
        _ => cast(array, target)?,
    })
}

#[cfg(test)]
mod tests {
    use arrow::array::TimestampMillisecondArray;
    use arrow::datatypes::TimestampMillisecondType;

    use super::*;

    /// 2024-01-15 18:00 UTC is 10:00 in Los Angeles (PST, UTC-8), 2024-07-15 17:00 UTC is
    /// 10:00 there (PDT, UTC-7); 1969 stays before the epoch.
    #[test]
    fn instants_read_as_the_wall_clock_of_the_writer_zone() {
        let ms = |text: &str| {
            chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f")
                .unwrap()
                .and_utc()
                .timestamp_millis()
        };
        let instants: ArrayRef = Arc::new(
            TimestampMillisecondArray::from(vec![
                Some(ms("2024-01-15 18:00:00")),
                Some(ms("2024-07-15 17:00:00.250")),
                None,
                Some(ms("1969-12-31 23:59:59.999")),
            ])
            .with_timezone("+00:00"),
        );
        let zone = WriterZone::Region(chrono_tz::America::Los_Angeles);
        let target = DataType::Timestamp(TimeUnit::Millisecond, None);
        let local = retype(&instants, &target, Some(zone)).unwrap();
        assert_eq!(local.data_type(), &target);
        let local = local.as_primitive::<TimestampMillisecondType>();
        let want = [
            Some(ms("2024-01-15 10:00:00")),
            Some(ms("2024-07-15 10:00:00.250")),
            None,
            Some(ms("1969-12-31 15:59:59.999")),
        ];
        assert_eq!(local.iter().collect::<Vec<_>>(), want);
        // Without a writer zone the instants stay instants.
        let kept = retype(&instants, instants.data_type(), None).unwrap();
        assert_eq!(&kept, &instants);
    }
}
