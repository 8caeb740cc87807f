//! Position deletes and deletion vectors → the [`DeletedRows`] of one data file, which the
//! reader turns into a row selection (long runs: deleted rows are never decoded) or a mask
//! (scattered rows).
//!
//! * A **position-delete file** (Parquet: `file_path` id 2147483546, `pos` id 2147483545) is
//!   read once per scan and indexed by data file; its paths are compared after resolving
//!   them like every metadata path (`file:/x`, `file:///x` and `/x` are one file). Its rows
//!   are a set: the spec sorts them by `file_path`, then `pos`, and the reading is fastest
//!   so, but rows out of order delete the same rows (as Java's, Trino's and PyIceberg's
//!   readers, which index positions in bitmaps, read them).
//! * A **deletion vector** is a `deletion-vector-v1` blob in a Puffin file, read at the
//!   manifest's `content_offset` / `content_size_in_bytes` and checked before use: the file
//!   is a Puffin file (`PFA1` magic), the blob is the one its footer lists there, of type
//!   `deletion-vector-v1`, for this data file; the blob's length, magic (`D1 D3 39 64`) and
//!   CRC-32 match; the bitmap is a portable 64-bit Roaring bitmap with ascending keys no
//!   larger than `i32::MAX`; its cardinality is the manifest's record count.
//!
//! Hand-written: the `iceberg` crate (0.10.1) has no deletion-vector decoder and keeps its
//! position-delete loader private; the bitmaps are the `roaring` crate's.

use std::collections::HashMap;
use std::io::Read;
use std::sync::{Arc, Mutex};

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{DataType, Int64Type};
use bytes::Bytes;
use datafusion::common::{DataFusionError, Result, exec_datafusion_err, internal_err};
use futures::TryStreamExt;
use lakescan_core::api::{ColumnsById, CountingReader, DeletedRows, ReadCounters};
use object_store::ObjectStore;
use parquet::arrow::async_reader::AsyncFileReader;
use roaring::{RoaringBitmap, RoaringTreemap};
use tokio::sync::OnceCell;

use super::{DeleteFile, DeleteKind, DeleteStores};
use crate::paths::{FileLocation, PathResolver};

/// Field id of `file_path` in position-delete files.
pub(crate) const FILE_PATH_ID: i32 = 2147483546;
/// Field id of `pos` in position-delete files.
const POS_ID: i32 = 2147483545;
/// Magic bytes of a Puffin file.
const PUFFIN_MAGIC: [u8; 4] = *b"PFA1";
/// Magic bytes of a deletion-vector blob.
const DV_MAGIC: [u8; 4] = [0xD1, 0xD3, 0x39, 0x64];

/// Positions of one position-delete file, by data file.
type PositionsByFile = HashMap<FileLocation, RoaringTreemap>;

/// What one scan read of position deletes, each once: every position-delete file (shared by
/// the data files it lists), every Puffin file's footer (shared by its vectors), and the
/// deleted rows of every data file (shared by its splits).
#[derive(Debug, Default)]
pub struct PositionDeleteCache {
    files: Mutex<HashMap<String, Arc<OnceCell<Arc<PositionsByFile>>>>>,
    data_files: Mutex<HashMap<FileLocation, Arc<OnceCell<Arc<DeletedRows>>>>>,
    /// The Puffin files of the deletion vectors, each read once however many vectors it
    /// holds.
    puffins: Mutex<HashMap<String, Arc<OnceCell<Arc<PuffinFile>>>>>,
}

/// The cell of `key` in `map`, created empty the first time.
fn cell_of<K: std::hash::Hash + Eq, V>(
    map: &Mutex<HashMap<K, Arc<OnceCell<V>>>>,
    key: K,
) -> Result<Arc<OnceCell<V>>> {
    let Ok(mut cells) = map.lock() else {
        return internal_err!("the position-delete cache was poisoned by a panic");
    };
    Ok(Arc::clone(cells.entry(key).or_default()))
}

/// The rows of the data file at `data` (written as `data_written`) that `deletes` remove,
/// read once per scan, the reads counted into `counters`. Returns the rows and the number of
/// delete files read now.
pub async fn deleted_rows(
    stores: &DeleteStores,
    paths: &PathResolver,
    cache: &PositionDeleteCache,
    (data, data_written): (&FileLocation, &str),
    deletes: &[Arc<DeleteFile>],
    counters: &ReadCounters,
) -> Result<(Arc<DeletedRows>, usize)> {
    let mut loaded = 0;
    let cell = cell_of(&cache.data_files, data.clone())?;
    let rows = cell
        .get_or_try_init(|| async {
            let (rows, read) = read_deleted_rows(
                stores,
                paths,
                cache,
                (data, data_written),
                deletes,
                counters,
            )
            .await?;
            loaded = read;
            Ok::<_, DataFusionError>(Arc::new(rows))
        })
        .await?;
    Ok((Arc::clone(rows), loaded))
}

