//! The Avro split reader: Avro object container files (Iceberg data files, Hive tables of
//! Avro files), read with `arrow-avro` 58.
//!
//! ```text
//!  file:  "Obj\x01" | metadata (avro.schema, avro.codec) | sync | block: count, size, data, sync | …
//! ```
//!
//! Avro has no statistics and no random access: a file is one split (the planner emits one
//! per Avro file) and one unit of the shared split lifecycle ([`crate::format::lifecycle`]:
//! [`AvroFormat`]), fetched whole, decoded in the top-level columns the scan reads
//! (`open_projected`), and every filter runs on the decoded rows
//! (`Pending ─LoadFile, bind─▶ Bound ─▶ Pruned ─LoadDeletes─▶ Ready ─▶ Reading ─▶ Done`; a
//! split of another byte range reads nothing, a constant a filter rejects ends it at
//! `bind`).
//!
//! What `arrow-avro` does not do, done here:
//!
//! * **full names** — it cannot resolve a reference to a named type written with its full
//!   name in `name`, and it parses strings marked `uuid` into bytes; [`respell`] respells
//!   the header first;
//! * **field ids** — it drops a record field's `field-id`; the ids of the columns and of the
//!   members, elements, keys and values below them are read from the header's `avro.schema`
//!   and the file schema is renamed by them (`field_ids::rename_fields_by_id`);
//! * **timestamps without zone** — it reads every `timestamp-micros` as UTC; Iceberg's
//!   `timestamp` (`adjust-to-utc: false`) reads as a timestamp without zone;
//! * **truncation** — it stops silently at a cut last block; the blocks are walked first
//!   (`blocks`) and the rows decoded must be the rows their headers count;
//! * **panics** on corrupt input are caught and named;
//! * **maps with non-string keys** — Avro maps have string keys, so Iceberg writes a map
//!   with other keys as an array of `key`/`value` records marked `"logicalType": "map"`
//!   (the record fields carry the key and value ids); it decodes as a list of structs and is
//!   read as the map it is.
//!
//! Not read: union columns (Iceberg writes none). [`seam`] is Avro's `FormatSeam` (schema,
//! statistics, whole columns of delete files).

pub mod header;
pub mod respell;
pub mod schema;
pub mod seam;

use std::collections::BTreeSet;
use std::io::Cursor;
use std::sync::Arc;

use arrow::array::{BooleanArray, Int64Array, RecordBatch, RecordBatchOptions};
use arrow::compute::{and, filter_record_batch};
use arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef};
use async_trait::async_trait;
use bytes::Bytes;
use datafusion::common::{DataFusionError, Result, exec_datafusion_err, internal_err};
use parquet::arrow::async_reader::AsyncFileReader;

use crate::binding::{FieldSource, SplitBinding};
use crate::deleted_rows::{DeletedMask, DeletedPositions, DeletedRows};
use crate::field_ids::rename_fields_by_id;
use crate::format::assemble::{Assembler, ROW_NUMBER_COLUMN};
use crate::format::column_predicate::ColumnPredicate;
use crate::format::{FileFormat, wrong_format};
use crate::format::{FileFormatReader, FormatSplitReader};
use crate::format::{constants_rejected, member_missing_in_type};
use crate::io::counting_reader;
use crate::reader::{ReaderBatch, SplitContext};
use crate::split::FileSplit;
use crate::writer_times::{Hybrid, NaiveTimes, TimeFix};
use schema::{WRITER_TIME_ZONE_KEY, WriterZone, annotate_record, json_id, retype, writer_zone};

/// Reads the one split of an Avro data file into batches of the reader schema `R`: the
/// shared split lifecycle over [`AvroFormat`].
pub type AvroSplitReader = FormatSplitReader<AvroFormat>;

/// The Avro format under the split lifecycle: a file is one unit, without statistics.
#[derive(Debug, Clone, Copy, Default)]
pub struct AvroFormat;

/// A fetched file bound to the scan.
#[derive(Clone)]
pub struct Bound {
    file: AvroFile,
    binding: SplitBinding,
}

/// An Avro file, fetched and checked.
#[derive(Clone)]
struct AvroFile {
    bytes: Bytes,
    /// The columns as decoded, renamed to the table's names by field id.
    schema: SchemaRef,
    /// Rows the file's blocks hold.
    rows: u64,
    /// The zone Hive's writer converted its timestamps from, when it names one.
    writer_zone: Option<WriterZone>,
    /// The fix of its dates and timestamps, when its writer says it wrote them in Java's
    /// hybrid calendar.
    times: TimeFix,
}

