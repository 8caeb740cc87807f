//! Changelog scans: `table_changes('t', from, to)`, with Trino's meaning and columns.
//!
//! `from` (exclusive) and `to` (inclusive) are snapshot ids, or timestamps (a `TIMESTAMP`
//! literal or text: the snapshot current at that time). `from` must be an ancestor of `to`.
//! The result has the table's columns, then
//!
//! | column               | type                       | Velox's changelog column            |
//! |----------------------|----------------------------|-------------------------------------|
//! | `_change_type`       | VARCHAR: `insert`/`delete` | `operation` (INSERT / DELETE)       |
//! | `_change_version_id` | BIGINT: the snapshot id    | `snapshotid`                        |
//! | `_change_timestamp`  | TIMESTAMP(3) WITH TIME ZONE 'UTC': the snapshot's commit time | — |
//! | `_change_ordinal`    | INTEGER: 0 for the oldest snapshot of the range, then 1, 2, … | `ordinal` |
//!
//! and the table's columns are Velox's `rowdata` ROW, flattened as Trino does.
//!
//! The files come from [`crate::plan::changes`]. Each snapshot of the range contributes the
//! rows of the data files it added (`insert`)
//! and of those it removed (`delete`: appends, copy-on-write overwrites and deletes);
//! `replace` snapshots (compactions) change no row: they contribute none and take no
//! ordinal. Every file is a split whose change columns are constants: filters on them skip
//! splits before any file is opened; filters on the row data prune manifests' files by
//! partition and column bounds and go into the scan of each file (Velox's changelog scan
//! loses them). A snapshot that adds delete files (merge-on-read), or removes a data file that delete
//! files had applied to, is a `NotImplemented` error naming it: those changes are not rows
//! of whole files.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, SchemaRef, TimeUnit};
use async_trait::async_trait;
use datafusion::catalog::{Session, TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{Result, ScalarValue, TableReference, not_impl_err, plan_err};
use datafusion::execution::SessionState;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::ExecutionPlan;
use futures::FutureExt;
use iceberg::spec::{Operation, SnapshotRef};
use lakescan_core::api::{
    ColumnHandle, ColumnRole, Extraction, TableHandle, exact_pushdown, physical_conjuncts,
};

use crate::metadata::select_snapshot;
use crate::options::{SnapshotSelector, parse_timestamp_millis};
use crate::plan::Planner;
use crate::plan::changes::ChangedFile;
use crate::table::{FileScan, IcebergTable, Splits};

/// The change columns, in order.
pub const CHANGE_COLUMNS: [&str; 4] = [
    "_change_type",
    "_change_version_id",
    "_change_timestamp",
    "_change_ordinal",
];

/// The `table_changes` table function.
#[derive(Debug, Default)]
pub struct TableChangesFunction;

impl TableFunctionImpl for TableChangesFunction {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let [name, from, to] = args.exprs() else {
            return plan_err!(
                "table_changes takes 3 arguments: a table name, the snapshot (id or timestamp) \
                 after which changes start, and the snapshot they end at; got {}",
                args.exprs().len()
            );
        };
        let Some(name) = text(name) else {
            return plan_err!("table_changes: the first argument must name a table, got {name}");
        };
        let table = lookup(args.session(), &name)?;
        let Some(table) = table.downcast_ref::<IcebergTable>() else {
            return plan_err!("table_changes: '{name}' is not an Iceberg table");
        };
        let from = bound(table, from, "from")?;
        let to = bound(table, to, "to")?;
        Ok(Arc::new(TableChanges::try_new(table.clone(), from, to)?))
    }
}

/// A string literal's value.
fn text(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Literal(
            ScalarValue::Utf8(Some(s))
            | ScalarValue::Utf8View(Some(s))
            | ScalarValue::LargeUtf8(Some(s)),
            _,
        ) => Some(s.clone()),
        _ => None,
    }
}

