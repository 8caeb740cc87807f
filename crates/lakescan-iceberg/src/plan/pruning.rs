//! Pruning while planning: what manifest summaries, partition values, column bounds and the
//! residual's AND/OR tree (through `PruningPredicate`) say about the scan's filters.

use std::collections::HashMap;

use arrow::datatypes::DataType;
use datafusion::common::{Result, ScalarValue};
use iceberg::spec::{
    DataFile, Datum, ManifestContentType, ManifestFile, PartitionField, Transform, Type,
};
use lakescan_core::api::{ColumnStats, Filter, NullResult};

use super::{PlannedFile, Planner};
use crate::file_statistics::FileStatistics;
use crate::manifest_statistics::ManifestStatistics;
use crate::metadata::LoadedMetadata;
use crate::schema::datum_to_scalar;
use crate::transforms;

/// Whether manifest null counts describe what a scan reads. Not when the table has a name
/// mapping: a file written without field ids has counts under the ids of the mapping it was
/// written with, and a column the current mapping leaves out reads as NULL in every row.
pub(super) fn null_counts_trusted(loaded: &LoadedMetadata) -> bool {
    !loaded
        .metadata
        .properties()
        .contains_key(iceberg::spec::DEFAULT_SCHEMA_NAME_MAPPING)
}

pub(super) fn is_float(t: &DataType) -> bool {
    matches!(t, DataType::Float16 | DataType::Float32 | DataType::Float64)
}

