//! The reader seam: what the driver ([`crate::source`]) and the split readers
//! ([`crate::parquet`]) agree on, below both. [`SplitReader`] reads one split;
//! [`TableAdapter`] is where a table format plugs in: the [`DeleteSource`] of a split
//! and the [`BatchStage`]s its batches pass through; [`SplitContext`] is everything a reader
//! needs besides the split.
//!
//! Deletes are a state of the reader, never facts of the split: a reader asks its
//! [`DeleteSource`] for them (`LoadDeletes`) only once pruning left rows to read, so a split
//! that constants, statistics, bloom filters or a dynamic filter prune never loads its delete
//! files.

use std::fmt::Debug;
use std::sync::Arc;

use arrow::array::RecordBatch;
use async_trait::async_trait;
use datafusion::common::{Result, internal_err, not_impl_err};
use datafusion::execution::cache::cache_manager::FileMetadataCache;
use datafusion::execution::memory_pool::MemoryPool;
use datafusion::execution::object_store::{ObjectStoreRegistry, ObjectStoreUrl};
use datafusion::physical_plan::metrics::Count;
use object_store::ObjectStore;

use crate::binding::SplitConstants;
use crate::deleted_rows::DeletedRows;
use crate::metrics::LakeScanMetrics;
use crate::scan_spec::ScanSpec;
use crate::split::FileSplit;
use crate::split_filters::{DynamicFilters, SplitFilters};
use crate::wire::EncodedAdapter;

/// A batch in the reader schema `R` and the rows the reader advanced over to produce it.
#[derive(Debug)]
pub struct ReaderBatch {
    /// Columns of `R`.
    pub batch: RecordBatch,
    /// Rows the reader advanced over (before reader filters).
    pub rows_scanned: usize,
    /// Of those, rows it dropped because they are deleted (counted by the delete metrics,
    /// not as removed by reader filters).
    pub rows_deleted: usize,
}

/// Outcome of preparing a split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prepared {
    /// Rows will be read.
    Read,
    /// A filter rejected a constant of the split (partition value, missing column).
    SkippedByConstant,
    /// Statistics pruned every row group.
    NothingToRead,
    /// The byte range holds no row group (e.g. only the footer).
    EmptyRange,
}

/// Reads one split: open, bind, prune, then yield batches of `R`.
#[async_trait]
pub trait SplitReader: Send {
    /// Opens the file and decides what to read.
    async fn prepare(&mut self) -> Result<Prepared>;
    /// The next batch, or `None` at the end of the split.
    async fn next(&mut self) -> Result<Option<ReaderBatch>>;

    /// The stages the split's deletes add (equality deletes), once prepared; taken once.
    fn take_delete_stages(&mut self) -> Vec<BatchStage> {
        vec![]
    }

    /// The filters in force changed since `prepare` (a dynamic filter moved; `filters` and
    /// `generation` are its new value). The default leaves filtering to the caller.
    fn refresh_filters(
        &mut self,
        _filters: Arc<SplitFilters>,
        _generation: u64,
    ) -> Result<Refreshed> {
        Ok(Refreshed::NotApplied)
    }
}

/// What a reader did with filters that changed after `prepare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refreshed {
    /// Every row the reader yields from now on passes them (it had decoded nothing yet).
    Applied,
    /// Rows already being decoded do not: the caller filters the batches.
    NotApplied,
    /// They reject the split's constants or every row group left: nothing more to read.
    NothingToRead,
}

/// Everything a split reader needs besides the split.
#[derive(Debug, Clone)]
pub struct SplitContext {
    /// Where the file lives.
    pub store: Arc<dyn ObjectStore>,
    /// The scan's requirements.
    pub spec: Arc<ScanSpec>,
    /// The filters in force for this split.
    pub filters: Arc<SplitFilters>,
    /// The split's partition values and info columns, typed.
    pub constants: Arc<SplitConstants>,
    /// Metrics of the partition.
    pub metrics: LakeScanMetrics,
    /// How to read.
    pub options: ReadOptions,
    /// Where readers reserve the memory they hold across batches (equality-delete keys).
    pub memory_pool: Arc<dyn MemoryPool>,
    /// The filters pushed into the scan (over the table schema), when some are dynamic:
    /// readers re-snapshot them between row groups.
    pub dynamic: Option<DynamicFilters>,
    /// Where footers are kept between splits and queries (the session's file metadata
    /// cache); `None`: every split reads its footer.
    pub metadata_cache: Option<Arc<dyn FileMetadataCache>>,
    /// The session's object stores, for files of another store than the scan's (a split's
    /// own store, delete files elsewhere); `None`: the scan's store only.
    pub object_stores: Option<Arc<dyn ObjectStoreRegistry>>,
}

