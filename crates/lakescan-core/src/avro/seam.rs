//! Avro's [`FormatSeam`]: an object container file read whole (Avro data files are small
//! and have no footer), its schema from the header; no statistics (Avro files carry none).

use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::common::stats::Precision;
use datafusion::common::{Result, Statistics};
use object_store::ObjectMeta;

use super::{AvroFormat, AvroSplitReader, annotated_schema, fetch_whole, open, read_columns_by_id};
use crate::format::{ColumnsById, FileAccess, FormatSeam, WholeFile};
use crate::io::CountingReader;
use crate::reader::{DeleteSource, SplitContext, SplitReader};
use crate::split::FileSplit;

#[async_trait]
impl FormatSeam for AvroFormat {
    fn split_reader(
        &self,
        split: Arc<FileSplit>,
        context: SplitContext,
        deletes: Option<Box<dyn DeleteSource>>,
    ) -> Box<dyn SplitReader> {
        Box::new(AvroSplitReader::new(split, context, deletes))
    }

    fn splittable(&self) -> bool {
        false
    }

    async fn file_schema(&self, access: &FileAccess, meta: &ObjectMeta) -> Result<SchemaRef> {
        let path = meta.location.as_ref();
        let counted = datafusion::physical_plan::metrics::Count::new();
        let mut reader = CountingReader::open(&access.store, &meta.location, meta.size, counted)
            .listed_at(Some(meta.last_modified));
        let bytes = fetch_whole(&mut reader, path).await?;
        let (fields, _) = annotated_schema(path, &open(path, &bytes, 1, None)?)?;
        Ok(Arc::new(arrow::datatypes::Schema::new(fields)))
    }

    async fn file_statistics(
        &self,
        _access: &FileAccess,
        meta: &ObjectMeta,
        schema: &SchemaRef,
    ) -> Result<Statistics> {
        Ok(
            Statistics::new_unknown(schema).with_total_byte_size(Precision::Inexact(
                usize::try_from(meta.size).unwrap_or(usize::MAX),
            )),
        )
    }

    async fn read_columns_by_id(
        &self,
        file: WholeFile<'_>,
        ids: &[(i32, &str)],
    ) -> Result<ColumnsById> {
        let batches = read_columns_by_id(
            file.store,
            file.location,
            file.size,
            file.written,
            ids,
            file.counters,
        )
        .await?;
        Ok(ColumnsById::decoded(batches))
    }
}
