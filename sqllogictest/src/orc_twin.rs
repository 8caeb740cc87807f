//! The ORC twin of a `.slt` file: the Parquet files its `COPY` statements write are rewritten
//! as ORC files of the same name and rows (each row group a stripe, row-index groups of
//! 10 000 rows), with lakescan's test writer (`lakescan_testkit::orc`). The file's Hive
//! tables then find ORC files (their format is detected by magic bytes) and must give the
//! same results as over Parquet.

use std::path::Path;

use datafusion::common::{DataFusionError, Result};
use lakescan_testkit::orc::{OrcWriteOptions, write_orc};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// Rewrites every Parquet file at `target` (a file, or a directory searched recursively) as
/// an ORC file with the same name; returns how many.
pub fn rewrite_as_orc(target: &Path) -> Result<usize> {
    let target = target
        .to_str()
        .map(|t| t.strip_prefix("file://").unwrap_or(t))
        .map(Path::new)
        .unwrap_or(target);
    if target.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(target)?.collect::<std::io::Result<_>>()?;
        entries.sort_by_key(|e| e.path());
        let mut rewritten = 0;
        for entry in entries {
            rewritten += rewrite_as_orc(&entry.path())?;
        }
        return Ok(rewritten);
    }
    let Ok(bytes) = std::fs::read(target) else {
        return Ok(0);
    };
    if !bytes.starts_with(b"PAR1") {
        return Ok(0);
    }
    let failed = |e: &dyn std::fmt::Display| {
        DataFusionError::Execution(format!(
            "ORC twin: cannot rewrite '{}' as ORC: {e}",
            target.display()
        ))
    };
    let rows = ParquetRows::read(bytes).map_err(|e| failed(&e))?;
    let options = OrcWriteOptions {
        stripes: rows.row_groups,
        ..OrcWriteOptions::default()
    };
    let orc = write_orc(&rows.schema, &rows.batches, &options).map_err(|e| failed(&e))?;
    std::fs::write(target, orc)?;
    Ok(1)
}

/// A Parquet file's rows: its schema (with the field ids its writer gave), the rows of each
/// row group, and its batches.
pub struct ParquetRows {
    /// The Arrow schema of the file.
    pub schema: arrow::datatypes::SchemaRef,
    /// Rows per row group, in order.
    pub row_groups: Vec<usize>,
    /// Every row.
    pub batches: Vec<arrow::array::RecordBatch>,
}

impl ParquetRows {
    /// The rows of the Parquet file `bytes`.
    pub fn read(bytes: Vec<u8>) -> std::result::Result<Self, parquet::errors::ParquetError> {
        let builder = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes))?;
        let row_groups = builder
            .metadata()
            .row_groups()
            .iter()
            .map(|g| g.num_rows().max(0) as usize)
            .collect();
        let schema = builder.schema().clone();
        let batches = builder
            .build()?
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(Self {
            schema,
            row_groups,
            batches,
        })
    }
}
