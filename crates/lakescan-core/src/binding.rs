//! `SplitBinding`: the per-split state of a scan — where each field's values come from in
//! *this* file (seed §7). Rebuilt by every prepare, so a constant of one split (a partition
//! value, a missing column's NULL) can never leak into the next: a column that is missing in
//! one file and present in the next reads real values again (seed §15.7).

use arrow::datatypes::{DataType, Schema};
use datafusion::common::{Result, ScalarValue, exec_err};

use crate::extract::is_safe_widening;
use crate::handle::ColumnRole;
use crate::scan_spec::ScanSpec;
use crate::split::FileSplit;

/// Where one field's values come from in the current file.
#[derive(Debug, Clone)]
pub enum FieldSource {
    /// Top-level column `root` of the file, stored as `file_type`.
    File {
        /// Root column index in the file schema.
        root: usize,
        /// The type stored in the file (cast to the table type on read).
        file_type: DataType,
    },
    /// The same value for every row of the split.
    Constant(ScalarValue),
}

/// Sources of every field of a [`ScanSpec`], aligned with [`ScanSpec::fields`].
#[derive(Debug, Clone)]
pub struct SplitBinding {
    sources: Vec<FieldSource>,
}

impl SplitBinding {
    /// Binds `spec` to one split whose file has `file_schema` (matched by name).
    pub fn try_new(spec: &ScanSpec, split: &FileSplit, file_schema: &Schema) -> Result<Self> {
        let sources = spec
            .fields()
            .iter()
            .map(|f| {
                let t = &f.handle.data_type;
                match &f.handle.role {
                    ColumnRole::Regular => file_source(split, file_schema, &f.handle.name, t),
                    ColumnRole::PartitionKey => {
                        let value = split.partition_value(&f.handle.name).flatten();
                        parse_constant(split, &f.handle.name, value, t).map(FieldSource::Constant)
                    }
                    ColumnRole::Synthesized(key) => {
                        let value = split.info_columns.iter().find(|(k, _)| k == key);
                        let value = value.map(|(_, v)| v.as_str());
                        parse_constant(split, &f.handle.name, value, t).map(FieldSource::Constant)
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
}

fn file_source(
    split: &FileSplit,
    file: &Schema,
    name: &str,
    table_type: &DataType,
) -> Result<FieldSource> {
    let Ok(root) = file.index_of(name) else {
        return Ok(FieldSource::Constant(ScalarValue::try_from(table_type)?));
    };
    let file_type = file.field(root).data_type().clone();
    if !can_adapt(&file_type, table_type) {
        return exec_err!(
            "file '{}': column '{name}' is stored as {file_type}, which cannot be read as the table type {table_type}",
            split.file_path
        );
    }
    Ok(FieldSource::File { root, file_type })
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
            split.file_path
        ),
    }
}

/// True when values stored as `file` can be read as `table` without changing them:
/// the same type, a safe widening, or a timestamp stored in another unit or zone.
pub fn can_adapt(file: &DataType, table: &DataType) -> bool {
    use DataType::*;
    let same_shape = file.equals_datatype(table);
    same_shape
        || is_safe_widening(file, table)
        || matches!(
            (file, table),
            (Timestamp(..), Timestamp(..)) | (Date32, Date64)
        )
        || matches!(file, Dictionary(_, v) if can_adapt(v, table))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handle::{Assignments, ColumnHandle, TableHandle};
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
        ScanSpec::try_new(&table, &Assignments::new(vec![0, 1, 2])).unwrap()
    }

    fn split(p: Option<&str>) -> FileSplit {
        let mut s = FileSplit::whole_file(Path::from("t/p=x/f.parquet"), 1);
        s.partition_keys = vec![("p".into(), p.map(String::from))];
        s
    }

    #[test]
    fn missing_column_then_present_column() {
        let spec = spec();
        let only_a = Schema::new(vec![Field::new("a", DataType::Int32, true)]);
        let b1 = SplitBinding::try_new(&spec, &split(Some("2024-01-02")), &only_a).unwrap();
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
        let b2 = SplitBinding::try_new(&spec, &split(None), &both).unwrap();
        assert!(matches!(b2.sources()[1], FieldSource::File { root: 0, .. }));
        assert!(matches!(&b2.sources()[2], FieldSource::Constant(v) if v.is_null()));
    }

    #[test]
    fn bad_partition_value_and_incompatible_type_name_the_file() {
        let spec = spec();
        let schema = Schema::new(vec![Field::new("a", DataType::Utf8, true)]);
        let err = SplitBinding::try_new(&spec, &split(None), &schema)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("t/p=x/f.parquet") && err.contains("'a'"),
            "{err}"
        );
        let ok = Schema::new(vec![Field::new("a", DataType::Int64, true)]);
        let err = SplitBinding::try_new(&spec, &split(Some("tuesday")), &ok)
            .unwrap_err()
            .to_string();
        assert!(err.contains("'tuesday'") && err.contains("'p'"), "{err}");
    }
}