async fn read_deleted_rows(
    stores: &DeleteStores,
    paths: &PathResolver,
    cache: &PositionDeleteCache,
    (data, data_written): (&FileLocation, &str),
    deletes: &[Arc<DeleteFile>],
    counters: &ReadCounters,
) -> Result<(DeletedRows, usize)> {
    let mut rows = DeletedRows::default();
    let mut loaded = 0;
    for delete in deletes {
        match &delete.kind {
            DeleteKind::Position => {
                let cell = cell_of(&cache.files, delete.written_path.clone())?;
                let by_file = cell
                    .get_or_try_init(|| async {
                        loaded += 1;
                        read_position_deletes(&stores.of(delete)?, paths, delete, counters)
                            .await
                            .map(Arc::new)
                    })
                    .await?;
                if let Some(positions) = by_file.get(data) {
                    rows.by_position_deletes |= positions;
                }
            }
            DeleteKind::DeletionVector { offset, length } => {
                loaded += 1;
                let vector = read_deletion_vector(
                    &stores.of(delete)?,
                    paths,
                    cache,
                    delete,
                    (*offset, *length),
                    data,
                    data_written,
                    counters,
                )
                .await?;
                rows.by_deletion_vector |= vector;
            }
            DeleteKind::Equality { .. } => {}
        }
    }
    Ok((rows, loaded))
}

fn bad(file: &DeleteFile, what: impl std::fmt::Display) -> DataFusionError {
    exec_datafusion_err!("Iceberg delete file '{}': {what}", file.written_path)
}

async fn read_position_deletes(
    store: &Arc<dyn ObjectStore>,
    paths: &PathResolver,
    file: &DeleteFile,
    counters: &ReadCounters,
) -> Result<PositionsByFile> {
    let referenced = file.referenced_data_file.as_ref();
    let not_position_deletes = || {
        bad(
            file,
            "not a position-delete file: it needs columns file_path (field id 2147483546) and \
             pos (field id 2147483545)",
        )
    };
    // Only positions are read from a file whose manifest entry names the one data file all
    // its rows reference (no path strings to decode and compare).
    let ids: &[(i32, &str)] = match referenced {
        Some(_) => &[(POS_ID, "pos")],
        None => &[(FILE_PATH_ID, "file_path"), (POS_ID, "pos")],
    };
    let read = super::read_columns(store, file, ids, counters)
        .await
        .map_err(|e| {
            let format = file.format.display_name();
            bad(file, format!("not a readable {format} file: {e}"))
        })?;
    let ColumnsById::Read(columns) = read else {
        return Err(not_position_deletes());
    };
    let mut stream = columns.batches;
    let (path_at, pos_at) = match referenced {
        Some(_) => (None, 0),
        None => (Some(0), 1),
    };
    let mut referenced_positions = SortedPositions::default();
    let mut by_file: PositionsByFile = HashMap::new();
    // The rows of one data file are consecutive when the file is sorted: they go into one
    // bitmap, resolved and merged once per run of equal paths (a path whose rows appear
    // again after another's merges its runs).
    let mut run: Option<(String, SortedPositions)> = None;
    let mut flush = |run: Option<(String, SortedPositions)>| -> Result<()> {
        if let Some((path, positions)) = run {
            *by_file.entry(paths.resolve(&path)?).or_default() |= positions.finish();
        }
        Ok(())
    };
    while let Some(batch) = stream.try_next().await? {
        let positions = positions_of(file, batch.column(pos_at))?;
        let Some(path_at) = path_at else {
            for pos in positions {
                referenced_positions.push(pos?);
            }
            continue;
        };
        let path_type = batch.column(path_at).data_type();
        if !matches!(
            path_type,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
        ) {
            return Err(bad(file, format!("file_path is {path_type}, not a string")));
        }
        let paths_column = arrow::compute::cast(batch.column(path_at), &DataType::Utf8)
            .map_err(|e| bad(file, format!("file_path is not a string: {e}")))?;
        let written = paths_column.as_string::<i32>();
        for (path, pos) in written.iter().zip(positions) {
            let pos = pos?;
            // A row without a path (the spec requires one) deletes from no data file: it
            // is left out, as Java's reader (which keeps the rows whose path equals the
            // data file's), PyIceberg and Impala leave it out.
            let Some(path) = path else {
                continue;
            };
            match &mut run {
                Some((p, positions)) if p == path => positions.push(pos),
                _ => {
                    flush(run.take())?;
                    let mut positions = SortedPositions::default();
                    positions.push(pos);
                    run = Some((path.to_string(), positions));
                }
            }
        }
    }
    flush(run)?;
    if let Some(target) = referenced {
        by_file.insert(target.clone(), referenced_positions.finish());
    }
    Ok(by_file)
}

