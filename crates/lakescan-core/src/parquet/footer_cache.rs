//! [`FooterCache`]: Parquet footers kept in the session's file metadata cache between splits
//! and queries.
//!
//! The cache is DataFusion's (`RuntimeEnv::cache_manager`, a `FileMetadataCache`), the one
//! its own `ListingTable` fills, and the entries are its `CachedParquetMetaData`: nothing is
//! written by hand but the lookup rule. A cached footer serves a split when the entry was
//! made for the same size and modification time (a listing's). A split whose modification
//! time the planner does not know (Iceberg's, planned from manifests) is neither served nor
//! kept: a file rewritten under the same name and size (a table deleted and written again
//! by a writer with fixed file names) would otherwise be read with another file's footer.
//! A footer cached without its page index serves a split that wants the index only when
//! the file has none. An object-store file smaller than the footer read (512 KiB) is kept
//! whole with its footer: the first read of it (`CREATE`'s schema, the planner's statistics)
//! also serves the scan, one GET per file.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use datafusion::datasource::physical_plan::parquet::metadata::CachedParquetMetaData;
use datafusion::execution::cache::cache_manager::{
    CachedFileMetadataEntry, FileMetadata, FileMetadataCache,
};
use object_store::ObjectMeta;
use parquet::file::metadata::ParquetMetaData;

use crate::format::PageIndex;
use crate::split::FileSplit;

/// The session's file metadata cache, as the Parquet reader uses it.
#[derive(Debug, Clone)]
pub struct FooterCache(Arc<dyn FileMetadataCache>);

impl FooterCache {
    /// Footers kept in `cache`.
    pub fn new(cache: Arc<dyn FileMetadataCache>) -> Self {
        Self(cache)
    }

    /// The footer of `split`'s file, when one is kept for this version of it (with its page
    /// index when `page_index` and the file has one).
    pub fn get(&self, split: &FileSplit, page_index: PageIndex) -> Option<Arc<ParquetMetaData>> {
        self.get_with_file(split, page_index).map(|(m, _)| m)
    }

    /// [`Self::get`], with the file's bytes when the whole file was kept with its footer (a
    /// file smaller than the footer read: its one GET serves planning and scan).
    pub fn get_with_file(
        &self,
        split: &FileSplit,
        page_index: PageIndex,
    ) -> Option<(Arc<ParquetMetaData>, Option<Bytes>)> {
        // The cache is keyed by path: a split in a store of its own could meet another
        // store's file of that path.
        if split.store().is_some() {
            return None;
        }
        let modified = split.last_modified()?;
        let entry = self.0.get(split.file_path())?;
        if entry.meta.size != split.file_size() || entry.meta.last_modified != modified {
            return None;
        }
        let any = entry.file_metadata.as_any();
        let (cached, file) = match any.downcast_ref::<CachedFooter>() {
            Some(footer) => (&footer.parquet, Some(footer.file.clone())),
            None => (any.downcast_ref::<CachedParquetMetaData>()?, None),
        };
        let metadata = Arc::clone(cached.parquet_metadata());
        let has_index = metadata.column_index().is_some() && metadata.offset_index().is_some();
        let served = match page_index {
            PageIndex::NotWanted => true,
            PageIndex::Wanted => has_index || !file_has_page_index(&metadata),
        };
        served.then_some((metadata, file))
    }

    /// Keeps the footer just read for `split`'s file, `size` bytes long, when the split
    /// knows the file's modification time (the tests' shorthand: readers keep the file too).
    #[cfg(test)]
    pub fn put(&self, split: &FileSplit, size: u64, metadata: Arc<ParquetMetaData>) {
        self.put_with_file(split, size, metadata, None)
    }

