//! Opening an ORC file (`LoadTail`): the postscript, footer and stripe statistics, checked
//! before anything trusts them, and errors that name the file.
//!
//! ```text
//!  file:  "ORC" | stripe 0 | … | stripe n-1 | metadata | footer | postscript | ps length (1 byte)
//!                                              (stripe stats)  (types, stripes, row counts)
//! ```
//!
//! `orc-rust` panics, overflows or misreads on several corrupt tails (lengths past the file
//! subtract below zero, a non-struct root asserts, a cyclic type list recurses without end,
//! an unknown codec reads as uncompressed), so the tail is decoded and checked here first
//! ([`super::tail_check`]); only then is it handed to `orc-rust`'s
//! `read_metadata`, over the bytes already fetched. The footer's type attributes
//! (`iceberg.id`), which `orc-rust`'s schema drops, are kept from this decoding.
//!
//! `orc-rust` 0.8 builds its `Compression` only from a file (`from_proto` is private); the
//! codec of a file is taken from a one-type synthetic tail with the same postscript codec
//! (`tail_check::compression_of`), so the footer can be decompressed before `orc-rust` parses
//! it.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, TimeUnit};
use bytes::{Bytes, BytesMut};
use datafusion::common::{DataFusionError, Result, internal_err};
use futures::FutureExt;
use orc_rust::compression::Compression;
use orc_rust::proto;
use orc_rust::reader::metadata::read_metadata_async;
use orc_rust::schema::DataType as OrcType;
use orc_rust::schema::{ArrowSchemaOptions, TimestampPrecision};
use parquet::arrow::async_reader::AsyncFileReader;
use prost013::Message;

use crate::io::{CountingReader, counting_reader};

use super::errors::{decoder_panic, orc_error};
use super::file::OrcFile;
use super::statistics::WriterFixes;
use super::synthetic_tail::{TailChunks, original_chunks};
use super::tail_cache::TailCache;
use super::tail_check::{
    TailLayout, check_postscript, check_stripes, check_types, compression_of, decode_section,
};
use crate::field_ids::{FIELD_ID_KEY, rename_fields_by_id};
use crate::format::{FileFormat, format_of_tail, other_format, wrong_format};
use crate::reader::SplitContext;
use crate::split::FileSplit;

/// `LoadTail`: reads and checks the tail of `split`'s file. For a table that matches columns
/// by field id (Iceberg), the file schema is renamed to the table's names by the `iceberg.id`
/// attributes of its types, and Iceberg's type attributes give the declared types
/// ([`with_iceberg_attributes`]).
pub async fn load_tail(split: Arc<FileSplit>, context: SplitContext) -> Result<OrcFile> {
    let path = split.display_path();
    let reader = counting_reader(&context, &split, split.file_size());
    // Kept tails serve only files of the session's stores whose version is known.
    let cache = match (
        &context.metadata_cache,
        split.last_modified(),
        split.store(),
    ) {
        (Some(cache), Some(modified), None) => Some((TailCache::new(Arc::clone(cache)), modified)),
        _ => None,
    };
    let (location, size) = (split.file_path(), split.file_size());
    let kept = cache
        .as_ref()
        .and_then(|(c, modified)| c.get(location, size, *modified, reader.clone()));
    let mut file = match kept {
        Some(file) => file,
        None => {
            let file = read_tail(path, reader).await?;
            if let Some((c, modified)) = &cache {
                c.put(location, size, *modified, &file);
            }
            file
        }
    };
    check_not_acid(path, &file)?;
    if let Some(matching) = context.spec.field_ids() {
        let annotated = with_iceberg_attributes(&file);
        let renamed = rename_fields_by_id(annotated.fields(), matching);
        file.schema = Arc::new(arrow::datatypes::Schema::new_with_metadata(
            renamed,
            annotated.metadata().clone(),
        ));
    } else {
        if let Some(named) = by_position(&file.schema, context.spec.file_columns()) {
            file.schema = Arc::new(named);
        }
        // Columns and struct members spelled otherwise than the table's (Hive's matching
        // ignores case).
        if let Some(fields) =
            crate::column_case::respelled(file.schema.fields(), context.spec.file_columns())
        {
            let metadata = file.schema.metadata().clone();
            file.schema = Arc::new(arrow::datatypes::Schema::new_with_metadata(
                fields, metadata,
            ));
        }
    }
    Ok(file)
}

