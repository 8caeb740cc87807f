//! [`FileSetStatistics`]: the merged statistics of the file sets a table's recent scans
//! read, so a query that reads the same versions of the same files again neither looks up
//! each file in the session's statistics cache nor merges them again.
//!
//! ```text
//!  scan 1: p = 7 → 50 files ──file_statistics (per file, cached by DataFusion)──▶ merge ──▶ kept
//!  scan 2: p = 7 → the same 50 files, each of the same size, time and e-tag  ──▶ kept one
//!  scan 3: p = 7 → a file rewritten or added                                 ──▶ merged again
//! ```
//!
//! A set is recognised by every file's path, size, modification time and e-tag (what the
//! footer and statistics caches check a file by), compared in full: two sets that differ
//! in one file never share an entry. The statistics of one file version never change, so
//! a kept merge is that of the files now. Per-file statistics stay in DataFusion's file
//! statistics cache, as `ListingTable` keeps them; this keeps only their sums.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use datafusion::common::{Result, Statistics};
use object_store::ObjectMeta;

/// File sets kept per table (one per partition selection a workload repeats).
const KEPT_SETS: usize = 8;

/// Files over all kept sets above which the oldest sets are dropped: a bound on the memory
/// of the keys (about 150 bytes a file).
const KEPT_FILES: usize = 100_000;

/// The merged statistics of recently scanned file sets of one table. Clones share them.
#[derive(Debug, Clone, Default)]
pub struct FileSetStatistics {
    sets: Arc<Mutex<VecDeque<KeptSet>>>,
}

#[derive(Debug)]
struct KeptSet {
    files: Vec<FileVersion>,
    merged: Arc<Statistics>,
}

/// What identifies one version of a file.
#[derive(Debug)]
struct FileVersion {
    location: object_store::path::Path,
    size: u64,
    last_modified: chrono::DateTime<chrono::Utc>,
    e_tag: Option<String>,
}

impl FileVersion {
    fn of(meta: &ObjectMeta) -> Self {
        Self {
            location: meta.location.clone(),
            size: meta.size,
            last_modified: meta.last_modified,
            e_tag: meta.e_tag.clone(),
        }
    }

    fn is(&self, meta: &ObjectMeta) -> bool {
        self.size == meta.size
            && self.last_modified == meta.last_modified
            && self.location == meta.location
            && self.e_tag == meta.e_tag
    }
}

impl FileSetStatistics {
    /// The merged statistics of `files` (in this order), computed by `merge` unless kept.
    pub async fn merged<F>(&self, files: &[ObjectMeta], merge: F) -> Result<Arc<Statistics>>
    where
        F: AsyncFnOnce() -> Result<Statistics>,
    {
        if let Some(kept) = self.kept(files) {
            return Ok(kept);
        }
        let merged = Arc::new(merge().await?);
        self.keep(files, Arc::clone(&merged));
        Ok(merged)
    }

    fn kept(&self, files: &[ObjectMeta]) -> Option<Arc<Statistics>> {
        let mut sets = self.sets.lock().unwrap_or_else(|p| p.into_inner());
        let at = sets.iter().position(|set| {
            set.files.len() == files.len()
                && set
                    .files
                    .iter()
                    .zip(files)
                    .all(|(kept, meta)| kept.is(meta))
        })?;
        // The most recently used set goes to the front (kept longest).
        let set = sets.remove(at)?;
        let merged = Arc::clone(&set.merged);
        sets.push_front(set);
        Some(merged)
    }

