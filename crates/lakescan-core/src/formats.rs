//! The one dispatch from a [`FileFormat`] to its [`FormatSeam`] (Parquet, ORC, Avro): above
//! the three formats, so none of them imports another, and nothing else in lakescan
//! matches on the format.

use crate::avro::AvroFormat;
use crate::format::FormatSeam;
use crate::orc::OrcFormat;
use crate::parquet::ParquetFormat;
use crate::split::FileFormat;

impl FileFormat {
    /// What this format implements: split readers, schema, statistics, whole columns.
    pub fn seam(self) -> &'static dyn FormatSeam {
        match self {
            FileFormat::Parquet => &ParquetFormat,
            FileFormat::Orc => &OrcFormat,
            FileFormat::Avro => &AvroFormat,
        }
    }
}
