//! Opening a Parquet file (`LoadFooter`): the footer from the session's cache
//! ([`super::footer_cache`]) or the file, checked ([`check_footer`]) before anything trusts
//! it, byte counting, and error messages that name the file.

use std::sync::Arc;

use datafusion::common::Result;
use datafusion::common::{DataFusionError, exec_datafusion_err, not_impl_datafusion_err};
use datafusion::physical_plan::metrics::Count;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::errors::ParquetError;
use parquet::file::metadata::ParquetMetaData;

use object_store::{ObjectStore, ObjectStoreExt};

use super::Opened;
use super::field_ids::rename_by_field_id;
use super::footer_cache::FooterCache;
use super::leaves::has_arrow_hint;
use crate::format::PageIndex;
use crate::format::{FileFormat, other_format, wrong_format};
use crate::io::counting_reader::ObjectChanged;
use crate::io::{CountingReader, counting_reader};
use crate::reader::SplitContext;
use crate::split::FileSplit;

/// `LoadFooter`: opens the file and reads its metadata (and the page index when the split
/// has filters). Takes owned inputs so the future stays `Send`.
pub async fn load_footer(split: Arc<FileSplit>, context: SplitContext) -> Result<Opened> {
    let page_index = match context.filters.filters.is_empty() {
        true => PageIndex::NotWanted,
        false => PageIndex::Wanted,
    };
    let options = ArrowReaderOptions::new().with_page_index_policy(page_index.policy());
    let mut reader = counting_reader(&context, &split, split.file_size());
    let cache = context.metadata_cache.clone().map(FooterCache::new);
    let kept = cache
        .as_ref()
        .and_then(|c| c.get_with_file(&split, page_index));
    let mut metadata = match kept {
        Some((kept, file)) => {
            if let Some(file) = file {
                reader = reader.with_whole_file(file);
            }
            ArrowReaderMetadata::try_new(kept, options.clone())
                .map_err(|e| footer_error(split.display_path(), e))?
        }
        None => {
            let (loaded, size) = read_footer(&split, &context, &mut reader, &options).await?;
            check_footer(split.display_path(), loaded.metadata(), size)?;
            if let Some(c) = &cache {
                let file = reader.whole_file();
                c.put_with_file(&split, size, Arc::clone(loaded.metadata()), file);
            }
            loaded
        }
    };
    let renamed = match context.spec.field_ids() {
        Some(matching) => rename_by_field_id(metadata.metadata(), matching)?,
        None => super::spelling::with_table_spelling(
            metadata.metadata(),
            Some(metadata.schema()),
            context.spec.file_columns(),
        )?,
    };
    if let Some(renamed) = renamed {
        metadata = ArrowReaderMetadata::try_new(Arc::new(renamed), options)
            .map_err(|e| footer_error(split.display_path(), e))?;
    }
    Ok(Opened { reader, metadata })
}

/// The footer of `split`'s file (with its page index when `page_index`), from `cache` or
/// read and kept there: the planner's statistics come from it, and the scan of the file finds
/// it again.
pub async fn file_metadata(
    store: Arc<dyn ObjectStore>,
    split: &FileSplit,
    cache: &FooterCache,
    page_index: PageIndex,
) -> Result<Arc<ParquetMetaData>> {
    if let Some(kept) = cache.get(split, page_index) {
        return Ok(kept);
    }
    let mut reader =
        CountingReader::open(&store, split.file_path(), split.file_size(), Count::new())
            .listed_at(split.last_modified());
    let options = ArrowReaderOptions::new().with_page_index_policy(page_index.policy());
    let metadata = reader
        .get_metadata(Some(&options))
        .await
        .map_err(|e| footer_error(split.display_path(), e))?;
    let metadata = sound_row_count(sound_hint(metadata));
    check_footer(split.display_path(), &metadata, split.file_size())?;
    cache.put_with_file(
        split,
        split.file_size(),
        Arc::clone(&metadata),
        reader.whole_file(),
    );
    Ok(metadata)
}

