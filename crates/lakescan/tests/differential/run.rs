//! Running one case: a query on a lakescan table and on the reference `MemTable`, each on
//! its own task with a timeout ([`run_query`]), the rows formatted for comparison and the
//! scan's pruning metrics summed ([`Output`]), and the verdict ([`check`] → [`Outcome`]).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::RecordBatch;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::physical_plan::{ExecutionPlan, collect};
use datafusion::prelude::SessionContext;

use crate::fixture::{Fixture, MEM};
use crate::predicates::Pred;
use crate::queries::Query;

/// One query taking longer than this is reported as an error (a hang is a bug too).
const QUERY_TIMEOUT: Duration = Duration::from_secs(120);

/// A query's rows (columns formatted and joined by `|`) and, for lakescan tables, the
/// scan's pruning metrics.
#[derive(Debug, Clone, Default)]
pub struct Output {
    pub rows: Vec<String>,
    pub metrics: HashMap<&'static str, usize>,
    pub elapsed: Duration,
}

/// The pruning counters a run must see fire at least once.
pub const METRICS: [&str; 6] = [
    "partitions_pruned",
    "splits_skipped",
    "splits_pruned_statistics",
    "row_groups_pruned_statistics",
    "rows_pruned_page_index",
    "rows_removed_reader_filters",
];

pub fn format_rows(batches: &[RecordBatch]) -> Vec<String> {
    let options = FormatOptions::default().with_null("NULL");
    let mut out = vec![];
    for batch in batches {
        let formatters: Vec<ArrayFormatter> = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap())
            .collect();
        for row in 0..batch.num_rows() {
            let values: Vec<String> = formatters
                .iter()
                .map(|f| f.value(row).to_string())
                .collect();
            out.push(values.join("|"));
        }
    }
    out
}

fn add_metrics(plan: &Arc<dyn ExecutionPlan>, into: &mut HashMap<&'static str, usize>) {
    if plan.name() == "LakeScanExec"
        && let Some(metrics) = plan.metrics()
    {
        for name in METRICS {
            let v = metrics.sum_by_name(name).map(|v| v.as_usize()).unwrap_or(0);
            *into.entry(name).or_default() += v;
        }
    }
    for child in plan.children() {
        add_metrics(child, into);
    }
}

async fn run_query_inner(ctx: &SessionContext, sql: &str) -> datafusion::error::Result<Output> {
    let started = Instant::now();
    let df = ctx.sql(sql).await?;
    let plan = df.create_physical_plan().await?;
    let batches = collect(Arc::clone(&plan), ctx.task_ctx()).await?;
    let mut metrics = HashMap::new();
    add_metrics(&plan, &mut metrics);
    Ok(Output {
        rows: format_rows(&batches),
        metrics,
        elapsed: started.elapsed(),
    })
}

/// Runs `sql` on its own task: an error, a panic or a timeout becomes `Err(message)`.
pub async fn run_query(ctx: &SessionContext, sql: &str) -> Result<Output, String> {
    let ctx = ctx.clone();
    let text = sql.to_string();
    let task = tokio::spawn(async move {
        tokio::time::timeout(QUERY_TIMEOUT, run_query_inner(&ctx, &text)).await
    });
    match task.await {
        Ok(Ok(Ok(out))) => Ok(out),
        Ok(Ok(Err(e))) => Err(format!("error: {e}")),
        Ok(Err(_)) => Err(format!("timeout after {QUERY_TIMEOUT:?}")),
        Err(e) => Err(format!("panic: {e}")),
    }
}

/// The two results of one predicate, or that both engines rejected it.
pub enum Outcome {
    /// Both results (equal rows).
    Same(Output, Output),
    BothFailed(String),
    Differ {
        lake: Result<Output, String>,
        mem: Result<Output, String>,
    },
}

pub async fn check(fx: &Fixture, table: &str, query: &Query, pred: &Pred) -> Outcome {
    let where_ = pred.sql();
    let lake = run_query(&fx.ctx, &query.sql(table, &where_)).await;
    let mem = run_query(&fx.reference, &query.sql(MEM, &where_)).await;
    match (lake, mem) {
        (Err(_), Err(m)) => Outcome::BothFailed(m),
        (Ok(a), Ok(b)) if a.rows == b.rows => Outcome::Same(a, b),
        (lake, mem) => Outcome::Differ { lake, mem },
    }
}
