//! lakescan: Hive-style and Apache Iceberg lakehouse scans for Apache DataFusion.
//!
//! Register lakescan in a `SessionContext` ([`register`]), then create tables with
//! `CREATE EXTERNAL TABLE … STORED AS HIVE|ICEBERG` and query them with SQL:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> datafusion::error::Result<()> {
//! use datafusion::prelude::SessionContext;
//! let dir = tempfile::tempdir()?;
//! let ctx = SessionContext::new();
//! lakescan::register(&ctx)?;
//! // A Hive-style table: one directory per `region`.
//! ctx.sql(&format!(
//!     "COPY (SELECT * FROM (VALUES (1, 10.0, 'eu'), (2, 20.0, 'us'), (3, 5.0, 'eu'))
//!            AS t(id, amount, region))
//!      TO '{}/' STORED AS PARQUET PARTITIONED BY (region)",
//!     dir.path().display()
//! ))
//! .await?
//! .collect()
//! .await?;
//! ctx.sql(&format!(
//!     "CREATE EXTERNAL TABLE sales STORED AS HIVE LOCATION '{}/' PARTITIONED BY (region)",
//!     dir.path().display()
//! ))
//! .await?;
//! let rows = ctx
//!     .sql("SELECT sum(amount) FROM sales WHERE region = 'eu'")
//!     .await?
//!     .collect()
//!     .await?;
//! use datafusion::arrow::array::AsArray;
//! use datafusion::arrow::datatypes::Float64Type;
//! assert_eq!(rows[0].column(0).as_primitive::<Float64Type>().value(0), 15.0);
//! # Ok(()) }
//! ```
//!
//! What a user touches is at this crate's root:
//!
//! | item | what it is |
//! |---|---|
//! | [`register`] | `STORED AS HIVE` / `ICEBERG`, the `lakescan.*` settings, functions, metadata tables |
//! | [`HiveTableBuilder`] | a Hive table built from Rust |
//! | [`IcebergTableBuilder`], [`SnapshotSelector`], [`MetadataSelection`] | an Iceberg table built from Rust: which snapshot, which metadata columns |
//! | [`register_catalog`] | an Iceberg catalog (REST, SQL, in memory) as a DataFusion catalog |
//! | [`LakeScanOptions`] | the `lakescan.*` session settings |
//! | [`LakeLogicalCodec`], [`LakePhysicalCodec`] | plans with lakescan tables to bytes and back (distributed execution) |
//!
//! The crates behind them: [`core`] (the scan path), [`hive`] (Hive tables), [`iceberg`]
//! (Iceberg tables).

use std::sync::Arc;

use datafusion::error::Result;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::SessionContext;

pub mod codec;

pub use lakescan_core as core;
pub use lakescan_hive as hive;
pub use lakescan_iceberg as iceberg;

