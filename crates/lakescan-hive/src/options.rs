//! [`HiveOptions`]: the `OPTIONS (…)` of `CREATE EXTERNAL TABLE … STORED AS HIVE`.
//!
//! | key                                | value                                                     |
//! |------------------------------------|-----------------------------------------------------------|
//! | `format`                           | `parquet`, `orc` or `avro`: the format of every data file (default: the first file's, by its magic bytes; Parquet when the table has none) |
//! | `transactional`                    | `true` marks a Hive ACID table, which lakescan does not read (`NotImplemented`) |
//! | `split_size`                       | bytes per split (files larger are read as byte ranges)    |
//! | `bucketed_by`                      | bucketing columns, comma-separated, in bucketing order    |
//! | `bucket_count`                     | the table's bucket count                                  |
//! | `bucketing_version`                | `1` (legacy Hive hash, the default, as Trino) or `2` (murmur3) |
//! | `bucket_strings_as`                | `string` (default: Hive STRING hash, Velox's choice) or `varchar` (Hive VARCHAR: version 1 starts at 1) |
//! | `hidden_columns`                   | `all`, or a comma list of `$path`, `$file_size`, `$file_modified_time`, `$partition`, `$bucket`, `$row_index`, `$row_id` |
//! | `row_id.metadata_version`          | `$row_id.metadata_version` of every row (BIGINT)          |
//! | `row_id.table_guid`                | `$row_id.table_guid` of every row                         |
//! | `row_id.partition_id`              | `$row_id.partition_id` of every partition without its own |
//! | `row_id.partition_id.<k=v/…>`      | `$row_id.partition_id` of the partition `k=v/…`           |
//!
//! Keys are case-insensitive and may be written with a `format.` or `hive.` prefix (DataFusion
//! prefixes keys without a dot with `format.`). An unknown key is an error listing the
//! accepted ones: a misspelt option must not be ignored.

use std::collections::{BTreeMap, HashMap};

use datafusion::common::{Result, plan_err};
use serde::{Deserialize, Serialize};

use lakescan_core::api::FileFormat;

use crate::hash::{BucketingVersion, StringHashing};
use crate::hidden::HiddenSelection;

/// Keys accepted without a further suffix.
const KEYS: [&str; 11] = [
    "format",
    "transactional",
    "split_size",
    "bucketed_by",
    "bucket_count",
    "bucketing_version",
    "bucket_strings_as",
    "hidden_columns",
    "row_id.metadata_version",
    "row_id.table_guid",
    "row_id.partition_id",
];

/// Prefix of the per-partition `row_id.partition_id.<partition>` keys.
const PARTITION_ID_PREFIX: &str = "row_id.partition_id.";

/// Bucketing declared for a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BucketingOptions {
    /// Bucketing columns in bucketing order.
    pub columns: Vec<String>,
    /// Buckets of the table.
    pub count: u32,
    /// Which Hive hash.
    pub version: BucketingVersion,
    /// How string columns hash.
    pub strings: StringHashing,
}

/// The constants of `$row_id` besides the row number and the file name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowIdOptions {
    /// `metadata_version` of every row; NULL when not given.
    pub metadata_version: Option<i64>,
    /// `table_guid` of every row; NULL when not given.
    pub table_guid: Option<String>,
    /// `partition_id` of the partitions without their own; NULL when not given.
    pub partition_id: Option<i64>,
    /// `partition_id` by partition name (`k=v/…`, as written in the path).
    pub partition_ids: BTreeMap<String, i64>,
}

impl RowIdOptions {
    /// The partition id of the partition `name` (`k=v/…`).
    pub fn partition_id_of(&self, name: &str) -> Option<i64> {
        self.partition_ids
            .get(&name.to_lowercase())
            .copied()
            .or(self.partition_id)
    }
}

/// Parsed table options.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HiveOptions {
    /// `format`; `None`: the first data file's (resolved when the table is created).
    pub format: Option<FileFormat>,
    /// `split_size`.
    pub split_size: Option<u64>,
    /// `bucketed_by` + `bucket_count` + `bucketing_version` + `bucket_strings_as`.
    pub bucketing: Option<BucketingOptions>,
    /// `hidden_columns`.
    pub hidden_columns: HiddenSelection,
    /// `row_id.*`.
    pub row_id: RowIdOptions,
}

impl HiveOptions {
    /// Parses `options` (as `CreateExternalTable::options` holds them).
    pub fn parse(options: &HashMap<String, String>) -> Result<Self> {
        let mut values: BTreeMap<String, &str> = BTreeMap::new();
        let mut partition_ids = BTreeMap::new();
        for (key, value) in options {
            let key = key.to_lowercase();
            let bare = ["format.", "hive."]
                .iter()
                .find_map(|p| key.strip_prefix(p))
                .unwrap_or(&key);
            if let Some(partition) = bare.strip_prefix(PARTITION_ID_PREFIX) {
                partition_ids.insert(partition.to_string(), number(bare, value)?);
            } else if KEYS.contains(&bare) {
                values.insert(bare.to_string(), value.as_str());
            } else {
                return plan_err!(
                    "unknown option '{key}' for a HIVE table; accepted options: {}, {PARTITION_ID_PREFIX}<partition>",
                    KEYS.join(", ")
                );
            }
        }
        let get = |k: &str| values.get(k).copied();
        let format = get("format")
            .map(|f| f.trim().parse::<FileFormat>())
            .transpose()?;
        if let Some(t) = get("transactional")
            && !matches!(t.trim().to_ascii_lowercase().as_str(), "false")
        {
            return Err(datafusion::error::DataFusionError::NotImplemented(format!(
                "option transactional '{t}': lakescan does not read Hive ACID \
                 (transactional) tables; see the user guide"
            )));
        }
        let split_size = get("split_size")
            .map(lakescan_core::api::parse_split_size)
            .transpose()?;
        let row_id = RowIdOptions {
            metadata_version: get("row_id.metadata_version")
                .map(|v| number("row_id.metadata_version", v))
                .transpose()?,
            table_guid: get("row_id.table_guid").map(str::to_string),
            partition_id: get("row_id.partition_id")
                .map(|v| number("row_id.partition_id", v))
                .transpose()?,
            partition_ids,
        };
        Ok(Self {
            format,
            split_size,
            bucketing: bucketing(&values)?,
            hidden_columns: match get("hidden_columns") {
                Some(list) => HiddenSelection::parse(list)?,
                None => HiddenSelection::None,
            },
            row_id,
        })
    }
}

