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
use datafusion::error::{DataFusionError, Result};
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

/// A sqllogictest connection: runs each record's SQL in a DataFusion [`SessionContext`].
///
/// Cloning the context is cheap and shares its catalog, so several connections made from one
/// context see the same tables.
#[derive(Clone)]
pub struct LakescanDb {
    ctx: SessionContext,
    /// When the file's lakescan tables are read from S3 (the `S3` run).
    mirror: Option<Arc<S3Mirror>>,
}

impl LakescanDb {
    /// Wraps `ctx`; usually a clone of the file's [`new_session_context`].
    pub fn new(ctx: SessionContext) -> Self {
        Self { ctx, mirror: None }
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
        let frame = self.ctx.sql(sql).await?;
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
