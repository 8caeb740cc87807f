//! The file-format seam (a format implements one trait and reuses everything else): one split
//! lifecycle over every format ([`lifecycle`]: [`FormatSplitReader`] over a
//! [`FileFormatReader`]), and what every format does the same way inside its steps, over
//! the units a format can skip (Parquet row groups, ORC stripes and row groups of its row
//! index, an Avro file).
//!
//! | step                  | shared here                                                   |
//! |-----------------------|---------------------------------------------------------------|
//! | which reader          | [`FileFormat`] on the split ([`crate::source`] picks by it)   |
//! | the lifecycle         | [`FormatSplitReader`]: states, outcomes, deletes, refresh      |
//! | byte range → units    | [`midpoint_in_range`]: a unit belongs to the split holding its midpoint |
//! | constants vs filters  | [`constants_rejected`]: a missing column's NULL, a member's default |
//! | statistics pruning    | [`UnitStatistics`] (a format's min/max/null counts in table types) and [`prune_units`]: the per-column filters, then the residual's AND/OR tree (`PruningPredicate`) |
//!
//! Each format keeps its own decoding (Parquet's `RowFilter`/`RowSelection` stream, ORC's
//! column decoders, Avro's blocks) and shares the tools here:
//!
//! | file                  | owns                                                        |
//! |-----------------------|-------------------------------------------------------------|
//! | [`lifecycle`]         | the split lifecycle over a [`FileFormatReader`]              |
//! | [`seam`]              | [`FormatSeam`]: split readers, schema, statistics, whole columns by id |
//! | [`assemble`]          | `Assembler`: decoded file batches → batches of the reader schema |
//! | [`adapt`]             | a decoded column in the table type (pruned members, widening, defaults) |
//! | [`column_predicate`]  | `ColumnPredicate`: a per-column filter on decoded values     |

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray, UInt64Array};
use arrow::datatypes::DataType;
use datafusion::common::Column;
use datafusion::common::pruning::PruningStatistics;
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_datafusion_err};

use crate::binding::{FieldSource, SplitBinding, constant_subfield};
use crate::filter::eval::ColumnStats;
use crate::reader::SplitContext;
use crate::split::FileSplit;
use crate::subfield::Subfield;

pub mod adapt;
pub mod assemble;
pub mod column_predicate;
pub mod lifecycle;
pub mod member_nulls;
pub mod seam;

pub use crate::split::FileFormat;
pub use lifecycle::{FileFormatReader, FormatSplitReader};
pub use seam::{ColumnsById, FileAccess, FormatSeam, PageIndex, WholeColumns, WholeFile};

/// Min/max/null-count arrays of one column over some units, in the table type.
#[derive(Debug, Clone)]
pub struct StatsArrays {
    /// Minimum per unit (null = unknown).
    pub mins: ArrayRef,
    /// Maximum per unit (null = unknown).
    pub maxes: ArrayRef,
    /// Null count per unit (null = unknown).
    pub null_counts: UInt64Array,
    /// Rows per unit.
    pub row_counts: UInt64Array,
}

impl StatsArrays {
    /// The statistics of unit `i` as scalars.
    pub fn column_stats(&self, i: usize) -> ColumnStats {
        let scalar = |a: &ArrayRef| {
            ScalarValue::try_from_array(a, i)
                .ok()
                .filter(|v| !v.is_null())
        };
        let count = |a: &UInt64Array| a.is_valid(i).then(|| a.value(i));
        ColumnStats {
            min: scalar(&self.mins),
            max: scalar(&self.maxes),
            null_count: count(&self.null_counts),
            row_count: count(&self.row_counts),
            // Parquet and ORC statistics do not count NaN (the `parquet` crate does not read
            // the format's newer NaN counts).
            nan_count: None,
        }
    }
}

/// A format's statistics of some units of one file, for one split's binding, in table
/// types. [`prune_units`] answers the residual's AND/OR tree with them through
/// [`PruningStatistics`] (a leaf the statistics cannot decide keeps the unit).
pub trait UnitStatistics {
    /// Statistics of the field at `field` of the spec, in its table type; `None`: unknown.
    fn field_stats(&self, field: usize) -> Result<Option<StatsArrays>>;

    /// Statistics of struct member `path` (names) of the file column of field `field`, in
    /// `data_type` (the member's table type); `None`: unknown.
    fn member_stats(
        &self,
        field: usize,
        path: &[String],
        data_type: &DataType,
    ) -> Result<Option<StatsArrays>>;

