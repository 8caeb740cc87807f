//! The scan contract: [`TableHandle`], [`ColumnHandle`] and their roles (seed §3.1, §3.2).
//!
//! A table handle describes *one scan* of a table: its columns (with roles), the pushed
//! per-column filters and the residual predicate. Plan output columns are bound to column
//! handles by [`Assignments`]. Hive and Iceberg adapters build these; the core never looks
//! at table formats.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::{Result, plan_err};
use datafusion::physical_plan::PhysicalExpr;

use crate::filter::Filter;
use crate::subfield::Subfield;

/// Where a column's values come from. Type ≠ role: a BIGINT can be a file column, a
/// partition value or a generated row index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnRole {
    /// Read from the data file, matched by name.
    Regular,
    /// A constant of each split, parsed from the split's partition keys.
    PartitionKey,
    /// A constant of each split taken from its info columns (`$path`, `$file_size`, …).
    Synthesized(String),
}

/// One column's identity and role, in the table name space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnHandle {
    /// Table column name.
    pub name: String,
    /// Where values come from.
    pub role: ColumnRole,
    /// The type the scan delivers.
    pub data_type: DataType,
    /// Whether NULLs may appear.
    pub nullable: bool,
    /// Identity of the column in formats that track it (Iceberg field id); `None` for Hive.
    pub field_id: Option<i32>,
}

impl ColumnHandle {
    /// A regular file column.
    pub fn regular(field: &Field) -> Self {
        Self::with_role(field, ColumnRole::Regular)
    }

    /// A column with an explicit role.
    pub fn with_role(field: &Field, role: ColumnRole) -> Self {
        Self {
            name: field.name().clone(),
            role,
            data_type: field.data_type().clone(),
            nullable: field.is_nullable(),
            field_id: None,
        }
    }

    /// The Arrow field of this column.
    pub fn field(&self) -> Field {
        Field::new(&self.name, self.data_type.clone(), self.nullable)
    }
}

/// Plan output channel → table column index. DataFusion scans project table columns, so
/// plan names equal table names; the mapping keeps the two spaces apart in the code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignments(Vec<usize>);

impl Assignments {
    /// Binds each output channel to a table column index.
    pub fn new(table_columns: Vec<usize>) -> Self {
        Self(table_columns)
    }

    /// Table column index per output channel.
    pub fn table_columns(&self) -> &[usize] {
        &self.0
    }
}

/// Format-specific parts of a table handle (bucketing spec, changelog flag, …): an adapter
/// stores them here and its split reader factory reads them back.
pub trait TableExtension: std::any::Any + std::fmt::Debug + Send + Sync {}

/// The scan contract of one table scan.
///
/// Invariant: `columns[i]` describes `table_schema.field(i)`; filter keys and residual
/// columns refer to table columns.
#[derive(Debug, Clone)]
pub struct TableHandle {
    table_name: String,
    table_schema: SchemaRef,
    columns: Vec<ColumnHandle>,
    /// Pushed filters, keyed by subfield (a table column or a struct field of one).
    pub subfield_filters: BTreeMap<Subfield, Filter>,
    /// What could not become a filter, over `table_schema`.
    pub remaining_filter: Option<Arc<dyn PhysicalExpr>>,
    /// Table parameters (format options).
    pub parameters: HashMap<String, String>,
    /// Format-specific parts, for adapters.
    pub extension: Option<Arc<dyn TableExtension>>,
}

impl TableHandle {
    /// A handle over `columns` with no filters.
    pub fn try_new(table_name: impl Into<String>, columns: Vec<ColumnHandle>) -> Result<Self> {
        let mut seen = std::collections::HashSet::new();
        for c in &columns {
            if !seen.insert(c.name.as_str()) {
                return plan_err!("column '{}' is declared twice", c.name);
            }
        }
        let fields: Vec<Field> = columns.iter().map(ColumnHandle::field).collect();
        Ok(Self {
            table_name: table_name.into(),
            table_schema: Arc::new(Schema::new(fields)),
            columns,
            subfield_filters: BTreeMap::new(),
            remaining_filter: None,
            parameters: HashMap::new(),
            extension: None,
        })
    }

    /// Table name (for messages).
    pub fn table_name(&self) -> &str {
        &self.table_name
    }

    /// Schema of all table columns, in table order.
    pub fn table_schema(&self) -> &SchemaRef {
        &self.table_schema
    }

    /// Column handles, aligned with [`Self::table_schema`].
    pub fn columns(&self) -> &[ColumnHandle] {
        &self.columns
    }

    /// The handle of column `name`, with its table index.
    pub fn column(&self, name: &str) -> Option<(usize, &ColumnHandle)> {
        self.columns
            .iter()
            .enumerate()
            .find(|(_, c)| c.name == name)
    }
}