/// A file whose columns are read by position, renamed to the table's file columns in
/// declared order, as Hive and Trino read ORC files (by position): one named `_col0`,
/// `_col1`, … (as Hive's ORC writer names them when it does not know the table's names),
/// or one of whose column names no table column has, ignoring case (every table column
/// renamed since the file was written: by name, each would read NULL). `None` for a file
/// read by name. Columns past the table's keep their names (never read).
fn by_position(
    schema: &arrow::datatypes::Schema,
    columns: &arrow::datatypes::Fields,
) -> Option<arrow::datatypes::Schema> {
    let hive_names = schema
        .fields()
        .iter()
        .enumerate()
        .all(|(k, f)| f.name() == &format!("_col{k}"));
    let renamed = !columns.iter().any(|c| {
        schema
            .fields()
            .iter()
            .any(|f| f.name().eq_ignore_ascii_case(c.name()))
    });
    let positional = !schema.fields().is_empty() && !columns.is_empty() && (hive_names || renamed);
    if !positional || columns.iter().any(|c| c.name().starts_with("_col")) {
        return None;
    }
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(k, f)| match columns.get(k) {
            Some(column) => f.as_ref().clone().with_name(column.name()),
            None => f.as_ref().clone(),
        })
        .collect();
    Some(arrow::datatypes::Schema::new_with_metadata(
        fields,
        schema.metadata().clone(),
    ))
}

/// The file schema of `file` with Iceberg's type attributes applied: each field's
/// `iceberg.id` as its id ([`FIELD_ID_KEY`]), `iceberg.binary-type` `UUID` / `FIXED` (with
/// `iceberg.length`) as fixed-size binaries and `iceberg.long-type` `TIME` as times, the
/// types Java's `ORCSchemaUtil` writes those Iceberg types as.
pub fn with_iceberg_attributes(file: &OrcFile) -> arrow::datatypes::Schema {
    let types = &file.footer.types;
    let roots = file.metadata.root_data_type().children();
    let fields: Vec<Field> = file
        .schema
        .fields()
        .iter()
        .zip(roots)
        .map(|(field, column)| annotate(field, column.data_type(), types))
        .collect();
    arrow::datatypes::Schema::new_with_metadata(fields, file.schema.metadata().clone())
}

fn annotate(field: &Field, orc: &OrcType, types: &[proto::Type]) -> Field {
    let attributes = types
        .get(orc.column_index())
        .map(|t| t.attributes.as_slice())
        .unwrap_or_default();
    let get = |key: &str| {
        attributes
            .iter()
            .find(|a| a.key.as_deref() == Some(key))
            .and_then(|a| a.value.as_deref())
    };
    let data_type = match (field.data_type(), orc) {
        (DataType::Binary, _) => match (get("iceberg.binary-type"), get("iceberg.length")) {
            (Some("UUID"), _) => DataType::FixedSizeBinary(16),
            (Some("FIXED"), Some(n)) => match n.trim().parse::<i32>() {
                Ok(n) if n > 0 => DataType::FixedSizeBinary(n),
                _ => DataType::Binary,
            },
            _ => DataType::Binary,
        },
        (DataType::Int64, _) if get("iceberg.long-type") == Some("TIME") => {
            DataType::Time64(TimeUnit::Microsecond)
        }
        (DataType::Struct(fields), OrcType::Struct { children, .. }) => DataType::Struct(
            fields
                .iter()
                .zip(children)
                .map(|(f, c)| annotate(f, c.data_type(), types))
                .collect(),
        ),
        (DataType::List(item), OrcType::List { child, .. }) => {
            DataType::List(Arc::new(annotate(item, child, types)))
        }
        (DataType::Map(entries, sorted), OrcType::Map { key, value, .. }) => {
            match entries.data_type() {
                DataType::Struct(kv) if kv.len() == 2 => {
                    let kv = vec![annotate(&kv[0], key, types), annotate(&kv[1], value, types)];
                    let entries = entries
                        .as_ref()
                        .clone()
                        .with_data_type(DataType::Struct(kv.into()));
                    DataType::Map(Arc::new(entries), *sorted)
                }
                _ => field.data_type().clone(),
            }
        }
        (other, _) => other.clone(),
    };
    let mut metadata = field.metadata().clone();
    if let Some(id) = get("iceberg.id") {
        metadata.insert(FIELD_ID_KEY.to_string(), id.trim().to_string());
    }
    field
        .clone()
        .with_data_type(data_type)
        .with_metadata(metadata)
}

