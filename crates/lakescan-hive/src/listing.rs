//! Listing a Hive table: partition directories level by level, pruning while listing.
//!
//! ```text
//!  root/ ── region=eu/ ── day=2024-01-01/ ── part-0.parquet
//!        │             └─ day=2024-01-02/ ── …
//!        └─ region=us/ (pruned by `region = 'eu'`: never listed below)
//! ```
//! At level `i` only the partition filters whose columns are all among the first `i + 1`
//! keys are evaluated; a directory whose values make one of them false or NULL is pruned and
//! its children are never listed. The default local store is listed with `std::fs`
//! ([`crate::local_listing`]), the whole table at once, on the planning thread or as one
//! task on the blocking pool ([`INLINE_LISTING`]; a task per directory would hand every
//! listing over to another thread and back). A [`Lister`] lists through what the table keeps
//! between listings ([`ListingMemory`]): the [`ListingCache`] when the session keeps
//! listings, the subdirectories of unchanged local directories ([`KeptChildren`]), the
//! directories' typed values ([`TypedValues`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use arrow::array::{Array, BooleanArray, RecordBatch, new_null_array};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_datafusion_err, exec_err};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::physical_expr::utils::collect_columns;
use datafusion::physical_plan::PhysicalExpr;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore};

use crate::kept_children::KeptChildren;
use crate::listing_cache::{Listed, ListingCache};
use crate::local_listing::{FileAmongPartitions, LocalLister, on_blocking_pool};
use crate::partition::{Segment, Shown, TypedValues, is_hidden, parse_segment};

/// One partition directory and its values (in partition column order).
#[derive(Debug, Clone)]
pub struct Partition {
    /// Directory path.
    pub path: Path,
    /// Raw values; `None` is NULL.
    pub values: Vec<Option<String>>,
}

/// The files of a listed table.
#[derive(Debug, Default)]
pub struct Listing {
    /// Data files with their partition.
    pub files: Vec<(ObjectMeta, Arc<Partition>)>,
    /// Directories considered.
    pub partitions_total: usize,
    /// Directories pruned.
    pub partitions_pruned: usize,
    /// Directories whose listing came from the table's listing cache.
    pub directories_cached: usize,
}

/// What a table keeps from one listing to the next. Clones share it.
#[derive(Debug, Clone)]
pub struct ListingMemory {
    /// Listings kept for the session's time to live (opt-in).
    listings: ListingCache,
    /// Subdirectories of unchanged local directories.
    kept_children: KeptChildren,
    /// Partition directories' values, typed.
    typed_values: TypedValues,
    /// How long the last listing of the default local store took, in microseconds
    /// (`u64::MAX` before the first): where the next one runs.
    local_micros: Arc<AtomicU64>,
}

impl ListingMemory {
    /// A memory that knows nothing yet.
    pub fn new() -> Self {
        Self {
            listings: ListingCache::default(),
            kept_children: KeptChildren::default(),
            typed_values: TypedValues::default(),
            local_micros: Arc::new(AtomicU64::new(u64::MAX)),
        }
    }

    /// A memory keeping the subdirectories of unchanged local directories in `kept`.
    #[cfg(test)]
    fn with_kept_children(kept: KeptChildren) -> Self {
        Self {
            kept_children: kept,
            ..Self::new()
        }
    }

    /// Keeps `objects`, every object under `root` listed at `at`, as `root`'s recursive
    /// listing: a session that keeps listings (`lakescan.listing_cache_ttl_seconds`) serves
    /// a query within the time to live from it, as if the query had listed at `at`. `CREATE`
    /// keeps the listing it inferred the schema from, so the first query does not list again.
    pub fn keep_whole(&self, root: &Path, at: Instant, objects: Arc<Vec<ObjectMeta>>) {
        self.listings.put(root.clone(), at, Listed::Files(objects));
    }

    /// Whether the last local listing took less than [`INLINE_LISTING`].
    fn lists_inline(&self) -> bool {
        self.local_micros.load(Ordering::Relaxed) < INLINE_LISTING.as_micros() as u64
    }