/// Rows in one block of [`SortedPositions`] (a Roaring container's range).
const BLOCK_ROWS: u64 = 1 << 16;
/// Above this many positions, a block is built from a bitset rather than one by one.
const BITSET_FROM: usize = 64;

/// The positions of one data file, built into a bitmap one block of [`BLOCK_ROWS`] rows at a
/// time as they come in ascending order (the spec's): a block's positions are gathered, then
/// become one bitset at once (pushing each into the bitmap costs several times its decoding,
/// and a position-delete file of a large data file lists hundreds of thousands). A position
/// below the one before it goes into a bitmap of its own.
#[derive(Debug, Default)]
struct SortedPositions {
    /// The finished blocks, merged by the high 32 bits of their positions.
    bitmaps: Vec<(u32, RoaringBitmap)>,
    /// The block being gathered (`position / BLOCK_ROWS`).
    block: u64,
    /// The low 16 bits of its positions, ascending.
    lows: Vec<u16>,
    /// The last position gathered.
    last: Option<u64>,
    /// The positions that came below the last one gathered.
    out_of_order: RoaringTreemap,
}

impl SortedPositions {
    /// Adds `pos` (a repeat is kept once).
    fn push(&mut self, pos: u64) {
        match self.last {
            Some(last) if pos < last => {
                self.out_of_order.insert(pos);
                return;
            }
            Some(last) if pos == last => return,
            _ => {}
        }
        self.last = Some(pos);
        let block = pos / BLOCK_ROWS;
        if block != self.block {
            self.end_block();
            self.block = block;
        }
        // The remainder of a division by 2^16 fits 16 bits.
        self.lows.push((pos % BLOCK_ROWS) as u16);
    }

    /// Builds the gathered block into the bitmaps.
    fn end_block(&mut self) {
        if self.lows.is_empty() {
            return;
        }
        // Positions are u64: the block number's high half is the treemap's key, its low
        // 16 bits the block within that key's 32-bit bitmap.
        let key = (self.block >> 16) as u32;
        let base = ((self.block & 0xFFFF) as u32) << 16;
        let block = if self.lows.len() > BITSET_FROM {
            let mut bits = vec![0u8; (BLOCK_ROWS / 8) as usize];
            for low in &self.lows {
                bits[usize::from(*low >> 3)] |= 1 << (low & 7);
            }
            RoaringBitmap::from_lsb0_bytes(base, &bits)
        } else {
            self.lows.iter().map(|low| base | u32::from(*low)).collect()
        };
        self.lows.clear();
        match self.bitmaps.last_mut() {
            Some((last, bitmap)) if *last == key => *bitmap |= block,
            _ => self.bitmaps.push((key, block)),
        }
    }

    /// The positions pushed.
    fn finish(mut self) -> RoaringTreemap {
        self.end_block();
        let mut positions = RoaringTreemap::from_bitmaps(self.bitmaps);
        positions |= self.out_of_order;
        positions
    }
}

/// The positions of a `pos` column: BIGINT, never NULL or negative.
fn positions_of<'a>(
    file: &'a DeleteFile,
    column: &'a ArrayRef,
) -> Result<impl Iterator<Item = Result<u64>> + 'a> {
    let Some(positions) = column.as_primitive_opt::<Int64Type>() else {
        return Err(bad(
            file,
            format!("pos is {}, not BIGINT", column.data_type()),
        ));
    };
    if positions.null_count() > 0 {
        return Err(bad(file, "a row has a NULL pos"));
    }
    Ok(positions.values().iter().map(move |&pos| {
        u64::try_from(pos).map_err(|_| bad(file, format!("position {pos} is negative")))
    }))
}

