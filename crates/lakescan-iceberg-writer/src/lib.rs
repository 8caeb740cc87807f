//! [`TableWriter`]: a small writer of Iceberg tables (format v1, v2 or v3) in a local
//! directory, for the CLI demo, the tests and the benchmark: data files (Parquet, or ORC or
//! Avro with [`TableWriter::with_data_format`], encoded by [`encode`]), position-delete and
//! equality-delete files (Parquet by default, [`TableWriter::with_delete_format`]) with field ids, deletion vectors in Puffin files, schema
//! and partition evolution, one snapshot per commit with its own sequence number (v3: and
//! its first row id), a metadata file per commit. Manifests and manifest lists are written
//! by the `iceberg` crate's writers; the Parquet, Puffin and metadata-JSON framing here (the
//! crate has no position-delete, deletion-vector or table-directory writer).
//!
//! It is not part of the library (`lakescan-iceberg` reads tables; it does not write them):
//! tests, `lakescan-bench` and the CLI demo depend on this crate.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch};
use arrow::datatypes::{Field, Schema};
use datafusion::common::{DataFusionError, Result, exec_datafusion_err, internal_err};
use iceberg::io::FileIO;
use iceberg::spec::{
    DataContentType, DataFile, DataFileBuilder, DataFileFormat, FormatVersion, Manifest,
    ManifestContentType, ManifestFile, ManifestListWriter, ManifestStatus, ManifestWriterBuilder,
    PartitionField, PartitionSpec, Schema as IcebergSchema, Struct, Transform,
    UnboundPartitionField,
};
use parquet::arrow::{ArrowWriter, PARQUET_FIELD_ID_META_KEY};

pub mod encode;

/// An encoding of Arrow batches as a data file ([`encode`]).
type Encoder = fn(&Schema, &[RecordBatch]) -> Result<Vec<u8>>;

fn err(e: impl std::fmt::Display) -> DataFusionError {
    exec_datafusion_err!("writing an Iceberg table: {e}")
}

/// One Iceberg table under construction in a local directory.
#[derive(Debug)]
pub struct TableWriter {
    root: PathBuf,
    /// The table's location as its metadata records it, when not `root` itself.
    location: Option<String>,
    io: FileIO,
    version: FormatVersion,
    /// Every schema of the table, the current one last (ids 0, 1, …).
    schemas: Vec<Arc<IcebergSchema>>,
    /// Every partition spec of the table, the default one last (ids 0, 1, …).
    specs: Vec<PartitionSpec>,
    /// Table properties (`schema.name-mapping.default`, …).
    properties: BTreeMap<String, String>,
    /// Live manifests of the current snapshot.
    manifests: Vec<ManifestFile>,
    snapshots: Vec<Committed>,
    /// The table's next row id (v3 row lineage).
    next_row_id: u64,
    files_written: usize,
    /// The format of the data files it writes.
    data_format: DataFileFormat,
    /// The format of the position- and equality-delete files it writes.
    delete_format: DataFileFormat,
    /// The spec id of each file described, by path.
    file_specs: HashMap<String, i32>,
}

/// One commit of a [`TableWriter`].
#[derive(Debug, Clone)]
struct Committed {
    id: i64,
    sequence_number: i64,
    manifest_list: String,
    timestamp_ms: i64,
    schema_id: i32,
    /// v3: the first row id the snapshot assigned, and the rows it assigned ids to.
    row_ids: Option<(u64, u64)>,
    /// The summary's operation: `append`, `overwrite` or `delete`.
    operation: &'static str,
}

impl TableWriter {
    /// An unpartitioned format-v2 table with `schema` in directory `root`.
    pub fn new(root: impl Into<PathBuf>, schema: IcebergSchema) -> Result<Self> {
        Self::partitioned(root, schema, vec![])
    }

