//! SQL functions over the Hive hash, registered by `lakescan::register`:
//!
//! | function                                          | result                                  |
//! |---------------------------------------------------|-----------------------------------------|
//! | `hive_hash(version, c1 [, c2 …])`                 | the combined Hive hash (INT), `31*h + x` |
//! | `hive_bucket(version, bucket_count, c1 [, c2 …])` | `(hash & i32::MAX) % bucket_count` (INT) |
//!
//! `version` is the bucketing version, 1 or 2; strings hash as Hive STRING. They let SQL
//! write bucketed tables that lakescan, Hive and Trino read alike:
//!
//! ```sql
//! COPY (SELECT * FROM src WHERE hive_bucket(2, 8, custkey) = 3)
//!   TO '/wh/orders/ds=1/000003_0.parquet' STORED AS PARQUET;
//! ```

use std::sync::Arc;

use arrow::array::{ArrayRef, Int32Array};
use arrow::datatypes::DataType;
use datafusion::common::{Result, ScalarValue, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

use crate::hash::{BucketingVersion, HiveHash, StringHashing, bucket_number};

/// `hive_hash` or `hive_bucket`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct HiveHashUdf {
    bucket: bool,
    signature: Signature,
}

impl HiveHashUdf {
    /// `hive_hash(version, columns…)`.
    pub fn hash() -> ScalarUDF {
        ScalarUDF::new_from_impl(Self {
            bucket: false,
            signature: Signature::variadic_any(Volatility::Immutable),
        })
    }

    /// `hive_bucket(version, bucket_count, columns…)`.
    pub fn bucket() -> ScalarUDF {
        ScalarUDF::new_from_impl(Self {
            bucket: true,
            signature: Signature::variadic_any(Volatility::Immutable),
        })
    }

    fn leading(&self) -> usize {
        if self.bucket { 2 } else { 1 }
    }
}

fn integer_literal(name: &str, what: &str, value: &ColumnarValue) -> Result<i64> {
    let ColumnarValue::Scalar(s) = value else {
        return plan_err!("{name}: {what} must be a constant");
    };
    match s.cast_to(&DataType::Int64) {
        Ok(ScalarValue::Int64(Some(v))) => Ok(v),
        _ => plan_err!("{name}: {what} must be an integer, got {s}"),
    }
}

impl ScalarUDFImpl for HiveHashUdf {
    fn name(&self) -> &str {
        if self.bucket {
            "hive_bucket"
        } else {
            "hive_hash"
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        if arg_types.len() <= self.leading() {
            let usage = if self.bucket {
                "hive_bucket(version, bucket_count, column, …)"
            } else {
                "hive_hash(version, column, …)"
            };
            return plan_err!("{usage} needs at least one column");
        }
        Ok(DataType::Int32)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let name = self.name();
        if args.args.len() <= self.leading() {
            return plan_err!("{name} needs at least one column");
        }
        let version = match integer_literal(name, "version", &args.args[0])? {
            1 => BucketingVersion::V1,
            2 => BucketingVersion::V2,
            v => return plan_err!("{name}: bucketing version must be 1 or 2, got {v}"),
        };
        let count = if self.bucket {
            match u32::try_from(integer_literal(name, "bucket_count", &args.args[1])?) {
                Ok(n) if n > 0 => Some(n),
                _ => return plan_err!("{name}: bucket_count must be a positive integer"),
            }
        } else {
            None
        };
        let columns = args.args[self.leading()..]
            .iter()
            .map(|c| c.to_array(args.number_rows))
            .collect::<Result<Vec<ArrayRef>>>()?;
        let hashes = HiveHash::new(version, StringHashing::HiveString).hash_rows(&columns)?;
        let values: Int32Array = match count {
            Some(n) => hashes.iter().map(|&h| bucket_number(h, n) as i32).collect(),
            None => hashes.into_iter().collect(),
        };
        Ok(ColumnarValue::Array(Arc::new(values)))
    }
}
