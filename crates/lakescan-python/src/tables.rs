//! `HiveTable`, `IcebergTable` and `TableFactory`: lakescan tables for Python.
//!
//! A table is made the way SQL makes it (`CREATE EXTERNAL TABLE … STORED AS HIVE|ICEBERG
//! … OPTIONS (…)`) in a lakescan session of its own, so its options are the SQL options
//! (`aws.*` included) and mean the same.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use datafusion::catalog::{TableProvider, TableProviderFactory};
use datafusion::common::{DataFusionError, Result, TableReference};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_ffi::table_provider::FFI_TableProvider;
use datafusion_ffi::table_provider_factory::FFI_TableProviderFactory;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use tokio::runtime::Runtime;

use crate::bound::{BoundFactory, BoundTable};
use crate::stream::ArrowStream;
use crate::version::checked_codec;

/// The runtime lakescan's scans run on (one per process).
pub fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("lakescan")
            .build()
            // A process that cannot start threads cannot run a scan either; there is no
            // error to return from a lazily made static, so this is the one place it stops.
            .unwrap_or_else(|e| panic!("lakescan cannot start its runtime: {e}"))
    })
}

/// Rows per batch in the sessions the package makes: a table's own (what `scan()` reads),
/// and `lakescan.datafusion.session_context()`'s when no config is given. It is
/// `pyarrow.dataset`'s batch size. Each batch that reaches Python is imported by pyarrow on
/// its own, at a cost per batch (its arrays, and through datafusion-python's
/// `RecordBatch.to_pyarrow()` a schema too); at DataFusion's 8 192 rows that cost was a
/// fifth of the CPU time of a full scan read into pyarrow.
pub const BATCH_SIZE: usize = 131_072;

/// A session with lakescan registered, batches of [`BATCH_SIZE`] rows: the one a table, a
/// factory or a catalog lives in. A scan across the FFI takes the caller's batch size
/// instead (`settings::with_caller_settings`).
pub(crate) fn lakescan_context() -> PyResult<SessionContext> {
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_batch_size(BATCH_SIZE));
    lakescan::register(&ctx).map_err(py_err)?;
    Ok(ctx)
}

/// A DataFusion error as a Python exception.
pub(crate) fn py_err(e: DataFusionError) -> PyErr {
    match e {
        DataFusionError::Plan(_) | DataFusionError::Configuration(_) => {
            PyValueError::new_err(e.to_string())
        }
        e => PyRuntimeError::new_err(e.to_string()),
    }
}

/// Runs `future` on lakescan's runtime without holding the GIL.
pub(crate) fn block_on<T: Send>(
    py: Python<'_>,
    future: impl std::future::Future<Output = Result<T>> + Send,
) -> PyResult<T> {
    py.detach(|| runtime().block_on(future)).map_err(py_err)
}

/// `text` as a SQL string literal.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// `name` as a SQL identifier: as it is when SQL would not change it (lower case letters,
/// digits and `_`), else quoted.
fn ident(name: &str) -> String {
    let plain = name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    match plain {
        true => name.to_string(),
        false => format!("\"{}\"", name.replace('"', "\"\"")),
    }
}

/// A `metadata_columns` argument (`"all"`, `"_file,_pos"` or a list of names) as the text
/// the SQL option takes.
pub(crate) fn column_list(value: Option<Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    let Some(value) = value else {
        return Ok(None);
    };
    match value.extract::<String>() {
        Ok(text) => Ok(Some(text)),
        Err(_) => Ok(Some(value.extract::<Vec<String>>()?.join(","))),
    }
}

/// An `as_of_timestamp` argument as the text the SQL option takes: a string as given, an
/// `int` as milliseconds since the epoch (PyIceberg's `Snapshot.timestamp_ms`), a
/// `datetime.datetime` in ISO format (UTC when it has no zone).
pub(crate) fn timestamp_text(value: Option<Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    let Some(value) = value else {
        return Ok(None);
    };
    if let Ok(text) = value.extract::<String>() {
        return Ok(Some(text));
    }
    // `bool` is an `int` to Python: `True` is no time.
    if !value.is_instance_of::<pyo3::types::PyBool>()
        && let Ok(millis) = value.extract::<i64>()
    {
        return Ok(Some(millis.to_string()));
    }
    if value.is_instance_of::<pyo3::types::PyDateTime>() {
        return Ok(Some(value.call_method1("isoformat", (" ",))?.extract()?));
    }
    Err(PyValueError::new_err(format!(
        "as_of_timestamp is a string, milliseconds since the epoch (an int) or a \
         datetime.datetime, not {}",
        value.get_type().name()?
    )))
}

