//! A scan's batches as an Arrow C stream (the Arrow PyCapsule interface), for pyarrow,
//! polars and DuckDB.

use std::sync::Mutex;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::ffi_stream::FFI_ArrowArrayStream;
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchReader};
use datafusion::execution::SendableRecordBatchStream;
use futures::StreamExt;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::tables::runtime;

/// The batches of one scan, read once: `pyarrow.table(stream)`,
/// `polars.from_arrow(stream)`, `duckdb.sql("SELECT … FROM stream")`.
#[pyclass(module = "lakescan", name = "ArrowStream")]
pub struct ArrowStream {
    stream: Mutex<Option<SendableRecordBatchStream>>,
}

impl ArrowStream {
    /// The stream of a scan.
    pub fn new(stream: SendableRecordBatchStream) -> Self {
        Self {
            stream: Mutex::new(Some(stream)),
        }
    }
}

#[pymethods]
impl ArrowStream {
    /// The Arrow C stream of the batches (the stream can be consumed once).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // The scan's own schema is the only one offered (the interface allows ignoring
        // the request).
        let _ = requested_schema;
        let stream = self
            .stream
            .lock()
            .map_err(|_| PyRuntimeError::new_err("the stream was poisoned by a panic"))?
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this lakescan scan was already read"))?;
        let reader = BlockingReader {
            schema: stream.schema(),
            stream,
        };
        let ffi = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new(py, ffi, Some(c"arrow_array_stream".to_owned()))
    }
}

/// The stream read batch by batch on lakescan's runtime, for a consumer that pulls.
struct BlockingReader {
    schema: SchemaRef,
    stream: SendableRecordBatchStream,
}

impl Iterator for BlockingReader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let next = runtime().block_on(self.stream.next())?;
        Some(next.map_err(|e| ArrowError::ExternalError(Box::new(e))))
    }
}

impl RecordBatchReader for BlockingReader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}
