//! Manifest partition summaries as DataFusion [`PruningStatistics`] of the partition source
//! columns, so the residual's AND/OR tree (`a = 1 OR b = 'z'`) prunes whole manifests with
//! the engine that prunes data files ([`crate::file_statistics`]) and row groups: one
//! container per manifest.
//!
//! A summary `[lower, upper]` of a partition field bounds its source column: directly for
//! `identity`, through the transform's preimage for the order-preserving ones (`year`,
//! `month`, `day`, `hour`, `truncate` of numbers; [`transforms::preimage`]). `bucket` and
//! `void` say nothing. A summary without NULLs means the source column has none (those
//! transforms map NULL to NULL and only NULL). Floating-point columns are left out (summary
//! bounds exclude NaN, DataFusion orders NaN last), and so are delete manifests and
//! manifests without summaries: unknown statistics keep a container.

use std::collections::HashSet;
use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray, UInt64Array};
use arrow::datatypes::DataType;
use datafusion::common::pruning::PruningStatistics;
use datafusion::common::{Column, ScalarValue};
use iceberg::spec::{
    Datum, FieldSummary, ManifestContentType, ManifestFile, PartitionSpec, Transform,
};

use crate::schema::{ScanSchema, datum_to_scalar};
use crate::transforms;

/// The partition summaries of some manifests.
pub struct ManifestStatistics<'a> {
    /// The schema the scan reads with.
    pub schema: &'a ScanSchema,
    /// The manifests, one container each, with the spec each was written with (`None`:
    /// unknown, nothing is pruned).
    pub manifests: Vec<(&'a ManifestFile, Option<&'a PartitionSpec>)>,
}

/// What one summary says of a source column.
struct SourceBounds {
    min: Option<ScalarValue>,
    max: Option<ScalarValue>,
    has_nulls: bool,
}

impl ManifestStatistics<'_> {
    /// The bounds of `column` in container `i`, from the first partition field of its spec
    /// that bounds the column.
    fn source_bounds(&self, i: usize, column: &Column) -> Option<SourceBounds> {
        let (manifest, spec) = self.manifests[i];
        let spec = spec?;
        let summaries = manifest.partitions.as_ref()?;
        if manifest.content != ManifestContentType::Data {
            return None;
        }
        let c = self
            .schema
            .fields
            .iter()
            .position(|f| f.name() == column.name())?;
        let id = self.schema.field_ids[c];
        let target = self.schema.fields[c].data_type();
        let source_type = self
            .schema
            .iceberg
            .field_by_id(id)?
            .field_type
            .as_primitive_type()?;
        spec.fields()
            .iter()
            .zip(summaries)
            .filter(|(field, _)| field.source_id == id)
            .find_map(|(field, summary)| bounds(&field.transform, source_type, target, summary))
    }

    fn column_bounds(&self, column: &Column, max: bool) -> Option<ArrayRef> {
        let data_type = self.data_type(column)?;
        let mut any = false;
        let values: Vec<ScalarValue> = (0..self.manifests.len())
            .map(|i| {
                let b = self.source_bounds(i, column);
                let v = b.and_then(|b| if max { b.max } else { b.min });
                any |= v.is_some();
                v.map_or_else(|| ScalarValue::try_from(data_type), Ok)
            })
            .collect::<datafusion::common::Result<_>>()
            .ok()?;
        if !any {
            return None;
        }
        ScalarValue::iter_to_array(values).ok()
    }

    fn data_type(&self, column: &Column) -> Option<&DataType> {
        let f = self
            .schema
            .fields
            .iter()
            .find(|f| f.name() == column.name())?;
        let t = f.data_type();
        let float = matches!(t, DataType::Float16 | DataType::Float32 | DataType::Float64);
        (!float).then_some(t)
    }
}

/// The source bounds a summary of a `transform` field gives, cast to the scan's type.
fn bounds(
    transform: &Transform,
    source: &iceberg::spec::PrimitiveType,
    target: &DataType,
    summary: &FieldSummary,
) -> Option<SourceBounds> {
    let has_nulls = summary.contains_null;
    let (min, max) = match transform {
        Transform::Identity => {
            let decode = |b: &Option<iceberg::spec::ByteBuf>| {
                let datum = Datum::try_from_bytes(b.as_ref()?, source.clone()).ok()?;
                datum_to_scalar(&datum).ok()?.cast_to(target).ok()
            };
            (decode(&summary.lower_bound), decode(&summary.upper_bound))
        }
        Transform::Year
        | Transform::Month
        | Transform::Day
        | Transform::Hour
        | Transform::Truncate(_) => {
            let result = transform
                .result_type(&iceberg::spec::Type::Primitive(source.clone()))
                .ok()?;
            let result = result.as_primitive_type()?;
            let decode = |b: &Option<iceberg::spec::ByteBuf>| {
                Datum::try_from_bytes(b.as_ref()?, result.clone()).ok()
            };
            match (decode(&summary.lower_bound), decode(&summary.upper_bound)) {
                (Some(lo), Some(hi)) => {
                    let (min, max) =
                        transforms::preimage(transform, target, lo.literal(), hi.literal())?;
                    (Some(min), Some(max))
                }
                _ => (None, None),
            }
        }
        _ => return None,
    };
    Some(SourceBounds {
        min,
        max,
        has_nulls,
    })
}

impl PruningStatistics for ManifestStatistics<'_> {
    fn min_values(&self, column: &Column) -> Option<ArrayRef> {
        self.column_bounds(column, false)
    }

    fn max_values(&self, column: &Column) -> Option<ArrayRef> {
        self.column_bounds(column, true)
    }

    fn num_containers(&self) -> usize {
        self.manifests.len()
    }

    fn null_counts(&self, column: &Column) -> Option<ArrayRef> {
        self.data_type(column)?;
        let counts: UInt64Array = (0..self.manifests.len())
            .map(|i| match self.source_bounds(i, column) {
                Some(b) if !b.has_nulls => Some(0),
                _ => None,
            })
            .collect();
        Some(Arc::new(counts))
    }

    fn row_counts(&self) -> Option<ArrayRef> {
        None
    }

    fn contained(&self, _column: &Column, _values: &HashSet<ScalarValue>) -> Option<BooleanArray> {
        None
    }
}
