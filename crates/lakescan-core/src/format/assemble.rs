//! [`Assembler`]: decoded file batches → batches of the reader schema `R`.
//!
//! Per decoded batch, in order:
//!
//! 1. rows deleted by position that the reader's selection did not skip are dropped
//!    ([`DeletedMask`]), together with the first filter placed after decoding: one pass;
//!    the filters placed after decoding run on their decoded columns ([`PostFilter`]);
//! 2. each channel of `R` is produced from its source in this file: a decoded column in
//!    the table type (`adapt`), a constant repeated (partition value, info column, missing
//!    column), the row positions of the row-number virtual column (row index), or a row id
//!    struct of those;
//! 3. filters on generated columns run on the assembled channels ([`GeneratedFilter`]):
//!    their values exist only now (a filter must never see the placeholders before them).

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanArray, Int64Array, RecordBatch, RecordBatchOptions, StructArray,
    new_null_array,
};
use arrow::compute::kernels::numeric::add;
use arrow::compute::kernels::zip::zip;
use arrow::compute::{and, cast, filter_record_batch, is_not_null};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::{Result, ScalarValue, exec_err, internal_err};

use super::adapt::adapt_with_defaults;
use crate::binding::{FieldSource, MemberSource, SplitBinding};
use crate::defaults::MemberDefaults;
use crate::deleted_rows::DeletedMask;
use crate::filter::Filter;
use crate::format::column_predicate::ColumnPredicate;
use crate::reader::SplitContext;
use crate::split::FileSplit;
use crate::subfield::Subfield;
use crate::writer_times::TimeFix;

/// Name of the row-number virtual column in decoded batches.
pub const ROW_NUMBER_COLUMN: &str = "__lakescan_row_number";

/// A filter evaluated on a decoded column (its keep ratio made late materialization not
/// worth it).
pub struct PostFilter {
    /// The decoded root column's name.
    pub column: String,
    /// The filter.
    pub predicate: ColumnPredicate,
}

/// A filter on a generated column, evaluated on its assembled channel.
pub struct GeneratedFilter {
    /// Channel of `R` holding the generated column.
    pub channel: usize,
    /// The column or a member of it.
    pub subfield: Subfield,
    /// The filter.
    pub filter: Filter,
}

/// Where one channel of `R` comes from in the decoded batches.
enum ChannelSource {
    /// The decoded root column `name` (index bound once the decoder exists), in `table_type`;
    /// struct members the file lacks read their `defaults`.
    Column {
        name: String,
        index: Option<usize>,
        table_type: DataType,
        defaults: Option<Arc<MemberDefaults>>,
    },
    /// The same value in every row.
    Constant(ScalarValue),
    /// The row-number virtual column, as `table_type`.
    RowIndex {
        index: Option<usize>,
        table_type: DataType,
    },
    /// A decoded BIGINT column (`name`, when the file has it) whose NULLs read `base`, plus
    /// the row number when `row_numbers` (Iceberg's row lineage fill).
    Filled {
        column: Option<(String, Option<usize>)>,
        base: Option<i64>,
        plus_row_index: bool,
        row_numbers: Option<usize>,
    },
    /// A row id struct of `fields` with one source per member.
    RowId {
        fields: arrow::datatypes::Fields,
        members: Vec<MemberSource>,
        index: Option<usize>,
    },
}

/// Builds batches of `R` from decoded file batches.
pub struct Assembler {
    reader_schema: SchemaRef,
    channels: Vec<ChannelSource>,
    post_filters: Vec<PostFilter>,
    post_filter_columns: Vec<usize>,
    generated_filters: Vec<GeneratedFilter>,
    /// Rows deleted by position, when the reader's selection does not skip them.
    deleted: Option<DeletedMask>,
    /// Rows the deleted mask dropped from the last batch assembled.
    rows_deleted: usize,
    file: String,
    /// Whether the decoded columns were resolved (on the first batch).
    bound: bool,
    /// Decoded columns (by name) whose dates and timestamps are fixed before anything
    /// reads them, and their indices once bound.
    times: Vec<(String, Arc<TimeFix>)>,
    times_at: Vec<usize>,
}

