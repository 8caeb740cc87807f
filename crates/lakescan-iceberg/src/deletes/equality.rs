//! Equality deletes: rows whose key equals a row of an applicable equality-delete file are
//! removed after decoding, in the `EqualityDeletes` stage.
//!
//! ```text
//!  table [c0 BIGINT, key BIGINT] (ids 10, 20), query P = [c0], delete file ids [20] = {7}
//!  R = [c0, key]   (key read as an auxiliary channel, never output)
//!  rows (100, 7) (200, 8) (300, 7)  ─ key ∈ {7}? ─▶  (200, 8)  ─▶  P = [200]; rows_scanned = 3
//! ```
//!
//! * The delete files of one split that share a key (the same equality field ids) form an
//!   [`EqualityDeleteSet`]; its [`KeySet`] is read once per scan and shared by every split
//!   with the same files (a cache in [`crate::reader::IcebergAdapter`]).
//! * Keys are compared in the reader's types (the delete file's columns are cast to them:
//!   files written before a type promotion match), NULL equal to NULL as the spec says for
//!   equality deletes, and a match is exact, never a hash collision: one INT or BIGINT key
//!   as the integer itself ([`Keys::Integer`]), any other key as the Arrow row encoding of
//!   its columns ([`Keys::Rows`]).
//! * Key columns the query does not read are auxiliary channels of `R` (the table handle's
//!   stage columns); a key column a data file does not store reads its missing value
//!   (identity-partition value, `initial-default`, NULL), like any column.
//!
//! Hand-written: no library applies Iceberg equality deletes to Arrow batches (iceberg-rust
//! 0.10.1 turns each deleted key into a predicate, O(rows × keys)).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, RecordBatch};
use arrow::buffer::BooleanBuffer;
use arrow::compute::{and, cast, filter_record_batch};
use arrow::datatypes::{DataType, Int64Type};
use arrow::row::{RowConverter, SortField};
use datafusion::common::{
    DataFusionError, HashSet, Result, exec_datafusion_err, exec_err, internal_err,
};
use datafusion::execution::memory_pool::{MemoryConsumer, MemoryPool, MemoryReservation};
use futures::TryStreamExt;
use lakescan_core::api::{BatchTransform, ColumnsById, ReadCounters, ScanSpec};
use object_store::ObjectStore;
use tokio::sync::OnceCell;

use super::DeleteFile;

/// The equality-delete files of a split that share one key.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct EqualityDeleteSet {
    /// Key columns: table column name and field id, in the files' equality-id order.
    pub columns: Vec<(String, i32)>,
    /// The files.
    pub files: Vec<Arc<DeleteFile>>,
}

impl EqualityDeleteSet {
    /// Identifies the set (its key and files) for sharing its key set.
    pub fn cache_key(&self) -> Vec<String> {
        let mut key: Vec<String> = self.columns.iter().map(|(n, _)| n.clone()).collect();
        key.push(String::new());
        key.extend(self.files.iter().map(|f| f.written_path.clone()));
        key
    }
}

/// The deleted keys of one [`EqualityDeleteSet`], loaded once and shared.
pub type SharedKeySet = Arc<OnceCell<Arc<KeySet>>>;

/// The keys of a set of equality-delete files; their memory is reserved in the scan's
/// memory pool for as long as the set is held.
#[derive(Debug)]
pub struct KeySet {
    keys: Keys,
    _reservation: MemoryReservation,
}

/// Deleted keys, by how they are compared.
#[derive(Debug)]
pub enum Keys {
    /// One INT or BIGINT key column: the values (as BIGINT), and whether NULL is deleted.
    Integer {
        /// The deleted non-NULL keys.
        values: HashSet<i64>,
        /// Whether a NULL key is deleted.
        null: bool,
    },
    /// Any other key: the Arrow row encodings of its columns (NULL encodes as a value).
    Rows {
        /// Encodes the key columns.
        converter: RowConverter,
        /// The deleted keys' encodings.
        rows: HashSet<Box<[u8]>>,
    },
}

impl Keys {
    fn new(types: &[DataType]) -> Result<Self> {
        Ok(match types {
            [DataType::Int64 | DataType::Int32] => Keys::Integer {
                values: HashSet::default(),
                null: false,
            },
            _ => {
                let fields = types.iter().map(|t| SortField::new(t.clone())).collect();
                Keys::Rows {
                    converter: RowConverter::new(fields)?,
                    rows: HashSet::default(),
                }
            }
        })
    }

