//! Executing SQL statements in a lakescan-enabled [`SessionContext`] and
//! printing their results.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use datafusion::physical_plan::{ExecutionPlan, collect};
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::error::{CliError, CliResult};
use crate::print::{OutputFormat, row_count, timing_line, write_results};
use crate::split::split_statements;

/// Creates a [`SessionContext`] with the lakescan table factories registered and, as in
/// `datafusion-cli`, the information schema on (`SHOW TABLES`, `SHOW ALL`, `DESCRIBE t`).
pub fn new_context() -> CliResult<SessionContext> {
    let config = SessionConfig::new().with_information_schema(true);
    let ctx = SessionContext::new_with_config(config);
    lakescan::register(&ctx)?;
    Ok(ctx)
}

/// Like [`new_context`], with queries planned and run by the Ballista cluster whose
/// scheduler is at `url` (`df://host:port`).
pub async fn cluster_context(url: &str) -> CliResult<SessionContext> {
    let config = SessionConfig::new().with_information_schema(true);
    let state = lakescan_ballista::session::state(config)?;
    Ok(lakescan_ballista::session::remote(url, state).await?)
}

/// The outcome of one executed statement.
#[derive(Debug)]
pub struct Executed {
    /// Output schema of the statement (empty for DDL).
    pub schema: SchemaRef,
    /// All result batches.
    pub batches: Vec<RecordBatch>,
    /// The executed physical plan; its nodes carry the runtime metrics.
    pub plan: Arc<dyn ExecutionPlan>,
    /// Wall clock time for planning plus execution.
    pub elapsed: Duration,
}

/// Plans and runs a single SQL statement, collecting all results.
pub async fn execute(ctx: &SessionContext, sql: &str) -> CliResult<Executed> {
    let start = Instant::now();
    let df = ctx.sql(sql).await?;
    let plan = df.create_physical_plan().await?;
    let schema = plan.schema();
    let batches = collect(Arc::clone(&plan), ctx.task_ctx()).await?;
    Ok(Executed {
        schema,
        batches,
        plan,
        elapsed: start.elapsed(),
    })
}

/// Runs statements in one session and prints their results to stdout.
pub struct Runner {
    ctx: SessionContext,
    format: OutputFormat,
    quiet: bool,
}

impl Runner {
    /// A runner with a fresh lakescan-enabled session.
    pub fn new(format: OutputFormat, quiet: bool) -> CliResult<Self> {
        Ok(Self {
            ctx: new_context()?,
            format,
            quiet,
        })
    }

    /// A runner over `ctx` (a cluster's client session).
    pub fn with_context(ctx: SessionContext, format: OutputFormat, quiet: bool) -> Self {
        Self { ctx, format, quiet }
    }

    /// The session statements run in.
    pub fn context(&self) -> &SessionContext {
        &self.ctx
    }

    /// Runs every statement in `sql` in order, stopping at the first error.
    pub async fn run_script(&self, sql: &str) -> CliResult<()> {
        for statement in split_statements(sql) {
            self.run_statement(&statement).await?;
        }
        Ok(())
    }

    /// Reads `path` and runs the statements it contains.
    pub async fn run_file(&self, path: &Path) -> CliResult<()> {
        let sql = std::fs::read_to_string(path)
            .map_err(|e| CliError::io(format!("cannot read {}", path.display()), e))?;
        self.run_script(&sql).await
    }

    /// Runs one statement and prints its result (and, unless quiet, the
    /// timing line).
    pub async fn run_statement(&self, sql: &str) -> CliResult<()> {
        let executed = execute(&self.ctx, sql).await?;
        let mut out = std::io::stdout().lock();
        write_results(&mut out, self.format, &executed.schema, &executed.batches)?;
        if !self.quiet {
            let rows = row_count(&executed.batches);
            writeln!(out, "{}\n", timing_line(rows, executed.elapsed))?;
        }
        out.flush()?;
        Ok(())
    }
}
