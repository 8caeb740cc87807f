//! Listing directories of the default local file system with `std::fs`.
//!
//! `object_store`'s `LocalFileSystem` lists through `walkdir` with links followed: each
//! entry of a directory is opened and stat'ed to check for link loops, and each file is
//! stat'ed twice. Listing a table root of 40 partitions and one partition of 50 files
//! costs ~350 system calls that way, about a millisecond on a page-cached disk: more than
//! the rest of planning a one-partition `count(*)` answered from footers. Here a directory
//! is read once (`getdents`: names and entry kinds), a subdirectory is known from its entry
//! kind, and a file is stat'ed once, relative to its directory (`fstatat`: no path walk); a
//! symbolic link is followed with one `stat`, and a link back to a directory being listed is
//! an error (as `walkdir` reports it) instead of a loop. An entry's store path is its
//! directory's path and its name, as `LocalFileSystem`'s URL round trip makes it, without
//! the round trip. A table's whole listing can run on one thread ([`LocalLister::inline`];
//! [`crate::listing::list_table`] decides which) instead of one blocking-pool task per
//! directory: each task is a hand-over to another thread and back.
//!
//! The results are `object_store`'s: the same paths (converted as `LocalFileSystem` converts
//! them), metadata, e-tags, and the same entries left out (files whose name ends in `#`
//! and digits, entries that vanish or whose link is broken while listing). Only the
//! default local store is listed this way ([`is_default_local_store`], as files are read by
//! the core's local-file reader); any other store, and every remote one, is
//! listed through `object_store`. No library lists a directory with one system call per
//! file, hence this module.

use std::fs::{Metadata, ReadDir};
use std::io::ErrorKind;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use lakescan_core::api::is_default_local_store;
use object_store::local::LocalFileSystem;
use object_store::path::{Path, PathPart};
use object_store::{ObjectMeta, ObjectStore};

use crate::kept_children::KeptChildren;

/// Lists directories of the default local store: each listing a task on the blocking pool,
/// or, [`inline`](Self::inline), on the calling thread; subdirectories through a table's
/// [`KeptChildren`] when [`keeping`](Self::keeping) them.
#[derive(Debug, Clone)]
pub struct LocalLister {
    on: Thread,
    kept: Option<KeptChildren>,
}

/// Where a [`LocalLister`] makes its system calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Thread {
    /// A task on the blocking pool per listing.
    BlockingPool,
    /// The caller's thread: a caller listing a whole table at once, on the blocking pool or,
    /// when listings are quick, on the planning thread ([`crate::listing::list_table`]).
    Caller,
}

impl LocalLister {
    /// A lister for `store`, when it is the default local store.
    pub fn of(store: &Arc<dyn ObjectStore>) -> Option<Self> {
        is_default_local_store(store).then_some(Self {
            on: Thread::BlockingPool,
            kept: None,
        })
    }

    /// The same lister making its system calls on the calling thread (its futures are
    /// ready when first polled), for a caller that lists a whole table at once.
    pub fn inline(self) -> Self {
        Self {
            on: Thread::Caller,
            ..self
        }
    }

    /// The same lister serving the subdirectories of unchanged directories from `kept`.
    pub fn keeping(self, kept: &KeptChildren) -> Self {
        Self {
            kept: Some(kept.clone()),
            ..self
        }
    }