/// The name a table has in its own session.
const NAME: &str = "t";

/// A table made in a session of its own.
pub(crate) struct LakeTable {
    ctx: SessionContext,
    provider: Arc<dyn TableProvider>,
    /// The table as a SQL relation in `ctx` (`t`, `"t$snapshots"`, `table_changes(…)`).
    relation: String,
}

impl LakeTable {
    /// The table `CREATE EXTERNAL TABLE t [(columns)] STORED AS kind [PARTITIONED BY (…)]
    /// LOCATION … OPTIONS (…)` makes.
    fn create(
        py: Python<'_>,
        kind: &str,
        location: &str,
        columns: Option<&str>,
        partitioned_by: &[String],
        options: &BTreeMap<String, String>,
    ) -> PyResult<Self> {
        let mut sql = format!("CREATE EXTERNAL TABLE {NAME} ");
        if let Some(columns) = columns {
            sql.push_str(&format!("({columns}) "));
        }
        sql.push_str(&format!("STORED AS {kind} "));
        if !partitioned_by.is_empty() {
            let names: Vec<String> = partitioned_by.iter().map(|c| ident(c)).collect();
            sql.push_str(&format!("PARTITIONED BY ({}) ", names.join(", ")));
        }
        sql.push_str(&format!("LOCATION {}", literal(location)));
        if !options.is_empty() {
            let pairs: Vec<String> = options
                .iter()
                .map(|(k, v)| format!("{} {}", literal(k), literal(v)))
                .collect();
            sql.push_str(&format!(" OPTIONS ({})", pairs.join(", ")));
        }
        let ctx = lakescan_context()?;
        let provider = block_on(py, async {
            ctx.sql(&sql).await?;
            ctx.table_provider(NAME).await
        })?;
        Ok(Self {
            ctx,
            provider,
            relation: NAME.to_string(),
        })
    }

    /// The table `reference` of `ctx`.
    pub(crate) fn named(
        py: Python<'_>,
        ctx: &SessionContext,
        reference: TableReference,
    ) -> PyResult<Self> {
        let relation = reference.to_quoted_string();
        let session = ctx.clone();
        let provider = block_on(py, async move { session.table_provider(reference).await })?;
        Ok(Self {
            ctx: ctx.clone(),
            provider,
            relation,
        })
    }

    /// The metadata table `name` (`snapshots`, `files`, …) of this table.
    fn metadata_table(&self, py: Python<'_>, name: &str) -> PyResult<Self> {
        let relation = format!("\"{NAME}${}\"", name.replace('"', "\"\""));
        let ctx = self.ctx.clone();
        let table = format!("{NAME}${name}");
        let provider = block_on(py, async move { ctx.table_provider(table.as_str()).await })?;
        Ok(Self {
            ctx: self.ctx.clone(),
            provider,
            relation,
        })
    }

    /// The changes of this table from snapshot `from` (exclusive) to `to`, as
    /// `table_changes` gives them.
    fn changes(&self, py: Python<'_>, from: &str, to: &str) -> PyResult<Self> {
        let relation = format!("table_changes('{NAME}', {from}, {to})");
        let ctx = self.ctx.clone();
        let sql = format!("SELECT * FROM {relation}");
        let provider = block_on(py, async move { Ok(ctx.sql(&sql).await?.into_view()) })?;
        Ok(Self {
            ctx: self.ctx.clone(),
            provider,
            relation,
        })
    }

    /// The table for a datafusion-python session, bound to this one.
    fn provider_capsule<'py>(
        &self,
        py: Python<'py>,
        session: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let codec = checked_codec(py, session)?;
        let bound = BoundTable::new(Arc::clone(&self.provider), self.ctx.state());
        let provider = FFI_TableProvider::new_with_ffi_codec(
            Arc::new(bound),
            true,
            Some(runtime().handle().clone()),
            codec,
        );
        PyCapsule::new(py, provider, Some(c"datafusion_table_provider".to_owned()))
    }

    /// `SELECT columns FROM t WHERE filter LIMIT limit`, as an Arrow stream (read
    /// as often as asked, the scan planned once).
    fn scan(
        &self,
        py: Python<'_>,
        columns: Option<Vec<String>>,
        filter: Option<&str>,
        limit: Option<usize>,
    ) -> PyResult<ArrowStream> {
        let projection = match columns {
            Some(columns) if columns.is_empty() => {
                return Err(PyValueError::new_err(
                    "columns is empty: name at least one column, or pass None for all",
                ));
            }
            Some(columns) => columns
                .iter()
                .map(|c| ident(c))
                .collect::<Vec<_>>()
                .join(", "),
            None => "*".to_string(),
        };
        let mut sql = format!("SELECT {projection} FROM {}", self.relation);
        if let Some(filter) = filter {
            sql.push_str(&format!(" WHERE {filter}"));
        }
        if let Some(limit) = limit {
            sql.push_str(&format!(" LIMIT {limit}"));
        }
        let ctx = self.ctx.clone();
        let scan = block_on(py, async move { ctx.sql(&sql).await })?;
        Ok(ArrowStream::new(scan))
    }

    /// The table's columns, as `name: type` lines.
    fn describe(&self) -> String {
        let schema = self.provider.schema();
        let fields: Vec<String> = schema
            .fields()
            .iter()
            .map(|f| format!("{}: {}", f.name(), f.data_type()))
            .collect();
        fields.join(", ")
    }
}

