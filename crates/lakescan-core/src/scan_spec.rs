//! [`ScanSpec`]: what a scan reads, where each value goes, and which filters apply.
//!
//! Three kinds of state are kept apart so a new split never inherits a stale value:
//!
//! | state        | type                               | lifetime                          |
//! |--------------|------------------------------------|-----------------------------------|
//! | requirements | [`ScanSpec`], [`FieldSpec`]        | built once per scan, immutable     |
//! | per split    | `SplitBinding` (reader)            | rebuilt by every `prepare`         |
//! | adaptive     | [`AdaptiveState`]                  | shared by all splits of the scan   |
//!
//! Name spaces: `P` (plan schema) is the scan output, named by plan names. `R` (reader
//! schema) holds table columns by table name: first the columns the output takes as they
//! are (so for a plain projection `P` is a prefix of `R`), then auxiliary columns
//! (residual inputs, stage inputs such as hidden bucket keys, inputs of absorbed output
//! expressions). Filter-only columns have no channel in `R`. An output is either a channel
//! of `R` or an expression over `R` absorbed from the projection above the scan
//! ([`OutputSource`]); a column read for such an expression is decoded only in the
//! subfields it needs (`RequiredSubfields`).

use std::collections::HashMap;
use std::sync::Arc;

use arrow::datatypes::{Field, Fields, Schema, SchemaRef};
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Result, internal_err, plan_err};
use datafusion::physical_expr::ScalarFunctionExpr;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_plan::PhysicalExpr;

pub use crate::adaptive::AdaptiveState;
use crate::field_ids::FieldIdMatching;
use crate::filter::Filter;
use crate::handle::{Assignments, ColumnHandle, MissingStageColumn, StageColumns, TableHandle};
use crate::required::{RequiredSubfields, prune_type, required_by};
use crate::subfield::Subfield;

/// One table column the scan touches.
#[derive(Debug, Clone)]
pub struct FieldSpec {
    /// The column's handle (name, role, type).
    pub handle: ColumnHandle,
    /// Position in the reader schema `R`, if the value is returned to the data source.
    pub channel: Option<usize>,
    /// What of the value `R` needs; `Nothing` when the column only has filters.
    pub required: RequiredSubfields,
    /// The pushed filter on this column, if any.
    pub filter: Option<Filter>,
    /// Filters on struct fields of this column, as a tree keyed by field name.
    pub children: Vec<FieldNode>,
}

impl FieldSpec {
    fn new(handle: &ColumnHandle) -> Self {
        Self {
            handle: handle.clone(),
            channel: None,
            required: RequiredSubfields::Nothing,
            filter: None,
            children: vec![],
        }
    }

    /// Table column name.
    pub fn name(&self) -> &str {
        &self.handle.name
    }

    /// Every filter of this field and its struct fields, with its subfield.
    pub fn subfield_filters(&self) -> Vec<(Subfield, Filter)> {
        let mut out = vec![];
        if let Some(f) = &self.filter {
            out.push((Subfield::column(self.name()), f.clone()));
        }
        for child in &self.children {
            child.collect(self.name(), &mut vec![], &mut out);
        }
        out
    }

    fn insert(&mut self, path: &[String], filter: Filter) {
        match path.split_first() {
            None => self.filter = Some(filter),
            Some((first, rest)) => child_mut(&mut self.children, first).insert(rest, filter),
        }
    }
}

/// The child named `name`, created when missing.
fn child_mut<'a>(children: &'a mut Vec<FieldNode>, name: &str) -> &'a mut FieldNode {
    let pos = match children.iter().position(|c| c.name == name) {
        Some(p) => p,
        None => {
            children.push(FieldNode {
                name: name.to_string(),
                filter: None,
                children: vec![],
            });
            children.len() - 1
        }
    };
    &mut children[pos]
}

/// A struct field below a [`FieldSpec`] that carries a filter (or leads to one).
#[derive(Debug, Clone)]
pub struct FieldNode {
    /// Struct field name.
    pub name: String,
    /// The filter on this field, if any.
    pub filter: Option<Filter>,
    /// Filtered fields below it.
    pub children: Vec<FieldNode>,
}

