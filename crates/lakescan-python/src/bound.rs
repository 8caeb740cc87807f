//! Tables and plans bound to lakescan's own session.
//!
//! A provider that crosses datafusion-python's FFI is scanned with the caller's session and
//! its plan executed with the caller's task context, and both carry a fresh default runtime
//! on the way in: only `file://` stores, none of lakescan's settings or caches. A
//! [`BoundTable`] plans its scan with the session the table was made in instead (its object
//! stores, `lakescan.*` settings and caches), and a [`BoundExec`] runs the plan with that
//! session's task context, whatever the caller passes. The caller's `SET lakescan.*` values
//! are applied to that session for the scan (`settings.rs`). A [`BoundCatalog`] gives its
//! schemas' tables bound the same way. Pushed filters get this session's `get_field`, and
//! filters with other functions of the caller stay the caller's (`functions.rs`).

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{
    CatalogProvider, SchemaProvider, Session, TableProvider, TableProviderFactory,
};
use datafusion::common::{DataFusionError, Result, Statistics};
use datafusion::datasource::TableType;
use datafusion::execution::context::SessionState;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{CreateExternalTable, Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};

use crate::functions::{calls_callers_function, with_own_get_field};
use crate::settings::with_caller_settings;
use crate::tables::runtime;

/// Runs `future` on lakescan's runtime: the caller polls it from its own (datafusion-python
/// has a tokio of its own, which lakescan's code does not see), and lakescan's I/O needs
/// lakescan's.
async fn on_lakescan_runtime<T: Send + 'static>(
    future: impl Future<Output = Result<T>> + Send + 'static,
) -> Result<T> {
    runtime()
        .spawn(future)
        .await
        .map_err(|e| DataFusionError::External(Box::new(e)))?
}

/// A table whose scans are planned and run in the session it was made in.
#[derive(Debug)]
pub struct BoundTable {
    inner: Arc<dyn TableProvider>,
    state: SessionState,
}

impl BoundTable {
    /// `inner`, planned and run with `state`.
    pub fn new(inner: Arc<dyn TableProvider>, state: SessionState) -> Self {
        Self { inner, state }
    }
}

#[async_trait]
impl TableProvider for BoundTable {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }

    fn table_type(&self) -> TableType {
        self.inner.table_type()
    }

    /// The inner table's answers, except that a filter calling a function of the caller
    /// (other than `get_field`) stays the caller's (`functions.rs`).
    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        let mut answers = self.inner.supports_filters_pushdown(filters)?;
        for (answer, filter) in answers.iter_mut().zip(filters) {
            if calls_callers_function(filter) {
                *answer = TableProviderFilterPushDown::Unsupported;
            }
        }
        Ok(answers)
    }

    fn statistics(&self) -> Option<Statistics> {
        self.inner.statistics()
    }

    async fn scan(
        &self,
        caller: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let state = with_caller_settings(&self.state, caller)?;
        let task_ctx = state.task_ctx();
        let inner = Arc::clone(&self.inner);
        let filters = filters
            .iter()
            .map(|f| with_own_get_field(f.clone(), &state))
            .collect::<Result<Vec<_>>>()?;
        let projection = projection.cloned();
        let plan = on_lakescan_runtime(async move {
            inner
                .scan(&state, projection.as_ref(), &filters, limit)
                .await
        })
        .await?;
        Ok(Arc::new(BoundExec {
            inner: plan,
            task_ctx,
        }))
    }
}

/// A plan run with the task context of the session that planned it.
pub struct BoundExec {
    inner: Arc<dyn ExecutionPlan>,
    task_ctx: Arc<TaskContext>,
}

impl fmt::Debug for BoundExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BoundExec")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl DisplayAs for BoundExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        self.inner.fmt_as(t, f)
    }
}

impl ExecutionPlan for BoundExec {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.inner.properties()
    }

    /// None: the caller's optimizer sees one leaf, the plan below is lakescan's.
    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn with_new_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn execute(
        &self,
        partition: usize,
        _caller: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        self.inner.execute(partition, Arc::clone(&self.task_ctx))
    }
}

/// A table factory (`STORED AS HIVE|ICEBERG`) whose tables are made and scanned in
/// lakescan's own session.
#[derive(Debug)]
pub struct BoundFactory {
    /// The factory's name in the session (`HIVE`, `ICEBERG`).
    kind: String,
    state: SessionState,
}

impl BoundFactory {
    /// The factory `kind` of `state`'s session.
    pub fn new(kind: &str, state: SessionState) -> Self {
        Self {
            kind: kind.to_uppercase(),
            state,
        }
    }
}

#[async_trait]
impl TableProviderFactory for BoundFactory {
    async fn create(
        &self,
        caller: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> Result<Arc<dyn TableProvider>> {
        let Some(factory) = self.state.table_factories().get(&self.kind) else {
            return datafusion::common::plan_err!("lakescan has no table factory '{}'", self.kind);
        };
        let state = with_caller_settings(&self.state, caller)?;
        let (factory, cmd) = (Arc::clone(factory), cmd.clone());
        let table = on_lakescan_runtime(async move { factory.create(&state, &cmd).await }).await?;
        Ok(Arc::new(BoundTable::new(table, self.state.clone())))
    }
}

/// A catalog whose tables are bound to the session the catalog was registered in.
#[derive(Debug)]
pub struct BoundCatalog {
    inner: Arc<dyn CatalogProvider>,
    state: SessionState,
}

impl BoundCatalog {
    /// `inner`'s tables, planned and run with `state`.
    pub fn new(inner: Arc<dyn CatalogProvider>, state: SessionState) -> Self {
        Self { inner, state }
    }
}

impl CatalogProvider for BoundCatalog {
    fn schema_names(&self) -> Vec<String> {
        self.inner.schema_names()
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        let inner = self.inner.schema(name)?;
        Some(Arc::new(BoundSchema {
            inner,
            state: self.state.clone(),
        }))
    }
}

/// A schema of a [`BoundCatalog`].
#[derive(Debug)]
struct BoundSchema {
    inner: Arc<dyn SchemaProvider>,
    state: SessionState,
}

#[async_trait]
impl SchemaProvider for BoundSchema {
    fn table_names(&self) -> Vec<String> {
        self.inner.table_names()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        let (inner, name_owned) = (Arc::clone(&self.inner), name.to_string());
        let table = on_lakescan_runtime(async move { inner.table(&name_owned).await }).await?;
        Ok(table.map(|table| {
            Arc::new(BoundTable::new(table, self.state.clone())) as Arc<dyn TableProvider>
        }))
    }

    fn table_exist(&self, name: &str) -> bool {
        self.inner.table_exist(name)
    }
}
