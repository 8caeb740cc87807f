//! [`CountingReader`]: the byte reads of one data file, for every format's reader. It
//! counts bytes, GET requests and their retries into the scan's metrics, keeps the file's
//! tail once read (a small file costs one request), reads local files into reused buffers
//! ([`super::local_file`]), fetches ahead on object stores ([`super::read_ahead`]), and
//! checks that a listed file is still the file listed. Its interface is the `parquet`
//! crate's `AsyncFileReader` (byte ranges, and a Parquet footer for the Parquet reader);
//! the ORC and Avro readers read their bytes through the same ranges.

use std::ops::Range;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use chrono::{DateTime, Utc};
use datafusion::physical_plan::metrics::Count;
use futures::FutureExt;
use futures::future::BoxFuture;
use object_store::{GetOptions, ObjectStore};
use object_store::{OBJECT_STORE_COALESCE_DEFAULT, coalesce_ranges};
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::errors::ParquetError;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};

use super::local_file::LocalFile;
use super::read_ahead::{Answer, ReadAhead, UnitFetch};
use crate::reader::SplitContext;
use crate::requests::Attempts;
use crate::split::FileSplit;

/// The reader of `split`'s file (`size` bytes) for a split reader, counting into the
/// scan's metrics and checking the file is the one listed.
pub fn counting_reader(context: &SplitContext, split: &FileSplit, size: u64) -> CountingReader {
    let bytes_read = context.metrics.bytes_read.clone();
    CountingReader::open(&context.store, split.file_path(), size, bytes_read)
        .listed_at(split.last_modified())
        .counting_requests(
            context.metrics.requests_get.clone(),
            context.metrics.requests_retried.clone(),
        )
}

/// An [`AsyncFileReader`] that counts the bytes it fetches. Clones read the same file and
/// count into the same counter.
///
/// The footer is read with the last `FOOTER_HINT` bytes of the file (local) or
/// `REMOTE_FOOTER_HINT` (object stores) in one request, and
/// those bytes are kept: later reads inside them (the page index, and every column chunk of
/// a file smaller than the hint — the common small-file case of Hive tables) are served
/// from memory, so a small file costs one request.
///
/// A file of the default local store is read directly into reused buffers
/// (`LocalFile`). Other stores get ranged GETs (`get_opts`), coalesced as
/// `ObjectStore::get_ranges` coalesces them and counted; their answers tell the object's size
/// and modification time, so a file the planner listed that changed since (another size or
/// time) is an error naming it, not a read of another file's bytes at the old offsets (even
/// with its footer cached).
#[derive(Clone)]
pub struct CountingReader {
    local: Option<LocalFile>,
    store: Arc<dyn ObjectStore>,
    path: object_store::path::Path,
    /// When the planner listed the file (the file then had `file_size` bytes).
    listed: Option<DateTime<Utc>>,
    file_size: u64,
    bytes_read: Count,
    /// GET requests sent to the object store (not to a local file).
    requests: Count,
    /// Retries of those requests (stores built with `crate::requests::CountingConnector`).
    retried: Count,
    /// The file's last bytes, from `tail.0` on, once the footer was read.
    tail: Option<(u64, Bytes)>,
    /// The next row group fetched while the current one decodes (object stores only).
    read_ahead: Option<Arc<Mutex<ReadAhead>>>,
}

impl CountingReader {
    /// Reads `path` (`file_size` bytes) of `store`, adding every fetched byte to
    /// `bytes_read`.
    pub fn open(
        store: &Arc<dyn ObjectStore>,
        path: &object_store::path::Path,
        file_size: u64,
        bytes_read: Count,
    ) -> Self {
        Self {
            local: LocalFile::of(store, path),
            store: Arc::clone(store),
            path: path.clone(),
            listed: None,
            file_size,
            bytes_read,
            requests: Count::new(),
            retried: Count::new(),
            tail: None,
            read_ahead: None,
        }
    }
}

