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
//! ([`crate::local_listing`]). A [`Lister`] serves directories from the table's
//! [`ListingCache`] when the session keeps listings.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use arrow::array::{Array, BooleanArray, RecordBatch, new_null_array};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::{Result, ScalarValue, exec_err};
use datafusion::physical_expr::utils::collect_columns;
use datafusion::physical_plan::PhysicalExpr;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore};

use crate::listing_cache::{Listed, ListingCache};
use crate::local_listing::LocalLister;
use crate::partition::{parse_segment, typed_value};

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

/// Lists the directories of one store, through a table's listing cache when one is given.
pub struct Lister<'a> {
    store: &'a Arc<dyn ObjectStore>,
    /// Set when `store` is the default local store (listed with `std::fs`).
    local: Option<LocalLister>,
    cache: Option<(&'a ListingCache, Duration)>,
    cached: AtomicUsize,
}

impl<'a> Lister<'a> {
    /// Lists `store` at every call.
    pub fn new(store: &'a Arc<dyn ObjectStore>) -> Self {
        Self {
            store,
            local: LocalLister::of(store),
            cache: None,
            cached: AtomicUsize::new(0),
        }
    }

    /// Serves listings younger than `ttl` from `cache` and keeps new ones there (a zero
    /// `ttl`: no cache).
    pub fn with_cache(mut self, cache: &'a ListingCache, ttl: Duration) -> Self {
        self.cache = (!ttl.is_zero()).then_some((cache, ttl));
        self
    }

    /// `dir`'s listing from the cache, counted.
    fn kept(&self, dir: &Path) -> Option<Listed> {
        let (cache, ttl) = self.cache?;
        let listed = cache.get(dir, ttl)?;
        self.cached.fetch_add(1, Ordering::Relaxed);
        Some(listed)
    }

    fn keep(&self, dir: &Path, at: Instant, listed: Listed) {
        if let Some((cache, _)) = self.cache {
            cache.put(dir.clone(), at, listed);
        }
    }

    /// The subdirectories of `dir`.
    async fn children(&self, dir: &Path) -> object_store::Result<Arc<Vec<Path>>> {
        if let Some(Listed::Children(dirs)) = self.kept(dir) {
            return Ok(dirs);
        }
        // Stamped before the request: a file added while it runs may be missing from it.
        let at = Instant::now();
        let dirs = Arc::new(match self.local {
            Some(local) => local.children(dir).await?,
            None => {
                self.store
                    .list_with_delimiter(Some(dir))
                    .await?
                    .common_prefixes
            }
        });
        self.keep(dir, at, Listed::Children(Arc::clone(&dirs)));
        Ok(dirs)
    }

    /// The files under `dir`, recursively.
    async fn files(&self, dir: &Path) -> object_store::Result<Arc<Vec<ObjectMeta>>> {
        if let Some(Listed::Files(files)) = self.kept(dir) {
            return Ok(files);
        }
        let at = Instant::now();
        let files: Vec<ObjectMeta> = match self.local {
            Some(local) => local.files(dir).await?,
            None => self.store.list(Some(dir)).try_collect().await?,
        };
        let files = Arc::new(files);
        self.keep(dir, at, Listed::Files(Arc::clone(&files)));
        Ok(files)
    }
}

/// Partition filters compiled over the partition schema.
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

    /// Partition columns.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Which of `candidates` (directories of one level, `level + 1` values each) every
    /// filter decidable from the first `level + 1` values keeps; false or NULL prunes. The
    /// filters are evaluated once per level, over one row per directory.
    fn keeps(&self, level: usize, candidates: &[Candidate]) -> Result<Vec<bool>> {
        let mut keep = vec![true; candidates.len()];
        let decidable: Vec<_> = self
            .filters
            .iter()
            .filter(|(_, max)| *max <= level)
            .collect();
        if decidable.is_empty() || candidates.is_empty() {
            return Ok(keep);
        }
        let rows = candidates.len();
        let columns = self
            .schema
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if i <= level {
                    ScalarValue::iter_to_array(candidates.iter().map(|c| c.typed[i].clone()))
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

/// Lists `root` for partition keys `keys`, pruning with `filters`; the directories of one
/// level are listed concurrently, in order.
pub async fn list_table(
    lister: &Lister<'_>,
    root: &Path,
    keys: &[String],
    filters: &PartitionFilters,
) -> Result<Listing> {
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
            .await?;
        let field = filters.schema().field(depth);
        let mut candidates = vec![];
        for (parent, children) in listed {
            for dir in children.iter() {
                let Some(segment) = dir.filename() else {
                    continue;
                };
                let Some(value) = parse_segment(segment, key) else {
                    continue;
                };
                // A value that is not of the column's type is an error even when no filter
                // or projection uses the column: the table is malformed.
                let typed = typed_value(dir.as_ref(), key, value.as_deref(), field.data_type())?;
                let mut candidate = Candidate {
                    partition: Partition {
                        path: dir.clone(),
                        values: parent.partition.values.clone(),
                    },
                    typed: parent.typed.clone(),
                };
                candidate.partition.values.push(value);
                candidate.typed.push(typed);
                candidates.push(candidate);
            }
        }
        let keep = filters.keeps(depth, &candidates)?;
        listing.partitions_total += candidates.len();
        listing.partitions_pruned += keep.iter().filter(|k| !**k).count();
        level = candidates
            .into_iter()
            .zip(keep)
            .filter_map(|(candidate, keep)| keep.then_some(candidate))
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
    for (partition, files) in listed {
        for meta in files.iter() {
            if is_data_file(&meta.location, &partition.path) {
                listing.files.push((meta.clone(), Arc::clone(&partition)));
            }
        }
    }
    listing.directories_cached = lister.cached.load(Ordering::Relaxed);
    listing
        .files
        .sort_by(|a, b| a.0.location.cmp(&b.0.location));
    Ok(listing)
}

/// Hidden files and directories (`_SUCCESS`, `.crc`, `_temporary/`) are not data.
fn is_data_file(location: &Path, under: &Path) -> bool {
    let Some(relative) = location.prefix_match(under) else {
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
