//! [`HiveTableFactory`]: `CREATE EXTERNAL TABLE … STORED AS HIVE`.
//!
//! ```sql
//! CREATE EXTERNAL TABLE sales [(id BIGINT, amount DOUBLE, …)]
//! STORED AS HIVE LOCATION '/data/sales/'
//! [PARTITIONED BY (region, day) | PARTITIONED BY (region VARCHAR, day DATE)]
//! [OPTIONS ('split_size' '67108864', 'bucketed_by' 'custkey', 'bucket_count' '8',
//!          'bucketing_version' '2', 'hidden_columns' 'all', …)];
//! ```
//! The options are listed in [`crate::options`].
//! Without declared columns the schema comes from the footer of the first data file.
//! Undeclared partition column types are inferred from the directory values.

use std::sync::Arc;
use std::time::Instant;

use arrow::datatypes::{DataType, Field};
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider, TableProviderFactory};
use datafusion::common::{
    DataFusionError, Result, exec_datafusion_err, plan_datafusion_err, plan_err,
};
use datafusion::datasource::listing::ListingTableUrl;
use datafusion::logical_expr::CreateExternalTable;
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt};

use lakescan_core::api::{FileAccess, FileFormat, LakeScanOptions, PageIndex, StoreOptions};

use crate::hash::{BucketingVersion, StringHashing};
use crate::hidden::HiddenSelection;
use crate::listing::check_not_acid;
use crate::listing::{
    Lister, ListingMemory, PartitionFilters, list_table, list_whole, partition_schema,
};
use crate::options::{BucketingOptions, HiveOptions, RowIdOptions};
use crate::partition::infer_type;
use crate::table::HiveTable;

/// Creates [`HiveTable`]s from `CREATE EXTERNAL TABLE … STORED AS HIVE`.
#[derive(Debug, Default)]
pub struct HiveTableFactory;

#[async_trait]
impl TableProviderFactory for HiveTableFactory {
    async fn create(
        &self,
        state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> Result<Arc<dyn TableProvider>> {
        let declared: Vec<Field> = cmd
            .schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        let keys = &cmd.table_partition_cols;
        let mut builder = HiveTableBuilder::new(cmd.name.table(), &cmd.location);
        for key in keys {
            let declared_type = declared
                .iter()
                .find(|f| f.name() == key)
                .map(|f| f.data_type().clone());
            builder = builder.partition_column(key, declared_type);
        }
        builder = builder.columns(
            declared
                .into_iter()
                .filter(|f| !keys.contains(f.name()))
                .collect(),
        );
        let (store, options) = StoreOptions::split(&cmd.options)?;
        builder.options = HiveOptions::parse(&options)?;
        Ok(Arc::new(builder.store_options(store).build(state).await?))
    }
}

/// Builds a [`HiveTable`] from Rust: what `CREATE EXTERNAL TABLE … STORED AS HIVE` does.
///
/// ```no_run
/// # async fn demo(ctx: &datafusion::prelude::SessionContext) -> datafusion::error::Result<()> {
/// use lakescan_hive::HiveTableBuilder;
/// let table = HiveTableBuilder::new("sales", "/data/sales/")
///     .partition_column("region", None)          // type inferred from the directories
///     .partition_column("day", Some(arrow::datatypes::DataType::Date32))
///     .build(&ctx.state())
///     .await?;
/// ctx.register_table("sales", std::sync::Arc::new(table))?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct HiveTableBuilder {
    name: String,
    location: String,
    columns: Vec<Field>,
    partition_columns: Vec<(String, Option<DataType>)>,
    options: HiveOptions,
    store: StoreOptions,
}