    /// A format-v2 table with `schema` partitioned by `fields` (source column name,
    /// partition field name, transform).
    pub fn partitioned(
        root: impl Into<PathBuf>,
        schema: IcebergSchema,
        fields: Vec<(&str, &str, Transform)>,
    ) -> Result<Self> {
        let root = root.into();
        std::fs::create_dir_all(root.join("metadata")).map_err(err)?;
        std::fs::create_dir_all(root.join("data")).map_err(err)?;
        let schema = Arc::new(
            schema
                .into_builder()
                .with_schema_id(0)
                .build()
                .map_err(err)?,
        );
        let mut writer = Self {
            root,
            location: None,
            io: FileIO::new_with_fs(),
            version: FormatVersion::V2,
            schemas: vec![schema],
            specs: vec![],
            properties: BTreeMap::new(),
            manifests: vec![],
            snapshots: vec![],
            next_row_id: 0,
            files_written: 0,
            data_format: DataFileFormat::Parquet,
            delete_format: DataFileFormat::Parquet,
            file_specs: HashMap::new(),
        };
        writer.evolve_partitioning(fields)?;
        Ok(writer)
    }

    /// The table's format version (v2 unless set; set it before the first commit). v1
    /// tables have no delete files and no sequence numbers; v3 tables assign row ids.
    pub fn with_format_version(mut self, version: FormatVersion) -> Result<Self> {
        if !self.snapshots.is_empty() {
            return internal_err!("the format version is set before the first commit");
        }
        self.version = version;
        Ok(self)
    }

    /// Sets a table property (for example `schema.name-mapping.default`).
    pub fn set_property(&mut self, key: &str, value: &str) {
        self.properties.insert(key.to_string(), value.to_string());
    }

    /// Makes `schema` the current schema (schema evolution); it gets the next schema id.
    /// Field ids are the caller's: a renamed column keeps its id, an added one takes a new id.
    pub fn evolve_schema(&mut self, schema: IcebergSchema) -> Result<()> {
        let id = self.schemas.len() as i32;
        let schema = schema
            .into_builder()
            .with_schema_id(id)
            .build()
            .map_err(err)?;
        self.schemas.push(Arc::new(schema));
        Ok(())
    }

    /// Makes a spec of `fields` the default spec (partition evolution); it gets the next spec
    /// id. A field with the name, source and transform of an earlier spec's field keeps that
    /// field's id; a new field takes the next partition field id.
    pub fn evolve_partitioning(&mut self, fields: Vec<(&str, &str, Transform)>) -> Result<()> {
        let schema = Arc::clone(self.schema());
        let earlier: Vec<&PartitionField> = self.specs.iter().flat_map(|s| s.fields()).collect();
        let last_id = earlier.iter().map(|f| f.field_id).max().unwrap_or(999);
        let mut builder = PartitionSpec::builder(Arc::clone(&schema))
            .with_spec_id(self.specs.len() as i32)
            .with_last_assigned_field_id(last_id);
        for (source, name, transform) in fields {
            let Some(source_id) = schema.field_id_by_name(source) else {
                return internal_err!("partition source column '{source}' is not in the schema");
            };
            // A v1 table keeps a dropped field as `void` under its old id (Java's v1 specs).
            let dropped_in_v1 = |f: &&&PartitionField| {
                self.version == FormatVersion::V1
                    && transform == Transform::Void
                    && f.source_id == source_id
            };
            let kept = earlier.iter().find(|f| {
                (f.name == name && f.source_id == source_id && f.transform == transform)
                    || dropped_in_v1(f)
            });
            let field = UnboundPartitionField {
                source_id,
                field_id: kept.map(|f| f.field_id),
                name: name.to_string(),
                transform,
            };
            builder = builder.add_unbound_field(field).map_err(err)?;
        }
        self.specs.push(builder.build().map_err(err)?);
        Ok(())
    }

    /// A builder of a file's manifest entry with what every file of the writer has: the
    /// default spec (the file is unpartitioned unless its partition is set).
    fn described(
        &mut self,
        content: DataContentType,
        path: String,
        format: DataFileFormat,
        rows: u64,
        size: u64,
    ) -> DataFileBuilder {
        let spec_id = self.spec().spec_id();
        self.file_specs.insert(path.clone(), spec_id);
        let mut builder = DataFileBuilder::default();
        builder
            .content(content)
            .file_path(path)
            .file_format(format)
            .record_count(rows)
            .file_size_in_bytes(size)
            .partition(Struct::empty())
            .partition_spec_id(spec_id);
        builder
    }

