//! [`OrcFile`]: an ORC file whose tail was read and checked ([`super::open`]), as the
//! readers, the statistics and the tail cache hold it.

use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use orc_rust::compression::Compression;
use orc_rust::proto;
use orc_rust::reader::metadata::FileMetadata;

use super::statistics::WriterFixes;
use crate::io::CountingReader;

/// An ORC file whose tail was read and checked.
#[derive(Clone)]
pub struct OrcFile {
    /// The open file.
    pub reader: CountingReader,
    /// `orc-rust`'s view of the tail: stripes, root type, codec.
    pub metadata: Arc<FileMetadata>,
    /// The footer as written (types with their attributes).
    pub footer: Arc<proto::Footer>,
    /// Per stripe, per ORC column id, the stripe's column statistics (empty when the file
    /// has none).
    pub stripe_statistics: Arc<Vec<proto::StripeStatistics>>,
    /// The statistics its writer wrote soundly (by the postscript's writer version).
    pub writer_fixes: WriterFixes,
    /// The file's columns as Arrow fields (timestamps in microseconds), by the names the
    /// scan binds.
    pub schema: SchemaRef,
}

impl OrcFile {
    /// The file's codec (`None`: uncompressed).
    pub fn compression(&self) -> Option<Compression> {
        self.metadata.compression()
    }
}
