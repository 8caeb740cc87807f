//! Split readers of Iceberg tables: the core Parquet reader (columns matched by field id),
//! with the split's delete files loaded first, and the equality-delete stage.
//!
//! ```text
//!  add_split ─▶ stages(): EqualityDeleteStage over shared key sets (not loaded yet)
//!            ─▶ create() ─▶ prepare(): LoadPositionDeletes: the deleted positions of the
//!                               │  data file (position-delete files, each read once per
//!                               │  scan; its deletion vector) → FileSplit::deleted_rows
//!                               ├─ Parquet prepare (footer, binding, pruning; the deleted
//!                               │  rows become a row selection: never decoded)
//!                               └─ rows to read ─▶ LoadEqualityDeletes: key sets of the
//!                                  split's equality-delete sets, each read once per scan
//!  next ─▶ Parquet batches ─▶ EqualityDeleteStage ─▶ residual ─▶ P
//! ```

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use datafusion::common::{Result, internal_err};
use lakescan_core::parquet::ParquetSplitReader;
use lakescan_core::scan_spec::ScanSpec;
use lakescan_core::source::{
    BatchStage, Prepared, ReaderBatch, Refreshed, SplitContext, SplitFilters, SplitReader,
    SplitReaderFactory, StageSlot,
};
use lakescan_core::split::{FileSplit, SplitExtension};

use crate::deletes::equality::{
    EqualityDeleteSet, EqualityDeleteStage, SharedKeySet, key_types, load_key_set,
};
use crate::deletes::position::{PositionDeleteCache, deleted_rows};
use crate::deletes::{DeleteFile, DeleteStores};
use crate::paths::{FileLocation, PathResolver};

/// What an Iceberg split carries besides the core split: what its manifest entry says of
/// its data file, and its delete files.
#[derive(Debug, Clone)]
pub struct IcebergSplit {
    /// The data file's data sequence number (0 in v1 tables).
    pub data_sequence_number: i64,
    /// The partition spec the data file was written with.
    pub spec_id: i32,
    /// The data file's partition under that spec.
    pub partition: iceberg::spec::Struct,
    /// The row id of the data file's first row (v3 row lineage), assigned or inherited.
    pub first_row_id: Option<i64>,
    /// Equality-delete files that apply to the split's data file, by key.
    pub equality: Vec<Arc<EqualityDeleteSet>>,
    /// Position-delete files and deletion vectors that apply to it.
    pub position_deletes: Vec<Arc<DeleteFile>>,
    /// The data file, as position-delete files name it.
    pub data_location: FileLocation,
    /// The data file's path as its manifest wrote it (messages).
    pub data_written: String,
}

impl SplitExtension for IcebergSplit {}

fn iceberg_split(split: &FileSplit) -> Option<&IcebergSplit> {
    let extension: &dyn Any = split.extension.as_deref()?;
    extension.downcast_ref::<IcebergSplit>()
}

/// Creates Iceberg split readers; shares key sets and position-delete files between the
/// splits of one scan.
#[derive(Debug)]
pub struct IcebergSplitReaderFactory {
    key_sets: Mutex<HashMap<Vec<String>, SharedKeySet>>,
    position_deletes: Arc<PositionDeleteCache>,
    paths: PathResolver,
}

impl IcebergSplitReaderFactory {
    /// Readers that resolve the paths in position-delete files with `paths`.
    pub fn new(paths: PathResolver) -> Self {
        Self {
            key_sets: Mutex::default(),
            position_deletes: Arc::default(),
            paths,
        }
    }

    /// The shared key set of `set` (created empty the first time).
    fn key_set(&self, set: &EqualityDeleteSet) -> Result<SharedKeySet> {
        let Ok(mut sets) = self.key_sets.lock() else {
            return internal_err!("the equality-delete cache was poisoned by a panic");
        };
        Ok(Arc::clone(sets.entry(set.cache_key()).or_default()))
    }
}

impl SplitReaderFactory for IcebergSplitReaderFactory {
    fn create(&self, split: FileSplit, context: SplitContext) -> Result<Box<dyn SplitReader>> {
        let mut sets = vec![];
        if let Some(iceberg) = iceberg_split(&split) {
            for set in &iceberg.equality {
                sets.push((Arc::clone(set), self.key_set(set)?));
            }
        }
        Ok(Box::new(IcebergSplitReader {
            split: Some(split),
            inner: None,
            sets,
            position_deletes: Arc::clone(&self.position_deletes),
            paths: self.paths.clone(),
            context,
        }))
    }