    fn schema(&self) -> &Arc<IcebergSchema> {
        // `schemas` starts with one schema and only grows.
        &self.schemas[self.schemas.len() - 1]
    }

    fn spec(&self) -> &PartitionSpec {
        // `partitioned` pushes the first spec and `specs` only grows.
        &self.specs[self.specs.len() - 1]
    }

    /// The table directory.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// Records `location` (`s3://bucket/wh/db/t`) as the table's location in its metadata,
    /// and the paths of the files written under the directory as paths under it: for a table
    /// written here and uploaded there. Set it before writing the first file.
    pub fn with_location(mut self, location: &str) -> Self {
        self.location = Some(location.trim_end_matches('/').to_string());
        self
    }

    /// Writes data files as `format`: Parquet (the default) or ORC (with `iceberg.id`
    /// attributes on every type, as Java's ORC writer; `lakescan_testkit::orc`). Delete files
    /// stay Parquet.
    pub fn with_data_format(mut self, format: DataFileFormat) -> Self {
        self.data_format = format;
        self
    }

    /// Writes position- and equality-delete files as `format` (Parquet by default).
    pub fn with_delete_format(mut self, format: DataFileFormat) -> Self {
        self.delete_format = format;
        self
    }

    /// Writes `columns` (name, field id, values) as a data file of the writer's format;
    /// returns its recorded path, size, rows and format.
    fn write_data(
        &mut self,
        columns: Vec<(&str, i32, ArrayRef)>,
    ) -> Result<(String, u64, u64, DataFileFormat)> {
        self.write_as(self.data_format, columns)
    }

    /// Writes `columns` as a file of `format`; returns its recorded path, size, rows and
    /// format.
    fn write_as(
        &mut self,
        format: DataFileFormat,
        columns: Vec<(&str, i32, ArrayRef)>,
    ) -> Result<(String, u64, u64, DataFileFormat)> {
        let (extension, encode): (_, Encoder) = match format {
            DataFileFormat::Orc => ("orc", encode::orc_file),
            DataFileFormat::Avro => ("avro", encode::avro_file),
            _ => {
                let (path, size, rows) = self.write_parquet(columns)?;
                return Ok((path, size, rows, DataFileFormat::Parquet));
            }
        };
        self.files_written += 1;
        let path: PathBuf = self
            .path()
            .join("data")
            .join(format!("f{:03}.{extension}", self.files_written));
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
        let bytes = encode(&schema, &[batch])?;
        std::fs::write(&path, &bytes).map_err(err)?;
        Ok((self.recorded(&path), bytes.len() as u64, rows, format))
    }

    /// How the metadata records the local file `local`.
    fn recorded(&self, local: &Path) -> String {
        match (&self.location, local.strip_prefix(&self.root)) {
            (Some(location), Ok(inside)) => {
                let parts: Vec<_> = inside
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect();
                if parts.is_empty() {
                    location.clone()
                } else {
                    format!("{location}/{}", parts.join("/"))
                }
            }
            _ => local.to_string_lossy().into_owned(),
        }
    }

    /// The local file a path recorded by [`Self::recorded`] names.
    fn local_of(&self, recorded: &str) -> PathBuf {
        match &self.location {
            Some(location) => match recorded.strip_prefix(location.as_str()) {
                Some(inside) => self.root.join(inside.trim_start_matches('/')),
                None => PathBuf::from(recorded),
            },
            None => PathBuf::from(recorded),
        }
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
        Ok((self.recorded(&path), size, rows))
    }

    /// A data file holding `columns` (in the writer's data format).
    pub fn data_file(&mut self, columns: Vec<(&str, i32, ArrayRef)>) -> Result<DataFile> {
        self.data_file_in(Struct::empty(), columns)
    }