/// Reads the footer from the file; returns it with the size it was read at.
async fn read_footer(
    split: &FileSplit,
    context: &SplitContext,
    reader: &mut CountingReader,
    options: &ArrowReaderOptions,
) -> Result<(ArrowReaderMetadata, u64)> {
    // The footer first, its embedded Arrow schema checked apart (`sound_hint`).
    let unhinted = options.clone().with_skip_arrow_metadata(true);
    let loaded = ArrowReaderMetadata::load_async(reader, unhinted.clone()).await;
    let e = match loaded {
        Ok(m) => return Ok((hinted(split, m, options)?, split.file_size())),
        Err(e) => e,
    };
    // Another format's file in a Parquet table: say so rather than "corrupt footer".
    if let Some(found) = other_format(reader, FileFormat::Parquet).await {
        return Err(wrong_format(
            split.display_path(),
            FileFormat::Parquet,
            found,
        ));
    }
    // The size the split was planned with may be wrong (manifests of some writers record
    // another size): read the footer again at the file's real size. A size from a listing
    // is the file's own: a mismatch there means the file changed, which the reader reports.
    if split.last_modified().is_some() {
        return Err(footer_error(split.display_path(), e));
    }
    let real = match context.store.head(split.file_path()).await {
        Ok(meta) if meta.size != split.file_size() => meta.size,
        _ => return Err(footer_error(split.display_path(), e)),
    };
    *reader = counting_reader(context, split, real);
    let loaded = ArrowReaderMetadata::load_async(reader, unhinted)
        .await
        .map_err(|e| footer_error(split.display_path(), e))?;
    Ok((hinted(split, loaded, options)?, real))
}

/// `loaded` (read without its embedded Arrow schema) read with it, when it is sound.
fn hinted(
    split: &FileSplit,
    loaded: ArrowReaderMetadata,
    options: &ArrowReaderOptions,
) -> Result<ArrowReaderMetadata> {
    let metadata = sound_page_index(sound_row_count(sound_hint(Arc::clone(loaded.metadata()))));
    ArrowReaderMetadata::try_new(metadata, options.clone())
        .map_err(|e| footer_error(split.display_path(), e))
}

/// `metadata` without its embedded Arrow schema (`ARROW:schema`, the writer's Arrow types
/// as hints) when that does not decode: `arrow-ipc` panics on types it does not know (a
/// polars `Int128` column), and a hint that does not decode is no reason to refuse a file
/// whose Parquet schema is sound — it is read as readers without the hint read it.
fn sound_hint(metadata: Arc<ParquetMetaData>) -> Arc<ParquetMetaData> {
    if !has_arrow_hint(&metadata) {
        return metadata;
    }
    let file = metadata.file_metadata();
    let decodes = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        parquet::arrow::parquet_to_arrow_schema(file.schema_descr(), file.key_value_metadata())
            .is_ok()
    }));
    match decodes {
        Ok(true) => metadata,
        _ => {
            let root = file.schema_descr().root_schema_ptr();
            Arc::new(super::leaves::with_schema(&metadata, root))
        }
    }
}

/// `metadata` with the file's row count the sum of its row groups' where the two differ,
/// as other readers count them: the first Rust writer (`parquet-rs` 0.3) wrote 0 for the
/// file, and the `parquet` crate, which sizes its batches by the file's count, then read
/// no row at all.
fn sound_row_count(metadata: Arc<ParquetMetaData>) -> Arc<ParquetMetaData> {
    let rows = metadata
        .row_groups()
        .iter()
        .try_fold(0i64, |sum, g| sum.checked_add(g.num_rows()));
    let file = metadata.file_metadata();
    match rows {
        Some(rows) if rows != file.num_rows() => {
            let file_metadata = parquet::file::metadata::FileMetaData::new(
                file.version(),
                rows,
                file.created_by().map(str::to_string),
                file.key_value_metadata().cloned(),
                file.schema_descr_ptr(),
                file.column_orders().cloned(),
            );
            Arc::new(super::leaves::with_file_metadata(&metadata, file_metadata))
        }
        _ => metadata,
    }
}

/// `metadata` without its page index when its offset index places a page at a negative
/// offset or row, or gives one no bytes (Impala writes `-1` for the empty pages it leaves
/// out): the `parquet` crate would read such an entry as a byte range and fail. The pages
/// are read without the index, as pyarrow and DuckDB read them.
fn sound_page_index(metadata: Arc<ParquetMetaData>) -> Arc<ParquetMetaData> {
    let Some(offsets) = metadata.offset_index() else {
        return metadata;
    };
    let sound = offsets.iter().flatten().all(|chunk| {
        chunk.page_locations().iter().all(|page| {
            page.offset >= 0 && page.first_row_index >= 0 && page.compressed_page_size > 0
        })
    });
    if sound {
        return metadata;
    }
    let without = Arc::unwrap_or_clone(metadata)
        .into_builder()
        .set_offset_index(None)
        .set_column_index(None)
        .build();
    Arc::new(without)
}