/// A lakescan table: what every table offers (a Hive or Iceberg table, one of an Iceberg
/// table's metadata tables, its changes).
#[pyclass(module = "lakescan", name = "Table", frozen, subclass)]
pub struct Table {
    table: LakeTable,
    what: String,
}

impl Table {
    /// `table`, shown as `what`.
    pub(crate) fn new(table: LakeTable, what: String) -> Self {
        Self { table, what }
    }
}

#[pymethods]
impl Table {
    /// The table in a datafusion-python `SessionContext` (`ctx.register_table(name, t)`).
    fn __datafusion_table_provider__<'py>(
        &self,
        py: Python<'py>,
        session: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        self.table.provider_capsule(py, session)
    }

    /// The rows of `columns` (all when None) that pass `filter` (a SQL predicate), at
    /// most `limit`, as an Arrow stream.
    #[pyo3(signature = (columns = None, filter = None, limit = None))]
    fn scan(
        &self,
        py: Python<'_>,
        columns: Option<Vec<String>>,
        filter: Option<&str>,
        limit: Option<usize>,
    ) -> PyResult<ArrowStream> {
        self.table.scan(py, columns, filter, limit)
    }

    fn __repr__(&self) -> String {
        format!("{} [{}]", self.what, self.table.describe())
    }
}

/// A Hive table (a directory of Parquet, ORC or Avro files, partitioned by
/// `key=value` directories).
#[pyclass(module = "lakescan", name = "HiveTable", frozen, extends = Table)]
pub struct HiveTable;

#[pymethods]
impl HiveTable {
    /// `HiveTable(location, partitioned_by=None, schema=None, options=None)`: `schema` is a
    /// SQL column list (`"id BIGINT, name VARCHAR"`) or a pyarrow schema, partition columns
    /// included, or None to read it from the files; `options` are `CREATE EXTERNAL
    /// TABLE`'s (`aws.*`, `format`, `hidden_columns`, …).
    #[new]
    #[pyo3(signature = (location, partitioned_by = None, schema = None, options = None))]
    fn new(
        py: Python<'_>,
        location: String,
        partitioned_by: Option<Vec<String>>,
        schema: Option<Bound<'_, PyAny>>,
        options: Option<BTreeMap<String, String>>,
    ) -> PyResult<(Self, Table)> {
        let columns = match schema {
            None => None,
            Some(schema) => match schema.extract::<String>() {
                Ok(text) => Some(text),
                // An Arrow schema: its SQL column list, made by the package's Python side.
                Err(_) => Some(
                    py.import("lakescan._schema")?
                        .call_method1("sql_columns", (schema,))?
                        .extract::<String>()?,
                ),
            },
        };
        let table = LakeTable::create(
            py,
            "HIVE",
            &location,
            columns.as_deref(),
            &partitioned_by.unwrap_or_default(),
            &options.unwrap_or_default(),
        )?;
        let what = format!("HiveTable({})", literal(&location));
        Ok((Self, Table { table, what }))
    }
}

/// An Iceberg table (its directory or its metadata file).
#[pyclass(module = "lakescan", name = "IcebergTable", frozen, extends = Table)]
pub struct IcebergTable {
    location: String,
}