    /// Adds the keys of `columns` (in the set's types), reserving their memory in
    /// `reservation` first.
    fn extend(&mut self, columns: &[ArrayRef], reservation: &MemoryReservation) -> Result<()> {
        match self {
            Keys::Integer { values, null } => {
                let column = integers(columns)?;
                reservation.try_grow(column.len() * (size_of::<i64>() + PER_KEY_OVERHEAD))?;
                *null |= column.null_count() > 0;
                values.extend(column.iter().flatten());
            }
            Keys::Rows { converter, rows } => {
                let encoded = converter.convert_columns(columns)?;
                let grown = encoded
                    .iter()
                    .map(|r| r.as_ref().len() + PER_KEY_OVERHEAD)
                    .sum();
                reservation.try_grow(grown)?;
                rows.extend(encoded.iter().map(|r| Box::<[u8]>::from(r.as_ref())));
            }
        }
        Ok(())
    }

    fn len(&self) -> usize {
        match self {
            Keys::Integer { values, null } => values.len() + usize::from(*null),
            Keys::Rows { rows, .. } => rows.len(),
        }
    }
}

/// The one key column as BIGINT.
fn integers(columns: &[ArrayRef]) -> Result<arrow::array::Int64Array> {
    let [column] = columns else {
        return internal_err!(
            "an integer equality key has one column, not {}",
            columns.len()
        );
    };
    let column = cast(column, &DataType::Int64)?;
    Ok(column.as_primitive::<Int64Type>().clone())
}

impl KeySet {
    /// Number of distinct deleted keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no key is deleted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Per row of `columns` (the key columns, in the set's types): true when kept.
    fn kept(&self, columns: &[ArrayRef]) -> Result<BooleanArray> {
        let kept = match &self.keys {
            Keys::Integer { values, null } => {
                let column = integers(columns)?;
                let raw = column.values();
                match column.nulls() {
                    None => {
                        BooleanBuffer::collect_bool(column.len(), |i| !values.contains(&raw[i]))
                    }
                    Some(nulls) => {
                        BooleanBuffer::collect_bool(column.len(), |i| match nulls.is_valid(i) {
                            true => !values.contains(&raw[i]),
                            false => !*null,
                        })
                    }
                }
            }
            Keys::Rows { converter, rows } => {
                let encoded = converter.convert_columns(columns)?;
                BooleanBuffer::collect_bool(encoded.num_rows(), |i| {
                    !rows.contains(encoded.row(i).as_ref())
                })
            }
        };
        Ok(BooleanArray::new(kept, None))
    }
}

/// The types the key columns of `set` have in the reader schema of `spec`.
pub fn key_types(set: &EqualityDeleteSet, spec: &ScanSpec) -> Result<Vec<DataType>> {
    set.columns
        .iter()
        .map(|(name, _)| {
            let Some(channel) = spec.field(name).and_then(|(_, f)| f.channel) else {
                return internal_err!(
                    "equality-delete key column '{name}' is not read by the scan"
                );
            };
            Ok(spec.reader_schema().field(channel).data_type().clone())
        })
        .collect()
}

/// Bytes a key set holds per key beyond the key's encoding (hash slot, box).
const PER_KEY_OVERHEAD: usize = 3 * std::mem::size_of::<usize>();

/// Reads the delete files of `set` (their reads counted into `counters`) and builds their
/// key set, reserving its memory in `pool` as it grows (a memory limit fails the query with
/// `ResourcesExhausted`, not the process).
pub async fn load_key_set(
    stores: &super::DeleteStores,
    set: &EqualityDeleteSet,
    types: &[DataType],
    pool: &Arc<dyn MemoryPool>,
    counters: &ReadCounters,
) -> Result<KeySet> {
    let mut keys = Keys::new(types)?;
    let reservation = MemoryConsumer::new("lakescan equality-delete keys").register(pool);
    for file in &set.files {
        let ids: Vec<i32> = set.columns.iter().map(|(_, id)| *id).collect();
        let (mut stream, schema, order) = open(&stores.of(file)?, file, &ids, counters).await?;
        // Parquet's schema is known before the first batch; ORC's and Avro's with each.
        if let Some(schema) = &schema {
            check_key_types(file, &set.columns, schema, &order, types)?;
        }
        while let Some(batch) = stream.try_next().await? {
            if schema.is_none() {
                check_key_types(file, &set.columns, batch.schema_ref(), &order, types)?;
            }
            let columns = order
                .iter()
                .zip(types)
                .map(|(&c, t)| cast(batch.column(c), t))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| bad(file, e))?;
            keys.extend(&columns, &reservation)?;
        }
    }
    Ok(KeySet {
        keys,
        _reservation: reservation,
    })
}