impl Planner<'_> {
    /// False when a summary bound of an identity partition field rules the manifest out.
    pub(super) fn manifest_may_match(&self, manifest: &ManifestFile) -> Result<bool> {
        if manifest.content != ManifestContentType::Data || self.filters.is_empty() {
            return Ok(true);
        }
        let (Some(summaries), Some(spec)) = (
            &manifest.partitions,
            self.metadata()
                .partition_spec_by_id(manifest.partition_spec_id),
        ) else {
            return Ok(true);
        };
        for (field, summary) in spec.fields().iter().zip(summaries) {
            if !self.transform_summary_may_match(field, summary) {
                return Ok(false);
            }
            let Some((column, filter, source_type)) = self.identity_column(field) else {
                continue;
            };
            let Some(primitive) = source_type.as_primitive_type() else {
                continue;
            };
            let bound = |b: &Option<iceberg::spec::ByteBuf>| -> Option<ScalarValue> {
                let datum = Datum::try_from_bytes(b.as_ref()?, primitive.clone()).ok()?;
                datum_to_scalar(&datum).ok()
            };
            if is_float(&self.schema.fields[column].data_type().clone())
                && summary.contains_nan != Some(false)
            {
                continue;
            }
            let stats = ColumnStats {
                min: bound(&summary.lower_bound),
                max: bound(&summary.upper_bound),
                null_count: (!summary.contains_null).then_some(0),
                row_count: None,
                // A float's summary is used only when it holds no NaN (above).
                nan_count: (summary.contains_nan == Some(false)).then_some(0),
            };
            let no_values = summary.lower_bound.is_none() && summary.upper_bound.is_none();
            let may = match (no_values, summary.contains_null) {
                // Every partition value of the manifest is NULL.
                (true, true) => filter.test_constant(&ScalarValue::Null),
                _ => filter.may_match(&stats),
            };
            if !may {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// False when the summary of a field of an order-preserving transform (year, month,
    /// day, hour, truncate) rules the manifest out ([`transforms::range_may_match`]).
    pub(super) fn transform_summary_may_match(
        &self,
        field: &PartitionField,
        summary: &iceberg::spec::FieldSummary,
    ) -> bool {
        // Only these transforms map NULL to NULL and keep order; `void` is NULL whatever
        // the source value, so its NULL summaries say nothing.
        if !matches!(
            field.transform,
            Transform::Year
                | Transform::Month
                | Transform::Day
                | Transform::Hour
                | Transform::Truncate(_)
        ) {
            return true;
        }
        let Some((column, filter, source_type)) = self.source_column(field) else {
            return true;
        };
        let Some(result) = field
            .transform
            .result_type(source_type)
            .ok()
            .and_then(|t| t.as_primitive_type().cloned())
        else {
            return true;
        };
        let bound = |b: &Option<iceberg::spec::ByteBuf>| {
            Datum::try_from_bytes(b.as_ref()?, result.clone()).ok()
        };
        let source = self.schema.fields[column].data_type();
        let written = (&summary.lower_bound, &summary.upper_bound);
        if written.0.is_none() && written.1.is_none() {
            // No bounds: every partition value of the manifest is NULL, or it has no entries.
            return !summary.contains_null || filter.test_constant(&ScalarValue::Null);
        }
        match (bound(written.0), bound(written.1)) {
            (Some(lo), Some(hi)) => {
                let values = transforms::range_may_match(
                    &field.transform,
                    source,
                    lo.literal(),
                    hi.literal(),
                    filter,
                );
                values || (summary.contains_null && filter.test_constant(&ScalarValue::Null))
            }
            // A bound that is missing or does not decode says nothing: keep the manifest.
            _ => true,
        }
    }

    /// The column, filter and source type of a partition field's source, when the column is
    /// filtered.
    pub(super) fn source_column(&self, field: &PartitionField) -> Option<(usize, &Filter, &Type)> {
        let column = self.schema.column_of_id(field.source_id)?;
        let filter = self.filters.get(&column)?;
        let source = self.schema.iceberg.field_by_id(field.source_id)?;
        Some((column, *filter, &source.field_type))
    }

    /// The column, filter and source type of an identity partition field, when the column
    /// is filtered.
    pub(super) fn identity_column(
        &self,
        field: &PartitionField,
    ) -> Option<(usize, &Filter, &Type)> {
        if field.transform != Transform::Identity {
            return None;
        }
        let column = self.schema.column_of_id(field.source_id)?;
        let filter = self.filters.get(&column)?;
        let source = self.schema.iceberg.field_by_id(field.source_id)?;
        Some((column, *filter, &source.field_type))
    }

    /// Whether each candidate may hold a row the residual's AND/OR tree accepts, by its
    /// manifest statistics ([`FileStatistics`] under `PruningPredicate`).
    /// Which manifests the residual's pruning predicate keeps, over their partition
    /// summaries ([`ManifestStatistics`]).
    pub(super) fn prune_manifests_by_residual(&self, manifests: &[ManifestFile]) -> Vec<bool> {
        let all = vec![true; manifests.len()];
        let (Some(predicate), false) = (&self.residual_pruning, manifests.is_empty()) else {
            return all;
        };
        let stats = ManifestStatistics {
            schema: self.schema,
            manifests: manifests
                .iter()
                .map(|m| {
                    let spec = self.metadata().partition_spec_by_id(m.partition_spec_id);
                    (m, spec.map(AsRef::as_ref))
                })
                .collect(),
        };
        // Pruning is an optimization: statistics it cannot compare keep every manifest.
        predicate.prune(&stats).unwrap_or(all)
    }

    pub(super) fn prune_by_residual(&self, candidates: &[(DataFile, PlannedFile)]) -> Vec<bool> {
        let all = vec![true; candidates.len()];
        let (Some(predicate), false) = (&self.residual_pruning, candidates.is_empty()) else {
            return all;
        };
        let stats = FileStatistics {
            schema: self.schema,
            files: candidates.iter().map(|(f, _)| f).collect(),
            null_counts_trusted: null_counts_trusted(self.loaded),
        };
        // Pruning is an optimization: statistics it cannot compare keep every file.
        predicate.prune(&stats).unwrap_or(all)
    }

    /// False when a filtered column's bounds and counts rule the file out.
    pub(super) fn bounds_may_match(&self, file: &DataFile) -> bool {
        for (&column, filter) in &self.filters {
            let id = self.schema.field_ids[column];
            let float = is_float(self.schema.fields[column].data_type());
            if float && file.nan_value_counts().get(&id).copied() != Some(0) {
                continue;
            }
            if filter.null_result() == NullResult::True && !null_counts_trusted(self.loaded) {
                continue;
            }
            // In the column's type: a bound written before a promotion (an int of a long
            // column, a date of a timestamp one) compares once cast; one that cannot be cast
            // is unknown.
            let column_type = self.schema.fields[column].data_type();
            let bound = |b: &HashMap<i32, Datum>| {
                let value = datum_to_scalar(b.get(&id)?).ok()?;
                value.cast_to(column_type).ok()
            };
            let stats = ColumnStats {
                min: bound(file.lower_bounds()),
                max: bound(file.upper_bounds()),
                null_count: file.null_value_counts().get(&id).copied(),
                row_count: file
                    .value_counts()
                    .get(&id)
                    .is_some()
                    .then_some(file.record_count()),
                nan_count: file.nan_value_counts().get(&id).copied(),
            };
            if !filter.may_match(&stats) {
                return false;
            }
        }
        true
    }
}
