//! Iceberg metadata columns and row lineage (the spec's "Reserved Field IDs"
//! and "Row Lineage").
//!
//! DataFusion 54 has no hidden columns, so they are opt-in, like Hive's:
//! `OPTIONS ('metadata_columns' 'all' | '_file,_pos,…')`, or the session setting
//! `lakescan.iceberg_metadata_columns` for tables of a catalog. They are appended to the
//! table schema in this order:
//!
//! | column                          | field id   | type    | value                                             | role |
//! |---------------------------------|------------|---------|---------------------------------------------------|------|
//! | `_file`                         | 2147483646 | VARCHAR | the data file's path as its manifest writes it    | split constant |
//! | `_pos`                          | 2147483645 | BIGINT  | the row's position in the data file, from 0 (not after deletes, not in the split) | generated (row index) |
//! | `_spec_id`                      | 2147483643 | INTEGER | the partition spec the file was written with      | split constant |
//! | `_partition`                    | 2147483642 | STRUCT  | the file's partition values: one member per partition field of every spec of the table (by field id, named as the newest spec names it; `name_<field id>` when a newer field took the name); fields of other specs are NULL | split constant |
//! | `_row_id`                       | 2147483540 | BIGINT  | v3: the file's `_row_id` where not NULL, else `first_row_id + _pos`; NULL when the file has no `first_row_id` | filled |
//! | `_last_updated_sequence_number` | 2147483539 | BIGINT  | v3: the file's value where not NULL, else the file's data sequence number | filled |
//!
//! Split constants are tested against filters before a file is opened; filters on `_pos`
//! become row selections; the lineage columns are filled after decoding (core's
//! `ColumnRole::Filled`, filled by the reader's assembler) and their filters run on the filled values,
//! never on the file's placeholders.
//!
//! `_partition` of a table that was never partitioned is NULL (its type the empty struct,
//! Java's `struct<>`). `all` leaves out `_partition` of a table whose old v1 specs give one
//! partition field id to two different fields (naming it is `NotImplemented` then; a field
//! that became `void` is the same field) and the lineage columns of v1/v2 tables; naming
//! them there is an error (as Trino: a v1/v2 table has no row lineage, NULLs would read as
//! real ids). A metadata column whose name a data column has is an error.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Fields};
use datafusion::common::{Result, ScalarValue, exec_datafusion_err, not_impl_err, plan_err};
use iceberg::spec::{FormatVersion, PartitionSpec, Schema, TableMetadata, Transform, Type};
use lakescan_core::api::{
    ColumnHandle, ColumnRole, FieldIdNode, NestedIds, OptIn, OptInColumn, parse_opt_in,
};

use crate::schema::{StringTypes, arrow_type, literal_to_scalar};

/// Info key of the split's `first_row_id` (BIGINT, NULL when the file has none).
pub const FIRST_ROW_ID: &str = "$first_row_id";
/// Info key of the split's data sequence number (BIGINT).
pub const DATA_SEQUENCE_NUMBER: &str = "$data_sequence_number";

/// One metadata column.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum MetadataColumn {
    /// `_file`
    File,
    /// `_pos`
    Pos,
    /// `_spec_id`
    SpecId,
    /// `_partition`
    Partition,
    /// `_row_id`
    RowId,
    /// `_last_updated_sequence_number`
    LastUpdatedSequenceNumber,
}

impl MetadataColumn {
    /// Every metadata column, in schema order.
    pub const ALL: [Self; 6] = [
        Self::File,
        Self::Pos,
        Self::SpecId,
        Self::Partition,
        Self::RowId,
        Self::LastUpdatedSequenceNumber,
    ];

    /// The column name.
    pub fn name(self) -> &'static str {
        match self {
            Self::File => "_file",
            Self::Pos => "_pos",
            Self::SpecId => "_spec_id",
            Self::Partition => "_partition",
            Self::RowId => "_row_id",
            Self::LastUpdatedSequenceNumber => "_last_updated_sequence_number",
        }
    }

    /// The reserved field id.
    pub fn field_id(self) -> i32 {
        match self {
            Self::File => 2147483646,
            Self::Pos => 2147483645,
            Self::SpecId => 2147483643,
            Self::Partition => 2147483642,
            Self::RowId => 2147483540,
            Self::LastUpdatedSequenceNumber => 2147483539,
        }
    }

    /// Whether it is a row-lineage column (v3 tables only).
    pub fn is_lineage(self) -> bool {
        matches!(self, Self::RowId | Self::LastUpdatedSequenceNumber)
    }
}