/// The file being decoded.
pub struct Reading {
    path: String,
    schema: SchemaRef,
    reader: arrow_avro::reader::Reader<Cursor<Bytes>>,
    /// The zone Hive's writer converted its timestamps from ([`schema::WriterZone`]).
    writer_zone: Option<WriterZone>,
    /// The fix of its dates and timestamps ([`hybrid_times`]).
    times: TimeFix,
    filters: Vec<(usize, ColumnPredicate)>,
    /// Rows deleted by position, as a mask over the file's rows (decoded in order).
    deleted: Option<DeletedMask>,
    /// The schema of the batches handed to the assembler: the file's columns, then the
    /// row-number column when one is generated.
    batch_schema: SchemaRef,
    /// File position of the next row.
    position: u64,
    rows: u64,
    assembler: Assembler,
    reader_schema: SchemaRef,
    metrics: crate::metrics::LakeScanMetrics,
}

#[async_trait]
impl FileFormatReader for AvroFormat {
    type Bound = Bound;
    type Reading = Reading;

    /// The planner gives an Avro file one split; another range reads nothing.
    fn range_is_empty(&self, split: &FileSplit) -> bool {
        split.start() > 0
    }

    /// `LoadFile`, then `bind`.
    async fn open(&self, split: Arc<FileSplit>, context: SplitContext) -> Result<Bound> {
        let file = load_file(Arc::clone(&split), context.clone()).await?;
        let binding =
            SplitBinding::try_new(&context.spec, &split, &context.constants, &file.schema)?;
        Ok(Bound { file, binding })
    }

    fn constants_rejected(&self, bound: &Bound, context: &SplitContext) -> bool {
        constants_rejected(context, &bound.binding, member_missing_in_type)
    }

    /// The whole file.
    fn units_in_range(&self, _bound: &Bound, _split: &FileSplit) -> Vec<usize> {
        vec![0]
    }

    /// No statistics: every filter runs on the decoded rows.
    fn prune(
        &self,
        _bound: &Bound,
        units: &[usize],
        _split: &FileSplit,
        _context: &SplitContext,
    ) -> Result<Vec<usize>> {
        Ok(units.to_vec())
    }

    fn read(
        &self,
        bound: Bound,
        _units: Vec<usize>,
        deleted: Option<Arc<DeletedRows>>,
        split: &Arc<FileSplit>,
        context: &SplitContext,
    ) -> Result<Reading> {
        start_reading(split, context, bound, deleted)
    }

    async fn next(
        &self,
        reading: &mut Reading,
        _split: &FileSplit,
        _context: &SplitContext,
    ) -> Result<Option<ReaderBatch>> {
        reading.next()
    }
}

/// The decoder of the file, with the filters in force now.
fn start_reading(
    split: &FileSplit,
    context: &SplitContext,
    bound: Bound,
    deleted: Option<Arc<DeletedRows>>,
) -> Result<Reading> {
    let Bound { file, binding } = bound;
    let spec = &context.spec;
    let mut filters = vec![];
    for (subfield, filter) in &context.filters.filters {
        let Some((i, field)) = spec.field(subfield.root()) else {
            continue;
        };
        let FieldSource::File { root, file_type } = &binding.sources()[i] else {
            continue;
        };
        let has_default = field
            .handle
            .member_defaults
            .as_deref()
            .is_some_and(|d| d.at(subfield.path()).is_some());
        if member_missing_in_type(*root, file_type, subfield) && !has_default {
            continue;
        }
        filters.push((
            *root,
            ColumnPredicate::new(field, subfield, filter, spec.adaptive()),
        ));
    }
    let wanted = wanted_roots(context, &binding, &filters);
    let (reader, roots) = open_projected(
        split.display_path(),
        &file.bytes,
        context.options.batch_size,
        &wanted,
    )?;
    let schema = Arc::new(file.schema.project(&roots)?);
    // Filters read their column at its place among the decoded ones.
    let filters = filters
        .into_iter()
        .filter_map(|(root, p)| roots.binary_search(&root).ok().map(|k| (k, p)))
        .collect();
    let generated = crate::parquet::plan::generated_filters(context, &binding);
    let assembler = Assembler::try_new(
        context,
        split,
        &binding,
        &file.schema,
        &roots.iter().copied().collect(),
        (vec![], generated),
    )?;
    Ok(Reading {
        path: split.display_path().to_string(),
        schema: Arc::clone(&schema),
        reader,
        writer_zone: file.writer_zone,
        times: file.times,
        filters,
        deleted: deleted.filter(|d| !d.is_empty()).map(|rows| {
            let decoded = std::iter::once(0..file.rows).collect();
            DeletedMask::new(DeletedPositions::new(rows), decoded)
        }),
        batch_schema: match binding.needs_row_index() {
            false => schema,
            true => {
                let mut fields: Vec<Field> =
                    schema.fields().iter().map(|f| f.as_ref().clone()).collect();
                fields.push(Field::new(ROW_NUMBER_COLUMN, DataType::Int64, false));
                Arc::new(Schema::new(fields))
            }
        },
        position: 0,
        rows: file.rows,
        assembler,
        reader_schema: Arc::clone(spec.reader_schema()),
        metrics: context.metrics.clone(),
    })
}