/// The `lakescan.*` session settings, set with `SET lakescan.… = …` once lakescan is
/// registered, or on the session's configuration before:
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> datafusion::error::Result<()> {
/// use datafusion::prelude::SessionContext;
/// let ctx = SessionContext::new();
/// lakescan::register(&ctx)?;
/// ctx.sql("SET lakescan.split_size = 1048576").await?;
/// let options = lakescan::LakeScanOptions::from_config(ctx.state().config_options());
/// assert_eq!(options.split_size, 1_048_576);
/// # Ok(()) }
/// ```
#[doc(inline)]
pub use lakescan_core::api::LakeScanOptions;

/// A Hive table built from Rust, what `CREATE EXTERNAL TABLE … STORED AS HIVE` does:
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> datafusion::error::Result<()> {
/// use std::sync::Arc;
/// use datafusion::prelude::SessionContext;
/// let dir = tempfile::tempdir()?;
/// let ctx = SessionContext::new();
/// ctx.sql(&format!(
///     "COPY (SELECT * FROM (VALUES (1, 'eu'), (2, 'us'), (3, 'us')) AS t(id, region))
///      TO '{}/' STORED AS PARQUET PARTITIONED BY (region)",
///     dir.path().display()
/// ))
/// .await?
/// .collect()
/// .await?;
/// let location = format!("{}/", dir.path().display());
/// let table = lakescan::HiveTableBuilder::new("sales", location)
///     .partition_column("region", None) // its type inferred from the directory names
///     .build(&ctx.state())
///     .await?;
/// ctx.register_table("sales", Arc::new(table))?;
/// let us = ctx.sql("SELECT id FROM sales WHERE region = 'us'").await?.count().await?;
/// assert_eq!(us, 2);
/// # Ok(()) }
/// ```
#[doc(inline)]
pub use lakescan_hive::HiveTableBuilder;

/// An Iceberg table built from Rust, what `CREATE EXTERNAL TABLE … STORED AS ICEBERG` does;
/// [`SnapshotSelector`] chooses the snapshot (time travel), [`MetadataSelection`] the
/// metadata columns shown:
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> datafusion::error::Result<()> {
/// use std::sync::Arc;
/// use datafusion::prelude::SessionContext;
/// use lakescan::{IcebergTableBuilder, MetadataSelection, SnapshotSelector};
/// // A table DuckDB's Iceberg tests wrote (in this repository's testdata/).
/// let base = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/duckdb-iceberg");
/// let location = format!("{base}/data/persistent/partition_bigint");
/// let ctx = SessionContext::new();
/// let table = IcebergTableBuilder::new("events", location)
///     .relative_path_base(base)
///     .snapshot(SnapshotSelector::Current)
///     .metadata_columns(MetadataSelection::parse("_spec_id")?)
///     .build(&ctx.state())
///     .await?;
/// ctx.register_table("events", Arc::new(table))?;
/// let rows = ctx.sql("SELECT user_id, _spec_id FROM events").await?.count().await?;
/// assert_eq!(rows, 2);
/// # Ok(()) }
/// ```
#[doc(inline)]
pub use lakescan_iceberg::IcebergTableBuilder;

/// Which snapshot an Iceberg table reads (see [`IcebergTableBuilder`]).
#[doc(inline)]
pub use lakescan_iceberg::SnapshotSelector;

/// Which metadata columns an Iceberg table shows (see [`IcebergTableBuilder`]).
#[doc(inline)]
pub use lakescan_iceberg::metadata_columns::MetadataSelection;

/// An Iceberg catalog (a REST catalog, a SQL catalog, or one in memory) registered as a
/// DataFusion catalog: its namespaces are schemas, its tables lakescan tables.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> datafusion::error::Result<()> {
/// use datafusion::prelude::SessionContext;
/// let warehouse = tempfile::tempdir()?;
/// let ctx = SessionContext::new();
/// lakescan::register(&ctx)?;
/// let uri = format!("memory://?warehouse={}", warehouse.path().display());
/// lakescan::register_catalog(&ctx, "lake", &uri).await?;
/// assert!(ctx.catalog("lake").is_some());
/// # Ok(()) }
/// ```
#[doc(inline)]
pub use lakescan_iceberg::catalog::register_catalog;

/// A physical plan with lakescan scans to bytes and back (datafusion-proto), for a plan
/// sent to another process; [`LakeLogicalCodec`] does the same for logical plans.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> datafusion::error::Result<()> {
/// use datafusion::prelude::SessionContext;
/// use datafusion_proto::bytes::{
///     physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
/// };
/// let dir = tempfile::tempdir()?;
/// let ctx = SessionContext::new();
/// lakescan::register(&ctx)?;
/// ctx.sql(&format!(
///     "COPY (SELECT * FROM (VALUES (1), (2), (3)) AS t(id)) TO '{}/f.parquet'",
///     dir.path().display()
/// ))
/// .await?
/// .collect()
/// .await?;
/// ctx.sql(&format!(
///     "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '{}/'",
///     dir.path().display()
/// ))
/// .await?;
/// let plan = ctx.sql("SELECT id FROM t WHERE id > 1").await?.create_physical_plan().await?;
/// let codec = lakescan::LakePhysicalCodec::default();
/// let bytes = physical_plan_to_bytes_with_extension_codec(plan, &codec)?;
/// let decoded = physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &codec)?;
/// let rows = datafusion::physical_plan::collect(decoded, ctx.task_ctx()).await?;
/// assert_eq!(rows.iter().map(|b| b.num_rows()).sum::<usize>(), 2);
/// # Ok(()) }
/// ```
#[doc(inline)]
pub use codec::LakePhysicalCodec;

/// A logical plan with lakescan tables to bytes and back (datafusion-proto).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> datafusion::error::Result<()> {
/// use datafusion::prelude::SessionContext;
/// use datafusion_proto::bytes::{
///     logical_plan_from_bytes_with_extension_codec, logical_plan_to_bytes_with_extension_codec,
/// };
/// let dir = tempfile::tempdir()?;
/// let ctx = SessionContext::new();
/// lakescan::register(&ctx)?;
/// ctx.sql(&format!(
///     "COPY (SELECT * FROM (VALUES (1), (2), (3)) AS t(id)) TO '{}/f.parquet'",
///     dir.path().display()
/// ))
/// .await?
/// .collect()
/// .await?;
/// ctx.sql(&format!(
///     "CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '{}/'",
///     dir.path().display()
/// ))
/// .await?;
/// let plan = ctx.sql("SELECT id FROM t").await?.into_optimized_plan()?;
/// let codec = lakescan::LakeLogicalCodec::default();
/// let bytes = logical_plan_to_bytes_with_extension_codec(&plan, &codec)?;
/// let decoded = logical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &codec)?;
/// let rows = ctx.execute_logical_plan(decoded).await?.count().await?;
/// assert_eq!(rows, 3);
/// # Ok(()) }
/// ```
#[doc(inline)]
pub use codec::LakeLogicalCodec;

/// Registers the `HIVE` and `ICEBERG` table factories in `ctx`, so `CREATE EXTERNAL TABLE …
/// STORED AS HIVE|ICEBERG` creates lakescan tables, the `lakescan.*` session settings
/// ([`core::api::LakeScanOptions`], e.g. `SET lakescan.split_size = 1048576`), the SQL
/// functions `hive_hash` and `hive_bucket` ([`hive::udf`]), and the metadata tables
/// (`"t$snapshots"`, …) of Iceberg tables in the default schema
/// ([`iceberg::metadata_tables`]), and a physical optimizer rule that keeps DataFusion's
/// `min`/`max` dynamic filters from dropping rows while a bound is missing
/// ([`core::api::GuardAggregateFilters`]).
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
        .any(|rule| rule.name() == core::api::GuardAggregateFilters::NAME);
    if !guarded {
        // After DataFusion's own rules (filter pushdown among them).
        *state = SessionStateBuilder::new_from_existing(state.clone())
            .with_physical_optimizer_rule(Arc::new(core::api::GuardAggregateFilters))
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
        .get::<core::api::LakeScanConfig>()
        .is_none()
    {
        options
            .extensions
            .insert(core::api::LakeScanConfig::default());
    }
    Ok(())
}