    fn record_local(&self, took: Duration) {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.local_micros.store(micros, Ordering::Relaxed);
    }
}

impl Default for ListingMemory {
    fn default() -> Self {
        Self::new()
    }
}

/// A local listing that took less than this last time runs on the planning thread, as the
/// planner's own CPU work does: handing it to the blocking pool and back costs two thread
/// wake-ups, as much as listing a partition of a few dozen page-cached files. A slower one
/// (a cold disk, a network file system), and a table's first, runs on the blocking pool.
pub const INLINE_LISTING: Duration = Duration::from_micros(500);

/// Lists the directories of one store, through what a table keeps between listings.
pub struct Lister {
    store: Arc<dyn ObjectStore>,
    /// What messages show before the store's paths: `/` for the local file system, the
    /// store's URL when known, else nothing.
    prefix: String,
    /// Set when `store` is the default local store (listed with `std::fs`).
    local: Option<LocalLister>,
    memory: ListingMemory,
    /// Time to live of the kept listings (zero: none kept).
    ttl: Duration,
    cached: AtomicUsize,
    /// Every object under the table's root, sorted by path, when one recursive listing
    /// serves the whole table (`Snapshot`).
    snapshot: Option<Snapshot>,
}

/// Every object under a table's root from one recursive listing: what an object store
/// answers in one request per 1 000 objects, where listing level by level costs one request
/// per directory. Used when no partition filter can prune a directory (all are listed
/// anyway); [`Lister::children`] and [`Lister::files`] are then answered from it.
struct Snapshot {
    /// Sorted by location.
    objects: Arc<Vec<ObjectMeta>>,
}

impl Snapshot {
    fn new(mut objects: Arc<Vec<ObjectMeta>>) -> Self {
        if !objects.is_sorted_by(|a, b| a.location <= b.location) {
            Arc::make_mut(&mut objects).sort_unstable_by(|a, b| a.location.cmp(&b.location));
        }
        Self { objects }
    }

    /// The objects strictly under `dir`.
    fn under(&self, dir: &Path) -> &[ObjectMeta] {
        let prefix = format!("{}/", dir.as_ref());
        let prefix = prefix.trim_start_matches('/');
        let start = self
            .objects
            .partition_point(|o| o.location.as_ref() < prefix);
        let len = self.objects[start..]
            .iter()
            .take_while(|o| o.location.as_ref().starts_with(prefix))
            .count();
        &self.objects[start..start + len]
    }

    /// The subdirectories of `dir`, as `list_with_delimiter` gives them; a visible file
    /// directly in `dir` is a [`FileAmongPartitions`] error.
    fn children(&self, dir: &Path) -> object_store::Result<Vec<Path>> {
        let mut dirs: Vec<Path> = vec![];
        for object in self.under(dir) {
            let Some(mut relative) = object.location.prefix_match(dir) else {
                continue;
            };
            match (relative.next(), relative.next()) {
                (None, _) => {}
                (Some(_file), None) => {
                    FileAmongPartitions::check(&object.location, object.size, "lakescan")?
                }
                (Some(first), Some(_)) => {
                    let child = dir.clone().join(first);
                    if dirs.last() != Some(&child) {
                        dirs.push(child);
                    }
                }
            }
        }
        Ok(dirs)
    }
}

impl Lister {
    /// Lists `store`, with and into `memory` (the table's).
    pub fn new(store: &Arc<dyn ObjectStore>, memory: &ListingMemory) -> Self {
        let local = LocalLister::of(store).map(|l| l.keeping(&memory.kept_children));
        Self {
            store: Arc::clone(store),
            prefix: match local {
                Some(_) => "/".to_string(),
                None => String::new(),
            },
            local,
            memory: memory.clone(),
            ttl: Duration::ZERO,
            cached: AtomicUsize::new(0),
            snapshot: None,
        }
    }