impl Assembler {
    /// The assembler of one split whose file columns were bound by `binding`; file roots
    /// not in `decoded_roots` (no leaf of them holds what the scan needs: a member missing
    /// in this file) read as NULL.
    pub fn try_new(
        context: &SplitContext,
        split: &FileSplit,
        binding: &SplitBinding,
        file_schema: &Schema,
        decoded_roots: &std::collections::BTreeSet<usize>,
        filters: (Vec<PostFilter>, Vec<GeneratedFilter>),
    ) -> Result<Self> {
        let (post_filters, generated_filters) = filters;
        let spec = &context.spec;
        let mut channels: Vec<(usize, ChannelSource)> = vec![];
        for (field, source) in spec.fields().iter().zip(binding.sources()) {
            let Some(channel) = field.channel else {
                continue;
            };
            // The channel's type in `R`: the table type, less the struct members nobody reads.
            let reader_field = spec.reader_schema().field(channel);
            let table_type = reader_field.data_type().clone();
            let source = match source {
                FieldSource::File { root, .. } if decoded_roots.contains(root) => {
                    ChannelSource::Column {
                        name: file_schema.field(*root).name().clone(),
                        index: None,
                        table_type,
                        defaults: field.handle.member_defaults.clone(),
                    }
                }
                FieldSource::File { .. } => ChannelSource::Constant(absent(reader_field)?),
                FieldSource::Constant(v) => ChannelSource::Constant(in_type(v, reader_field)?),
                FieldSource::RowIndex => ChannelSource::RowIndex {
                    index: None,
                    table_type,
                },
                FieldSource::Filled {
                    file,
                    base,
                    plus_row_index,
                } => ChannelSource::Filled {
                    column: file
                        .as_ref()
                        .filter(|(root, _)| decoded_roots.contains(root))
                        .map(|(root, _)| (file_schema.field(*root).name().clone(), None)),
                    base: match base {
                        ScalarValue::Int64(v) => *v,
                        other => {
                            return internal_err!(
                                "fill base of '{}' is {other:?}, not BIGINT",
                                field.name()
                            );
                        }
                    },
                    plus_row_index: *plus_row_index,
                    row_numbers: None,
                },
                FieldSource::RowId(members) => {
                    // `members` follow the table type's members; `R` may read only some.
                    let (DataType::Struct(all), DataType::Struct(read)) =
                        (&field.handle.data_type, &table_type)
                    else {
                        return internal_err!("row id '{}' is not a struct", field.name());
                    };
                    let members = read
                        .iter()
                        .map(|f| match all.iter().position(|a| a.name() == f.name()) {
                            Some(i) => Ok(members[i].clone()),
                            None => internal_err!("row id member '{}' unknown", f.name()),
                        })
                        .collect::<Result<Vec<_>>>()?;
                    ChannelSource::RowId {
                        fields: read.clone(),
                        members,
                        index: None,
                    }
                }
            };
            channels.push((channel, source));
        }
        channels.sort_by_key(|(c, _)| *c);
        Ok(Self {
            reader_schema: Arc::clone(spec.reader_schema()),
            channels: channels.into_iter().map(|(_, s)| s).collect(),
            post_filters,
            post_filter_columns: vec![],
            generated_filters,
            deleted: None,
            rows_deleted: 0,
            file: split.display_path().to_string(),
            bound: false,
            times: vec![],
            times_at: vec![],
        })
    }

    /// Rows the deleted mask dropped from the last batch assembled (0 after this call).
    pub fn take_rows_deleted(&mut self) -> usize {
        std::mem::take(&mut self.rows_deleted)
    }

    /// Drops the rows `mask` deletes from every decoded batch.
    pub fn drop_deleted(&mut self, mask: DeletedMask) {
        self.deleted = Some(mask);
    }