impl OptInColumn for MetadataColumn {
    const KIND: &'static str = "metadata column";

    fn all() -> &'static [Self] {
        &Self::ALL
    }

    fn name(self) -> &'static str {
        MetadataColumn::name(self)
    }
}

/// Which metadata columns a table shows.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum MetadataSelection {
    /// None (the default).
    #[default]
    None,
    /// Every one the table has (`all`).
    All,
    /// These, in schema order.
    Only(Vec<MetadataColumn>),
}

impl MetadataSelection {
    /// Parses `all`, an empty text (none) or a comma list of names.
    pub fn parse(text: &str) -> Result<Self> {
        Ok(
            match parse_opt_in::<MetadataColumn>("metadata_columns", text)? {
                OptIn::All => Self::All,
                OptIn::Only(columns) if columns.is_empty() => Self::None,
                OptIn::Only(columns) => Self::Only(columns),
            },
        )
    }
}

/// The metadata columns of one table: which, and the type of `_partition`.
#[derive(Debug, Clone, Default)]
pub struct MetadataColumns {
    columns: Vec<MetadataColumn>,
    /// `_partition`'s members: partition field id and its member.
    partition: Vec<(i32, Field)>,
    /// The Iceberg result type of each field of each spec, by spec id (`None`: the field's
    /// source column is in no schema of the table).
    spec_types: HashMap<i32, Vec<Option<Type>>>,
}

impl MetadataColumns {
    /// The columns `selection` asks of `metadata`, checked against the data columns'
    /// names `data_columns`.
    pub fn try_new(
        selection: &MetadataSelection,
        metadata: &TableMetadata,
        data_columns: &[String],
        view_types: StringTypes,
    ) -> Result<Self> {
        let (partition, partition_problem) = match partition_members(metadata, view_types)? {
            Ok(members) => (members, None),
            Err(problem) => (vec![], Some(problem)),
        };
        let has_lineage = metadata.format_version() >= FormatVersion::V3;
        let columns: Vec<MetadataColumn> = match selection {
            MetadataSelection::None => vec![],
            MetadataSelection::All => MetadataColumn::ALL
                .into_iter()
                .filter(|c| *c != MetadataColumn::Partition || partition_problem.is_none())
                .filter(|c| !c.is_lineage() || has_lineage)
                .collect(),
            MetadataSelection::Only(columns) => {
                for c in columns {
                    if let (MetadataColumn::Partition, Some(problem)) = (c, &partition_problem) {
                        return not_impl_err!("metadata column _partition: {problem}");
                    }
                    if c.is_lineage() && !has_lineage {
                        return plan_err!(
                            "metadata column {}: row lineage needs a format version 3 table; \
                             this one is version {}",
                            c.name(),
                            metadata.format_version() as u8
                        );
                    }
                }
                columns.clone()
            }
        };
        for c in &columns {
            if data_columns
                .iter()
                .any(|d| d.eq_ignore_ascii_case(c.name()))
            {
                return plan_err!(
                    "metadata column {0} collides with the table column '{0}'; leave it out of \
                     metadata_columns",
                    c.name()
                );
            }
        }
        let spec_types = metadata
            .partition_specs_iter()
            .map(|spec| (spec.spec_id(), partition_result_types(metadata, spec)))
            .collect();
        Ok(Self {
            columns,
            partition,
            spec_types,
        })
    }

    /// The selected columns, in schema order.
    pub fn columns(&self) -> &[MetadataColumn] {
        &self.columns
    }

    /// The handle of each selected column, in schema order.
    pub fn handles(&self) -> Vec<ColumnHandle> {
        self.columns
            .iter()
            .map(|&c| {
                let (data_type, nullable, role) = match c {
                    MetadataColumn::File => {
                        (DataType::Utf8, false, ColumnRole::Info(c.name().into()))
                    }
                    MetadataColumn::Pos => (DataType::Int64, false, ColumnRole::RowIndex),
                    MetadataColumn::SpecId => {
                        (DataType::Int32, false, ColumnRole::Info(c.name().into()))
                    }
                    MetadataColumn::Partition => (
                        DataType::Struct(self.partition_fields()),
                        self.partition.is_empty(),
                        ColumnRole::Info(c.name().into()),
                    ),
                    MetadataColumn::RowId => (
                        DataType::Int64,
                        true,
                        ColumnRole::Filled {
                            base: FIRST_ROW_ID.into(),
                            plus_row_index: true,
                        },
                    ),
                    MetadataColumn::LastUpdatedSequenceNumber => (
                        DataType::Int64,
                        true,
                        ColumnRole::Filled {
                            base: DATA_SEQUENCE_NUMBER.into(),
                            plus_row_index: false,
                        },
                    ),
                };
                let mut handle =
                    ColumnHandle::with_role(&Field::new(c.name(), data_type, nullable), role);
                handle.field_id = Some(c.field_id());
                handle
            })
            .collect()
    }

