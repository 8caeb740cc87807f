//! lakescan for Python: the `lakescan` package's native module (`lakescan._lakescan`).
//!
//! | Python | what |
//! |---|---|
//! | `HiveTable(location, partitioned_by, schema, options)` | a Hive table, as `CREATE EXTERNAL TABLE … STORED AS HIVE` makes it |
//! | `IcebergTable(location, snapshot_id, as_of_timestamp, ref, metadata_columns, options)` | an Iceberg table, as `STORED AS ICEBERG` makes it |
//! | `iceberg.metadata_table(name)`, `iceberg.changes(from, to)` | `"t$name"` and `table_changes` as tables |
//! | `table.scan(columns, filter, limit)` | an Arrow stream (`__arrow_c_stream__`) for pyarrow, polars, DuckDB |
//! | `table.__datafusion_table_provider__` | the table in a datafusion-python 54.1 `SessionContext` |
//! | `TableFactory("HIVE")` | `CREATE EXTERNAL TABLE … STORED AS HIVE` in datafusion-python |
//! | `IcebergCatalog(uri)` | an Iceberg catalog: `.table("ns.t")`, or `ctx.register_catalog_provider` |
//! | `Settings(**values)` | `SET lakescan.*` in a datafusion-python session (`SessionConfig.with_extension`) |
//!
//! Each table is made in a lakescan session of its own (`bound.rs`): scans crossing the FFI
//! are planned and run there, with its object stores and settings. Every
//! `__datafusion_*__` method first checks the installed datafusion-python (the FFI has no
//! stable ABI across DataFusion majors): a mismatch is an `ImportError`, never a crash.
//! The sessions it makes read batches of `BATCH_SIZE` rows (`tables.rs`). The module's
//! allocations come from its own allocator, mimalloc (`allocator.rs`, `ALLOCATOR` in
//! Python).

mod allocator;
mod bound;
mod catalog;
mod functions;
mod settings;
mod stream;
mod tables;
mod version;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _lakescan(m: &Bound<'_, PyModule>) -> PyResult<()> {
    allocator::keep_freed_memory();
    m.add("ALLOCATOR", allocator::describe())?;
    m.add("BATCH_SIZE", tables::BATCH_SIZE)?;
    m.add_class::<tables::HiveTable>()?;
    m.add_class::<tables::IcebergTable>()?;
    m.add_class::<tables::Table>()?;
    m.add_class::<tables::TableFactory>()?;
    m.add_class::<catalog::IcebergCatalog>()?;
    m.add_class::<settings::Settings>()?;
    m.add_class::<stream::ArrowStream>()?;
    m.add("DATAFUSION_REQUIREMENT", version::REQUIREMENT)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
