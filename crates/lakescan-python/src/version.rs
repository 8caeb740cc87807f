//! The datafusion-python this module works with.
//!
//! The FFI between DataFusion builds has no stable ABI across majors: datafusion-python 53
//! given a provider built on `datafusion-ffi` 54 crashes the process, 55 refuses a table
//! provider but not a factory. So every `__datafusion_*__` method checks the installed
//! version first.

use datafusion_ffi::proto::logical_extension_codec::FFI_LogicalExtensionCodec;
use datafusion_python_util::ffi_logical_codec_from_pycapsule;
use pyo3::exceptions::PyImportError;
use pyo3::prelude::*;

/// What the module needs of datafusion-python, as pip writes it.
pub const REQUIREMENT: &str = "datafusion>=54.1,<55";

/// Whether `version` (`major.minor.patch…`) is in [`REQUIREMENT`].
fn supported(version: &str) -> bool {
    let mut parts = version.split(['.', 'r', 'a', 'b']).map(str::parse::<u32>);
    match (parts.next(), parts.next()) {
        (Some(Ok(54)), Some(Ok(minor))) => minor >= 1,
        _ => false,
    }
}

/// An `ImportError` unless the installed datafusion-python is one this module was built for.
pub fn check_datafusion(py: Python<'_>) -> PyResult<()> {
    let metadata = py.import("importlib.metadata")?;
    let installed: String = match metadata.call_method1("version", ("datafusion",)) {
        Ok(version) => version.extract()?,
        Err(_) => {
            return Err(PyImportError::new_err(format!(
                "lakescan needs datafusion-python ({REQUIREMENT}), which is not installed"
            )));
        }
    };
    if !supported(&installed) {
        return Err(PyImportError::new_err(format!(
            "lakescan {} is built on DataFusion 54.1 and needs {REQUIREMENT}; the installed \
             datafusion is {installed}: its FFI is not compatible (install datafusion==54.1.0)",
            env!("CARGO_PKG_VERSION")
        )));
    }
    Ok(())
}

/// The logical codec of the datafusion-python session (or codec capsule) `from`, once the
/// installed datafusion-python is known to be one this module was built for: what every
/// `__datafusion_*__` method that takes a session starts with.
pub fn checked_codec(
    py: Python<'_>,
    from: Bound<'_, PyAny>,
) -> PyResult<FFI_LogicalExtensionCodec> {
    check_datafusion(py)?;
    ffi_logical_codec_from_pycapsule(from)
}
