//! ORC's [`FormatSeam`]: tails read through the session's cache ([`super::tail_cache`]),
//! the footer's statistics, and whole columns of small files (delete files).

use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::common::{Result, Statistics};
use object_store::ObjectMeta;

use super::open::{cached_file_tail, file_schema, read_columns_by_id};
use super::statistics::file_statistics;
use super::tail_cache::TailCache;
use super::{OrcFormat, OrcSplitReader};
use crate::format::{ColumnsById, FileAccess, FormatSeam, WholeFile};
use crate::reader::{DeleteSource, SplitContext, SplitReader};
use crate::split::FileSplit;

#[async_trait]
impl FormatSeam for OrcFormat {
    fn split_reader(
        &self,
        split: Arc<FileSplit>,
        context: SplitContext,
        deletes: Option<Box<dyn DeleteSource>>,
    ) -> Box<dyn SplitReader> {
        Box::new(OrcSplitReader::new(split, context, deletes))
    }

    async fn file_schema(&self, access: &FileAccess, meta: &ObjectMeta) -> Result<SchemaRef> {
        let tails = TailCache::new(Arc::clone(&access.metadata_cache));
        let file = cached_file_tail(&access.store, meta, &tails).await?;
        Ok(Arc::new(file_schema(meta.location.as_ref(), &file)?))
    }

    async fn file_statistics(
        &self,
        access: &FileAccess,
        meta: &ObjectMeta,
        schema: &SchemaRef,
    ) -> Result<Statistics> {
        let tails = TailCache::new(Arc::clone(&access.metadata_cache));
        let file = cached_file_tail(&access.store, meta, &tails).await?;
        Ok(file_statistics(&file, schema, meta.size))
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