    /// Field-id entries of the lineage columns a data file may store, so that a file's
    /// `_row_id` (by id) is read as the column to fill.
    pub fn stored_ids(&self) -> Vec<(i32, FieldIdNode)> {
        self.columns
            .iter()
            .filter(|c| c.is_lineage())
            .map(|c| {
                let node = FieldIdNode {
                    name: c.name().to_string(),
                    nested: NestedIds::Primitive,
                };
                (c.field_id(), node)
            })
            .collect()
    }

    /// The type of `_partition` (`None`: the table was never partitioned).
    pub fn partition_type(&self) -> Option<DataType> {
        (!self.partition.is_empty()).then(|| DataType::Struct(self.partition_fields()))
    }

    fn partition_fields(&self) -> Fields {
        self.partition.iter().map(|(_, f)| f.clone()).collect()
    }

    /// The info columns of a data file's splits.
    pub fn info_columns(&self, file: &FileInfo<'_>) -> Result<Vec<(String, ScalarValue)>> {
        let mut out = vec![];
        for c in &self.columns {
            match c {
                MetadataColumn::File => out.push((
                    c.name().to_string(),
                    ScalarValue::Utf8(Some(file.written_path.to_string())),
                )),
                MetadataColumn::SpecId => out.push((
                    c.name().to_string(),
                    ScalarValue::Int32(Some(file.spec.spec_id())),
                )),
                MetadataColumn::Partition => {
                    out.push((c.name().to_string(), self.partition_value(file)?))
                }
                MetadataColumn::RowId => out.push((
                    FIRST_ROW_ID.to_string(),
                    ScalarValue::Int64(file.first_row_id),
                )),
                MetadataColumn::LastUpdatedSequenceNumber => out.push((
                    DATA_SEQUENCE_NUMBER.to_string(),
                    ScalarValue::Int64(Some(file.data_sequence_number)),
                )),
                MetadataColumn::Pos => {}
            }
        }
        Ok(out)
    }

    /// `_partition` of one file: its spec's fields set, the others NULL; NULL (of the empty
    /// struct type) when the table was never partitioned.
    pub fn partition_value(&self, file: &FileInfo<'_>) -> Result<ScalarValue> {
        if self.partition.is_empty() {
            let array = arrow::array::StructArray::new_null(Fields::empty(), 1);
            return Ok(ScalarValue::Struct(Arc::new(array)));
        }
        let own = file.spec.fields();
        let Some(types) = self.spec_types.get(&file.spec.spec_id()) else {
            return Err(exec_datafusion_err!(
                "Iceberg data file '{}' names partition spec {}, which the table does not have",
                file.written_path,
                file.spec.spec_id()
            ));
        };
        let values = self
            .partition
            .iter()
            .map(|(id, member)| {
                let at = own.iter().position(|f| f.field_id == *id);
                let literal = at.and_then(|i| file.partition.fields().get(i)?.as_ref());
                let null = || ScalarValue::try_from(member.data_type())?.to_array_of_size(1);
                let (Some(literal), Some(i)) = (literal, at) else {
                    return null();
                };
                let Some(Some(result_type)) = types.get(i) else {
                    return null();
                };
                let value =
                    literal_to_scalar(literal, result_type, member.data_type()).map_err(|e| {
                        exec_datafusion_err!(
                            "Iceberg data file '{}': partition value of '{}': {e}",
                            file.written_path,
                            member.name()
                        )
                    })?;
                value.to_array_of_size(1)
            })
            .collect::<Result<Vec<_>>>()?;
        let array = arrow::array::StructArray::try_new(self.partition_fields(), values, None)?;
        Ok(ScalarValue::Struct(Arc::new(array)))
    }
}