/// The top-level columns of the file the scan reads: those its filters and its outputs
/// read (a struct whole: Avro records are decoded whole).
fn wanted_roots(
    context: &SplitContext,
    binding: &SplitBinding,
    filters: &[(usize, ColumnPredicate)],
) -> BTreeSet<usize> {
    let mut wanted: BTreeSet<usize> = filters.iter().map(|(root, _)| *root).collect();
    for (field, source) in context.spec.fields().iter().zip(binding.sources()) {
        if field.channel.is_none() {
            continue;
        }
        match source {
            FieldSource::File { root, .. }
            | FieldSource::Filled {
                file: Some((root, _)),
                ..
            } => {
                wanted.insert(*root);
            }
            _ => {}
        }
    }
    wanted
}

/// A reader of the `wanted` top-level columns of the file (all of them when `arrow-avro`
/// cannot project its schema, e.g. a named type defined in a column left out), and the
/// columns it decodes, ascending. At least one column is decoded: `arrow-avro` counts rows
/// by the columns it decodes.
fn open_projected(
    path: &str,
    bytes: &Bytes,
    batch_size: usize,
    wanted: &BTreeSet<usize>,
) -> Result<(arrow_avro::reader::Reader<Cursor<Bytes>>, Vec<usize>)> {
    let whole = open(path, bytes, batch_size, None)?;
    let all = whole.schema();
    let mut roots: Vec<usize> = wanted
        .iter()
        .copied()
        .filter(|&r| r < all.fields().len())
        .collect();
    if roots.is_empty() && !all.fields().is_empty() {
        roots.push(0);
    }
    if roots.len() == all.fields().len() {
        return Ok((whole, roots));
    }
    let projected = match open(path, bytes, batch_size, Some(roots.clone())) {
        Ok(reader) => reader,
        Err(_) => return Ok((whole, (0..all.fields().len()).collect())),
    };
    // The projected columns must be the wanted ones, in file order, or the whole file is
    // decoded.
    let decoded = projected.schema();
    let names: Vec<&String> = decoded.fields().iter().map(|f| f.name()).collect();
    let expected: Vec<&String> = roots.iter().map(|&r| all.field(r).name()).collect();
    match names == expected {
        true => Ok((projected, roots)),
        false => Ok((whole, (0..all.fields().len()).collect())),
    }
}

/// `LoadFile`: the whole file, its blocks walked, its schema renamed (owned inputs: the
/// future stays `Send`).
async fn load_file(split: Arc<FileSplit>, context: SplitContext) -> Result<AvroFile> {
    let path = split.display_path();
    let mut reader = counting_reader(&context, &split, split.file_size());
    let bytes = fetch_whole(&mut reader, path).await?;
    let rows = blocks(path, &bytes)?;
    let decoder = open(path, &bytes, 1, None)?;
    let (annotated, writer_zone) = annotated_schema(path, &decoder)?;
    let iceberg = context.spec.field_ids().is_some();
    let times = match iceberg {
        true => TimeFix::default(),
        false => {
            let header = decoder.avro_header();
            let text = |key: &str| header.get(key).map(|v| String::from_utf8_lossy(v).into());
            hybrid_times(&text).map_err(|e| avro_error(path, e))?
        }
    };
    let fields = match context.spec.field_ids() {
        Some(matching) => rename_fields_by_id(&annotated, matching),
        // Hive's matching ignores case: columns take the table's spelling.
        None => crate::column_case::respelled(&annotated, context.spec.file_columns())
            .unwrap_or(annotated),
    };
    Ok(AvroFile {
        bytes,
        schema: Arc::new(Schema::new(fields)),
        rows,
        writer_zone,
        times,
    })
}