impl FieldNode {
    fn insert(&mut self, path: &[String], filter: Filter) {
        match path.split_first() {
            None => self.filter = Some(filter),
            Some((first, rest)) => child_mut(&mut self.children, first).insert(rest, filter),
        }
    }

    fn collect(&self, root: &str, path: &mut Vec<String>, out: &mut Vec<(Subfield, Filter)>) {
        path.push(self.name.clone());
        if let Some(f) = &self.filter {
            out.push((Subfield::nested(root, path.clone()), f.clone()));
        }
        for child in &self.children {
            child.collect(root, path, out);
        }
        path.pop();
    }
}

/// Where one output column of `P` comes from.
#[derive(Debug, Clone)]
pub enum OutputSource {
    /// A channel of `R`, as it is.
    Channel(usize),
    /// An expression over `R` absorbed from the projection above the scan.
    Expr(Arc<dyn PhysicalExpr>),
}

/// The requirements of one scan: fields, channels, outputs, filters and the residual.
#[derive(Debug)]
pub struct ScanSpec {
    plan_schema: SchemaRef,
    reader_schema: SchemaRef,
    fields: Vec<FieldSpec>,
    /// Table column name → index in `fields`.
    field_index: HashMap<String, usize>,
    /// Table column index → channel of `R`.
    channel_of_column: HashMap<usize, usize>,
    outputs: Vec<OutputSource>,
    residual: Option<Arc<dyn PhysicalExpr>>,
    /// Columns the split's batch stages read (see `TableHandle::stage_columns`).
    stage_columns: StageColumns,
    /// See `TableHandle::field_ids`.
    field_ids: Option<Arc<FieldIdMatching>>,
    /// The table's file columns (role `Regular`) in declared order: what the columns of a
    /// Hive writer's positional file (`_col0`, `_col1`, …) are, and the names (struct
    /// members included) a file's columns are matched to.
    file_columns: Fields,
    adaptive: Arc<AdaptiveState>,
}

impl ScanSpec {
    /// Builds the spec for `table` with outputs bound by `assignments`; `pushed_filters`
    /// (over the table schema) are filters pushed into the scan later whose inputs must be
    /// channels of `R`.
    pub fn try_new(
        table: &TableHandle,
        assignments: &Assignments,
        pushed_filters: &[Arc<dyn PhysicalExpr>],
    ) -> Result<Self> {
        let mut builder = SpecBuilder::new(table);
        let assignments = assignments.clone().resolve(table)?;
        let mut plain_outputs = vec![];
        for i in 0..assignments.exprs().len() {
            if let Some(column) = assignments.table_column(i) {
                plain_outputs.push((i, builder.channel(column, RequiredSubfields::Whole)?));
            }
        }
        let mut outputs: Vec<Option<OutputSource>> = vec![None; assignments.exprs().len()];
        for (i, channel) in plain_outputs {
            outputs[i] = Some(OutputSource::Channel(channel));
        }
        for (i, output) in assignments.exprs().iter().enumerate() {
            if outputs[i].is_none() {
                builder.require(&output.expr)?;
            }
        }
        if let Some(residual) = table.residual() {
            builder.require(residual)?;
        }
        for pushed in pushed_filters {
            builder.require(pushed)?;
        }
        for name in &table.stage_columns.names {
            let Some((column, _)) = table.column(name) else {
                return plan_err!(
                    "stage input '{name}' is not a column of {}",
                    table.table_name()
                );
            };
            builder.channel(column, RequiredSubfields::Whole)?;
        }
        for (subfield, filter) in table.subfield_filters() {
            builder.filter(subfield, filter)?;
        }
        let reader_schema = builder.reader_schema();
        let outputs = outputs
            .into_iter()
            .zip(assignments.exprs())
            .map(|(source, output)| match source {
                Some(source) => Ok(source),
                None => Ok(OutputSource::Expr(builder.to_reader(&output.expr)?)),
            })
            .collect::<Result<Vec<_>>>()?;
        let plan_fields = outputs
            .iter()
            .zip(assignments.exprs())
            .map(|(source, output)| {
                let field = match source {
                    OutputSource::Channel(c) => reader_schema.field(*c).clone(),
                    OutputSource::Expr(e) => e.return_field(&reader_schema)?.as_ref().clone(),
                };
                Ok(field.with_name(&output.alias))
            })
            .collect::<Result<Vec<Field>>>()?;
        let residual = match table.residual() {
            Some(r) => Some(builder.to_reader(r)?),
            None => None,
        };
        Ok(Self {
            plan_schema: Arc::new(Schema::new(plan_fields)),
            reader_schema,
            fields: builder.fields,
            field_index: builder.field_index,
            channel_of_column: builder.channel_of_column,
            outputs,
            residual,
            stage_columns: table.stage_columns.clone(),
            field_ids: table.field_ids.clone(),
            file_columns: table
                .columns()
                .iter()
                .filter(|c| matches!(c.role, crate::handle::ColumnRole::Regular))
                .map(|c| Field::new(&c.name, c.data_type.clone(), c.nullable))
                .collect(),
            adaptive: Arc::new(AdaptiveState::default()),
        })
    }