    /// A data file holding `columns`, with manifest bounds (field id, lower, upper).
    pub fn data_file_with_bounds(
        &mut self,
        columns: Vec<(&str, i32, ArrayRef)>,
        bounds: Vec<(i32, iceberg::spec::Datum, iceberg::spec::Datum)>,
    ) -> Result<DataFile> {
        let (path, size, rows, format) = self.write_data(columns)?;
        let lower = bounds.iter().map(|(id, lo, _)| (*id, lo.clone())).collect();
        let upper = bounds.iter().map(|(id, _, hi)| (*id, hi.clone())).collect();
        self.described(DataContentType::Data, path, format, rows, size)
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
        let (path, size, rows, format) = self.write_data(columns)?;
        self.described(DataContentType::Data, path, format, rows, size)
            .partition(partition)
            .build()
            .map_err(err)
    }

    /// An equality-delete file over `ids` holding the deleted keys `columns` (unpartitioned:
    /// it applies to every partition of the table).
    pub fn equality_delete_file(
        &mut self,
        ids: Vec<i32>,
        columns: Vec<(&str, i32, ArrayRef)>,
    ) -> Result<DataFile> {
        self.equality_delete_file_in(Struct::empty(), ids, columns)
    }

    /// An equality-delete file of `partition` (under the default spec) over `ids` holding
    /// the deleted keys `columns`.
    pub fn equality_delete_file_in(
        &mut self,
        partition: Struct,
        ids: Vec<i32>,
        columns: Vec<(&str, i32, ArrayRef)>,
    ) -> Result<DataFile> {
        let (path, size, rows, format) = self.write_as(self.delete_format, columns)?;
        self.described(DataContentType::EqualityDeletes, path, format, rows, size)
            .partition(partition)
            .equality_ids(Some(ids))
            .build()
            .map_err(err)
    }

    /// A position-delete file deleting `(data file path, position)` rows; when every row
    /// names one data file, its manifest entry references that file (as Java writers do).
    pub fn position_delete_file(&mut self, rows: Vec<(&str, i64)>) -> Result<DataFile> {
        let referenced = match rows.first() {
            Some((first, _)) if rows.iter().all(|r| r.0 == *first) => Some(first.to_string()),
            _ => None,
        };
        let paths: ArrayRef = Arc::new(arrow::array::StringArray::from(
            rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        ));
        let positions: ArrayRef = Arc::new(arrow::array::Int64Array::from(
            rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        ));
        let (path, size, count, format) = self.write_as(
            self.delete_format,
            vec![
                ("file_path", 2147483546, paths),
                ("pos", 2147483545, positions),
            ],
        )?;
        self.described(DataContentType::PositionDeletes, path, format, count, size)
            .referenced_data_file(referenced)
            .build()
            .map_err(err)
    }

    /// A position-delete file of `partition` (under the default spec) deleting `(data file
    /// path, position)` rows, without a `referenced_data_file`: it applies to the data files
    /// of its partition, as partition-scoped delete files of Spark's writers do.
    pub fn position_delete_file_in(
        &mut self,
        partition: Struct,
        rows: Vec<(&str, i64)>,
    ) -> Result<DataFile> {
        let mut file = self.position_delete_file(rows)?;
        let mut builder = DataFileBuilder::default();
        builder
            .content(file.content_type())
            .file_path(file.file_path().to_string())
            .file_format(file.file_format())
            .record_count(file.record_count())
            .file_size_in_bytes(file.file_size_in_bytes())
            .partition(partition)
            .partition_spec_id(self.spec().spec_id());
        file = builder.build().map_err(err)?;
        Ok(file)
    }

    /// A Puffin file with one deletion vector of `data_file` deleting `positions`;
    /// `footer_file` is the data file its footer names (normally `data_file`).
    pub fn deletion_vector(
        &mut self,
        data_file: &str,
        footer_file: &str,
        positions: &[u64],
    ) -> Result<DataFile> {
        let mut files = self.puffin_file(&[(data_file, footer_file, positions)])?;
        files
            .pop()
            .ok_or_else(|| err("a Puffin file without its vector"))
    }

