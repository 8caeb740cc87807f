//! [`DemoQuery`] and [`run_query`]: one query of the demo, printed with its rows, its time
//! and what its scans pruned, for the Hive and the Iceberg part of the demo alike.

use std::io::Write;

use datafusion::prelude::SessionContext;

use crate::error::CliResult;
use crate::exec::execute;
use crate::print::{OutputFormat, row_count, timing_line, write_results};
use crate::summary::ScanSummary;

/// One demo query with a short description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoQuery {
    /// What the query shows.
    pub title: &'static str,
    /// The SQL.
    pub sql: String,
}

/// Runs `query` in `ctx` and prints it, its rows, its time and its scans' summary.
pub async fn run_query(ctx: &SessionContext, query: &DemoQuery) -> CliResult<()> {
    let executed = execute(ctx, &query.sql).await?;
    let rows = row_count(&executed.batches);
    let summary = ScanSummary::from_plan(&executed.plan);
    let mut out = std::io::stdout().lock();
    writeln!(out, "-- {}", query.title)?;
    writeln!(out, "{};", query.sql)?;
    write_results(
        &mut out,
        OutputFormat::Table,
        &executed.schema,
        &executed.batches,
    )?;
    writeln!(out, "{}", timing_line(rows, executed.elapsed))?;
    writeln!(out, "{}", summary.render(rows))?;
    out.flush()?;
    Ok(())
}
