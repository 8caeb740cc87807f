//! `SplitBinding`: the per-split state of a scan — where each field's values come from in
//! *this* file. Rebuilt by every prepare, so a constant of one split (a partition value, a
//! missing column's NULL, a row id's file name) can never leak into the next: a column that
//! is missing in one file and present in the next reads real values again, and a row id's
//! constants change with the split (scenarios 7 and 9 of `docs/scenarios.md`).
//!
//! [`SplitConstants`] are the part known without opening the file (partition values, info
//! columns): filters on them skip a split before any I/O.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions, new_null_array,
};
use arrow::datatypes::{DataType, Schema};
use datafusion::common::{Result, ScalarValue, exec_err, internal_err};
use datafusion::physical_expr::utils::{collect_columns, split_conjunction};

use crate::extract::is_safe_widening;
use crate::handle::ColumnRole;
use crate::scan_spec::ScanSpec;
use crate::split::FileSplit;
use crate::split_filters::SplitFilters;

/// Where one field's values come from in the current file.
#[derive(Debug, Clone)]
pub enum FieldSource {
    /// Top-level column `root` of the file, stored as `file_type`.
    File {
        /// Root column index in the file schema.
        root: usize,
        /// The type stored in the file (adapted to the table type on read).
        file_type: DataType,
    },
    /// The same value for every row of the split (partition value, info column, missing
    /// column).
    Constant(ScalarValue),
    /// The file row position.
    RowIndex,
    /// A row id: a struct of generated members.
    RowId(Vec<MemberSource>),
    /// A file column (when the file has it) whose NULLs are filled with `base`, plus the
    /// row's file position when `plus_row_index` (`ColumnRole::Filled`).
    Filled {
        /// The file column: root index and stored type.
        file: Option<(usize, DataType)>,
        /// The split's base value (BIGINT, NULL: NULLs stay NULL).
        base: ScalarValue,
        /// Whether the row's file position is added to `base`.
        plus_row_index: bool,
    },
}

/// Where one member of a row id comes from.
#[derive(Debug, Clone)]
pub enum MemberSource {
    /// The file row position.
    RowIndex,
    /// A constant of the split.
    Constant(ScalarValue),
}

impl FieldSource {
    /// Whether the reader generates row positions for this field.
    pub fn needs_row_index(&self) -> bool {
        match self {
            Self::RowIndex => true,
            Self::RowId(members) => members.iter().any(|m| matches!(m, MemberSource::RowIndex)),
            Self::Filled {
                base,
                plus_row_index,
                ..
            } => *plus_row_index && !base.is_null(),
            Self::File { .. } | Self::Constant(_) => false,
        }
    }
}

/// The values of a split's constant fields (partition keys, info columns, regular columns
/// whose value the split knows), aligned with
/// [`ScanSpec::fields`]; `None` for fields that are not split constants.
#[derive(Debug, Clone)]
pub struct SplitConstants {
    values: Vec<Option<ScalarValue>>,
}

impl SplitConstants {
    /// Types the split's partition values and reads its info columns.
    pub fn try_new(spec: &ScanSpec, split: &FileSplit) -> Result<Self> {
        let values = spec
            .fields()
            .iter()
            .map(|f| {
                let (name, t) = (&f.handle.name, &f.handle.data_type);
                match &f.handle.role {
                    ColumnRole::PartitionKey => {
                        let value = split.values().partition(name).flatten();
                        parse_constant(split, name, value, t).map(Some)
                    }
                    ColumnRole::Info(key) => info_constant(split, name, key, t).map(Some),
                    ColumnRole::Regular => match split.values().known(name) {
                        Some(v) if &v.data_type() == t => Ok(Some(v.clone())),
                        Some(v) => v.cast_to(t).map(Some).or_else(|e| {
                            exec_err!(
                                "file '{}': the value {v} every row has in column '{name}' \
                                 cannot be read as {t}: {e}",
                                split.display_path()
                            )
                        }),
                        None => Ok(None),
                    },
                    _ => Ok(None),
                }
            })
            .collect::<Result<_>>()?;
        Ok(Self { values })
    }

    /// The value of field `i`, if it is a split constant.
    pub fn value(&self, i: usize) -> Option<&ScalarValue> {
        self.values.get(i).and_then(Option::as_ref)
    }