    /// Rows per unit.
    fn row_counts(&self) -> UInt64Array;
}

/// [`UnitStatistics`] as DataFusion's [`PruningStatistics`], by the spec's column names;
/// each column converted once (`PruningPredicate` asks for minima, maxima and null counts
/// separately). Float minima and maxima are reported unknown: writers leave NaN out of
/// statistics, NaN is the largest float in the order DataFusion compares with, and -0.0
/// sorts below a recorded +0.0 minimum.
struct Pruning<'a> {
    spec: &'a crate::scan_spec::ScanSpec,
    stats: &'a dyn UnitStatistics,
    by_column: RefCell<HashMap<String, Option<StatsArrays>>>,
}

impl Pruning<'_> {
    fn stats_of(&self, column: &Column) -> Option<StatsArrays> {
        if let Some(cached) = self.by_column.borrow().get(column.name()) {
            return cached.clone();
        }
        let i = self.spec.field(column.name()).map(|(i, _)| i);
        let stats = i.and_then(|i| self.stats.field_stats(i).ok().flatten());
        self.by_column
            .borrow_mut()
            .insert(column.name().to_string(), stats.clone());
        stats
    }
}

fn is_float(t: &DataType) -> bool {
    matches!(t, DataType::Float16 | DataType::Float32 | DataType::Float64)
}

impl PruningStatistics for Pruning<'_> {
    fn min_values(&self, column: &Column) -> Option<ArrayRef> {
        let stats = self.stats_of(column)?;
        (!is_float(stats.mins.data_type())).then_some(stats.mins)
    }

    fn max_values(&self, column: &Column) -> Option<ArrayRef> {
        let stats = self.stats_of(column)?;
        (!is_float(stats.maxes.data_type())).then_some(stats.maxes)
    }

    fn num_containers(&self) -> usize {
        self.stats.row_counts().len()
    }

    fn null_counts(&self, column: &Column) -> Option<ArrayRef> {
        Some(Arc::new(self.stats_of(column)?.null_counts))
    }

    fn row_counts(&self) -> Option<ArrayRef> {
        Some(Arc::new(self.stats.row_counts()))
    }

    fn contained(&self, _column: &Column, _values: &HashSet<ScalarValue>) -> Option<BooleanArray> {
        None
    }
}

/// The format a file's last bytes show: Parquet's trailing `PAR1`, or ORC's postscript
/// magic `ORC` before the postscript length byte; `None` when neither.
pub fn format_of_tail(tail: &[u8]) -> Option<FileFormat> {
    if tail.ends_with(b"PAR1") {
        Some(FileFormat::Parquet)
    } else if tail.len() >= 4 && &tail[tail.len() - 4..tail.len() - 1] == b"ORC" {
        Some(FileFormat::Orc)
    } else {
        None
    }
}

/// The format of the file `reader` reads, by its magic bytes, when it is not `expected`:
/// first by its tail ([`format_of_tail`], which readers fetch anyway), then, for a file
/// whose tail shows no format, by its first bytes (Avro's `Obj\x01`: Avro files have no
/// trailer). Called only when a file failed to read as `expected`, to name what it is.
pub async fn other_format(
    reader: &mut crate::io::CountingReader,
    expected: FileFormat,
) -> Option<FileFormat> {
    use parquet::arrow::async_reader::AsyncFileReader;
    let (start, tail) = reader.fetch_tail().await.ok()?;
    let found = match format_of_tail(&tail) {
        Some(found) => found,
        None if start == 0 => FileFormat::from_magic(&tail, &tail)?,
        None => {
            let head = reader.get_bytes(0..4).await.ok()?;
            FileFormat::from_magic(&head, &tail)?
        }
    };
    (found != expected).then_some(found)
}

/// The error of a file of `found` format read as `expected`: tables whose files are of
/// several formats are not read.
pub fn wrong_format(path: &str, expected: FileFormat, found: FileFormat) -> DataFusionError {
    let found = found.name().to_uppercase();
    let article = match found.starts_with(['A', 'E', 'I', 'O', 'U']) {
        true => "an",
        false => "a",
    };
    exec_datafusion_err!(
        "cannot read {} file '{path}': it is {article} {found} file (all data files of a \
         table must be of one format; a Hive table declares it with OPTIONS ('format' '{}'))",
        expected.name().to_uppercase(),
        expected.name()
    )
}