    async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> object_store::Result<T> + Send + 'static,
    ) -> object_store::Result<T> {
        match self.on {
            Thread::Caller => f(),
            Thread::BlockingPool => {
                on_blocking_pool(f)
                    .await
                    .map_err(|e| object_store::Error::Generic {
                        store: "LocalFileSystem",
                        source: Box::new(e),
                    })?
            }
        }
    }

    /// The subdirectories of `dir` (sorted); a missing directory has none.
    pub async fn children(&self, dir: &Path) -> object_store::Result<Arc<Vec<Path>>> {
        let root = filesystem_path(dir)?;
        let location = dir.clone();
        let kept = self.kept.clone();
        self.run(move || match kept {
            Some(kept) => kept.children(&root, || children(&root, &location)),
            None => children(&root, &location).map(Arc::new),
        })
        .await
    }

    /// The files under `dir`, recursively (in no particular order); a missing directory
    /// has none.
    pub async fn files(&self, dir: &Path) -> object_store::Result<Vec<ObjectMeta>> {
        let root = filesystem_path(dir)?;
        let location = dir.clone();
        self.run(move || {
            let mut files = vec![];
            if let Some(entries) = read_dir(&root)? {
                let mut ancestors = vec![root.clone()];
                let dir = Dir {
                    path: &root,
                    location: &location,
                };
                walk(dir, entries, &mut ancestors, &mut files)?;
            }
            Ok(files)
        })
        .await
    }
}

/// The subdirectories of `root` (at `location` in the store), sorted. Only partition levels
/// are listed for their subdirectories: a visible file there is a [`FileAmongPartitions`]
/// error.
fn children(root: &std::path::Path, location: &Path) -> object_store::Result<Vec<Path>> {
    let mut dirs = vec![];
    let Some(entries) = read_dir(root)? else {
        return Ok(dirs);
    };
    for entry in entries {
        let Some((path, kind)) = entry_kind(entry, root)? else {
            continue;
        };
        let child = child_location(location, &path)?;
        match kind {
            Kind::Dir(_) => dirs.push(child),
            Kind::File(metadata) => {
                FileAmongPartitions::check(&child, metadata.len(), "LocalFileSystem")?
            }
        }
    }
    dirs.sort();
    Ok(dirs)
}

/// A visible data file where a partitioned table has only partition directories (the table
/// root, or a partition directory above the last key): its files would never be read.
#[derive(Debug)]
pub struct FileAmongPartitions(pub Path);

impl FileAmongPartitions {
    /// An error when `file` (of `store`, `size` bytes) is visible: not hidden, not an
    /// unfinished write, and not a directory marker. An object that holds no rows is one:
    /// the empty `p=1/` that S3 consoles and Hadoop's S3A and GCS connectors create for a
    /// directory (listed as `p=1`, or as the listed directory itself), EMRFS's
    /// `p=1_$folder$`, any empty file — skipping it loses no row.
    pub fn check(file: &Path, size: u64, store: &'static str) -> object_store::Result<()> {
        let name = file.filename();
        let hidden = name.is_none_or(crate::partition::is_hidden);
        let marker = size == 0 || name.is_some_and(|n| n.ends_with("_$folder$"));
        if hidden || marker || !is_valid_file_path(file) {
            return Ok(());
        }
        Err(object_store::Error::Generic {
            store,
            source: Box::new(Self(file.clone())),
        })
    }

    /// The file, when `e` is this error.
    pub fn of(e: &object_store::Error) -> Option<&Path> {
        match e {
            object_store::Error::Generic { source, .. } => {
                source.downcast_ref::<Self>().map(|f| &f.0)
            }
            _ => None,
        }
    }
}

impl std::fmt::Display for FileAmongPartitions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "file '{}' is not in a partition directory", self.0)
    }
}

impl std::error::Error for FileAmongPartitions {}

/// What a directory entry is, its links followed.
enum Kind {
    /// A directory; reached through a link: its identity (device, inode).
    Dir(Option<(u64, u64)>),
    File(Metadata),
}

/// A directory being listed: its file system path and its store path.
#[derive(Clone, Copy)]
struct Dir<'a> {
    path: &'a std::path::Path,
    location: &'a Path,
}