impl SplitContext {
    /// The object store at `url` from the session's registry.
    pub fn object_store(&self, url: &ObjectStoreUrl) -> Result<Arc<dyn ObjectStore>> {
        match &self.object_stores {
            Some(registry) => registry.get_store(url.as_ref()),
            None => internal_err!(
                "a split needs object store {} but its scan was given no store registry",
                url.as_str()
            ),
        }
    }
}

/// Settings of one execution that shape reading (not results).
#[derive(Debug, Clone, Copy)]
pub struct ReadOptions {
    /// Target rows per batch.
    pub batch_size: usize,
    /// See `LakeScanOptions::pushdown_max_keep_ratio`.
    pub pushdown_max_keep_ratio: f64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        let defaults = crate::config::LakeScanOptions::default();
        Self {
            batch_size: 8192,
            pushdown_max_keep_ratio: defaults.pushdown_max_keep_ratio,
        }
    }
}

/// What a table format adds to the reading of its splits: their deletes and the per-batch
/// stages between the reader and the residual. The file format's reader itself is the
/// driver's choice (Parquet).
pub trait TableAdapter: Debug + Send + Sync {
    /// The deletes of `split`, loaded by its reader after pruning; none by default.
    fn deletes(&self, _split: &FileSplit) -> Result<Option<Box<dyn DeleteSource>>> {
        Ok(None)
    }

    /// Per-batch stages this format inserts between the reader and the residual for
    /// `split` (Hive: bucket conversion), in the order they run; the stages of the split's
    /// deletes (Iceberg: equality deletes) run after them. None by default.
    fn stages(&self, _split: &FileSplit, _context: &SplitContext) -> Result<Vec<BatchStage>> {
        Ok(vec![])
    }

    /// The adapter's kind and state, for a plan sent to another process (which rebuilds it
    /// with the decoder of that kind, [`crate::exec::AdapterDecoders`]). By default an adapter
    /// cannot be sent.
    fn encoded(&self) -> Result<EncodedAdapter> {
        not_impl_err!("this lakescan adapter ({self:?}) cannot be sent to another process")
    }
}

/// The adapter of tables that add nothing to their splits' reading: no deletes, no stages
/// (plain Parquet, ORC or Avro files).
#[derive(Debug, Default)]
pub struct PlainAdapter;

impl PlainAdapter {
    /// Its kind on the wire.
    pub const KIND: &'static str = "plain";

    /// The adapter an [`EncodedAdapter`] of [`Self::KIND`] describes (it has no state).
    pub fn decode(_state: &[u8]) -> Result<Arc<dyn TableAdapter>> {
        Ok(Arc::new(Self))
    }
}

impl TableAdapter for PlainAdapter {
    fn encoded(&self) -> Result<EncodedAdapter> {
        Ok(EncodedAdapter {
            kind: Self::KIND.into(),
            state: vec![],
        })
    }
}

/// A transformation of reader batches (schema `R` in and out; it may drop rows).
pub trait BatchTransform: Send {
    /// Applies the stage to one batch.
    fn apply(&mut self, batch: RecordBatch) -> Result<RecordBatch>;
}

/// A [`BatchTransform`] and the metric of the rows it drops, both the adapter's choice.
pub struct BatchStage {
    /// What it does.
    pub transform: Box<dyn BatchTransform>,
    /// Where the rows it drops are counted (`rows_removed_bucket_conversion`,
    /// `rows_deleted_equality`, …).
    pub removed: Count,
}

impl Debug for BatchStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchStage").finish_non_exhaustive()
    }
}
/// The deletes of one split, as its table format knows them (Iceberg: position-delete files,
/// deletion vectors, equality-delete files). Loaded once, by the split's reader, after
/// pruning and only when rows are left to read.
#[async_trait]
pub trait DeleteSource: Debug + Send {
    /// `LoadDeletes`: the split's deleted positions and the stages that drop deleted rows
    /// by value. Counts the delete files it reads in `delete_files_loaded`.
    async fn load(self: Box<Self>, context: &SplitContext) -> Result<Deletes>;
}

/// Deletes loaded for one split: they live in the reader's state until the split ends.
#[derive(Debug, Default)]
pub struct Deletes {
    /// Rows of the file deleted by position (position deletes, deletion vectors): never
    /// decoded.
    pub positions: Option<Arc<DeletedRows>>,
    /// Stages that drop rows by value (equality deletes), run after the adapter's own.
    pub stages: Vec<BatchStage>,
}
