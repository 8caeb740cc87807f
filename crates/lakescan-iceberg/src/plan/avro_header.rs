//! The header of Iceberg's Avro files (manifests, manifest lists): read and rewritten by
//! `lakescan_core::api::header`, and the record names that tell the two apart.

pub use lakescan_core::api::AvroHeader;

/// The Avro record name of manifests.
pub const MANIFEST_RECORD: &str = "manifest_entry";
/// The Avro record name of manifest lists.
pub const MANIFEST_LIST_RECORD: &str = "manifest_file";