fn number(key: &str, value: &str) -> Result<i64> {
    match value.trim().parse::<i64>() {
        Ok(n) => Ok(n),
        Err(_) => plan_err!("option {key} must be an integer, got '{value}'"),
    }
}

/// `bucketed_by`, `bucket_count`, `bucketing_version`, `bucket_strings_as`: all or nothing.
fn bucketing(values: &BTreeMap<String, &str>) -> Result<Option<BucketingOptions>> {
    let get = |k: &str| values.get(k).copied();
    let (columns, count) = match (get("bucketed_by"), get("bucket_count")) {
        (None, None) => {
            for k in ["bucketing_version", "bucket_strings_as"] {
                if get(k).is_some() {
                    return plan_err!("option {k} needs bucketed_by and bucket_count");
                }
            }
            return Ok(None);
        }
        (Some(columns), Some(count)) => (columns, count),
        (Some(_), None) => return plan_err!("option bucketed_by needs bucket_count"),
        (None, Some(_)) => return plan_err!("option bucket_count needs bucketed_by"),
    };
    let columns: Vec<String> = columns
        .split(',')
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect();
    if columns.is_empty() {
        return plan_err!("option bucketed_by names no column");
    }
    let count = match count.trim().parse::<u32>() {
        Ok(n) if n > 0 => n,
        _ => return plan_err!("option bucket_count must be a positive integer, got '{count}'"),
    };
    let version = match get("bucketing_version").map(str::trim) {
        None | Some("1") => BucketingVersion::V1,
        Some("2") => BucketingVersion::V2,
        Some(v) => return plan_err!("option bucketing_version must be 1 or 2, got '{v}'"),
    };
    let strings = match get("bucket_strings_as").map(|v| v.trim().to_lowercase()) {
        None => StringHashing::HiveString,
        Some(v) if v == "string" => StringHashing::HiveString,
        Some(v) if v == "varchar" => StringHashing::HiveVarchar,
        Some(v) => {
            return plan_err!("option bucket_strings_as must be string or varchar, got '{v}'");
        }
    };
    Ok(Some(BucketingOptions {
        columns,
        count,
        version,
        strings,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> Result<HiveOptions> {
        let map = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        HiveOptions::parse(&map)
    }

    #[test]
    fn keys_with_and_without_prefixes() {
        let o = parse(&[
            ("format.bucketed_by", "custkey, ds2"),
            ("format.bucket_count", "8"),
            ("hive.bucketing_version", "2"),
            ("format.hidden_columns", "$path,$row_index"),
            ("row_id.partition_id.ds=1", "10"),
            ("row_id.table_guid", "g"),
        ])
        .unwrap();
        let b = o.bucketing.unwrap();
        assert_eq!(b.columns, ["custkey", "ds2"]);
        assert_eq!((b.count, b.version), (8, BucketingVersion::V2));
        use crate::hidden::HiddenColumn;
        let only = HiddenSelection::Only(vec![HiddenColumn::Path, HiddenColumn::RowIndex]);
        assert_eq!(o.hidden_columns, only);
        assert_eq!(o.row_id.partition_id_of("ds=1"), Some(10));
        assert_eq!(o.row_id.partition_id_of("ds=2"), None);
        assert_eq!(o.row_id.table_guid.as_deref(), Some("g"));
    }

    #[test]
    fn unknown_and_bad_values_are_errors() {
        let err = parse(&[("format.bucket_cout", "8")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown option 'format.bucket_cout'"), "{err}");
        assert!(
            err.contains("bucket_count") && err.contains("hidden_columns"),
            "{err}"
        );
        let err = parse(&[("format.bucketed_by", "a")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("needs bucket_count"), "{err}");
        let err = parse(&[("format.bucketed_by", "a"), ("format.bucket_count", "0")]).unwrap_err();
        assert!(err.to_string().contains("positive"), "{err}");
        let err = parse(&[
            ("format.bucketed_by", "a"),
            ("format.bucket_count", "4"),
            ("format.bucketing_version", "3"),
        ])
        .unwrap_err();
        assert!(err.to_string().contains("1 or 2"), "{err}");
        let err = parse(&[("format.hidden_columns", "$nope")]).unwrap_err();
        assert!(err.to_string().contains("$nope"), "{err}");
        let err = parse(&[("format.split_size", "-1")]).unwrap_err();
        assert!(err.to_string().contains("split_size"), "{err}");
    }
}