/// The fix of a file's dates and timestamps when its writer says it wrote them in Java's
/// hybrid calendar: Hive 3.1.3 and later with `writer.proleptic = false` (their wall
/// clocks, already in the writer's zone, keep their label), Spark before 3.0 or in its
/// `LEGACY` mode (`org.apache.spark.legacyDateTime`; instants rebased in the zone it
/// records, UTC without one), as Hive's and Spark's Avro readers read them. Files without
/// such a mark read as written.
/// `text` gives the header's metadata values.
fn hybrid_times(text: &dyn Fn(&str) -> Option<String>) -> std::result::Result<TimeFix, String> {
    if let Some(proleptic) = text("writer.proleptic") {
        let hybrid = proleptic.trim().eq_ignore_ascii_case("false");
        return Ok(TimeFix {
            hybrid_dates: hybrid,
            zoned: hybrid.then_some(Hybrid { zone: None }),
            naive: hybrid.then_some(NaiveTimes::Hybrid(Hybrid { zone: None })),
        });
    }
    let legacy = text("org.apache.spark.version").is_some_and(|v| v.as_str() < "3.0.0")
        || text("org.apache.spark.legacyDateTime").is_some();
    if !legacy {
        return Ok(TimeFix::default());
    }
    let zone = match text("org.apache.spark.timeZone") {
        Some(id) => Some(WriterZone::parse(&id).ok_or_else(|| {
            format!("its org.apache.spark.timeZone '{id}' is not a time zone lakescan knows")
        })?),
        None => None,
    };
    Ok(TimeFix {
        hybrid_dates: true,
        zoned: Some(Hybrid { zone }),
        naive: None,
    })
}

/// The columns of the file `decoder` reads as lakescan reads them ([`schema`]: ids,
/// timestamps without zone, maps), and the zone its writer names.
fn annotated_schema(
    path: &str,
    decoder: &arrow_avro::reader::Reader<Cursor<Bytes>>,
) -> Result<(Fields, Option<WriterZone>)> {
    let header = decoder.avro_header();
    let json = header
        .get("avro.schema")
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .ok_or_else(|| avro_error(path, "its header has no avro.schema"))?;
    let json: serde_json::Value = serde_json::from_str(&json)
        .map_err(|e| avro_error(path, format!("its avro.schema is not JSON: {e}")))?;
    let zone = writer_zone(header.get(WRITER_TIME_ZONE_KEY)).map_err(|e| avro_error(path, e))?;
    Ok((
        annotate_record(decoder.schema().fields(), &json, zone),
        zone,
    ))
}

/// The whole file `reader` reads (`path` in errors), its schema respelled as `arrow-avro`
/// reads it as Java does ([`respell`]).
async fn fetch_whole(reader: &mut crate::io::CountingReader, path: &str) -> Result<Bytes> {
    let bytes = reader
        .get_bytes(0..reader.file_size())
        .await
        .map_err(|e| avro_error(path, format!("reading it failed: {e}")))?;
    respell::respelled(bytes).map_err(|e| avro_error(path, e))
}

/// An `arrow-avro` reader over the file's bytes (of the top-level columns of `projection`
/// only, when given), its panics caught.
fn open(
    path: &str,
    bytes: &Bytes,
    batch_size: usize,
    projection: Option<Vec<usize>>,
) -> Result<arrow_avro::reader::Reader<Cursor<Bytes>>> {
    let built = std::panic::catch_unwind(|| {
        let builder = arrow_avro::reader::ReaderBuilder::new().with_batch_size(batch_size.max(1));
        match projection {
            Some(projection) => builder.with_projection(projection),
            None => builder,
        }
        .build(Cursor::new(bytes.clone()))
    })
    .map_err(|_| avro_error(path, "its header does not decode (the file is corrupt)"))?;
    built.map_err(|e| avro_error(path, format!("its header does not decode: {e}")))
}

