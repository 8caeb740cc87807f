//! [`IcebergOptions`]: the `OPTIONS (…)` of `CREATE EXTERNAL TABLE … STORED AS ICEBERG`.
//!
//! | key                  | value                                                            |
//! |----------------------|------------------------------------------------------------------|
//! | `snapshot_id`        | read this snapshot (time travel)                                 |
//! | `as_of_timestamp`    | read the snapshot current at this time: milliseconds since the epoch, or an RFC 3339 / `YYYY-MM-DD HH:MM:SS[.fff]` timestamp (UTC unless it names an offset) |
//! | `ref`                | read the snapshot a branch or tag points at                     |
//! | `split_size`         | bytes per split for files without `split_offsets`                |
//! | `metadata_columns`   | `all`, or a comma list of `_file`, `_pos`, `_spec_id`, `_partition`, `_row_id`, `_last_updated_sequence_number` (`crate::metadata_columns`); default: none |
//! | `relative_path_base` | directory that relative paths in the metadata are resolved against (default: the process's working directory, as DuckDB does) |
//!
//! At most one of `snapshot_id`, `as_of_timestamp` and `ref`; none reads the current
//! snapshot. Keys are case-insensitive and may carry a `format.` or `iceberg.` prefix
//! (DataFusion prefixes keys without a dot with `format.`). An unknown key is an error
//! listing the accepted ones.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, NaiveDateTime};
use datafusion::common::{Result, plan_err};

use crate::metadata_columns::MetadataSelection;

/// Keys this table type accepts.
const KEYS: [&str; 6] = [
    "snapshot_id",
    "as_of_timestamp",
    "ref",
    "split_size",
    "relative_path_base",
    "metadata_columns",
];

/// Which snapshot a table reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum SnapshotSelector {
    /// The table's current snapshot.
    #[default]
    Current,
    /// A snapshot by id.
    Id(i64),
    /// The snapshot that was current at this time (milliseconds since the epoch).
    AsOf(i64),
    /// The snapshot a branch or tag points at.
    Ref(String),
}

/// Parsed table options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IcebergOptions {
    /// `snapshot_id` / `as_of_timestamp` / `ref`.
    pub snapshot: SnapshotSelector,
    /// `split_size`.
    pub split_size: Option<u64>,
    /// `relative_path_base`.
    pub relative_path_base: Option<String>,
    /// `metadata_columns`.
    pub metadata_columns: MetadataSelection,
}

impl IcebergOptions {
    /// Parses `options` (as `CreateExternalTable::options` holds them).
    pub fn parse(options: &HashMap<String, String>) -> Result<Self> {
        let mut values: BTreeMap<String, &str> = BTreeMap::new();
        for (key, value) in options {
            let key = key.to_lowercase();
            let bare = ["format.", "iceberg."]
                .iter()
                .find_map(|p| key.strip_prefix(p))
                .unwrap_or(&key);
            if !KEYS.contains(&bare) {
                return plan_err!(
                    "unknown option '{key}' for an ICEBERG table; accepted options: {}",
                    KEYS.join(", ")
                );
            }
            values.insert(bare.to_string(), value.as_str());
        }
        let get = |k: &str| values.get(k).map(|v| v.trim());
        let selectors: Vec<&str> = ["snapshot_id", "as_of_timestamp", "ref"]
            .into_iter()
            .filter(|k| get(k).is_some())
            .collect();
        if selectors.len() > 1 {
            return plan_err!(
                "options {} select a snapshot each; give at most one",
                selectors.join(" and ")
            );
        }
        let snapshot = if let Some(v) = get("snapshot_id") {
            match v.parse::<i64>() {
                Ok(id) => SnapshotSelector::Id(id),
                Err(_) => return plan_err!("option snapshot_id must be an integer, got '{v}'"),
            }
        } else if let Some(v) = get("as_of_timestamp") {
            SnapshotSelector::AsOf(parse_timestamp_millis(v)?)
        } else if let Some(v) = get("ref") {
            if v.is_empty() {
                return plan_err!("option ref names no branch or tag");
            }
            SnapshotSelector::Ref(v.to_string())
        } else {
            SnapshotSelector::Current
        };
        let split_size = get("split_size")
            .map(lakescan_core::api::parse_split_size)
            .transpose()?;
        Ok(Self {
            snapshot,
            split_size,
            relative_path_base: get("relative_path_base").map(str::to_string),
            metadata_columns: match get("metadata_columns") {
                Some(v) => MetadataSelection::parse(v)?,
                None => MetadataSelection::None,
            },
        })
    }
}

/// Milliseconds since the epoch from a number of milliseconds or a timestamp text.
pub fn parse_timestamp_millis(text: &str) -> Result<i64> {
    if let Ok(millis) = text.parse::<i64>() {
        return Ok(millis);
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.timestamp_millis());
    }
    for format in [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(text, format) {
            return Ok(t.and_utc().timestamp_millis());
        }
    }
    plan_err!(
        "option as_of_timestamp must be milliseconds since the epoch or a timestamp \
         like '2024-01-31 12:00:00' (UTC) or '2024-01-31T12:00:00+01:00', got '{text}'"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> Result<IcebergOptions> {
        let map = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        IcebergOptions::parse(&map)
    }

    #[test]
    fn snapshot_selectors() {
        let o = parse(&[("format.snapshot_id", "5398841822738664432")]).unwrap();
        assert_eq!(o.snapshot, SnapshotSelector::Id(5398841822738664432));
        let o = parse(&[("as_of_timestamp", "2024-01-31 12:00:00")]).unwrap();
        assert_eq!(o.snapshot, SnapshotSelector::AsOf(1_706_702_400_000));
        let o = parse(&[("as_of_timestamp", "2024-01-31T13:00:00+01:00")]).unwrap();
        assert_eq!(o.snapshot, SnapshotSelector::AsOf(1_706_702_400_000));
        let o = parse(&[("iceberg.ref", "audit")]).unwrap();
        assert_eq!(o.snapshot, SnapshotSelector::Ref("audit".into()));
        assert_eq!(parse(&[]).unwrap().snapshot, SnapshotSelector::Current);
    }

    #[test]
    fn bad_options_are_errors() {
        let err = parse(&[("format.snapshot", "1")]).unwrap_err().to_string();
        assert!(err.contains("unknown option 'format.snapshot'"), "{err}");
        assert!(err.contains("snapshot_id") && err.contains("ref"), "{err}");
        let err = parse(&[("snapshot_id", "1"), ("ref", "main")]).unwrap_err();
        assert!(err.to_string().contains("at most one"), "{err}");
        let err = parse(&[("snapshot_id", "x")]).unwrap_err();
        assert!(err.to_string().contains("integer"), "{err}");
        let err = parse(&[("as_of_timestamp", "yesterday")]).unwrap_err();
        assert!(err.to_string().contains("'yesterday'"), "{err}");
        let err = parse(&[("split_size", "0")]).unwrap_err();
        assert!(err.to_string().contains("split_size"), "{err}");
    }
}
