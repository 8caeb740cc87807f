//! Bucket conversion: a file of a partition written with fewer buckets
//! than the table serves one *table* bucket by keeping only the rows whose hash lands in it.
//!
//! ```text
//!  table 8 buckets, partition 4 buckets: file 000001_0 holds rows with h % 4 == 1
//!    split (file 000001_0, table bucket 1): keep h % 8 == 1    (h = 1, 9, …)
//!    split (file 000001_0, table bucket 5): keep h % 8 == 5    (h = 5, 13, …)
//! ```
//!
//! The adapter keeps the scan's [`BucketConversion`]s and a split names its own; the adapter
//! turns it into a [`BucketConversionStage`], which runs after the reader's filters and
//! before the residual and counts the rows it drops in `rows_removed_bucket_conversion`. The bucketing columns are read whole as auxiliary
//! channels of `R` (the table handle's `stage_columns`), even when the query does not
//! project them or reads only some of their subfields: a ROW's hash needs all its members.
//! They never reach the output, and `rows_scanned` still counts every row read.

use std::sync::Arc;

use arrow::array::{BooleanArray, RecordBatch};
use arrow::compute::filter_record_batch;
use datafusion::common::{Result, exec_err, internal_err};
use lakescan_core::api::wire::{self, EncodedAdapter};
use lakescan_core::api::{
    AdapterKey, AdapterTable, BatchStage, BatchTransform, FileSplit, SplitContext, TableAdapter,
};
use serde::{Deserialize, Serialize};

use crate::bucket::BucketConversion;
use crate::bucket::Bucketing;
use crate::hash::{HiveHash, bucket_number};

/// Keeps the rows of a batch whose table bucket is the split's.
pub struct BucketConversionStage {
    hash: HiveHash,
    /// Channels of `R` holding the bucketing columns, in bucketing order.
    channels: Vec<usize>,
    conversion: BucketConversion,
    file: String,
}

impl BatchTransform for BucketConversionStage {
    fn apply(&mut self, batch: RecordBatch) -> Result<RecordBatch> {
        if batch.num_rows() == 0 {
            return Ok(batch);
        }
        let columns: Vec<_> = self
            .channels
            .iter()
            .map(|&c| Arc::clone(batch.column(c)))
            .collect();
        let hashes = self.hash.hash_rows(&columns)?;
        let c = &self.conversion;
        let keep = c.table_bucket;
        let mut mask = Vec::with_capacity(hashes.len());
        for h in hashes {
            let bucket = bucket_number(h, c.table_bucket_count);
            if !(bucket + c.table_bucket_count - keep).is_multiple_of(c.partition_bucket_count) {
                return exec_err!(
                    "file '{}' of a partition with {} buckets holds a row of table bucket {bucket}, \
                     which belongs to the file of bucket {}, not {}: the file is in the wrong \
                     bucket, or bucketed_by / bucketing_version do not match how it was written",
                    self.file,
                    c.partition_bucket_count,
                    bucket % c.partition_bucket_count,
                    keep % c.partition_bucket_count
                );
            }
            mask.push(bucket == keep);
        }
        let mask = BooleanArray::from(mask);
        if mask.true_count() == batch.num_rows() {
            return Ok(batch);
        }
        Ok(filter_record_batch(&batch, &mask)?)
    }
}

/// Split readers of Hive tables: the Parquet reader, plus bucket conversion where a split
/// needs it. It keeps the scan's distinct conversions; a split names its own by
/// [`AdapterKey`] ([`Self::conversion_key`] while planning).
#[derive(Debug, Default)]
pub struct HiveAdapter {
    bucketing: Option<Arc<Bucketing>>,
    conversions: AdapterTable<BucketConversion>,
}

impl HiveAdapter {
    /// Readers of a table bucketed by `bucketing` (if it is).
    pub fn new(bucketing: Option<Arc<Bucketing>>) -> Self {
        Self {
            bucketing,
            conversions: AdapterTable::default(),
        }
    }

    /// The key of `conversion` for a split that needs it (one per distinct conversion).
    pub fn conversion_key(&mut self, conversion: BucketConversion) -> Result<AdapterKey> {
        self.conversions.intern(conversion)
    }

    /// Whether some split converts buckets (its bucketing columns must be read).
    pub fn converts(&self) -> bool {
        !self.conversions.is_empty()
    }

    /// Its kind on the wire ([`lakescan_core::api::AdapterDecoders`]).
    pub const KIND: &'static str = "hive";

    /// The adapter whose [`TableAdapter::encoded`] state is `state`.
    pub fn decode(state: &[u8]) -> Result<Arc<dyn TableAdapter>> {
        let parts: AdapterParts = wire::decode_body(state, "Hive adapter")?;
        Ok(Arc::new(Self {
            bucketing: parts.bucketing.map(Arc::new),
            conversions: parts.conversions,
        }))
    }
}

/// What a [`HiveAdapter`] carries to another process.
#[derive(Serialize, Deserialize)]
struct AdapterParts {
    bucketing: Option<Bucketing>,
    conversions: AdapterTable<BucketConversion>,
}

/// Hive splits are Parquet plus the bucket-conversion stage; they have no deletes.
impl TableAdapter for HiveAdapter {
    fn encoded(&self) -> Result<EncodedAdapter> {
        let parts = AdapterParts {
            bucketing: self.bucketing.as_deref().cloned(),
            conversions: self.conversions.clone(),
        };
        Ok(EncodedAdapter {
            kind: Self::KIND.into(),
            state: wire::encode_body(&parts)?,
        })
    }

    fn stages(&self, split: &FileSplit, context: &SplitContext) -> Result<Vec<BatchStage>> {
        let spec = &context.spec;
        let Some(conversion) = self.conversions.get(split)? else {
            return Ok(vec![]);
        };
        let Some(bucketing) = &self.bucketing else {
            return internal_err!(
                "bucket conversion of '{}' on an unbucketed table",
                split.display_path()
            );
        };
        let mut channels = vec![];
        for (name, _) in &bucketing.columns {
            match spec.field(name).and_then(|(_, f)| f.channel) {
                Some(c) => channels.push(c),
                None => {
                    return internal_err!("bucketing column '{name}' is not a channel of the scan");
                }
            }
        }
        let stage = BucketConversionStage {
            hash: bucketing.hash,
            channels,
            conversion: conversion.clone(),
            file: split.display_path().to_string(),
        };
        Ok(vec![BatchStage {
            transform: Box::new(stage),
            removed: context.metrics.rows_removed_bucket_conversion.clone(),
        }])
    }
}
