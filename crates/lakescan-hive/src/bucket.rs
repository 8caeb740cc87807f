//! Bucketed tables: the bucketing spec, the bucket of each file, the table
//! bucket(s) each file serves, and bucket pruning.
//!
//! **Bucket of a file** ([`bucket_of_file_name`]), by the names writers give bucket files:
//!
//! | writer                                   | name                                      |
//! |------------------------------------------|-------------------------------------------|
//! | Hive, Trino, Spark (Hive-compatible)     | `000003_0`, `000003_0_copy_1`, `000003_0_<uuid>_<query>.parquet` |
//! | Hive ACID                                | `bucket_00003`, `bucket_00003_1`           |
//! | Presto (legacy), Trino                   | `<query id>_bucket-00003…`, `bucket-00003…` |
//! | Spark                                    | `part-00000-<uuid>_00003.c000.snappy.parquet` (the `_00003`), else `part-00003-…` |
//!
//! Copies (`_copy_N`) and several files of one bucket all belong to it.
//!
//! **A partition's bucket count** is its highest bucket number + 1, and every bucket
//! `0..count` must have a file (Hive writes empty files for empty buckets). The count must
//! divide or be a multiple of the table's; each file then serves table buckets (Trino's
//! `getBucketedSplits`):
//!
//! ```text
//!  partition count p = table count t: file b serves table bucket b
//!  p < t (t % p == 0):  table bucket b is served by file b % p, keeping the rows whose
//!                       hash lands in b (bucket conversion): t / p reads
//!  p > t (p % t == 0):  file b serves table bucket b % t, no filtering needed
//! ```
//!
//! **Bucket pruning** ([`BucketFilter`]): equality / `IN` / `IS NULL` filters on *all*
//! bucketing columns give the hashes a matching row can have; a `$bucket` filter gives the
//! table buckets. A (file, table bucket) pair is read only when some hash lands in both.

use std::collections::BTreeMap;

use arrow::array::ArrayRef;
use arrow::datatypes::{DataType, Schema};
use datafusion::common::{Result, ScalarValue, exec_err, internal_err, plan_err};
use datafusion::execution::object_store::ObjectStoreUrl;
use lakescan_core::api::{Filter, NullResult, Subfield, written_path};
use object_store::ObjectMeta;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

use crate::hash::{HiveHash, bucket_number};
use crate::options::BucketingOptions;

/// How a table is bucketed.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Bucketing {
    /// Bucketing columns, in bucketing order, with their types.
    #[serde(with = "lakescan_core::api::wire::named_types")]
    pub columns: Vec<(String, DataType)>,
    /// The table's bucket count.
    pub count: u32,
    /// The hash (version, string hashing).
    pub hash: HiveHash,
}

impl Bucketing {
    /// Checks `options` against the table's data columns.
    pub fn try_new(options: &BucketingOptions, data_columns: &Schema) -> Result<Self> {
        let hash = HiveHash::new(options.version, options.strings);
        let mut columns = vec![];
        for name in &options.columns {
            let Ok(field) = data_columns.field_with_name(name) else {
                return plan_err!(
                    "bucketed_by column '{name}' is not a data column of the table (partition columns cannot be bucketing columns)"
                );
            };
            if !hash.supports(field.data_type()) {
                return plan_err!(
                    "bucketed_by column '{name}' of type {} cannot be hashed with bucketing_version {}",
                    field.data_type(),
                    version_number(&hash)
                );
            }
            columns.push((name.clone(), field.data_type().clone()));
        }
        Ok(Self {
            columns,
            count: options.count,
            hash,
        })
    }

    /// The bucketing column names.
    pub fn column_names(&self) -> Vec<String> {
        self.columns.iter().map(|(n, _)| n.clone()).collect()
    }
}

fn version_number(hash: &HiveHash) -> u8 {
    match hash.version {
        crate::hash::BucketingVersion::V1 => 1,
        crate::hash::BucketingVersion::V2 => 2,
    }
}

type Pattern = LazyLock<Result<Regex, regex::Error>>;

static HIVE: Pattern = LazyLock::new(|| Regex::new(r"^(\d+)_\d+"));
static ACID: Pattern = LazyLock::new(|| Regex::new(r"^bucket_(\d+)(?:_\d+)?(?:\..*)?$"));
static PRESTO: Pattern = LazyLock::new(|| Regex::new(r"(?:^|_)bucket-(\d+)(?:[-_.].*)?$"));
static SPARK: Pattern = LazyLock::new(|| Regex::new(r"^part-\d+-.*_(\d+)(?:\..*)?$"));
static SPARK_PART: Pattern = LazyLock::new(|| Regex::new(r"^part-(\d+)(?:[-.].*)?$"));

