//! What Iceberg adds to the Parquet reader: [`IcebergAdapter`] gives each split
//! its [`IcebergDeletes`], the split's [`DeleteSource`]. Columns are matched by field id by
//! the core reader itself.
//!
//! ```text
//!  start ─▶ deletes(): IcebergDeletes (nothing loaded)
//!  Parquet prepare: footer, binding, pruning ─▶ rows left to read?
//!    └─ LoadDeletes ─▶ IcebergDeletes::load: the deleted positions of the data file
//!                      (position-delete files, each read once per scan; its deletion
//!                      vector), then the key sets of the split's equality-delete sets
//!                      (each read once per scan) ─▶ EqualityDeleteStage
//!  next ─▶ Parquet batches (deleted positions never decoded) ─▶ EqualityDeleteStage
//!        ─▶ residual ─▶ P
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use datafusion::common::{Result, internal_err};
use lakescan_core::api::wire::{self, EncodedAdapter};
use lakescan_core::api::{
    AdapterTable, BatchStage, DeleteSource, DeletedRows, Deletes, FileSplit, SplitContext,
    TableAdapter,
};
use serde::{Deserialize, Serialize};

use crate::deletes::equality::{
    EqualityDeleteSet, EqualityDeleteStage, SharedKeySet, key_types, load_key_set,
};
use crate::deletes::position::{PositionDeleteCache, deleted_rows};
use crate::deletes::{DeleteFile, DeleteStores};
use crate::paths::{FileLocation, PathResolver};

/// The delete files of the splits of one data file: what the adapter keeps for a split
/// that has deletes (named by the split's key in the adapter's [`AdapterTable`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SplitDeletes {
    /// Equality-delete files that apply to the data file, by key.
    pub equality: Vec<Arc<EqualityDeleteSet>>,
    /// Position-delete files and deletion vectors that apply to it.
    pub position_deletes: Vec<Arc<DeleteFile>>,
    /// The data file, as position-delete files name it.
    pub data_location: FileLocation,
    /// The data file's path as its manifest wrote it (messages).
    pub data_written: String,
}

/// Creates Iceberg split readers' deletes; keeps the delete files of the scan's splits and
/// shares key sets and position-delete files between them.
#[derive(Debug)]
pub struct IcebergAdapter {
    deletes: AdapterTable<Arc<SplitDeletes>>,
    key_sets: Mutex<HashMap<Vec<String>, SharedKeySet>>,
    position_deletes: Arc<PositionDeleteCache>,
    paths: PathResolver,
}

impl IcebergAdapter {
    /// Readers of splits whose delete files `deletes` lists (by adapter key), resolving the
    /// paths in position-delete files with `paths`.
    pub fn new(paths: PathResolver, deletes: AdapterTable<Arc<SplitDeletes>>) -> Self {
        Self {
            deletes,
            key_sets: Mutex::default(),
            position_deletes: Arc::default(),
            paths,
        }
    }

    /// Its kind on the wire ([`lakescan_core::api::AdapterDecoders`]).
    pub const KIND: &'static str = "iceberg";

    /// The adapter whose [`TableAdapter::encoded`] state is `state` (its caches
    /// start empty: a task reads each delete file once).
    pub fn decode(state: &[u8]) -> Result<Arc<dyn TableAdapter>> {
        let parts: AdapterParts = wire::decode_body(state, "Iceberg adapter")?;
        Ok(Arc::new(Self::new(parts.paths, parts.deletes)))
    }

    /// The shared key set of `set` (created empty the first time).
    fn key_set(&self, set: &EqualityDeleteSet) -> Result<SharedKeySet> {
        let Ok(mut sets) = self.key_sets.lock() else {
            return internal_err!("the equality-delete cache was poisoned by a panic");
        };
        Ok(Arc::clone(sets.entry(set.cache_key()).or_default()))
    }
}

/// What an [`IcebergAdapter`] carries to another process: the delete files of
/// each data file and how paths resolve, not the caches.
#[derive(Serialize, Deserialize)]
struct AdapterParts {
    paths: PathResolver,
    deletes: AdapterTable<Arc<SplitDeletes>>,
}