    /// One Puffin file holding a deletion vector for each `(data file, positions)`: the
    /// delete entries of its vectors, one per data file (as Java writes several vectors into
    /// one file).
    pub fn deletion_vectors(&mut self, vectors: &[(&str, &[u64])]) -> Result<Vec<DataFile>> {
        let named: Vec<_> = vectors.iter().map(|(f, p)| (*f, *f, *p)).collect();
        self.puffin_file(&named)
    }

    /// A Puffin file of the vectors `(data file, file its footer names, positions)`.
    fn puffin_file(&mut self, vectors: &[(&str, &str, &[u64])]) -> Result<Vec<DataFile>> {
        let mut puffin = b"PFA1".to_vec();
        let mut blobs = vec![];
        let mut entries = vec![];
        for (data_file, footer_file, positions) in vectors {
            let bitmap: roaring::RoaringTreemap = positions.iter().copied().collect();
            let mut body = vec![0xD1, 0xD3, 0x39, 0x64];
            bitmap.serialize_into(&mut body).map_err(err)?;
            let mut blob = (body.len() as u32).to_be_bytes().to_vec();
            blob.extend(&body);
            blob.extend(crc32fast::hash(&body).to_be_bytes());
            let offset = puffin.len();
            blobs.push(serde_json::json!({
                "type": "deletion-vector-v1", "fields": [2147483645], "snapshot-id": -1,
                "sequence-number": -1, "offset": offset, "length": blob.len(),
                "properties": {"referenced-data-file": footer_file,
                               "cardinality": bitmap.len().to_string()}
            }));
            entries.push((data_file.to_string(), bitmap.len(), offset, blob.len()));
            puffin.extend(&blob);
        }
        let footer = serde_json::json!({ "blobs": blobs });
        let payload = serde_json::to_vec(&footer).map_err(err)?;
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
        let recorded = self.recorded(&path);
        entries
            .into_iter()
            .map(|(data_file, cardinality, offset, length)| {
                self.described(
                    DataContentType::PositionDeletes,
                    recorded.clone(),
                    DataFileFormat::Puffin,
                    cardinality,
                    puffin.len() as u64,
                )
                .referenced_data_file(Some(data_file))
                .content_offset(Some(offset as i64))
                .content_size_in_bytes(Some(length as i64))
                .build()
                .map_err(err)
            })
            .collect()
    }

    /// Describes an existing Parquet file of `partition` (under the default spec) as a data
    /// file of this table, without copying it: record count, size and row-group offsets
    /// from its footer. For tables over files another tool wrote (the benchmark's TPC-H
    /// files); files without field ids need a name mapping ([`Self::set_property`]).
    pub fn existing_data_file(&mut self, path: &Path, partition: Struct) -> Result<DataFile> {
        let file = std::fs::File::open(path)
            .map_err(|e| err(format!("cannot open '{}': {e}", path.display())))?;
        let size = file.metadata().map_err(err)?.len();
        let reader = parquet::file::reader::SerializedFileReader::new(file)
            .map_err(|e| err(format!("'{}' is not a Parquet file: {e}", path.display())))?;
        let metadata = parquet::file::reader::FileReader::metadata(&reader);
        let rows = metadata.file_metadata().num_rows() as u64;
        let offsets: Vec<i64> = metadata
            .row_groups()
            .iter()
            .map(|rg| {
                let first = rg.column(0);
                first
                    .dictionary_page_offset()
                    .unwrap_or(first.data_page_offset())
            })
            .collect();
        let recorded = self.recorded(path);
        self.described(
            DataContentType::Data,
            recorded,
            DataFileFormat::Parquet,
            rows,
            size,
        )
        .partition(partition)
        .split_offsets(Some(offsets))
        .build()
        .map_err(err)
    }

    /// Commits a snapshot adding `data` and `deletes` at the next sequence number; writes
    /// its metadata file and returns its path. Files are grouped into one manifest per
    /// partition spec and content.
    pub async fn commit(&mut self, data: Vec<DataFile>, deletes: Vec<DataFile>) -> Result<String> {
        if self.version == FormatVersion::V1 && !deletes.is_empty() {
            return internal_err!("a format-v1 table has no delete files");
        }
        self.commit_snapshot(data, deletes, "append").await
    }