/// What the metadata columns need of one data file.
pub struct FileInfo<'a> {
    /// Its path as the manifest writes it.
    pub written_path: &'a str,
    /// Its partition spec.
    pub spec: &'a PartitionSpec,
    /// Its partition under that spec.
    pub partition: &'a iceberg::spec::Struct,
    /// Its `first_row_id`, assigned or inherited.
    pub first_row_id: Option<i64>,
    /// Its data sequence number.
    pub data_sequence_number: i64,
}

/// The result type of each field of `spec`, its source column looked up in the current
/// schema first, then in the older ones.
fn partition_result_types(metadata: &TableMetadata, spec: &PartitionSpec) -> Vec<Option<Type>> {
    spec.fields()
        .iter()
        .map(|f| {
            let source = source_type(metadata, f.source_id)?;
            f.transform.result_type(&source).ok()
        })
        .collect()
}

fn source_type(metadata: &TableMetadata, id: i32) -> Option<Type> {
    let current: &Schema = metadata.current_schema();
    current
        .field_by_id(id)
        .or_else(|| metadata.schemas_iter().find_map(|s| s.field_by_id(id)))
        .map(|f| (*f.field_type).clone())
}

/// `_partition`'s members: every partition field of every spec, by field id in ascending
/// order, named as the newest spec that has it names it.
fn partition_members(
    metadata: &TableMetadata,
    view_types: StringTypes,
) -> Result<std::result::Result<Vec<(i32, Field)>, String>> {
    let mut specs: Vec<_> = metadata.partition_specs_iter().collect();
    specs.sort_by_key(|s| std::cmp::Reverse(s.spec_id()));
    let mut members: Vec<(i32, Field)> = vec![];
    let mut seen: Vec<(i32, i32, Transform)> = vec![];
    for spec in specs {
        let types = partition_result_types(metadata, spec);
        for (field, result_type) in spec.fields().iter().zip(types) {
            let what = (field.source_id, field.transform);
            if let Some(at) = seen.iter().position(|(id, ..)| *id == field.field_id) {
                let (_, source, transform) = seen[at];
                // A v1 table keeps a dropped field as `void` under its id: the same field,
                // typed by its newest definition that is not `void` (Java's
                // `Partitioning.partitionType`).
                let same = source == what.0
                    && (transform == what.1
                        || transform == Transform::Void
                        || what.1 == Transform::Void);
                if !same {
                    // Old v1 metadata numbers partition fields per spec: one id, two fields.
                    return Ok(Err(format!(
                        "partition field id {} names two different fields in the table's \
                         specs ({transform} of field {source}, {} of field {})",
                        field.field_id, what.1, what.0
                    )));
                }
                if transform == Transform::Void
                    && what.1 != Transform::Void
                    && let Some(result_type) = result_type
                {
                    seen[at].2 = what.1;
                    let data_type = arrow_type(&result_type, view_types)?;
                    if let Some((_, member)) =
                        members.iter_mut().find(|(id, _)| *id == field.field_id)
                    {
                        *member = Field::new(member.name(), data_type, true);
                    }
                }
                continue;
            }
            seen.push((field.field_id, what.0, what.1));
            let Some(result_type) = result_type else {
                continue;
            };
            let data_type = arrow_type(&result_type, view_types)?;
            // A name an older field shares with a newer one gets its id, as Java's
            // `Partitioning.partitionType` does (the newest spec is walked first).
            let name = match members.iter().any(|(_, m)| m.name() == &field.name) {
                true => format!("{}_{}", field.name, field.field_id),
                false => field.name.clone(),
            };
            members.push((field.field_id, Field::new(name, data_type, true)));
        }
    }
    members.sort_by_key(|(id, _)| *id);
    Ok(Ok(members))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections_parse() {
        assert_eq!(
            MetadataSelection::parse("ALL").unwrap(),
            MetadataSelection::All
        );
        assert_eq!(
            MetadataSelection::parse(" ").unwrap(),
            MetadataSelection::None
        );
        assert_eq!(
            MetadataSelection::parse("_row_id, _file,_file").unwrap(),
            MetadataSelection::Only(vec![MetadataColumn::File, MetadataColumn::RowId])
        );
        let err = MetadataSelection::parse("_file,_nope")
            .unwrap_err()
            .to_string();
        assert!(err.contains("_nope") && err.contains("_last_updated_sequence_number"));
    }
}