#[pymethods]
impl IcebergTable {
    /// `IcebergTable(location, snapshot_id=None, as_of_timestamp=None, ref=None,
    /// metadata_columns=None, options=None)`: at most one of `snapshot_id`,
    /// `as_of_timestamp` (`"2024-01-31 12:00:00"`, milliseconds since the epoch, or a
    /// `datetime`; UTC unless it names an offset) and `ref` chooses the snapshot;
    /// `metadata_columns` is `"all"` or a list (`["_file", "_pos"]`); `options` are
    /// `CREATE EXTERNAL TABLE`'s (`aws.*`, `relative_path_base`, …).
    #[new]
    #[pyo3(signature = (
        location,
        snapshot_id = None,
        as_of_timestamp = None,
        r#ref = None,
        metadata_columns = None,
        options = None
    ))]
    fn new(
        py: Python<'_>,
        location: String,
        snapshot_id: Option<i64>,
        as_of_timestamp: Option<Bound<'_, PyAny>>,
        r#ref: Option<String>,
        metadata_columns: Option<Bound<'_, PyAny>>,
        options: Option<BTreeMap<String, String>>,
    ) -> PyResult<(Self, Table)> {
        let mut options = options.unwrap_or_default();
        let mut set = |key: &str, value: Option<String>| -> PyResult<()> {
            if let Some(value) = value {
                if options.contains_key(key) {
                    return Err(PyValueError::new_err(format!(
                        "{key} is given twice: as an argument and in options"
                    )));
                }
                options.insert(key.to_string(), value);
            }
            Ok(())
        };
        set("snapshot_id", snapshot_id.map(|id| id.to_string()))?;
        set("as_of_timestamp", timestamp_text(as_of_timestamp)?)?;
        set("ref", r#ref)?;
        set("metadata_columns", column_list(metadata_columns)?)?;
        let table = LakeTable::create(py, "ICEBERG", &location, None, &[], &options)?;
        let what = format!("IcebergTable({})", literal(&location));
        Ok((Self { location }, Table { table, what }))
    }

    /// The metadata table `name` (`"snapshots"`, `"history"`, `"refs"`, `"manifests"`,
    /// `"files"`, `"partitions"`), as SQL's `"t$name"`.
    fn metadata_table(slf: PyRef<'_, Self>, py: Python<'_>, name: &str) -> PyResult<Table> {
        Ok(Table {
            table: slf.as_super().table.metadata_table(py, name)?,
            what: format!("Table({}${name})", literal(&slf.location)),
        })
    }

    /// The rows each snapshot after `from_snapshot` up to `to_snapshot` inserted and
    /// deleted, as SQL's `table_changes`: each a snapshot id or a timestamp
    /// (`"2024-01-31 12:00:00"`).
    fn changes(
        slf: PyRef<'_, Self>,
        py: Python<'_>,
        from_snapshot: Bound<'_, PyAny>,
        to_snapshot: Bound<'_, PyAny>,
    ) -> PyResult<Table> {
        let bound = |value: &Bound<'_, PyAny>| -> PyResult<String> {
            match value.extract::<i64>() {
                Ok(id) => Ok(id.to_string()),
                Err(_) => Ok(literal(&value.extract::<String>()?)),
            }
        };
        let (from, to) = (bound(&from_snapshot)?, bound(&to_snapshot)?);
        Ok(Table {
            table: slf.as_super().table.changes(py, &from, &to)?,
            what: format!(
                "Table(changes of {} from {from} to {to})",
                literal(&slf.location)
            ),
        })
    }
}

/// `CREATE EXTERNAL TABLE … STORED AS HIVE|ICEBERG` for a datafusion-python session
/// (`ctx.register_table_factory("HIVE", TableFactory("HIVE"))`; `lakescan.datafusion.register`
/// does both). Tables are made and scanned in a lakescan session the factory keeps.
#[pyclass(module = "lakescan", name = "TableFactory", frozen)]
pub struct TableFactory {
    factory: Arc<BoundFactory>,
}

#[pymethods]
impl TableFactory {
    /// The factory of `kind` (`"HIVE"` or `"ICEBERG"`).
    #[new]
    fn new(kind: &str) -> PyResult<Self> {
        let kind = kind.to_uppercase();
        if kind != "HIVE" && kind != "ICEBERG" {
            return Err(PyValueError::new_err(format!(
                "lakescan has table factories HIVE and ICEBERG, not {kind}"
            )));
        }
        let ctx = lakescan_context()?;
        Ok(Self {
            factory: Arc::new(BoundFactory::new(&kind, ctx.state())),
        })
    }

    /// The factory for a datafusion-python session.
    fn __datafusion_table_provider_factory__<'py>(
        &self,
        py: Python<'py>,
        codec: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let codec = checked_codec(py, codec)?;
        let factory = Arc::clone(&self.factory) as Arc<dyn TableProviderFactory + Send>;
        let factory = FFI_TableProviderFactory::new_with_ffi_codec(
            factory,
            Some(runtime().handle().clone()),
            codec,
        );
        PyCapsule::new(
            py,
            factory,
            Some(c"datafusion_table_provider_factory".to_owned()),
        )
    }
}