    /// Answers this table listing from `objects`, every object under the table's root
    /// (`Snapshot`): no request.
    pub fn with_objects(mut self, objects: Arc<Vec<ObjectMeta>>) -> Self {
        self.snapshot = Some(Snapshot::new(objects));
        self
    }

    /// The recursive listing of `root` kept as its files ([`ListingMemory::keep_whole`]), for a
    /// partitioned table's `Snapshot`.
    fn kept_whole(&self, root: &Path, keys: &[String]) -> Option<Arc<Vec<ObjectMeta>>> {
        // An unpartitioned table's root listing is its files: `files` serves it.
        if keys.is_empty() || self.ttl.is_zero() {
            return None;
        }
        let Listed::Files(objects) = self.memory.listings.get(root, self.ttl)? else {
            return None;
        };
        self.cached.fetch_add(1, Ordering::Relaxed);
        Some(objects)
    }

    /// Messages name paths under `url` (the store's URL) as users write them.
    pub fn shown_under(mut self, url: &ObjectStoreUrl) -> Self {
        self.prefix = match url.as_str() {
            "file:///" => "/".to_string(),
            other => other.to_string(),
        };
        self
    }

    /// `path` as messages show it.
    fn shown<'a>(&'a self, path: &'a str) -> Shown<'a> {
        Shown {
            prefix: &self.prefix,
            path,
        }
    }

    /// Serves listings younger than `ttl` from the memory's listing cache and keeps new
    /// ones there (a zero `ttl`: none).
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// `dir`'s listing from the cache, counted.
    fn kept(&self, dir: &Path) -> Option<Listed> {
        if self.ttl.is_zero() {
            return None;
        }
        let listed = self.memory.listings.get(dir, self.ttl)?;
        self.cached.fetch_add(1, Ordering::Relaxed);
        Some(listed)
    }

    fn keep(&self, dir: &Path, at: Instant, listed: Listed) {
        if !self.ttl.is_zero() {
            self.memory.listings.put(dir.clone(), at, listed);
        }
    }

    /// The subdirectories of `dir`, a partition level: a visible file there is a
    /// [`FileAmongPartitions`] error.
    async fn children(&self, dir: &Path) -> object_store::Result<Arc<Vec<Path>>> {
        if let Some(Listed::Children(dirs)) = self.kept(dir) {
            return Ok(dirs);
        }
        if let Some(snapshot) = &self.snapshot {
            return snapshot.children(dir).map(Arc::new);
        }
        // Stamped before the request: a file added while it runs may be missing from it.
        let at = Instant::now();
        let dirs = match &self.local {
            Some(local) => local.children(dir).await?,
            None => {
                let listed = self.store.list_with_delimiter(Some(dir)).await?;
                for file in &listed.objects {
                    FileAmongPartitions::check(&file.location, file.size, "lakescan")?;
                }
                Arc::new(listed.common_prefixes)
            }
        };
        self.keep(dir, at, Listed::Children(Arc::clone(&dirs)));
        Ok(dirs)
    }

    /// The files under `dir`, recursively.
    async fn files(&self, dir: &Path) -> object_store::Result<Arc<Vec<ObjectMeta>>> {
        if let Some(Listed::Files(files)) = self.kept(dir) {
            return Ok(files);
        }
        if let Some(snapshot) = &self.snapshot {
            return Ok(Arc::new(snapshot.under(dir).to_vec()));
        }
        let at = Instant::now();
        let files: Vec<ObjectMeta> = match &self.local {
            Some(local) => local.files(dir).await?,
            None => self.store.list(Some(dir)).try_collect().await?,
        };
        let files = Arc::new(files);
        self.keep(dir, at, Listed::Files(Arc::clone(&files)));
        Ok(files)
    }
}

/// Partition filters compiled over the partition schema.
#[derive(Clone)]
pub struct PartitionFilters {
    schema: SchemaRef,
    filters: Vec<(Arc<dyn PhysicalExpr>, usize)>, // (filter, highest column index used)
}

