//! [`TailCache`]: checked ORC tails kept in the session's file metadata cache between the
//! planner's statistics, splits and queries, as `parquet::footer_cache` keeps Parquet
//! footers (the same cache, the same rule: an entry serves a file of the same path, size and
//! modification time; a split whose modification time is unknown, or in a store of its
//! own, is neither served nor kept).

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use chrono::{DateTime, Utc};
use datafusion::execution::cache::cache_manager::{
    CachedFileMetadataEntry, FileMetadata, FileMetadataCache,
};
use object_store::ObjectMeta;
use object_store::path::Path;
use orc_rust::proto;
use orc_rust::reader::metadata::FileMetadata as OrcMetadata;
use prost013::Message;

use super::file::OrcFile;
use super::statistics::WriterFixes;
use crate::io::CountingReader;

/// The session's file metadata cache, as the ORC reader uses it.
#[derive(Clone)]
pub struct TailCache(Arc<dyn FileMetadataCache>);

/// What of an [`OrcFile`] is kept: everything but its reader.
struct CachedTail {
    metadata: Arc<OrcMetadata>,
    footer: Arc<proto::Footer>,
    stripe_statistics: Arc<Vec<proto::StripeStatistics>>,
    writer_fixes: WriterFixes,
    schema: SchemaRef,
    /// Bytes it holds, about.
    size: usize,
}

impl FileMetadata for CachedTail {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn memory_size(&self) -> usize {
        self.size
    }

    fn extra_info(&self) -> HashMap<String, String> {
        HashMap::from([("format".to_string(), "orc".to_string())])
    }
}

impl TailCache {
    /// Tails kept in `cache`.
    pub fn new(cache: Arc<dyn FileMetadataCache>) -> Self {
        Self(cache)
    }

    /// The tail of the file at `location` (`size` bytes, modified at `modified`), read by
    /// `reader`, when one is kept for this version of it.
    pub fn get(
        &self,
        location: &Path,
        size: u64,
        modified: DateTime<Utc>,
        reader: CountingReader,
    ) -> Option<OrcFile> {
        let entry = self.0.get(location)?;
        if entry.meta.size != size || entry.meta.last_modified != modified {
            return None;
        }
        let kept = entry.file_metadata.as_any().downcast_ref::<CachedTail>()?;
        Some(OrcFile {
            reader,
            metadata: Arc::clone(&kept.metadata),
            footer: Arc::clone(&kept.footer),
            stripe_statistics: Arc::clone(&kept.stripe_statistics),
            writer_fixes: kept.writer_fixes,
            schema: Arc::clone(&kept.schema),
        })
    }

    /// Keeps the tail of `file` (just read) for this version of the file at `location`.
    pub fn put(&self, location: &Path, size: u64, modified: DateTime<Utc>, file: &OrcFile) {
        // The metadata `orc-rust` builds holds what the footer says, about once more.
        let stats: usize = file.stripe_statistics.iter().map(|s| s.encoded_len()).sum();
        let meta = ObjectMeta {
            location: location.clone(),
            last_modified: modified,
            size,
            e_tag: None,
            version: None,
        };
        let tail = CachedTail {
            metadata: Arc::clone(&file.metadata),
            footer: Arc::clone(&file.footer),
            stripe_statistics: Arc::clone(&file.stripe_statistics),
            writer_fixes: file.writer_fixes,
            schema: Arc::clone(&file.schema),
            size: 2 * file.footer.encoded_len() + stats,
        };
        self.0
            .put(location, CachedFileMetadataEntry::new(meta, Arc::new(tail)));
    }
}