    /// Commits a copy-on-write snapshot of a format-v2 table: the data files at the paths
    /// `removed` leave the table (DELETED entries in rewritten manifests, the other files
    /// of those manifests EXISTING), `data` joins it. The operation is `overwrite`, or
    /// `delete` when nothing is added. Returns the new metadata file's path.
    pub async fn overwrite(&mut self, data: Vec<DataFile>, removed: &[&str]) -> Result<String> {
        let operation = match data.is_empty() {
            true => "delete",
            false => "overwrite",
        };
        self.rewrite(data, removed, operation).await
    }

    /// Like [`Self::overwrite`], as a `replace` snapshot (a compaction: the same rows in
    /// other files).
    pub async fn replace(&mut self, data: Vec<DataFile>, removed: &[&str]) -> Result<String> {
        self.rewrite(data, removed, "replace").await
    }

    async fn rewrite(
        &mut self,
        data: Vec<DataFile>,
        removed: &[&str],
        operation: &'static str,
    ) -> Result<String> {
        if self.version == FormatVersion::V1 {
            return internal_err!("overwrite writes format-v2 and v3 tables only");
        }
        let seq = self.snapshots.len() as i64 + 1;
        let snapshot_id = 1000 + seq;
        let mut rewritten = vec![];
        let mut found = 0;
        for manifest in self.manifests.clone() {
            if manifest.content != ManifestContentType::Data {
                rewritten.push(manifest);
                continue;
            }
            let bytes = std::fs::read(self.local_of(&manifest.manifest_path)).map_err(err)?;
            let (entries, _) = Manifest::parse_avro(&bytes).map_err(err)?.into_parts();
            let live: Vec<_> = entries
                .iter()
                .filter(|e| e.status != ManifestStatus::Deleted)
                .collect();
            if !live.iter().any(|e| removed.contains(&e.file_path())) {
                rewritten.push(manifest);
                continue;
            }
            let Some(spec) = self
                .specs
                .iter()
                .find(|s| s.spec_id() == manifest.partition_spec_id)
            else {
                return internal_err!("a manifest names a partition spec the table lacks");
            };
            let path = self
                .path()
                .join("metadata")
                .join(format!("m-{seq}-rewritten-{}.avro", rewritten.len()));
            let output = self.io.new_output(path.to_string_lossy()).map_err(err)?;
            let builder = ManifestWriterBuilder::new(
                output,
                Some(snapshot_id),
                Arc::clone(self.schema()),
                spec.clone(),
            );
            // v3: the rewritten files keep no first row id of their own (a pre-v3 writer's
            // files, or ids left to inheritance); the new manifest takes new ones.
            let mut writer = match self.version {
                FormatVersion::V3 => builder.build_v3_data(),
                _ => builder.build_v2_data(),
            };
            for e in live {
                let data_seq = e.sequence_number.unwrap_or(manifest.sequence_number);
                let file_seq = e.file_sequence_number.or(Some(data_seq));
                let file = e.data_file.clone();
                if removed.contains(&e.file_path()) {
                    found += 1;
                    writer
                        .add_delete_file(file, data_seq, file_seq)
                        .map_err(err)?;
                } else {
                    let added_by = e.snapshot_id.unwrap_or(manifest.added_snapshot_id);
                    writer
                        .add_existing_file(file, added_by, data_seq, file_seq)
                        .map_err(err)?;
                }
            }
            let mut new = writer.write_manifest_file().await.map_err(err)?;
            new.manifest_path = self.recorded(&path);
            new.sequence_number = seq;
            new.min_sequence_number = manifest.min_sequence_number;
            rewritten.push(new);
        }
        if found != removed.len() {
            return internal_err!(
                "overwrite: {} of the removed paths are not live files",
                removed.len() - found
            );
        }
        self.manifests = rewritten;
        self.commit_snapshot(data, vec![], operation).await
    }