/// Lists `entries` of `dir` into `files`; `ancestors`: the directories being listed.
fn walk(
    dir: Dir<'_>,
    entries: ReadDir,
    ancestors: &mut Vec<PathBuf>,
    files: &mut Vec<ObjectMeta>,
) -> object_store::Result<()> {
    for entry in entries {
        let Some((path, kind)) = entry_kind(entry, dir.path)? else {
            continue;
        };
        let location = child_location(dir.location, &path)?;
        match kind {
            Kind::File(metadata) => {
                if is_valid_file_path(&location) {
                    files.push(object_meta(location, &metadata));
                }
            }
            Kind::Dir(linked) => {
                // Only a link can lead back to a directory being listed.
                if let Some(id) = linked
                    && ancestors
                        .iter()
                        .any(|a| std::fs::metadata(a).is_ok_and(|m| dir_id(&m) == id))
                {
                    return Err(io_error(
                        &path,
                        std::io::Error::other("file system loop found: a link to a parent"),
                    ));
                }
                let Some(children) = read_dir(&path)? else {
                    continue;
                };
                ancestors.push(path.clone());
                let child = Dir {
                    path: &path,
                    location: &location,
                };
                walk(child, children, ancestors, files)?;
                ancestors.pop();
            }
        }
    }
    Ok(())
}

/// The entry's path and kind; `None` when it vanished or is a broken link.
fn entry_kind(
    entry: std::io::Result<std::fs::DirEntry>,
    dir: &std::path::Path,
) -> object_store::Result<Option<(PathBuf, Kind)>> {
    let entry = match entry {
        Ok(entry) => entry,
        Err(e) => return Err(io_error(dir, e)),
    };
    let path = entry.path();
    let file_type = match entry.file_type() {
        Ok(t) => t,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(&path, e)),
    };
    // A directory's kind is in its entry; a file's size and time need one `stat` relative
    // to the directory (`DirEntry::metadata` does not follow links, and a file is no link),
    // a link's target one `stat` of its path.
    if file_type.is_dir() {
        return Ok(Some((path, Kind::Dir(None))));
    }
    let metadata = if file_type.is_file() {
        entry.metadata()
    } else {
        std::fs::metadata(&path)
    };
    let metadata = match metadata {
        Ok(m) => m,
        // Vanished, or a broken link: `object_store` leaves both out.
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(&path, e)),
    };
    let kind = if metadata.is_dir() {
        Kind::Dir(Some(dir_id(&metadata)))
    } else {
        Kind::File(metadata)
    };
    Ok(Some((path, kind)))
}

#[cfg(unix)]
fn dir_id(metadata: &Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (metadata.dev(), metadata.ino())
}

#[cfg(not(unix))]
fn dir_id(_metadata: &Metadata) -> (u64, u64) {
    (0, 0)
}

/// `dir`'s entries; `None` when it does not exist (an empty listing, as `object_store`).
fn read_dir(dir: &std::path::Path) -> object_store::Result<Option<ReadDir>> {
    match std::fs::read_dir(dir) {
        Ok(entries) => Ok(Some(entries)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(dir, e)),
    }
}

fn filesystem_path(location: &Path) -> object_store::Result<PathBuf> {
    LocalFileSystem::new().path_to_filesystem(location)
}

/// The store path of `path`, an entry of the directory at `dir`: `LocalFileSystem` turns a
/// file system path into a URL and back, which gives the directory's path and the entry's
/// name unchanged when the name is a valid path part (Unicode, no control character), and
/// an error otherwise (made here by the same round trip).
fn child_location(dir: &Path, path: &std::path::Path) -> object_store::Result<Path> {
    let part = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| PathPart::parse(n).ok());
    match part {
        Some(part) => Ok(dir.clone().join(part)),
        None => Path::from_absolute_path(path).map_err(object_store::Error::from),
    }
}

/// `LocalFileSystem` skips the files of its unfinished multipart writes (`name#<digits>`).
fn is_valid_file_path(path: &Path) -> bool {
    match path.filename() {
        Some(name) => match name.split_once('#') {
            Some((_, suffix)) if !suffix.is_empty() => !suffix.bytes().all(|b| b.is_ascii_digit()),
            _ => true,
        },
        None => false,
    }
}