    /// Resolves the decoded columns in `decoded`, the schema of the decoded batches (the
    /// decoder's own `schema()` leaves out virtual columns, so the first batch's is used).
    fn bind_decoded(&mut self, decoded: &SchemaRef) -> Result<()> {
        let file = &self.file;
        let index_of = |name: &str| match decoded.index_of(name) {
            Ok(i) => Ok(i),
            Err(_) => internal_err!("decoded batches of '{file}' lack column '{name}'"),
        };
        for channel in &mut self.channels {
            match channel {
                ChannelSource::Column { name, index, .. } => *index = Some(index_of(name)?),
                ChannelSource::RowIndex { index, .. } => {
                    *index = Some(index_of(ROW_NUMBER_COLUMN)?)
                }
                ChannelSource::Filled {
                    column,
                    base,
                    plus_row_index,
                    row_numbers,
                } => {
                    if let Some((name, index)) = column {
                        *index = Some(index_of(name)?);
                    }
                    if *plus_row_index && base.is_some() {
                        *row_numbers = Some(index_of(ROW_NUMBER_COLUMN)?);
                    }
                }
                ChannelSource::RowId { members, index, .. } => {
                    if members.iter().any(|m| matches!(m, MemberSource::RowIndex)) {
                        *index = Some(index_of(ROW_NUMBER_COLUMN)?);
                    }
                }
                ChannelSource::Constant(_) => {}
            }
        }
        self.post_filter_columns = self
            .post_filters
            .iter()
            .map(|f| index_of(&f.column))
            .collect::<Result<_>>()?;
        self.times_at = self
            .times
            .iter()
            .map(|(column, _)| index_of(column))
            .collect::<Result<_>>()?;
        self.bound = true;
        Ok(())
    }

    /// The same assembler fixing the dates and timestamps of the decoded columns named in
    /// `times` before its filters and channels read them.
    pub fn with_times(mut self, times: Vec<(String, Arc<TimeFix>)>) -> Self {
        self.times = times;
        self
    }

    /// `decoded` with the columns of [`Self::with_times`] fixed; an error names the file.
    fn fix_times(&self, decoded: RecordBatch) -> Result<RecordBatch> {
        let mut columns = decoded.columns().to_vec();
        for ((name, fix), &i) in self.times.iter().zip(&self.times_at) {
            columns[i] = fix
                .apply(&columns[i])
                .or_else(|e| exec_err!("file '{}': column '{name}': {e}", self.file))?;
        }
        let options = RecordBatchOptions::new().with_row_count(Some(decoded.num_rows()));
        Ok(RecordBatch::try_new_with_options(
            decoded.schema(),
            columns,
            &options,
        )?)
    }

    /// A batch of `R` from one decoded batch (see the module docs).
    pub fn assemble(&mut self, mut decoded: RecordBatch) -> Result<RecordBatch> {
        if !self.bound {
            self.bind_decoded(decoded.schema_ref())?;
        }
        if !self.times.is_empty() {
            decoded = self.fix_times(decoded)?;
        }
        // The deleted rows' mask waits for the first filter's: both go in one pass.
        let mut kept = match &mut self.deleted {
            Some(deleted) => deleted.next_batch(decoded.num_rows())?,
            None => None,
        }
        .map(BooleanArray::from);
        self.rows_deleted = kept.as_ref().map_or(0, |k| k.len() - k.true_count());
        for (filter, &index) in self.post_filters.iter().zip(&self.post_filter_columns) {
            if decoded.num_rows() == 0 {
                break;
            }
            let mut mask = filter.predicate.keep(decoded.column(index))?;
            if let Some(kept) = kept.take() {
                mask = and(&mask, &kept)?;
            }
            if mask.true_count() < decoded.num_rows() {
                decoded = filter_record_batch(&decoded, &mask)?;
            }
        }
        if let Some(kept) = kept {
            decoded = filter_record_batch(&decoded, &kept)?;
        }
        let rows = decoded.num_rows();
        let columns = self
            .channels
            .iter()
            .map(|source| self.channel(source, &decoded))
            .collect::<Result<Vec<_>>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        let mut batch =
            RecordBatch::try_new_with_options(Arc::clone(&self.reader_schema), columns, &options)?;
        for g in &self.generated_filters {
            if batch.num_rows() == 0 {
                break;
            }
            let values = g.subfield.extract(batch.column(g.channel))?;
            let mask = g.filter.evaluate(&values)?;
            if mask.true_count() < batch.num_rows() {
                batch = filter_record_batch(&batch, &mask)?;
            }
        }
        Ok(batch)
    }

