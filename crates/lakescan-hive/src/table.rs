//! [`HiveTable`]: a `TableProvider` over a Hive-style directory of Parquet files.
//!
//! `scan` plans, `execute` reads: filters are turned into physical expressions and
//! extracted into per-column filters + residual; partition filters prune directories while
//! listing; every data file becomes one or more byte-range splits; a `LakeScanExec` reads them.

use std::sync::Arc;

use arrow::datatypes::{DataType, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{DFSchema, Result};
use datafusion::datasource::listing::ListingTableUrl;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use datafusion::physical_expr::utils::{collect_columns, conjunction_opt};
use datafusion::physical_plan::{ExecutionPlan, PhysicalExpr};
use lakescan_core::config::LakeScanOptions;
use lakescan_core::exec::{LakeScanExec, PlanningStats};
use lakescan_core::extract::Extraction;
use lakescan_core::handle::{Assignments, ColumnHandle, ColumnRole, TableHandle};
use lakescan_core::parquet::ParquetSplitReaderFactory;
use lakescan_core::scan_spec::ScanSpec;
use lakescan_core::split::FileSplit;

use crate::listing::{PartitionFilters, list_table, partition_schema};

/// A Hive-style partitioned Parquet table.
#[derive(Debug, Clone)]
pub struct HiveTable {
    name: String,
    location: ListingTableUrl,
    handle: TableHandle,
    partition_columns: Vec<(String, DataType)>,
    /// Table option; the session's `lakescan.split_size` when `None`.
    split_size: Option<u64>,
}

impl HiveTable {
    /// A table at `location` with `columns` (data columns then partition columns).
    pub fn try_new(
        name: impl Into<String>,
        location: ListingTableUrl,
        data_columns: Vec<arrow::datatypes::Field>,
        partition_columns: Vec<(String, DataType)>,
    ) -> Result<Self> {
        let name = name.into();
        let mut columns: Vec<ColumnHandle> =
            data_columns.iter().map(ColumnHandle::regular).collect();
        for (n, t) in &partition_columns {
            let field = arrow::datatypes::Field::new(n, t.clone(), true);
            columns.push(ColumnHandle::with_role(&field, ColumnRole::PartitionKey));
        }
        let handle = TableHandle::try_new(name.clone(), columns)?;
        Ok(Self {
            name,
            location,
            handle,
            partition_columns,
            split_size: None,
        })
    }

    /// Splits files larger than `bytes` into byte ranges of that size.
    pub fn with_split_size(mut self, bytes: u64) -> Self {
        self.split_size = Some(bytes.max(1));
        self
    }

    /// The table's location.
    pub fn location(&self) -> &ListingTableUrl {
        &self.location
    }

    /// Partition columns and their types, in directory order.
    pub fn partition_columns(&self) -> &[(String, DataType)] {
        &self.partition_columns
    }

    fn physical_conjuncts(
        &self,
        state: &dyn Session,
        filters: &[Expr],
    ) -> Result<Vec<Arc<dyn PhysicalExpr>>> {
        let df_schema = DFSchema::try_from(Arc::clone(self.handle.table_schema()))?;
        filters
            .iter()
            .map(|f| state.create_physical_expr(f.clone(), &df_schema))
            .collect()
    }

    /// Conjuncts that only use partition columns, rebound to the partition schema.
    fn partition_filters(&self, conjuncts: &[Arc<dyn PhysicalExpr>]) -> Result<PartitionFilters> {
        let schema = partition_schema(&self.partition_columns);
        let table_schema = self.handle.table_schema();
        let first_partition = table_schema.fields().len() - self.partition_columns.len();
        let mut filters = vec![];
        for c in conjuncts {
            let only_partitions = collect_columns(c)
                .iter()
                .all(|col| col.index() >= first_partition);
            if only_partitions {
                let rebound = datafusion::physical_expr::utils::reassign_expr_columns(
                    Arc::clone(c),
                    &schema,
                )?;
                filters.push(rebound);
            }
        }
        Ok(PartitionFilters::new(schema, filters))
    }

    async fn splits(
        &self,
        state: &dyn Session,
        filters: &PartitionFilters,
    ) -> Result<(Vec<FileSplit>, PlanningStats)> {
        let store = state
            .runtime_env()
            .object_store(self.location.object_store())?;
        let keys: Vec<String> = self
            .partition_columns
            .iter()
            .map(|(n, _)| n.clone())
            .collect();
        let listing = list_table(&store, self.location.prefix(), &keys, filters).await?;
        let session = LakeScanOptions::from_config(state.config_options());
        let split_size = self.split_size.unwrap_or(session.split_size);
        let mut splits = vec![];
        for (meta, partition) in &listing.files {
            let mut split = FileSplit::whole_file(meta.location.clone(), meta.size);
            split.partition_keys = keys
                .iter()
                .cloned()
                .zip(partition.values.iter().cloned())
                .collect();
            splits.extend(split.ranges(split_size));
        }
        let stats = PlanningStats {
            partitions_total: listing.partitions_total,
            partitions_pruned: listing.partitions_pruned,
        };
        Ok((splits, stats))
    }
}

#[async_trait]
impl TableProvider for HiveTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(self.handle.table_schema())
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let conjuncts = self.physical_conjuncts(state, filters)?;
        let partition_filters = self.partition_filters(&conjuncts)?;
        let (splits, planning) = self.splits(state, &partition_filters).await?;
        let extraction = Extraction::from_conjuncts(&conjuncts, self.handle.table_schema());
        let mut handle = self.handle.clone();
        handle.subfield_filters = extraction.filters;
        handle.remaining_filter = conjunction_opt(extraction.residual);
        let all: Vec<usize> = (0..self.handle.columns().len()).collect();
        let assignments = Assignments::new(projection.cloned().unwrap_or(all));
        let spec = Arc::new(ScanSpec::try_new(&handle, &assignments)?);
        let exec = LakeScanExec::new(
            self.name.clone(),
            spec,
            splits,
            self.location.object_store(),
            Arc::new(ParquetSplitReaderFactory),
            state.config().target_partitions(),
        )
        .with_limit(limit)
        .with_planning_stats(planning);
        Ok(Arc::new(exec))
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| {
                if f.is_volatile() {
                    TableProviderFilterPushDown::Unsupported
                } else {
                    TableProviderFilterPushDown::Exact
                }
            })
            .collect())
    }
}