    /// `P`: the scan's output schema.
    pub fn plan_schema(&self) -> &SchemaRef {
        &self.plan_schema
    }

    /// `R`: the columns the reader returns (see the module docs).
    pub fn reader_schema(&self) -> &SchemaRef {
        &self.reader_schema
    }

    /// Every field the scan touches.
    pub fn fields(&self) -> &[FieldSpec] {
        &self.fields
    }

    /// The field of table column `name` and its index in [`Self::fields`].
    pub fn field(&self, name: &str) -> Option<(usize, &FieldSpec)> {
        let i = *self.field_index.get(name)?;
        Some((i, &self.fields[i]))
    }

    /// Where each output column comes from, in output order.
    pub fn outputs(&self) -> &[OutputSource] {
        &self.outputs
    }

    /// The residual predicate, over `R`.
    pub fn residual(&self) -> Option<&Arc<dyn PhysicalExpr>> {
        self.residual.as_ref()
    }

    /// Rewrites an expression over the table schema to one over `R`; every column it uses
    /// must have been an input of [`Self::try_new`].
    pub fn to_reader(&self, expr: &Arc<dyn PhysicalExpr>) -> Result<Arc<dyn PhysicalExpr>> {
        rebind(expr, &self.channel_of_column, &self.reader_schema)
    }

    /// How file columns match table columns by field id, when they do (Iceberg).
    /// The table's file columns in declared order (for files whose columns are named by
    /// position, as old Hive writers name ORC columns `_col0`, `_col1`, …).
    pub fn file_columns(&self) -> &Fields {
        &self.file_columns
    }

    /// See `TableHandle::field_ids`.
    pub fn field_ids(&self) -> Option<&FieldIdMatching> {
        self.field_ids.as_deref()
    }

    /// Whether the split's batch stages read column `name` and every file must store it.
    pub fn is_required_stage_column(&self, name: &str) -> bool {
        self.stage_columns.when_missing == MissingStageColumn::Error
            && self.stage_columns.names.iter().any(|c| c == name)
    }

    /// Observed filter costs, shared by all splits of this scan.
    pub fn adaptive(&self) -> &Arc<AdaptiveState> {
        &self.adaptive
    }

    /// The spec with the same requirements and the adaptive state of `other` (a rebuilt
    /// spec keeps what the scan learned).
    pub fn with_adaptive_of(mut self, other: &ScanSpec) -> Self {
        self.adaptive = Arc::clone(&other.adaptive);
        self
    }
}

/// Collects fields and channels while a [`ScanSpec`] is built.
struct SpecBuilder<'a> {
    table: &'a TableHandle,
    fields: Vec<FieldSpec>,
    field_index: HashMap<String, usize>,
    channel_of_column: HashMap<usize, usize>,
    /// Table column per channel, in channel order.
    channels: Vec<usize>,
}

impl<'a> SpecBuilder<'a> {
    fn new(table: &'a TableHandle) -> Self {
        Self {
            table,
            fields: vec![],
            field_index: HashMap::new(),
            channel_of_column: HashMap::new(),
            channels: vec![],
        }
    }