/// The tail of the ORC file `meta` describes, read and checked, through `cache`: served from it when
/// it keeps this version's tail, else read and kept (the planner's statistics read it
/// before the scan, which then finds it there).
pub async fn cached_file_tail(
    store: &Arc<dyn object_store::ObjectStore>,
    meta: &object_store::ObjectMeta,
    cache: &TailCache,
) -> Result<OrcFile> {
    let reader = || {
        CountingReader::open(
            store,
            &meta.location,
            meta.size,
            datafusion::physical_plan::metrics::Count::new(),
        )
    };
    if let Some(file) = cache.get(&meta.location, meta.size, meta.last_modified, reader()) {
        return Ok(file);
    }
    let file = read_tail(meta.location.as_ref(), reader()).await?;
    cache.put(&meta.location, meta.size, meta.last_modified, &file);
    Ok(file)
}

/// The columns of the ORC file at `path` as a table declares them: timestamps in
/// nanoseconds (ORC's own precision, as Hive reads them); an error for a Hive ACID file.
pub fn file_schema(path: &str, file: &OrcFile) -> Result<arrow::datatypes::Schema> {
    check_not_acid(path, file)?;
    let options =
        ArrowSchemaOptions::new().with_timestamp_precision(TimestampPrecision::Nanosecond);
    Ok(file
        .metadata
        .root_data_type()
        .create_arrow_schema_with_options(&HashMap::new(), options))
}

/// The top-level columns of a Hive ACID (transactional) ORC file: its rows are in `row`,
/// beside the transaction that wrote or deleted each.
const ACID_COLUMNS: [&str; 6] = [
    "operation",
    "originalTransaction",
    "bucket",
    "rowId",
    "currentTransaction",
    "row",
];

/// A Hive ACID file is not a plain table file: reading its columns as the table's would
/// return the transaction columns and every version of every row.
fn check_not_acid(path: &str, file: &OrcFile) -> Result<()> {
    let names: Vec<&str> = file
        .schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .collect();
    // Hive's query-based compaction writes the same columns in lower case.
    let acid = names.len() == ACID_COLUMNS.len()
        && names
            .iter()
            .zip(ACID_COLUMNS)
            .all(|(name, acid)| name.eq_ignore_ascii_case(acid));
    if acid {
        return Err(DataFusionError::NotImplemented(format!(
            "ORC file '{path}' is a Hive ACID (transactional) file: lakescan does not read \
             Hive ACID tables (their base and delta directories must be merged by \
             transaction; see the user guide)"
        )));
    }
    Ok(())
}

