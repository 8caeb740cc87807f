//! [`KeptChildren`]: the subdirectories of a local partition directory, kept while the
//! directory is unchanged, so a query lists a table root of many partitions with one `stat`
//! instead of reading every entry.
//!
//! ```text
//!  query 1: stat root (version v) ─ read root: p=1/ … p=40/ ─ stat root (still v) ─▶ kept (v)
//!  query 2: stat root (v)  ─▶ the kept listing
//!  query 3: stat root (v') ─▶ read root again (a partition was added, removed or renamed)
//! ```
//!
//! Creating, removing or renaming an entry of a directory sets its modification and change
//! times (POSIX), and the change time cannot be set back by a user; a directory's version
//! is its device, inode and both times. Two changes within one tick of the file system's
//! clock can leave the same times, so a listing is kept only when the directory's version
//! is the same before and after reading it and its last change is older than
//! [`SETTLE_TIME`] (git's "racily clean" rule): a later change then gets a later time.
//! Only subdirectory listings are kept. The files of a leaf partition are always listed
//! and `stat`'ed: a file rewritten in place changes no directory.
//!
//! Used for the default local store only ([`crate::local_listing`]); remote stores have no
//! directory versions.

use std::collections::HashMap;
use std::path::{Path as FsPath, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use object_store::path::Path;

/// How long a directory must have been unchanged before its listing is kept: well above
/// the timestamp granularity of Linux file systems (a clock tick; a second on ext3, two on
/// FAT).
pub const SETTLE_TIME: Duration = Duration::from_secs(3);

/// Subdirectories kept over all directories at most (about 150 bytes each); past it the
/// listings start over.
const KEPT_ENTRIES: usize = 200_000;

/// Subdirectory listings of unchanged local directories, for one table. Clones share them.
#[derive(Debug, Clone)]
pub struct KeptChildren {
    inner: Arc<Mutex<Kept>>,
    settle_time: Duration,
}

#[derive(Debug, Default)]
struct Kept {
    by_dir: HashMap<PathBuf, (DirVersion, Arc<Vec<Path>>)>,
    entries: usize,
}

impl Default for KeptChildren {
    fn default() -> Self {
        Self::with_settle_time(SETTLE_TIME)
    }
}

/// What changes when a directory's entries change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirVersion {
    device: u64,
    inode: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl DirVersion {
    /// The version of the directory at `dir`; `None` when it cannot be read (the listing
    /// reports why) or off unix.
    pub fn of(dir: &FsPath) -> Option<Self> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let m = std::fs::metadata(dir).ok()?;
            Some(Self {
                device: m.dev(),
                inode: m.ino(),
                modified: (m.mtime(), m.mtime_nsec()),
                changed: (m.ctime(), m.ctime_nsec()),
            })
        }
        #[cfg(not(unix))]
        {
            let _ = dir;
            None
        }
    }

    /// Whether the last change is at least `settle_time` before `now`.
    fn settled(&self, now: SystemTime, settle_time: Duration) -> bool {
        let (seconds, nanos) = self.changed.max(self.modified);
        let Ok(seconds) = u64::try_from(seconds) else {
            return false;
        };
        let Ok(nanos) = u32::try_from(nanos) else {
            return false;
        };
        let last = SystemTime::UNIX_EPOCH + Duration::new(seconds, nanos);
        now.duration_since(last)
            .is_ok_and(|since| since >= settle_time)
    }
}

impl KeptChildren {
    /// Keeps listings of directories unchanged for `settle_time` (tests shorten it).
    pub fn with_settle_time(settle_time: Duration) -> Self {
        Self {
            inner: Arc::default(),
            settle_time,
        }
    }

    /// The subdirectories of `dir`, from the kept listing while the directory is unchanged,
    /// else listed by `list` (and kept when the directory has settled).
    pub fn children(
        &self,
        dir: &FsPath,
        list: impl FnOnce() -> object_store::Result<Vec<Path>>,
    ) -> object_store::Result<Arc<Vec<Path>>> {
        let now = SystemTime::now();
        let Some(before) = DirVersion::of(dir) else {
            return list().map(Arc::new);
        };
        if let Some(kept) = self.kept(dir, &before) {
            return Ok(kept);
        }
        let children = Arc::new(list()?);
        if before.settled(now, self.settle_time) && DirVersion::of(dir) == Some(before) {
            self.keep(dir, before, Arc::clone(&children));
        }
        Ok(children)
    }

