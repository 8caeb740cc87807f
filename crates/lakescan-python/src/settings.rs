//! `SET lakescan.*` in a datafusion-python session.
//!
//! datafusion-python keeps another library's settings in one foreign extension
//! (`SessionConfig().with_extension(obj)`, which calls `obj.__datafusion_extension_options__()`):
//! [`Settings`] puts lakescan's settings there, with their defaults, so `SET lakescan.x = y`
//! finds its namespace. That extension stores any value without checking it, so lakescan
//! checks the values where they are used: [`with_caller_settings`] applies the caller's
//! `lakescan.*` values to the lakescan session a scan or a `CREATE EXTERNAL TABLE` runs in,
//! and an unknown setting or a bad value is an error naming it then. The caller's batch
//! size and target partitions are applied there too: they shape the scan's output.

use std::collections::BTreeMap;

use datafusion::catalog::Session;
use datafusion::common::config::{ConfigExtension, ExtensionOptions};
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::context::SessionState;
use datafusion_ffi::config::extension_options::FFI_ExtensionOptions;
use lakescan::LakeScanOptions;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyCapsule, PyDict};

use crate::version::check_datafusion;

/// The namespace of lakescan's settings (`lakescan.preload_splits`).
const PREFIX: &str = <lakescan::core::api::LakeScanConfig as ConfigExtension>::PREFIX;

/// The namespace datafusion-python's foreign extension puts before the keys it carries.
const FFI_NAMESPACE: &str = datafusion::common::config::DATAFUSION_FFI_CONFIG_NAMESPACE;

/// The `lakescan.*` settings of the caller's session (its foreign extension's), by key
/// without the namespace (`preload_splits`).
fn caller_settings(caller: &dyn Session) -> BTreeMap<String, String> {
    let Some(foreign) = caller
        .config_options()
        .extensions
        .get::<FFI_ExtensionOptions>()
    else {
        return BTreeMap::new();
    };
    foreign
        .entries()
        .into_iter()
        .filter_map(|entry| {
            let key = entry.key;
            let key = key
                .strip_prefix(FFI_NAMESPACE)
                .and_then(|k| k.strip_prefix('.'))
                .unwrap_or(&key);
            let name = key.strip_prefix(PREFIX)?.strip_prefix('.')?;
            Some((name.to_string(), entry.value?))
        })
        .collect()
}

/// A copy of `state` with the caller's settings applied: its `lakescan.*` values (an
/// unknown setting or a bad value is an error naming it) and the execution settings that
/// shape a scan's output — the batch size and the number of partitions
/// (`SessionConfig().with_batch_size(…)`, `SET datafusion.execution.target_partitions`).
pub fn with_caller_settings(state: &SessionState, caller: &dyn Session) -> Result<SessionState> {
    let settings = caller_settings(caller);
    let mut state = state.clone();
    let execution = &caller.config_options().execution;
    let options = state.config_mut().options_mut();
    options.execution.batch_size = execution.batch_size;
    options.execution.target_partitions = execution.target_partitions;
    for (name, value) in settings {
        state
            .config_mut()
            .options_mut()
            .set(&format!("{PREFIX}.{name}"), &value)
            .map_err(|e| {
                DataFusionError::Configuration(format!(
                    "SET {PREFIX}.{name} = '{value}' in the datafusion-python session: {e}"
                ))
            })?;
    }
    Ok(state)
}

/// lakescan's settings for a datafusion-python session:
/// `SessionContext(SessionConfig().with_extension(lakescan.Settings(preload_splits=2)))`, or
/// `lakescan.datafusion.session_context()`. `SET lakescan.x = y` then changes them there.
#[pyclass(module = "lakescan", name = "Settings", frozen)]
pub struct Settings {
    options: LakeScanOptions,
}

#[pymethods]
impl Settings {
    /// `Settings(**values)`: lakescan's settings, the named ones changed (`split_size`,
    /// `preload_splits`, `pushdown_max_keep_ratio`, `iceberg_metadata_columns`,
    /// `listing_cache_ttl_seconds`, `hive_default_format`).
    #[new]
    #[pyo3(signature = (**values))]
    fn new(values: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut options = LakeScanOptions::default();
        for (name, value) in values.into_iter().flat_map(|v| v.iter()) {
            let name: String = name.extract()?;
            let text = match value.cast::<PyBool>() {
                Ok(flag) => flag.is_true().to_string(),
                Err(_) => value.str()?.to_string(),
            };
            options.set(&name, &text).map_err(|e| {
                PyValueError::new_err(format!("lakescan setting {name} = {text:?}: {e}"))
            })?;
        }
        Ok(Self { options })
    }

    /// The settings for `SessionConfig.with_extension`.
    fn __datafusion_extension_options__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        check_datafusion(py)?;
        let mut foreign = FFI_ExtensionOptions::default();
        for entry in self.options.entries() {
            if let Some(value) = entry.value {
                foreign
                    .set(&format!("{PREFIX}.{}", entry.key), &value)
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
            }
        }
        PyCapsule::new(
            py,
            foreign,
            Some(c"datafusion_extension_options".to_owned()),
        )
    }

    fn __repr__(&self) -> String {
        let entries: Vec<String> = self
            .options
            .entries()
            .into_iter()
            .map(|e| format!("{}={}", e.key, e.value.unwrap_or_default()))
            .collect();
        format!("Settings({})", entries.join(", "))
    }
}