    /// False when a filter or a residual conjunct that only reads split constants rejects
    /// this split's values: the split is skipped before its file is opened.
    pub fn pass(&self, spec: &ScanSpec, filters: &SplitFilters) -> Result<bool> {
        for (subfield, filter) in &filters.filters {
            let Some((i, _)) = spec.field(subfield.root()) else {
                continue;
            };
            let value = self.value(i).and_then(|v| constant_subfield(v, subfield));
            if value.is_some_and(|v| !filter.test_constant(&v)) {
                return Ok(false);
            }
        }
        let Some(residual) = &filters.residual else {
            return Ok(true);
        };
        let reader = spec.reader_schema();
        let constant_channel = |channel: usize| {
            spec.fields()
                .iter()
                .enumerate()
                .find(|(_, f)| f.channel == Some(channel))
                .and_then(|(i, _)| self.value(i))
        };
        for conjunct in split_conjunction(residual) {
            let columns = collect_columns(conjunct);
            if columns.is_empty()
                || !columns
                    .iter()
                    .all(|c| constant_channel(c.index()).is_some())
            {
                continue;
            }
            let row = reader
                .fields()
                .iter()
                .enumerate()
                .map(|(c, field)| match constant_channel(c) {
                    Some(v) => v.to_array_of_size(1),
                    None => Ok(new_null_array(field.data_type(), 1)),
                })
                .collect::<Result<Vec<ArrayRef>>>()?;
            let options = RecordBatchOptions::new().with_row_count(Some(1));
            let batch = RecordBatch::try_new_with_options(Arc::clone(reader), row, &options)?;
            let result = conjunct.evaluate(&batch)?.into_array(1)?;
            let Some(result) = result.as_any().downcast_ref::<BooleanArray>() else {
                return internal_err!("residual conjunct {conjunct} is not boolean");
            };
            if !(result.is_valid(0) && result.value(0)) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// Sources of every field of a [`ScanSpec`], aligned with [`ScanSpec::fields`].
#[derive(Debug, Clone)]
pub struct SplitBinding {
    sources: Vec<FieldSource>,
}

impl SplitBinding {
    /// Binds `spec` to one split whose file has `file_schema` (matched by name).
    pub fn try_new(
        spec: &ScanSpec,
        split: &FileSplit,
        constants: &SplitConstants,
        file_schema: &Schema,
    ) -> Result<Self> {
        let sources = spec
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let t = &f.handle.data_type;
                if let Some(value) = constants.value(i) {
                    return Ok(FieldSource::Constant(value.clone()));
                }
                match &f.handle.role {
                    ColumnRole::Regular => {
                        let source = file_source(split, file_schema, &f.handle.name, t)?;
                        let missing = matches!(source, FieldSource::Constant(_));
                        if missing && spec.is_required_stage_column(&f.handle.name) {
                            return exec_err!(
                                "file '{}': column '{}', which a batch stage of this split reads \
                                 (bucket conversion, deletes), is missing from the file",
                                split.display_path(),
                                f.handle.name
                            );
                        }
                        Ok(source)
                    }
                    ColumnRole::RowIndex => Ok(FieldSource::RowIndex),
                    ColumnRole::RowId(members) => row_id_source(split, &f.handle.name, t, members),
                    ColumnRole::Filled {
                        base,
                        plus_row_index,
                    } => filled_source(split, file_schema, &f.handle.name, base, *plus_row_index),
                    ColumnRole::PartitionKey | ColumnRole::Info(_) => {
                        internal_err!("split constant '{}' was not typed", f.handle.name)
                    }
                }
            })
            .collect::<Result<_>>()?;
        Ok(Self { sources })
    }

    /// Source per field.
    pub fn sources(&self) -> &[FieldSource] {
        &self.sources
    }

    /// Whether some field needs the file row positions.
    pub fn needs_row_index(&self) -> bool {
        self.sources.iter().any(FieldSource::needs_row_index)
    }
}

fn file_source(
    split: &FileSplit,
    file: &Schema,
    name: &str,
    table_type: &DataType,
) -> Result<FieldSource> {
    let Ok(root) = file.index_of(name) else {
        let value = match split.values().missing(name) {
            Some(v) if v.data_type() == *table_type => v.clone(),
            Some(v) => v.cast_to(table_type).or_else(|e| {
                exec_err!(
                    "file '{}': the value {v} of column '{name}', which the file does not store, \
                     cannot be read as {table_type}: {e}",
                    split.display_path()
                )
            })?,
            None => ScalarValue::try_from(table_type)?,
        };
        return Ok(FieldSource::Constant(value));
    };
    let file_type = file.field(root).data_type().clone();
    if !can_adapt(&file_type, table_type) {
        return exec_err!(
            "file '{}': column '{name}' is stored as {file_type}, which cannot be read as the table type {table_type}",
            split.display_path()
        );
    }
    Ok(FieldSource::File { root, file_type })
}

fn filled_source(
    split: &FileSplit,
    file: &Schema,
    name: &str,
    base_key: &str,
    plus_row_index: bool,
) -> Result<FieldSource> {
    let base = info_constant(split, name, base_key, &DataType::Int64)?;
    let file = match file.index_of(name) {
        Err(_) => None,
        Ok(root) => {
            let file_type = file.field(root).data_type().clone();
            if !matches!(file_type, DataType::Int64 | DataType::Int32) {
                return exec_err!(
                    "file '{}': column '{name}' is stored as {file_type}, not BIGINT",
                    split.display_path()
                );
            }
            Some((root, file_type))
        }
    };
    Ok(FieldSource::Filled {
        file,
        base,
        plus_row_index,
    })
}

fn row_id_source(
    split: &FileSplit,
    name: &str,
    data_type: &DataType,
    members: &[ColumnRole],
) -> Result<FieldSource> {
    let DataType::Struct(fields) = data_type else {
        return internal_err!("row id column '{name}' is not a struct but {data_type}");
    };
    if fields.len() != members.len() {
        return internal_err!(
            "row id column '{name}': {} members, {} roles",
            fields.len(),
            members.len()
        );
    }
    let sources = fields
        .iter()
        .zip(members)
        .map(|(field, role)| match role {
            ColumnRole::RowIndex => Ok(MemberSource::RowIndex),
            ColumnRole::Info(key) => info_constant(split, field.name(), key, field.data_type())
                .map(MemberSource::Constant),
            other => internal_err!("row id member '{}' has role {other:?}", field.name()),
        })
        .collect::<Result<_>>()?;
    Ok(FieldSource::RowId(sources))
}

/// The info column `key` of `split` as a `data_type` value.
fn info_constant(
    split: &FileSplit,
    name: &str,
    key: &str,
    data_type: &DataType,
) -> Result<ScalarValue> {
    let Some(value) = split.values().info(key) else {
        return internal_err!(
            "split of '{}' has no info column '{key}' for column '{name}'",
            split.display_path()
        );
    };
    if &value.data_type() == data_type {
        return Ok(value.clone());
    }
    value.cast_to(data_type).or_else(|e| {
        exec_err!(
            "file '{}': info column '{key}' = {value} cannot be read as {data_type} for column '{name}': {e}",
            split.display_path()
        )
    })
}

/// The value of `subfield` inside a constant of its column.
pub fn constant_subfield(
    value: &ScalarValue,
    subfield: &crate::subfield::Subfield,
) -> Option<ScalarValue> {
    if subfield.path().is_empty() {
        return Some(value.clone());
    }
    let array = value.to_array_of_size(1).ok()?;
    let nested = subfield.extract(&array).ok()?;
    ScalarValue::try_from_array(&nested, 0).ok()
}

/// Parses a partition or info value written as a string; `None` is SQL NULL.
pub fn parse_constant(
    split: &FileSplit,
    name: &str,
    value: Option<&str>,
    data_type: &DataType,
) -> Result<ScalarValue> {
    let Some(value) = value else {
        return ScalarValue::try_from(data_type);
    };
    match ScalarValue::try_from_string(value.to_string(), data_type) {
        Ok(v) => Ok(v),
        Err(e) => exec_err!(
            "file '{}': value '{value}' of column '{name}' is not a valid {data_type}: {e}",
            split.display_path()
        ),
    }
}

/// True when values stored as `file` can be read as `table` without changing them:
/// the same type, a safe widening, a timestamp stored in another unit or zone, a column of
/// NULLs only, or nested types whose members (matched by name; missing ones read as NULL)
/// adapt.
pub fn can_adapt(file: &DataType, table: &DataType) -> bool {
    use DataType::*;
    match (file, table) {
        (Struct(file_fields), Struct(table_fields)) => table_fields.iter().all(
            |t| match file_fields.iter().find(|f| f.name() == t.name()) {
                Some(f) => can_adapt(f.data_type(), t.data_type()),
                None => t.is_nullable(),
            },
        ),
        (List(f) | LargeList(f), List(t) | LargeList(t)) => can_adapt(f.data_type(), t.data_type()),
        // Keys and values by position: writers name them differently (Parquet's
        // `key_value.key`, ORC's `entries.keys`).
        (Map(f, _), Map(t, _)) => match (f.data_type(), t.data_type()) {
            (Struct(fkv), Struct(tkv)) if fkv.len() == 2 && tkv.len() == 2 => {
                can_adapt(fkv[0].data_type(), tkv[0].data_type())
                    && can_adapt(fkv[1].data_type(), tkv[1].data_type())
            }
            _ => can_adapt(f.data_type(), t.data_type()),
        },
        _ => {
            file.equals_datatype(table)
                || is_safe_widening(file, table)
                || matches!(
                    (file, table),
                    // Iceberg v3 promotes `date` to `timestamp`/`timestamp_ns`: midnight.
                    (Timestamp(..), Timestamp(..))
                        | (Date32, Date64)
                        | (Date32, Timestamp(_, None))
                        // Avro's `fixed` read as the binary Hive reads it as.
                        | (FixedSizeBinary(_), Binary | LargeBinary | BinaryView)
                        // Bytes a table declares as strings (Impala's Parquet STRING has no
                        // UTF8 annotation), as Hive and Trino read them: validated, a byte
                        // sequence that is not UTF-8 an error.
                        | (Binary | LargeBinary | BinaryView, Utf8 | LargeUtf8 | Utf8View)
                )
                || matches!(file, Dictionary(_, v) if can_adapt(v, table))
                // A column its writer typed as NULL only (pyarrow's and polars' all-NULL
                // columns) reads as NULL in any type.
                || matches!(file, Null)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handle::{Assignments, ColumnHandle, TableHandle};
    use crate::split::SplitValue;
    use arrow::datatypes::Field;
    use object_store::path::Path;

    fn spec() -> ScanSpec {
        let cols = vec![
            ColumnHandle::regular(&Field::new("a", DataType::Int64, true)),
            ColumnHandle::regular(&Field::new("b", DataType::Utf8, true)),
            ColumnHandle::with_role(
                &Field::new("p", DataType::Date32, true),
                ColumnRole::PartitionKey,
            ),
        ];
        let table = TableHandle::try_new("t", cols).unwrap();
        ScanSpec::try_new(&table, &Assignments::new(vec![0, 1, 2]), &[]).unwrap()
    }

    fn split(p: Option<&str>) -> FileSplit {
        FileSplit::builder(Path::from("t/p=x/f.parquet"), 1)
            .value("p", SplitValue::Partition(p.map(String::from)))
            .build()
            .unwrap()
    }

    fn bind(spec: &ScanSpec, split: &FileSplit, file: &Schema) -> Result<SplitBinding> {
        let constants = SplitConstants::try_new(spec, split)?;
        SplitBinding::try_new(spec, split, &constants, file)
    }

    #[test]
    fn missing_column_then_present_column() {
        let spec = spec();
        let only_a = Schema::new(vec![Field::new("a", DataType::Int32, true)]);
        let b1 = bind(&spec, &split(Some("2024-01-02")), &only_a).unwrap();
        assert!(matches!(b1.sources()[0], FieldSource::File { root: 0, .. }));
        assert!(matches!(&b1.sources()[1], FieldSource::Constant(v) if v.is_null()));
        assert!(matches!(
            &b1.sources()[2],
            FieldSource::Constant(ScalarValue::Date32(Some(_)))
        ));
        let both = Schema::new(vec![
            Field::new("b", DataType::Utf8, true),
            Field::new("a", DataType::Int64, true),
        ]);
        let b2 = bind(&spec, &split(None), &both).unwrap();
        assert!(matches!(b2.sources()[1], FieldSource::File { root: 0, .. }));
        assert!(matches!(&b2.sources()[2], FieldSource::Constant(v) if v.is_null()));
    }

    #[test]
    fn bad_partition_value_and_incompatible_type_name_the_file() {
        let spec = spec();
        let schema = Schema::new(vec![Field::new("a", DataType::Utf8, true)]);
        let err = bind(&spec, &split(None), &schema).unwrap_err().to_string();
        assert!(
            err.contains("t/p=x/f.parquet") && err.contains("'a'"),
            "{err}"
        );
        let ok = Schema::new(vec![Field::new("a", DataType::Int64, true)]);
        let err = bind(&spec, &split(Some("tuesday")), &ok)
            .unwrap_err()
            .to_string();
        assert!(err.contains("'tuesday'") && err.contains("'p'"), "{err}");
    }
}