/// The table `name` names in `session`: tables the session holds in memory (created with
/// `CREATE EXTERNAL TABLE` or registered), as their lookup needs no I/O.
fn lookup(session: &dyn Session, name: &str) -> Result<Arc<dyn TableProvider>> {
    let Some(state) = session.as_any().downcast_ref::<SessionState>() else {
        return not_impl_err!("table_changes needs a DataFusion SessionState");
    };
    let defaults = &state.config_options().catalog;
    let reference =
        TableReference::from(name).resolve(&defaults.default_catalog, &defaults.default_schema);
    let schema = state
        .catalog_list()
        .catalog(&reference.catalog)
        .and_then(|c| c.schema(&reference.schema));
    let Some(schema) = schema else {
        return plan_err!(
            "table_changes: no schema {}.{}",
            reference.catalog,
            reference.schema
        );
    };
    match schema.table(&reference.table).now_or_never() {
        Some(Ok(Some(table))) => Ok(table),
        Some(Ok(None)) => plan_err!("table_changes: table '{name}' not found"),
        Some(Err(e)) => Err(e),
        None => not_impl_err!(
            "table_changes: table '{name}' must be loaded from its catalog first; create it \
             with CREATE EXTERNAL TABLE … STORED AS ICEBERG"
        ),
    }
}

/// The snapshot a bound names: a snapshot id, or the snapshot current at a time.
fn bound(table: &IcebergTable, expr: &Expr, which: &str) -> Result<SnapshotRef> {
    let loaded = table.loaded();
    let selector = match literal(expr) {
        Some(ScalarValue::Int64(Some(id))) => SnapshotSelector::Id(id),
        Some(ScalarValue::Int32(Some(id))) => SnapshotSelector::Id(id.into()),
        Some(ScalarValue::Utf8(Some(t)) | ScalarValue::Utf8View(Some(t))) => {
            SnapshotSelector::AsOf(parse_timestamp_millis(&t)?)
        }
        Some(
            v @ (ScalarValue::TimestampSecond(Some(_), _)
            | ScalarValue::TimestampMillisecond(Some(_), _)
            | ScalarValue::TimestampMicrosecond(Some(_), _)
            | ScalarValue::TimestampNanosecond(Some(_), _)),
        ) => {
            let millis = v.cast_to(&DataType::Timestamp(TimeUnit::Millisecond, None))?;
            let ScalarValue::TimestampMillisecond(Some(ms), _) = millis else {
                return plan_err!("table_changes: bad timestamp {v}");
            };
            SnapshotSelector::AsOf(ms)
        }
        _ => {
            return plan_err!(
                "table_changes: the '{which}' bound must be a snapshot id or a timestamp, got \
                 {expr}"
            );
        }
    };
    let (snapshot, _) = select_snapshot(loaded, &selector)?;
    match snapshot {
        Some(s) => Ok(s),
        None => plan_err!("table_changes: table '{}' has no snapshot", loaded.file),
    }
}

/// The value of a literal, or of a cast of one (`TIMESTAMP '…'`).
fn literal(expr: &Expr) -> Option<ScalarValue> {
    match expr {
        Expr::Literal(v, _) => Some(v.clone()),
        Expr::Cast(c) => literal(&c.expr)?.cast_to(c.field.data_type()).ok(),
        Expr::TryCast(c) => literal(&c.expr)?.cast_to(c.field.data_type()).ok(),
        _ => None,
    }
}

/// One snapshot of the range with its change ordinal.
#[derive(Debug, Clone)]
struct Change {
    snapshot: SnapshotRef,
    ordinal: i32,
}

/// The changes between two snapshots of a table.
#[derive(Debug)]
pub struct TableChanges {
    table: IcebergTable,
    /// The snapshots the changes are after and up to (ids).
    bounds: (i64, i64),
    changes: Vec<Change>,
    handle: TableHandle,
}

impl TableChanges {
    /// The table whose changes these are.
    pub fn table(&self) -> &IcebergTable {
        &self.table
    }

    /// The ids of the snapshots the changes are after and up to.
    pub fn bounds(&self) -> (i64, i64) {
        self.bounds
    }