/// Reads and checks the tail of the file `reader` reads (`path` names it in errors).
async fn read_tail(path: &str, mut reader: CountingReader) -> Result<OrcFile> {
    let file_size = reader.file_size();
    let (start, tail) = reader
        .fetch_tail()
        .await
        .map_err(|e| orc_error(path, format!("reading its tail failed: {e}")))?;
    if format_of_tail(&tail) != Some(FileFormat::Orc)
        && let Some(found) = other_format(&mut reader, FileFormat::Orc).await
    {
        return Err(wrong_format(path, FileFormat::Orc, found));
    }
    let layout = check_postscript(path, file_size, start, &tail)?;
    // Footer and metadata beyond the tail fetched: one more read, prepended.
    let (start, tail) = match layout.metadata.start < start {
        false => (start, tail),
        true => {
            let before = reader
                .get_bytes(layout.metadata.start..start)
                .await
                .map_err(|e| orc_error(path, format!("reading its footer failed: {e}")))?;
            let mut all = BytesMut::with_capacity(before.len() + tail.len());
            all.extend_from_slice(&before);
            all.extend_from_slice(&tail);
            (layout.metadata.start, all.freeze())
        }
    };
    let slice = |r: &Range<u64>| tail.slice((r.start - start) as usize..(r.end - start) as usize);
    let compression = compression_of(path, &layout.postscript)?;
    let mut footer: proto::Footer =
        decode_section(path, "footer", slice(&layout.footer), compression)?;
    check_types(path, &footer)?;
    // Decimals of writers before Hive 0.13 carry no precision or scale: Java reads them as
    // its default `decimal(38,10)`, and so must `orc-rust` (which would take precision 0).
    let rewritten = with_default_decimals(&mut footer).then_some(&footer);
    check_stripes(path, file_size, &footer)?;
    // Stripe statistics only prune: statistics that do not decode, or that do not match the
    // stripes, are left unread (Java reads them only when a filter asks), and `orc-rust` is
    // shown the tail without them.
    let decoded: Result<proto::Metadata> =
        decode_section(path, "metadata", slice(&layout.metadata), compression);
    let (stripe_stats, mut chunks) = match decoded {
        // A file of a writer before ORC 0.12: no metadata section, and no length for it,
        // which `orc-rust` requires.
        _ if layout.postscript.metadata_length.is_none() => (
            vec![],
            without_metadata(&layout, start, &tail, rewritten, compression)?,
        ),
        Ok(m) if m.stripe_stats.is_empty() || m.stripe_stats.len() == footer.stripes.len() => (
            m.stripe_stats,
            match rewritten {
                None => TailChunks {
                    file_size,
                    start,
                    tail,
                },
                Some(footer) => without_metadata(&layout, start, &tail, Some(footer), compression)?,
            },
        ),
        unusable => {
            let why = match unusable {
                Ok(m) => format!(
                    "statistics of {} stripes for {}",
                    m.stripe_stats.len(),
                    footer.stripes.len()
                ),
                Err(e) => e.to_string(),
            };
            log::warn!("{path}: stripe statistics left unread: {why}");
            let chunks = without_metadata(&layout, start, &tail, rewritten, compression)?;
            (vec![], chunks)
        }
    };
    let read = std::panic::AssertUnwindSafe(read_metadata_async(&mut chunks))
        .catch_unwind()
        .await
        .map_err(|panic| decoder_panic(path, panic))?;
    let file_metadata = read.map_err(|e| orc_error(path, format!("its tail is corrupt: {e}")))?;
    let options =
        ArrowSchemaOptions::new().with_timestamp_precision(TimestampPrecision::Microsecond);
    let schema = file_metadata
        .root_data_type()
        .create_arrow_schema_with_options(&HashMap::new(), options);
    let writer_fixes = WriterFixes::of(layout.postscript.writer_version, footer.writer);
    Ok(OrcFile {
        reader,
        metadata: Arc::new(file_metadata),
        footer: Arc::new(footer),
        stripe_statistics: Arc::new(stripe_stats),
        writer_fixes,
        schema: Arc::new(schema),
    })
}

/// The tail of a file (`tail` from `start`) as `orc-rust` reads it without its metadata
/// section: the footer (`footer` re-encoded when given, else the file's), then the
/// postscript saying `metadata_length = 0` (the stripes keep their offsets; only the
/// virtual file's end moves).
fn without_metadata(
    layout: &TailLayout,
    start: u64,
    tail: &Bytes,
    footer: Option<&proto::Footer>,
    compression: Option<Compression>,
) -> Result<TailChunks> {
    let cut = |r: &Range<u64>| tail.slice((r.start - start) as usize..(r.end - start) as usize);
    let footer = match footer {
        None => cut(&layout.footer),
        Some(footer) => original_chunks(&footer.encode_to_vec(), compression.is_some()),
    };
    let postscript = proto::PostScript {
        metadata_length: Some(0),
        footer_length: Some(footer.len() as u64),
        ..layout.postscript.clone()
    }
    .encode_to_vec();
    let Ok(ps_len) = u8::try_from(postscript.len()) else {
        return internal_err!("a postscript of {} bytes", postscript.len());
    };
    let mut bytes = BytesMut::new();
    bytes.extend_from_slice(&tail[..(layout.metadata.start - start) as usize]);
    bytes.extend_from_slice(&footer);
    bytes.extend_from_slice(&postscript);
    bytes.extend_from_slice(&[ps_len]);
    let bytes = bytes.freeze();
    Ok(TailChunks {
        file_size: start + bytes.len() as u64,
        start,
        tail: bytes,
    })
}