impl TableAdapter for IcebergAdapter {
    fn encoded(&self) -> Result<EncodedAdapter> {
        let parts = AdapterParts {
            paths: self.paths.clone(),
            deletes: self.deletes.clone(),
        };
        Ok(EncodedAdapter {
            kind: Self::KIND.into(),
            state: wire::encode_body(&parts)?,
        })
    }

    fn deletes(&self, split: &FileSplit) -> Result<Option<Box<dyn DeleteSource>>> {
        let Some(files) = self.deletes.get(split)? else {
            return Ok(None);
        };
        let mut key_sets = vec![];
        for set in &files.equality {
            key_sets.push(self.key_set(set)?);
        }
        Ok(Some(Box::new(IcebergDeletes {
            files: Arc::clone(files),
            key_sets,
            cache: Arc::clone(&self.position_deletes),
            paths: self.paths.clone(),
        })))
    }
}

/// The delete files of one split of an Iceberg data file, with the scan's caches they are
/// read through; loaded after pruning ([`DeleteSource`]).
#[derive(Debug)]
pub struct IcebergDeletes {
    /// The data file's delete files.
    files: Arc<SplitDeletes>,
    /// The scan's shared key set of each of `files.equality`.
    key_sets: Vec<SharedKeySet>,
    /// The scan's position-delete files, read once each.
    cache: Arc<PositionDeleteCache>,
    paths: PathResolver,
}

impl IcebergDeletes {
    /// `LoadPositionDeletes`: the deleted rows of the split's data file.
    async fn positions(
        &self,
        context: &SplitContext,
        stores: &DeleteStores,
    ) -> Result<Option<Arc<DeletedRows>>> {
        let files = &self.files;
        if files.position_deletes.is_empty() {
            return Ok(None);
        }
        let metrics = &context.metrics;
        let _timer = metrics.time_loading_deletes.timer();
        let (rows, loaded) = deleted_rows(
            stores,
            &self.paths,
            &self.cache,
            (&files.data_location, &files.data_written),
            &files.position_deletes,
            &metrics.delete_reads(),
        )
        .await?;
        metrics.delete_files_loaded.add(loaded);
        Ok(Some(rows))
    }

    /// `LoadEqualityDeletes`: the key sets of the split's equality-delete sets, and the
    /// stage that drops the rows whose key they hold.
    async fn equality_stage(
        &self,
        context: &SplitContext,
        stores: &DeleteStores,
    ) -> Result<Option<BatchStage>> {
        if self.key_sets.is_empty() {
            return Ok(None);
        }
        let mut sets = vec![];
        for (set, cell) in self.files.equality.iter().zip(&self.key_sets) {
            cell.get_or_try_init(|| async {
                let _timer = context.metrics.time_loading_deletes.timer();
                let types = key_types(set, &context.spec)?;
                let keys = load_key_set(
                    stores,
                    set,
                    &types,
                    &context.memory_pool,
                    &context.metrics.delete_reads(),
                )
                .await?;
                context.metrics.delete_files_loaded.add(set.files.len());
                Ok::<_, datafusion::error::DataFusionError>(Arc::new(keys))
            })
            .await?;
            let mut channels = vec![];
            for (name, _) in &set.columns {
                match context.spec.field(name).and_then(|(_, f)| f.channel) {
                    Some(c) => channels.push(c),
                    None => {
                        return internal_err!(
                            "equality-delete key column '{name}' is not a channel of the scan"
                        );
                    }
                }
            }
            sets.push((channels, Arc::clone(cell)));
        }
        let stage = EqualityDeleteStage::new(sets, self.files.data_written.clone());
        Ok(Some(BatchStage {
            transform: Box::new(stage),
            removed: context.metrics.rows_deleted_equality.clone(),
        }))
    }
}

#[async_trait]
impl DeleteSource for IcebergDeletes {
    async fn load(self: Box<Self>, context: &SplitContext) -> Result<Deletes> {
        let stores = DeleteStores::new(
            self.files.data_location.store.clone(),
            Arc::clone(&context.store),
            context.object_stores.clone(),
        );
        let positions = self.positions(context, &stores).await?;
        let stages = self.equality_stage(context, &stores).await?;
        Ok(Deletes {
            positions,
            stages: stages.into_iter().collect(),
        })
    }
}
