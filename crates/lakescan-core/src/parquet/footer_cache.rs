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
//! the file has none.

use std::sync::Arc;

use datafusion::datasource::physical_plan::parquet::metadata::CachedParquetMetaData;
use datafusion::execution::cache::cache_manager::{CachedFileMetadataEntry, FileMetadataCache};
use object_store::ObjectMeta;
use parquet::file::metadata::ParquetMetaData;

use crate::split::FileSplit;

/// Whether a footer is wanted with its page index (a scan with filters prunes pages).
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
        let cached = entry
            .file_metadata
            .as_any()
            .downcast_ref::<CachedParquetMetaData>()?;
        let metadata = Arc::clone(cached.parquet_metadata());
        let has_index = metadata.column_index().is_some() && metadata.offset_index().is_some();
        let served = match page_index {
            PageIndex::NotWanted => true,
            PageIndex::Wanted => has_index || !file_has_page_index(&metadata),
        };
        served.then_some(metadata)
    }

    /// Keeps the footer just read for `split`'s file, `size` bytes long, when the split
    /// knows the file's modification time.
    pub fn put(&self, split: &FileSplit, size: u64, metadata: Arc<ParquetMetaData>) {
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
        let entry =
            CachedFileMetadataEntry::new(meta, Arc::new(CachedParquetMetaData::new(metadata)));
        self.0.put(split.file_path(), entry);
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