impl HiveTableBuilder {
    /// A table `name` at `location` (a local path or a URL of a registered object store).
    pub fn new(name: impl Into<String>, location: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            location: location.into(),
            columns: vec![],
            partition_columns: vec![],
            options: HiveOptions::default(),
            store: StoreOptions::default(),
        }
    }

    /// Declares the data columns; without them the first data file's footer is used.
    pub fn columns(mut self, columns: Vec<Field>) -> Self {
        self.columns = columns;
        self
    }

    /// Adds the next partition key; `None` infers its type from the directory values.
    pub fn partition_column(
        mut self,
        name: impl Into<String>,
        data_type: Option<DataType>,
    ) -> Self {
        self.partition_columns.push((name.into(), data_type));
        self
    }

    /// Files larger than `bytes` are read as several byte-range splits.
    pub fn split_size(mut self, bytes: u64) -> Self {
        self.options.split_size = Some(bytes);
        self
    }

    /// Buckets the table by `columns` (in bucketing order) into `count` buckets, with
    /// bucketing version 1 and Hive STRING hashing unless set otherwise.
    pub fn bucketed_by(mut self, columns: Vec<String>, count: u32) -> Self {
        let (version, strings) = self
            .options
            .bucketing
            .as_ref()
            .map_or((BucketingVersion::V1, StringHashing::HiveString), |b| {
                (b.version, b.strings)
            });
        self.options.bucketing = Some(BucketingOptions {
            columns,
            count,
            version,
            strings,
        });
        self
    }

    /// The Hive hash of a bucketed table (call after [`Self::bucketed_by`]).
    pub fn bucketing_version(mut self, version: BucketingVersion) -> Self {
        if let Some(b) = &mut self.options.bucketing {
            b.version = version;
        }
        self
    }

    /// How string bucketing columns hash (call after [`Self::bucketed_by`]).
    pub fn bucket_strings_as(mut self, strings: StringHashing) -> Self {
        if let Some(b) = &mut self.options.bucketing {
            b.strings = strings;
        }
        self
    }

    /// The format of every data file (by default the first file's).
    pub fn format(mut self, format: FileFormat) -> Self {
        self.options.format = Some(format);
        self
    }

    /// The hidden columns the schema shows.
    pub fn hidden_columns(mut self, hidden: HiddenSelection) -> Self {
        self.options.hidden_columns = hidden;
        self
    }

    /// The constants of `$row_id`.
    pub fn row_id(mut self, row_id: RowIdOptions) -> Self {
        self.options.row_id = row_id;
        self
    }

    /// The `aws.*` options of the location's store ([`StoreOptions`]).
    pub fn store_options(mut self, store: StoreOptions) -> Self {
        self.store = store;
        self
    }

    /// Resolves the location, the partition types and the schema, and builds the table.
    pub async fn build(self, state: &dyn Session) -> Result<HiveTable> {
        let location = parse_location(&self.location)?;
        self.store
            .register_for(location.get_url(), state.runtime_env())?;
        let store = state.runtime_env().object_store(location.object_store())?;
        let keys: Vec<String> = self
            .partition_columns
            .iter()
            .map(|(k, _)| k.clone())
            .collect();
        // On an object store, what is inferred comes from one recursive listing, kept for
        // the next queries of a session that keeps listings (`ListingMemory::keep_whole`).
        let infers_types = self.partition_columns.iter().any(|(_, t)| t.is_none());
        let whole = match location.scheme() != "file" && (infers_types || self.columns.is_empty()) {
            true => {
                let at = Instant::now();
                Some((at, list_whole(&store, location.prefix()).await?))
            }
            false => None,
        };
        let listed = whole.as_ref().map(|(_, objects)| objects);
        let partition_columns =
            resolve_partition_types(&store, &location, self.partition_columns, listed).await?;
        let mut data_columns = self.columns;
        let mut options = self.options;
        // A Hive ACID table is refused when its files are listed anyway (its queries refuse
        // it too: `HiveTable::plan`).
        if let Some(objects) = listed {
            check_not_acid(&self.name, location.prefix(), objects.iter())?;
        }
        // Declared columns: the session's default format (no request to find it out);
        // inferred ones: the first file's, found by the footer read that infers them.
        if options.format.is_none() && !data_columns.is_empty() {
            let session = LakeScanOptions::from_config(state.config_options());
            options.format = Some(session.hive_default_format.parse()?);
        }
        if data_columns.is_empty() {
            let access = FileAccess {
                store: Arc::clone(&store),
                metadata_cache: state.runtime_env().cache_manager.get_file_metadata_cache(),
                // With its page index: filtered scans want it, and it usually lies in the
                // footer read.
                page_index: PageIndex::Wanted,
            };
            let inferred = infer_data_columns(
                &self.name,
                &access,
                &location,
                &keys,
                listed,
                options.format,
            )
            .await
            .map(|(columns, format)| {
                options.format = Some(format);
                columns
            });
            // No data files: the location may name an object (a file) rather than a
            // directory, which deserves its own message.
            if inferred.is_err() {
                check_not_an_object(&store, &location, &self.location).await?;
            }
            data_columns = inferred.map_err(|e| match e {
                InferError::NoFiles => plan_datafusion_err!(
                    "cannot infer the schema of HIVE table at '{}': it has no data files; \
                     declare the columns",
                    self.location
                ),
                InferError::Failed(e) => e,
            })?;
            let views = state
                .config_options()
                .execution
                .parquet
                .schema_force_view_types;
            data_columns = data_columns
                .into_iter()
                .map(|f| inferred_type(f, views))
                .collect();
        } else {
            check_not_an_object(&store, &location, &self.location).await?;
        }
        let table = HiveTable::try_new(
            self.name,
            location,
            data_columns,
            partition_columns,
            &options,
        )?;
        // Kept only for a session that keeps listings (the cache is opt-in).
        let keeps = LakeScanOptions::from_config(state.config_options()).listing_cache_ttl_seconds;
        if let Some((at, objects)) = whole.filter(|_| keeps > 0) {
            table.keep_listing(at, objects);
        }
        Ok(table)
    }
}

