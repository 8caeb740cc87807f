//! [`FormatSeam`]: everything a file format does outside the scan's split lifecycle, in
//! one place per format — the file's schema (`CREATE` without columns), its statistics
//! for the optimizer, and whole top-level columns by field id (what delete files need) —
//! beside building the reader of a split. `crate::formats` holds the one dispatch from a
//! [`crate::split::FileFormat`] to its seam; nothing else matches on the format.

use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::common::{Result, Statistics};
use datafusion::execution::cache::cache_manager::FileMetadataCache;
use futures::StreamExt;
use futures::stream::BoxStream;
use object_store::{ObjectMeta, ObjectStore};

use crate::metrics::ReadCounters;
use crate::reader::{DeleteSource, SplitContext, SplitReader};
use crate::split::FileSplit;

/// Whether a Parquet footer is wanted with its page index (a scan with filters prunes
/// pages); other formats have no such part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageIndex {
    /// With the page index, when the file has one.
    Wanted,
    /// Without.
    NotWanted,
}

impl PageIndex {
    /// The parquet reader's policy for it.
    pub fn policy(self) -> parquet::file::metadata::PageIndexPolicy {
        use parquet::file::metadata::PageIndexPolicy;
        match self {
            PageIndex::Wanted => PageIndexPolicy::Optional,
            PageIndex::NotWanted => PageIndexPolicy::Skip,
        }
    }
}

/// How a format reaches a table's files outside a scan: the store, and the session's file
/// metadata cache, where footers and tails read while planning are kept for the scan.
#[derive(Clone)]
pub struct FileAccess {
    /// Where the files are.
    pub store: Arc<dyn ObjectStore>,
    /// The session's file metadata cache.
    pub metadata_cache: Arc<dyn FileMetadataCache>,
    /// Whether Parquet footers are read with their page index (the scan will filter).
    pub page_index: PageIndex,
}

/// A file read whole: its reads counted into `counters`, its path as the table wrote it
/// (`written`) named in errors.
pub struct WholeFile<'a> {
    /// Where it is.
    pub store: &'a Arc<dyn ObjectStore>,
    /// Its location in `store`.
    pub location: &'a object_store::path::Path,
    /// Its size in bytes.
    pub size: u64,
    /// Its path as written (messages).
    pub written: &'a str,
    /// Where its bytes and requests are counted.
    pub counters: &'a ReadCounters,
}

/// What `FormatSeam::read_columns_by_id` found.
pub enum ColumnsById {
    /// Every column asked for.
    Read(WholeColumns),
    /// No top-level column has this id (nor the name beside it).
    Missing(i32),
}

impl ColumnsById {
    /// The batches of a format that decodes such a file at once (`Ok`), or the id no
    /// column has (`Err`).
    pub fn decoded(batches: std::result::Result<Vec<RecordBatch>, i32>) -> Self {
        match batches {
            Ok(batches) => ColumnsById::Read(WholeColumns {
                schema: None,
                batches: futures::stream::iter(batches.into_iter().map(Ok)).boxed(),
            }),
            Err(id) => ColumnsById::Missing(id),
        }
    }
}

/// Whole top-level columns of a file, in the order they were asked for.
pub struct WholeColumns {
    /// Their schema, when the format knows it before the first batch (Parquet).
    pub schema: Option<SchemaRef>,
    /// The batches, read as they are consumed where the format allows it (Parquet).
    pub batches: BoxStream<'static, Result<RecordBatch>>,
}

/// What a file format implements besides the steps of the split lifecycle
/// ([`crate::format::FileFormatReader`]).
#[async_trait]
pub trait FormatSeam: Send + Sync {
    /// The reader of one split of a file of this format; `deletes` are loaded after pruning.
    fn split_reader(
        &self,
        split: Arc<FileSplit>,
        context: SplitContext,
        deletes: Option<Box<dyn DeleteSource>>,
    ) -> Box<dyn SplitReader>;

    /// Whether a file can be read in byte ranges by several splits (Avro: one split per
    /// file, since rows before a range's first block cannot be counted without reading
    /// them, and positions need them).
    fn splittable(&self) -> bool {
        true
    }

    /// The columns of the file `meta` as a table declares them (schema inference); what
    /// is read is kept in the session's cache for the scan.
    async fn file_schema(&self, access: &FileAccess, meta: &ObjectMeta) -> Result<SchemaRef>;

    /// The statistics of the file `meta` over `schema` (the table's data columns, in table
    /// types) for the optimizer.
    async fn file_statistics(
        &self,
        access: &FileAccess,
        meta: &ObjectMeta,
        schema: &SchemaRef,
    ) -> Result<Statistics>;

    /// The top-level columns with field ids `ids` of `file` (or, for a column without an id,
    /// the name beside its id; an empty name matches no column), read whole, or the first
    /// id no column has.
    async fn read_columns_by_id(
        &self,
        file: WholeFile<'_>,
        ids: &[(i32, &str)],
    ) -> Result<ColumnsById>;
}