/// The deletion vector at `offset`/`length` of the Puffin file `file`, for the data file at
/// `data`: the file's tail (its footer, and the whole file when small) read once per scan
/// ([`PuffinFile`]), the blob from those bytes or with one ranged GET.
#[allow(clippy::too_many_arguments)]
async fn read_deletion_vector(
    store: &Arc<dyn ObjectStore>,
    paths: &PathResolver,
    cache: &PositionDeleteCache,
    file: &DeleteFile,
    (offset, length): (u64, u64),
    data: &FileLocation,
    data_written: &str,
    counters: &ReadCounters,
) -> Result<RoaringTreemap> {
    let cell = cell_of(&cache.puffins, file.written_path.clone())?;
    let puffin = cell
        .get_or_try_init(|| async { PuffinFile::read(store, file, counters).await.map(Arc::new) })
        .await?;
    puffin.check_blob(paths, file, offset, length, data, data_written)?;
    let Some(end) = offset
        .checked_add(length)
        .filter(|end| *end <= file.file_size)
    else {
        return Err(bad(
            file,
            format!("the blob at offset {offset} ({length} bytes) runs past the file's end"),
        ));
    };
    let blob = puffin
        .reader
        .clone()
        .get_bytes(offset..end)
        .await
        .map_err(|e| bad(file, format!("cannot read: {e}")))?;
    let vector = decode_deletion_vector(&blob).map_err(|what| bad(file, what))?;
    if vector.len() != file.record_count {
        return Err(bad(
            file,
            format!(
                "the deletion vector holds {} positions, its manifest entry says {}",
                vector.len(),
                file.record_count
            ),
        ));
    }
    Ok(vector)
}

/// A Puffin file of deletion vectors as one scan reads it: its last bytes fetched once (the
/// footer, and the whole file when it is smaller than the tail read: one GET for every
/// vector in it), checked, and the blobs its footer lists.
struct PuffinFile {
    /// The file, with its tail kept: reads inside it are served from memory.
    reader: CountingReader,
    /// The footer's `blobs`.
    blobs: Vec<serde_json::Value>,
}

impl std::fmt::Debug for PuffinFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PuffinFile")
            .field("blobs", &self.blobs.len())
            .finish_non_exhaustive()
    }
}

impl PuffinFile {
    /// Reads and checks the file's magic and footer (its size is the manifest's).
    async fn read(
        store: &Arc<dyn ObjectStore>,
        file: &DeleteFile,
        counters: &ReadCounters,
    ) -> Result<Self> {
        let size = file.file_size;
        if size < 16 {
            return Err(bad(file, "too short for a Puffin file"));
        }
        let mut reader = CountingReader::counted(store, &file.location.path, size, counters);
        let cannot_read = |e: parquet::errors::ParquetError| bad(file, format!("cannot read: {e}"));
        let (start, tail) = reader.fetch_tail().await.map_err(cannot_read)?;
        // A store answers a range past an object's end with what it has.
        if tail.len() as u64 != size - start {
            return Err(bad(
                file,
                format!("it is shorter than the {size} bytes its manifest entry gives"),
            ));
        }
        let head = match start {
            0 => tail.slice(0..4),
            _ => reader.get_bytes(0..4).await.map_err(cannot_read)?,
        };
        if head.as_ref() != PUFFIN_MAGIC {
            return Err(bad(
                file,
                "not a Puffin file (no PFA1 magic at its start): a deletion vector must be a \
                 blob inside a Puffin file, not a bare bitmap (as early DuckDB versions wrote)",
            ));
        }
        let Some(end) = tail.len().checked_sub(12).map(|at| tail.slice(at..)) else {
            return Err(bad(file, "too short for a Puffin file"));
        };
        if end[8..12] != PUFFIN_MAGIC {
            return Err(bad(
                file,
                "its Puffin footer is missing (no PFA1 magic at its end)",
            ));
        }
        let payload_size = u64::from(u32::from_le_bytes([end[0], end[1], end[2], end[3]]));
        if end[4] & 1 != 0 {
            return Err(bad(
                file,
                "its Puffin footer is LZ4-compressed, which lakescan does not read",
            ));
        }
        let Some(payload_start) = (size - 12).checked_sub(payload_size).filter(|s| *s >= 4) else {
            return Err(bad(file, "its Puffin footer size exceeds the file"));
        };
        let payload = reader
            .get_bytes(payload_start..size - 12)
            .await
            .map_err(cannot_read)?;
        let footer: serde_json::Value = serde_json::from_slice(&payload)
            .map_err(|e| bad(file, format!("its Puffin footer is not JSON: {e}")))?;
        let blobs = footer
            .get("blobs")
            .and_then(|b| b.as_array())
            .cloned()
            .unwrap_or_default();
        Ok(Self { reader, blobs })
    }

