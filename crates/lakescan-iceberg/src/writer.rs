//! [`TableWriter`]: a small writer of Iceberg tables (format v2) in a local directory, for
//! the CLI demo and the tests: data files, position-delete and equality-delete files as
//! Parquet with field ids, deletion vectors in Puffin files, one snapshot per commit with its
//! own sequence number, a metadata file per commit. Manifests and manifest lists are written
//! by the `iceberg` crate's writers; the Parquet, Puffin and metadata-JSON framing here (the
//! crate has no position-delete, deletion-vector or table-directory writer).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch};
use arrow::datatypes::{Field, Schema};
use datafusion::common::{DataFusionError, Result, internal_err};
use iceberg::io::FileIO;
use iceberg::spec::{
    DataContentType, DataFile, DataFileBuilder, DataFileFormat, ManifestFile, ManifestListWriter,
    ManifestWriterBuilder, PartitionSpec, Schema as IcebergSchema, Struct, Transform,
};
use parquet::arrow::{ArrowWriter, PARQUET_FIELD_ID_META_KEY};

fn err(e: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Execution(format!("writing an Iceberg table: {e}"))
}

/// One Iceberg table under construction in a local directory.
#[derive(Debug)]
pub struct TableWriter {
    root: PathBuf,
    io: FileIO,
    schema: Arc<IcebergSchema>,
    spec: PartitionSpec,
    /// Live manifests of the current snapshot.
    manifests: Vec<ManifestFile>,
    /// (snapshot id, sequence number, manifest list, timestamp) per commit.
    snapshots: Vec<(i64, i64, String, i64)>,
    files_written: usize,
}

/// A builder of a file's manifest entry with what every file of this writer has (written
/// with spec 0, unpartitioned unless set).
fn described(
    content: DataContentType,
    path: String,
    format: DataFileFormat,
    rows: u64,
    size: u64,
) -> DataFileBuilder {
    let mut builder = DataFileBuilder::default();
    builder
        .content(content)
        .file_path(path)
        .file_format(format)
        .record_count(rows)
        .file_size_in_bytes(size)
        .partition(Struct::empty())
        .partition_spec_id(0);
    builder
}

impl TableWriter {
    /// An unpartitioned table with `schema` in directory `root`.
    pub fn new(root: impl Into<PathBuf>, schema: IcebergSchema) -> Result<Self> {
        Self::partitioned(root, schema, vec![])
    }

    /// A table with `schema` partitioned by `fields` (source column name, partition field
    /// name, transform).
    pub fn partitioned(
        root: impl Into<PathBuf>,
        schema: IcebergSchema,
        fields: Vec<(&str, &str, Transform)>,
    ) -> Result<Self> {
        let root = root.into();
        std::fs::create_dir_all(root.join("metadata")).map_err(err)?;
        std::fs::create_dir_all(root.join("data")).map_err(err)?;
        let schema = Arc::new(schema);
        let mut builder = PartitionSpec::builder(Arc::clone(&schema)).with_spec_id(0);
        for (source, name, transform) in fields {
            builder = builder
                .add_partition_field(source, name, transform)
                .map_err(err)?;
        }
        let spec = builder.build().map_err(err)?;
        Ok(Self {
            root,
            io: FileIO::new_with_fs(),
            schema,
            spec,
            manifests: vec![],
            snapshots: vec![],
            files_written: 0,
        })
    }