impl CountingReader {
    /// Reads `path` (`file_size` bytes) of `store`, counting its bytes, GET requests and
    /// retries into `counters`.
    pub fn counted(
        store: &Arc<dyn ObjectStore>,
        path: &object_store::path::Path,
        file_size: u64,
        counters: &crate::metrics::ReadCounters,
    ) -> Self {
        Self::open(store, path, file_size, counters.bytes.clone())
            .counting_requests(counters.requests.clone(), counters.retried.clone())
    }

    /// Counts the GET requests sent to the object store into `requests`, and their retries
    /// into `retried`.
    pub fn counting_requests(mut self, requests: Count, retried: Count) -> Self {
        self.requests = requests;
        self.retried = retried;
        self
    }

    /// The file was listed at `at` with the reader's size: check it is still that file.
    pub fn listed_at(mut self, at: Option<DateTime<Utc>>) -> Self {
        self.listed = at;
        self
    }

    /// Fetches the row groups of `plan` (the ranges each will be asked for, in reading order)
    /// in units, the next while one decodes (`ReadAhead`); a local file is read when asked.
    pub fn with_read_ahead(mut self, plan: Vec<Vec<Range<u64>>>) -> Self {
        if self.local.is_none() && plan.len() > 1 {
            self.read_ahead = Some(Arc::new(Mutex::new(ReadAhead::new(plan))));
        }
        self
    }

    /// How many requests a fetch made ahead answered.
    pub fn served_ahead(&self) -> usize {
        self.read_ahead
            .as_ref()
            .map_or(0, |a| a.lock().unwrap_or_else(|p| p.into_inner()).served())
    }

