//! Iceberg tables as plan frames ([`lakescan_core::api::wire`]): an [`IcebergTable`] crosses as
//! the bytes of its metadata file with the snapshot and schema it reads, so the decoding
//! process (decoding is synchronous) parses them without reading anything and plans the
//! same snapshot, even if the table moved on since; a [`TableChanges`] adds its two snapshot
//! ids. Catalogs do not cross: a catalog table is its metadata file like any other.

use std::sync::Arc;

use datafusion::common::{Result, internal_err, plan_err};
use datafusion::execution::object_store::ObjectStoreUrl;
use iceberg::spec::SnapshotRef;
use lakescan_core::api::wire::{self, NodeKind};
use serde::{Deserialize, Serialize};

use crate::changelog::TableChanges;
use crate::metadata::{LoadedMetadata, parse_metadata, select_snapshot};
use crate::metadata_columns::MetadataSelection;
use crate::options::SnapshotSelector;
use crate::paths::PathResolver;
use crate::schema::{ScanSchema, StringTypes};
use crate::table::IcebergTable;

/// The body of an Iceberg table frame.
#[derive(Serialize, Deserialize)]
struct TableParts {
    name: String,
    /// The metadata file as the table names it (messages).
    metadata_file: String,
    #[serde(with = "lakescan_core::api::wire::serde_bytes_vec")]
    metadata: Vec<u8>,
    snapshot_id: Option<i64>,
    schema_id: i32,
    view_types: StringTypes,
    paths: PathResolver,
    split_size: Option<u64>,
    #[serde(with = "lakescan_core::api::wire::store_url")]
    metadata_store: ObjectStoreUrl,
    metadata_columns: MetadataSelection,
}

/// The body of an Iceberg changelog frame.
#[derive(Serialize, Deserialize)]
struct ChangesParts {
    table: TableParts,
    from: i64,
    to: i64,
}

impl TableParts {
    fn of(table: &IcebergTable) -> Self {
        let loaded = table.loaded();
        Self {
            name: table.name().to_string(),
            metadata_file: loaded.file.clone(),
            metadata: loaded.raw.to_vec(),
            snapshot_id: table.snapshot().map(|s| s.snapshot_id()),
            schema_id: table.scan_schema().iceberg.schema_id(),
            view_types: table.scan_schema().view_types,
            paths: table.paths().clone(),
            split_size: table.split_size_option(),
            metadata_store: table.metadata_store().clone(),
            metadata_columns: MetadataSelection::Only(table.metadata_columns().to_vec()),
        }
    }

    fn table(self) -> Result<IcebergTable> {
        let loaded = parse_metadata(&self.metadata, &self.metadata_file)?;
        let snapshot = self
            .snapshot_id
            .map(|id| snapshot(&loaded, id))
            .transpose()?;
        let Some(schema) = loaded.metadata.schema_by_id(self.schema_id) else {
            return plan_err!(
                "Iceberg table '{}' sent without its schema {}",
                self.metadata_file,
                self.schema_id
            );
        };
        let schema = ScanSchema::try_new(
            Arc::clone(schema),
            self.view_types,
            &loaded.placeholders.of(self.schema_id),
        )?;
        IcebergTable::try_new(
            self.name,
            loaded,
            snapshot,
            schema,
            self.paths,
            self.split_size,
            self.metadata_store,
        )?
        .with_metadata_columns(&self.metadata_columns, self.view_types)
    }
}

impl IcebergTable {
    /// Appends this table as a plan frame to `buf`.
    pub fn encode(&self, buf: &mut Vec<u8>) -> Result<()> {
        wire::encode_frame(NodeKind::IcebergTable, &TableParts::of(self), buf)
    }

    /// The table a frame body of [`NodeKind::IcebergTable`] describes.
    pub fn decode(body: &[u8]) -> Result<Self> {
        wire::decode_body::<TableParts>(body, "Iceberg table")?.table()
    }
}

impl TableChanges {
    /// Appends these changes as a plan frame to `buf`.
    pub fn encode(&self, buf: &mut Vec<u8>) -> Result<()> {
        let (from, to) = self.bounds();
        let parts = ChangesParts {
            table: TableParts::of(self.table()),
            from,
            to,
        };
        wire::encode_frame(NodeKind::IcebergChanges, &parts, buf)
    }

    /// The changes a frame body of [`NodeKind::IcebergChanges`] describes.
    pub fn decode(body: &[u8]) -> Result<Self> {
        let parts: ChangesParts = wire::decode_body(body, "Iceberg changelog")?;
        let table = parts.table.table()?;
        let from = snapshot(table.loaded(), parts.from)?;
        let to = snapshot(table.loaded(), parts.to)?;
        TableChanges::try_new(table, from, to)
    }
}

/// Snapshot `id` of `loaded` (time travel's lookup, with its error naming the snapshots).
fn snapshot(loaded: &LoadedMetadata, id: i64) -> Result<SnapshotRef> {
    match select_snapshot(loaded, &SnapshotSelector::Id(id))? {
        (Some(snapshot), _) => Ok(snapshot),
        (None, _) => internal_err!("snapshot {id} selected by id is missing"),
    }
}