/// Parses the location; a local directory must exist.
pub fn parse_location(location: &str) -> Result<ListingTableUrl> {
    if location.trim().is_empty() {
        return plan_err!("a HIVE table needs a LOCATION; got an empty one");
    }
    let with_slash = if location.ends_with('/') {
        location.to_string()
    } else {
        format!("{location}/")
    };
    let url = ListingTableUrl::parse(&with_slash)?;
    if url.scheme() == "file" {
        let path = std::path::PathBuf::from(format!("/{}", url.prefix()));
        if !path.is_dir() {
            return plan_err!(
                "HIVE table location '{location}' does not exist or is not a directory"
            );
        }
    }
    Ok(url)
}

/// An object store has no directories: a location that names an object (a file) is an
/// error, as a local file is ([`parse_location`]). An empty prefix is an empty table.
async fn check_not_an_object(
    store: &Arc<dyn ObjectStore>,
    location: &ListingTableUrl,
    written: &str,
) -> Result<()> {
    let key = location.prefix().as_ref().trim_end_matches('/');
    if location.scheme() == "file" || key.is_empty() {
        return Ok(());
    }
    match store.head(&Path::from(key)).await {
        Ok(_) => plan_err!(
            "HIVE table location '{written}' does not exist or is not a directory: it is an \
             object (a file); a HIVE table's LOCATION is the directory of its files"
        ),
        Err(_) => Ok(()),
    }
}