impl PartitionFilters {
    /// `filters` refer to `schema` (the partition columns, in key order).
    pub fn new(schema: SchemaRef, filters: Vec<Arc<dyn PhysicalExpr>>) -> Self {
        let filters = filters
            .into_iter()
            .map(|f| {
                let max = collect_columns(&f)
                    .iter()
                    .map(|c| c.index())
                    .max()
                    .unwrap_or(0);
                (f, max)
            })
            .collect();
        Self { schema, filters }
    }

    /// Whether there is no filter (nothing can be pruned while listing).
    pub fn is_empty(&self) -> bool {
        self.filters.is_empty()
    }

    /// Partition columns.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Which directories of one level every filter decidable from the first `level + 1`
    /// values keeps; false or NULL prunes. `value(row, column)` is the value of column
    /// `column <= level` of directory `row` of `rows`. The filters are evaluated once per
    /// level, over one row per directory.
    fn keeps<'v>(
        &self,
        level: usize,
        rows: usize,
        value: impl Fn(usize, usize) -> &'v ScalarValue,
    ) -> Result<Vec<bool>> {
        let mut keep = vec![true; rows];
        let decidable: Vec<_> = self
            .filters
            .iter()
            .filter(|(_, max)| *max <= level)
            .collect();
        if decidable.is_empty() || rows == 0 {
            return Ok(keep);
        }
        let columns = self
            .schema
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if i <= level {
                    ScalarValue::iter_to_array((0..rows).map(|row| value(row, i).clone()))
                } else {
                    Ok(new_null_array(f.data_type(), rows))
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let batch = RecordBatch::try_new(Arc::clone(&self.schema), columns)?;
        for (filter, _) in decidable {
            let result = filter.evaluate(&batch)?.into_array(rows)?;
            let Some(result) = result.as_any().downcast_ref::<BooleanArray>() else {
                return exec_err!("a partition filter is not boolean: {filter}");
            };
            for (row, k) in keep.iter_mut().enumerate() {
                *k &= result.is_valid(row) && result.value(row);
            }
        }
        Ok(keep)
    }
}

/// A partition directory being listed, with its values typed.
struct Candidate {
    partition: Partition,
    typed: Vec<ScalarValue>,
}

/// Directories listed at once (a local store lists each on its blocking pool, a remote one
/// waits for each response): DataFusion's `meta_fetch_concurrency` default.
const CONCURRENT_LISTS: usize = 32;

/// Lists `root` for partition keys `keys`, pruning with `filters`. The default local store
/// is listed in one go, on this thread or as one task on the blocking pool
/// ([`INLINE_LISTING`]); any other store one request per directory, the directories of one
/// level concurrently, or, when no filter can prune, in one recursive listing
/// (`Snapshot`).
pub async fn list_table(
    lister: Lister,
    root: &Path,
    keys: &[String],
    filters: &PartitionFilters,
) -> Result<Listing> {
    let Some(local) = lister.local.clone() else {
        // Nothing to prune: every directory would be listed, so one recursive listing of
        // the root is fewer requests (one per 1 000 objects). A session keeping listings
        // keeps it whole, for its later queries with or without filters.
        let whole = lister.kept_whole(root, keys);
        let lister = match whole {
            Some(objects) => lister.with_objects(objects),
            None if lister.snapshot.is_none() && filters.is_empty() && !keys.is_empty() => {
                let at = Instant::now();
                let objects = list_whole(&lister.store, root).await?;
                if !lister.ttl.is_zero() {
                    lister.memory.keep_whole(root, at, Arc::clone(&objects));
                }
                lister.with_objects(objects)
            }
            None => lister,
        };
        return list_levels(&lister, root, keys, filters).await;
    };
    let memory = lister.memory.clone();
    let lister = Lister {
        local: Some(local.inline()),
        ..lister
    };
    let started = Instant::now();
    // Every request of the inline lister is ready when first polled: the stream
    // combinators of `list_levels` run to completion without waiting.
    let listing = if memory.lists_inline() {
        list_levels(&lister, root, keys, filters).await
    } else {
        let (root, keys, filters) = (root.clone(), keys.to_vec(), filters.clone());
        let listing = on_blocking_pool(move || {
            futures::executor::block_on(list_levels(&lister, &root, &keys, &filters))
        });
        listing
            .await
            .map_err(|e| datafusion::common::DataFusionError::External(Box::new(e)))?
    };
    memory.record_local(started.elapsed());
    listing
}