    fn stages(&self, split: &FileSplit, spec: &ScanSpec) -> Result<Vec<BatchStage>> {
        let Some(iceberg) = iceberg_split(split) else {
            return Ok(vec![]);
        };
        if iceberg.equality.is_empty() {
            return Ok(vec![]);
        }
        let mut sets = vec![];
        for set in &iceberg.equality {
            let mut channels = vec![];
            for (name, _) in &set.columns {
                match spec.field(name).and_then(|(_, f)| f.channel) {
                    Some(c) => channels.push(c),
                    None => {
                        return internal_err!(
                            "equality-delete key column '{name}' is not a channel of the scan"
                        );
                    }
                }
            }
            sets.push((channels, self.key_set(set)?));
        }
        let stage = EqualityDeleteStage::new(sets, split.file_path.to_string());
        Ok(vec![BatchStage {
            slot: StageSlot::EqualityDeletes,
            transform: Box::new(stage),
        }])
    }
}

/// Reads one split of an Iceberg data file.
pub struct IcebergSplitReader {
    /// The split, until `prepare` hands it to the Parquet reader.
    split: Option<FileSplit>,
    inner: Option<ParquetSplitReader>,
    sets: Vec<(Arc<EqualityDeleteSet>, SharedKeySet)>,
    position_deletes: Arc<PositionDeleteCache>,
    paths: PathResolver,
    context: SplitContext,
}

/// LoadPositionDeletes: the deleted rows of the split's data file.
async fn load_position_deletes(
    split: &mut FileSplit,
    context: &SplitContext,
    paths: &PathResolver,
    cache: &PositionDeleteCache,
) -> Result<()> {
    let Some(iceberg) = iceberg_split(split) else {
        return Ok(());
    };
    if iceberg.position_deletes.is_empty() {
        return Ok(());
    }
    let metrics = &context.metrics;
    let _timer = metrics.time_loading_deletes.timer();
    let (rows, loaded) = deleted_rows(
        &delete_stores(context, &iceberg.data_location),
        paths,
        cache,
        &iceberg.data_location,
        &iceberg.data_written,
        &iceberg.position_deletes,
    )
    .await?;
    metrics.delete_files_loaded.add(loaded);
    split.deleted_rows = Some(rows);
    Ok(())
}

/// Where the delete files of a split of the data file at `data` are read from: its store
/// (the split's), or the session's store of their own URL.
fn delete_stores(context: &SplitContext, data: &FileLocation) -> DeleteStores {
    DeleteStores::new(
        data.store.clone(),
        Arc::clone(&context.store),
        context.object_stores.clone(),
    )
}

#[async_trait]
impl SplitReader for IcebergSplitReader {
    async fn prepare(&mut self) -> Result<Prepared> {
        let Some(mut split) = self.split.take() else {
            return internal_err!("an Iceberg split was prepared twice");
        };
        load_position_deletes(
            &mut split,
            &self.context,
            &self.paths,
            &self.position_deletes,
        )
        .await?;
        let stores = iceberg_split(&split).map(|i| delete_stores(&self.context, &i.data_location));
        let inner = self
            .inner
            .insert(ParquetSplitReader::new(split, self.context.clone()));
        let prepared = inner.prepare().await?;
        if prepared != Prepared::Read {
            return Ok(prepared);
        }
        // LoadDeletes: only splits with rows to read load their delete files.
        for (set, cell) in &self.sets {
            let context = &self.context;
            let Some(stores) = &stores else {
                return internal_err!(
                    "an Iceberg split with equality deletes has no Iceberg facts"
                );
            };
            cell.get_or_try_init(|| async {
                let _timer = context.metrics.time_loading_deletes.timer();
                let types = key_types(set, &context.spec)?;
                let keys = load_key_set(stores, set, &types, &context.memory_pool).await?;
                context.metrics.delete_files_loaded.add(set.files.len());
                Ok::<_, datafusion::error::DataFusionError>(Arc::new(keys))
            })
            .await?;
        }
        Ok(prepared)
    }

    async fn next(&mut self) -> Result<Option<ReaderBatch>> {
        match &mut self.inner {
            Some(inner) => inner.next().await,
            None => internal_err!("an Iceberg split was read before it was prepared"),
        }
    }

    fn refresh_filters(
        &mut self,
        filters: Arc<SplitFilters>,
        generation: u64,
    ) -> Result<Refreshed> {
        match &mut self.inner {
            Some(inner) => inner.refresh_filters(filters, generation),
            None => Ok(Refreshed::NotApplied),
        }
    }
}