/// Gives the decimal types of `footer` without a precision (or with precision 0) Java's
/// default, `decimal(38,10)` (scale 10 when none is given); whether it changed one.
fn with_default_decimals(footer: &mut proto::Footer) -> bool {
    let mut changed = false;
    for t in &mut footer.types {
        if t.kind() == proto::r#type::Kind::Decimal && t.precision.unwrap_or(0) == 0 {
            t.precision = Some(38);
            t.scale = Some(t.scale.unwrap_or(10));
            changed = true;
        }
    }
    changed
}

/// The top-level columns with the Iceberg field ids `ids` (or, for a column without an
/// `iceberg.id`, the name beside its id) of the whole ORC file at `location` (`size` bytes,
/// `path` in errors): its batches, their columns in the order of `ids`. For small files read
/// whole, such as delete files, their reads counted into `counters`; `Err(id)` for the first
/// id no column has.
pub async fn read_columns_by_id(
    store: &Arc<dyn object_store::ObjectStore>,
    location: &object_store::path::Path,
    size: u64,
    path: &str,
    ids: &[(i32, &str)],
    counters: &crate::metrics::ReadCounters,
) -> Result<std::result::Result<Vec<arrow::array::RecordBatch>, i32>> {
    let reader = CountingReader::counted(store, location, size, counters);
    let mut file = read_tail(path, reader).await?;
    let bytes = file
        .reader
        .get_bytes(0..size)
        .await
        .map_err(|e| orc_error(path, format!("reading it failed: {e}")))?;
    let root = file.metadata.root_data_type().clone();
    let id_of = |column: usize| {
        file.footer
            .types
            .get(column)?
            .attributes
            .iter()
            .find_map(|a| {
                (a.key.as_deref() == Some("iceberg.id"))
                    .then(|| a.value.as_deref()?.trim().parse().ok())?
            })
    };
    let mut wanted: Vec<Option<usize>> = vec![];
    for (id, name) in ids {
        let by_id = root
            .children()
            .iter()
            .position(|c| id_of(c.data_type().column_index()) == Some(*id));
        let by_name = || root.children().iter().position(|c| c.name() == *name);
        wanted.push(by_id.or_else(by_name));
    }
    if let Some(k) = wanted.iter().position(Option::is_none) {
        return Ok(Err(ids[k].0));
    }
    let columns: Vec<usize> = wanted.into_iter().flatten().collect();
    let indices: Vec<usize> = columns
        .iter()
        .map(|&k| root.children()[k].data_type().column_index())
        .collect();
    let names: Vec<String> = columns
        .iter()
        .map(|&k| root.children()[k].name().to_string())
        .collect();
    let decoded = std::panic::catch_unwind(|| -> std::result::Result<_, String> {
        let mask = orc_rust::projection::ProjectionMask::roots(&root, indices);
        let reader = orc_rust::ArrowReaderBuilder::try_new(bytes)
            .map_err(|e| e.to_string())?
            .with_projection(mask)
            .with_timestamp_precision(TimestampPrecision::Microsecond)
            .build();
        reader
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())
    })
    .map_err(|panic| decoder_panic(path, panic))?
    .map_err(|e| orc_error(path, format!("it does not decode: {e}")))?;
    decoded
        .into_iter()
        .map(|batch| {
            let columns = names
                .iter()
                .map(|n| {
                    batch
                        .column_by_name(n)
                        .cloned()
                        .ok_or_else(|| orc_error(path, format!("column '{n}' was not decoded")))
                })
                .collect::<Result<Vec<_>>>()?;
            let fields: Vec<Field> = names
                .iter()
                .zip(&columns)
                .map(|(n, c)| Field::new(n, c.data_type().clone(), true))
                .collect();
            let schema = Arc::new(arrow::datatypes::Schema::new(fields));
            Ok(arrow::array::RecordBatch::try_new(schema, columns)?)
        })
        .collect::<Result<Vec<_>>>()
        .map(Ok)
}