    /// `ranges` answered by the read-ahead, when they are a planned row group's: from its
    /// unit, fetched before, ahead or now; the next unit is fetched ahead.
    fn served_by_read_ahead(
        &self,
        ranges: &[Range<u64>],
    ) -> Option<BoxFuture<'static, parquet::errors::Result<Vec<Bytes>>>> {
        let shared = self.read_ahead.as_ref()?;
        // Outside a tokio runtime there is nowhere to fetch ahead: read when asked.
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let mut ahead = shared.lock().unwrap_or_else(|p| p.into_inner());
        let step = ahead.on_request(ranges);
        if let Some((unit, next)) = step.ahead {
            ahead.fetching(unit, runtime.spawn(self.counted_fetch(next)));
        }
        drop(ahead);
        let (unit, position, fetch) = match step.answer {
            Answer::Off => return None,
            Answer::Served(bytes) => return Some(futures::future::ready(Ok(bytes)).boxed()),
            Answer::Unit {
                unit,
                position,
                fetch,
            } => (unit, position, fetch),
        };
        let fetched = match fetch {
            UnitFetch::Ahead(task) => async move {
                task.await
                    .map_err(|e| ParquetError::External(Box::new(e)))?
            }
            .boxed(),
            UnitFetch::Now(unit_ranges) => self.counted_fetch(unit_ranges),
        };
        let shared = Arc::clone(shared);
        let path = self.path.clone();
        Some(
            async move {
                let parts = fetched.await?;
                let mut ahead = shared.lock().unwrap_or_else(|p| p.into_inner());
                ahead.install(unit, position, parts).ok_or_else(|| {
                    ParquetError::General(format!(
                        "reading '{path}' ahead: the bytes fetched for row group position \
                         {position} do not match its ranges"
                    ))
                })
            }
            .boxed(),
        )
    }

    /// `ranges` from the local file or the object store ([`Self::fetch_ranges_checked`]),
    /// their bytes counted.
    fn counted_fetch(
        &self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'static, parquet::errors::Result<Vec<Bytes>>> {
        let count = self.bytes_read.clone();
        let fetch = match &self.local {
            Some(local) => {
                let local = local.clone();
                async move { local.read_ranges(ranges).await }.boxed()
            }
            None => self.fetch_ranges_checked(ranges),
        };
        async move {
            let fetched = fetch.await;
            if let Ok(parts) = &fetched {
                count.add(parts.iter().map(Bytes::len).sum());
            }
            fetched
        }
        .boxed()
    }

    /// `range` of the file from an object store (one GET, counted), checked against the
    /// listing when the planner listed the file.
    fn fetch_checked(
        &self,
        range: Range<u64>,
    ) -> impl Future<Output = parquet::errors::Result<Bytes>> + Send + 'static {
        let (store, path) = (Arc::clone(&self.store), self.path.clone());
        let (listed, file_size) = (self.listed, self.file_size);
        let (requests, retried) = (self.requests.clone(), self.retried.clone());
        async move {
            requests.add(1);
            let attempts = Attempts::default();
            let read = attempts.count(Self::get_checked(store, path, range, listed, file_size));
            let bytes = read.await;
            retried.add(attempts.retries());
            bytes
        }
    }

    /// One ranged GET of `path`, checked against the listing when there is one.
    async fn get_checked(
        store: Arc<dyn ObjectStore>,
        path: object_store::path::Path,
        range: Range<u64>,
        listed: Option<DateTime<Utc>>,
        file_size: u64,
    ) -> parquet::errors::Result<Bytes> {
        let external = |e: object_store::Error| ParquetError::External(Box::new(e));
        let options = GetOptions {
            range: Some(range.into()),
            ..GetOptions::default()
        };
        let got = store.get_opts(&path, options).await.map_err(external)?;
        if let Some(listed) = listed {
            let (size, modified) = (got.meta.size, got.meta.last_modified);
            // Listings and GET answers agree to the second.
            if size != file_size || modified.timestamp() != listed.timestamp() {
                return Err(ParquetError::External(Box::new(ObjectChanged {
                    listed: (file_size, listed),
                    now: (size, modified),
                })));
            }
        }
        got.bytes().await.map_err(external)
    }

    /// `ranges` from an object store, checked against the listing, coalesced the way
    /// `ObjectStore::get_ranges` does (ranges less than 1 MiB apart are one request).
    fn fetch_ranges_checked(
        &self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'static, parquet::errors::Result<Vec<Bytes>>> {
        let this = self.clone();
        async move {
            coalesce_ranges(
                &ranges,
                |range| this.fetch_checked(range),
                OBJECT_STORE_COALESCE_DEFAULT,
            )
            .await
        }
        .boxed()
    }

    /// How many bytes the footer read fetches from the end of the file.
    fn footer_hint(&self) -> usize {
        match self.local {
            Some(_) => FOOTER_HINT,
            None => REMOTE_FOOTER_HINT,
        }
    }

    /// The whole file, when its tail read covered it (a file smaller than the footer read)
    /// and it came from an object store, where the read is a request worth keeping (a local
    /// file is read again, and a removed one is an error naming it).
    pub fn whole_file(&self) -> Option<Bytes> {
        if self.local.is_some() {
            return None;
        }
        match &self.tail {
            Some((0, bytes)) if bytes.len() as u64 == self.file_size => Some(bytes.clone()),
            _ => None,
        }
    }

    /// Serves every read from `file`, the whole file's bytes (kept with its footer).
    pub fn with_whole_file(mut self, file: Bytes) -> Self {
        if file.len() as u64 == self.file_size {
            self.tail = Some((0, file));
        }
        self
    }

    /// The file's last bytes (the footer hint's worth, or the whole file when smaller),
    /// fetched and counted once and kept: later reads inside them are served from memory.
    /// Every format reads its tail this way.
    pub async fn fetch_tail(&mut self) -> parquet::errors::Result<(u64, Bytes)> {
        if let Some(tail) = &self.tail {
            return Ok(tail.clone());
        }
        let start = self.file_size.saturating_sub(self.footer_hint() as u64);
        let range = start..self.file_size;
        let bytes = match range.is_empty() {
            true => Bytes::new(),
            false => {
                let mut parts = self.get_byte_ranges(vec![range]).await?;
                parts
                    .pop()
                    .ok_or_else(|| ParquetError::General("no bytes read".into()))?
            }
        };
        self.tail = Some((start, bytes.clone()));
        Ok((start, bytes))
    }

    /// The size of the file the reader reads.
    pub fn file_size(&self) -> u64 {
        self.file_size
    }

    /// `range` from the kept tail, when it lies inside it.
    fn kept_bytes(&self, range: &Range<u64>) -> Option<Bytes> {
        let (start, bytes) = self.tail.as_ref()?;
        let end = start + bytes.len() as u64;
        (range.start >= *start && range.end <= end && range.start <= range.end).then(|| {
            let (from, to) = ((range.start - start) as usize, (range.end - start) as usize);
            bytes.slice(from..to)
        })
    }
}