/// `LocalFileSystem`'s metadata of a file, e-tag included (inode, modification time in
/// microseconds, size; in hex).
fn object_meta(location: Path, metadata: &Metadata) -> ObjectMeta {
    let modified = metadata.modified().ok();
    let micros = modified
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .unwrap_or_default()
        .as_micros();
    let size = metadata.len();
    let inode = inode(metadata);
    ObjectMeta {
        location,
        last_modified: modified.unwrap_or(SystemTime::UNIX_EPOCH).into(),
        size,
        e_tag: Some(format!("{inode:x}-{micros:x}-{size:x}")),
        version: None,
    }
}

#[cfg(unix)]
fn inode(metadata: &Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(metadata)
}

#[cfg(not(unix))]
fn inode(_metadata: &Metadata) -> u64 {
    0
}

fn io_error(path: &std::path::Path, source: std::io::Error) -> object_store::Error {
    object_store::Error::Generic {
        store: "LocalFileSystem",
        source: format!("cannot list {}: {source}", path.display()).into(),
    }
}

/// Runs `f` as one task on the Tokio runtime's blocking pool (on this thread outside a
/// runtime); the error is the task's panic or cancellation.
pub async fn on_blocking_pool<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => runtime.spawn_blocking(f).await,
        Err(_) => Ok(f()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::TryStreamExt;

    /// The same entries, paths and metadata as `object_store`'s local listing.
    #[tokio::test]
    async fn lists_what_object_store_lists() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("t");
        for (sub, file) in [
            ("k=1", "a.parquet"),
            ("k=1", "b#12"),
            ("k=1", "c#x"),
            ("k=2/n", "d.parquet"),
            ("k=a%20b", "e parquet"),
        ] {
            let d = root.join(sub);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join(file), b"x").unwrap();
        }
        std::fs::write(root.join("_SUCCESS"), b"").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(root.join("k=2"), root.join("k=3")).unwrap();
            std::os::unix::fs::symlink(root.join("nowhere"), root.join("k=1/broken")).unwrap();
        }
        let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new());
        let lister = LocalLister::of(&store).expect("the default local store");
        let table = Path::from_absolute_path(&root).unwrap();

        let expected = store.list_with_delimiter(Some(&table)).await.unwrap();
        assert_eq!(
            *lister.children(&table).await.unwrap(),
            expected.common_prefixes
        );
        // Kept while the directory is unchanged: the same listing, read or kept.
        let kept = KeptChildren::with_settle_time(std::time::Duration::ZERO);
        let keeping = lister.clone().keeping(&kept);
        for _ in 0..2 {
            let children = keeping.children(&table).await.unwrap();
            assert_eq!(*children, expected.common_prefixes);
        }
        assert_eq!(kept.kept_dirs(), 1);

        let mut expected: Vec<ObjectMeta> = store.list(Some(&table)).try_collect().await.unwrap();
        let mut listed = lister.files(&table).await.unwrap();
        expected.sort_by(|a, b| a.location.cmp(&b.location));
        listed.sort_by(|a, b| a.location.cmp(&b.location));
        assert_eq!(listed, expected);
        assert!(listed.iter().all(|m| !m.location.as_ref().ends_with("#12")));

        let missing = table.clone().join("missing");
        assert!(lister.children(&missing).await.unwrap().is_empty());
        assert!(lister.files(&missing).await.unwrap().is_empty());
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_link_to_a_parent_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("t");
        std::fs::create_dir_all(root.join("k=1")).unwrap();
        std::os::unix::fs::symlink(&root, root.join("k=1/up")).unwrap();
        let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new());
        let lister = LocalLister::of(&store).unwrap();
        let table = Path::from_absolute_path(&root).unwrap();
        let err = lister.files(&table).await.unwrap_err().to_string();
        assert!(err.contains("k=1/up") && err.contains("loop"), "{err}");
    }

    #[test]
    fn only_the_default_local_store() {
        let dir = tempfile::tempdir().unwrap();
        let prefixed: Arc<dyn ObjectStore> =
            Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
        assert!(LocalLister::of(&prefixed).is_none());
        let memory: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        assert!(LocalLister::of(&memory).is_none());
    }
}