/// The declared partition types, and the undeclared ones inferred from the directories
/// (from `listed`, every object under the location, when given).
async fn resolve_partition_types(
    store: &Arc<dyn ObjectStore>,
    location: &ListingTableUrl,
    columns: Vec<(String, Option<DataType>)>,
    listed: Option<&Arc<Vec<ObjectMeta>>>,
) -> Result<Vec<(String, DataType)>> {
    if columns.iter().all(|(_, t)| t.is_some()) {
        return Ok(columns
            .into_iter()
            .map(|(n, t)| (n, t.unwrap_or(DataType::Utf8)))
            .collect());
    }
    // List every partition without filters and infer each undeclared type from its values.
    let keys: Vec<String> = columns.iter().map(|(n, _)| n.clone()).collect();
    let utf8: Vec<(String, DataType)> = keys.iter().map(|k| (k.clone(), DataType::Utf8)).collect();
    let no_filters = PartitionFilters::new(partition_schema(&utf8), vec![]);
    // Inference lists once, at CREATE: no cache.
    let mut lister =
        Lister::new(store, &ListingMemory::new()).shown_under(&location.object_store());
    if let Some(objects) = listed {
        lister = lister.with_objects(Arc::clone(objects));
    }
    let listing = list_table(lister, location.prefix(), &keys, &no_filters).await?;
    Ok(columns
        .into_iter()
        .enumerate()
        .map(|(i, (name, declared))| {
            let t = declared.unwrap_or_else(|| {
                let values = listing
                    .files
                    .iter()
                    .filter_map(|(_, p)| p.values.get(i)?.as_deref());
                infer_type(values)
            });
            (name, t)
        })
        .collect())
}

/// Why the columns could not be inferred.
enum InferError {
    /// The location holds no data file.
    NoFiles,
    /// Listing or reading the first file failed.
    Failed(datafusion::error::DataFusionError),
}

/// Footers an unpartitioned table's `CREATE` on an object store reads together with the
/// first: every query opens every file of such a table (its footer prunes it or its row
/// groups), and read together they cost `CREATE` one round trip where the first query's
/// planner would pay another. A partitioned table's files wait for its queries (partition
/// filters may skip them).
const FOOTERS_READ_AT_CREATE: usize = 32;

/// The columns of the first data file (in path order), read in the declared format or else
/// as Parquet (an ORC file is recognised by its magic when that fails); what is read (a
/// footer, a tail) is kept in the session's cache: the first query's planner finds it there
/// (with up to [`FOOTERS_READ_AT_CREATE`] others when `listed` is an unpartitioned table's
/// listing).
async fn infer_data_columns(
    name: &str,
    access: &FileAccess,
    location: &ListingTableUrl,
    keys: &[String],
    listed: Option<&Arc<Vec<ObjectMeta>>>,
    format: Option<FileFormat>,
) -> std::result::Result<(Vec<Field>, FileFormat), InferError> {
    let store = &access.store;
    let files = match listed {
        Some(objects) => Arc::clone(objects),
        None => list_whole(store, location.prefix())
            .await
            .map_err(|e| InferError::Failed(e.into()))?,
    };
    // In path order (`list_whole` sorts). An empty object has no schema to read: a
    // directory marker (`dir/`, listed as `dir`) or an empty file.
    let visible: Vec<&ObjectMeta> = files
        .iter()
        .filter(|m| is_visible(&m.location, location.prefix()))
        .collect();
    let with_bytes: Vec<&ObjectMeta> = visible.iter().copied().filter(|m| m.size > 0).collect();
    check_not_acid(name, location.prefix(), visible.iter().copied()).map_err(InferError::Failed)?;
    let Some(first) = with_bytes.first().copied() else {
        return Err(InferError::NoFiles);
    };
    let others = match keys.is_empty() && listed.is_some() {
        true => &with_bytes[1..with_bytes.len().min(FOOTERS_READ_AT_CREATE)],
        false => &[][..],
    };
    let read = |format: FileFormat| async move {
        // The others only fill the session's cache: a file that cannot be read is the error
        // of the query that reads it, naming it.
        let (schema, _) = futures::join!(
            format.seam().file_schema(access, first),
            futures::future::join_all(others.iter().map(|m| format.seam().file_schema(access, m)))
        );
        schema
    };
    let declared_or_parquet = format.unwrap_or(FileFormat::Parquet);
    let (schema, format) = match read(declared_or_parquet).await {
        Ok(schema) => (schema, declared_or_parquet),
        Err(e) => {
            // Not Parquet and no format declared: a file of another format is read as one.
            let detected = match format {
                None => detect_format(store, first).await.ok(),
                Some(_) => None,
            };
            match detected {
                Some(other) if other != declared_or_parquet => match read(other).await {
                    Ok(schema) => (schema, other),
                    Err(e) => return Err(unreadable(first, other, e)),
                },
                _ => return Err(unreadable(first, declared_or_parquet, e)),
            }
        }
    };
    let mut columns: Vec<Field> = schema
        .fields()
        .iter()
        .filter(|f| !keys.contains(f.name()))
        .map(|f| f.as_ref().clone())
        .collect();
    typed_nulls(access, format, &with_bytes[1..], &mut columns).await;
    Ok((columns, format))
}