    /// Checks that the footer lists a `deletion-vector-v1` blob at `offset`/`length` for
    /// the data file at `data`.
    fn check_blob(
        &self,
        paths: &PathResolver,
        file: &DeleteFile,
        offset: u64,
        length: u64,
        data: &FileLocation,
        data_written: &str,
    ) -> Result<()> {
        let blob = self
            .blobs
            .iter()
            .find(|b| b.get("offset").and_then(serde_json::Value::as_u64) == Some(offset));
        let Some(blob) = blob else {
            return Err(bad(
                file,
                format!("its Puffin footer lists no blob at offset {offset}"),
            ));
        };
        let kind = blob
            .get("type")
            .and_then(|t| t.as_str())
            .unwrap_or_default();
        if kind != "deletion-vector-v1" {
            return Err(bad(
                file,
                format!("the blob at offset {offset} is '{kind}', not deletion-vector-v1"),
            ));
        }
        if blob.get("length").and_then(serde_json::Value::as_u64) != Some(length) {
            return Err(bad(
                file,
                format!("the blob at offset {offset} does not have the manifest's length {length}"),
            ));
        }
        if let Some(codec) = blob.get("compression-codec").and_then(|c| c.as_str()) {
            return Err(bad(
                file,
                format!(
                    "the deletion vector is compressed ({codec}); deletion vectors are stored uncompressed"
                ),
            ));
        }
        let referenced = blob
            .get("properties")
            .and_then(|p| p.get("referenced-data-file"))
            .and_then(|r| r.as_str());
        if let Some(referenced) = referenced
            && &paths.resolve(referenced)? != data
        {
            return Err(bad(
                file,
                format!(
                    "the deletion vector at offset {offset} belongs to data file '{referenced}', \
                     not '{data_written}'"
                ),
            ));
        }
        Ok(())
    }
}

/// Decodes a `deletion-vector-v1` blob: length, magic, portable 64-bit Roaring bitmap, CRC.
pub fn decode_deletion_vector(blob: &Bytes) -> std::result::Result<RoaringTreemap, String> {
    if blob.len() < 12 {
        return Err(format!(
            "a deletion vector of {} bytes is too short",
            blob.len()
        ));
    }
    let declared = u32::from_be_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
    if declared != blob.len() - 8 {
        return Err(format!(
            "the deletion vector's length field says {declared} bytes, the blob holds {}",
            blob.len() - 8
        ));
    }
    let body = &blob[4..4 + declared];
    if body[..4] != DV_MAGIC {
        return Err("the deletion vector does not start with its magic bytes D1 D3 39 64".into());
    }
    let crc_at = 4 + declared;
    let stored = u32::from_be_bytes([
        blob[crc_at],
        blob[crc_at + 1],
        blob[crc_at + 2],
        blob[crc_at + 3],
    ]);
    if crc32fast::hash(body) != stored {
        return Err("the deletion vector's CRC-32 does not match its contents".into());
    }
    portable_treemap(&body[4..])
}

/// A portable 64-bit Roaring bitmap: a count, then per bitmap its key (the high 32 bits,
/// ascending, at most `i32::MAX`: positions are non-negative longs) and a portable 32-bit
/// Roaring bitmap.
fn portable_treemap(bytes: &[u8]) -> std::result::Result<RoaringTreemap, String> {
    let mut reader = bytes;
    let mut count = [0u8; 8];
    reader
        .read_exact(&mut count)
        .map_err(|_| "the deletion vector's bitmap count is cut off".to_string())?;
    let count = u64::from_le_bytes(count);
    let mut bitmaps = vec![];
    let mut previous: Option<u32> = None;
    for _ in 0..count {
        let mut key = [0u8; 4];
        reader
            .read_exact(&mut key)
            .map_err(|_| "the deletion vector's bitmap is cut off".to_string())?;
        let key = u32::from_le_bytes(key);
        if previous.is_some_and(|p| key <= p) {
            return Err("the deletion vector's bitmap keys are not ascending".into());
        }
        if key > i32::MAX as u32 {
            return Err(format!(
                "the deletion vector has positions with high bits {key:#x}, beyond the largest \
                 row position"
            ));
        }
        previous = Some(key);
        let bitmap = RoaringBitmap::deserialize_from(&mut reader)
            .map_err(|e| format!("the deletion vector's bitmap does not decode: {e}"))?;
        bitmaps.push((key, bitmap));
    }
    if !reader.is_empty() {
        return Err(format!(
            "{} bytes follow the deletion vector's bitmap",
            reader.len()
        ));
    }
    Ok(RoaringTreemap::from_bitmaps(bitmaps))
}

#[cfg(test)]
mod tests;
