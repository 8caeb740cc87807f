//! [`ListingCache`]: a Hive table's directory listings, kept for the session's
//! `lakescan.listing_cache_ttl_seconds` (0, the default: every query lists).
//!
//! ```text
//!  query 1: list root/ ── list region=eu/          → kept, stamped t1
//!  query 2 (before t1 + ttl): both served from memory, no request to the store
//!  query 3 (after):           listed again, kept again
//! ```
//! A recursive listing of the whole table (an object store's, made by `CREATE` or by a query
//! with no partition filter) is kept as the root's [`Listed::Files`]: it then answers every
//! directory below (`listing::ListingMemory::keep_whole`).
//!
//! The cache is opt-in and per table: within the time to live a query does not see files
//! added, removed or rewritten since the listing (as Trino's `hive.file-status-cache` and
//! DataFusion's `list_files_cache`, which keeps listings without expiry by default). A
//! listing is kept per directory, so a query that prunes partitions reuses the directories
//! an earlier one listed. DataFusion's `ListFilesCache` is not used: it keeps a table's
//! whole recursive listing under one key with one runtime-wide time to live, while a Hive
//! table lists level by level and prunes as it goes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use object_store::ObjectMeta;
use object_store::path::Path;

/// Entries (files and directories, over all kept listings) above which the cache starts
/// again empty: a bound on its memory (about 150 bytes each), far above a table whose
/// listing is worth keeping.
const MAX_CACHED_ENTRIES: usize = 200_000;

/// What listing one directory returned. A directory's depth in the table fixes which of the
/// two it is listed for.
#[derive(Debug, Clone)]
pub enum Listed {
    /// Its subdirectories (one partition level down).
    Children(Arc<Vec<Path>>),
    /// The files under it (a leaf partition, recursively).
    Files(Arc<Vec<ObjectMeta>>),
}

impl Listed {
    fn len(&self) -> usize {
        match self {
            Listed::Children(dirs) => dirs.len(),
            Listed::Files(files) => files.len(),
        }
    }
}

#[derive(Debug, Default)]
struct Entries {
    by_dir: HashMap<Path, (Instant, Listed)>,
    len: usize,
}

/// Directory listings of one table with the time each was made. Clones share the cache.
#[derive(Debug, Clone, Default)]
pub struct ListingCache {
    entries: Arc<Mutex<Entries>>,
}

impl ListingCache {
    /// The listing of `dir` made less than `ttl` ago.
    pub fn get(&self, dir: &Path, ttl: Duration) -> Option<Listed> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let (at, listed) = entries.by_dir.get(dir)?;
        (at.elapsed() < ttl).then(|| listed.clone())
    }

    /// Keeps `listed` as `dir`'s listing, made at `at`.
    pub fn put(&self, dir: Path, at: Instant, listed: Listed) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let added = listed.len();
        if entries.len + added > MAX_CACHED_ENTRIES {
            *entries = Entries::default();
            if added > MAX_CACHED_ENTRIES {
                return;
            }
        }
        entries.len += added;
        if let Some((_, old)) = entries.by_dir.insert(dir, (at, listed)) {
            entries.len -= old.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(names: &[&str]) -> Listed {
        Listed::Children(Arc::new(names.iter().map(|n| Path::from(*n)).collect()))
    }

    #[test]
    fn a_listing_is_served_only_within_its_time_to_live() {
        let cache = ListingCache::default();
        let root = Path::from("t");
        cache.put(root.clone(), Instant::now(), dirs(&["t/p=1"]));
        std::thread::sleep(Duration::from_millis(5));
        assert!(cache.get(&root, Duration::from_millis(1)).is_none());
        let served = cache.get(&root, Duration::from_secs(600));
        assert!(matches!(served, Some(Listed::Children(d)) if d.len() == 1));
        assert!(
            cache
                .get(&Path::from("t/p=1"), Duration::from_secs(600))
                .is_none()
        );
        assert!(cache.get(&root, Duration::ZERO).is_none());
    }

    #[test]
    fn replacing_a_listing_keeps_the_count_and_a_full_cache_starts_over() {
        let cache = ListingCache::default();
        let now = Instant::now();
        cache.put(Path::from("a"), now, dirs(&["a/1", "a/2"]));
        cache.put(Path::from("a"), now, dirs(&["a/1"]));
        assert_eq!(cache.entries.lock().unwrap().len, 1);
        let many: Vec<Path> = (0..MAX_CACHED_ENTRIES)
            .map(|i| Path::from(format!("b/{i}")))
            .collect();
        cache.put(Path::from("b"), now, Listed::Children(Arc::new(many)));
        let entries = cache.entries.lock().unwrap();
        assert_eq!(entries.len, MAX_CACHED_ENTRIES);
        assert!(!entries.by_dir.contains_key(&Path::from("a")));
    }
}