/// Whether a unit whose bytes have their midpoint at `midpoint` belongs to `split`: the
/// midpoint rule (parquet-mr's and ORC's, so Spark/Hive/Trino agree) gives every unit to
/// exactly one split when the splits tile the file. The split that ends the file also owns
/// units past the size it was planned with (a table format's recorded size can be short of
/// the real one): no unit is lost.
pub fn midpoint_in_range(midpoint: u64, split: &FileSplit) -> bool {
    let end = split.start().saturating_add(split.length());
    let last = end >= split.file_size();
    midpoint >= split.start() && (midpoint < end || last)
}

/// Of `units` (their positions in `stats`, in order), those the split's filters may match
/// by statistics: each column filter on its column's or member's statistics, then the
/// residual's AND/OR tree. Pruning is an optimization: statistics that cannot be compared
/// keep the unit.
pub fn prune_units(
    context: &SplitContext,
    split: &FileSplit,
    stats: &dyn UnitStatistics,
    units: &[usize],
) -> Result<Vec<usize>> {
    let spec = &context.spec;
    let mut keep = vec![true; units.len()];
    for (subfield, filter) in &context.filters.filters {
        let Some((i, field)) = spec.field(subfield.root()) else {
            continue;
        };
        let arrays = if subfield.path().is_empty() {
            stats.field_stats(i)?
        } else {
            match subfield.resolve_type(&field.handle.data_type) {
                Some(t) => stats.member_stats(i, subfield.path(), &t)?,
                None => None,
            }
        };
        let Some(arrays) = arrays else {
            continue;
        };
        for (k, keep) in keep.iter_mut().enumerate() {
            *keep = *keep && filter.may_match(&arrays.column_stats(k));
        }
    }
    if let Some(predicate) = context.filters.residual_pruning(spec.reader_schema())
        && keep.iter().any(|k| *k)
    {
        let pruning = Pruning {
            spec,
            stats,
            by_column: RefCell::default(),
        };
        match predicate.prune(&pruning) {
            Ok(may_match) => {
                for (keep, may) in keep.iter_mut().zip(may_match) {
                    *keep &= may;
                }
            }
            Err(e) => log::debug!("residual pruning skipped for {}: {e}", split.display_path()),
        }
    }
    Ok(units
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(u, _)| *u)
        .collect())
}

/// Whether struct member `subfield` is missing from a file column of type `file_type` (for
/// formats whose columns are decoded whole, where the Arrow type tells; Parquet also looks
/// at its leaves).
pub fn member_missing_in_type(_root: usize, file_type: &DataType, subfield: &Subfield) -> bool {
    let path: Vec<crate::required::PathStep> = subfield
        .path()
        .iter()
        .cloned()
        .map(crate::required::PathStep::Field)
        .collect();
    !path.is_empty() && !crate::required::has_path(file_type, &path)
}

/// True when a filter rejects a constant of the bound file: a missing column's NULL, or a
/// missing struct member's default (`member_missing(root, file_type, subfield)` tells
/// whether the file lacks the member).
pub fn constants_rejected(
    context: &SplitContext,
    binding: &SplitBinding,
    member_missing: impl Fn(usize, &DataType, &Subfield) -> bool,
) -> bool {
    let spec = &context.spec;
    for (subfield, filter) in &context.filters.filters {
        let Some((i, _)) = spec.field(subfield.root()) else {
            continue;
        };
        let value = match &binding.sources()[i] {
            FieldSource::Constant(v) => constant_subfield(v, subfield),
            // A struct member this file does not have reads its default, else NULL, in
            // every row where the struct is present (and NULL where it is not).
            FieldSource::File { root, file_type } if member_missing(*root, file_type, subfield) => {
                let defaults = spec.fields()[i].handle.member_defaults.as_deref();
                let null = ScalarValue::Null;
                match defaults.and_then(|d| d.at(subfield.path())) {
                    Some(default) => {
                        // Rows where the struct is present read the default, rows where it
                        // is NULL read NULL: skip only when both fail (the reader filters
                        // the rest on the default-filled struct).
                        let (on_default, on_null) =
                            (filter.test_constant(default), filter.test_constant(&null));
                        (!on_default && !on_null).then_some(null)
                    }
                    None => Some(null),
                }
            }
            _ => None,
        };
        if value.is_some_and(|v| !filter.test_constant(&v)) {
            return true;
        }
    }
    false
}
