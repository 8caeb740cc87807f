//! Parquet's [`FormatSeam`]: footers read through the session's cache ([`FooterCache`]),
//! the schema and statistics DataFusion derives from them, and whole columns by field id
//! streamed from the file (delete files can hold millions of rows).

use std::sync::Arc;

use arrow::datatypes::{FieldRef, Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::common::{Result, Statistics, exec_datafusion_err};
use datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata;
use futures::StreamExt;
use object_store::ObjectMeta;
use parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};
use parquet::file::metadata::ParquetMetaData;
use parquet::schema::types::TypePtr;

use super::decoded_types::{INT96_UNIT, int96_in};
use super::footer_cache::FooterCache;
use super::leaves::has_arrow_hint;
use super::open::{check_footer, file_error, file_metadata, footer_error};
use super::{ParquetFormat, ParquetSplitReader};
use crate::format::{ColumnsById, FileAccess, FormatSeam, WholeColumns, WholeFile};
use crate::io::CountingReader;
use crate::reader::{DeleteSource, SplitContext, SplitReader};
use crate::split::FileSplit;

/// The footer of the file `meta`, from the session's cache or read and kept there.
async fn footer(access: &FileAccess, meta: &ObjectMeta) -> Result<Arc<ParquetMetaData>> {
    let file = FileSplit::builder(meta.location.clone(), meta.size)
        .last_modified(meta.last_modified)
        .build()?;
    let footers = FooterCache::new(Arc::clone(&access.metadata_cache));
    file_metadata(
        Arc::clone(&access.store),
        &file,
        &footers,
        access.page_index,
    )
    .await
}

/// `schema` (inferred from a file) with its `INT96` timestamps (top-level columns and
/// struct members) in [`INT96_UNIT`] when the writer's Arrow schema does not give their
/// unit.
fn with_int96_unit(schema: Schema, metadata: &ParquetMetaData) -> Schema {
    if has_arrow_hint(metadata) {
        return schema;
    }
    let file = metadata.file_metadata();
    let roots = file.schema_descr().root_schema().get_fields();
    let fields: Vec<FieldRef> = schema
        .fields()
        .iter()
        .zip(roots)
        .map(
            |(field, root)| match int96_in(field.data_type(), root, INT96_UNIT) {
                Some(t) => Arc::new(field.as_ref().clone().with_data_type(t)),
                None => Arc::clone(field),
            },
        )
        .collect();
    Schema::new_with_metadata(fields, schema.metadata().clone())
}

/// The top-level column of a Parquet schema with field id `id`.
fn root_with_field_id(roots: &[TypePtr], id: i32) -> Option<usize> {
    roots.iter().position(|f| {
        let info = f.get_basic_info();
        info.has_id() && info.id() == id
    })
}

#[async_trait]
impl FormatSeam for ParquetFormat {
    fn split_reader(
        &self,
        split: Arc<FileSplit>,
        context: SplitContext,
        deletes: Option<Box<dyn DeleteSource>>,
    ) -> Box<dyn SplitReader> {
        Box::new(ParquetSplitReader::new(split, context, deletes))
    }

    async fn file_schema(&self, access: &FileAccess, meta: &ObjectMeta) -> Result<SchemaRef> {
        let metadata = footer(access, meta).await?;
        let schema = parquet::arrow::parquet_to_arrow_schema(
            metadata.file_metadata().schema_descr(),
            metadata.file_metadata().key_value_metadata(),
        )
        .map_err(|e| {
            exec_datafusion_err!(
                "the schema of Parquet file '{}' has no Arrow type: {e}",
                meta.location
            )
        })?;
        Ok(Arc::new(with_int96_unit(schema, &metadata)))
    }

    async fn file_statistics(
        &self,
        access: &FileAccess,
        meta: &ObjectMeta,
        schema: &SchemaRef,
    ) -> Result<Statistics> {
        let metadata = footer(access, meta).await?;
        // Columns are found by name: those spelled otherwise than the table's are renamed
        // first, or they would count as missing (all NULL).
        let metadata = match super::spelling::with_table_spelling(&metadata, None, schema.fields())?
        {
            Some(spelled) => Arc::new(spelled),
            None => metadata,
        };
        DFParquetMetadata::statistics_from_parquet_metadata(&metadata, schema)
    }

    async fn read_columns_by_id(
        &self,
        file: WholeFile<'_>,
        ids: &[(i32, &str)],
    ) -> Result<ColumnsById> {
        // One GET for a file smaller than the tail read (the footer's hint), counted.
        let reader = CountingReader::counted(file.store, file.location, file.size, file.counters);
        let builder = ParquetRecordBatchStreamBuilder::new(reader)
            .await
            .map_err(|e| footer_error(file.written, e))?;
        check_footer(file.written, builder.metadata(), file.size)?;
        let descr = builder.metadata().file_metadata().schema_descr_ptr();
        let roots = descr.root_schema().get_fields();
        let find = |id: i32, name: &str| {
            root_with_field_id(roots, id).or_else(|| match name.is_empty() {
                true => None,
                false => roots.iter().position(|f| f.name() == name),
            })
        };
        let mut columns = vec![];
        for (id, name) in ids {
            match find(*id, name) {
                Some(k) => columns.push(k),
                None => return Ok(ColumnsById::Missing(*id)),
            }
        }
        // The projection keeps file order: where each asked column is in a decoded batch.
        let mut projected = columns.clone();
        projected.sort_unstable();
        projected.dedup();
        let order: Vec<usize> = columns
            .iter()
            .map(|c| projected.partition_point(|p| p < c))
            .collect();
        let mask = ProjectionMask::roots(&descr, projected.iter().copied());
        let stream = builder
            .with_projection(mask)
            .build()
            .map_err(|e| file_error(file.written, e))?;
        let schema = Arc::new(stream.schema().project(&order)?);
        let written = file.written.to_string();
        let batches = stream
            .map(move |batch| {
                let batch = batch.map_err(|e| file_error(&written, e))?;
                Ok(batch.project(&order)?)
            })
            .boxed();
        Ok(ColumnsById::Read(WholeColumns {
            schema: Some(schema),
            batches,
        }))
    }
}