/// Every object under `root`, sorted by location: one request per 1 000 objects.
pub async fn list_whole(
    store: &Arc<dyn ObjectStore>,
    root: &Path,
) -> object_store::Result<Arc<Vec<ObjectMeta>>> {
    let mut objects: Vec<ObjectMeta> = store.list(Some(root)).try_collect().await?;
    objects.sort_unstable_by(|a, b| a.location.cmp(&b.location));
    Ok(Arc::new(objects))
}

/// [`list_table`] with `lister`'s requests.
async fn list_levels(
    lister: &Lister,
    root: &Path,
    keys: &[String],
    filters: &PartitionFilters,
) -> Result<Listing> {
    let typed = &lister.memory.typed_values;
    let mut listing = Listing::default();
    let mut level: Vec<Candidate> = vec![Candidate {
        partition: Partition {
            path: root.clone(),
            values: vec![],
        },
        typed: vec![],
    }];
    for (depth, key) in keys.iter().enumerate() {
        let listed: Vec<(Candidate, Arc<Vec<Path>>)> = futures::stream::iter(level)
            .map(|parent| async move {
                let children = lister.children(&parent.partition.path).await?;
                Ok::<_, object_store::Error>((parent, children))
            })
            .buffered(CONCURRENT_LISTS)
            .try_collect()
            .await
            .map_err(|e| file_among_partitions(lister, e, keys))?;
        let field = filters.schema().field(depth);
        // This level's directories: (parent, directory, raw value, typed value).
        let mut children = vec![];
        for (parent, (_, dirs)) in listed.iter().enumerate() {
            for dir in dirs.iter() {
                let Some(segment) = dir.filename() else {
                    continue;
                };
                let value = match parse_segment(segment, key) {
                    Segment::Value(value) => value,
                    Segment::NotThisKey if is_hidden(segment) => continue,
                    // A directory that is not a partition of this level would be skipped
                    // with its files: the table is malformed, or declared with other keys.
                    Segment::NotThisKey => {
                        let dir = lister.shown(dir.as_ref());
                        return exec_err!(
                            "partition directory '{dir}' is not named '{key}=<value>': the \
                             table is partitioned by ({}), so every directory at this level \
                             is '{key}=…' (hidden ones start with '_' or '.')",
                            keys.join(", ")
                        );
                    }
                    Segment::NotUtf8 => {
                        let dir = lister.shown(dir.as_ref());
                        return exec_err!(
                            "partition directory '{dir}': the URL-escaped value of partition \
                             column '{key}' is not valid UTF-8"
                        );
                    }
                };
                // A value that is not of the column's type is an error even when no filter
                // or projection uses the column: the table is malformed.
                let value_type = field.data_type();
                let shown = lister.shown(dir.as_ref());
                let typed = typed.typed(depth, shown, key, value.as_deref(), value_type)?;
                children.push((parent, dir, value, typed));
            }
        }
        let keep = filters.keeps(depth, children.len(), |row, column| {
            let (parent, _, _, typed) = &children[row];
            match listed[*parent].0.typed.get(column) {
                Some(inherited) => inherited,
                None => typed,
            }
        })?;
        listing.partitions_total += children.len();
        listing.partitions_pruned += keep.iter().filter(|k| !**k).count();
        // Only the directories kept become candidates of the next level.
        let kept = children.into_iter().zip(keep).filter(|(_, keep)| *keep);
        level = kept
            .map(|((parent, dir, value, typed), _)| {
                let parent = &listed[parent].0;
                let mut candidate = Candidate {
                    partition: Partition {
                        path: dir.clone(),
                        values: Vec::with_capacity(depth + 1),
                    },
                    typed: Vec::with_capacity(depth + 1),
                };
                candidate
                    .partition
                    .values
                    .extend_from_slice(&parent.partition.values);
                candidate.partition.values.push(value);
                candidate.typed.extend_from_slice(&parent.typed);
                candidate.typed.push(typed);
                candidate
            })
            .collect();
    }
    let listed: Vec<(Arc<Partition>, Arc<Vec<ObjectMeta>>)> = futures::stream::iter(level)
        .map(|Candidate { partition, .. }| async move {
            let files = lister.files(&partition.path).await?;
            Ok::<_, object_store::Error>((Arc::new(partition), files))
        })
        .buffered(CONCURRENT_LISTS)
        .try_collect()
        .await?;
    listing
        .files
        .reserve(listed.iter().map(|(_, files)| files.len()).sum());
    for (partition, files) in listed {
        // A listing the cache does not share is moved, not copied.
        let files = Arc::try_unwrap(files).unwrap_or_else(|shared| shared.to_vec());
        for meta in files {
            if is_data_file(&meta, &partition.path) {
                listing.files.push((meta, Arc::clone(&partition)));
            }
        }
    }
    listing.directories_cached = lister.cached.load(Ordering::Relaxed);
    // Paths are unique: an unstable sort is deterministic.
    listing
        .files
        .sort_unstable_by(|a, b| a.0.location.cmp(&b.0.location));
    Ok(listing)
}

