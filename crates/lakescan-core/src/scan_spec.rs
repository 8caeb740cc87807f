//! [`ScanSpec`]: what a scan reads, where each value goes, and which filters apply
//! (seed §6, §8.1).
//!
//! Three kinds of state are kept apart so a new split never inherits a stale value:
//!
//! | state        | type                         | lifetime                               |
//! |--------------|------------------------------|----------------------------------------|
//! | requirements | [`ScanSpec`], [`FieldSpec`]  | built once per scan, immutable          |
//! | per split    | `SplitBinding` (reader)      | rebuilt by every `prepare`              |
//! | adaptive     | [`AdaptiveState`]            | shared by all splits of the scan        |
//!
//! Name spaces: `P` (plan schema) is the scan output; `R` (reader schema) is `P` followed
//! by auxiliary columns the residual needs. Filter-only columns have no channel in `R`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arrow::datatypes::{DataType, Schema, SchemaRef};
use datafusion::common::{Result, plan_err};
use datafusion::physical_expr::utils::{collect_columns, reassign_expr_columns};
use datafusion::physical_plan::PhysicalExpr;

use crate::filter::Filter;
use crate::handle::{Assignments, ColumnHandle, TableHandle};
use crate::subfield::Subfield;

/// One table column the scan touches.
#[derive(Debug, Clone)]
pub struct FieldSpec {
    /// The column's handle (name, role, type).
    pub handle: ColumnHandle,
    /// Position in the reader schema `R`, if the value is returned to the data source.
    pub channel: Option<usize>,
    /// The pushed filter on this column, if any.
    pub filter: Option<Filter>,
    /// Filters on struct fields of this column, as a tree keyed by field name.
    pub children: Vec<FieldNode>,
}

