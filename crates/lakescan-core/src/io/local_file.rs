//! [`LocalFile`]: byte ranges of a file on the local file system, read into reused buffers.
//!
//! The async Parquet reader fetches every column chunk of a row group into memory before
//! decoding it. Through `object_store`'s `LocalFileSystem` each chunk lands in a freshly
//! allocated buffer, and a large fresh buffer is fresh pages: a full scan of page-cached
//! files spends a tenth of its time faulting them in and zeroing them (perf, SF1
//! `full_scan`), work the `parquet` crate's synchronous reader does not do. Here a chunk is
//! read (`pread`) into a buffer of a process-wide `BufferPool`, handed to the decoder as
//! [`Bytes`] owning it, and the buffer returns to the pool when the last slice of it drops.
//!
//! Only the default local store is read this way (its `Display` is
//! `LocalFileSystem(file:///)`, so paths map to the file system as it maps them); any other
//! store registered for `file://`, and every remote store, is read through `object_store`.
//! No library offers a buffer-reusing `AsyncFileReader`, hence this module.

use std::fs::File;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use parquet::errors::{ParquetError, Result};

/// Idle bytes the pool keeps at most, for the life of the process (the column chunks of a
/// few 64 MiB row groups; more in flight at once are allocated and freed as before).
const POOL_BYTES: usize = 128 * 1024 * 1024;

/// Buffers smaller than this are allocated as needed: small allocations come from the
/// allocator's free lists, not from fresh pages.
const MIN_POOLED: usize = 256 * 1024;

/// Whether `store` is the default local store (`LocalFileSystem::new()`, whose `Display` is
/// `LocalFileSystem(file:///)`) on a unix system: its paths map to the file system as
/// `LocalFileSystem::path_to_filesystem` maps them. A local store with a prefix, and every
/// other store, is not.
pub fn is_default_local_store(store: &Arc<dyn ObjectStore>) -> bool {
    cfg!(unix) && store.to_string() == "LocalFileSystem(file:///)"
}

/// A file of the default local store, opened at its first read and kept open by its
/// clones.
#[derive(Debug, Clone)]
pub struct LocalFile {
    path: Arc<PathBuf>,
    open: Arc<OnceLock<Arc<File>>>,
}

impl LocalFile {
    /// `location` of `store` as a local file, when `store` is the default local store.
    pub fn of(store: &Arc<dyn ObjectStore>, location: &Path) -> Option<Self> {
        if !is_default_local_store(store) {
            return None;
        }
        let path = LocalFileSystem::new().path_to_filesystem(location).ok()?;
        Some(Self {
            path: Arc::new(path),
            open: Arc::default(),
        })
    }

    /// Reads `ranges`, in order: those the page cache holds on this thread once the file is
    /// open (a copy, like the decoding that follows), the others on the blocking pool.
    pub async fn read_ranges(&self, ranges: Vec<Range<u64>>) -> Result<Vec<Bytes>> {
        let mut out = Vec::with_capacity(ranges.len());
        if let Some(file) = self.open.get() {
            for range in &ranges {
                match read_cached(file, range, &self.path)? {
                    Some(bytes) => out.push(bytes),
                    None => break,
                }
            }
        }
        if out.len() == ranges.len() {
            return Ok(out);
        }
        let rest = ranges[out.len()..].to_vec();
        let (path, open) = (Arc::clone(&self.path), Arc::clone(&self.open));
        let read = tokio::task::spawn_blocking(move || {
            let file = match open.get() {
                Some(file) => Arc::clone(file),
                None => {
                    let file = File::open(path.as_path())
                        .map_err(|e| io_error(&path, e, "cannot open"))?;
                    Arc::clone(open.get_or_init(|| Arc::new(file)))
                }
            };
            read_ranges(&file, &path, &rest)
        });
        let read = read
            .await
            .map_err(|e| ParquetError::External(Box::new(e)))?;
        out.extend(read?);
        Ok(out)
    }
}

fn io_error(path: &std::path::Path, e: std::io::Error, what: &str) -> ParquetError {
    ParquetError::General(format!("{what} {}: {e}", path.display()))
}

fn range_len(range: &Range<u64>) -> Result<usize> {
    usize::try_from(range.end.saturating_sub(range.start))
        .map_err(|_| ParquetError::General(format!("range {range:?} too large")))
}

#[cfg(unix)]
fn read_ranges(file: &File, path: &std::path::Path, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
    use std::os::unix::fs::FileExt;
    let mut out = Vec::with_capacity(ranges.len());
    for range in ranges {
        let mut buffer = PooledBuffer::take(range_len(range)?);
        file.read_exact_at(buffer.filled_mut(), range.start)
            .map_err(|e| io_error(path, e, &format!("cannot read bytes {range:?} of")))?;
        out.push(Bytes::from_owner(buffer));
    }
    Ok(out)
}

#[cfg(not(unix))]
fn read_ranges(
    _file: &File,
    _path: &std::path::Path,
    _ranges: &[Range<u64>],
) -> Result<Vec<Bytes>> {
    // `LocalFile::of` returns `None` off unix.
    Err(ParquetError::General("local reads need unix".to_string()))
}