impl AsyncFileReader for CountingReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        if let Some(bytes) = self.kept_bytes(&range) {
            return futures::future::ready(Ok(bytes)).boxed();
        }
        let count = self.bytes_read.clone();
        let fetch = match &self.local {
            Some(local) => {
                let local = local.clone();
                async move {
                    let mut parts = local.read_ranges(vec![range]).await?;
                    parts
                        .pop()
                        .ok_or_else(|| ParquetError::General("no bytes read".into()))
                }
                .boxed()
            }
            None => self.fetch_checked(range).boxed(),
        };
        fetch
            .map(move |r| {
                if let Ok(b) = &r {
                    count.add(b.len());
                }
                r
            })
            .boxed()
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, parquet::errors::Result<Vec<Bytes>>> {
        let kept: Option<Vec<Bytes>> = ranges.iter().map(|r| self.kept_bytes(r)).collect();
        if let Some(parts) = kept {
            return futures::future::ready(Ok(parts)).boxed();
        }
        if let Some(fetched) = self.served_by_read_ahead(&ranges) {
            return fetched;
        }
        self.counted_fetch(ranges)
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        // Fetch the footer through `self` so its bytes are counted too.
        let file_size = self.file_size;
        async move {
            // The tail, fetched (and counted) once and kept for the reads that follow.
            let hint = self.footer_hint();
            let start = file_size.saturating_sub(hint as u64);
            if self.tail.is_none() && file_size > 0 {
                // As a one-range `get_byte_ranges`: one request, where a local store's
                // `get_range` takes two trips to its blocking pool (open, then read).
                let tail = start..file_size;
                let bytes = self.get_byte_ranges(vec![tail]).await?;
                let bytes = bytes.into_iter().next().ok_or_else(|| {
                    ParquetError::General(format!("no bytes for range {start}..{file_size}"))
                })?;
                self.tail = Some((start, bytes));
            }
            let mut reader = ParquetMetaDataReader::new().with_prefetch_hint(Some(hint));
            if let Some(o) = options {
                reader = reader
                    .with_column_index_policy(o.column_index_policy())
                    .with_offset_index_policy(o.offset_index_policy());
            }
            Ok(Arc::new(
                reader.load_and_finish(&mut *self, file_size).await?,
            ))
        }
        .boxed()
    }
}

/// Bytes fetched from the end of a local file in one read: footer and usually page index.
pub(crate) const FOOTER_HINT: usize = 64 * 1024;

/// Bytes fetched from the end of an object-store file in one request: a round trip costs
/// more than the bytes, and the page index of a large file often lies beyond 64 KiB (SF1
/// `lineitem`: one GET more per file). DataFusion's `metadata_size_hint` default.
pub(crate) const REMOTE_FOOTER_HINT: usize = 512 * 1024;

/// A listed file that is not the file listed any more (an external error of a read).
#[derive(Debug)]
pub struct ObjectChanged {
    listed: (u64, DateTime<Utc>),
    now: (u64, DateTime<Utc>),
}

impl std::fmt::Display for ObjectChanged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the file changed after the table was listed: it had {} bytes (modified {}) and \
             has {} bytes (modified {}); it was rewritten in place, run the query again",
            self.listed.0, self.listed.1, self.now.0, self.now.1
        )
    }
}

impl std::error::Error for ObjectChanged {}
