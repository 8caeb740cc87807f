//! [`LakescanDb`]: the [`AsyncDB`] the sqllogictest runner drives.
//!
//! One `.slt` file gets one [`SessionContext`] (see [`new_session_context`]); every
//! `connection` of that file is a [`LakescanDb`] over a clone of it, so they share tables.
//! A statement is planned and executed with `ctx.sql(..)` and collected; the batches are turned
//! into text by [`crate::convert`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use datafusion::catalog::default_table_source::source_as_provider;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{LogicalPlan, Statement};
use datafusion::prelude::{SessionConfig, SessionContext};
use sqllogictest::{AsyncDB, DBOutput, DefaultColumnType};

use crate::convert;
use crate::s3::S3Mirror;

/// Target partitions of the test sessions: small and fixed, so plans in `EXPLAIN` output do
/// not depend on the machine the tests run on.
pub const TARGET_PARTITIONS: usize = 2;

/// Engine name reported to the runner; `onlyif lakescan` / `skipif lakescan` match it.
pub const ENGINE_NAME: &str = "lakescan";

/// Creates the session one `.slt` file runs in: [`TARGET_PARTITIONS`] target partitions and
/// lakescan's table factories registered (`lakescan::register`).
pub fn new_session_context() -> Result<SessionContext> {
    let config = SessionConfig::new().with_target_partitions(TARGET_PARTITIONS);
    let ctx = SessionContext::new_with_config(config);
    lakescan::register(&ctx)?;
    Ok(ctx)
}

