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

mod commit;
mod deletes;
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
}