/// Walks the blocks of an object container file: the rows they hold. A block cut short,
/// one whose sync marker is not the header's, or bytes after the last block are errors.
fn blocks(path: &str, bytes: &[u8]) -> Result<u64> {
    let corrupt = |why: &str| avro_error(path, format!("{why} (the file is truncated or corrupt)"));
    if !bytes.starts_with(b"Obj\x01") {
        if let Some(found) = FileFormat::from_magic(bytes, bytes) {
            return Err(wrong_format(path, FileFormat::Avro, found));
        }
        return Err(avro_error(path, "it is not an Avro object container file"));
    }
    let mut at = header::AvroHeader::parse(bytes)
        .map_err(|e| corrupt(&format!("its header is corrupt: {e}")))?
        .sync_offset();
    let sync = bytes
        .get(at..at + 16)
        .ok_or_else(|| corrupt("its header is cut"))?
        .to_vec();
    at += 16;
    let mut rows = 0u64;
    while at < bytes.len() {
        let count = varint(bytes, &mut at).ok_or_else(|| corrupt("a block header is cut"))?;
        let size = varint(bytes, &mut at).ok_or_else(|| corrupt("a block header is cut"))?;
        let (Ok(count), Ok(size)) = (u64::try_from(count), usize::try_from(size)) else {
            return Err(corrupt("a block has a negative count or size"));
        };
        let end = at
            .checked_add(size)
            .filter(|end| end + 16 <= bytes.len())
            .ok_or_else(|| corrupt("its last block is cut"))?;
        if bytes[end..end + 16] != sync[..] {
            return Err(corrupt("a block does not end in the header's sync marker"));
        }
        rows += count;
        at = end + 16;
    }
    Ok(rows)
}

/// A zigzag varint (Avro's `long`) at `at`, moving past it.
fn varint(bytes: &[u8], at: &mut usize) -> Option<i64> {
    let mut value: u64 = 0;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some((value >> 1) as i64 ^ -((value & 1) as i64));
        }
    }
    None
}

impl Reading {
    /// The next batch of `R`; `None` at the end.
    fn next(&mut self) -> Result<Option<ReaderBatch>> {
        let (mut scanned, mut deleted_total) = (0, 0);
        loop {
            let path = self.path.clone();
            let polled =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.reader.next()))
                    .map_err(|_| {
                        avro_error(&path, "the Avro decoder panicked (the file is corrupt)")
                    })?;
            let decoded = match polled {
                None => {
                    if self.position != self.rows {
                        return Err(avro_error(
                            &path,
                            format!(
                                "its blocks count {} rows but {} decode (the file is corrupt)",
                                self.rows, self.position
                            ),
                        ));
                    }
                    if scanned == 0 {
                        return Ok(None);
                    }
                    return Ok(Some(ReaderBatch {
                        batch: RecordBatch::new_empty(Arc::clone(&self.reader_schema)),
                        rows_scanned: scanned,
                        rows_deleted: deleted_total,
                    }));
                }
                Some(Err(e)) => return Err(avro_error(&path, format!("it does not decode: {e}"))),
                Some(Ok(batch)) => batch,
            };
            let n = decoded.num_rows();
            let first = self.position;
            self.position += n as u64;
            scanned += n;
            if decoded.num_columns() != self.schema.fields().len() {
                return internal_err!(
                    "an Avro batch of '{path}' has {} columns, not the {} projected",
                    decoded.num_columns(),
                    self.schema.fields().len()
                );
            }
            let columns = decoded
                .columns()
                .iter()
                .zip(self.schema.fields())
                .map(|(c, f)| {
                    self.times
                        .apply(&retype(c, f.data_type(), self.writer_zone)?)
                })
                .collect::<Result<Vec<_>>>()
                .map_err(|e| avro_error(&path, e))?;
            let mut keep: Option<BooleanArray> = None;
            let mut dropped = 0;
            if let Some(deleted) = &mut self.deleted
                && let Some(bits) = deleted.next_batch(n)?
            {
                let mask = BooleanArray::new(bits, None);
                dropped = n - mask.true_count();
                let counts = deleted.positions().counts(first..first + n as u64);
                self.metrics
                    .rows_deleted_position
                    .add(counts.position_deletes as usize);
                self.metrics
                    .rows_deleted_vector
                    .add(counts.deletion_vector as usize);
                keep = Some(mask);
            }
            deleted_total += dropped;
            for (root, predicate) in &self.filters {
                if keep.as_ref().is_some_and(|k| k.true_count() == 0) {
                    break;
                }
                let mask = predicate.keep(&columns[*root])?;
                keep = Some(match keep {
                    Some(k) => and(&k, &mask)?,
                    None => mask,
                });
            }
            let mut columns = columns;
            if self.batch_schema.fields().len() > columns.len() {
                let positions = (first as i64)..(first + n as u64) as i64;
                columns.push(Arc::new(Int64Array::from_iter_values(positions)));
            }
            let options = RecordBatchOptions::new().with_row_count(Some(n));
            let mut batch = RecordBatch::try_new_with_options(
                Arc::clone(&self.batch_schema),
                columns,
                &options,
            )?;
            if let Some(keep) = keep {
                if keep.true_count() == 0 {
                    continue;
                }
                if keep.true_count() < n {
                    batch = filter_record_batch(&batch, &keep)?;
                }
            }
            let batch = self.assembler.assemble(batch)?;
            return Ok(Some(ReaderBatch {
                batch,
                rows_scanned: scanned,
                rows_deleted: deleted_total,
            }));
        }
    }
}