    async fn commit_snapshot(
        &mut self,
        data: Vec<DataFile>,
        deletes: Vec<DataFile>,
        operation: &'static str,
    ) -> Result<String> {
        let seq = self.snapshots.len() as i64 + 1;
        let snapshot_id = 1000 + seq;
        let first_row_id = self.next_row_id;
        let mut new_manifests = vec![];
        for (files, content) in [
            (data, DataContentType::Data),
            (deletes, DataContentType::PositionDeletes),
        ] {
            let mut by_spec: BTreeMap<i32, Vec<DataFile>> = BTreeMap::new();
            for f in files {
                // `DataFile` does not expose its spec id; the writer recorded it.
                let spec_id = self.file_specs.get(f.file_path()).copied().unwrap_or(0);
                by_spec.entry(spec_id).or_default().push(f);
            }
            for (spec_id, files) in by_spec {
                let manifest = self
                    .write_manifest(snapshot_id, seq, spec_id, content, files)
                    .await?;
                new_manifests.push(manifest);
            }
        }
        self.manifests.extend(new_manifests);
        if self.version == FormatVersion::V3 {
            // New and rewritten data manifests take the next row ids, as Java's manifest
            // list writer assigns them (existing rows included).
            for m in self
                .manifests
                .iter_mut()
                .filter(|m| m.content == ManifestContentType::Data && m.first_row_id.is_none())
            {
                m.first_row_id = Some(self.next_row_id);
                self.next_row_id +=
                    m.added_rows_count.unwrap_or(0) + m.existing_rows_count.unwrap_or(0);
            }
        }
        let list = self
            .path()
            .join("metadata")
            .join(format!("snap-{snapshot_id}.avro"));
        let out = self
            .io
            .new_output(list.to_string_lossy())
            .map_err(err)?
            .writer()
            .await
            .map_err(err)?;
        let parent = self.snapshots.last().map(|s| s.id);
        let mut list_writer = match self.version {
            FormatVersion::V1 => ManifestListWriter::v1(out, snapshot_id, parent),
            FormatVersion::V2 => ManifestListWriter::v2(out, snapshot_id, parent, seq),
            FormatVersion::V3 => {
                ManifestListWriter::v3(out, snapshot_id, parent, seq, Some(first_row_id))
            }
        };
        list_writer
            .add_manifests(self.manifests.clone().into_iter())
            .map_err(err)?;
        list_writer.close().await.map_err(err)?;
        self.snapshots.push(Committed {
            id: snapshot_id,
            sequence_number: seq,
            manifest_list: self.recorded(&list),
            timestamp_ms: 1_700_000_000_000 + seq * 1000,
            schema_id: self.schema().schema_id(),
            row_ids: (self.version == FormatVersion::V3)
                .then(|| (first_row_id, self.next_row_id - first_row_id)),
            operation,
        });
        self.write_metadata()
    }

    /// Writes one manifest of `files` (all of spec `spec_id` and of one content kind).
    async fn write_manifest(
        &self,
        snapshot_id: i64,
        seq: i64,
        spec_id: i32,
        content: DataContentType,
        files: Vec<DataFile>,
    ) -> Result<ManifestFile> {
        let Some(spec) = self.specs.iter().find(|s| s.spec_id() == spec_id) else {
            return internal_err!("a file names partition spec {spec_id}, which the table lacks");
        };
        // The crate's manifest writer panics on a partition of the wrong arity.
        let arity = spec.fields().len();
        if let Some(f) = files.iter().find(|f| f.partition().fields().len() != arity) {
            return internal_err!(
                "file '{}' has a partition of {} values; spec {spec_id} has {arity} fields \
                 (write it with the `_in` variant that takes its partition)",
                f.file_path(),
                f.partition().fields().len()
            );
        }
        let kind = match content {
            DataContentType::Data => "data",
            _ => "deletes",
        };
        let path = self
            .path()
            .join("metadata")
            .join(format!("m-{seq}-{kind}-{spec_id}.avro"));
        let output = self.io.new_output(path.to_string_lossy()).map_err(err)?;
        let builder = ManifestWriterBuilder::new(
            output,
            Some(snapshot_id),
            Arc::clone(self.schema()),
            spec.clone(),
        );
        let mut writer = match (self.version, content) {
            (FormatVersion::V1, _) => builder.build_v1(),
            (FormatVersion::V2, DataContentType::Data) => builder.build_v2_data(),
            (FormatVersion::V2, _) => builder.build_v2_deletes(),
            (FormatVersion::V3, DataContentType::Data) => builder.build_v3_data(),
            (FormatVersion::V3, _) => builder.build_v3_deletes(),
        };
        for f in files {
            writer.add_file(f, seq).map_err(err)?;
        }
        let mut manifest = writer.write_manifest_file().await.map_err(err)?;
        manifest.manifest_path = self.recorded(&path);
        if self.version != FormatVersion::V1 {
            manifest.sequence_number = seq;
            manifest.min_sequence_number = seq;
        }
        Ok(manifest)
    }