/// Checks that the key columns of `file` (at `order` in `schema`, its decoded batches) hold
/// values of the reader's `types`, or of types that widen to them without a change (files
/// written before a type promotion): a cast of other values would match other rows, or none.
fn check_key_types(
    file: &DeleteFile,
    columns: &[(String, i32)],
    schema: &arrow::datatypes::SchemaRef,
    order: &[usize],
    types: &[DataType],
) -> Result<()> {
    for (((name, id), &at), table_type) in columns.iter().zip(order).zip(types) {
        let stored = schema.field(at).data_type();
        if !lakescan_core::api::can_adapt(stored, table_type) {
            return exec_err!(
                "Iceberg equality-delete file '{}': key column '{name}' (field id {id}) is \
                 stored as {stored}, which cannot be compared with the table type {table_type}",
                file.written_path
            );
        }
    }
    Ok(())
}

fn bad(file: &DeleteFile, e: impl std::fmt::Display) -> DataFusionError {
    exec_datafusion_err!(
        "cannot read Iceberg equality-delete file '{}': {e}",
        file.written_path
    )
}

/// The batches of the key columns of `file` (in its format), their schema when known
/// before the first batch (Parquet), and where the column of each of `ids` is in them.
async fn open<'a>(
    store: &Arc<dyn ObjectStore>,
    file: &'a DeleteFile,
    ids: &[i32],
    counters: &ReadCounters,
) -> Result<(
    futures::stream::BoxStream<'a, Result<RecordBatch>>,
    Option<arrow::datatypes::SchemaRef>,
    Vec<usize>,
)> {
    let mut distinct = ids.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() != ids.len() {
        return exec_err!(
            "Iceberg equality-delete file '{}' lists an equality id twice",
            file.written_path
        );
    }
    let wanted: Vec<(i32, &str)> = ids.iter().map(|id| (*id, "")).collect();
    let read = super::read_columns(store, file, &wanted, counters)
        .await
        .map_err(|e| bad(file, e))?;
    match read {
        ColumnsById::Read(columns) => {
            Ok((columns.batches, columns.schema, (0..ids.len()).collect()))
        }
        ColumnsById::Missing(id) => exec_err!(
            "Iceberg equality-delete file '{}' has no top-level column with field id {id}, \
             one of its equality ids",
            file.written_path
        ),
    }
}

/// Drops the rows of a batch whose key is in a key set (one per equality-id set).
pub struct EqualityDeleteStage {
    /// Per set: the channels of `R` holding its key columns, and its keys.
    sets: Vec<(Vec<usize>, SharedKeySet)>,
    file: String,
}

impl EqualityDeleteStage {
    /// A stage over `sets`, whose key sets the split reader loads before the first batch.
    pub fn new(sets: Vec<(Vec<usize>, SharedKeySet)>, file: String) -> Self {
        Self { sets, file }
    }
}

impl BatchTransform for EqualityDeleteStage {
    fn apply(&mut self, batch: RecordBatch) -> Result<RecordBatch> {
        if batch.num_rows() == 0 {
            return Ok(batch);
        }
        let mut keep: Option<BooleanArray> = None;
        for (channels, cell) in &self.sets {
            let Some(keys) = cell.get() else {
                return internal_err!(
                    "equality deletes of '{}' were not loaded before reading",
                    self.file
                );
            };
            if keys.is_empty() {
                continue;
            }
            let columns: Vec<ArrayRef> = channels
                .iter()
                .map(|&c| Arc::clone(batch.column(c)))
                .collect();
            let kept = keys.kept(&columns)?;
            keep = Some(match keep {
                Some(k) => and(&k, &kept)?,
                None => kept,
            });
        }
        match keep {
            Some(mask) if mask.true_count() < batch.num_rows() => {
                Ok(filter_record_batch(&batch, &mask)?)
            }
            _ => Ok(batch),
        }
    }
}