/// Whether `plan` is a query whose every table is a lakescan table (Hive, Iceberg, Iceberg
/// changes), with at least one.
fn reads_lakescan_only(plan: &LogicalPlan) -> Result<bool> {
    if matches!(
        plan,
        LogicalPlan::Ddl(_)
            | LogicalPlan::Dml(_)
            | LogicalPlan::Copy(_)
            | LogicalPlan::Statement(_)
            | LogicalPlan::Explain(_)
            | LogicalPlan::Analyze(_)
            | LogicalPlan::DescribeTable(_)
    ) {
        return Ok(false);
    }
    let (mut lakescan, mut other) = (0, 0);
    plan.apply_with_subqueries(|node| {
        if let LogicalPlan::TableScan(scan) = node {
            let provider = source_as_provider(&scan.source)?;
            let ours = provider
                .downcast_ref::<lakescan::hive::HiveTable>()
                .is_some()
                || provider
                    .downcast_ref::<lakescan::iceberg::IcebergTable>()
                    .is_some()
                || provider
                    .downcast_ref::<lakescan::iceberg::changelog::TableChanges>()
                    .is_some();
            match ours {
                true => lakescan += 1,
                false => other += 1,
            }
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    Ok(lakescan > 0 && other == 0)
}

/// A sqllogictest connection: runs each record's SQL in a DataFusion [`SessionContext`].
///
/// Cloning the context is cheap and shares its catalog, so several connections made from one
/// context see the same tables.
#[derive(Clone)]
pub struct LakescanDb {
    ctx: SessionContext,
    /// When the file's lakescan tables are read from S3 (the `S3` run).
    mirror: Option<Arc<S3Mirror>>,
    /// When the file's queries of lakescan tables run on a Ballista cluster (the `Ballista`
    /// run): a client session sharing `ctx`'s catalog.
    cluster: Option<SessionContext>,
    /// The ORC twin run: every Parquet file a `COPY` writes is rewritten as ORC (same name,
    /// same rows, its row groups as stripes), so the file's Hive tables read ORC.
    orc_twin: bool,
}

impl LakescanDb {
    /// Wraps `ctx`; usually a clone of the file's [`new_session_context`].
    pub fn new(ctx: SessionContext) -> Self {
        Self {
            ctx,
            mirror: None,
            cluster: None,
            orc_twin: false,
        }
    }

    /// Rewrites the Parquet files `COPY` writes as ORC files (the ORC twin run).
    pub fn with_orc_twin(mut self) -> Self {
        self.orc_twin = true;
        self
    }

    /// Runs the queries that read lakescan tables, and only lakescan tables, on `cluster` (a
    /// Ballista client sharing this session's catalog); the records that make the data
    /// (`COPY`, `CREATE TABLE … AS`, queries of `VALUES` or memory tables, which Ballista
    /// cannot send) run in this session. `SET` applies to both.
    pub fn with_cluster(mut self, cluster: SessionContext) -> Self {
        self.cluster = Some(cluster);
        self
    }

    /// Reads the file's lakescan tables from S3 through `mirror`.
    pub fn with_mirror(mut self, mirror: Arc<S3Mirror>) -> Self {
        self.mirror = Some(mirror);
        self
    }

    /// The session this connection runs SQL in.
    pub fn session(&self) -> &SessionContext {
        &self.ctx
    }
}

impl LakescanDb {
    async fn execute(&self, sql: &str) -> Result<DBOutput<DefaultColumnType>> {
        if self.orc_twin {
            let plan = self.ctx.state().create_logical_plan(sql).await?;
            if let LogicalPlan::Copy(copy) = &plan {
                let target = copy.output_url.clone();
                let output = Self::execute_in(&self.ctx, sql).await?;
                let rewritten = crate::orc_twin::rewrite_as_orc(std::path::Path::new(&target))?;
                let parquet = sql.to_ascii_lowercase().contains("stored as parquet");
                if parquet && rewritten == 0 {
                    return Err(DataFusionError::Execution(format!(
                        "ORC twin: COPY wrote no Parquet file under '{target}' to rewrite"
                    )));
                }
                return Ok(output);
            }
        }
        let Some(cluster) = &self.cluster else {
            return Self::execute_in(&self.ctx, sql).await;
        };
        let plan = self.ctx.state().create_logical_plan(sql).await?;
        if let LogicalPlan::Statement(Statement::SetVariable(_) | Statement::ResetVariable(_)) =
            &plan
        {
            Self::execute_in(cluster, sql).await?;
            return Self::execute_in(&self.ctx, sql).await;
        }
        match reads_lakescan_only(&plan)? {
            true => Self::execute_in(cluster, sql).await,
            false => Self::execute_in(&self.ctx, sql).await,
        }
    }

    async fn execute_in(ctx: &SessionContext, sql: &str) -> Result<DBOutput<DefaultColumnType>> {
        let frame = ctx.sql(sql).await?;
        let plan_schema = frame.schema().inner().clone();
        let batches = frame.collect().await?;
        convert::to_output(&plan_schema, &batches)
    }
}

#[async_trait]
impl AsyncDB for LakescanDb {
    type Error = DbError;
    type ColumnType = DefaultColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, DbError> {
        let Some(mirror) = &self.mirror else {
            return Ok(self.execute(sql).await?);
        };
        mirror.sync().await?;
        match self.execute(&mirror.rewrite(sql)).await {
            Ok(DBOutput::Rows { types, rows }) => {
                let rows = rows
                    .into_iter()
                    .map(|row| row.iter().map(|cell| mirror.localize(cell)).collect())
                    .collect();
                Ok(DBOutput::Rows { types, rows })
            }
            Ok(other) => Ok(other),
            Err(e) => Err(mirror.localize_error(e).into()),
        }
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        ENGINE_NAME
    }

    async fn sleep(dur: Duration) {
        tokio::time::sleep(dur).await;
    }
}

/// The error of a failed statement: a [`DataFusionError`] whose `Display` is DataFusion's
/// message, which `statement error <regex>` / `query error <regex>` records are matched against.
#[derive(Debug)]
pub struct DbError(pub DataFusionError);

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for DbError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        // `Display` already shows the wrapped error, so the chain continues below it.
        std::error::Error::source(&self.0)
    }
}

impl From<DataFusionError> for DbError {
    fn from(error: DataFusionError) -> Self {
        Self(error)
    }
}
