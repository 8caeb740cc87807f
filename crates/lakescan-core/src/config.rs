//! [`LakeScanOptions`]: session settings of lakescan, `SET lakescan.<name> = <value>`.
//!
//! Registered by `lakescan::register` as [`LakeScanConfig`]. Table options
//! (`OPTIONS ('split_size' …)`) win over the session value.

use std::any::Any;

use datafusion::common::Result;
use datafusion::common::config::{ConfigEntry, ConfigExtension, ConfigOptions, ExtensionOptions};
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
        /// The file format (`parquet` or `orc`) of Hive tables that declare their columns
        /// but not `OPTIONS ('format' …)` (Trino's `hive.storage-format`); a table whose
        /// columns are inferred takes its first file's format.
        pub hive_default_format: String, default = "parquet".to_string()
    }
}

impl LakeScanOptions {
    /// The session's settings, or the defaults when lakescan was not registered.
    pub fn from_config(config: &ConfigOptions) -> Self {
        config
            .extensions
            .get::<LakeScanConfig>()
            .map(|c| c.0.clone())
            .unwrap_or_default()
    }
}

/// [`LakeScanOptions`] as the session's config extension `lakescan`. DataFusion's
/// `extensions_options!` lists an extension's settings without their prefix
/// (`preload_splits`), so `SHOW ALL` and `SHOW lakescan.preload_splits` would not find
/// them; this wrapper lists them as they are set (`lakescan.preload_splits`).
#[derive(Debug, Clone, Default)]
pub struct LakeScanConfig(pub LakeScanOptions);

impl ConfigExtension for LakeScanConfig {
    const PREFIX: &'static str = "lakescan";
}

impl ExtensionOptions for LakeScanConfig {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn cloned(&self) -> Box<dyn ExtensionOptions> {
        Box::new(self.clone())
    }

    fn set(&mut self, key: &str, value: &str) -> Result<()> {
        self.0.set(key, value)
    }

    fn entries(&self) -> Vec<ConfigEntry> {
        self.0
            .entries()
            .into_iter()
            .map(|e| ConfigEntry {
                key: format!("{}.{}", Self::PREFIX, e.key),
                ..e
            })
            .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_listed_and_set_under_their_prefix() {
        let mut options = ConfigOptions::new();
        options.extensions.insert(LakeScanConfig::default());
        options.set("lakescan.preload_splits", "3").unwrap();
        assert_eq!(LakeScanOptions::from_config(&options).preload_splits, 3);
        let entry = options
            .entries()
            .into_iter()
            .find(|e| e.key == "lakescan.preload_splits")
            .unwrap();
        assert_eq!(entry.value.as_deref(), Some("3"));
        assert!(entry.description.starts_with("Splits each scan partition"));
    }
}
