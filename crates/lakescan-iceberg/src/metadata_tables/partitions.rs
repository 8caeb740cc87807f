//! `"t$partitions"`: one row per partition of the live files of the table's snapshot, with
//! Spark's columns (Iceberg Java's `PartitionsTable`).
//!
//! | column                           | what                                                  |
//! |----------------------------------|-------------------------------------------------------|
//! | `partition`                      | the partition, as `_partition` shows it (every spec's fields; partitioned tables only) |
//! | `spec_id`                        | the newest spec of the partition's files               |
//! | `record_count`, `file_count`, `total_data_file_size_in_bytes` | of its data files |
//! | `position_delete_record_count`, `position_delete_file_count` | of its position-delete files and deletion vectors |
//! | `equality_delete_record_count`, `equality_delete_file_count` | of its equality-delete files |
//! | `last_updated_at`, `last_updated_snapshot_id` | the newest snapshot that added one of its files |
//!
//! Partitions are told apart by their `_partition` value, so the same values written under
//! two specs (or before and after a type promotion) are one partition, as in Java. An
//! unpartitioned table has one row (when it has files) and no `partition` column.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int32Array, Int64Array, TimestampMillisecondArray};
use arrow::datatypes::{DataType, Field};
use datafusion::catalog::Session;
use datafusion::common::{Result, ScalarValue};
use iceberg::spec::DataContentType;

use super::{IcebergMetadataTable, utc_millis};

/// The columns after `partition`.
pub fn fields() -> Vec<Field> {
    let f = Field::new;
    vec![
        f("spec_id", DataType::Int32, false),
        f("record_count", DataType::Int64, false),
        f("file_count", DataType::Int32, false),
        f("total_data_file_size_in_bytes", DataType::Int64, false),
        f("position_delete_record_count", DataType::Int64, false),
        f("position_delete_file_count", DataType::Int32, false),
        f("equality_delete_record_count", DataType::Int64, false),
        f("equality_delete_file_count", DataType::Int32, false),
        f("last_updated_at", utc_millis(), true),
        f("last_updated_snapshot_id", DataType::Int64, true),
    ]
}

/// What the live files of one partition add up to.
#[derive(Debug, Default)]
struct Partition {
    spec_id: i32,
    records: i64,
    files: i32,
    size: i64,
    position_delete_records: i64,
    position_delete_files: i32,
    equality_delete_records: i64,
    equality_delete_files: i32,
    /// (commit time in ms, snapshot id) of the newest snapshot that added a file.
    last_updated: Option<(i64, i64)>,
}

impl Partition {
    fn add(&mut self, content: DataContentType, spec_id: i32, records: i64, size: i64) {
        self.spec_id = self.spec_id.max(spec_id);
        match content {
            DataContentType::Data => {
                self.records += records;
                self.files += 1;
                self.size += size;
            }
            DataContentType::PositionDeletes => {
                self.position_delete_records += records;
                self.position_delete_files += 1;
            }
            DataContentType::EqualityDeletes => {
                self.equality_delete_records += records;
                self.equality_delete_files += 1;
            }
        }
    }
}

impl IcebergMetadataTable {
    /// The columns of `$partitions`.
    pub(super) async fn partitions(&self, state: &dyn Session) -> Result<Vec<ArrayRef>> {
        let metadata = &self.table.loaded().metadata;
        // Partitions in the order their first file was listed.
        let mut partitions: Vec<(ScalarValue, Partition)> = vec![];
        for live in self.live_files(state).await? {
            let key = self.partition_of(&live)?.unwrap_or(ScalarValue::Null);
            let at = match partitions.iter().position(|(k, _)| *k == key) {
                Some(at) => at,
                None => {
                    partitions.push((key, Partition::default()));
                    partitions.len() - 1
                }
            };
            let partition = &mut partitions[at].1;
            let file = &live.entry.data_file;
            partition.add(
                file.content_type(),
                live.spec.spec_id(),
                i64::try_from(file.record_count()).unwrap_or(i64::MAX),
                i64::try_from(file.file_size_in_bytes()).unwrap_or(i64::MAX),
            );
            let added = live
                .entry
                .snapshot_id
                .and_then(|id| metadata.snapshot_by_id(id))
                .map(|s| (s.timestamp_ms(), s.snapshot_id()));
            partition.last_updated = partition.last_updated.max(added);
        }
        let mut columns: Vec<ArrayRef> = vec![];
        if let Some(t) = self
            .partition
            .as_ref()
            .and_then(crate::metadata_columns::MetadataColumns::partition_type)
        {
            columns.push(match partitions.is_empty() {
                true => arrow::array::new_empty_array(&t),
                false => ScalarValue::iter_to_array(partitions.iter().map(|(k, _)| k.clone()))?,
            });
        }
        let rows = partitions.iter().map(|(_, p)| p);
        let i64s = |f: &dyn Fn(&Partition) -> i64| -> ArrayRef {
            Arc::new(Int64Array::from_iter_values(rows.clone().map(f)))
        };
        let i32s = |f: &dyn Fn(&Partition) -> i32| -> ArrayRef {
            Arc::new(Int32Array::from_iter_values(rows.clone().map(f)))
        };
        columns.extend([
            i32s(&|p| p.spec_id),
            i64s(&|p| p.records),
            i32s(&|p| p.files),
            i64s(&|p| p.size),
            i64s(&|p| p.position_delete_records),
            i32s(&|p| p.position_delete_files),
            i64s(&|p| p.equality_delete_records),
            i32s(&|p| p.equality_delete_files),
            Arc::new(
                rows.clone()
                    .map(|p| p.last_updated.map(|(at, _)| at))
                    .collect::<TimestampMillisecondArray>()
                    .with_timezone("+00:00"),
            ),
            Arc::new(Int64Array::from_iter(
                rows.clone().map(|p| p.last_updated.map(|(_, id)| id)),
            )),
        ]);
        Ok(columns)
    }
}