/// The bucket number a writer put into a file name (see the module docs), if any.
pub fn bucket_of_file_name(name: &str) -> Result<Option<u32>> {
    // Presto's names start with a date and a time (`20180102_030405_…`): before Hive's.
    for pattern in [&PRESTO, &HIVE, &ACID, &SPARK, &SPARK_PART] {
        let re = match &**pattern {
            Ok(re) => re,
            Err(e) => return internal_err!("a bucket file name pattern does not compile: {e}"),
        };
        let digits = re.captures(name).and_then(|c| c.get(1));
        if let Some(bucket) = digits.and_then(|d| d.as_str().parse().ok()) {
            return Ok(Some(bucket));
        }
    }
    Ok(None)
}

/// Bucket numbers at or above this are an error (Hive's `hive.exec.max.bucket.count`
/// bounds tables far below it); it keeps a stray file name from costing memory.
pub const MAX_BUCKETS: u32 = 1 << 20;

/// The bucket files of one partition.
#[derive(Debug)]
pub struct PartitionBuckets {
    /// The partition's bucket count.
    pub count: u32,
    /// Files with their bucket number.
    pub files: Vec<(u32, ObjectMeta)>,
}

/// Validates the files of partition `partition` of table `table` (see the module docs).
pub fn partition_buckets(
    table: &str,
    partition: &str,
    files: Vec<ObjectMeta>,
    table_count: u32,
    store: &ObjectStoreUrl,
) -> Result<PartitionBuckets> {
    let shown = if partition.is_empty() {
        "the table directory".to_string()
    } else {
        format!("partition '{partition}'")
    };
    let mut numbered = Vec::with_capacity(files.len());
    for meta in files {
        let name = meta.location.filename().unwrap_or_default();
        let Some(bucket) = bucket_of_file_name(name)? else {
            return exec_err!(
                "bucketed HIVE table '{table}': file '{}' in {shown} is not named like a bucket file \
                 (expected 000003_0, 000003_0_copy_1, bucket_00003, bucket-00003… or part-…_00003…)",
                written_path(store, &meta.location)
            );
        };
        numbered.push((bucket, meta));
    }
    let Some((highest, highest_file)) = numbered.iter().max_by_key(|(b, _)| *b) else {
        return Ok(PartitionBuckets {
            count: table_count,
            files: vec![],
        });
    };
    let (highest, highest_file) = (*highest, written_path(store, &highest_file.location));
    if highest >= MAX_BUCKETS {
        return exec_err!(
            "bucketed HIVE table '{table}': {shown} has a file of bucket {highest} \
             ('{highest_file}'), beyond the {MAX_BUCKETS} buckets a table can have"
        );
    }
    let count = highest + 1;
    let mut present = vec![false; count as usize];
    for (b, _) in &numbered {
        present[*b as usize] = true;
    }
    if let Some(missing) = present.iter().position(|p| !p) {
        return exec_err!(
            "bucketed HIVE table '{table}': {shown} has no file for bucket {missing} of its {count} buckets \
             (its highest bucket is {highest}, file '{highest_file}'; every bucket must have a \
             file, Hive writes empty ones)"
        );
    }
    let compatible = count.is_multiple_of(table_count) || table_count.is_multiple_of(count);
    if !compatible {
        return exec_err!(
            "bucketed HIVE table '{table}': {shown} has {count} buckets, which neither divides \
             nor is a multiple of the table's {table_count} buckets (its highest bucket is \
             {highest}, file '{highest_file}')"
        );
    }
    Ok(PartitionBuckets {
        count,
        files: numbered,
    })
}

/// A split that serves one table bucket from a file of a partition with fewer buckets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BucketConversion {
    /// The table's bucket count.
    pub table_bucket_count: u32,
    /// The bucket count the partition was written with (divides the table's).
    pub partition_bucket_count: u32,
    /// The table bucket this split serves.
    pub table_bucket: u32,
}

/// One (file, table bucket) pair to read.
#[derive(Debug, Clone)]
pub struct BucketRead {
    /// The file's bucket in its partition.
    pub file_bucket: u32,
    /// The table bucket the read serves (`$bucket`).
    pub table_bucket: u32,
    /// Set when rows of other table buckets must be filtered out.
    pub conversion: Option<BucketConversion>,
}

/// The table buckets a file of bucket `file_bucket` in a partition of `partition_count`
/// buckets serves, in a table of `table_count` buckets.
pub fn reads_of_file(file_bucket: u32, partition_count: u32, table_count: u32) -> Vec<BucketRead> {
    if partition_count >= table_count {
        return vec![BucketRead {
            file_bucket,
            table_bucket: file_bucket % table_count,
            conversion: None,
        }];
    }
    (file_bucket..table_count)
        .step_by(partition_count as usize)
        .map(|table_bucket| BucketRead {
            file_bucket,
            table_bucket,
            conversion: Some(BucketConversion {
                table_bucket_count: table_count,
                partition_bucket_count: partition_count,
                table_bucket,
            }),
        })
        .collect()
}

