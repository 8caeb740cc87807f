//! Iceberg catalogs as DataFusion catalogs, so `catalog.namespace.table` works.
//!
//! | URI                                             | catalog                                   |
//! |-------------------------------------------------|-------------------------------------------|
//! | `sqlite:///abs/catalog.db[?warehouse=/abs/wh]`  | the SQL catalog on an embedded SQLite file (created if missing; the warehouse defaults to the file's directory) — no server needed; SQLAlchemy's `sqlite:////abs/catalog.db` (PyIceberg's spelling) is the same file |
//! | `memory://?warehouse=/abs/wh`                   | an in-memory catalog (tables registered from Rust live as long as the session) |
//! | `http://host:port/prefix[?warehouse=…&token=…&credential=…]`, `https://…` | a REST catalog; query parameters are passed as catalog properties |
//!
//! The warehouse can be a local directory or any location the session has an object store
//! for: `sqlite:///abs/catalog.db?warehouse=s3://bucket/wh`. `aws.*` query parameters
//! configure its S3 client the way `aws.*` table options do (`core::store::StoreOptions`):
//! `…&aws.endpoint=http://127.0.0.1:9000&aws.allow_http=true`; without them the store is the
//! one the application registered, or one from the `AWS_*` environment. Values are used as
//! written (not percent-decoded). Messages show the URI with the values of secret parameters
//! (names with `key`, `secret`, `token`, `credential` or `password`) replaced by `***`.
//!
//! Catalog metadata (namespaces, table pointers, metadata files) is read and written through
//! the `iceberg` crate's file IO over the session's object stores ([`crate::catalog_io`]); the
//! tables' manifests, delete files and data files through the same stores, like
//! `STORED AS ICEBERG` tables: one client per bucket.
//!
//! Namespaces and table names are listed when the catalog is registered; a table's metadata is
//! loaded when a query names it (its current snapshot then).

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, SchemaProvider, TableProvider};
use datafusion::common::{DataFusionError, Result, plan_err};
use datafusion::execution::SessionState;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::prelude::SessionContext;
use iceberg::{Catalog, CatalogBuilder, NamespaceIdent, TableIdent};
use lakescan_core::api::{LakeScanOptions, StoreOptions};
use parking_lot::RwLock;

use crate::catalog_io::ObjectStoreStorageFactory;
use crate::metadata::{parse_metadata, select_snapshot};
use crate::metadata_columns::MetadataSelection;
use crate::metadata_tables::{MetadataTableKind, metadata_table_of};
use crate::options::SnapshotSelector;
use crate::paths::PathResolver;
use crate::schema::{ScanSchema, StringTypes};
use crate::table::IcebergTable;

fn iceberg_error(what: &str, e: iceberg::Error) -> DataFusionError {
    DataFusionError::External(format!("Iceberg catalog: {what}: {e}").into())
}

/// Query parameters whose values are secrets: keys, tokens, credentials, passwords.
fn is_secret(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    ["key", "secret", "token", "credential", "password"]
        .iter()
        .any(|word| key.contains(word))
}

/// `uri` with the values of secret parameters replaced by `***`, for messages.
pub fn shown_uri(uri: &str) -> String {
    let Some((base, query)) = uri.split_once('?') else {
        return uri.to_string();
    };
    let params: Vec<String> = query
        .split('&')
        .map(|kv| match kv.split_once('=') {
            Some((k, _)) if is_secret(k) => format!("{k}=***"),
            _ => kv.to_string(),
        })
        .collect();
    format!("{base}?{}", params.join("&"))
}