    /// The index in `fields` of table column `column`, created when missing.
    fn field(&mut self, column: usize) -> Result<usize> {
        let Some(handle) = self.table.columns().get(column) else {
            return plan_err!("scan refers to unknown column {column}");
        };
        if let Some(&i) = self.field_index.get(&handle.name) {
            return Ok(i);
        }
        self.fields.push(FieldSpec::new(handle));
        let i = self.fields.len() - 1;
        self.field_index.insert(handle.name.clone(), i);
        Ok(i)
    }

    /// The channel of table column `column`, created when missing; `required` is added to
    /// what the channel must hold.
    fn channel(&mut self, column: usize, required: RequiredSubfields) -> Result<usize> {
        let i = self.field(column)?;
        self.fields[i].required.merge(&required);
        if let Some(&c) = self.channel_of_column.get(&column) {
            return Ok(c);
        }
        let c = self.channels.len();
        self.channels.push(column);
        self.channel_of_column.insert(column, c);
        self.fields[i].channel = Some(c);
        Ok(c)
    }

    /// Makes every column `expr` (over the table schema) uses a channel.
    fn require(&mut self, expr: &Arc<dyn PhysicalExpr>) -> Result<()> {
        let mut uses = HashMap::new();
        required_by(expr, self.table.table_schema(), &mut uses);
        let mut columns: Vec<_> = uses.into_iter().collect();
        columns.sort_by_key(|(c, _)| *c);
        for (column, required) in columns {
            self.channel(column, required)?;
        }
        Ok(())
    }

    /// Installs a pushed filter. Filters on generated columns are evaluated on the
    /// assembled batch, so their column gets a channel.
    fn filter(&mut self, subfield: &Subfield, filter: &Filter) -> Result<()> {
        let Some((column, handle)) = self.table.column(subfield.root()) else {
            return plan_err!("filter on unknown column '{subfield}'");
        };
        if handle.role.is_generated() {
            self.channel(column, RequiredSubfields::Whole)?;
        }
        let i = self.field(column)?;
        self.fields[i].insert(subfield.path(), filter.clone());
        Ok(())
    }

    /// `R`: each channel's column, in the type of what the scan reads of it (struct members
    /// no one reads are left out, see `required::prune_type`).
    fn reader_schema(&self) -> SchemaRef {
        let fields: Vec<Field> = self
            .channels
            .iter()
            .map(|&c| {
                let handle = &self.table.columns()[c];
                let required = self
                    .field_index
                    .get(&handle.name)
                    .map(|&i| &self.fields[i].required);
                let field = handle.field();
                match required {
                    Some(r) => {
                        let t = prune_type(field.data_type(), r);
                        field.with_data_type(t)
                    }
                    None => field,
                }
            })
            .collect();
        Arc::new(Schema::new(fields))
    }

    fn to_reader(&self, expr: &Arc<dyn PhysicalExpr>) -> Result<Arc<dyn PhysicalExpr>> {
        rebind(expr, &self.channel_of_column, &self.reader_schema())
    }
}

/// Rebinds the table-column references of `expr` to their channels in `reader`. Function
/// calls are planned again over `reader`: a column may have a pruned struct type there, and
/// a function's result type follows its inputs' (`array_element` of a pruned element).
fn rebind(
    expr: &Arc<dyn PhysicalExpr>,
    channel_of_column: &HashMap<usize, usize>,
    reader: &Schema,
) -> Result<Arc<dyn PhysicalExpr>> {
    let rebound = Arc::clone(expr).transform_up(|e| {
        if let Some(f) = e.downcast_ref::<ScalarFunctionExpr>() {
            let replanned = ScalarFunctionExpr::try_new(
                Arc::new(f.fun().clone()),
                f.args().to_vec(),
                reader,
                Arc::new(f.config_options().clone()),
            )?;
            return Ok(Transformed::yes(Arc::new(replanned) as _));
        }
        let Some(c) = e.downcast_ref::<Column>() else {
            return Ok(Transformed::no(e));
        };
        let Some(&channel) = channel_of_column.get(&c.index()) else {
            return internal_err!("column {c} of {expr} has no reader channel");
        };
        let name = reader.field(channel).name();
        Ok(Transformed::yes(Arc::new(Column::new(name, channel)) as _))
    })?;
    Ok(rebound.data)
}

#[cfg(test)]
mod tests;