/// Checks what reading trusts in the footer of the file at `path` (`file_size` bytes), so a
/// corrupt footer is an error naming the file rather than a panic or a read of the wrong
/// bytes: every column chunk lies inside the file (offsets and sizes not negative — the
/// `parquet` crate panics on those — and not past its end) and in the file itself (no
/// `file_path`). Footers are checked once, before the footer cache keeps them.
pub fn check_footer(path: &str, metadata: &ParquetMetaData, file_size: u64) -> Result<()> {
    for (group, row_group) in metadata.row_groups().iter().enumerate() {
        for chunk in row_group.columns() {
            let column = chunk.column_path().string();
            let bad = |what: String| {
                exec_datafusion_err!(
                    "Parquet file '{path}': the footer's column chunk '{column}' of row group \
                     {group} {what} (the footer is corrupt)"
                )
            };
            if let Some(other) = chunk.file_path() {
                return Err(not_impl_datafusion_err!(
                    "Parquet file '{path}': column chunk '{column}' of row group {group} keeps its \
                     data in another file ('{other}'); lakescan reads Parquet files that hold \
                     their own column data"
                ));
            }
            let start = chunk
                .dictionary_page_offset()
                .unwrap_or(chunk.data_page_offset());
            let size = chunk.compressed_size();
            let data = chunk.data_page_offset();
            let inside = |at: i64| u64::try_from(at).is_ok_and(|at| at <= file_size);
            let end = start.checked_add(size);
            if start < 0 || size < 0 || !end.is_some_and(inside) || !inside(data) {
                return Err(bad(format!(
                    "lies at offset {start} with {size} bytes (data pages at {data}), outside \
                     the file's {file_size} bytes"
                )));
            }
        }
    }
    Ok(())
}

/// Wraps a parquet error with the file it came from and what the user can do.
pub fn file_error(path: &str, e: ParquetError) -> DataFusionError {
    let hint = match &e {
        ParquetError::EOF(_)
        | ParquetError::NeedMoreData(_)
        | ParquetError::NeedMoreDataRange(_) => " (the file is truncated or not a Parquet file)",
        // A batch of byte arrays past 2 GiB: 32-bit offsets cannot address it.
        ParquetError::ArrowError(m) if m.contains("index overflow decoding byte array") => {
            " (a batch of this file's strings or binaries holds more than 2 GiB: a smaller \
             datafusion.execution.batch_size reads it)"
        }
        // What the Arrow reader reports of pages, dictionaries and levels that do not decode
        // (fetch errors come as other variants).
        ParquetError::ArrowError(_) => " (the file is corrupt: its pages do not decode)",
        _ => "",
    };
    exec_datafusion_err!("cannot read Parquet file '{path}': {e}{hint}")
}

/// Wraps an error met while reading a file's footer: the metadata is unreadable, or (an
/// external error) the object could not be fetched.
pub fn footer_error(path: &str, e: ParquetError) -> DataFusionError {
    let fetch_failed = match &e {
        ParquetError::External(inner) => {
            inner.is::<object_store::Error>() || inner.is::<ObjectChanged>()
        }
        _ => false,
    };
    let message = e.to_string();
    // Schemas the `parquet` crate cannot map to Arrow, though the file is sound.
    let unsupported = if message.contains("converted type INTERVAL") {
        Some("an INTERVAL column whose logical type its writer left UNKNOWN (parquet-mr)")
    } else if message.contains("Map cannot be repeated") {
        Some("a repeated MAP group (the legacy layout of maps old Hive and parquet-avro wrote)")
    } else {
        None
    };
    if let (false, Some(what)) = (fetch_failed, unsupported) {
        return DataFusionError::NotImplemented(format!(
            "Parquet file '{path}' has {what}, which lakescan does not read: {message}"
        ));
    }
    let encrypted = message.to_lowercase().contains("encrypt");
    let hint = match (fetch_failed, encrypted) {
        (true, _) => "",
        (false, true) => " (lakescan does not read encrypted Parquet files)",
        (false, false) => {
            " (the file is truncated, its footer is corrupt, or it is not a Parquet file)"
        }
    };
    exec_datafusion_err!(
        "cannot read the footer (file metadata) of Parquet file '{path}': {e}{hint}"
    )
}