    fn kept(&self, dir: &FsPath, version: &DirVersion) -> Option<Arc<Vec<Path>>> {
        let kept = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (at, children) = kept.by_dir.get(dir)?;
        (at == version).then(|| Arc::clone(children))
    }

    fn keep(&self, dir: &FsPath, version: DirVersion, children: Arc<Vec<Path>>) {
        let mut kept = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if kept.entries + children.len() > KEPT_ENTRIES {
            *kept = Kept::default();
            if children.len() > KEPT_ENTRIES {
                return;
            }
        }
        kept.entries += children.len();
        let replaced = kept.by_dir.insert(dir.to_path_buf(), (version, children));
        if let Some((_, old)) = replaced {
            kept.entries -= old.len();
        }
    }

    #[cfg(test)]
    pub(crate) fn kept_dirs(&self) -> usize {
        self.inner
            .lock()
            .map(|k| k.by_dir.len())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Lists `dir`'s subdirectory names, counting the reads.
    fn names(kept: &KeptChildren, dir: &FsPath, reads: &AtomicUsize) -> Vec<String> {
        let children = kept.children(dir, || {
            reads.fetch_add(1, Ordering::Relaxed);
            let mut names: Vec<Path> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| Path::from(e.unwrap().file_name().to_str().unwrap()))
                .collect();
            names.sort();
            Ok(names)
        });
        children.unwrap().iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn a_settled_directory_is_read_once_until_an_entry_changes() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path();
        std::fs::create_dir(dir.join("p=1")).unwrap();
        std::fs::create_dir(dir.join("p=2")).unwrap();
        let kept = KeptChildren::with_settle_time(Duration::ZERO);
        let reads = AtomicUsize::new(0);
        assert_eq!(names(&kept, dir, &reads), ["p=1", "p=2"]);
        assert_eq!(names(&kept, dir, &reads), ["p=1", "p=2"]);
        assert_eq!(
            reads.load(Ordering::Relaxed),
            1,
            "the second listing was kept"
        );

        // Each change to the entries is seen by the next listing.
        let change = |what: &str, expected: &[&str]| {
            // Past the file system's clock tick, so the change gets a later time.
            std::thread::sleep(Duration::from_millis(20));
            match what {
                "added" => std::fs::create_dir(dir.join("p=3")).unwrap(),
                "renamed" => std::fs::rename(dir.join("p=1"), dir.join("p=4")).unwrap(),
                _ => std::fs::remove_dir(dir.join("p=2")).unwrap(),
            }
            let before = reads.load(Ordering::Relaxed);
            assert_eq!(names(&kept, dir, &reads), expected, "{what}");
            assert_eq!(
                reads.load(Ordering::Relaxed),
                before + 1,
                "{what}: read again"
            );
        };
        change("added", &["p=1", "p=2", "p=3"]);
        change("renamed", &["p=2", "p=3", "p=4"]);
        change("removed", &["p=3", "p=4"]);
    }

    #[test]
    fn a_directory_changed_within_the_settle_time_is_not_kept() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("p=1")).unwrap();
        let kept = KeptChildren::with_settle_time(Duration::from_secs(3600));
        let reads = AtomicUsize::new(0);
        names(&kept, root.path(), &reads);
        names(&kept, root.path(), &reads);
        assert_eq!(reads.load(Ordering::Relaxed), 2);
        assert_eq!(kept.kept_dirs(), 0);
    }

    #[test]
    fn a_missing_directory_is_listed_and_errors_are_not_kept() {
        let root = tempfile::tempdir().unwrap();
        let kept = KeptChildren::with_settle_time(Duration::ZERO);
        let missing = root.path().join("missing");
        let listed = kept.children(&missing, || Ok(vec![])).unwrap();
        assert!(listed.is_empty());
        let failed = kept.children(root.path(), || {
            Err(object_store::Error::Generic {
                store: "LocalFileSystem",
                source: "cannot list".into(),
            })
        });
        assert!(failed.unwrap_err().to_string().contains("cannot list"));
        assert_eq!(kept.kept_dirs(), 0);
    }
}