    /// The changes of `table` after `from` up to `to`.
    pub fn try_new(table: IcebergTable, from: SnapshotRef, to: SnapshotRef) -> Result<Self> {
        let metadata = &table.loaded().metadata;
        let mut chain = vec![];
        let mut at = Some(Arc::clone(&to));
        while let Some(s) = at {
            if s.snapshot_id() == from.snapshot_id() {
                break;
            }
            at = s
                .parent_snapshot_id()
                .and_then(|p| metadata.snapshot_by_id(p).cloned());
            if at.is_none() {
                return plan_err!(
                    "table_changes: snapshot {} is not an ancestor of snapshot {}",
                    from.snapshot_id(),
                    to.snapshot_id()
                );
            }
            chain.push(s);
        }
        chain.reverse();
        // `replace` snapshots (compactions) change no row: left out before numbering, as
        // Iceberg's incremental changelog scan (and so Trino) does.
        let changes = chain
            .into_iter()
            .filter(|s| s.summary().operation != Operation::Replace)
            .enumerate()
            .map(|(i, snapshot)| Change {
                snapshot,
                ordinal: i32::try_from(i).unwrap_or(i32::MAX),
            })
            .collect();
        let mut columns = table.handle().columns().to_vec();
        for (name, data_type) in CHANGE_COLUMNS.iter().zip([
            DataType::Utf8,
            DataType::Int64,
            DataType::Timestamp(TimeUnit::Millisecond, Some("+00:00".into())),
            DataType::Int32,
        ]) {
            if columns.iter().any(|c| c.name == *name) {
                return plan_err!(
                    "table_changes: the table has a column named {name}, like a change column"
                );
            }
            let field = Field::new(*name, data_type, false);
            columns.push(ColumnHandle::with_role(
                &field,
                ColumnRole::Info((*name).to_string()),
            ));
        }
        let mut handle = TableHandle::try_new(table.handle().table_name(), columns)?;
        handle.field_ids = table.handle().field_ids.clone();
        Ok(Self {
            bounds: (from.snapshot_id(), to.snapshot_id()),
            table,
            changes,
            handle,
        })
    }
}

#[async_trait]
impl TableProvider for TableChanges {
    fn schema(&self) -> SchemaRef {
        Arc::clone(self.handle.table_schema())
    }

    fn table_type(&self) -> TableType {
        TableType::View
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.table.check_readable(projection, filters)?;
        let conjuncts = physical_conjuncts(state, self.handle.table_schema(), filters)?;
        let extraction = Extraction::from_conjuncts(&conjuncts, self.handle.table_schema());
        let table = &self.table;
        let planner = Planner {
            filters: Planner::top_level_filters(table.scan_schema(), &extraction.filters),
            ..table.planner(state.runtime_env())
        };
        let split_size = table.split_size(state);
        let snapshots: Vec<SnapshotRef> = self.changes.iter().map(|c| c.snapshot.clone()).collect();
        let (changed, counts) = planner.changed_files(&snapshots).await?;
        let mut all = Splits::default();
        for ChangedFile { kind, change, file } in changed {
            let info = change_info(kind.as_str(), &self.changes[change]);
            table.add_splits(&mut all, file, split_size, info)?;
        }
        let scan = FileScan {
            handle: &self.handle,
            extraction,
            splits: all,
            counts,
            conjuncts: None,
        };
        table.exec(state, scan, projection, limit)
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(exact_pushdown(filters))
    }
}

/// The change columns' values of the files of `change`.
fn change_info(kind: &str, change: &Change) -> Vec<(String, ScalarValue)> {
    let s = &change.snapshot;
    vec![
        (
            CHANGE_COLUMNS[0].into(),
            ScalarValue::Utf8(Some(kind.into())),
        ),
        (
            CHANGE_COLUMNS[1].into(),
            ScalarValue::Int64(Some(s.snapshot_id())),
        ),
        (
            CHANGE_COLUMNS[2].into(),
            ScalarValue::TimestampMillisecond(Some(s.timestamp_ms()), Some("+00:00".into())),
        ),
        (
            CHANGE_COLUMNS[3].into(),
            ScalarValue::Int32(Some(change.ordinal)),
        ),
    ]
}
