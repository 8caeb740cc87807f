//! Test tables in a temporary directory, written by [`TableWriter`]; every step unwraps.

use std::path::Path;

use arrow::array::ArrayRef;
use iceberg::spec::{DataFile, Datum, FormatVersion, Schema, Struct, Transform};
use lakescan_iceberg_writer::TableWriter;

/// `ctx` with the `STORED AS ICEBERG` factory registered.
pub fn with_iceberg(
    ctx: datafusion::prelude::SessionContext,
) -> datafusion::prelude::SessionContext {
    ctx.state_ref().write().table_factories_mut().insert(
        "ICEBERG".into(),
        std::sync::Arc::new(lakescan_iceberg::IcebergTableFactory),
    );
    ctx
}

/// A table under construction in a temporary directory.
pub struct Fixture {
    _dir: tempfile::TempDir,
    writer: TableWriter,
}

impl Fixture {
    pub fn new(schema: Schema) -> Self {
        Self::partitioned(schema, vec![])
    }

    pub fn partitioned(schema: Schema, fields: Vec<(&str, &str, Transform)>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let writer = TableWriter::partitioned(dir.path(), schema, fields)
            .unwrap()
            .with_data_format(crate::DATA_FORMAT)
            .with_delete_format(crate::DATA_FORMAT);
        Self { _dir: dir, writer }
    }

    /// A table of format `version` (set before the first commit).
    pub fn with_format_version(self, version: FormatVersion) -> Self {
        Self {
            writer: self.writer.with_format_version(version).unwrap(),
            ..self
        }
    }

    pub fn evolve_schema(&mut self, schema: Schema) {
        self.writer.evolve_schema(schema).unwrap()
    }

    pub fn evolve_partitioning(&mut self, fields: Vec<(&str, &str, Transform)>) {
        self.writer.evolve_partitioning(fields).unwrap()
    }

    pub fn path(&self) -> &Path {
        self.writer.path()
    }

    pub fn data_file(&mut self, columns: Vec<(&str, i32, ArrayRef)>) -> DataFile {
        self.writer.data_file(columns).unwrap()
    }

    pub fn data_file_in(
        &mut self,
        partition: Struct,
        columns: Vec<(&str, i32, ArrayRef)>,
    ) -> DataFile {
        self.writer.data_file_in(partition, columns).unwrap()
    }

    pub fn data_file_with_bounds(
        &mut self,
        columns: Vec<(&str, i32, ArrayRef)>,
        bounds: Vec<(i32, Datum, Datum)>,
    ) -> DataFile {
        self.writer.data_file_with_bounds(columns, bounds).unwrap()
    }

    /// A data file of `partition` for the Parquet file at `path` (written by the test).
    pub fn existing_data_file(&mut self, path: &Path, partition: Struct) -> DataFile {
        self.writer.existing_data_file(path, partition).unwrap()
    }

    pub fn equality_delete_file(
        &mut self,
        ids: Vec<i32>,
        columns: Vec<(&str, i32, ArrayRef)>,
    ) -> DataFile {
        self.writer.equality_delete_file(ids, columns).unwrap()
    }

    pub fn equality_delete_file_in(
        &mut self,
        partition: Struct,
        ids: Vec<i32>,
        columns: Vec<(&str, i32, ArrayRef)>,
    ) -> DataFile {
        self.writer
            .equality_delete_file_in(partition, ids, columns)
            .unwrap()
    }

    pub fn position_delete_file(&mut self, rows: Vec<(&str, i64)>) -> DataFile {
        self.writer.position_delete_file(rows).unwrap()
    }

    pub fn position_delete_file_in(
        &mut self,
        partition: Struct,
        rows: Vec<(&str, i64)>,
    ) -> DataFile {
        self.writer
            .position_delete_file_in(partition, rows)
            .unwrap()
    }

    pub fn deletion_vector(
        &mut self,
        data_file: &str,
        footer_file: &str,
        positions: &[u64],
    ) -> DataFile {
        self.writer
            .deletion_vector(data_file, footer_file, positions)
            .unwrap()
    }

    pub async fn try_commit(
        &mut self,
        data: Vec<DataFile>,
        deletes: Vec<DataFile>,
    ) -> datafusion::error::Result<String> {
        self.writer.commit(data, deletes).await
    }

    pub async fn overwrite(&mut self, data: Vec<DataFile>, removed: &[&str]) -> String {
        self.writer.overwrite(data, removed).await.unwrap()
    }

    pub async fn replace(&mut self, data: Vec<DataFile>, removed: &[&str]) -> String {
        self.writer.replace(data, removed).await.unwrap()
    }

    pub async fn commit(&mut self, data: Vec<DataFile>, deletes: Vec<DataFile>) -> String {
        self.writer.commit(data, deletes).await.unwrap()
    }
}