/// An error reading the Avro file at `path`.
fn avro_error(path: &str, message: impl std::fmt::Display) -> DataFusionError {
    exec_datafusion_err!("cannot read Avro file '{path}': {message}")
}

/// The top-level columns with the Iceberg field ids `ids` (or, for a column without a
/// `field-id`, the name beside its id) of the whole Avro file at `location` (`size` bytes,
/// `path` in errors): its batches, their columns in the order of `ids`. For small files
/// read whole, such as delete files, their reads counted into `counters`; `Err(id)` for the
/// first id no column has.
pub(crate) async fn read_columns_by_id(
    store: &Arc<dyn object_store::ObjectStore>,
    location: &object_store::path::Path,
    size: u64,
    path: &str,
    ids: &[(i32, &str)],
    counters: &crate::metrics::ReadCounters,
) -> Result<std::result::Result<Vec<RecordBatch>, i32>> {
    let mut reader = crate::io::CountingReader::counted(store, location, size, counters);
    let bytes = fetch_whole(&mut reader, path).await?;
    let rows = blocks(path, &bytes)?;
    let mut decoder = open(path, &bytes, 8192, None)?;
    let json = decoder
        .avro_header()
        .get("avro.schema")
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .ok_or_else(|| avro_error(path, "its header has no avro.schema"))?;
    let json: serde_json::Value = serde_json::from_str(&json)
        .map_err(|e| avro_error(path, format!("its avro.schema is not JSON: {e}")))?;
    let members = json
        .get("fields")
        .and_then(|f| f.as_array())
        .cloned()
        .unwrap_or_default();
    let schema = decoder.schema();
    let position = |id: i32, name: &str| {
        members
            .iter()
            .position(|m| m.get("field-id").and_then(json_id) == Some(i64::from(id)))
            .or_else(|| schema.fields().iter().position(|f| f.name() == name))
    };
    let mut columns = vec![];
    for (id, name) in ids {
        match position(*id, name) {
            Some(k) => columns.push(k),
            None => return Ok(Err(*id)),
        }
    }
    let mut out = vec![];
    let mut decoded_rows = 0u64;
    loop {
        let next = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decoder.next()))
            .map_err(|_| avro_error(path, "the Avro decoder panicked (the file is corrupt)"))?;
        let batch = match next {
            None => break,
            Some(batch) => {
                batch.map_err(|e| avro_error(path, format!("it does not decode: {e}")))?
            }
        };
        decoded_rows += batch.num_rows() as u64;
        let fields: Vec<Field> = columns.iter().map(|&k| schema.field(k).clone()).collect();
        let arrays = columns
            .iter()
            .map(|&k| Arc::clone(batch.column(k)))
            .collect();
        out.push(RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?);
    }
    if decoded_rows != rows {
        return Err(avro_error(
            path,
            format!("its blocks count {rows} rows but {decoded_rows} decode (the file is corrupt)"),
        ));
    }
    Ok(Ok(out))
}

#[cfg(test)]
mod tests;
