//! lakescan: Hive-style and Apache Iceberg lakehouse scans for Apache DataFusion.
//!
//! ```no_run
//! # async fn demo() -> datafusion::error::Result<()> {
//! use datafusion::prelude::SessionContext;
//! let ctx = SessionContext::new();
//! lakescan::register(&ctx)?;
//! ctx.sql("CREATE EXTERNAL TABLE sales STORED AS HIVE LOCATION '/data/sales/' \
//!          PARTITIONED BY (region, day)").await?;
//! ctx.sql("SELECT region, sum(amount) FROM sales GROUP BY region").await?.show().await?;
//! # Ok(()) }
//! ```
//!
//! Crates: `lakescan-core` (the scan path), `lakescan-hive` (Hive tables),
//! `lakescan-iceberg` (Iceberg tables).

use std::sync::Arc;

use datafusion::error::Result;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::SessionContext;

pub mod codec;

pub use lakescan_core as core;
pub use lakescan_hive as hive;
pub use lakescan_iceberg as iceberg;

/// Registers the `HIVE` and `ICEBERG` table factories in `ctx`, so `CREATE EXTERNAL TABLE …
/// STORED AS HIVE|ICEBERG` creates lakescan tables, the `lakescan.*` session settings
/// ([`core::config::LakeScanOptions`], e.g. `SET lakescan.split_size = 1048576`), the SQL
/// functions `hive_hash` and `hive_bucket` ([`hive::udf`]), and the metadata tables
/// (`"t$snapshots"`, …) of Iceberg tables in the default schema
/// ([`iceberg::metadata_tables`]), and a physical optimizer rule that keeps DataFusion's
/// `min`/`max` dynamic filters from dropping rows while a bound is missing
/// ([`core::aggregate_bounds`]).
pub fn register(ctx: &SessionContext) -> Result<()> {
    ctx.register_udf(hive::udf::HiveHashUdf::hash());
    ctx.register_udf(hive::udf::HiveHashUdf::bucket());
    ctx.register_udtf(
        "table_changes",
        Arc::new(iceberg::changelog::TableChangesFunction),
    );
    let state = ctx.state_ref();
    let mut state = state.write();
    let guarded = state
        .physical_optimizers()
        .iter()
        .any(|rule| rule.name() == core::aggregate_bounds::GuardAggregateFilters::NAME);
    if !guarded {
        // After DataFusion's own rules (filter pushdown among them).
        *state = SessionStateBuilder::new_from_existing(state.clone())
            .with_physical_optimizer_rule(Arc::new(core::aggregate_bounds::GuardAggregateFilters))
            .build();
    }
    state
        .table_factories_mut()
        .insert("HIVE".to_string(), Arc::new(hive::HiveTableFactory));
    state.table_factories_mut().insert(
        "ICEBERG".to_string(),
        Arc::new(iceberg::IcebergTableFactory),
    );
    // `"t$snapshots"` and the other metadata tables of Iceberg tables in the default schema.
    let defaults = &state.config_options().catalog;
    let (catalog, schema) = (
        defaults.default_catalog.clone(),
        defaults.default_schema.clone(),
    );
    if let Some(catalog) = state.catalog_list().catalog(&catalog)
        && let Some(inner) = catalog.schema(&schema)
        && inner
            .downcast_ref::<iceberg::metadata_tables::MetadataTableSchema>()
            .is_none()
    {
        catalog.register_schema(
            &schema,
            Arc::new(iceberg::metadata_tables::MetadataTableSchema::new(inner)),
        )?;
    }
    let options = state.config_mut().options_mut();
    if options
        .extensions
        .get::<core::config::LakeScanConfig>()
        .is_none()
    {
        options
            .extensions
            .insert(core::config::LakeScanConfig::default());
    }
    Ok(())
}