    /// The lineage fill: the file's values where not NULL, else `base` (+ the row number).
    fn filled(
        &self,
        decoded: &RecordBatch,
        column: Option<&(String, Option<usize>)>,
        base: Option<i64>,
        row_numbers: Option<usize>,
    ) -> Result<ArrayRef> {
        let rows = decoded.num_rows();
        let stored = match column {
            Some((_, Some(i))) => Some(cast(decoded.column(*i), &DataType::Int64)?),
            Some((name, None)) => {
                return internal_err!("column '{name}' of '{}' was not bound", self.file);
            }
            None => None,
        };
        // What NULLs read: the base (plus the row's file position), or NULL without one.
        let fill: ArrayRef = match (base, row_numbers) {
            (None, _) => new_null_array(&DataType::Int64, rows),
            (Some(base), None) => Arc::new(Int64Array::from_value(base, rows)),
            (Some(base), Some(i)) => {
                let positions = cast(decoded.column(i), &DataType::Int64)?;
                add(&positions, &Int64Array::new_scalar(base)).or_else(|e| {
                    exec_err!(
                        "file '{}': row id {base} + a row position overflows BIGINT: {e}",
                        self.file
                    )
                })?
            }
        };
        Ok(match stored {
            None => fill,
            Some(stored) if stored.null_count() == 0 => stored,
            Some(stored) => zip(&is_not_null(&stored)?, &stored, &fill)?,
        })
    }

    fn channel(&self, source: &ChannelSource, decoded: &RecordBatch) -> Result<ArrayRef> {
        let rows = decoded.num_rows();
        match source {
            ChannelSource::Column {
                index: Some(i),
                table_type,
                name,
                defaults,
            } => adapt_with_defaults(decoded.column(*i), table_type, defaults.as_deref()).or_else(
                |e| {
                    exec_err!(
                        "file '{}': column '{name}' cannot be read as {table_type}: {e}",
                        self.file
                    )
                },
            ),
            ChannelSource::Constant(v) => v.to_array_of_size(rows),
            ChannelSource::Filled {
                column,
                base,
                row_numbers,
                ..
            } => self.filled(decoded, column.as_ref(), *base, *row_numbers),
            ChannelSource::RowIndex {
                index: Some(i),
                table_type,
            } => Ok(cast(decoded.column(*i), table_type)?),
            ChannelSource::RowId {
                fields,
                members,
                index,
            } => {
                let columns = fields
                    .iter()
                    .zip(members)
                    .map(|(field, member)| match (member, index) {
                        (MemberSource::RowIndex, Some(i)) => {
                            Ok(cast(decoded.column(*i), field.data_type())?)
                        }
                        (MemberSource::Constant(v), _) => v.to_array_of_size(rows),
                        (MemberSource::RowIndex, None) => {
                            internal_err!("row id member '{}' without row numbers", field.name())
                        }
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(Arc::new(StructArray::try_new(
                    fields.clone(),
                    columns,
                    None,
                )?))
            }
            ChannelSource::Column { index: None, .. }
            | ChannelSource::RowIndex { index: None, .. } => {
                internal_err!("decoded columns of '{}' were not bound", self.file)
            }
        }
    }
}

/// The value of a file column none of whose needed subfields this file has: NULL, or a
/// default when the column cannot be NULL (its subfields read as NULL all the same).
fn absent(field: &Field) -> Result<ScalarValue> {
    if field.is_nullable() {
        ScalarValue::try_from(field.data_type())
    } else {
        ScalarValue::new_default(field.data_type())
    }
}

/// A constant of the split as a value of its channel's type (a missing column's NULL in the
/// table type becomes a NULL of the pruned reader type).
fn in_type(value: &ScalarValue, field: &Field) -> Result<ScalarValue> {
    if &value.data_type() == field.data_type() {
        return Ok(value.clone());
    }
    if value.is_null() {
        return absent(field);
    }
    value.cast_to(field.data_type())
}