impl FieldSpec {
    fn new(handle: &ColumnHandle, channel: Option<usize>) -> Self {
        Self {
            handle: handle.clone(),
            channel,
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

/// The requirements of one scan: fields, channels, filters and the residual.
#[derive(Debug)]
pub struct ScanSpec {
    plan_schema: SchemaRef,
    reader_schema: SchemaRef,
    fields: Vec<FieldSpec>,
    residual: Option<Arc<dyn PhysicalExpr>>,
    adaptive: Arc<AdaptiveState>,
}

impl ScanSpec {
    /// Builds the spec for `table` with output columns bound by `assignments`.
    pub fn try_new(table: &TableHandle, assignments: &Assignments) -> Result<Self> {
        let columns = table.columns();
        let mut fields: Vec<FieldSpec> = vec![];
        let mut index_of: HashMap<usize, usize> = HashMap::new();
        for (channel, &col) in assignments.table_columns().iter().enumerate() {
            let Some(handle) = columns.get(col) else {
                return plan_err!("output channel {channel} refers to unknown column {col}");
            };
            if index_of.insert(col, fields.len()).is_some() {
                return plan_err!("column '{}' is assigned to two outputs", handle.name);
            }
            fields.push(FieldSpec::new(handle, Some(channel)));
        }
        let plan_len = fields.len();
        if let Some(residual) = &table.remaining_filter {
            let mut inputs: Vec<usize> = collect_columns(residual)
                .iter()
                .map(|c| c.index())
                .collect();
            inputs.sort_unstable();
            for col in inputs {
                let Some(handle) = columns.get(col) else {
                    return plan_err!("residual refers to unknown column {col}");
                };
                if let std::collections::hash_map::Entry::Vacant(e) = index_of.entry(col) {
                    e.insert(fields.len());
                    fields.push(FieldSpec::new(handle, Some(fields.len())));
                }
            }
        }
        for (subfield, filter) in &table.subfield_filters {
            let Some((col, handle)) = table.column(subfield.root()) else {
                return plan_err!("filter on unknown column '{subfield}'");
            };
            let pos = *index_of.entry(col).or_insert_with(|| {
                fields.push(FieldSpec::new(handle, None));
                fields.len() - 1
            });
            fields[pos].insert(subfield.path(), filter.clone());
        }
        let channel_fields = fields.iter().filter(|f| f.channel.is_some());
        let reader_fields: Vec<_> = channel_fields.map(|f| f.handle.field()).collect();
        let reader_schema = Arc::new(Schema::new(reader_fields));
        let plan_schema = Arc::new(Schema::new(reader_schema.fields()[..plan_len].to_vec()));
        let residual = match &table.remaining_filter {
            Some(r) => Some(reassign_expr_columns(Arc::clone(r), &reader_schema)?),
            None => None,
        };
        let adaptive = Arc::new(AdaptiveState::default());
        Ok(Self {
            plan_schema,
            reader_schema,
            fields,
            residual,
            adaptive,
        })
    }

    /// `P`: the scan's output schema.
    pub fn plan_schema(&self) -> &SchemaRef {
        &self.plan_schema
    }

    /// `R`: `P` followed by auxiliary columns.
    pub fn reader_schema(&self) -> &SchemaRef {
        &self.reader_schema
    }

    /// Every field the scan touches, output fields first in channel order.
    pub fn fields(&self) -> &[FieldSpec] {
        &self.fields
    }

    /// The residual predicate, over `R`.
    pub fn residual(&self) -> Option<&Arc<dyn PhysicalExpr>> {
        self.residual.as_ref()
    }

    /// Observed filter costs, shared by all splits of this scan.
    pub fn adaptive(&self) -> &Arc<AdaptiveState> {
        &self.adaptive
    }
}

/// Observed cost of one filter: time spent and rows in/out.
#[derive(Debug, Clone, Copy, Default)]
pub struct FilterCost {
    /// Time spent evaluating (decode + test).
    pub time: Duration,
    /// Rows the filter saw.
    pub rows_in: u64,
    /// Rows it kept.
    pub rows_out: u64,
}

impl FilterCost {
    /// Average time to drop one row: `time / (rows_in - rows_out)`; `time` when it drops none.
    pub fn time_to_drop(&self) -> Duration {
        let dropped = self.rows_in.saturating_sub(self.rows_out);
        if dropped == 0 {
            self.time
        } else {
            self.time / dropped.min(u32::MAX as u64) as u32
        }
    }
}

/// Adaptive filter order: filters that drop rows cheaply run first (seed §8.1).
#[derive(Debug, Default)]
pub struct AdaptiveState {
    costs: Mutex<HashMap<String, FilterCost>>,
}

impl AdaptiveState {
    /// Adds one observation for the filter on `column`.
    pub fn record(&self, column: &str, time: Duration, rows_in: u64, rows_out: u64) {
        if let Ok(mut costs) = self.costs.lock() {
            let c = costs.entry(column.to_string()).or_default();
            c.time += time;
            c.rows_in += rows_in;
            c.rows_out += rows_out;
        }
    }

    /// What has been observed for `column`.
    pub fn cost(&self, column: &str) -> Option<FilterCost> {
        self.costs.lock().ok().and_then(|c| c.get(column).copied())
    }

    /// Orders filters: observed ones by time to drop a row; unobserved ones first, cheap
    /// fixed-width types before variable-width ones, then by name. `key` gives each item's
    /// filter name (its subfield) and compared type.
    pub fn order<T>(&self, items: &mut [T], key: impl Fn(&T) -> (String, DataType)) {
        let Ok(costs) = self.costs.lock() else { return };
        items.sort_by_cached_key(|item| {
            let (name, t) = key(item);
            match costs.get(&name) {
                Some(c) if c.rows_in > 0 => (1, c.time_to_drop(), 0, name),
                _ => (0, Duration::ZERO, width_rank(&t), name),
            }
        });
    }
}

fn width_rank(t: &DataType) -> u8 {
    if t.is_primitive() || matches!(t, DataType::Boolean) {
        0
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handle::ColumnHandle;
    use arrow::datatypes::Field;
    use datafusion::logical_expr::Operator;
    use datafusion::physical_expr::expressions::{BinaryExpr, col};

    fn table() -> TableHandle {
        let cols = ["c0", "c1", "c2", "payload"]
            .map(|n| ColumnHandle::regular(&Field::new(n, DataType::Int64, true)));
        TableHandle::try_new("t", cols.to_vec()).unwrap()
    }

    #[test]
    fn residual_inputs_become_aux_channels_and_filter_columns_have_none() {
        // Seed §2: output payload, filter c2 >= 0, residual c0 + c1 > 10.
        let mut t = table();
        let s = t.table_schema().clone();
        let sum = Arc::new(BinaryExpr::new(
            col("c0", &s).unwrap(),
            Operator::Plus,
            col("c1", &s).unwrap(),
        ));
        let lit10 = datafusion::physical_expr::expressions::lit(10i64);
        t.remaining_filter = Some(Arc::new(BinaryExpr::new(sum, Operator::Gt, lit10)));
        let ge0 = Filter::compare(&DataType::Int64, Operator::GtEq, &0i64.into()).unwrap();
        t.subfield_filters.insert(Subfield::column("c2"), ge0);
        let spec = ScanSpec::try_new(&t, &Assignments::new(vec![3])).unwrap();
        let names: Vec<_> = spec
            .reader_schema()
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        assert_eq!(names, ["payload", "c0", "c1"]);
        assert_eq!(spec.plan_schema().fields().len(), 1);
        let c2 = spec.fields().iter().find(|f| f.name() == "c2").unwrap();
        assert_eq!(c2.channel, None);
        assert!(c2.filter.is_some());
        let inputs: Vec<usize> = collect_columns(spec.residual().unwrap())
            .iter()
            .map(|c| c.index())
            .collect();
        assert!(inputs.iter().all(|&i| i == 1 || i == 2));
    }

    #[test]
    fn adaptive_order_prefers_cheap_drops() {
        let state = AdaptiveState::default();
        // A: 10000 units for 900 dropped; B: 1000 units for 500 dropped (seed §8.1 example).
        state.record("a", Duration::from_micros(10_000), 1000, 100);
        state.record("b", Duration::from_micros(1_000), 1000, 500);
        let (i64t, utf8) = (DataType::Int64, DataType::Utf8);
        let mut cols = [("a", &i64t), ("b", &i64t), ("s", &utf8), ("c", &i64t)];
        state.order(&mut cols, |(n, t)| (n.to_string(), (*t).clone()));
        let names: Vec<_> = cols.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["c", "s", "b", "a"]);
    }
}