/// Connects to the catalog at `uri` (see the module docs), named `name`. Its file IO goes
/// through `runtime`'s object stores; a store that `aws.*` parameters configure is registered
/// there for the warehouse's bucket.
pub async fn connect(name: &str, uri: &str, runtime: &RuntimeEnv) -> Result<Arc<dyn Catalog>> {
    let (base, query) = uri.split_once('?').unwrap_or((uri, ""));
    let params: HashMap<String, String> = query
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (k.to_string(), v.to_string())
        })
        .collect();
    let (store_options, mut props) = StoreOptions::split(&params)?;
    let shown = shown_uri(uri);
    let uri = shown.as_str();
    if let Some(warehouse) = props.get("warehouse").filter(|w| w.contains("://")) {
        let location = url::Url::parse(warehouse).map_err(|e| {
            datafusion::common::plan_datafusion_err!(
                "Iceberg catalog URI '{uri}': the warehouse '{warehouse}' is not a URL: {e}"
            )
        })?;
        store_options.register_for(&location, runtime)?;
    } else if !store_options.is_empty() {
        return plan_err!(
            "Iceberg catalog URI '{uri}': aws.* parameters configure the store of an s3:// \
             warehouse, and this catalog names none"
        );
    }
    let storage = Arc::new(ObjectStoreStorageFactory::new(Arc::clone(
        &runtime.object_store_registry,
    )));
    if let Some(file) = base.strip_prefix("sqlite://") {
        if file.is_empty() || !file.starts_with('/') {
            return plan_err!(
                "Iceberg catalog URI '{uri}': a SQLite catalog is sqlite:///absolute/path.db"
            );
        }
        // SQLAlchemy spells an absolute path with a fourth slash (`sqlite:////abs/c.db`, as
        // PyIceberg's SQL catalog is configured): the same file.
        let file = format!("/{}", file.trim_start_matches('/'));
        let file = file.as_str();
        let warehouse = props.remove("warehouse").unwrap_or_else(|| {
            std::path::Path::new(file)
                .parent()
                .map_or_else(|| "/".to_string(), |p| p.to_string_lossy().into_owned())
        });
        let catalog = iceberg_catalog_sql::SqlCatalogBuilder::default()
            .uri(format!("sqlite:{file}?mode=rwc"))
            .warehouse_location(warehouse)
            .props(props)
            .with_storage_factory(Arc::clone(&storage) as _)
            .load(name, HashMap::new())
            .await
            .map_err(|e| iceberg_error(&format!("cannot open '{uri}'"), e))?;
        return Ok(Arc::new(catalog));
    }
    if let Some(rest) = base.strip_prefix("memory://") {
        if !rest.is_empty() && !props.contains_key("warehouse") {
            props.insert("warehouse".into(), rest.to_string());
        }
        if !props.contains_key("warehouse") {
            return plan_err!(
                "Iceberg catalog URI '{uri}': a memory catalog needs a warehouse \
                 (memory://?warehouse=/abs/path)"
            );
        }
        let catalog = iceberg::memory::MemoryCatalogBuilder::default()
            .with_storage_factory(Arc::clone(&storage) as _)
            .load(name, props)
            .await
            .map_err(|e| iceberg_error(&format!("cannot create '{uri}'"), e))?;
        return Ok(Arc::new(catalog));
    }
    if base.starts_with("http://") || base.starts_with("https://") {
        props.insert("uri".into(), base.to_string());
        let catalog = iceberg_catalog_rest::RestCatalogBuilder::default()
            .with_storage_factory(Arc::clone(&storage) as _)
            .load(name, props)
            .await
            .map_err(|e| iceberg_error(&format!("cannot connect to '{uri}'"), e))?;
        return Ok(Arc::new(catalog));
    }
    plan_err!(
        "Iceberg catalog URI '{uri}' is not one of sqlite:///path.db, memory://?warehouse=…, \
         http(s)://host/…"
    )
}

/// Connects to the catalog at `uri` and registers it in `ctx` as catalog `name`.
pub async fn register_catalog(ctx: &SessionContext, name: &str, uri: &str) -> Result<()> {
    let catalog = connect(name, uri, &ctx.runtime_env()).await?;
    let provider = IcebergCatalogProvider::try_new(catalog, view_types(ctx))
        .await
        .map_err(|e| refused(uri, e))?
        .with_session(ctx.state_weak_ref());
    ctx.register_catalog(name, Arc::new(provider));
    Ok(())
}

/// `e`, an error of the catalog at `uri`, naming it (its secrets hidden), and saying so when
/// the catalog refused the request's credentials (HTTP 401 or 403).
fn refused(uri: &str, e: DataFusionError) -> DataFusionError {
    let text = e.to_string();
    let hint = match (
        text.contains("401 Unauthorized"),
        text.contains("403 Forbidden"),
    ) {
        (true, _) => {
            " (HTTP 401: the catalog refused the credentials; check the URI's token \
                      or credential)"
        }
        (_, true) => " (HTTP 403: the credentials may not read this catalog)",
        _ => "",
    };
    DataFusionError::External(format!("Iceberg catalog '{}'{hint}: {text}", shown_uri(uri)).into())
}

fn view_types(ctx: &SessionContext) -> StringTypes {
    StringTypes::of_session(
        ctx.state()
            .config_options()
            .execution
            .parquet
            .schema_force_view_types,
    )
}

/// A DataFusion catalog over an Iceberg catalog: one schema per namespace.
#[derive(Debug)]
pub struct IcebergCatalogProvider {
    schemas: HashMap<String, Arc<IcebergSchemaProvider>>,
}

/// The session a catalog's tables read their settings from when loaded.
type SessionRef = Weak<RwLock<SessionState>>;