/// `range` of `file` when the page cache holds all of it (`preadv2` with `RWF_NOWAIT`
/// returns what it holds and never waits for the disk); `None` when it does not, or the
/// file system cannot tell.
#[cfg(target_os = "linux")]
fn read_cached(file: &File, range: &Range<u64>, path: &std::path::Path) -> Result<Option<Bytes>> {
    use rustix::io::{Errno, ReadWriteFlags, preadv2};
    let mut buffer = PooledBuffer::take(range_len(range)?);
    let mut filled = 0;
    let len = buffer.len;
    while filled < len {
        let slice = &mut buffer.filled_mut()[filled..];
        let offset = range.start + filled as u64;
        match preadv2(
            file,
            &mut [std::io::IoSliceMut::new(slice)],
            offset,
            ReadWriteFlags::NOWAIT,
        ) {
            Ok(0) => {
                let eof = std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
                return Err(io_error(
                    path,
                    eof,
                    &format!("cannot read bytes {range:?} of"),
                ));
            }
            Ok(n) => filled += n,
            Err(Errno::AGAIN | Errno::OPNOTSUPP | Errno::INTR) => return Ok(None),
            Err(e) => {
                let e = std::io::Error::from(e);
                return Err(io_error(
                    path,
                    e,
                    &format!("cannot read bytes {range:?} of"),
                ));
            }
        }
    }
    Ok(Some(Bytes::from_owner(buffer)))
}

#[cfg(not(target_os = "linux"))]
fn read_cached(
    _file: &File,
    _range: &Range<u64>,
    _path: &std::path::Path,
) -> Result<Option<Bytes>> {
    Ok(None)
}

/// Idle buffers, each of its full length (initialised, so reuse writes no zeroes).
#[derive(Debug, Default)]
struct BufferPool {
    idle: Vec<Vec<u8>>,
    idle_bytes: usize,
}

static POOL: Mutex<BufferPool> = Mutex::new(BufferPool {
    idle: Vec::new(),
    idle_bytes: 0,
});

impl BufferPool {
    /// The smallest idle buffer of at least `len` bytes and at most twice that.
    fn take(&mut self, len: usize) -> Option<Vec<u8>> {
        let best = self
            .idle
            .iter()
            .enumerate()
            .filter(|(_, b)| b.len() >= len && b.len() / 2 <= len)
            .min_by_key(|(_, b)| b.len())
            .map(|(i, _)| i)?;
        let buffer = self.idle.swap_remove(best);
        self.idle_bytes -= buffer.len();
        Some(buffer)
    }

    fn put(&mut self, buffer: Vec<u8>) {
        if self.idle_bytes + buffer.len() <= POOL_BYTES {
            self.idle_bytes += buffer.len();
            self.idle.push(buffer);
        }
    }
}

/// A buffer of the pool, `len` bytes of it in use; back to the pool on drop.
struct PooledBuffer {
    buffer: Vec<u8>,
    len: usize,
}

impl PooledBuffer {
    fn take(len: usize) -> Self {
        let pooled = (len >= MIN_POOLED)
            .then(|| POOL.lock().unwrap_or_else(|p| p.into_inner()).take(len))
            .flatten();
        let buffer = pooled.unwrap_or_else(|| vec![0; len]);
        Self { buffer, len }
    }

    fn filled_mut(&mut self) -> &mut [u8] {
        &mut self.buffer[..self.len]
    }
}

impl AsRef<[u8]> for PooledBuffer {
    fn as_ref(&self) -> &[u8] {
        &self.buffer[..self.len]
    }
}

impl Drop for PooledBuffer {
    fn drop(&mut self) {
        if self.buffer.len() >= MIN_POOLED {
            let buffer = std::mem::take(&mut self.buffer);
            POOL.lock().unwrap_or_else(|p| p.into_inner()).put(buffer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_serves_the_smallest_fitting_buffer_and_stays_bounded() {
        let mut pool = BufferPool::default();
        pool.put(vec![0; 1000]);
        pool.put(vec![0; 3000]);
        pool.put(vec![0; 1500]);
        assert_eq!(pool.take(900).map(|b| b.len()), Some(1000));
        // 3000 is more than twice 1400: not served.
        assert_eq!(pool.take(1400).map(|b| b.len()), Some(1500));
        assert!(pool.take(1400).is_none());
        assert_eq!(pool.idle_bytes, 3000);
        pool.put(vec![0; POOL_BYTES]);
        assert_eq!(pool.idle_bytes, 3000);
    }

    #[tokio::test]
    async fn ranges_of_a_local_file_read_as_written_and_missing_files_name_themselves() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        let data: Vec<u8> = (0..(3 * MIN_POOLED)).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new());
        let location = Path::from_filesystem_path(&path).unwrap();
        let file = LocalFile::of(&store, &location).expect("the default local store");
        let n = MIN_POOLED as u64;
        for _ in 0..2 {
            // The second round reuses the buffers the first one returned, and reads from
            // the page cache on this thread (the file is open).
            let ranges = vec![0..10, n..3 * n, 5..2 * n];
            let read = file.read_ranges(ranges.clone()).await.unwrap();
            for (r, bytes) in ranges.iter().zip(&read) {
                assert_eq!(bytes.as_ref(), &data[r.start as usize..r.end as usize]);
            }
        }
        let beyond = 2 * n..4 * n;
        let past_the_end = file.read_ranges(vec![beyond]).await.unwrap_err();
        assert!(past_the_end.to_string().contains("f.bin"), "{past_the_end}");
        std::fs::remove_file(&path).unwrap();
        // The open file is still read (the data it had when opened); a file that is gone
        // before its first read is an error naming it.
        let head = 0..10;
        let kept_open = file.read_ranges(vec![head.clone()]).await.unwrap();
        assert_eq!(kept_open[0].as_ref(), &data[..10]);
        let gone = LocalFile::of(&store, &location).expect("the default local store");
        let missing = gone.read_ranges(vec![head]).await.unwrap_err();
        assert!(missing.to_string().contains("f.bin"), "{missing}");
        // A store rooted elsewhere is not read directly.
        let prefixed: Arc<dyn ObjectStore> =
            Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
        assert!(LocalFile::of(&prefixed, &Path::from("f.bin")).is_none());
    }
}