    /// The table directory.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Writes `columns` (name, field id, values) as a Parquet file with field ids.
    fn write_parquet(&mut self, columns: Vec<(&str, i32, ArrayRef)>) -> Result<(String, u64, u64)> {
        self.files_written += 1;
        let path: PathBuf = self
            .path()
            .join("data")
            .join(format!("f{:03}.parquet", self.files_written));
        let fields: Vec<Field> = columns
            .iter()
            .map(|(name, id, values)| {
                Field::new(*name, values.data_type().clone(), true).with_metadata(HashMap::from([
                    (PARQUET_FIELD_ID_META_KEY.to_string(), id.to_string()),
                ]))
            })
            .collect();
        let schema = Arc::new(Schema::new(fields));
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            columns.into_iter().map(|c| c.2).collect(),
        )
        .map_err(err)?;
        let rows = batch.num_rows() as u64;
        let mut writer =
            ArrowWriter::try_new(std::fs::File::create(&path).map_err(err)?, schema, None)
                .map_err(err)?;
        writer.write(&batch).map_err(err)?;
        writer.close().map_err(err)?;
        let size = std::fs::metadata(&path).map_err(err)?.len();
        Ok((path.to_string_lossy().into_owned(), size, rows))
    }

    /// A data file holding `columns`.
    pub fn data_file(&mut self, columns: Vec<(&str, i32, ArrayRef)>) -> Result<DataFile> {
        self.data_file_in(Struct::empty(), columns)
    }

    /// A data file holding `columns`, with manifest bounds (field id, lower, upper).
    pub fn data_file_with_bounds(
        &mut self,
        columns: Vec<(&str, i32, ArrayRef)>,
        bounds: Vec<(i32, iceberg::spec::Datum, iceberg::spec::Datum)>,
    ) -> Result<DataFile> {
        let (path, size, rows) = self.write_parquet(columns)?;
        let lower = bounds.iter().map(|(id, lo, _)| (*id, lo.clone())).collect();
        let upper = bounds.iter().map(|(id, _, hi)| (*id, hi.clone())).collect();
        described(
            DataContentType::Data,
            path,
            DataFileFormat::Parquet,
            rows,
            size,
        )
        .lower_bounds(lower)
        .upper_bounds(upper)
        .build()
        .map_err(err)
    }

    /// A data file of `partition` holding `columns`.
    pub fn data_file_in(
        &mut self,
        partition: Struct,
        columns: Vec<(&str, i32, ArrayRef)>,
    ) -> Result<DataFile> {
        let (path, size, rows) = self.write_parquet(columns)?;
        described(
            DataContentType::Data,
            path,
            DataFileFormat::Parquet,
            rows,
            size,
        )
        .partition(partition)
        .build()
        .map_err(err)
    }

    /// An equality-delete file over `ids` holding the deleted keys `columns`.
    pub fn equality_delete_file(
        &mut self,
        ids: Vec<i32>,
        columns: Vec<(&str, i32, ArrayRef)>,
    ) -> Result<DataFile> {
        let (path, size, rows) = self.write_parquet(columns)?;
        described(
            DataContentType::EqualityDeletes,
            path,
            DataFileFormat::Parquet,
            rows,
            size,
        )
        .equality_ids(Some(ids))
        .build()
        .map_err(err)
    }

    /// A position-delete file deleting `(data file path, position)` rows.
    pub fn position_delete_file(&mut self, rows: Vec<(&str, i64)>) -> Result<DataFile> {
        let paths: ArrayRef = Arc::new(arrow::array::StringArray::from(
            rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        ));
        let positions: ArrayRef = Arc::new(arrow::array::Int64Array::from(
            rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        ));
        let (path, size, count) = self.write_parquet(vec![
            ("file_path", 2147483546, paths),
            ("pos", 2147483545, positions),
        ])?;
        described(
            DataContentType::PositionDeletes,
            path,
            DataFileFormat::Parquet,
            count,
            size,
        )
        .build()
        .map_err(err)
    }

    /// A Puffin file with one deletion vector of `data_file` deleting `positions`;
    /// `footer_file` is the data file its footer names (normally `data_file`).
    pub fn deletion_vector(
        &mut self,
        data_file: &str,
        footer_file: &str,
        positions: &[u64],
    ) -> Result<DataFile> {
        let bitmap: roaring::RoaringTreemap = positions.iter().copied().collect();
        let mut body = vec![0xD1, 0xD3, 0x39, 0x64];
        bitmap.serialize_into(&mut body).map_err(err)?;
        let mut blob = (body.len() as u32).to_be_bytes().to_vec();
        blob.extend(&body);
        blob.extend(crc32fast::hash(&body).to_be_bytes());
        let footer = serde_json::json!({"blobs": [{
            "type": "deletion-vector-v1", "fields": [2147483645], "snapshot-id": -1,
            "sequence-number": -1, "offset": 4, "length": blob.len(),
            "properties": {"referenced-data-file": footer_file,
                           "cardinality": bitmap.len().to_string()}
        }]});
        let payload = serde_json::to_vec(&footer).map_err(err)?;
        let mut puffin = b"PFA1".to_vec();
        puffin.extend(&blob);
        puffin.extend(b"PFA1");
        puffin.extend(&payload);
        puffin.extend((payload.len() as u32).to_le_bytes());
        puffin.extend([0, 0, 0, 0]);
        puffin.extend(b"PFA1");
        self.files_written += 1;
        let path = self
            .path()
            .join("data")
            .join(format!("dv{:03}.puffin", self.files_written));
        std::fs::write(&path, &puffin).map_err(err)?;
        described(
            DataContentType::PositionDeletes,
            path.to_string_lossy().into_owned(),
            DataFileFormat::Puffin,
            bitmap.len(),
            puffin.len() as u64,
        )
        .referenced_data_file(Some(data_file.to_string()))
        .content_offset(Some(4))
        .content_size_in_bytes(Some(blob.len() as i64))
        .build()
        .map_err(err)
    }

    /// Commits a snapshot adding `data` and `deletes` at the next sequence number; writes
    /// its metadata file and returns its path.
    pub async fn commit(&mut self, data: Vec<DataFile>, deletes: Vec<DataFile>) -> Result<String> {
        let seq = self.snapshots.len() as i64 + 1;
        let snapshot_id = 1000 + seq;
        let metadata_dir = self.path().join("metadata");
        let manifest_path = |kind: &str| {
            metadata_dir
                .join(format!("m-{seq}-{kind}.avro"))
                .to_string_lossy()
                .into_owned()
        };
        for (files, kind) in [(data, "data"), (deletes, "deletes")] {
            if files.is_empty() {
                continue;
            }
            let output = self.io.new_output(manifest_path(kind)).map_err(err)?;
            let builder = ManifestWriterBuilder::new(
                output,
                Some(snapshot_id),
                Arc::clone(&self.schema),
                self.spec.clone(),
            );
            let mut writer = match kind {
                "data" => builder.build_v2_data(),
                _ => builder.build_v2_deletes(),
            };
            for f in files {
                writer.add_file(f, seq).map_err(err)?;
            }
            let mut manifest = writer.write_manifest_file().await.map_err(err)?;
            manifest.sequence_number = seq;
            manifest.min_sequence_number = seq;
            self.manifests.push(manifest);
        }
        let list = metadata_dir
            .join(format!("snap-{snapshot_id}.avro"))
            .to_string_lossy()
            .into_owned();
        let out = self
            .io
            .new_output(&list)
            .map_err(err)?
            .writer()
            .await
            .map_err(err)?;
        let parent = self.snapshots.last().map(|s| s.0);
        let mut list_writer = ManifestListWriter::v2(out, snapshot_id, parent, seq);
        list_writer
            .add_manifests(self.manifests.clone().into_iter())
            .map_err(err)?;
        list_writer.close().await.map_err(err)?;
        let timestamp = 1_700_000_000_000 + seq * 1000;
        self.snapshots.push((snapshot_id, seq, list, timestamp));
        self.write_metadata()
    }

    fn write_metadata(&self) -> Result<String> {
        let Some((current, last_seq, _, last_ts)) = self.snapshots.last().cloned() else {
            return internal_err!("no snapshot to write metadata for");
        };
        let snapshots: Vec<serde_json::Value> = self
            .snapshots
            .iter()
            .enumerate()
            .map(|(i, (id, seq, list, ts))| {
                let mut s = serde_json::json!({
                    "snapshot-id": id, "sequence-number": seq, "timestamp-ms": ts,
                    "manifest-list": list, "summary": {"operation": "append"}, "schema-id": 0
                });
                if i > 0 {
                    s["parent-snapshot-id"] = self.snapshots[i - 1].0.into();
                }
                s
            })
            .collect();
        let log: Vec<serde_json::Value> = self
            .snapshots
            .iter()
            .map(|(id, _, _, ts)| serde_json::json!({"snapshot-id": id, "timestamp-ms": ts}))
            .collect();
        let metadata = serde_json::json!({
            "format-version": 2,
            "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
            "location": self.path().to_string_lossy(),
            "last-sequence-number": last_seq,
            "last-updated-ms": last_ts,
            "last-column-id": self.schema.highest_field_id(),
            "current-schema-id": 0,
            "schemas": [serde_json::to_value(self.schema.as_ref()).map_err(err)?],
            "default-spec-id": 0,
            "partition-specs": [serde_json::to_value(&self.spec).map_err(err)?],
            "last-partition-id": self.spec.highest_field_id().unwrap_or(999),
            "default-sort-order-id": 0,
            "sort-orders": [{"order-id": 0, "fields": []}],
            "properties": {},
            "current-snapshot-id": current,
            "refs": {"main": {"snapshot-id": current, "type": "branch"}},
            "snapshots": snapshots,
            "snapshot-log": log,
            "metadata-log": []
        });
        let path = self
            .path()
            .join("metadata")
            .join(format!("v{}.metadata.json", self.snapshots.len()));
        std::fs::write(&path, serde_json::to_vec_pretty(&metadata).map_err(err)?).map_err(err)?;
        Ok(path.to_string_lossy().into_owned())
    }
}
