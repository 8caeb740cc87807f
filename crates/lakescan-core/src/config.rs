//! [`LakeScanOptions`]: session settings of lakescan, `SET lakescan.<name> = <value>`.
//!
//! Registered by `lakescan::register`. Table options (`OPTIONS ('split_size' …)`) win over
//! the session value.

use datafusion::common::config::{ConfigExtension, ConfigOptions};
use datafusion::common::extensions_options;

extensions_options! {
    /// Session settings of lakescan scans.
    pub struct LakeScanOptions {
        /// Files larger than this many bytes are read as several byte-range splits.
        pub split_size: u64, default = 64 * 1024 * 1024
        /// A per-column filter runs inside the Parquet decoder (late materialization) only
        /// while it keeps at most this share of its input rows; otherwise on decoded batches.
        pub pushdown_max_keep_ratio: f64, default = 0.1
        /// Metadata columns of Iceberg tables loaded from a catalog: `all`, or a comma list
        /// of `_file`, `_pos`, `_spec_id`, `_partition`, `_row_id`,
        /// `_last_updated_sequence_number`; empty: none. (`CREATE EXTERNAL TABLE` takes the
        /// table option `metadata_columns` instead.)
        pub iceberg_metadata_columns: String, default = String::new()
        /// Splits each scan partition prepares ahead of time (footer, page index, delete
        /// files) on their own tasks while the current one streams; 0 turns preload off.
        pub preload_splits: usize, default = 1
        /// Hive tables keep each directory's listing this many seconds and serve later
        /// queries from it; files added, removed or rewritten in that time are not seen until
        /// it expires. 0 (the default) lists the table's directories at every query.
        pub listing_cache_ttl_seconds: u64, default = 0
    }
}

impl ConfigExtension for LakeScanOptions {
    const PREFIX: &'static str = "lakescan";
}

impl LakeScanOptions {
    /// The session's settings, or the defaults when lakescan was not registered.
    pub fn from_config(config: &ConfigOptions) -> Self {
        config.extensions.get::<Self>().cloned().unwrap_or_default()
    }
}

/// Parses a table's `split_size` option: a positive number of bytes.
pub fn parse_split_size(value: &str) -> datafusion::common::Result<u64> {
    match value.trim().parse::<u64>() {
        Ok(bytes) if bytes > 0 => Ok(bytes),
        _ => datafusion::common::plan_err!(
            "option split_size must be a positive number of bytes, got '{value}'"
        ),
    }
}