impl IcebergCatalogProvider {
    /// Lists the namespaces (nested ones as `a.b`) and their tables.
    pub async fn try_new(catalog: Arc<dyn Catalog>, view_types: StringTypes) -> Result<Self> {
        let mut schemas = HashMap::new();
        let mut pending = catalog
            .list_namespaces(None)
            .await
            .map_err(|e| iceberg_error("cannot list namespaces", e))?;
        while let Some(namespace) = pending.pop() {
            let children = match catalog.list_namespaces(Some(&namespace)).await {
                Ok(children) => children,
                // A catalog without nested namespaces says so: the namespace has none.
                Err(e) if e.kind() == iceberg::ErrorKind::FeatureUnsupported => vec![],
                Err(e) => {
                    return Err(iceberg_error(
                        &format!(
                            "cannot list the namespaces in {}",
                            namespace.to_url_string()
                        ),
                        e,
                    ));
                }
            };
            pending.extend(children.into_iter().filter(|c| c != &namespace));
            let tables = catalog
                .list_tables(&namespace)
                .await
                .map_err(|e| iceberg_error("cannot list tables", e))?
                .into_iter()
                .map(|t| t.name().to_string())
                .collect();
            let name = namespace.join(".");
            let provider = IcebergSchemaProvider {
                catalog: Arc::clone(&catalog),
                namespace,
                tables,
                view_types,
                session: None,
            };
            schemas.insert(name, Arc::new(provider));
        }
        Ok(Self { schemas })
    }

    /// Tables loaded later read `lakescan.iceberg_metadata_columns` from `session`'s
    /// settings at that time.
    pub fn with_session(self, session: SessionRef) -> Self {
        let schemas = self
            .schemas
            .into_iter()
            .map(|(name, s)| {
                let schema = IcebergSchemaProvider {
                    session: Some(session.clone()),
                    ..(*s).clone()
                };
                (name, Arc::new(schema))
            })
            .collect();
        Self { schemas }
    }
}

impl CatalogProvider for IcebergCatalogProvider {
    fn schema_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.schemas.keys().cloned().collect();
        names.sort();
        names
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        self.schemas
            .get(name)
            .map(|s| Arc::clone(s) as Arc<dyn SchemaProvider>)
    }
}

/// The tables of one namespace.
#[derive(Debug, Clone)]
pub struct IcebergSchemaProvider {
    catalog: Arc<dyn Catalog>,
    namespace: NamespaceIdent,
    tables: Vec<String>,
    view_types: StringTypes,
    session: Option<SessionRef>,
}

impl IcebergSchemaProvider {
    /// The session's `lakescan.iceberg_metadata_columns`, if it is still alive.
    fn metadata_columns(&self) -> Result<MetadataSelection> {
        let Some(state) = self.session.as_ref().and_then(Weak::upgrade) else {
            return Ok(MetadataSelection::None);
        };
        let text =
            LakeScanOptions::from_config(state.read().config_options()).iceberg_metadata_columns;
        MetadataSelection::parse(&text)
    }
}

#[async_trait]
impl SchemaProvider for IcebergSchemaProvider {
    fn table_names(&self) -> Vec<String> {
        self.tables.clone()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if !self.table_exist(name) {
            let Some((base, _)) = MetadataTableKind::split(name) else {
                return Ok(None);
            };
            return metadata_table_of(name, Box::pin(self.table(base)).await?);
        }
        let ident = TableIdent::new(self.namespace.clone(), name.to_string());
        let table = self
            .catalog
            .load_table(&ident)
            .await
            .map_err(|e| iceberg_error(&format!("cannot load table {ident}"), e))?;
        let Some(location) = table.metadata_location().map(str::to_string) else {
            return plan_err!(
                "Iceberg catalog table {ident} has no metadata location; lakescan reads a \
                 table from its metadata file"
            );
        };
        // The crate parsed the metadata already; its JSON is read again for the refs the
        // crate does not expose.
        let json = serde_json::to_vec(table.metadata())
            .map_err(|e| DataFusionError::External(format!("Iceberg table {ident}: {e}").into()))?;
        let loaded = parse_metadata(&json, &location)?;
        let (snapshot, schema) = select_snapshot(&loaded, &SnapshotSelector::Current)?;
        let schema = ScanSchema::try_new(
            Arc::clone(&schema),
            self.view_types,
            &loaded.placeholders.of(schema.schema_id()),
        )?;
        let paths = PathResolver::new(None)?;
        let metadata_store = paths.resolve(&location)?.store;
        let table =
            IcebergTable::try_new(name, loaded, snapshot, schema, paths, None, metadata_store)?
                .with_metadata_columns(&self.metadata_columns()?, self.view_types)?;
        Ok(Some(Arc::new(table)))
    }

    fn table_exist(&self, name: &str) -> bool {
        self.tables.iter().any(|t| t == name)
    }
}
