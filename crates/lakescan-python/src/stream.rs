//! A scan's batches as an Arrow C stream (the Arrow PyCapsule interface), for pyarrow,
//! polars and DuckDB.

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::ffi::FFI_ArrowSchema;
use datafusion::arrow::ffi_stream::FFI_ArrowArrayStream;
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchReader};
use datafusion::execution::SendableRecordBatchStream;
use datafusion::prelude::DataFrame;
use futures::StreamExt;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::tables::runtime;

/// The batches of one scan: `pyarrow.table(stream)`, `polars.DataFrame(stream)`,
/// `duckdb.sql("SELECT … FROM stream")`. The scan is planned once; each read runs it
/// again (DuckDB asks for the stream more than once).
#[pyclass(module = "lakescan", name = "ArrowStream", frozen)]
pub struct ArrowStream {
    scan: DataFrame,
}

impl ArrowStream {
    /// The stream of a planned scan.
    pub fn new(scan: DataFrame) -> Self {
        Self { scan }
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
        let scan = self.scan.clone();
        let stream = py
            .detach(|| runtime().block_on(scan.execute_stream()))
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let reader = BlockingReader {
            schema: stream.schema(),
            stream,
        };
        let ffi = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new(py, ffi, Some(c"arrow_array_stream".to_owned()))
    }

    /// The Arrow C schema of the batches.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let schema = self.scan.schema().as_arrow().clone();
        let ffi = FFI_ArrowSchema::try_from(&schema)
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        PyCapsule::new(py, ffi, Some(c"arrow_schema".to_owned()))
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