/// A listing error, as an error naming a file that is not in a partition directory where
/// that is what it is.
fn file_among_partitions(
    lister: &Lister,
    e: object_store::Error,
    keys: &[String],
) -> DataFusionError {
    match FileAmongPartitions::of(&e) {
        Some(file) => exec_datafusion_err!(
            "file '{}' is not in a partition directory: the table is partitioned by ({}), \
             so only its '{}=…/…' directories hold data files (hidden files start with '_' or \
             '.')",
            lister.shown(file.as_ref()),
            keys.join(", "),
            keys.join("=…/")
        ),
        None => e.into(),
    }
}

/// Hidden files and directories (`_SUCCESS`, `.crc`, `_temporary/`) are not data, nor is
/// the marker of the directory itself: the empty `dir/` object that S3 consoles, Hadoop's
/// S3A and pyarrow's S3 file system create, which a store lists as `dir`.
fn is_data_file(meta: &ObjectMeta, under: &Path) -> bool {
    if meta.size == 0 && meta.location == *under {
        return false;
    }
    let Some(relative) = meta.location.prefix_match(under) else {
        return false;
    };
    relative.into_iter().all(|part| {
        let s = part.as_ref();
        !s.starts_with('_') && !s.starts_with('.')
    })
}

/// The schema of partition columns.
pub fn partition_schema(columns: &[(String, DataType)]) -> SchemaRef {
    Arc::new(Schema::new(
        columns
            .iter()
            .map(|(n, t)| Field::new(n, t.clone(), true))
            .collect::<Vec<_>>(),
    ))
}

/// Hive ACID (transactional) tables keep their rows in `base_N`, `delta_N_M` and
/// `delete_delta_N_M` directories, merged by transaction at read time: reading their files
/// as a plain table's would return deleted and superseded rows. `NotImplemented` naming the
/// table when one of `files` (under `root`) lies in such a directory.
pub(crate) fn check_not_acid<'a>(
    name: &str,
    root: &Path,
    files: impl IntoIterator<Item = &'a ObjectMeta>,
) -> Result<()> {
    let acid = files.into_iter().find(|m| {
        m.location.prefix_match(root).is_some_and(|mut parts| {
            parts.any(|p| {
                let p = p.as_ref();
                p.starts_with("base_") || p.starts_with("delta_") || p.starts_with("delete_delta_")
            })
        })
    });
    match acid {
        Some(m) => Err(datafusion::error::DataFusionError::NotImplemented(format!(
            "HIVE table '{name}' is a Hive ACID (transactional) table ('{}' is in a base or \
             delta directory): lakescan does not read Hive ACID tables; see the user guide",
            m.location
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests;