    fn keep(&self, files: &[ObjectMeta], merged: Arc<Statistics>) {
        if files.len() > KEPT_FILES {
            return;
        }
        let set = KeptSet {
            files: files.iter().map(FileVersion::of).collect(),
            merged,
        };
        let mut sets = self.sets.lock().unwrap_or_else(|p| p.into_inner());
        sets.push_front(set);
        let mut total = 0;
        let keep = sets
            .iter()
            .take(KEPT_SETS)
            .take_while(|s| {
                total += s.files.len();
                total <= KEPT_FILES
            })
            .count();
        sets.truncate(keep);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.sets.lock().map(|s| s.len()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::atomic::{AtomicUsize, Ordering};

    use datafusion::common::stats::Precision;

    use super::*;

    fn meta(name: &str, size: u64) -> ObjectMeta {
        ObjectMeta {
            location: name.into(),
            last_modified: chrono::DateTime::UNIX_EPOCH,
            size,
            e_tag: Some(format!("{name}-{size}")),
            version: None,
        }
    }

    /// Merges counted; the result's row count is the files' total size.
    async fn merged(memo: &FileSetStatistics, files: &[ObjectMeta], merges: &AtomicUsize) -> usize {
        let stats = memo
            .merged(files, async || {
                merges.fetch_add(1, Ordering::Relaxed);
                let rows = files.iter().map(|f| f.size as usize).sum();
                Ok(Statistics {
                    num_rows: Precision::Exact(rows),
                    ..Statistics::new_unknown(&arrow::datatypes::Schema::empty())
                })
            })
            .await
            .unwrap();
        match stats.num_rows {
            Precision::Exact(n) => n,
            _ => unreachable!("exact in this test"),
        }
    }

    #[tokio::test]
    async fn the_same_file_versions_are_merged_once_and_any_change_merges_again() {
        let memo = FileSetStatistics::default();
        let merges = AtomicUsize::new(0);
        let files = vec![meta("a", 10), meta("b", 20)];
        assert_eq!(merged(&memo, &files, &merges).await, 30);
        assert_eq!(merged(&memo, &files, &merges).await, 30);
        assert_eq!(merges.load(Ordering::Relaxed), 1);

        // A file rewritten (new size), one more file, one file fewer, another order, a new
        // e-tag or time with the same size: each is another set.
        let rewritten = vec![meta("a", 10), meta("b", 25)];
        assert_eq!(merged(&memo, &rewritten, &merges).await, 35);
        let added = vec![meta("a", 10), meta("b", 20), meta("c", 1)];
        assert_eq!(merged(&memo, &added, &merges).await, 31);
        assert_eq!(merged(&memo, &files[..1], &merges).await, 10);
        let reordered = vec![meta("b", 20), meta("a", 10)];
        assert_eq!(merged(&memo, &reordered, &merges).await, 30);
        let mut retagged = files.clone();
        retagged[1].e_tag = Some("other".into());
        assert_eq!(merged(&memo, &retagged, &merges).await, 30);
        let mut touched = files.clone();
        touched[0].last_modified = chrono::DateTime::UNIX_EPOCH + chrono::Duration::seconds(1);
        assert_eq!(merged(&memo, &touched, &merges).await, 30);
        assert_eq!(merges.load(Ordering::Relaxed), 7);

        // Still kept: the first set.
        assert_eq!(merged(&memo, &files, &merges).await, 30);
        assert_eq!(merges.load(Ordering::Relaxed), 7);
    }

    #[tokio::test]
    async fn a_failed_merge_is_not_kept_and_the_memo_stays_bounded() {
        let memo = FileSetStatistics::default();
        let files = vec![meta("a", 1)];
        let failed = memo
            .merged(&files, async || {
                datafusion::common::exec_err!("corrupt footer of a")
            })
            .await;
        assert!(
            failed
                .unwrap_err()
                .to_string()
                .contains("corrupt footer of a")
        );
        assert_eq!(memo.len(), 0);
        let merges = AtomicUsize::new(0);
        for n in 0..(2 * KEPT_SETS as u64) {
            merged(&memo, &[meta("a", n)], &merges).await;
        }
        assert_eq!(memo.len(), KEPT_SETS);
        let many: Vec<ObjectMeta> = (0..KEPT_FILES).map(|i| meta(&i.to_string(), 1)).collect();
        merged(&memo, &many, &merges).await;
        assert_eq!(memo.len(), 1, "the large set alone fills the bound");
        let too_many: Vec<ObjectMeta> = (0..=KEPT_FILES).map(|i| meta(&i.to_string(), 1)).collect();
        merged(&memo, &too_many, &merges).await;
        assert_eq!(memo.len(), 1, "a set over the bound is not kept");
    }
}
