//! `IcebergCatalog`: an Iceberg catalog (SQLite, REST, memory) for Python.
//!
//! The catalog is registered in a lakescan session of its own, as SQL's
//! `lakescan::register_catalog` registers it, so its URI (`aws.*` parameters included) means
//! the same. Its namespaces are schemas and its tables tables: in a datafusion-python
//! `SessionContext` (`ctx.register_catalog_provider("lake", catalog)`, every table bound to
//! the catalog's session), or one at a time with [`IcebergCatalog::table`].

use std::sync::Arc;

use datafusion::catalog::CatalogProvider;
use datafusion::common::TableReference;
use datafusion::prelude::SessionContext;
use datafusion_ffi::catalog_provider::FFI_CatalogProvider;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::bound::BoundCatalog;
use crate::tables::{LakeTable, Table, block_on, column_list, lakescan_context, py_err, runtime};
use crate::version::checked_codec;

/// An Iceberg catalog: `sqlite:///abs/catalog.db[?warehouse=…]`, `memory://?warehouse=…`,
/// or a REST catalog's `http(s)://host/prefix[?token=…]`.
#[pyclass(module = "lakescan", name = "IcebergCatalog", frozen)]
pub struct IcebergCatalog {
    /// The catalog's name: a SQL catalog's `catalog_name`, and its name in `ctx`.
    name: String,
    ctx: SessionContext,
    provider: Arc<dyn CatalogProvider>,
    /// The URI, its secrets hidden.
    shown: String,
}

impl IcebergCatalog {
    /// `name` (`namespace.table`, the namespace itself dotted when nested) as a reference
    /// into the catalog.
    fn reference(&self, name: &str) -> PyResult<TableReference> {
        let Some((namespace, table)) = name.rsplit_once('.') else {
            return Err(PyValueError::new_err(format!(
                "'{name}' names no namespace: a catalog's table is namespace.table"
            )));
        };
        if self.provider.schema(namespace).is_none() {
            return Err(PyValueError::new_err(format!(
                "Iceberg catalog '{}' has no namespace '{namespace}' (it has: {})",
                self.shown,
                self.provider.schema_names().join(", ")
            )));
        }
        Ok(TableReference::full(self.name.as_str(), namespace, table))
    }
}

#[pymethods]
impl IcebergCatalog {
    /// `IcebergCatalog(uri, name="default", metadata_columns=None)`: connects and lists the
    /// namespaces and their tables. `name` is the catalog's name where the catalog keeps one:
    /// a SQL catalog (SQLite) holds the tables of several catalogs, each under its name
    /// (pyiceberg's `SqlCatalog(name, …)`, Spark's `spark.sql.catalog.<name>`).
    /// `metadata_columns` (`"all"` or a list such as `["_file", "_pos"]`) are the metadata
    /// columns its tables show.
    #[new]
    #[pyo3(signature = (uri, name = "default", metadata_columns = None))]
    fn new(
        py: Python<'_>,
        uri: &str,
        name: &str,
        metadata_columns: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let ctx = lakescan_context()?;
        if let Some(columns) = column_list(metadata_columns)? {
            ctx.state_ref()
                .write()
                .config_mut()
                .options_mut()
                .set("lakescan.iceberg_metadata_columns", &columns)
                .map_err(py_err)?;
        }
        let (session, target, catalog) = (ctx.clone(), uri.to_string(), name.to_string());
        block_on(py, async move {
            lakescan::register_catalog(&session, &catalog, &target).await
        })?;
        let shown = lakescan::iceberg::catalog::shown_uri(uri);
        let Some(provider) = ctx.catalog(name) else {
            return Err(PyValueError::new_err(format!(
                "Iceberg catalog '{shown}' was not registered"
            )));
        };
        Ok(Self {
            name: name.to_string(),
            ctx,
            provider,
            shown,
        })
    }

    /// The namespaces (nested ones as `a.b`), sorted.
    fn namespaces(&self) -> Vec<String> {
        self.provider.schema_names()
    }

    /// The tables of `namespace`, sorted.
    fn tables(&self, namespace: &str) -> PyResult<Vec<String>> {
        let Some(schema) = self.provider.schema(namespace) else {
            return Err(PyValueError::new_err(format!(
                "Iceberg catalog '{}' has no namespace '{namespace}'",
                self.shown
            )));
        };
        let mut names = schema.table_names();
        names.sort();
        Ok(names)
    }

    /// The table `name` (`namespace.table`; `namespace.table$snapshots` for a metadata
    /// table) at its current snapshot, as a `Table`.
    fn table(&self, py: Python<'_>, name: &str) -> PyResult<Table> {
        let reference = self.reference(name)?;
        let table = LakeTable::named(py, &self.ctx, reference)?;
        Ok(Table::new(
            table,
            format!("Table({name} of IcebergCatalog('{}'))", self.shown),
        ))
    }

    /// The catalog for a datafusion-python session
    /// (`ctx.register_catalog_provider(name, catalog)`).
    fn __datafusion_catalog_provider__<'py>(
        &self,
        py: Python<'py>,
        session: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let codec = checked_codec(py, session)?;
        let bound = BoundCatalog::new(Arc::clone(&self.provider), self.ctx.state());
        let provider = FFI_CatalogProvider::new_with_ffi_codec(
            Arc::new(bound),
            Some(runtime().handle().clone()),
            codec,
        );
        PyCapsule::new(
            py,
            provider,
            Some(c"datafusion_catalog_provider".to_owned()),
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "IcebergCatalog('{}') [{}]",
            self.shown,
            self.provider.schema_names().join(", ")
        )
    }
}
