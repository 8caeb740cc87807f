//! [`IcebergTableFactory`]: `CREATE EXTERNAL TABLE … STORED AS ICEBERG`, and
//! [`IcebergTableBuilder`], the Rust API behind it.
//!
//! ```sql
//! CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '/wh/db/t/metadata/v7.metadata.json';
//! CREATE EXTERNAL TABLE t_old STORED AS ICEBERG LOCATION '/wh/db/t/'
//!   OPTIONS ('snapshot_id' '5398841822738664432');
//! ```
//! The schema comes from the table's metadata: a column list or `PARTITIONED BY` is an
//! error. The options are listed in [`crate::options`].

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider, TableProviderFactory};
use datafusion::common::{Result, plan_err};
use datafusion::logical_expr::CreateExternalTable;

use lakescan_core::api::StoreOptions;

use crate::metadata::{locate, read_metadata, select_snapshot};
use crate::metadata_columns::MetadataSelection;
use crate::options::{IcebergOptions, SnapshotSelector};
use crate::paths::PathResolver;
use crate::schema::{ScanSchema, StringTypes};
use crate::table::IcebergTable;

/// Creates [`IcebergTable`]s from `CREATE EXTERNAL TABLE … STORED AS ICEBERG`.
#[derive(Debug, Default)]
pub struct IcebergTableFactory;

#[async_trait]
impl TableProviderFactory for IcebergTableFactory {
    async fn create(
        &self,
        state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> Result<Arc<dyn TableProvider>> {
        if !cmd.schema.fields().is_empty() {
            return plan_err!(
                "an ICEBERG table takes its columns from its metadata; remove the column list \
                 from CREATE EXTERNAL TABLE {}",
                cmd.name
            );
        }
        if !cmd.table_partition_cols.is_empty() {
            return plan_err!(
                "an ICEBERG table takes its partitioning from its metadata; remove PARTITIONED BY \
                 from CREATE EXTERNAL TABLE {}",
                cmd.name
            );
        }
        let mut builder = IcebergTableBuilder::new(cmd.name.table(), &cmd.location);
        let (store, options) = StoreOptions::split(&cmd.options)?;
        builder.options = IcebergOptions::parse(&options)?;
        Ok(Arc::new(builder.store_options(store).build(state).await?))
    }
}

/// Builds an [`IcebergTable`] from Rust: what `CREATE EXTERNAL TABLE … STORED AS ICEBERG`
/// does.
///
/// ```no_run
/// # async fn demo(ctx: &datafusion::prelude::SessionContext) -> datafusion::error::Result<()> {
/// use lakescan_iceberg::{IcebergTableBuilder, SnapshotSelector};
/// let table = IcebergTableBuilder::new("t", "/wh/db/t/")
///     .snapshot(SnapshotSelector::Ref("audit-2024".into()))
///     .build(&ctx.state())
///     .await?;
/// ctx.register_table("t", std::sync::Arc::new(table))?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct IcebergTableBuilder {
    name: String,
    location: String,
    options: IcebergOptions,
    store: StoreOptions,
}

impl IcebergTableBuilder {
    /// A table `name` at `location`: a `*.metadata.json` file or a table directory (a local
    /// path or a URL of a registered object store).
    pub fn new(name: impl Into<String>, location: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            location: location.into(),
            options: IcebergOptions::default(),
            store: StoreOptions::default(),
        }
    }

    /// Which snapshot to read (time travel); the current one by default.
    pub fn snapshot(mut self, snapshot: SnapshotSelector) -> Self {
        self.options.snapshot = snapshot;
        self
    }

    /// Files without `split_offsets` larger than `bytes` are read as several splits.
    pub fn split_size(mut self, bytes: u64) -> Self {
        self.options.split_size = Some(bytes);
        self
    }

    /// The metadata columns the table shows after its data columns
    /// (`crate::metadata_columns`).
    pub fn metadata_columns(mut self, selection: MetadataSelection) -> Self {
        self.options.metadata_columns = selection;
        self
    }

    /// The directory relative paths in the metadata resolve against.
    pub fn relative_path_base(mut self, base: impl Into<String>) -> Self {
        self.options.relative_path_base = Some(base.into());
        self
    }

    /// The `aws.*` options of the location's store ([`StoreOptions`]).
    pub fn store_options(mut self, store: StoreOptions) -> Self {
        self.store = store;
        self
    }

    /// Reads the metadata, chooses the snapshot and builds the table.
    pub async fn build(self, state: &dyn Session) -> Result<IcebergTable> {
        if self.location.trim().is_empty() {
            return plan_err!("an ICEBERG table needs a LOCATION; got an empty one");
        }
        let location = PathResolver::new(None)?.resolve(self.location.trim())?;
        self.store
            .register_for(location.store.as_ref(), state.runtime_env())?;
        let store = state.runtime_env().object_store(&location.store)?;
        let file = locate(&store, &location.path, &self.location).await?;
        let display = format!("{}{}", location.store.as_str(), file);
        let loaded = read_metadata(&store, &file, &display).await?;
        let (snapshot, schema) = select_snapshot(&loaded, &self.options.snapshot)?;
        let view_types = StringTypes::of_session(
            state
                .config_options()
                .execution
                .parquet
                .schema_force_view_types,
        );
        let schema = ScanSchema::try_new(
            Arc::clone(&schema),
            view_types,
            &loaded.placeholders.of(schema.schema_id()),
        )?;
        let paths = PathResolver::new(self.options.relative_path_base.as_deref())?;
        IcebergTable::try_new(
            self.name,
            loaded,
            snapshot,
            schema,
            paths,
            self.options.split_size,
            location.store,
        )?
        .with_metadata_columns(&self.options.metadata_columns, view_types)
    }
}