    fn write_metadata(&self) -> Result<String> {
        let Some(last) = self.snapshots.last() else {
            return internal_err!("no snapshot to write metadata for");
        };
        let v1 = self.version == FormatVersion::V1;
        let snapshots: Vec<serde_json::Value> = self
            .snapshots
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut s = serde_json::json!({
                    "snapshot-id": c.id, "timestamp-ms": c.timestamp_ms,
                    "manifest-list": c.manifest_list, "summary": {"operation": c.operation},
                    "schema-id": c.schema_id
                });
                if !v1 {
                    s["sequence-number"] = c.sequence_number.into();
                }
                if let Some((first, added)) = c.row_ids {
                    s["first-row-id"] = first.into();
                    s["added-rows"] = added.into();
                }
                if i > 0 {
                    s["parent-snapshot-id"] = self.snapshots[i - 1].id.into();
                }
                s
            })
            .collect();
        let log: Vec<serde_json::Value> = self
            .snapshots
            .iter()
            .map(|c| serde_json::json!({"snapshot-id": c.id, "timestamp-ms": c.timestamp_ms}))
            .collect();
        let schemas = self
            .schemas
            .iter()
            .map(|s| serde_json::to_value(s.as_ref()).map_err(err))
            .collect::<Result<Vec<_>>>()?;
        let specs = self
            .specs
            .iter()
            .map(|s| serde_json::to_value(s).map_err(err))
            .collect::<Result<Vec<_>>>()?;
        let last_partition_id = self
            .specs
            .iter()
            .filter_map(|s| s.highest_field_id())
            .max()
            .unwrap_or(999);
        let last_column_id = self.schemas.iter().map(|s| s.highest_field_id()).max();
        let version = match self.version {
            FormatVersion::V1 => 1,
            FormatVersion::V2 => 2,
            FormatVersion::V3 => 3,
        };
        let mut metadata = serde_json::json!({
            "format-version": version,
            "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
            "location": self.recorded(self.path()),
            "last-updated-ms": last.timestamp_ms,
            "last-column-id": last_column_id,
            "current-schema-id": self.schema().schema_id(),
            "schemas": schemas,
            "default-spec-id": self.spec().spec_id(),
            "partition-specs": specs,
            "last-partition-id": last_partition_id,
            "default-sort-order-id": 0,
            "sort-orders": [{"order-id": 0, "fields": []}],
            "properties": self.properties,
            "current-snapshot-id": last.id,
            "refs": {"main": {"snapshot-id": last.id, "type": "branch"}},
            "snapshots": snapshots,
            "snapshot-log": log,
            "metadata-log": []
        });
        if v1 {
            // v1 writers also write the current schema and spec in their old single fields.
            metadata["schema"] = serde_json::to_value(self.schema().as_ref()).map_err(err)?;
            metadata["partition-spec"] = serde_json::to_value(self.spec().fields()).map_err(err)?;
        } else {
            metadata["last-sequence-number"] = last.sequence_number.into();
        }
        if self.version == FormatVersion::V3 {
            metadata["next-row-id"] = self.next_row_id.into();
        }
        let path = self
            .path()
            .join("metadata")
            .join(format!("v{}.metadata.json", self.snapshots.len()));
        std::fs::write(&path, serde_json::to_vec_pretty(&metadata).map_err(err)?).map_err(err)?;
        Ok(self.recorded(&path))
    }
}