    /// Keeps the footer just read for `split`'s file, `size` bytes long, when the split
    /// knows the file's modification time, and `file` (the whole file's bytes) with the footer.
    pub fn put_with_file(
        &self,
        split: &FileSplit,
        size: u64,
        metadata: Arc<ParquetMetaData>,
        file: Option<Bytes>,
    ) {
        let (Some(last_modified), None) = (split.last_modified(), split.store()) else {
            return;
        };
        let meta = ObjectMeta {
            location: split.file_path().clone(),
            last_modified,
            size,
            e_tag: None,
            version: None,
        };
        let parquet = CachedParquetMetaData::new(metadata);
        let kept: Arc<dyn FileMetadata> = match file.filter(|f| f.len() as u64 == size) {
            Some(file) => Arc::new(CachedFooter { parquet, file }),
            None => Arc::new(parquet),
        };
        self.0
            .put(split.file_path(), CachedFileMetadataEntry::new(meta, kept));
    }
}

/// A small file's footer with the file's bytes (counted in the cache's memory limit).
struct CachedFooter {
    parquet: CachedParquetMetaData,
    file: Bytes,
}

impl FileMetadata for CachedFooter {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn memory_size(&self) -> usize {
        self.parquet.memory_size() + self.file.len()
    }

    fn extra_info(&self) -> HashMap<String, String> {
        let mut info = self.parquet.extra_info();
        info.insert("file_bytes_kept".into(), self.file.len().to_string());
        info
    }
}

/// Whether the file's column chunks point to a page index.
fn file_has_page_index(metadata: &ParquetMetaData) -> bool {
    metadata.row_groups().iter().any(|rg| {
        rg.columns()
            .iter()
            .any(|c| c.column_index_offset().is_some() && c.offset_index_offset().is_some())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;
    use datafusion::execution::cache::DefaultFilesMetadataCache;
    use object_store::path::Path;
    use parquet::file::metadata::{FileMetaData, ParquetMetaData};
    use parquet::schema::types::{SchemaDescriptor, Type};

    fn metadata() -> Arc<ParquetMetaData> {
        let schema = Type::group_type_builder("schema").build();
        let descr = Arc::new(SchemaDescriptor::new(Arc::new(schema.unwrap())));
        let file = FileMetaData::new(1, 0, None, None, descr, None);
        Arc::new(ParquetMetaData::new(file, vec![]))
    }

    #[test]
    fn a_footer_serves_only_the_version_it_was_read_from() {
        let cache = FooterCache::new(Arc::new(DefaultFilesMetadataCache::new(1 << 20)));
        let at = |s| DateTime::UNIX_EPOCH + chrono::Duration::seconds(s);
        let version = |name: &str, size, modified: Option<i64>| {
            let builder = FileSplit::builder(Path::from(name), size);
            match modified {
                Some(s) => builder.last_modified(at(s)),
                None => builder,
            }
            .build()
            .unwrap()
        };
        let split = version("t/f.parquet", 100, Some(5));
        assert!(cache.get(&split, PageIndex::NotWanted).is_none());
        cache.put(&split, 100, metadata());
        assert!(cache.get(&split, PageIndex::NotWanted).is_some());
        assert!(
            cache.get(&split, PageIndex::Wanted).is_some(),
            "the file has no page index"
        );
        let rewritten = version("t/f.parquet", 100, Some(6));
        assert!(
            cache.get(&rewritten, PageIndex::NotWanted).is_none(),
            "modified since"
        );
        let grown = version("t/f.parquet", 101, Some(5));
        assert!(
            cache.get(&grown, PageIndex::NotWanted).is_none(),
            "another size"
        );
        let unknown_time = version("t/f.parquet", 100, None);
        assert!(
            cache.get(&unknown_time, PageIndex::NotWanted).is_none(),
            "no time, no entry"
        );
        cache.put(&version("t/g.parquet", 100, None), 100, metadata());
        let other = version("t/g.parquet", 100, Some(5));
        assert!(
            cache.get(&other, PageIndex::NotWanted).is_none(),
            "not kept without a time"
        );
    }
}