/// The most further files read for the type of a column the first file stores as NULL
/// only.
const FILES_READ_FOR_NULL_COLUMNS: usize = 16;

/// Gives `columns` of type `Null` (a column its writer typed as NULL only: pyarrow's and
/// polars' all-NULL columns) the type the first of the next `files` that stores them with
/// one gives (a `Null` column reads as NULL in any type; the other files' values would
/// not read as `Null`). A file that cannot be read gives no type: the query that reads it
/// names it.
async fn typed_nulls(
    access: &FileAccess,
    format: FileFormat,
    files: &[&ObjectMeta],
    columns: &mut [Field],
) {
    for file in files.iter().take(FILES_READ_FOR_NULL_COLUMNS) {
        if !columns.iter().any(|c| c.data_type() == &DataType::Null) {
            return;
        }
        let Ok(schema) = format.seam().file_schema(access, file).await else {
            continue;
        };
        for column in columns.iter_mut() {
            if column.data_type() == &DataType::Null
                && let Ok(typed) = schema.field_with_name(column.name())
                && typed.data_type() != &DataType::Null
            {
                *column = column.clone().with_data_type(typed.data_type().clone());
            }
        }
    }
}

/// The inference error of `first`, which does not read as a `format` file (`e`); a feature
/// not implemented (a Hive ACID file) keeps its own message.
fn unreadable(first: &ObjectMeta, format: FileFormat, e: DataFusionError) -> InferError {
    match e {
        e @ DataFusionError::NotImplemented(_) => InferError::Failed(e),
        e => InferError::Failed(exec_datafusion_err!(
            "cannot infer schema from '{}': not a readable {} file: {e}",
            first.location,
            format.display_name()
        )),
    }
}

/// The table type of an inferred column: strings and binaries as view types when `views`
/// (DataFusion's `datafusion.execution.parquet.schema_force_view_types`, as its own Parquet
/// tables do by default; the reader decodes into them directly); an Avro `enum` (decoded as
/// a dictionary of its symbols) as the string of its symbol, as Hive reads it.
fn inferred_type(field: Field, views: bool) -> Field {
    let string = match views {
        true => DataType::Utf8View,
        false => DataType::Utf8,
    };
    let inferred = match field.data_type() {
        DataType::Dictionary(_, v) if matches!(**v, DataType::Utf8 | DataType::LargeUtf8) => string,
        DataType::Utf8 | DataType::LargeUtf8 if views => string,
        DataType::Binary | DataType::LargeBinary if views => DataType::BinaryView,
        _ => return field,
    };
    field.with_data_type(inferred)
}

/// The format of the data file `meta` by its magic bytes (`PAR1` at both ends, `ORC` or
/// Avro's `Obj\x01` at the start): a table that does not declare its format reads its files
/// as this one's. A file of none reads as Parquet, whose reader then names what is wrong
/// with it.
async fn detect_format(store: &Arc<dyn ObjectStore>, meta: &ObjectMeta) -> Result<FileFormat> {
    let size = meta.size;
    if size < 4 {
        return Ok(FileFormat::Parquet);
    }
    let ranges = [0..4, size - 4..size];
    let parts = store.get_ranges(&meta.location, &ranges).await?;
    Ok(FileFormat::from_magic(&parts[0], &parts[1]).unwrap_or(FileFormat::Parquet))
}

fn is_visible(location: &Path, under: &Path) -> bool {
    location.prefix_match(under).is_some_and(|mut parts| {
        parts.all(|p| !p.as_ref().starts_with('_') && !p.as_ref().starts_with('.'))
    })
}