/// Which (file bucket, table bucket) pairs may hold rows matching the query's filters.
#[derive(Debug, Clone, Default)]
pub struct BucketFilter {
    /// Hashes a matching row can have; `None` = any.
    hashes: Option<Vec<i32>>,
    /// Table buckets `$bucket` admits; `None` = any.
    table_buckets: Option<Vec<bool>>,
}

/// At most this many value combinations are hashed (Trino: `max(4 × buckets, 1000)`).
fn exploration_limit(count: u32) -> usize {
    (count as usize).saturating_mul(4).max(1000)
}

impl BucketFilter {
    /// From the extracted filters of a scan (over the table schema).
    pub fn try_new(bucketing: &Bucketing, filters: &BTreeMap<Subfield, Filter>) -> Result<Self> {
        let table_buckets = filters.get(&Subfield::column("$bucket")).map(|f| {
            (0..bucketing.count)
                .map(|b| f.test_constant(&ScalarValue::Int32(Some(b as i32))))
                .collect()
        });
        Ok(Self {
            hashes: point_hashes(bucketing, filters)?,
            table_buckets,
        })
    }

    /// Whether nothing is pruned.
    pub fn is_all(&self) -> bool {
        self.hashes.is_none() && self.table_buckets.is_none()
    }

    /// Whether `read` of a file in a partition of `partition_count` buckets may hold a
    /// matching row, in a table of `table_count` buckets.
    pub fn allows(
        &self,
        read: &BucketRead,
        partition_count: u32,
        table_count: u32,
    ) -> Result<bool> {
        let by_bucket = match &self.table_buckets {
            None => true,
            Some(ok) => match ok.get(read.table_bucket as usize) {
                Some(allowed) => *allowed,
                None => {
                    return internal_err!(
                        "table bucket {} of a file is beyond the table's {} buckets",
                        read.table_bucket,
                        ok.len()
                    );
                }
            },
        };
        let by_hash = self.hashes.as_ref().is_none_or(|hashes| {
            hashes.iter().any(|&h| {
                bucket_number(h, partition_count) == read.file_bucket
                    && bucket_number(h, table_count) == read.table_bucket
            })
        });
        Ok(by_bucket && by_hash)
    }
}

/// The combined hashes of every combination of the point filters on all bucketing
/// columns; `None` when a column has no point filter or there are too many combinations.
fn point_hashes(
    bucketing: &Bucketing,
    filters: &BTreeMap<Subfield, Filter>,
) -> Result<Option<Vec<i32>>> {
    let mut per_column: Vec<Vec<i32>> = vec![];
    let mut combinations = 1usize;
    for (name, data_type) in &bucketing.columns {
        let Some(filter) = filters.get(&Subfield::column(name.as_str())) else {
            return Ok(None);
        };
        let Some(values) = column_points(filter, data_type) else {
            return Ok(None);
        };
        combinations = combinations.saturating_mul(values.len().max(1));
        if combinations > exploration_limit(bucketing.count) {
            return Ok(None);
        }
        let array: ArrayRef = if values.is_empty() {
            arrow::array::new_empty_array(data_type)
        } else {
            ScalarValue::iter_to_array(values)?
        };
        per_column.push(bucketing.hash.hash_array(array.as_ref())?);
    }
    let mut hashes = vec![0i32];
    for column in per_column {
        hashes = hashes
            .iter()
            .flat_map(|h| {
                column
                    .iter()
                    .map(move |x| h.wrapping_mul(31).wrapping_add(*x))
            })
            .collect();
    }
    Ok(Some(hashes))
}

/// The values a filter admits, in the column's type (NULL included when it admits NULL);
/// `None` when it is not a finite set of points. A point that does not fit the column's
/// type exactly cannot match and is left out.
fn column_points(filter: &Filter, column_type: &DataType) -> Option<Vec<ScalarValue>> {
    let mut out = vec![];
    for range in filter.values().ranges() {
        let point = range.as_point()?;
        let Ok(v) = point.cast_to(column_type) else {
            continue;
        };
        if v.cast_to(filter.data_type()).ok().as_ref() == Some(point) && !v.is_null() {
            out.push(v);
        }
    }
    if filter.null_result() == NullResult::True {
        out.push(ScalarValue::try_from(column_type).ok()?);
    }
    Some(out)
}

#[cfg(test)]
mod tests;
