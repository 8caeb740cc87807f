//! [`LakeScanExec`] as a plan frame ([`crate::wire`]): what a task in another process needs
//! to read its partition's splits, and nothing it learns while reading.
//!
//! Carried: the table handle (columns with roles, subfield filters, residual, stage columns,
//! field ids), the outputs, the filters parents pushed, each partition's static split list
//! (each file's facts once: [`EncodedSplits`]),
//! the adapter by kind, the limit and the planning counts. The residual, the outputs
//! and the pushed filters are datafusion-proto expressions over the table schema.
//!
//! Not carried: the split queue (a decoded scan reads its static lists, never steals: each
//! task of a stage decodes its own copy), the adaptive filter order (it starts afresh per
//! task), metrics, the optimizer's statistics and test hooks, and dynamic filters (joins,
//! TopK). A dynamic filter does not cross at all: its producer stays behind, so nothing on
//! the other side could update it (or would ever wait on it), and its current value is not a
//! sound static filter for another execution — a TopK's final threshold from one run drops
//! the ties a fresh run needs. The parent was told the filter is not exact, so it still
//! filters.

use std::sync::Arc;

use datafusion::common::Result;
use datafusion::execution::TaskContext;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::physical_expr::projection::ProjectionExpr;
use datafusion::physical_expr_common::physical_expr::is_dynamic_physical_expr;
use datafusion::physical_plan::PhysicalExpr;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion_proto::physical_plan::PhysicalExtensionCodec;
use serde::{Deserialize, Serialize};

use super::AdapterDecoders;
use super::{LakeScanExec, PlanningStats, SplitScheduling};
use crate::field_ids::FieldIdMatching;
use crate::filter::Filter;
use crate::handle::{Assignments, ColumnHandle, StageColumns, TableHandle};
use crate::scan_spec::ScanSpec;
use crate::split::EncodedSplits;
use crate::subfield::Subfield;
use crate::wire::{EncodedAdapter, ExprBytes, NodeKind};

/// The body of a scan frame.
#[derive(Serialize, Deserialize)]
struct ScanParts {
    table_name: String,
    columns: Vec<ColumnHandle>,
    filters: Vec<(Subfield, Filter)>,
    residual: Option<ExprBytes>,
    stage_columns: StageColumns,
    field_ids: Option<FieldIdMatching>,
    /// `(expression over the table schema, output name)` per output.
    outputs: Vec<(ExprBytes, String)>,
    pushed: Vec<ExprBytes>,
    /// One list per output partition, in partition order, each file's facts once.
    lists: EncodedSplits,
    #[serde(with = "crate::wire::store_url")]
    store_url: ObjectStoreUrl,
    adapter: EncodedAdapter,
    limit: Option<u64>,
    planning: PlanningStats,
}

impl LakeScanExec {
    /// Appends this scan as a plan frame to `buf`; expressions go through `codec` (the
    /// session's, for the functions and expressions it knows).
    pub fn encode(&self, codec: &dyn PhysicalExtensionCodec, buf: &mut Vec<u8>) -> Result<()> {
        let table = &self.table;
        let expr = |e: &Arc<dyn PhysicalExpr>| ExprBytes::encode(e, codec);
        let pushed = self
            .pushed_filters
            .iter()
            .filter(|f| !is_dynamic_physical_expr(f))
            .map(expr)
            .collect::<Result<_>>()?;
        let parts = ScanParts {
            table_name: self.table_name.clone(),
            columns: table.columns().to_vec(),
            filters: table
                .subfield_filters()
                .iter()
                .map(|(s, f)| (s.clone(), f.clone()))
                .collect(),
            residual: table.residual().map(expr).transpose()?,
            stage_columns: table.stage_columns.clone(),
            field_ids: table.field_ids.as_deref().cloned(),
            outputs: self
                .assignments
                .exprs()
                .iter()
                .map(|p| Ok((expr(&p.expr)?, p.alias.clone())))
                .collect::<Result<_>>()?,
            pushed,
            lists: EncodedSplits::new(&self.lists, &self.store_url)?,
            store_url: self.store_url.clone(),
            adapter: self.adapter.encoded()?,
            limit: self.limit.map(|l| l as u64),
            planning: self.planning.clone(),
        };
        crate::wire::encode_frame(NodeKind::Scan, &parts, buf)
    }

    /// The scan a frame body of [`NodeKind::Scan`] describes, reading each partition's own
    /// list (no stealing: the other partitions run elsewhere).
    pub fn decode(
        body: &[u8],
        ctx: &TaskContext,
        codec: &dyn PhysicalExtensionCodec,
        adapters: &AdapterDecoders,
    ) -> Result<Self> {
        let parts: ScanParts = crate::wire::decode_body(body, "scan")?;
        let mut table = TableHandle::try_new(parts.table_name.clone(), parts.columns)?;
        let schema = Arc::clone(table.table_schema());
        let residual = parts
            .residual
            .map(|e| e.decode(&schema, ctx, codec))
            .transpose()?;
        table = table.with_filters(parts.filters.into_iter().collect(), residual);
        table.stage_columns = parts.stage_columns;
        table.field_ids = parts.field_ids.map(Arc::new);
        let mut outputs = Vec::with_capacity(parts.outputs.len());
        for (expr, alias) in parts.outputs {
            outputs.push(ProjectionExpr::new(
                expr.decode(&schema, ctx, codec)?,
                alias,
            ));
        }
        let assignments = Assignments::from_exprs(outputs);
        let pushed = parts
            .pushed
            .iter()
            .map(|e| e.decode(&schema, ctx, codec))
            .collect::<Result<Vec<_>>>()?;
        let spec = Arc::new(ScanSpec::try_new(&table, &assignments, &pushed)?);
        let adapter = adapters.decode(&parts.adapter)?;
        let lists = parts.lists.into_lists(&parts.store_url)?;
        let scan = Self {
            table_name: parts.table_name,
            table: Arc::new(table),
            assignments,
            properties: Self::properties_of(&spec, 1),
            spec,
            lists: super::lists_of(vec![vec![]]),
            scheduling: SplitScheduling::StaticLists,
            queue: Arc::new(super::SplitQueue::new(
                super::lists_of(vec![vec![]]),
                SplitScheduling::StaticLists,
                None,
            )),
            store_url: parts.store_url,
            adapter,
            pushed_filters: pushed,
            limit: None,
            hook: None,
            metrics: ExecutionPlanMetricsSet::new(),
            planning: parts.planning,
            statistics: None,
        };
        Ok(scan
            .with_partition_splits(lists)
            .with_limit(parts.limit.map(|l| l as usize)))
    }
}
